"""The reference tables: validation names file/record/field, and the lookups tools rely on."""

from __future__ import annotations

import shutil

import pytest
import yaml

from toolroute.domains.insurance import reference as r
from toolroute.domains.insurance.reference import DATA_DIR, Reference, ReferenceDataError


@pytest.fixture(scope="module")
def ref() -> Reference:
    return r.load_reference()


def _copy_tables(tmp_path):
    for path in DATA_DIR.glob("ref_*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def _edit(tmp_path, name, change):
    path = tmp_path / f"ref_{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def test_all_tables_load(ref):
    assert len(ref.occupations) >= 30
    assert len(ref.kcd) >= 50
    assert len(ref.claim_types) >= 10
    assert {p.type for p in ref.pii_patterns} >= {"resident_number", "phone_number", "card_number", "email"}


@pytest.mark.parametrize("name,change,expected", [
    ("definitions", lambda d: d["definitions"][0].update(aliases=[1]), "definitions record 0 (term='암'): field 'aliases.0'"),
    ("occupations", lambda d: d["occupations"][0].update(surcharge_pct=99), "occupation OCC01: field 'surcharge_pct'"),
    ("kcd", lambda d: d["kcd"][0].update(code="C1"), "field 'code'"),
    ("kcd", lambda d: d["kcd"][0].update(benefit_categories=["없는분류"]), "field 'benefit_categories'"),
    ("definitions", lambda d: d["definitions"][0].update(related_codes=["Z99"]), "field 'related_codes': Z99"),
    ("compliance", lambda d: d["banned_phrases"][0].update(patterns=["(unclosed"]), "field 'patterns'"),
    ("conflicts", lambda d: d["conflict_rules"][0].update(payout="반반"), "field 'payout'"),
    ("claims", lambda d: d["claim_types"][0].pop("steps"), "claim_types record 0 (id='CLM_DEATH'): field 'steps'"),
    ("underwriting", lambda d: d.pop("reinstatement"), "missing top-level key(s) ['reinstatement']"),
])
def test_bad_tables_fail_with_file_record_and_field(tmp_path, name, change, expected):
    _copy_tables(tmp_path)
    _edit(tmp_path, name, change)
    with pytest.raises(ReferenceDataError) as info:
        Reference(tmp_path)
    message = str(info.value)
    assert f"ref_{name}.yaml" in message
    assert expected in message


def test_invalid_yaml_is_reported_with_the_file(tmp_path):
    _copy_tables(tmp_path)
    (tmp_path / "ref_privacy.yaml").write_text("pii_patterns: [unclosed", encoding="utf-8")
    with pytest.raises(ReferenceDataError, match="ref_privacy.yaml: not valid YAML"):
        Reference(tmp_path)


def test_every_banned_phrase_example_triggers_and_no_alternative_does(ref):
    for phrase in ref.banned_phrases:
        hits = ref.find_banned_phrases(phrase.example)
        assert phrase.id in {h["id"] for h in hits}, f"{phrase.id} example {phrase.example!r} is not caught"
        assert ref.find_banned_phrases(phrase.alternative) == [], f"{phrase.id} alternative is itself banned"


def test_banned_phrases_ignore_spacing_and_respect_product_tags(ref):
    assert ref.find_banned_phrases("무 조 건   100 % 보장돼요")
    renewal_only = [p for p in ref.banned_phrases if p.applies_to]
    assert renewal_only, "expected at least one tag-specific phrase"
    phrase = renewal_only[0]
    assert phrase.id in {h["id"] for h in ref.find_banned_phrases(phrase.example, product_tags=phrase.applies_to)}
    assert phrase.id not in {h["id"] for h in ref.find_banned_phrases(phrase.example, product_tags=["없는태그"])}


def test_every_pii_example_masks_as_documented(ref):
    for pii in ref.pii_patterns:
        masked, found = ref.mask_personal_data(pii.example)
        assert masked == pii.example_masked, pii.label
        assert found and found[0]["type"] == pii.type


def test_masking_keeps_plain_numbers_and_masks_everything_personal(ref):
    text = "월 43,950원, 2026년 12월 1일, 주민번호 900101-1234567, 010-1234-5678, 카드 1234 5678 9012 3456"
    masked, found = ref.mask_personal_data(text)
    assert "43,950원" in masked and "2026년 12월 1일" in masked
    assert "1234567" not in masked and "1234-5678" not in masked and "9012" not in masked
    assert {f["type"] for f in found} == {"resident_number", "phone_number", "card_number"}


@pytest.mark.parametrize("text,name,risk_class", [
    ("택시 기사예요", "택시기사", 3),
    ("소방관입니다", None, None),
    ("배달 라이더로 일해요", None, None),
    ("건설 현장 노동자", None, None),
    ("회사원", "사무직", 1),
])
def test_occupations_from_user_words(ref, text, name, risk_class):
    occ = ref.find_occupation(text)
    assert occ is not None, text
    if name:
        assert occ.name == name
        assert occ.risk_class == risk_class
    assert occ.surcharge_pct == ref.occupation_classes[occ.risk_class].surcharge_pct


def test_high_risk_jobs_are_graded_above_office_work(ref):
    office = ref.find_occupation("사무직").risk_class
    for job in ("소방관", "배달 라이더", "건설 현장 노동자", "택시 기사"):
        assert ref.find_occupation(job).risk_class > office, job


def test_kcd_lookup_by_code_range_and_name(ref):
    assert [k.code for k in ref.lookup_kcd("F01")] == ["F00-F03", "F01"]
    assert [k.code for k in ref.lookup_kcd("c73")] == ["C73"]
    assert [k.code for k in ref.lookup_kcd("C73.9")] == ["C73"]
    assert [k.code for k in ref.lookup_kcd("갑상선암")] == ["C73"]
    assert [k.code for k in ref.lookup_kcd("F00-F03")] == ["F00-F03"]
    assert ref.lookup_kcd("Z99") == [] and ref.lookup_kcd("") == [] and ref.lookup_kcd(None) == []


def test_definitions_claims_servicing_conditions(ref):
    assert ref.find_definition("유사암이 뭐예요").term == "유사암"
    assert ref.find_definition("355").term == "3.5.5 간편고지"
    assert ref.find_definition("") is None
    assert ref.claim_type("갑상선암 진단금 청구하려고요").name == "유사암진단"
    assert ref.claim_type("아버지가 돌아가셨어요").name == "사망"
    assert ref.claim_type("날씨") is None
    assert ref.servicing_procedure("해지된 보험 부활하고 싶어요").name == "부활 신청"
    assert ref.servicing_procedure("보험 해지하려면 어떻게 해요").name == "해지"
    names = [c.name for c in ref.find_conditions("고혈압이랑 당뇨약 먹고 갑상선 결절 있어요")]
    assert names == ["고혈압", "당뇨", "갑상선결절"]
    assert ref.find_conditions("건강해요") == []


def test_risk_bands_cover_every_score(ref):
    assert ref.risk_band(0).label == "표준"
    assert ref.risk_band(35).label == "조건부"
    assert ref.risk_band(500).label == "거절 가능"


def test_conflict_rules_found_by_benefit_words(ref):
    rules = ref.find_conflict_rules("갑상선암인데 암진단비랑 유사암진단비 둘 다 받나요?")
    assert rules and rules[0].id == "CF01"
    assert ref.find_conflict_rules("") == []

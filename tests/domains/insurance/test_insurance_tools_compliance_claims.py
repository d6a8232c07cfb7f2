"""compliance and claims tools: facts from the reference tables, asks instead of guesses, no raising on
junk, no personal data in any output."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from toolroute.domains.insurance import TOOL_MODULES, customers
from toolroute.domains.insurance.products import get_product, load_products
from toolroute.domains.insurance.reference import load_reference
from toolroute.domains.insurance.tools import claims, compliance
from toolroute.domains.insurance.tools.claims import (
    claim_guide,
    claim_required_forms,
    contract_manage,
    customer_followup_tasks,
)
from toolroute.domains.insurance.tools.compliance import (
    comparison_disclaimer_generator,
    compliance_misleading_check,
    compliance_phrase_generator,
    compliance_required_disclosure,
    compliance_tags,
    privacy_masking,
    recording_notice_script,
)

ALL_TOOLS = [*compliance.TOOLS, *claims.TOOLS]
STATUSES = {"ok", "needs_user_input", "not_found", "rejected"}


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    return customers.create_database(tmp_path_factory.mktemp("customers") / "customers.sqlite")


@pytest.fixture(autouse=True)
def _use_db(db_path):
    with customers.use_database(db_path):
        yield


def dumps(result) -> str:
    return json.dumps(result, ensure_ascii=False)


def pii_values(db_path, customer_id: str) -> list[str]:
    con = sqlite3.connect(db_path)
    try:
        row = con.execute(
            f"SELECT {', '.join(customers.PII_CUSTOMER_FIELDS)} FROM customers WHERE customer_id = ?", (customer_id,)
        ).fetchone()
    finally:
        con.close()
    return [str(v) for v in row]


# --- the module contract -----------------------------------------------------------------------------

def test_tool_names_and_order_match_the_contract():
    assert [t.name for t in compliance.TOOLS] == TOOL_MODULES["compliance"]
    assert [t.name for t in claims.TOOLS] == TOOL_MODULES["claims"]


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_descriptions_are_short_korean(tool):
    text = tool.description.strip()
    assert re.search(r"[가-힣]", text)
    sentences = [s for s in re.split(r"(?<=[.다])\s+", text) if s.strip()]
    assert 1 <= len(sentences) <= 2, text


def test_confusion_pairs_say_what_they_are_not():
    assert "청구 서류" in claim_guide.description and "보장 금액" in claim_guide.description
    assert "가입(청약)" in claim_required_forms.description


# --- product tags ------------------------------------------------------------------------------------

def test_compliance_tags_follow_product_data():
    products = load_products()
    assert {"갱신형", "면책기간", "보장성", "순수보장형"} <= set(compliance_tags(products["B001"]))
    assert "갱신형" not in compliance_tags(products["B002"])
    assert "간편고지" in compliance_tags(products["B006"]) and "간편고지" in compliance_tags(products["B007"])
    assert "실손" in compliance_tags(products["B010"])
    annuity = compliance_tags(products["B012"])
    assert {"연금", "저축성"} <= set(annuity) and "보장성" not in annuity
    known = set(load_reference().table("compliance")["product_tags"])
    for product in products.values():
        tags = compliance_tags(product)
        assert set(tags) <= known
        assert set(product.channels) <= set(tags)
        assert ("갱신형" in tags) == product.renewable


# --- compliance_required_disclosure ------------------------------------------------------------------

def test_required_disclosure_matches_product_tags_and_own_disclosures():
    renewable = compliance_required_disclosure.invoke({"product": "첫날부터암보험"})
    assert renewable["status"] == "ok"
    ids = {d["id"] for d in renewable["general_disclosures"] + renewable["product_type_disclosures"]}
    assert {"RD01", "RD02", "RD03", "RD04", "RD07"} <= ids
    assert "RD05" not in ids and "RD09" not in ids  # not simplified, not 실손
    assert renewable["product_disclosures"] == list(get_product("B001").required_disclosures)
    whole_life = compliance_required_disclosure.invoke({"product": "건강해지는종신보험"})
    assert "RD04" not in {d["id"] for d in whole_life["product_type_disclosures"]}
    simplified = compliance_required_disclosure.invoke({"product": "B006"})
    assert "RD05" in {d["id"] for d in simplified["product_type_disclosures"]}


def test_required_disclosure_by_channel():
    tm = compliance_required_disclosure.invoke({"product": "B001", "channel": "전화"})
    cm = compliance_required_disclosure.invoke({"product": "B001", "channel": "CM"})
    assert tm["channel"] == "TM" and "RD12" in {d["id"] for d in tm["product_type_disclosures"]}
    assert "RD12" not in {d["id"] for d in cm["product_type_disclosures"]}
    not_sold = compliance_required_disclosure.invoke({"product": "B012", "channel": "TM"})
    assert not_sold["status"] == "ok" and not_sold["notes"]
    bad = compliance_required_disclosure.invoke({"product": "B001", "channel": "팩스"})
    assert bad["status"] == "not_found" and bad["candidates"] == ["TM", "CM", "대면"]


def test_required_disclosure_asks_or_offers_candidates():
    assert compliance_required_disclosure.invoke({})["status"] == "needs_user_input"
    kind = compliance_required_disclosure.invoke({"product": "치매보험"})
    assert kind["status"] == "needs_user_input" and set(kind["known"]["candidates"]) == {"전에없던치매간병보험", "실속치매보험"}
    assert compliance_required_disclosure.invoke({"product": "없는보험상품"})["status"] == "not_found"


# --- compliance_phrase_generator ---------------------------------------------------------------------

def test_phrase_generator_fills_the_products_waiting_days():
    dental = compliance_phrase_generator.invoke({"topic": "면책기간", "product": "든든한실버치아보험"})
    assert dental["status"] == "ok" and dental["topic"] == "면책"
    assert "90일" in dental["script"] and "180일" in dental["script"] and "든든한실버치아보험은" in dental["script"]
    cancer = compliance_phrase_generator.invoke({"topic": "면책", "product": "B001"})
    assert "일반암 진단비" in cancer["script"] and "90일" in cancer["script"]
    assert "{product}" not in cancer["script"] and "은(는)" not in cancer["script"]


def test_phrase_generator_renewal_and_reduction_facts():
    renewal = compliance_phrase_generator.invoke({"topic": "갱신 보험료", "product": "첫날부터암보험"})
    assert "20년" in renewal["script"] and "100세" in renewal["script"]
    assert compliance_phrase_generator.invoke({"topic": "갱신", "product": "B002"})["status"] == "rejected"
    reduction = compliance_phrase_generator.invoke({"topic": "감액", "product": "실속치매보험"})
    assert "2년" in reduction["script"] and "50%" in reduction["script"]
    assert compliance_phrase_generator.invoke({"topic": "간편고지", "product": "B001"})["status"] == "rejected"


def test_every_generated_script_passes_the_misleading_check():
    topics = [t["topic"] for t in load_reference().table("compliance")["script_templates"]]
    for product in load_products().values():
        for topic in topics:
            result = compliance_phrase_generator.invoke({"topic": topic, "product": product.code})
            assert result["status"] in ("ok", "rejected"), (product.code, topic, result)
            if result["status"] == "ok":
                assert result["compliance_check"] == "적합"
                hits = load_reference().find_banned_phrases(result["script"], compliance_tags(product))
                assert hits == [], (product.code, topic, hits)


def test_phrase_generator_unknown_topic_and_missing_args():
    unknown = compliance_phrase_generator.invoke({"topic": "날씨", "product": "B001"})
    assert unknown["status"] == "not_found" and "면책" in unknown["candidates"]
    missing = compliance_phrase_generator.invoke({"topic": "면책"})
    assert missing["status"] == "needs_user_input" and missing["missing"] == ["product"]


# --- compliance_misleading_check ---------------------------------------------------------------------

def test_misleading_check_flags_absolute_wording():
    result = compliance_misleading_check.invoke({"script": "무조건 100% 보장돼요"})
    assert result["verdict"] == "수정 필요"
    ids = {i["id"] for i in result["issues"]}
    assert "BP01" in ids
    assert all(i["reason"] and i["alternative"] for i in result["issues"])


def test_renewable_only_phrase_depends_on_the_product():
    script = "평생 보험료 안 올라요"
    renewable = compliance_misleading_check.invoke({"script": script, "product": "첫날부터암보험"})
    fixed = compliance_misleading_check.invoke({"script": script, "product": "건강해지는종신보험"})
    assert renewable["verdict"] == "수정 필요" and "BP08" in {i["id"] for i in renewable["issues"]}
    assert fixed["verdict"] == "적합" and "BP08" in {i["id"] for i in fixed["not_applicable"]}


def test_every_banned_example_is_flagged_and_every_alternative_passes():
    for phrase in load_reference().banned_phrases:
        flagged = compliance_misleading_check.invoke({"script": phrase.example})
        assert phrase.id in {i["id"] for i in flagged["issues"]}, phrase.id
        clean = compliance_misleading_check.invoke({"script": phrase.alternative})
        assert clean["verdict"] == "적합", (phrase.id, clean["issues"])


def test_misleading_check_masks_personal_data_in_the_echo():
    result = compliance_misleading_check.invoke({"script": "010-1234-5678로 연락드릴게요. 오늘만 이 가격이에요"})
    assert "010-1234-5678" not in dumps(result)
    assert "BP11" in {i["id"] for i in result["issues"]}


# --- comparison_disclaimer_generator -----------------------------------------------------------------

def test_comparison_disclaimer_names_products_and_adds_renewal_point_only_when_renewable():
    with_renewable = comparison_disclaimer_generator.invoke({"products": ["첫날부터암보험", "실속치매보험"]})
    assert with_renewable["status"] == "ok"
    assert "첫날부터암보험" in with_renewable["disclaimer"] and "실속치매보험" in with_renewable["disclaimer"]
    renewal_points = [p for p in with_renewable["points"] if "갱신형" in p]
    assert renewal_points and "첫날부터암보험" in renewal_points[0]
    neither = comparison_disclaimer_generator.invoke({"products": "전에없던치매간병보험이랑 실속치매보험"})
    assert neither["status"] == "ok" and not any("갱신형 상품" in p for p in neither["points"])
    assert neither["full_text"].startswith(neither["disclaimer"])


def test_comparison_disclaimer_needs_two_products():
    assert comparison_disclaimer_generator.invoke({"products": ["B001"]})["status"] == "needs_user_input"
    assert comparison_disclaimer_generator.invoke({})["status"] == "needs_user_input"


# --- recording_notice_script -------------------------------------------------------------------------

def test_recording_notice_for_elderly_tm_customer():
    result = recording_notice_script.invoke({"channel": "TM", "agent_name": "김하나", "customer_age": "70세"})
    assert result["status"] == "ok" and result["elderly_customer"] is True
    assert "한결생명" in result["script"] and "김하나" in result["script"] and "45일" in result["script"]
    assert result["elderly_notes"]
    young = recording_notice_script.invoke({"channel": "전화", "customer_age": 40})
    assert young["elderly_customer"] is False and young["elderly_notes"] == []
    assert not any("65세" in n for n in young["notes"])


def test_recording_notice_channels_and_bad_input():
    assert "다이렉트" in recording_notice_script.invoke({"channel": "온라인"})["script"]
    assert recording_notice_script.invoke({"channel": "대면"})["channel"] == "대면"
    assert recording_notice_script.invoke({"channel": "팩스"})["status"] == "not_found"
    assert recording_notice_script.invoke({"channel": "TM", "customer_age": 300})["status"] == "needs_user_input"
    assert recording_notice_script.invoke({})["status"] == "needs_user_input"


# --- privacy_masking ---------------------------------------------------------------------------------

def test_privacy_masking_hides_resident_number_and_phone():
    raw = "주민번호 900101-1234567이고 연락처는 010-1234-5678, 메일 minsu@example.com 입니다"
    result = privacy_masking.invoke({"text": raw})
    text = dumps(result)
    assert "900101-1234567" not in text and "010-1234-5678" not in text and "minsu@example.com" not in text
    assert result["by_type"] == {"resident_number": 1, "phone_number": 1, "email": 1}
    assert result["masked_count"] == 3
    nothing = privacy_masking.invoke({"text": "개인정보 없는 문장"})
    assert nothing["masked_count"] == 0 and nothing["masked_text"] == "개인정보 없는 문장"


# --- claim_guide / claim_required_forms --------------------------------------------------------------

def test_claim_guide_maps_thyroid_cancer_to_minor_cancer_claim():
    result = claim_guide.invoke({"claim_type": "갑상선암 진단"})
    assert result["status"] == "ok" and result["claim_type"]["id"] == "CLM_MINOR_CANCER"
    assert result["steps"] and result["channels"] and result["processing_business_days"] == 3
    assert any("소멸시효" in n for n in result["notes"])
    assert claim_guide.invoke({"claim_type": "C73"})["claim_type"]["id"] == "CLM_MINOR_CANCER"


def test_claim_guide_is_not_coverage_amounts_nor_the_form_list():
    result = claim_guide.invoke({"claim_type": "갑상선암 진단받았어요", "product": "첫날부터암보험"})
    text = dumps(result)
    thyroid = next(c for c in get_product("B001").coverages if c.name == "갑상선암 진단비")
    assert str(thyroid.amount) not in text and "600만원" not in text and "amount" not in text
    assert "required_documents" not in result and "conditional_documents" not in result
    assert "청구 서류 안내" in result["documents_pointer"]
    assert "갑상선암 진단비" in result["product"]["related_coverages"]


def test_claim_guide_warns_when_the_product_has_no_such_cover():
    result = claim_guide.invoke({"claim_type": "치아 치료", "product": "안심운전자보험"})
    assert result["status"] == "ok" and result["notes"][-1].startswith("안심운전자보험")


def test_claim_guide_asks_for_the_claim_type():
    vague = claim_guide.invoke({"claim_type": "보험금 청구하고 싶어요"})
    assert vague["status"] == "needs_user_input" and "암진단" in vague["known"]["candidates"]
    unknown = claim_guide.invoke({"claim_type": "우주여행"})
    assert unknown["status"] == "not_found" and unknown["candidates"]


def test_claim_required_forms_with_amount_rule():
    small = claim_required_forms.invoke({"claim_type": "입원", "claim_amount": "80만원"})
    assert small["status"] == "ok" and small["copies_allowed"] is True and small["claim_amount"] == 800_000
    big = claim_required_forms.invoke({"claim_type": "입원", "claim_amount": 3_000_000})
    assert big["copies_allowed"] is False and "원본" in big["submission_rule"]
    unknown_amount = claim_required_forms.invoke({"claim_type": "입원"})
    assert unknown_amount["copies_allowed"] is None and "100만원" in unknown_amount["submission_rule"]
    assert "입퇴원확인서(질병분류코드 기재)" in small["required_documents"]
    assert any("위임장" in d for d in small["conditional_documents"])


def test_claim_required_forms_are_claim_documents_not_application_documents():
    result = claim_required_forms.invoke({"claim_type": "암 진단"})
    text = dumps(result)
    application = load_reference().table("underwriting")["application_documents"]
    names = [d["name"] for block in application for d in block["documents"]]
    assert names and not any(name in text for name in names)
    assert "보험금 청구서" in result["required_documents"]


def test_claim_required_forms_differ_from_underwriting_docs_required():
    underwriting = pytest.importorskip("toolroute.domains.insurance.tools.underwriting")
    docs_tool = next((t for t in underwriting.TOOLS if t.name == "underwriting_docs_required"), None)
    if docs_tool is None:
        pytest.skip("underwriting_docs_required not written yet")
    forms = claim_required_forms.invoke({"claim_type": "암 진단"})
    application = docs_tool.invoke({"product": "첫날부터암보험", "channel": "TM"})
    assert application["status"] == "ok" and "claim_type" in forms and "claim_type" not in application
    application_names = {d["name"] if isinstance(d, dict) else d for d in application.get("required_documents", [])}
    assert application_names and application_names.isdisjoint(forms["required_documents"])
    assert not any("청약" in d for d in forms["required_documents"] + forms["conditional_documents"])


# --- contract_manage ---------------------------------------------------------------------------------

def test_contract_manage_reinstatement_for_choi_sujin(db_path):
    result = contract_manage.invoke({"request": "해지된 암보험 부활하고 싶어요", "name": "최수진"})
    assert result["status"] == "ok" and result["procedure"]["id"] == "SVC_REINSTATE"
    [contract] = result["related_contracts"]
    assert contract["status"] == "해지" and contract["product_name"] == "첫날부터암보험"
    assert contract["termination_date"] == "2023-12-31"
    assert contract["reinstatement_deadline"] == "2026-12-31" and contract["within_deadline"] is True
    assert result["customer"]["customer_id"] == "C0003"
    text = dumps(result)
    for value in pii_values(db_path, "C0003"):
        assert value not in text


def test_contract_manage_other_requests():
    cancel = contract_manage.invoke({"request": "보험 해지하려면", "customer_id": "C0001"})
    assert cancel["procedure"]["name"] == "해지"
    assert {c["status"] for c in cancel["related_contracts"]} == {"유지"} and len(cancel["related_contracts"]) == 2
    assert all("surrender_type" in c for c in cancel["related_contracts"])
    renewal = contract_manage.invoke({"request": "갱신", "customer_id": "C0001"})
    assert all(c["next_renewal_date"] for c in renewal["related_contracts"])
    plain = contract_manage.invoke({"request": "약관대출"})
    assert plain["procedure"]["id"] == "SVC_LOAN" and plain["related_contracts"] is None


def test_contract_manage_asks_when_unclear():
    vague = contract_manage.invoke({"request": "변경"})
    assert vague["status"] == "needs_user_input" and "수익자 변경" in vague["known"]["candidates"]
    assert contract_manage.invoke({"request": "피자 주문"})["status"] == "not_found"
    same_name = contract_manage.invoke({"request": "해지", "name": "이영희"})
    assert same_name["status"] == "needs_user_input"
    assert contract_manage.invoke({"request": "해지", "name": "홍길동"})["status"] == "not_found"


# --- customer_followup_tasks -------------------------------------------------------------------------

def test_followup_tasks_from_a_summary():
    summary = "고객 010-1234-5678 첫날부터암보험 청약 완료. 혈압약 복용 고지함. 실속치매보험과 비교 요청."
    result = customer_followup_tasks.invoke({"summary": summary})
    assert result["status"] == "ok" and "010-1234-5678" not in dumps(result)
    by_key = {t["key"]: t for t in result["tasks"]}
    assert by_key["application"]["due_date"] == "2026-12-08" and by_key["application"]["due_in_days"] == 7
    assert by_key["disclosure"]["tool"] == "underwriting_docs_required"
    assert by_key["comparison"]["tool"] == "comparison_disclaimer_generator"
    assert by_key["privacy"]["tool"] == "privacy_masking"
    assert [t["id"] for t in result["tasks"]] == [f"T{i}" for i in range(1, len(result["tasks"]) + 1)]


def test_followup_reinstatement_deadline_and_no_false_triggers(db_path):
    result = customer_followup_tasks.invoke({
        "summary": "해지된 암보험 부활 문의. 간편고지종신보험 보장 설명함. 다음 주 재통화", "customer_id": "C0003"})
    keys = [t["key"] for t in result["tasks"]]
    assert "reinstatement" in keys and "retention" not in keys and "disclosure" not in keys
    reinstatement = next(t for t in result["tasks"] if t["key"] == "reinstatement")
    assert reinstatement["deadline"] == "2026-12-31"
    assert next(t for t in result["tasks"] if t["key"] == "callback")["due_in_days"] == 7
    text = dumps(result)
    for value in pii_values(db_path, "C0003"):
        assert value not in text


def test_followup_retention_claim_and_reference_date():
    result = customer_followup_tasks.invoke({
        "summary": "실손 해지하고 싶다고 함. 입원 보험금 청구 문의", "reference_date": "2027-01-10"})
    by_key = {t["key"]: t for t in result["tasks"]}
    assert by_key["retention"]["due_date"] == "2027-01-12"
    assert by_key["claim"]["tool"] == "claim_required_forms" and by_key["claim"]["due_date"] == "2027-01-11"
    bad_date = customer_followup_tasks.invoke({"summary": "청약 완료", "reference_date": "언젠가"})
    assert bad_date["status"] == "needs_user_input" and bad_date["missing"] == ["reference_date"]
    nothing = customer_followup_tasks.invoke({"summary": "날씨 이야기만 함"})
    assert nothing["status"] == "ok" and nothing["tasks"] == []


# --- every tool: junk input, JSON results ------------------------------------------------------------

JUNK = ["", "   ", "모름", 123, 3.5, True, [], ["모름"], {"a": 1}, None, float("nan")]


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_no_tool_raises_on_junk(tool):
    fields = list(tool.args_schema.model_fields)
    calls = [{}] + [{field: junk} for field in fields for junk in JUNK]
    calls += [{field: junk for field in fields} for junk in JUNK]
    for args in calls:
        result = tool.invoke(args)
        assert isinstance(result, dict) and result["status"] in STATUSES, (args, result)
        json.dumps(result, ensure_ascii=False)


def test_every_result_is_json_serialisable():
    results = [
        compliance_required_disclosure.invoke({"product": "B006", "channel": "CM"}),
        compliance_phrase_generator.invoke({"topic": "해약환급금", "product": "B012"}),
        compliance_misleading_check.invoke({"script": "원금 보장돼요", "product": "B002"}),
        comparison_disclaimer_generator.invoke({"products": ["B003", "B010", "B006"]}),
        recording_notice_script.invoke({"channel": "대면", "customer_age": 70}),
        privacy_masking.invoke({"text": "카드 1234-5678-9012-3456"}),
        claim_guide.invoke({"claim_type": "사망", "product": "B002"}),
        claim_required_forms.invoke({"claim_type": "교통사고", "claim_amount": "50만원"}),
        contract_manage.invoke({"request": "청약철회", "customer_id": "C0002"}),
        customer_followup_tasks.invoke({"summary": "70세 고객 청약 완료", "name": "윤지은"}),
    ]
    for result in results:
        assert result["status"] == "ok", result
        json.loads(json.dumps(result, ensure_ascii=False))


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_personal_data_typed_into_any_field_never_comes_back(tool):
    raw = ["010-1234-5678", "900101-1234567", "minsu@example.com"]
    fields = list(tool.args_schema.model_fields)
    for value in (" ".join(raw), raw, f"첫날부터암보험 {raw[0]}", f"부활 {raw[1]}"):
        for args in ({field: value for field in fields}, *({field: value} for field in fields)):
            text = dumps(tool.invoke(args))
            assert not any(r in text for r in raw), (args, text[:300])

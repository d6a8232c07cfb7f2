"""coverage tools: facts read from products.yaml and the reference tables, verdicts, asks, junk input."""

from __future__ import annotations

import json
import math

import pytest

from toolroute.domains.insurance import TOOL_MODULES
from toolroute.domains.insurance import reference as ref
from toolroute.domains.insurance.products import get_product, load_products, monthly_premium
from toolroute.domains.insurance.tools import coverage
from toolroute.domains.insurance.tools.coverage import (
    PRECHECK_NOTICE,
    TOOLS,
    VERDICT_COVERED,
    VERDICT_EXCLUDED,
    VERDICT_REDUCED,
    VERDICT_UNKNOWN,
    VERDICT_WAITING,
    VERDICTS,
)

BY_NAME = {t.name: t for t in TOOLS}


def call(name: str, **args):
    """Invoke through LangChain (args schema + validators) and check the result is JSON."""
    result = BY_NAME[name].invoke(args)
    assert isinstance(result, dict)
    json.dumps(result, ensure_ascii=False)
    assert result["status"] in {"ok", "needs_user_input", "not_found", "rejected"}
    return result


def ids(items):
    return [item["coverage_id"] for item in items]


# --- the module's contract ----------------------------------------------------------------------------

def test_tool_names_and_order_match_the_contract():
    assert [t.name for t in TOOLS] == TOOL_MODULES["coverage"]


def test_descriptions_are_short_korean_and_name_the_confusion_neighbours():
    for t in TOOLS:
        text = t.description
        assert any("가" <= ch <= "힣" for ch in text), t.name
        assert 1 <= text.count("다.") + text.count("다 (") <= 3, t.name
    assert "product_search" in BY_NAME["coverage_summary"].description
    assert "coverage_detail" in BY_NAME["coverage_summary"].description
    assert "benefit_amount_lookup" in BY_NAME["coverage_detail"].description
    assert "claim_guide" in BY_NAME["coverage_detail"].description
    assert "coverage_detail" in BY_NAME["benefit_amount_lookup"].description
    assert "icd_mapping_lookup" in BY_NAME["diagnosis_definition_lookup"].description
    assert "diagnosis_definition_lookup" in BY_NAME["icd_mapping_lookup"].description


def test_every_coverage_type_in_products_yaml_has_its_benefit_categories():
    """A new coverage type in products.yaml must be mapped to KCD benefit categories (or to none)."""
    categories = {c["name"] for c in ref.load_reference().table("kcd")["benefit_categories"]}
    types = {c.type for p in load_products().values() for c in p.coverages}
    assert types <= set(coverage._TYPE_CATEGORIES), sorted(types - set(coverage._TYPE_CATEGORIES))
    for mapped in coverage._TYPE_CATEGORIES.values():
        assert set(mapped) <= categories


def test_every_args_schema_field_has_a_korean_description():
    for t in TOOLS:
        for name, info in t.args_schema.model_fields.items():
            assert info.description and any("가" <= ch <= "힣" for ch in info.description), (t.name, name)


# --- coverage_summary ----------------------------------------------------------------------------------

def test_coverage_summary_lists_every_coverage_with_amount_riders_and_waiting():
    b001 = get_product("B001")
    r = call("coverage_summary", product="첫날부터암보험")
    assert r["status"] == "ok" and r["product_code"] == "B001"
    assert r["coverage_count"] == len(b001.coverages) == 6
    assert ids(r["coverages"]) == [c.id for c in b001.coverages]
    first = r["coverages"][0]
    assert (first["name"], first["amount"], first["amount_text"]) == ("일반암 진단비", 30_000_000, "3,000만원")
    assert r["riders_count"] == 4 and "암주요치료비 특약" in r["rider_names"]
    assert any(line.startswith("90일 면책") and "일반암 진단비" in line for line in r["waiting_periods"])
    assert any("1년 이내 50%" in line for line in r["reduction_periods"])
    assert "갑상선암 진단비 600만원" in r["summary"]


def test_coverage_summary_accepts_aliases_and_reports_simple_products():
    r = call("coverage_summary", product="실버치아보험")
    assert r["product_code"] == "B003" and r["coverage_count"] == 6
    assert any("180일 면책" in line and "임플란트치료비" in line for line in r["waiting_periods"])
    assert call("coverage_summary", product="B012")["reduction_periods"] == ["감액기간 없음"]
    whole_life = call("coverage_summary", product="건강해지는종신보험")  # seed scenario 5: 연금전환 조건
    assert whole_life["annuity_conversion"]["min_age"] == 55 and "연금전환" in whole_life["summary"]
    assert call("coverage_summary", product="B001")["annuity_conversion"] is None


# --- coverage_detail -----------------------------------------------------------------------------------

def test_coverage_detail_cancer_brings_every_cancer_item_with_periods():
    r = call("coverage_detail", product="B001", coverage_type="암")
    assert ids(r["coverages"]) == ["B001-C01", "B001-C02", "B001-C03", "B001-C04", "B001-C05", "B001-C06"]
    general = r["coverages"][0]
    assert general["waiting_days"] == 90
    assert general["reduction"]["ratio"] == 0.5 and general["reduction"]["reduced_amount"] == 15_000_000
    assert any("보장개시일 전에 일반암" in s for s in r["exclusions"])
    assert any("납입이 면제" in s for s in r["premium_waiver"])


def test_coverage_detail_maps_user_words_to_the_product_items():
    thyroid = call("coverage_detail", product="B001", coverage_type="갑상선암")
    assert ids(thyroid["coverages"]) == ["B001-C02"] and thyroid["coverages"][0]["amount"] == 6_000_000
    implant = call("coverage_detail", product="든든한실버치아보험", coverage_type="임플란트")
    assert ids(implant["coverages"]) == ["B003-C03"]
    assert implant["coverages"][0]["waiting_days"] == 180
    assert [r["rider_code"] for r in implant["related_riders"]] == ["B003-R01"]
    teeth = call("coverage_detail", product="B003", coverage_type="치아")
    assert len(teeth["coverages"]) == 6
    death = call("coverage_detail", product="건강해지는종신보험", coverage_type="사망")
    assert ids(death["coverages"]) == ["B002-C01"]
    dementia = call("coverage_detail", product="치매간병보험", coverage_type="치매")
    assert ids(dementia["coverages"]) == ["B004-C01", "B004-C02"]
    assert any("알코올" in s for s in dementia["exclusions"])


def test_coverage_detail_reads_amounts_stated_in_conditions_and_riders():
    """B006 pays 유사암 only through a condition sentence of its cancer coverage (200만원)."""
    r = call("coverage_detail", product="골라담는간편건강보험", coverage_type="갑상선암")
    assert ids(r["coverages"]) == ["B006-C03"]
    assert r["coverages"][0]["matched_condition"]["amount"] == 2_000_000
    manual = call("coverage_detail", product="착한실손의료보험", coverage_type="도수치료")
    assert manual["coverages"] == [] and manual["rider_coverages"][0]["rider_code"] == "B010-R01"
    deductible = call("coverage_detail", product="B010", coverage_type="자기부담금")
    assert all("deductible" in c for c in deductible["coverages"]) and len(deductible["coverages"]) == 4


def test_coverage_detail_without_a_coverage_type_details_every_coverage():
    """Seed scenario 3: "유지 중인 간편고지종신보험 보장 내용 자세히" names no coverage."""
    r = call("coverage_detail", product="간편고지종신보험")
    assert r["status"] == "ok" and ids(r["coverages"]) == ["B007-C01", "B007-C02"]
    assert r["coverages"][0]["reduction"]["within_days"] == 730
    assert r["surrender"]["type"] == "저해지" and r["ask"]


# --- benefit_amount_lookup -----------------------------------------------------------------------------

def test_benefit_amount_cancer_and_thyroid_cancer_of_b001():
    general = call("benefit_amount_lookup", product="첫날부터암보험", benefit="암 진단비")
    assert (general["coverage_id"], general["amount"], general["amount_text"]) == ("B001-C01", 30_000_000, "3,000만원")
    thyroid = call("benefit_amount_lookup", product="첫날부터암보험", benefit="갑상선암")
    assert (thyroid["coverage_id"], thyroid["amount"]) == ("B001-C02", 6_000_000)
    assert thyroid["amount"] == general["amount"] * 20 // 100  # "일반암 진단비의 20%" (limit_text)


def test_benefit_amount_reduced_and_waiting_by_days_since_contract():
    reduced = call("benefit_amount_lookup", product="B001", benefit="갑상선암 진단비", days_since_contract="200일")
    assert reduced["period_status"] == VERDICT_REDUCED and reduced["payable_amount"] == 3_000_000
    assert reduced["reduced_amount"] == 3_000_000
    waiting = call("benefit_amount_lookup", product="B001", benefit="일반암", days_since_contract=30)
    assert waiting["period_status"] == VERDICT_WAITING and waiting["payable_amount"] == 0
    full = call("benefit_amount_lookup", product="B001", benefit="일반암", days_since_contract="2년")
    assert full["period_status"] == VERDICT_COVERED and full["payable_amount"] == 30_000_000


def test_benefit_amount_scales_with_the_sum_insured_only_where_the_data_says_so():
    general = call("benefit_amount_lookup", product="B001", benefit="일반암 진단비", sum_insured="5000")
    assert general["amount"] == 50_000_000
    thyroid = call("benefit_amount_lookup", product="B001", benefit="갑상선암", sum_insured="5천만원")
    assert thyroid["amount"] == 10_000_000  # 20% of the sum insured
    stay = call("benefit_amount_lookup", product="B001", benefit="암입원일당", sum_insured="5천만원")
    assert stay["amount"] == 50_000 and any("기본플랜" in n for n in stay["notes"])
    too_much = call("benefit_amount_lookup", product="B001", benefit="일반암", sum_insured="10억")
    assert too_much["status"] == "rejected" and too_much["sum_insured_max"] == 50_000_000
    death = call("benefit_amount_lookup", product="간편고지종신보험", benefit="사망보험금", sum_insured="5천만원",
                 days_since_contract="1년")
    assert death["amount"] == 50_000_000 and death["payable_amount"] == 25_000_000
    said = call("benefit_amount_lookup", product="B007", benefit="가입금액 5천이면 사망하면 유족이 받는 보험금")
    assert said["amount"] == 50_000_000
    implant = call("benefit_amount_lookup", product="B003", benefit="임플란트", sum_insured="150만원")
    assert implant["amount"] == 1_500_000


def test_benefit_amount_sub_cases_riders_and_ambiguity():
    assert call("benefit_amount_lookup", product="B001", benefit="유사암 수술비")["amount"] == 600_000
    assert call("benefit_amount_lookup", product="B001", benefit="요양병원 입원")["amount"] == 20_000
    assert call("benefit_amount_lookup", product="B006", benefit="갑상선암 진단비")["amount"] == 2_000_000
    assert call("benefit_amount_lookup", product="B003", benefit="임플란트 하나 하면 얼마")["amount"] == 1_000_000
    grade = call("benefit_amount_lookup", product="B004", benefit="장기요양 2등급")
    assert (grade["coverage_id"], grade["amount"]) == ("B004-C03", 10_000_000)
    rider = call("benefit_amount_lookup", product="B006", benefit="골절")
    assert rider["is_rider"] and rider["rider_code"] == "B006-R04" and rider["amount"] == 200_000
    ambiguous = call("benefit_amount_lookup", product="B003", benefit="치아")
    assert ambiguous["status"] == "needs_user_input" and ambiguous["missing"] == ["benefit"]
    assert "임플란트치료비" in ambiguous["known"]["options"]
    missing = call("benefit_amount_lookup", product="B010", benefit="골절")
    assert missing["status"] == "not_found" and missing["what"] == "benefit"


# --- benefit_limit_rules -------------------------------------------------------------------------------

def test_benefit_limit_rules_read_the_structured_limits():
    implant = call("benefit_limit_rules", product="B003", benefit="임플란트")["limits"][0]
    assert (implant["coverage_id"], implant["per_year"], implant["unit"]) == ("B003-C03", 3, "개")
    assert "연간 최대 3개" in implant["rules"]
    again = call("benefit_limit_rules", product="B001", benefit="재진단암")["limits"][0]
    assert (again["lifetime"], again["interval_years"]) == (5, 2)
    stay = call("benefit_limit_rules", product="B006", benefit="입원일당")["limits"][0]
    assert stay["per_event"] == 120
    care = call("benefit_limit_rules", product="B004", benefit="간병생활자금")["limits"][0]
    assert (care["lifetime"], care["unit"]) == (120, "개월")
    fine = call("benefit_limit_rules", product="안심운전자보험", benefit="벌금")
    assert fine["limits"][0]["amount_cap"] == 20_000_000


# --- event_eligibility_check ---------------------------------------------------------------------------

def test_cancer_30_days_after_contract_is_in_the_waiting_period():
    r = call("event_eligibility_check", product="첫날부터암보험", event="갑상선암 진단받았어요", days_since_contract=30)
    assert r["verdict"] == VERDICT_WAITING
    assert ids(r["matched_coverages"]) == ["B001-C02"]
    assert r["matched_coverages"][0]["payable_amount"] == 0
    assert r["kcd"][0]["code"] == "C73" and r["kcd"][0]["benefit_categories"][0] == "유사암"
    assert r["notice"] == PRECHECK_NOTICE and "최종" in r["summary"]


def test_cancer_in_and_after_the_reduced_period():
    reduced = call("event_eligibility_check", product="B001", event="위암 진단", days_since_contract=200)
    assert reduced["verdict"] == VERDICT_REDUCED
    assert ids(reduced["matched_coverages"]) == ["B001-C01"]
    assert reduced["matched_coverages"][0]["payable_amount"] == 15_000_000
    full = call("event_eligibility_check", product="B001", event="위암 진단", days_since_contract="1년 2개월")
    assert full["verdict"] == VERDICT_COVERED and full["matched_coverages"][0]["payable_amount"] == 30_000_000
    thyroid = call("event_eligibility_check", product="B001", event="갑상선암 진단 받고 수술했어요", days_since_contract="2년")
    assert thyroid["verdict"] == VERDICT_COVERED
    paid = {c["coverage_id"]: c["payable_amount"] for c in thyroid["matched_coverages"]}
    assert paid == {"B001-C02": 6_000_000, "B001-C05": 600_000}  # 유사암 수술 60만원 (condition)


def test_event_by_kcd_code_and_dates():
    by_code = call("event_eligibility_check", product="B001", kcd_code="C73", days_since_contract=30)
    assert by_code["verdict"] == VERDICT_WAITING
    by_dates = call("event_eligibility_check", product="B001", event="위암", contract_date="2025-01-01",
                    event_date="2025-03-01")
    assert by_dates["days_since_contract"] == 59 and by_dates["verdict"] == VERDICT_WAITING
    bad = call("event_eligibility_check", product="B001", event="위암", contract_date="작년쯤")
    assert bad["status"] == "needs_user_input" and bad["missing"] == ["contract_date"]


def test_event_without_elapsed_time_asks_for_it():
    r = call("event_eligibility_check", product="B001", event="갑상선암")
    assert r["verdict"] == VERDICT_UNKNOWN and r["missing"] == ["days_since_contract"] and r["ask"]
    no_periods = call("event_eligibility_check", product="튼튼어린이보험", event="아이가 놀이터에서 넘어져 팔이 부러졌어요")
    assert no_periods["verdict"] == VERDICT_COVERED and ids(no_periods["matched_coverages"]) == ["B008-C03"]


def test_event_exclusions_stages_and_accidents():
    drunk = call("event_eligibility_check", product="안심운전자보험", event="음주운전하다 사고가 났어요")
    assert drunk["verdict"] == VERDICT_EXCLUDED and any("음주운전" in s for s in drunk["exclusions_triggered"])
    trauma = call("event_eligibility_check", product="B011", event="넘어져 머리를 부딪혀 뇌출혈", days_since_contract=800)
    assert trauma["verdict"] == VERDICT_EXCLUDED
    stage = call("event_eligibility_check", product="B004", event="아버지가 중등도 치매 판정 받으셨어요",
                 days_since_contract="3년")
    assert stage["verdict"] == VERDICT_EXCLUDED and stage["matched_coverages"] == []
    assert {x["coverage_id"] for x in stage["not_matching_stage"]} == {"B004-C01", "B004-C02"}
    assert "B004-C03" in ids(stage["possible_coverages"])
    accident = call("event_eligibility_check", product="B007", event="교통사고로 사망", days_since_contract=100)
    assert accident["verdict"] == VERDICT_COVERED and accident["matched_coverages"][0]["payable_amount"] == 30_000_000
    illness = call("event_eligibility_check", product="B007", event="폐암으로 사망", days_since_contract=100)
    assert illness["verdict"] == VERDICT_REDUCED and illness["matched_coverages"][0]["payable_amount"] == 15_000_000
    child = call("event_eligibility_check", product="튼튼어린이보험", event="갑상선암", days_since_contract=100)
    assert child["verdict"] == VERDICT_EXCLUDED  # 소아암 진단비는 유사암 제외


def test_event_rider_only_and_unclear_events_ask():
    manual = call("event_eligibility_check", product="착한실손의료보험", event="도수치료 10회 받았어요")
    assert manual["verdict"] == VERDICT_UNKNOWN and "특약" in manual["ask"]
    vague = call("event_eligibility_check", product="B001", event="그냥 좀 아파요")
    assert vague["verdict"] == VERDICT_UNKNOWN and vague["ask"]
    assert all(r.get("verdict", VERDICT_UNKNOWN) in VERDICTS for r in (manual, vague))


def test_event_without_product_asks_with_the_products_that_cover_it():
    r = call("event_eligibility_check", event="임플란트 치료")
    assert r["status"] == "needs_user_input" and r["missing"] == ["product"]
    assert "든든한실버치아보험" in r["known"]["candidates"]


# --- reference lookups ----------------------------------------------------------------------------------

def test_diagnosis_definition_lookup_uses_the_reference_definitions():
    r = call("diagnosis_definition_lookup", term="유사암")
    assert r["term"] == "유사암" and "C73" in [c["code"] for c in r["related_codes"]]
    assert r["definition"] == ref.find_definition("유사암").definition
    mild = call("diagnosis_definition_lookup", term="경증치매")
    assert mild["term"] == "경도치매" and "CDR 척도 1점" in mild["definition"]
    unknown = call("diagnosis_definition_lookup", term="블라블라증후군")
    assert unknown["status"] == "not_found" and unknown["what"] == "term"


def test_icd_mapping_both_ways_and_ranges():
    code = call("icd_mapping_lookup", query="C73")
    assert code["matches"][0]["name"] == "갑상선의 악성 신생물"
    assert code["matches"][0]["benefit_categories"] == ["유사암", "질병입원수술"]
    name = call("icd_mapping_lookup", query="갑상선암")
    assert [m["code"] for m in name["matches"]] == ["C73"]
    vascular = call("icd_mapping_lookup", query="F01")
    assert [m["code"] for m in vascular["matches"]] == ["F00-F03", "F01"]
    assert "F00 알츠하이머병에서의 치매" in vascular["matches"][0]["codes_in_range"]
    assert call("icd_mapping_lookup", query="I20.9")["matches"][0]["code"] == "I20"
    missing = call("icd_mapping_lookup", query="Z99")
    assert missing["status"] == "not_found" and missing["what"] == "kcd"


def test_multi_benefit_conflict_rules_general_and_product():
    r = call("multi_benefit_conflict_rule", situation="갑상선암 진단비와 암진단비 둘 다 받나요")
    assert r["best_rule"]["rule_id"] == "CF01" and r["best_rule"]["payout"] == "중복 지급 불가"
    surgery = call("multi_benefit_conflict_rule", situation=["암수술비", "질병수술비"])
    assert surgery["best_rule"]["rule_id"] == "CF07"
    dementia = call("multi_benefit_conflict_rule", situation="경도치매 진단비 받은 후 중증치매", product="실속치매보험")
    assert {x["coverage_id"] for x in dementia["product_rules"]} >= {"B005-C02", "B005-C03"}
    unknown = call("multi_benefit_conflict_rule", situation="뭐가 뭔지")
    assert unknown["status"] == "not_found" and unknown["candidates"]


# --- rider_bundle_recommend -----------------------------------------------------------------------------

def test_rider_bundle_for_cancer_treatment_with_premiums_within_budget():
    plain = call("rider_bundle_recommend", product="첫날부터암보험", goal="암 치료비 강화")
    core = [b["rider_code"] for b in plain["bundle"] if b["priority"] == "핵심"]
    assert core == ["B001-R01", "B001-R02"] and plain["premium"] is None
    b001 = get_product("B001")
    priced = call("rider_bundle_recommend", product="B001", goal="암 치료비 강화", age="40세", sex="여", monthly_budget="월 4만원")
    premium = priced["premium"]
    included = [b["rider_code"] for b in priced["bundle"] if b["included"]]
    assert premium["total_monthly_premium"] == monthly_premium(b001, 40, "여성", riders=included)
    assert premium["base_monthly_premium"] == monthly_premium(b001, 40, "여성")
    assert premium["within_budget"] and premium["total_monthly_premium"] <= 40_000
    assert premium["dropped_for_budget"]  # all four riders do not fit in 4만원


def test_rider_bundle_other_goals():
    implant = call("rider_bundle_recommend", product="든든한실버치아보험", goal="치아 임플란트")
    assert implant["bundle"][0]["rider_code"] == "B003-R01"
    care = call("rider_bundle_recommend", product="B004", goal="치매 간병")
    assert {"B004-R02", "B004-R03"} <= {b["rider_code"] for b in care["bundle"]}
    too_old = call("rider_bundle_recommend", product="B001", goal="암", age=90, sex="남")
    assert too_old["premium"] is None and any("65세" in n for n in too_old["notes"])
    nothing = call("rider_bundle_recommend", product="B002", goal="노후 대비")
    assert nothing["status"] == "ok" and nothing["bundle"] == [] and nothing["available_riders"]


# --- asks, unknowns, junk -----------------------------------------------------------------------------

@pytest.mark.parametrize("name,args,missing", [
    ("coverage_summary", {}, ["product"]),
    ("coverage_detail", {"coverage_type": "암"}, ["product"]),
    ("benefit_amount_lookup", {"product": "B001", "benefit": "모름"}, ["benefit"]),
    ("benefit_limit_rules", {"product": "B003"}, ["benefit"]),
    ("event_eligibility_check", {"product": "B001"}, ["event"]),
    ("diagnosis_definition_lookup", {"term": "  "}, ["term"]),
    ("icd_mapping_lookup", {}, ["query"]),
    ("multi_benefit_conflict_rule", {"product": "B001"}, ["situation"]),
    ("rider_bundle_recommend", {"product": "B001"}, ["goal"]),
    ("rider_bundle_recommend", {"goal": "치매 간병"}, ["product"]),
])
def test_missing_required_argument_asks_in_korean(name, args, missing):
    r = call(name, **args)
    assert r["status"] == "needs_user_input" and r["missing"] == missing
    assert any("가" <= ch <= "힣" for ch in r["ask"])


@pytest.mark.parametrize("name,args", [
    ("coverage_summary", {"product": "없는보험상품"}),
    ("coverage_detail", {"product": "B999", "coverage_type": "암"}),
    ("benefit_amount_lookup", {"product": "첫날부터암보험", "benefit": "우주여행"}),
    ("benefit_limit_rules", {"product": "B009", "benefit": "임플란트"}),
    ("event_eligibility_check", {"product": "무지개보험", "event": "위암"}),
    ("diagnosis_definition_lookup", {"term": "쿼크"}),
    ("icd_mapping_lookup", {"query": "감기몸살"}),
    ("multi_benefit_conflict_rule", {"situation": "암진단비와 유사암", "product": "B999"}),
    ("rider_bundle_recommend", {"product": "B999", "goal": "암"}),
])
def test_unknown_names_are_not_found(name, args):
    assert call(name, **args)["status"] == "not_found"


def test_a_kind_of_product_asks_which_one():
    r = call("coverage_summary", product="치매보험")
    assert r["status"] == "needs_user_input" and {"전에없던치매간병보험", "실속치매보험"} <= set(r["known"]["candidates"])


JUNK = [None, "", "   ", "모름", "몰라요", "123", 0, -5, 3.7, math.nan, math.inf, True, [], ["x", 1], {"a": 1},
        "ㅁㄴㅇㄹ", "B999", "9999999999999", "C", "암보험", "!!@@##"]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_no_tool_raises_on_junk(tool):
    fields = list(tool.args_schema.model_fields)
    valid = {"product": "B001", "coverage_type": "암", "benefit": "암 진단비", "event": "위암", "term": "유사암",
             "query": "C73", "situation": "암진단비와 유사암", "goal": "암", "age": 40, "sex": "여성"}
    for junk in JUNK:
        call(tool.name, **{f: junk for f in fields})
        for f in fields:
            call(tool.name, **{f: junk})
            call(tool.name, **{**{k: v for k, v in valid.items() if k in fields}, f: junk})


@pytest.mark.parametrize("text,days", [
    ("30", 30), ("30일", 30), ("2주", 14), ("3개월", 91), ("두 달", 61), ("1년", 365), ("1년 반", 547),
    ("2년", 730), ("반년", 182), (45, 45), (12.9, 12), ("모름", None), ("", None), (-3, None), ({"a": 1}, None),
])
def test_days_since_contract_reads_user_words(text, days):
    assert coverage._clean_days(text) == days

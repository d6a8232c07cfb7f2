"""The 12 underwriting tools, invoked through LangChain with facts from the data they read."""

from __future__ import annotations

import json
import re

import pytest

from toolroute.domains.insurance import TOOL_MODULES
from toolroute.domains.insurance import customers as db
from toolroute.domains.insurance.products import get_product, monthly_premium, renewal_premiums
from toolroute.domains.insurance.reference import load_reference
from toolroute.domains.insurance.tools.underwriting import DISCLAIMER, TOOLS

T = {t.name: t for t in TOOLS}
STATUSES = {"ok", "needs_user_input", "not_found", "rejected"}


def call(name: str, args: dict) -> dict:
    """Invoke a tool like an agent would; every result must be a JSON-serialisable dict with a status."""
    result = T[name].invoke(args)
    assert isinstance(result, dict)
    assert result["status"] in STATUSES
    json.dumps(result, ensure_ascii=False)
    return result


# --- the module --------------------------------------------------------------------------------

def test_tools_match_the_contract_in_order():
    assert [t.name for t in TOOLS] == TOOL_MODULES["underwriting"]
    assert len(TOOLS) == 12


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_descriptions_are_short_korean(tool):
    text = tool.description
    assert re.search(r"[가-힣]", text)
    sentences = [s for s in re.split(r"(?<=[.다])\s+", text.strip()) if s.strip()]
    assert 1 <= len(sentences) <= 2, text
    for field in tool.args_schema.model_fields.values():
        assert re.search(r"[가-힣]", field.description or ""), field


def test_confusion_pairs_are_named_in_descriptions():
    assert "eligibility_by_product_rule" in T["underwriting_precheck"].description
    assert "renewal_premium_projection" in T["underwriting_renewal_premium_notice"].description
    assert "claim_required_forms" in T["underwriting_docs_required"].description


# --- underwriting_precheck -----------------------------------------------------------------------

def test_precheck_recent_cancer_declines_cancer_product_and_simplified_ones_too():
    r = call("underwriting_precheck", {"product": "첫날부터암보험", "age": "55세", "sex": "남성",
                                       "history": "3년 전 위암 수술 받았어요", "occupation": "택시 기사"})
    assert r["status"] == "ok"
    assert r["verdict"] == "거절 가능"
    assert r["underwriting_type"] == "일반심사"
    ko = {k["rule_id"]: k for k in r["knockouts_matched"]}
    assert "KO05" in ko and ko["KO05"]["months_ago"] == 36 and ko["KO05"]["timing_confirmed"]
    # cancer 3 years ago misses the 5-year control criterion: 40 + 30
    assert r["risk_score"]["total_score"] == 70
    assert r["occupation"]["risk_class"] == 3
    assert r["disclaimer"] == DISCLAIMER == "사전 점검이며 최종 심사 결과와 다를 수 있음"
    # the 간편고지 products ask about cancer and surgery within 5 years as well
    alternatives = {a["product_code"]: a for a in r["simplified_alternatives"]}
    assert set(alternatives) == {"B006", "B007"}
    assert not any(a["fits"] for a in alternatives.values())


def test_precheck_suggests_simplified_whole_life_when_standard_declines():
    r = call("underwriting_precheck", {"product": "건강해지는종신보험", "age": 58, "sex": "어머니",
                                       "history": "간경화 진단, 당뇨 인슐린 맞아요"})
    assert r["insured"]["sex"] == "여성"
    assert r["verdict"] == "거절 가능"
    assert [k["rule_id"] for k in r["knockouts_matched"]] == ["KO10"]
    points = {c["condition"]: c["points"] for c in r["risk_score"]["conditions"]}
    assert points == {"간경화": 45, "당뇨": 40}  # 당뇨 20 + uncontrolled 20 (insulin)
    assert r["risk_score"]["total_score"] == 85 and r["risk_score"]["band"] == "거절 가능"
    first = r["simplified_alternatives"][0]
    assert first["product_name"] == "간편고지종신보험" and first["fits"]
    assert any("간편고지종신보험" in reason for reason in r["reasons"])


def test_precheck_healthy_person_can_join_and_gets_the_premium():
    r = call("underwriting_precheck", {"product": "B001", "age": 40, "sex": "남", "history": "없음"})
    assert r["verdict"] == "가입 가능"
    assert r["knockouts_matched"] == [] and r["risk_score"]["total_score"] == 0
    assert r["standard_monthly_premium"] == monthly_premium(get_product("B001"), 40, "남성") == 22500
    assert r["standard_monthly_premium_text"] == "22,500원"
    assert r["simplified_alternatives"] == []


def test_precheck_controlled_conditions_are_conditional():
    r = call("underwriting_precheck", {"product": "첫날부터암보험", "age": 50, "sex": "여성",
                                       "history": "고혈압이랑 당뇨 있는데 둘 다 약으로 조절 잘 돼요"})
    assert r["risk_score"]["total_score"] == 25  # (15-5) + (20-5)
    assert r["verdict"] == "조건부"


def test_precheck_postpones_while_waiting_for_biopsy():
    r = call("underwriting_precheck", {"product": "첫날부터암보험", "age": 45, "sex": "여",
                                       "history": "갑상선 결절 있고 조직검사 결과 기다리는 중"})
    assert r["verdict"] == "연기"
    assert [k["rule_id"] for k in r["knockouts_matched"]] == ["KO06"]


def test_precheck_simplified_product_checks_the_355_questions():
    admitted = call("underwriting_precheck", {"product": "골라담는간편건강보험", "age": 60, "sex": "여",
                                              "history": "지금 폐렴으로 입원 중이에요"})
    assert {k["rule_id"] for k in admitted["knockouts_matched"]} == {"KO01", "KO03"}
    assert admitted["verdict"] == "거절 가능"
    old = call("underwriting_precheck", {"product": "골라담는간편건강보험", "age": 60, "sex": "여",
                                         "history": "7년 전에 맹장 수술, 고혈압약 먹어요"})
    assert old["verdict"] == "가입 가능"
    assert [k["rule_id"] for k in old["knockouts_outside_period"]] == ["KO03"]
    polyp = call("underwriting_precheck", {"product": "골라담는간편건강보험", "age": 50, "sex": "남",
                                           "history": "2024년 3월 대장용종 제거"})
    assert any("용종 절제는 수술" in c for c in polyp["to_confirm"])
    healthy = call("underwriting_precheck", {"product": "골라담는간편건강보험", "age": 50, "sex": "여", "history": "없음"})
    assert healthy["verdict"] == "가입 가능"
    assert any("일반심사" in reason and "저렴" in reason for reason in healthy["reasons"])


def test_precheck_delivery_rider_cannot_buy_driver_insurance():
    r = call("underwriting_precheck", {"product": "안심운전자보험", "age": 35, "sex": "남", "history": "없음",
                                       "occupation": "배달 라이더"})
    assert r["verdict"] == "거절 가능"
    assert r["occupation"]["effect_on_product"]["available"] is False


def test_precheck_unknown_history_timing_is_flagged():
    r = call("underwriting_precheck", {"product": "첫날부터암보험", "age": 50, "sex": "남", "history": "갑상선암 수술했어요"})
    ko = {k["rule_id"]: k for k in r["knockouts_matched"]}
    assert ko["KO05"]["timing_confirmed"] is False
    assert r["to_confirm"]


def test_precheck_asks_rejects_and_not_found():
    missing = call("underwriting_precheck", {"product": "첫날부터암보험", "age": 50, "sex": "남"})
    assert missing["status"] == "needs_user_input" and missing["missing"] == ["history"]
    too_old = call("underwriting_precheck", {"product": "첫날부터암보험", "age": 70, "sex": "남", "history": "없음"})
    assert too_old["status"] == "rejected"
    assert (too_old["join_age_min"], too_old["join_age_max"]) == (15, 65)
    unknown = call("underwriting_precheck", {"product": "없는보험", "age": 50, "sex": "남", "history": "없음"})
    assert unknown["status"] == "not_found"
    kind = call("underwriting_precheck", {"product": "치매보험", "age": 50, "sex": "남", "history": "없음"})
    assert kind["status"] == "needs_user_input"
    assert set(kind["known"]["candidates"]) == {"전에없던치매간병보험", "실속치매보험"}
    bad_sex = call("underwriting_precheck", {"product": "B001", "age": 50, "sex": "기타", "history": "없음"})
    assert bad_sex["status"] == "needs_user_input" and bad_sex["missing"] == ["sex"]


# --- questions, knockouts ----------------------------------------------------------------------

def test_questions_follow_the_underwriting_type():
    dental = call("underwriting_questions_generator", {"product": "든든한실버치아보험"})
    ids = [q["question_id"] for q in dental["questions"]]
    assert ids == [f"STD0{i}" for i in range(1, 10)] + ["DEN01", "DEN02", "DEN03"]
    assert dental["count"] == 12 and len(dental["script"]) == 12
    simple = call("underwriting_questions_generator", {"product": "B007"})
    assert simple["underwriting_type"] == "간편고지"
    assert simple["disclosure_name"] == "3.5.5 간편고지"
    assert [q["question_id"] for q in simple["questions"]] == ["SIM01", "SIM02", "SIM03"]
    assert [q["period"] for q in simple["questions"]] == ["최근 3개월", "최근 5년", "최근 5년"]
    assert {"DEM01", "DEM02", "DEM03"} <= {q["question_id"] for q in
                                          call("underwriting_questions_generator", {"product": "실속치매보험"})["questions"]}
    assert "CHD01" in {q["question_id"] for q in
                       call("underwriting_questions_generator", {"product": "튼튼어린이보험"})["questions"]}
    cancer = call("underwriting_questions_generator", {"product": "첫날부터암보험"})
    assert not any(q["question_id"].startswith(("DEN", "DEM", "SIM")) for q in cancer["questions"])
    assert call("underwriting_questions_generator", {})["status"] == "needs_user_input"


def test_knockout_rules_per_product():
    dementia = call("underwriting_knockout_rules", {"product": "실속치매보험"})
    assert [r["rule_id"] for r in dementia["rules"]] == ["KO01", "KO07", "KO08", "KO10", "KO11"]
    assert dementia["postpone_rules"] == ["KO01"]
    simple = call("underwriting_knockout_rules", {"product": "골라담는간편건강보험"})
    assert [r["rule_id"] for r in simple["rules"]] == ["KO01", "KO02", "KO03", "KO04"]
    driver = call("underwriting_knockout_rules", {"product": "안심운전자보험"})
    assert "KO13" in [r["rule_id"] for r in driver["rules"]]
    assert "KO05" not in [r["rule_id"] for r in driver["rules"]]


def test_knockout_rules_match_history_with_negation_and_periods():
    recheck = call("underwriting_knockout_rules", {
        "product": "골라담는간편건강보험",
        "history": "2개월 전 건강검진에서 재검사 받으라고 했고, 입원이나 수술 이력은 없어요"})
    assert [m["rule_id"] for m in recheck["matched"]] == ["KO02"]
    old = call("underwriting_knockout_rules", {"product": "간편고지종신보험", "history": "7년 전에 맹장 수술"})
    assert old["matched"] == [] and old["outside_period"][0]["months_ago"] == 84
    mixed = call("underwriting_knockout_rules", {"product": "간편고지종신보험",
                                                 "history": "10년 전 맹장 수술, 2년 전 무릎 수술"})
    assert [m["rule_id"] for m in mixed["matched"]] == ["KO03"] and mixed["outside_period"] == []
    assert mixed["matched"][0]["months_ago"] == 24
    stroke = call("underwriting_knockout_rules", {"product": "뇌심든든2대질환보험", "history": "3년 전 뇌경색으로 입원"})
    assert [m["rule_id"] for m in stroke["matched"]] == ["KO09"]
    clean = call("underwriting_knockout_rules", {"product": "실속치매보험", "history": "없음"})
    assert clean["matched"] == []


# --- documents ---------------------------------------------------------------------------------

def test_docs_by_channel_are_application_documents_not_claim_forms():
    tm = call("underwriting_docs_required", {"channel": "TM"})
    names = [d["name"] for d in tm["required_documents"]]
    assert "통화 녹취 동의" in names and "해피콜 (완전판매 모니터링)" in names
    assert "적합성·적정성 진단 (해당 상품)" in [d["name"] for d in tm["documents_if_applicable"]]
    assert not any("청구" in n or "진단서" in n for n in names)
    cm = call("underwriting_docs_required", {"channel": "온라인"})
    assert cm["channel"] == "CM" and "전자청약서 및 전자서명" in [d["name"] for d in cm["required_documents"]]


def test_docs_flags_add_conditional_documents():
    elderly = call("underwriting_docs_required", {"channel": "대면", "age": 70, "different_insured": "예",
                                                  "sum_insured": "6억"})
    assert "65세 이상 고령자 녹취 (중요사항 설명)" in [d["name"] for d in elderly["required_documents"]]
    added = " ".join(elderly["conditional_documents"])
    assert "피보험자 서면 동의" in added and "건강진단 또는 소득 증빙" in added
    assert "법정대리인" not in added
    young = call("underwriting_docs_required", {"channel": "대면", "age": 40, "sum_insured": "4억"})
    assert "65세 이상 고령자 녹취 (중요사항 설명)" not in [d["name"] for d in young["required_documents"]]
    assert young["conditional_documents"] == [] and young["flags"]["high_sum"] is False
    child = call("underwriting_docs_required", {"channel": "CM", "age": 10, "product": "튼튼어린이보험",
                                                "has_medical_history": True})
    assert child["flags"]["minor"] is True
    assert any("법정대리인" in d for d in child["conditional_documents"])
    assert any("진단서" in d for d in child["conditional_documents"])


def test_docs_ask_and_reject():
    assert call("underwriting_docs_required", {})["missing"] == ["channel"]
    assert call("underwriting_docs_required", {"channel": "팩스"})["status"] == "needs_user_input"
    not_sold = call("underwriting_docs_required", {"channel": "전화", "product": "튼튼어린이보험"})
    assert not_sold["status"] == "rejected" and not_sold["channels"] == ["CM", "대면"]
    too_old = call("underwriting_docs_required", {"channel": "대면", "product": "튼튼어린이보험", "age": 30})
    assert too_old["status"] == "rejected"


# --- waiting periods, exclusions, limitations ----------------------------------------------------

def test_waiting_periods_with_dates():
    r = call("underwriting_waiting_periods", {"product": "첫날부터암보험", "contract_date": "2026-03-01"})
    rows = {c["coverage_id"]: c for c in r["coverages"]}
    assert rows["B001-C01"]["waiting_days"] == 90
    assert rows["B001-C01"]["cover_start_date"] == "2026-05-30"
    assert rows["B001-C01"]["reduced_until"] == "2027-02-28"
    assert rows["B001-C01"]["full_benefit_from"] == "2027-03-01"
    assert rows["B001-C01"]["reduction"]["paid_pct"] == 50
    assert rows["B001-C03"]["waiting_days"] == 0 and rows["B001-C03"]["cover_start_date"] == "2026-03-01"
    assert rows["B001-C04"]["reduction"] is None
    dementia = call("underwriting_waiting_periods", {"product": "실속치매보험", "coverage": "경도치매",
                                                     "contract_date": "2026년 1월 1일"})
    (mild,) = dementia["coverages"]
    assert mild["coverage_id"] == "B005-C01" and mild["waiting_text"].startswith("계약일부터 1년 면책")
    assert (mild["cover_start_date"], mild["full_benefit_from"]) == ("2027-01-01", "2028-01-01")


def test_waiting_periods_by_coverage_and_errors():
    implant = call("underwriting_waiting_periods", {"product": "든든한실버치아보험", "coverage": "임플란트"})
    assert [(c["coverage_id"], c["waiting_days"]) for c in implant["coverages"]] == [("B003-C03", 180)]
    assert "hint" in implant
    assert call("underwriting_waiting_periods", {"product": "B003", "coverage": "라식"})["status"] == "not_found"
    bad = call("underwriting_waiting_periods", {"product": "B003", "contract_date": "언젠가"})
    assert bad["status"] == "needs_user_input" and bad["missing"] == ["contract_date"]


def test_exclusions():
    cancer = call("underwriting_exclusions", {"product": "첫날부터암보험"})
    assert len(cancer["exclusions"]) == 5
    assert cancer["coverage_exclusions"] == [{"coverage_id": "B001-C04", "coverage": "재진단암 진단비",
                                              "text": "유사암의 재진단은 보장하지 않습니다."}]
    dental = call("underwriting_exclusions", {"product": "든든한실버치아보험"})
    assert "유치와 사랑니 치료는 보장하지 않습니다." in dental["exclusions"]
    assert call("underwriting_exclusions", {"product": ""})["status"] == "needs_user_input"


def test_limitations():
    r = call("underwriting_limitations", {"product": "첫날부터암보험", "sum_insured": "6천만원"})
    assert (r["sum_insured_min"], r["sum_insured_max"]) == (10_000_000, 50_000_000)
    assert r["sum_insured_max_text"] == "5,000만원"
    assert r["requested"]["within_limits"] is False
    assert call("underwriting_limitations", {"product": "B001", "sum_insured": 30_000_000})["requested"]["within_limits"]
    medical = call("underwriting_limitations", {"product": "착한실손의료보험"})
    assert medical["sum_insured_min"] == medical["sum_insured_max"] == 50_000_000
    firefighter = call("underwriting_limitations", {"product": "B001", "occupation": "소방관", "age": 40})
    assert firefighter["occupation"]["occupation_limits"][0]["amount"] == 100_000_000
    assert firefighter["available"] is True
    rider = call("underwriting_limitations", {"product": "안심운전자보험", "occupation": "배달 라이더", "sum_insured": "1억"})
    assert rider["available"] is False and rider["requested"]["within_limits"] is False
    assert call("underwriting_limitations", {"product": "B001", "age": 70})["status"] == "rejected"
    unknown_job = call("underwriting_limitations", {"product": "B001", "occupation": "우주비행사"})
    assert unknown_job["status"] == "ok" and unknown_job["occupation"]["status"] == "not_found"


# --- reinstatement -----------------------------------------------------------------------------

def test_choi_sujin_terminated_cancer_contract_from_the_db():
    (terminated,) = [c for c in db.contracts_of("C0003") if c["status"] != "유지"]
    assert (terminated["product_name"], terminated["status"], terminated["termination_date"]) == (
        "첫날부터암보험", "해지", "2023-12-31")
    assert db.REFERENCE_DATE.isoformat() == "2026-12-01"
    r = call("underwriting_reinstatement_rule", {"name": "최수진"})
    (row,) = r["contracts"]
    assert row["contract_id"] == terminated["contract_id"]
    # 2023-12-31 + 3 years = 2026-12-31: still open on 2026-12-01, 30 days left
    assert row["deadline"] == "2026-12-31" and row["within_deadline"] and row["days_left"] == 30
    # the DB says 해지 without a reason: the verdict depends on it, so the tool asks
    assert row["verdict"] == "확인 필요" and row["reinstatable"] is None
    assert "환급금" in r["ask"]
    assert row["new_contract_option"]["monthly_premium"] == monthly_premium(get_product("B001"), 60, "여성") == 44900
    assert row["overdue_premium_estimate"]["months"] == 35


def test_choi_sujin_verdict_by_reason_and_date():
    unpaid = call("underwriting_reinstatement_rule", {"customer_id": "C0003", "reason": "보험료 미납으로 실효"})
    assert unpaid["contracts"][0]["verdict"] == "부활 가능"
    surrendered = call("underwriting_reinstatement_rule", {"name": "최수진", "reason": "해지 신청해서 환급금 받았어요"})
    assert surrendered["contracts"][0]["verdict"] == "부활 불가"
    assert surrendered["contracts"][0]["reason_case"] == "계약자가 해지를 신청해 해약환급금을 받은 계약"
    late = call("underwriting_reinstatement_rule", {"name": "최수진", "reason": "미납", "today": "2027-01-05"})
    assert late["contracts"][0]["verdict"] == "부활 불가"
    assert late["contracts"][0]["days_past_deadline"] == 5


def test_reinstatement_other_customers_and_dates():
    lapsed = call("underwriting_reinstatement_rule", {"name": "박준호"})
    (row,) = lapsed["contracts"]
    assert (row["status"], row["deadline"], row["verdict"]) == ("실효", "2028-09-30", "부활 가능")
    expired = call("underwriting_reinstatement_rule", {"customer_id": "C0006"})
    assert expired["contracts"][0]["deadline"] == "2025-03-31"
    assert expired["contracts"][0]["verdict"] == "부활 불가"
    matured = call("underwriting_reinstatement_rule", {"customer_id": "C0005"})
    assert [c["verdict"] for c in matured["contracts"]] == ["부활 불가"]
    nothing = call("underwriting_reinstatement_rule", {"name": "김민수"})
    assert nothing["contracts"] == []
    by_date = call("underwriting_reinstatement_rule", {"termination_date": "2023.12.31", "reason": "보험료를 못 냈어요"})
    assert by_date["verdict"] == "부활 가능" and by_date["deadline"] == "2026-12-31"
    asked = call("underwriting_reinstatement_rule", {})
    assert asked["status"] == "needs_user_input" and asked["rules"]["deadline_years"] == 3
    assert call("underwriting_reinstatement_rule", {"name": "이영희"})["status"] == "needs_user_input"
    assert call("underwriting_reinstatement_rule", {"name": "김민주"})["status"] == "not_found"
    assert call("underwriting_reinstatement_rule", {"termination_date": "2023-13-45"})["status"] == "needs_user_input"
    assert call("underwriting_reinstatement_rule", {"termination_date": "2027-06-01"})["status"] == "needs_user_input"


# --- renewal -----------------------------------------------------------------------------------

def test_renewal_eligibility():
    cancer = call("underwriting_renewal_eligibility", {"product": "첫날부터암보험", "age": "60세"})
    assert (cancer["renewal_period_years"], cancer["max_renewal_age"], cancer["can_renew"]) == (20, 100, True)
    assert cancer["if_joined_now"]["renewal_ages"] == [80]
    assert call("underwriting_renewal_eligibility", {"product": "B001", "age": 100})["can_renew"] is False
    whole_life = call("underwriting_renewal_eligibility", {"product": "건강해지는종신보험"})
    assert whole_life["renewable"] is False and "비갱신형" in whole_life["summary"]
    medical = call("underwriting_renewal_eligibility", {"product": "착한실손의료보험", "age": 30})
    assert medical["renewal_period_years"] == 1 and "재가입" in medical["renewal_note"]
    assert medical["if_joined_now"]["renewal_count"] == 69


def test_renewal_premium_notice_for_a_new_contract_matches_the_catalogue():
    r = call("underwriting_renewal_premium_notice", {"product": "첫날부터암보험", "age": 50, "sex": "남"})
    (step,) = renewal_premiums(get_product("B001"), 50, "남성", renewals=1)
    assert r["renewal_age"] == step["age"] == 70
    assert r["next_monthly_premium"] == step["monthly_premium"] == 76000
    assert r["current_monthly_premium"] == 34800
    assert r["increase_pct"] == step["increase_pct"] == 118.4
    assert "renewal_premium_projection" in r["see_also"]


def test_renewal_premium_notice_for_held_contracts_uses_the_term_start_premium():
    # 한동욱 (71) holds 든든한실버치아보험 since 2024-04-01 (age 69), next renewal 2034-04-01
    (dental,) = [c for c in db.contracts_of("C0008") if c["product_code"] == "B003"]
    r = call("underwriting_renewal_premium_notice", {"product": "든든한실버치아보험", "age": 71, "sex": "남성",
                                                    "years_until_renewal": "8년"})
    assert r["current_term_start_age"] == 69 and r["renewal_age"] == 79
    assert r["current_monthly_premium"] == dental["monthly_premium"] == 38970
    # 김민수 (52) holds 첫날부터암보험 since age 44, next renewal at 64
    (cancer,) = [c for c in db.contracts_of("C0001") if c["product_code"] == "B001"]
    kim = call("underwriting_renewal_premium_notice", {"product": "B001", "age": 52, "sex": "남", "years_until_renewal": 12})
    assert kim["current_monthly_premium"] == cancer["monthly_premium"] == 27420


def test_renewal_premium_notice_rejects_and_asks():
    assert call("underwriting_renewal_premium_notice", {"product": "건강해지는종신보험", "age": 50, "sex": "남"})[
        "status"] == "rejected"
    assert call("underwriting_renewal_premium_notice", {"product": "B001", "age": 70, "sex": "남"})["status"] == "rejected"
    assert call("underwriting_renewal_premium_notice", {"product": "B001", "age": 50, "sex": "남",
                                                        "years_until_renewal": 25})["status"] == "needs_user_input"
    missing = call("underwriting_renewal_premium_notice", {"product": "B001", "age": 50})
    assert missing["missing"] == ["sex"]


# --- occupation and disclosure score -----------------------------------------------------------

@pytest.mark.parametrize("job, risk_class, surcharge", [
    ("택시 기사", 3, 10), ("택시기사", 3, 10), ("소방관", 4, 25), ("배달 라이더", 5, 50),
    ("건설 현장 근로자", 4, 25), ("건설현장 근로자", 4, 25), ("회사원", 1, 0),
])
def test_high_risk_jobs_resolve(job, risk_class, surcharge):
    r = call("underwriting_high_risk_job_check", {"occupation": job})
    assert r["status"] == "ok"
    assert (r["risk_class"], r["surcharge_pct"]) == (risk_class, surcharge)
    assert r["surcharge_pct"] == load_reference().occupation_classes[risk_class].surcharge_pct


def test_high_risk_job_details_and_product_effect():
    rider = call("underwriting_high_risk_job_check", {"occupation": "배달 라이더", "product": "안심운전자보험"})
    assert "운전자보험" in rider["declined_coverages"]
    assert rider["effect_on_product"]["verdict"] == "가입 불가"
    taxi = call("underwriting_high_risk_job_check", {"occupation": "택시 기사", "product": "B009"})
    assert taxi["effect_on_product"]["available"] is True
    assert any("영업용" in r for r in taxi["effect_on_product"]["restrictions"])
    cancer = call("underwriting_high_risk_job_check", {"occupation": "택시 기사", "product": "B001"})
    assert cancer["effect_on_product"]["surcharge_pct"] == 0  # 질병 보장은 직업 할증 없음
    unknown = call("underwriting_high_risk_job_check", {"occupation": "우주비행사"})
    assert unknown["status"] == "not_found"
    close = call("underwriting_high_risk_job_check", {"occupation": "소방"})
    assert close["status"] == "not_found" and "소방관" in close["candidates"]
    assert call("underwriting_high_risk_job_check", {})["missing"] == ["occupation"]


def test_disclosure_risk_score():
    controlled = call("underwriting_disclosure_risk_score",
                      {"history": "고혈압약 5년째 먹고 있고 조절 잘 돼요. 당뇨는 없어요"})
    (htn,) = controlled["conditions"]
    assert (htn["condition"], htn["base_points"], htn["modifier"], htn["points"]) == ("고혈압", 15, -5, 10)
    assert controlled["negated_conditions"] == ["당뇨"]
    assert controlled["band"] == "표준" and controlled["total_score"] == 10
    flagged = call("underwriting_disclosure_risk_score", {"history": "고혈압이랑 당뇨", "controlled": "예"})
    assert flagged["total_score"] == 25 and flagged["band"] == "조건부"
    worse = call("underwriting_disclosure_risk_score", {"history": "고혈압이랑 당뇨", "controlled": False})
    assert worse["total_score"] == 30 + 40 and worse["band"] == "거절 가능"
    unknown = call("underwriting_disclosure_risk_score", {"history": "고혈압이랑 당뇨"})
    assert unknown["total_score"] == 35 and unknown["notes"]
    cancer = call("underwriting_disclosure_risk_score", {"history": "3년 전 위암 수술 받았어요"})
    assert cancer["total_score"] == 70 and "5년 이상" in cancer["conditions"][0]["modifier_reason"]
    cured = call("underwriting_disclosure_risk_score", {"history": "10년 전 위암 수술, 재발 없이 완치"})
    assert cured["total_score"] == 25
    assert any("간편고지와 암보험" in c for c in cancer["cautions"])
    none = call("underwriting_disclosure_risk_score", {"history": "없음"})
    assert none["total_score"] == 0 and none["band"] == "표준"
    other = call("underwriting_disclosure_risk_score", {"history": "발목 골절"})
    assert other["conditions"] == [] and other["notes"]
    assert call("underwriting_disclosure_risk_score", {"history": "모름"})["status"] == "needs_user_input"


# --- robustness --------------------------------------------------------------------------------

JUNK = [None, "", "   ", "모름", "??", 0, -5, 3.7, float("nan"), float("inf"), True, [], {}, ["a", 1],
        {"x": 1}, "x" * 300, "😀", "2023-13-45", "9999세", 10**12]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_no_tool_raises_on_junk(tool):
    fields = list(tool.args_schema.model_fields)
    for junk in JUNK:
        call(tool.name, {field: junk for field in fields})
        for field in fields:
            call(tool.name, {field: junk})
    assert call(tool.name, {})["status"] in {"needs_user_input", "ok"}

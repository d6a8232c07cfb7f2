"""The 18 product and premium tools: fixed scenario numbers, missing arguments, unknown names,
join ages, junk arguments, JSON-serialisable results, all through the LangChain interface."""

from __future__ import annotations

import json
import math

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from toolroute.domains.insurance import TOOL_MODULES
from toolroute.domains.insurance import products as catalog
from toolroute.domains.insurance.tools import premium, product
from toolroute.domains.insurance.tools.premium import (
    affordability_check,
    amount_suggest,
    payment_cycle_options,
    plan_options,
    premium_compare,
    premium_estimate,
    renewal_premium_projection,
    surrender_value_explain,
)
from toolroute.domains.insurance.tools.product import (
    eligibility_by_product_rule,
    product_compare,
    product_faq_lookup,
    product_get,
    product_latest_version_check,
    product_search,
    rider_get,
    rider_list,
    rider_search,
    sales_channel_availability,
)

ALL_TOOLS = [*product.TOOLS, *premium.TOOLS]
STATUSES = {"ok", "needs_user_input", "not_found", "rejected"}


def call(tool, args: dict) -> dict:
    """Invoke through LangChain; every result must be a JSON-serialisable dict with a known status."""
    result = tool.invoke(args)
    assert isinstance(result, dict), (tool.name, args, result)
    assert result["status"] in STATUSES, (tool.name, args, result)
    json.dumps(result, ensure_ascii=False, allow_nan=False)
    return result


def P(code: str) -> catalog.Product:
    return catalog.load_products()[code]


# --- contract --------------------------------------------------------------------------------------

def test_tool_names_and_order_follow_the_contract():
    assert [t.name for t in product.TOOLS] == TOOL_MODULES["product"]
    assert [t.name for t in premium.TOOLS] == TOOL_MODULES["premium"]


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_descriptions_are_short_korean_and_schemas_convert(tool):
    description = tool.description.strip()
    assert any("가" <= ch <= "힣" for ch in description)
    assert 1 <= description.count("다.") <= 2, description
    schema = convert_to_openai_tool(tool)["function"]
    assert schema["name"] == tool.name
    for name, field in schema["parameters"]["properties"].items():
        assert any("가" <= ch <= "힣" for ch in field.get("description", "")), (tool.name, name)


# --- fixed scenario numbers ------------------------------------------------------------------------

SCENARIO_PREMIUMS = [
    ("건강해지는종신보험", "B002", 70, "남성", 262_000),
    ("든든한실버치아보험", "B003", 70, "남성", 39_800),
    ("전에없던치매간병보험", "B004", 55, "여성", 43_950),
    ("실속치매보험", "B005", 55, "여성", 17_950),
]


@pytest.mark.parametrize("name,code,age,sex,expected", SCENARIO_PREMIUMS)
def test_premium_estimate_scenario_numbers(name, code, age, sex, expected):
    assert catalog.monthly_premium(P(code), age, sex) == expected  # the data agrees with the seed
    result = call(premium_estimate, {"product": name, "age": age, "sex": sex})
    assert result["status"] == "ok"
    assert result["product_code"] == code
    assert result["monthly_premium"] == expected
    assert result["monthly_premium_text"] == f"{expected:,}원"
    assert result["payment_term"] == P(code).premium.base_payment_term


def test_premium_estimate_reads_father_and_age_words_and_sums_two_products():
    one = call(premium_estimate, {"product": "B002", "age": "70세", "sex": "아버지"})
    assert (one["sex"], one["age"], one["monthly_premium"]) == ("남성", 70, 262_000)
    both = call(premium_estimate, {"product": "건강해지는종신보험이랑 든든한실버치아보험", "age": 70, "sex": "남"})
    assert both["status"] == "ok"
    assert [i["monthly_premium"] for i in both["items"]] == [262_000, 39_800]
    assert both["total_monthly_premium"] == 301_800
    assert both["total_monthly_premium_text"] == "301,800원"


def test_premium_compare_dementia_products_for_a_55_year_old_woman():
    result = call(premium_compare, {"products": ["치매간병보험", "실속치매보험"], "age": 55, "sex": "여성"})
    assert result["status"] == "ok"
    assert [(i["product_code"], i["monthly_premium"]) for i in result["items"]] == [("B004", 43_950), ("B005", 17_950)]
    assert result["cheapest"]["product_code"] == "B005"
    assert result["difference"] == 26_000 and result["difference_text"] == "26,000원"
    assert result["total_monthly_premium"] == 61_900
    # one string with both names works too
    again = call(premium_compare, {"products": "치매간병보험이랑 실속치매보험", "age": "55", "sex": "여"})
    assert again["difference"] == 26_000


def test_premium_estimate_with_term_and_riders_matches_products_module():
    result = call(premium_estimate, {"product": "B001", "age": 40, "sex": "남", "payment_term": "10년",
                                     "riders": ["암주요치료비", "B001-R03"]})
    expected = catalog.monthly_premium(P("B001"), 40, "남성", payment_term="10년납", riders=["B001-R01", "B001-R03"])
    assert result["monthly_premium"] == expected
    assert result["payment_term"] == "10년납" and not result["is_base_plan"]
    assert [r["rider_code"] for r in result["riders"]] == ["B001-R01", "B001-R03"]
    assert result["base_monthly_premium"] + sum(r["monthly_addon"] for r in result["riders"]) == expected


# --- missing arguments -----------------------------------------------------------------------------

MISSING = [
    (product_get, {}, ["product"]),
    (product_compare, {}, ["products"]),
    (product_compare, {"products": ["B004"]}, ["products"]),
    (product_latest_version_check, {}, ["product"]),
    (product_latest_version_check, {"product": "B001"}, ["version"]),
    (product_latest_version_check, {"product": "B001", "version": "최신인가요"}, ["version"]),
    (rider_list, {}, ["product"]),
    (rider_search, {}, ["keyword"]),
    (rider_get, {}, ["rider"]),
    (eligibility_by_product_rule, {}, ["product"]),
    (product_faq_lookup, {}, ["product"]),
    (sales_channel_availability, {}, ["product", "channel"]),
    (sales_channel_availability, {"product": "B001", "channel": "우편"}, ["channel"]),
    (product_search, {"channel": "라디오"}, ["channel"]),
    (premium_estimate, {}, ["product", "age", "sex"]),
    (premium_estimate, {"product": "B002", "age": 70}, ["sex"]),
    (premium_estimate, {"product": "B002", "sex": "남"}, ["age"]),
    (premium_estimate, {"product": "B002", "age": 70, "sex": "모름"}, ["sex"]),
    (premium_estimate, {"product": "B002", "age": 70, "sex": "외계인"}, ["sex"]),
    (premium_estimate, {"product": "B002", "age": 200, "sex": "남"}, ["age"]),
    (premium_estimate, {"product": "B002", "age": 40, "sex": "남", "payment_term": "99년납"}, ["payment_term"]),
    (premium_compare, {}, ["products", "age", "sex"]),
    (premium_compare, {"products": "B004, B005", "age": 55}, ["sex"]),
    (plan_options, {}, ["product"]),
    (amount_suggest, {}, ["annual_income", "goal"]),
    (amount_suggest, {"goal": "사망보장"}, ["annual_income"]),
    (amount_suggest, {"annual_income": "모름", "goal": "암"}, ["annual_income"]),
    (amount_suggest, {"annual_income": 5000}, ["goal"]),
    (renewal_premium_projection, {}, ["product"]),
    (renewal_premium_projection, {"product": "B001"}, ["age", "sex"]),
    (affordability_check, {}, ["product", "monthly_budget", "age", "sex"]),
    (affordability_check, {"product": "B004", "age": 55, "sex": "여"}, ["monthly_budget"]),
    (payment_cycle_options, {}, ["product"]),
    (surrender_value_explain, {}, ["product"]),
]


@pytest.mark.parametrize("tool,args,missing", MISSING, ids=[f"{t.name}-{i}" for i, (t, _, _) in enumerate(MISSING)])
def test_missing_arguments_ask_in_korean(tool, args, missing):
    result = call(tool, args)
    assert result["status"] == "needs_user_input", result
    assert result["missing"] == missing
    assert any("가" <= ch <= "힣" for ch in result["ask"])


def test_a_kind_of_product_asks_which_one():
    result = call(premium_estimate, {"product": "치매보험", "age": 55, "sex": "여"})
    assert result["status"] == "needs_user_input"
    assert result["known"]["candidates"] == ["전에없던치매간병보험", "실속치매보험"]


# --- unknown names ---------------------------------------------------------------------------------

@pytest.mark.parametrize("tool,args", [
    (product_get, {"product": "실손치매보험"}),
    (premium_estimate, {"product": "실손치매보험", "age": 55, "sex": "여"}),
    (surrender_value_explain, {"product": "실손치매보험"}),
    (product_compare, {"products": ["B005", "실손치매보험"]}),
])
def test_unknown_product_is_not_found_with_candidates(tool, args):
    result = call(tool, args)
    assert result["status"] == "not_found" and result["what"] == "product"
    assert "실속치매보험" in result["candidates"]


def test_unknown_rider_is_not_found_with_the_products_riders():
    result = call(rider_get, {"rider": "우주비행 특약", "product": "첫날부터암보험"})
    assert result["status"] == "not_found" and result["what"] == "rider"
    assert set(result["candidates"]) <= {r.name for r in P("B001").riders} and result["candidates"]
    bad = call(premium_estimate, {"product": "B001", "age": 40, "sex": "남", "riders": ["간병 특약"]})
    assert bad["status"] == "not_found" and bad["candidates"] == [r.name for r in P("B001").riders]
    assert call(rider_search, {"keyword": "우주비행"})["status"] == "not_found"


def test_product_search_without_match_is_not_found():
    result = call(product_search, {"keyword": "우주여행"})
    assert result["status"] == "not_found"
    assert result["categories"]


# --- join ages -------------------------------------------------------------------------------------

@pytest.mark.parametrize("tool,args,code", [
    (premium_estimate, {"product": "전에없던치매간병보험", "age": 80, "sex": "여"}, "B004"),
    (premium_estimate, {"product": "든든한실버치아보험", "age": "45세", "sex": "남"}, "B003"),
    (eligibility_by_product_rule, {"product": "B003", "age": 45}, "B003"),
    (plan_options, {"product": "B008", "age": 30, "sex": "여"}, "B008"),
    (rider_list, {"product": "B002", "age": 71, "sex": "남"}, "B002"),
    (affordability_check, {"product": "B002", "monthly_budget": "30만원", "age": 75, "sex": "남"}, "B002"),
    (surrender_value_explain, {"product": "B012", "age": 65, "sex": "여"}, "B012"),
    (payment_cycle_options, {"product": "B012", "age": 65, "sex": "여"}, "B012"),
])
def test_age_outside_join_ages_is_rejected_with_the_range(tool, args, code):
    result = call(tool, args)
    assert result["status"] == "rejected", result
    p = P(code)
    assert (result["join_age_min"], result["join_age_max"]) == (p.join_age_min, p.join_age_max)
    assert result["allowed_age"] == f"{p.join_age_min}~{p.join_age_max}세"
    assert f"{p.join_age_min}세부터 {p.join_age_max}세까지" in result["reason"]


def test_premium_compare_skips_a_product_the_age_cannot_join():
    mixed = call(premium_compare, {"products": ["B002", "B003"], "age": 45, "sex": "남"})
    assert mixed["status"] == "ok"
    assert [i["product_code"] for i in mixed["items"]] == ["B002"]
    assert mixed["unavailable"][0]["product_code"] == "B003"
    none = call(premium_compare, {"products": ["B002", "B003"], "age": 85, "sex": "남"})
    assert none["status"] == "rejected" and len(none["unavailable"]) == 2


# --- premium tools ---------------------------------------------------------------------------------

def test_plan_options_gives_every_payment_term_with_its_premium():
    p = P("B004")
    result = call(plan_options, {"product": "치매간병보험", "age": 55, "sex": "여"})
    assert [plan["payment_term"] for plan in result["plans"]] == p.payment_terms
    by_term = {plan["payment_term"]: plan for plan in result["plans"]}
    for term in p.payment_terms:
        assert by_term[term]["factor"] == p.premium.term_factors[term]
        assert by_term[term]["monthly_premium"] == catalog.monthly_premium(p, 55, "여성", payment_term=term)
    assert by_term["20년납"]["monthly_premium"] == 43_950 and by_term["20년납"]["is_base"]
    assert by_term["10년납"]["monthly_premium"] > 43_950 > by_term["전기납"]["monthly_premium"]
    assert by_term["20년납"]["total_paid"] == 43_950 * 12 * 20
    assert by_term["전기납"]["payment_years"] == 100 - 55  # 100세만기
    without_person = call(plan_options, {"product": "B002"})
    assert "monthly_premium" not in without_person["plans"][0] and without_person["ask"]


def test_renewal_projection_follows_products_renewal_premiums():
    p = P("B001")
    result = call(renewal_premium_projection, {"product": "첫날부터암보험", "age": 40, "sex": "남"})
    assert result["status"] == "ok"
    assert result["current_monthly_premium"] == catalog.monthly_premium(p, 40, "남성")
    expected = catalog.renewal_premiums(p, 40, "남성", renewals=10)
    assert [(s["age"], s["monthly_premium"]) for s in result["path"]] == [
        (s["age"], s["monthly_premium"]) for s in expected]
    assert [s["age"] for s in result["path"]] == [60, 80]
    assert result["projected_total_paid"] == 12 * 20 * (22_500 + 52_600 + 101_000)
    limited = call(renewal_premium_projection, {"product": "B001", "age": 40, "sex": "남", "renewals": "1회"})
    assert len(limited["path"]) == 1


def test_renewal_projection_for_annual_renewal_is_sampled_and_stops_below_max_age():
    result = call(renewal_premium_projection, {"product": "B010", "age": 40, "sex": "여"})
    ages = [s["age"] for s in result["path"]]
    assert result["path_sampled"] and len(ages) <= 11
    assert ages == sorted(ages) and ages[-1] == 99
    premiums = [s["monthly_premium"] for s in result["path"]]
    assert premiums == sorted(premiums)


def test_renewal_projection_for_an_existing_contract_past_the_join_ages():
    result = call(renewal_premium_projection, {"product": "B001", "age": 70, "sex": "여"})
    assert result["status"] == "ok"
    assert result["current_monthly_premium"] == catalog.attained_age_premium(P("B001"), 70, "여성")
    assert [s["age"] for s in result["path"]] == [90]
    too_old = call(renewal_premium_projection, {"product": "B001", "age": 100, "sex": "여"})
    assert too_old["status"] == "rejected"


def test_renewal_projection_rejects_non_renewable_products():
    result = call(renewal_premium_projection, {"product": "건강해지는종신보험", "age": 70, "sex": "남"})
    assert result["status"] == "rejected" and result["renewable"] is False
    assert "비갱신형" in result["reason"]
    assert result["level_monthly_premium"] == 262_000
    # no age or sex needed to say so
    assert call(renewal_premium_projection, {"product": "B005"})["status"] == "rejected"


def test_affordability_over_budget_suggests_cheaper_terms_and_products():
    result = call(affordability_check, {"product": "전에없던치매간병보험", "monthly_budget": "월 4만원",
                                        "age": 55, "sex": "여"})
    assert result["verdict"] == "예산 초과" and result["fits_budget"] is False
    assert result["monthly_budget"] == 40_000 and result["headroom"] == 40_000 - 43_950
    alternatives = result["alternatives"]
    assert {"kind": "납입기간 변경", "payment_term": "전기납"}.items() <= alternatives[0].items()
    assert alternatives[0]["monthly_premium"] == catalog.monthly_premium(P("B004"), 55, "여성", payment_term="전기납")
    assert any(a["kind"] == "다른 상품" and a["product_code"] == "B005" for a in alternatives)
    assert all(a["monthly_premium"] <= 40_000 for a in alternatives)


def test_affordability_within_budget_reports_headroom():
    result = call(affordability_check, {"product": "B005", "monthly_budget": 3, "age": 55, "sex": "여"})
    assert result["monthly_budget"] == 30_000  # a bare 3 is read as 3만원
    assert result["verdict"] == "예산 내" and result["headroom"] == 30_000 - 17_950
    assert "alternatives" not in result
    both = call(affordability_check, {"product": "B002, B003", "monthly_budget": "30만원", "age": 70, "sex": "남"})
    assert both["monthly_premium"] == 301_800 and both["verdict"] == "예산 초과"


def test_amount_suggest_follows_the_documented_income_rules():
    death = call(amount_suggest, {"annual_income": "연봉 5천만원", "goal": "사망보장"})
    assert (death["recommended_min"], death["recommended_max"]) == (150_000_000, 250_000_000)
    cancer = call(amount_suggest, {"annual_income": 5000, "goal": "암진단비"})  # 5000 = 5,000만원
    assert (cancer["recommended_min"], cancer["recommended_max"]) == (50_000_000, 100_000_000)
    assert cancer["annual_income"] == 50_000_000
    # a product bounds the amount to its sum-insured limits, and names the goal when none is given
    bounded = call(amount_suggest, {"annual_income": 5000, "product": "첫날부터암보험"})
    assert bounded["goal"] == "암진단비"
    assert bounded["suggested_amount_in_product"] == P("B001").sum_insured_max
    assert bounded["bounded_by_product"] is True
    low = call(amount_suggest, {"annual_income": "1000만원", "goal": "사망", "product": "건강해지는종신보험"})
    assert low["suggested_amount_in_product"] == low["suggested_amount"] == 40_000_000
    # cover that is not sized by income
    dental = call(amount_suggest, {"annual_income": 5000, "product": "든든한실버치아보험"})
    assert dental["status"] == "rejected" and dental["sum_insured"]["max"] == P("B003").sum_insured_max


def test_payment_cycles_come_from_the_product():
    dental = call(payment_cycle_options, {"product": "B003", "age": 70, "sex": "남"})
    assert dental["payment_cycles"] == ["월납"] and "연납" in dental["unavailable_cycles"]
    assert dental["cycles"][0]["amount_per_payment"] == 39_800
    pension = call(payment_cycle_options, {"product": "B012", "age": 40, "sex": "여"})
    by_cycle = {c["cycle"]: c for c in pension["cycles"]}
    assert by_cycle["연납"]["amount_per_payment"] == 12 * pension["monthly_premium"]
    assert by_cycle["일시납"]["amount_per_payment"] is None


def test_surrender_value_uses_the_examples():
    p = P("B002")
    result = call(surrender_value_explain, {"product": "B002", "years": "10년", "age": 40, "sex": "남"})
    assert result["surrender_type"] == "저해지"
    assert [e["year"] for e in result["examples"]] == [e.year for e in p.surrender.examples]
    monthly = catalog.monthly_premium(p, 40, "남성")
    at = result["at_year"]
    assert at["refund_ratio"] == 0.45 and not at["interpolated"]
    assert at["premiums_paid"] == monthly * 12 * 10
    assert at["estimated_refund"] == round(monthly * 12 * 10 * 0.45)
    later = call(surrender_value_explain, {"product": "B002", "years": 25, "age": 40, "sex": "남"})
    assert later["at_year"]["premiums_paid"] == monthly * 12 * 20  # 20년납: paying stops after 20 years
    assert later["at_year"]["interpolated"] and 0.98 < later["at_year"]["refund_ratio"] < 1.1
    no_refund = call(surrender_value_explain, {"product": "든든한실버치아보험", "years": 5})
    assert no_refund["surrender_type"] == "무해지" and no_refund["at_year"]["refund_ratio"] == 0


# --- product tools ---------------------------------------------------------------------------------

def test_product_search_scenarios():
    dementia = call(product_search, {"keyword": "치매"})
    assert [p["product_code"] for p in dementia["products"]] == ["B004", "B005"]
    cancer_60 = call(product_search, {"keyword": "암", "age": "60세"})
    codes = [p["product_code"] for p in cancer_60["products"]]
    assert "B001" in codes and "B008" not in codes
    assert any(e["product_code"] == "B008" for e in cancer_60["excluded_by_age"])
    senior = call(product_search, {"keyword": "70세 아버지 사망보장이랑 치아보험"})
    codes = [p["product_code"] for p in senior["products"]]
    assert {"B002", "B003"} <= set(codes) and senior["criteria"]["age"] == 70
    assert all(p["join_age_min"] <= 70 <= p["join_age_max"] for p in senior["products"])
    simplified = call(product_search, {"keyword": "간편심사 건강"})
    assert [p["product_code"] for p in simplified["products"]] == ["B006"]
    assert call(product_search, {})["count"] == len(catalog.load_products())
    tm_only = call(product_search, {"channel": "전화"})
    assert all("TM" in p["channels"] for p in tm_only["products"])


def test_product_get_and_compare():
    got = call(product_get, {"product": "실버치아보험"})["product"]
    p = P("B003")
    assert got["product_code"] == "B003" and got["payment_cycles"] == p.payment_cycles
    assert got["sum_insured"]["max"] == p.sum_insured_max and got["version"] == p.version
    compared = call(product_compare, {"products": "B004, B005", "age": 55, "sex": "여"})
    assert [r["monthly_premium"] for r in compared["products"]] == [43_950, 17_950]
    assert compared["premium_difference"] == 26_000 and compared["cheapest"] == "실속치매보험"
    assert "상품 종류" in compared["differences"] and "심사 방식" not in compared["differences"]
    no_price = call(product_compare, {"products": ["B004", "B005"], "age": 55})
    assert "monthly_premium" not in no_price["products"][0] and no_price["premium_note"]


@pytest.mark.parametrize("given,is_latest,verdict", [
    ("2026.07", True, "최신 버전"),
    ("2026-07-01", True, "최신 버전"),
    ("2025.07", False, "이전 버전"),
    ("2026년 1월", False, "이전 버전"),
    ("24.03", False, "이전 버전(이력에 없는 버전)"),
    ("2027.01", None, "확인 필요"),
])
def test_version_check_against_products_yaml(given, is_latest, verdict):
    result = call(product_latest_version_check, {"product": "첫날부터암보험", "version": given})
    assert result["status"] == "ok"
    assert result["current_version"] == P("B001").version
    assert (result["is_latest"], result["verdict"]) == (is_latest, verdict)


def test_rider_tools():
    listed = call(rider_list, {"product": "B001", "age": 40, "sex": "남"})
    assert [r["rider_code"] for r in listed["riders"]] == [r.code for r in P("B001").riders]
    base = catalog.monthly_premium(P("B001"), 40, "남성")
    assert listed["riders"][0]["monthly_addon"] == catalog.monthly_premium(
        P("B001"), 40, "남성", riders=["B001-R01"]) - base
    assert listed["riders"][2]["monthly_addon"] == 1_800 and listed["riders"][2]["premium_addon"] == "월 1,800원"
    found = call(rider_search, {"keyword": "수술 관련 특약", "product": "첫날부터암보험"})
    assert "B001-R04" in [r["rider_code"] for r in found["riders"]]
    everywhere = call(rider_search, {"keyword": "재해사망"})
    assert {r["product_code"] for r in everywhere["riders"]} == {"B002", "B007"}
    by_code = call(rider_get, {"rider": "b002-r01"})
    assert by_code["rider"]["rider_name"] == "재해사망 특약" and by_code["rider"]["product_code"] == "B002"
    ambiguous = call(rider_get, {"rider": "재해사망"})
    assert ambiguous["status"] == "needs_user_input" and ambiguous["missing"] == ["product"]
    resolved = call(rider_get, {"rider": "재해사망", "product": "간편고지종신보험"})
    assert resolved["rider"]["rider_code"].startswith("B007-")


def test_eligibility_rules_and_checks():
    result = call(eligibility_by_product_rule, {"product": "골라담는간편건강보험", "age": 48, "channel": "전화"})
    assert result["status"] == "ok" and result["verdict"] == "상품 규칙상 가입 가능"
    assert result["rules"]["simplified_underwriting"] is True
    assert result["rules"]["simplified_disclosure"]["name"] == P("B006").simplified_disclosure.name
    wrong_channel = call(eligibility_by_product_rule, {"product": "B003", "age": 70, "channel": "대면"})
    assert wrong_channel["status"] == "rejected" and wrong_channel["channel"] == "대면"
    rules_only = call(eligibility_by_product_rule, {"product": "B002"})
    assert rules_only["rules"]["join_age_max"] == 70 and rules_only["verdict"] is None


def test_faq_and_channels():
    faq = call(product_faq_lookup, {"product": "B001", "question": "갑상선암도 보장돼?"})
    assert faq["matched"] and "갑상선암" in faq["faqs"][0]["question"]
    everything = call(product_faq_lookup, {"product": "B001"})
    assert everything["count"] == len(P("B001").faq)
    anywhere = call(product_faq_lookup, {"question": "택시기사"})
    assert anywhere["faqs"][0]["product_code"] == "B009"
    not_sold = call(sales_channel_availability, {"product": "튼튼어린이보험", "channel": "TM"})
    assert not_sold["available"] is False and not_sold["channels"] == P("B008").channels
    sold = call(sales_channel_availability, {"product": "B008", "channel": "온라인"})
    assert sold["available"] is True
    on_cm = call(sales_channel_availability, {"channel": "CM"})
    assert {p["product_code"] for p in on_cm["products"]} == {
        p.code for p in catalog.load_products().values() if "CM" in p.channels}


# --- junk arguments --------------------------------------------------------------------------------

JUNK = [None, "", "   ", "모름", "몰라요", "??", "아무말 대잔치", "-5", 0, -1, 3.7, math.nan, math.inf, True,
        [], {}, ["x", None], {"a": 1}, "9" * 40, 10**15, "B999", "1억억억", "월 -3만원"]

VALID = {
    "product": "B004", "products": ["B004", "B005"], "age": 55, "sex": "여", "keyword": "치매", "version": "2025.07",
    "rider": "B004-R01", "question": "치매", "channel": "TM", "annual_income": 5000, "goal": "치매",
    "monthly_budget": 5, "renewals": 2, "years": 5, "payment_term": "20년납", "riders": ["B004-R01"],
    "category": "치매", "simplified": False,
}


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_junk_arguments_never_raise(tool):
    fields = list(tool.args_schema.model_fields)
    for junk in JUNK:
        call(tool, {name: junk for name in fields})  # every field junk
        for name in fields:
            call(tool, {name: junk})  # one junk field alone
            call(tool, {**{f: VALID[f] for f in fields}, name: junk})  # one junk field among valid ones
    assert call(tool, {f: VALID[f] for f in fields})["status"] in STATUSES


def test_amount_suggest_asks_again_for_an_absurd_income():
    result = call(amount_suggest, {"annual_income": 10**15, "goal": "암"})
    assert result["status"] == "needs_user_input" and result["missing"] == ["annual_income"]


def test_product_search_by_age_alone_lists_joinable_products_only():
    result = call(product_search, {"age": 70})
    assert {p["product_code"] for p in result["products"]} == {
        p.code for p in catalog.load_products().values() if p.join_age_min <= 70 <= p.join_age_max}
    assert "excluded_by_age" not in result

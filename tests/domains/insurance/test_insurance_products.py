"""The product catalogue (products.yaml + products.py): facts the scenarios rely on and the premium rules."""

import json
import re
from pathlib import Path

import pytest

from toolroute.domains.insurance.products import (
    PRODUCTS_PATH,
    OutsideJoinAge,
    ProductDataError,
    get_product,
    get_rider,
    load_products,
    monthly_premium,
    normalize_channel,
    normalize_payment_term,
    normalize_sex,
    product_candidates,
    renewal_premiums,
    search_products,
)

LABELING = Path(__file__).resolve().parents[3] / "data" / "insurance" / "LABELING.md"


@pytest.fixture(scope="module")
def products():
    return load_products()


def _labeling_table() -> dict[str, str]:
    rows = re.findall(r"^\| (B\d{3}) \| ([^|]+?) \|", LABELING.read_text(encoding="utf-8"), flags=re.M)
    return dict(rows)


# --- catalogue -------------------------------------------------------------------------------------


def test_all_twelve_products_load_with_labeling_codes_and_names(products):
    expected = _labeling_table()
    assert len(expected) == 12
    assert {code: p.name for code, p in products.items()} == expected


def test_load_is_cached_and_returns_a_fresh_dict(products):
    again = load_products()
    assert again is not products and again == products
    assert again["B001"] is products["B001"]


def test_every_product_is_json_serialisable(products):
    for product in products.values():
        json.dumps(product.model_dump(mode="json"), ensure_ascii=False)


def test_simplified_underwriting_only_b006_b007(products):
    assert {c for c, p in products.items() if p.simplified_underwriting} == {"B006", "B007"}
    for code in ("B006", "B007"):
        assert "3.5.5" in products[code].simplified_disclosure.name


def test_renewable_products_have_renewal_terms(products):
    for product in products.values():
        if product.renewable:
            assert product.renewal_period_years and product.max_renewal_age > product.join_age_max
            assert any("갱신" in s for s in product.required_disclosures)
    assert products["B001"].renewal_period_years == 20 and products["B001"].max_renewal_age == 100


def test_each_product_has_faq_disclosures_and_surrender_rules(products):
    for product in products.values():
        assert len(product.faq) >= 4
        assert any("예금자보호" in s for s in product.required_disclosures)
        assert product.surrender.type in {"무해지", "저해지", "표준형"}
        assert set(product.channels) <= {"TM", "CM", "대면"}
        assert product.sum_insured_min <= product.sum_insured_max


def test_b001_cancer_facts(products):
    b001 = products["B001"]
    by_name = {c.name: c for c in b001.coverages}
    general, thyroid = by_name["일반암 진단비"], by_name["갑상선암 진단비"]
    assert thyroid.type == "유사암진단" and thyroid.amount < general.amount
    assert general.waiting_days == 90 and general.reduction.ratio == 0.5
    assert any(c.type == "재진단암" for c in b001.coverages)


def test_b002_whole_life_has_annuity_conversion_and_premium_waiver(products):
    b002 = products["B002"]
    assert b002.annuity_conversion and b002.annuity_conversion.min_age <= 70 <= b002.annuity_conversion.max_age
    assert b002.premium_waiver
    assert any(c.type == "사망" for c in b002.coverages)


def test_b003_dental_limits_and_first_year_reduction(products):
    by_type = {c.type: c for c in products["B003"].coverages}
    assert {"충전", "크라운", "임플란트", "브릿지"} <= set(by_type)
    assert by_type["임플란트"].limit.per_year == 3
    for kind in ("충전", "크라운", "임플란트", "브릿지"):
        assert by_type[kind].reduction.within_days == 365


def test_b007_death_benefit_reduction_and_surrender(products):
    b007 = products["B007"]
    death = next(c for c in b007.coverages if c.type == "사망")
    assert death.amount > 0 and death.reduction and death.reduction.ratio == 0.5
    assert b007.surrender.type == "저해지" and len(b007.surrender.examples) >= 3


def test_b010_has_deductibles(products):
    assert all(c.deductible is not None for c in products["B010"].coverages)


# --- lookup ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query, code",
    [
        ("B001", "B001"), ("b003", "B003"),
        ("건강해지는종신보험", "B002"),
        ("치매간병보험", "B004"), ("전에 없던 치매간병보험", "B004"),
        ("첫날부터 암보험", "B001"), ("첫날부터암보험은", "B001"),
        ("간편고지 종신보험", "B007"), ("든든한 실버치아보험", "B003"),
        ("건강해지는 종신", "B002"),  # unique fragment
    ],
)
def test_get_product_resolves(query, code):
    product = get_product(query)
    assert product is not None and product.code == code


@pytest.mark.parametrize("query", ["", "  ", "B099", "화재보험", "치매보험", "종신보험", "건강보험", "암"])
def test_get_product_unknown_or_ambiguous_is_none(query):
    assert get_product(query) is None


def test_product_candidates_offer_close_names():
    assert set(product_candidates("치매보험")) == {"전에없던치매간병보험", "실속치매보험"}
    assert product_candidates("첫날암보험")[0] == "첫날부터암보험"
    assert len(product_candidates("종신", limit=1)) == 1


def test_search_products_by_keyword_and_filters():
    names = lambda ps: {p.code for p in ps}  # noqa: E731
    assert names(search_products("치매")) == {"B004", "B005"}
    assert names(search_products("치아")) == {"B003"}
    assert names(search_products("간편")) == {"B006", "B007"}
    assert names(search_products("간편심사 건강")) == {"B006"}
    assert names(search_products("사망", age=70)) == {"B002", "B007"}
    assert names(search_products(simplified=True)) == {"B006", "B007"}
    assert search_products("암")[0].code == "B001"  # name match ranks first
    assert "B001" in names(search_products("암", age=60))
    assert names(search_products(category="종신")) == {"B002", "B007"}
    tm = names(search_products(channel="전화"))
    assert "B008" not in tm and "B012" not in tm and "B001" in tm
    assert len(search_products()) == 12
    with pytest.raises(ValueError):
        search_products(channel="우편")


def test_normalizers(products):
    assert normalize_sex("M") == normalize_sex("남") == normalize_sex("male") == normalize_sex("아버지") == "남성"
    assert normalize_sex("F") == normalize_sex("여성") == normalize_sex("female") == "여성"
    assert normalize_sex("?") is None
    assert normalize_channel("온라인") == "CM" and normalize_channel("tm") == "TM"
    b002 = products["B002"]
    assert normalize_payment_term(b002, "10년") == normalize_payment_term(b002, "10") == "10년납"
    assert normalize_payment_term(b002, None) == "20년납"
    assert normalize_payment_term(b002, "전기납") is None
    assert get_rider(products["B001"], "b001-r02").name == "표적항암약물치료비 특약"


# --- premiums --------------------------------------------------------------------------------------


@pytest.mark.parametrize("sex", ["남성", "여성"])
def test_premium_monotone_in_age_over_the_join_range(products, sex):
    checked = 0
    for product in products.values():
        if not product.premium.monotone_in_age:
            assert product.premium.note  # the exception is documented
            continue
        for term in product.payment_terms:
            ages = range(product.join_age_min, product.join_age_max + 1)
            premiums = [monthly_premium(product, a, sex, payment_term=term) for a in ages]
            assert premiums == sorted(premiums), (product.code, term)
        checked += 1
    assert checked == 11  # all but the children's product


def test_shorter_payment_term_costs_more(products):
    for product in products.values():
        if len(product.payment_terms) < 2:
            continue
        for age in {product.join_age_min, (product.join_age_min + product.join_age_max) // 2, product.join_age_max}:
            premiums = [monthly_premium(product, age, "여", payment_term=t) for t in product.payment_terms]
            assert all(a > b for a, b in zip(premiums, premiums[1:])), (product.code, age, premiums)


def test_premium_is_rounded_to_10_won_and_sex_spellings_agree(products):
    b001 = products["B001"]
    values = {monthly_premium(b001, 48, s) for s in ("남", "남성", "M", "male")}
    assert len(values) == 1 and values.pop() % 10 == 0
    with pytest.raises(ValueError):
        monthly_premium(b001, 48, "unknown")


def test_riders_add_on(products):
    b001 = products["B001"]
    base = monthly_premium(b001, 40, "남")
    with_ratio = monthly_premium(b001, 40, "남", riders=["B001-R01"])
    with_both = monthly_premium(b001, 40, "남", riders=["B001-R01", "암통원일당 특약"])
    assert base < with_ratio < with_both
    assert with_both - with_ratio == 1800
    with pytest.raises(ValueError):
        monthly_premium(b001, 40, "남", riders=["B002-R01"])


def test_outside_join_age(products):
    with pytest.raises(OutsideJoinAge) as info:
        monthly_premium(products["B008"], 16, "남")
    assert isinstance(info.value, ValueError) and info.value.join_age_max == 15
    assert "0세부터 15세" in str(info.value)
    for code, age in [("B003", 49), ("B003", 81), ("B002", 71), ("B001", 66)]:
        with pytest.raises(OutsideJoinAge):
            monthly_premium(products[code], age, "여")
    with pytest.raises(ValueError):
        monthly_premium(products["B002"], 40, "남", payment_term="30년납")


@pytest.mark.parametrize(
    "code, age, sex",
    [
        ("B002", 70, "남"), ("B003", 70, "남"),  # scenario 5: 70세 아버지
        ("B004", 55, "여"), ("B005", 55, "여"),  # scenario 2: 윤지은 55세 여성
        ("B006", 55, "여"), ("B007", 55, "여"), ("B003", 55, "여"), ("B002", 55, "여"),
        ("B001", 60, "여"), ("B007", 60, "여"),  # scenario 3: 최수진 60세 여성
        ("B001", 48, "남"), ("B006", 48, "남"), ("B007", 48, "남"),  # scenario 4: 48세 택시기사
        ("B008", 0, "여"), ("B008", 15, "남"),
    ],
)
def test_scenario_premiums_exist(products, code, age, sex):
    assert monthly_premium(products[code], age, sex) > 0


def test_scenario_sums_are_plain_arithmetic(products):
    total = monthly_premium(products["B002"], 70, "M") + monthly_premium(products["B003"], 70, "M")
    assert total == 301_800
    # the 간병 product with monthly care money costs more than the 실속 diagnosis-only product
    assert monthly_premium(products["B004"], 55, "F") > monthly_premium(products["B005"], 55, "F")


def test_renewal_premiums_rise_and_stop_at_max_renewal_age(products):
    b001 = products["B001"]
    steps = renewal_premiums(b001, 48, "남", renewals=3)
    assert [s["age"] for s in steps] == [68, 88]  # 108 would be past 100
    assert [s["year_offset"] for s in steps] == [20, 40]
    today = monthly_premium(b001, 48, "남")
    premiums = [today] + [s["monthly_premium"] for s in steps]
    assert premiums == sorted(premiums) and len(set(premiums)) == len(premiums)
    assert steps[0]["increase_pct"] > 0

    b010 = products["B010"]
    yearly = renewal_premiums(b010, 40, "여", renewals=5)
    assert [s["age"] for s in yearly] == [41, 42, 43, 44, 45]
    assert all(a["monthly_premium"] < b["monthly_premium"] for a, b in zip(yearly, yearly[1:]))
    # an existing contract may be older than the join ages
    assert renewal_premiums(products["B003"], 85, "남", renewals=3)[0]["age"] == 95
    for code in ("B003", "B006"):
        assert renewal_premiums(products[code], 55, "여")


def test_renewal_premiums_refuse_non_renewable(products):
    with pytest.raises(ValueError):
        renewal_premiums(products["B002"], 50, "남")


# --- malformed data --------------------------------------------------------------------------------


def _write_variant(tmp_path, old: str, new: str) -> Path:
    text = PRODUCTS_PATH.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "products.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def test_bad_field_names_product_and_field(tmp_path):
    path = _write_variant(tmp_path, "join_age_max: 80", "join_age_max: 여든")  # B003
    with pytest.raises(ProductDataError) as info:
        load_products(path)
    assert info.value.code == "B003" and info.value.field == "join_age_max"
    assert str(path) in str(info.value) and "B003" in str(info.value) and "join_age_max" in str(info.value)


def test_cross_field_rule_names_the_field(tmp_path):
    path = _write_variant(tmp_path, "term_factors: {10년납: 1.75, 15년납: 1.28, 20년납: 1.0}",
                          "term_factors: {10년납: 0.9, 15년납: 1.28, 20년납: 1.0}")  # B002
    with pytest.raises(ProductDataError) as info:
        load_products(path)
    assert info.value.code == "B002" and info.value.field == "premium"


def test_unknown_field_is_rejected(tmp_path):
    path = _write_variant(tmp_path, "    category: 치아\n", "    category: 치아\n    colour: 파랑\n")
    with pytest.raises(ProductDataError) as info:
        load_products(path)
    assert info.value.code == "B003" and info.value.field == "colour"


def test_yaml_syntax_error_and_duplicate_key(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("products:\n  - code: B001\n    name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ProductDataError, match="broken.yaml"):
        load_products(broken)
    dup = _write_variant(tmp_path, "    category: 치아\n", "    category: 치아\n    category: 암\n")
    with pytest.raises(ProductDataError, match="duplicate key"):
        load_products(dup)

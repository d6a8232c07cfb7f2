"""The synthetic customer database and the three customer_db tools (offline, tmp_path database)."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3

import pytest

from toolroute.domains.insurance import TOOL_MODULES, customers, products
from toolroute.domains.insurance.tools import customer_db
from toolroute.domains.insurance.tools.customer_db import (
    customer_contract_lookup,
    customer_search,
    duplicate_enrollment_check,
)

@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    return customers.create_database(tmp_path_factory.mktemp("customers") / "customers.sqlite")


@pytest.fixture(autouse=True)
def _use_tmp_database(db_path):
    with customers.use_database(db_path):
        yield


def _dump(path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def _by_code(contracts):
    return sorted(c["product_code"] for c in contracts)


# --- the spec facts ------------------------------------------------------------------------------

def test_spec_customers():
    (kim,) = customers.find_customers(name="김민수")
    assert kim["sex"] == "남성" and kim["age"] == 52
    assert _by_code(customers.contracts_of(kim["customer_id"], status="유지")) == ["B001", "B003"]

    (yoon,) = customers.find_customers(name="윤지은")
    assert (yoon["age"], yoon["sex"]) == (55, "여성")
    assert _by_code(customers.contracts_of(yoon["customer_id"], status="유지")) == ["B002", "B003", "B006"]
    assert len(customers.contracts_of(yoon["customer_id"])) == 3

    (choi,) = customers.find_customers(name="최수진")
    assert (choi["age"], choi["sex"]) == (60, "여성")
    contracts = customers.contracts_of(choi["customer_id"])
    assert [(c["product_code"], c["status"]) for c in contracts] == [("B007", "유지"), ("B001", "해지")]
    assert contracts[1]["termination_date"] == "2023-12-31"
    assert contracts[1]["product_name"] == "첫날부터암보험"


def test_ages_are_fixed_to_the_reference_date():
    assert customers.REFERENCE_DATE.isoformat() == "2026-12-01"
    assert customers.age_on("1971-03-15") == 55
    assert customers.age_on("1992-12-24") == 33  # birthday after the reference date
    with sqlite3.connect(customers.current_database()) as con:
        for birth, age in con.execute("SELECT birth_date, age FROM customers"):
            assert customers.age_on(birth) == age


def test_database_has_enough_variety():
    everyone = customers.find_customers()
    assert len(everyone) >= 15
    names = [c["name"] for c in everyone]
    assert {"박준호", "이영희", "정하늘"} <= set(names)
    assert any(names.count(n) > 1 for n in names)  # an ambiguous name exists
    statuses = {c["status"] for p in everyone for c in customers.contracts_of(p["customer_id"])}
    assert statuses == set(customers.CONTRACT_STATUSES)


def _raw_rows(sql: str) -> list[sqlite3.Row]:
    con = sqlite3.connect(customers.current_database())
    con.row_factory = sqlite3.Row
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_contracts_agree_with_the_product_catalogue():
    birth = {row["customer_id"]: row["birth_date"] for row in _raw_rows("SELECT * FROM customers")}
    for code, name in customers.PRODUCT_NAMES.items():
        assert products.get_product(code).name == name
    for c in _raw_rows("SELECT * FROM contracts"):
        product = products.get_product(c["product_code"])
        where = c["contract_id"]
        assert c["coverage_period"] == product.coverage_period, where
        assert c["payment_term"] in product.payment_terms, where
        assert product.sum_insured_min <= c["sum_insured"] <= product.sum_insured_max, where
        start = dt.date.fromisoformat(c["contract_date"])
        if c["insured_person"] == "본인":
            assert product.join_age_min <= customers.age_on(birth[c["customer_id"]], start) <= product.join_age_max, where
        active = c["status"] == "유지"
        assert bool(c["next_renewal_date"]) == (active and product.renewable), where
        if c["next_renewal_date"]:
            assert c["next_renewal_date"] > customers.REFERENCE_DATE.isoformat(), where
        assert (c["expiry_date"] is None) == product.coverage_period.startswith("종신"), where
        if c["status"] == "만기":
            assert c["expiry_date"] <= customers.REFERENCE_DATE.isoformat(), where
        if active and c["expiry_date"]:
            assert c["expiry_date"] > customers.REFERENCE_DATE.isoformat(), where
        assert bool(c["termination_date"]) == (c["status"] in ("해지", "실효")), where


def test_two_builds_are_identical(tmp_path):
    a = customers.create_database(tmp_path / "a.sqlite")
    b = customers.create_database(tmp_path / "b.sqlite")
    assert _dump(a) == _dump(b)
    assert customers.create_database(a) == a  # rebuilding in place works
    assert _dump(a) == _dump(b)


def test_default_database_is_built_once_and_rebuilt_when_stale(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path))
    path = customers.default_database()
    assert path == tmp_path / "insurance" / "customers.sqlite"
    stamp = path.stat().st_mtime_ns
    assert customers.default_database() == path and path.stat().st_mtime_ns == stamp
    with sqlite3.connect(path) as con:
        con.execute("UPDATE meta SET value = ? WHERE key = ?", ("stale", "content_hash"))
    con.close()
    customers.default_database()
    assert customers._stored_hash(path) == customers.content_hash()


def test_synthetic_resident_numbers_are_invalid():
    weights = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)
    with sqlite3.connect(customers.current_database()) as con:
        numbers = [row[0] for row in con.execute("SELECT resident_number FROM customers")]
    for number in numbers:
        digits = number.replace("-", "")
        assert len(digits) == 13 and digits.isdigit()
        check = (11 - sum(int(d) * w for d, w in zip(digits, weights)) % 11) % 10
        assert int(digits[-1]) != check


# --- query safety --------------------------------------------------------------------------------

@pytest.mark.parametrize("evil", ["x' OR '1'='1", "김민수' OR '1'='1", "'; DROP TABLE customers; --"])
def test_parameterised_queries(evil):
    assert customers.find_customers(name=evil) == []
    assert customers.find_customers(customer_id=evil) == []
    assert customers.contracts_of(evil) == []
    assert customer_search.invoke({"name": evil})["status"] == "not_found"
    assert customer_contract_lookup.invoke({"name": evil})["status"] == "not_found"
    assert len(customers.find_customers()) >= 15  # nothing was dropped


def test_safe_projection_drops_pii():
    with sqlite3.connect(customers.current_database()) as con:
        con.row_factory = sqlite3.Row
        raw = con.execute("SELECT * FROM customers WHERE customer_id = ?", ("C0001",)).fetchone()
        raw_contract = con.execute("SELECT * FROM contracts LIMIT 1").fetchone()
    safe = customers.safe_customer(raw)
    assert set(safe) == {"customer_id", "name", "age", "sex", "occupation"}
    assert not set(safe) & set(customers.PII_CUSTOMER_FIELDS)
    assert set(customers.safe_contract(raw_contract)) == set(customers.SAFE_CONTRACT_FIELDS)
    assert customers.safe_customer(dict(raw)) == safe


# --- tools ---------------------------------------------------------------------------------------

def test_tools_exported():
    assert [t.name for t in customer_db.TOOLS] == TOOL_MODULES["customer_db"]
    for t in customer_db.TOOLS:
        for field in t.args_schema.model_fields.values():
            assert field.description and not field.is_required()


def test_contract_lookup_by_name():
    result = customer_contract_lookup.invoke({"name": "김민수"})
    assert result["status"] == "ok"
    assert result["customer"] == {"customer_id": "C0001", "name": "김민수", "age": 52, "sex": "남성",
                                  "occupation": "회사원(사무직)"}
    assert _by_code(result["contracts"]) == ["B001", "B003"]
    assert "유지 2건, 해지 0건" in result["summary"]
    dental = next(c for c in result["contracts"] if c["product_code"] == "B003")
    assert dental["next_renewal_date"] and "갱신일" in dental["summary"] and "계약일" in dental["summary"]

    yoon = customer_contract_lookup.invoke({"name": "윤지은님"})
    assert (yoon["customer"]["age"], yoon["customer"]["sex"]) == (55, "여성")
    assert yoon["counts"]["유지"] == 3
    assert yoon["active_monthly_premium_total"] == sum(c["monthly_premium"] for c in yoon["contracts"])

    choi = customer_contract_lookup.invoke({"name": "최수진"})
    assert "유지 1건, 해지 1건" in choi["summary"]
    terminated = next(c for c in choi["contracts"] if c["status"] == "해지")
    assert "해지일 2023-12-31" in terminated["summary"]


def test_contract_lookup_by_id_and_status():
    result = customer_contract_lookup.invoke({"customer_id": "c0003", "status": "해지"})
    assert result["status"] == "ok" and result["status_filter"] == "해지"
    assert [c["product_code"] for c in result["contracts"]] == ["B001"]
    assert result["counts"]["유지"] == 1
    bad = customer_contract_lookup.invoke({"customer_id": "C0003", "status": "아무거나"})
    assert bad["status"] == "needs_user_input" and bad["missing"] == ["status"]


def test_contract_lookup_not_found():
    result = customer_contract_lookup.invoke({"name": "김민주"})
    assert result["status"] == "not_found" and "김민수" in result.get("candidates", [])
    assert customer_contract_lookup.invoke({"customer_id": "C9999"})["status"] == "not_found"
    assert customer_contract_lookup.invoke({"name": "김민수", "age": 30})["status"] == "not_found"


def test_ambiguous_name_asks():
    result = customer_contract_lookup.invoke({"name": "이영희"})
    assert result["status"] == "needs_user_input"
    assert "customer_id" in result["missing"] and "age" in result["missing"]
    assert [c["customer_id"] for c in result["known"]["candidates"]] == ["C0005", "C0006"]
    assert "고객번호" in result["ask"]
    resolved = customer_contract_lookup.invoke({"name": "이영희", "age": "38세"})
    assert resolved["status"] == "ok" and resolved["customer"]["customer_id"] == "C0006"

    # same name and same age: only the customer id can tell them apart
    twins = duplicate_enrollment_check.invoke({"name": "김서연", "age": 41, "category": "암"})
    assert twins["status"] == "needs_user_input" and twins["missing"] == ["customer_id"]


@pytest.mark.parametrize("tool", [customer_contract_lookup, duplicate_enrollment_check, customer_search])
def test_missing_arguments_ask(tool):
    result = tool.invoke({})
    assert result["status"] == "needs_user_input"
    assert result["missing"] and result["ask"]


def test_customer_search():
    result = customer_search.invoke({"name": "이영희"})
    assert result["status"] == "ok" and result["count"] == 2
    women_55 = customer_search.invoke({"age": 55, "sex": "여"})
    assert [c["name"] for c in women_55["customers"]] == ["윤지은"]
    assert women_55["customers"][0]["contracts_active"] == 3
    assert customer_search.invoke({"age": 99})["status"] == "not_found"
    assert customer_search.invoke({"sex": "기타"})["status"] == "needs_user_input"


# --- duplicate enrollment ------------------------------------------------------------------------

def test_duplicate_second_cancer_policy():
    result = duplicate_enrollment_check.invoke({"name": "김민수", "category": "암보험"})
    assert result["status"] == "ok"
    assert result["verdict"] == "중복 주의" and result["duplicate"] is True
    assert _by_code(result["same_category_active_contracts"]) == ["B001"]
    by_product = duplicate_enrollment_check.invoke({"name": "김민수", "product": "첫날부터암보험"})
    assert by_product["verdict"] == "중복 주의"


def test_dementia_for_yoon_is_not_a_duplicate():
    result = duplicate_enrollment_check.invoke({"name": "윤지은", "category": "치매"})
    assert result["verdict"] == "가입 가능" and result["duplicate"] is False
    assert result["same_category_active_contracts"] == []
    assert {p["code"] for p in result["products_in_category"]} == {"B004", "B005"}
    for code in ("B004", "B005"):
        assert duplicate_enrollment_check.invoke({"customer_id": "C0002", "product": code})["verdict"] == "가입 가능"
    # a second whole-life policy does overlap her 건강해지는종신보험
    assert duplicate_enrollment_check.invoke({"name": "윤지은", "product": "B007"})["verdict"] == "중복 주의"


def test_terminated_contract_is_not_a_duplicate_but_is_noted():
    result = duplicate_enrollment_check.invoke({"name": "최수진", "category": "암"})
    assert result["verdict"] == "가입 가능"
    assert [c["termination_date"] for c in result["same_category_inactive_contracts"]] == ["2023-12-31"]
    assert any("해지" in note for note in result["notes"])


def test_lapsed_contract_is_noted_and_words_resolve_to_categories():
    lapsed = duplicate_enrollment_check.invoke({"customer_id": "C0009", "category": "암"})
    assert lapsed["verdict"] == "가입 가능" and any("실효" in note for note in lapsed["notes"])
    # a kind of cover passed as the product, and a keyword instead of a category
    dementia = duplicate_enrollment_check.invoke({"name": "윤지은", "product": "치매보험"})
    assert dementia["verdict"] == "가입 가능" and dementia["mode"] == "category"
    medical = duplicate_enrollment_check.invoke({"customer_id": "C0006", "category": "실비"})
    assert medical["requested_category"] == "실손" and medical["verdict"] == "중복 주의"


def test_duplicate_check_overview_and_unknowns():
    overview = duplicate_enrollment_check.invoke({"name": "김민수"})
    assert overview["status"] == "ok" and overview["mode"] == "overview"
    codes = {p["code"] for p in overview["non_duplicate_products"]}
    assert "B001" not in codes and "B003" not in codes and "B005" in codes
    assert duplicate_enrollment_check.invoke({"name": "김민수", "product": "없는보험상품"})["status"] == "not_found"
    assert duplicate_enrollment_check.invoke({"name": "김민수", "category": "우주여행"})["status"] == "not_found"


# --- no PII in any tool output -------------------------------------------------------------------

def _pii_values() -> set[str]:
    values: set[str] = set()
    with sqlite3.connect(customers.current_database()) as con:
        for phone, resident, address, email, birth in con.execute(
            "SELECT phone, resident_number, address, email, birth_date FROM customers"
        ):
            values |= {phone, phone.replace("-", ""), resident, resident.replace("-", ""), address, email,
                       email.split("@")[0], birth}
    return values


def _every_tool_output():
    everyone = customers.find_customers()
    product_codes = list(customers.PRODUCT_NAMES)
    for person in everyone:
        cid = person["customer_id"]
        yield customer_contract_lookup.invoke({"customer_id": cid})
        yield customer_contract_lookup.invoke({"name": person["name"]})
        yield duplicate_enrollment_check.invoke({"customer_id": cid})
        for code in product_codes:
            yield duplicate_enrollment_check.invoke({"customer_id": cid, "product": code})
        for category in ("암", "치매", "종신", "실손"):
            yield duplicate_enrollment_check.invoke({"customer_id": cid, "category": category})
        yield customer_search.invoke({"name": person["name"]})
        yield customer_search.invoke({"age": person["age"], "sex": person["sex"]})
    yield customer_search.invoke({"sex": "남성"})
    yield customer_search.invoke({"sex": "여성"})
    yield customer_contract_lookup.invoke({"name": "이영희"})
    yield duplicate_enrollment_check.invoke({"name": "김서연", "category": "암"})
    yield customer_contract_lookup.invoke({"name": "없는사람"})


def test_no_pii_in_any_tool_output():
    pii = _pii_values()
    assert len(pii) >= 15 * 5
    outputs = list(_every_tool_output())
    assert len(outputs) > 300
    for output in outputs:
        text = json.dumps(output, ensure_ascii=False)
        leaked = [value for value in pii if value in text]
        assert not leaked, f"PII in tool output: {leaked}"

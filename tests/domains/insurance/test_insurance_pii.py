"""No tool, of all 54, ever returns a customer's phone, resident number, address, e-mail or birth date.

Every tool is called with every customer (by id and by name, where its schema takes them) and with
typical values for its other arguments, read off its own args schema, so a new tool or a new
argument is covered without editing this test.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from toolroute.domains.insurance import customers
from toolroute.domains.insurance.scenarios import load_scenarios
from toolroute.domains.insurance.tools import build_tools, rag_tools

from conftest import HashEmbedder

# Typical values per argument name; an argument not listed is left out (tools must cope).
TYPICAL: dict[str, list] = {
    "product": ["첫날부터암보험", "간편고지종신보험", "든든한실버치아보험"],
    "products": [["전에없던치매간병보험", "실속치매보험"]],
    "age": [55], "sex": ["여성"], "channel": ["TM"],
    "request": ["부활 신청", "해지", "갱신"], "claim_type": ["사망", "입원"],
    "status": ["유지", "해지"], "keyword": ["암"], "query": ["계약 부활"],
}


def _pii_values() -> set[str]:
    values: set[str] = set()
    with sqlite3.connect(customers.current_database()) as con:
        for phone, resident, address, email, birth in con.execute(
            "SELECT phone, resident_number, address, email, birth_date FROM customers"
        ):
            values |= {phone, phone.replace("-", ""), resident, resident.replace("-", ""), address, email,
                       email.split("@")[0], birth}
    return values


def _customer_calls(tool, person):
    fields = set(tool.args)
    base = {}
    if "customer_id" in fields:
        base["customer_id"] = person["customer_id"]
    elif "name" in fields:
        base["name"] = person["name"]
    elif "customer" in fields:
        base["customer"] = person["name"]
    else:
        return
    yield dict(base)
    for field, values in TYPICAL.items():
        if field in fields:
            for value in values:
                yield {**base, field: value}
    if "name" in fields and "customer_id" in fields:
        yield {"name": person["name"]}


@pytest.fixture(scope="module")
def rag_configured(tmp_path_factory):
    from toolroute.chroma import open_client

    base = tmp_path_factory.mktemp("pii-rag")
    rag_tools.configure(embedder=HashEmbedder(), client=open_client(base / "chroma"), docs_dir=base / "docs")
    yield
    rag_tools.configure()


def test_no_customer_pii_in_any_of_the_54_tools(rag_configured):
    pii = _pii_values()
    assert len(pii) >= 15 * 5
    tools = build_tools()
    assert len(tools) == 54
    people = customers.find_customers()
    calls = 0
    customer_tools = set()
    for tool in tools:
        outputs = []
        for person in people:
            for args in _customer_calls(tool, person):
                outputs.append((args, tool.invoke(args)))
                customer_tools.add(tool.name)
        for scenario in load_scenarios():
            for turn in scenario.turns:
                for call in turn.expected_calls:
                    if call.tool == tool.name:
                        outputs.append((call.args, tool.invoke(dict(call.args))))
        for args, output in outputs:
            calls += 1
            text = json.dumps(output, ensure_ascii=False)
            leaked = [value for value in pii if value in text]
            assert not leaked, f"{tool.name}({args}) leaked {leaked}"
    assert {"customer_contract_lookup", "duplicate_enrollment_check", "customer_search"} <= customer_tools
    assert calls > 500


@pytest.mark.parametrize("tool_name,field", [("privacy_masking", "text"), ("customer_followup_tasks", "summary")])
def test_free_text_tools_never_echo_personal_numbers(tool_name, field):
    tool = {t.name: t for t in build_tools()}[tool_name]
    if field not in tool.args:
        field = next(name for name in tool.args if name in ("text", "summary", "notes", "consultation"))
    text = "고객 주민번호 900101-1234567, 연락처 010-1234-5678, 카드 1234-5678-9012-3456 청약 진행 예정"
    out = json.dumps(tool.invoke({field: text}), ensure_ascii=False)
    for raw in ("1234567", "1234-5678", "9012"):
        assert raw not in out, f"{tool_name} echoed {raw}"

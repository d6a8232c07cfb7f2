"""The pieces of the MCP server's client policy (issue 37, finding 7), without a server: handles
(`serve.mcp_handles`), strict arguments and limits (`serve.mcp_arguments`), route handles
(`serve.mcp_gate`). The modules are new with issue 37, so each test fails on the code before it."""

from __future__ import annotations

import random
import re

import pytest

from toolroute.agent.pack import load_pack
from toolroute.serve import mcp_gate, mcp_handles
from toolroute.serve.mcp_arguments import MAX_ARGUMENTS_BYTES, ArgumentError, check_size, validate_arguments
from toolroute.serve.mcp_handles import HANDLE, Handles, UnknownHandle, kind_of


@pytest.fixture(scope="module")
def pack():
    return load_pack("insurance")


def test_a_handle_is_stable_unforgeable_and_maps_back(pack):
    handles, other = Handles(pack), Handles(pack)
    first = handles.handle("C0002", "customer_id")
    assert first == handles.handle("C0002", "customer_id") and re.fullmatch(r"customer_[a-z]{12}", first)
    assert other.handle("C0002", "customer_id") != first, "another process (another secret), another handle"
    assert handles.resolve(first) == "C0002" and other.resolve(first) is None
    assert handles.handle("C0002", "customer_id") != handles.handle("C0003", "customer_id")
    assert [kind_of(k) for k in ("customer_id", "product_code", "kcd_codes", "id", "code", "rule_ids")] == [
        "customer", "product", "kcd", "ref", "ref", "rule"]


def test_results_show_handles_and_masks_in_fields_and_text(pack):
    handles = Handles(pack)
    result = {"status": "ok", "customers": [{"customer_id": "C0002", "name": "윤지은", "age": 47}],
              "summary": "윤지은(47세, C0002)님, C00021은 다른 번호", "criteria": {"name": "윤지은"},
              "contract": {"contract_id": "CT00007", "product_code": "B001", "product_name": "첫날부터암보험"},
              "note": "premium_estimate로 B003도 계산해 보세요. 연락처 010-1234-5678"}
    out = handles.guard(result)
    customer = out["customers"][0]
    assert customer["name"] == "윤*은" and handles.resolve(customer["customer_id"]) == "C0002"
    assert out["summary"].startswith(f"윤*은(47세, {customer['customer_id']})님") and "C00021" in out["summary"]
    assert out["criteria"]["name"] == "윤*은", "a name found in a record is masked wherever it appears"
    assert handles.resolve(out["contract"]["contract_id"]) == "CT00007"
    assert handles.resolve(out["contract"]["product_code"]) == "B001" and out["contract"]["product_name"] == "첫날부터암보험"
    assert "premium_estimate" in out["note"], "tool names are the interface over MCP"
    assert "B003" not in out["note"] and "1234-5678" not in out["note"], "free text: the output guard's masking"


def test_arguments_map_back_but_never_mint_handles(pack):
    handles = Handles(pack)
    customer = handles.handle("C0002", "customer_id")
    assert handles.resolve_arguments({"customer_id": customer, "name": None, "age": 47}) == {
        "customer_id": "C0002", "name": None, "age": 47}
    assert handles.resolve_arguments({"query": f"{customer} 계약 보여줘"}) == {"query": "C0002 계약 보여줘"}
    assert handles.resolve_arguments({"customer_id": "C0009"}) == {"customer_id": "C0009"}, "a real id is taken"
    with pytest.raises(UnknownHandle, match="customer_id: unknown handle"):
        handles.resolve_arguments({"customer_id": "customer_abcdefghijkl"})
    assert handles.resolve_arguments({"keyword": "premium_installments"}) == {"keyword": "premium_installments"}
    before = len(handles._value_of)
    out = handles.guard({"status": "not_found", "value": "C9999 없음"}, {"customer_id": "C9999"})
    assert len(handles._value_of) == before, "the client's own arguments cannot grow the map"
    assert "C9999" not in out["value"]


def test_the_map_is_bounded(pack, monkeypatch):
    monkeypatch.setattr(mcp_handles, "MAX_HANDLES", 3)
    handles = Handles(pack)
    issued = [handles.handle(f"C{i:04d}", "customer_id") for i in range(1, 6)]
    assert len(set(issued)) == 5 and len(handles._value_of) == 3
    assert handles.resolve(issued[-1]) is None, "past the bound a handle is given but not remembered"


def test_no_masking_pattern_touches_a_handle(pack):
    """Handles are letters only: 2,000 of them pass the output guard's free-text masking unchanged."""
    handles = Handles(pack)
    rng = random.Random(7)
    for i in range(2000):
        value = rng.choice(["C", "CT", "B0", "R"]) + str(rng.randrange(10 ** 6))
        handle = handles.handle(value, rng.choice(["customer_id", "contract_id", "code", "rider_code"]))
        assert HANDLE.fullmatch(handle)
        text = handles.guard({"text": f"고객 {handle}님, {handle}의 계약"})["text"]
        assert text == f"고객 {handle}님, {handle}의 계약", text


@pytest.mark.parametrize("arguments, message", [
    ({"name": "가" * 5000}, "name: 5,000 characters; the limit is 4,000"),
    ({"names": ["가" * 10] * 3000}, f"the limit is {MAX_ARGUMENTS_BYTES:,}"),
    ({"name": "\ud800"}, "name: not valid Unicode"),
    ({"filter": {"deep": ["x" * 4001]}}, "filter.deep[0]: 4,001 characters"),
])
def test_sizes_are_refused_before_anything_runs(arguments, message):
    with pytest.raises(ArgumentError, match=re.escape(message)):
        check_size(arguments)


def test_strict_validation_names_the_argument_and_the_type():
    schema = {"type": "object", "required": ["query"], "$defs": {"Sex": {"enum": ["남성", "여성"], "type": "string"}},
              "properties": {"query": {"type": "string"}, "k": {"type": "integer", "minimum": 1},
                             "sex": {"anyOf": [{"$ref": "#/$defs/Sex"}, {"type": "null"}]},
                             "budget": {"type": "number"}}}
    validate_arguments("t", schema, {"query": "q", "k": 3, "sex": None, "budget": 3})
    for arguments, message in (({"query": "q", "k": 3.0}, "k: expected integer, got number"),
                               ({"query": "q", "k": 0}, "k: must be at least 1"),
                               ({"query": "q", "sex": "남"}, 'sex: expected one of "남성", "여성" or null, got string'),
                               ({"query": "q", "budget": True}, "budget: expected number, got boolean"),
                               ({"k": 3}, "query: required"),
                               ({"query": "q", "extra": 1}, "unknown argument extra")):
        with pytest.raises(ArgumentError, match=re.escape(message)):
            validate_arguments("t", schema, arguments)
    with pytest.raises(ArgumentError) as refused:
        validate_arguments("t", schema, {"query": 1234567})
    assert "1234567" not in str(refused.value), "values are not echoed (the error is logged)"


def test_a_route_allows_its_own_tools_only(monkeypatch):
    gate = mcp_gate.RoutedGate(enabled=True)
    route = gate.issue({"tools": [{"name": "a"}, {"name": "b"}], "no_call": False})
    none = gate.issue({"tools": [{"name": "a"}], "no_call": True})
    assert re.fullmatch(r"route_[a-z]{16}", route)
    assert gate.check("a", {"x": 1, "route": route}) == {"x": 1}
    assert gate.check("route_tools", {"query": "q"}) == {"query": "q"}
    for tool, arguments, words in (("c", {"route": route}, "not among the routed tools (a, b)"),
                                   ("a", {"route": none}, "no tool is needed"),
                                   ("a", {}, "call route_tools first"),
                                   ("a", {"route": "route_" + "a" * 16}, "call route_tools first")):
        with pytest.raises(Exception, match=re.escape(words)):
            gate.check(tool, arguments)
    assert gate.refused == 4
    assert mcp_gate.RoutedGate(enabled=False).check("c", {"x": 1}) == {"x": 1}
    monkeypatch.setattr(mcp_gate, "MAX_ROUTES", 2)
    routes = [gate.issue({"tools": [{"name": "a"}]}) for _ in range(3)]
    with pytest.raises(Exception, match="call route_tools first"):
        gate.check("a", {"route": routes[0]})
    assert gate.check("a", {"route": routes[-1]}) == {}
    schema = gate.parameters({"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]})
    assert schema["required"] == ["x", "route"] and schema["properties"]["route"]["type"] == "string"

"""Issue 37, finding 7 (and the MCP halves of Build 1 and 2): what an MCP client may call, send and see.

A scripted client, the SDK's own in-memory `mcp.Client(server)`, and over HTTP on a loopback port for
the token. The router is a fixed one (the tests are about the server's checks, not the ranking;
`test_mcp.py` routes with the real BM25 router). Each test fails on the server before issue 37:
`create_server` took no `routed` or `token` and there was no `http_app`; `premium_estimate` accepted
`sex: 3`, `age: "45"`, `age: 45.0` and unknown argument names; a 1 MB argument ran through the tool;
results, resources and prompts showed raw ids (`C0002`, `B001`) and full names.
"""

from __future__ import annotations

import json
import logging
import re
import time

import anyio
import pytest
from mcp import Client

from toolroute.serve.mcp import create_server, http_app

RAW_ID = re.compile(r"(?<![A-Za-z0-9_])(?:C\d{4}|CT\d{5}|B0\d{2})(?![0-9])")
CUSTOMER_HANDLE = re.compile(r"customer_[a-z]{12}")
TOKEN = "test-token-0123456789abcdef"
PREMIUM = {"product": "첫날부터암보험", "age": 45, "sex": "여성"}


class FixedRouter:
    """Routes a query with 계약 to the two customer tools, anything else to no call."""

    class Result:
        def __init__(self, query: str, names: list[str], no_call: bool):
            self.query, self.names, self.no_call = query, names, no_call

        def to_dict(self, k: int) -> dict:
            return {"query": self.query, "tools": [{"name": n, "score": round(1 - i / 10, 2)}
                                                   for i, n in enumerate(self.names[:k])],
                    "no_call": self.no_call, "call_probability": 0.1 if self.no_call else 0.9, "features": {}}

    def route(self, query: str) -> "FixedRouter.Result":
        if "계약" in query:
            return self.Result(query, ["customer_search", "customer_contract_lookup", "premium_estimate"], False)
        return self.Result(query, ["product_search"], True)


def _server(**options):
    server = create_server("insurance", warm_router=False, **options)
    server.router_holder._router = FixedRouter()
    return server


@pytest.fixture(scope="module")
def plain():
    return _server()


@pytest.fixture(scope="module")
def routed():
    return _server(routed=True)


def _text(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


def _calls(server, calls: list[tuple[str, dict]]) -> list:
    """One session making `calls` in order: [(is_error, text, structured)]."""

    async def run() -> list:
        out = []
        async with Client(server) as client:
            for name, args in calls:
                result = await client.call_tool(name, args)
                out.append((bool(result.is_error), _text(result), result.structured_content))
        return out

    return anyio.run(run)


# --- Build 1 (MCP half): the routed mode -----------------------------------------------------------------

def test_routed_mode_runs_only_the_routed_tools(routed, caplog):
    """Only `route_tools` runs until a call passes the `route` it returned; then only that route's tools."""
    caplog.set_level(logging.INFO)

    async def run() -> dict:
        out: dict = {}
        async with Client(routed) as client:
            async def call(name: str, args: dict) -> tuple[bool, str, dict | None]:
                result = await client.call_tool(name, args)
                return bool(result.is_error), _text(result), result.structured_content

            listed = {t.name: t for t in (await client.list_tools()).tools}
            out["schema"] = listed["customer_search"].input_schema
            out["before"] = await call("customer_search", {"name": "윤지은"})
            out["route"] = await call("route_tools", {"query": "고객 계약 조회", "k": 2})
            route = json.loads(out["route"][1])["route"]
            out["unrouted"] = await call("premium_estimate", {"product": "첫날부터암보험", "age": 45, "sex": "여성",
                                                              "route": route})
            out["made_up"] = await call("customer_search", {"name": "윤지은", "route": "route_abcdefghijklmnop"})
            out["allowed"] = await call("customer_search", {"name": "윤지은", "route": route})
            out["too_many"] = await call("route_tools", {"query": "고객 계약 조회", "k": 6})
            out["small_talk"] = await call("route_tools", {"query": "오늘 날씨 어때"})
            no_call = json.loads(out["small_talk"][1])["route"]
            out["after_no_call"] = await call("customer_search", {"name": "윤지은", "route": no_call})
            out["old_route"] = await call("customer_search", {"name": "윤지은", "route": route})
        return out

    out = anyio.run(run)
    assert out["schema"]["required"] == ["route"] and "route" in out["schema"]["properties"]
    is_error, text, _ = out["before"]
    assert is_error and "call route_tools first" in text and "customer_search" in text
    is_error, text, _ = out["route"]
    assert not is_error and [t["name"] for t in json.loads(text)["tools"]] == ["customer_search",
                                                                              "customer_contract_lookup"]
    is_error, text, _ = out["unrouted"]
    assert is_error and "not among the routed tools" in text and "premium_estimate" in text
    assert out["made_up"][0] and "call route_tools first" in out["made_up"][1]
    is_error, text, data = out["allowed"]
    assert not is_error and data["status"] == "ok", text
    assert out["too_many"][0] and "k must be between 1 and 5" in out["too_many"][1]
    assert not out["small_talk"][0] and json.loads(out["small_talk"][1])["no_call"] is True
    assert out["after_no_call"][0] and "no tool is needed" in out["after_no_call"][1]
    assert not out["old_route"][0], "a route stays valid for its own tools"
    refusals = [r.getMessage() for r in caplog.records if "routed mode: refused" in r.getMessage()]
    assert len(refusals) == 4 and any("premium_estimate" in r for r in refusals)
    assert not any("윤지은" in r.getMessage() or "첫날부터암보험" in r.getMessage() for r in caplog.records), \
        "a refusal is logged without its arguments"


def test_default_mode_lists_and_runs_every_tool(plain):
    (result,) = _calls(plain, [("premium_estimate", PREMIUM)])
    assert not result[0] and result[2]["status"] == "ok" and result[2]["monthly_premium"] > 0


# --- Build 7: strict arguments and limits ------------------------------------------------------------------

@pytest.mark.parametrize("args, argument, expected", [
    ({"sex": 3}, "sex", "expected string or null, got integer"),
    ({"age": "45"}, "age", "expected integer or null, got string"),
    ({"age": 45.0}, "age", "expected integer or null, got number"),
    ({"age": True}, "age", "expected integer or null, got boolean"),
    ({"product": 7}, "product", "expected string or null, got integer"),
    ({"product": ["첫날부터암보험"]}, "product", "expected string or null, got array"),
    ({"sexx": "여성"}, "sexx", "unknown argument"),
])
def test_wrong_types_are_refused_naming_the_argument(plain, args, argument, expected):
    """Each of these was accepted before (coerced, or read as "needs_user_input", or ignored)."""
    (result,) = _calls(plain, [("premium_estimate", {**PREMIUM, **args})])
    assert result[0], f"{args} was accepted: {result[1]}"
    assert argument in result[1] and expected in result[1] and "premium_estimate" in result[1]


def test_route_tools_is_strict_too(plain):
    (k_string, k_float, no_query) = _calls(plain, [("route_tools", {"query": "보험료", "k": "3"}),
                                                   ("route_tools", {"query": "보험료", "k": 3.0}),
                                                   ("route_tools", {"k": 3})])
    assert k_string[0] and "k: expected integer, got string" in k_string[1]
    assert k_float[0] and "k: expected integer, got number" in k_float[1]
    assert no_query[0] and "query: required" in no_query[1]


def test_a_huge_argument_is_refused_fast(plain):
    started = time.perf_counter()
    (result,) = _calls(plain, [("customer_search", {"name": "가" * 1_000_000})])
    seconds = time.perf_counter() - started
    assert result[0] and "name: 1,000,000 characters; the limit is" in result[1]
    assert seconds < 3, f"{seconds:.1f} s for a refused 1 MB argument"


# --- Build 2 (MCP half): results, resources and prompts pass the client policy ------------------------------

def test_results_carry_handles_and_masked_names_and_chain(plain):
    (search,) = _calls(plain, [("customer_search", {"name": "윤지은"})])
    assert not search[0], search[1]
    assert not RAW_ID.search(search[1]) and "윤지은" not in search[1], search[1]
    customer = search[2]["customers"][0]
    assert CUSTOMER_HANDLE.fullmatch(customer["customer_id"]) and customer["name"] == "윤*은"
    assert customer["customer_id"] in search[2]["summary"]  # the summary names the same handle

    lookup, by_raw_id, unknown = _calls(plain, [
        ("customer_contract_lookup", {"customer_id": customer["customer_id"]}),
        ("customer_contract_lookup", {"customer_id": "C0002"}),
        ("customer_contract_lookup", {"customer_id": "customer_aaaaaaaaaaaa"}),
    ])
    assert not lookup[0] and lookup[2]["status"] == "ok", lookup[1]
    assert lookup[2]["contracts"], "the handle reached the tool as the real id"
    assert not RAW_ID.search(lookup[1]) and "윤지은" not in lookup[1], lookup[1]
    assert all(re.fullmatch(r"contract_[a-z]{12}", c["contract_id"]) for c in lookup[2]["contracts"])
    assert not by_raw_id[0] and by_raw_id[2] == lookup[2], "a real id is taken and answered with the same handles"
    assert unknown[0] and "unknown handle" in unknown[1]


def test_route_tools_result_keeps_the_tool_names(plain):
    (route,) = _calls(plain, [("route_tools", {"query": "C0002 윤지은 고객 계약", "k": 3})])
    result = json.loads(route[1])
    assert [t["name"] for t in result["tools"]] == ["customer_search", "customer_contract_lookup", "premium_estimate"]
    assert "C0002" not in route[1]


def test_resources_and_prompts_carry_handles(plain):
    async def run() -> dict:
        async with Client(plain) as client:
            products = json.loads((await client.read_resource("insurance://products")).contents[0].text)
            one = json.loads((await client.read_resource(f"insurance://products/{products[0]['code']}")).contents[0].text)
            search = (await client.call_tool("customer_search", {"name": "윤지은"})).structured_content
            handle = search["customers"][0]["customer_id"]
            default = (await client.get_prompt("consult_s1")).messages[0].content.text
            other = (await client.get_prompt("consult_s1", {"customer_id": handle})).messages[0].content.text
            listed = {p.name: p for p in (await client.list_prompts()).prompts}
            return {"products": products, "one": one, "default": default, "other": other,
                    "argument": listed["consult_s1"].arguments[0].description,
                    "titles": [(p.title, p.description) for p in listed.values()]}

    out = anyio.run(run)
    text = json.dumps(out, ensure_ascii=False)
    assert not RAW_ID.search(text), RAW_ID.search(text)
    assert out["products"][0]["name"] and re.fullmatch(r"ref_[a-z]{12}", out["products"][0]["code"])
    assert out["one"]["name"] == out["products"][0]["name"]
    assert "김민수" not in text and "윤지은" not in text
    assert "김*수 (customer_" in out["default"] and "윤*은 (customer_" in out["other"]
    assert "customer_" in out["argument"] and "김*수" in out["argument"]


# --- Build 7: the token on the HTTP transports --------------------------------------------------------------

@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
@pytest.mark.parametrize("transport", ["http", "sse"])
def test_http_needs_the_token(transport):
    import httpx

    from serving import ThreadServer
    from toolroute.serve.mcp_arguments import MAX_BODY_BYTES

    server = _server(token=TOKEN)
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "0"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    with ThreadServer(http_app(server, transport)) as running:
        url = running.url + ("/mcp" if transport == "http" else "/messages/?session_id=00000000000000000000000000000000")
        with httpx.Client(timeout=10) as client:
            statuses = {
                "none": client.post(url, json=initialize, headers=accept).status_code,
                "wrong": client.post(url, json=initialize, headers={**accept, "Authorization": "Bearer nope"}).status_code,
                "almost": client.post(url, json=initialize,
                                      headers={**accept, "Authorization": f"Bearer {TOKEN}x"}).status_code,
            }
            if transport == "sse":
                statuses["stream"] = client.get(running.url + "/sse").status_code
            good = {**accept, "Authorization": f"Bearer {TOKEN}"}
            if transport == "http":
                statuses["token"] = client.post(url, json=initialize, headers=good).status_code
            big = b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "' + b"a" * MAX_BODY_BYTES + b'"}}'
            statuses["big"] = client.post(url, content=big, headers={**good, "Content-Type": "application/json"}).status_code
            statuses["big chunked"] = client.post(url, content=iter([big[:1000], big[1000:]]),
                                                  headers={**good, "Content-Type": "application/json"}).status_code
        names = anyio.run(_list_tools_over_http, running.url, transport)
    assert statuses["none"] == statuses["wrong"] == statuses["almost"] == 401, statuses
    if transport == "sse":
        assert statuses["stream"] == 401
    else:
        assert statuses["token"] == 200
    assert statuses["big"] == statuses["big chunked"] == 413, statuses
    assert len(names) == 55 and "route_tools" in names


async def _list_tools_over_http(url: str, transport: str) -> list[str]:
    from mcp import ClientSession
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {TOKEN}"}
    if transport == "http":
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url + "/mcp", http_client=http) as (read, write, *_):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return [t.name for t in (await session.list_tools()).tools]
    async with sse_client(url + "/sse", headers=headers) as (read, write, *_):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return [t.name for t in (await session.list_tools()).tools]


def test_http_without_a_token_does_not_start(monkeypatch, capsys):
    """Off loopback never; on loopback only with --no-token; refused before anything is loaded or bound
    (on the old server these calls went on to bind the port, which pytest-socket refuses here)."""
    from toolroute.cli import main
    from toolroute.serve.mcp_auth import UnsafeStart, check_start

    monkeypatch.delenv("TOOLROUTE_MCP_TOKEN", raising=False)
    for extra in (["--host", "0.0.0.0"], ["--host", "0.0.0.0", "--no-token"], [], ["--token-env", "NO_SUCH_VARIABLE"]):
        started = time.perf_counter()
        code = main(["mcp", "--transport", "http", "--port", "9", *extra])
        err = capsys.readouterr().err
        assert code == 2 and "TOOLROUTE_MCP_TOKEN" in err, (extra, err)
        assert time.perf_counter() - started < 2, "refused before the pack and the router load"
    monkeypatch.setenv("TOOLROUTE_MCP_TOKEN", "short")
    assert main(["mcp", "--transport", "sse"]) == 2 and "at least 16" in capsys.readouterr().err
    assert "without a token" in check_start("http", "127.0.0.1", None, no_token=True)
    assert check_start("stdio", "0.0.0.0", None, no_token=False) is None
    assert check_start("sse", "0.0.0.0", TOKEN, no_token=False) is None
    with pytest.raises(UnsafeStart, match="at least 16"):
        check_start("http", "127.0.0.1", "short", no_token=False)

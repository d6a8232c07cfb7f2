"""`toolroute mcp` (issue 21, item 5) through the SDK's own client: the server runs as a subprocess over
stdio exactly as Claude Desktop or Cursor start it, and one session makes every request the tests check.

The router uses the BM25 arm here (no embeddings: seconds instead of a minute cold); the hybrid default
goes through the same code path.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

import toolroute
from toolroute.domains.insurance import TOOL_NAMES

SRC = str(Path(toolroute.__file__).resolve().parents[1])


def _env(data_dir: Path) -> dict[str, str]:
    env = {"PYTHONPATH": SRC, "TOOLROUTE_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    if os.environ.get("TOOLROUTE_CARDSTORE"):
        env["TOOLROUTE_CARDSTORE"] = os.environ["TOOLROUTE_CARDSTORE"]
    return env


async def _tool_text(session: ClientSession, name: str, args: dict) -> tuple[bool, str]:
    result = await session.call_tool(name, args)
    return bool(result.is_error), "".join(c.text for c in result.content if c.type == "text")


async def _exchange(data_dir: Path) -> dict:
    """Start the server, make every request once, return what came back (and the timings)."""
    params = StdioServerParameters(command=sys.executable, env=_env(data_dir),
                                   args=["-m", "toolroute.cli", "mcp", "--domain", "insurance", "--arm", "bm25"])
    out: dict = {}
    start = time.perf_counter()
    with open(data_dir / "server-stderr.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                out["initialized_s"] = time.perf_counter() - start
                out["tools"] = (await session.list_tools()).tools
                out["tools_listed_s"] = time.perf_counter() - start
                out["resources"] = (await session.list_resources()).resources
                out["templates"] = (await session.list_resource_templates()).resource_templates
                out["prompts"] = (await session.list_prompts()).prompts
                out["premium"] = await _tool_text(session, "premium_estimate",
                                                  {"product": "첫날부터암보험", "age": 45, "sex": "여성"})
                t = time.perf_counter()
                out["route"] = await _tool_text(session, "route_tools",
                                                {"query": "첫날부터암보험 50세 남자 한 달 보험료 계산", "k": 3})
                out["route_first_call_s"] = time.perf_counter() - t
                out["route_small_talk"] = await _tool_text(session, "route_tools", {"query": "주말에 갈 만한 캠핑장 추천해줘"})
                out["bad"] = {
                    "unknown tool": await _tool_text(session, "no_such_tool", {}),
                    "route k=0": await _tool_text(session, "route_tools", {"query": "보험료", "k": 0}),
                    "route no query": await _tool_text(session, "route_tools", {"k": 3}),
                }
                out["after_errors"] = await _tool_text(session, "product_search", {"keyword": "치매"})
                card = await session.read_resource("toolcard://insurance/premium_estimate")
                out["card"] = card.contents[0].text
                out["products"] = (await session.read_resource("insurance://products")).contents[0].text
                out["product_b003"] = (await session.read_resource("insurance://products/B003")).contents[0].text
                out["toc"] = (await session.read_resource("insurance://terms/toc")).contents[0].text
                out["prompt_default"] = await session.get_prompt("consult_s1")
                out["prompt_other"] = await session.get_prompt("consult_s1", {"customer_id": "C0002"})
                out["prompt_free"] = await session.get_prompt("consult_s4", {"customer": "52세 남성 버스기사"})
                for key, request in (("prompt_bad", session.get_prompt("consult_s1", {"customer_id": "C9999"})),
                                     ("product_bad", session.read_resource("insurance://products/B999"))):
                    try:
                        await request
                        out[key] = None
                    except MCPError as exc:
                        out[key] = exc.message
    out["stderr"] = (data_dir / "server-stderr.log").read_text(encoding="utf-8", errors="replace")
    return out


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    out = anyio.run(_exchange, tmp_path_factory.mktemp("mcp-state"))
    print(f"\nmcp server: initialized after {out['initialized_s']:.1f} s, tools listed after "
          f"{out['tools_listed_s']:.1f} s, first route_tools {out['route_first_call_s']:.1f} s")
    return out


def test_lists_every_tool_with_its_own_schema(served):
    from toolroute.agent.pack import load_pack

    tools = {t.name: t for t in served["tools"]}
    assert set(tools) == {"route_tools", *TOOL_NAMES} and len(tools) == 55
    lc = {t.name: t for t in load_pack("insurance").tools}
    assert tools["premium_estimate"].input_schema == lc["premium_estimate"].args_schema.model_json_schema()
    assert tools["premium_estimate"].description == lc["premium_estimate"].description
    assert set(tools["route_tools"].input_schema["properties"]) == {"query", "k"}
    assert tools["route_tools"].input_schema["required"] == ["query"]


def test_lists_cards_products_and_terms(served):
    uris = {str(r.uri) for r in served["resources"]}
    assert {f"toolcard://insurance/{name}" for name in TOOL_NAMES} <= uris
    assert {"toolcard://insurance/index", "insurance://products", "insurance://terms/toc"} <= uris
    assert len(uris) == 54 + 3
    assert [t.uri_template for t in served["templates"]] == ["insurance://products/{code}"]


def test_lists_consultation_prompts(served):
    prompts = {p.name: p for p in served["prompts"]}
    assert len(prompts) >= 5 and all(p.description for p in prompts.values())
    assert [a.name for a in prompts["consult_s1"].arguments] == ["customer_id"]
    assert [a.name for a in prompts["consult_s4"].arguments] == ["customer"]


def test_route_tools_ranks_and_decides(served):
    is_error, text = served["route"]
    assert not is_error, text
    result = json.loads(text)
    assert len(result["tools"]) == 3 and "premium_estimate" in [t["name"] for t in result["tools"]]
    assert result["no_call"] is False and all(isinstance(t["score"], float) for t in result["tools"])
    is_error, text = served["route_small_talk"]
    assert not is_error and isinstance(json.loads(text)["no_call"], bool)


def test_premium_estimate_runs_the_real_tool(served):
    """The same result as calling the tool directly, but for the product code: a handle (issue 37)."""
    from toolroute.domains.insurance.tools import build_tools

    is_error, text = served["premium"]
    assert not is_error, text
    direct = {t.name: t for t in build_tools()}["premium_estimate"].invoke(
        {"product": "첫날부터암보험", "age": 45, "sex": "여성"})
    served_result = json.loads(text)
    assert direct["status"] == "ok" and direct["monthly_premium"] > 0
    assert set(served_result) == set(direct)
    for key, value in direct.items():
        if key.endswith("_code"):
            assert re.fullmatch(r"product_[a-z]{12}", served_result[key]) and value not in text
        elif isinstance(value, (int, float)):
            assert served_result[key] == value, key


def test_bad_calls_are_tool_errors_and_the_server_goes_on(served):
    for case, (is_error, text) in served["bad"].items():
        assert is_error, f"{case}: {text}"
        assert text.strip(), case
    assert "no_such_tool" in served["bad"]["unknown tool"][1]
    assert "k must be between 1 and" in served["bad"]["route k=0"][1]
    assert "query" in served["bad"]["route no query"][1]
    is_error, text = served["after_errors"]
    assert not is_error and json.loads(text)["status"] == "ok"
    assert "Traceback" not in served["stderr"]


def test_reads_a_card_the_products_and_the_terms(served):
    card = json.loads(served["card"])
    assert card["name"] == "premium_estimate" and card["purpose"] and card["when_to_use"]
    products = json.loads(served["products"])
    assert len(products) == 12 and re.fullmatch(r"ref_[a-z]{12}", products[0]["code"])
    assert not re.search(r"B0\d\d", served["products"] + served["product_b003"]), "product codes are handles"
    assert json.loads(served["product_b003"])["name"] == "든든한실버치아보험"
    toc = json.loads(served["toc"])
    assert toc["chapters"][0]["chapter"].startswith("제1관")
    assert any(a.startswith("제1조") for a in toc["chapters"][0]["articles"])
    assert served["product_bad"] and "no such product" in served["product_bad"]


def test_prompts_render_the_flow_for_the_customer(served):
    """The customer appears as a masked name and a handle (issue 37); `customer_id` also takes a real id."""
    default = served["prompt_default"].messages[0].content.text
    assert re.search(r"김\*수 \(customer_[a-z]{12}, ", default) and "1단계" in default
    assert "customer_contract_lookup" in default and "C0001" not in default and "김민수" not in default
    other = served["prompt_other"].messages[0].content.text
    assert re.search(r"윤\*은 \(customer_[a-z]{12}, ", other) and "김*수" not in other and "C0002" not in other
    assert "52세 남성 버스기사" in served["prompt_free"].messages[0].content.text
    assert served["prompt_bad"] and "no such customer" in served["prompt_bad"]


def test_a_failing_domain_tool_is_a_tool_error_naming_it():
    """The insurance tools answer bad arguments with `needs_user_input` instead of raising; a tool that
    does raise (a strict schema, or a crash) reaches the client as an error result that names it; a crash's
    exception stays in the server's log under the error id the client gets (issue 37)."""
    from langchain_core.tools import StructuredTool
    from mcp import Client
    from mcp.server.mcpserver import MCPServer
    from pydantic import BaseModel, Field

    from toolroute.serve.mcp import DomainTool

    class Args(BaseModel):
        age: int = Field(description="나이")

    def strict(age: int) -> dict:
        if age > 120:
            raise RuntimeError("age table ends at 120")
        return {"status": "ok", "age": age}

    tool = StructuredTool.from_function(strict, name="strict_tool", description="strict", args_schema=Args)
    server = MCPServer("test", tools=[DomainTool.of(tool)])

    async def calls() -> list:
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            return [listed[0].input_schema] + [await client.call_tool("strict_tool", args)
                                                for args in ({"age": 40}, {"age": "마흔"}, {}, {"age": 200})]

    schema, good, wrong_type, missing, crash = anyio.run(calls)
    assert schema == Args.model_json_schema()
    assert not good.is_error and good.structured_content == {"status": "ok", "age": 40}
    for result, words in ((wrong_type, "invalid arguments: age"), (missing, "invalid arguments: age"),
                          (crash, "strict_tool failed (error id ")):
        assert result.is_error and "strict_tool" in result.content[0].text and words in result.content[0].text
    assert "RuntimeError" not in crash.content[0].text and "120" not in crash.content[0].text  # in the log only


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
@pytest.mark.parametrize("transport", ["http", "sse"])
def test_http_transports_on_loopback(tmp_path, transport):
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    from mcp.shared._httpx_utils import create_mcp_http_client

    port = _free_port()
    token = "loopback-test-token-0123456789"
    headers = {"Authorization": f"Bearer {token}"}
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "toolroute.cli", "mcp", "--transport", transport, "--port", str(port),
                             "--arm", "bm25", "--token-env", "MCP_TEST_TOKEN"],
                            env={**os.environ, **_env(tmp_path), "MCP_TEST_TOKEN": token}, stdout=log,
                            stderr=subprocess.STDOUT)

    async def list_tools(read, write) -> list[str]:
        async with ClientSession(read, write) as session:
            await session.initialize()
            return [t.name for t in (await session.list_tools()).tools]

    async def connect_and_list() -> list[str]:
        if transport == "http":
            async with create_mcp_http_client(headers=headers) as http:
                async with streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write, *_):
                    return await list_tools(read, write)
        async with sse_client(f"http://127.0.0.1:{port}/sse", headers=headers) as (read, write, *_):
            return await list_tools(read, write)

    async def exchange() -> list[str]:
        deadline = time.time() + 120
        while True:
            try:
                return await connect_and_list()
            except Exception:
                if proc.poll() is not None or time.time() > deadline:
                    raise
                await anyio.sleep(0.5)

    try:
        names = anyio.run(exchange)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
    assert len(names) == 55 and "route_tools" in names
    assert f"127.0.0.1:{port}" in (tmp_path / "server.log").read_text()

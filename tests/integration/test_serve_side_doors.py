"""The served system's side doors (issue 37) over real loopback HTTP with the scripted OpenAI-compatible
LLM: a model that names an unrouted tool, tool data in every route and event, and a reply the LLM's
stream cut off."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from conftest import LOOPBACK_ONLY
from serving import ThreadServer, openai_model, serving_agent, sse_frames
from toolroute.config import toolcards_dir
from toolroute.domains.insurance import customers as db
from toolroute.serve import ServeOptions, create_app
from toolroute.serve.scripted import create_scripted_app

pytestmark = LOOPBACK_ONLY

# The plan of the scripted LLM: look a customer up, then their contracts (both tools routed for the
# question below), then, whatever was routed, the customer table (the side door of finding 1).
PLAN = {"customer_search": {"age": 55, "sex": "여성"}, "customer_contract_lookup": {"customer_id": "C0002"}}
QUESTION = "55세 여성 고객 찾아서 계약 조회해줘"
SAYS = {"phone": "고객님께서 말씀하신 연락처 010-2841-7730 으로 안내 문자를 보내 드렸습니다. 확인 부탁드립니다."}


def secrets() -> list[str]:
    """Every customer's id, name, phone, e-mail and resident number, and every contract id."""
    with db._connect(None) as con:
        people = con.execute("SELECT customer_id, name, phone, email, resident_number FROM customers").fetchall()
        contracts = [row[0] for row in con.execute("SELECT contract_id FROM contracts").fetchall()]
    values = [str(v) for row in people for v in row] + contracts
    return sorted(set(values) | {v.replace("-", "") for v in values if "-" in v}, key=len, reverse=True)


def leaks(text: str, catalogue_route: bool = False) -> list[str]:
    """The secrets in `text`; for a route that shows the catalogue, not those its cards quote as
    examples of a user's words ("C0001 고객 계약 보여줘"): the catalogue is no tool data."""
    quoted = CATALOGUE if catalogue_route else ""
    return [s for s in secrets() if s in text and s not in quoted]


CATALOGUE = "\n".join(p.read_text(encoding="utf-8") for p in toolcards_dir("insurance").glob("*.yaml"))


@pytest.fixture
def served(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_CARDSTORE", str(tmp_path / "cardstore"))
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "data"))
    with ThreadServer(create_scripted_app(latency=0.02, plan=PLAN, says=SAYS)) as llm:
        app = create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "memory.sqlite"),
                         llm=openai_model(llm.url + "/v1"), build_in_background=False,
                         options=ServeOptions(memory_path=tmp_path / "memory.sqlite"))
        with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            yield app, client


def test_tool_data_leaves_by_no_route_and_no_event_unmasked(served):
    app, client = served
    status, frames = sse_frames(client, "/api/chat/stream", {"message": QUESTION})
    assert status == 200
    events = {name for name, _ in frames}
    calls = [data for name, data in frames if name == "tool_call"]
    assert [c["tool_name"] for c in calls] == ["customer_search", "customer_contract_lookup"]
    assert calls[0]["tool_output"]["count"] >= 1  # the tool ran; the client sees it masked
    assert not leaks(json.dumps(frames, ensure_ascii=False)), leaks(json.dumps(frames, ensure_ascii=False))
    assert {"route", "tool_call", "token", "sources", "done"} <= events
    thread = frames[0][1]["thread_id"]

    reply = client.post("/api/chat", json={"message": QUESTION})
    assert reply.status_code == 200 and reply.json()["tool_calls"]
    assert not leaks(reply.text), leaks(reply.text)

    # every route of the app, called as an anonymous client would (writes without a token)
    checked = set()
    for method, template in every_route(app):
        path = _fill(template, thread)
        body: Any = {"message": QUESTION, "thread_id": thread} if "chat" in path else {}
        response = client.request(method, path, json=body if method != "GET" else None)
        assert response.status_code < 500, (method, path, response.status_code, response.text[:300])
        catalogue = not path.startswith(("/api/chat", "/api/threads"))
        assert not leaks(response.text, catalogue), (method, path, leaks(response.text, catalogue))
        checked.add((method, template))
    assert ("GET", "/api/threads/{thread_id}") in checked and ("POST", "/api/chat/stream") in checked
    assert len(checked) >= 15


def every_route(app) -> list[tuple[str, str]]:
    """(method, path template) of every route: the OpenAPI paths (the card API's included router among
    them) and the routes left out of the schema (the pages, the docs)."""
    routes = {(method.upper(), path) for path, item in app.openapi()["paths"].items() for method in item}
    routes |= {(method, route.path) for route in app.routes if getattr(route, "path", None)
               for method in getattr(route, "methods", None) or () if method not in ("HEAD", "OPTIONS")}
    return sorted(routes)


def _fill(path: str, thread: str) -> str:
    values = {"thread_id": thread, "name": "customer_search", "module": "toolroute.domains.insurance.tools.customer_db"}
    return re.sub(r"\{(\w+)(?::[^}]*)?\}", lambda m: values.get(m.group(1), "x"), path)


def test_a_model_naming_an_unrouted_tool_does_not_run_it(tmp_path, monkeypatch):
    """The router binds claim tools; the scripted model calls `customer_search` anyway."""
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "data"))
    plan = {"customer_search": {"age": 52}}
    with ThreadServer(create_scripted_app(latency=0.02, plan=plan, call_unbound=True)) as llm:
        app = create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "memory.sqlite"),
                         llm=openai_model(llm.url + "/v1"), build_in_background=False,
                         options=ServeOptions(memory_path=tmp_path / "memory.sqlite"))
        with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            body = client.post("/api/chat", json={"message": "보험금 청구할 때 필요한 서류 알려줘"}).json()
    assert "customer_search" not in body["route"]["tools"]
    call = body["tool_calls"][0]
    assert call["tool_name"] == "customer_search" and call["status"] == "error"
    assert "not available in this turn" in json.dumps(call["tool_output"])
    assert "customers" not in call["tool_output"] and call["tool_result"] == "도구를 실행하지 못했습니다"


def test_a_reply_cut_off_mid_stream_is_a_failed_turn_and_its_digits_stay_hidden(served):
    _, client = served
    status, frames = sse_frames(client, "/api/chat/stream", {"message": "보험료 알려줘 [cut] [say:phone]"})
    names = [n for n, _ in frames]
    assert status == 200 and names[-2:] == ["error", "done"]
    assert frames[-1][1]["failed"] is True and frames[-2][1]["kind"] == "stream_cut"
    text = json.dumps(frames, ensure_ascii=False)
    assert "2841" not in text and "127.0.0.1" not in text
    thread = frames[0][1]["thread_id"]
    turns = client.get(f"/api/threads/{thread}").json()["turns"]
    assert turns[-1]["answer"] == ""  # nothing partial stored as an answer

"""What every request of the served app passes (issue 37, findings 5 and 6), in process: the Host
check (421), the body counted as it is read (413, chunked included), JSON text that is valid Unicode
(400 naming the field), error bodies without paths, URLs or exception names (500 with an error id),
`/healthz` on a broken store, and evaluations that give way and stop."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from fake_llm import ScriptedLLM
from serving import serving_agent
from toolroute.serve import LLMSupervisor, ServeOptions, create_app
from toolroute.serve.door import allowed_hosts, host_name, lone_surrogate, text_problem
from toolroute.serve.errors import public
from toolroute.serve.llm import LLMDown
from toolroute.serve.pacing import BATCH, EvaluationCancelled, Pace, PacedRouter

QUESTION = "55세 여성 실속치매보험 보험료 알려줘"


def _app(tmp_path, llm=None, **options):
    llm = llm if llm is not None else ScriptedLLM(replies=["보험료를 안내해 드리겠습니다."] * 20)
    return create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "memory.sqlite"), llm=llm,
                      options=ServeOptions(memory_path=tmp_path / "memory.sqlite", **options), build_in_background=False)


# ----- the Host header ------------------------------------------------------------------------------


def test_host_names_are_parsed_with_any_port_and_ipv6_brackets():
    assert host_name("Example.COM:8080") == "example.com" and host_name("localhost") == "localhost"
    assert host_name("[::1]:8080") == "::1" and host_name("[::1]") == "::1" and host_name("127.0.0.1.") == "127.0.0.1"
    assert host_name("127.0.0.1:x") == "" and host_name("[::1]x") == "" and host_name("") == ""


def test_allowed_hosts_are_loopback_the_bound_name_and_the_listed_ones():
    assert allowed_hosts("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert allowed_hosts("10.1.2.3") == {"127.0.0.1", "localhost", "::1", "10.1.2.3"}
    assert allowed_hosts("0.0.0.0") == allowed_hosts("::") == {"127.0.0.1", "localhost", "::1"}  # not "any name"
    assert allowed_hosts("0.0.0.0", ["Agent.example.com", "10.1.2.3:8080"]) >= {"agent.example.com", "10.1.2.3"}


def test_a_foreign_host_is_421_on_every_route_and_loopback_names_are_answered(tmp_path, monkeypatch):
    app = _app(tmp_path)
    with TestClient(app, base_url="http://127.0.0.1:8080") as client:
        for host in ("attacker.example", "attacker.example:8080", "127.0.0.1.attacker.example", "0.0.0.0"):
            for method, path in (("GET", "/healthz"), ("GET", "/"), ("GET", "/api/stats"), ("POST", "/api/chat")):
                refused = client.request(method, path, headers={"Host": host}, json={"message": QUESTION})
                assert refused.status_code == 421, (host, path)
                assert "attacker" not in refused.text and "127.0.0.1" not in refused.text  # nothing echoed or listed
        for host in ("127.0.0.1:8080", "localhost", "LOCALHOST:1", "[::1]:8080"):
            assert client.get("/healthz", headers={"Host": host}).status_code == 200, host
        assert TestClient(app).get("/healthz").status_code == 421  # the test client's own "testserver" too
    monkeypatch.setenv("TOOLROUTE_ALLOWED_HOSTS", "agent.example.com, 10.1.2.3")
    everywhere = _app(tmp_path, host="0.0.0.0")
    with TestClient(everywhere, base_url="http://agent.example.com") as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/healthz", headers={"Host": "10.1.2.3:8080"}).status_code == 200
        assert client.get("/healthz", headers={"Host": "10.9.9.9"}).status_code == 421


# ----- the body, counted as it is read --------------------------------------------------------------


def test_a_chunked_body_over_the_limit_is_413_and_the_turn_never_runs(tmp_path):
    """10 MB without Content-Length (a generator body: chunked): refused once 64 KB were read."""
    llm = ScriptedLLM(replies=["보험료를 안내해 드리겠습니다."] * 5)
    app = _app(tmp_path, llm)
    pulled = []

    async def body():
        yield ('{"message": "' + QUESTION + '", "pad": "').encode()
        for _ in range(160):  # 160 x 64 KB = 10 MB
            pulled.append(1)
            yield b"x" * 65536
        yield b'"}'

    async def post(path: str) -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            return await client.post(path, content=body(), headers={"Content-Type": "application/json"})

    with TestClient(app, base_url="http://127.0.0.1"):  # runs the lifespan: the agent is built
        for path in ("/api/chat", "/api/chat/stream"):
            pulled.clear()
            answer = asyncio.run(post(path))
            assert answer.status_code == 413 and "65,536 bytes" in answer.json()["detail"], path
            assert len(pulled) <= 2, "the body was read on after the limit"
    assert llm.calls == [] and app.state.slots.finished == 0  # no turn ran
    with TestClient(app, base_url="http://127.0.0.1") as client:  # a declared length over the limit: nothing read
        assert client.post("/api/route", content=b"{" + b" " * 70000 + b"}",
                           headers={"Content-Type": "application/json"}).status_code == 413


# ----- JSON text that is valid Unicode ----------------------------------------------------------------


def test_the_field_holding_a_lone_surrogate_is_named():
    assert lone_surrogate({"message": "fine", "thread_id": None}) is None
    assert lone_surrogate({"message": "a\ud800b"}) == "message"
    assert lone_surrogate({"edit": {"changes": {"+when_to_use": ["ok", "\udc00"]}}}) == "edit.changes.+when_to_use[1]"
    assert lone_surrogate({"edit": {"changes": {"\ud800": 1}}}) == "a key of edit.changes"
    assert text_problem(b'{"message": "\\ud800"}', "application/json").startswith("message: invalid Unicode")
    assert text_problem(b'{"message": "\xed\xa0\x80"}', None) == "the request body is not valid UTF-8 (byte 13)"
    assert text_problem(b'{"message": "\\ud83d\\ude00 \xec\x95\x88\xeb\x85\x95"}', "application/json") is None  # a pair
    assert text_problem(b"not json", "application/json") is None  # the route answers its own parse error


def test_a_lone_surrogate_is_400_naming_the_field_on_every_json_route(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", "t0ken")
    monkeypatch.setenv("TOOLROUTE_CARDSTORE", str(tmp_path / "cardstore"))
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "data"))
    llm = ScriptedLLM(replies=["보험료를 안내해 드리겠습니다."] * 5)
    app = _app(tmp_path, llm)
    auth = {"Authorization": "Bearer t0ken", "If-Match": "0", "Content-Type": "application/json"}
    cases = [("POST", "/api/chat", '{"message": "보험료 \\ud800 알려줘"}', "message"),
             ("POST", "/api/chat/stream", '{"message": "\\udfff"}', "message"),
             ("PUT", "/api/tools/premium_estimate/card", '{"when_to_use": ["보험료", "\\ud800"]}', "when_to_use[1]"),
             ("POST", "/api/tools/premium_estimate/rollback", '{"to": 0, "message": "\\ud800"}', "message"),
             ("POST", "/api/route", '{"query": "\\ud800"}', "query"),
             ("POST", "/api/eval", '{"split": "tune", "edit": {"tool": "premium_estimate", "changes": '
                                   '{"+when_to_use": "\\ud800"}}}', "edit.changes.+when_to_use"),
             ("POST", "/api/proposals", '{"split": "\\ud800"}', "split")]
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for method, path, body, field in cases:
            answer = client.request(method, path, content=body.encode(), headers=auth)
            assert answer.status_code == 400, (path, answer.status_code, answer.text)
            assert answer.json()["detail"].startswith(f"{field}: invalid Unicode"), path
        raw = client.post("/api/chat", content='{"message": "'.encode() + b"\xed\xa0\x80" + b'"}',
                          headers={"Content-Type": "application/json"})
        assert raw.status_code == 400 and "not valid UTF-8" in raw.json()["detail"]
        assert client.get("/api/tools/premium_estimate").json()["version"] == 0  # nothing was saved
    assert llm.calls == [] and app.state.slots.finished == 0


# ----- what error bodies say -------------------------------------------------------------------------


def test_public_text_keeps_api_paths_and_drops_server_paths_and_urls():
    text = ("no version 9 in /work/main/.toolroute/cardstore/insurance.json: see http://127.0.0.1:8081/v1/models; "
            "POST /api/tools/x/register to route with it again; 입/출금, `field` / `+field`")
    assert public(text) == ("no version 9 in insurance.json: see <url>; POST /api/tools/x/register to route with it "
                            "again; 입/출금, `field` / `+field`")


def test_an_unexpected_exception_is_500_with_an_error_id_and_the_details_only_in_the_log(tmp_path, caplog):
    app = _app(tmp_path)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        thread = client.post("/api/chat", json={"message": QUESTION}).json()["thread_id"]

        class Broken:
            def get_state(self, config):
                raise RuntimeError("cannot open /srv/secret/memory.sqlite via http://10.0.0.5:8000/v1")

        app.state.served.agent.graph = Broken()
        caplog.set_level(logging.ERROR, logger="toolroute.serve")
        answer = client.get(f"/api/threads/{thread}")
    assert answer.status_code == 500
    error_id = answer.headers["X-Error-Id"]
    assert answer.json() == {"detail": f"internal error (error id {error_id})"}
    for internal in ("RuntimeError", "/srv", "secret", "http://", "10.0.0.5"):
        assert internal not in answer.text
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert error_id in logged and "RuntimeError" in "\n".join(str(r.exc_info) for r in caplog.records)


def test_validation_errors_echo_no_input_and_no_urls(tmp_path):
    with TestClient(_app(tmp_path), base_url="http://127.0.0.1") as client:
        answer = client.post("/api/chat", json={"message": 12345678, "thread_id": ["x" * 500]})
    assert answer.status_code == 422
    assert all(set(e) == {"loc", "msg", "type"} for e in answer.json()["detail"])
    assert "12345678" not in answer.text and "x" * 500 not in answer.text and "http" not in answer.text


def test_an_llm_that_cannot_be_reached_is_named_without_its_url(caplog):
    class Unreachable(LLMSupervisor):
        def endpoint(self):
            raise ConnectionError("the embedded LLM server did not answer on http://127.0.0.1:39123/v1 within 60 s")

    caplog.set_level(logging.ERROR, logger="toolroute.serve")
    with pytest.raises(LLMDown) as down:
        Unreachable().model()
    assert str(down.value).startswith("the LLM server does not answer (error id ")
    assert "127.0.0.1" not in str(down.value) and "ConnectionError" not in str(down.value)
    assert "39123" in "\n".join(str(r.exc_info) for r in caplog.records)


def test_a_turn_whose_llm_cannot_be_reached_tells_the_client_no_url(tmp_path):
    class FailsAfterTheBuild(LLMSupervisor):
        calls = 0

        def endpoint(self):
            FailsAfterTheBuild.calls += 1
            if FailsAfterTheBuild.calls > 1:
                raise ConnectionError("the embedded LLM server did not answer on http://127.0.0.1:39123/v1 within 60 s")
            return "http://127.0.0.1:39123/v1", "scripted"

    app = _app(tmp_path, FailsAfterTheBuild())
    with TestClient(app, base_url="http://127.0.0.1") as client:
        answer = client.post("/api/chat", json={"message": QUESTION})
    assert answer.status_code == 200 and answer.json()["failed"] is True
    assert answer.json()["error"].startswith("the language model did not answer (error id ")
    assert "39123" not in answer.text and "http://" not in answer.text and "LLMDown" not in answer.text


# ----- a broken store -----------------------------------------------------------------------------------


def test_a_corrupt_thread_store_makes_healthz_503_with_a_reason_naming_no_path(tmp_path):
    (tmp_path / "memory.sqlite").write_bytes(b"this is not a SQLite database, " * 200)
    app = _app(tmp_path)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        health, ready, stats = client.get("/healthz"), client.get("/readyz"), client.get("/api/stats")
        chat = client.post("/api/chat", json={"message": QUESTION})
    assert health.status_code == 503 and health.json()["status"] == "unhealthy"
    reason = health.json()["reason"]
    assert "SQLite store" in reason and "damaged" in reason and "error id" in reason
    assert ready.status_code == 503 and ready.json()["error"] == reason
    assert stats.status_code == 503 and stats.json()["detail"] == reason and "Retry-After" not in stats.headers
    assert chat.status_code == 503 and chat.json()["detail"] == reason and "Retry-After" not in chat.headers
    for body in (health.text, ready.text, stats.text, chat.text):
        assert str(tmp_path) not in body and "memory.sqlite" not in body and "DatabaseError" not in body


def test_a_clean_stop_checkpoints_the_write_ahead_log(tmp_path):
    app = _app(tmp_path)
    wal = tmp_path / "memory.sqlite-wal"
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.post("/api/chat", json={"message": QUESTION}).status_code == 200
        assert wal.stat().st_size > 0  # the turn's checkpoint is in the log
    assert wal.stat().st_size == 0  # folded into the database at shutdown


# ----- evaluations give way and stop -----------------------------------------------------------------


class CountingRouter:
    def __init__(self):
        self.batches: list[int] = []
        self.catalog = "the catalogue"

    def route_many(self, queries):
        self.batches.append(len(queries))
        return list(queries)

    def over(self, catalog):
        return CountingRouter()


def test_a_paced_router_routes_in_batches_waits_for_chat_turns_and_stops_when_cancelled():
    turns = {"active": 1}
    pace = Pace(busy=lambda: turns["active"], max_wait=5.0, step=0.01)
    inner = CountingRouter()
    router = PacedRouter(inner, pace)
    assert router.catalog == "the catalogue"  # everything else is the wrapped router's
    threading.Timer(0.3, lambda: turns.update(active=0)).start()
    started = time.monotonic()
    assert router.route_many([f"q{i}" for i in range(20)]) == [f"q{i}" for i in range(20)]
    assert time.monotonic() - started >= 0.25 and inner.batches == [BATCH, BATCH, 4]  # waited for the turn first
    turns["active"] = 1
    pace.max_wait = 0.05  # a steady chat load: each batch waits at most this long, the evaluation still ends
    started = time.monotonic()
    router.route_many(["q"] * 16)
    assert 0.1 <= time.monotonic() - started < 1.0
    pace.cancel.set()
    with pytest.raises(EvaluationCancelled):
        router.route_many(["q"])
    with pytest.raises(EvaluationCancelled):
        router.over("another catalogue")

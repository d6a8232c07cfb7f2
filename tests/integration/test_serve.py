"""The served agent over real loopback HTTP: seed 000's events read by an SSE client, the JSON API,
threads across restarts, limits, logs without personal data, and faults (a dead LLM, a client that
leaves). The LLM is the scripted OpenAI-compatible endpoint (`toolroute.serve.scripted`)."""

from __future__ import annotations

import io
import logging
import re
import threading
import time

import httpx
import pytest

from toolroute.serve import LLMSupervisor, ServeOptions, create_app
from toolroute.serve.scripted import create_scripted_app

from serving import ScriptedProcess, ThreadServer, openai_model, serving_agent, sse_frames

pytestmark = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1"])]

QUESTION = "55세 여성 실속치매보험 보험료랑 보장 내용 알려줘"


@pytest.fixture(scope="module")
def scripted():
    with ThreadServer(create_scripted_app(latency=0.05)) as server:
        yield server


def _app(tmp_path, llm, **options):
    return create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "memory.sqlite"), llm=llm,
                      options=ServeOptions(memory_path=tmp_path / "memory.sqlite", **options), build_in_background=False)


@pytest.fixture
def served(tmp_path, scripted):
    app = _app(tmp_path, openai_model(scripted.url + "/v1"))
    with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        yield app, client


def test_the_stream_follows_seed_000s_event_table(served):
    _, client = served
    status, frames = sse_frames(client, "/api/chat/stream", {"message": f"{QUESTION} [T-seed]"})
    assert status == 200
    names = [n for n, _ in frames]
    assert names[0] == "route" and names[-2:] == ["sources", "done"]
    assert set(names) <= {"route", "token", "tool_call", "sources", "error", "done"} and "error" not in names
    route = frames[0][1]
    assert route["route"] == "tools" and "premium_estimate" in route["tools"] and route["thread_id"]
    calls = [d for n, d in frames if n == "tool_call"]
    assert [c["tool_name"] for c in calls] == ["premium_estimate", "coverage_summary"]  # 0..3 of them, in order
    assert all(c["tool_called"] is True and "tool_result" in c for c in calls)
    assert calls[0]["tool_output"]["monthly_premium"] == 17950
    tokens = [d for n, d in frames if n == "token"]
    assert tokens and all(set(t) == {"token"} for t in tokens)
    sources, done = frames[-2][1], frames[-1][1]
    assert isinstance(sources, list) and isinstance(done, dict)
    assert "".join(t["token"] for t in tokens) == done["answer"]  # the stream is the guarded answer
    assert "[T-seed]" in done["answer"] and "17,950원" in done["answer"] and "B005" not in done["answer"]
    assert done["failed"] is False and done["thread_id"] == route["thread_id"]
    assert names.index("tool_call") < names.index("token")


def test_the_json_api_and_threads_across_requests_and_restarts(tmp_path, scripted):
    llm = openai_model(scripted.url + "/v1")
    with ThreadServer(_app(tmp_path, llm)) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["index"] and ready.json()["llm"]
        assert "/api/chat/stream" in client.get("/openapi.json").json()["paths"]
        assert client.get("/docs").status_code == 200
        first = client.post("/api/chat", json={"message": QUESTION}).json()
        assert [c["tool_name"] for c in first["tool_calls"]] == ["premium_estimate", "coverage_summary"]
        assert first["answer"] and not first["failed"] and first["usage"]["llm_calls"] == 3
        assert first["usage"]["prompt_tokens"] > 0 and first["route"]["route"] == "tools"
        thread = first["thread_id"]
    # a new server process on the same SQLite file: the thread is still there and continues
    with ThreadServer(_app(tmp_path, llm)) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        assert [t["question"] for t in client.get(f"/api/threads/{thread}").json()["turns"]] == [QUESTION]
        again = client.post("/api/chat", json={"message": "고마워요, 그럼 보험료는 얼마였죠?", "thread_id": thread})
        assert again.status_code == 200 and again.json()["thread_id"] == thread
        assert len(client.get(f"/api/threads/{thread}").json()["turns"]) == 2


def test_a_thread_exists_once_its_first_turn_is_checkpointed(tmp_path):
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver  # the memory the server uses
    from toolroute.serve.app import thread_exists

    saver = SqliteSaver(sqlite3.connect(tmp_path / "m.sqlite", check_same_thread=False))
    assert not thread_exists(saver, "t1")  # before any turn: no table yet, and no error
    config = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}
    saver.put(config, {"v": 1, "id": "c1", "ts": "2026-12-05T00:00:00+00:00", "channel_values": {},
                       "channel_versions": {}, "versions_seen": {}}, {}, {})
    assert thread_exists(saver, "t1") and not thread_exists(saver, "t2")


def test_limits(tmp_path):
    slow = create_scripted_app(latency=1.0)
    with ThreadServer(slow) as llm_server:
        app = _app(tmp_path, openai_model(llm_server.url + "/v1"), max_concurrent_turns=1, turn_timeout=30)
        with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            assert client.post("/api/chat", json={"message": "가" * 4001}).status_code == 413
            assert client.post("/api/chat/stream", json={"message": "가" * 4001}).status_code == 413
            assert client.post("/api/chat", json={"message": "보험료", "thread_id": "../etc"}).status_code == 400
            assert client.post("/api/chat", json={"message": "보험료", "thread_id": "x" * 65}).status_code == 400
            assert client.post("/api/chat", json={"message": "보험료", "thread_id": "never-seen"}).status_code == 404
            assert client.get("/api/threads/never-seen").status_code == 404
            assert client.post("/api/chat", json={"message": "   "}).status_code == 400
            results = {}
            busy = threading.Thread(target=lambda: results.setdefault("first", client.post("/api/chat", json={"message": QUESTION})))
            busy.start()
            deadline = time.time() + 10
            while app.state.slots.active == 0 and time.time() < deadline:
                time.sleep(0.02)
            refused = client.post("/api/chat/stream", json={"message": "치매보험 보험료"})
            assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
            busy.join(timeout=30)
            assert results["first"].status_code == 200
            assert app.state.slots.active == 0 and app.state.slots.refused == 1


def test_a_turn_over_its_time_is_stopped_with_error_then_done(tmp_path):
    with ThreadServer(create_scripted_app(latency=3.0)) as llm_server:
        app = _app(tmp_path, openai_model(llm_server.url + "/v1"), turn_timeout=1)
        with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            started = time.time()
            status, frames = sse_frames(client, "/api/chat/stream", {"message": QUESTION})
            assert time.time() - started < 6
            names = [n for n, _ in frames]
            assert names[0] == "route" and names[-2:] == ["error", "done"] and frames[-1][1]["failed"]
            assert "timed out" in frames[-2][1]["error"] and "TOOLROUTE_TURN_TIMEOUT" in frames[-2][1]["error"]  # the setting to raise


def test_logs_never_hold_personal_data(tmp_path, scripted, caplog):
    from toolroute.agent.pack import load_pack
    from toolroute.serve.logs import configure_logging

    stream = io.StringIO()
    pack = load_pack("insurance")
    handler = configure_logging(pack.mask_text, logging.DEBUG, stream)
    caplog.set_level(logging.DEBUG)
    try:
        app = _app(tmp_path, openai_model(scripted.url + "/v1"))
        with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            first = client.post("/api/chat", json={"message": "주민번호 900101-1234567 고객 실속치매보험 보험료 알려줘"}).json()
            status, _ = sse_frames(client, "/api/chat/stream", {"message": "연락처는 010-9876-5432, 메일 minsu.kim@example.com 입니다",
                                                                  "thread_id": first["thread_id"]})
            assert status == 200
    finally:
        logging.getLogger().removeHandler(handler)
    logged = stream.getvalue() + "\n".join(r.getMessage() for r in caplog.records)
    assert "turn thread=" in logged  # the turns were logged
    for secret in ("900101-1234567", "1234567", "9876-5432", "010-9876", "minsu.kim"):
        assert secret not in stream.getvalue(), secret
    assert not re.search(r"\d{6}-[1-8]\d{6}|01\d-\d{3,4}-\d{4}", "\n".join(r.getMessage() for r in caplog.records
                                                                         if r.name.startswith(("toolroute", "uvicorn"))))


class ChildSupervisor(LLMSupervisor):
    """Like the embedded model's supervisor, with the scripted endpoint as the child process."""

    def __init__(self, child: ScriptedProcess):
        super().__init__()
        self.child = child

    def endpoint(self):
        if not self.child.alive():
            self.child.start()
        return self.child.base_url, "scripted"

    @property
    def embedded(self):
        return False


def test_an_llm_killed_mid_stream_gives_error_then_done_and_the_next_turn_works(tmp_path):
    child = ScriptedProcess(latency=0.05)
    supervisor = ChildSupervisor(child)
    try:
        app = _app(tmp_path, supervisor)
        with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            status, frames = sse_frames(client, "/api/chat/stream", {"message": f"{QUESTION} [crash]"})
            names = [n for n, _ in frames]
            assert status == 200 and names[-2:] == ["error", "done"] and frames[-1][1]["failed"] is True
            assert not child.alive()
            thread = frames[0][1]["thread_id"]
            status, frames = sse_frames(client, "/api/chat/stream", {"message": QUESTION, "thread_id": thread})
            names = [n for n, _ in frames]
            assert status == 200 and "error" not in names and frames[-1][1]["failed"] is False
            assert child.started == 2 and supervisor.restarts == 1  # a new LLM child for the next turn
            assert "17,950원" in frames[-1][1]["answer"]
            assert len(client.get(f"/api/threads/{thread}").json()["turns"]) == 2
    finally:
        child.stop()


def test_a_client_that_leaves_mid_stream_stops_its_turn(tmp_path):
    llm_app = create_scripted_app(latency=0.6)
    with ThreadServer(llm_app) as llm_server:
        app = _app(tmp_path, openai_model(llm_server.url + "/v1"))
        with ThreadServer(app) as server:
            with httpx.Client(base_url=server.url, timeout=30) as client:
                with client.stream("POST", "/api/chat/stream", json={"message": QUESTION}) as response:
                    for line in response.iter_lines():
                        if line.startswith("event: route"):
                            break  # the client goes away while the first LLM call runs
            deadline = time.time() + 10
            while app.state.slots.active and time.time() < deadline:
                time.sleep(0.05)
            assert app.state.slots.active == 0
            time.sleep(1.5)  # a turn that ran on would now call the LLM again (and again)
            assert llm_app.state.stats["requests"] <= 1  # the call running when the client left, no more

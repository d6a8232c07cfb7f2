"""Issue 37, findings 5 and 6, over real loopback HTTP (uvicorn): a 10 MB chunked body is 413 on the
chat and the admin routes and never reaches a turn; evaluations need the token, take bounded input,
stop and free the evaluation lock when their client leaves and give way to chat turns; a foreign Host
is 421; a lone surrogate is 400; no answer names a path, a URL or an exception; a damaged thread
store makes /healthz 503; a clean stop leaves the SQLite write-ahead log empty."""

from __future__ import annotations

import json
import select
import socket
import threading
import time

import httpx
import pytest
import yaml
from fastapi import FastAPI

from conftest import LOOPBACK_ONLY, HashEmbedder
from serving import ThreadServer, free_port, openai_model, serving_agent, sse_frames
from toolroute.cards.store import CardStore
from toolroute.routing import RouterConfig, build_router
from toolroute.serve import ServeOptions, create_app
from toolroute.serve.cards_api import CardOps, card_routes
from toolroute.serve.scripted import create_scripted_app

pytestmark = LOOPBACK_ONLY

QUESTION = "55세 여성 실속치매보험 보험료 알려줘"
TOKEN = "door-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def _served_app(tmp_path, llm):
    return create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "memory.sqlite"), llm=llm,
                      build_in_background=False, options=ServeOptions(memory_path=tmp_path / "memory.sqlite"))


@pytest.fixture
def served(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", TOKEN)
    monkeypatch.setenv("TOOLROUTE_CARDSTORE", str(tmp_path / "cardstore"))
    llm = create_scripted_app(latency=0.05)
    with ThreadServer(llm) as llm_server:
        app = _served_app(tmp_path, openai_model(llm_server.url + "/v1"))
        with ThreadServer(app) as server:
            yield app, llm, server


def chunked_post(port: int, path: str, prefix: bytes, suffix: bytes, headers: dict[str, str] | None = None,
                 total: int = 10 * 2**20, piece: int = 65536) -> tuple[int | None, dict, int]:
    """POST `prefix + "x" * total + suffix` chunked (no Content-Length) on a raw socket, stopping as soon
    as the server answers: (status, JSON body, bytes of padding sent). The answer is read even when the
    server closed the connection under the sender (it refused the rest of the body)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    sock.sendall((f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nTransfer-Encoding: chunked\r\n"
                  f"Content-Type: application/json\r\n{head}\r\n").encode())
    sent, data = 0, b""
    try:
        sock.sendall(f"{len(prefix):x}\r\n".encode() + prefix + b"\r\n")
        while sent < total:
            if select.select([sock], [], [], 0)[0]:  # the server answered before the body was complete
                break
            sock.sendall(f"{piece:x}\r\n".encode() + b"x" * piece + b"\r\n")
            sent += piece
        else:
            sock.sendall(f"{len(suffix):x}\r\n".encode() + suffix + b"\r\n0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused and closed: the answer is in the receive buffer
    try:
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data and b"content-length" in data.lower():
                head_part, _, body = data.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head_part.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                if len(body) >= length:
                    break
    except (ConnectionResetError, socket.timeout):
        pass
    finally:
        sock.close()
    if not data.startswith(b"HTTP/1.1 "):
        return None, {}, sent
    status = int(data.split(b" ", 2)[1])
    body = data.partition(b"\r\n\r\n")[2]
    try:
        return status, json.loads(body), sent
    except ValueError:
        return status, {"raw": body[:200].decode("utf-8", "replace")}, sent


def test_a_10_mb_chunked_body_is_413_on_the_chat_and_admin_routes_and_no_turn_runs(served):
    """On the main of issue 37 only a declared Content-Length was checked: the chunked chat body was
    read whole and its turn ran (200)."""
    app, llm, server = served
    chat = (f'{{"message": "{QUESTION}", "pad": "'.encode(), b'"}')
    cases = [("/api/chat", chat, {}), ("/api/chat/stream", chat, {}),
             ("/api/tools/premium_estimate/card", (b'{"purpose": "', b'"}'), {**AUTH, "If-Match": "0"}),
             ("/api/eval", (b'{"split": "dev", "pad": "', b'"}'), AUTH),
             ("/api/proposals", (b'{"split": "dev", "pad": "', b'"}'), AUTH),
             ("/api/route", (b'{"query": "', b'"}'), {})]
    for path, (prefix, suffix), headers in cases:
        status, body, sent = chunked_post(server.port, path, prefix, suffix, headers)
        assert status == 413 and body["detail"] == "request body over 65,536 bytes", (path, status, body)
        assert sent < 10 * 2**20, path  # cut off before the whole body went
    time.sleep(0.3)
    assert llm.state.stats["requests"] == 0 and app.state.slots.finished == 0  # no turn ran
    with httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.get("/api/tools/premium_estimate").json()["version"] == 0  # no edit was saved
        small = client.post("/api/chat", json={"message": QUESTION})
    assert small.status_code == 200 and llm.state.stats["requests"] > 0  # and the server still serves


def test_a_foreign_host_is_421_over_http(served):
    _, llm, server = served
    for host in ("evil.example", "rebound.attacker.example:8080"):
        for path in ("/healthz", "/api/tools", "/admin/tools"):
            assert httpx.get(server.url + path, headers={"Host": host}).status_code == 421, (host, path)
        refused = httpx.post(server.url + "/api/chat", json={"message": QUESTION}, headers={"Host": host})
        assert refused.status_code == 421
    assert llm.state.stats["requests"] == 0
    assert httpx.get(server.url + "/healthz").status_code == 200  # Host: 127.0.0.1:<port>
    assert httpx.get(server.url + "/healthz", headers={"Host": "localhost"}).status_code == 200
    assert httpx.get(server.url + "/healthz", headers={"Host": f"[::1]:{server.port}"}).status_code == 200


def test_a_lone_surrogate_is_400_naming_the_field_over_http(served):
    """On the main of issue 37: 200, a failed turn whose error was a UnicodeEncodeError."""
    app, llm, server = served
    raw = b'{"message": "\\ud800 \xeb\xb3\xb4\xed\x97\x98\xeb\xa3\x8c"}'  # "\ud800 보험료", the escape as sent
    answer = httpx.post(server.url + "/api/chat", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("message: invalid Unicode")
    assert llm.state.stats["requests"] == 0 and app.state.slots.finished == 0


def test_a_diff_or_rollback_error_names_no_card_store_path(served, tmp_path):
    """On the main of issue 37 the 400 of a diff to a version that does not exist quoted the card
    store's file path."""
    _, _, server = served
    with httpx.Client(base_url=server.url, timeout=30) as client:
        answers = [client.get("/api/tools/premium_estimate/diff", params={"from": 0, "to": 99}),
                   client.get("/api/tools/premium_estimate/diff", params={"from": 99}),
                   client.post("/api/tools/premium_estimate/rollback", json={"to": 99}, headers={**AUTH, "If-Match": "0"})]
    for answer in answers:
        assert answer.status_code == 400 and "versions run from 0 (the YAML) to 0" in answer.json()["detail"], answer.text
        assert str(tmp_path) not in answer.text and "cardstore" not in answer.text and ".json" not in answer.text


def test_an_llm_that_does_not_answer_is_told_without_its_url(tmp_path):
    """The LLM's port is closed: the turn fails with kind `llm` and an error id; on the main of issue 37
    the error text was the client exception and `(LLM at http://127.0.0.1:<port>/v1)`."""
    port = free_port()  # nothing listens on it
    app = _served_app(tmp_path, openai_model(f"http://127.0.0.1:{port}/v1"))
    with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
        answer = client.post("/api/chat", json={"message": QUESTION})
        status, frames = sse_frames(client, "/api/chat/stream", {"message": QUESTION})
    assert answer.status_code == 200 and answer.json()["failed"] is True
    assert answer.json()["error"].startswith("the language model did not answer (error id ")
    error = dict(frames)["error"]
    assert status == 200 and error["kind"] == "llm" and error["error_id"] in error["error"]
    for text in (answer.text, json.dumps(frames)):
        assert str(port) not in text and "http://" not in text and "Error:" not in text


def test_a_damaged_thread_store_makes_healthz_503_over_http(tmp_path):
    """On the main of issue 37: /healthz 200, /readyz 503 forever, /api/stats 'still being built'."""
    (tmp_path / "memory.sqlite").write_bytes(b"this is not a SQLite database, " * 200)
    app = _served_app(tmp_path, openai_model("http://127.0.0.1:9/v1"))
    with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        health, ready, stats = client.get("/healthz"), client.get("/readyz"), client.get("/api/stats")
    assert health.status_code == 503 and health.json()["status"] == "unhealthy"
    assert "damaged" in health.json()["reason"] and "error id" in health.json()["reason"]
    assert ready.status_code == 503 and stats.status_code == 503 and "being built" not in stats.text
    for answer in (health, ready, stats):
        assert str(tmp_path) not in answer.text and "memory.sqlite" not in answer.text


def test_a_clean_stop_leaves_the_write_ahead_log_empty(served, tmp_path):
    """On the main of issue 37 the conversations' connection stayed open at shutdown and the -wal file
    kept the turns' pages."""
    app, _, server = served
    wal = tmp_path / "memory.sqlite-wal"
    assert httpx.post(server.url + "/api/chat", json={"message": QUESTION}, timeout=30).status_code == 200
    assert wal.stat().st_size > 0
    server.__exit__(None, None, None)  # uvicorn stops: the lifespan's shutdown runs
    assert not server.thread.is_alive()
    assert not wal.exists() or wal.stat().st_size == 0


# ----- evaluations ------------------------------------------------------------------------------------


@pytest.fixture
def slow_eval(tmp_path, chroma, monkeypatch):
    """The card API over loopback with a split of 600 queries that each take 10 ms to route."""
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", TOKEN)
    folder = tmp_path / "demo"
    folder.mkdir()
    cards = [{"name": "weather_now", "purpose": "지금 날씨를 알려준다", "when_to_use": ["오늘 날씨 어때", "지금 비 와?", "바람 불어?"]},
             {"name": "bus_arrival", "purpose": "버스 도착 시간을 알려준다", "when_to_use": ["143번 버스 언제 와", "막차 끊겼어?", "몇 분 남았어"]}]
    (folder / "demo.yaml").write_text(yaml.safe_dump({"module": "demo", "cards": cards}, allow_unicode=True), encoding="utf-8")
    store = CardStore(folder, tmp_path / "store" / "demo.json")
    router = build_router(RouterConfig(embedder=HashEmbedder(), dev=None), store.catalog(), chroma, progress=False,
                          no_call="none")
    routed = []  # (time its batch started, query)
    fast = router.route_many

    def slow(queries):
        started = time.monotonic()
        time.sleep(0.01 * len(queries))
        routed.extend((started, q) for q in queries)
        return fast(queries)

    router.route_many = slow
    queries = tmp_path / "queries"
    queries.mkdir()
    (queries / "tune.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "query": f"{i}번 버스 언제 와", "expected_tools": ["bus_arrival"]},
                                                           ensure_ascii=False) + "\n" for i in range(600)), encoding="utf-8")
    ops = CardOps(router, store, audit_path=tmp_path / "audit.jsonl", queries_dir=queries)
    api = FastAPI()
    api.include_router(card_routes(lambda: ops))
    with ThreadServer(api) as server:
        yield ops, routed, server.url


def test_evaluations_and_proposals_need_the_admin_token_over_http(slow_eval, monkeypatch):
    """On the main of issue 37 /api/eval ran for anyone (200 after routing the split)."""
    ops, routed, url = slow_eval
    with httpx.Client(base_url=url, timeout=30) as client:
        for path in ("/api/eval", "/api/proposals"):
            assert client.post(path, json={"split": "tune"}).status_code == 401, path
            assert client.post(path, json={"split": "tune"}, headers={"Authorization": "Bearer wrong"}).status_code == 401
        monkeypatch.delenv("TOOLROUTE_ADMIN_TOKEN")
        assert client.post("/api/eval", json={"split": "tune"}, headers=AUTH).status_code == 403
    assert routed == []  # nothing was routed


def test_an_evaluation_s_input_is_bounded_over_http(slow_eval, monkeypatch):
    """A pending edit of 5,000 characters (under the body limit) and a split over the query limit are
    413 naming what is over; on the main of issue 37 both were routed."""
    ops, routed, url = slow_eval
    edit = {"tool": "bus_arrival", "changes": {"+when_to_use": [f"{i}번 막차 시간 " * 50 for i in range(10)]}}
    with httpx.Client(base_url=url, timeout=60, headers=AUTH) as client:
        refused = client.post("/api/eval", json={"split": "tune", "edit": edit})
        assert refused.status_code == 413
        assert refused.json()["detail"].startswith("edit.changes.+when_to_use: the pending edit reaches ")
        assert refused.json()["detail"].endswith("the limit is 4,000 (TOOLROUTE_MAX_EDIT_CHARS)")
        monkeypatch.setenv("TOOLROUTE_MAX_EVAL_QUERIES", "500")
        refused = client.post("/api/eval", json={"split": "tune"})
        assert refused.status_code == 413 and refused.json()["detail"] == (
            "split 'tune' has 600 queries; an evaluation routes at most 500 (TOOLROUTE_MAX_EVAL_QUERIES)")
    assert routed == [] and not ops.eval_lock.locked()


def test_an_evaluation_whose_client_leaves_stops_and_frees_the_lock(slow_eval):
    """On the main of issue 37 an evaluation routed its whole split after its client had gone (600
    queries here: 6 s), holding the evaluation lock."""
    ops, routed, url = slow_eval
    with httpx.Client(base_url=url, timeout=0.5) as client:  # 600 queries take 6 s: the client leaves at 0.5 s
        with pytest.raises(httpx.ReadTimeout):
            client.post("/api/eval", json={"split": "tune", "k": 3}, headers=AUTH)
    left = time.monotonic()
    while ops.eval_lock.locked() and time.monotonic() - left < 1.5:
        time.sleep(0.02)
    assert not ops.eval_lock.locked(), "the evaluation still runs after its client left"
    stopped = len(routed)
    time.sleep(0.3)
    assert len(routed) == stopped < 300  # nothing routed after the stop; most of the split never was
    with httpx.Client(base_url=url, timeout=30) as client:  # the next evaluation runs (the lock is free)
        done = client.post("/api/eval", json={"split": "tune", "k": 3}, headers=AUTH)
    assert done.status_code == 200 and done.json()["n"] == 600


def test_an_evaluation_gives_way_to_running_chat_turns(slow_eval):
    ops, routed, url = slow_eval
    turns = threading.Event()
    turns.set()
    ops.busy = lambda: int(turns.is_set())  # a chat turn is running
    ops.eval_max_wait = 30.0
    threading.Timer(1.0, turns.clear).start()  # ... for one second
    started = time.monotonic()
    with httpx.Client(base_url=url, timeout=60) as client:
        done = client.post("/api/eval", json={"split": "tune", "k": 3}, headers=AUTH)
    assert done.status_code == 200 and len(routed) == 600
    assert routed[0][0] - started >= 0.9  # no query was routed while the chat turn ran

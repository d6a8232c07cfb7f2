"""LLM faults fail fast and say where (issue 20, item 7): tight timeouts, retries only on 429/5xx."""

import http.server
import json
import threading
import time

import pytest

from conftest import LOOPBACK_ONLY
from toolroute.llm import chat_model

pytestmark = LOOPBACK_ONLY


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def _serve(handler):
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def _handler(behaviour, hits):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length", 0)))
            hits.append(time.monotonic())
            status, body, delay = behaviour(len(hits))
            time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(json.dumps(body).encode())
            except (BrokenPipeError, ConnectionResetError):
                pass
    return Handler


OK = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
      "choices": [{"index": 0, "message": {"role": "assistant", "content": "네"}, "finish_reason": "stop"}]}


def test_a_hung_endpoint_fails_after_one_read_timeout_not_two(monkeypatch):
    hits = []
    server, url = _serve(_handler(lambda n: (200, OK, 3.0), hits))
    monkeypatch.setenv("TOOLROUTE_LLM_READ_TIMEOUT", "0.5")
    start = time.monotonic()
    with pytest.raises(Exception, match="(?i)time"):
        chat_model(base_url=url, model="m").invoke("안녕")
    assert time.monotonic() - start < 2.5 and len(hits) == 1  # no retry of a timeout
    server.shutdown()


def test_a_busy_answer_is_retried_once_then_succeeds(monkeypatch):
    hits = []
    server, url = _serve(_handler(lambda n: (503, {"error": "busy"}, 0) if n == 1 else (200, OK, 0), hits))
    assert chat_model(base_url=url, model="m").invoke("안녕").content == "네" and len(hits) == 2
    server.shutdown()


def test_a_client_error_is_not_retried(monkeypatch):
    hits = []
    server, url = _serve(_handler(lambda n: (400, {"error": {"message": "bad"}}, 0), hits))
    with pytest.raises(Exception):
        chat_model(base_url=url, model="m").invoke("안녕")
    assert len(hits) == 1
    server.shutdown()


def test_a_dead_endpoint_is_named_in_the_turns_error(monkeypatch):
    from toolroute.agent.graph import AgentConfig, build_agent
    from toolroute.agent.pack import DomainPack

    monkeypatch.setenv("TOOLROUTE_LLM_CONNECT_TIMEOUT", "1")
    url = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    pack = DomainPack("demo", [], "도우미입니다.", catalog_dir=None, domain_examples=["날씨"])
    agent = build_agent(pack, chat_model(base_url=url, model="m"), config=AgentConfig(use_router=False, rewrite_with_llm=False))
    state = agent.ask("안녕하세요")
    assert url in state["error"] and state["answer"].startswith("죄송합니다")

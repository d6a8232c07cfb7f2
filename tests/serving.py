"""Helpers for the serving tests: servers on free loopback ports, a test agent, an SSE reader."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from toolroute.config import toolcards_dir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThreadServer:
    """An ASGI app served by uvicorn in a thread of the test process, on 127.0.0.1."""

    def __init__(self, app: Any, port: int | None = None):
        import uvicorn

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "ThreadServer":
        self.thread.start()
        deadline = time.time() + 30
        while not self.server.started:
            if time.time() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


class ScriptedProcess:
    """`python -m toolroute.serve.scripted` as a child process (so that a test can kill it)."""

    def __init__(self, latency: float = 0.05, busy_every: int = 0):
        self.latency = latency
        self.busy_every = busy_every
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.started = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> "ScriptedProcess":
        self.port = free_port()
        src = Path(__file__).resolve().parents[1] / "src"
        self.process = subprocess.Popen([sys.executable, "-m", "toolroute.serve.scripted", "--port", str(self.port),
                                         "--latency", str(self.latency), "--busy-every", str(self.busy_every)],
                                        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"})
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if httpx.get(f"{self.base_url}/models", timeout=1).status_code == 200:
                    self.started += 1
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        raise RuntimeError("the scripted endpoint did not start")

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()
            self.process.wait(timeout=10)


def serving_agent(llm: Any, memory: Path, pack: Any = None, domain: str = "insurance"):
    """A domain's agent (insurance by default) with a BM25 router (no embedder: fast), no L2 gate, SQLite memory."""
    from toolroute.agent import build_agent, load_pack, sqlite_checkpointer
    from toolroute.cards import load_toolcards
    from toolroute.routing import RouterConfig, build_router

    pack = pack or load_pack(domain)
    catalog = load_toolcards(toolcards_dir(domain), pack.tool_names)
    router = build_router(RouterConfig(arm="bm25", catalog=str(toolcards_dir(domain))), catalog, progress=False,
                          no_call="none")
    return build_agent(pack, llm, router, None, None, sqlite_checkpointer(memory))


def openai_model(base_url: str):
    from toolroute.llm import chat_model

    return chat_model(base_url=base_url, model="scripted")


def sse_frames(client: httpx.Client, url: str, body: dict[str, Any], timeout: float = 60) -> tuple[int, list[tuple[str, Any]]]:
    """POST and read the SSE stream with httpx-sse: (status, [(event, data)])."""
    from httpx_sse import connect_sse

    frames: list[tuple[str, Any]] = []
    with connect_sse(client, "POST", url, json=body, timeout=timeout) as source:
        if source.response.status_code != 200:
            source.response.read()
            return source.response.status_code, []
        for sse in source.iter_sse():
            frames.append((sse.event, json.loads(sse.data)))
    return 200, frames

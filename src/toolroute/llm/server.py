"""The embedded default LLM, parent side: start, health-check and stop the local server process.

`LocalLLMServer` starts `python -m toolroute.llm.serve` as a child process (so a crash of the
model cannot take the notebook down), waits until `/v1/models` answers, and stops it on exit.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import toolroute
from toolroute.llm.gguf import ModelUnavailable, ensure_model

DEFAULT_CTX = 8192  # tokens: 54 tool schemas never go in, the top-k few do


def server_env(parent: dict[str, str] | None = None) -> dict[str, str]:
    """The LLM child's environment: without the OpenMP defaults toolroute set for the embedder
    (llama.cpp's threads should spin between its own steps), and told not to set them again."""
    env = dict(os.environ if parent is None else parent)
    for key, value in toolroute.OMP_APPLIED.items():
        if env.get(key) == value:
            env.pop(key)
    env["TOOLROUTE_OMP_DEFAULTS"] = "0"
    return env


class LLMUnavailable(RuntimeError):
    """The embedded LLM cannot run here; the message says what is missing and what to do instead."""


def runtime_problem() -> str | None:
    """Why the embedded server cannot start (missing build), or None when it can."""
    try:
        import llama_cpp  # noqa: F401
        import llama_cpp.server.app  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        return (f"llama-cpp-python[server] is not importable ({exc}). It is in requirements.lock and builds "
                "from source with gcc and cmake in about 10 minutes: run `make setup`. Or set "
                "TOOLROUTE_LLM_BASE_URL to an OpenAI-compatible server.")
    return None


# --- the parent side ----------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(base_url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


class LocalLLMServer:
    """A child process serving the GGUF on 127.0.0.1; use as a context manager or call start/stop."""

    def __init__(self, model_path: str | Path | None = None, port: int | None = None, n_ctx: int = DEFAULT_CTX,
                 alias: str = "local", log_path: str | Path | None = None, start_timeout: float = 180.0):
        self.model_path = Path(model_path) if model_path else None
        self.port = port
        self.n_ctx = n_ctx
        self.alias = alias
        self.log_path = Path(log_path) if log_path else None
        self.start_timeout = start_timeout
        self.process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "LocalLLMServer":
        problem = runtime_problem()
        if problem:
            raise LLMUnavailable(problem)
        if self.model_path is None:
            try:
                self.model_path = ensure_model()
            except ModelUnavailable as exc:
                raise LLMUnavailable(str(exc)) from exc
        if not self.model_path.is_file():
            raise LLMUnavailable(f"model file {self.model_path} does not exist")
        self.port = self.port or free_port()
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        cmd = [sys.executable, "-m", "toolroute.llm.serve", "--model", str(self.model_path), "--port", str(self.port),
               "--n-ctx", str(self.n_ctx), "--alias", self.alias]
        self.process = subprocess.Popen(cmd, stdout=log, stderr=log, env=server_env())
        atexit.register(self.stop)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                where = f" (log: {self.log_path})" if self.log_path else ""
                raise LLMUnavailable(f"the embedded LLM server exited with code {self.process.returncode}{where}")
            if healthy(self.base_url, timeout=1.0):
                return self
            time.sleep(0.5)
        self.stop()
        raise LLMUnavailable(f"the embedded LLM server did not answer on {self.base_url} within {self.start_timeout:.0f} s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process = None

    def __enter__(self) -> "LocalLLMServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


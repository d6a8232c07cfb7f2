"""Every chat model is `langchain_openai.ChatOpenAI`: a configured endpoint, or the embedded default.

With `TOOLROUTE_LLM_BASE_URL` set (plus `TOOLROUTE_LLM_MODEL`, `TOOLROUTE_LLM_API_KEY`), the model talks
to that OpenAI-compatible server (OpenRouter, vLLM, Ollama …). Unset, the project serves its own
model: the Qwen2.5 1.5B GGUF from PyPI on a llama-cpp-python server at 127.0.0.1, started on first
use and stopped at exit. Temperature 0 and a fixed seed by default, so runs repeat.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import httpx

from toolroute.config import llm_endpoint, llm_limits
from toolroute.llm.retry import AsyncRetryOnBusy, RetryOnBusy
from toolroute.llm.server import LLMUnavailable, LocalLLMServer
from toolroute.llm.gguf import QWEN_1_5B

__all__ = ["LLMConfig", "LLMUnavailable", "chat_model", "llm_config", "shutdown_local_server"]

DEFAULT_SEED = 7
_lock = threading.Lock()
_local: LocalLLMServer | None = None


@dataclass(frozen=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str
    embedded: bool

    @property
    def identity(self) -> str:
        """What the answers depend on, stable across restarts (the embedded server's port is not)."""
        if self.embedded:
            return f"embedded:{QWEN_1_5B.name}:{QWEN_1_5B.sha256[:12]}"
        return f"{self.base_url}|{self.model}"


def _local_server() -> LocalLLMServer:
    global _local
    with _lock:
        if _local is None or _local.process is None or _local.process.poll() is not None:
            _local = LocalLLMServer().start()
        return _local


def llm_config(start: bool = True, base_url: str = "", model: str = "", api_key: str = "") -> LLMConfig:
    """Where chat requests go: `base_url` or the configured endpoint, else the embedded server (started if `start`).
    `api_key` (when given) replaces the configured key for that endpoint."""
    endpoint = llm_endpoint(base_url, model)
    if endpoint is not None:
        return LLMConfig(base_url=endpoint.base_url, model=endpoint.model, api_key=api_key or endpoint.api_key,
                         embedded=False)
    if not start:
        return LLMConfig(base_url="", model="local", api_key="local", embedded=True)
    server = _local_server()
    return LLMConfig(base_url=server.base_url, model=server.alias, api_key="local", embedded=True)


def chat_model(temperature: float = 0.0, seed: int | None = DEFAULT_SEED, max_tokens: int = 512,
               base_url: str = "", model: str = "", api_key: str = "", retries: int | None = None, **kwargs: Any):
    """A `ChatOpenAI` on `base_url`, the configured or the embedded LLM (deterministic by default).

    Timeouts and retries come from the settings (10 s to connect, 120 s to read, one retry, and only
    on 429 and 5xx answers: a hung server is not waited for twice); `retries` replaces the setting
    (a rate-limited endpoint run by several workers at once needs more than one)."""
    from langchain_openai import ChatOpenAI  # heavy (~1 s): only when a chat model is made

    config = llm_config(base_url=base_url, model=model, api_key=api_key)
    limits = llm_limits()
    retries = limits.retries if retries is None else retries
    timeout = httpx.Timeout(limits.read_timeout, connect=limits.connect_timeout)
    return ChatOpenAI(base_url=config.base_url, api_key=config.api_key, model=config.model, temperature=temperature,
                      seed=seed, max_tokens=max_tokens, timeout=timeout, max_retries=0,
                      http_client=httpx.Client(transport=RetryOnBusy(retries), timeout=timeout),
                      http_async_client=httpx.AsyncClient(transport=AsyncRetryOnBusy(retries), timeout=timeout),
                      **kwargs)


def shutdown_local_server() -> None:
    global _local
    with _lock:
        if _local is not None:
            _local.stop()
            _local = None

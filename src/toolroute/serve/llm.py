"""Where the served agent's LLM lives, kept reachable across turns.

- a model given in-process (tests, notebooks): used as is;
- the configured endpoint (`TOOLROUTE_LLM_BASE_URL`): one `ChatOpenAI` on it;
- the embedded model: a child process started on first use (`toolroute.llm`); when it has died (killed,
  crashed mid-stream), the next turn starts a new child and the agent gets a model on its new port.

When no live server can be had, `model()` raises `LLMDown`, whose text names no URL, port or model
file (clients may see it); the cause is logged under the error id it carries.
"""

from __future__ import annotations

import time
from typing import Any

from toolroute.config import llm_endpoint
from toolroute.serve.errors import logged, with_id


class LLMDown(RuntimeError):
    """No LLM server answers (the details, which name its address, are in the log under the error id)."""


class LLMSupervisor:
    """Gives the agent a chat model whose server is alive; `answering()` for /readyz."""

    def __init__(self, llm: Any = None):
        self._fixed = llm
        self._key: tuple[str, str] | None = None
        self._model: Any = None
        self._checked: tuple[float, bool] = (0.0, False)
        self.restarts = 0

    @property
    def embedded(self) -> bool:
        return self._fixed is None and llm_endpoint() is None

    def endpoint(self) -> tuple[str, str]:
        """(base_url, model name) of a live server: the configured one, or the embedded child (started
        or restarted here when it is not running)."""
        from toolroute.llm import llm_config  # the LLM client and server are loaded when a turn needs them

        config = llm_config(start=True)
        return config.base_url, config.model

    def model(self) -> Any:
        """The chat model for the next turn (a new one when the server moved to a new address)."""
        if self._fixed is not None:
            return self._fixed
        try:
            key = self.endpoint()
        except Exception as exc:  # noqa: BLE001 - its text names the endpoint's URL or the model's files
            raise LLMDown(with_id("the LLM server does not answer", logged("no LLM server answers", exc))) from None
        if key != self._key:
            from toolroute.llm import chat_model  # the LLM client and server are loaded when a turn needs them

            if self._key is not None:
                self.restarts += 1
            self._model, self._key = chat_model(base_url=key[0], model=key[1]), key
        return self._model

    def base_url(self) -> str | None:
        return None if self._fixed is not None or self._key is None else self._key[0]

    def answering(self, max_age: float = 5.0) -> bool:
        """Whether the LLM server answers (`GET /models`), cached for `max_age` seconds."""
        if self._fixed is not None:
            return True
        at, ok = self._checked
        if time.monotonic() - at < max_age:
            return ok
        from toolroute.llm.server import healthy  # the LLM client and server are loaded when a turn needs them

        url = self.base_url()
        ok = bool(url) and healthy(url, timeout=2.0)
        self._checked = (time.monotonic(), ok)
        return ok

    def close(self) -> None:
        """Stop the embedded child this process started (a configured endpoint is left alone)."""
        if self.embedded:
            from toolroute.llm import shutdown_local_server  # the LLM client and server are loaded when a turn needs them

            shutdown_local_server()

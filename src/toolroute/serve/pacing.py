"""Evaluations that give way to chat turns and stop when their client leaves.

A served evaluation (`/api/eval`, `/api/proposals`) routes a whole split on the cores the chat turns
need. It runs in a worker thread over a `PacedRouter`: the split is routed in small batches, and
before each batch the `Pace` raises `EvaluationCancelled` once the request is cancelled (the client
left) and waits while chat turns are running (up to `max_wait` seconds per batch, so that an
evaluation still ends under a steady chat load). The proposals' LLM calls wait the same way.

Lowering the thread's OS priority would not be enough: the query embeddings of every thread run on
the encoder's one owner thread (`toolroute.embeddings`), so the evaluation's encoding work would not
run at the lower priority; waiting between batches does.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

BATCH = 8  # queries routed between two checks (a batch takes tens of milliseconds)


class EvaluationCancelled(Exception):
    """The evaluation's request was cancelled (its client left)."""


@dataclass
class Pace:
    """Checked between batches: stop when `cancel` is set, wait while `busy()` (chat turns running)."""

    cancel: threading.Event = field(default_factory=threading.Event)
    busy: Callable[[], int] | None = None
    max_wait: float = 1.0  # seconds one batch waits for the chat turns at most
    step: float = 0.02
    batches: int = 0
    waited: float = 0.0

    def __call__(self) -> None:
        if self.cancel.is_set():
            raise EvaluationCancelled()
        started = time.monotonic()
        while self.busy is not None and self.busy() and time.monotonic() - started < self.max_wait:
            if self.cancel.wait(self.step):
                raise EvaluationCancelled()
        self.waited += time.monotonic() - started
        self.batches += 1


class PacedRouter:
    """A router whose `route_many` goes in batches of `BATCH` with the pace checked before each; a
    copy made with `over` is paced too. Everything else is the wrapped router's."""

    def __init__(self, router: Any, pace: Pace):
        self._router, self._pace = router, pace

    def __getattr__(self, name: str) -> Any:
        return getattr(self._router, name)

    def route_many(self, queries: Sequence[str]) -> list:
        results: list = []
        for i in range(0, len(queries), BATCH):
            self._pace()
            results.extend(self._router.route_many(list(queries[i:i + BATCH])))
        return results

    def route(self, query: str) -> Any:
        return self.route_many([query])[0]

    def over(self, catalog: Any) -> "PacedRouter":
        self._pace()
        copy = self._router.over(catalog)  # builds the copy's index (bounded by the edit's size limit)
        self._pace()
        return PacedRouter(copy, self._pace)


class PacedLLM:
    """A chat model whose `invoke` waits for the pace first."""

    def __init__(self, llm: Any, pace: Pace):
        self._llm, self._pace = llm, pace

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        self._pace()
        return self._llm.invoke(*args, **kwargs)

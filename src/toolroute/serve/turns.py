"""Running agent turns for the server: a bounded number at once, each in its own worker thread,
its events handed to the event loop, stopped when its client leaves or its time is up.

The agent's graph is synchronous (SQLite checkpointer, sync tools), so a turn runs in a thread and
its events cross to the event loop through a queue. A slot is held until the thread has finished,
not until the client has gone: a turn whose client left still counts until its LLM call has stopped
(at the next token, see `toolroute.agent.events.CancelOnToken`), so the limit is real work.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

from toolroute.agent.events import public_error, turn_events
from toolroute.serve.llm import LLMDown
from toolroute.serve.logs import LOGGER, turn_line


class TurnRefused(Exception):
    """No slot (429) or the thread already has a turn running (409)."""

    def __init__(self, status: int, detail: str, retry_after: int | None = None):
        super().__init__(detail)
        self.status, self.detail, self.retry_after = status, detail, retry_after


@dataclass
class TurnSlots:
    """At most `limit` turns at once, and one at a time per thread."""

    limit: int
    _active: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _mean_seconds: float = 2.0
    refused: int = 0
    finished: int = 0

    @property
    def active(self) -> int:
        return len(self._active)

    def retry_after(self) -> int:
        """Seconds until a slot is likely free: the mean turn time, between 1 and 30."""
        return max(1, min(30, math.ceil(self._mean_seconds)))

    def acquire(self, thread_id: str) -> None:
        with self._lock:
            if thread_id in self._active:
                raise TurnRefused(409, f"thread {thread_id} has a turn running; wait for its done event")
            if len(self._active) >= self.limit:
                self.refused += 1
                raise TurnRefused(429, f"{self.limit} turns are running; retry later", self.retry_after())
            self._active.add(thread_id)

    def release(self, thread_id: str, seconds: float) -> None:
        with self._lock:
            self._active.discard(thread_id)
            self.finished += 1
            self._mean_seconds = 0.8 * self._mean_seconds + 0.2 * seconds


_END = object()


async def run_turn(agent: Any, question: str, thread_id: str, slots: TurnSlots, timeout: float,
                   before: Callable[[], None] | None = None,
                   after: Callable[[], None] | None = None) -> AsyncIterator[tuple[str, Any]]:
    """(event, data) pairs of one turn whose slot the caller acquired; releases it when the work ends.
    `before` and `after` run on the turn's worker thread, first and once its slot is released.

    Leaving the iteration early (the client disconnected) cancels the turn. At `timeout` the turn is
    stopped and answered with `error` + `done`, even when its LLM call is stuck before any token.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    cancel = threading.Event()
    started = time.monotonic()
    deadline = started + timeout
    summary: dict[str, Any] = {"route": None, "tools": 0, "failed": None}

    def post(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is closed (server shutting down): nobody is listening
            pass

    def work() -> None:
        try:
            if before is not None:
                before()
            for item in turn_events(agent, question, thread_id, cancel, deadline):
                post(item)
        except Exception as exc:  # noqa: BLE001 - reported to the client as an error frame (kind and id only)
            detail = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, LLMDown):  # no live LLM server: an LLM failure, as the graph marks its own
                detail += " (LLM at the supervised server)"
            post(("__failed__", detail))
        finally:
            seconds = time.monotonic() - started
            slots.release(thread_id, seconds)
            if after is not None:
                try:
                    after()
                except Exception as exc:  # noqa: BLE001 - a hook must not lose the turn's end
                    LOGGER.warning("after-turn hook failed: %s", exc)
            LOGGER.info("turn %s", turn_line(thread=thread_id, route=summary["route"], tool_calls=summary["tools"],
                                              failed=summary["failed"], cancelled=cancel.is_set(),
                                              seconds=round(seconds, 3)))
            post(_END)

    threading.Thread(target=work, name=f"turn-{thread_id[:12]}", daemon=True).start()
    done = False
    try:
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), timeout=max(deadline - time.monotonic(), 0.0) + 2.0)
            except asyncio.TimeoutError:
                cancel.set()
                if not done:
                    yield "error", public_error(f"turn timed out after {timeout:g} s (TOOLROUTE_TURN_TIMEOUT)")
                    yield "done", {"failed": True, "replaced": True, "answer": "", "thread_id": thread_id}
                return
            if item is _END:
                if not done:  # the worker ended without a done frame
                    yield "error", public_error("turn ended without an answer")
                    yield "done", {"failed": True, "replaced": True, "answer": "", "thread_id": thread_id}
                return
            event, data = item
            if event == "__failed__":
                summary["failed"] = True
                yield "error", public_error(data)
                yield "done", {"failed": True, "replaced": True, "answer": "", "thread_id": thread_id}
                done = True
                continue
            if event == "route":
                summary["route"] = data.get("route")
            elif event == "tool_call":
                summary["tools"] += 1
            elif event == "done":
                summary["failed"] = data.get("failed")
                done = True
            yield event, data
    finally:
        cancel.set()  # finished, or the client left: stop the work at its next token / node

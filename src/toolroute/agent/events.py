"""The event stream of one agent turn as Server-Sent Events, in seed 000's protocol:

    route → tool_call (0…N, in order) → token* → sources → [error] → done

| event | data |
|---|---|
| `route` | `{"route": "tools" \| "no_call" \| "blocked" \| "error", "tools": [...], "no_call", "blocked", "thread_id"}`: what happened before any LLM call |
| `tool_call` | `{"tool_called": true, "tool_name", "tool_result", "tool_output", "step", "tool_args", "status"}`, once per call, in order (`agent.step_summary`) |
| `token` | `{"token": "..."}`: the answer **after** the output guardrail (see `StreamGuard`) |
| `sources` | a bare JSON list |
| `error` | `{"error": "..."}` for a failed turn, always followed by `done` |
| `done` | `{}` plus `answer`, `failed`, `replaced`, `thread_id`, counters, token usage and `kg_data` |

Built from LangGraph's own streaming (`stream_mode=["updates", "messages"]`). The concatenated
`token` payloads equal the guarded answer (`done.answer`): tokens go through `StreamGuard`, which
only lets out text that `guard_output` keeps whatever comes next. When the model's text is thrown
away after some of it went out (a reply that turned into tool markup, a dead LLM), `done.replaced`
is true and `done.answer` is the text to keep.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
import uuid
from typing import Any, Callable, Iterator

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage

from toolroute.agent.graph import LLMStreamCut, looks_like_markup
from toolroute.agent.guardrails import guard_output
from toolroute.agent.output_policy import guard_tool_call, known_values, mask_known
from toolroute.agent.pack import DomainPack
from toolroute.agent.step_summary import step_status, summarize

LOGGER = logging.getLogger("toolroute.agent")

EVENTS = ("route", "token", "tool_call", "error", "sources", "done")

# Hold-back window (characters of guarded text kept back from the end): longer than any single
# pattern the guardrail masks or removes that may contain spaces (a resident number "900101 - 1234567",
# an account "계좌번호 : 11012345678901", a card "1234 5678 9012 3456", a product code "(B002-R01)").
# Patterns without spaces (e-mails, tool names of any length) are never cut: see `StreamGuard`.
HOLD_BACK = 48
_SENTENCE_END = ".!?。\n"
_MARKUP_HEADS = ("<tool_call>", "<tools>", "```json", "{", "<think>")


def sse(event: str, data: Any) -> str:
    """One SSE frame."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def parse_sse(text: str) -> list[tuple[str, Any]]:
    """Frames back into (event, data) pairs; the inverse of `sse`, for clients and tests."""
    frames = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event, data = "message", []
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[len("event:"):].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:"):].removeprefix(" "))
        if event == "message" and not data:
            continue  # a comment or a keep-alive ping
        frames.append((event, json.loads("\n".join(data)) if data else {}))
    return frames


class StreamGuard:
    """The output guardrail applied while the answer streams, with a hold-back window.

    The model's text so far is run through `guard_output` (without the disclaimer); what may go out
    is the guarded text up to a cut that no later character can change:
    - at the end of a complete sentence (the guardrail replaces whole sentences holding a banned phrase),
    - followed by whitespace (a pattern without spaces, such as an e-mail or a tool name, is never cut),
    - at least `hold_back` characters before the end (a pattern with spaces is never cut),
    - and only while the guarded text still starts with what went out already.
    `finish(answer)` sends the rest of the final answer (the graph's own guarded answer) when what
    went out is its prefix, so the concatenated tokens equal it exactly.

    Text of a reply that may be tool-call markup is held, and a reply that turns into a tool call is
    dropped (its text was held back one chunk: the embedded server sends a call's leftover text and
    the call in consecutive chunks).
    """

    def __init__(self, pack: DomainPack, hold_back: int = HOLD_BACK):
        self.pack = pack
        self.hold_back = hold_back
        self.emitted = ""
        self._message: Any = None
        self._buffer = ""
        self._pending = ""
        self._calls = False
        self._checked = 0
        self.known: dict[str, str] = {}  # this turn's tool ids and names, masked as the answer masks them

    def _stable(self) -> str:
        """What of the current reply's guarded text may go out now (beyond `emitted`)."""
        text = self._buffer
        head = text.lstrip()
        if len(head) < 16 and any(m.startswith(head[: len(m)]) or head.startswith(m) for m in _MARKUP_HEADS):
            return ""
        if looks_like_markup(text) or "<tool" in text:
            return ""
        guarded = guard_output(mask_known(text, self.known), self.pack, with_disclaimer=False).text
        if not guarded.startswith(self.emitted):
            return ""
        limit = len(guarded) - self.hold_back
        cut = 0
        for index in range(limit - 1, len(self.emitted) - 1, -1):
            if guarded[index] in _SENTENCE_END and guarded[index + 1].isspace():
                cut = index + 1
                break
        return guarded[len(self.emitted): cut] if cut > len(self.emitted) else ""

    def feed(self, message_id: Any, text: str, tool_calls: bool = False) -> str:
        """One streamed chunk of the reply `message_id`; returns the text that may go out now."""
        if message_id != self._message:
            self._message, self._buffer, self._pending, self._calls, self._checked = message_id, "", "", False, 0
        out = ""
        if tool_calls:
            self._calls, self._pending = True, ""
        elif self._pending and not self._calls:
            out, self._pending = self._pending, ""
            self.emitted += out
        if self._calls:
            return out
        self._buffer += text
        # recompute only when a sentence may have ended or enough text arrived since the last look
        if any(c in text for c in _SENTENCE_END) or len(self._buffer) - self._checked >= 24:
            self._checked = len(self._buffer)
            self._pending = self._stable()
        return out

    def finish(self, answer: str) -> tuple[str, bool]:
        """The rest of `answer` to send, and whether the text that went out is not its prefix."""
        if answer.startswith(self.emitted):
            rest = answer[len(self.emitted):]
            self.emitted = answer
            return rest, False
        return "", True


class TurnCancelled(Exception):
    """The client went away or the turn ran out of time: the LLM call is stopped at its next token."""


class CancelOnToken(BaseCallbackHandler):
    """Raises inside the LLM call (at its start and at each streamed token) once `cancel` is set, so a
    turn whose client left stops generating instead of running on unseen."""

    raise_error = True

    def __init__(self, cancel: threading.Event, deadline: float | None = None):
        self.cancel = cancel
        self.deadline = deadline

    def _check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.cancel.set()
        if self.cancel.is_set():
            raise TurnCancelled("turn cancelled")

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self._check()

    def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
        self._check()

    def on_llm_new_token(self, *args: Any, **kwargs: Any) -> None:
        self._check()


# What a client is told of a failed turn: the kind of failure, never the exception, a path or a URL
# (those go to the log under the error id the client gets).
PUBLIC_ERRORS = {
    "llm": "the language model did not answer",
    "stream_cut": "the language model's reply was cut off",
    "router": "the tool search failed",
    "timeout": "turn timed out",
    "cancelled": "turn cancelled",
    "internal": "the turn failed",
}


def error_kind(detail: str) -> str:
    """The kind (a key of PUBLIC_ERRORS) of an internal error text of the graph or the server."""
    if detail.startswith("router:"):
        return "router"
    if detail.startswith(LLMStreamCut.__name__):
        return "stream_cut"
    if "(LLM at " in detail:
        return "llm"
    if detail.startswith("turn timed out"):
        return "timeout"
    if detail.startswith("turn cancelled"):
        return "cancelled"
    return "internal"


def public_error(detail: str) -> dict[str, str]:
    """The `error` event's data for an internal error text: its kind in words and an id; the text
    itself goes to the log under that id."""
    kind = error_kind(detail)
    if kind in ("timeout", "cancelled"):
        return {"error": detail if kind == "timeout" else PUBLIC_ERRORS[kind], "kind": kind}
    error_id = secrets.token_hex(4)
    LOGGER.warning("turn error %s (%s): %s", error_id, kind, detail)
    return {"error": f"{PUBLIC_ERRORS[kind]} (error id {error_id})", "kind": kind, "error_id": error_id}


def _route_frame(update: dict[str, Any], thread_id: str, blocked: bool) -> dict[str, Any]:
    if blocked:
        return {"route": "blocked", "tools": [], "no_call": True, "blocked": update["blocked"], "thread_id": thread_id}
    if update.get("error"):
        return {"route": "error", "tools": [], "no_call": True, "blocked": None, "thread_id": thread_id}
    no_call = bool(update.get("no_call"))
    return {"route": "no_call" if no_call else "tools", "tools": list(update.get("routed") or []), "no_call": no_call,
            "blocked": None, "thread_id": thread_id}


def stream_events(agent: Any, question: str, thread_id: str | None = None, cancel: threading.Event | None = None,
                  deadline: float | None = None, on_event: Callable[[str, Any], None] | None = None,
                  max_tool_steps: int | None = None, top_k: int | None = None) -> Iterator[str]:
    """SSE frames for one turn of `agent` (a `toolroute.agent.graph.Agent`).

    `cancel` (set by the caller when its client goes away) and `deadline` (a `time.monotonic()` value)
    stop the turn: the running LLM call at its next token, the graph before its next node.
    """
    for event, data in turn_events(agent, question, thread_id, cancel, deadline, max_tool_steps, top_k):
        if on_event is not None:
            on_event(event, data)
        yield sse(event, data)


def turn_events(agent: Any, question: str, thread_id: str | None = None, cancel: threading.Event | None = None,
                deadline: float | None = None, max_tool_steps: int | None = None,
                top_k: int | None = None) -> Iterator[tuple[str, Any]]:
    """(event, data) pairs of one turn: what `stream_events` sends, before encoding."""
    thread_id = thread_id or uuid.uuid4().hex
    cancel = cancel or threading.Event()
    config = agent.run_config(thread_id, max_tool_steps, top_k)
    config["callbacks"] = [CancelOnToken(cancel, deadline)]
    guard = StreamGuard(agent.pack)
    routed_sent = False
    tools_sent = 0
    answer: str | None = None
    stopped: str | None = None
    # The turn's end state, merged from the node updates: every field but `messages` is overwritten by
    # the node that sets it (the input guardrail resets them all), so no checkpoint read is needed at
    # the end (reading one deserialises the whole thread, which grows with every turn)
    final: dict[str, Any] = {}
    # durability="exit": the turn is checkpointed once, when it ends (answered, failed or cancelled),
    # not after every node: concurrent turns then share the SQLite writer once per turn, not per node
    stream = agent.graph.stream({"messages": [HumanMessage(question)]}, config, stream_mode=["updates", "messages"],
                                durability="exit")
    try:
        for mode, payload in stream:
            if deadline is not None and time.monotonic() > deadline:
                cancel.set()
            if cancel.is_set():
                stopped = "timeout" if deadline is not None and time.monotonic() > deadline else "cancelled"
                break
            if mode == "messages":
                chunk, meta = payload
                if meta.get("langgraph_node") != "agent":
                    continue
                content = getattr(chunk, "content", "")
                calls = bool(getattr(chunk, "tool_call_chunks", None) or getattr(chunk, "tool_calls", None))
                text = content if isinstance(content, str) else ""
                out = guard.feed(getattr(chunk, "id", None), text, calls)
                if out:
                    yield "token", {"token": out}
                continue
            for node, update in (payload or {}).items():
                if not isinstance(update, dict):
                    continue
                final.update(update)
                if node == "input_guardrail" and update.get("blocked") and not routed_sent:
                    routed_sent = True
                    yield "route", _route_frame(update, thread_id, blocked=True)
                if node == "route" and not routed_sent:
                    routed_sent = True
                    yield "route", _route_frame(update, thread_id, blocked=False)
                if node == "tools":
                    given = f"{final.get('query', '')} {final.get('rewritten', '')}"  # the user's own words stay
                    for entry in update.get("tool_log", [])[tools_sent:]:
                        shown = guard_tool_call(entry, agent.pack, given)  # the model read the raw result; a client never does
                        yield "tool_call", {"tool_called": True, "tool_name": entry["name"],
                                            "tool_result": summarize(shown["result"]), "tool_output": shown["result"],
                                            "step": entry["step"], "tool_args": shown["args"],
                                            "status": step_status(entry["result"], entry["status"])}
                    tools_sent = len(update.get("tool_log", []))
                    guard.known = known_values([part for entry in update.get("tool_log", [])
                                                for part in (entry.get("args"), entry.get("result"))], agent.pack, given)
                if node == "output_guardrail":
                    answer = update.get("answer", "")
    finally:
        stream.close()
    state = final if stopped is None else {}
    error = state.get("error")
    if stopped is not None:
        error = "turn timed out" if stopped == "timeout" else "turn cancelled"
    if not routed_sent:
        yield "route", {"route": "error", "tools": [], "no_call": True, "blocked": None, "thread_id": thread_id}
    replaced = False
    if answer is not None:
        rest, replaced = guard.finish(answer)
        if rest:
            yield "token", {"token": rest}
    else:
        replaced = bool(guard.emitted)
    yield "sources", list(state.get("sources", []))
    if error:
        yield "error", public_error(error)
    yield "done", {"failed": bool(error), "replaced": replaced, "answer": answer if answer is not None else "",
                   "thread_id": thread_id, "tool_steps": state.get("tool_steps", 0), "capped": state.get("capped", False),
                   "loops": state.get("loops", 0), "llm_calls": state.get("llm_calls", 0),
                   "prompt_tokens": state.get("prompt_tokens", 0), "completion_tokens": state.get("completion_tokens", 0),
                   "blocked": state.get("blocked"), "routed": state.get("routed", []), "kg_data": state.get("kg_data") or {}}

"""The event stream of one agent turn as Server-Sent Events, in seed 000's protocol:

    route → token* → tool_call (0…N, in order, with tool_name and tool_result) → sources → done

Built from LangGraph's own streaming (`stream_mode=["updates", "messages"]`): `token` frames are the
model's text as it is generated (with `<think>` blocks filtered out); `done` carries the answer after
the output guardrail, which is the text a client should keep (tokens are the raw draft).
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Iterator

from langchain_core.messages import HumanMessage

from toolroute.agent.guardrails import ThinkFilter

EVENTS = ("route", "token", "tool_call", "error", "sources", "done")


def sse(event: str, data: dict[str, Any]) -> str:
    """One SSE frame."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Frames back into (event, data) pairs; the inverse of `sse`, for clients and tests."""
    frames = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        event, data = "message", []
        for line in block.splitlines():
            if line.startswith("event:"):
                event = line[len("event:"):].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:"):].strip())
        frames.append((event, json.loads("\n".join(data)) if data else {}))
    return frames


def stream_events(agent: Any, question: str, thread_id: str | None = None) -> Iterator[str]:
    """SSE frames for one turn of `agent` (a `toolroute.agent.graph.Agent`)."""
    thread_id = thread_id or uuid.uuid4().hex
    config = agent.run_config(thread_id)
    routed_sent = False
    tools_sent = 0
    think = ThinkFilter()
    streamed = False
    final: dict[str, Any] = {}
    for mode, payload in agent.graph.stream({"messages": [HumanMessage(question)]}, config,
                                            stream_mode=["updates", "messages"]):
        if mode == "messages":
            chunk, meta = payload
            if meta.get("langgraph_node") != "agent":
                continue
            content = getattr(chunk, "content", "")
            if isinstance(content, str) and content:
                text = think.feed(content)
                if text:
                    streamed = True
                    yield sse("token", {"text": text})
            continue
        for node, update in (payload or {}).items():
            if not isinstance(update, dict):
                continue
            if node == "input_guardrail" and update.get("blocked"):
                yield sse("route", {"blocked": update["blocked"], "tools": [], "rewritten": update.get("query")})
                routed_sent = True
            if node == "route" and not routed_sent:
                yield sse("route", {"tools": update["routed"], "no_call": update.get("no_call", False)})
                routed_sent = True
            if node == "tools":
                for entry in update.get("tool_log", [])[tools_sent:]:
                    yield sse("tool_call", {"step": entry["step"], "tool_name": entry["name"],
                                            "tool_args": entry["args"], "tool_result": entry["result"]})
                tools_sent = len(update.get("tool_log", []))
            if node == "output_guardrail":
                final = update
    rest = think.flush()
    if rest:
        yield sse("token", {"text": rest})
    state = agent.graph.get_state(config).values
    answer = final.get("answer", state.get("answer", ""))
    if not streamed and answer:
        yield sse("token", {"text": answer})
    if state.get("error"):
        yield sse("error", {"error": state["error"]})
    yield sse("sources", {"sources": state.get("sources", [])})
    yield sse("done", {"failed": bool(state.get("error")), "answer": answer, "thread_id": thread_id, "tool_steps": state.get("tool_steps", 0),
                       "capped": state.get("capped", False), "loops": state.get("loops", 0),
                       "llm_calls": state.get("llm_calls", 0), "prompt_tokens": state.get("prompt_tokens", 0),
                       "completion_tokens": state.get("completion_tokens", 0), "blocked": state.get("blocked")})

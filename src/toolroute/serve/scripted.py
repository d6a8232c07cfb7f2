"""A scripted OpenAI-compatible chat endpoint: fixed latency, deterministic replies, no model.

For tests, demos and `benchmarks/bench_serve.py`: the served agent talks to it exactly as to a real
server (`/v1/models`, `/v1/chat/completions`, streamed or not, with tool calls). The script:

- with tools bound, each tool of `plan` that is bound and not yet called in this turn is called next
  (with the plan's arguments), one call per reply (`call_unbound`: bound or not);
- otherwise the reply is text: the turn's marker (`[T-…]` in the user's message, so a reply can be
  traced to its thread), then the tool results' summaries, streamed a few characters per chunk;
- a user message containing `[crash]` makes the process exit in the middle of its streamed reply
  (the "LLM killed mid-stream" fault); `[cut]` ends the streamed reply cleanly after half its text,
  with no finish reason and no `[DONE]` (a server stopped gracefully mid-reply, or a proxy that cut it);
  `[slow]` streams the text reply one chunk every `slow_delay` seconds (a turn long enough to stop);
  `[say:KEY]` makes the text reply `says[KEY]` (replies with given content, e.g. a phone number that
  the user's own message could not carry past the input guardrail);
- every reply names the requested model and carries a `system_fingerprint` (as OpenAI's do);
- with `busy_every=n`, every n-th chat request is answered 429 (rate limited, `Retry-After: 0`)
  instead, as a rate-limited provider does; `app.state.stats` counts requests and 429s.

Replies depend only on the request (and never on its timing), so any number of concurrent clients get
the same answers as one: the experiments' concurrency tests run against it.

Run as a process: `python -m toolroute.serve.scripted --port 8100 [--latency 0.2] [--busy-every 3]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import time
import uuid
from typing import Any

MARKER = re.compile(r"\[T-[A-Za-z0-9]+\]")
SAY = re.compile(r"\[say:(\w+)\]")
DEFAULT_PLAN = {
    "premium_estimate": {"product": "실속치매보험", "age": 55, "sex": "여성"},
    "coverage_summary": {"product": "실속치매보험"},
}


def _turn(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The last user message and the tool results after it."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    user = str(messages[last_user].get("content") or "") if last_user >= 0 else ""
    return user, [m for m in messages[last_user + 1:] if m.get("role") == "tool"]


def scripted_reply(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                   plan: dict[str, dict[str, Any]], call_unbound: bool = False,
                   says: dict[str, str] | None = None) -> dict[str, Any]:
    """{"content": text} or {"tool_call": (name, args)} for one request (`call_unbound`: the plan's
    tools are called whether they are bound or not, as a model that names a tool it was not given)."""
    user, results = _turn(messages)
    called = {m.get("name") for m in results}
    called |= {c["function"]["name"] for m in messages if m.get("role") == "assistant" for c in m.get("tool_calls") or []
               if any(r.get("tool_call_id") == c.get("id") for r in results)}
    bound = [t["function"]["name"] for t in tools or []]
    for name, args in plan.items():
        if (name in bound or (call_unbound and bound)) and name not in called and len(results) < len(plan):
            return {"tool_call": (name, args)}
    said = SAY.search(user)
    if said and said.group(1) in (says or {}):
        return {"content": (says or {})[said.group(1)]}
    marker = MARKER.search(user)
    summaries = [str(m.get("content") or "").splitlines()[0] for m in results]
    if not summaries and "[도구 결과]" in user:
        summaries = [line[2:].split(": ", 1)[-1] for line in user.splitlines() if line.startswith("- ")]
    body = " ".join(s.strip() for s in summaries if s.strip()) or "무엇을 도와드릴까요?"
    text = f"{marker.group(0) + ' ' if marker else ''}확인 결과입니다. {body} 더 궁금한 점이 있으면 말씀해 주세요."
    return {"content": text}


def create_scripted_app(latency: float = 0.2, plan: dict[str, dict[str, Any]] | None = None,
                        chunk_chars: int = 6, chunk_delay: float = 0.005, fingerprint: str = "fp_scripted",
                        busy_every: int = 0, call_unbound: bool = False, says: dict[str, str] | None = None,
                        slow_delay: float = 0.5):
    """The endpoint as a Starlette app (answers after `latency` seconds; every `busy_every`-th request 429)."""
    from starlette.applications import Starlette  # a test and benchmark fixture: loaded only when the scripted server starts
    from starlette.requests import Request  # a test and benchmark fixture: loaded only when the scripted server starts
    from starlette.responses import JSONResponse, StreamingResponse  # a test and benchmark fixture: loaded only when the scripted server starts
    from starlette.routing import Route  # a test and benchmark fixture: loaded only when the scripted server starts

    plan = DEFAULT_PLAN if plan is None else plan
    stats = {"requests": 0, "busy": 0}

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "toolroute"}]})

    async def completions(request: Request):
        body = await request.json()
        stats["requests"] += 1
        if busy_every and stats["requests"] % busy_every == 0:
            stats["busy"] += 1
            return JSONResponse({"error": {"message": "Rate limit reached (scripted)", "type": "rate_limit_error"}},
                                status_code=429, headers={"Retry-After": "0"})
        await asyncio.sleep(latency)
        messages = body.get("messages", [])
        reply = scripted_reply(messages, body.get("tools"), plan, call_unbound, says)
        crash, cut = "[crash]" in _turn(messages)[0], "[cut]" in _turn(messages)[0]
        delay = slow_delay if "[slow]" in _turn(messages)[0] else chunk_delay
        cid, created, model = f"chatcmpl-{uuid.uuid4().hex[:12]}", int(time.time()), body.get("model", "scripted")
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        call = None
        if "tool_call" in reply:
            name, args = reply["tool_call"]
            call = {"id": f"call_{uuid.uuid4().hex[:8]}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply.get("content")}
            if call:
                message["tool_calls"] = [call]
            return JSONResponse({"id": cid, "object": "chat.completion", "created": created, "model": model,
                                 "system_fingerprint": fingerprint, "choices": [{"index": 0, "message": message,
                                              "finish_reason": "tool_calls" if call else "stop"}], "usage": usage})

        def chunk(delta: dict[str, Any], finish: str | None = None, with_usage: bool = False) -> str:
            data = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                    "system_fingerprint": fingerprint, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if with_usage:
                data["usage"] = usage
            return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"

        async def frames():
            yield chunk({"role": "assistant", "content": ""})
            if call:
                yield chunk({"tool_calls": [{"index": 0, **call}]})
                yield chunk({}, "tool_calls", with_usage=True)
            else:
                text = reply["content"]
                for i in range(0, len(text), chunk_chars):
                    if crash and i >= len(text) // 2:
                        os._exit(1)  # the fault: the LLM server dies in the middle of its reply
                    if cut and i >= len(text) // 2:
                        return  # the fault: the reply ends here, cleanly, without its last chunk
                    yield chunk({"content": text[i:i + chunk_chars]})
                    await asyncio.sleep(delay)
                yield chunk({}, "stop", with_usage=True)
            yield "data: [DONE]\n\n"

        return StreamingResponse(frames(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/models", models), Route("/v1/chat/completions", completions, methods=["POST"])])
    app.state.stats = stats
    return app


def main(argv: list[str] | None = None) -> None:
    import uvicorn  # a test and benchmark fixture: loaded only when the scripted server starts

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds before each reply")
    parser.add_argument("--busy-every", type=int, default=0, help="answer every n-th chat request 429 (0: never)")
    args = parser.parse_args(argv)
    uvicorn.run(create_scripted_app(args.latency, busy_every=args.busy_every), host=args.host, port=args.port,
                log_level="warning")


if __name__ == "__main__":
    main()

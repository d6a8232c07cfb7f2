"""A llama-cpp-python chat handler that speaks Qwen's own tool-call format and answers in OpenAI's.

Qwen2.5's chat template (inside the GGUF) lists the tools in the system prompt and asks for
`<tool_call>{"name": …, "arguments": …}</tool_call>`. llama-cpp-python's generic function-calling
format picks worse tools with this model, so the server renders the model's own template and parses
its replies here into OpenAI `tool_calls` (`finish_reason="tool_calls"`), which
`langchain_openai.ChatOpenAI.bind_tools` understands. The parsing is pure functions, tested without
a model; `qwen_tools_handler` is registered by `toolroute.llm.server` in the server process.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any, Iterator

HANDLER_NAME = "toolroute-qwen-tools"
STOP = ["<|im_end|>", "<|endoftext|>"]

# The template asks for <tool_call>…</tool_call>; the 1.5B model sometimes wraps the same JSON in the
# <tools>…</tools> tag the template uses to list the tools (seen on a third of the step-limit tasks).
_TAGGED = re.compile(r"<(tool_call|tools)>\s*(.*?)\s*(?:</\1>|$)", re.DOTALL)
_TAGS = ("<tool_call>", "<tools>")
_FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def normalize_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Make OpenAI messages renderable by Qwen's template.

    The template concatenates `content` (None breaks it) and applies `tojson` to tool-call arguments
    (a JSON string would be encoded twice), so content becomes "" and argument strings become dicts.
    """
    out = []
    for message in messages:
        m = dict(message)
        if m.get("content") is None:
            m["content"] = ""
        elif isinstance(m["content"], list):  # OpenAI content parts: keep the text ones
            m["content"] = "".join(p.get("text", "") for p in m["content"] if isinstance(p, dict))
        if m.get("tool_calls"):
            calls = []
            for call in m["tool_calls"]:
                call = json.loads(json.dumps(call))
                fn = call.get("function", {})
                if isinstance(fn.get("arguments"), str):
                    try:
                        fn["arguments"] = json.loads(fn["arguments"] or "{}")
                    except json.JSONDecodeError:
                        fn["arguments"] = {}
                calls.append(call)
            m["tool_calls"] = calls
        out.append(m)
    return out


def _load_call(text: str) -> dict[str, Any] | None:
    """One call object from JSON text; tolerates the `{{…}}` form the template's example shows."""
    text = text.strip()
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group(1).strip()
    candidates = [text]
    if text.startswith("{{") and text.endswith("}}"):
        candidates.append(text[1:-1])
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            return obj
    return None


def parse_tool_calls(text: str, tool_names: set[str]) -> tuple[str, list[dict[str, Any]]]:
    """Split a reply into (remaining text, OpenAI tool_calls). Unknown tool names stay text."""
    calls: list[dict[str, Any]] = []
    tagged = any(tag in text for tag in _TAGS)
    pieces = [body for _, body in _TAGGED.findall(text)] if tagged else [text]
    objects = []
    for piece in pieces:
        obj = _load_call(piece)
        # several calls in one tag, one JSON object per line
        objects += [obj] if obj is not None else [o for o in map(_load_call, piece.splitlines()) if o is not None]
    for obj in objects:
        if obj["name"] not in tool_names:
            continue
        args = obj.get("arguments", obj.get("parameters", {}))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = {}
        if not isinstance(args, dict):
            args = {}
        calls.append({
            "id": f"call_{uuid.uuid4().hex[:12]}",
            "type": "function",
            "function": {"name": obj["name"], "arguments": json.dumps(args, ensure_ascii=False)},
        })
    if not calls:
        return text, []
    remaining = _TAGGED.sub("", text).strip() if tagged else ""
    return remaining, calls


def _tool_names(tools: list[dict[str, Any]] | None) -> set[str]:
    return {t["function"]["name"] for t in tools or [] if t.get("type") == "function"}


def _response(model: str, text: str, calls: list[dict], usage: dict[str, int], finish: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text if (text or not calls) else None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
        "model": model, "choices": [{"index": 0, "message": message, "logprobs": None,
                                      "finish_reason": "tool_calls" if calls else finish}],
        "usage": usage,
    }


def _chunk(model: str, cid: str, delta: dict[str, Any], finish: str | None = None,
           usage: dict[str, int] | None = None) -> dict[str, Any]:
    chunk = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
             "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
    if usage is not None:
        chunk["usage"] = usage
    return chunk


def _may_be_call(buffer: str) -> bool:
    """While streaming: could this reply still turn out to be a tool call (so hold it back)?"""
    head = buffer.lstrip()
    if not head:
        return True
    return head.startswith((*_TAGS, "{", "```")) or any(tag.startswith(head[:len(tag)]) for tag in _TAGS)


def qwen_tools_handler(*, llama: Any, messages: list[dict[str, Any]], tools: list[dict] | None = None,
                       functions: list[dict] | None = None, tool_choice: Any = None, temperature: float = 0.2,
                       top_p: float = 0.95, top_k: int = 40, min_p: float = 0.05, stream: bool = False,
                       stop: Any = None, seed: int | None = None, max_tokens: int | None = None,
                       repeat_penalty: float = 1.1, model: str | None = None, grammar: Any = None, **_: Any) -> Any:
    """The chat completion handler (llama-cpp-python's LlamaChatCompletionHandler protocol).

    `grammar` (the request's `grammar` field as a `LlamaGrammar`, e.g. `toolroute.llm.tool_grammar`'s
    union of text and the bound tools' calls) constrains the sampling; None samples freely."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter  # runs inside the LLM server process only

    if functions and not tools:
        tools = [{"type": "function", "function": f} for f in functions]
    if tool_choice == "none":
        tools = None
    template = llama.metadata["tokenizer.chat_template"]
    formatter = Jinja2ChatFormatter(template=template, eos_token="<|im_end|>", bos_token="")
    prompt = formatter(messages=normalize_messages(messages), tools=tools or None).prompt
    tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
    stops = STOP + ([stop] if isinstance(stop, str) else list(stop or []))
    names = _tool_names(tools)
    model_name = model or "local"
    kwargs = dict(prompt=tokens, temperature=temperature, top_p=top_p, top_k=top_k, min_p=min_p, stop=stops,
                  seed=seed, max_tokens=max_tokens, repeat_penalty=repeat_penalty, grammar=grammar)
    if not stream:
        completion = llama.create_completion(**kwargs, stream=False)
        text = completion["choices"][0]["text"]
        remaining, calls = parse_tool_calls(text, names) if names else (text, [])
        return _response(model_name, remaining.strip(), calls, completion["usage"],
                         completion["choices"][0]["finish_reason"] or "stop")
    return _stream(llama, kwargs, names, model_name, len(tokens))


def _stream(llama: Any, kwargs: dict, names: set[str], model: str, prompt_tokens: int) -> Iterator[dict]:
    cid = f"chatcmpl-{uuid.uuid4().hex[:16]}"
    yield _chunk(model, cid, {"role": "assistant", "content": ""})
    buffer, held, finish = "", bool(names), "stop"
    for part in llama.create_completion(**kwargs, stream=True):
        piece = part["choices"][0]["text"]
        finish = part["choices"][0].get("finish_reason") or finish
        buffer += piece
        if held and not _may_be_call(buffer):
            held = False
            yield _chunk(model, cid, {"content": buffer})
            continue
        if not held and piece:
            yield _chunk(model, cid, {"content": piece})
    produced = len(llama.tokenize(buffer.encode("utf-8"), add_bos=False, special=True)) if buffer else 0
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": produced, "total_tokens": prompt_tokens + produced}
    if held:
        remaining, calls = parse_tool_calls(buffer, names)
        if calls:
            if remaining:
                yield _chunk(model, cid, {"content": remaining})
            delta_calls = [{**c, "index": i} for i, c in enumerate(calls)]
            yield _chunk(model, cid, {"tool_calls": delta_calls}, "tool_calls", usage)
            return
        if buffer:
            yield _chunk(model, cid, {"content": buffer})
    yield _chunk(model, cid, {}, finish, usage)

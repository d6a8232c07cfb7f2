"""The embedded default LLM, child side: llama-cpp-python's OpenAI-compatible server with our fixes.

Run as `python -m toolroute.llm.serve --model X.gguf --port N` (by `LocalLLMServer`). The Qwen tool
handler is registered before the app is created (the stock `python -m llama_cpp.server` cannot see
custom handlers), and a small ASGI middleware fixes two things langchain-openai sends that the
0.3.36 server mishandles: `"content": null` on assistant messages with tool calls (HTTP 500) and
`max_completion_tokens` (ignored: unbounded generation).
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any
from toolroute.llm.qwen_tools import HANDLER_NAME, qwen_tools_handler

# --- the request fixes ------------------------------------------------------------------------------

def fix_request(body: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a chat request so llama-cpp-python 0.3.36 accepts it as langchain-openai meant it."""
    body = dict(body)
    if "max_completion_tokens" in body:
        value = body.pop("max_completion_tokens")
        body.setdefault("max_tokens", value)
    messages = []
    for message in body.get("messages", []):
        if isinstance(message, dict) and message.get("content") is None:
            message = {**message, "content": ""}
        messages.append(message)
    if "messages" in body:
        body["messages"] = messages
    body.pop("stream_options", None)  # not supported by the server; usage comes in the last chunk anyway
    body.pop("parallel_tool_calls", None)
    return body


class RequestFixMiddleware:
    """ASGI middleware applying `fix_request` to POST /v1/chat/completions bodies."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or not scope.get("path", "").endswith(
                "/chat/completions"):
            await self.app(scope, receive, send)
            return
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        raw = b"".join(chunks)
        try:
            raw = json.dumps(fix_request(json.loads(raw))).encode("utf-8")
        except (ValueError, TypeError):
            pass  # let the server report the malformed body itself
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(raw)).encode()))
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": raw, "more_body": False}
            return await receive()

        await self.app({**scope, "headers": headers}, replay, send)


# --- the child process --------------------------------------------------------------------------------

def build_app(model_path: str, n_ctx: int, n_threads: int | None = None, alias: str = "local"):
    from llama_cpp.llama_chat_format import LlamaChatCompletionHandlerRegistry  # runs inside the LLM server process only
    from llama_cpp.server.app import create_app  # runs inside the LLM server process only
    from llama_cpp.server.settings import ModelSettings, ServerSettings  # runs inside the LLM server process only


    LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(HANDLER_NAME, qwen_tools_handler,
                                                                          overwrite=True)
    model = ModelSettings(model=model_path, model_alias=alias, chat_format=HANDLER_NAME, n_ctx=n_ctx,
                          n_threads=n_threads or os.cpu_count() or 2, n_threads_batch=n_threads or os.cpu_count() or 2,
                          verbose=False)
    app = create_app(server_settings=ServerSettings(interrupt_requests=False), model_settings=[model])
    return RequestFixMiddleware(app)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the embedded GGUF model on an OpenAI-compatible API.")
    parser.add_argument("--model", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n-ctx", type=int, required=True)
    parser.add_argument("--alias", default="local")
    args = parser.parse_args(argv)
    import uvicorn  # runs inside the LLM server process only

    uvicorn.run(build_app(args.model, args.n_ctx, alias=args.alias), host=args.host, port=args.port,
                log_level="warning")




if __name__ == "__main__":
    main()

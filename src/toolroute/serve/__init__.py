"""The agent served to other programs: HTTP (REST + SSE with seed 000's events + a chat page, `toolroute serve`)
and MCP (`toolroute mcp`, in `serve.mcp`).

    from toolroute.serve import create_app
    app = create_app("insurance")          # uvicorn.run(app, host="127.0.0.1", port=8080)
"""

from __future__ import annotations

import threading

from toolroute.serve.app import ChatRequest, ChatResponse, ServeOptions, create_app
from toolroute.serve.llm import LLMSupervisor
import logging

__all__ = ["ChatRequest", "ChatResponse", "LLMSupervisor", "ServeOptions", "create_app", "run_server"]


def run_server(domain: str = "insurance", host: str = "127.0.0.1", port: int = 8080, log_level: str = "info",
               memory_path: str | None = None, e5_threads: str = "auto") -> None:
    """Serve `domain` with uvicorn until Ctrl-C; the embedded LLM child (if any) is stopped on exit."""

    import uvicorn  # only when serving

    from toolroute.agent.pack import load_pack  # only when serving
    from toolroute.agent.redaction import mask_personal_data  # only when serving
    from toolroute.serve.logs import configure_logging  # only when serving

    pack = load_pack(domain)
    # The shapes of personal data every domain's logs hide (phones, resident numbers …), then the pack's own.
    configure_logging(lambda text: pack.mask_text(mask_personal_data(text)[0]), getattr(logging, log_level.upper(), logging.INFO))
    app = create_app(domain, options=ServeOptions(domain=domain, memory_path=memory_path, e5_threads=e5_threads, host=host))
    print(f"toolroute serve: {domain} on http://{host}:{port}/  (API docs: /docs; the agent builds its index first: /readyz)",
          flush=True)
    served = app.state.served

    def say_when_ready() -> None:  # the first start builds the index (minutes): say when it is done
        served.built.wait()
        print(f"toolroute serve: ready at http://{host}:{port}/" if served.error is None
              else f"toolroute serve: not ready: {served.error}", flush=True)

    threading.Thread(target=say_when_ready, name="ready-line", daemon=True).start()
    uvicorn.run(app, host=host, port=port, log_config=None, log_level=log_level)

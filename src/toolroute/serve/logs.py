"""Server logs without personal data: what a turn did (thread, route, tools, timings), never what
was said; and a filter that masks the guardrail's personal-data patterns in any record that reaches
the server's handler (third-party libraries included), as a second line of defence."""

from __future__ import annotations

import logging
import sys
from typing import Any, Callable, TextIO

LOGGER = logging.getLogger("toolroute.serve")
# Libraries that log request bodies (the prompt, hence the customer's words) at DEBUG.
QUIET = ("openai", "httpx", "httpcore", "langchain", "langgraph", "urllib3", "chromadb", "sse_starlette")


class MaskPersonalData(logging.Filter):
    """Rewrites each record's message with `mask` (the pack's personal-data masking)."""

    def __init__(self, mask: Callable[[str], str]):
        super().__init__()
        self.mask = mask

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logged as it is
            return True
        masked = self.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


def configure_logging(mask: Callable[[str], str], level: int = logging.INFO, stream: TextIO | None = None) -> logging.Handler:
    """One handler on the root logger, masking personal data; chatty libraries kept at WARNING."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(MaskPersonalData(mask))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    for name in QUIET:
        logging.getLogger(name).setLevel(max(level, logging.WARNING))
    return handler


def turn_line(**fields: Any) -> str:
    """`key=value` pairs of a finished turn (ids, counts and timings only)."""
    return " ".join(f"{k}={v}" for k, v in fields.items())

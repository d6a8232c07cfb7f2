"""What a client is told when an HTTP request fails: a reason without server paths, URLs or exception
names, and an error id; the details (exception, traceback) go to the server log under that id.
A failed turn's `error` event is told the same way by `toolroute.agent.events.public_error` (a kind
of failure instead of a reason); both give the id as "(error id <8 hex digits>)".

- `logged(what, exc)` logs a failure and gives the id to quote to the client;
- `public(text)` takes file-system paths and URLs out of a reason meant for a client (a safety net
  under the messages the routes write themselves);
- `InternalErrors`: any exception a route did not handle becomes a 500 with a generic body and an
  error id (ASGI middleware);
- `install(app)`: the middleware, and handlers that pass every `HTTPException` detail through
  `public` and give request-validation errors as `loc`, `msg` and `type` only (no echoed input, no
  exception objects, no documentation URLs).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from toolroute.serve.logs import LOGGER

# A URL of any scheme; a file-system path: a `/` not inside a word, at least two segments, not the
# API's own paths (`/api/…`, which the messages name on purpose).
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"`<>]+")
_PATH = re.compile(r"(?<![\w./~-])(?:~|\.{1,2})?/(?!api/)[^\s/'\"`]+(?:/[^\s/'\"`]*)+")


_TRAILING = "/:,;.)]'"


def _replaced(match: re.Match, by) -> str:
    """The match replaced by `by(core)`, keeping the punctuation that ends a sentence after it."""
    found = match.group(0)
    core = found.rstrip(_TRAILING)
    return by(core) + found[len(core):].lstrip("/")


def public(text: str) -> str:
    """`text` without URLs (→ `<url>`) and file-system paths (→ their last part, e.g. the file name)."""
    text = _URL.sub(lambda m: _replaced(m, lambda core: "<url>"), text)
    return _PATH.sub(lambda m: _replaced(m, lambda core: core.rsplit("/", 1)[-1] or "<path>"), text)


def new_error_id() -> str:
    return secrets.token_hex(4)  # as `agent.events.public_error`'s: one form of id in every answer and log line


def logged(what: str, exc: BaseException | None = None) -> str:
    """Log a failure (with the exception's traceback) under a new error id, and return the id."""
    error_id = new_error_id()
    LOGGER.error("error %s: %s", error_id, what, exc_info=(type(exc), exc, exc.__traceback__) if exc else None)
    return error_id


def with_id(reason: str, error_id: str) -> str:
    """`reason (error id 3f2a9c1e)`, the form of a failed turn's `error` event too."""
    return f"{reason} (error id {error_id})"


def _json(status: int, detail: Any, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


class InternalErrors:
    """ASGI middleware: an unhandled exception → 500 `{"detail": "internal error (error id …)"}`,
    logged with its traceback under that id. A response already started (a stream) cannot change its
    status: the exception is logged and re-raised, and the server closes the connection."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracked(message: dict) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:  # noqa: BLE001 - every unexpected failure is answered the same way
            error_id = logged(f"{scope.get('method')} {scope.get('path')} failed", exc)
            if started:
                raise
            response = _json(500, with_id("internal error", error_id), {"X-Error-Id": error_id})
            await response(scope, receive, send)


def _public_detail(detail: Any) -> Any:
    if isinstance(detail, str):
        return public(detail)
    if isinstance(detail, list):
        return [_public_detail(d) for d in detail]
    if isinstance(detail, dict):
        return {k: _public_detail(v) for k, v in detail.items()}
    return detail


async def _http_exception(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    return _json(exc.status_code, _public_detail(exc.detail), getattr(exc, "headers", None))


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = [{"loc": list(e.get("loc", ())), "msg": public(str(e.get("msg", ""))), "type": e.get("type", "")}
              for e in exc.errors()]
    return _json(422, errors)


def install(app: FastAPI) -> None:
    app.add_middleware(InternalErrors)
    app.add_exception_handler(StarletteHTTPException, _http_exception)
    app.add_exception_handler(RequestValidationError, _validation_error)

"""What every HTTP request passes before it reaches a route (ASGI middleware, so every route of the
app, present and future, is covered):

- `HostCheck`: a `Host` header this server answers for, else 421 Misdirected Request. A web page on
  another name that resolves to this machine (DNS rebinding) cannot reach the API from a browser.
- `RequestBody`: the body counted as it is read, chunked or not, at most `max_bytes` (413 as soon as
  more was read; a `Content-Length` over the limit is refused before reading anything); and a JSON
  body must be UTF-8 whose strings are valid Unicode (a lone surrogate such as "\\ud800" is 400 naming
  the field, instead of failing later when the text is encoded).

Why 421 and not Starlette's TrustedHostMiddleware (400): a wrong Host is not a malformed request,
it is one sent to a server that is not authoritative for that name, which is what 421 says
(RFC 9110 §15.5.20); and the MCP server (the `mcp` SDK's transport security) refuses the same way.
"""

from __future__ import annotations

import json
from typing import Any, Collection, Iterable

from toolroute.serve.logs import LOGGER

LOOPBACK = ("127.0.0.1", "localhost", "::1")
ANY_ADDRESS = ("", "0.0.0.0", "::")
MAX_FIELD_NAME = 80  # characters of a field's name quoted back in an error


def host_name(header: str) -> str:
    """The name of a `Host` header: `Example.COM:8080` → `example.com`, `[::1]:8080` → `::1`; ""
    when it is not a host (and optional port) at all."""
    value = header.strip().lower()
    if value.startswith("["):  # an IPv6 literal, with an optional port after the bracket
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return ""
        return name
    name, colon, port = value.partition(":")
    if colon and not port.isdigit():
        return ""
    return name.rstrip(".")


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """Loopback names, the address the server was bound to (unless it is every address: then only
    what `extra` lists, e.g. `TOOLROUTE_ALLOWED_HOSTS`), and `extra`."""
    names = {*LOOPBACK, *(host_name(n) or n.strip().lower() for n in extra)}
    if bind.strip() not in ANY_ADDRESS:
        names.add(host_name(bind) or bind.strip().strip("[]").lower())
    return frozenset(names)


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


async def _refuse(send: Any, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}, ensure_ascii=False).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class HostCheck:
    """421 for a request whose `Host` is not one of `allowed` (names, any port); a missing Host too."""

    def __init__(self, app: Any, allowed: Collection[str]):
        self.app, self.allowed = app, frozenset(allowed)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and host_name(_header(scope, b"host") or "") not in self.allowed:
            LOGGER.info("refused a request for another Host (%s %s)", scope.get("method"), scope.get("path"))
            return await _refuse(send, 421, "misdirected request: this server does not answer for that Host")
        return await self.app(scope, receive, send)


class RequestBody:
    """Reads the whole body first (at most `max_bytes`), checks a JSON body's text, then hands the app
    the body as one message; later `receive` calls (a stream waiting for the client to leave) go to
    the server as before."""

    def __init__(self, app: Any, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    def _too_large(self) -> str:
        return f"request body over {self.max_bytes:,} bytes"

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = _header(scope, b"content-length")
        if length is not None and length.strip().isdigit() and int(length) > self.max_bytes:
            return await _refuse(send, 413, self._too_large())
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left before its body was complete: nobody to answer
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                LOGGER.info("refused a request body over %d bytes (%s %s)", self.max_bytes, scope.get("method"),
                            scope.get("path"))
                return await _refuse(send, 413, self._too_large())
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = text_problem(body, _header(scope, b"content-type"))
        if problem:
            return await _refuse(send, 400, problem)
        delivered = False

        async def replay() -> dict:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def text_problem(body: bytes, content_type: str | None) -> str | None:
    """Why a JSON body's text is refused (not UTF-8; a string or key with a lone surrogate), or None.
    A body that is not JSON is left to the route (it answers its own parse error)."""
    if not body or (content_type is not None and "json" not in content_type.lower()):
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"the request body is not valid UTF-8 (byte {exc.start})"
    try:
        value = json.loads(text)
    except ValueError:
        return None
    field = lone_surrogate(value)
    if field is None:
        return None
    return f"{field}: invalid Unicode (a lone surrogate such as \\ud800); send the text as valid UTF-8"


def _valid(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def lone_surrogate(value: Any, path: str = "") -> str | None:
    """The field (`message`, `edit.changes.+when_to_use[2]`) of the first string holding a lone
    surrogate, or None. A bad key is named by where it is ("a key of edit.changes")."""
    if isinstance(value, str):
        return None if _valid(value) else (path or "the body")
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = lone_surrogate(item, f"{path}[{i}]")
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            if not _valid(key):
                return f"a key of {path}" if path else "a key of the body"
            name = key if len(key) <= MAX_FIELD_NAME else key[:MAX_FIELD_NAME] + "…"
            found = lone_surrogate(item, f"{path}.{name}" if path else name)
            if found is not None:
                return found
    return None

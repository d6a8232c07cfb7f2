"""Who may talk to `toolroute mcp` over HTTP: one bearer token, checked by the SDK's own auth hook
(a `TokenVerifier`: its middleware answers 401 to a request without the token, on `/mcp` and on both
SSE routes), and the rule for starting a server without one.

The rule, simple on purpose: stdio is local and needs no token; HTTP and SSE need one, unless the
operator says `--no-token` explicitly, which only a loopback host accepts (this machine's other users
and processes can still reach it, hence the explicit flag and the warning). A non-loopback host
without a token never starts.
"""

from __future__ import annotations

import hmac

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MIN_TOKEN_CHARS = 16
CLIENT_ID = "toolroute-mcp-client"  # every holder of the token is the same principal


class UnsafeStart(ValueError):
    """The server would serve HTTP without a usable token: refused before anything is loaded."""


class StaticTokenVerifier:
    """The SDK's `TokenVerifier` for one shared token, compared in constant time."""

    def __init__(self, token: str):
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode("utf-8"), self._token):
            return None
        return AccessToken(token="(static)", client_id=CLIENT_ID, scopes=[])


def auth_settings() -> AuthSettings:
    """The SDK wants an issuer URL with a verifier; a static token has no issuer, and with no
    `resource_server_url` nothing publishes one (no OAuth metadata routes are added)."""
    return AuthSettings(issuer_url="http://127.0.0.1/", resource_server_url=None)


def check_start(transport: str, host: str, token: str | None, no_token: bool) -> str | None:
    """Raises `UnsafeStart` when the server must not start as asked; returns a warning to print (or None)."""
    if transport == "stdio":
        return None
    if token:
        if len(token) < MIN_TOKEN_CHARS:
            raise UnsafeStart(f"the MCP token is {len(token)} characters long; use at least {MIN_TOKEN_CHARS} "
                              "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')")
        return None
    if host not in LOOPBACK_HOSTS:
        raise UnsafeStart(f"{transport} on {host} needs a token: set TOOLROUTE_MCP_TOKEN (or the variable "
                          "--token-env names); --no-token is accepted on a loopback host only")
    if not no_token:
        raise UnsafeStart(f"{transport} needs a token: set TOOLROUTE_MCP_TOKEN (or the variable --token-env names), "
                          "or pass --no-token to serve this machine without one")
    return (f"warning: serving {transport} on {host} without a token (--no-token): any process on this machine "
            "can call the tools")

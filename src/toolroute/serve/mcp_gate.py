"""Routed mode (`toolroute mcp --routed`): the agent's rule "only the tools bound for this turn run",
for an MCP client.

MCP 2026-07-28 has no sessions (each request stands alone; the SDK builds a connection per request),
so the state between `route_tools` and the calls it allows travels the way that protocol revision
prescribes: as a handle the server mints and the client passes back as an ordinary argument. In
routed mode, `route_tools` answers with a `route` handle, and every other tool takes a required
`route` argument: a call runs only if its tool is among that route's tools (its top k, none when the
router decided no tool is needed). A call without a route, with an unknown one, or with a tool the
route did not return is a tool error, logged with the tool's name and never its arguments. The same
holds over every transport and protocol revision; a route handle lasts as long as the server process
(the most recent `MAX_ROUTES` are kept).
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections import OrderedDict
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

LOGGER = logging.getLogger("toolroute.serve.mcp")
ROUTE_TOOL = "route_tools"
ROUTE_ARGUMENT = "route"
ROUTED_MAX_K = 5  # the agent's own top_k (AgentConfig.top_k): no client unlocks more tools than a turn binds
MAX_ROUTES = 10_000
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"  # letters only, like the id handles: no masking pattern touches them


class RoutedGate:
    """Which tools a call may run (`enabled` False: every tool, as without `--routed`)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._routes: OrderedDict[str, frozenset[str]] = OrderedDict()
        self._lock = threading.Lock()
        self.refused = 0

    def parameters(self, schema: dict[str, Any]) -> dict[str, Any]:
        """A domain tool's input schema as listed: in routed mode with the required `route` argument."""
        if not self.enabled:
            return schema
        properties = {**(schema.get("properties") or {}), ROUTE_ARGUMENT: {
            "type": "string", "title": "Route",
            "description": "the `route` that route_tools returned with this tool among its tools (routed mode)"}}
        return {**schema, "properties": properties, "required": [*(schema.get("required") or []), ROUTE_ARGUMENT]}

    def issue(self, result: dict[str, Any]) -> str:
        """A route handle for what `route_tools` returned: its tools, or none on a no-call decision."""
        names = frozenset() if result.get("no_call") else frozenset(t["name"] for t in result.get("tools", []))
        route = "route_" + "".join(secrets.choice(_ALPHABET) for _ in range(16))
        with self._lock:
            self._routes[route] = names
            while len(self._routes) > MAX_ROUTES:
                self._routes.popitem(last=False)
        return route

    def check(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The arguments the tool takes (without `route`), or a `ToolError` when the call may not run."""
        if not self.enabled or tool == ROUTE_TOOL:
            return arguments
        route = arguments.get(ROUTE_ARGUMENT) if isinstance(arguments, dict) else None
        with self._lock:
            allowed = self._routes.get(route) if isinstance(route, str) else None
        if allowed is not None and tool in allowed:
            return {k: v for k, v in arguments.items() if k != ROUTE_ARGUMENT}
        self.refused += 1
        reason = ("no route" if route is None else "an unknown route" if allowed is None
                  else f"a route to {', '.join(sorted(allowed)) or 'no tool'}")
        LOGGER.warning("mcp routed mode: refused a call of %s with %s", tool, reason)
        if allowed is None:
            raise ToolError(f"{tool} is not available: call route_tools first and pass the `route` it returns "
                            "(routed mode: only the tools it returned can be called)")
        listed = ", ".join(sorted(allowed)) or "none: route_tools decided no tool is needed"
        raise ToolError(f"{tool} is not available: not among the routed tools ({listed}); call route_tools "
                        "again for another request")

"""`toolroute mcp`: the router, a domain's tools, its ToolCards and consultation flows over MCP.

Built on the official `mcp` SDK (`MCPServer`, the v2 name of FastMCP). What a client sees:

- tools: `route_tools(query, k)` (ranked tools with scores and the no-call decision, JSON) and every
  domain tool under its own name, with the JSON schema of its LangChain `args_schema` as input schema;
  a call runs the real tool. Bad arguments and failures come back as tool errors (`isError`) that name
  the tool and the problem; the server keeps running.
- resources: every ToolCard (`toolcard://<domain>/<name>`, JSON) and the list of cards
  (`toolcard://<domain>/index`), plus the pack's own (`DomainPack.resources`; for insurance the
  product list, one product by code and the standard terms' table of contents).
- prompts: the pack's (`DomainPack.prompts`; for insurance one per consultation scenario, the flow's
  questions in order with the tools each step calls; `customer_id` or a free-text `customer` fills in
  who is on the phone).

The server reaches the domain only through its pack: no domain module is imported here.

The router is built once, in a background thread started when the transport is up (building it cold
takes a minute on 2 cores: embeddings plus the no-call fit), so listing and calling domain tools never
wait for it; `route_tools` waits for it when called early.

What a client may do and see (issue 37), each in its own module:

- every tool call passes, in order: the routed gate (`serve.mcp_gate`; with `--routed` a call must pass
  the `route` of a `route_tools` answer that returned its tool), size limits and strict validation
  against the tool's JSON schema, no coercion (`serve.mcp_arguments`), handles turned back into ids,
  the tool, and the client policy on its result (`serve.mcp_handles`: ids as handles, names and
  personal data masked);
- the pack's resources and prompts carry the same handles and masks (the ToolCards do not: they
  are the tools' documentation, not tool data);
- HTTP and SSE need a bearer token (`serve.mcp_auth`) and refuse bodies over
  `mcp_arguments.MAX_BODY_BYTES` with 413; stdio is local.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import threading
import time
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any, AsyncIterator, Callable

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import Prompt, PromptArgument, UserMessage
from mcp.server.mcpserver.resources import FunctionResource
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from toolroute.agent.pack import PackPrompt, PackResource
from toolroute.cards import open_catalog
from toolroute.config import toolcards_dir
from toolroute.plugins import check_domain
from toolroute.routing import RouterConfig
from toolroute.serve.errors import logged, with_id
from toolroute.serve.mcp_arguments import MAX_BODY_BYTES, ArgumentError, max_string_chars, validate_arguments
from toolroute.serve.mcp_auth import StaticTokenVerifier, auth_settings, check_start
from toolroute.serve.mcp_gate import ROUTE_ARGUMENT, ROUTE_TOOL, ROUTED_MAX_K, RoutedGate
from toolroute.serve.mcp_handles import Handles, UnknownHandle

TRANSPORTS = ("stdio", "http", "sse")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MAX_K = 54


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, default=str)


def _result(data: Any) -> CallToolResult:
    """A tool's return value as MCP content: the JSON text, plus structured content for a dict."""
    return CallToolResult(content=[TextContent(type="text", text=_json(data))],
                          structured_content=data if isinstance(data, dict) else None)


class RouterHolder:
    """The router, built at most once (in the background or by the first `route_tools` call)."""

    def __init__(self, config: RouterConfig):
        self.config = config
        self._router = None
        self._error: BaseException | None = None
        self._error_id = ""
        self._lock = threading.Lock()
        self.build_seconds: float | None = None

    def get(self):
        with self._lock:
            if self._router is None and self._error is None:
                from toolroute.routing import build_router  # chromadb is heavy: imported in the router's background thread

                start = time.perf_counter()
                try:
                    self._router = build_router(self.config, progress=False)
                except Exception as exc:  # kept: every later call reports the same cause
                    self._error = exc
                self.build_seconds = time.perf_counter() - start
            if self._error is not None:  # the cause is logged once, under the id every later call quotes
                self._error_id = self._error_id or logged("the MCP router could not be built", self._error)
                raise ToolError(with_id("the router could not be built", self._error_id))
            return self._router

    def warm(self) -> None:
        threading.Thread(target=self._quiet_get, name="router-warmup", daemon=True).start()

    def _quiet_get(self) -> None:
        try:
            self.get()
        except ToolError:
            pass  # reported to the first route_tools call


class DomainTool(Tool):
    """A LangChain tool served as is: its own JSON schema, its own validation, its real invoke."""

    @classmethod
    def of(cls, lc_tool: Any) -> "DomainTool":
        schema = lc_tool.args_schema
        if schema is None:
            parameters: dict[str, Any] = {"type": "object", "properties": {}}
        elif isinstance(schema, dict):
            parameters = dict(schema)
        else:
            parameters = schema.model_json_schema()
        return cls(fn=lc_tool.invoke, name=lc_tool.name, description=lc_tool.description or lc_tool.name,
                   parameters=parameters, fn_metadata=FuncMetadata(arg_model=ArgModelBase), is_async=False,
                   annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        try:
            result = await anyio.to_thread.run_sync(self.fn, dict(arguments or {}))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}"
                                 for e in exc.errors()[:5])
            raise ToolError(f"{self.name}: invalid arguments: {problems}") from exc
        except ToolError:
            raise
        except Exception as exc:  # what failed goes to the log; the client gets the id to quote
            raise ToolError(with_id(f"{self.name} failed", logged(f"MCP tool {self.name} failed", exc))) from exc
        return _result(result) if convert_result else result


def _route_tools_tool(holder: RouterHolder, max_k: int = MAX_K) -> Tool:
    def route_tools(query: str, k: int = 5) -> dict[str, Any]:
        """Rank this domain's tools for a request (hybrid dense + BM25 router over the ToolCards).

        Returns JSON: the k best tools with scores, `no_call` (true when the request needs no tool,
        e.g. small talk or out of domain) and `call_probability`."""
        if not query.strip():
            raise ToolError("query is empty")
        if not 1 <= k <= max_k:
            raise ToolError(f"k must be between 1 and {max_k}, got {k}")
        try:
            result = holder.get().route(query)
        except ValueError as exc:  # a query over the turn limit names the limit
            raise ToolError(str(exc)) from exc
        return result.to_dict(k)

    description = route_tools.__doc__ or ""
    if max_k < MAX_K:
        description += (f"\n\nRouted mode: call this first (k at most {max_k}); it also returns `route`, which "
                        "each call of one of the tools it returned must pass as its `route` argument.")
    return Tool.from_function(route_tools, description=description, structured_output=False,
                              annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))


class GuardedMCPServer(MCPServer):
    """The SDK's server with the checks every tool call passes (the module docstring), in one place:
    `call_tool` is what the SDK's `tools/call` handler calls, and its `ToolError` becomes an `isError`
    result the client reads."""

    def __init__(self, *args: Any, tools: list[Tool], handles: Handles, gate: RoutedGate, **kwargs: Any):
        self.schemas = {t.name: t.parameters for t in tools}  # what the arguments are checked against
        for tool in tools:
            if tool.name != ROUTE_TOOL:
                tool.parameters = gate.parameters(tool.parameters)  # what tools/list shows
        super().__init__(*args, tools=tools, **kwargs)
        self.tools_by_name = {t.name: t for t in tools}
        self.handles = handles
        self.gate = gate

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        tool = self.tools_by_name.get(name)
        if tool is None:
            raise ToolError(f"Unknown tool: {name}")
        arguments = self.gate.check(name, arguments)
        try:
            validate_arguments(name, self.schemas[name], arguments)
            real = self.handles.resolve_arguments(arguments)
        except ArgumentError as exc:
            raise ToolError(str(exc)) from None
        except UnknownHandle as exc:
            raise ToolError(f"{name}: {exc}") from None
        try:
            data = await tool.run(real, context)
        except ToolError as exc:  # the tool's own words may quote an id or a name (same class: a crash stays one)
            raise type(exc)(self.handles.guard(str(exc), real)) from exc
        if name == ROUTE_TOOL and self.gate.enabled:
            data = {**data, ROUTE_ARGUMENT: self.gate.issue(data)}
        return _result(self.handles.guard(data, real))


# Resources


def _card_resources(domain: str, catalog_path: str) -> list[FunctionResource]:
    """One resource per card, read fresh (saved card edits show), and the list of cards."""
    names = sorted(open_catalog(catalog_path).names)

    def card(name: str) -> Callable[[], str]:
        return lambda: _json(open_catalog(catalog_path).cards[name].model_dump(mode="json"))

    def index() -> str:
        catalog = open_catalog(catalog_path)
        return _json([{"name": n, "purpose": catalog.cards[n].purpose, "uri": f"toolcard://{domain}/{n}"}
                      for n in sorted(catalog.names)])

    out = [FunctionResource(uri=f"toolcard://{domain}/index", name=f"{domain}-toolcards",
                            description=f"The {len(names)} ToolCards of the {domain} domain: name, purpose, URI",
                            mime_type="application/json", fn=index)]
    out += [FunctionResource(uri=f"toolcard://{domain}/{name}", name=f"toolcard-{name}",
                             description=f"ToolCard of {name}: purpose, when_to_use, when_not_to_use, tags",
                             mime_type="application/json", fn=card(name)) for name in names]
    return out


def _resolved(arguments: dict[str, Any], handles: Handles) -> dict[str, Any]:
    """A resource's or prompt's arguments with handles taken back to the ids they stand for."""
    out = {}
    for name, value in arguments.items():
        if value is None:
            continue
        if len(value) > max_string_chars():
            raise MCPError(INVALID_PARAMS, f"{name}: longer than {max_string_chars():,} characters")
        out[name] = handles.resolve(value.strip()) or value.strip()
    return out


def _template_reader(resource: PackResource, handles: Handles) -> Callable[..., str]:
    """A function whose parameters are the template's parts (the SDK matches them by name)."""

    def read(**parts: str) -> str:
        try:
            return _json(handles.guard(resource.read(**_resolved(parts, handles))))
        except LookupError as exc:
            raise MCPError(INVALID_PARAMS, str(exc.args[0] if exc.args else exc)) from None

    params = re.findall(r"{(\w+)}", resource.uri)
    read.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, annotation=str) for p in params])
    read.__annotations__ = {**{p: str for p in params}, "return": str}
    read.__name__ = resource.name
    return read


def _pack_resources(server: MCPServer, pack: Any, handles: Handles) -> None:
    """The pack's own resources. Their ids are internal like the others (the answers never show them,
    `pack.remove_patterns`): a client sees handles, which a template takes back."""
    for resource in pack.resources():
        if "{" in resource.uri:
            server.resource(resource.uri, name=resource.name, mime_type="application/json",
                            description=resource.description)(_template_reader(resource, handles))
        else:
            server.add_resource(FunctionResource(
                uri=resource.uri, name=resource.name, mime_type="application/json", description=resource.description,
                fn=lambda read=resource.read: _json(handles.guard(read()))))


# Prompts


def _prompt(prompt: PackPrompt, handles: Handles) -> Prompt:
    """The pack's prompt with its text and argument descriptions masked alike (handles, masked names)."""
    records = list(prompt.records)

    def render(**arguments: str) -> list[UserMessage]:
        try:
            text, named = prompt.render(**_resolved(arguments, handles))
        except LookupError as exc:
            raise MCPError(INVALID_PARAMS, str(exc.args[0] if exc.args else exc)) from None
        return [UserMessage(handles.guard({"text": text, "records": named})["text"])]

    def guarded(text: str) -> str:  # a title or description may name the scenario's customer
        return handles.guard({"text": text, "records": records})["text"]

    arguments = [PromptArgument(name=name, required=False, description=guarded(text)) for name, text in prompt.arguments]
    return Prompt(name=prompt.name, title=guarded(prompt.title), description=guarded(prompt.description), fn=render,
                  arguments=arguments)


def _pack_prompts(server: MCPServer, pack: Any, handles: Handles) -> None:
    for prompt in pack.prompts():
        server.add_prompt(_prompt(prompt, handles))


# The server


def create_server(domain: str = "insurance", router_config: RouterConfig | None = None,
                  warm_router: bool = True, routed: bool = False, token: str | None = None) -> GuardedMCPServer:
    """The MCP server of one domain (see the module docstring). `warm_router`: start building the router
    in the background once the transport is up; `routed`: the routed mode (`serve.mcp_gate`); `token`:
    the bearer token its HTTP apps require (`http_app`)."""
    from toolroute.agent.pack import load_pack  # builds the domain's tools: loaded when the server starts, not on import

    check_domain(domain)
    config = router_config or RouterConfig(catalog=str(toolcards_dir(domain)))
    holder = RouterHolder(config)
    pack = load_pack(domain)

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[dict[str, Any]]:
        if warm_router:
            holder.warm()
        yield {"router": holder}

    tools = [_route_tools_tool(holder, ROUTED_MAX_K if routed else MAX_K)] + [DomainTool.of(t) for t in pack.tools]
    handles = Handles(pack)
    instructions = (f"Tools of the {pack.label or domain} domain. Call route_tools first to find the few tools a "
                    "request needs, then call them. Ids in results are handles (e.g. customer_…): pass them on "
                    "as they are.")
    if routed:
        instructions += (" Routed mode: a tool can be called only with the `route` of a route_tools answer that "
                         "returned it.")
    auth = {"token_verifier": StaticTokenVerifier(token), "auth": auth_settings()} if token else {}
    server = GuardedMCPServer(name=f"toolroute-{domain}", version=_version(), tools=tools, lifespan=lifespan,
                              resources=_card_resources(domain, config.catalog), instructions=instructions,
                              handles=handles, gate=RoutedGate(routed), **auth)
    server.router_holder = holder  # type: ignore[attr-defined]  # for tests and timing
    _pack_resources(server, pack, handles)
    _pack_prompts(server, pack, handles)
    return server


def _version() -> str:
    try:
        return version("toolroute")
    except PackageNotFoundError:
        return "0"


def http_app(server: MCPServer, transport: str, host: str = DEFAULT_HOST) -> Any:
    """The ASGI app of an HTTP transport: `http` streamable HTTP at `/mcp`, `sse` the older HTTP+SSE at
    `/sse` (+ `/messages/`). The SDK's own middleware checks the token (401) when the server has one,
    the request body's size as it is read (413 over `MAX_BODY_BYTES`, chunked or not) and, on a
    loopback host, the `Host` header (421)."""
    if transport == "http":
        return server.streamable_http_app(host=host, max_request_body_size=MAX_BODY_BYTES)
    if transport == "sse":
        return server.sse_app(host=host, max_request_body_size=MAX_BODY_BYTES)
    raise ValueError(f"{transport!r} is no HTTP transport; one of http, sse")


def serve(domain: str = "insurance", transport: str = "stdio", host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          router_config: RouterConfig | None = None, token: str | None = None, no_token: bool = False,
          routed: bool = False) -> None:
    """Run the server until the client disconnects (stdio) or Ctrl-C: `http` serves streamable HTTP at
    `/mcp`, `sse` the older HTTP+SSE transport at `/sse` (clients that predate streamable HTTP).
    HTTP needs `token` (or `no_token` on a loopback host, `serve.mcp_auth.check_start`: raises
    `UnsafeStart` before anything is loaded)."""
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; one of {', '.join(TRANSPORTS)}")
    warning = check_start(transport, host, token, no_token)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    server = create_server(domain, router_config, routed=routed, token=token if transport != "stdio" else None)
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn  # only when serving HTTP

    uvicorn.run(http_app(server, transport, host), host=host, port=port, log_level="info")

"""`toolroute mcp`: the router, a domain's tools, its ToolCards and consultation flows over MCP.

Built on the official `mcp` SDK (`MCPServer`, the v2 name of FastMCP). What a client sees:

- tools: `route_tools(query, k)` (ranked tools with scores and the no-call decision, JSON) and every
  domain tool under its own name, with the JSON schema of its LangChain `args_schema` as input schema;
  a call runs the real tool. Bad arguments and failures come back as tool errors (`isError`) that name
  the tool and the problem; the server keeps running.
- resources: every ToolCard (`toolcard://<domain>/<name>`, JSON) and the list of cards
  (`toolcard://<domain>/index`); for insurance also the product list (`insurance://products`), one
  product (`insurance://products/{code}`, a template) and the table of contents of the standard terms
  (`insurance://terms/toc`).
- prompts (insurance): one per consultation scenario of `data/insurance/scenarios.yaml`, the flow's
  questions in order with the tools each step calls; `customer_id` (or a free-text `customer`) fills in
  who is on the phone.

The router is built once, in a background thread started when the transport is up (building it cold
takes a minute on 2 cores: embeddings plus the no-call fit), so listing and calling domain tools never
wait for it; `route_tools` waits for it when called early.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import asynccontextmanager
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

from toolroute.cards import open_catalog
from toolroute.config import toolcards_dir
from toolroute.routing import RouterConfig
from importlib.metadata import PackageNotFoundError, version

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
            if self._error is not None:
                raise ToolError(f"the router could not be built: {type(self._error).__name__}: {self._error}")
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
        except Exception as exc:
            raise ToolError(f"{self.name} failed: {type(exc).__name__}: {exc}") from exc
        return _result(result) if convert_result else result


def _route_tools_tool(holder: RouterHolder) -> Tool:
    def route_tools(query: str, k: int = 5) -> str:
        """Rank this domain's tools for a request (hybrid dense + BM25 router over the ToolCards).

        Returns JSON: the k best tools with scores, `no_call` (true when the request needs no tool,
        e.g. small talk or out of domain) and `call_probability`."""
        if not query.strip():
            raise ToolError("query is empty")
        if not 1 <= k <= MAX_K:
            raise ToolError(f"k must be between 1 and {MAX_K}, got {k}")
        try:
            result = holder.get().route(query)
        except ValueError as exc:  # a query over the turn limit names the limit
            raise ToolError(str(exc)) from exc
        return _json(result.to_dict(k))

    return Tool.from_function(route_tools, annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))


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


def product_list() -> list[dict[str, Any]]:
    from toolroute.domains.insurance.products import load_products  # insurance resources: loaded only when serving that domain

    return [{"code": p.code, "name": p.name, "category": p.category, "description": p.description,
             "join_age": f"{p.join_age_min}~{p.join_age_max}세", "channels": list(p.channels),
             "simplified_underwriting": p.simplified_underwriting, "renewable": p.renewable,
             "coverage_period": p.coverage_period, "payment_terms": list(p.payment_terms),
             "version": p.version} for p in load_products().values()]


def terms_toc() -> dict[str, Any]:
    """The standard terms' chapters (제N관) with their articles (제N조), in order."""
    from toolroute.domains.insurance.documents import document_specs  # insurance resources: loaded only when serving that domain

    spec = next(s for s in document_specs() if s.doc_type == "terms")
    chapters: list[dict[str, Any]] = []
    for heading, _body in spec.sections:
        if "관 " in heading.split("(")[0] and heading.startswith("제"):
            chapters.append({"chapter": heading, "articles": []})
        elif chapters:
            chapters[-1]["articles"].append(heading)
        else:
            chapters.append({"chapter": "", "articles": [heading]})
    return {"title": spec.title, "document": f"{spec.stem}.pdf", "chapters": chapters}


def _insurance_resources(server: MCPServer) -> None:
    server.add_resource(FunctionResource(
        uri="insurance://products", name="products", mime_type="application/json", fn=lambda: _json(product_list()),
        description="The products on sale: code, name, category, join ages, channels, underwriting, renewal"))
    server.add_resource(FunctionResource(
        uri="insurance://terms/toc", name="terms-toc", mime_type="application/json", fn=lambda: _json(terms_toc()),
        description="Table of contents of the standard terms (표준약관): chapters and articles"))

    @server.resource("insurance://products/{code}", name="product", mime_type="application/json",
                     description="One product in full (coverages, riders, exclusions, premiums …) by code, e.g. B001")
    def product(code: str) -> str:
        from toolroute.domains.insurance.products import get_product  # insurance resources: loaded only when serving that domain

        found = get_product(code)
        if found is None:
            raise MCPError(INVALID_PARAMS, f"no product {code!r}; see insurance://products")
        return _json(found.model_dump(mode="json"))


# Prompts


def _scenario_prompt(scenario: Any, rules: str) -> Prompt:
    from toolroute.domains.insurance import customers as db  # insurance resources: loaded only when serving that domain

    original = db.find_customers(customer_id=scenario.customer_id)[0] if scenario.customer_id else None

    def steps(rename: tuple[str, str] | None) -> str:
        lines = []
        for i, turn in enumerate(scenario.turns, start=1):
            question = turn.user.replace(*rename) if rename else turn.user
            tools = " → ".join(dict.fromkeys(c.tool for c in turn.expected_calls)) or "(도구 없이 답변)"
            lines.append(f"{i}단계: 「{question}」 → {tools}")
        return "\n".join(lines)

    def render(customer_id: str | None = None, customer: str | None = None) -> list[UserMessage]:
        rename = None
        who = customer.strip() if customer else ""
        if original is not None:
            chosen = original
            if customer_id and customer_id.strip().upper() != original["customer_id"]:
                found = db.find_customers(customer_id=customer_id.strip())
                if not found:
                    raise MCPError(INVALID_PARAMS, f"no customer {customer_id!r} (ids look like C0001)")
                chosen = found[0]
                rename = (original["name"], chosen["name"])
            who = f"{chosen['name']} ({chosen['customer_id']}, {chosen['age']}세 {chosen['sex']})"
        title = scenario.title.replace(*rename) if rename else scenario.title
        text = (f"한결생명 TM 상담 흐름을 따라 상담을 도와주세요: {title}\n"
                + (f"고객: {who}\n" if who else "")
                + f"\n{rules}\n\n단계별 질문과 확인할 도구 (고객의 답에 따라 순서와 질문을 조정하세요):\n"
                + steps(rename))
        return [UserMessage(text)]

    if original is not None:
        arguments = [PromptArgument(name="customer_id", required=False,
                                    description=f"the customer on the call (default {original['customer_id']}, "
                                                f"{original['name']})")]
    else:
        arguments = [PromptArgument(name="customer", required=False,
                                    description="who is on the call, in words (e.g. '48세 남성 택시기사')")]
    slug = scenario.id.lower()
    return Prompt(name=f"consult_{slug}", title=scenario.title, fn=render, arguments=arguments,
                  description=f"{scenario.title} ({len(scenario.turns)} steps; {scenario.source})")


def _insurance_prompts(server: MCPServer) -> None:
    from toolroute.domains.insurance.pack import SYSTEM_PROMPT  # insurance resources: loaded only when serving that domain
    from toolroute.domains.insurance.scenarios import load_scenarios  # insurance resources: loaded only when serving that domain

    rules = SYSTEM_PROMPT.split("\n", 1)[1]  # the rules, without the persona line
    for scenario in load_scenarios():
        server.add_prompt(_scenario_prompt(scenario, rules))


# The server


def create_server(domain: str = "insurance", router_config: RouterConfig | None = None,
                  warm_router: bool = True) -> MCPServer:
    """The MCP server of one domain (see the module docstring). `warm_router`: start building the router
    in the background once the transport is up."""
    from toolroute.agent.pack import KNOWN_PACKS, load_pack  # builds the domain's tools: loaded when the server starts, not on import

    if domain not in KNOWN_PACKS:
        raise ValueError(f"unknown domain {domain!r}; one of {', '.join(KNOWN_PACKS)}")
    config = router_config or RouterConfig(catalog=str(toolcards_dir(domain)))
    holder = RouterHolder(config)
    pack = load_pack(domain)

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[dict[str, Any]]:
        if warm_router:
            holder.warm()
        yield {"router": holder}

    tools = [_route_tools_tool(holder)] + [DomainTool.of(t) for t in pack.tools]
    server = MCPServer(name=f"toolroute-{domain}", version=_version(), tools=tools, lifespan=lifespan,
                       resources=_card_resources(domain, config.catalog),
                       instructions=(f"Tools of the {pack.label or domain} domain. Call route_tools first to find "
                                     "the few tools a request needs, then call them."))
    server.router_holder = holder  # type: ignore[attr-defined]  # for tests and timing
    if domain == "insurance":
        _insurance_resources(server)
        _insurance_prompts(server)
    return server


def _version() -> str:
    try:
        return version("toolroute")
    except PackageNotFoundError:
        return "0"


def serve(domain: str = "insurance", transport: str = "stdio", host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
          router_config: RouterConfig | None = None) -> None:
    """Run the server until the client disconnects (stdio) or Ctrl-C: `http` serves streamable HTTP at
    `/mcp`, `sse` the older HTTP+SSE transport at `/sse` (clients that predate streamable HTTP)."""
    if transport not in TRANSPORTS:
        raise ValueError(f"unknown transport {transport!r}; one of {', '.join(TRANSPORTS)}")
    server = create_server(domain, router_config)
    if transport == "stdio":
        server.run("stdio")
    elif transport == "http":
        server.run("streamable-http", host=host, port=port)
    else:
        server.run("sse", host=host, port=port)

"""A domain pack: everything the one reusable agent graph needs to know about a domain.

The graph (`toolroute.agent.graph`) is domain-agnostic; a pack supplies the tools, where their
ToolCards live, the system prompt, how to read conversation context from a user turn (for the
query rewriter), what the output guardrail must remove, and the disclaimer. Each domain module
`toolroute.domains.<name>.pack` exposes `build_pack() -> DomainPack`; `load_pack(name)` finds it
(the domains there are: `toolroute.plugins.domain_names()`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from langchain_core.tools import BaseTool

from toolroute.cards import open_catalog
from toolroute.config import toolcards_dir
from toolroute.plugins import domain_module
from toolroute.cards.augment import AUGMENT_PROMPT
from toolroute.routing.rerank import RERANK_PROMPT

def _no_context(text: str, context: dict[str, Any]) -> dict[str, Any]:
    return dict(context)


def _render_context(context: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in context.items() if v not in (None, "", [], {}))


def _identity(text: str) -> str:
    return text


def _no_banned(text: str) -> list[dict[str, Any]]:
    return []


def _no_names(record: dict[str, Any]) -> list[str]:
    return []


def _no_graph(tool_name: str, result: Any) -> dict[str, list] | None:
    return None


def merge_graphs(a: dict[str, list] | None, b: dict[str, list] | None) -> dict[str, list]:
    """Seed 001's `kg_data` of a turn: the nodes (by id) and edges (by source, relation, target) of every
    graph a tool result showed, in order, each once."""
    nodes, edges = {}, {}
    for graph in (a or {}, b or {}):
        for node in graph.get("nodes", []):
            nodes.setdefault(node["id"], node)
        for edge in graph.get("edges", []):
            edges.setdefault((edge["source"], edge.get("relation"), edge["target"]), edge)
    return {"nodes": list(nodes.values()), "edges": list(edges.values())} if nodes else {}


def _no_sources(tool_name: str, result: Any) -> list[dict[str, Any]]:
    """Sources a tool result cites: RAG passages carry `source` (document + page)."""
    if not isinstance(result, dict):
        return []
    out = []
    for p in result.get("passages", []) or []:
        if isinstance(p, dict) and p.get("source"):
            out.append({"source": p["source"], "tool": tool_name})
    return out


@dataclass(frozen=True)
class PackResource:
    """A read-only document of the domain for other programs (served as an MCP resource). `read` returns
    JSON-able data; a `uri` with `{part}`s is a template whose parts `read` takes as keyword arguments,
    and raises LookupError (its message for the client) for a part that names nothing."""

    uri: str
    name: str
    description: str
    read: Callable[..., Any]


@dataclass(frozen=True)
class PackPrompt:
    """A ready-made request of the domain for other programs (served as an MCP prompt). `render(**arguments)`
    returns the text and the records (dicts with ids and names) it names, so that the server masks both
    alike; it raises LookupError for an argument that names nothing. Every argument is optional."""

    name: str
    title: str
    description: str
    arguments: tuple[tuple[str, str], ...]  # (name, description); a description may name `records`
    render: Callable[..., tuple[str, list[dict[str, Any]]]]
    records: tuple[dict[str, Any], ...] = ()  # the records the descriptions name


def _nothing() -> list:
    return []


@dataclass
class DomainPack:
    """One domain's tools and rules for the shared graph (see the module docstring)."""

    name: str
    tools: list[BaseTool]
    system_prompt: str
    catalog_dir: Path | None = None
    label: str = ""  # the domain in the user's words, for refusals ("보험 상담만 도와드릴 수 있습니다"); default: name
    # Prompts of the LLM helpers around the router (reranking candidates, writing card examples).
    rerank_prompt: str = RERANK_PROMPT
    augment_prompt: str = AUGMENT_PROMPT
    # In-domain example sentences for the L2 input guardrail (default: the cards' purpose and when_to_use).
    domain_examples: list[str] = field(default_factory=list)
    # (user text, context so far) -> updated context: customer, age, sex, products … (rules only).
    extract_context: Callable[[str, dict[str, Any]], dict[str, Any]] = _no_context
    # context -> a short Korean line the rewriter appends to a follow-up ("70세 남성, 상품: …").
    render_context: Callable[[dict[str, Any]], str] = _render_context
    # Output guardrail hooks.
    mask_text: Callable[[str], str] = _identity  # personal data
    remove_patterns: list[str] = field(default_factory=list)  # regexes of internal ids (product codes …)
    find_banned: Callable[[str], list[dict[str, Any]]] = _no_banned  # each hit has "matched", "alternative"
    # Keys that make a dict of a tool result a person's record (e.g. `customer_id`): its `name` is masked
    # in what a client sees of the result (`toolroute.agent.output_policy`).
    person_keys: tuple[str, ...] = ()
    # Other people's names a dict of a tool result holds outside such a record (e.g. the close names a
    # failed customer search suggests): masked like the records' names.
    names_in: Callable[[dict[str, Any]], list[str]] = _no_names
    # What the MCP server offers besides the tools and cards (built when a server asks: they may read data).
    resources: Callable[[], list[PackResource]] = _nothing
    prompts: Callable[[], list[PackPrompt]] = _nothing
    disclaimer: str | None = None
    disclaimer_markers: list[str] = field(default_factory=list)  # words showing the model wrote one already
    sources_of: Callable[[str, Any], list[dict[str, Any]]] = _no_sources
    # The knowledge-graph view of a tool result (seed 001's `kg_data`): {"nodes": [{"id", "name", "type"}],
    # "edges": [{"source", "target", "relation"}]}, or None; the page draws it under the answer.
    graph_of: Callable[[str, Any], dict[str, list] | None] = _no_graph
    # The ids and codes of the pack's data are what its users work with (a plant's equipment, part and alarm
    # ids), not internal keys: the output policy shows them (`agent.output_policy.internal_key` fields).
    ids_are_public: bool = False
    # Per context key of `extract_context` ("age", "sex", "customer", "products" …): a regex matching an answer
    # that asks the customer for it; the experiments count an answer asking for what the conversation gave.
    ask_patterns: dict[str, str] = field(default_factory=dict)
    # With AgentConfig.constrained_calls: the GBNF character class a text answer starts with ("": anything
    # but markup). A Korean pack gives Hangul and digits: kept from a call it wanted, a small model answers in English.
    answer_start: str = ""
    # Tool-result field names in the domain's words, for results shown as lines (AgentConfig.tool_result_format).
    result_labels: dict[str, str] = field(default_factory=dict)
    # Short referential follow-ups the rewriter must complete ("그거 얼마야?", "아버지").
    followup_markers: list[str] = field(default_factory=lambda: [
        "그거", "그건", "그게", "이거", "이건", "저거", "그럼", "그러면", "방금", "아까", "위에", "두 상품", "둘 다",
        "그 상품", "그 보험", "거기", "얼마", "어때",
    ])

    def __post_init__(self) -> None:
        self.label = self.label or self.name
        if self.catalog_dir is None:
            self.catalog_dir = toolcards_dir(self.name)
        names = [t.name for t in self.tools]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"pack {self.name!r}: tools defined twice: {duplicates}")
        for pattern in [*self.remove_patterns, *self.ask_patterns.values()]:
            re.compile(pattern)
        if not self.domain_examples and self.catalog_dir is not None and Path(self.catalog_dir).is_dir():
            catalog = open_catalog(self.catalog_dir)  # the effective cards: an edited card widens the domain too
            self.domain_examples = [e for card in catalog for e in (card.purpose, *card.when_to_use)]

    @property
    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def tool(self, name: str) -> BaseTool | None:
        return next((t for t in self.tools if t.name == name), None)


def load_pack(name: str) -> DomainPack:
    """The pack of domain `name` (its `pack.build_pack()`); a ValueError names the domains there are."""
    module = domain_module(name, "pack")
    pack = module.build_pack()
    if not isinstance(pack, DomainPack):
        raise TypeError(f"{module.__name__}.build_pack() must return a DomainPack")
    return pack


"""ToolRegistry: add, remove or reload tools in a running agent without a restart.

The agent reads its pack's tools, its router's catalogue and the router's indexes on every turn,
so changing those three in place is enough for the next turn to see a tool come or go. The dense
index is synced in place (`ToolIndex.sync`): registering embeds only the new card, unregistering
deletes the tool's vectors before it returns. Changes are serialised by a lock; readers always see
either the old or the new tool list, never a half-edited one (lists are replaced, not mutated).
"""

from __future__ import annotations

import difflib
import importlib
import sys
import threading
import time
from dataclasses import dataclass, field
from types import ModuleType

from langchain_core.tools import BaseTool

from toolroute.cards import Catalog, CatalogError, ToolCard, validate_catalog
from toolroute.routing import ToolRouter


class RegistryError(ValueError):
    """A registry request that cannot be carried out; nothing was changed."""


class UnknownModule(RegistryError):
    """A module that defines none of the registered tools (nothing was imported)."""


@dataclass
class RegistryChange:
    """What one call changed and what it cost."""

    action: str
    tools: list[str]
    records_embedded: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    gate_examples_embedded: int = 0


class ToolRegistry:
    """The tools of one running agent (`toolroute.agent.graph.Agent`) with their cards."""

    def __init__(self, agent):
        if not isinstance(agent.router, ToolRouter):
            raise RegistryError("the agent has no ToolRouter: build it with a router to add or remove tools at run time")
        self.agent = agent
        self.version = 0  # one more for every change (register, replace, unregister, reload)
        self._lock = threading.Lock()

    @property
    def names(self) -> list[str]:
        return self.agent.pack.tool_names

    def modules(self) -> dict[str, list[str]]:
        """The Python modules that define the registered tools, with the tools of each."""
        out: dict[str, list[str]] = {}
        for tool in self.agent.pack.tools:
            function = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
            module = getattr(function, "__module__", None) or type(tool).__module__
            out.setdefault(module, []).append(tool.name)
        return out

    def resolve_module(self, name: str) -> str:
        """`name` as a module of the registered tools: its full name, or its last part when only one
        module ends so (`premium` for `toolroute.domains.<name>.tools.premium`)."""
        modules = list(self.modules())
        if name in modules:
            return name
        matches = [m for m in modules if m.rsplit(".", 1)[-1] == name]
        if len(matches) == 1:
            return matches[0]
        raise UnknownModule(f"no registered tool is defined in a module '{name}'"
                            + (f" (it could be {', '.join(matches)})" if matches else f"; modules: {', '.join(modules)}"))

    def _unknown(self, name: str) -> RegistryError:
        close = difflib.get_close_matches(name, self.names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        return RegistryError(f"unknown tool '{name}' in pack '{self.agent.pack.name}'{hint}")

    def _apply(self, action: str, tools: list[BaseTool], catalog: Catalog, names: list[str],
               warnings: list[str] | None = None) -> RegistryChange:
        start = time.perf_counter()
        report = self.agent.router.update_catalog(catalog)
        gate, gate_embedded = self.agent.gate, 0
        if gate is not None:
            # The input gate judges "in domain" by the cards' wording: a new tool's requests must not
            # be refused as off-topic. Same threshold and anchors; the examples embedded here, not on
            # the next turn.
            examples = [text for card in catalog for text in (card.purpose, *card.when_to_use)]
            self.agent.gate, gate_embedded = gate.with_examples(examples)
        self.agent.pack.tools = tools
        for name in names:
            self.agent._schemas.pop(name, None)
        self.version += 1
        return RegistryChange(action, names, report["records_embedded"], time.perf_counter() - start, warnings or [],
                              gate_embedded)

    def register(self, tool: BaseTool, card: ToolCard, replace: bool = False) -> RegistryChange:
        """Add `tool` with its card (or replace a tool of the same name when `replace`)."""
        if not isinstance(tool, BaseTool):
            raise RegistryError(f"register() needs a LangChain tool, got {type(tool).__name__}")
        if card.name != tool.name:
            raise RegistryError(f"the card is named '{card.name}' but the tool '{tool.name}'")
        with self._lock:
            exists = tool.name in self.names
            if exists and not replace:
                raise RegistryError(f"tool '{tool.name}' is already registered (pass replace=True to swap it)")
            old = self.agent.router.catalog
            catalog = old.derived(cards={**old.cards, card.name: card}, sources=dict(old.sources), authored=False)
            # Symmetric confusions are an authoring rule for the YAML; at run time a new card may
            # point to a neighbour that does not point back yet.
            problems = [p for p in validate_catalog(catalog) if "not declared on both sides" not in p]
            if problems:
                raise CatalogError([f"{p} (tool not registered)" for p in problems])
            tools = [tool if t.name == tool.name else t for t in self.agent.pack.tools]
            if not exists:
                tools.append(tool)
            return self._apply("replace" if exists else "register", tools, catalog, [tool.name])

    def unregister(self, name: str) -> RegistryChange:
        """Remove a tool: its vectors are deleted before this returns; the next turn cannot route to it."""
        with self._lock:
            if name not in self.names:
                raise self._unknown(name)
            old = self.agent.router.catalog
            catalog = old.derived(cards={n: c for n, c in old.cards.items() if n != name}, sources=dict(old.sources),
                                  authored=False)
            pointing = [c.name for c in catalog if name in c.confusions()]
            warnings = [f"card '{c}' still says to use '{name}' in when_not_to_use" for c in pointing]
            tools = [t for t in self.agent.pack.tools if t.name != name]
            return self._apply("unregister", tools, catalog, [name], warnings)

    def reload_module(self, module: str | ModuleType) -> RegistryChange:
        """Re-import a tool module and swap in its new tool objects (same names, same cards).

        A module that fails to import leaves every tool as it was. New tool names in the module need
        a card: register them with `register`.
        """
        name = module if isinstance(module, str) else module.__name__
        with self._lock:
            try:
                loaded = importlib.reload(sys.modules[name]) if name in sys.modules else importlib.import_module(name)
            except Exception as exc:
                raise RegistryError(f"reloading {name} failed, tools unchanged: {type(exc).__name__}: {exc}") from exc
            fresh = getattr(loaded, "TOOLS", None)
            if fresh is None:
                fresh = [v for v in vars(loaded).values() if isinstance(v, BaseTool)]
            fresh_by_name = {t.name: t for t in fresh}
            swapped = [n for n in self.names if n in fresh_by_name]
            if not swapped:
                raise RegistryError(f"{name} defines none of the registered tools ({len(fresh_by_name)} tools found)")
            extra = sorted(set(fresh_by_name) - set(self.names))
            warnings = [f"{name} defines tools without a card, not registered: {', '.join(extra)}"] if extra else []
            tools = [fresh_by_name.get(t.name, t) for t in self.agent.pack.tools]
            start = time.perf_counter()
            self.agent.pack.tools = tools
            for n in swapped:
                self.agent._schemas.pop(n, None)
            self.version += 1
            return RegistryChange("reload", swapped, 0, time.perf_counter() - start, warnings)

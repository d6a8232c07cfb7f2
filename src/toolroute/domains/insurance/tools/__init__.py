"""The 54 insurance tools as LangChain tools, one module per spec module.

Each module exposes `TOOLS: list[BaseTool]`; `build_tools()` collects them and checks the names
against the contract so a missing or misspelled tool fails loudly at start-up, not mid-conversation.
"""

from __future__ import annotations

import importlib

from langchain_core.tools import BaseTool

from toolroute.domains.insurance import TOOL_MODULES, TOOL_NAMES


def build_tools() -> list[BaseTool]:
    """All 54 tools in contract order."""
    by_name: dict[str, BaseTool] = {}
    for module_name in TOOL_MODULES:
        module = importlib.import_module(f"{__name__}.{module_name}")
        for tool in module.TOOLS:
            if tool.name in by_name:
                raise ValueError(f"tool {tool.name!r} defined twice (module {module_name})")
            by_name[tool.name] = tool
    missing = [name for name in TOOL_NAMES if name not in by_name]
    unknown = sorted(set(by_name) - set(TOOL_NAMES))
    if missing or unknown:
        raise ValueError(f"insurance tools do not match the contract: missing {missing}, unknown {unknown}")
    return [by_name[name] for name in TOOL_NAMES]

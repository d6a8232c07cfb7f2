"""Domain packs: each names its tools (a contract) and where its cards and eval data live."""

from __future__ import annotations

from importlib import import_module


def tool_names(domain: str) -> list[str] | None:
    """The contract list of tool names of a domain, or None when the domain declares none."""
    try:
        module = import_module(f"toolroute.domains.{domain}")
    except ModuleNotFoundError:
        return None
    return list(getattr(module, "TOOL_NAMES", [])) or None

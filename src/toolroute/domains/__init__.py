"""Domain packs: each names its tools (a contract) and where its cards and eval data live."""

from toolroute.cards import domain_tool_names as tool_names

__all__ = ["tool_names"]

"""What an LLM call cost, whether the reply was generated now or replayed from disk."""

from __future__ import annotations


def call_seconds(reply, measured: float) -> float:
    """The seconds recorded with a saved reply (`response_metadata["seconds"]`), else the time measured now."""
    meta = getattr(reply, "response_metadata", None) or {}
    return float(meta["seconds"]) if "seconds" in meta else measured

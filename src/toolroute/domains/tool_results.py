"""The shapes every domain tool returns, so the agent and the tests read one format.

A tool never guesses a missing fact: it says what to ask (`needs_user_input`). Results are plain
JSON-serialisable dicts; LangChain turns them into the tool message the LLM reads.
"""

from __future__ import annotations

from typing import Any


def ok(**data: Any) -> dict[str, Any]:
    """A successful result; `data` holds the facts (Korean values, English keys)."""
    return {"status": "ok", **data}


def needs_user_input(missing: list[str], ask: str, **known: Any) -> dict[str, Any]:
    """A required argument is missing: name it (`missing`) and give the question to ask (`ask`, Korean)."""
    result: dict[str, Any] = {"status": "needs_user_input", "missing": list(missing), "ask": ask}
    if known:
        result["known"] = known
    return result


def not_found(what: str, value: Any, candidates: list[str] | None = None) -> dict[str, Any]:
    """The named product, rider, customer or code does not exist; offer close candidates when any."""
    result: dict[str, Any] = {"status": "not_found", "what": what, "value": value}
    if candidates:
        result["candidates"] = list(candidates)
    return result


def rejected(reason: str, **data: Any) -> dict[str, Any]:
    """The request is well formed but the rules say no (e.g. age outside the join ages)."""
    return {"status": "rejected", "reason": reason, **data}

"""Text compared without its white space: Korean spacing varies ("암 보험" / "암보험"), the facts do not."""

from __future__ import annotations

from typing import Any


def without_spaces(text: Any) -> str:
    """`text` (None reads as "") with every white-space character removed."""
    return "".join(("" if text is None else str(text)).split())


def folded(text: Any) -> str:
    """`without_spaces` in lower case: the key two spellings of one name share."""
    return without_spaces(text).lower()

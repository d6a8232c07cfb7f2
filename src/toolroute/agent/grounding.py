"""Arguments the conversation never gave: a small model's invented values, and a retry without them.

A 1.5B model fills optional parameters it has no value for: a customer id "1234567890", an age of 30,
a status filter nobody asked for. The tool then answers "not found" for a customer who exists, and
the turn fails although the right tool was called with the right name. `ungrounded` names the optional
arguments whose values appear nowhere in the turn's text (the question as rewritten with its context,
the earlier user turns, this turn's tool results); the agent option `retry_ungrounded` runs a call that
did not succeed once more without them and keeps the retry only when it succeeds, so a call that
succeeded is never touched and a legitimate value written in other words costs nothing.

A value is grounded when, spaces and punctuation aside, it occurs in the text, or every word of it
does ("갑상선암 진단" in "갑상선암으로 진단받았어요"); a number when the text holds it in digits,
with thousands separators or Korean units (1만원 = 10000, 3,000만원 = 30000000, 52세 = 52); a value
of the parameter's enum, a boolean, an object, and a required argument always count as given.
"""

from __future__ import annotations

import re
from typing import Any

_NUMBER = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(억|천만|백만|십만|만|천)?")
_UNITS = {"억": 1e8, "천만": 1e7, "백만": 1e6, "십만": 1e5, "만": 1e4, "천": 1e3}
_NOT_WORD = re.compile(r"[^0-9A-Za-z\uac00-\ud7a3]+")


def numbers_in(text: str) -> set[float]:
    """Every number `text` writes, as written and with its Korean unit applied (3,000만 → 3000, 30000000)."""
    found: set[float] = set()
    for digits, unit in _NUMBER.findall(text):
        value = float(digits.replace(",", ""))
        found.add(value)
        if unit:
            found.add(value * _UNITS[unit])
    return found


def _squashed(text: str) -> str:
    return _NOT_WORD.sub("", text).lower()


def _number_value(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d[\d,]*(\.\d+)?\s*", value):
        return float(value.replace(",", ""))
    return None


def is_grounded(value: Any, text: str, numbers: set[float] | None = None) -> bool:
    """Whether `value` (one argument's) is written in `text` (see the module docstring)."""
    if value is None or isinstance(value, (bool, dict)):
        return True
    numbers = numbers_in(text) if numbers is None else numbers
    number = _number_value(value)
    if number is not None:
        return number in numbers
    if isinstance(value, (list, tuple)):
        return all(is_grounded(v, text, numbers) for v in value)
    words = [w for w in _NOT_WORD.split(str(value).lower()) if w]
    squashed = _squashed(text)
    if not words:
        return False  # "", or punctuation only: no value at all
    return _squashed(str(value)) in squashed or all(w in squashed for w in words)


def ungrounded(args: dict[str, Any], schema: dict, text: str) -> list[str]:
    """The optional arguments of a call whose values `text` never gave, in the call's order. `schema`
    is the OpenAI tool schema bound for the tool (its `required` and `enum`s are respected)."""
    parameters = (schema.get("function") or schema).get("parameters") or {}
    required = set(parameters.get("required") or [])
    properties = parameters.get("properties") or {}
    numbers = numbers_in(text)
    names = []
    for name, value in args.items():
        enum = (properties.get(name) or {}).get("enum")
        if name in required or (enum and value in enum):
            continue
        if not is_grounded(value, text, numbers):
            names.append(name)
    return names


def succeeded(result: Any) -> bool:
    """A tool result that answered: not an error, a "not found" or a question back (`status` other than ok)."""
    return not (isinstance(result, dict) and result.get("status", "ok") != "ok")

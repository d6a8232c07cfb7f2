"""Arguments nobody gave: a small model's invented values, and a retry without them.

A 1.5B model fills optional parameters it has no value for: a customer id "1234567890", an age of 30,
a status filter nobody asked for. The tool then answers "not found" for a customer who exists, and
the turn fails although the right tool was called with the right name. `ungrounded` names the optional
arguments whose values appear nowhere in `given_text` (the user's turns, this one as rewritten with its
context, and the results of this turn's calls that succeeded; not the assistant's earlier answers nor
earlier turns' tool results); the agent option `retry_ungrounded` runs a call that failed (`failed`)
once more without them, when any argument is left, and keeps the retry only when it succeeds.

A value is grounded when, spaces and punctuation aside, it occurs in the text, or every word of it
does ("갑상선암 진단" in "갑상선암으로 진단받았어요"); a number (also "52세", "10000원") when the
text holds it in digits, with thousands separators or one Korean unit (1만원 = 10000, 3,000만원 =
30000000, 52세 = 52); a value of the parameter's enum, a boolean, an object and a required argument
always count as given. A value written in other words ("예순다섯" for 65) is not grounded: only a
failed call is retried, and only a successful retry is kept.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

_DIGITS = r"(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
_NUMBER = re.compile(_DIGITS + r"\s*(억|천만|백만|십만|만|천)?")
_NUMBER_VALUE = re.compile(r"\s*" + _DIGITS + r"\s*(억|천만|백만|십만|만|천)?\s*[가-힣%]{0,2}\s*")
_UNITS = {"억": 10**8, "천만": 10**7, "백만": 10**6, "십만": 10**5, "만": 10**4, "천": 10**3}
_NOT_WORD = re.compile(r"[^0-9A-Za-z\uac00-\ud7a3]+")
RETRIED = ("not_found", "needs_user_input", "error")  # not "rejected": the rules said no to what was given


def _value(digits: str, fraction: str, unit: str) -> set[float]:
    value = float(digits.replace(",", "") + fraction)
    return {value, round(value * _UNITS[unit], 6)} if unit else {value}


def numbers_in(text: str) -> set[float]:
    """Every number `text` writes, as written and with its Korean unit applied (3,000만 → 3000, 30000000)."""
    found: set[float] = set()
    for digits, fraction, unit in _NUMBER.findall(text):
        found |= _value(digits, fraction, unit)
    return found


def _number_values(value: Any) -> set[float] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return {float(value)}
    match = _NUMBER_VALUE.fullmatch(value) if isinstance(value, str) else None
    return _value(*match.groups(default="")) if match else None


def _squashed(text: str) -> str:
    return _NOT_WORD.sub("", text).lower()


def is_grounded(value: Any, text: str, numbers: set[float] | None = None) -> bool:
    """Whether `value` (one argument's) is written in `text` (see the module docstring)."""
    if value is None or isinstance(value, (bool, dict)):
        return True
    numbers = numbers_in(text) if numbers is None else numbers
    wanted = _number_values(value)
    if wanted is not None:
        return bool(wanted & numbers)
    if isinstance(value, (list, tuple)):
        return all(is_grounded(v, text, numbers) for v in value)
    words = [w for w in _NOT_WORD.split(str(value).lower()) if w]
    if not words:
        return False  # "", or punctuation only: no value at all
    squashed = _squashed(text)
    return _squashed(str(value)) in squashed or all(w in squashed for w in words)


def _enum(spec: dict) -> list:
    """A parameter's enum, also under `anyOf` (an optional Literal) or `items` (a list of them)."""
    for part in [spec, *spec.get("anyOf", []), spec.get("items") or {}]:
        if isinstance(part, dict) and part.get("enum"):
            return list(part["enum"])
    return []


def ungrounded(args: dict[str, Any], schema: dict, text: str) -> list[str]:
    """The optional arguments of a call whose values `text` never gave, in the call's order. `schema`
    is the OpenAI tool schema bound for the tool (its `required` and `enum`s are respected)."""
    parameters = (schema.get("function") or schema).get("parameters") or {}
    required = set(parameters.get("required") or [])
    properties = parameters.get("properties") or {}
    numbers = numbers_in(text)
    names = []
    for name, value in args.items():
        enum = _enum(properties.get(name) or {})
        listed = all(v in enum for v in value) if isinstance(value, list) else value in enum
        if name in required or (enum and listed):
            continue
        if not is_grounded(value, text, numbers):
            names.append(name)
    return names


def failed(result: Any) -> bool:
    """A tool result worth a retry: an error, a "not found" or a question back (`RETRIED`)."""
    return isinstance(result, dict) and result.get("status") in RETRIED


def succeeded(result: Any) -> bool:
    """A result that answered: no `status`, or `ok` (a retry that is rejected or asks back is not kept)."""
    return not isinstance(result, dict) or result.get("status", "ok") == "ok"


def given_text(users: Iterable[str], results: Iterable[Any]) -> str:
    """What the conversation gave: the user's turns and the results of calls that succeeded."""
    shown = [json.dumps(r, ensure_ascii=False, default=str) for r in results if not failed(r)]
    return "\n".join([*users, *shown])

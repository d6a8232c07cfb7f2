"""One output policy for every path a tool's data can leave by: the answer, streamed tokens, the
`tool_call` events and `/api/chat`'s tool calls, thread history, logs and MCP results.

The model reads the tools' raw results (it needs a customer id to look up that customer's contracts);
a client never does. What a client gets of a tool call is its arguments and result with:

- every field whose key names an internal id or code (`id`, `code`, `*_id`, `*_code`) masked but kept
  in place (`"customer_id": "C****"`): a caller that needs the structure still finds the field (unless
  the pack's ids are what its users work with, `DomainPack.ids_are_public`: a plant's equipment ids);
- the name in a person's record (a dict holding one of the pack's `person_keys`, e.g. `customer_id`),
  and the names the pack's `names_in` finds elsewhere (a failed search's close names), masked ("김*수")
  unless the user wrote them: a step shows how many customers matched, not who they are;
- every value masked above also masked wherever it appears in the result's text (a summary repeats
  the names and ids of its records);
- every string through the output guardrail's masking: personal data (`pack.mask_text`), the pack's
  internal ids and the tool names (`toolroute.agent.guardrails.redact`), the same functions the answer
  goes through. Banned sales phrases are not rewritten here: a compliance tool's result quotes them.
"""

from __future__ import annotations

import re
from typing import Any

from toolroute.agent.redaction import mask_values
from toolroute.agent.guardrails import redact
from toolroute.agent.pack import DomainPack

MASK = "*"


def internal_key(key: str) -> bool:
    """Keys of ids and codes a user must not see (`customer_id`, `product_code`, `id` …)."""
    return key in ("id", "code") or key.endswith(("_id", "_code", "_ids", "_codes"))


def mask_id(value: str) -> str:
    """An id with its first character kept and every other letter or digit starred ("C0002" → "C****",
    "B001-R01" → "B***-***"): the shape shows what kind of id it was, not which."""
    return value[:1] + re.sub(r"[A-Za-z0-9가-힣]", MASK, value[1:]) if value else value


def mask_name(name: str) -> str:
    """A person's name with the middle starred ("김민수" → "김*수", "이준" → "이*", "Kim" → "K**")."""
    name = name.strip()
    if len(name) <= 1:
        return MASK
    if len(name) == 2:
        return name[0] + MASK
    if re.fullmatch(r"[가-힣]{3,4}", name):
        return name[0] + MASK * (len(name) - 2) + name[-1]
    return name[0] + re.sub(r"\S", MASK, name[1:])


def sensitive_values(value: Any, pack: DomainPack, given: str = "") -> dict[str, str]:
    """The ids and person names a structured value holds, each with its mask (longest first); a name
    that appears in `given` (what the user wrote in this turn) is the user's own words and is kept."""
    found: dict[str, str] = {}

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            person = any(k in node for k in pack.person_keys)
            for key, item in node.items():
                if internal_key(str(key)) and not pack.ids_are_public:
                    for text in (item if isinstance(item, list) else [item]):
                        if isinstance(text, str) and len(text.strip()) >= 2:
                            found[text] = mask_id(text)
                elif (person and key == "name" and isinstance(item, str) and len(item.strip()) >= 2
                      and item.strip() not in given):
                    found[item] = mask_name(item)
                visit(item)
            for name in pack.names_in(node):
                if len(name.strip()) >= 2 and name.strip() not in given:
                    found[name] = mask_name(name)
        elif isinstance(node, (list, tuple)):
            for item in node:
                visit(item)

    visit(value)
    return dict(sorted(found.items(), key=lambda pair: len(pair[0]), reverse=True))


def mask_known(text: str, known: dict[str, str]) -> str:
    """`text` with each known value masked, also when spaced out or split by invisible characters."""
    return mask_values(text, known) if known else text


def guard_text(text: str, pack: DomainPack, known: dict[str, str] | None = None) -> str:
    """A string of a tool's data as a client may see it (see the module docstring)."""
    return redact(mask_known(text, known or {}), pack)


def _guard(node: Any, pack: DomainPack, known: dict[str, str], key: str = "") -> Any:
    if isinstance(node, dict):
        return {k: _guard(v, pack, known, str(k)) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_guard(item, pack, known, key) for item in node]
    if isinstance(node, str):
        if internal_key(key) and not pack.ids_are_public:
            return known.get(node) or mask_id(node)
        return guard_text(node, pack, known)
    return node


def known_values(values: Any, pack: DomainPack, given: str = "") -> dict[str, str]:
    """`sensitive_values` of several values together, longest first."""
    known: dict[str, str] = {}
    for value in values:
        known.update(sensitive_values(value, pack, given))
    return dict(sorted(known.items(), key=lambda pair: len(pair[0]), reverse=True))


def guard_tool_data(*values: Any, pack: DomainPack, given: str = "") -> list[Any]:
    """Each value (a call's arguments, its result …) as a client may see it; the ids and names found
    in any of them are masked in all of them (the arguments name the customer the result is about)."""
    known = known_values(values, pack, given)
    return [_guard(value, pack, known) for value in values]


def guard_tool_call(entry: dict[str, Any], pack: DomainPack, given: str = "") -> dict[str, Any]:
    """A `tool_log` entry (`name`, `args`, `result` …) with its arguments and result guarded."""
    args, result = guard_tool_data(entry.get("args") or {}, entry.get("result"), pack=pack, given=given)
    return {**entry, "args": args, "result": result}


def mask_tool_values(answer: str, tool_log: list[dict[str, Any]], pack: DomainPack, given: str = "") -> str:
    """The answer with the ids and person names of this turn's tool data masked (as the `tool_call`
    events show them), but for the names the user wrote: a model that copies another customer's name
    from a search result into its answer shows it masked."""
    known = known_values([part for entry in tool_log for part in (entry.get("args"), entry.get("result"))], pack, given)
    return mask_known(answer, known)


# --- the end of a stream -------------------------------------------------------------------------------

# A text that ends in digits (or Korean numerals) and separators may be the first part of a number that
# the masker would have caught whole ("…010-2841-77" when the model stopped or was stopped there).
_OPEN_TAIL = re.compile(r"(?<![,0-9０-９])[0-9０-９공영일이삼사오육칠팔구][0-9０-９공영일이삼사오육칠팔구 \t\-‐‑‒–—−.·/)(]*$")
# Worth a look: two groups of digits ("010-2841-77", "740809-152") or six in a row; a bare year or
# amount at the very end ("2024", "17950") is not the start of a phone or resident number.
_NUMBER_SHAPE = re.compile(r"[0-9０-９공영일이삼사오육칠팔구]+[^0-9０-９공영일이삼사오육칠팔구]+[0-9０-９공영일이삼사오육칠팔구]"
                           r"|[0-9０-９공영일이삼사오육칠팔구]{6}")
_TAIL_DIGIT = re.compile(r"[0-9０-９공영일이삼사오육칠팔구]")
_CONTEXT = 24  # characters before the tail that may hold the rest of the shape or its cue (생년월일 …)


def mask_open_tail(text: str, mask: Any) -> str:
    """`text` with the digits of its trailing number starred when more digits after it would make the
    `mask` function (the pack's personal-data masking) mask it: at the end of a stream the tail is
    masked as if more digits could follow, so a partial phone or resident number is never released."""
    found = _OPEN_TAIL.search(text)
    if not found or not _NUMBER_SHAPE.search(found.group(0)):
        return text
    window = text[max(0, found.start() - _CONTEXT):]
    alone = mask(window)
    for width in range(1, 14):
        pad = "0" * width
        if mask(window + pad) != alone + pad:
            return text[:found.start()] + _TAIL_DIGIT.sub(MASK, found.group(0))
    return text

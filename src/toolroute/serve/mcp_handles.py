"""What an MCP client sees of a tool's data: the output policy of `toolroute.agent.output_policy`, with
one change that keeps the tools usable by a client that chains calls.

The chat's client reads `"customer_id": "C****"`; an MCP client is another agent that passes the id of
one result into the next call (customer_search → customer_contract_lookup), so a mask would break it.
Here every internal id or code (a field whose key `internal_key` names: `customer_id`, `product_code`,
`id`, `code` …) becomes an opaque **handle** instead, `customer_qhvtzkemrbaw`: the key's kind, then 12
letters of an HMAC of the value under a secret drawn when the server starts. The server keeps the map
and turns a handle that comes back as an argument into the real id; the client never learns the id, and
cannot forge a handle for an id it has not been shown. The rest is the output policy as it is:

- the name in a person's record (`pack.person_keys`, e.g. a dict with `customer_id`) masked ("김*수");
- every id and name found anywhere in the data replaced (handle, mask) wherever it appears in a string
  (a summary repeats its records);
- every string through the output guardrail's `redact` (personal data, internal ids in free text),
  except that tool names stay: over MCP they are the public interface (`tools/list` names them and
  `route_tools` returns them).

Handles are letters only, so no personal-data or internal-id pattern (all need digits) can match one.
They last as long as the server process (one map for all of its sessions); at most `MAX_HANDLES`
distinct values are remembered, so a client sending made-up ids cannot grow the map without bound.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import logging
import re
import secrets
import threading
from typing import Any

from toolroute.agent.output_policy import guard_text, internal_key, mask_name
from toolroute.agent.pack import DomainPack

LOGGER = logging.getLogger("toolroute.serve.mcp")
HANDLE_LETTERS = 12
MAX_HANDLES = 100_000
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
HANDLE = re.compile(rf"(?<![A-Za-z0-9_])[a-z]+(?:_[a-z]+)*_[a-z]{{{HANDLE_LETTERS}}}(?![A-Za-z0-9_])")


class UnknownHandle(ValueError):
    """A handle-shaped id argument this server never issued (e.g. one from before a restart)."""


def kind_of(key: str) -> str:
    """The handle's prefix: the key without its id suffix (`customer_id` → customer), `ref` for `id`/`code`."""
    base = re.sub(r"_(?:ids?|codes?)$", "", key.lower())
    base = re.sub(r"[^a-z_]", "", base).strip("_")
    return "ref" if base in ("", "id", "ids", "code", "codes") else base


class Handles:
    """The per-process map between internal ids and handles, and the policy that applies it."""

    def __init__(self, pack: DomainPack, secret: bytes | None = None):
        self.pack = pack
        # tool names are not removed from strings over MCP (see the module docstring)
        self._text_pack = dataclasses.replace(pack, tools=[])
        self._secret = secret or secrets.token_bytes(32)
        self._value_of: dict[str, str] = {}  # handle → id
        self._handle_of: dict[tuple[str, str], str] = {}  # (kind, id) → handle
        self._first_handle: dict[str, str] = {}  # id → its first handle, any kind
        self._lock = threading.Lock()
        self._warned_full = False

    # --- the map -------------------------------------------------------------------------------------

    def _letters(self, value: str, attempt: int) -> str:
        digest = hmac.new(self._secret, f"{attempt}:{value}".encode("utf-8"), hashlib.sha256).digest()
        return "".join(_ALPHABET[b % 26] for b in digest[:HANDLE_LETTERS])

    def handle(self, value: str, key: str = "id") -> str:
        """The handle of `value` found under `key` (the same value always gets the same one)."""
        kind = kind_of(key)
        with self._lock:
            known = self._handle_of.get((kind, value))
            if known:
                return known
            for attempt in range(8):  # a collision of 12 letters (26^12) is only a formality
                handle = f"{kind}_{self._letters(value, attempt)}"
                if self._value_of.get(handle, value) == value:
                    break
            if len(self._value_of) >= MAX_HANDLES:
                if not self._warned_full:
                    LOGGER.warning("mcp: %d handles issued; new ids get handles that are not remembered", MAX_HANDLES)
                    self._warned_full = True
                return handle
            self._value_of[handle] = value
            self._handle_of[(kind, value)] = handle
            self._first_handle.setdefault(value, handle)
            return handle

    def issued(self, value: str) -> str | None:
        """A handle already issued for `value` (any kind), without issuing one."""
        with self._lock:
            return self._first_handle.get(value)

    def resolve(self, handle: str) -> str | None:
        """The real id behind a handle this server issued, else None."""
        with self._lock:
            return self._value_of.get(handle)

    def resolve_text(self, text: str) -> str:
        """`text` with every issued handle in it replaced by its real id (a handle inside a query)."""
        return HANDLE.sub(lambda m: self.resolve(m.group(0)) or m.group(0), text)

    def resolve_arguments(self, value: Any, key: str = "") -> Any:
        """Arguments as the tool needs them: handles back to real ids. A handle-shaped value of an id
        argument that this server never issued raises `UnknownHandle` (a real id is taken as it is)."""
        if isinstance(value, dict):
            return {k: self.resolve_arguments(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve_arguments(v, key) for v in value]
        if not isinstance(value, str):
            return value
        real = self.resolve(value.strip())
        if real is not None:
            return real
        if internal_key(key) and HANDLE.fullmatch(value.strip()):
            raise UnknownHandle(f"{key}: unknown handle {value.strip()!r} (handles last as long as the server "
                                "process; look the record up again)")
        return self.resolve_text(value)

    # --- the policy ----------------------------------------------------------------------------------

    def _collect(self, node: Any, known: dict[str, str], issue: bool) -> None:
        """Ids (→ handles) and person names (→ masks) in `node`; with `issue` False (the client's own
        arguments) only ids that already have a handle, so arguments cannot grow the map."""
        if isinstance(node, dict):
            person = any(k in node for k in self.pack.person_keys)
            for key, item in node.items():
                if internal_key(str(key)):
                    for text in (item if isinstance(item, list) else [item]):
                        if isinstance(text, str) and len(text.strip()) >= 2:
                            handle = self.handle(text, str(key)) if issue else self.issued(text)
                            if handle:
                                known[text] = handle
                elif person and key == "name" and isinstance(item, str) and len(item.strip()) >= 2:
                    known[item] = mask_name(item)
                self._collect(item, known, issue)
        elif isinstance(node, (list, tuple)):
            for item in node:
                self._collect(item, known, issue)

    def _apply(self, node: Any, known: dict[str, str], pattern: re.Pattern | None, key: str = "") -> Any:
        if isinstance(node, dict):
            return {k: self._apply(v, known, pattern, str(k)) for k, v in node.items()}
        if isinstance(node, (list, tuple)):
            return [self._apply(item, known, pattern, key) for item in node]
        if isinstance(node, str):
            if internal_key(key):
                return known.get(node) or self.handle(node, key)
            if pattern is not None:
                node = pattern.sub(lambda m: known[m.group(0)], node)
            return guard_text(node, self._text_pack)
        return node

    def guard(self, value: Any, arguments: dict[str, Any] | None = None) -> Any:
        """`value` (a tool result, a resource, a rendered prompt's data) as a client may see it; the ids
        and names of the call's real `arguments` are replaced in it too (a result about the customer asked for)."""
        known: dict[str, str] = {}
        self._collect(arguments or {}, known, issue=False)
        self._collect(value, known, issue=True)
        return self._apply(value, known, _known_pattern(known))


def _known_pattern(known: dict[str, str]) -> re.Pattern | None:
    """The known values, longest first, each matched whole where it meets ASCII letters or digits
    ("C0001은" holds C0001, "C00012" does not)."""
    if not known:
        return None

    def bounded(value: str) -> str:
        head = "(?<![A-Za-z0-9_])" if re.match(r"[A-Za-z0-9_]", value) else ""
        tail = "(?![A-Za-z0-9_])" if re.search(r"[A-Za-z0-9_]$", value) else ""
        return head + re.escape(value) + tail

    return re.compile("|".join(bounded(v) for v in sorted(known, key=len, reverse=True)))

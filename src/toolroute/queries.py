"""Eval-query files (the JSONL contract): loading with errors that name the file, line and id."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable


class QueryFileError(ValueError):
    """An eval-query file that cannot be used; the message names the file, line and id."""


HISTORY_ROLES = ("user", "assistant")
_JSON_TYPES = {dict: "an object", list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean",
               type(None): "null"}


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def history_problems(value: Any, where: str) -> list[str]:
    """What is wrong with a `history` value (the contract: a list of {"role": "user"|"assistant",
    "content": "…"} objects, oldest first); each problem names `where` and the field."""
    if not isinstance(value, list):
        return [f"{where}: 'history' must be a list of {{\"role\": \"user\"|\"assistant\", \"content\": \"…\"}} "
                f"objects, got {_json_type(value)}"]
    problems = []
    for i, message in enumerate(value):
        field_name = f"'history[{i}]'"
        if not isinstance(message, dict):
            problems.append(f"{where}: {field_name} must be an object with 'role' and 'content', got {_json_type(message)}")
            continue
        role, content = message.get("role"), message.get("content")
        if role not in HISTORY_ROLES:
            problems.append(f"{where}: {field_name}.role must be 'user' or 'assistant', got {role!r}")
        if not isinstance(content, str):
            problems.append(f"{where}: {field_name}.content must be a string, got {_json_type(content)}")
        elif role == "user" and not content.strip():  # an assistant turn may be empty (a failed reply)
            problems.append(f"{where}: {field_name}.content of a user turn must not be empty")
    return problems


def parse_history(value: Any, where: str) -> tuple[dict, ...]:
    """A checked history as `({"role", "content"}, …)`, or QueryFileError naming `where` and the field."""
    problems = history_problems(value, where)
    if problems:
        raise QueryFileError("invalid history:\n  - " + "\n  - ".join(problems))
    return tuple({"role": m["role"], "content": m["content"].strip()} for m in value)


@dataclass(frozen=True)
class EvalQuery:
    id: str
    query: str
    expected_tools: tuple[str, ...]
    kind: str = ""
    pair: tuple[str, ...] = ()
    history: tuple[dict, ...] = field(default=(), compare=False)

    @property
    def is_call(self) -> bool:
        return bool(self.expected_tools)


def load_queries(path: str | Path, known_tools: Iterable[str] | None = None) -> list[EvalQuery]:
    """Read a JSONL eval file; every problem is collected and reported with file, line and id."""
    path = Path(path)
    if not path.is_file():
        raise QueryFileError(f"{path}: no such query file")
    known = set(known_tools) if known_tools is not None else None
    rows, problems, seen = [], [], {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise QueryFileError(f"{path}: not UTF-8 text (byte {exc.start}): save the file as UTF-8") from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not valid JSON ({exc.msg})")
            continue
        if not isinstance(obj, dict):
            problems.append(f"{where}: expected a JSON object")
            continue
        qid = obj.get("id")
        where = f"{where} id '{qid}'"
        if not isinstance(qid, str) or not qid:
            problems.append(f"{where}: missing 'id'")
            continue
        if qid in seen:
            problems.append(f"{where}: duplicate id (first on line {seen[qid]})")
        seen[qid] = lineno
        query, expected = obj.get("query"), obj.get("expected_tools")
        if not isinstance(query, str) or not query.strip():
            problems.append(f"{where}: missing or empty 'query'")
            continue
        if not isinstance(expected, list) or not all(isinstance(t, str) for t in expected):
            problems.append(f"{where}: 'expected_tools' must be a list of tool names ([] for no call)")
            continue
        if known is not None:
            for tool in expected:
                if tool not in known:
                    problems.append(f"{where}: unknown tool '{tool}' in expected_tools")
        history = obj.get("history", [])
        found = history_problems(history, where)
        if found:
            problems.extend(found)
            continue
        rows.append(EvalQuery(qid, query.strip(), tuple(expected), str(obj.get("kind", "")),
                              tuple(obj.get("pair", ())), parse_history(history, where)))
    if problems:
        raise QueryFileError("invalid query file:\n  - " + "\n  - ".join(problems))
    if not rows:
        raise QueryFileError(f"{path}: no queries in file")
    return rows


def file_fingerprint(path: str | Path) -> str:
    """`name:sha256[:12]` of a file, to tie a fitted rule to the exact dev file it saw."""
    path = Path(path)
    return f"{path.name}:{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"

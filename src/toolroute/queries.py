"""Eval-query files (the JSONL contract): loading with errors that name the file, line and id."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable


class QueryFileError(ValueError):
    """An eval-query file that cannot be used; the message names the file, line and id."""


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
        rows.append(EvalQuery(qid, query.strip(), tuple(expected), str(obj.get("kind", "")),
                              tuple(obj.get("pair", ())), tuple(obj.get("history", ()))))
    if problems:
        raise QueryFileError("invalid query file:\n  - " + "\n  - ".join(problems))
    if not rows:
        raise QueryFileError(f"{path}: no queries in file")
    return rows


def file_fingerprint(path: str | Path) -> str:
    """`name:sha256[:12]` of a file, to tie a fitted rule to the exact dev file it saw."""
    path = Path(path)
    return f"{path.name}:{hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"

"""Rows of a long run kept on disk as they finish, so that an interrupted run loses nothing.

The step-limit sweep and the RAGAS runs take hours on the embedded model. Each finished row is
appended to a JSONL file (one line, flushed); a later run with the same `tag` (what the rows depend
on besides their key: the LLM, the agent settings) takes the rows it finds instead of running them
again. Rows written under another tag are ignored, so a changed model never mixes into a table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable


class RowCheckpoint:
    def __init__(self, path: str | Path | None, key_fields: Iterable[str], tag: str = ""):
        self.path = Path(path) if path else None
        self.key_fields = tuple(key_fields)
        self.tag = tag
        self._rows: dict[tuple, dict[str, Any]] = {}
        self.ignored = 0  # lines from another tag, or unreadable (a line cut by a kill)
        if self.path is not None and self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    self.ignored += 1
                    continue
                if record.get("tag") != tag or not isinstance(record.get("row"), dict):
                    self.ignored += 1
                    continue
                self._rows[self.key(record["row"])] = record["row"]

    def key(self, row: dict[str, Any]) -> tuple:
        return tuple(json.dumps(row.get(f), sort_keys=True, ensure_ascii=False, default=str) for f in self.key_fields)

    def get(self, **key: Any) -> dict[str, Any] | None:
        return self._rows.get(self.key(key))

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, row: dict[str, Any]) -> None:
        self._rows[self.key(row)] = row
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"tag": self.tag, "row": row}, ensure_ascii=False, default=str) + "\n")
            fh.flush()


def source_fingerprint() -> str:
    """A digest of the code and data a run depends on (src/toolroute, toolcards, data; not docs, not
    caches): part of a checkpoint's tag, so rows from before a code or data change are not reused."""
    import hashlib

    from toolroute.config import ROOT

    digest = hashlib.sha256()
    for folder in ["src/toolroute", "toolcards", "data"]:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                digest.update(str(path.relative_to(ROOT)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:12]

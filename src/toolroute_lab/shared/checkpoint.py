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
import ast
import importlib.util
import hashlib
import pkgutil
import sys
import toolroute.domains
from toolroute.config import ROOT


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


def _ours(name: str) -> bool:
    """A module of the library or of the lab (both can change a row)."""
    return name.split(".")[0] in ("toolroute", "toolroute_lab")


def _toolroute_imports(path: Path, module: str) -> set[str]:
    """Names of toolroute and toolroute_lab modules `path` imports anywhere (also inside functions), relative ones resolved."""

    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package
                for _ in range(node.level - 1):
                    parent = parent.rpartition(".")[0]
                base = f"{parent}.{base}" if base else parent
            names = [base] + [f"{base}.{a.name}" for a in node.names]  # `from X import Y` may name a module
        else:
            continue
        out.update(n for n in names if _ours(n))
    return out


# Modules that organise runs and cannot change a row: neither they nor what they import are digested, so
# that declaring an experiment (whose pre-run check imports its module) keeps every other one's rows.
NOT_DIGESTED = frozenset({"toolroute_lab.run.declared"})


def module_files(entries: Iterable[str]) -> list[Path]:
    """The source files of `entries` and of every toolroute module they can import, transitively
    (except `NOT_DIGESTED`)."""

    seen: set[str] = set()
    files: set[Path] = set()
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in seen or name in NOT_DIGESTED:
            continue
        seen.add(name)
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # `from module import function`: not a module
            continue
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        path = Path(spec.origin)
        files.add(path)
        todo.extend(_toolroute_imports(path, name))
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # parent packages run on import too
    return sorted(files)


def source_fingerprint(entries: Iterable[str] | None = None) -> str:
    """A digest of the code and data a run depends on: part of a checkpoint's tag, so rows from before
    a change that can affect them are not reused.

    Code: the toolroute and toolroute_lab modules loaded in this process (or `entries`), every domain pack, the agent
    and the embedded LLM server, and all toolroute modules they can import (found by reading their import statements, also
    those inside functions). Editing a module none of them imports (the card store, the scale
    experiment, the CLI, the experiments' declarations) keeps the rows. Data: every file under `toolcards/` and `data/`.
    """


    if entries is None:
        entries = [m for m in list(sys.modules) if _ours(m)]
    packs = [m.name for m in pkgutil.walk_packages(toolroute.domains.__path__, "toolroute.domains.")]
    # the embedded LLM server runs `python -m toolroute.llm.serve` in a subprocess: no import names it
    paths = module_files([*entries, *packs, "toolroute.agent", "toolroute.llm.serve"])
    for folder in ["toolcards", "data"]:
        paths.extend(p for p in sorted((ROOT / folder).rglob("*")) if p.is_file())
    digest = hashlib.sha256()
    for path in paths:
        label = path.relative_to(ROOT) if ROOT in path.parents else path.name
        digest.update(str(label).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]

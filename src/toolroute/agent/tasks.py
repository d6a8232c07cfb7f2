"""Multi-step agent tasks (`data/<domain>/tasks.yaml`): one question, the gold tool chain, the facts.

A task needs 0, 1, 2 or 3 tools. `gold_tools` is the chain in order (names from the domain's
contract); `args` optionally pins key arguments per step; `facts` are strings the final answer must
contain (any of a list counts: ["HIGH", "높음"]). The step-limit experiment runs every task under
every cap and scores completion = all gold tools called and all facts in the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolroute.config import ROOT


class TaskDataError(ValueError):
    """The task file is malformed; the message names the file, the task and the field."""


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    query: str
    gold_tools: list[str] = Field(default_factory=list, max_length=3)
    args: list[dict[str, Any]] = Field(default_factory=list)  # per gold step, the key arguments (optional)
    facts: list[str | list[str]] = Field(default_factory=list)  # each: a string, or alternatives
    note: str = ""

    @property
    def chain_length(self) -> int:
        return len(self.gold_tools)

    @model_validator(mode="after")
    def _args_match_steps(self) -> "Task":
        if self.args and len(self.args) != len(self.gold_tools):
            raise ValueError(f"args has {len(self.args)} entries for {len(self.gold_tools)} gold tools")
        return self

    def missing_facts(self, answer: str) -> list[str]:
        """Facts (or alternative groups) not found in `answer`."""
        missing = []
        for fact in self.facts:
            options = [fact] if isinstance(fact, str) else list(fact)
            if not any(option in answer for option in options):
                missing.append(" | ".join(options))
        return missing


def tasks_path(domain: str) -> Path:
    return ROOT / "data" / domain / "tasks.yaml"


def load_tasks(domain: str, path: str | Path | None = None, tool_names: list[str] | None = None) -> list[Task]:
    """Read and validate a domain's tasks; unknown tool names are errors when `tool_names` is given."""
    path = Path(path) if path else tasks_path(domain)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskDataError(f"{path}: task file is missing") from exc
    except yaml.YAMLError as exc:
        raise TaskDataError(f"{path}: not valid YAML: {exc}") from exc
    rows = raw.get("tasks") if isinstance(raw, dict) else None
    if not isinstance(rows, list) or not rows:
        raise TaskDataError(f"{path}: expected a non-empty 'tasks' list")
    tasks = []
    for index, row in enumerate(rows):
        label = row.get("id", index) if isinstance(row, dict) else index
        try:
            task = Task.model_validate(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "(record)"
            raise TaskDataError(f"{path}: task {label}: field '{field}': {first['msg']}") from exc
        if tool_names is not None:
            unknown = [t for t in task.gold_tools if t not in tool_names]
            if unknown:
                raise TaskDataError(f"{path}: task {task.id}: field 'gold_tools': unknown tool(s) {unknown}")
        tasks.append(task)
    ids = [t.id for t in tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise TaskDataError(f"{path}: duplicate task id(s) {duplicates}")
    return tasks

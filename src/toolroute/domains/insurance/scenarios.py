"""Multi-turn TMR scenarios (`data/insurance/scenarios.yaml`): per turn, the gold tool calls and facts.

A scenario is a consultation of four or so turns. Each turn names the tool calls a good agent makes
(tool name + the key arguments, with context from earlier turns already filled in: "아버지" → 남성),
the facts those calls must return (`facts`: strings found in the tool results), sums the answer must
state (`totals`: a result field added up over the turn's calls, e.g. three premiums) and phrases the
answer must never contain (`answer_must_not`). `replay_turn` runs a turn's gold calls against the real
tools, so the scenario file and the tools cannot drift apart; the agent experiments score the agent's
calls and answers against the same gold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolroute.config import ROOT
from toolroute.domains.insurance import TOOL_NAMES


class ScenarioDataError(ValueError):
    """The scenario file is malformed; the message names the file, the scenario, the turn and the field."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolCall(_Model):
    tool: str
    args: dict[str, Any] = {}
    status: str = "ok"  # the result status the call must return (ok / needs_user_input / rejected / not_found)

    @model_validator(mode="after")
    def _known_tool(self) -> "ToolCall":
        if self.tool not in TOOL_NAMES:
            raise ValueError(f"unknown tool name {self.tool!r}")
        return self


class Total(_Model):
    """The answer must state a sum: `field` of every call result in the turn, added up, equals `value`."""
    field: str
    value: int
    text: str  # how the answer states it, e.g. "301,800원"


class Turn(_Model):
    user: str
    context: str = ""  # what the earlier turns established (Korean, for people and the rewriter)
    expected_calls: list[ToolCall] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list)
    totals: list[Total] = Field(default_factory=list)
    answer_must_not: list[str] = Field(default_factory=list)
    needs_rag: bool = False  # the turn calls a rag tool (needs the document index)

    @model_validator(mode="after")
    def _rag_flag(self) -> "Turn":
        uses_rag = any(c.tool.startswith("rag_") for c in self.expected_calls)
        if uses_rag != self.needs_rag:
            raise ValueError("needs_rag must be true exactly when a rag tool is expected")
        return self


class Scenario(_Model):
    id: str
    title: str
    source: str  # "seed 002 5-2 #1" or "toolroute"
    customer_id: str | None = None
    turns: list[Turn] = Field(min_length=2)


class ScenarioFile(_Model):
    scenarios: list[Scenario] = Field(min_length=1)


def default_path() -> Path:
    return ROOT / "data" / "insurance" / "scenarios.yaml"


def load_scenarios(path: str | Path | None = None) -> list[Scenario]:
    """Read and validate the scenario file; errors name the scenario, turn and field."""
    path = Path(path) if path else default_path()
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ScenarioDataError(f"{path}: scenario file is missing") from exc
    except yaml.YAMLError as exc:
        raise ScenarioDataError(f"{path}: not valid YAML: {exc}") from exc
    try:
        parsed = ScenarioFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ScenarioDataError(f"{path}: {_where(raw, first['loc'])}: {first['msg']}") from exc
    ids = [s.id for s in parsed.scenarios]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ScenarioDataError(f"{path}: duplicate scenario id(s) {duplicates}")
    return list(parsed.scenarios)


def _where(raw: Any, loc: tuple) -> str:
    """'scenario S2 turn 3 field expected_calls.0.tool' from a pydantic error location."""
    parts = list(loc)
    out = []
    if len(parts) >= 2 and parts[0] == "scenarios" and isinstance(parts[1], int):
        try:
            sid = raw["scenarios"][parts[1]].get("id", parts[1])
        except (KeyError, IndexError, TypeError, AttributeError):
            sid = parts[1]
        out.append(f"scenario {sid}")
        parts = parts[2:]
        if len(parts) >= 2 and parts[0] == "turns" and isinstance(parts[1], int):
            out.append(f"turn {parts[1] + 1}")
            parts = parts[2:]
    out.append(f"field '{'.'.join(str(p) for p in parts) or '(record)'}'")
    return " ".join(out)


@dataclass
class TurnReplay:
    """What a turn's gold calls returned and which checks failed (empty `problems` = the turn holds)."""
    results: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def result_text(results: list[dict[str, Any]]) -> str:
    return json.dumps(results, ensure_ascii=False)


def sum_field(results: list[dict[str, Any]], name: str) -> int:
    """Add up every integer value stored under key `name` at the top level of each result."""
    return sum(int(r[name]) for r in results if isinstance(r.get(name), (int, float)))


def replay_turn(turn: Turn, tools: dict[str, Any]) -> TurnReplay:
    """Run a turn's expected calls against `tools` (name -> LangChain tool) and check its facts."""
    replay = TurnReplay()
    for call in turn.expected_calls:
        result = tools[call.tool].invoke(dict(call.args))
        replay.results.append(result)
        status = result.get("status") if isinstance(result, dict) else None
        if status != call.status:
            replay.problems.append(f"{call.tool}({call.args}) returned status {status!r}, expected {call.status!r}")
    text = result_text(replay.results)
    for fact in turn.facts:
        if fact not in text:
            replay.problems.append(f"fact {fact!r} not in the results")
    for total in turn.totals:
        got = sum_field(replay.results, total.field)
        if got != total.value:
            replay.problems.append(f"sum of {total.field!r} is {got}, expected {total.value} ({total.text})")
    return replay

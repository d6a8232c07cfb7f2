"""Card edits proposed by an LLM for the queries a router got wrong (seed 002 §7-2, failure analysis).

Failures are grouped by the tool that was expected; for each group (largest first) the LLM sees that
tool's card, the failing queries and the cards the router chose instead, and answers with one JSON
object `{"tool", "field": "when_to_use" | "when_not_to_use", "line"}`: one line to add to one card.
A reply that is not such an object, names a card unrelated to the group, repeats a line the card
has, or resembles an eval query (it would copy evaluation data into the card) becomes a proposal
marked `skipped` with the reason; nothing here raises on a bad reply or a failed LLM call.
Measuring a proposal's effect needs a router: `toolroute.evaluation.failure_analysis`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from langchain_core.messages import HumanMessage, SystemMessage

from toolroute.cards.model import NEAR_DUPLICATE, Catalog, ToolCard, near_duplicate, normalize_text

PROPOSAL_FIELDS = ("when_to_use", "when_not_to_use")
MAX_LINE_CHARS = 200
MAX_QUERIES_SHOWN = 8  # failing queries of a group put in the prompt
PROPOSAL_PROMPT = (
    "당신은 도구 라우터의 ToolCard를 고치는 운영자입니다. 라우터는 사용자 요청을 카드의 purpose와 when_to_use 예시에 "
    "비교해 도구를 고릅니다. 틀린 요청들을 보고, 카드 하나에 한 줄을 더해 고치세요: 기대한 도구의 when_to_use에 "
    "새 예시 문장(요청을 그대로 베끼지 말고 같은 상황을 다르게 표현), 또는 잘못 고른 도구의 when_not_to_use에 "
    "'상황 → 기대한_도구' 형식의 줄. 답은 JSON 객체 하나만 쓰세요: "
    '{"tool": "카드 이름", "field": "when_to_use" 또는 "when_not_to_use", "line": "더할 한 줄"}')


@dataclass(frozen=True)
class FailureGroup:
    """The failing queries that expected one tool, and the tools the router put first instead."""

    tool: str
    queries: tuple[str, ...]
    chosen: tuple[str, ...]  # most often chosen first


@dataclass
class CardProposal:
    """One line to add to one card, or why there is none (`skipped`)."""

    group: FailureGroup
    tool: str | None = None
    field: str | None = None
    line: str | None = None
    skipped: str | None = None
    reply: str = ""  # the LLM's answer, kept to judge a skip
    skip_code: str | None = None  # the reason's kind (SKIP_CODES), for a page that says it in its own language

    @property
    def changes(self) -> dict[str, Any]:
        """The edit in the card store's terms (`+field` appends), as `PUT /api/tools/{tool}/card` takes it
        once applied to the current card."""
        return {f"+{self.field}": self.line}

    def diff(self) -> list[str]:
        """The change in the shape of `GET /api/tools/{name}/diff`."""
        return [] if self.skipped else [f"{self.tool}.{self.field}", f"  + {self.line}"]

    def to_dict(self) -> dict[str, Any]:
        return {"expected_tool": self.group.tool, "failures": list(self.group.queries), "chosen": list(self.group.chosen),
                "tool": self.tool, "field": self.field, "line": self.line, "diff": self.diff(), "skipped": self.skipped,
                "skip_code": self.skip_code, "reply": self.reply[:500]}


def group_failures(failures: Iterable[dict]) -> list[FailureGroup]:
    """Failures (`{"query", "expected", "got"}`) by each expected tool missing from the top; largest
    group first. No-call rows (nothing expected) are left out: no card line is proposed for them."""
    queries: dict[str, list[str]] = {}
    chosen: dict[str, Counter] = {}
    for row in failures:
        expected, got = list(row.get("expected") or ()), list(row.get("got") or ())
        for tool in expected:
            if tool in got[:len(expected)] and not row.get("no_call_predicted"):
                continue
            queries.setdefault(tool, []).append(row["query"])
            chosen.setdefault(tool, Counter()).update(t for t in got[:1] if t not in expected)
    groups = [FailureGroup(tool, tuple(qs), tuple(t for t, _ in chosen[tool].most_common())) for tool, qs in queries.items()]
    return sorted(groups, key=lambda g: (-len(g.queries), g.tool))


def _card_text(card: ToolCard, examples: int | None = None) -> list[str]:
    lines = [f"[{card.name}] {card.purpose}"]
    lines += [f"  when_to_use: {e}" for e in card.when_to_use[:examples]]
    lines += [f"  when_not_to_use: {e}" for e in card.when_not_to_use]
    return lines


def proposal_prompt(group: FailureGroup, catalog: Catalog, system: str = PROPOSAL_PROMPT) -> list:
    lines = ["기대한 도구의 카드:", *_card_text(catalog.cards[group.tool]), "",
             f"이 도구가 1위여야 했는데 틀린 요청 ({len(group.queries)}개):"]
    lines += [f"- {q}" for q in group.queries[:MAX_QUERIES_SHOWN]]
    others = [catalog.cards[t] for t in group.chosen if t in catalog]
    if others:
        lines += ["", "라우터가 대신 고른 도구의 카드:"]
        for card in others[:3]:
            lines += _card_text(card, examples=5)
    lines += ["", f'JSON 객체 하나로 답하세요: {{"tool": "...", "field": "when_to_use" 또는 "when_not_to_use", "line": "..."}}']
    return [SystemMessage(system), HumanMessage("\n".join(lines))]


def parse_reply(text: str) -> dict | None:
    """The first JSON object in `text` (models wrap it in prose or code fences), else None."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


SKIP_CODES = {  # the start of each reason `check_proposal` gives -> its kind
    "the reply holds no JSON object": "no_json",
    "the JSON object needs": "bad_values",
    "no card named": "unknown_card",
    "is neither the expected tool": "wrong_tool",
    "cannot be proposed": "bad_field",
    "the line is empty or over": "bad_length",
    "the card already has this line": "already_there",
    "the line resembles an eval query": "like_eval",
}


def skip_code(reason: str | None) -> str | None:
    """The kind of a skip reason (SKIP_CODES), "other" for a reason of no known kind, None for no skip."""
    if reason is None:
        return None
    return next((code for text, code in SKIP_CODES.items() if text in reason), "other")


def check_proposal(value: dict | None, group: FailureGroup, catalog: Catalog, guarded: Sequence[str] = (),
                   threshold: float = NEAR_DUPLICATE) -> tuple[str | None, str | None, str | None, str | None]:
    """(tool, field, line, None) for a usable proposal, else (…, the reason it is skipped)."""
    if value is None:
        return None, None, None, "the reply holds no JSON object"
    tool, fname, line = value.get("tool"), value.get("field"), value.get("line")
    if not all(isinstance(v, str) for v in (tool, fname, line)):
        return None, None, None, "the JSON object needs string values for 'tool', 'field' and 'line'"
    tool, fname, line = tool.strip(), fname.strip(), " ".join(line.split())
    if tool not in catalog:
        return tool, fname, line, f"no card named '{tool}'"
    if tool != group.tool and tool not in group.chosen:
        return tool, fname, line, f"'{tool}' is neither the expected tool ({group.tool}) nor one the router chose instead"
    if fname not in PROPOSAL_FIELDS:
        return tool, fname, line, f"field '{fname}' cannot be proposed (one of {', '.join(PROPOSAL_FIELDS)})"
    if not line or len(line) > MAX_LINE_CHARS:
        return tool, fname, line, f"the line is empty or over {MAX_LINE_CHARS} characters"
    if line in getattr(catalog.cards[tool], fname):
        return tool, fname, line, f"the card already has this line in {fname}"
    norm = normalize_text(line)
    if any(near_duplicate(norm, q, threshold) for q in guarded):
        return tool, fname, line, "the line resembles an eval query: adding it would copy evaluation data into the card"
    return tool, fname, line, None


def propose_edits(llm, catalog: Catalog, failures: Iterable[dict], max_proposals: int = 3,
                  guard_queries: Iterable[str] = (), system: str = PROPOSAL_PROMPT) -> list[CardProposal]:
    """One proposal per failure group, for the `max_proposals` largest groups (one LLM call each).
    `guard_queries`: texts a proposed line must not resemble (every split's eval queries)."""
    guarded = [normalize_text(q) for q in guard_queries]
    proposals = []
    for group in group_failures(failures)[:max_proposals]:
        if group.tool not in catalog:
            proposals.append(CardProposal(group, skipped=f"no card named '{group.tool}' in the live catalogue",
                                          skip_code="unknown_card"))
            continue
        try:
            reply = llm.invoke(proposal_prompt(group, catalog, system))
        except Exception as exc:  # noqa: BLE001 - one failed call skips one proposal, never the analysis
            proposals.append(CardProposal(group, skipped=f"the LLM call failed: {type(exc).__name__}: {exc}",
                                          skip_code="llm_failed"))
            continue
        text = str(getattr(reply, "content", reply))
        tool, fname, line, reason = check_proposal(parse_reply(text), group, catalog, guarded)
        proposals.append(CardProposal(group, tool, fname, line, reason, text, skip_code(reason)))
    return proposals

"""Synthetic when_to_use examples per card, written by an LLM and filtered against leakage.

Re-Invoke (Chen et al., 2024) enlarges each tool document with queries an LLM imagines users asking.
Here the LLM sees one card (purpose, examples, when_not_to_use) and writes new Korean utterances as
a JSON list. Each candidate is kept only if it is new (not a near-duplicate of any example of any
card, nor of another candidate) and does not resemble any eval query of any split (the same
normalised near-duplicate test as the leakage check), so the augmented cards cannot leak the
test set. Every drop is counted by reason; a reply that is not a JSON list counts as a failure.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from langchain_core.messages import HumanMessage, SystemMessage
from tqdm.auto import tqdm

from toolroute.cards.model import NEAR_DUPLICATE, Catalog, ToolCard, near_duplicate, normalize_text
from toolroute.llm.replies import call_seconds

# Domain-neutral; a DomainPack names its own (`augment_prompt`), in its users' words.
AUGMENT_PROMPT = ("당신은 상담 데이터를 만드는 작가입니다. 사용자가 실제로 말할 법한 짧은 한국어 요청 문장을 씁니다. "
                  "답은 JSON 문자열 배열 하나만 쓰세요.")
MAX_CHARS = 80
_JSON_LIST = re.compile(r"\[.*\]", re.S)


def prompt(card: ToolCard, n: int, system: str = AUGMENT_PROMPT) -> list:
    lines = [f"도구 설명: {card.purpose}", "이미 있는 예시:"]
    lines += [f"- {e}" for e in card.when_to_use]
    if card.when_not_to_use:
        lines.append("이 도구를 쓰지 않는 경우:")
        lines += [f"- {e}" for e in card.when_not_to_use]
    lines.append(f"위 도구가 필요한 새 요청 문장을 {n}개 쓰세요. 예시와 다른 표현·상품·상황을 쓰고, 쓰지 않는 경우는 피하세요. "
                 f'형식: ["문장1", "문장2", ...]')
    return [SystemMessage(system), HumanMessage("\n".join(lines))]


def parse_list(text: str) -> list[str] | None:
    """The first JSON list of strings in `text` (models wrap it in prose or code fences), else None."""
    match = _JSON_LIST.search(text or "")
    if not match:
        return None
    try:
        items = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    if not isinstance(items, list):
        return None
    return [str(i).strip() for i in items if isinstance(i, (str, int, float)) and str(i).strip()]


@dataclass
class AugmentReport:
    """What each card gained, what was dropped and why, and what it cost."""

    added: dict[str, list[str]] = field(default_factory=dict)
    dropped: Counter = field(default_factory=Counter)  # reason -> count
    failures: list[str] = field(default_factory=list)  # cards whose reply was not a JSON list
    seconds: float = 0.0
    llm_calls: int = 0

    def summary(self) -> dict[str, Any]:
        return {"cards": len(self.added), "examples_added": sum(len(v) for v in self.added.values()),
                "llm_calls": self.llm_calls, "parse_failures": len(self.failures), "seconds": round(self.seconds, 1),
                **{f"dropped_{k}": v for k, v in sorted(self.dropped.items())}}


def augment(catalog: Catalog, llm, per_card: int = 5, eval_queries: Iterable[str] = (),
            names: Sequence[str] | None = None, threshold: float = NEAR_DUPLICATE,
            progress: bool = True, system: str = AUGMENT_PROMPT) -> tuple[Catalog, AugmentReport]:
    """The catalogue with up to `per_card` LLM-written examples added to each card (see module doc)."""
    start = time.perf_counter()
    report = AugmentReport()
    guarded = [normalize_text(q) for q in eval_queries]
    known = [normalize_text(e) for card in catalog for e in card.when_to_use]
    cards = dict(catalog.cards)
    replay_offset = 0.0  # a replayed reply (SavedReplies) costs what its original call cost
    for name in tqdm(list(names or catalog.names), desc="augmenting cards", unit="card", disable=not progress):
        card = cards[name]
        call_start = time.perf_counter()
        reply = llm.invoke(prompt(card, per_card, system))
        measured = time.perf_counter() - call_start
        replay_offset += call_seconds(reply, measured) - measured
        report.llm_calls += 1
        items = parse_list(getattr(reply, "content", reply))
        if items is None:
            report.failures.append(name)
            continue
        kept = []
        for text in items[: per_card * 2]:
            norm = normalize_text(text)
            if not norm or len(text) > MAX_CHARS:
                report.dropped["empty_or_long"] += 1
            elif any(near_duplicate(norm, q, threshold) for q in guarded):
                report.dropped["like_an_eval_query"] += 1
            elif any(near_duplicate(norm, k, threshold) for k in known):
                report.dropped["like_an_existing_example"] += 1
            else:
                kept.append(text)
                known.append(norm)
            if len(kept) == per_card:
                break
        report.added[name] = kept
        if kept:
            cards[name] = card.model_copy(update={"when_to_use": (*card.when_to_use, *kept)})
    report.seconds = time.perf_counter() - start + replay_offset
    return catalog.derived(name=f"{catalog.name}-aug", cards=cards, sources=dict(catalog.sources)), report

"""A second routing stage: the LLM reads the top candidates' cards and reorders them.

The first stage (any routing arm) is cheap and recall-oriented; the reranker spends one LLM call
per query to fix the order of the head. The LLM answers with candidate numbers, best first; a reply
that cannot be parsed keeps the first-stage order and is counted, never guessed. Tools the LLM
leaves out keep their first-stage order after the ones it picked.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Sequence

from langchain_core.messages import HumanMessage, SystemMessage
from tqdm.auto import tqdm

from toolroute.cards import Catalog
from toolroute.llm.replies import call_seconds
from toolroute.routing.router import RouteResult

# Domain-neutral; a DomainPack names its own (`rerank_prompt`).
RERANK_PROMPT = ("당신은 도구 선택기입니다. 요청에 맞는 도구 번호를 잘 맞는 순서대로 JSON 배열로만 답하세요. "
                 "맞는 도구가 없으면 []로 답하세요.")
_NUMBERS = re.compile(r"\[[\d,\s]*\]")


@dataclass
class RerankStats:
    queries: int = 0
    parse_failures: int = 0
    empty_answers: int = 0
    seconds: float = 0.0
    per_query_seconds: list[float] = field(default_factory=list)


class LLMReranker:
    """Reorders the first `candidates` tools of a RouteResult with one LLM call."""

    def __init__(self, llm, catalog: Catalog, candidates: int = 8, purpose_chars: int = 90,
                 system: str = RERANK_PROMPT):
        self.llm, self.catalog, self.candidates, self.purpose_chars = llm, catalog, candidates, purpose_chars
        self.system = system
        self.stats = RerankStats()

    def messages(self, query: str, names: Sequence[str]) -> list:
        lines = [f"요청: {query}", "도구 후보:"]
        for i, name in enumerate(names, start=1):
            purpose = self.catalog.cards[name].purpose if name in self.catalog else name
            lines.append(f"{i}. {name}: {purpose[: self.purpose_chars]}")
        lines.append("답 형식 예: [2, 1]")
        return [SystemMessage(self.system), HumanMessage("\n".join(lines))]

    @staticmethod
    def parse(text: str, n: int) -> list[int] | None:
        """Zero-based candidate positions from the first `[…]` of numbers, in order, without repeats."""
        match = _NUMBERS.search(text or "")
        if not match:
            return None
        try:
            numbers = json.loads(match.group(0))
        except json.JSONDecodeError:
            return None
        out = []
        for x in numbers:
            if isinstance(x, int) and 1 <= x <= n and x - 1 not in out:
                out.append(x - 1)
        return out

    def rerank(self, result: RouteResult) -> RouteResult:
        start = time.perf_counter()
        head = result.ranked[: self.candidates]
        call_start = time.perf_counter()
        reply = self.llm.invoke(self.messages(result.query, [n for n, _ in head]))
        measured = time.perf_counter() - call_start
        order = self.parse(getattr(reply, "content", reply), len(head))
        self.stats.queries += 1
        if order is None:
            self.stats.parse_failures += 1
            order = []
        elif not order:
            self.stats.empty_answers += 1
        picked = [head[i] for i in order] + [t for i, t in enumerate(head) if i not in order]
        seconds = time.perf_counter() - start - measured + call_seconds(reply, measured)  # a replay costs its original
        self.stats.per_query_seconds.append(seconds)
        self.stats.seconds += seconds
        return RouteResult(result.query, picked + result.ranked[self.candidates:], result.no_call,
                           result.call_probability, dict(result.features))

    def rerank_many(self, results: Sequence[RouteResult], progress: bool = True) -> list[RouteResult]:
        return [self.rerank(r) for r in tqdm(results, desc="LLM rerank", unit="q", disable=not progress)]

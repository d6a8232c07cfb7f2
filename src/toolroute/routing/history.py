"""Routing a follow-up turn with the conversation before it (the query contract's `history`).

"그럼 보험료는요?" or "아버지 기준으로도 돼요?" alone names no product and often no task; the turns
before it do. Four arms, each a way of turning (turn, history) into what the router ranks:

- `none`: the turn alone (what every row without history gets, whatever the arm).
- `carry`: the turn as the agent routes it: a domain pack's rules append the context the earlier user
  turns established (customer, age, sex, products …; `toolroute.agent.rewriter.carry_history`). It
  needs a pack, so it is given as a function (`carry`) by the caller above this layer.
- `weighted`: generic, no domain rules: the turn plus the earlier user turns (and optionally the last
  assistant reply) as one query of weighted texts: dense ranks with the weighted mean of their
  vectors, BM25 with the weighted sum of their scores (`Retriever.rank_weighted`). Works on any
  catalogue, OpenAI schemas included.
- `carry+weighted`: the carried turn in place of the turn, then weighted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal, Sequence

from toolroute.routing.base import WeightedQuery
from toolroute.routing.router import RouteResult, ToolRouter

HISTORY_ARMS: tuple[str, ...] = ("none", "carry", "weighted", "carry+weighted")
# What `auto` means: chosen on data/insurance/queries/dialog_dev.jsonl (results/dialog_weighting_grid.csv,
# docs/results.md): there `carry` did worse than the turn alone and `carry+weighted` worse than
# `weighted`. A catalogue without a domain pack would drop a carry part.
DEFAULT_HISTORY_ARM = "weighted"

# (turn, history) -> the turn with the context the history established (a domain pack's rules).
Carry = Callable[[str, Sequence[dict]], str]


@dataclass(frozen=True)
class HistoryWeighting:
    """How the weighted arm mixes the turn with what came before it (defaults chosen on dialog_dev).

    The turn gets `turn_weight`; the last assistant reply `assistant_weight`; the `user_turns` most
    recent earlier user turns share the rest, each `decay` times the weight of the one after it.
    `no_call_from`: the no-call rule reads the mixed evidence (`mix`) or the turn's own (`turn`:
    small talk after a consultation is not pulled towards the consultation's tools)."""

    turn_weight: float = 0.8
    user_turns: int = 2
    decay: float = 0.5
    assistant_weight: float = 0.15
    no_call_from: Literal["mix", "turn"] = "mix"

    def __post_init__(self):
        if not 0 < self.turn_weight <= 1:
            raise ValueError(f"turn_weight must be in (0, 1], got {self.turn_weight}")
        if not 0 <= self.assistant_weight < 1 or self.turn_weight + self.assistant_weight > 1:
            raise ValueError(f"assistant_weight must be in [0, 1 - turn_weight], got {self.assistant_weight}")
        if self.user_turns < 0 or not 0 < self.decay <= 1:
            raise ValueError(f"user_turns must be >= 0 and decay in (0, 1], got {self.user_turns}, {self.decay}")
        if self.no_call_from not in ("mix", "turn"):
            raise ValueError(f"no_call_from must be 'mix' or 'turn', got '{self.no_call_from}'")

    def texts(self, turn: str, history: Sequence[dict]) -> list[tuple[str, float]]:
        """The weighted texts of one query, the turn first; weights sum to 1."""
        earlier = [m["content"] for m in history if m["role"] == "user" and m["content"].strip()]
        earlier = earlier[::-1][:self.user_turns]  # most recent first
        replies = [m["content"] for m in history if m["role"] == "assistant" and m["content"].strip()]
        parts = [(turn, self.turn_weight)]
        if replies and self.assistant_weight > 0:
            parts.append((replies[-1], self.assistant_weight))
        rest = 1.0 - sum(w for _, w in parts)
        if earlier and rest > 0:
            shares = [self.decay ** i for i in range(len(earlier))]
            parts += [(text, rest * s / sum(shares)) for text, s in zip(earlier, shares)]
        total = sum(w for _, w in parts)
        return [(text, w / total) for text, w in parts]


@dataclass
class HistoryRouting:
    """One history arm; `route_many` routes (turn, history) pairs with it. Pairs without history are
    routed as the turn alone, exactly as `ToolRouter.route_many` does, whatever the arm."""

    arm: str = "none"
    carry: Carry | None = None
    weighting: HistoryWeighting = field(default_factory=HistoryWeighting)

    def __post_init__(self):
        if self.arm not in HISTORY_ARMS:
            raise ValueError(f"history arm must be one of {', '.join(HISTORY_ARMS)} (or auto), got '{self.arm}'")
        if "carry" in self.arm and self.carry is None:
            raise ValueError(f"history arm '{self.arm}' needs a domain pack's context rules, and this catalogue has "
                             f"none (a toolcards/<domain> folder of a known pack has them): use 'weighted'")

    def route(self, router: ToolRouter, turn: str, history: Sequence[dict] = ()) -> RouteResult:
        return self.route_many(router, [(turn, history)])[0]

    def route_many(self, router: ToolRouter, rows: Sequence[tuple[str, Sequence[dict]]]) -> list[RouteResult]:
        results: list[RouteResult | None] = [None] * len(rows)
        plain = [i for i, (_, history) in enumerate(rows) if not history]
        if plain:
            for i, result in zip(plain, router.route_many([rows[i][0] for i in plain])):
                results[i] = result
        followups = [i for i, (_, history) in enumerate(rows) if history]
        if followups:
            for i, result in zip(followups, self._route_followups(router, [rows[i] for i in followups])):
                results[i] = result
        return results  # type: ignore[return-value]

    def _route_followups(self, router: ToolRouter, rows: Sequence[tuple[str, Sequence[dict]]]) -> list[RouteResult]:
        texts = [self.carry(turn, history) if "carry" in self.arm else turn for turn, history in rows]
        if "weighted" not in self.arm:
            results = router.route_many(texts)
            mixes: list[WeightedQuery] = [[(text, 1.0)] for text in texts]
        else:
            mixes = [self.weighting.texts(text, history) for text, (_, history) in zip(texts, rows)]
            results = router.route_weighted(mixes)
            if self.weighting.no_call_from == "turn":
                for result, alone in zip(results, router.route_many(texts)):
                    result.no_call, result.call_probability = alone.no_call, alone.call_probability
        for result, (turn, history), mix in zip(results, rows, mixes):
            result.query = turn
            result.history = {"arm": self.arm, "turns": len(history), "routed": [[t, round(w, 4)] for t, w in mix]}
        return results


def resolve_history_arm(requested: str, has_carry: bool) -> str:
    """`auto` → the default arm, without its carry part when the catalogue has no domain pack."""
    arm = DEFAULT_HISTORY_ARM if requested == "auto" else requested
    if requested == "auto" and not has_carry:
        arm = {"carry": "weighted", "carry+weighted": "weighted"}.get(arm, arm)
    return arm

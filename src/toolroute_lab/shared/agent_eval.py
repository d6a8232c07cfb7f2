"""Scoring the agent on the multi-turn scenarios: per turn, the tools called against the gold calls,
whether the required facts reach the answer, tokens, LLM calls and latency.

A turn passes when every gold tool name was called and every fact (and every total's text) appears in
the final answer, with none of the forbidden phrases (`answer_must_not`) and without asking again for
a fact the customer already gave (seed 002, 5-2: "같은 정보를 다시 요구하지 말고"): `reasked_facts`
reads what the conversation's user turns established with the pack's `extract_context` (a named
customer brings the age and sex of the record) and finds the answer asking for it with the pack's
`ask_patterns`. Facts are checked in the answer, not in the tool results: the tools are tested
elsewhere; here the question is whether the agent carries them through.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from typing import Any, Iterable

import pandas as pd

from toolroute.domains.insurance.scenarios import Scenario
from tqdm.auto import tqdm
import statistics
from langchain_core.utils.function_calling import convert_to_openai_tool
from toolroute.agent.graph import Agent, AgentConfig
from toolroute.llm.tokens import PromptCounter
from toolroute.text import without_spaces


def fact_in(fact: str, answer: str) -> bool:
    """A fact is in the answer when it appears ignoring spaces ("301,800원" == "301,800 원")."""
    return without_spaces(fact) in without_spaces(answer)


def known_context(user_turns: Iterable[str], pack: Any) -> dict[str, Any]:
    """What the customer's turns established, in order (the pack's rules; no LLM)."""
    context: dict[str, Any] = {}
    for text in user_turns:
        context = pack.extract_context(text, context)
    return context


def reasked_facts(answer: str, known: dict[str, Any], pack: Any) -> list[str]:
    """The context keys (age, sex, customer, products …) the answer asks for although `known` holds them."""
    return [key for key, pattern in pack.ask_patterns.items()
            if known.get(key) not in (None, "", [], {}) and re.search(pattern, answer or "")]


def forbidden_phrases(phrases: Iterable[str], answer: str) -> list[str]:
    """The phrases of `answer_must_not` the answer contains."""
    return [p for p in phrases if p in (answer or "")]


def score_turn(turn: Any, state: dict[str, Any], known: dict[str, Any] | None = None, pack: Any = None) -> dict[str, Any]:
    """One scenario turn; with `known` (the conversation's context up to this turn, `known_context`) and
    `pack`, re-asking a known fact fails it too."""
    gold = [c.tool for c in turn.expected_calls]
    called = [e["name"] for e in state.get("tool_log", [])]
    gold_counts, called_counts = Counter(gold), Counter(called)
    hit = sum(min(n, called_counts[t]) for t, n in gold_counts.items())
    answer = state.get("answer", "")
    facts = list(turn.facts) + [t.text for t in turn.totals]
    missing = [f for f in facts if not fact_in(f, answer)]
    violations = forbidden_phrases(turn.answer_must_not, answer)
    reasked = reasked_facts(answer, known, pack) if known is not None and pack is not None else []
    tools_ok = set(gold) <= set(called)
    return {
        "gold_tools": gold, "called_tools": called,
        "tool_recall": hit / len(gold) if gold else 1.0,
        "tool_precision": hit / len(called) if called else (1.0 if not gold else 0.0),
        "tools_ok": tools_ok, "facts_total": len(facts), "facts_found": len(facts) - len(missing),
        "missing_facts": missing, "forbidden": violations, "reasked": reasked,
        "passed": tools_ok and not missing and not violations and not reasked,
    }


def run_scenarios(agent: Any, scenarios: Iterable[Scenario], progress: bool = True) -> pd.DataFrame:
    """Every scenario as one conversation (its own thread); one row per turn."""

    scenarios = list(scenarios)
    rows = []
    bar = tqdm(total=sum(len(s.turns) for s in scenarios), desc="scenario turns", disable=not progress)
    for scenario in scenarios:
        thread = f"{scenario.id}-{uuid.uuid4().hex[:8]}"
        pack = getattr(agent, "pack", None)
        for number, turn in enumerate(scenario.turns, start=1):
            known = known_context([t.user for t in scenario.turns[:number]], pack) if pack is not None else None
            try:
                state = agent.ask(turn.user, thread)
                error = ""
            except Exception as exc:  # noqa: BLE001 - one failing turn must not lose the run
                state, error = {}, f"{type(exc).__name__}: {exc}"
            row = {"scenario": scenario.id, "turn": number, "user": turn.user, "rewritten": state.get("rewritten", ""),
                   "routed": state.get("routed", []), **score_turn(turn, state, known, pack),
                   "tool_steps": state.get("tool_steps", 0), "capped": state.get("capped", False),
                   "loops": state.get("loops", 0), "repaired": state.get("repaired", 0), "blocked": state.get("blocked"),
                   "answer_failed": bool(state.get("guard", {}).get("answer_failed")),
                   "llm_calls": state.get("llm_calls", 0), "prompt_tokens": state.get("prompt_tokens", 0),
                   "completion_tokens": state.get("completion_tokens", 0), "seconds": state.get("seconds"),
                   "answer": state.get("answer", ""), "error": error}
            if "passed" in row and error:
                row["passed"] = False
            rows.append(row)
            bar.update(1)
    bar.close()
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> dict[str, Any]:
    """Headline numbers of a scenario run."""
    return {
        "turns": int(len(frame)),
        "pass_rate": round(float(frame["passed"].mean()), 3),
        "tools_ok_rate": round(float(frame["tools_ok"].mean()), 3),
        "tool_recall": round(float(frame["tool_recall"].mean()), 3),
        "facts_found_rate": round(float(frame["facts_found"].sum() / max(1, frame["facts_total"].sum())), 3),
        "answer_failed": int(frame["answer_failed"].sum()),
        **{f"{check}_turns": int(frame[check].map(bool).sum()) if check in frame.columns else 0
           for check in ("forbidden", "reasked")},
        "capped_turns": int(frame["capped"].sum()),
        "loop_turns": int((frame["loops"] > 0).sum()),
        "median_prompt_tokens": float(frame["prompt_tokens"].median()),
        "median_seconds": float(frame["seconds"].median()) if frame["seconds"].notna().any() else None,
        "errors": int((frame["error"] != "").sum()),
    }


def prompt_sizes(pack: Any, router: Any, queries: list[str]) -> dict[str, Any]:
    """Median prompt tokens (Qwen tokenizer and chat template) per query: no tools, the router's top-5
    (compact and full schemas), and all the pack's tools bound (one count: the same for every query
    up to the question); the saving of top-5 over all tools with the same schemas on both sides."""



    counter = PromptCounter()
    agent = Agent(pack, None, router, None, AgentConfig())
    every_full = [convert_to_openai_tool(t) for t in pack.tools]
    every_compact = [agent.schema(t.name) for t in pack.tools]
    top5, top5_full, none = [], [], []
    for query in queries:
        messages = [{"role": "system", "content": pack.system_prompt}, {"role": "user", "content": query}]
        names = router.route(query).top(5)
        top5.append(counter.count(messages, [agent.schema(n) for n in names]))
        top5_full.append(counter.count(messages, [convert_to_openai_tool(pack.tool(n)) for n in names]))
        none.append(counter.count(messages))
    messages = [{"role": "system", "content": pack.system_prompt}, {"role": "user", "content": queries[0]}]
    all_full, all_compact = counter.count(messages, every_full), counter.count(messages, every_compact)
    median = statistics.median
    return {"queries": len(queries), "no_tools": median(none), "top5_compact": median(top5),
            "top5_full_schemas": median(top5_full), "all_tools_compact": all_compact, "all_tools_full": all_full,
            # like for like: compact top-5 against compact all, full against full (not compact against full)
            "saving_top5_vs_all_compact": round(1 - median(top5) / all_compact, 3),
            "saving_top5_vs_all_full": round(1 - median(top5_full) / all_full, 3)}

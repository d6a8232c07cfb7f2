"""The insurance agent tasks (`data/insurance/tasks.yaml`): the mix of chain lengths, and every gold
chain replayed with its args against the real tools returns the facts the answer must state."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from toolroute.agent.tasks import load_tasks
from toolroute.domains.insurance import TOOL_NAMES
from toolroute.domains.insurance.tools import build_tools

TASKS = load_tasks("insurance", tool_names=TOOL_NAMES)


@pytest.fixture(scope="module")
def tools():
    return {t.name: t for t in build_tools()}


def _compact(text: str) -> str:
    return "".join(text.split())


def test_the_mix_of_chain_lengths():
    lengths = Counter(t.chain_length for t in TASKS)
    assert len(TASKS) >= 16, len(TASKS)
    assert lengths[0] >= 3 and lengths[1] >= 3 and lengths[2] >= 3 and lengths[3] >= 4, lengths
    for task in TASKS:
        if task.gold_tools:
            assert len(task.args) == task.chain_length, task.id  # every step pins its key arguments
            assert 1 <= len(task.facts) <= 3, task.id
        else:
            assert not task.args, task.id
        assert len(set(task.gold_tools)) == len(task.gold_tools), task.id  # a chain, not a repeat


def test_queries_are_distinct_korean_single_turns():
    queries = [t.query for t in TASKS]
    assert len(set(queries)) == len(queries)
    for query in queries:
        assert "\n" not in query.strip()
        assert any("\uac00" <= ch <= "\ud7a3" for ch in query), query


def test_facts_name_no_internal_codes():
    """Product / customer / contract ids are stripped from answers, so they can never be facts."""
    import re

    internal = re.compile(r"\bB0\d{2}\b|\bC\d{4}\b|\bCT\d{5}\b")
    for task in TASKS:
        for fact in task.facts:
            for option in [fact] if isinstance(fact, str) else fact:
                assert not internal.search(option), (task.id, option)


@pytest.mark.parametrize("task", [t for t in TASKS if t.gold_tools], ids=lambda t: t.id)
def test_gold_chain_returns_the_facts(task, tools):
    results = []
    for name, args in zip(task.gold_tools, task.args):
        result = tools[name].invoke(args)
        assert result.get("status") == "ok", (task.id, name, result)
        results.append(result)
    source = _compact(json.dumps(results, ensure_ascii=False))
    missing = [
        fact for fact in task.facts
        if not any(_compact(option) in source for option in ([fact] if isinstance(fact, str) else fact))
    ]
    assert not missing, (task.id, missing)

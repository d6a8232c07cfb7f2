"""The multi-turn scenarios: every gold call runs against the real tools and returns the stated facts."""

from __future__ import annotations

import pytest

from toolroute.domains.insurance import SPEC_CONFUSION_PAIRS  # noqa: F401  (import check of the package)
from toolroute.domains.insurance.scenarios import ScenarioDataError, load_scenarios, replay_turn
from toolroute.domains.insurance.tools import build_tools, rag_tools

from conftest import HashEmbedder

SCENARIOS = load_scenarios()
SEED_TITLES = {"S1", "S2", "S3", "S4", "S5"}


@pytest.fixture(scope="module")
def tools():
    return {t.name: t for t in build_tools()}


@pytest.fixture(scope="module")
def rag_configured(tmp_path_factory):
    from toolroute.chroma import open_client

    base = tmp_path_factory.mktemp("scenario-rag")
    rag_tools.configure(embedder=HashEmbedder(), client=open_client(base / "chroma"), docs_dir=base / "docs")
    yield
    rag_tools.configure()


def test_the_file_holds_the_seed_scenarios_and_enough_of_our_own():
    ids = {s.id for s in SCENARIOS}
    assert SEED_TITLES <= ids
    seed = [s for s in SCENARIOS if s.source.startswith("seed 002")]
    assert len(seed) == 5 and all(len(s.turns) == 4 for s in seed)
    assert len([s for s in SCENARIOS if s.source == "toolroute"]) >= 5
    assert all(t.expected_calls for s in SCENARIOS for t in s.turns)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_gold_calls_return_the_scenario_facts(scenario, tools, request):
    if any(t.needs_rag for t in scenario.turns):
        request.getfixturevalue("rag_configured")
    problems = []
    for number, turn in enumerate(scenario.turns, start=1):
        replay = replay_turn(turn, tools)
        problems += [f"turn {number} ({turn.user}): {p}" for p in replay.problems]
    assert not problems, "\n".join(problems)


def test_seed_totals_are_the_fixed_numbers():
    totals = {(s.id, t.text) for s in SCENARIOS for turn in s.turns for t in turn.totals}
    assert ("S5", "301,800원") in totals  # 70세 남성: 건강해지는종신보험 + 든든한실버치아보험
    assert ("S2", "183,640원") in totals  # 윤지은's three active contracts


def test_a_bad_scenario_file_names_scenario_turn_and_field(tmp_path):
    path = tmp_path / "scenarios.yaml"
    path.write_text(
        "scenarios:\n"
        "  - id: X1\n    title: t\n    source: toolroute\n    turns:\n"
        "      - user: a\n        expected_calls: [{tool: premium_estimat, args: {}}]\n"
        "      - user: b\n",
        encoding="utf-8",
    )
    with pytest.raises(ScenarioDataError, match=r"scenario X1 turn 1 field 'expected_calls.0'.*premium_estimat"):
        load_scenarios(path)
    path.write_text("scenarios: [", encoding="utf-8")
    with pytest.raises(ScenarioDataError, match="not valid YAML"):
        load_scenarios(path)
    with pytest.raises(ScenarioDataError, match="missing"):
        load_scenarios(tmp_path / "nope.yaml")

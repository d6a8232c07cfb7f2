"""when_not_to_use in the LLM's choice (issue 39, item 1b): the study pairs the two settings on the same rows,
binds the gold tools with their look-alikes, and states McNemar's p and power."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from toolroute.cards import open_catalog
from toolroute.config import toolcards_dir
from toolroute.queries import EvalQuery
from toolroute_lab.shared.arms import oracle_with_confusers
from toolroute_lab.e04_ragas_eval import wnu_choice

CATALOG = open_catalog(toolcards_dir("insurance"))


class ChoosingAgent:
    """Calls the gold tool when when_not_to_use is in the descriptions; else the first bound tool by name."""

    def __init__(self, wnu: bool):
        self.wnu = wnu
        self.router = SimpleNamespace(catalog=CATALOG)
        self.pack = SimpleNamespace(tool_names=CATALOG.names)
        self.asked = []

    def first_call(self, question, tools=None, top_k=None):
        self.asked.append((question, top_k, tools))
        bound = tools if tools is not None else ["premium_estimate", "premium_compare", "plan_options"][: top_k or 5]
        gold = QUERIES_BY_TEXT[question].expected_tools[0]
        pick = gold if (self.wnu and gold in bound) else sorted(bound)[0]
        return {"bound": list(bound), "first_call": pick, "prompt_tokens": 100, "seconds": 0.1, "error": ""}


QUERIES = [EvalQuery("t1", "보험료 비교해줘", ("premium_compare",), "confusion"),
           EvalQuery("t2", "월 보험료 얼마", ("premium_estimate",), "single"),
           EvalQuery("t3", "하와이 맛집", (), "no_call")]
QUERIES_BY_TEXT = {q.query: q for q in QUERIES}


def test_the_look_alikes_of_the_gold_tools_are_bound_with_them():
    agent = SimpleNamespace(router=SimpleNamespace(catalog=CATALOG))
    gold = "premium_estimate"
    bound = oracle_with_confusers([gold], agent)
    card = CATALOG.cards[gold]
    assert gold in bound and set(card.confusions()) <= set(bound) and bound == sorted(bound)
    assert {c.name for c in CATALOG if gold in c.confusions()} <= set(bound)
    assert len(bound) > 1


def test_the_two_settings_are_paired_per_row_and_bind(tmp_path):
    agents = {}
    runs = wnu_choice.run_choices(lambda wnu: agents.setdefault(wnu, ChoosingAgent(wnu)), QUERIES,
                                  ["routed@3", "oracle_confusers"], checkpoint=tmp_path / "c.jsonl", progress=False)
    assert set(runs["id"]) == {"t1", "t2"}  # call rows only
    assert len(runs) == 2 * 2 * 2 and set(runs["wnu"]) == {True, False}
    on = runs[(runs.wnu) & (runs.bind == "oracle_confusers")]
    assert on["chose_gold"].tolist() == [1.0, 1.0] and on["gold_bound"].tolist() == [1.0, 1.0]
    assert all(top_k == 3 for _, top_k, tools in agents[True].asked if tools is None)
    again = wnu_choice.run_choices(lambda wnu: pytest.fail("saved rows are not run again"), QUERIES,
                                   ["routed@3", "oracle_confusers"], checkpoint=tmp_path / "c.jsonl", progress=False)
    other_split = wnu_choice.run_choices(lambda wnu: agents.setdefault(wnu, ChoosingAgent(wnu)), QUERIES[:1],
                                         ["routed@3"], checkpoint=tmp_path / "c.jsonl", progress=False, split="dev")
    assert other_split["split"].tolist() == ["dev", "dev"]  # the split keys the saved rows: these ran
    assert again[["id", "bind", "wnu", "chose_gold"]].equals(runs[["id", "bind", "wnu", "chose_gold"]])
    table = wnu_choice.choice_table(runs)
    row = table[(table.bind == "routed@3") & (table.subset == "all call rows")].iloc[0]
    assert row["n"] == 2 and row["with_wnu"] >= row["without_wnu"]
    assert 0 <= row["p_mcnemar"] <= 1 and row["p_holm"] >= row["p_mcnemar"]
    assert set(table["subset"]) == {"all call rows", "confusion-pair rows"}


def test_mcnemar_power_grows_with_the_rows():
    small, large = wnu_choice.mcnemar_power(40, 0.2), wnu_choice.mcnemar_power(400, 0.2)
    assert 0 <= small < 0.5 < large <= 1
    assert wnu_choice.mcnemar_power(40, 0.0) == pytest.approx(wnu_choice.mcnemar_power(40, 0.1))  # floor: the difference


def test_the_splits_are_run_in_turn_and_paired_within_each(tmp_path):
    agents = {}
    queries = {"test": QUERIES, "dev": [EvalQuery("t1", "보험료 비교해줘", ("premium_compare",), "confusion")]}
    runs = wnu_choice.run_splits(lambda wnu: agents.setdefault(wnu, ChoosingAgent(wnu)), queries, ["oracle_confusers"],
                                 checkpoint=tmp_path / "c.jsonl", progress=False)
    assert sorted(runs.groupby("split").size().items()) == [("dev", 2), ("test", 4)]
    table = wnu_choice.choice_table(runs)
    assert table.set_index("subset").loc["all call rows", "n"] == 3  # t1 of dev and t1 of test are two rows
    assert table.set_index("subset").loc["confusion-pair rows", "n"] == 2


def test_choice_queries_pick_call_rows_of_the_kinds_asked():
    picked = wnu_choice.choice_queries(["test", "dev"], ["confusion"])
    assert set(picked) == {"test", "dev"}
    assert picked["test"] and all(q.kind == "confusion" and q.expected_tools for rows in picked.values() for q in rows)
    assert len(wnu_choice.choice_queries(["test"], None, limit=5)["test"]) == 5

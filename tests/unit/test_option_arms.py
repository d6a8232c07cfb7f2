"""Agent options as arms on the dev tasks (issue 24, item 4): the dev rule, paired runs, the table."""

from __future__ import annotations

import time

import pytest

from toolroute.agent.graph import FAILED_ANSWER
from toolroute.agent.pack import load_pack
from toolroute_lab.studies import option_arms
from toolroute_lab.shared.arms import option_changes
from toolroute_lab.studies.option_arms import dev_chain_tasks, dev_scenario_ids, option_table, run_option_arms
from toolroute_lab.e04_ragas_eval.ragas_eval import scenario_items


def test_the_dev_rule_is_fixed_and_leaves_the_rest():
    tasks = dev_chain_tasks()
    assert {d: [t.id for t in ts] for d, ts in tasks.items()} == {
        "insurance": ["ins-t09", "ins-t11", "ins-t13"], "threat": ["th10", "th12", "th14"],
        "plant": ["plant-t10", "plant-t12"]}
    assert all(t.chain_length == 2 for ts in tasks.values() for t in ts)
    assert dev_scenario_ids() == ["S1", "S5", "S9"]


class _Stub:
    """An agent whose answers depend on its arm: `good` arms call the gold tools and state the facts."""

    def __init__(self, pack, good: bool, log: list):
        self.pack, self.good, self.log = pack, good, log
        self.script = {i.user: ([n for n, _ in i.reference_calls], " ".join(i.facts)) for i in scenario_items(ids=["S9"])}
        self.tasks = {t.query: t for ts in dev_chain_tasks(["threat"]).values() for t in ts}

    def ask(self, question, thread_id, max_tool_steps=None):
        self.log.append((question, max_tool_steps))
        if not self.good:
            return {"answer": FAILED_ANSWER, "tool_log": [], "guard": {"answer_failed": True}, "llm_calls": 2}
        if question in self.tasks:
            task = self.tasks[question]
            tools, answer = task.gold_tools, " ".join(f if isinstance(f, str) else f[0] for f in task.facts)
        else:
            tools, answer = self.script[question]
        return {"answer": answer, "tool_log": [{"name": n, "args": {}} for n in tools], "llm_calls": 3, "repaired": 1}


def test_arms_run_paired_and_the_table_counts_wins(tmp_path):
    pack, log, made = load_pack("insurance"), [], []

    def make(domain, options):
        made.append((domain, dict(options)))
        return _Stub(pack, good=bool(options.get("constrained_calls")), log=log)

    rows = run_option_arms(make, ["baseline", "constrained"], chain_tasks=dev_chain_tasks(["threat"]),
                           scenario_ids=["S9"], progress=False, checkpoint=tmp_path / "c.jsonl", tag="t")
    assert made == [("threat", {}), ("threat", {"constrained_calls": True}), ("insurance", {}),
                    ("insurance", {"constrained_calls": True})]
    assert {cap for _, cap in log} == {3}
    assert list(rows["arm"][:2]) == ["baseline", "constrained"]  # interleaved per unit
    table = option_table(rows).set_index(["kind", "arm"])
    chain, turns = table.loc[("chain", "constrained")], table.loc[("scenario", "constrained")]
    assert (chain["runs"], chain["passed"], chain["won"], chain["lost"]) == (3, 3, 3, 0)
    assert (turns["runs"], turns["units"], turns["passed"], turns["repaired"]) == (4, 1, 4, 4)
    base = table.loc[("scenario", "baseline")]
    assert (base["passed"], base["apologies"], base["rate"], base["won"]) == (0, 4, 0.0, 0)
    assert 0.5 < turns["rate_lo"] < 1.0 == turns["rate_hi"]  # Wilson 95% on 4 of 4
    again = run_option_arms(lambda d, o: pytest.fail("saved units are not run again"), ["baseline", "constrained"],
                            chain_tasks=dev_chain_tasks(["threat"]), scenario_ids=["S9"], progress=False,
                            checkpoint=tmp_path / "c.jsonl", tag="t")
    assert again[["id", "arm", "passed"]].equals(rows[["id", "arm", "passed"]])
    read_back = rows.assign(error=float("nan"))  # a CSV read back: empty errors are NaN
    assert option_table(read_back)["errors"].tolist() == [0, 0, 0, 0]
    english = rows.assign(answer=["To determine the level, …", "C50은 유방암입니다."] + list(rows["answer"][2:]))
    assert option_table(english)["english_answers"].tolist() == [1, 0, 0, 0]


def test_a_deadline_stops_between_units_so_the_arms_stay_paired():
    pack = load_pack("insurance")
    rows = run_option_arms(lambda d, o: _Stub(pack, True, []), ["baseline", "lines"],
                           chain_tasks=dev_chain_tasks(["threat"]), scenario_ids=[], deadline=time.monotonic() - 1,
                           progress=False)
    assert rows.empty
    with pytest.raises(ValueError, match="unknown option 'grammar'"):
        run_option_arms(lambda d, o: None, ["baseline", "grammar"], progress=False)
    assert set(option_changes("constrained+lines")) == {"constrained_calls", "tool_result_format"}

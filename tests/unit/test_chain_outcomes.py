"""Why a step-limit run failed: each run gets the first outcome that applies, counted per arm in reading order."""

import pandas as pd

from toolroute_lab.e03_step_limits.chain_outcomes import OUTCOMES, outcome, outcome_table


def _run(**kw):
    row = {"arm": "routed@5", "cap": 3, "chain_length": 2, "gold_tools": "['a', 'b']", "called_tools": "['a', 'b']",
           "completed": False, "capped": False, "error": "", "blocked": ""}
    row.update(kw)
    return row


def test_each_failure_gets_the_first_outcome_that_applies():
    assert outcome(_run(completed=True)) == "completed"
    assert outcome(_run(error="LLM server down", capped=True)) == "error"
    assert outcome(_run(blocked="off_domain")) == "blocked"
    assert outcome(_run(capped=True, called_tools="['a']")) == "cut by the cap"
    assert outcome(_run(called_tools="[]")) == "no tool called"
    assert outcome(_run(called_tools="['a', 'a']")) == "stopped early"  # the same tool twice is not the chain
    assert outcome(_run(called_tools="['b', 'a', 'c']")) == "facts missing"  # every gold tool called: the answer failed
    assert outcome(_run(chain_length=0, gold_tools="[]", called_tools="['c']")) == "extra tool"
    assert outcome(_run(chain_length=0, gold_tools="[]", called_tools="[]")) == "facts missing"
    assert outcome({**_run(), "completed": "True"}) == "completed"  # as read from a CSV without types


def test_the_table_counts_outcomes_per_arm_at_a_cap_in_reading_order():
    runs = pd.DataFrame([
        _run(arm="gold_replay", completed=True), _run(arm="gold_replay"),
        _run(arm="oracle", called_tools="['a']"), _run(arm="oracle", completed=True),
        _run(called_tools="[]"), _run(called_tools="['a']"), _run(cap=1, capped=True),
        _run(chain_length=1, gold_tools="['a']", called_tools="[]"),
    ])
    table = outcome_table(runs, cap=3, min_length=2)
    assert list(table["arm"]) == ["routed@5", "oracle", "gold_replay"]
    assert list(table.columns) == ["arm", "runs", "completed", "facts missing", "stopped early", "no tool called"]
    assert table.set_index("arm").loc["routed@5"].to_dict() == {"runs": 2, "completed": 0, "facts missing": 0,
                                                                "stopped early": 1, "no tool called": 1}
    assert (table["runs"] == table[[c for c in table.columns if c in OUTCOMES]].sum(axis=1)).all()
    assert outcome_table(runs, cap=1).set_index("arm").loc["routed@5", "cut by the cap"] == 1

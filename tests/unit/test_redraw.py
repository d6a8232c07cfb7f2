"""The committed reference figures are redrawn from the committed tables alone (no notebook, no model)."""

import shutil

from toolroute.config import ROOT
from toolroute_lab.run.redraw import redraw


def test_redraw_reference_figures_from_the_committed_tables(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(ROOT / "results/reference", run, ignore=shutil.ignore_patterns("*.ipynb", "*.jsonl", "*.html"))
    done = redraw(run, chunks=False)
    redrawn = sorted(k for k, v in done.items() if v.startswith("redrawn"))
    # the no-call figure needs the per-query scores, which runs write since the figure was fixed
    scores = (ROOT / "results/reference/02_toolcard_ablation/no_call_scores_test.csv").is_file()
    # the arms' cost figures need the by_arm tables, which runs with agent arms write
    arms = [f"{n}/arms_cost.png" for n in ("03_step_limits", "04_ragas_eval")
            if (ROOT / "results/reference" / n / "by_arm.csv").is_file()]
    assert redrawn == sorted(["01_ingest/hit_rate.png", "02_toolcard_ablation/confusions_test.png",
                              "02_toolcard_ablation/hit1_test.png", "02_toolcard_ablation/recall_curves_test.png",
                              "02_toolcard_ablation/no_call_curves_test.png", "02_toolcard_ablation/tool_recall_test.png",
                              "03_step_limits/completion_vs_cap.png", "03_step_limits/cost_vs_cap.png",
                              "04_ragas_eval/metrics.png", "05_scale/scale.png",
                              "06_card_improvement/card_improvement.png",
                              *(["02_toolcard_ablation/no_call_test.png"] if scores else []), *arms])
    assert done["02_toolcard_ablation/no_call_test.png"].startswith("redrawn" if scores else "skipped")
    assert all((run / name).stat().st_size > 0 for name in redrawn)


def test_an_arm_that_ran_fewer_items_of_the_pool_is_named_not_drawn():
    import pandas as pd

    from toolroute_lab.e04_ragas_eval.plots import same_items

    pool = pd.DataFrame({"arm": ["routed@5", "oracle", "gold_replay"], "runs": [40, 40, 6]})
    rows, note = same_items(pool)
    assert list(rows["arm"]) == ["routed@5", "oracle"]
    assert note == "; left out, run on fewer items: gold_replay (6 of 40)"
    rows, note = same_items(pool.iloc[:2])
    assert len(rows) == 2 and note == ""
    two = pd.concat([pool.assign(model="a"), pool.assign(model="b", runs=[20, 20, 3])])  # per model
    rows, note = same_items(two)
    assert list(rows["arm"]) == ["routed@5", "oracle"] * 2
    assert note == "; left out, run on fewer items: gold_replay · a (6 of 40), gold_replay · b (3 of 20)"

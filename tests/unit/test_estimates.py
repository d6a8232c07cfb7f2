"""A notebook's expected time: the parameter file's, else the reference run's scaled by rows; the plan and the
line after each notebook."""

from datetime import datetime

from toolroute_lab.run import declared
from toolroute_lab.e04_ragas_eval import judge_check
from toolroute_lab.run.estimates import Estimate, duration, estimate, plan_lines, progress_line, start_line

STEP_DEFAULTS = {"domains": ["insurance", "threat", "plant"], "caps": [1, 2, 3, 4, 6], "top_ks": [5], "task_ids": None,
                 "llm": "auto", "llms": [{"name": "embedded"}]}
REFERENCE = {"03_step_limits": {"status": "ok", "seconds": 5230.0,
                                "parameters": {"caps": [1, 2, 3, 4, 6], "output_dir": "/somewhere"}}}


def test_the_parameter_files_expected_seconds_come_first():
    e = estimate("03_step_limits", {"task_ids": ["th04"]}, STEP_DEFAULTS, expected_seconds=90, reference=REFERENCE)
    assert e.seconds == 90 and "expected_seconds" in e.source


def test_the_reference_time_is_scaled_by_the_rows_a_notebook_declares():
    fixed = declared.STEP_LIMITS.fixed_seconds
    e = estimate("03_step_limits", {"caps": [1, 3], "task_ids": ["ins-t08", "th10"]}, STEP_DEFAULTS, reference=REFERENCE)
    assert e.seconds == fixed + (5230 - fixed) * 2 / 52  # 52 tasks in the reference, 2 here
    assert e.source == "reference run 5,230 s for 52 tasks, scaled to 2"
    two_models = estimate("03_step_limits", {"task_ids": ["th10"], "llms": [{"name": "embedded"}, {"name": "b"}]},
                          STEP_DEFAULTS, reference=REFERENCE)
    assert two_models.seconds == fixed + (5230 - fixed) * 2 / 52  # each model runs every task
    replay = estimate("03_step_limits", {"llm": "replay"}, STEP_DEFAULTS, reference=REFERENCE)
    assert replay.seconds == fixed and "replay" in replay.source


def test_same_parameters_give_the_reference_time_and_an_unknown_notebook_none():
    same = estimate("03_step_limits", {"caps": [1, 2, 3, 4, 6]}, STEP_DEFAULTS, reference=REFERENCE)
    assert same.seconds == 5230 and same.source == "reference run, same parameters"
    other = estimate("01_ingest", {"chunk_sizes": [500]}, {}, reference={"01_ingest": {"status": "ok", "seconds": 289,
                                                                                          "parameters": {}}})
    assert other.seconds == 289 and "rough guide" in other.source  # no rows declared: as it is, said to be rough
    unknown = estimate("scratch", {}, {}, reference=REFERENCE)
    assert unknown.seconds is None and "not in the reference run" in unknown.source
    failed = estimate("03_step_limits", {}, STEP_DEFAULTS, reference={"03_step_limits": {"status": "failed", "seconds": 3}})
    assert failed.seconds is None


def test_the_rows_of_the_llm_notebooks_follow_their_row_limits():
    ragas = {"scenario_ids": ["S12"], "rag_ids": None, "rag_limit": 1, "query_split": "test", "query_limit": 1,
             "judge": "auto", "judge_metrics": ["faithfulness", "answer_relevancy", "agent_goal_accuracy"],
             "judge_per_metric": 1, "judge_check": False, "llms": [{"name": "embedded"}]}
    # 2 + 1 + 1 turns; judged: faithfulness on the RAG question, one row each for the other two metrics
    assert declared.RAGAS_EVAL.rows(ragas) == 4 + 3
    assert declared.RAGAS_EVAL.rows({**ragas, "judge_metrics": ["faithfulness"], "judge_per_metric": None}) == 4 + 1
    labelled = len(judge_check.load_labels())  # the judge also scores the rows we labelled by hand
    assert declared.RAGAS_EVAL.rows({**ragas, "judge_check": True}) == 4 + 3 + labelled
    assert declared.RAGAS_EVAL.rows({**ragas, "judge": "none"}) == 4
    cards = {"augment_limit": 4, "rerank_split": "test", "rerank_limit": 4, "llm": "auto", "llms": None}
    assert declared.CARD_IMPROVEMENT.rows(cards) == 8
    assert declared.CARD_IMPROVEMENT.rows({**cards, "augment_limit": None, "rerank_limit": None}) == 54 + 267


def test_durations_are_as_precise_as_an_estimate_deserves():
    assert [duration(s) for s in (4.2, 89, 250, 5744)] == ["4 s", "89 s", "4 min", "1 h 36 min"]


def test_the_plan_lists_every_notebook_with_its_estimate_and_source():
    estimates = [Estimate("01_ingest", 120, "the parameter file's expected_seconds"),
                 Estimate("03_step_limits", 250, "reference run 5,230 s for 52 tasks, scaled to 2"),
                 Estimate("scratch", None, "no estimate: not in the reference run")]
    lines = plan_lines(estimates, "quick.yaml")
    assert lines[0].startswith("Plan: 3 notebook(s) of quick.yaml, expected time about 6 min plus 1 notebook(s) "
                               "without an estimate")
    assert [line.split()[0] for line in lines[1:]] == ["01_ingest", "03_step_limits", "scratch"]
    assert "about 2 min" in lines[1] and "expected_seconds" in lines[1] and "scaled to 2" in lines[2]
    resumed = plan_lines(estimates, "quick.yaml", skipped={"01_ingest"})
    assert resumed[0].startswith("Plan: 2 notebook(s)") and "skipped" in resumed[1]


def test_after_a_notebook_the_line_says_elapsed_and_what_is_left():
    done = Estimate("01_ingest", 120, "x")
    left = [Estimate("03_step_limits", 250, "x"), Estimate("07_report", 30, "x")]
    assert progress_line(done, 100.4, 130, left, 100, 120) == (
        "[01_ingest] done in 100 s (expected about 2 min); elapsed 2 min; 2 notebook(s) left, about 5 min")
    assert progress_line(done, 300, 310, left, 300, 120).endswith("(so far 2.5x the estimates)")
    assert progress_line(done, 100, 130, []).endswith("elapsed 2 min; all done")
    assert progress_line(Estimate("a", None, "x"), 5, 5, [Estimate("b", None, "x")]).endswith(
        "1 notebook(s) left, time unknown")


def test_a_starting_notebook_says_until_when_it_should_run():
    now = datetime(2026, 12, 6, 10, 57)
    assert start_line("03_step_limits", 9618, now) == "[03_step_limits] running … (about 2 h 40 min, until about 13:37)"
    assert start_line("04_ragas_eval", 14 * 3600, now).endswith("until about Mon 00:57)")  # the next day named
    assert start_line("scratch", None, now) == "[scratch] running … (no estimate)"


def test_a_resumed_notebook_counts_its_earlier_attempts():
    """The reference's 03 and 04 ran in several attempts from their checkpoints: the last attempt's seconds
    alone would make the next full run look three times shorter than it is."""
    resumed = {"03_step_limits": {**REFERENCE["03_step_limits"], "seconds": 2000.0, "earlier_attempts_seconds": 3230.0}}
    assert estimate("03_step_limits", {"caps": [1, 2, 3, 4, 6]}, STEP_DEFAULTS, reference=resumed).seconds == 5230


def test_earlier_attempts_are_read_from_what_they_recorded_or_left_behind(tmp_path):
    import os

    from toolroute_lab.run.pipeline import earlier_attempts_seconds

    assert earlier_attempts_seconds(None, "k", tmp_path) == 0.0
    assert earlier_attempts_seconds({"params_digest": "k", "status": "ok", "seconds": 9}, "k", tmp_path) == 0.0
    assert earlier_attempts_seconds({"params_digest": "other", "status": "failed", "seconds": 9}, "k", tmp_path) == 0.0
    interrupted = {"params_digest": "k", "status": "interrupted", "seconds": 100.0, "earlier_attempts_seconds": 50.0}
    assert earlier_attempts_seconds(interrupted, "k", tmp_path) == 150.0
    # killed: still "running", no seconds; counted from its start to the newest file it left
    started = datetime(2026, 12, 6, 13, 0, 0).astimezone()
    left = tmp_path / "runs.partial.jsonl"
    left.write_text("{}\n")
    os.utime(left, (started.timestamp() + 600, started.timestamp() + 600))
    killed = {"params_digest": "k", "status": "running", "started": started.isoformat()}
    assert earlier_attempts_seconds(killed, "k", tmp_path) == 600.0
    assert earlier_attempts_seconds(killed, "k", tmp_path / "nothing") == 0.0

"""Notebook 02 (ToolCard ablation): the retriever arms on every split, breakdowns and the latency Pareto front.

Its declaration (`TOOLCARD_ABLATION`): what it checks before a run, what it writes and what the report reads;
`toolroute_lab.run.declared` lists it among the experiments."""

from toolroute_lab.shared.experiment import Experiment

READ_KS = (5,)  # Recall@5 is read by the findings, the paired table, the figures and the report


def check_params(values: dict) -> None:
    """Before a run: `ks` is a list of distinct whole numbers >= 1 that holds every k read later (a run
    without Recall@5 would fail after its grid, many minutes in)."""
    ks = values.get("ks")
    if not isinstance(ks, (list, tuple)) or not ks or len(set(ks)) != len(ks) \
            or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise ValueError(f"parameter 'ks': a list of distinct whole numbers >= 1, got {ks!r}")
    missing = [k for k in READ_KS if k not in ks]
    if missing:
        raise ValueError(f"parameter 'ks': must include {missing} (Recall@5 is read by the findings, the figures and "
                         f"the report), got {list(ks)}")


TOOLCARD_ABLATION = Experiment(
    "02_toolcard_ablation", "The ToolCard ablation",
    tables=("ablation_test.csv", "ablation_dev.csv", "paired_test.csv", "ablation_by_split.csv", "by_writer.csv",
            "by_row_kind.csv", "no_call_roc_test.csv", "module_confusion_test.csv", "tool_recall_test.csv",
            "timing_test.csv", "representation.csv", "card_content.csv"),
    figures=("recall_curves_test.png", "hit1_test.png", "no_call_test.png", "confusions_test.png",
             "no_call_curves_test.png", "tool_recall_test.png", "representation.png", "card_content.png"),
    check=check_params)

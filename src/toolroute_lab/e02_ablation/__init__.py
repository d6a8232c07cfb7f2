"""Notebook 02 (ToolCard ablation): the retriever arms on every split, breakdowns and the latency Pareto front.

Its declaration (`TOOLCARD_ABLATION`): what it checks before a run, what it writes and what the report reads;
`toolroute_lab.run.declared` lists it among the experiments."""

from toolroute_lab.shared.experiment import Experiment


TOOLCARD_ABLATION = Experiment(
    "02_toolcard_ablation", "The ToolCard ablation",
    tables=("ablation_test.csv", "ablation_dev.csv", "paired_test.csv", "ablation_by_split.csv", "by_writer.csv",
            "by_row_kind.csv", "no_call_roc_test.csv", "module_confusion_test.csv", "tool_recall_test.csv",
            "timing_test.csv", "representation.csv", "card_content.csv"),
    figures=("recall_curves_test.png", "hit1_test.png", "no_call_test.png", "confusions_test.png",
             "no_call_curves_test.png", "tool_recall_test.png", "representation.png", "card_content.png"))

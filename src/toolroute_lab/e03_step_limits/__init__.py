"""Notebook 03 (step limits): the agent under a hard cap on tool steps, per chain outcome.

Its declaration (`STEP_LIMITS`): what it checks before a run, what it writes and what the report reads;
`toolroute_lab.run.declared` lists it among the experiments."""

from toolroute_lab.shared.experiment import Experiment, models_compared


def _check_step_limits(values: dict) -> None:
    from toolroute_lab.e03_step_limits.step_limits import check_parameters  # loaded when its check runs: the declarations stay import-light

    check_parameters(values["domains"], values["caps"], values["top_ks"], values["task_ids"], values.get("arms"))


def _step_limit_rows(values: dict) -> int:
    from toolroute_lab.e03_step_limits.step_limits import check_parameters  # loaded when rows are counted: the declarations stay import-light

    from toolroute_lab.shared.arms import parse_arms  # loaded when rows are counted: the declarations stay import-light

    _, top_ks, tasks = check_parameters(values["domains"], values["caps"], values["top_ks"], values["task_ids"])
    arms = len(parse_arms(values.get("arms"), top_ks))  # without arms: one per top-k
    # per task, the runs at the larger caps are mostly copies of the first uncapped one: tasks, not task x cap
    return models_compared(values) * arms * sum(len(t) for t in tasks.values())


STEP_LIMITS = Experiment(
    "03_step_limits", "Step limits", calls_llm=True, check=_check_step_limits,
    rows=_step_limit_rows, row_unit="tasks", fixed_seconds=30,
    about="Every multi-step task of the three domain packs under tool-step caps 1 to 6, with the router's top-k, "
          "with the gold tools bound (an oracle router) and with the gold calls replayed so that the model only "
          "writes the answer (the ceiling): what the cap cuts, what the router loses and what the model loses.",
    tables=("by_arm.csv", "by_cap.csv", "by_length.csv", "by_domain.csv", "cut_chains.csv"),
    figures=("completion_vs_cap.png", "cost_vs_cap.png", "arms_cost.png"))

"""Notebook 04 (RAGAS evaluation): answer and retrieval metrics per turn, and the judge's agreement check.

Its declaration (`RAGAS_EVAL`): what it checks before a run, what it writes and what the report reads;
`toolroute_lab.run.declared` lists it among the experiments."""

from toolroute_lab.shared.experiment import Experiment, models_compared


def _check_ragas_eval(values: dict) -> None:
    from toolroute_lab.e04_ragas_eval.ragas_eval import build_items  # loaded when its check runs: the declarations stay import-light

    from toolroute_lab.shared.arms import parse_arms  # loaded when its check runs: the declarations stay import-light

    build_items(values["scenario_ids"], values["rag_ids"], values["rag_limit"], values["query_split"],
                values["query_limit"])
    if values.get("arms") is not None:
        parse_arms(values["arms"], [values.get("top_k", 5)])
    from toolroute_lab.e04_ragas_eval.ragas_eval import check_arm_kinds  # loaded when its check runs: the declarations stay import-light

    check_arm_kinds(values.get("arm_kinds"))
    check_arm_kinds(values.get("ceiling_kinds"), "ceiling_kinds")
    if values.get("wnu_binds"):
        _wnu_rows(values)


def _wnu_rows(values: dict) -> int:
    """First calls of the when_not_to_use choice part: every call row of its splits, under each bind, twice."""
    from toolroute_lab.e04_ragas_eval.wnu_choice import choice_queries  # loaded when its check runs: the declarations stay import-light
    from toolroute_lab.shared.arms import parse_arms  # loaded when its check runs: the declarations stay import-light

    if not values.get("wnu_binds"):
        return 0
    binds = parse_arms(values["wnu_binds"], [values.get("top_k", 5)])
    try:
        rows = choice_queries(values.get("wnu_splits") or [], values.get("wnu_kinds"), values.get("wnu_limit"))
    except ValueError as error:  # a missing or broken query file, named with the parameter
        raise ValueError(f"wnu_splits: {error}") from None
    return sum(len(r) for r in rows.values()) * len(binds) * 2


def _ragas_rows(values: dict) -> int:
    from collections import Counter  # loaded when rows are counted: the declarations stay import-light

    from toolroute_lab.shared.arms import parse_arms  # loaded when rows are counted: the declarations stay import-light
    from toolroute_lab.e04_ragas_eval.ragas_eval import arm_items, build_items  # loaded when rows are counted: the declarations stay import-light

    items = build_items(values["scenario_ids"], values["rag_ids"], values["rag_limit"], values["query_split"],
                        values["query_limit"])
    turns = len(items)
    if values.get("arms") is not None:  # every arm the items it runs (`ragas_eval.arm_items`)
        top_k = int(values.get("top_k", 5))
        turns = sum(len(arm_items(arm, items, top_k, values.get("arm_kinds"), values.get("ceiling_kinds")))
                    for arm in parse_arms(values["arms"], [top_k]))
    judged = 0
    if values.get("judge", "auto") == "auto" and values.get("judge_metrics"):
        # judgements, estimated before the run: faithfulness on the RAG questions (the turns that retrieve
        # passages), the others on `judge_per_metric` of their rows
        per, kinds = values.get("judge_per_metric"), Counter(i.kind for i in items)
        eligible = {"faithfulness": kinds["rag"], "answer_relevancy": len(items), "agent_goal_accuracy": kinds["scenario"]}
        judged = sum(n if per is None or metric == "faithfulness" else min(n, per)
                     for metric, n in eligible.items() if metric in values["judge_metrics"])
        if values.get("judge_check", True):
            from toolroute_lab.e04_ragas_eval.judge_check import load_labels  # loaded when rows are counted: the declarations stay import-light

            judged += len(load_labels())
    return models_compared(values) * (turns + judged + _wnu_rows(values))


RAGAS_EVAL = Experiment(
    "04_ragas_eval", "RAGAS evaluation of the agent", calls_llm=True, check=_check_ragas_eval,
    rows=_ragas_rows, row_unit="turns and judged rows", fixed_seconds=45,
    tables=("by_kind.csv", "by_arm.csv", "by_scenario.csv", "judge_failures.csv", "judge_agreement.csv", "scores.csv",
            "wnu_choice.csv"),
    figures=("metrics.png", "arms_cost.png", "wnu_choice.png"))

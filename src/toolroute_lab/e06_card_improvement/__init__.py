"""Notebook 06 (card improvement): LLM-proposed card edits, each measured on a tuning split.

Its declaration (`CARD_IMPROVEMENT`): what it checks before a run, what it writes and what the report reads;
`toolroute_lab.run.declared` lists it among the experiments."""

from toolroute_lab.shared.experiment import Experiment, models_compared


def _check_card_improvement(values: dict) -> None:
    from toolroute_lab.e06_card_improvement.card_improvement import check_parameters  # loaded when its check runs: the declarations stay import-light

    check_parameters(values["augment_splits"], values["rerank_split"])


def _card_improvement_rows(values: dict) -> int:
    from toolroute.cards import open_catalog  # loaded when rows are counted: the declarations stay import-light
    from toolroute.config import queries_path, toolcards_dir  # loaded when rows are counted: the declarations stay import-light
    from toolroute.queries import load_queries  # loaded when rows are counted: the declarations stay import-light

    cards = len(open_catalog(toolcards_dir("insurance")).names)
    queries = len(load_queries(queries_path("insurance", values["rerank_split"])))
    limit_cards, limit_queries = values.get("augment_limit"), values.get("rerank_limit")
    return models_compared(values) * (min(cards, limit_cards or cards) + min(queries, limit_queries or queries))


CARD_IMPROVEMENT = Experiment(
    "06_card_improvement", "Improving the cards", calls_llm=True, check=_check_card_improvement,
    rows=_card_improvement_rows, row_unit="cards and rerank queries", fixed_seconds=60,
    about="Synthetic when_to_use examples written by the local LLM (filtered against the eval sets) and an LLM "
          "reranker of the router's top candidates, each as an arm against the authored cards, with its cost.",
    tables=("augmentation.csv", "augmentation_cost.csv", "rerank.csv"), figures=("card_improvement.png",))

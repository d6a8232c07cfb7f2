"""Every experiment, declared once: its notebook, what it checks before a run, what it writes and what the report reads.

`EXPERIMENTS` lists one `Experiment` per notebook in `notebooks/`, in run order (the order of the
notebook numbers; the report is last so that it gathers the others). What reads it:

- `toolroute.pipeline`: the checks before any notebook starts (`check`, `calls_llm`), the HTML export
  of the report (`html`), the outputs a run keeps (`outputs`, used by `make reference` through
  `toolroute run --list-outputs`), and the error for a notebook's old name (`RENAMED`);
- `toolroute.experiments.report`: the report's sections (`tables`, `figures`, `title`, `about`);
- the notebooks: `setup_notebook(declared.SCALE, output_dir)` gives a notebook its output folder;
- `toolroute.experiments.estimates`: a notebook's expected time, the reference run's scaled by its `rows`.

A new experiment is a notebook plus one entry here (and its parameters in `notebooks/params/*.yaml`).
This module imports nothing heavy: the checks import their experiment module when they run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Experiment:
    notebook: str
    """`notebooks/<notebook>.ipynb`; also its output folder in a run and its key in the run's manifest.json."""
    title: str
    """What it measures, in a few words: the heading of its section in the report."""
    about: str = ""
    """A paragraph under that heading (optional)."""
    calls_llm: bool = False
    """Its `llm` parameter ("auto" or "replay") may reach a model: the endpoint is checked before a run starts."""
    check: Callable[[dict], None] | None = None
    """Raises ValueError naming the parameter when the data selection is bad; gets every parameter's value
    (the notebook's defaults updated with the parameter set's)."""
    tables: tuple[str, ...] = ()
    """CSV files in its folder that the report reads."""
    figures: tuple[str, ...] = ()
    """PNG files in its folder that the report shows."""
    folder: bool = True
    """It writes into `<run>/<notebook>/`."""
    run_files: tuple[str, ...] = ()
    """Files it writes at the top of the run folder."""
    html: str | None = None
    """After it ran, the executed notebook is exported (without code) to this file in the run folder."""
    rows: Callable[[dict], int] | None = None
    """How much work a run is, in `row_unit` (the LLM calls or agent runs its time grows with), from every
    parameter's value; 0 when no model is called (`llm: replay`). Its expected time is the reference run's,
    scaled by rows (`toolroute.experiments.estimates`)."""
    row_unit: str = "rows"
    fixed_seconds: float = 0.0
    """The part of its time that does not grow with rows (kernel, imports, model start, index builds)."""

    @property
    def number(self) -> str:
        return self.notebook.split("_", 1)[0]

    @property
    def heading(self) -> str:
        return f"{self.title} ({self.number})"

    @property
    def in_report(self) -> bool:
        return bool(self.tables or self.figures)

    def outputs(self) -> list[str]:
        """What a run of it leaves in the run folder (files and folders), as `make reference` copies them."""
        return [f"{self.notebook}.ipynb", *([self.notebook] if self.folder else []), *self.run_files,
                *([self.html] if self.html else [])]


# --- the checks before a run (each imports its experiment module only when it runs) ---------------------------

def _check_step_limits(values: dict) -> None:
    from toolroute.experiments.step_limits import check_parameters  # loaded when its check runs: the declarations stay import-light

    check_parameters(values["domains"], values["caps"], values["top_ks"], values["task_ids"], values.get("arms"))


def _check_ragas_eval(values: dict) -> None:
    from toolroute.experiments.ragas_eval import build_items  # loaded when its check runs: the declarations stay import-light

    from toolroute.experiments.arms import parse_arms  # loaded when its check runs: the declarations stay import-light

    build_items(values["scenario_ids"], values["rag_ids"], values["rag_limit"], values["query_split"],
                values["query_limit"])
    if values.get("arms") is not None:
        parse_arms(values["arms"], [values.get("top_k", 5)])
    from toolroute.experiments.ragas_eval import check_arm_kinds  # loaded when its check runs: the declarations stay import-light

    check_arm_kinds(values.get("arm_kinds"))
    check_arm_kinds(values.get("ceiling_kinds"), "ceiling_kinds")


def _check_scale(values: dict) -> None:
    from toolroute.experiments.scale import check_parameters  # loaded when its check runs: the declarations stay import-light

    from toolroute.experiments import crowding  # loaded when its check runs: the declarations stay import-light

    check_parameters(values["sizes"], values["arms"], values["split"], values["bfcl_categories"], values["bfcl_arms"])
    crowding.check_parameters(values["korean_added"], values["korean_splits"], values["korean_field_sets"])


def _check_card_improvement(values: dict) -> None:
    from toolroute.experiments.card_improvement import check_parameters  # loaded when its check runs: the declarations stay import-light

    check_parameters(values["augment_splits"], values["rerank_split"])


# --- the rows a run's time grows with (for the expected time; each imports what it counts when it runs) -------

def _models(values: dict) -> int:
    """Models compared (each runs every row); 0 with `llm: replay`, which calls none."""
    return 0 if values.get("llm", "auto") == "replay" else max(1, len(values.get("llms") or [None]))


def _step_limit_rows(values: dict) -> int:
    from toolroute.experiments.step_limits import check_parameters  # loaded when rows are counted: the declarations stay import-light

    from toolroute.experiments.arms import parse_arms  # loaded when rows are counted: the declarations stay import-light

    _, top_ks, tasks = check_parameters(values["domains"], values["caps"], values["top_ks"], values["task_ids"])
    arms = len(parse_arms(values.get("arms"), top_ks))  # without arms: one per top-k
    # per task, the runs at the larger caps are mostly copies of the first uncapped one: tasks, not task x cap
    return _models(values) * arms * sum(len(t) for t in tasks.values())


def _ragas_rows(values: dict) -> int:
    from collections import Counter  # loaded when rows are counted: the declarations stay import-light

    from toolroute.experiments.arms import parse_arms  # loaded when rows are counted: the declarations stay import-light
    from toolroute.experiments.ragas_eval import arm_items, build_items  # loaded when rows are counted: the declarations stay import-light

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
            from toolroute.experiments.judge_check import load_labels  # loaded when rows are counted: the declarations stay import-light

            judged += len(load_labels())
    return _models(values) * (turns + judged)


def _card_improvement_rows(values: dict) -> int:
    from toolroute.cards import open_catalog  # loaded when rows are counted: the declarations stay import-light
    from toolroute.config import queries_path, toolcards_dir  # loaded when rows are counted: the declarations stay import-light
    from toolroute.queries import load_queries  # loaded when rows are counted: the declarations stay import-light

    cards = len(open_catalog(toolcards_dir("insurance")).names)
    queries = len(load_queries(queries_path("insurance", values["rerank_split"])))
    limit_cards, limit_queries = values.get("augment_limit"), values.get("rerank_limit")
    return _models(values) * (min(cards, limit_cards or cards) + min(queries, limit_queries or queries))


# --- the experiments, in run order ------------------------------------------------------------------------------
# fixed_seconds: the smoke set's time with the model-free replay LLM (21, 27 and 58 s in docs/performance.md)
# plus the embedded model's start (3-22 s).

INGEST = Experiment(
    "01_ingest", "RAG retrieval",
    tables=("retrieval.csv", "ingest.csv"), figures=("hit_rate.png",))
TOOLCARD_ABLATION = Experiment(
    "02_toolcard_ablation", "The ToolCard ablation",
    tables=("ablation_test.csv", "ablation_dev.csv", "paired_test.csv", "ablation_by_split.csv", "by_writer.csv",
            "by_row_kind.csv", "no_call_roc_test.csv", "module_confusion_test.csv", "tool_recall_test.csv",
            "timing_test.csv"),
    figures=("recall_curves_test.png", "hit1_test.png", "no_call_test.png", "confusions_test.png",
             "no_call_curves_test.png", "tool_recall_test.png"))
STEP_LIMITS = Experiment(
    "03_step_limits", "Step limits", calls_llm=True, check=_check_step_limits,
    rows=_step_limit_rows, row_unit="tasks", fixed_seconds=30,
    about="Every multi-step task of the three domain packs under tool-step caps 1 to 6, with the router's top-k, "
          "with the gold tools bound (an oracle router) and with the gold calls replayed so that the model only "
          "writes the answer (the ceiling): what the cap cuts, what the router loses and what the model loses.",
    tables=("by_arm.csv", "by_cap.csv", "by_length.csv", "by_domain.csv", "cut_chains.csv"),
    figures=("completion_vs_cap.png", "cost_vs_cap.png", "arms_cost.png"))
RAGAS_EVAL = Experiment(
    "04_ragas_eval", "RAGAS evaluation of the agent", calls_llm=True, check=_check_ragas_eval,
    rows=_ragas_rows, row_unit="turns and judged rows", fixed_seconds=45,
    tables=("by_kind.csv", "by_arm.csv", "by_scenario.csv", "judge_failures.csv", "judge_agreement.csv", "scores.csv"),
    figures=("metrics.png", "arms_cost.png"))
SCALE = Experiment(
    "05_scale", "Routing at scale", check=_check_scale,
    about="The 54 Korean cards among Korean tools of other business lines (the same-language crowding test, "
          "up to 268 tools) and among up to 2,628 English ones (BFCL's function documents), and routing on "
          "BFCL's own questions and tools.",
    tables=("korean_crowding.csv", "scale.csv", "bfcl_routing.csv", "edit_cost.csv"), figures=("scale.png",))
CARD_IMPROVEMENT = Experiment(
    "06_card_improvement", "Improving the cards", calls_llm=True, check=_check_card_improvement,
    rows=_card_improvement_rows, row_unit="cards and rerank queries", fixed_seconds=60,
    about="Synthetic when_to_use examples written by the local LLM (filtered against the eval sets) and an LLM "
          "reranker of the router's top candidates, each as an arm against the authored cards, with its cost.",
    tables=("augmentation.csv", "augmentation_cost.csv", "rerank.csv"), figures=("card_improvement.png",))
REPORT = Experiment(
    "07_report", "Run report", folder=False, run_files=("headline.csv", "verdicts.csv", "prompt_sizes.csv"),
    html="report.html")

EXPERIMENTS: tuple[Experiment, ...] = (INGEST, TOOLCARD_ABLATION, STEP_LIMITS, RAGAS_EVAL, SCALE, CARD_IMPROVEMENT,
                                       REPORT)

# Notebooks renamed when the report was numbered last (it had run last under 05): old name -> new name.
RENAMED = {"05_report": "07_report", "06_scale": "05_scale", "07_card_improvement": "06_card_improvement"}


def find(notebook: str) -> Experiment | None:
    """The declaration of a notebook, None for a notebook that is not declared (e.g. a scratch notebook)."""
    return next((e for e in EXPERIMENTS if e.notebook == notebook), None)


def renamed_message(old: str) -> str | None:
    """For a notebook's old name: the sentence naming its new name; None for any other name."""
    new = RENAMED.get(old)
    return f"'{old}' was renamed to '{new}' (the report runs last and is numbered last)" if new else None

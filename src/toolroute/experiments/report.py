"""The run report (the notebook a run ends with): one run folder's tables gathered, and the headline
numbers set against the figures seed 002 reports.

One section per declared experiment with tables or figures (`toolroute.experiments.declared`), in
notebook order: what `load_run` reads and `section` shows comes from the declaration, so a new
experiment appears in the report without a change here (its tables, findings and figures; a
summary view, when it needs one, is added to `VIEWS`). A notebook that did not run leaves its
section a one-line note (`RunOutputs.missing` names it) instead of failing the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from toolroute.experiments import declared
from toolroute.experiments.declared import (CARD_IMPROVEMENT, INGEST, RAGAS_EVAL, SCALE, STEP_LIMITS, TOOLCARD_ABLATION,
                                            Experiment)
from toolroute.experiments.notebook import parse_llms
from toolroute.experiments.step_limits import read_runs, verdict

# Seed 002, section 5: 79 test queries (64 tool-call, 15 no-call), k=5; most were copied from its cards.
SEED_FIGURES = {"hit@1": 0.969, "recall@5": 1.0, "mrr": 0.984, "no_call_accuracy": 0.80, "token_saving": 0.90}


def sections() -> list[Experiment]:
    """The experiments the report has a section for (those declaring tables or figures), in run order."""
    return [e for e in declared.EXPERIMENTS if e.in_report]


@dataclass
class RunOutputs:
    run_dir: Path
    tables: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    figures: dict[str, list[Path]] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        """Notebooks whose outputs are not in the run folder."""
        return [e.notebook for e in sections() if not self.tables.get(e.notebook) and not self.figures.get(e.notebook)]

    def table(self, notebook: str, name: str) -> pd.DataFrame | None:
        return self.tables.get(notebook, {}).get(name)


def load_run(run_dir: str | Path) -> RunOutputs:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    out = RunOutputs(run_dir)
    for experiment in sections():
        folder = run_dir / experiment.notebook
        out.tables[experiment.notebook] = {n[:-4]: pd.read_csv(folder / n) for n in experiment.tables
                                           if (folder / n).is_file()}
        out.figures[experiment.notebook] = [folder / n for n in experiment.figures if (folder / n).is_file()]
    manifest = run_dir / "manifest.json"
    if manifest.is_file():
        out.manifest = json.loads(manifest.read_text(encoding="utf-8"))
    return out


def default_arm_row(run: RunOutputs, arm_label: str) -> pd.Series | None:
    table = run.table(TOOLCARD_ABLATION.notebook, "ablation_test")
    if table is None:
        return None
    rows = table[table["arm_label"] == arm_label]
    if rows.empty:
        raise ValueError(f"default_arm: {arm_label!r} is not an arm of this run ({sorted(table['arm_label'])})")
    return rows.iloc[0]


def headline(run: RunOutputs, arm_label: str, prompt_sizes: dict[str, Any] | None = None) -> pd.DataFrame:
    """Ours against the seed's reported figures, one row per metric."""
    rows = []
    arm = default_arm_row(run, arm_label)
    names = {"hit@1": "Hit@1", "recall@5": "Recall@5", "mrr": "MRR", "no_call_accuracy": "no-call accuracy"}
    for key, label in names.items():
        ours = None if arm is None else float(arm[key])
        ci = "" if arm is None or f"{key}_lo" not in arm else f"[{arm[f'{key}_lo']:.3f}, {arm[f'{key}_hi']:.3f}]"
        rows.append({"metric": label, "toolroute": ours, "95% CI": ci, "seed 002": SEED_FIGURES[key],
                     "note": "test split, leak-free queries" if arm is not None
                     else f"{TOOLCARD_ABLATION.number} not in this run"})
    if arm is not None:
        rows.append({"metric": "false no-call rate", "toolroute": float(arm["false_no_call_rate"]), "95% CI": "",
                     "seed 002": None, "note": "real calls refused (the seed does not report it)"})
    if prompt_sizes:
        rows.append({"metric": "prompt-token saving, top-5 vs all 54 tools", "toolroute": prompt_sizes["saving_top5_vs_all"],
                     "95% CI": "", "seed 002": SEED_FIGURES["token_saving"],
                     "note": f"median over {prompt_sizes['queries']} test queries, Qwen tokenizer"})
    return pd.DataFrame(rows)


def ablation_top(run: RunOutputs, n: int = 10) -> pd.DataFrame | None:
    table = run.table(TOOLCARD_ABLATION.notebook, "ablation_test")
    if table is None:
        return None
    cols = ["arm_label", "hit@1", "hit@1_lo", "hit@1_hi", "recall@5", "mrr", "no_call_accuracy", "false_no_call_rate"]
    return table.sort_values("hit@1", ascending=False)[[c for c in cols if c in table.columns]].head(n)


def findings(run: RunOutputs, notebook: str) -> str | None:
    """The closing findings a notebook wrote (`findings.md` in its folder), or None."""
    path = run.run_dir / notebook / "findings.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def scale_summary(run: RunOutputs) -> pd.DataFrame | None:
    """The scale experiment at each catalogue size, one row per size and arm, with the columns a reader compares."""
    table = run.table(SCALE.notebook, "scale")
    if table is None:
        return None
    cols = ["size", "arm", "records", "hit@1", "recall@5", "mrr", "no_call_accuracy", "latency_p50_ms",
            "latency_p95_ms", "edit_seconds", "vector_mb"]
    return table[[c for c in cols if c in table.columns]]


def card_improvement_summary(run: RunOutputs) -> pd.DataFrame | None:
    """The card-improvement arms (synthetic examples on each split, the LLM reranker) against their baselines, in one table."""
    parts = [run.table(CARD_IMPROVEMENT.notebook, name) for name in ("augmentation", "rerank")]
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    table = pd.concat(parts, ignore_index=True)
    cols = ["split", "arm", "n", "hit@1", "hit@1_diff", "hit@1_diff_lo", "hit@1_diff_hi", "recall@5", "mrr",
            "no_call_accuracy", "generation_seconds", "seconds_per_query_p50", "llm_calls"]
    return table[[c for c in cols if c in table.columns]]


def _llms(run: RunOutputs, notebook: str) -> dict[str, dict[str, Any]]:
    """What the manifest recorded about the models a notebook ran, by name."""
    entries = (run.manifest.get("notebooks") or {}).get(notebook, {}).get("llms") or []
    return {e.get("name"): e for e in entries if isinstance(e, dict)}


def _per_model(table: pd.DataFrame | None, notebook: str, run: RunOutputs) -> pd.DataFrame | None:
    """`table` with a `model` column (a table from before `llms`: its one model, as the manifest names it)."""
    if table is None or "model" in table.columns:
        return table
    names = list(_llms(run, notebook)) or ["embedded"]
    return table.assign(model=names[0])


def model_comparison(run: RunOutputs, llms: Any = None, proposed_cap: int = 3) -> pd.DataFrame:
    """The models of the run side by side, one row each: step-limit completion, tokens and seconds per
    task at `proposed_cap` (03, the smallest top-k), the RAGAS headline metric of each kind (04: tool-call
    accuracy of the scenario turns, fact presence of the RAG answers, name-only tool F1 of the test
    queries), wall seconds of each notebook's rows, the concurrency, and the model id and
    system_fingerprint its server answered with. `llms` (the notebooks' list, or None for every model in
    the tables) picks and orders the rows."""
    by_cap = _per_model(run.table(STEP_LIMITS.notebook, "by_cap"), STEP_LIMITS.notebook, run)
    by_kind = _per_model(run.table(RAGAS_EVAL.notebook, "by_kind"), RAGAS_EVAL.notebook, run)
    found = [*([] if by_cap is None else by_cap["model"].astype(str)), *([] if by_kind is None else by_kind["model"].astype(str))]
    names = [e.name for e in parse_llms(llms, check_env=False)] if llms is not None else list(dict.fromkeys(found))
    described = {**_llms(run, STEP_LIMITS.notebook), **_llms(run, RAGAS_EVAL.notebook)}
    rows = []
    for name in names:
        row: dict[str, Any] = {"model": name}
        info = described.get(name, {})
        row["served_model"] = info.get("served_model") or info.get("model")
        row["system_fingerprint"] = info.get("system_fingerprint")
        row["max_concurrency"] = info.get("max_concurrency")
        if by_cap is not None:
            mine = by_cap[(by_cap["model"].astype(str) == name) & (by_cap["cap"] == proposed_cap)]
            mine = mine[mine["top_k"] == mine["top_k"].min()] if len(mine) else mine
            if len(mine):
                r = mine.iloc[0]
                row.update({f"03 completion @cap {proposed_cap}": r["completion"],
                            "03 completed": f"{int(r['completed'])}/{int(r['runs'])}",
                            "03 tokens per task": r["total_tokens"], "03 seconds per task": r["seconds"],
                            "03 errors": int(r["errors"])})
            row["03 wall seconds"] = _llms(run, STEP_LIMITS.notebook).get(name, {}).get("run_seconds")
        if by_kind is not None:
            mine = by_kind[by_kind["model"].astype(str) == name].set_index("kind")
            for kind, metric in (("scenario", "tool_call_accuracy"), ("rag", "fact_presence"), ("query", "tool_name_f1")):
                if kind in mine.index and metric in mine.columns:
                    row[f"04 {kind} {metric}"] = mine.loc[kind, metric]
            row["04 turns"] = int(mine["turns"].sum()) if len(mine) else 0
            row["04 wall seconds"] = _llms(run, RAGAS_EVAL.notebook).get(name, {}).get("run_seconds")
        rows.append(row)
    return pd.DataFrame(rows)


def timings(run: RunOutputs) -> pd.DataFrame:
    """Per notebook: status and wall seconds from the manifest."""
    rows = [{"notebook": name, "status": entry.get("status"), "seconds": entry.get("seconds")}
            for name, entry in (run.manifest.get("notebooks") or {}).items()]
    return pd.DataFrame(rows, columns=["notebook", "status", "seconds"])


def step_limit_verdict(run: RunOutputs, proposed: int = 3) -> list[str]:
    """The closing lines of the step-limit notebook, recomputed from its runs table."""

    path = run.run_dir / STEP_LIMITS.notebook / "runs.csv"
    if not path.is_file():
        return [f"{STEP_LIMITS.notebook} is not in this run."]
    return verdict(read_runs(path), proposed=proposed)


# --- the sections ------------------------------------------------------------------------------------------------
# A section is a list of items: a DataFrame (a table), a str (Markdown), a Path (a figure). A view returns
# None when its experiment is not in the run.

def _ablation_view(run: RunOutputs, experiment: Experiment) -> list | None:
    top = ablation_top(run)
    if top is None:
        return None
    paired = run.table(experiment.notebook, "paired_test")
    return [top, *([paired] if paired is not None else [])]


def _step_limits_view(run: RunOutputs, experiment: Experiment) -> list | None:
    by_cap = run.table(experiment.notebook, "by_cap")
    if by_cap is None:
        return None
    cuts = run.table(experiment.notebook, "cut_chains")
    return [by_cap, run.table(experiment.notebook, "by_length"),
            f"Chains cut by a cap that a higher cap completed: {0 if cuts is None else len(cuts)}",
            "\n".join(step_limit_verdict(run, proposed=3))]


def _ragas_view(run: RunOutputs, experiment: Experiment) -> list | None:
    by_kind = run.table(experiment.notebook, "by_kind")
    if by_kind is None:
        return None
    failures = run.table(experiment.notebook, "judge_failures")
    by_scenario = run.table(experiment.notebook, "by_scenario")
    return [by_kind, failures if failures is not None else "No judge ran in this run.",
            *([by_scenario] if by_scenario is not None else [])]


def _scale_view(run: RunOutputs, experiment: Experiment) -> list | None:
    table = scale_summary(run)
    return None if table is None else [table, run.table(experiment.notebook, "bfcl_routing")]


def _card_improvement_view(run: RunOutputs, experiment: Experiment) -> list | None:
    arms = card_improvement_summary(run)
    if arms is None:
        return None
    cost = run.table(experiment.notebook, "augmentation_cost")
    return [arms, *([cost] if cost is not None else [])]


def _ingest_view(run: RunOutputs, experiment: Experiment) -> list | None:
    retrieval = run.table(experiment.notebook, "retrieval")
    return None if retrieval is None else [retrieval]


def _tables_view(run: RunOutputs, experiment: Experiment) -> list | None:
    """Any other experiment: its declared tables, in order."""
    tables = run.tables.get(experiment.notebook) or {}
    return [tables[n[:-4]] for n in experiment.tables if n[:-4] in tables] or None


# Summary views of the declared experiments (keyed by notebook); an experiment without one gets `_tables_view`.
VIEWS = {TOOLCARD_ABLATION.notebook: _ablation_view, STEP_LIMITS.notebook: _step_limits_view,
         RAGAS_EVAL.notebook: _ragas_view, SCALE.notebook: _scale_view, CARD_IMPROVEMENT.notebook: _card_improvement_view,
         INGEST.notebook: _ingest_view}


def section(run: RunOutputs, experiment: Experiment) -> list:
    """What the report shows for one experiment: its heading and paragraph, its tables (or summary view),
    the findings its notebook wrote, its figures; one line when it is not in the run."""
    head = f"## {experiment.heading}" + (f"\n\n{experiment.about}" if experiment.about else "")
    items = VIEWS.get(experiment.notebook, _tables_view)(run, experiment)
    if items is None:
        return [head, f"{experiment.notebook} is not in this run."]
    text = findings(run, experiment.notebook)
    return [head, *[i for i in items if i is not None], *([text] if text else []),
            *run.figures.get(experiment.notebook, [])]


def show(items: list) -> None:
    """Display a section's items in a notebook."""
    from IPython.display import Image, Markdown, display  # only inside a notebook

    for item in items:
        if isinstance(item, Path):
            display(Image(filename=str(item)))
        elif isinstance(item, str):
            display(Markdown(item))
        else:
            display(item)

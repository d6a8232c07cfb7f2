"""The run report (notebook 05): one run folder's tables gathered, and the headline numbers set
against the figures seed 002 reports.

Each section reads what its notebook wrote into the run folder; a notebook that did not run leaves
its section empty (`RunOutputs.missing` names it) instead of failing the report.
The report runs last in a parameter set (after 06 and 07, despite its number), so it can gather
every other notebook.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

# Seed 002, section 5: 79 test queries (64 tool-call, 15 no-call), k=5; most were copied from its cards.
SEED_FIGURES = {"hit@1": 0.969, "recall@5": 1.0, "mrr": 0.984, "no_call_accuracy": 0.80, "token_saving": 0.90}

SECTIONS = {
    "01_ingest": ["retrieval.csv", "ingest.csv"],
    "02_toolcard_ablation": ["ablation_test.csv", "ablation_dev.csv", "paired_test.csv"],
    "03_step_limits": ["by_cap.csv", "by_length.csv", "by_domain.csv", "cut_chains.csv"],
    "04_ragas_eval": ["by_kind.csv", "by_scenario.csv", "judge_failures.csv", "scores.csv"],
    "06_scale": ["scale.csv", "bfcl_routing.csv", "edit_cost.csv"],
    "07_card_improvement": ["augmentation.csv", "augmentation_cost.csv", "rerank.csv"],
}
FIGURES = {
    "01_ingest": ["hit_rate.png"],
    "02_toolcard_ablation": ["recall_curves_test.png", "hit1_test.png", "no_call_test.png", "confusions_test.png"],
    "03_step_limits": ["completion_vs_cap.png", "cost_vs_cap.png"],
    "04_ragas_eval": ["metrics.png"],
    "06_scale": ["scale.png"],
    "07_card_improvement": ["card_improvement.png"],
}


@dataclass
class RunOutputs:
    run_dir: Path
    tables: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    figures: dict[str, list[Path]] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def missing(self) -> list[str]:
        """Notebooks whose outputs are not in the run folder."""
        return [name for name in SECTIONS if not self.tables.get(name)]

    def table(self, notebook: str, name: str) -> pd.DataFrame | None:
        return self.tables.get(notebook, {}).get(name)


def load_run(run_dir: str | Path) -> RunOutputs:
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run folder")
    out = RunOutputs(run_dir)
    for notebook, names in SECTIONS.items():
        folder = run_dir / notebook
        out.tables[notebook] = {n[:-4]: pd.read_csv(folder / n) for n in names if (folder / n).is_file()}
        out.figures[notebook] = [folder / n for n in FIGURES[notebook] if (folder / n).is_file()]
    manifest = run_dir / "manifest.json"
    if manifest.is_file():
        out.manifest = json.loads(manifest.read_text(encoding="utf-8"))
    return out


def default_arm_row(run: RunOutputs, arm_label: str) -> pd.Series | None:
    table = run.table("02_toolcard_ablation", "ablation_test")
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
                     "note": "test split, leak-free queries" if arm is not None else "02 not in this run"})
    if arm is not None:
        rows.append({"metric": "false no-call rate", "toolroute": float(arm["false_no_call_rate"]), "95% CI": "",
                     "seed 002": None, "note": "real calls refused (the seed does not report it)"})
    if prompt_sizes:
        rows.append({"metric": "prompt-token saving, top-5 vs all 54 tools", "toolroute": prompt_sizes["saving_top5_vs_all"],
                     "95% CI": "", "seed 002": SEED_FIGURES["token_saving"],
                     "note": f"median over {prompt_sizes['queries']} test queries, Qwen tokenizer"})
    return pd.DataFrame(rows)


def ablation_top(run: RunOutputs, n: int = 10) -> pd.DataFrame | None:
    table = run.table("02_toolcard_ablation", "ablation_test")
    if table is None:
        return None
    cols = ["arm_label", "hit@1", "hit@1_lo", "hit@1_hi", "recall@5", "mrr", "no_call_accuracy", "false_no_call_rate"]
    return table.sort_values("hit@1", ascending=False)[[c for c in cols if c in table.columns]].head(n)


def findings(run: RunOutputs, notebook: str) -> str | None:
    """The closing findings a notebook wrote (`findings.md` in its folder), or None."""
    path = run.run_dir / notebook / "findings.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def scale_summary(run: RunOutputs) -> pd.DataFrame | None:
    """06 at each catalogue size, one row per size and arm, with the columns a reader compares."""
    table = run.table("06_scale", "scale")
    if table is None:
        return None
    cols = ["size", "arm", "records", "hit@1", "recall@5", "mrr", "no_call_accuracy", "latency_p50_ms",
            "latency_p95_ms", "edit_seconds", "vector_mb"]
    return table[[c for c in cols if c in table.columns]]


def card_improvement_summary(run: RunOutputs) -> pd.DataFrame | None:
    """07's arms (synthetic examples on each split, the LLM reranker) against their baselines, in one table."""
    parts = [run.table("07_card_improvement", name) for name in ("augmentation", "rerank")]
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    table = pd.concat(parts, ignore_index=True)
    cols = ["split", "arm", "n", "hit@1", "hit@1_diff", "hit@1_diff_lo", "hit@1_diff_hi", "recall@5", "mrr",
            "no_call_accuracy", "generation_seconds", "seconds_per_query_p50", "llm_calls"]
    return table[[c for c in cols if c in table.columns]]


def timings(run: RunOutputs) -> pd.DataFrame:
    """Per notebook: status and wall seconds from the manifest."""
    rows = [{"notebook": name, "status": entry.get("status"), "seconds": entry.get("seconds")}
            for name, entry in (run.manifest.get("notebooks") or {}).items()]
    return pd.DataFrame(rows, columns=["notebook", "status", "seconds"])


def step_limit_verdict(run: RunOutputs, proposed: int = 3) -> list[str]:
    """The closing lines of notebook 03, recomputed from its runs table."""
    from toolroute.experiments.step_limits import read_runs, verdict

    path = run.run_dir / "03_step_limits" / "runs.csv"
    if not path.is_file():
        return ["03_step_limits is not in this run."]
    return verdict(read_runs(path), proposed=proposed)

"""The run report (the notebook a run ends with): one run folder's tables gathered, verdicts first.

The report opens with the verdict table (`toolroute_lab.e07_report.targets`: every target, the measured
value with its CI, met / missed / not measured), then the headline numbers against the figures seed 002
reports, then one section per declared experiment with tables or figures
(`toolroute_lab.run.declared`), in notebook order: its findings in a few sentences written from its
tables (each notebook folder's `findings.py`), its figures, then its tables in full, and the run status
last. What `load_run` reads and `section` shows comes from the declaration, so a new experiment appears
in the report without a change here (its tables, the findings its notebook wrote, its figures; a
summary view, when it needs one, is added to `VIEWS`). A notebook that did not run leaves its section a
one-line note (`RunOutputs.missing` names it) instead of failing the report.

Tables are shown whole (`table_html`: no pandas truncation), numbers formatted for reading, p-values
as "< 0.001" rather than 0.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from toolroute_lab.e02_ablation import breakdowns
from toolroute_lab.run import declared
from toolroute_lab.e07_report import targets
from toolroute_lab.e07_report.findings import writers as findings_writers
from toolroute_lab.shared import run_tables
from toolroute_lab.run.declared import (CARD_IMPROVEMENT, INGEST, RAGAS_EVAL, SCALE, STEP_LIMITS, TOOLCARD_ABLATION,
                                            Experiment)
from toolroute_lab.e02_ablation.latency_pareto import latency_pareto
from toolroute_lab.shared.notebook import parse_llms
from toolroute_lab.e02_ablation.plots import pareto_figure
from toolroute_lab.e03_step_limits.step_limits import read_runs, verdict
from toolroute.routing import RouterConfig

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
        ci = (f"[{arm['false_no_call_rate_lo']:.3f}, {arm['false_no_call_rate_hi']:.3f}]"
              if "false_no_call_rate_lo" in arm else "")
        budget = next(t.threshold for t in targets.TARGETS if t.column == "false_no_call_rate")
        over = "false_no_call_rate_hi" in arm and arm["false_no_call_rate_hi"] > budget
        rows.append({"metric": "false no-call rate", "toolroute": float(arm["false_no_call_rate"]), "95% CI": ci,
                     "seed 002": None, "note": "real calls refused (the seed does not report it)"
                     + (f"; the CI's upper bound is above the {budget:g} budget" if over else "")})
    if prompt_sizes:
        rows.append({"metric": "prompt-token saving, top-5 vs all 54 tools", "toolroute": prompt_sizes["saving_top5_vs_all_compact"],
                     "95% CI": "", "seed 002": SEED_FIGURES["token_saving"],
                     "note": f"compact schemas on both sides (full schemas: {prompt_sizes['saving_top5_vs_all_full']:.3f}); "
                             f"median over {prompt_sizes['queries']} test queries, Qwen tokenizer"})
    return pd.DataFrame(rows)


def ablation_top(run: RunOutputs, n: int | None = 10) -> pd.DataFrame | None:
    """The test arms by Hit@1, best first (the `n` best; every arm with None)."""
    table = run.table(TOOLCARD_ABLATION.notebook, "ablation_test")
    if table is None:
        return None
    cols = ["arm_label", "hit@1", "hit@1_lo", "hit@1_hi", "recall@5", "mrr", "no_call_accuracy", "false_no_call_rate",
            "false_no_call_rate_lo", "false_no_call_rate_hi"]
    ranked = table.sort_values("hit@1", ascending=False)[[c for c in cols if c in table.columns]]
    return ranked if n is None else ranked.head(n)


def findings(run: RunOutputs, notebook: str) -> str | None:
    """The closing findings a notebook wrote (`findings.md` in its folder), or None."""
    path = run.run_dir / notebook / "findings.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def scale_summary(run: RunOutputs, name: str = "scale") -> pd.DataFrame | None:
    """A distractor series of the scale experiment (`scale`: BFCL, `korean_crowding`: Korean tools), one row
    per catalogue size, arm (and card fields and split, when measured), with the columns a reader compares."""
    table = run.table(SCALE.notebook, name)
    if table is None:
        return None
    cols = ["fields", "split", "size", "arm", "records", "hit@1", "hit@1_lo", "hit@1_hi", "hit@1_diff",
            "hit@1_diff_lo", "hit@1_diff_hi", "recall@5", "mrr", "no_call_accuracy", "top1_distractor",
            "distractor_in_top5", "latency_p50_ms", "latency_p95_ms", "latency_passes", "edit_seconds", "vector_mb"]
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
    task at `proposed_cap` (03, the agent as it runs: its routed@<top-k> arm, or the smallest top-k), the
    RAGAS headline metric of each kind (04, same arm: tool-call accuracy of the scenario turns, fact
    presence of the RAG answers, name-only tool F1 of the test queries), 04's turns over every arm, wall
    seconds of each notebook's rows, the concurrency, and the model id and system_fingerprint its server
    answered with. `llms` (the notebooks' list, or None for every model in the tables) picks and orders
    the rows."""
    by_cap = _per_model(run.table(STEP_LIMITS.notebook, "by_cap"), STEP_LIMITS.notebook, run)
    by_kind = _per_model(run.table(RAGAS_EVAL.notebook, "by_kind"), RAGAS_EVAL.notebook, run)
    found = [*([] if by_cap is None else by_cap["model"].astype(str)), *([] if by_kind is None else by_kind["model"].astype(str))]
    names = [e.name for e in parse_llms(llms, check_env=False)] if llms is not None else list(dict.fromkeys(found))
    described = {**_llms(run, STEP_LIMITS.notebook), **_llms(run, RAGAS_EVAL.notebook)}
    steps_k, ragas_k = (run_tables.agent_top_k(run_tables.notebook_parameters(run, n))
                        for n in (STEP_LIMITS.notebook, RAGAS_EVAL.notebook))
    rows = []
    for name in names:
        row: dict[str, Any] = {"model": name}
        info = described.get(name, {})
        row["served_model"] = info.get("served_model") or info.get("model")
        row["system_fingerprint"] = info.get("system_fingerprint")
        row["max_concurrency"] = info.get("max_concurrency")
        if by_cap is not None:
            mine = by_cap[(by_cap["model"].astype(str) == name) & (by_cap["cap"] == proposed_cap)]
            mine = run_tables.main_rows(mine, steps_k) if len(mine) else mine  # the agent as it runs
            if len(mine):
                r = mine.iloc[0]
                row.update({f"03 completion @cap {proposed_cap}": r["completion"],
                            "03 completed": f"{int(r['completed'])}/{int(r['runs'])}",
                            "03 tokens per task": r["total_tokens"], "03 seconds per task": r["seconds"],
                            "03 errors": int(r["errors"])})
            row["03 wall seconds"] = _llms(run, STEP_LIMITS.notebook).get(name, {}).get("run_seconds")
        if by_kind is not None:
            every_arm = by_kind[by_kind["model"].astype(str) == name]
            mine = run_tables.main_rows(every_arm, ragas_k).set_index("kind")
            for kind, metric in (("scenario", "tool_call_accuracy"), ("rag", "fact_presence"), ("query", "tool_name_f1")):
                if kind in mine.index and metric in mine.columns:
                    row[f"04 {kind} {metric}"] = mine.loc[kind, metric]
            row["04 turns (every arm)"] = int(every_arm["turns"].sum()) if len(every_arm) else 0
            row["04 wall seconds"] = _llms(run, RAGAS_EVAL.notebook).get(name, {}).get("run_seconds")
        rows.append(row)
    return pd.DataFrame(rows)


def timings(run: RunOutputs, this_notebook: str | None = declared.REPORT.notebook) -> pd.DataFrame:
    """Per notebook: status and wall seconds from the manifest. `this_notebook` (the report, which is
    running while it writes this table) reads "this notebook" with no seconds, not "running"."""
    rows = []
    order = [e.notebook for e in declared.EXPERIMENTS]
    entries = sorted((run.manifest.get("notebooks") or {}).items(),
                     key=lambda item: order.index(item[0]) if item[0] in order else len(order))
    for name, entry in entries:
        seconds = entry.get("seconds")
        status = entry.get("status")
        if name == this_notebook:
            status, seconds = "this notebook", None
        rows.append({"notebook": name, "status": status,
                     "seconds": "–" if seconds is None or (isinstance(seconds, float) and math.isnan(seconds))
                     else f"{float(seconds):,.1f}",
                     "git commit": str(entry.get("git_commit") or "")[:10], "cpu": entry.get("cpu") or ""})
    return pd.DataFrame(rows, columns=["notebook", "status", "seconds", "git commit", "cpu"])


# --- formatting: every table whole, numbers for reading ---------------------------------------------------------

def format_p(p: Any) -> str:
    """A p-value for reading: "< 0.001" below 0.001 (a bootstrap p of 0 means below its resolution), three
    decimals otherwise, "–" when there is none."""
    if p is None or (isinstance(p, float) and math.isnan(p)) or pd.isna(p):
        return "–"
    p = float(p)
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _is_p_column(name: str) -> bool:
    """A p-value column: `p`, `p_value`, `p (Holm)`, and the `p_<test>` columns (`p_mcnemar`, `p_holm`, …)."""
    return name == "p" or name.startswith(("p_", "p ("))


def _format_number(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) >= 1000):
        return f"{int(value):,}"
    value = float(value)
    return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.3f}"


def format_table(table: pd.DataFrame) -> pd.DataFrame:
    """The table as text for reading: p-values with `format_p`, integers whole, other numbers to 3
    decimals (1 from 100 on), missing values as "–"; text as it is."""
    out = pd.DataFrame(index=table.index)
    for column in table.columns:
        values = table[column]
        if _is_p_column(str(column)):
            out[column] = [format_p(v) for v in values]
        elif pd.api.types.is_bool_dtype(values):
            out[column] = values.astype(str)
        elif pd.api.types.is_integer_dtype(values):
            out[column] = [_format_number(int(v)) for v in values]
        elif pd.api.types.is_float_dtype(values):
            whole = values.dropna()
            integral = len(whole) > 0 and bool((whole == whole.round()).all()) and column not in ("diff",)
            out[column] = ["–" if pd.isna(v) else (f"{int(v):,}" if integral else _format_number(float(v))) for v in values]
        else:
            out[column] = ["–" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in values]
    return out


def table_html(table: pd.DataFrame) -> str:
    """The whole table as HTML (every row and column: no pandas "..." truncation), numbers formatted, in a
    box as wide as the page that scrolls sideways: a wide table never widens the page or loses columns."""
    html = format_table(table).to_html(index=False, max_rows=None, max_cols=None, border=0, na_rep="–")
    return f'<div class="report-table" style="max-width:100%;overflow-x:auto">{html}</div>'


def paired_with_holm(paired: pd.DataFrame) -> pd.DataFrame:
    """02's paired comparisons with the Holm-adjusted p-value over the whole table (every arm and metric is
    one family) and its decision at 0.05, next to the uncorrected p: as 02 wrote them, or computed the same
    way for a table from before it did."""
    return breakdowns.with_holm(paired).rename(columns={"p_holm": "p (Holm)", "holm_reject": "holds after Holm"})


def _ci_text(row: pd.Series, metric: str) -> str:
    value = row.get(metric)
    if value is None or pd.isna(value):
        return "–"
    return f"{value:.3f} [{row[f'{metric}_lo']:.3f}, {row[f'{metric}_hi']:.3f}]"


def split_view(by_split: pd.DataFrame, metric: str = "hit@1") -> pd.DataFrame:
    """Every arm (rows) on every split (columns naming the split, its writer and call rows), the metric with
    its 95% CI as text."""
    first = by_split.drop_duplicates("split").set_index("split")
    heads = {s: f"{s} (writer {r['writer']}, {int(r['n_call'])} call rows)" for s, r in first.iterrows()}
    rows = [{"arm_label": arm, **{heads[r["split"]]: _ci_text(r, metric) for _, r in part.iterrows()}}
            for arm, part in by_split.groupby("arm_label", sort=False)]
    return pd.DataFrame(rows, columns=["arm_label", *heads.values()])


def captioned(table: pd.DataFrame | None, caption: str) -> pd.DataFrame | None:
    """The table with a line `show` prints above it (kept in `attrs`, so a section stays text, figures, tables)."""
    if table is not None:
        table = table.copy()
        table.attrs["caption"] = caption
    return table


def _pick(table: pd.DataFrame | None, columns: list[str]) -> pd.DataFrame | None:
    return None if table is None else table[[c for c in columns if c in table.columns]]


def breakdown_views(run: RunOutputs) -> list[pd.DataFrame]:
    """02's statistics beyond the pooled test table, each as the report shows it (the CSVs hold every
    column): Hit@1 of every arm on every split, the main arms by writer and by row kind (the default arm on
    every split, the others on the last split), the no-call decision's ROC / risk–coverage summary, the
    confusion by module and per-tool recall. The default arm is the first arm of the kind table."""
    t = run.tables.get(TOOLCARD_ABLATION.notebook) or {}
    items: list[pd.DataFrame | None] = []
    if "ablation_by_split" in t:
        items.append(captioned(split_view(t["ablation_by_split"]),
                               "Hit@1 of every arm on every split, 95% bootstrap CI (calib: "
                               f"{breakdowns.SPLIT_ROLES['calib']}; dev: {breakdowns.SPLIT_ROLES['dev']})."))
    items.append(captioned(_pick(t.get("by_writer"), [
        "arm_label", "writer", "splits", "tuned_on", "kinds", "n", "n_call", "hit@1", "hit@1_lo", "hit@1_hi", "recall@5",
        "mrr", "no_call_accuracy", "gap_vs", "hit@1_gap", "hit@1_gap_lo", "hit@1_gap_hi", "same_kinds",
        "hit@1_gap_same_kinds", "hit@1_gap_same_kinds_lo", "hit@1_gap_same_kinds_hi"]),
        "The main arms by query writer; Hit@1 gap: writer B minus writer A on the test split (B wrote only a tuning split: a writer and a tuning gap at once), over all "
        "rows and over the row kinds both wrote, with unpaired 95% bootstrap CIs."))
    kinds = t.get("by_row_kind")
    if kinds is not None and len(kinds):
        default, last = kinds["arm_label"].iloc[0], list(dict.fromkeys(kinds["split"]))[-1]
        shown = kinds[(kinds["arm_label"] == default) | (kinds["split"] == last)]
        items.append(captioned(_pick(shown, [
            "arm_label", "split", "kind", "n", "hit@1", "hit@1_lo", "hit@1_hi", "recall@1", "recall@5", "mrr",
            "false_no_call_rate", "no_call_accuracy", "no_call_accuracy_lo", "no_call_accuracy_hi"]),
            f"Row kinds as separate lines ({default} on every split, the other main arms on {last}). Multi-tool "
            f"rows: {breakdowns.KIND_NOTES['multi']}."))
    items.append(captioned(_pick(t.get("no_call_roc_test"), [
        "arm_label", "n_call", "n_no_call", "auc", "auc_lo", "auc_hi", "threshold", "no_call_accuracy",
        "no_call_accuracy_lo", "no_call_accuracy_hi", "false_no_call_rate", "false_no_call_rate_lo",
        "false_no_call_rate_hi", "coverage", "risk", "risk_lo", "risk_hi", "risk_all_routed"]),
        "The no-call decision at every threshold: AUC of P(call) with its bootstrap CI; at the threshold fitted "
        "on calib, the rates with Wilson CIs (risk: routed rows that are no-call rows or have a wrong top-1)."))
    items.append(captioned(t.get("module_confusion_test"),
                           "Routing decision by module, counts: expected module in rows, the top-1's module (or no "
                           "call) in columns; single-tool and no-call rows."))
    items.append(captioned(_pick(t.get("tool_recall_test"), [
        "module", "tool", "n", "recall@1", "recall@1_lo", "recall@1_hi", "recall@5", "recall@5_lo", "recall@5_hi",
        "n_multi"]), "Per-tool recall over each tool's single-tool rows, Wilson 95% CIs."))
    return [i for i in items if i is not None]


def step_limit_verdict(run: RunOutputs, proposed: int = 3) -> list[str]:
    """The closing lines of the step-limit notebook, recomputed from its runs table."""

    path = run.run_dir / STEP_LIMITS.notebook / "runs.csv"
    if not path.is_file():
        return [f"{STEP_LIMITS.notebook} is not in this run."]
    return verdict(read_runs(path), proposed=proposed)


# --- the sections ------------------------------------------------------------------------------------------------
# A section is a list of items: a DataFrame (a table), a str (Markdown), a Path (a figure). A view returns
# None when its experiment is not in the run.

def pareto_view(run: RunOutputs) -> list:
    """02's arms on accuracy against route time (`toolroute_lab.e02_ablation.latency_pareto`): the figure and its table,
    or nothing when the run has no timing table. The frontier is drawn on dev + tune; test is shown."""
    by_split = run.table(TOOLCARD_ABLATION.notebook, "ablation_by_split")
    timing = run.table(TOOLCARD_ABLATION.notebook, "timing_test")
    if by_split is None or timing is None:
        return []
    table = latency_pareto(by_split, timing)
    if table.empty:
        return []
    params = run.manifest.get("notebooks", {}).get(TOOLCARD_ABLATION.notebook, {}).get("parameters", {})
    figure = pareto_figure(table, default_arm=params.get("default_arm") or RouterConfig().label)
    caption = ("Accuracy against route time: Hit@1 on dev + tune (where a choice may be made) against the route "
               "time per test query of 02's timing table (one pass, batched: differences under about 1 ms are "
               "noise); `pareto` marks the arms no other arm beats on both. Test is shown, not used.")
    return [figure_image(figure), captioned(table, caption)]


def figure_image(figure: Any) -> Any:
    """A matplotlib figure as an image the notebook keeps in its output (and so in report.html)."""
    import io  # only for the report's figures

    from IPython.display import Image  # only inside a notebook

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return Image(data=buffer.getvalue(), format="png")


def _ablation_view(run: RunOutputs, experiment: Experiment) -> list | None:
    top = ablation_top(run, n=None)
    if top is None:
        return None
    paired = run.table(experiment.notebook, "paired_test")
    return [top, *([paired_with_holm(paired)] if paired is not None else []), *breakdown_views(run), *pareto_view(run)]


ARM_COLUMNS = {"completion": 3, "tools_ok": 3, "tools_exact": 3, "facts_ok": 3, "tool_call_accuracy": 3,
               "tool_name_f1": 3, "fact_presence": 3, "prompt_tokens": 0, "total_tokens": 0, "seconds": 1}
"""The columns of an arms table the report shows, with the decimals of their value and 95% CI."""


def arm_view(by_arm: pd.DataFrame | None, caption: str = "") -> list[pd.DataFrame]:
    """An arms table (03's or 04's by_arm) as the report prints it: per arm in reading order (and kind, cap),
    each rate or mean with its 95% CI in one cell, the run counts beside them; an arm none of whose turns
    fitted the context shows only its counts; 04's pooled "all" rows left out, since the routed arm pools
    kinds the other arms did not run. [] when the run has no arms."""
    if by_arm is None or by_arm.empty:
        return []
    table = by_arm[by_arm["kind"] != "all"] if "kind" in by_arm.columns else by_arm
    table = run_tables.in_arm_order(table)
    keys = [c for c in ("model", "arm", "kind", "cap") if c in table.columns
            and not (c == "model" and table[c].nunique() <= 1)]
    out = table[[*keys, *[c for c in ("runs", "over_context") if c in table.columns]]].copy()
    unsent = (table["over_context"] >= table["runs"] if "over_context" in table.columns
              else pd.Series(False, index=table.index))
    for column, digits in ARM_COLUMNS.items():
        if column not in table.columns:
            continue
        lo, hi = table.get(f"{column}_lo"), table.get(f"{column}_hi")
        cells = []
        for i, value in table[column].items():
            if pd.isna(value) or unsent[i]:
                cells.append("–")
            elif lo is None or hi is None or pd.isna(lo[i]) or pd.isna(hi[i]):
                cells.append(f"{value:,.{digits}f}")
            else:
                cells.append(f"{value:,.{digits}f} [{lo[i]:,.{digits}f}, {hi[i]:,.{digits}f}]")
        out[f"{column} [95% CI]"] = cells
    return [captioned(out.reset_index(drop=True), ARM_CAPTION + caption)]


ARM_CAPTION = ("The agent arms: rates with Wilson 95% intervals, means with bootstrap 95% intervals; a turn whose "
               "prompt does not fit the model's context is not sent and counts as failed (\"–\" where no turn was "
               "sent).")


def _step_limits_view(run: RunOutputs, experiment: Experiment) -> list | None:
    by_cap = run.table(experiment.notebook, "by_cap")
    if by_cap is None:
        return None
    return [*arm_view(run.table(experiment.notebook, "by_arm"), " Per arm and cap, every task of the run; the "
                      "ceiling replays the gold calls whatever the cap."),
            by_cap, run.table(experiment.notebook, "by_length"),
            run.table(experiment.notebook, "by_domain")]


def _ragas_view(run: RunOutputs, experiment: Experiment) -> list | None:
    by_kind = run.table(experiment.notebook, "by_kind")
    if by_kind is None:
        return None
    failures = run.table(experiment.notebook, "judge_failures")
    by_scenario = run.table(experiment.notebook, "by_scenario")
    return [by_kind, *arm_view(run.table(experiment.notebook, "by_arm"), " Per arm and kind: the router's "
                               "top-k of the agent on every item, the other arms on the kinds of `arm_kinds`; the "
                               "ceiling only on the items with gold calls."),
            failures if failures is not None else "No judge ran in this run.",
            *([by_scenario] if by_scenario is not None else [])]


def _scale_view(run: RunOutputs, experiment: Experiment) -> list | None:
    table = scale_summary(run)
    korean = scale_summary(run, "korean_crowding")
    bfcl = run.table(experiment.notebook, "bfcl_routing")
    return None if table is None else [*([korean] if korean is not None else []), table,
                                       *([bfcl] if bfcl is not None else [])]


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


def section(run: RunOutputs, experiment: Experiment,
            writers: dict[str, Callable[[RunOutputs], list[str]]] | None = None) -> list:
    """What the report shows for one experiment, in this order: its heading and paragraph, its findings
    (the sentences `writers` writes from its tables, or else the findings its notebook wrote), its
    figures (the notebook's, then any its view draws), then its tables in full (or its summary view);
    one line when it is not in the run."""
    head = f"## {experiment.heading}" + (f"\n\n{experiment.about}" if experiment.about else "")
    items = VIEWS.get(experiment.notebook, _tables_view)(run, experiment)
    if items is None:
        return [head, f"{experiment.notebook} is not in this run."]
    writer = (writers or {}).get(experiment.notebook)
    sentences = writer(run) if writer else []
    text = "\n".join(f"- {s}" for s in sentences) + "\n" if sentences else findings(run, experiment.notebook)
    drawn = [i for i in items if i is not None and not isinstance(i, (str, pd.DataFrame))]  # a view's own figures
    return [head, *([text] if text else []), *run.figures.get(experiment.notebook, []), *drawn,
            *[i for i in items if isinstance(i, (str, pd.DataFrame))]]


def report_sections(run: RunOutputs, default_arm: str, proposed_cap: int = 3) -> list[list]:
    """Every experiment's section, with the findings written from the tables."""
    writers = findings_writers(default_arm, proposed_cap)
    return [section(run, experiment, writers) for experiment in sections()]


def verdict_table(run: RunOutputs, default_arm: str) -> pd.DataFrame:
    """Each target of `toolroute_lab.e07_report.targets` with its measured value, CI and verdict (numeric)."""
    return targets.verdicts(run.run_dir, default_arm)


def verdict_summary(verdicts: pd.DataFrame) -> str:
    """One sentence over the verdict table: how many targets are met, missed and not measured."""
    counts = verdicts["verdict"].value_counts()
    missed = verdicts[verdicts["verdict"] == "missed"]["target"].tolist()
    return (f"**{int(counts.get('met', 0))} of {len(verdicts)} targets met, {int(counts.get('missed', 0))} missed, "
            f"{int(counts.get('not measured', 0))} not measured in this run.**"
            + (f" Missed: {'; '.join(missed)}." if missed else ""))


def show(items: list) -> None:
    """Display a section's items in a notebook (tables whole, as HTML)."""
    from IPython.display import HTML, Image, Markdown, display  # only inside a notebook

    for item in items:
        if isinstance(item, Path):
            display(Image(filename=str(item)))
        elif isinstance(item, str):
            display(Markdown(item))
        elif isinstance(item, pd.DataFrame):
            if item.attrs.get("caption"):
                display(Markdown(item.attrs["caption"]))
            display(HTML(table_html(item)))
        else:
            display(item)

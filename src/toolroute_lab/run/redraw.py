"""Redraw a run's figures from the tables it committed, without rerunning a notebook or a model.

    python -m toolroute_lab.run.redraw results/reference

Each figure whose inputs are in the run folder is drawn again by its notebook folder's `plots.py` and saved
over the old PNG; a figure whose inputs are not there is listed as skipped, with the reason. Two
figures need more than the tables: `02/confusions_test.png` also reads the split's queries and the
cards' modules (committed under data/ and toolcards/), and `01/chunk_lengths.png` rebuilds the chunks
from the documents (deterministic, no model; the chunk statistics must equal the run's
`chunk_stats.csv`, or it is skipped).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pandas as pd

from toolroute.config import queries_path, toolcards_dir
from toolroute_lab.e01_ingest import plots as ingest_plots
from toolroute_lab.e02_ablation import plots as ablation_plots
from toolroute_lab.e03_step_limits import plots as step_plots
from toolroute_lab.e04_ragas_eval import plots as ragas_plots
from toolroute_lab.e05_scale import plots as scale_plots
from toolroute_lab.e06_card_improvement import plots as card_plots
from toolroute_lab.shared import figures
from toolroute_lab.shared.run_tables import run_parameters
from toolroute.queries import load_queries
from toolroute.routing import RouterConfig, open_catalog


def _queries(split: str):
    catalog = open_catalog(toolcards_dir("insurance"))
    return load_queries(queries_path("insurance", split), catalog.names), catalog


def _n_call(split: str) -> int:
    queries, _ = _queries(split)
    return sum(q.is_call for q in queries)


def redraw_ingest(run: Path, chunks: bool = True) -> dict[str, str]:
    folder, done = run / "01_ingest", {}
    params = run_parameters(run, "01_ingest")
    retrieval = folder / "retrieval.csv"
    if retrieval.is_file():
        ingest_plots.hit_rate_plot(pd.read_csv(retrieval), params.get("ks", [1, 3, 5, 10]), folder / "hit_rate.png",
                            embedder=params.get("embedder", ""))
        done["01_ingest/hit_rate.png"] = "redrawn from retrieval.csv"
    stats = folder / "chunk_stats.csv"
    if chunks and stats.is_file() and params:
        from toolroute.domains.insurance.documents import build_documents  # writes PDFs: only when redrawing chunks
        from toolroute_lab.e01_ingest import rag_eval  # reads the documents: only when redrawing chunks

        size, overlap = params["chunk_size"], params["overlap"]
        with tempfile.TemporaryDirectory() as tmp:
            docs = build_documents(tmp)
            lengths = rag_eval.chunk_lengths(rag_eval.chunks_by_collection(docs, size, overlap, params["collections"]))
        try:
            pd.testing.assert_frame_equal(rag_eval.chunk_stats(lengths), pd.read_csv(stats), check_dtype=False)
            same = True
        except AssertionError:
            same = False
        if same:
            ingest_plots.chunk_length_plot(lengths, size, overlap, folder / "chunk_lengths.png")
            done["01_ingest/chunk_lengths.png"] = "redrawn from the documents' chunks (statistics = chunk_stats.csv)"
        else:
            done["01_ingest/chunk_lengths.png"] = "skipped: the rebuilt chunks differ from chunk_stats.csv"
    return done


def redraw_ablation(run: Path, split: str = "test") -> dict[str, str]:
    folder, done = run / "02_toolcard_ablation", {}
    params = run_parameters(run, "02_toolcard_ablation")
    default_arm = params.get("default_arm") or RouterConfig().label
    table_path = folder / f"ablation_{split}.csv"
    if not table_path.is_file():
        return done
    table = pd.read_csv(table_path)
    ks = sorted(int(c.split("@")[1]) for c in table.columns if c.startswith("recall@") and c[7:].isdigit())
    ablation_plots.recall_curves(table, ks, split, folder / f"recall_curves_{split}.png", default_arm=default_arm)
    done[f"02_toolcard_ablation/recall_curves_{split}.png"] = f"redrawn from ablation_{split}.csv"
    dev_path = folder / "ablation_dev.csv"
    ablation_plots.metric_bars(table, "hit@1", split, folder / f"hit1_{split}.png", default_arm=default_arm,
                      dev=pd.read_csv(dev_path) if dev_path.is_file() else None)
    done[f"02_toolcard_ablation/hit1_{split}.png"] = f"redrawn from ablation_{split}.csv and ablation_dev.csv"
    failures = folder / f"failures_{split}.csv"
    if failures.is_file():
        queries, catalog = _queries(split)
        module_of = {tool: module for module, tools in catalog.modules().items() for tool in tools}
        outcomes = ablation_plots.outcomes_from_failures(pd.read_csv(failures), queries, module_of)
        ablation_plots.confusion_plot(outcomes, default_arm, split, folder / f"confusions_{split}.png")
        done[f"02_toolcard_ablation/confusions_{split}.png"] = (
            f"redrawn from failures_{split}.csv, the {split} queries and the cards' modules")
    scores = folder / f"no_call_scores_{split}.csv"
    if scores.is_file():
        threshold = table.set_index("arm_label").loc[default_arm, "no_call_threshold"]
        ablation_plots.no_call_scores(pd.read_csv(scores), float(threshold), default_arm, split, folder / f"no_call_{split}.png")
        done[f"02_toolcard_ablation/no_call_{split}.png"] = f"redrawn from no_call_scores_{split}.csv"
    else:
        done[f"02_toolcard_ablation/no_call_{split}.png"] = (
            f"skipped: needs no_call_scores_{split}.csv (per-query scores, written by runs after this change)")
    decisions, roc = folder / f"no_call_decisions_{split}.csv", folder / f"no_call_roc_{split}.csv"
    if decisions.is_file() and roc.is_file():
        ablation_plots.no_call_curves(pd.read_csv(decisions), pd.read_csv(roc), split, folder / f"no_call_curves_{split}.png",
                             default_arm=default_arm)
        done[f"02_toolcard_ablation/no_call_curves_{split}.png"] = (
            f"redrawn from no_call_decisions_{split}.csv and no_call_roc_{split}.csv")
    recall = folder / f"tool_recall_{split}.csv"
    if recall.is_file():
        ablation_plots.tool_recall_plot(pd.read_csv(recall), default_arm, split, folder / f"tool_recall_{split}.png")
        done[f"02_toolcard_ablation/tool_recall_{split}.png"] = f"redrawn from tool_recall_{split}.csv"
    return done


def redraw_step_limits(run: Path) -> dict[str, str]:
    folder, done = run / "03_step_limits", {}
    if (folder / "runs.csv").is_file():
        from toolroute_lab.e03_step_limits.step_limits import read_runs  # loads the agent stack: only for this figure

        runs = read_runs(folder / "runs.csv")
        step_plots.completion_plot(runs, folder / "completion_vs_cap.png")
        step_plots.cost_plot(runs, folder / "cost_vs_cap.png")
        done["03_step_limits/completion_vs_cap.png"] = done["03_step_limits/cost_vs_cap.png"] = "redrawn from runs.csv"
    if (folder / "by_arm.csv").is_file():
        cap = run_parameters(run, "03_step_limits").get("proposed_cap", 3)
        by_arm = pd.read_csv(folder / "by_arm.csv")
        domains = ", ".join(pd.read_csv(folder / "runs.csv", usecols=["domain"])["domain"].unique()) \
            if (folder / "runs.csv").is_file() else ""
        figures.arm_cost_plot(by_arm[by_arm["cap"] == cap], folder / "arms_cost.png",
                            title=f"Token cost vs completion per arm at cap {cap} — {domains}")
        done["03_step_limits/arms_cost.png"] = f"redrawn from by_arm.csv (cap {cap})"
    return done


def redraw_ragas(run: Path) -> dict[str, str]:
    folder, done = run / "04_ragas_eval", {}
    if (folder / "scores.csv").is_file():
        ragas_plots.metric_plot(pd.read_csv(folder / "scores.csv"), folder / "metrics.png")
        done["04_ragas_eval/metrics.png"] = "redrawn from scores.csv"
    if (folder / "by_arm.csv").is_file():
        kinds = run_parameters(run, "04_ragas_eval").get("arm_kinds")
        kinds = [kinds] if isinstance(kinds, str) else kinds
        by_arm = pd.read_csv(folder / "by_arm.csv")
        if kinds is None or len(kinds) == 1:  # the pool every arm ran: all items, or the one kind of arm_kinds
            pool = "all" if kinds is None else kinds[0]
            rows, note = ragas_plots.same_items(by_arm[by_arm["kind"] == pool])
            figures.arm_cost_plot(rows, folder / "arms_cost.png",
                                title="Token cost vs completion per arm — " +
                                ("every item pooled" if kinds is None else f"the {pool} items the arms ran") + note)
            done["04_ragas_eval/arms_cost.png"] = f"redrawn from by_arm.csv ({pool})"
        else:
            done["04_ragas_eval/arms_cost.png"] = "skipped: arm_kinds names several kinds, whose pool by_arm.csv lacks"
    return done


def redraw_scale(run: Path) -> dict[str, str]:
    folder, done = run / "05_scale", {}
    if (folder / "scale.csv").is_file():
        params = run_parameters(run, "05_scale")
        split = params.get("split", "test")
        queries, _ = _queries(split)
        table = pd.read_csv(folder / "scale.csv")
        if "latency_passes" not in table.columns:  # tables from before the column: one pass each
            table = table.assign(latency_passes=1, latency_queries=min(params.get("latency_queries", 100), len(queries)))
        bfcl = pd.read_csv(folder / "bfcl_routing.csv") if (folder / "bfcl_routing.csv").is_file() else None
        korean = pd.read_csv(folder / "korean_crowding.csv") if (folder / "korean_crowding.csv").is_file() else None
        scale_plots.plot_scale(table, folder / "scale.png", bfcl=bfcl, n_call=sum(q.is_call for q in queries),
                         n_no_call=sum(not q.is_call for q in queries), korean=korean, split=split)
        done["05_scale/scale.png"] = (f"redrawn from scale.csv, bfcl_routing.csv" +
                                      (" and korean_crowding.csv" if korean is not None else "") +
                                      f" (n from the {split} queries)")
    return done


def redraw_card_improvement(run: Path) -> dict[str, str]:
    folder, done = run / "06_card_improvement", {}
    if (folder / "augmentation.csv").is_file() and (folder / "rerank.csv").is_file():
        tables = []
        for name in ("augmentation.csv", "rerank.csv"):
            t = pd.read_csv(folder / name)
            if "n_call" not in t.columns:  # tables from before the column: Hit@1 is over the split's call rows
                t["n_call"] = t["split"].map(_n_call)
            tables.append(t)
        cost = folder / "augmentation_cost.csv"
        card_plots.card_improvement_plot(*tables, folder / "card_improvement.png",
                                    augmentation_cost=pd.read_csv(cost).iloc[0].to_dict() if cost.is_file() else None)
        done["06_card_improvement/card_improvement.png"] = "redrawn from augmentation.csv, rerank.csv, augmentation_cost.csv"
    return done


def redraw(run: str | Path, chunks: bool = True) -> dict[str, str]:
    """Every figure of `run` that can be drawn from its tables; {figure: what was done}."""
    run = Path(run)
    done: dict[str, str] = {}
    for step in (lambda r: redraw_ingest(r, chunks), redraw_ablation, redraw_step_limits, redraw_ragas, redraw_scale,
                 redraw_card_improvement):
        done.update(step(run))
    return done


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m toolroute_lab.run.redraw RUN_FOLDER", file=sys.stderr)
        return 2
    for figure, what in redraw(args[0]).items():
        print(f"{figure}: {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

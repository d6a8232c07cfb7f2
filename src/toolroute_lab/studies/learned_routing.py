"""Learned routing against the default on the tuning splits (issue 40, item 2):
`python -m toolroute_lab.studies.learned_routing [--train-adapter] [--test]` (writes `results/learned_routing.csv`).

Arms, all over the insurance cards and `data/insurance/synthetic/queries.jsonl`:

- `default`: the router as configured by default (hybrid with the cascade);
- `classifier`: `toolroute.routing.learned` (its own no-call rule);
- `hybrid+classifier@w`: `toolroute.routing.ensemble`, the default's hybrid (with its cascade) and the
  classifier fused by RRF, the classifier weighted `w` (WEIGHTS; the weight is chosen on dev + tune);
- `hybrid+adapter`, `dense+adapter`: the default's hybrid and dense arms with the e5 query vector passed
  through the query adapter (`toolroute.query_adapter`) trained on the card lines and the synthetic queries
  against the index's records (`--train-adapter` trains it and writes `data/insurance/synthetic/adapter.npz`).

Each arm's no-call rule is fitted on calib as the default's is. dev, tune and calib are tuning splits: an arm
is adopted only if it wins on dev + tune right call; `--test` reads test once, after that choice.
Per arm and split (and dev+tune together, the adoption criterion): Hit@1, Recall@5, right call, no-call
accuracy, and the paired difference to the default in right call and Hit@1 (bootstrap 95% CI, p);
`results/learned_routing.png` draws the right-call differences.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from toolroute.config import ROOT, queries_path, synthetic_path, toolcards_dir
from toolroute.evaluation.metrics import paired_comparison, row_scores
from toolroute.evaluation.retrieval import route_queries, to_rows

ADAPTER = ROOT / "data" / "insurance" / "synthetic" / "adapter.npz"
TABLE = ROOT / "results" / "learned_routing.csv"
TUNING = ("dev", "tune", "calib")
METRICS = ("hit@1", "recall@5", "right_call", "no_call_accuracy")
WEIGHTS = (0.5, 1.0, 2.0)  # the classifier's RRF weight in the ensemble
ADOPT_ON = "dev+tune"
FIGURE = ROOT / "results" / "learned_routing.png"


def train(rank: int = 32, steps: int = 300, seed: int = 0):
    """The adapter of the default embedder over the default index's records, on card lines + synthetic queries."""
    from toolroute.cards import open_catalog
    from toolroute.embeddings import get_embedder
    from toolroute.query_adapter import train_adapter
    from toolroute.routing import RouterConfig
    from toolroute.routing.dense import card_records
    from toolroute.routing.learned import training_rows

    catalog = open_catalog(toolcards_dir("insurance"), edits=False)
    embedder = get_embedder("e5-small")
    names = list(catalog.names)
    records = [(r.document, names.index(card.name)) for card in catalog
               for r in card_records(card, RouterConfig().strategy())]
    record_vectors = embedder.embed_passages([d for d, _ in records])
    rows = training_rows(catalog, synthetic_path("insurance"))
    query_vectors = embedder.embed_queries([t for t, _ in rows])
    start = time.perf_counter()
    adapter = train_adapter(query_vectors, [names.index(tool) for _, tool in rows], record_vectors,
                            [i for _, i in records], len(names), embedder.spec, rank=rank, steps=steps, seed=seed)
    adapter.save(ADAPTER)
    print(f"adapter trained on {len(rows)} pairs against {len(records)} records in {time.perf_counter() - start:.1f} s "
          f"-> {ADAPTER.relative_to(ROOT)}")
    return adapter


def arms() -> dict:
    from toolroute.routing import RouterConfig

    adapted = f"e5-small+adapter:{ADAPTER}"
    out = {"default": RouterConfig(), "classifier": RouterConfig(arm="classifier")}
    out.update({f"hybrid+classifier@{w:g}": RouterConfig(arm="hybrid+classifier", classifier_weight=w) for w in WEIGHTS})
    if ADAPTER.is_file():
        out["hybrid+adapter"] = RouterConfig(embedder=adapted, cascade=False)
        out["dense+adapter"] = RouterConfig(arm="dense", embedder=adapted)
    return out


def evaluate(splits) -> pd.DataFrame:
    from toolroute.queries import load_queries
    from toolroute.routing import build_router

    queries = {s: load_queries(queries_path("insurance", s)) for s in splits}
    routed = {}
    for name, config in arms().items():
        router = build_router(config, progress=False, no_call="fit")
        routed[name] = {s: to_rows(queries[s], route_queries(router, queries[s])) for s in splits}
    if {"dev", "tune"} <= set(splits):  # the adoption criterion: right call on dev and tune together
        for per_split in routed.values():
            per_split[ADOPT_ON] = per_split["dev"] + per_split["tune"]
    records = []
    for name, per_split in routed.items():
        for split, rows in per_split.items():
            scores = [row_scores(r) for r in rows]
            role = "adoption (tuning)" if split == ADOPT_ON else "tuning" if split in TUNING else "test"
            record = {"arm": name, "split": split, "role": role, "n": len(rows)}
            for metric in METRICS:
                values = [s.get(metric, np.nan) for s in scores]
                record[metric] = float(np.nanmean(values)) if not all(np.isnan(values)) else np.nan
            for metric in ("right_call", "hit@1"):
                paired = paired_comparison(routed["default"][split], rows, metric, n_boot=2000)
                record.update({f"{metric}_diff": paired["diff"], f"{metric}_diff_lo": paired["ci_low"],
                               f"{metric}_diff_hi": paired["ci_high"], f"{metric}_p": paired["p_value"]})
            records.append(record)
    return pd.DataFrame(records)


def plot(table: pd.DataFrame, path: Path = FIGURE) -> Path:
    """Each arm's right call minus the default's, with its paired 95% CI, per split (the test split apart)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    others = table[table["arm"] != "default"]
    arms_, splits = list(dict.fromkeys(others["arm"])), list(dict.fromkeys(others["split"]))
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.6 * len(arms_)))
    colours = plt.get_cmap("tab10")
    for j, split in enumerate(splits):
        part = others[others["split"] == split].set_index("arm").reindex(arms_)
        y = np.arange(len(arms_)) + (j - (len(splits) - 1) / 2) * 0.15
        err = [part["right_call_diff"] - part["right_call_diff_lo"], part["right_call_diff_hi"] - part["right_call_diff"]]
        ax.errorbar(part["right_call_diff"], y, xerr=err, fmt="o" if split != "test" else "s", capsize=2,
                    color=colours(j), label=f"{split} (n={int(part['n'].iloc[0])})" + (" · held out" if split == "test" else ""))
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(arms_)), arms_)
    ax.invert_yaxis()
    ax.set_xlabel("right call minus the default's (paired bootstrap 95% CI)")
    ax.set_title("Learned routing against the default; dev, tune, calib and dev+tune are tuning splits")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-adapter", action="store_true")
    parser.add_argument("--test", action="store_true", help="read test too (once, after the choice on the tuning splits)")
    args = parser.parse_args(argv)
    if args.train_adapter:
        train()
    table = evaluate((*TUNING, "test") if args.test else TUNING)
    table.to_csv(TABLE, index=False)
    plot(table)
    print(table[["arm", "split", "n", *METRICS, "right_call_diff", "right_call_diff_lo", "right_call_diff_hi"]]
          .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How much card a router needs: Hit@1 against the number of `when_to_use` examples per card, with and
without `purpose` and `tags` (issue 39, item 2: a curve a practitioner can use when writing cards).

Each point is a catalogue whose cards keep `k` of their examples, drawn at random (seeded) per card and
per draw; a card with fewer than `k` keeps all it has ("all" keeps every example, one draw). The router
is the default configuration with the fields of the field set, its no-call rule refitted on calib for
that catalogue (as every arm of 02), so each point is what a team that wrote that much would get.
Examples that stay are embedded once: records are keyed by their content.
"""

from __future__ import annotations

import random
from typing import Sequence

import pandas as pd
from tqdm.auto import tqdm

from toolroute.cards import Catalog, open_catalog
from toolroute.config import queries_path, toolcards_dir
from toolroute.evaluation.metrics import summarize
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.queries import load_queries
from toolroute.routing import RouterConfig, build_router, default_dev_file

ALL = 0  # `examples` of the catalogue that keeps every example
FIELD_SETS = {"purpose + examples + tags": ("purpose", "when_to_use", "tags"), "examples only": ("when_to_use",)}
METRICS = ("hit@1", "right_call", "recall@5", "mrr")


def with_examples(catalog: Catalog, k: int, rng: random.Random) -> Catalog:
    """`catalog` with each card keeping `k` of its `when_to_use` examples drawn by `rng` (ALL: every one)."""
    if k == ALL:
        return catalog
    cards = {name: card.model_copy(update={"when_to_use": tuple(rng.sample(card.when_to_use, min(k, len(card.when_to_use))))})
             for name, card in catalog.cards.items()}
    return catalog.derived(cards=cards, name=f"{catalog.name}-examples{k}-{rng.random():.6f}")


COLUMNS = ["split", "fields", "examples", "draw", "examples_kept_mean", "n", *METRICS]


def card_content_curve(domain: str = "insurance", splits: Sequence[str] = ("dev", "test"),
                       counts: Sequence[int] = (1, 2, 4, 8, ALL), draws: int = 3,
                       field_sets: dict[str, tuple[str, ...]] | None = None, config: RouterConfig | None = None,
                       seed: int = 0, client=None, progress: bool = True) -> pd.DataFrame:
    """One row per split, field set, example count and draw: the metrics of the router built on that
    catalogue, with the mean number of examples a card kept."""
    from toolroute.chroma import open_client  # the index store: only when the curve is drawn

    if not counts:
        return pd.DataFrame(columns=COLUMNS)
    field_sets = field_sets or FIELD_SETS
    config = config or RouterConfig()
    base = open_catalog(toolcards_dir(domain))
    client = client or open_client(None)
    calib = str(default_dev_file(toolcards_dir(domain)))
    queries = {s: load_queries(queries_path(domain, s), base.names) for s in splits}
    plan = [(label, fields, k, d) for label, fields in field_sets.items() for k in counts
            for d in range(1 if k == ALL else draws)]
    rows = []
    for label, fields, k, draw in tqdm(plan, desc="card content", disable=not progress):
        rng = random.Random(f"{seed}|{k}|{draw}")  # the same draw for every field set: only the fields differ
        catalog = with_examples(base, k, rng)
        router = build_router(config.with_(fields=tuple(fields), dev=calib), catalog, client, progress=False,
                              no_call="fit")
        kept = sum(len(c.when_to_use) for c in catalog) / len(catalog)
        for split, split_queries in queries.items():
            metrics = summarize(to_rows(split_queries, route_queries(router, split_queries)))
            rows.append({"split": split, "fields": label, "examples": k if k != ALL else "all", "draw": draw,
                         "examples_kept_mean": round(kept, 2), "n": len(split_queries),
                         **{m: metrics[m] for m in METRICS}})
    return pd.DataFrame(rows, columns=COLUMNS)


def curve_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per split, field set and example count: the mean over draws, with the lowest and highest draw."""
    if table.empty:
        return pd.DataFrame(columns=["split", "fields", "examples", "draws", "examples_kept_mean", "n", "hit@1",
                                     "hit@1_low", "hit@1_high", "right_call"])
    return (table.groupby(["split", "fields", "examples"], sort=False)
            .agg(draws=("draw", "count"), examples_kept_mean=("examples_kept_mean", "mean"), n=("n", "first"),
                 hit_at_1=("hit@1", "mean"), hit_at_1_low=("hit@1", "min"), hit_at_1_high=("hit@1", "max"),
                 right_call=("right_call", "mean"))
            .rename(columns={"hit_at_1": "hit@1", "hit_at_1_low": "hit@1_low", "hit_at_1_high": "hit@1_high"})
            .reset_index())


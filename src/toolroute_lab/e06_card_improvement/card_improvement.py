"""The seed's next steps as ablation arms: LLM-written card examples and an LLM reranker, with their cost.

Arm 1 (augmentation): each insurance card gets up to `per_card` synthetic when_to_use examples from
the LLM (`toolroute.cards.augment`, leak-filtered against every eval split); the router is rebuilt on the
augmented cards and compared with the authored cards on dev and test, paired.
Arm 2 (reranking): the default router's top candidates reordered by the LLM (`toolroute.routing.rerank`),
compared with the first stage on the same queries. Both report the seconds they cost.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np
import pandas as pd
from langchain_core.messages import AIMessage
from tqdm.auto import tqdm

from toolroute.cards.augment import augment
from toolroute.cards import Catalog
from toolroute.config import queries_path, toolcards_dir
from toolroute.domains.insurance.pack import AUGMENT_PROMPT, RERANK_PROMPT
from toolroute.evaluation.metrics import paired_comparison, summarize
from toolroute.queries import load_queries
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.chroma import open_client
from toolroute.routing.rerank import LLMReranker
from toolroute.routing.router import ToolRouter
from toolroute.routing import RouterConfig, build_router, default_dev_file, open_catalog

METRICS = ("hit@1", "recall@3", "recall@5", "mrr", "no_call_accuracy")
KS = (1, 3, 5)


class NoOpinionLLM:
    """The `replay` stand-in: answers `[]` to everything (no examples written, first-stage order kept).
    It checks the wiring of a smoke run and says nothing about a model."""

    def invoke(self, messages):
        return AIMessage("[]")


def check_parameters(augment_splits: Sequence[str], rerank_split: str) -> None:
    """What the notebook would fail on, checked before any model loads: every split it names exists."""
    for split in dict.fromkeys([*augment_splits, rerank_split]):
        if not queries_path("insurance", split).is_file():
            raise ValueError(f"no insurance query split '{split}' ({queries_path('insurance', split)})")


def spread(rows: Sequence, limit: int) -> list:
    """At most `limit` of `rows`, spread over them (every n-th), not the first ones."""
    step = max(1, len(rows) // limit)
    return list(rows[::step][:limit])


def _router(catalog: Catalog, config: RouterConfig, client, embedder=None) -> ToolRouter:
    calib = default_dev_file(toolcards_dir("insurance"))
    return build_router(config.with_(embedder=embedder or config.embedder, dev=str(calib)), catalog, client,
                        progress=False, no_call="fit")


def _eval_queries_of_every_split() -> list[str]:
    out = []
    for split in ("dev", "calib", "tune", "test"):
        path = queries_path("insurance", split)
        if path.is_file():
            out.extend(q.query for q in load_queries(path))
    return out


def augmentation_arm(llm, per_card: int = 5, splits: Sequence[str] = ("dev", "test"),
                     config: RouterConfig = RouterConfig(), chroma_path=None, embedder=None,
                     names: Sequence[str] | None = None, progress: bool = True, limit: int | None = None):
    """(table per split and arm with paired differences, the AugmentReport, the augmented catalogue).
    `limit`: only that many cards get examples (one LLM call each), spread over the catalogue (quick runs)."""
    base = open_catalog(toolcards_dir("insurance"))
    if limit:
        names = spread(list(names or base.names), limit)
    augmented, report = augment(base, llm, per_card, _eval_queries_of_every_split(), names, progress=progress,
                                system=AUGMENT_PROMPT)
    client = open_client(chroma_path)
    start = time.perf_counter()
    routers = {"authored cards": _router(base, config, client, embedder)}
    base_seconds = time.perf_counter() - start
    start = time.perf_counter()
    same = augmented.cards == base.cards  # nothing kept: the same index, not a second one to build
    routers["authored + synthetic"] = routers["authored cards"] if same else _router(augmented, config, client, embedder)
    index_seconds = time.perf_counter() - start
    rows = []
    for split in splits:
        queries = load_queries(queries_path("insurance", split), base.names)
        routed = {arm: to_rows(queries, route_queries(r, queries)) for arm, r in routers.items()}
        for arm, arm_rows in routed.items():
            metrics = summarize(arm_rows, KS)
            row = {"split": split, "arm": arm, "n": len(queries), "n_call": sum(q.is_call for q in queries),
                   **{m: metrics[m] for m in METRICS}}
            if arm != "authored cards":
                diff = paired_comparison(routed["authored cards"], arm_rows, "hit@1", KS, n_boot=2000)
                row.update({"hit@1_diff": diff["diff"], "hit@1_diff_lo": diff["ci_low"], "hit@1_diff_hi": diff["ci_high"],
                            "generation_seconds": report.seconds, "index_seconds": index_seconds})
            else:
                row["index_seconds"] = base_seconds
            rows.append(row)
    return pd.DataFrame(rows), report, augmented


def rerank_arm(llm, candidates: int = 8, split: str = "test", limit: int | None = None,
               config: RouterConfig = RouterConfig(), chroma_path=None, embedder=None, progress: bool = True):
    """(table: first stage vs reranked on the same queries, with seconds per query; the reranker's stats)."""
    base = open_catalog(toolcards_dir("insurance"))
    queries = load_queries(queries_path("insurance", split), base.names)
    if limit:
        queries = spread(queries, limit)
    router = _router(base, config, open_client(chroma_path), embedder)
    start = time.perf_counter()
    first = route_queries(router, queries)
    first_seconds = (time.perf_counter() - start) / len(queries)
    reranker = LLMReranker(llm, base, candidates, system=RERANK_PROMPT)
    # No-call rows keep their first-stage decision; the LLM reorders only rows the router would call.
    second = [r if r.no_call else reranker.rerank(r) for r in tqdm(first, desc="LLM rerank", unit="q", disable=not progress)]
    rows_a, rows_b = to_rows(queries, first), to_rows(queries, second)
    table = []
    per_query = np.asarray(reranker.stats.per_query_seconds or [0.0])
    for arm, rows, seconds in (("first stage", rows_a, first_seconds),
                               (f"+ LLM rerank of top {candidates}", rows_b, first_seconds + float(np.median(per_query)))):
        metrics = summarize(rows, KS)
        table.append({"split": split, "arm": arm, "n": len(queries), "n_call": sum(q.is_call for q in queries),
                      **{m: metrics[m] for m in METRICS},
                      "seconds_per_query_p50": seconds})
    diff = paired_comparison(rows_a, rows_b, "hit@1", KS, n_boot=2000)
    table[1].update({"hit@1_diff": diff["diff"], "hit@1_diff_lo": diff["ci_low"], "hit@1_diff_hi": diff["ci_high"],
                     "parse_failures": reranker.stats.parse_failures, "llm_calls": reranker.stats.queries})
    return pd.DataFrame(table), reranker.stats

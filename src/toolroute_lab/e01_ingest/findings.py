"""The findings of notebook 01 (ingest) in a few sentences, written from its tables for the report."""

from __future__ import annotations

from typing import Any

from toolroute_lab.e01_ingest import INGEST
from toolroute_lab.shared.run_tables import notebook_parameters


def ingest(run: Any) -> list[str]:
    retrieval = run.table(INGEST.notebook, "retrieval")
    if retrieval is None or retrieval.empty:
        return []
    pooled = retrieval[retrieval["collection"] == "all"].sort_values("chunk_size")
    chosen = notebook_parameters(run, INGEST.notebook).get("chunk_size")
    best = pooled.loc[pooled["mrr"].idxmax()]
    out = [f"Over the {int(best['n'])} questions of both collections, chunk size {int(best['chunk_size'])} has the "
           f"best MRR ({best['mrr']:.3f}; Hit@1 {best['hit@1']:.3f}, Hit@5 {best['hit@5']:.3f}); the sizes tried give "
           + ", ".join(f"{int(r.chunk_size)}: MRR {r.mrr:.3f}" for r in pooled.itertuples()) + "."]
    size = chosen if chosen in set(pooled["chunk_size"]) else int(best["chunk_size"])
    parts = retrieval[(retrieval["chunk_size"] == size) & (retrieval["collection"] != "all")]
    spread = pooled["hit@1"].max() - pooled["hit@1"].min()
    if len(parts) > 1:
        gap = parts["hit@1"].max() - parts["hit@1"].min()
        lead = "The collections differ more than the sizes do" if gap > spread else "The collections differ less than the sizes do"
        out.append(f"{lead}: at chunk size {size}, "
                   + " and ".join(f"{r['collection']} Hit@1 {r['hit@1']:.3f} (n={int(r['n'])})" for _, r in parts.iterrows())
                   + f"; with n={int(parts['n'].min())}, one question moves a rate by {1 / parts['n'].min():.3f}.")
    out.append(f"Across chunk sizes the pooled Hit@1 varies by {spread:.3f} ({round(spread * best['n']):.0f} of "
               f"{int(best['n'])} questions) and no CI is computed, so the choice of size is weakly supported.")
    ing = run.table(INGEST.notebook, "ingest")
    if ing is not None and {"first", "second"} <= set(ing["ingest"]):
        first, second = ing[ing["ingest"] == "first"], ing[ing["ingest"] == "second"]
        out.append(f"Ingesting the unchanged documents again re-embedded {int(second['added'].sum())} of "
                   f"{int(second['chunks'].sum())} chunks and took {second['seconds'].sum():.2f} s, against "
                   f"{first['seconds'].sum():.1f} s the first time.")
    return out

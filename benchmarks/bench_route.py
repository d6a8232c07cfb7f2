"""Routing performance, printed (not asserted): route latency p50/p95 one query at a time, full index
build time, incremental rebuild after one card edit, and the smoke pipeline's wall time.

    python benchmarks/bench_route.py [--pipeline]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from toolroute import OMP_DEFAULTS
from toolroute.config import ROOT, queries_path, toolcards_dir
from toolroute.embeddings import get_embedder, offline_env
from toolroute.queries import load_queries
from toolroute.routing.dense import ToolIndex
from toolroute.chroma import open_client
from toolroute.routing import RouterConfig, build_router, open_catalog


def _forget(router) -> None:
    """Drop the embedder's remembered query vectors, so every timed route embeds its query."""
    forget = getattr(router.dense.embedder, "forget_queries", None) if router.dense is not None else None
    if forget is not None:
        forget()


def latency(router, queries: list[str]) -> tuple[float, float, float]:
    for q in queries[:20]:  # warm-up: lazy imports, Chroma's first query
        router.route(q)
    times = []
    for q in queries:
        _forget(router)
        start = time.perf_counter()
        router.route(q)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95)), statistics.fmean(times)


def hybrid_breakdown(router, queries: list[str]) -> dict[str, float]:
    """p50 ms of each part of a hybrid route on the same queries: the query embedding, the Chroma
    search with the aggregation per tool, and BM25 (tokenizer included); says where the time goes."""
    parts: dict[str, list[float]] = {"query embedding": [], "Chroma search + aggregation": [], "BM25": []}
    for q in queries:
        _forget(router)
        start = time.perf_counter()
        vector = router.dense.embedder.embed_queries([q])
        embedded = time.perf_counter()
        router.dense.search_vectors(vector)
        searched = time.perf_counter()
        router.bm25.scores(q)
        done = time.perf_counter()
        parts["query embedding"].append((embedded - start) * 1000)
        parts["Chroma search + aggregation"].append((searched - embedded) * 1000)
        parts["BM25"].append((done - searched) * 1000)
    return {name: float(np.percentile(times, 50)) for name, times in parts.items()}


_EMBED_LATENCY_CHILD = """
import time
import numpy as np
from toolroute.embeddings import get_embedder
e = get_embedder()
e.embed_passages([f"보험 상품 설명 문장 {i}번" for i in range(160)])  # a batch first, as an index build does
out = []
for gap in (0.0, 0.2):  # back to back, then one query per 200 ms as a served turn sends them
    times = []
    for i in range(40):
        time.sleep(gap)
        start = time.perf_counter()
        e.embed_queries([f"암보험 보험료 얼마예요 {gap} {i}"])
        times.append((time.perf_counter() - start) * 1000)
    out += [np.percentile(times, 50), np.percentile(times, 95)]
print(" ".join(f"{v:.1f}" for v in out))
"""


def _generate_until(base_url: str, stop) -> None:
    import json
    import urllib.request

    body = json.dumps({"model": "local", "max_tokens": 200,
                       "messages": [{"role": "user", "content": "보험 상품을 자세히 설명해 주세요."}]}).encode()
    while not stop.is_set():
        request = urllib.request.Request(f"{base_url}/chat/completions", body, {"content-type": "application/json"})
        urllib.request.urlopen(request, timeout=300).read()


def embedding_next_to_the_llm() -> None:
    """One-query embedding latency idle and while the local LLM generates, per OpenMP setting:
    toolroute's default (a short spin), a very short spin, sleeping threads (PASSIVE) and libgomp's
    own long spin; each back to back and with 200 ms between queries (a served turn's pattern)."""
    import os
    import subprocess
    import sys
    import threading

    from toolroute.llm.server import LLMUnavailable, LocalLLMServer

    base = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY", "TOOLROUTE_OMP_DEFAULTS")}
    arms = {f"toolroute default (GOMP_SPINCOUNT={OMP_DEFAULTS['GOMP_SPINCOUNT']})": base,
            "GOMP_SPINCOUNT=1000": {**base, "TOOLROUTE_OMP_DEFAULTS": "0", "GOMP_SPINCOUNT": "1000"},
            "OMP_WAIT_POLICY=PASSIVE": {**base, "TOOLROUTE_OMP_DEFAULTS": "0", "OMP_WAIT_POLICY": "PASSIVE"},
            "libgomp default (TOOLROUTE_OMP_DEFAULTS=0)": {**base, "TOOLROUTE_OMP_DEFAULTS": "0"}}

    def measure(label: str, env: dict, where: str) -> None:
        out = subprocess.run([sys.executable, "-c", _EMBED_LATENCY_CHILD], env=env, capture_output=True, text=True,
                             check=True).stdout.split()
        print(f"one-query embedding, {where}, {label}: p50 {float(out[0]):.1f} ms, p95 {float(out[1]):.1f} ms; "
              f"one per 200 ms: p50 {float(out[2]):.1f} ms, p95 {float(out[3]):.1f} ms")

    for label, env in arms.items():
        measure(label, env, "idle")
    try:
        server = LocalLLMServer().start()
    except LLMUnavailable as exc:
        print(f"(no embedded LLM to load the cores: {exc})")
        return
    stop = threading.Event()
    load = threading.Thread(target=_generate_until, args=(server.base_url, stop), daemon=True)
    try:
        load.start()
        time.sleep(2)
        for label, env in arms.items():
            measure(label, env, "LLM generating")
    finally:
        stop.set()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pipeline", action="store_true", help="also time the smoke papermill pipeline")
    args = parser.parse_args()
    offline_env()
    catalog = open_catalog(toolcards_dir("insurance"))
    queries = [q.query for s in ("dev", "calib", "test") for q in load_queries(queries_path("insurance", s), catalog.names)]
    get_embedder()  # model load is not index build time
    with tempfile.TemporaryDirectory() as tmp:
        client = open_client(Path(tmp) / "chroma")
        start = time.perf_counter()
        report = ToolIndex(catalog, client=client).build(progress=False)
        print(f"catalogue: {len(catalog)} tools, {report.records} records (multi-vector)")
        print(f"full index build (embed + write): {time.perf_counter() - start:.2f} s")

        edited = open_catalog(toolcards_dir("insurance"))
        name = edited.names[0]
        card = edited.cards[name]
        edited.cards[name] = card.model_copy(update={"when_to_use": card.when_to_use[:-1] + ("편집된 예시 문장입니다",)})
        start = time.perf_counter()
        report = ToolIndex(edited, client=client).build(progress=False)
        print(f"incremental rebuild after editing one card: {time.perf_counter() - start:.2f} s "
              f"(re-embedded {report.embedded} of {report.records} records)")
        start = time.perf_counter()
        report = ToolIndex(edited, client=client).build(progress=False)
        print(f"no-op rebuild (nothing changed): {time.perf_counter() - start:.2f} s (re-embedded {report.embedded})")
        start = time.perf_counter()
        build_router(RouterConfig(arm="hybrid"), edited, client=client, progress=False)
        print(f"fitting the no-call rule (routes every calibration query): {time.perf_counter() - start:.2f} s")

        for arm in ("dense", "bm25", "hybrid"):
            r = build_router(RouterConfig(arm=arm), catalog, client=client, progress=False)
            p50, p95, mean = latency(r, queries)
            print(f"route latency, {arm:<6} one query at a time (n={len(queries)}): "
                  f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, mean {mean:.1f} ms")
            if arm == "hybrid":
                print("  hybrid p50 by part: " + ", ".join(f"{name} {ms:.1f} ms"
                                                           for name, ms in hybrid_breakdown(r, queries).items()))
        cascade = build_router(RouterConfig(cascade=True), catalog, client=client, progress=False)
        skipped = sum(bool(res.features.get("cascade")) for res in cascade.route_many(queries))
        p50, p95, mean = latency(cascade, queries)
        print(f"route latency, hybrid+cascade one query at a time (n={len(queries)}, dense pass skipped for "
              f"{skipped}): p50 {p50:.1f} ms, p95 {p95:.1f} ms, mean {mean:.1f} ms")
        learned = build_router(RouterConfig(arm="hybrid+classifier"), catalog, client=client, progress=False)
        p50, p95, mean = latency(learned, queries)
        print(f"route latency, hybrid+classifier (+cascade) one query at a time (n={len(queries)}): "
              f"p50 {p50:.1f} ms, p95 {p95:.1f} ms, mean {mean:.1f} ms")
    embedding_next_to_the_llm()
    if args.pipeline:
        from toolroute_lab.run.pipeline import run_pipeline

        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            run_pipeline(ROOT / "notebooks/params/smoke.yaml", run_id="bench", runs_root=tmp)
            print(f"smoke pipeline wall time: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()

"""Card edit → effective in the running router, and unregister → never routed again (issue 22).

Printed, not asserted. In process through the served card API (FastAPI's TestClient, no sockets),
with the default router (hybrid, e5-small) over the insurance cards in a temporary index and card
store: each round adds one when_to_use example to a card with its current version as If-Match and
times the PUT (store write + in-place re-embedding) and the next /api/route call.

`--scale` does the same over the 2,628-tool catalogue of the scale experiment (05_scale: the 54
insurance cards plus 2,574 BFCL distractors, seed 0): the editable cards are the insurance ones, the
distractors are routed alongside them. It also times building that index from nothing.

    python benchmarks/bench_cards.py            # 54 tools
    python benchmarks/bench_cards.py --scale    # 54 tools, then 2,628 tools (builds a 2,628-tool index)
    python benchmarks/bench_cards.py --only-scale --chroma DIR   # 2,628 tools, the index kept in DIR
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from toolroute.cards import Catalog
from toolroute.cards.store import CardStore
from toolroute.chroma import open_client
from toolroute.config import toolcards_dir
from toolroute.embeddings import offline_env
from toolroute.routing import RouterConfig, build_router
from toolroute.serve.cards_api import CardOps, card_routes

ROUNDS = 20
CARDS = ["premium_estimate", "claim_guide", "rider_list", "product_search", "surrender_value_explain"]
SCALE_TOOLS = 2628  # the largest size of the scale experiment


class ScaleCardOps(CardOps):
    """The card operations of a router whose catalogue is the store's cards plus fixed distractors."""

    def __init__(self, router, store, distractors: Catalog, **kwargs):
        super().__init__(router, store, **kwargs)
        self.distractors = distractors

    def live_catalog(self) -> Catalog:
        catalog = super().live_catalog()
        return catalog.derived(cards={**catalog.cards, **self.distractors.cards}, authored=False)


def rounds(client: TestClient, tools: int, n: int = ROUNDS) -> None:
    auth = {"Authorization": "Bearer bench"}
    effective, applied, first = [], [], 0
    for i in range(n):
        name = CARDS[i % len(CARDS)]
        card = client.get(f"/api/tools/{name}").json()
        example = f"벤치마크 예시 문장 {i}번 {name} 관련 요청"
        start = time.perf_counter()
        response = client.put(f"/api/tools/{name}/card", headers={**auth, "If-Match": str(card["version"])},
                              json={"when_to_use": [*card["card"]["when_to_use"], example]})
        routed = client.post("/api/route", json={"query": example, "k": 1}).json()
        effective.append(time.perf_counter() - start)
        assert response.status_code == 200, response.text
        applied.append(response.json()["applied_seconds"])
        first += routed["tools"][0]["name"] == name
    print(f"edit → next /api/route reflects it, {tools:,} tools, {n} edits: p50 {statistics.median(effective):.3f} s, "
          f"max {max(effective):.3f} s (applying to the live router: p50 {statistics.median(applied):.3f} s); "
          f"the edited card ranked first for its new example in {first} of {n}")
    start = time.perf_counter()
    gone = client.delete("/api/tools/rider_list", headers=auth)
    assert gone.status_code == 200, gone.text
    seconds = time.perf_counter() - start
    queries = [f"{i}번 특약 목록 보여줘" for i in range(1000)]
    start = time.perf_counter()
    seen = sum(t["name"] == "rider_list" for q in queries
               for t in client.post("/api/route", json={"query": q, "k": 5}).json()["tools"])
    routes = time.perf_counter() - start
    print(f"unregister rider_list ({seconds:.3f} s) → appearances in the next 1,000 route calls (top 5): {seen} "
          f"({routes:.1f} s for the 1,000)")


def client_for(ops: CardOps) -> TestClient:
    app = FastAPI()
    app.include_router(card_routes(lambda: ops))
    return TestClient(app)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", action="store_true", help=f"also the {SCALE_TOOLS:,}-tool catalogue (slow to build)")
    parser.add_argument("--only-scale", action="store_true", help=f"the {SCALE_TOOLS:,}-tool catalogue only")
    parser.add_argument("--chroma", type=Path, default=None,
                        help="keep the scale index in this folder (a second run reuses it); default: a temporary one")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args(argv)
    offline_env()
    os.environ["TOOLROUTE_ADMIN_TOKEN"] = "bench"
    if not args.only_scale:
        with tempfile.TemporaryDirectory(prefix="toolroute-bench-cards-") as folder:
            store = CardStore(toolcards_dir("insurance"), Path(folder) / "insurance.json")
            start = time.perf_counter()
            router = build_router(RouterConfig(), store.catalog(), open_client(Path(folder) / "chroma"), progress=False)
            print(f"index build (54 tools, {router.build_report.records} records): {time.perf_counter() - start:.1f} s")
            rounds(client_for(CardOps(router, store, audit_path=Path(folder) / "audit.jsonl")), 54, args.rounds)
    if args.scale or args.only_scale:
        scale(args.chroma, args.rounds)


def scale(chroma: Path | None, n: int) -> None:
    from toolroute.external import bfcl  # the BFCL wheel is read only for the scale part

    with tempfile.TemporaryDirectory(prefix="toolroute-bench-cards-scale-") as folder:
        store = CardStore(toolcards_dir("insurance"), Path(folder) / "insurance.json")
        base = store.catalog()
        grown = bfcl.with_distractors(base, SCALE_TOOLS - len(base), seed=0)
        distractors = grown.derived(cards={n: c for n, c in grown.cards.items() if n not in base})
        catalog = base.derived(cards={**base.cards, **distractors.cards}, authored=False)
        start = time.perf_counter()
        router = build_router(RouterConfig(), catalog, open_client(chroma or Path(folder) / "chroma"), progress=True)
        report = router.build_report
        print(f"index build ({len(catalog):,} tools, {report.records:,} records, {report.embedded:,} embedded, "
              f"{report.reused:,} reused): {time.perf_counter() - start:.1f} s")
        ops = ScaleCardOps(router, store, distractors, audit_path=Path(folder) / "audit.jsonl")
        rounds(client_for(ops), len(catalog), n)


if __name__ == "__main__":
    main()

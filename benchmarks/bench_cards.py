"""Card edit → effective in the running router, and unregister → never routed again (issue 22).

Printed, not asserted. In process through the served card API (FastAPI's TestClient, no sockets),
with the default router (hybrid, e5-small) over the insurance cards in a temporary index and card
store: each round adds one when_to_use example to a card with its current version as If-Match and
times the PUT (store write + in-place re-embedding) and the next /api/route call.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from toolroute.cards.store import CardStore
from toolroute.chroma import open_client
from toolroute.config import toolcards_dir
from toolroute.embeddings import offline_env
from toolroute.routing import RouterConfig, build_router
from toolroute.serve.cards_api import CardOps, card_routes

ROUNDS = 20
CARDS = ["premium_estimate", "claim_guide", "rider_list", "product_search", "surrender_value_explain"]


def main() -> None:
    offline_env()
    with tempfile.TemporaryDirectory(prefix="toolroute-bench-cards-") as folder:
        os.environ["TOOLROUTE_ADMIN_TOKEN"] = "bench"
        store = CardStore(toolcards_dir("insurance"), Path(folder) / "insurance.json")
        start = time.perf_counter()
        router = build_router(RouterConfig(), store.catalog(), open_client(Path(folder) / "chroma"), progress=False)
        print(f"index build (54 tools, {router.build_report.records} records): {time.perf_counter() - start:.1f} s")
        ops = CardOps(router, store, audit_path=Path(folder) / "audit.jsonl")
        app = FastAPI()
        app.include_router(card_routes(lambda: ops))
        client = TestClient(app)
        auth = {"Authorization": "Bearer bench"}
        effective, applied, first = [], [], 0
        for i in range(ROUNDS):
            name = CARDS[i % len(CARDS)]
            card = client.get(f"/api/tools/{name}").json()
            example = f"벤치마크 예시 문장 {i}번 {name} 관련 요청"
            start = time.perf_counter()
            response = client.put(f"/api/tools/{name}/card", headers={**auth, "If-Match": str(card["version"])},
                                  json={"when_to_use": [*card["card"]["when_to_use"], example]})
            routed = client.post("/api/route", json={"query": example, "k": 1}).json()
            effective.append(time.perf_counter() - start)
            applied.append(response.json()["applied_seconds"])
            assert response.status_code == 200, response.text
            first += routed["tools"][0]["name"] == name
        print(f"edit → next /api/route reflects it, 54 tools, {ROUNDS} edits: p50 {statistics.median(effective):.3f} s, "
              f"max {max(effective):.3f} s (re-embedding in place: p50 {statistics.median(applied):.3f} s); "
              f"the edited card ranked first for its new example in {first} of {ROUNDS}")
        client.delete("/api/tools/rider_list", headers=auth)
        queries = [f"{i}번 특약 목록 보여줘" for i in range(1000)]
        seen = sum(t["name"] == "rider_list" for q in queries
                   for t in client.post("/api/route", json={"query": q, "k": 5}).json()["tools"])
        print(f"unregister rider_list → appearances in the next 1,000 route calls (top 5): {seen}")


if __name__ == "__main__":
    main()

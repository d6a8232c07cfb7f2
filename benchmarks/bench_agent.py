"""Agent figures, printed not asserted: prompt tokens with top-5 vs all tools bound, the input
guardrail's block rates, false-block rate and latency, and the time a turn spends before the LLM
(L1 + L2 + routing) with the query embedding shared or computed twice. Run: `make bench`."""

from __future__ import annotations

import json
import statistics
import time

from toolroute.agent.guardrails import fit_domain_gate, l1_violation
from toolroute.agent.pack import load_pack
from toolroute.config import queries_path, toolcards_dir
from toolroute_lab.shared.agent_eval import prompt_sizes
from toolroute_lab.studies.guard_eval import evaluate, load_jsonl, redteam_path
from toolroute.routing import RouterConfig, build_router, default_dev_file


def main() -> None:
    pack = load_pack("insurance")
    router = build_router(RouterConfig(), progress=False)
    test = load_jsonl(queries_path("insurance", "test"))
    in_domain = [r["query"] for r in test if r["expected_tools"]]
    print("prompt tokens (median, Qwen GGUF tokenizer + chat template):")
    print(json.dumps(prompt_sizes(pack, router, in_domain), ensure_ascii=False))
    gate = fit_domain_gate(pack, router.dense.embedder, default_dev_file(toolcards_dir("insurance")))
    result, _ = evaluate(gate, load_jsonl(redteam_path()), in_domain)
    print("input guardrail (red-team set vs test in-domain queries):")
    print(json.dumps(result, ensure_ascii=False))
    print("before the LLM, per turn (L1 + L2 + routing), test queries:")
    print(json.dumps(pre_llm_latency(gate, router, [r["query"] for r in test]), ensure_ascii=False))


def pre_llm_latency(gate, router, queries: list[str]) -> dict:
    """ms per turn with the guardrail's query embedding reused by the router (the default) and with
    both embedding it (the remembered vectors cleared in between), interleaved so load hits both."""
    embedder = router.dense.embedder

    def turn(query: str, share: bool) -> float:
        embedder.forget_queries()
        start = time.perf_counter()
        l1_violation(query)
        gate.in_domain(query)
        if not share:
            embedder.forget_queries()
        router.route(query)
        return (time.perf_counter() - start) * 1000

    shared, twice = [], []
    for query in queries:
        shared.append(turn(query, True))
        twice.append(turn(query, False))

    def stats(xs):
        xs = sorted(xs)
        return {"p50_ms": round(statistics.median(xs), 1), "p95_ms": round(xs[int(0.95 * (len(xs) - 1))], 1)}

    return {"queries": len(queries), "embedding_shared": stats(shared), "embedded_twice": stats(twice)}


if __name__ == "__main__":
    main()

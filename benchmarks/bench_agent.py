"""Agent figures, printed not asserted: prompt tokens with top-5 vs all tools bound, and the input
guardrail's block rates, false-block rate and latency. Run: `make bench` (or this file directly)."""

from __future__ import annotations

import json


from toolroute.agent.guardrails import fit_domain_gate
from toolroute.agent.pack import load_pack
from toolroute.config import queries_path, toolcards_dir
from toolroute.experiments.agent_eval import prompt_sizes
from toolroute.experiments.guard_eval import evaluate, load_jsonl, redteam_path
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


if __name__ == "__main__":
    main()

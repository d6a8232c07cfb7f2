"""Agent figures, printed not asserted: prompt tokens with top-5 vs all tools bound, and the input
guardrail's block rates, false-block rate and latency. Run: `make bench` (or this file directly)."""

from __future__ import annotations

import json
import statistics

from langchain_core.utils.function_calling import convert_to_openai_tool

from toolroute.agent.graph import Agent, AgentConfig
from toolroute.agent.guardrails import fit_domain_gate
from toolroute.agent.pack import load_pack
from toolroute.config import queries_path, toolcards_dir
from toolroute.experiments.guard_eval import evaluate, load_jsonl, redteam_path
from toolroute.llm.tokens import PromptCounter
from toolroute.routing import RouterConfig, build_router, default_dev_file


def prompt_tokens(pack, router, queries: list[str]) -> dict:
    counter = PromptCounter()
    agent = Agent(pack, None, router, None, AgentConfig())
    every_full = [convert_to_openai_tool(t) for t in pack.tools]
    every_compact = [agent.schema(t.name) for t in pack.tools]
    top5, top5_full, none = [], [], []
    for query in queries:
        messages = [{"role": "system", "content": pack.system_prompt}, {"role": "user", "content": query}]
        names = router.route(query).top(5)
        top5.append(counter.count(messages, [agent.schema(n) for n in names]))
        top5_full.append(counter.count(messages, [convert_to_openai_tool(pack.tool(n)) for n in names]))
        none.append(counter.count(messages))
    messages = [{"role": "system", "content": pack.system_prompt}, {"role": "user", "content": queries[0]}]
    all_full, all_compact = counter.count(messages, every_full), counter.count(messages, every_compact)
    median = statistics.median
    return {"queries": len(queries), "no_tools": median(none), "top5_compact": median(top5),
            "top5_full_schemas": median(top5_full), "all_tools_compact": all_compact, "all_tools_full": all_full,
            "saving_top5_vs_all": round(1 - median(top5) / all_full, 3)}


def main() -> None:
    pack = load_pack("insurance")
    router = build_router(RouterConfig(), progress=False)
    test = load_jsonl(queries_path("insurance", "test"))
    in_domain = [r["query"] for r in test if r["expected_tools"]]
    print("prompt tokens (median, Qwen GGUF tokenizer + chat template):")
    print(json.dumps(prompt_tokens(pack, router, in_domain), ensure_ascii=False))
    gate = fit_domain_gate(pack, router.dense.embedder, default_dev_file(toolcards_dir("insurance")))
    result, _ = evaluate(gate, load_jsonl(redteam_path()), in_domain)
    print("input guardrail (red-team set vs test in-domain queries):")
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()

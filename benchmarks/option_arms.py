"""The agent-option arms of issue 24 item 4 (`toolroute_lab.studies.option_arms`) on the dev tasks with the
embedded model: baseline vs constrained tool calls vs tool results as lines. Dev only (the fixed rule in
the module's docstring); the arms are interleaved per task or conversation, so a run cut by `--minutes`
stays paired. Prints the table (Markdown) and writes rows.csv and arms.csv to `--out`; `--out` keeps a
checkpoint, so running the same command again continues.

    nice -n 10 .venv/bin/python benchmarks/option_arms.py --arms baseline,constrained,lines --minutes 40 \
        --out results/runs/option_arms
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from toolroute.agent import AgentConfig, create_agent
from toolroute.agent.graph import build_agent
from toolroute_lab.shared.checkpoint import source_fingerprint
from toolroute_lab.studies.option_arms import option_table, run_option_arms
from toolroute.llm import chat_model, llm_config, shutdown_local_server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arms", default="baseline,constrained,lines")
    parser.add_argument("--minutes", type=float, default=40.0, help="no task or conversation starts after this")
    parser.add_argument("--cap", type=int, default=3)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--scenarios", default=None, help="scenario ids, comma-separated ('' for none; default: the dev rule)")
    parser.add_argument("--no-chains", action="store_true", help="the dev consultations only (no 2-tool chain task)")
    parser.add_argument("--out", type=Path, default=Path("results/runs/option_arms"))
    args = parser.parse_args()
    deadline = time.monotonic() + 60 * args.minutes
    args.out.mkdir(parents=True, exist_ok=True)
    chat = chat_model()
    base: dict[str, object] = {}

    def make_agent(domain: str, options: dict):
        if domain not in base:  # one router and gate per domain, shared by the arms
            base[domain] = create_agent(domain, llm=chat, config=AgentConfig(top_k=args.top_k), memory_path=":memory:")
        agent = base[domain]
        return build_agent(agent.pack, chat, agent.router, agent.gate, AgentConfig(top_k=args.top_k, **options),
                           InMemorySaver())

    started = time.perf_counter()
    try:
        scenarios = None if args.scenarios is None else [s for s in args.scenarios.split(",") if s]
        rows = run_option_arms(make_agent, args.arms.split(","), chain_tasks={} if args.no_chains else None,
                               scenario_ids=scenarios, cap=args.cap, deadline=deadline,
                               checkpoint=args.out / "rows.partial.jsonl",
                               tag=f"{llm_config().identity}|code={source_fingerprint()}|k={args.top_k}")
    finally:
        shutdown_local_server()
    rows.to_csv(args.out / "rows.csv", index=False)
    table = option_table(rows)
    table.to_csv(args.out / "arms.csv", index=False)
    print(f"{len(rows)} runs in {time.perf_counter() - started:.0f} s")
    print(table.to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()

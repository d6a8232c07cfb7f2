"""The reusable agent: one LangGraph pipeline, served for any domain pack.

    from toolroute.agent import create_agent
    agent = create_agent("insurance")                 # embedded local LLM, hybrid router, SQLite memory
    state = agent.ask("70세 아버지 종신보험 보험료 얼마야?", thread_id="call-1")
    state["answer"], state["tool_log"], state["capped"]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolroute.agent.graph import Agent, AgentConfig, AgentState, build_agent, sqlite_checkpointer
from toolroute.agent.pack import DomainPack, load_pack
from toolroute.agent.guardrails import fit_domain_gate
from toolroute.config import data_dir, toolcards_dir
from toolroute.routing import RouterConfig, build_router, default_dev_file
from toolroute.llm import chat_model

__all__ = ["Agent", "AgentConfig", "AgentState", "DomainPack", "build_agent", "create_agent", "load_pack",
           "sqlite_checkpointer"]


def create_agent(domain: str = "insurance", llm: Any = None, config: AgentConfig | None = None,
                 memory_path: str | Path | None = None, client: Any = None, progress: bool = False,
                 guard_with_embeddings: bool = True) -> Agent:
    """Pack + router (built or updated incrementally, no-call rule from the calibration split) +
    L2 domain gate (fitted on the calibration split, else dev) + LLM (`toolroute.llm.chat_model()` by default)."""

    pack = load_pack(domain)
    router = build_router(RouterConfig(catalog=str(toolcards_dir(domain))), client=client, progress=progress)
    gate = None
    if guard_with_embeddings and router.dense is not None:
        # fitted like the no-call rule: on the calibration split when the domain has one (dev queries
        # score too high against cards tuned on them: fitted on dev, 6.6% of test queries were blocked)
        gate = fit_domain_gate(pack, router.dense.embedder, default_dev_file(toolcards_dir(domain)))
    if llm is None:
        llm = chat_model()
    checkpointer = sqlite_checkpointer(memory_path or data_dir() / "memory" / f"{domain}.sqlite")
    return build_agent(pack, llm, router, gate, config, checkpointer)

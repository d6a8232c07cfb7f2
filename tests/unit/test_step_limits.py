"""The step-limit experiment with scripted agents: caps, completion, loops, errors, validation, cut chains, plots.

The agents run the real graph on the threat domain's task file, with stand-in tools of the same names
(no RAG, no embedder) and a scripted LLM that follows each task's gold chain (gold arguments) and
answers with the task's facts only once every gold tool has answered.
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, ConfigDict

from toolroute.agent.graph import AgentConfig, build_agent
from toolroute.agent.pack import DomainPack
from toolroute.agent.tasks import Task, load_tasks
from toolroute_lab.e03_step_limits import plots
from toolroute_lab.e03_step_limits import step_limits
from toolroute_lab.e03_step_limits.step_limits import cut_chains, run_step_limits, score_run, summarise

from fake_llm import ScriptedLLM

TASKS = {t.id: t for t in load_tasks("threat")}
SUBSET = ["th02", "th04", "th10", "th15"]  # 0, 1, 2 and 3 gold tools
THREAT_TOOLS = ["assess_threat_level", "lookup_response_procedure", "check_intercept_asset_availability"]


class AnyArgs(BaseModel):
    model_config = ConfigDict(extra="allow")


def _stand_in(name: str) -> StructuredTool:
    def run(**kwargs: Any) -> dict:
        return {"status": "ok", "summary": f"{name} 결과"}

    return StructuredTool.from_function(run, name=name, description=f"{name} (test stand-in)", args_schema=AnyArgs)


def _answer(task: Task) -> str:
    return " ".join(f if isinstance(f, str) else f[0] for f in task.facts) or "안녕하세요, 도와드리겠습니다."


def _called(messages: list) -> list[str]:
    """Tools whose results the model sees: tool messages, or the final prompt's '- name(' lines."""
    names = [m.name for m in messages if isinstance(m, ToolMessage)]
    text = messages[-1].content if isinstance(messages[-1], HumanMessage) else ""
    return names + [n for n in THREAT_TOOLS if f"- {n}(" in str(text)]


def gold_policy(task: Task, messages: list, tools: list[str]) -> AIMessage:
    """Call the next gold tool while tools are bound; answer with the facts once all gold tools answered."""
    seen = _called(messages)
    step = sum(isinstance(m, ToolMessage) for m in messages)
    if tools and step < task.chain_length:
        args = task.args[step] if task.args else {}
        return _tool_message([(task.gold_tools[step], args)], step)
    done = set(task.gold_tools) <= set(seen)
    return AIMessage(_answer(task) if done else "확인된 내용까지만 안내드립니다.",
                     usage_metadata={"input_tokens": 100, "output_tokens": 10, "total_tokens": 110})


def _tool_message(calls: list[tuple[str, dict]], step: int) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": n, "args": a, "id": f"s{step}c{i}", "type": "tool_call"}
                                     for i, (n, a) in enumerate(calls)],
                     usage_metadata={"input_tokens": 120, "output_tokens": 20, "total_tokens": 140})


class PolicyLLM(ScriptedLLM):
    """Replies by the task the turn asks (found by its query), so the order of runs does not matter."""

    policy: Any = None

    def _reply(self, messages, tools):
        from langchain_core.outputs import ChatGeneration, ChatResult

        self.calls.append({"messages": messages, "tools": tools})
        query = next(m.content for m in messages if isinstance(m, HumanMessage))
        task = next(t for t in TASKS.values() if t.query in query)
        return ChatResult(generations=[ChatGeneration(message=self.policy(task, messages, tools))])


def factory_with(policy: Callable, built: list | None = None):
    def factory(domain: str, top_k: int):
        if built is not None:
            built.append((domain, top_k))
        pack = DomainPack(name=domain, tools=[_stand_in(n) for n in THREAT_TOOLS], system_prompt="테스트 상황실")
        llm = PolicyLLM(calls=[], bound=[], policy=policy)
        return build_agent(pack, llm, config=AgentConfig(use_router=False, top_k=top_k))

    return factory


@pytest.fixture(scope="module")
def frame():
    built: list = []
    out = run_step_limits(["threat"], [1, 2, 3, 4], [5], task_ids=SUBSET, progress=False,
                          agent_factory=factory_with(gold_policy, built))
    out.attrs["built"] = built
    return out


def test_one_row_per_task_and_cap_and_one_agent_per_domain_and_top_k(frame):
    assert len(frame) == len(SUBSET) * 4
    assert frame.attrs["built"] == [("threat", 5)]  # the cap changes in place; the agent is built once
    assert set(frame["chain_length"]) == {0, 1, 2, 3}
    assert (frame["error"] == "").all()


def test_caps_are_respected_and_the_capped_flag_is_set(frame):
    assert (frame["tool_steps"] <= frame["cap"]).all()
    # the scripted model wants exactly the gold chain: capped iff the chain is longer than the cap
    assert (frame["capped"] == (frame["chain_length"] > frame["cap"])).all()
    assert (frame["tool_steps"] == frame[["chain_length", "cap"]].min(axis=1)).all()
    th15 = frame[frame.task_id == "th15"].set_index("cap")
    assert th15.loc[1, "called_tools"] == ["assess_threat_level"]
    assert th15.loc[1, "tool_recall"] == pytest.approx(1 / 3) and th15.loc[1, "tool_precision"] == 1.0
    assert th15.loc[3, "called_tools"] == TASKS["th15"].gold_tools and th15.loc[3, "tools_exact"]


def test_completion_per_chain_length(frame):
    assert (frame["completed"] == (frame["chain_length"] <= frame["cap"])).all()
    zero = frame[frame.task_id == "th02"]
    assert zero["completed"].all() and (zero["called_tools"].map(len) == 0).all() and zero["tool_precision"].eq(1).all()
    # an LLM call per tool step plus the answer (plus the no-tools answer call when capped)
    expected = frame[["chain_length", "cap"]].min(axis=1) + 1 + frame["capped"].astype(int)
    assert (frame["llm_calls"] == expected).all()
    assert (frame["total_tokens"] == frame["prompt_tokens"] + frame["completion_tokens"]).all()
    assert frame["seconds"].notna().all()


def test_scoring_of_single_runs():
    zero, one, three = TASKS["th02"], TASKS["th04"], TASKS["th15"]
    facts = _answer(zero)
    # a 0-tool task is failed by calling a tool, even with the facts in the answer
    called = {"tool_log": [{"name": "assess_threat_level", "args": {}}], "answer": facts}
    row = score_run(zero, called)
    assert row["facts_ok"] and not row["tools_ok"] and not row["completed"] and row["tool_precision"] == 0.0
    assert score_run(zero, {"answer": facts})["completed"]
    assert not score_run(zero, {"answer": "안녕하세요"})["completed"]  # facts missing
    # gold tools called but a fact missing from the answer
    log = [{"name": "assess_threat_level", "args": {"target_type": "순항미사일"}}]
    row = score_run(one, {"tool_log": log, "answer": "확인했습니다."})
    assert row["tools_ok"] and not row["facts_ok"] and not row["completed"]
    assert row["missing_facts"] == ["CRITICAL | 매우 높음"]
    assert score_run(one, {"tool_log": log, "answer": "매우 높음 등급입니다."})["completed"]
    # multiset precision / recall, order, repeated calls
    log3 = [{"name": n, "args": {}} for n in ["check_intercept_asset_availability", "assess_threat_level",
                                              "lookup_response_procedure", "assess_threat_level"]]
    row = score_run(three, {"tool_log": log3, "answer": _answer(three)})
    assert row["completed"] and not row["order_ok"] and not row["tools_exact"]
    assert row["tool_recall"] == 1.0 and row["tool_precision"] == 0.75 and row["repeated_calls"] == 1
    # an LLM failure recorded in the state is an error, and not a completion
    row = score_run(one, {"tool_log": log, "answer": "매우 높음", "error": "APITimeoutError: slow"})
    assert row["error"] == "APITimeoutError: slow" and not row["completed"]


def test_runs_the_cap_never_touched_are_copied_to_larger_caps_and_the_copies_equal_real_runs(frame):
    ran = frame[frame.reused_from_cap == 0]
    # th02 and th04 end uncapped at cap 1; th10 needs caps 1-2 and th15 caps 1-3 before a run ends uncapped
    assert ran.groupby("task_id").cap.max().to_dict() == {"th02": 1, "th04": 1, "th10": 2, "th15": 3}
    assert len(ran) == 7 and (frame.reuse_check == "").all()
    copies = frame[frame.reused_from_cap > 0]
    assert (copies.reused_from_cap < copies.cap).all() and not copies.capped.any()
    every = run_step_limits(["threat"], [1, 2, 3, 4], [5], task_ids=SUBSET, progress=False,
                            agent_factory=factory_with(gold_policy), reuse_uncapped=False)
    assert (every.reused_from_cap == 0).all()
    compared = ["task_id", "cap", "called_tools", "tool_steps", "capped", "completed", "llm_calls", "total_tokens", "answer"]
    pd.testing.assert_frame_equal(frame[compared].reset_index(drop=True), every[compared].reset_index(drop=True))


def test_verify_reuse_runs_copies_anyway_and_says_whether_they_differ():
    answers = iter(range(1000))

    def drifting(task, messages, tools):  # th04's answer changes from run to run: not a deterministic model
        reply = gold_policy(task, messages, tools)
        if task.id == "th04" and not reply.tool_calls:
            reply = AIMessage(f"{reply.content} #{next(answers)}", usage_metadata=reply.usage_metadata)
        return reply

    out = run_step_limits("threat", [1, 2, 3], [5], task_ids=["th02", "th04"], progress=False,
                          agent_factory=factory_with(drifting), verify_reuse=3).set_index(["task_id", "cap"])
    assert out.loc[("th02", 2), "reuse_check"] == "same" and out.loc[("th02", 3), "reused_from_cap"] == 1
    assert out.loc[("th04", 2), "reuse_check"] == "differs"  # one check per task; th04's cap 3 is a copy
    assert out.loc[("th04", 3), "reused_from_cap"] == 1 and out.loc[("th04", 2), "reused_from_cap"] == 0
    assert (out.reuse_check != "").sum() == 2  # verify_reuse=3, but only two tasks


def test_loops_and_repeated_calls_are_counted():
    def looping(task, messages, tools):
        step = sum(isinstance(m, ToolMessage) for m in messages)
        if task.id == "th04" and tools:  # asks for the same call again after the first result
            return _tool_message([("assess_threat_level", dict(task.args[0]))], step)
        if task.id == "th10" and tools and step == 0:  # the same call twice in one reply
            call = ("assess_threat_level", dict(task.args[0]))
            return _tool_message([call, call], step)
        return gold_policy(task, messages, tools)

    out = run_step_limits("threat", [3], [5], task_ids=["th04", "th10"], progress=False,
                          agent_factory=factory_with(looping)).set_index("task_id")
    assert out.loc["th04", "loops"] == 1 and out.loc["th04", "tool_steps"] == 1 and not out.loc["th04", "capped"]
    assert out.loc["th04", "completed"]  # the refused repeat ends in an answer from the first result
    assert out.loc["th10", "repeated_calls"] == 1
    assert out.loc["th10", "called_tools"][:2] == ["assess_threat_level", "assess_threat_level"]
    table = summarise(out.reset_index())["by_cap"]
    assert table.loc[0, "loops"] == 0.5 and table.loc[0, "repeated"] == 0.5


def test_a_failing_task_keeps_its_row_with_the_error():
    def flaky(task, messages, tools):
        if task.id == "th10":
            raise TimeoutError("LLM server timed out")
        return gold_policy(task, messages, tools)

    inner = factory_with(flaky)

    class Exploding:
        """ask() itself raises for one task (not only the LLM inside the graph)."""

        def __init__(self, agent):
            self.agent = agent

        def ask(self, question, thread_id=None, **knobs):  # knobs: this run's max_tool_steps and top_k
            if question == TASKS["th15"].query:
                raise RuntimeError("checkpointer gone")
            return self.agent.ask(question, thread_id, **knobs)

    out = run_step_limits("threat", [1, 3], [5], task_ids=["th04", "th10", "th15"], progress=False,
                          agent_factory=lambda d, k: Exploding(inner(d, k)))
    assert len(out) == 6
    rows = out.set_index(["task_id", "cap"])
    assert rows.loc[("th10", 3), "error"].startswith("TimeoutError") and not rows.loc[("th10", 3), "completed"]
    assert rows.loc[("th15", 3), "error"] == "RuntimeError: checkpointer gone"
    assert rows.loc[("th15", 3), "llm_calls"] == 0 and not rows.loc[("th15", 3), "completed"]
    assert rows.loc[("th04", 1), "completed"] and rows.loc[("th04", 1), "error"] == ""
    assert summarise(out)["by_cap"].set_index("cap").loc[3, "errors"] == 2


def _never(domain, top_k):
    raise AssertionError("no agent may be built before the parameters are checked")


@pytest.mark.parametrize("kwargs, message", [
    ({"domains": ["threat", "space"]}, r"domains: unknown domain\(s\) \['space'\]"),
    ({"domains": []}, "domains: give at least one domain"),
    ({"task_ids": []}, "task_ids: the subset is empty"),
    ({"task_ids": ["th04", "zz99"]}, r"task_ids: \['zz99'\] are not tasks"),
    ({"caps": [0, 3]}, "caps: 0 is below 1"),
    ({"caps": []}, "caps: give at least one value"),
    ({"caps": [1.5]}, "caps: 1.5 is not a whole number"),
    ({"top_ks": [0]}, "top_ks: 0 is below 1"),
])
def test_parameters_are_checked_before_any_work(kwargs, message):
    params = {"domains": ["threat"], "caps": [1, 3], "top_ks": [5], "task_ids": None, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_step_limits(progress=False, agent_factory=_never, **params)


def test_a_domain_without_a_task_file_is_named_with_the_file(monkeypatch, tmp_path):
    real = step_limits.tasks_path
    monkeypatch.setattr(step_limits, "tasks_path", lambda d: tmp_path / d / "tasks.yaml" if d == "insurance" else real(d))
    with pytest.raises(ValueError, match=r"domains: no task file for \['insurance'\] \(expected .*insurance/tasks.yaml\)"):
        run_step_limits(["threat", "insurance"], [1], [5], progress=False, agent_factory=_never)


def test_cut_chains_finds_the_chains_the_cap_cut(frame):
    cuts = cut_chains(frame)
    got = {(r.task_id, r.cap): (r.completed_at, r.cut_before, r.cause) for r in cuts.itertuples()}
    assert got == {
        ("th10", 1): (2, "lookup_response_procedure", "cap"),
        ("th15", 1): (3, "lookup_response_procedure", "cap"),
        ("th15", 2): (3, "check_intercept_asset_availability", "cap"),
    }
    assert cuts.set_index(["task_id", "cap"]).loc[("th15", 2), "called_tools"] == TASKS["th15"].gold_tools[:2]
    assert cut_chains(frame[frame.cap >= 3]).empty


def test_tables_verdict_and_plots(frame, tmp_path):
    import matplotlib.figure

    tables = summarise(frame)
    by_cap = tables["by_cap"].set_index("cap")
    assert list(by_cap["completed"]) == [2, 3, 4, 4]
    assert by_cap.loc[3, "d_completed"] == 1 and by_cap.loc[4, "d_completed"] == 0
    # scripted costs: at cap 2 the 3-tool task pays the refused call and the no-tools answer instead
    assert by_cap.loc[3, "tokens_per_extra_completed"] == 0 and pd.isna(by_cap.loc[4, "tokens_per_extra_completed"])
    by_length = tables["by_length"].set_index(["chain_length", "cap"])
    assert by_length.loc[(3, 2), "completion"] == 0 and by_length.loc[(3, 3), "completion"] == 1
    lines = step_limits.verdict(frame, proposed=3)
    assert any("Cap 3 is the smallest cap reaching the best completion (4/4)" in line for line in lines)
    assert any(line.startswith("- Cap 2 → 3: +1 completed") for line in lines)
    fig = plots.completion_plot(frame, tmp_path / "completion.png")
    assert isinstance(fig, matplotlib.figure.Figure) and (tmp_path / "completion.png").stat().st_size > 0
    fig = plots.cost_plot(frame, tmp_path / "cost.png")
    assert isinstance(fig, matplotlib.figure.Figure) and (tmp_path / "cost.png").stat().st_size > 0
    csv = step_limits.flat(frame)
    assert csv["gold_tools"].map(type).eq(str).all()
    assert len(pd.read_csv(pd.io.common.StringIO(csv.to_csv(index=False)))) == len(frame)


def test_the_replay_llm_follows_the_gold_chains_without_a_model():
    tasks = step_limits.load_domain_tasks("threat", SUBSET)

    def factory(domain, top_k):
        pack = DomainPack(name=domain, tools=[_stand_in(n) for n in THREAT_TOOLS], system_prompt="테스트 상황실")
        return build_agent(pack, step_limits.replay_llm(tasks), config=AgentConfig(use_router=False, top_k=top_k))

    out = run_step_limits("threat", [1, 3], [5], task_ids=SUBSET, progress=False, agent_factory=factory)
    assert (out["completed"] == (out["chain_length"] <= out["cap"])).all()
    assert (out["capped"] == (out["chain_length"] > out["cap"])).all()
    assert (out[out.cap == 3]["called_tools"] == out[out.cap == 3]["gold_tools"]).all()


def test_an_interrupted_sweep_resumes_from_its_checkpoint(tmp_path):
    path = tmp_path / "runs.partial.jsonl"
    down = {"th10": True}

    def flaky(task, messages, tools):  # the server "goes down" once, on th10's first run
        if down.pop(task.id, False):
            raise ConnectionError("server down")
        return gold_policy(task, messages, tools)

    first = run_step_limits(["threat"], [1, 3], task_ids=["th04", "th10"], progress=False,
                            agent_factory=factory_with(flaky), checkpoint=path, checkpoint_tag="model-a")
    failed = first[first["error"] != ""]
    assert len(failed) == 1  # kept as a row, but not saved: it runs again next time
    assert len(path.read_text().splitlines()) == 2  # th04 at cap 1 and th10 at cap 3; th04's cap 3 is a copy
    built: list = []
    second = run_step_limits(["threat"], [1, 3], task_ids=["th04", "th10"], progress=False,
                             agent_factory=factory_with(gold_policy, built), checkpoint=path, checkpoint_tag="model-a")
    assert (second["error"] == "").all() and len(second) == 4 and built == [("threat", 5)]
    saved = second.merge(first, on=["task_id", "cap"], suffixes=("", "_first"))
    ok = saved[saved["error_first"] == ""]
    assert (ok["seconds"] == ok["seconds_first"]).all()  # taken from the checkpoint, not run again
    built.clear()
    third = run_step_limits(["threat"], [1, 3], task_ids=["th04", "th10"], progress=False,
                            agent_factory=factory_with(gold_policy, built), checkpoint=path, checkpoint_tag="model-a")
    assert built == [] and len(third) == 4  # everything saved: no agent is even built
    run_step_limits(["threat"], [1], task_ids=["th04"], progress=False, agent_factory=factory_with(gold_policy, built),
                    checkpoint=path, checkpoint_tag="model-b")
    assert built == [("threat", 5)]  # another tag (LLM, settings, code) never reuses rows


def test_a_checkpoint_line_cut_by_a_kill_is_ignored(tmp_path):
    from toolroute_lab.shared.checkpoint import RowCheckpoint

    path = tmp_path / "c.jsonl"
    saved = RowCheckpoint(path, ["id"], "t")
    saved.add({"id": 1, "x": "가"})
    with path.open("a") as fh:
        fh.write('{"tag": "t", "row": {"id": 2, "x"')  # the process died mid-line
    again = RowCheckpoint(path, ["id"], "t")
    assert len(again) == 1 and again.get(id=1) == {"id": 1, "x": "가"} and again.ignored == 1


def test_the_checkpoint_digest_covers_what_a_run_imports_and_nothing_else():
    from toolroute_lab.shared.checkpoint import module_files, source_fingerprint

    files = {str(p).split("src/")[-1] for p in module_files(["toolroute_lab.e03_step_limits.step_limits", "toolroute.llm.serve"])}
    # cards/store.py is in: saved card edits are part of the effective catalogue a run routes with
    assert {"toolroute/agent/graph.py", "toolroute/agent/guardrails.py", "toolroute/agent/injection.py",
            "toolroute/routing/router.py", "toolroute/llm/qwen_tools.py", "toolroute/cards/store.py",
            "toolroute_lab/e03_step_limits/step_limits.py", "toolroute_lab/shared/arms.py"} <= files
    assert not files & {"toolroute/agent/registry.py", "toolroute_lab/e05_scale/scale.py", "toolroute/cli.py",
                        "toolroute_lab/run/pipeline.py"}
    entries = ["toolroute_lab.e03_step_limits.step_limits"]
    assert source_fingerprint(entries) == source_fingerprint(entries)


def test_agent_options_reach_the_agent_and_the_checkpoint_tag(tmp_path, monkeypatch):
    made = []
    monkeypatch.setattr(step_limits, "create_agent", lambda domain, llm, config, memory_path: made.append(config))
    step_limits.default_agent_factory("llm", constrained_calls=True, tool_result_format="lines")("threat", 3)
    assert made[0].top_k == 3 and made[0].constrained_calls and made[0].tool_result_format == "lines"
    with pytest.raises(ValueError, match="tool_result_format"):
        run_step_limits(["threat"], [1], progress=False, agent_factory=_never, agent_options={"tool_result_format": "x"})
    path, built = tmp_path / "runs.partial.jsonl", []
    for options in (None, {"constrained_calls": False}, {"constrained_calls": True}):
        run_step_limits(["threat"], [1], task_ids=["th04"], progress=False, agent_factory=factory_with(gold_policy, built),
                        checkpoint=path, checkpoint_tag="m", agent_options=options)
    assert len(built) == 2  # the default value given is the default run (reused); another value runs again


def test_each_model_gets_its_own_context_budget(monkeypatch):
    """An endpoint listed first must not take the embedded model's context check away from the next one."""
    from types import SimpleNamespace

    seen = []
    monkeypatch.setattr(step_limits, "run_step_limits",
                        lambda *a, budget=None, **k: seen.append(budget) or pd.DataFrame([{"task_id": "t"}]))
    endpoint = SimpleNamespace(name="e", tag="e", chat=None, max_concurrency=1, config=SimpleNamespace(embedded=False))
    embedded = SimpleNamespace(name="m", tag="m", chat=None, max_concurrency=1, config=SimpleNamespace(embedded=True))
    budget = object()
    step_limits.run_models([endpoint, embedded], ["threat"], [1], budget=budget)
    assert seen == [None, budget]

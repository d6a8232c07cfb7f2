"""Oracle and ceiling arms (issue 24, build 1): each arm binds what it should in the LLM request, the ceiling
arm calls no tool and answers from the gold results, an over-long prompt is recorded and not sent, and
the tables carry the arm and 95% intervals (03 here; 04 in test_ragas_eval).

The agents run the real graph on the threat tasks with stand-in tools (the 3 threat tools and 9
distractors, 12 in all), a stand-in router with a fixed ranking per task, and a scripted LLM that calls
the next gold tool only when it is bound, and answers with the facts once every gold tool answered.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from toolroute.agent.graph import AgentConfig, build_agent
from toolroute.agent.pack import DomainPack
from toolroute_lab.shared import arms as arms_module
from toolroute_lab.shared import figures as plots
from toolroute_lab.e03_step_limits import step_limits
from toolroute_lab.shared.arms import Arm, ContextBudget, arm_order, parse_arms
from toolroute_lab.e03_step_limits.step_limits import run_step_limits

from test_step_limits import TASKS, THREAT_TOOLS, PolicyLLM, _answer, _stand_in, _tool_message

DISTRACTORS = [f"distractor_{i}" for i in range(9)]
ALL_TOOLS = THREAT_TOOLS + DISTRACTORS
SUBSET = ["th02", "th04", "th10", "th15"]  # 0, 1, 2 and 3 gold tools


def ranking(task) -> list[str]:
    """The stand-in router's order: the first gold tool, two distractors, the other gold tools, the rest."""
    gold = list(dict.fromkeys(task.gold_tools))
    head = gold[:1] + DISTRACTORS[:2] + gold[1:]
    return head + [t for t in ALL_TOOLS if t not in head]


class StandInRouter:
    catalog = SimpleNamespace(cards={})

    def route(self, text: str):
        task = next(t for t in TASKS.values() if t.query in text)
        order = ranking(task)
        return SimpleNamespace(top=lambda k: order[:k], no_call=False)


def _seen(messages: list) -> list[str]:
    names = [m.name for m in messages if isinstance(m, ToolMessage)]
    text = str(messages[-1].content) if isinstance(messages[-1], HumanMessage) else ""
    return names + [n for n in ALL_TOOLS if f"- {n}(" in text]


def bound_policy(task, messages: list, tools: list[str]) -> AIMessage:
    """The next gold tool when it is bound; the facts once every gold tool answered; else a partial answer."""
    step = sum(isinstance(m, ToolMessage) for m in messages)
    if tools and step < task.chain_length and task.gold_tools[step] in tools:
        return _tool_message([(task.gold_tools[step], dict(task.args[step]) if task.args else {})], step)
    done = set(task.gold_tools) <= set(_seen(messages))
    return AIMessage(_answer(task) if done else "확인된 내용까지만 안내드립니다.",
                     usage_metadata={"input_tokens": 100 + 10 * len(tools), "output_tokens": 10,
                                     "total_tokens": 110 + 10 * len(tools)})


def factory(llms: list):
    def make(domain: str, top_k: int):
        pack = DomainPack(name=domain, tools=[_stand_in(n) for n in ALL_TOOLS], system_prompt="테스트 상황실")
        llm = PolicyLLM(calls=[], bound=[], policy=bound_policy)
        llms.append(llm)
        return build_agent(pack, llm, router=StandInRouter(), config=AgentConfig(top_k=top_k))

    return make


def run(arm: str, caps=(3,), budget=None, task_ids=SUBSET):
    llms: list = []
    frame = run_step_limits(["threat"], list(caps), [5], task_ids=task_ids, progress=False, agent_factory=factory(llms),
                            arms=[arm], budget=budget, reuse_uncapped=False)
    return frame, llms


def _requests(llms) -> list[dict[str, Any]]:
    return [call for llm in llms for call in llm.calls]


# --- parameters -------------------------------------------------------------------------------------------------

def test_arms_parse_in_order_and_bad_ones_are_named():
    assert [a.name for a in parse_arms(["routed", "oracle", "all_tools", "gold_replay"], [1, 3, 5, 10])] == [
        "routed@1", "routed@3", "routed@5", "routed@10", "oracle", "all_tools", "gold_replay"]
    assert parse_arms(None, [5]) == [Arm("routed", 5)] and parse_arms("routed@3", [5]) == [Arm("routed", 3)]
    assert arm_order(["gold_replay", "oracle", "routed@10", "routed@3", "all_tools"]) == [
        "routed@3", "routed@10", "oracle", "all_tools", "gold_replay"]
    for bad, message in [(["orcale"], "unknown arm 'orcale'"), (["routed@0"], "whole number >= 1"),
                         (["oracle", "oracle"], "listed twice"), ([], "at least one arm")]:
        with pytest.raises(ValueError, match=f"arms: .*{message}|arms: {message}"):
            parse_arms(bad, [5])
    with pytest.raises(ValueError, match="arms: unknown arm"):  # checked before any agent is built
        run_step_limits(["threat"], [3], [5], task_ids=SUBSET, progress=False, arms=["nope"],
                        agent_factory=lambda d, k: pytest.fail("built an agent"))


# --- what each arm binds ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_a_routed_arm_binds_the_routers_top_k(k):
    frame, llms = run(f"routed@{k}")
    assert set(frame["arm"]) == {f"routed@{k}"} and set(frame["top_k"]) == {k}
    for request in _requests(llms):
        task = next(t for t in TASKS.values() if any(t.query in str(m.content) for m in request["messages"]))
        assert request["tools"] in (ranking(task)[:k], [])  # the top-k, or none for a last answer
    assert all(len(names) == k for llm in llms for names in llm.bound)
    for _, row in frame.iterrows():
        assert row["routed"] == ranking(TASKS[row["task_id"]])[:k]
    # k=1 binds only the first gold tool: the 2- and 3-tool chains cannot complete; k=5 binds every gold tool
    done = frame.set_index("task_id")["completed"]
    assert done["th04"] and (done["th10"], done["th15"]) == ((k >= 4), (k >= 5))


def test_the_oracle_arm_binds_exactly_the_gold_tools():
    frame, llms = run("oracle")
    requests = _requests(llms)
    assert requests
    for request in requests:
        task = next(t for t in TASKS.values() if any(t.query in str(m.content) for m in request["messages"]))
        assert request["tools"] in (list(dict.fromkeys(task.gold_tools)), [])
    zero = [r for r in requests if any(TASKS["th02"].query in str(m.content) for m in r["messages"])]
    assert zero and all(r["tools"] == [] for r in zero)  # a 0-tool task: nothing bound
    assert set(frame["top_k"]) == {arms_module.NOT_ROUTED} and frame["completed"].all()
    assert list(frame["routed"]) == [list(dict.fromkeys(TASKS[t].gold_tools)) for t in frame["task_id"]]


def test_a_new_arm_is_one_registry_entry_and_runs_in_03(monkeypatch):
    """An arm that exists only in this test: one `Binding` registered, then 03 runs it, its rows and
    figure order name it, and the report's words describe it."""
    first_gold = arms_module.Binding(lambda gold, agent: list(dict.fromkeys(gold))[:1],
                                     "only the first gold tool bound", "first gold tool only")
    monkeypatch.setitem(arms_module.BINDINGS, "first_gold", first_gold)
    assert [a.name for a in parse_arms(["routed@5", "first_gold", "gold_replay"], [5])] == [
        "routed@5", "first_gold", "gold_replay"]
    assert arm_order(["gold_replay", "first_gold", "routed@5", "oracle"]) == [
        "routed@5", "oracle", "first_gold", "gold_replay"]
    assert arms_module.describe("first_gold") == "only the first gold tool bound"
    assert arms_module.title("first_gold") == "first gold tool only"
    frame, llms = run("first_gold")
    assert set(frame["arm"]) == {"first_gold"} and set(frame["top_k"]) == {arms_module.NOT_ROUTED}
    for name, row in frame.set_index("task_id").iterrows():
        assert row["routed"] == list(dict.fromkeys(TASKS[name].gold_tools))[:1]
    done = frame.set_index("task_id")["completed"]
    assert done["th04"] and not done["th10"] and not done["th15"]  # one tool bound: the longer chains stop


def test_option_arms_are_named_in_the_same_vocabulary():
    assert arms_module.option_changes("baseline") == {}
    assert arms_module.option_changes("constrained+lines") == {"constrained_calls": True, "tool_result_format": "lines"}
    with pytest.raises(ValueError, match="unknown option 'fast'"):
        arms_module.option_changes("constrained+fast")


def test_the_all_tools_arm_binds_every_tool_of_the_pack():
    frame, llms = run("all_tools")
    bound = [names for llm in llms for names in llm.bound]
    assert bound and all(names == ALL_TOOLS for names in bound)
    assert frame["completed"].all() and not frame["over_context"].any()


def test_the_ceiling_arm_calls_no_tool_and_answers_from_the_real_gold_results():
    frame, llms = run("gold_replay", caps=(1,))
    requests = _requests(llms)
    assert all(r["tools"] == [] for r in requests) and not any(llm.bound for llm in llms)  # no tool ever bound
    assert len(requests) == len(SUBSET)  # one LLM call per task: the answer, nothing else
    rows = frame.set_index("task_id")
    for task_id in SUBSET:
        task = TASKS[task_id]
        assert rows.loc[task_id, "called_tools"] == task.gold_tools  # the whole chain, though the cap is 1
        assert rows.loc[task_id, "llm_calls"] == 1 and not rows.loc[task_id, "capped"]
    three = next(r for r in requests if any(TASKS["th15"].query in str(m.content) for m in r["messages"]))
    final = str(three["messages"][-1].content)
    for name, args in step_limits.gold_calls(TASKS["th15"]):
        assert f"- {name}(" in final and f"{name} 결과" in final  # the stand-in tool's real result, as text
    assert frame["completed"].all()


def test_gold_replay_at_the_agent_runs_the_given_calls_and_logs_their_results():
    llms: list = []
    agent = factory(llms)("threat", 5)
    task = TASKS["th10"]
    state = agent.ask(task.query, "t1", max_tool_steps=1, gold_calls=step_limits.gold_calls(task))
    assert [e["name"] for e in state["tool_log"]] == task.gold_tools
    assert [e["args"] for e in state["tool_log"]] == [dict(a) for a in task.args]
    assert all(e["result"]["summary"] == f"{e['name']} 결과" for e in state["tool_log"])
    assert state["routed"] == [] and state["llm_calls"] == 1
    with pytest.raises(ValueError, match=r"tools: \['no_such_tool'\] are not tools"):
        agent.ask(task.query, "t2", tools=["no_such_tool"])


# --- the context budget -----------------------------------------------------------------------------------------

def _schema_chars(messages, schemas) -> int:
    """A stand-in token count: 100 for the messages, 50 per bound schema."""
    return 100 + 50 * len(schemas)


def test_a_prompt_over_the_context_is_recorded_not_sent():
    budget = ContextBudget(limit=500, count=_schema_chars, reserve=100)  # 12 tools: 700 > 400; 3 tools fit
    frame, llms = run("all_tools", budget=budget)
    tool_tasks = frame[frame["chain_length"] > 0]
    assert tool_tasks["over_context"].all() and not tool_tasks["completed"].any()
    assert tool_tasks["error"].str.startswith("over context: the first prompt has 700 tokens").all()
    assert (tool_tasks["llm_calls"] == 0).all()
    # the 0-tool task binds every tool too (all_tools): over as well; no request reached the LLM
    assert frame["over_context"].all() and _requests(llms) == []
    oracle, _ = run("oracle", budget=budget)
    assert not oracle["over_context"].any() and oracle["completed"].all()
    table = step_limits.arm_summary(pd.concat([frame, oracle], ignore_index=True)).set_index("arm")
    assert table.loc["all_tools", "over_context"] == len(SUBSET) and table.loc["oracle", "over_context"] == 0
    assert pd.isna(table.loc["all_tools", "total_tokens"])  # no run was sent: no cost to report


# --- tables and the figure ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sweep():
    llms: list = []
    return run_step_limits(["threat"], [1, 3], [1, 5], task_ids=SUBSET, progress=False, agent_factory=factory(llms),
                           arms=["routed", "oracle", "all_tools", "gold_replay"],
                           budget=ContextBudget(limit=10_000, count=_schema_chars))


def test_the_tables_carry_the_arm_and_intervals(sweep):
    assert len(sweep) == len(SUBSET) * 2 * 5  # tasks × caps × arms (routed@1, routed@5, oracle, all, ceiling)
    tables = step_limits.summarise(sweep)
    for table in tables.values():
        assert "arm" in table.columns
    assert set(tables["by_cap"]["arm"]) == {"routed@1", "routed@5", "oracle", "all_tools", "gold_replay"}
    summary = step_limits.arm_summary(sweep)
    assert list(summary.columns[:4]) == ["arm", "cap", "runs", "over_context"]
    assert list(dict.fromkeys(summary["arm"])) == ["routed@1", "routed@5", "oracle", "all_tools", "gold_replay"]
    for rate in step_limits.ARM_RATES:
        assert (summary[f"{rate}_lo"] <= summary[rate]).all() and (summary[rate] <= summary[f"{rate}_hi"]).all()
    for mean in ["total_tokens", "seconds", "tool_recall"]:
        assert (summary[f"{mean}_lo"] <= summary[mean] + 1e-9).all()
        assert (summary[mean] <= summary[f"{mean}_hi"] + 1e-9).all()
    at3 = summary[summary["cap"] == 3].set_index("arm")
    assert at3.loc["oracle", "completed"] == 4 and at3.loc["gold_replay", "completed"] == 4
    assert at3.loc["routed@1", "completed"] == 2  # th02 (no tool) and th04 (one)
    # the cheaper arm binds fewer schemas (the scripted LLM bills 10 tokens per bound tool)
    assert at3.loc["oracle", "total_tokens"] < at3.loc["routed@5", "total_tokens"] < at3.loc["all_tools", "total_tokens"]
    assert at3.loc["routed@1", "completion_hi"] < 1 and at3.loc["oracle", "completion_lo"] > 0
    cuts = step_limits.cut_chains(sweep)
    assert "arm" in cuts.columns and set(cuts["arm"]) <= {"routed@5", "oracle", "all_tools"}
    lines = step_limits.verdict(sweep, proposed=3)
    assert "**Arm oracle**" in lines and "**Arm gold_replay**" in lines


def test_the_default_run_has_no_arm_column_and_the_same_rows_as_the_routed_arm():
    llms: list = []
    default = run_step_limits(["threat"], [1, 3], [5], task_ids=SUBSET, progress=False, agent_factory=factory(llms))
    assert "arm" not in default.columns and "over_context" not in default.columns
    routed = run_step_limits(["threat"], [1, 3], [5], task_ids=SUBSET, progress=False, agent_factory=factory(llms),
                             arms=["routed"])
    compared = [c for c in default.columns if c != "seconds"]
    pd.testing.assert_frame_equal(default[compared], routed[compared])
    assert "arm" not in step_limits.summarise(default)["by_cap"].columns


def test_arm_cost_plot_draws_the_arms_and_the_ceiling(sweep, tmp_path):
    import matplotlib.figure

    summary = step_limits.arm_summary(sweep)
    at3 = summary[summary["cap"] == 3]
    fig = plots.arm_cost_plot(at3, tmp_path / "arms.png")
    assert isinstance(fig, matplotlib.figure.Figure) and (tmp_path / "arms.png").stat().st_size > 0
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert any(label.startswith("answer-writing ceiling") for label in labels)
    names = {t.get_text() for t in ax.texts}
    assert {"routed@1", "routed@5", "oracle", "all_tools"} <= names and "gold_replay" not in names
    assert ax.get_xscale() == "log"
    # an arm none of whose runs fitted is named under the axes, not drawn; two models draw in two colours
    over = at3.assign(over_context=[r if a == "all_tools" else 0 for a, r in zip(at3["arm"], at3["runs"])])
    over.loc[over["arm"] == "all_tools", "total_tokens"] = float("nan")
    fig = plots.arm_cost_plot(pd.concat([over.assign(model="a"), at3.assign(model="b")], ignore_index=True))
    assert any("all_tools · a: 4/4 runs over the context" in t.get_text() for t in fig.texts)

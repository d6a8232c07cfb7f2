"""RAGAS evaluation (notebook 04): items, conversion to RAGAS messages, the metrics without an LLM on
hand-made runs with known answers, judge failures counted, and the report's gathering."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from toolroute.config import ROOT
from toolroute_lab.e04_ragas_eval import ragas_eval
from toolroute_lab.e07_report import report
from toolroute_lab.e04_ragas_eval.ragas_eval import EvalItem, build_items, ragas_messages, score_without_llm


def _run(item: EvalItem, log: list[dict[str, Any]], answer: str) -> dict[str, Any]:
    return {"kind": item.kind, "id": item.id, "conversation": item.conversation, "user": item.user,
            "tool_log": log, "answer": answer, "retrieved_contexts": ragas_eval.retrieved_passages(log)}


def test_every_rag_question_has_reference_chunks_that_hold_its_answer():
    items = ragas_eval.rag_items()
    assert len(items) == 92
    missing = [i.id for i in items if not i.reference_contexts]
    assert not missing, f"no chunk of the default ingest holds the answer of {missing}"
    for item in items:
        phrase = "".join(item.facts[0].split())
        assert any(phrase in "".join(c.split()) for c in item.reference_contexts), item.id
        assert item.reference_calls[0][0] in ragas_eval.RAG_TOOLS and not item.with_args


def test_scenario_items_keep_gold_arguments_and_conversations():
    items = ragas_eval.scenario_items()
    assert len(items) == 46 and len({i.conversation for i in items}) == 12
    first = next(i for i in items if i.reference_calls)
    assert first.with_args and isinstance(first.reference_calls[0][1], dict)


def test_messages_carry_every_tool_call_in_order():
    log = [{"name": "premium_estimate", "args": {"age": 70}, "result": {"premium": 262000}},
           {"name": "product_get", "args": {"product": "A"}, "result": "text"}]
    messages = ragas_messages("질문", log, "답변")
    calls = [c.name for m in messages if getattr(m, "tool_calls", None) for c in m.tool_calls]
    assert calls == ["premium_estimate", "product_get"]
    assert [type(m).__name__ for m in messages] == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage",
                                                    "ToolMessage", "AIMessage"]
    assert messages[1].tool_calls[0].args == {"age": 70} and "262000" in messages[2].content
    assert ragas_messages("질문", log, "답변", with_args=False)[1].tool_calls[0].args == {}


def test_metrics_without_llm_on_known_runs():
    item = EvalItem(kind="scenario", id="s-1", conversation="s", user="70세 남성 보험료",
                    reference_calls=[("premium_estimate", {"age": 70, "sex": "남성"})], facts=["262,000원"])
    perfect = _run(item, [{"name": "premium_estimate", "args": {"age": 70, "sex": "남성"}, "result": {}}],
                   "월 보험료는 262,000원입니다.")
    wrong_args = {**perfect, "id": "s-2", "tool_log": [{"name": "premium_estimate", "args": {"age": 60, "sex": "남성"},
                                                        "result": {}}], "answer": "모르겠습니다."}
    items = [item, EvalItem(**{**item.__dict__, "id": "s-2"})]
    scores = score_without_llm(pd.DataFrame([perfect, wrong_args]), items).set_index("id")
    assert scores.loc["s-1", "tool_call_accuracy"] == 1.0 and scores.loc["s-1", "tool_call_f1"] == 1.0
    assert scores.loc["s-1", "fact_presence"] == 1.0 and scores.loc["s-1", "chrf"] > 0.5
    assert scores.loc["s-2", "tool_call_accuracy"] < 1.0 and scores.loc["s-2", "tool_call_f1"] == 0.0
    assert scores.loc["s-2", "tool_name_f1"] == 1.0  # the right tool, wrong arguments
    assert scores.loc["s-2", "fact_presence"] == 0.0
    assert math.isnan(scores.loc["s-1", "context_recall"])  # no passages: not applicable


def test_context_metrics_and_no_call_rows():
    chunk = "계약자는 보험료 납입 연체로 해지된 계약을 해지된 날부터 3년 이내에 부활을 청약할 수 있습니다."
    rag = EvalItem(kind="rag", id="r-1", conversation="r-1", user="부활 기한?", with_args=False,
                   reference_calls=[("rag_terms_query_engine", {})], facts=["3년 이내"], reference_contexts=[chunk])
    found = [{"name": "rag_terms_query_engine", "args": {"query": "부활"}, "result": {"passages": [{"text": chunk}]}}]
    other = [{"name": "rag_terms_query_engine", "args": {"query": "부활"},
              "result": {"passages": [{"text": "청약철회는 보험증권을 받은 날부터 15일 이내에 할 수 있습니다."}]}}]
    no_call = EvalItem(kind="query", id="q-1", conversation="q-1", user="오늘 날씨 어때?", with_args=False)
    called = EvalItem(kind="query", id="q-2", conversation="q-2", user="오늘 날씨 어때?", with_args=False)
    items = [rag, EvalItem(**{**rag.__dict__, "id": "r-2"}), EvalItem(**{**rag.__dict__, "id": "r-3"}), no_call, called]
    runs = pd.DataFrame([_run(rag, found, "3년 이내입니다."), {**_run(rag, other, "15일"), "id": "r-2"},
                         {**_run(rag, [], "모릅니다"), "id": "r-3"}, _run(no_call, [], "날씨는 안내할 수 없어요."),
                         _run(called, [{"name": "product_get", "args": {}, "result": {}}], "...")])
    scores = score_without_llm(runs, items).set_index("id")
    assert scores.loc["r-1", "context_recall"] == 1.0 and scores.loc["r-1", "context_precision"] == pytest.approx(1.0)
    assert scores.loc["r-2", "context_recall"] == 0.0
    assert scores.loc["r-3", "context_recall"] == 0.0 and scores.loc["r-3", "tool_name_f1"] == 0.0
    assert scores.loc["q-1", "tool_name_f1"] == 1.0 and scores.loc["q-2", "tool_name_f1"] == 0.0
    assert math.isnan(scores.loc["q-1", "tool_call_accuracy"])  # no gold arguments for query rows


def test_failed_judgements_are_counted_not_hidden():
    from ragas.llms.base import InstructorBaseRagasLLM

    class BrokenJudge(InstructorBaseRagasLLM):
        def __init__(self):
            pass

        def generate(self, prompt, response_model):
            raise ValueError("the judge's output does not parse")

        async def agenerate(self, prompt, response_model):
            raise ValueError("the judge's output does not parse")

    item = EvalItem(kind="scenario", id="s-1", conversation="s", user="질문", facts=["사실"])
    rag = EvalItem(kind="rag", id="r-1", conversation="r", user="질문", reference_contexts=["근거"])
    runs = pd.DataFrame([_run(item, [], "답"),
                         _run(rag, [{"name": "rag_terms_query_engine", "args": {}, "result": {"passages": [{"text": "근거"}]}}], "답")])

    judged = ragas_eval.score_with_llm(runs, [item, rag], BrokenJudge(), embeddings=ragas_eval.RagasEmbeddings(_FakeEmbedder()),
                                       progress=False)
    table = ragas_eval.judge_failures(judged).set_index("metric")
    assert table.loc["faithfulness", "attempted"] == 1 and table.loc["faithfulness", "failed"] == 1
    assert table.loc["faithfulness", "not_applicable"] == 1  # the scenario turn retrieved nothing
    assert table.loc["agent_goal_accuracy", "failed"] == 1 and table.loc["answer_relevancy", "failed"] == 2
    assert judged["agent_goal_accuracy_status"].str.contains("does not parse").any()
    assert judged[["faithfulness", "answer_relevancy", "agent_goal_accuracy"]].isna().all().all()
    with pytest.raises(ValueError, match="unknown metric"):
        ragas_eval.score_with_llm(runs, [item, rag], BrokenJudge(), metrics=["faithfullness"])


class _FakeEmbedder:
    def embed_queries(self, texts):
        import numpy as np

        return np.ones((len(texts), 4))


class _RecordingAgent:
    def __init__(self):
        self.threads: list[tuple[str, str]] = []

    def ask(self, question: str, thread_id: str):
        self.threads.append((question, thread_id))
        if question == "boom":
            raise RuntimeError("server down")
        return {"answer": f"답: {question}", "tool_log": [], "llm_calls": 1, "prompt_tokens": 10}


def test_run_items_keeps_conversations_in_one_thread_and_failures_as_rows():
    items = [EvalItem("scenario", "S-t1", "S", "첫 질문"), EvalItem("scenario", "S-t2", "S", "이어서"),
             EvalItem("query", "q1", "q1", "boom"), EvalItem("query", "q2", "q2", "다른 질문")]
    agent = _RecordingAgent()
    runs = ragas_eval.run_items(agent, items, progress=False)
    threads = [t for _, t in agent.threads]
    assert threads[0] == threads[1] and len(set(threads)) == 3
    assert runs.set_index("id").loc["q1", "error"] == "RuntimeError: server down"
    assert list(runs["answer"])[-1] == "답: 다른 질문"


def test_bad_selection_is_named_before_any_model():
    with pytest.raises(ValueError, match="scenario_ids: unknown"):
        build_items(scenario_ids=["S99"], rag_ids=[], query_split="")
    with pytest.raises(ValueError, match="rag_ids: unknown"):
        build_items(scenario_ids=[], rag_ids=["r999"], query_split="")
    with pytest.raises(ValueError, match="query_split: no split 'tset'"):
        build_items(scenario_ids=[], rag_ids=[], query_split="tset")
    with pytest.raises(ValueError, match="selection is empty"):
        build_items(scenario_ids=[], rag_ids=[], query_split="")
    items = build_items(scenario_ids=["S1"], rag_ids=[], query_split="test", query_limit=5)
    assert [i.kind for i in items].count("query") == 5 and {i.conversation for i in items if i.kind == "scenario"} == {"S1"}


def test_report_reads_a_run_and_sets_ours_beside_the_seed(tmp_path):
    folder = tmp_path / "02_toolcard_ablation"
    folder.mkdir()
    row = {"arm_label": "hybrid:e5-small:multi/top2", "hit@1": 0.86, "hit@1_lo": 0.81, "hit@1_hi": 0.90,
           "recall@5": 0.978, "mrr": 0.918, "no_call_accuracy": 0.868, "false_no_call_rate": 0.022}
    pd.DataFrame([row]).to_csv(folder / "ablation_test.csv", index=False)
    run = report.load_run(tmp_path)
    assert set(run.missing) == {"01_ingest", "03_step_limits", "04_ragas_eval", "05_scale", "06_card_improvement"}
    assert report.scale_summary(run) is None and report.card_improvement_summary(run) is None
    assert report.findings(run, "05_scale") is None
    head = report.headline(run, "hybrid:e5-small:multi/top2",
                           {"saving_top5_vs_all_compact": 0.88, "saving_top5_vs_all_full": 0.887,
                            "queries": 5}).set_index("metric")
    assert head.loc["Hit@1", "toolroute"] == 0.86 and head.loc["Hit@1", "seed 002"] == 0.969
    assert head.loc["Hit@1", "95% CI"] == "[0.810, 0.900]"
    assert head.loc["prompt-token saving, top-5 vs all 54 tools", "seed 002"] == 0.90
    assert head.loc["prompt-token saving, top-5 vs all 54 tools", "toolroute"] == 0.88  # like for like: compact
    assert "full schemas: 0.887" in head.loc["prompt-token saving, top-5 vs all 54 tools", "note"]
    with pytest.raises(ValueError, match="default_arm"):
        report.headline(run, "dense:nope")
    assert report.step_limit_verdict(run) == ["03_step_limits is not in this run."]
    with pytest.raises(FileNotFoundError):
        report.load_run(tmp_path / "nope")


def test_run_items_resumes_whole_conversations_from_a_checkpoint(tmp_path):
    path = tmp_path / "turns.partial.jsonl"
    items = [EvalItem("scenario", "S-t1", "S", "첫 질문"), EvalItem("scenario", "S-t2", "S", "boom"),
             EvalItem("query", "q1", "q1", "다른 질문")]
    first = ragas_eval.run_items(_RecordingAgent(), items, progress=False, checkpoint=path, checkpoint_tag="a")
    assert list(first["error"] != "") == [False, True, False]
    fixed = [items[0], EvalItem("scenario", "S-t2", "S", "boom"), items[2]]
    agent = _RecordingAgent()
    agent.ask = lambda q, t: (agent.threads.append((q, t)) or {"answer": f"답: {q}", "tool_log": []})
    second = ragas_eval.run_items(agent, fixed, progress=False, checkpoint=path, checkpoint_tag="a")
    # S had a failed turn: the whole conversation runs again (its memory is gone); q1 is taken as saved
    assert [q for q, _ in agent.threads] == ["첫 질문", "boom"] and (second["error"] == "").all()
    agent.threads.clear()
    ragas_eval.run_items(agent, fixed, progress=False, checkpoint=path, checkpoint_tag="a")
    assert agent.threads == []
    ragas_eval.run_items(agent, fixed[2:], progress=False, checkpoint=path, checkpoint_tag="b")
    assert [q for q, _ in agent.threads] == ["다른 질문"]


def test_report_gathers_scale_and_card_improvement_from_the_reference():
    run = report.load_run(ROOT / "results" / "reference")
    scale = report.scale_summary(run)
    assert {"size", "arm", "hit@1", "recall@5", "latency_p50_ms"} <= set(scale.columns)
    assert sorted(scale["size"].unique())[0] == 54 and set(scale["arm"]) == {"dense", "hybrid"}
    arms = report.card_improvement_summary(run)
    assert {"authored cards", "authored + synthetic", "first stage"} <= set(arms["arm"])
    assert arms["arm"].str.contains("LLM rerank").any() and "hit@1_diff" in arms.columns
    assert "Synthetic examples" in report.findings(run, "06_card_improvement")
    assert [p.name for p in run.figures["05_scale"]] == ["scale.png"]


# --- arms (issue 24, build 1) --------------------------------------------------------------------------------------

def _arm_items() -> list[EvalItem]:
    """A two-turn scenario, a RAG question, a query naming a tool (no arguments) and a no-call query,
    on a stand-in pack (see `_arm_agent`)."""
    return [
        EvalItem("scenario", "S-t1", "S", "미사일 위협 수준?", reference_calls=[("assess_threat_level", {"target": "미사일"})],
                 facts=[FACT["assess_threat_level"]]),
        EvalItem("scenario", "S-t2", "S", "대응 절차는?", reference_calls=[("lookup_response_procedure", {"level": "HIGH"})],
                 facts=[FACT["lookup_response_procedure"]]),
        EvalItem("rag", "r-1", "r-1", "부활 기한?", reference_calls=[("rag_terms_query_engine", {})], with_args=False,
                 facts=[FACT["rag_terms_query_engine"]]),
        EvalItem("query", "q-1", "q-1", "요격 자산 현황", reference_calls=[("check_intercept_asset_availability", {})],
                 with_args=False),
        EvalItem("query", "q-2", "q-2", "오늘 날씨 어때?", with_args=False),
    ]


FACT = {"assess_threat_level": "위협 수준 높음", "lookup_response_procedure": "절차 2단계",
        "check_intercept_asset_availability": "자산 3기", "rag_terms_query_engine": "3년 이내"}  # answered per tool seen
ARM_TOOLS = ["assess_threat_level", "lookup_response_procedure", "check_intercept_asset_availability",
             "rag_terms_query_engine", "distractor_a", "distractor_b"]


def _arm_agent(llm):
    from types import SimpleNamespace

    from test_arms import _stand_in
    from toolroute.agent.graph import AgentConfig, build_agent
    from toolroute.agent.pack import DomainPack

    items = {i.user: i for i in _arm_items()}

    class Router:  # a distractor first, then the item's gold tools, then the rest
        catalog = SimpleNamespace(cards={})

        def route(self, text):
            item = next(i for u, i in items.items() if u in text)
            gold = [n for n, _ in item.reference_calls]
            order = ["distractor_a", *gold, *[t for t in ARM_TOOLS if t not in gold and t != "distractor_a"]]
            return SimpleNamespace(top=lambda k: order[:k], no_call=False)

    pack = DomainPack(name="threat", tools=[_stand_in(n) for n in ARM_TOOLS], system_prompt="테스트")
    return build_agent(pack, llm, router=Router(), config=AgentConfig(top_k=3, rewrite_with_llm=False))


def _arm_llm():
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from fake_llm import ScriptedLLM

    items = {i.user: i for i in _arm_items()}

    def policy(messages, tools):
        question = [str(m.content) for m in messages if isinstance(m, HumanMessage)][-1]
        item = next(i for u, i in items.items() if u in question)
        seen = [m.name for m in messages if isinstance(m, ToolMessage)]
        seen += [n for n in ARM_TOOLS if f"- {n}(" in question]
        todo = [(n, a or {"query": item.user}) for n, a in item.reference_calls if n not in seen]
        if tools and todo and todo[0][0] in tools:
            return todo[0]
        return " ".join(FACT.get(n, "") for n in seen).strip() or "안녕하세요."

    class Policy(ScriptedLLM):
        def _reply(self, messages, tools):
            self.replies = [policy]
            return super()._reply(messages, tools)

    return Policy(calls=[], bound=[])


@pytest.fixture(scope="module")
def arm_runs():
    from types import SimpleNamespace

    llm = _arm_llm()
    model = SimpleNamespace(name="scripted", tag="scripted", chat=llm, max_concurrency=1, run_seconds=None)
    runs = ragas_eval.run_arms([model], _arm_agent, _arm_items(), ["routed@1", "routed", "oracle", "all_tools",
                                                                   "gold_replay"], top_k=3, progress=False)
    return runs, llm


def test_each_arm_binds_what_it_should_in_04(arm_runs):
    runs, llm = arm_runs
    assert list(dict.fromkeys(runs["arm"])) == ["routed@1", "routed@3", "oracle", "all_tools", "gold_replay"]
    assert list(runs.columns[:2]) == ["model", "arm"]
    by = runs.set_index(["arm", "id"])
    assert by.loc[("routed@1", "S-t1"), "routed"] == ["distractor_a"]
    assert by.loc[("routed@3", "S-t1"), "routed"] == ["distractor_a", "assess_threat_level", "lookup_response_procedure"]
    assert by.loc[("oracle", "S-t1"), "routed"] == ["assess_threat_level"] and by.loc[("oracle", "q-2"), "routed"] == []
    assert by.loc[("all_tools", "r-1"), "routed"] == ARM_TOOLS
    assert {n for names in llm.bound for n in names} <= set(ARM_TOOLS)
    assert ARM_TOOLS in llm.bound and ["assess_threat_level"] in llm.bound
    # the ceiling: no tool bound, gold calls run (the RAG question searched with itself), the query without
    # gold arguments left out
    ceiling = runs[runs["arm"] == "gold_replay"].set_index("id")
    assert list(ceiling.index) == ["S-t1", "S-t2", "r-1", "q-2"]
    assert ceiling.loc["r-1", "tool_log"] == [{"name": "rag_terms_query_engine", "args": {"query": "부활 기한?"},
                                              "result": {"status": "ok", "summary": "rag_terms_query_engine 결과"}}]
    assert (ceiling["llm_calls"] == 1).all() and ceiling.loc["S-t2", "answer"].startswith(FACT["lookup_response_procedure"])
    ceiling_requests = [c for c in llm.calls if any("[도구 결과]" in str(m.content) for m in c["messages"])]
    assert ceiling_requests and all(c["tools"] == [] for c in ceiling_requests)
    assert by.loc[("oracle", "S-t1"), "called_tools"] == ["assess_threat_level"]
    assert by.loc[("routed@1", "S-t1"), "called_tools"] == []  # its tool was not bound


def test_04_tables_carry_the_arm_and_intervals(arm_runs):
    runs, _ = arm_runs
    items = _arm_items()
    scores = ragas_eval.score_rows(runs, items)
    assert list(scores.columns[:3]) == ["model", "arm", "kind"]
    by_kind = ragas_eval.summary_by_kind(scores)
    assert {"arm", "kind"} <= set(by_kind.columns) and len(by_kind) == len(by_kind[["arm", "kind"]].drop_duplicates())
    table = ragas_eval.arm_summary(scores, runs, items)
    pooled = table[table["kind"] == "all"].set_index("arm")
    assert list(pooled.index) == ["routed@1", "routed@3", "oracle", "all_tools", "gold_replay"]
    assert pooled.loc["oracle", "completed"] == 5 and pooled.loc["gold_replay", "runs"] == 4
    assert pooled.loc["routed@1", "completed"] == 1  # only the no-call query
    for rate in ragas_eval.ARM_RATES:
        applied = table[table[f"n_{rate}"] > 0]  # facts_ok does not apply to query rows (NaN there)
        assert (applied[f"{rate}_lo"] <= applied[rate]).all() and (applied[rate] <= applied[f"{rate}_hi"]).all()
    assert table.set_index(["arm", "kind"])["n_facts_ok"].loc[("oracle", "query")] == 0
    assert pooled.loc["oracle", "tool_call_accuracy"] == 1.0 and "tool_call_accuracy_lo" in table.columns
    assert "**Arm oracle**" in ragas_eval.findings(scores, runs)


def test_04_over_context_is_recorded_not_sent():
    from types import SimpleNamespace

    from toolroute_lab.shared.arms import ContextBudget

    llm = _arm_llm()
    model = SimpleNamespace(name="m", tag="m", chat=llm, max_concurrency=1, run_seconds=None)
    budget = ContextBudget(limit=400, count=lambda messages, schemas: 100 + 50 * len(schemas), reserve=100)
    runs = ragas_eval.run_arms([model], _arm_agent, _arm_items(), ["all_tools", "oracle"], top_k=3, budget=budget,
                               progress=False)
    every = runs[runs["arm"] == "all_tools"]
    assert every["over_context"].all() and every["error"].str.startswith("over context").all()
    assert not runs[runs["arm"] == "oracle"]["over_context"].any()
    table = ragas_eval.arm_summary(ragas_eval.score_rows(runs, _arm_items()), runs, _arm_items())
    assert table.set_index(["arm", "kind"]).loc[("all_tools", "all"), "over_context"] == 5


def test_default_04_runs_have_no_arm_column():
    runs = ragas_eval.run_items(_RecordingAgent(), [EvalItem("query", "q2", "q2", "다른 질문")], progress=False)
    assert "arm" not in runs.columns and "over_context" not in runs.columns


def test_rag_questions_are_measured_by_the_rag_tool_and_by_any_tool_that_answers():
    rag = EvalItem(kind="rag", id="r-1", conversation="r-1", user="부활 기한?", with_args=False,
                   reference_calls=[("rag_terms_query_engine", {})], facts=["3년 이내"])
    other_tool = [{"name": "product_get", "args": {}, "result": {"text": "해지된 날부터 3년  이내에 부활"}}]
    rag_tool_no_answer = [{"name": "rag_terms_query_engine", "args": {"query": "부활"},
                           "result": {"passages": [{"text": "청약철회는 15일 이내"}]}}]
    items = [rag, EvalItem(**{**rag.__dict__, "id": "r-2"}), EvalItem(**{**rag.__dict__, "id": "r-3"})]
    runs = pd.DataFrame([_run(rag, other_tool, "3년 이내"), {**_run(rag, rag_tool_no_answer, "15일"), "id": "r-2"},
                         {**_run(rag, [], "모릅니다"), "id": "r-3"}])
    scores = score_without_llm(runs, items).set_index("id")
    assert scores.rag_tool_called.tolist() == [0.0, 1.0, 0.0]
    assert scores.answering_tool_called.tolist() == [1.0, 0.0, 0.0]  # spaces in the result do not matter


def test_arm_kinds_limit_every_arm_but_the_agent_as_it_runs():
    from types import SimpleNamespace

    llm = _arm_llm()
    model = SimpleNamespace(name="m", tag="m", chat=llm, max_concurrency=1, run_seconds=None)
    items = _arm_items()
    runs = ragas_eval.run_arms([model], _arm_agent, items, ["routed", "routed@1", "oracle"], top_k=3,
                               arm_kinds=["query"], progress=False)
    kinds = {i.id: i.kind for i in items}
    assert sorted(runs[runs["arm"] == "routed@3"]["id"]) == sorted(i.id for i in items)
    for arm in ("routed@1", "oracle"):
        assert {kinds[i] for i in runs[runs["arm"] == arm]["id"]} == {"query"}
    with pytest.raises(ValueError, match="arm_kinds"):
        ragas_eval.check_arm_kinds(["queries"])


def test_ceiling_kinds_give_the_ceiling_its_own_items_and_every_rag_question_its_search():
    """Issue 24 item 5: with the ceiling also on the RAG questions, each gets a turn that read its passages (a
    faithfulness row) while the other arms stay on `arm_kinds`."""
    from types import SimpleNamespace

    model = SimpleNamespace(name="m", tag="m", chat=_arm_llm(), max_concurrency=1, run_seconds=None)
    items = _arm_items()
    runs = ragas_eval.run_arms([model], _arm_agent, items, ["routed", "oracle", "gold_replay"], top_k=3,
                               arm_kinds=["query"], ceiling_kinds=["query", "rag"], progress=False)
    kinds = {i.id: i.kind for i in items}
    ceiling = runs[runs["arm"] == "gold_replay"]
    assert sorted(ceiling["id"]) == ["q-2", "r-1"]  # q-1 names a tool without arguments: nothing to replay
    assert {kinds[i] for i in runs[runs["arm"] == "oracle"]["id"]} == {"query"}
    rag = ceiling[ceiling["id"] == "r-1"].iloc[0]
    assert list(rag["called_tools"]) == ["rag_terms_query_engine"]  # the RAG tool searched with the question
    with pytest.raises(ValueError, match="ceiling_kinds"):
        ragas_eval.run_arms([model], _arm_agent, items, ["gold_replay"], top_k=3, ceiling_kinds=["rags"], progress=False)


def test_the_04_estimate_counts_the_turns_of_every_arm():
    from toolroute_lab.run import declared

    base = {"scenario_ids": [], "rag_ids": [], "rag_limit": None, "query_split": "test", "query_limit": 10,
            "judge": "none", "top_k": 5, "llms": [{"name": "embedded"}]}
    plain = declared.RAGAS_EVAL.rows(base)
    assert declared.RAGAS_EVAL.rows({**base, "arms": ["routed", "oracle"]}) == 2 * plain
    assert declared.RAGAS_EVAL.rows({**base, "arms": ["routed", "oracle"], "arm_kinds": ["scenario"]}) == plain
    rag = {**base, "rag_ids": ["r001", "r002"], "arms": ["routed", "gold_replay"], "arm_kinds": ["scenario"]}
    assert declared.RAGAS_EVAL.rows({**rag, "ceiling_kinds": ["rag"]}) == declared.RAGAS_EVAL.rows(rag) + 2
    with pytest.raises(ValueError, match="ceiling_kinds"):
        declared.RAGAS_EVAL.check({**rag, "ceiling_kinds": "rags"})


def test_the_03_estimate_counts_the_runs_of_every_arm():
    from toolroute_lab.run import declared

    base = {"domains": ["threat"], "caps": [1, 3], "top_ks": [5], "task_ids": None, "llms": [{"name": "embedded"}]}
    plain = declared.STEP_LIMITS.rows(base)
    assert plain > 0 and declared.STEP_LIMITS.rows({**base, "arms": ["routed", "oracle", "gold_replay"]}) == 3 * plain


def test_an_endpoint_is_not_held_to_the_embedded_models_context():
    """The context check is the embedded model's: an OpenAI-compatible endpoint (often 32k tokens or more)
    gets every arm sent, all tools included; the embedded model and the replay stand-in keep the check."""
    from types import SimpleNamespace

    from toolroute_lab.shared.arms import ContextBudget, budget_for

    llm = _arm_llm()
    budget = ContextBudget(limit=400, count=lambda messages, schemas: 100 + 50 * len(schemas), reserve=100)
    endpoint = SimpleNamespace(name="m", tag="m", chat=llm, max_concurrency=1, run_seconds=None,
                               config=SimpleNamespace(embedded=False))
    runs = ragas_eval.run_arms([endpoint], _arm_agent, _arm_items(), ["all_tools"], top_k=3, budget=budget,
                               progress=False)
    assert not runs["over_context"].any()
    embedded = SimpleNamespace(config=SimpleNamespace(embedded=True))
    assert budget_for(embedded, budget) is budget and budget_for(SimpleNamespace(), budget) is budget
    assert budget_for(endpoint, budget) is None

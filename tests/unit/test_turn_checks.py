"""The seed's per-turn checks in 04's scenario table: forbidden phrases and facts asked again (issue 24, item 6)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from toolroute.agent.graph import AgentConfig, build_agent
from toolroute.agent.pack import load_pack
from toolroute_lab.e04_ragas_eval import ragas_eval
from toolroute_lab.shared.agent_eval import known_context, reasked_facts, score_turn
from toolroute_lab.e04_ragas_eval.ragas_eval import EvalItem


@pytest.fixture(scope="module")
def pack():
    return load_pack("insurance")


def test_known_facts_come_from_the_users_turns_and_the_customer_record(pack):
    known = known_context(["계약자 윤지은님 계약 조회해줘", "치매 보장 추가하고 싶은데"], pack)
    assert known["customer"] == "윤지은" and known["age"] == 55 and known["sex"] == "여성"
    assert reasked_facts("윤지은 고객님의 나이와 성별을 알려주세요.", known, pack) == ["age", "sex"]
    assert reasked_facts("55세 여성 기준 월 보험료는 43,950원입니다.", known, pack) == []
    assert reasked_facts("어떤 상품을 원하시나요?", known, pack) == []  # no product named yet: a fair question
    fresh = known_context(["암보험 보험료 얼마예요?"], pack)
    assert reasked_facts("나이·성별을 알려주세요.", fresh, pack) == []  # not given: asking is right (S12)


@pytest.mark.parametrize("answer, reasked", [
    ("아버님 성별을 알려 주시면 합산해 드릴게요.", ["sex"]),
    ("몇 세이신가요? 나이를 말씀해 주세요.", ["age"]),
    ("어떤 상품인지 말씀해 주시겠어요?", ["products"]),
    ("건강해지는종신보험 262,000원, 든든한실버치아보험 39,800원, 합계 301,800원입니다.", []),
])
def test_question_patterns_find_an_answer_asking_again(pack, answer, reasked):
    known = known_context(["70세 아버지인데 사망보장이랑 치아보험 둘 다 알아보고 싶대",
                           "건강해지는종신보험도 70세에 가입 가능해?", "방금 얘기한 두 상품 다 가입하면 월 보험료 합쳐서 얼마쯤 나와?"], pack)
    assert reasked_facts(answer, known, pack) == reasked


def test_agent_eval_turn_fails_on_asking_again(pack):
    from toolroute.domains.insurance.scenarios import load_scenarios

    s5 = {s.id: s for s in load_scenarios()}["S5"]
    known = known_context([t.user for t in s5.turns], pack)
    log = [{"name": "premium_estimate"}, {"name": "premium_estimate"}]
    good = "262,000원 + 39,800원 = 301,800원입니다."
    assert score_turn(s5.turns[3], {"tool_log": log, "answer": good}, known, pack)["passed"]
    asked = score_turn(s5.turns[3], {"tool_log": log, "answer": good + " 나이를 알려주세요."}, known, pack)
    assert not asked["passed"] and asked["reasked"] == ["age"] and not asked["forbidden"]


def _runs(rows):
    return pd.DataFrame([{"kind": k, "id": i, "conversation": c, "user": u, "called_tools": t, "answer": a, "error": e}
                         for k, i, c, u, t, a, e in rows])


def test_turn_checks_are_the_scenario_pass_rule(pack):
    items = ragas_eval.scenario_items(ids=["S2"]) + [EvalItem("query", "q1", "q1", "안녕", with_args=False)]
    answer4 = "54,370원, 24,920원, 104,350원, 합계 183,640원입니다."
    rows = [("scenario", "S2-t1", "S2", items[0].user, ["customer_contract_lookup"],
             "55세 여성 유지 3건 골라담는간편건강보험 든든한실버치아보험 건강해지는종신보험 2030-05-20", ""),
            ("scenario", "S2-t2", "S2", items[1].user, ["product_search"], "고객님 나이를 알려주세요.", ""),
            ("scenario", "S2-t3", "S2", items[2].user, [], "", "TimeoutError: LLM"),
            ("scenario", "S2-t4", "S2", items[3].user, ["customer_contract_lookup"], answer4 + " 일부는 조회할 수 없습니다.", ""),
            ("query", "q1", "q1", "안녕", [], "안녕하세요", "")]
    checks = ragas_eval.turn_checks(_runs(rows), items, pack)
    assert list(checks["passed"][:4]) == [1.0, 0.0, 0.0, 0.0]
    assert list(checks["reasked"][:4]) == [0.0, 1.0, 0.0, 0.0] and checks["reasked_facts"][1] == ["age"]
    assert list(checks["forbidden"][:4]) == [0.0, 0.0, 0.0, 1.0] and checks["forbidden_phrases"][3] == ["조회할 수 없습니다"]
    assert math.isnan(checks["passed"][4]) and checks["reasked_facts"][4] == []
    clean = ragas_eval.turn_checks(_runs([rows[3][:5] + (answer4, "")]), items, pack)
    assert clean["passed"][0] == 1.0  # the same turn without the phrase passes


class _ScriptedAnswers:
    """An agent stub answering each question with a fixed answer and tool log (the LLM's part scripted)."""

    def __init__(self, pack, script):
        self.pack, self.script = pack, script

    def ask(self, question, thread_id):
        tools, answer = self.script[question]
        return {"answer": answer, "tool_log": [{"name": n, "args": {}, "result": {}} for n in tools]}


def test_04_scenario_table_counts_the_checks_per_scenario(pack):
    items = ragas_eval.scenario_items(ids=["S12", "S5"])
    by_user = {i.user: i for i in items}
    s12_1, s12_2 = [i.user for i in items if i.conversation == "S12"]
    script = {u: ([n for n, _ in i.reference_calls], " ".join(i.facts)) for u, i in by_user.items()}
    script[s12_1] = (["premium_estimate"], "첫날부터암보험 보험료를 계산하려면 나이·성별을 알려주세요.")  # right: not given yet
    script[s12_2] = (["premium_estimate"], "첫날부터암보험 보험료 안내를 위해 나이를 알려주세요.")  # "45세 남자요" was just said
    s5_4 = [i for i in items if i.id == "S5-t4"][0]
    script[s5_4.user] = (["premium_estimate", "premium_estimate"], "262,000원 39,800원 301,800원, 성별이 필요합니다.")
    runs = ragas_eval.run_items(_ScriptedAnswers(pack, script), items, progress=False)
    scores = ragas_eval.score_rows(runs, items, pack)
    table = ragas_eval.summary_by_conversation(scores).set_index("conversation")
    assert table.loc["S12", ["turns", "passed", "forbidden_turns", "reasked_turns"]].tolist() == [2, 1, 0, 1]
    assert table.loc["S5", ["turns", "passed", "forbidden_turns", "reasked_turns"]].tolist() == [4, 3, 1, 1]
    assert table.loc["S5", "pass_rate"] == 0.75
    kinds = ragas_eval.summary_by_kind(scores).set_index("kind")
    assert kinds.loc["scenario", ["passed", "n_pass_rate"]].tolist() == [4, 6]
    assert kinds.loc["scenario", "pass_rate"] == pytest.approx(4 / 6)
    assert any("pass rate 0.667 (4 of 6 turns; a forbidden phrase in 1, a known fact asked again in 2)" in line
               for line in ragas_eval.findings(scores, runs))


def test_the_checks_through_the_graph_with_a_scripted_llm(pack):
    """S12 through the real agent (every insurance tool bound, real tools), the LLM's replies scripted."""
    from fake_llm import ScriptedLLM

    llm = ScriptedLLM(calls=[], bound=[], replies=[
        ("premium_estimate", {"product": "첫날부터암보험"}), "나이와 성별을 알려주세요.",
        ("premium_estimate", {"product": "첫날부터암보험", "age": 45, "sex": "남성"}),
        "첫날부터암보험 45세 남성 기준 월 28,650원입니다. 성별을 다시 알려주시겠어요?"])
    agent = build_agent(pack, llm, config=AgentConfig(use_router=False, rewrite_with_llm=False))
    items = ragas_eval.scenario_items(ids=["S12"])
    scores = ragas_eval.score_rows(ragas_eval.run_items(agent, items, progress=False), items, pack)
    assert scores["passed"].tolist() == [1.0, 0.0]
    assert scores["reasked_facts"].tolist() == [[], ["sex"]]

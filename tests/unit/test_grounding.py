"""Arguments the conversation never gave (`toolroute.agent.grounding`) and the agent's retry without them."""

from __future__ import annotations

import pytest

from toolroute.agent.graph import AgentConfig, build_agent
from toolroute.agent.grounding import failed, given_text, is_grounded, numbers_in, succeeded, ungrounded
from toolroute.agent.pack import load_pack

from fake_llm import ScriptedLLM

SCHEMA = {"function": {"parameters": {"properties": {"customer_id": {}, "name": {}, "age": {}, "sex": {},
                                                      "status": {"enum": ["유지", "해지"]}, "product": {}},
                                       "required": ["product"]}}}


def test_numbers_are_read_with_separators_and_korean_units():
    assert {52.0, 10000.0, 30000000.0, 3000.0, 1.0} <= numbers_in("52세, 월 1만원, 3,000만원")
    assert 2.5e8 in numbers_in("2.5억") and 435000000 in numbers_in("4.35억")  # no float residue
    assert numbers_in("30,40대") == {30.0, 40.0}  # a list, not 3040


@pytest.mark.parametrize("value, text, grounded", [
    ("김민수", "계약자 김민수님 계약 조회해줘", True),
    ("갑상선암 진단", "갑상선암으로 진단받았어요", True),  # every word of it, in other forms around
    ("1234567890", "계약자 김민수님 계약 조회해줘", False),
    (30, "계약자 김민수님 계약 조회해줘", False),
    (10000, "월 1만원 정도", True),
    ("10,000", "월 1만원 정도", True),
    ("10000원", "월 1만원 정도", True),
    ("52세", "52세 남성", True),
    ("30세", "52세 남성", False),
    ("", "아무 말", False),
    (True, "아무 말", True),
    (["김민수", "윤지은"], "김민수 윤지은 두 분", True),
    (["김민수", "이름"], "김민수 고객", False),
])
def test_a_value_is_grounded_when_the_text_writes_it(value, text, grounded):
    assert is_grounded(value, text) is grounded


def test_required_and_enum_arguments_always_count_as_given():
    args = {"customer_id": "1234567890", "name": "김민수", "age": 30, "sex": "남성", "status": "해지", "product": "없는상품"}
    assert ungrounded(args, SCHEMA, "김민수님 계약 조회") == ["customer_id", "age", "sex"]
    optional = {"function": {"parameters": {"properties": {"sex": {"anyOf": [{"enum": ["남성", "여성"]}, {"type": "null"}]},
                                                           "kinds": {"type": "array", "items": {"enum": ["암", "치매"]}}}}}}
    assert ungrounded({"sex": "남성", "kinds": ["암", "치매"]}, optional, "아무 말") == []


def test_a_failure_is_retried_a_rejection_is_not_and_only_an_ok_is_kept():
    assert failed({"status": "not_found"}) and failed({"status": "needs_user_input"}) and failed({"status": "error"})
    assert not failed({"status": "rejected"}) and not failed({"status": "ok"}) and not failed("plain text")
    assert succeeded({"status": "ok"}) and succeeded("plain text") and succeeded({"value": 1})
    assert not succeeded({"status": "rejected"}) and not succeeded({"status": "needs_user_input"})


def test_what_a_failed_call_repeats_back_is_not_given():
    text = given_text(["김민수 계약"], [{"status": "not_found", "value": "1234567890"}, {"status": "ok", "age": 52}])
    assert is_grounded(52, text) and not is_grounded("1234567890", text)


@pytest.fixture(scope="module")
def pack():
    return load_pack("insurance")


def _ask(pack, call, retry, question="계약자 김민수님 계약 조회해줘", then=()):
    llm = ScriptedLLM(replies=[call, *then, "확인했습니다."], calls=[], bound=[])
    agent = build_agent(pack, llm, config=AgentConfig(use_router=False, retry_ungrounded=retry))
    return agent.ask(question)


def test_a_failed_call_runs_again_without_invented_arguments_and_the_log_says_which(pack):
    call = ("customer_contract_lookup", {"customer_id": "1234567890", "name": "김민수", "age": 30, "sex": "남성"})
    before = _ask(pack, call, retry=False)["tool_log"][0]
    assert before["result"]["status"] == "not_found" and "dropped_args" not in before
    after = _ask(pack, call, retry=True)["tool_log"][0]
    assert after["result"]["status"] == "ok" and after["result"]["customer"]["customer_id"] == "C0001"
    assert after["args"] == {"name": "김민수"}
    assert after["dropped_args"] == {"customer_id": "1234567890", "age": 30, "sex": "남성"}


def test_a_call_that_succeeded_or_whose_retry_fails_is_left_as_it_ran(pack):
    fine = ("customer_contract_lookup", {"name": "김민수", "age": 52})  # 52 is not in the question: kept, it succeeded
    entry = _ask(pack, fine, retry=True)["tool_log"][0]
    assert entry["args"] == {"name": "김민수", "age": 52} and entry["result"]["status"] == "ok"
    unknown = ("customer_contract_lookup", {"name": "홍길동", "age": 30})  # age dropped, and still no 홍길동
    entry = _ask(pack, unknown, retry=True, question="홍길동 고객 계약 조회")["tool_log"][0]
    assert entry["args"] == {"name": "홍길동", "age": 30} and entry["result"]["status"] == "not_found"
    assert "dropped_args" not in entry
    nothing_left = ("customer_contract_lookup", {"customer_id": "1234567890"})  # no retry with no argument
    entry = _ask(pack, nothing_left, retry=True)["tool_log"][0]
    assert entry["args"] == {"customer_id": "1234567890"} and "dropped_args" not in entry


def test_the_model_repeating_its_call_as_it_wrote_it_is_a_repeated_call(pack):
    call = ("customer_contract_lookup", {"customer_id": "1234567890", "name": "김민수", "age": 30, "sex": "남성"})
    state = _ask(pack, call, retry=True, then=[call])
    assert len(state["tool_log"]) == 1 and state["loops"] == 1

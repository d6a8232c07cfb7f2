"""Arguments the conversation never gave (`toolroute.agent.grounding`) and the agent's retry without them."""

from __future__ import annotations

import pytest

from toolroute.agent.graph import AgentConfig, build_agent
from toolroute.agent.grounding import is_grounded, numbers_in, succeeded, ungrounded
from toolroute.agent.pack import load_pack

from fake_llm import ScriptedLLM

SCHEMA = {"function": {"parameters": {"properties": {"customer_id": {}, "name": {}, "age": {}, "sex": {},
                                                      "status": {"enum": ["유지", "해지"]}, "product": {}},
                                       "required": ["product"]}}}


def test_numbers_are_read_with_separators_and_korean_units():
    assert {52.0, 10000.0, 30000000.0, 3000.0, 1.0} <= numbers_in("52세, 월 1만원, 3,000만원")
    assert 2.5e8 in numbers_in("2.5억")


@pytest.mark.parametrize("value, text, grounded", [
    ("김민수", "계약자 김민수님 계약 조회해줘", True),
    ("갑상선암 진단", "갑상선암으로 진단받았어요", True),  # every word of it, in other forms around
    ("1234567890", "계약자 김민수님 계약 조회해줘", False),
    (30, "계약자 김민수님 계약 조회해줘", False),
    (10000, "월 1만원 정도", True),
    ("10,000", "월 1만원 정도", True),
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


def test_only_a_result_with_a_status_other_than_ok_did_not_succeed():
    assert succeeded({"status": "ok"}) and succeeded("plain text") and succeeded({"value": 1})
    assert not succeeded({"status": "not_found"}) and not succeeded({"status": "needs_user_input"})


@pytest.fixture(scope="module")
def pack():
    return load_pack("insurance")


def _ask(pack, call, retry):
    llm = ScriptedLLM(replies=[call, "확인했습니다."], calls=[], bound=[])
    agent = build_agent(pack, llm, config=AgentConfig(use_router=False, retry_ungrounded=retry))
    return agent.ask("계약자 김민수님 계약 조회해줘")


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
    unknown = ("customer_contract_lookup", {"name": "홍길동", "age": 30})  # no 홍길동 either way
    entry = _ask(pack, unknown, retry=True)["tool_log"][0]
    assert entry["args"] == {"name": "홍길동", "age": 30} and entry["result"]["status"] == "not_found"
    assert "dropped_args" not in entry

"""Streaming can never bypass the output guardrail: tokens pass through `StreamGuard`, and the
concatenated tokens equal `guard_output` of the whole reply, however the reply is split."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolroute.agent.events import StreamGuard
from toolroute.agent.guardrails import guard_output
from toolroute.agent.pack import load_pack

PACK = load_pack("insurance")

# Pieces an answer is made of: plain Korean, numbers, personal data the guardrail masks, internal
# codes it removes, tool names it removes, a banned phrase it replaces, markup, spaces and punctuation.
PIECES = [
    "55세 여성 실속치매보험은 ", "월 17,950원입니다. ", "보장 내용을 안내해 드리겠습니다.", "\n", " ", ". ", "? ",
    "주민번호는 900101-1234567입니다. ", "연락처 010-1234-5678 로 ", "전화 01012345678. ", "사무실 02-123-4567 ",
    "카드 1234 5678 9012 3456 ", "메일 minsu.kim@example.com 으로 ", "계좌번호 11012345678901 입니다. ",
    "생년 9001011234567 ", "+82-10-1234-5678 ", "(B002)", " B003-R01 ", "고객 C1234 계약 CT12345 ", "premium_estimate",
    "`plan_options()` 결과 ", "premium_compare ", "무조건 보장됩니다. ", "<think>계산 중</think>", "3.5% ", "1,234,567원",
    "- 항목 하나\n", "요. ", "  ", "(", ")", ", ",
]


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    out, last = [], 0
    for p in points + [len(text)]:
        out.append(text[last:p])
        last = p
    return [c for c in out if c]


def _stream(text: str, chunks: list[str], with_disclaimer: bool) -> tuple[str, bool]:
    guard = StreamGuard(PACK)
    tokens = [guard.feed("m1", c) for c in chunks]
    final = guard_output(text, PACK, with_disclaimer=with_disclaimer).text
    rest, replaced = guard.finish(final)
    return "".join(tokens) + rest, replaced


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=14), st.lists(st.integers(0, 10_000), max_size=40),
       st.booleans())
def test_the_concatenated_stream_is_the_guarded_answer(pieces, cuts, with_disclaimer):
    text = "".join(pieces)
    streamed, replaced = _stream(text, _split(text, cuts), with_disclaimer)
    assert not replaced
    assert streamed == guard_output(text, PACK, with_disclaimer=with_disclaimer).text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=14), st.lists(st.integers(0, 10_000), max_size=40))
def test_no_prefix_that_went_out_holds_what_the_guardrail_removes(pieces, cuts):
    text = "".join(pieces)
    guard = StreamGuard(PACK)
    out = ""
    for chunk in _split(text, cuts):
        out += guard.feed("m1", chunk)
        assert not re.search(r"\d{6}-?[1-8]\d{6}|1234-5678\b|5678-9012|B00\d|C1234|CT12345|premium_estimate|plan_options|"
                             r"minsu\.kim|무조건|<think>", out), out


def test_tokens_arrive_before_the_end_of_a_long_answer():
    text = "".join(f"{i}번째 안내 문장입니다. " for i in range(1, 12))
    guard = StreamGuard(PACK)
    early = "".join(guard.feed("m", text[i:i + 3]) for i in range(0, len(text), 3))
    assert len(early) > len(text) // 2  # streamed, not all held to the end
    rest, _ = guard.finish(guard_output(text, PACK, with_disclaimer=False).text)
    assert early + rest == guard_output(text, PACK, with_disclaimer=False).text


@pytest.mark.parametrize("reply", ['<tool_call>{"name": "premium_estimate", "arguments": {}}</tool_call>',
                                   '{"name": "premium_estimate", "arguments": {"age": 55}}', "```json\n{}\n```"])
def test_markup_is_held_back(reply):
    guard = StreamGuard(PACK)
    assert "".join(guard.feed("m", reply[i:i + 2]) for i in range(0, len(reply), 2)) == ""


def test_a_reply_that_becomes_a_tool_call_sends_nothing_and_the_next_reply_streams():
    guard = StreamGuard(PACK)
    assert guard.feed("m1", "보험료를 확인하겠습니다. 잠시만 기다려 주세요. 조회 중입니다. 금방 끝납니다. ") == ""
    assert guard.feed("m1", "", tool_calls=True) == ""
    answer = "월 17,950원입니다. " * 6
    out = "".join(guard.feed("m2", answer[i:i + 4]) for i in range(0, len(answer), 4))
    rest, replaced = guard.finish(guard_output(answer, PACK).text)
    assert not replaced and out + rest == guard_output(answer, PACK).text


def test_a_final_answer_that_differs_from_what_went_out_is_flagged():
    guard = StreamGuard(PACK)
    text = "첫 문장입니다. " * 12
    out = "".join(guard.feed("m", text[i:i + 5]) for i in range(0, len(text), 5))
    assert out
    rest, replaced = guard.finish("죄송합니다. 지금 답변 엔진에 연결할 수 없습니다.")
    assert replaced and rest == ""

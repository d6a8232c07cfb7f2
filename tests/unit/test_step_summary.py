"""A step on the stream in seed 000's shape (issue 41, item 11): `tool_result` one Korean line, the
status says when a tool asks the user first."""

import pytest

from toolroute.agent.step_summary import STEP_LIMIT, step_status, summarize
from toolroute.domains.tool_results import needs_user_input, not_found, ok, rejected


@pytest.mark.parametrize("result, expected", [
    (ok(summary="55세 여성 기준 월 17,950원", monthly_premium=17950), "55세 여성 기준 월 17,950원"),
    (needs_user_input(["age"], "고객님 나이를 알려주세요."), "고객님 나이를 알려주세요."),
    (rejected("가입 나이(20~60세)를 벗어났습니다"), "불가: 가입 나이(20~60세)를 벗어났습니다"),
    (not_found("product", "없는보험", ["실속치매보험", "든든암보험"]), "상품 찾지 못함 (후보: 실속치매보험, 든든암보험)"),
    ({"status": "error", "error": "ValueError: boom"}, "도구를 실행하지 못했습니다"),
    (ok(level="HIGH", score=0.9), "HIGH, 0.9"),
    ("HIGH", "HIGH"),
])
def test_every_result_shape_has_one_korean_line(result, expected):
    assert summarize(result) == expected


def test_a_line_is_short_and_never_shows_an_exception():
    assert len(summarize(ok(summary="가" * 500))) == STEP_LIMIT
    assert "ValueError" not in summarize({"status": "error", "error": "ValueError: /srv/x.py"})


def test_a_tool_that_asks_the_user_is_not_reported_as_a_plain_success():
    assert step_status(needs_user_input(["age"], "나이?"), "success") == "needs_user_input"
    assert step_status(ok(summary="x"), "success") == "success"
    assert step_status({"status": "error"}, "error") == "error"

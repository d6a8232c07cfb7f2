"""What a client sees of one tool step on the stream, in seed 000's shape: `tool_result` a short Korean
line ("N단계: 도구명 → 결과"), the masked result object beside it, and a status that says when the tool
asks the user for a missing input. Reads the result shapes of `toolroute.domains.tool_results`."""

from __future__ import annotations

from typing import Any

WHAT_KO = {"product": "상품", "rider": "특약", "customer": "고객", "code": "코드", "claim": "청구"}
STEP_LIMIT = 120  # characters of a step's summary on the page (seed 000's "도구명 → 결과")


def summarize(result: Any) -> str:
    """One short Korean line for a step of the stream (seed 000 sends its tool's result as a string):
    the tool's own `summary`, the question a missing input needs, the rule's reason, what was not found;
    a result of another shape is its first values. Read from the result the client may see (masked)."""
    if not isinstance(result, dict):
        return str(result)[:STEP_LIMIT]
    status = result.get("status", "ok")
    if isinstance(result.get("summary"), str) and result["summary"].strip():
        text = result["summary"]
    elif status == "needs_user_input":
        text = str(result.get("ask") or "추가 정보가 필요합니다")
    elif status == "rejected":
        text = "불가: " + str(result.get("reason", ""))
    elif status == "not_found":
        what = WHAT_KO.get(str(result.get("what")), str(result.get("what", "")))
        text = f"{what} 찾지 못함" + (f" (후보: {', '.join(map(str, result['candidates'][:3]))})"
                                     if result.get("candidates") else "")
    elif status in ("error", "skipped"):
        text = "도구를 실행하지 못했습니다" if status == "error" else "단계 한도로 건너뜀"
    else:
        text = ", ".join(f"{value}" for key, value in result.items() if key != "status"
                         and isinstance(value, (str, int, float))) or "완료"
    return text[:STEP_LIMIT]


def step_status(result: Any, status: str) -> str:
    """The step's status on the stream: the call's (`success`, `error`), or `needs_user_input` when the
    tool ran but asks the user for a missing input first."""
    if status == "success" and isinstance(result, dict) and result.get("status") == "needs_user_input":
        return "needs_user_input"
    return status

"""Query rewriter: complete short or referential follow-ups with what the conversation established.

"그거 얼마야?" or "아버지" alone routes badly and lets the model guess arguments. Rules first: the
pack reads context from every user turn (customer, age, sex — 아버지 → 남성 —, products …) and a
follow-up (short, or with a referential marker) gets that context appended. Only when the rules
find nothing to add to a referential turn and an LLM is given is one call spent on rewriting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from toolroute.agent.pack import DomainPack, load_pack
from toolroute.plugins import domain_names

SHORT_TURN = 12  # characters without spaces: "아버지", "55세 여성이요", "그럼 보험료는?"
SMALLTALK = re.compile(r"^\s*(안녕|감사|고마|수고|반가|네[.!~ ]*$|넵|예[.!~ ]*$|알겠|좋아요?[.!~ ]*$|ㅎㅎ|ㅋㅋ|잠시만|잠깐만)")

REWRITE_PROMPT = (
    "다음 대화의 마지막 사용자 질문을, 앞 대화의 맥락(대상, 나이, 성별, 상품 등)을 채워 넣은 한 문장의 "
    "완전한 질문으로 바꿔 쓰세요. 질문만 출력하세요.\n\n{history}\n\n마지막 질문: {question}\n완전한 질문:"
)


@dataclass
class Rewrite:
    text: str
    context: dict[str, Any]
    method: str  # "none" | "rules" | "llm"


def is_followup(text: str, pack: DomainPack) -> bool:
    compact = "".join(text.split())
    return len(compact) <= SHORT_TURN or any(marker in text for marker in pack.followup_markers)


def rewrite(text: str, context: dict[str, Any], pack: DomainPack, history: list[tuple[str, str]] | None = None,
            llm: Any = None, always_carry: bool = True) -> Rewrite:
    """The turn to route and answer, and the updated context. `history`: earlier (user, answer) pairs.

    With `always_carry` (the default), every turn after the first gets the context it does not restate
    (the agent's prompt then needs no earlier answers, which a small model tends to copy); without
    it, only follow-ups do. Small talk is never rewritten.
    """
    before = dict(context or {})
    updated = pack.extract_context(text, before)
    if not history or SMALLTALK.match(text) or not (always_carry or is_followup(text, pack)):
        return Rewrite(text, updated, "none")
    # What the earlier turns established that this turn does not restate.
    mentioned_now = pack.extract_context(text, {})
    carried = {k: v for k, v in updated.items() if v not in (None, "", [], {}) and k not in mentioned_now}
    if carried:
        return Rewrite(f"{text} ({pack.render_context(carried)})", updated, "rules")
    if llm is not None and any(marker in text for marker in pack.followup_markers):
        lines = "\n".join(f"사용자: {u}\n상담원: {a[:200]}" for u, a in history[-3:])
        reply = llm.invoke(REWRITE_PROMPT.format(history=lines, question=text))
        candidate = (getattr(reply, "content", "") or "").strip().splitlines()
        if candidate and candidate[0].strip():
            return Rewrite(candidate[0].strip(), updated, "llm")
    return Rewrite(text, updated, "none")


def carry_history(turn: str, history: Sequence[dict], pack: DomainPack, always_carry: bool = True) -> str:
    """The text the agent's router would see for `turn` after `history` (the query contract's list of
    {"role", "content"} messages): the context of every earlier user turn read as the graph reads it,
    turn by turn, then `turn` rewritten by the rules (no LLM; `always_carry` as in `rewrite`)."""
    context: dict[str, Any] = {}
    pairs: list[tuple[str, str]] = []
    messages = list(history)
    for i, message in enumerate(messages):
        if message["role"] != "user":
            continue
        answer = messages[i + 1]["content"] if i + 1 < len(messages) and messages[i + 1]["role"] == "assistant" else ""
        context = rewrite(message["content"], context, pack, pairs, None).context
        pairs.append((message["content"], answer))
    return rewrite(turn, context, pack, pairs, None, always_carry=always_carry).text


def catalog_carry(catalog_source: str | Path, always_carry: bool = True) -> Callable[[str, Sequence[dict]], str] | None:
    """`carry_history` with the domain pack of a `toolcards/<domain>` folder, or None for a catalogue
    without one (a JSON file of OpenAI schemas, a folder of another name): routing then has no pack rules."""
    source = Path(catalog_source)
    if not source.is_dir() or source.name not in domain_names():
        return None
    pack = load_pack(source.name)
    return partial(carry_history, pack=pack, always_carry=always_carry)

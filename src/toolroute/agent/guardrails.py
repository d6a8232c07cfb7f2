"""Input and output guardrails of the agent graph, domain-agnostic (the pack supplies the specifics).

Input: L1 rules (jailbreak / prompt-injection patterns, Korean and English) and L2 embedding
similarity to the domain (the best cosine between the turn and the pack's in-domain examples, with
a threshold fitted on the dev split's in-domain queries, not hand-set). A blocked turn gets a polite
refusal with no tool search and no LLM call.

Output: `<think>` blocks removed (also while streaming, see `ThinkFilter`), personal data masked,
internal ids and tool names removed, banned phrases replaced by the pack's compliant alternative,
and the disclaimer added once (not when the model already wrote one).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from toolroute.agent.pack import DomainPack

# --- L1: rules -------------------------------------------------------------------------------------

INJECTION_PATTERNS: list[tuple[str, str]] = [
    ("ignore_instructions", r"(ignore|disregard|forget)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|your)\s+(instructions|rules|prompts?)"),
    ("reveal_prompt", r"(reveal|show|print|repeat|tell me)\s+(me\s+)?(your|the)\s+(system\s+prompt|instructions|hidden\s+prompt)"),
    ("jailbreak_persona", r"\b(DAN|do anything now|developer mode|jailbreak|jail\s*break)\b"),
    ("no_restrictions_en", r"(without|no)\s+(any\s+)?(restrictions|filters|rules|limits)\b.*\b(answer|respond|act)"),
    ("ko_ignore", r"(이전|앞|위|기존|모든|지금까지)(의|에)?\s*(지시|명령|규칙|지침|프롬프트|설정)[을를은는]?\s*(다\s*)?(무시|잊어|잊고|지워|취소)"),
    ("ko_system_prompt", r"(시스템|system)\s*(프롬프트|prompt|메시지|지침)[을를이가]?\s*(보여|알려|출력|공개|말해|그대로)"),
    ("ko_persona", r"(너는|넌|당신은)\s*이제(부터)?\s*.{0,20}(제한|규칙|필터|검열)\s*(이|가)?\s*없"),
    ("ko_no_limits", r"(제한|규칙|필터|검열)\s*(없이|을\s*풀고|해제)\s*.{0,15}(답|대답|말|알려)"),
    ("ko_dev_mode", r"(개발자|관리자|디버그|탈옥)\s*모드"),
    ("ko_other_pii", r"(아무|다른|모든|전체)\s*(고객|사람|회원)[의]?\s*.{0,10}(주민(등록)?번호|전화번호|연락처|주소|계좌)"),
    ("ko_role_override", r"(지금부터|이제부터)\s*(너는|넌|당신은)\s*.{0,15}(AI|에이전트|봇|어시스턴트)\s*(가|이)?\s*아니"),
]
_COMPILED = [(name, re.compile(pattern, re.IGNORECASE)) for name, pattern in INJECTION_PATTERNS]


def l1_violation(text: str) -> str | None:
    """The name of the first injection/jailbreak rule `text` matches, or None."""
    for name, pattern in _COMPILED:
        if pattern.search(text or ""):
            return name
    return None


# --- L2: similarity to the domain -------------------------------------------------------------------

@dataclass
class DomainGate:
    """Embedding similarity of a turn to the domain's examples, with a fitted threshold."""

    embedder: Any
    examples: list[str]
    threshold: float
    fitted_on: str = ""
    _matrix: np.ndarray | None = None

    def _examples(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = np.asarray(self.embedder.embed_passages(self.examples), dtype=np.float32)
        return self._matrix

    def similarity(self, texts: Sequence[str]) -> np.ndarray:
        """Best cosine of each text against the domain examples (embeddings are unit-normalised)."""
        queries = np.asarray(self.embedder.embed_queries(list(texts)), dtype=np.float32)
        return (queries @ self._examples().T).max(axis=1)

    def in_domain(self, text: str) -> tuple[bool, float]:
        score = float(self.similarity([text])[0])
        return score >= self.threshold, score

    @classmethod
    def fit(cls, embedder: Any, examples: list[str], in_domain_queries: Sequence[str],
            max_false_block: float = 0.01, fitted_on: str = "") -> "DomainGate":
        """Threshold = the `max_false_block` quantile of in-domain queries' scores (so ≤1% are blocked)."""
        gate = cls(embedder, list(examples), threshold=-1.0, fitted_on=fitted_on)
        if not in_domain_queries:
            raise ValueError("cannot fit the domain gate without in-domain queries")
        scores = gate.similarity(in_domain_queries)
        gate.threshold = float(np.quantile(scores, max_false_block, method="lower"))  # an observed score
        return gate

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "fitted_on": self.fitted_on, "n_examples": len(self.examples)}


def fit_domain_gate(pack: DomainPack, embedder: Any, dev_file: str | Path | None,
                    cache: dict[str, Any] | None = None) -> DomainGate:
    """Fit the L2 gate on the dev split's in-domain queries (queries that expect a tool)."""
    examples = pack.domain_examples
    queries: list[str] = []
    if dev_file and Path(dev_file).is_file():
        for line in Path(dev_file).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row.get("expected_tools"):
                    queries.append(row["query"])
    if not queries:  # no dev split: hold the examples themselves to the same rule (weaker, said in fitted_on)
        queries = examples
    return DomainGate.fit(embedder, examples, queries, fitted_on=str(dev_file or "domain examples"))


# --- output ---------------------------------------------------------------------------------------

THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)


def strip_think(text: str) -> str:
    return THINK.sub("", text or "").strip()


class ThinkFilter:
    """Removes `<think>…</think>` from a token stream, even when tags are split across chunks."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self.buffer = ""
        self.inside = False

    def feed(self, chunk: str) -> str:
        self.buffer += chunk
        out = []
        while self.buffer:
            tag = self.CLOSE if self.inside else self.OPEN
            index = self.buffer.lower().find(tag)
            if index >= 0:
                if not self.inside:
                    out.append(self.buffer[:index])
                self.buffer = self.buffer[index + len(tag):]
                self.inside = not self.inside
                continue
            # keep a possible partial tag at the end for the next chunk
            keep = next((n for n in range(min(len(tag) - 1, len(self.buffer)), 0, -1)
                         if tag.startswith(self.buffer[-n:].lower())), 0)
            if not self.inside:
                out.append(self.buffer[: len(self.buffer) - keep])
            self.buffer = self.buffer[len(self.buffer) - keep:] if keep else ""
            break
        return "".join(out)

    def flush(self) -> str:
        rest, self.buffer = ("" if self.inside else self.buffer), ""
        return rest


_SENTENCE = re.compile(r"[^.!?。\n]+[.!?。]?\n?|\n")


def replace_banned(text: str, pack: DomainPack) -> tuple[str, list[dict[str, Any]]]:
    """Each sentence with a banned phrase is replaced by the pack's compliant alternative."""
    hits_all: list[dict[str, Any]] = []
    out = []
    for sentence in _SENTENCE.findall(text):
        hits = pack.find_banned(sentence) if sentence.strip() else []
        if hits:
            hits_all.extend(hits)
            alternative = hits[0].get("alternative") or ""
            lead = sentence[: len(sentence) - len(sentence.lstrip())]
            out.append(lead + alternative + ("\n" if sentence.endswith("\n") else ""))
        else:
            out.append(sentence)
    return "".join(out).strip(), hits_all


@dataclass
class GuardedAnswer:
    text: str
    removed: list[str]
    banned: list[dict[str, Any]]
    disclaimer_added: bool


def guard_output(text: str, pack: DomainPack, with_disclaimer: bool = True) -> GuardedAnswer:
    """The answer a user may see: no think blocks, no personal data, no internal ids, compliant.

    The disclaimer goes on answers built from tool results (`with_disclaimer`), not on greetings.
    """
    removed: list[str] = []
    cleaned = strip_think(text)
    masked = pack.mask_text(cleaned)
    if masked != cleaned:
        removed.append("personal_data")
    cleaned = masked
    for pattern in pack.remove_patterns:
        new = re.sub(pattern, "", cleaned)
        if new != cleaned:
            removed.append(pattern)
            cleaned = new
    names = sorted(pack.tool_names, key=len, reverse=True)
    if names:
        new = re.sub(r"`?\b(" + "|".join(map(re.escape, names)) + r")\b`?(\(\))?", "", cleaned)
        if new != cleaned:
            removed.append("tool_names")
            cleaned = new
    cleaned = re.sub(r"\(\s*\)", "", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    cleaned = re.sub(r" +([,.)])", r"\1", cleaned).strip()
    cleaned, banned = replace_banned(cleaned, pack)
    added = False
    if with_disclaimer and pack.disclaimer and cleaned and not any(m in cleaned for m in pack.disclaimer_markers or [pack.disclaimer]):
        cleaned = f"{cleaned}\n\n{pack.disclaimer}"
        added = True
    return GuardedAnswer(cleaned, removed, banned, added)

"""Input and output guardrails of the agent graph, domain-agnostic (the pack supplies the specifics).

Input: L1 rules (`toolroute.agent.injection`: injection and jailbreak patterns, Korean and English,
on normalised text), L2 embedding similarity to the domain (`DomainGate`: closer to the pack's
in-domain examples than to generic off-topic requests, with a threshold fitted on in-domain
queries of the calibration split, not hand-set) and L3, a logistic regression on the same query
embedding that tells injections from legitimate turns (`toolroute.agent.injection_classifier`,
fitted on the dev red-team split; part of the gate, see `DomainGate.check`). A blocked turn gets a polite
refusal with no tool search and no LLM call.

Output: `<think>` blocks removed (also while streaming, see `ThinkFilter`), personal data masked,
internal ids and tool names removed (on the NFKC view, any case, with the particle glued to them; see
`toolroute.agent.redaction`), banned phrases replaced by the pack's compliant alternative,
and the disclaimer added once (not when the model already wrote one).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from toolroute.agent.injection import violation
from toolroute.agent.pack import DomainPack
from toolroute.agent.redaction import ascii_boundaries, id_pattern, sub_view
from toolroute.config import ROOT
from toolroute.agent.injection_classifier import fit_on_dev

# --- L1: rules -------------------------------------------------------------------------------------

def l1_violation(text: str) -> str | None:
    """The name of the first injection/jailbreak rule `text` matches, or None (`toolroute.agent.injection`)."""
    return violation(text)


# --- L2: similarity to the domain -------------------------------------------------------------------

@dataclass
class DomainGate:
    """How much closer a turn is to the domain's examples than to generic off-topic requests.

    Score = best cosine to the in-domain examples minus best cosine to the off-domain anchors (when
    there are anchors; else the in-domain cosine alone). The contrast matters with a small
    multilingual model whose cosines all sit between 0.8 and 0.95: an English insurance question and
    a Korean recipe request have similar in-domain cosines, but only one of them is closer still to
    the anchors. The threshold is fitted on in-domain queries of the calibration split, not hand-set.
    """

    embedder: Any
    examples: list[str]
    threshold: float
    fitted_on: str = ""
    off_examples: list[str] = field(default_factory=list)
    injection: Any = None  # L3: an `InjectionClassifier` on the same embedder, or None
    _matrix: np.ndarray | None = None
    _off: np.ndarray | None = None

    def _examples(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = np.asarray(self.embedder.embed_passages(self.examples), dtype=np.float32)
        return self._matrix

    def _anchors(self) -> np.ndarray:
        if self._off is None:
            self._off = np.asarray(self.embedder.embed_passages(self.off_examples), dtype=np.float32)
        return self._off

    def similarity(self, texts: Sequence[str]) -> np.ndarray:
        """The gate's score of each text (embeddings are unit-normalised; see the class docstring)."""
        queries = np.asarray(self.embedder.embed_queries(list(texts)), dtype=np.float32)
        score = (queries @ self._examples().T).max(axis=1)
        if self.off_examples:
            score = score - (queries @ self._anchors().T).max(axis=1)
        return score

    def with_examples(self, examples: Sequence[str]) -> tuple["DomainGate", int]:
        """The same gate (threshold, anchors) over a new example list, for a catalogue changed at run
        time: examples it already embedded are reused, only new texts are embedded. Returns the gate
        and how many texts were embedded."""
        examples = list(examples)
        old = self._examples() if self.examples else np.zeros((0, 0), dtype=np.float32)
        rows = {text: old[i] for i, text in enumerate(self.examples)}
        new = list(dict.fromkeys(t for t in examples if t not in rows))
        if new:
            rows.update(zip(new, np.asarray(self.embedder.embed_passages(new), dtype=np.float32)))
        gate = DomainGate(self.embedder, examples, self.threshold, self.fitted_on, list(self.off_examples),
                          injection=self.injection, _off=self._off)
        gate._matrix = np.stack([rows[t] for t in examples]) if examples else None
        return gate, len(new)

    def check(self, text: str) -> tuple[str | None, float]:
        """("off_domain" | "injection_classifier" | None, the domain score): L2, then L3 on the same
        query embedding (the embedder remembers the turn's vector)."""
        score = float(self.similarity([text])[0])
        if score < self.threshold:
            return "off_domain", score
        if self.injection is not None and self.injection.blocks(text)[0]:
            return "injection_classifier", score
        return None, score

    def in_domain(self, text: str) -> tuple[bool, float]:
        """True when neither L2 nor L3 blocks the turn (the graph reads `check`, which names the layer)."""
        blocked, score = self.check(text)
        return blocked is None, score

    @classmethod
    def fit(cls, embedder: Any, examples: list[str], in_domain_queries: Sequence[str],
            max_false_block: float = 0.0, fitted_on: str = "", off_examples: Sequence[str] = ()) -> "DomainGate":
        """Threshold = the `max_false_block` quantile of in-domain queries' scores; by default their
        minimum, so no calibration query is blocked: refusing a customer costs more than letting
        small talk reach the LLM, which answers it politely anyway."""
        gate = cls(embedder, list(examples), threshold=-1.0, fitted_on=fitted_on, off_examples=list(off_examples))
        if not in_domain_queries:
            raise ValueError("cannot fit the domain gate without in-domain queries")
        scores = gate.similarity(in_domain_queries)
        gate.threshold = float(np.quantile(scores, max_false_block, method="lower"))  # an observed score
        return gate

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "fitted_on": self.fitted_on, "n_examples": len(self.examples),
                "n_off_examples": len(self.off_examples),
                "score": "in-domain minus off-domain cosine" if self.off_examples else "in-domain cosine",
                "injection_classifier": None if self.injection is None else self.injection.to_dict()}


def off_domain_anchors(path: str | Path | None = None) -> list[str]:
    """Generic off-topic requests (weather, recipes, code, sports …) from the dev red-team set.

    The dev set is the guardrail's tuning split; the held-out `prompts.jsonl` is never read here.
    """
    path = Path(path) if path is not None else ROOT / "data" / "redteam" / "dev.jsonl"
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r["text"] for r in rows if r.get("kind") == "off_domain"]


def fit_domain_gate(pack: DomainPack, embedder: Any, dev_file: str | Path | None,
                    cache: dict[str, Any] | None = None, off_examples: Sequence[str] | None = None,
                    injection_classifier: bool = True) -> DomainGate:
    """Fit the L2 gate on the calibration/dev split's in-domain queries (queries that expect a tool),
    with L3 (`toolroute.agent.injection_classifier.fit_on_dev`) when `injection_classifier` and the
    domain has a dev red-team split."""
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
    anchors = off_domain_anchors() if off_examples is None else list(off_examples)
    gate = DomainGate.fit(embedder, examples, queries, fitted_on=str(dev_file or "domain examples"), off_examples=anchors)
    if injection_classifier:
        gate.injection = fit_on_dev(embedder, pack.name)
    return gate


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


@lru_cache(maxsize=64)
def _id_regex(patterns: tuple[str, ...]) -> re.Pattern:
    """Internal ids or tool names as they leak into Korean answers: any case, any width (matched on the
    NFKC view by `sub_view`), glued to a particle ("B001은", "premium_estimate로"), in backticks or
    parentheses; a pack's `\\b` is read as an ASCII boundary (`toolroute.agent.redaction`)."""
    return id_pattern(ascii_boundaries(p) for p in patterns)


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
        cleaned, count = sub_view(_id_regex((pattern,)), cleaned)
        if count:
            removed.append(pattern)
    names = tuple(sorted(pack.tool_names, key=len, reverse=True))
    if names:
        cleaned, count = sub_view(_id_regex(tuple(re.escape(n) for n in names)), cleaned)
        if count:
            removed.append("tool_names")
    cleaned = re.sub(r"\(\s*\)", "", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    cleaned = re.sub(r" +([,.)])", r"\1", cleaned).strip()
    cleaned, banned = replace_banned(cleaned, pack)
    added = False
    if with_disclaimer and pack.disclaimer and cleaned and not any(m in cleaned for m in pack.disclaimer_markers or [pack.disclaimer]):
        cleaned = f"{cleaned}\n\n{pack.disclaimer}"
        added = True
    return GuardedAnswer(cleaned, removed, banned, added)

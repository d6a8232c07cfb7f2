"""Input and output guardrails of the agent graph, domain-agnostic (the pack supplies the specifics).

Input: L1 rules (`toolroute.agent.injection`: injection and jailbreak patterns, Korean and English,
on normalised text), L2 embedding similarity to the domain (`DomainGate`: closer to the pack's
in-domain examples and consultation turns than to generic off-topic requests, with a threshold
fitted on in-domain queries of the calibration split, not hand-set; a turn that is only greetings,
thanks or a closing passes, see `small_talk`) and L3, a logistic regression on the same query
embedding that tells injections from legitimate turns (`toolroute.agent.injection_classifier`,
fitted on the tuning red-team splits; part of the gate, see `DomainGate.check`). A blocked turn gets
a polite refusal with no tool search and no LLM call.

Output: `<think>` blocks removed (also while streaming, see `ThinkFilter`), invisible characters
dropped, personal data masked, internal ids and tool names removed (matched on a normalised skeleton
of the text: any case, width, spacing or Korean numerals, with the particle glued to them; see
`toolroute.agent.redaction`), banned phrases replaced by the pack's compliant alternative,
and the disclaimer added once (not when the model already wrote one).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from toolroute.agent.injection import violation
from toolroute.agent.pack import DomainPack
from toolroute.agent.redaction import remove_ids, strip_invisible
from toolroute.config import ROOT
from toolroute.agent.injection_classifier import TUNING_SETS, fit_on_dev

# --- L1: rules -------------------------------------------------------------------------------------

def l1_violation(text: str) -> str | None:
    """The name of the first injection/jailbreak rule `text` matches, or None (`toolroute.agent.injection`)."""
    return violation(text)


# --- L2: similarity to the domain -------------------------------------------------------------------

# Greetings, thanks, closings and acknowledgements: part of any consultation, though no example of the
# domain looks like them ("여보세요? 잘 들리세요?", "감사합니다, 수고하세요"). A turn made only of these
# passes L2 whatever its score; anything else in it ("안녕하세요, 오늘 날씨 어때요?") is scored as usual.
_SMALL_TALK = re.compile(
    r"안녕(하세요|하십니까|하세여|하세용|하셨어요|히\s*(계세요|가세요|계십시오|주무세요))?|안냐세요|안뇽(하세요|하세용|하세여)?|하이(?![가-힣])|"
    r"반갑(습니다|네요|아요)|반가워(요)?|반가웠(어요|습니다)|처음\s*뵙겠습니다|여보세요|(잘\s*)?부탁(드립니다|드려요|해요|합니다)|"
    r"(좋은|행복한|즐거운|편안한)\s*(아침|하루|오후|저녁|주말|밤|시간)\s*(입니다|이에요|예요|되세요|보내세요|보내십시오)?|"
    r"(주말|하루|저녁)\s*잘\s*보내세요|"
    r"감사(합니다|해요|드립니다|드려요|했습니다)?|고맙(습니다|네요|아요)|고마워요?|땡큐|"
    r"(전화|연락)\s*(주셔서|줘서|해\s*주셔서)|"
    r"수고\s*(하세요|하셨습니다|하셨어요|많으십니다|많으세요|많으셨습니다|하십니다)|"
    r"고생\s*(하세요|하셨습니다|하셨어요|많으세요|많으셨어요|많으셨습니다)|들어가세요|"
    r"(오늘은\s*)?여기까지\s*(할게요|하겠습니다|요)|((이만|그럼|전화)\s*)?(끊을게요|끊겠습니다|끊어요)|이만\s*할게요|"
    r"((제|저희)\s*)?((목)?소리|말)?\s*(가|이)?\s*(잘\s*)?(들리세요|들려요|들리시나요|들리나요)|잠(시|깐)만\s*(요|기다려\s*(주세요|줘요?|주시겠어요))?|"
    r"(이제\s*)?말씀\s*(하세요|하십시오|해\s*주세요)|"
    r"(잘\s*)?알겠(습니다|어요|어|슴다)|알았(어요|습니다|어)|확인했(어요|습니다)|그렇군요|그렇구나|"
    r"(네+|넵|넹|예|응|ㅇㅇ|아하?|오케이|오키|좋아요|좋습니다|괜찮아요|맞아요)(?![가-힣])|"
    r"(상담원|상담사|선생)님?|고객님|(오늘도|정말|너무|진짜|많이|덕분에|대단히|진심으로|(친절한\s*)?(설명|안내|답변|상담|도움|연락))"
    r"(?=\s*(감사|고맙|고마워|수고|고생))|"
    r"(설명|안내|답변|상담)\s*(을|를)?\s*(너무|정말|진짜|참)?\s*(잘|친절하게|자세히)\s*(해\s*주셔서|들었어요|들었습니다)|"
    r"(이제\s*)?이해(가\s*)?\s*(됐어요|됐습니다|했어요|했습니다|되었어요|돼요)|"
    r"(덕분에\s*)?도움이?\s*(많이\s*|정말\s*|너무\s*)?(됐어요|됐습니다|되었습니다|되었어요)|"
    r"(덕분에\s*)?궁금한\s*(거|것|게|점)\s*(다|모두)?\s*(풀렸어요|해결됐어요)|"
    r"다음에\s*(또|다시)?\s*((연락|전화|문의)\s*(드릴게요|할게요|하겠습니다|드리겠습니다)|물어볼게요)|"
    r"(그럼|그러면|그럼요|그래요|음+|저기요?)(?![가-힣])|"
    r"\b(hi+|hel+o+(\s+again)?|he+y+|hiya|yo|(is\s+)?any(one|body)\s+there|are\s+you\s+there|can\s+you\s+hear\s+me|"
    r"good\s*(morning|afternoon|evening|day|night)|morning|thanks?(\s+(a\s+lot|so\s+much|again))?|"
    r"thank\s+you(\s+(so|very)\s+much)?|thx|ty|cheers|for\s+(calling(\s+me)?(\s+back)?|your\s+(help|time)|the\s+(help|call)|explaining)|"
    r"(bye\s*)?bye(\s+now)?|goodbye|see\s+you|take\s+care|talk\s+(to\s+you\s+)?(soon|later)|"
    r"have\s+a\s+(nice|good|great|lovely)\s+(day|one|evening|weekend|night)|"
    r"that'?s\s+all(\s+for\s+(today|now))?|you\s+too|nice\s+to\s+meet\s+you|there|ok(ay)?|sure|great|perfect|alright|"
    r"all\s+right|got\s+it|sounds\s+good|no\s+(problem|worries)|you'?re\s+welcome|understood|i\s+see|"
    r"(i\s+)?appreciate\s+it|much\s+appreciated|(that\s+)?(was\s+)?(very\s+)?helpful|that\s+help(s|ed)|yes|yeah|yep)\b",
    re.IGNORECASE)


def small_talk(text: str) -> bool:
    """True when `text` is only greetings, thanks, closings and acknowledgements (with emoji, ㅋㅋ/ㅎㅎ
    and punctuation): the L2 gate lets it through (`DomainGate.off_domain`)."""
    rest = _SMALL_TALK.sub(" ", unicodedata.normalize("NFKC", text or ""))
    rest = re.sub(r"[ㄱ-ㅣ\u1100-\u11ff]+|[^\w]|_", "", rest)  # lone jamo (ㅋㅋ, ㅎㅎ) also after NFKC
    return bool((text or "").strip()) and rest == ""


@dataclass
class DomainGate:
    """How much closer a turn is to the domain's examples than to generic off-topic requests.

    Score = best cosine to the in-domain examples minus best cosine to the off-domain anchors (when
    there are anchors; else the in-domain cosine alone). The contrast matters with a small
    multilingual model whose cosines all sit between 0.8 and 0.95: an English insurance question and
    a Korean recipe request have similar in-domain cosines, but only one of them is closer still to
    the anchors. The threshold is fitted on in-domain queries of the calibration split, not hand-set.
    The in-domain side is the cards' examples (what a tool is for) and, beside them, `consultation`:
    legitimate turns of a consultation that ask no tool (a callback note, an occupation question, a
    revised quote), which kept away from the cards' wording fall under the threshold.
    """

    embedder: Any
    examples: list[str]
    threshold: float
    fitted_on: str = ""
    off_examples: list[str] = field(default_factory=list)
    injection: Any = None  # L3: an `InjectionClassifier` on the same embedder, or None
    consultation: list[str] = field(default_factory=list)
    _matrix: np.ndarray | None = None
    _off: np.ndarray | None = None

    def _examples(self) -> np.ndarray:
        """The in-domain side: the examples, then the consultation turns."""
        if self._matrix is None:
            self._matrix = np.asarray(self.embedder.embed_passages(self.examples + self.consultation), dtype=np.float32)
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
        known = self.examples + self.consultation
        old = self._examples() if known else np.zeros((0, 0), dtype=np.float32)
        rows = {text: old[i] for i, text in enumerate(known)}
        new = list(dict.fromkeys(t for t in examples if t not in rows))
        if new:
            rows.update(zip(new, np.asarray(self.embedder.embed_passages(new), dtype=np.float32)))
        gate = DomainGate(self.embedder, examples, self.threshold, self.fitted_on, list(self.off_examples),
                          injection=self.injection, consultation=list(self.consultation), _off=self._off)
        kept = examples + gate.consultation
        gate._matrix = np.stack([rows[t] for t in kept]) if kept else None
        return gate, len(new)

    def off_domain(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(blocked, score) per text: L2 blocks a turn scoring under the threshold unless it is only
        small talk (`small_talk`)."""
        scores = self.similarity(texts)
        blocked = np.array([s < self.threshold and not small_talk(t) for t, s in zip(texts, scores)], dtype=bool)
        return blocked, scores

    def check(self, text: str) -> tuple[str | None, float]:
        """("off_domain" | "injection_classifier" | None, the domain score): L2, then L3 on the same
        query embedding (the embedder remembers the turn's vector). A turn that is only small talk
        carries no request: neither layer blocks it."""
        blocked, scores = self.off_domain([text])
        score = float(scores[0])
        if blocked[0]:
            return "off_domain", score
        if self.injection is not None and not small_talk(text) and self.injection.blocks(text)[0]:
            return "injection_classifier", score
        return None, score

    def in_domain(self, text: str) -> tuple[bool, float]:
        """True when neither L2 nor L3 blocks the turn (the graph reads `check`, which names the layer)."""
        blocked, score = self.check(text)
        return blocked is None, score

    @classmethod
    def fit(cls, embedder: Any, examples: list[str], in_domain_queries: Sequence[str],
            max_false_block: float = 0.0, fitted_on: str = "", off_examples: Sequence[str] = (),
            consultation: Sequence[str] = ()) -> "DomainGate":
        """Threshold = the `max_false_block` quantile of in-domain queries' scores; by default their
        minimum, so no calibration query is blocked: refusing a customer costs more than letting
        small talk reach the LLM, which answers it politely anyway. The scores are against the
        examples alone: the consultation turns join the in-domain side afterwards and only let more
        turns through (scored with them, a calibration query close to a consultation turn would raise
        the threshold, and more consultation turns would block more)."""
        gate = cls(embedder, list(examples), threshold=-1.0, fitted_on=fitted_on, off_examples=list(off_examples))
        if not in_domain_queries:
            raise ValueError("cannot fit the domain gate without in-domain queries")
        scores = gate.similarity(in_domain_queries)
        gate.threshold = float(np.quantile(scores, max_false_block, method="lower"))  # an observed score
        gate.consultation = list(consultation)
        if gate.consultation:
            turns = np.asarray(embedder.embed_passages(gate.consultation), dtype=np.float32)
            gate._matrix = np.vstack([gate._matrix, turns]) if gate.examples else turns
        return gate

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "fitted_on": self.fitted_on, "n_examples": len(self.examples),
                "n_consultation": len(self.consultation), "n_off_examples": len(self.off_examples),
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


def consultation_examples(domain: str = "insurance", paths: Sequence[str | Path] | None = None) -> list[str]:
    """Legitimate consultation turns that ask no tool, for the gate's in-domain side: the legitimate
    turns of every tuning red-team split (`injection_classifier.TUNING_SETS`: dev, train,
    hard_legit_tune and hard_legit_tune2, four writers; the insurance domain's; the held-out sets are
    never read here), without the greetings and closings, which `small_talk` lets through and which as
    examples would pull in any polite request ("설명해 주세요"). Every writer, not one: judged by the
    other writers' turns only, 12 of hard_legit_tune's 133 turns fell under the threshold with none,
    3 with dev's and train's, 1 with hard_legit_tune2's too (`guard_eval.tuning_cross_validated`
    leaves a row's own writer out)."""
    if paths is None:
        if domain != "insurance":
            return []
        paths = [ROOT / "data" / "redteam" / name for name in TUNING_SETS]
    texts: list[str] = []
    for path in map(Path, paths):
        if not path.is_file():
            continue
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        texts += [r["text"] for r in rows if r.get("kind") == "in_domain_hard"
                  and not str(r.get("note", "")).startswith("greetings_and_closings:")]
    return list(dict.fromkeys(texts))


def fit_domain_gate(pack: DomainPack, embedder: Any, dev_file: str | Path | None,
                    cache: dict[str, Any] | None = None, off_examples: Sequence[str] | None = None,
                    injection_classifier: bool = True, consultation: Sequence[str] | None = None) -> DomainGate:
    """Fit the L2 gate on the calibration/dev split's in-domain queries (queries that expect a tool),
    with the domain's consultation turns beside the cards' examples (`consultation_examples`) and L3
    (`toolroute.agent.injection_classifier.fit_on_dev`) when `injection_classifier` and the domain has
    a dev red-team split."""
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
    turns = consultation_examples(pack.name) if consultation is None else list(consultation)
    gate = DomainGate.fit(embedder, examples, queries, fitted_on=str(dev_file or "domain examples"), off_examples=anchors,
                          consultation=turns)
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


@dataclass
class GuardedAnswer:
    text: str
    removed: list[str]
    banned: list[dict[str, Any]]
    disclaimer_added: bool


def redact_with_report(text: str, pack: DomainPack) -> tuple[str, list[str]]:
    """`text` with personal data masked and internal ids and tool names removed, and what was removed:
    the part of the output guardrail every path applies (answers, tool results, MCP results; see
    `toolroute.agent.output_policy`)."""
    removed: list[str] = []
    cleaned = strip_invisible(text)  # nothing hides inside a value; a value is as long as it looks
    masked = pack.mask_text(cleaned)
    if masked != cleaned:
        removed.append("personal_data")
    cleaned, hits = remove_ids(masked, pack.remove_patterns, pack.tool_names)
    removed += hits
    cleaned = re.sub(r"\(\s*\)", "", cleaned)
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)
    cleaned = re.sub(r" +([,.)])", r"\1", cleaned).strip()
    return cleaned, removed


def redact(text: str, pack: DomainPack) -> str:
    """`redact_with_report` without the report."""
    return redact_with_report(text, pack)[0]


def guard_output(text: str, pack: DomainPack, with_disclaimer: bool = True) -> GuardedAnswer:
    """The answer a user may see: no think blocks, no personal data, no internal ids, compliant.

    The disclaimer goes on answers built from tool results (`with_disclaimer`), not on greetings.
    """
    cleaned, removed = redact_with_report(strip_think(text), pack)
    cleaned, banned = replace_banned(cleaned, pack)
    added = False
    if with_disclaimer and pack.disclaimer and cleaned and not any(m in cleaned for m in pack.disclaimer_markers or [pack.disclaimer]):
        cleaned = f"{cleaned}\n\n{pack.disclaimer}"
        added = True
    return GuardedAnswer(cleaned, removed, banned, added)

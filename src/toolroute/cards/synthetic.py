"""Synthetic routing queries at scale, written from a card (and its schema) only: the doc2query /
Re-Invoke recipe, offline.

A router learns what users say from its cards' few `when_to_use` lines; people outside the project
say it otherwise (one word, 반말, a situation instead of a request, a typo). Here an LLM writes many
queries per tool in several *families* (registers and shapes, `FAMILIES`), rules add cheap variants
of them (spacing, endings, typos, another product name: `rule_variants`), and `filter_candidates` drops
what may not be trained on: empty or long texts, repeats, and anything near an evaluation query of any
file (`eval_texts`, the leakage checker's test). `pair_check` is the independent check: the LLM, shown
two cards in a random order, says which one a query belongs to.

Every LLM reply is kept in a `GenerationCache` (JSONL, one line per call, with the model, the seed, the
sampling temperature and the prompt's hash), so that a training set is rebuilt from the repository
without generating again, and an interrupted run loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from difflib import SequenceMatcher

import yaml
from langchain_core.messages import HumanMessage, SystemMessage
from tqdm.auto import tqdm

from toolroute.cards.augment import AUGMENT_PROMPT
from toolroute.cards.expand import requests_in_reply
from toolroute.cards.model import NEAR_DUPLICATE, Catalog, ToolCard, normalize_text

PROMPT_VERSION = "synthetic-v1"  # part of every cache key: change it when a prompt's wording changes
MAX_CHARS = 120
SHOWN_EXAMPLES = 2  # card examples shown in a prompt (the first ones); a small model copies more of them than it varies


@dataclass(frozen=True)
class Family:
    """One shape of query: what the LLM is asked for, in Korean and in English."""

    name: str
    ko: str
    en: str


# The shapes outside question sets were missed on come first: a run stopped early has them for every tool.
FAMILIES: tuple[Family, ...] = (
    Family("short_question", "있는지, 되는지, 얼마인지, 뭐가 있는지 묻는 아주 짧은 질문 (예: ~있어?, ~돼요?, ~뭐 있어요?).",
           "Very short yes/no or listing questions (is there…, can I…, what … are there)."),
    Family("keyword", "동사 없이 2~4개 단어의 키워드만, 검색창에 치듯이.",
           "Keyword-only queries of 2 to 4 words, as typed into a search box."),
    Family("casual", "반말로 짧게 묻는 채팅 말투 (예: ~해줘, ~알려줘, ~돼?, ~뭐야?).",
           "Short casual chat messages, lower case, no greeting."),
    Family("situation", "고객의 상황만 말하고 무엇을 해 달라는지는 돌려 말하는 문장. 도구 설명의 단어를 그대로 쓰지 마세요.",
           "Sentences that describe the user's situation and only imply what they need; do not reuse the description's words."),
    Family("formal", "상담원이나 고객이 존댓말로 묻는 완전한 문장. 상품 이름·나이·성별 같은 구체적인 정보를 넣은 문장과 넣지 않은 문장을 섞으세요.",
           "Complete polite sentences from a customer or an agent; mix ones with concrete names, ages and amounts and ones without."),
    Family("mixed", "영어 단어(premium, rider, claim, list 등)를 섞거나 맞춤법·띄어쓰기가 조금 틀린, 실제 채팅 같은 문장.",
           "Messages with typos, missing punctuation or words from another language mixed in."),
)
FAMILY_NAMES = tuple(f.name for f in FAMILIES)

_WORDS = {
    "ko": {"purpose": "도구 설명", "tags": "키워드", "examples": "이 도구가 필요한 요청 예시", "avoid": "이 도구를 쓰지 않는 경우",
           "parameters": "입력 항목", "names": "쓸 수 있는 이름", "shape": "문장 형식",
           "ask": "위 도구가 필요한 새 요청 문장을 {n}개 쓰세요. 예시를 베끼지 말고, 쓰지 않는 경우는 피하세요. "
                  "형식: [\"문장1\", \"문장2\", ...]"},
    "en": {"purpose": "Tool description", "tags": "Keywords", "examples": "Requests this tool answers",
           "avoid": "Do not use this tool when", "parameters": "Inputs", "names": "Names you may use", "shape": "Shape",
           "ask": "Write {n} new requests that need the tool above. Do not copy the examples; avoid the cases it is "
                  "not for. Answer with one JSON list of strings."},
}
CHECK_PROMPT = {
    "ko": ("두 도구 중 사용자의 요청에 맞는 도구 하나를 고르세요. 답은 A 또는 B 한 글자만 쓰세요.",
           "요청: {query}\n\nA: {a}\nB: {b}\n\n답 (A 또는 B):"),
    "en": ("Pick the one tool of two that serves the user's request. Answer with the single letter A or B.",
           "Request: {query}\n\nA: {a}\nB: {b}\n\nAnswer (A or B):"),
}


def card_text(card: ToolCard) -> str:
    """A card in one line for the pair check: its purpose and tags (no examples: they may be the query's source)."""
    tags = f" ({', '.join(card.tags)})" if card.tags else ""
    return f"{card.purpose}{tags}"


def generation_prompt(card: ToolCard, family: Family, n: int, language: str = "ko", parameters: Sequence[str] = (),
                      names: Sequence[str] = (), system: str = AUGMENT_PROMPT) -> list:
    """The messages asking for `n` queries of `family` that need `card`'s tool."""
    words = _WORDS[language]
    lines = [f"{words['purpose']}: {card.purpose}"]
    if card.tags:
        lines.append(f"{words['tags']}: {', '.join(card.tags)}")
    if parameters:
        lines.append(f"{words['parameters']}: {', '.join(parameters)}")
    if card.when_to_use:
        lines.append(f"{words['examples']}:")
        lines += [f"- {e}" for e in card.when_to_use[:SHOWN_EXAMPLES]]
    if card.when_not_to_use:
        lines.append(f"{words['avoid']}:")
        lines += [f"- {e}" for e in card.when_not_to_use]
    if names:
        lines.append(f"{words['names']}: {', '.join(names)}")
    shape = getattr(family, language)
    lines += [f"{words['shape']}: {shape}", words["ask"].format(n=n), f"{words['shape']}: {shape}"]
    return [SystemMessage(system), HumanMessage("\n".join(lines))]


_ITEM_LINE = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s*(.+?)\s*$")


def queries_in_reply(text: str) -> list[str]:
    """The queries of a reply: its JSON list of strings, else its bulleted or numbered lines (a small
    model often answers so), quotes stripped."""
    items = requests_in_reply(text)
    if items is None:
        items = [m.group(1) for line in (text or "").splitlines() if (m := _ITEM_LINE.match(line))]
    out = []
    for item in items:
        item = " ".join(str(item).split()).strip().strip('"\'“”‘’').strip()
        if item:
            out.append(item)
    return out


def prompt_hash(messages: list) -> str:
    payload = [(m.type, m.content) for m in messages] + [PROMPT_VERSION]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()[:16]


@dataclass
class Generation:
    """One LLM call: what was asked (tool, family, round, prompt hash), of which model, and what came back."""

    tool: str
    family: str
    round: int
    model: str
    seed: int
    temperature: float
    prompt: str  # prompt_hash of the messages
    reply: str
    queries: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def key(self) -> tuple:
        return (self.tool, self.family, self.round, self.model, self.prompt)


class GenerationCache:
    """Generations kept one JSON line each; a call whose key is present is not made again."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.items: dict[tuple, Generation] = {}
        if self.path.is_file():
            for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    generation = Generation(**json.loads(line))
                except (json.JSONDecodeError, TypeError) as error:  # a line cut by a kill: skipped, said where
                    print(f"{self.path}:{number}: skipped an unreadable generation ({error})")
                    continue
                self.items[generation.key] = generation

    def get(self, key: tuple) -> Generation | None:
        return self.items.get(key)

    def add(self, generation: Generation) -> None:
        self.items[generation.key] = generation
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(asdict(generation), ensure_ascii=False) + "\n")
            fh.flush()

    def __iter__(self) -> Iterator[Generation]:
        return iter(self.items.values())

    def __len__(self) -> int:
        return len(self.items)


def call_seed(tool: str, family: str, round_: int, base: int = 0) -> int:
    """The sampling seed of one call: fixed by what is asked, so a rerun asks the same."""
    return (int(hashlib.sha256(f"{tool}|{family}|{round_}".encode()).hexdigest()[:8], 16) + base) % (2 ** 31)


def generate(catalog: Catalog, make_llm, model_id: str, cache: GenerationCache, families: Sequence[Family] = FAMILIES,
             n: int = 10, rounds: int = 1, temperature: float = 0.8, language: str = "ko",
             parameters: dict[str, Sequence[str]] | None = None, names: Sequence[str] = (), names_shown: int = 6,
             system: str = AUGMENT_PROMPT, deadline: float | None = None, progress: bool = True) -> GenerationCache:
    """Every (card, family, round) call not yet in `cache`, made and added one by one (interleaved by
    family first, so that a run stopped at `deadline` covers every tool; a failed call is said and left for the
    next run). `make_llm(seed)` returns a chat
    model sampling at `temperature` with that seed; `names` (e.g. product names) are offered a few at a
    time so that queries name real things."""
    jobs = [(round_, family, card) for round_ in range(rounds) for family in families for card in catalog]
    todo = []
    for round_, family, card in jobs:
        rng = random.Random(call_seed(card.name, family.name, round_))
        shown = rng.sample(list(names), min(names_shown, len(names))) if names else []
        messages = generation_prompt(card, family, n, language, (parameters or {}).get(card.name, ()), shown, system)
        key = (card.name, family.name, round_, model_id, prompt_hash(messages))
        if cache.get(key) is None:
            todo.append((key, messages))
    failures: list[str] = []
    for (tool, family, round_, model, digest), messages in tqdm(todo, desc="synthetic queries", unit="call",
                                                                disable=not progress):
        if deadline is not None and time.monotonic() > deadline:
            break
        seed = call_seed(tool, family, round_)
        start = time.perf_counter()
        try:
            reply = make_llm(seed).invoke(messages)
        except Exception as error:  # a slow or dead server: this call is left for a later run, the rest go on
            failures.append(f"{tool}/{family}/{round_}: {type(error).__name__}: {error}")
            print(f"synthetic queries: {failures[-1]}")
            continue
        text = str(getattr(reply, "content", reply))
        queries = queries_in_reply(text)
        cache.add(Generation(tool, family, round_, model, seed, temperature, digest, text, queries,
                             round(time.perf_counter() - start, 2)))
    return cache


# ---- rule-based variants -------------------------------------------------------------------------

# (a, b): a written b, and b written a. Polite and casual endings, the ones users switch between.
ENDING_SWAPS: tuple[tuple[str, str], ...] = (
    ("알려줘", "알려주세요"), ("알려 줘", "알려 주세요"), ("해줘", "해주세요"), ("해 줘", "해 주세요"), ("보여줘", "보여주세요"),
    ("찾아줘", "찾아주세요"), ("뽑아줘", "뽑아주세요"), ("뭐야", "뭔가요"), ("있어?", "있나요?"), ("돼?", "되나요?"),
    ("얼마야", "얼마예요"), ("할래", "할게요"), ("가능해?", "가능한가요?"), ("어때?", "어떤가요?"),
)
PARTICLE = re.compile(r"(?<=[가-힣]{2})(를|을)(?=\s)")


def _swap_ending(text: str) -> str | None:
    for a, b in ENDING_SWAPS:
        if a in text:
            return text.replace(a, b, 1)
        if b in text:
            return text.replace(b, a, 1)
    return None


def _drop_particles(text: str) -> str | None:
    out = PARTICLE.sub("", text)
    return out if out != text else None


def _no_spaces(text: str) -> str | None:
    out = text.replace(" ", "")
    return out if out != text and len(text.split()) > 1 else None


def _typo(text: str, rng: random.Random) -> str | None:
    """One Hangul syllable dropped or two neighbours swapped (the slips of a fast typist)."""
    spots = [i for i, ch in enumerate(text) if "\uac00" <= ch <= "\ud7a3"]
    if len(spots) < 4:
        return None
    i = rng.choice(spots[1:])
    if rng.random() < 0.5 and i + 1 < len(text) and text[i + 1] != " ":
        return text[:i] + text[i + 1] + text[i] + text[i + 2:]
    return text[:i] + text[i + 1:]


def _other_name(text: str, names: Sequence[str], rng: random.Random) -> str | None:
    present = [name for name in sorted(names, key=len, reverse=True) if name and name in text]
    if not present or len(names) < 2:
        return None
    return text.replace(present[0], rng.choice([n for n in names if n != present[0]]), 1)


RULES = ("ending", "particle", "spacing", "typo", "name")


def rule_variants(text: str, rng: random.Random, names: Sequence[str] = (), per_text: int = 1) -> list[tuple[str, str]]:
    """Up to `per_text` (rule, variant) pairs of `text`, the rules tried in a random order."""
    makers = {"ending": lambda t: _swap_ending(t), "particle": _drop_particles, "spacing": _no_spaces,
              "typo": lambda t: _typo(t, rng), "name": lambda t: _other_name(t, names, rng)}
    order = list(RULES)
    rng.shuffle(order)
    out = []
    for rule in order:
        variant = makers[rule](text)
        if variant and variant.strip() and variant != text:
            out.append((rule, " ".join(variant.split()) if rule != "spacing" else variant))
        if len(out) >= per_text:
            break
    return out


# ---- filtering ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """One synthetic query before and after filtering."""

    query: str
    tool: str
    family: str  # an LLM family, or `rule:<rule>` for a variant
    parent: str = ""  # the text a rule variant was made from


def eval_texts(folder: str | Path) -> list[str]:
    """Every user text an evaluation reads under a domain's data folder: the `query`, `question` and
    `user` values and the user turns of histories, in every JSONL and YAML file (a synthetic set must
    resemble none of them). The `synthetic/` subfolder itself is not read."""
    texts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("query", "question", "user") and isinstance(value, str):
                    texts.append(value)
                elif key == "content" and node.get("role") == "user" and isinstance(value, str):
                    texts.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    root = Path(folder)
    for path in sorted(root.rglob("*")):
        if "synthetic" in path.relative_to(root).parts or not path.is_file():
            continue
        if path.suffix == ".jsonl":
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    walk(json.loads(line))
        elif path.suffix in (".yaml", ".yml"):
            walk(yaml.safe_load(path.read_text(encoding="utf-8")))
    return texts


TOOL_NAME = re.compile(r"[A-Za-z]+_[A-Za-z_]+|→")  # a snake_case identifier or the card's arrow: copied card text


def filter_candidates(candidates: Iterable[Candidate], guarded: Iterable[str], examples: Iterable[str] = (),
                      threshold: float = NEAR_DUPLICATE) -> tuple[list[Candidate], Counter]:
    """(the candidates kept, the count dropped per reason): empty or longer than MAX_CHARS; naming a
    tool; the same text (normalised) as a card example (`examples`) or as one kept before; a
    near-duplicate of a `guarded` text (evaluation queries)."""
    guarded_norm = sorted({normalize_text(g) for g in guarded if normalize_text(g)})
    exact = set(guarded_norm)
    card_lines = {normalize_text(e) for e in examples}
    kept: list[Candidate] = []
    seen: set[str] = set()
    dropped: Counter = Counter()
    matcher = SequenceMatcher(autojunk=False)
    for candidate in candidates:
        norm = normalize_text(candidate.query)
        if not norm or len(candidate.query) > MAX_CHARS:
            dropped["empty or too long"] += 1
            continue
        if TOOL_NAME.search(candidate.query):
            dropped["names a tool"] += 1
            continue
        if norm in card_lines:
            dropped["copies a card example"] += 1
            continue
        if norm in seen:
            dropped["repeats another synthetic query"] += 1
            continue
        seen.add(norm)
        matcher.set_seq2(norm)
        near = norm in exact
        for other in guarded_norm if not near else ():
            matcher.set_seq1(other)
            if (matcher.real_quick_ratio() >= threshold and matcher.quick_ratio() >= threshold
                    and matcher.ratio() >= threshold):
                near = True
                break
        if near:
            dropped["like an evaluation query"] += 1
            continue
        kept.append(candidate)
    return kept, dropped


# ---- the independent check ----------------------------------------------------------------------


def pair_check_prompt(query: str, own: ToolCard, other: ToolCard, own_first: bool, language: str = "ko") -> list:
    system, human = CHECK_PROMPT[language]
    a, b = (own, other) if own_first else (other, own)
    return [SystemMessage(system), HumanMessage(human.format(query=query, a=card_text(a), b=card_text(b)))]


def pair_check(llm, query: str, own: ToolCard, other: ToolCard, language: str = "ko") -> bool | None:
    """Whether the LLM, shown `own` and `other` in an order fixed by the query's hash, picks `own`;
    None when its reply names neither letter."""
    own_first = int(hashlib.sha256(query.encode()).hexdigest()[:2], 16) % 2 == 0
    reply = str(getattr(llm.invoke(pair_check_prompt(query, own, other, own_first, language)), "content", ""))
    letter = re.search(r"\b([AB])\b", reply.strip().upper()) or re.match(r"\s*([AB])", reply.strip().upper())
    if not letter:
        return None
    return (letter.group(1) == "A") == own_first

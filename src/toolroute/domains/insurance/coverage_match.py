"""Coverage matching: which of a product's coverages and riders a customer's words are about.

The coverage tools (`tools/coverage.py`) ask three questions of a product; this module answers them
from products.yaml (through `products`), the KCD table of the reference (`reference`) and the word
lists of `data/coverage_words.yaml` (loaded and checked once, at import):

- `rank(product, "갑상선암 진단비")`: the coverages (or riders) a benefit query names. The words of
  the query found in a coverage's name or type score highest (the word itself 4, a synonym 3), words
  in its conditions 1, a KCD category shared with the query's disease 2; the best-scoring coverages
  of the product are "the" benefit.
- `condition_amount(coverage, query)`: a condition sentence naming its own amount ("유사암 수술은
  수술 1회당 60만원") for a sub-case the query names.
- `match_event(product, query)`: the coverages an event ("가입 3개월 뒤 갑상선암 진단받고 수술함")
  triggers: main (named, or by the disease's primary benefit category), possible, and those of a worse
  dementia stage than the event's; `exclusions_named` the product's exclusion sentences it names.

Words are compared with all spaces removed and in lower case (`compact`). A query is read once into a
`Query` (`parse_query`): its vocabulary words, read left to right taking the longest word at each
point, and the KCD rows it names.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from toolroute.domains.insurance import reference as ref
from toolroute.domains.insurance.products import Coverage, Product, Rider, load_products

WORDS_PATH = Path(__file__).parent / "data" / "coverage_words.yaml"


# --- the word lists (data/coverage_words.yaml) -----------------------------------------------------

class _ExclusionTrigger(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str
    words: tuple[str, ...]

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return ref.valid_regex(value)


class CoverageWords(BaseModel):
    """The tables of coverage_words.yaml (their meaning is written there)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    actions: dict[str, str]
    generic_words: tuple[str, ...]
    synonyms: dict[str, tuple[str, ...]]
    query_words: tuple[str, ...]
    type_categories: dict[str, tuple[str, ...]]
    event_category_words: dict[str, tuple[str, ...]]
    accident_words: tuple[str, ...]
    dementia_stages: tuple[tuple[str, int], ...]
    exclusion_triggers: tuple[_ExclusionTrigger, ...]
    relation_words: tuple[str, ...]


def load_words(path: str | Path = WORDS_PATH) -> CoverageWords:
    """The word lists of `path`, checked; a malformed file raises ValueError naming the file and the key."""
    path = Path(path)
    try:
        return CoverageWords.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ValueError(f"{path}: {where}: {first['msg']}") from exc


_WORDS = load_words()
# Actions: user word -> what happened (진단, 수술, 입원, 통원).
ACTION_WORDS: dict[str, str] = _WORDS.actions
GENERIC_WORDS: frozenset[str] = frozenset(ACTION_WORDS) | frozenset(_WORDS.generic_words)
# user word -> words used in products.yaml (the word itself is always tried first).
SYNONYMS: dict[str, tuple[str, ...]] = _WORDS.synonyms
# Coverage `type` (products.yaml) -> KCD benefit categories (ref_kcd.yaml) it pays for.
TYPE_CATEGORIES: dict[str, tuple[str, ...]] = _WORDS.type_categories
EVENT_CATEGORY_WORDS: dict[str, tuple[str, ...]] = _WORDS.event_category_words
ACCIDENT_WORDS: tuple[str, ...] = _WORDS.accident_words
# (word in an event / a coverage name, dementia stage); the first word found wins.
DEMENTIA_STAGES: tuple[tuple[str, int], ...] = _WORDS.dementia_stages
# (pattern on the event without spaces, words an exclusion sentence of the product must contain)
EXCLUSION_TRIGGERS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (t.pattern, t.words) for t in _WORDS.exclusion_triggers)
RELATION_WORDS: tuple[str, ...] = _WORDS.relation_words

_NEGATIVE_SENTENCE = re.compile(r"보장하지\s*않|지급하지\s*않|지급되지\s*않|보상하지\s*않")
_MONEY_IN_TEXT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(억|천만|백만|만|천)?\s*원")
_UNIT_WON = {"억": 100_000_000, "천만": 10_000_000, "백만": 1_000_000, "만": 10_000, "천": 1_000, None: 1}


# --- small text helpers ----------------------------------------------------------------------------

def compact(text: Any) -> str:
    """`text` without any whitespace, in lower case (how all words are compared)."""
    return re.sub(r"\s+", "", str(text or "")).lower()


def strip_parens(text: str) -> str:
    return re.sub(r"\([^)]*\)", "", text)


def first_money(sentence: str) -> int | None:
    """The first amount of money in a sentence, in won ('1회당 60만원' -> 600000)."""
    match = _MONEY_IN_TEXT.search(sentence)
    if not match:
        return None
    return int(round(float(match.group(1).replace(",", "")) * _UNIT_WON[match.group(2)]))


def _name_pieces(name: str) -> list[str]:
    pieces = re.split(r"[\s·,()/~\[\]]+", name)
    return [p.lower() for p in pieces if len(p) >= 2 and not p.isdigit()]


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[frozenset[str], int]:
    """Every word worth finding in a query (compact, lower-case), and the longest word's length.

    Coverage types, the pieces of coverage and rider names and the KCD disease names are included,
    so that "위암 진단" reads as 위암 + 진단 (not 위 + 암진단) and "갑상선암" as one word.
    """
    words: set[str] = set(_WORDS.query_words) | set(ACTION_WORDS) | set(SYNONYMS)
    for product in load_products().values():
        for cov in product.coverages:
            words.add(cov.type)
            words.update(_name_pieces(strip_parens(cov.name)))
        for rider in product.riders:
            words.update(p for p in _name_pieces(strip_parens(rider.name)) if p != "특약")
    for row in ref.load_reference().kcd:
        words.update([row.name, *row.aliases])
    vocab = frozenset(compact(w) for w in words if w)
    return vocab, max(len(w) for w in vocab)


def find_words(text: str) -> list[str]:
    """Vocabulary words in `text` (spaces ignored), read left to right taking the longest word at each point."""
    text = compact(text)
    vocab, longest = _vocabulary()
    found: list[str] = []
    i = 0
    while i < len(text):
        for size in range(min(longest, len(text) - i), 0, -1):
            word = text[i:i + size]
            if word in vocab:
                if word not in found:
                    found.append(word)
                i += size
                break
        else:
            i += 1
    return found


def _severity(text: str) -> int | None:
    text = compact(text)
    cdr = re.search(r"cdr\s*(\d)", text)
    if cdr:
        return min(3, int(cdr.group(1)))
    for word, level in DEMENTIA_STAGES:
        if word in text:
            return level
    return None


def _grade(text: str) -> int | None:
    match = re.search(r"(\d)\s*등급", str(text or ""))
    return int(match.group(1)) if match else None


def _code_span(code: str) -> tuple[str, int, int]:
    start, _, end = code.partition("-")
    end = end or start
    return start[0], int(start[1:]), int(end[1:])


def codes_overlap(a: str, b: str) -> bool:
    """Two KCD codes or ranges share a code ('C73' and 'C00-C97')."""
    la, sa, ea = _code_span(a)
    lb, sb, eb = _code_span(b)
    return la == lb and sa <= eb and sb <= ea


# --- KCD -------------------------------------------------------------------------------------------

def kcd_in_text(text: str) -> list[ref.KcdCode]:
    """KCD rows named in `text`: explicit codes ('C73', 'I20.9') and disease names, longest names first."""
    if not text:
        return []
    rows: list[ref.KcdCode] = []
    for code in re.findall(r"(?<![A-Za-z])([A-Za-z]\d{2}(?:\.\d+)?)(?!\d)", text):
        for row in ref.lookup_kcd(code):
            if row not in rows:
                rows.append(row)
    text = compact(text)
    spans: list[tuple[int, int, ref.KcdCode]] = []
    for row in ref.load_reference().kcd:
        for alias in sorted({compact(a) for a in [row.name, *row.aliases]}, key=len, reverse=True):
            pos = text.find(alias) if alias else -1
            if pos >= 0:
                spans.append((pos, pos + len(alias), row))
                break
    for span in sorted(spans, key=lambda s: s[0] - s[1]):  # longest first
        start, end, row = span
        inside = any(o is not span and o[0] <= start and end <= o[1] and (o[1] - o[0]) > (end - start)
                     for o in spans)
        if not inside and row not in rows:
            rows.append(row)
    return rows


@lru_cache(maxsize=None)
def _named_codes(name: str) -> tuple[str, ...]:
    """KCD codes whose disease name or alias appears in a coverage name ('갑상선암 진단비' -> C73)."""
    name = compact(strip_parens(name))
    return tuple(row.code for row in ref.load_reference().kcd
                 if any(compact(a) and compact(a) in name for a in [row.name, *row.aliases]))


# --- coverages: categories, actions, keywords --------------------------------------------------------

def coverage_categories(cov: Coverage) -> set[str]:
    """The KCD benefit categories a coverage pays for: its type's, and those its name and conditions add."""
    cats = set(TYPE_CATEGORIES.get(cov.type, ()))
    name = compact(cov.name)
    conditions = compact(" ".join(cov.conditions))
    if "치매" in name:
        cats.add("치매")
    if "상해" in name or "질병또는상해" in conditions:
        cats.update({"질병입원수술", "상해"})
    # "유사암 포함" or a 유사암 amount in the conditions: this coverage also pays for 유사암.
    if any("유사암" in compact(s) and ("포함" in s or first_money(s)) for s in cov.conditions):
        cats.add("유사암")
    return cats


def coverage_action(cov: Coverage) -> str | None:
    """What a coverage pays for having happened: 진단, 수술, 입원 or 통원 (None for the others)."""
    text = compact(cov.type + cov.name)
    for word, action in (("진단", "진단"), ("판정", "진단"), ("수술", "수술"), ("입원", "입원"), ("통원", "통원")):
        if word in text:
            return action
    return None


def _coverage_severity(cov: Coverage) -> int | None:
    return _severity(cov.name) if "치매" in cov.name else None


def coverage_keywords(cov: Coverage) -> set[str]:
    """The words that find sentences about a coverage (its name's and type's words and categories)."""
    words = {w for w in find_words(cov.name + " " + cov.type) if w not in GENERIC_WORDS}
    words.update(c for c in coverage_categories(cov) if c != "질병입원수술")
    words.add(compact(cov.type))
    return {w for w in words if w}


def rider_keywords(rider: Rider) -> set[str]:
    """The words of a rider's name that find sentences about it."""
    return {w for w in find_words(rider.name) if w not in GENERIC_WORDS}


def sentences_about(sentences: Iterable[str], keywords: set[str]) -> list[str]:
    return [s for s in sentences if any(k in compact(s) for k in keywords)]


# --- queries ---------------------------------------------------------------------------------------

@dataclass
class Query:
    """A customer's words about a benefit or an event, read once: vocabulary words and KCD rows."""

    text: str
    words: list[str]
    kcd: list[ref.KcdCode] = field(default_factory=list)

    @property
    def compact(self) -> str:
        return compact(self.text)

    @property
    def content_words(self) -> list[str]:
        return [w for w in self.words if w not in GENERIC_WORDS]

    @property
    def categories(self) -> set[str]:
        return {c for row in self.kcd for c in row.benefit_categories}

    @property
    def primary_categories(self) -> set[str]:
        return {row.benefit_categories[0] for row in self.kcd if row.benefit_categories}

    @property
    def actions(self) -> set[str]:
        return {ACTION_WORDS[w] for w in self.words if w in ACTION_WORDS}

    @property
    def accidental(self) -> bool:
        """The words tell of an accident (not an illness)."""
        return any(w in self.compact for w in ACCIDENT_WORDS) or "상해" in self.primary_categories


def parse_query(text: str | None) -> Query:
    return Query(text=text or "", words=find_words(text or ""), kcd=kcd_in_text(text or ""))


# --- benefit queries: scoring and ranking ----------------------------------------------------------

def _word_score(words: Iterable[str], strong: str, weak: str = "") -> int:
    """4 per word found in `strong` (name + type), 3 per synonym found there, 1 when only in `weak`."""
    score = 0
    for word in words:
        alternatives = SYNONYMS.get(word, ())
        if word in strong:
            score += 4
        elif any(compact(a) in strong for a in alternatives):
            score += 3
        elif weak and (word in weak or any(compact(a) in weak for a in alternatives)):
            score += 1
    return score


def _score_coverage(q: Query, cov: Coverage) -> int:
    """How well a benefit query names this coverage (see the module docstring)."""
    name = compact(strip_parens(cov.name))
    strong = compact(cov.name) + "|" + compact(cov.type)
    if cov.deductible is not None:  # "자기부담금" names the coverages that have one
        strong += "|자기부담금|" + compact(cov.deductible.text)
    weak = compact(" ".join([cov.limit_text, *cov.conditions]))
    score = _word_score(q.words, strong, weak)
    if name and name in q.compact:
        score += 6
    if compact(cov.type) in q.compact:
        score += 2
    if q.categories & coverage_categories(cov):
        score += 2
    grade = _grade(q.text)
    span = re.search(r"(\d)\s*~\s*(\d)\s*등급", cov.name)
    if grade is not None and span and int(span.group(1)) <= grade <= int(span.group(2)):
        score += 3
    return score


def score_rider(q: Query, rider: Rider, words: list[str] | None = None) -> int:
    """4 per word in the rider's name, 3 per synonym there, 2 when only in its description."""
    name = compact(rider.name)
    description = compact(rider.description)
    score = 0
    for word in q.words if words is None else words:
        alternatives = [compact(a) for a in SYNONYMS.get(word, ())]
        if word in name:
            score += 4
        elif any(a in name for a in alternatives):
            score += 3
        elif word in description or any(a in description for a in alternatives):
            score += 2
    core = compact(strip_parens(rider.name).replace("특약", ""))
    if len(core) >= 2 and core in q.compact:
        score += 6
    return score


@dataclass
class BenefitMatch:
    coverages: list[Coverage]  # best-scoring coverages, product order
    riders: list[Rider]  # best-scoring riders when they beat every coverage
    related: list[Coverage]  # other coverages with a real match
    related_riders: list[Rider]
    score: int


def rank(product: Product, text: str) -> BenefitMatch:
    """The product's coverages (or riders) a benefit query names; empty when none scores enough."""
    q = parse_query(text)
    cov_scores = [(c, _score_coverage(q, c)) for c in product.coverages]
    rider_scores = [(r, score_rider(q, r)) for r in product.riders]
    best_cov = max((s for _, s in cov_scores), default=0)
    best_rider = max((s for _, s in rider_scores), default=0)
    if best_cov < 2 and best_rider < 3:
        return BenefitMatch([], [], [], [], 0)
    if best_rider > best_cov:
        top_riders = [r for r, s in rider_scores if s == best_rider]
        related = [c for c, s in cov_scores if s >= 3]
        return BenefitMatch([], top_riders, related, [r for r, s in rider_scores if 3 <= s < best_rider], best_rider)
    top = [c for c, s in cov_scores if s == best_cov]
    related = [c for c, s in cov_scores if 2 <= s < best_cov]
    return BenefitMatch(top, [], related, [r for r, s in rider_scores if s >= 3], best_cov)


def condition_amount(cov: Coverage, q: Query) -> tuple[str, int] | None:
    """A condition sentence with its own amount for a sub-case the query names (not named by the coverage)."""
    own = compact(strip_parens(cov.name)) + "|" + compact(cov.type)
    for sentence in cov.conditions:
        amount = first_money(sentence)
        if amount is None:
            continue
        sentence_words = compact(sentence)
        for word in q.content_words:
            candidates = (word, *(compact(a) for a in SYNONYMS.get(word, ())))
            if word not in own and any(c in sentence_words and c not in own for c in candidates):
                return sentence, amount
    return None


def basis_coverage(product: Product) -> Coverage | None:
    """The coverage whose amount is the product's sum insured (its name is in `sum_insured_basis`)."""
    basis = compact(product.sum_insured_basis)
    best, best_len = None, 0
    for cov in product.coverages:
        name = compact(strip_parens(cov.name))
        if name and name in basis:
            length = len(name) + 100
        else:
            m = difflib.SequenceMatcher(None, name, basis).find_longest_match(0, len(name), 0, len(basis))
            length = m.size
        if length > best_len:
            best, best_len = cov, length
    return best if best_len >= 4 else None


def relating_conditions(product: Product, text: str) -> list[tuple[Coverage, str]]:
    """(coverage, sentence) for each limit or condition sentence of the product that relates two
    benefits ("…을 받은 뒤", "중복", "차감" …) and is about a benefit `text` names."""
    q = parse_query(text)
    words = set(q.content_words) | {compact(a) for w in q.content_words for a in SYNONYMS.get(w, ())}
    if not words:
        words = {w for w in q.words}
    found = []
    for cov in product.coverages:
        own = coverage_keywords(cov)
        for sentence in [cov.limit_text, *cov.conditions]:
            if not any(r in sentence for r in RELATION_WORDS):
                continue
            sentence_words = compact(sentence)
            if any(w in sentence_words for w in words) or (own & words):
                found.append((cov, sentence))
    return found


# --- events ----------------------------------------------------------------------------------------

def _needs_prior_payment(cov: Coverage) -> bool:
    """A coverage paid only after another one ("최초 일반암 진단비가 지급된 후에만 보장됩니다")."""
    return any(re.search(r"지급된\s*후", s) for s in cov.conditions)


@dataclass
class EventMatch:
    main: list[Coverage]  # the coverages the event triggers
    possible: list[Coverage]  # coverages that may apply if their conditions are met
    severity_excluded: list[dict[str, Any]]  # {coverage_id, name, reason}: for a worse dementia stage


def match_event(product: Product, q: Query) -> EventMatch:
    """The product's coverages an event triggers: main (named or by the disease's primary category), possible."""
    scored = []
    for cov in product.coverages:
        strong = compact(cov.name) + "|" + compact(cov.type)
        words = _word_score(q.content_words, strong)
        name = compact(strip_parens(cov.name))
        if name and name in q.compact:
            words += 6
        cats = coverage_categories(cov)
        scored.append((cov, words, cats))
    event_cats = set(q.primary_categories)
    for category, words in EVENT_CATEGORY_WORDS.items():
        if any(w in q.compact for w in words):
            event_cats.add(category)
    if q.actions & {"입원", "수술"}:
        event_cats.add("상해" if "상해" in event_cats else "질병입원수술")
    main = [c for c, w, cats in scored if w >= 3 or (cats & event_cats)]
    possible = [c for c, w, cats in scored if c not in main and cats & q.categories]

    # A coverage naming specific diseases ("갑상선암 진단비", "기타피부암·제자리암·경계성종양 진단비")
    # yields to one naming the event's disease.
    event_codes = [row.code for row in q.kcd]
    if event_codes:
        hits = [c for c in main if any(codes_overlap(a, b) for a in _named_codes(c.name) for b in event_codes)]
        if hits:
            main = [c for c in main if c in hits or not _named_codes(c.name)
                    or not (coverage_categories(c) & coverage_categories(hits[0]))]

    # Dementia stage: a coverage for a worse stage than the event's does not pay.
    severity = _severity(q.text)
    severity_excluded = []
    if severity is not None:
        for cov in list(main):
            level = _coverage_severity(cov)
            if level is not None and level > severity:
                main.remove(cov)
                stage = {1: "경도", 2: "중등도", 3: "중증"}[severity]
                severity_excluded.append({"coverage_id": cov.id, "name": cov.name,
                                          "reason": f"{cov.name}은(는) {cov.limit_text}에 지급하므로 {stage} 단계는 해당하지 않습니다."})

    # Words naming a coverage beat a category-only match, unless the event names that coverage's action.
    named = {c.id for c, w, _ in scored if w >= 3}
    if any(c.id in named for c in main):
        main = [c for c in main if c.id in named or coverage_action(c) in q.actions
                or (coverage_action(c) == "진단" and q.kcd and not q.actions)]
    # Actions: keep the coverages of what happened (a named disease implies its diagnosis).
    actions = set(q.actions)
    if q.kcd:
        actions.add("진단")
    if q.actions:
        kept = [c for c in main if coverage_action(c) in actions or coverage_action(c) is None]
    else:
        kept = [c for c in main if coverage_action(c) in (None, "진단")] or main
    # A benefit paid only after another one ("지급된 후") follows it; it is named or only possible.
    follow_ups = [c for c in kept if _needs_prior_payment(c) and c.id not in named]
    kept = [c for c in kept if c not in follow_ups]
    possible = [c for c in product.coverages if c in possible or (c in main and c not in kept)]
    return EventMatch(main=kept, possible=possible, severity_excluded=severity_excluded)


def exclusions_named(product: Product, main: list[Coverage], q: Query,
                     days: int | None) -> tuple[list[str], list[str]]:
    """The exclusion sentences an event names: the product's exclusions and the negative conditions
    ("보장하지 않") of the coverages it triggers, matched through EXCLUSION_TRIGGERS.

    Returns (sentences that apply, notes): a sentence limited to the first N years ("2년 이내") no
    longer applies `days` after the contract, and says so in a note instead.
    """
    sentences = list(product.exclusions) + [s for c in main for s in c.conditions if _NEGATIVE_SENTENCE.search(s)]
    triggered: list[str] = []
    notes: list[str] = []
    for pattern, words in EXCLUSION_TRIGGERS:
        if not re.search(pattern, q.compact):
            continue
        for sentence in sentences:
            if any(compact(w) in compact(sentence) for w in words) and sentence not in triggered:
                years = re.search(r"(\d+)년\s*이내", sentence)
                if years and days is not None and days > int(years.group(1)) * 365:
                    notes.append(f"'{sentence}' — 계약일부터 {years.group(1)}년이 지나 해당하지 않습니다.")
                    continue
                triggered.append(sentence)
    return triggered, notes

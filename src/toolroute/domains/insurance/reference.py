"""The insurance reference tables (`data/ref_*.yaml`): validated once, looked up by user words.

Products live in `products.yaml` (see `products.py`); everything else a tool or a document states
about rules lives here: occupation classes, KCD codes, term definitions, benefit conflicts, claim
types, servicing procedures, underwriting questions/knockouts/documents/reinstatement/risk scores,
compliance phrases and scripts, personal-data patterns. `load_reference()` validates every table
with pydantic and cross-checks them (a definition's code must exist in the KCD table, an
occupation's surcharge must be its class's), so a bad edit fails at start-up with the file, the
record and the field named, never as a wrong answer mid-call.

Lookups take the words a customer or agent uses ("택시 기사", "갑상선암", "C73", "혈압약 먹어요"):
aliases are matched with all whitespace removed, and the longest alias found wins.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from toolroute.text import folded
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

DATA_DIR = Path(__file__).parent / "data"
TABLES = ("claims", "compliance", "conflicts", "definitions", "kcd", "occupations", "privacy",
          "servicing", "underwriting")


class ReferenceDataError(ValueError):
    """A reference table is malformed; the message names the file, the record and the field."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def valid_regex(pattern: str) -> str:
    """`pattern` itself when it compiles; else ValueError saying why (for the tables' field validators)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"pattern {pattern!r} is not a valid regular expression: {exc}") from exc
    return pattern


# --- record models (one per table row kind) ---------------------------------------------------------

class OccupationClass(_Record):
    risk_class: int
    label: str
    surcharge_pct: int
    description: str


class Occupation(_Record):
    id: str
    name: str
    aliases: list[str]
    risk_class: int
    surcharge_pct: int
    restrictions: list[str] = []
    declined_coverages: list[str] = []
    note: str = ""


class KcdCode(_Record):
    code: str
    name: str
    aliases: list[str] = []
    chapter: str
    benefit_categories: list[str] = []
    note: str = ""

    @field_validator("code")
    @classmethod
    def _code_shape(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Z]\d{2}(-[A-Z]\d{2})?", value):
            raise ValueError(f"KCD code must look like 'C73' or 'F00-F03', got {value!r}")
        return value


class Definition(_Record):
    term: str
    aliases: list[str] = []
    category: str
    definition: str
    related_codes: list[str] = []


class ConflictRule(_Record):
    id: str
    title: str
    benefits: list[str]
    keywords: list[str]
    payout: str
    rule: str
    example: str


class ClaimType(_Record):
    id: str
    name: str
    aliases: list[str]
    steps: list[str]
    required_documents: list[str]
    conditional_documents: list[str] = []
    channels: list[str]
    processing: str
    processing_business_days: int
    investigation_business_days: int
    notes: list[str] = []
    product_codes: list[str] = []


class ServicingProcedure(_Record):
    id: str
    name: str
    aliases: list[str]
    description: str
    steps: list[str]
    documents: list[str]
    channels: list[str]
    processing: str
    notes: list[str] = []


class BannedPhrase(_Record):
    id: str
    phrase: str
    category: str
    patterns: list[str]
    applies_to: list[str] = []
    reason: str
    alternative: str
    example: str

    @field_validator("patterns")
    @classmethod
    def _patterns_compile(cls, value: list[str]) -> list[str]:
        return [valid_regex(pattern) for pattern in value]


class PiiPattern(_Record):
    type: str
    label: str
    pattern: str
    mask: str
    example: str
    example_masked: str

    @field_validator("pattern")
    @classmethod
    def _pattern_compiles(cls, value: str) -> str:
        return valid_regex(value)


class RiskCondition(_Record):
    id: str
    name: str
    aliases: list[str]
    kcd_codes: list[str] = []
    points: int
    controlled_modifier: int
    uncontrolled_modifier: int
    control_criteria: str
    cautions: list[str] = []


class RiskBand(_Record):
    min_score: int
    max_score: int | None
    label: str
    action: str


class KnockoutRule(_Record):
    id: str
    underwriting_type: str
    product_categories: list[str] = []
    condition: str
    keywords: list[str]
    within_months: int | None  # None: at any time in the past
    action: str
    note: str = ""


# Which list in which file holds which record model; other keys are checked only for presence.
_LIST_MODELS: dict[tuple[str, str], type[_Record]] = {
    ("occupations", "occupation_classes"): OccupationClass,
    ("occupations", "occupations"): Occupation,
    ("kcd", "kcd"): KcdCode,
    ("definitions", "definitions"): Definition,
    ("conflicts", "conflict_rules"): ConflictRule,
    ("claims", "claim_types"): ClaimType,
    ("servicing", "servicing_procedures"): ServicingProcedure,
    ("compliance", "banned_phrases"): BannedPhrase,
    ("privacy", "pii_patterns"): PiiPattern,
    ("underwriting", "risk_conditions"): RiskCondition,
    ("underwriting", "risk_bands"): RiskBand,
    ("underwriting", "knockout_rules"): KnockoutRule,
}
_REQUIRED_KEYS: dict[str, list[str]] = {
    "claims": ["claim_channels", "claim_common_notes", "claim_types"],
    "compliance": ["product_tags", "banned_phrases", "script_templates", "recording_notices",
                   "comparison_disclaimer", "required_disclosures"],
    "conflicts": ["conflict_payouts", "conflict_rules"],
    "definitions": ["definitions"],
    "kcd": ["benefit_categories", "kcd"],
    "occupations": ["occupation_classes", "occupations"],
    "privacy": ["pii_patterns"],
    "servicing": ["servicing_channels", "servicing_procedures"],
    "underwriting": ["question_sets", "knockout_rules", "application_documents",
                     "application_conditional_documents", "reinstatement", "risk_conditions", "risk_bands"],
}


def _record_label(item: Any, index: int) -> str:
    if isinstance(item, dict):
        for key in ("id", "code", "term", "name", "type", "risk_class", "channel", "topic"):
            if item.get(key) not in (None, ""):
                return f"record {index} ({key}={item[key]!r})"
    return f"record {index}"


def _read_table(name: str, data_dir: Path) -> dict[str, Any]:
    path = data_dir / f"ref_{name}.yaml"
    try:
        with path.open(encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except FileNotFoundError as exc:
        raise ReferenceDataError(f"{path}: reference table is missing") from exc
    except yaml.YAMLError as exc:
        raise ReferenceDataError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ReferenceDataError(f"{path}: expected a mapping at the top level")
    missing = [key for key in _REQUIRED_KEYS[name] if key not in data]
    if missing:
        raise ReferenceDataError(f"{path}: missing top-level key(s) {missing}")
    table: dict[str, Any] = dict(data)
    for (table_name, key), model in _LIST_MODELS.items():
        if table_name != name:
            continue
        rows = data[key]
        if not isinstance(rows, list) or not rows:
            raise ReferenceDataError(f"{path}: '{key}' must be a non-empty list")
        parsed = []
        for index, item in enumerate(rows):
            try:
                parsed.append(model.model_validate(item))
            except ValidationError as exc:
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "(record)"
                raise ReferenceDataError(
                    f"{path}: {key} {_record_label(item, index)}: field '{field}': {first['msg']}"
                ) from exc
        table[key] = parsed
    return table


class Reference:
    """All reference tables, validated and cross-checked. Build with `load_reference()`."""

    def __init__(self, data_dir: Path = DATA_DIR):
        self.data_dir = Path(data_dir)
        self.tables = {name: _read_table(name, self.data_dir) for name in TABLES}
        t = self.tables
        self.occupation_classes: dict[int, OccupationClass] = {c.risk_class: c for c in t["occupations"]["occupation_classes"]}
        self.occupations: list[Occupation] = t["occupations"]["occupations"]
        self.kcd: list[KcdCode] = t["kcd"]["kcd"]
        self.definitions: list[Definition] = t["definitions"]["definitions"]
        self.conflict_rules: list[ConflictRule] = t["conflicts"]["conflict_rules"]
        self.claim_types: list[ClaimType] = t["claims"]["claim_types"]
        self.servicing_procedures: list[ServicingProcedure] = t["servicing"]["servicing_procedures"]
        self.banned_phrases: list[BannedPhrase] = t["compliance"]["banned_phrases"]
        self.pii_patterns: list[PiiPattern] = t["privacy"]["pii_patterns"]
        self.risk_conditions: list[RiskCondition] = t["underwriting"]["risk_conditions"]
        self.risk_bands: list[RiskBand] = t["underwriting"]["risk_bands"]
        self.knockout_rules: list[KnockoutRule] = t["underwriting"]["knockout_rules"]
        self._cross_check()

    def table(self, name: str) -> dict[str, Any]:
        """The raw (validated) content of `ref_<name>.yaml`, for keys without a record model."""
        if name not in self.tables:
            raise KeyError(f"unknown reference table {name!r}; known: {', '.join(TABLES)}")
        return self.tables[name]

    def _fail(self, name: str, message: str) -> None:
        raise ReferenceDataError(f"{self.data_dir / f'ref_{name}.yaml'}: {message}")

    def _cross_check(self) -> None:
        _unique(self, "occupations", [o.id for o in self.occupations], "occupation id")
        for occ in self.occupations:
            cls = self.occupation_classes.get(occ.risk_class)
            if cls is None:
                self._fail("occupations", f"occupation {occ.id}: field 'risk_class': no class {occ.risk_class}")
            if occ.surcharge_pct != cls.surcharge_pct:
                self._fail("occupations", f"occupation {occ.id}: field 'surcharge_pct': {occ.surcharge_pct} "
                                          f"differs from class {occ.risk_class}'s {cls.surcharge_pct}")
        _unique(self, "kcd", [k.code for k in self.kcd], "KCD code")
        categories = {c["name"] for c in self.table("kcd")["benefit_categories"]}
        for k in self.kcd:
            unknown = set(k.benefit_categories) - categories
            if unknown:
                self._fail("kcd", f"code {k.code}: field 'benefit_categories': unknown {sorted(unknown)}")
        codes = {k.code for k in self.kcd}
        for d in self.definitions:
            for code in d.related_codes:
                if code not in codes and not self.lookup_kcd(code):
                    self._fail("definitions", f"term {d.term!r}: field 'related_codes': {code} is not in ref_kcd.yaml")
        for r in self.risk_conditions:
            for code in r.kcd_codes:
                if not self.lookup_kcd(code):
                    self._fail("underwriting", f"risk condition {r.id}: field 'kcd_codes': {code} is not in ref_kcd.yaml")
        payouts = set(self.table("conflicts")["conflict_payouts"])
        for rule in self.conflict_rules:
            if rule.payout not in payouts:
                self._fail("conflicts", f"rule {rule.id}: field 'payout': {rule.payout!r} not in conflict_payouts")
        claim_channels = set(self.table("claims")["claim_channels"])
        for claim in self.claim_types:
            unknown = set(claim.channels) - claim_channels
            if unknown:
                self._fail("claims", f"claim type {claim.id}: field 'channels': unknown {sorted(unknown)}")
        servicing_channels = set(self.table("servicing")["servicing_channels"])
        for proc in self.servicing_procedures:
            unknown = set(proc.channels) - servicing_channels
            if unknown:
                self._fail("servicing", f"procedure {proc.id}: field 'channels': unknown {sorted(unknown)}")
        tags = set(self.table("compliance")["product_tags"])
        for phrase in self.banned_phrases:
            unknown = set(phrase.applies_to) - tags
            if unknown:
                self._fail("compliance", f"banned phrase {phrase.id}: field 'applies_to': unknown tags {sorted(unknown)}")
        bands = sorted(self.risk_bands, key=lambda b: b.min_score)
        for low, high in zip(bands, bands[1:]):
            if low.max_score is None or low.max_score + 1 != high.min_score:
                self._fail("underwriting", f"risk_bands: band {low.label!r} does not end right before {high.label!r}")

    # --- lookups ---------------------------------------------------------------------------------

    def find_occupation(self, text: str | None) -> Occupation | None:
        """The occupation whose alias is found in `text` (longest alias wins), else None."""
        return _longest_alias_match(text, ((o, [o.name, *o.aliases]) for o in self.occupations))

    def lookup_kcd(self, query: str | None) -> list[KcdCode]:
        """KCD rows for a code ('F01' finds F01 and the range F00-F03), or for a disease name/alias."""
        if not query or not str(query).strip():
            return []
        text = str(query).strip()
        code_match = re.fullmatch(r"([A-Za-z])\s*(\d{2})(?:\.\d+)?", text)
        if code_match:
            code = f"{code_match.group(1).upper()}{code_match.group(2)}"
            return [k for k in self.kcd if _code_in(code, k.code)]
        range_match = re.fullmatch(r"([A-Za-z]\d{2})\s*-\s*([A-Za-z]\d{2})", text)
        if range_match:
            wanted = f"{range_match.group(1).upper()}-{range_match.group(2).upper()}"
            return [k for k in self.kcd if k.code == wanted]
        compact = folded(text)
        exact = [k for k in self.kcd if compact in {folded(a) for a in [k.name, *k.aliases]}]
        if exact:
            return exact
        found = _longest_alias_match(text, ((k, [k.name, *k.aliases]) for k in self.kcd))
        return [found] if found else []

    def find_definition(self, term: str | None) -> Definition | None:
        """The definition of a term or alias; exact names first, then the longest one in the text."""
        if not term or not str(term).strip():
            return None
        compact = folded(str(term))
        for d in self.definitions:
            if compact in {folded(a) for a in [d.term, *d.aliases]}:
                return d
        return _longest_alias_match(term, ((d, [d.term, *d.aliases]) for d in self.definitions))

    def claim_type(self, text: str | None) -> ClaimType | None:
        """The claim type named in `text` ('갑상선암 진단금 청구' -> 유사암진단); table order breaks ties."""
        return _longest_alias_match(text, ((c, [c.name, *c.aliases]) for c in self.claim_types))

    def servicing_procedure(self, text: str | None) -> ServicingProcedure | None:
        """The servicing procedure named in `text` ('보험 해지하려면' -> 해지)."""
        return _longest_alias_match(text, ((p, [p.name, *p.aliases]) for p in self.servicing_procedures))

    def find_conditions(self, text: str | None) -> list[RiskCondition]:
        """Every risk condition named in `text`, in table order ('고혈압이랑 당뇨' -> both)."""
        if not text:
            return []
        compact = folded(str(text))
        spans: list[tuple[int, int, RiskCondition]] = []
        for cond in self.risk_conditions:
            best = None
            for alias in sorted([cond.name, *cond.aliases], key=len, reverse=True):
                pos = compact.find(folded(alias))
                if pos >= 0:
                    best = (pos, pos + len(folded(alias)), cond)
                    break
            if best:
                spans.append(best)
        # A condition whose match lies inside a longer match of another ("갑상선 결절" vs "갑상선") is dropped.
        kept = [s for s in spans if not any(o is not s and o[0] <= s[0] and s[1] <= o[1] and (o[1] - o[0]) > (s[1] - s[0])
                                            for o in spans)]
        return [s[2] for s in kept]

    def find_condition(self, text: str | None) -> RiskCondition | None:
        """The first risk condition named in `text`, or None."""
        found = self.find_conditions(text)
        return found[0] if found else None

    def risk_band(self, score: int) -> RiskBand:
        """The band a disclosure risk score falls in."""
        for band in sorted(self.risk_bands, key=lambda b: b.min_score, reverse=True):
            if score >= band.min_score:
                return band
        return min(self.risk_bands, key=lambda b: b.min_score)

    def find_conflict_rules(self, text: str | None) -> list[ConflictRule]:
        """Conflict rules whose benefits or keywords appear in `text`, best matches first."""
        if not text:
            return []
        compact = folded(str(text))
        scored = []
        for index, rule in enumerate(self.conflict_rules):
            words = {folded(w) for w in [*rule.benefits, *rule.keywords, rule.title]}
            score = sum(len(w) for w in words if w and w in compact)
            if score:
                scored.append((-score, index, rule))
        return [rule for _, _, rule in sorted(scored, key=lambda s: (s[0], s[1]))]

    def find_banned_phrases(self, script: str | None, product_tags: list[str] | None = None) -> list[dict[str, Any]]:
        """Banned or misleading phrases in a script (whitespace removed before matching).

        A phrase with `applies_to` tags only counts when the product has one of them; with
        `product_tags=None` (no product known) every phrase counts.
        """
        if not script:
            return []
        compact = re.sub(r"\s+", "", str(script))
        hits = []
        for phrase in self.banned_phrases:
            if phrase.applies_to and product_tags is not None and not set(phrase.applies_to) & set(product_tags):
                continue
            for pattern in phrase.patterns:
                match = re.search(pattern, compact)
                if match:
                    hits.append({"id": phrase.id, "phrase": phrase.phrase, "category": phrase.category,
                                 "matched": match.group(0), "reason": phrase.reason,
                                 "alternative": phrase.alternative})
                    break
        return hits

    def mask_personal_data(self, text: str | None) -> tuple[str, list[dict[str, str]]]:
        """`text` with resident numbers, cards, phones, e-mails and accounts masked, and what was masked."""
        if not text:
            return "", []
        masked = str(text)
        found: list[dict[str, str]] = []
        for pii in self.pii_patterns:
            def _replace(match: re.Match, pii: PiiPattern = pii) -> str:
                replaced = match.expand(pii.mask)
                found.append({"type": pii.type, "label": pii.label, "masked": replaced})
                return replaced
            masked = re.sub(pii.pattern, _replace, masked)
        return masked, found


def _unique(ref: Reference, name: str, values: list[str], what: str) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            ref._fail(name, f"duplicate {what} {value!r}")
        seen.add(value)


def _code_in(code: str, entry: str) -> bool:
    """Is the single code `code` ('F01') equal to or inside the entry ('F01' or 'F00-F03')?"""
    if "-" not in entry:
        return code == entry
    start, end = entry.split("-")
    return start[0] == code[0] == end[0] and int(start[1:]) <= int(code[1:]) <= int(end[1:])


def _longest_alias_match(text: str | None, rows: Any) -> Any:
    """The row whose alias (spaces removed) is the longest substring of `text`; first row wins ties."""
    if not text or not str(text).strip():
        return None
    compact = folded(str(text))
    best, best_len = None, 0
    for row, aliases in rows:
        for alias in aliases:
            a = folded(alias)
            if a and a in compact and len(a) > best_len:
                best, best_len = row, len(a)
    return best


@lru_cache(maxsize=None)
def load_reference(data_dir: str | None = None) -> Reference:
    """The validated reference tables (cached; pass `data_dir` to load another copy, e.g. in tests)."""
    return Reference(Path(data_dir) if data_dir else DATA_DIR)


# Module-level shortcuts on the default tables, for the tools.
def find_occupation(text: str | None) -> Occupation | None:
    return load_reference().find_occupation(text)


def lookup_kcd(query: str | None) -> list[KcdCode]:
    return load_reference().lookup_kcd(query)


def find_definition(term: str | None) -> Definition | None:
    return load_reference().find_definition(term)


def claim_type(text: str | None) -> ClaimType | None:
    return load_reference().claim_type(text)


def servicing_procedure(text: str | None) -> ServicingProcedure | None:
    return load_reference().servicing_procedure(text)


def find_condition(text: str | None) -> RiskCondition | None:
    return load_reference().find_condition(text)


def find_conditions(text: str | None) -> list[RiskCondition]:
    return load_reference().find_conditions(text)


def find_conflict_rules(text: str | None) -> list[ConflictRule]:
    return load_reference().find_conflict_rules(text)


def find_banned_phrases(script: str | None, product_tags: list[str] | None = None) -> list[dict[str, Any]]:
    return load_reference().find_banned_phrases(script, product_tags)


def mask_personal_data(text: str | None) -> tuple[str, list[dict[str, str]]]:
    return load_reference().mask_personal_data(text)

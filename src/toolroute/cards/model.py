"""ToolCards: the searchable description of a tool, loaded and validated from YAML or OpenAI schemas.

A card widens the surface a retriever can match (purpose, real utterances, tags) and tells the
LLM which neighbour to pick instead (`when_not_to_use: "... → other_tool"`). Validation collects
every problem and names the file, the card and the field, so a broken catalogue is fixed in one pass.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from difflib import SequenceMatcher
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolroute.config import max_card_chars

MIN_WHEN_TO_USE = 3
MAX_CARD_ITEMS = 200  # entries per list field of one card


def _check_size(text: str, what: str) -> None:
    """Cards are embedded and shown to the LLM: a field past the limit is refused, never cut silently."""
    limit = max_card_chars()
    if len(text) > limit:
        raise ValueError(f"{what} {len(text):,} characters; the limit is {limit:,} (TOOLROUTE_MAX_CARD_CHARS)")
_REFERENCE = re.compile(r"→\s*([A-Za-z_][A-Za-z0-9_]*)")


class CatalogError(ValueError):
    """A catalogue that cannot be used; the message lists every problem with its location."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid tool catalogue:\n  - " + "\n  - ".join(problems))


class ToolCard(BaseModel):
    """What a tool is for, in words a user would say; `when_not_to_use` names the right neighbour."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
    purpose: str
    when_to_use: tuple[str, ...] = ()
    when_not_to_use: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @field_validator("purpose")
    @classmethod
    def _purpose_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("purpose is empty")
        _check_size(value, "purpose is")
        return value.strip()

    @field_validator("when_to_use", "when_not_to_use", "tags")
    @classmethod
    def _no_blank_items(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(value) > MAX_CARD_ITEMS:
            raise ValueError(f"has {len(value)} entries; the limit is {MAX_CARD_ITEMS}")
        items = tuple(str(v).strip() for v in value)
        if any(not v for v in items):
            raise ValueError("contains an empty entry")
        for i, item in enumerate(items):
            _check_size(item, f"entry {i} is")
        return items

    def confusions(self) -> list[str]:
        """Tool names this card's `when_not_to_use` lines point to (`... → name`)."""
        return [m.group(1) for line in self.when_not_to_use for m in _REFERENCE.finditer(line)]

    def content_hash(self) -> str:
        """Stable hash of everything a retriever may read; decides what gets re-embedded."""
        payload = json.dumps(self.model_dump(), ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class CardSource:
    """Where a card came from, for error messages."""

    path: str
    line: int | None = None
    module: str | None = None


@dataclass
class Catalog:
    """An ordered set of cards with their sources; `authored` catalogues get the strict checks."""

    name: str
    cards: dict[str, ToolCard]
    sources: dict[str, CardSource] = field(default_factory=dict)
    authored: bool = True
    edit_version: int = 0  # the card-store version applied on top of the YAML (0: as authored)
    origin: str | None = None  # the resolved folder or file it was loaded from (None: built in memory)

    @property
    def identity(self) -> str:
        """What tells two catalogues apart for their indexes: where they came from and their name, never
        the name alone (a copied folder or an `insurance.json` must not share the real one's index)."""
        return f"{self.origin}|{self.name}" if self.origin else f"memory|{self.name}"

    def derived(self, **changes) -> "Catalog":
        """A copy with some fields changed (cards, name …) that keeps its origin."""
        return replace(self, **changes)

    def __len__(self) -> int:
        return len(self.cards)

    def __iter__(self):
        return iter(self.cards.values())

    def __contains__(self, name: str) -> bool:
        return name in self.cards

    @property
    def names(self) -> list[str]:
        return list(self.cards)

    def confusion_pairs(self) -> set[frozenset[str]]:
        return {frozenset((c.name, other)) for c in self for other in c.confusions() if other != c.name}

    def modules(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, src in self.sources.items():
            out.setdefault(src.module or "", []).append(name)
        return out


def normalize_text(text: str) -> str:
    """NFKC, lower case, letters and digits only: the form duplicates and leaks are compared in."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if ch.isalnum())


NEAR_DUPLICATE = 0.8


def near_duplicate(a: str, b: str, threshold: float = NEAR_DUPLICATE) -> bool:
    """Whether two texts already in `normalize_text` form are the same or near-duplicates."""
    if a == b:
        return True
    m = SequenceMatcher(None, a, b, autojunk=False)
    return m.real_quick_ratio() >= threshold and m.quick_ratio() >= threshold and m.ratio() >= threshold


def _item_lines(text: str) -> list[int]:
    """1-based line of each item of the top-level `cards:` sequence (for error messages)."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return []
    if not isinstance(node, yaml.MappingNode):
        return []
    for key, value in node.value:
        if key.value == "cards" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def _pydantic_problems(err: ValidationError, where: str) -> list[str]:
    out = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "card"
        msg = "unknown field" if e["type"] == "extra_forbidden" else e["msg"]
        out.append(f"{where}: field '{loc}': {msg}")
    return out


def _load_card_file(path: Path, root: Path) -> tuple[list[tuple[ToolCard, CardSource]], list[str]]:
    rel = str(path.relative_to(root.parent)) if root.parent in path.parents else str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return [], [f"{rel}: not UTF-8 text (byte {exc.start}): save the file as UTF-8"]
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        return [], [f"{rel}{line}: malformed YAML: {getattr(exc, 'problem', exc)}"]
    if not isinstance(doc, dict) or not isinstance(doc.get("cards"), list):
        return [], [f"{rel}: expected a mapping with a 'cards' list (and optional 'module')"]
    unknown_keys = set(doc) - {"module", "cards"}
    problems = [f"{rel}: unknown top-level field '{k}'" for k in sorted(unknown_keys)]
    module = doc.get("module") or path.stem
    lines = _item_lines(text)
    loaded = []
    for i, raw in enumerate(doc["cards"]):
        line = lines[i] if i < len(lines) else None
        label = raw.get("name", f"#{i + 1}") if isinstance(raw, dict) else f"#{i + 1}"
        where = f"{rel} line {line} card '{label}'" if line else f"{rel} card '{label}'"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a mapping")
            continue
        try:
            card = ToolCard(**raw)
        except ValidationError as err:
            problems.extend(_pydantic_problems(err, where))
            continue
        except TypeError as err:
            problems.append(f"{where}: {err}")
            continue
        loaded.append((card, CardSource(rel, line, module)))
    return loaded, problems


def load_toolcards(folder: str | Path, expected_names: Iterable[str] | None = None) -> Catalog:
    """Load every `*.yaml` under `folder` and validate the whole catalogue (raises CatalogError)."""
    folder = Path(folder)
    files = sorted(p for p in folder.glob("*.y*ml") if not p.name.startswith("_"))
    if not files:
        raise CatalogError([f"{folder}: no ToolCard YAML files found"])
    problems: list[str] = []
    entries: list[tuple[ToolCard, CardSource]] = []
    for path in files:
        loaded, file_problems = _load_card_file(path, folder)
        entries.extend(loaded)
        problems.extend(file_problems)
    catalog = Catalog(name=folder.name, cards={}, authored=True, origin=str(folder.resolve()))
    for card, src in entries:
        if card.name in catalog.cards:
            first = catalog.sources[card.name]
            problems.append(
                f"{src.path} line {src.line} card '{card.name}': duplicate name "
                f"(first defined in {first.path} line {first.line})"
            )
            continue
        catalog.cards[card.name] = card
        catalog.sources[card.name] = src
    problems.extend(validate_catalog(catalog, expected_names))
    if problems:
        raise CatalogError(problems)
    return catalog


def _where(catalog: Catalog, name: str) -> str:
    src = catalog.sources.get(name)
    if src is None:
        return f"card '{name}'"
    return f"{src.path} line {src.line} card '{name}'" if src.line else f"{src.path} card '{name}'"


def validate_catalog(catalog: Catalog, expected_names: Iterable[str] | None = None) -> list[str]:
    """Cross-card checks: contract names, example counts, duplicate examples, symmetric confusions."""
    problems: list[str] = []
    if expected_names is not None:
        expected = list(expected_names)
        for name in catalog.names:
            if name not in expected:
                problems.append(f"{_where(catalog, name)}: field 'name': unknown tool name (not in the domain's tool list)")
        for name in expected:
            if name not in catalog:
                problems.append(f"{catalog.name}: no card for tool '{name}'")
    seen_examples: dict[str, str] = {}
    for card in catalog:
        where = _where(catalog, card.name)
        if catalog.authored and len(card.when_to_use) < MIN_WHEN_TO_USE:
            problems.append(
                f"{where}: field 'when_to_use': needs at least {MIN_WHEN_TO_USE} examples, got {len(card.when_to_use)}"
            )
        for example in card.when_to_use:
            key = normalize_text(example)
            owner = seen_examples.setdefault(key, card.name)
            if owner != card.name:
                problems.append(f"{where}: field 'when_to_use': example '{example}' duplicates one in card '{owner}'")
        if len({normalize_text(e) for e in card.when_to_use}) < len(card.when_to_use):
            problems.append(f"{where}: field 'when_to_use': contains duplicate examples")
        for other in card.confusions():
            if other == card.name:
                problems.append(f"{where}: field 'when_not_to_use': points to the card itself")
            elif other not in catalog:
                problems.append(f"{where}: field 'when_not_to_use': names unknown tool '{other}'")
            elif card.name not in catalog.cards[other].confusions():
                problems.append(
                    f"{where}: field 'when_not_to_use': confusion with '{other}' is not declared on both sides "
                    f"(add '… → {card.name}' to {other}'s when_not_to_use)"
                )
    return problems


def cards_from_openai_tools(path: str | Path) -> Catalog:
    """Derive cards from a JSON list of OpenAI tool schemas (purpose = description, tags = parameters)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CatalogError([f"{path} line {exc.lineno}: not valid JSON: {exc.msg}"]) from None
    except UnicodeDecodeError as exc:
        raise CatalogError([f"{path}: not UTF-8 text (byte {exc.start}): save the file as UTF-8"]) from None
    if not isinstance(data, list) or not data:
        raise CatalogError([f"{path}: expected a non-empty JSON list of OpenAI tool schemas"])
    catalog = Catalog(name=path.stem, cards={}, authored=False, origin=str(path.resolve()))
    problems = []
    for i, item in enumerate(data):
        fn = item.get("function") if isinstance(item, dict) else None
        if not isinstance(fn, dict) or not fn.get("name"):
            problems.append(f"{path} item {i}: not an OpenAI tool schema (needs {{'type': 'function', 'function': {{'name', ...}}}})")
            continue
        parameters = fn.get("parameters") or {}
        params = parameters.get("properties") if isinstance(parameters, dict) else None
        if not isinstance(parameters, dict) or not isinstance(params or {}, dict):
            problems.append(f"{path} item {i} ('{fn['name']}'): field 'parameters' must be a JSON schema object "
                            f"with 'properties', got {type(parameters).__name__}")
            continue
        params = params or {}
        description = (fn.get("description") or "").strip()
        if not description:  # a name alone is too little to route on: say which tool needs words
            problems.append(f"{path} item {i} ('{fn['name']}'): field 'description' is empty; describe what the tool "
                            f"does (a ToolCard folder can add examples too)")
            continue
        try:
            card = ToolCard(name=fn["name"], purpose=description, tags=tuple(str(p) for p in params)[:12])
        except ValidationError as err:
            problems.extend(_pydantic_problems(err, f"{path} item {i} ('{fn['name']}')"))
            continue
        if card.name in catalog.cards:
            problems.append(f"{path} item {i}: duplicate tool name '{card.name}'")
            continue
        catalog.cards[card.name] = card
        catalog.sources[card.name] = CardSource(str(path), None, None)
    if problems:
        raise CatalogError(problems)
    return catalog


def load_catalog(source: str | Path, expected_names: Iterable[str] | None = None) -> Catalog:
    """A toolcards folder or a JSON file of OpenAI tool schemas (the `--catalog` contract)."""
    source = Path(source)
    if source.is_dir():
        return load_toolcards(source, expected_names)
    if source.is_file():
        return cards_from_openai_tools(source)
    raise CatalogError([f"{source}: no such catalogue (a toolcards folder or a JSON file of tool schemas)"])

"""Tools and queries from the Berkeley Function Calling Leaderboard, read from the `bfcl-eval` wheel.

The wheel (Apache-2.0) ships BFCL's function documents and questions as JSON-lines files. It is
fetched with `pip download --no-deps` (data only: never installed, since its dependencies would
pull half an LLM stack), checked by sha256 and cached next to the GGUF model. Two uses:

- distractors: every distinct function document becomes a ToolCard (purpose = description, tags =
  parameter names), to grow the 54 Korean insurance cards into a catalogue of thousands;
- an external benchmark: BFCL's `multiple` / `live_multiple` questions routed over the union of
  their candidate functions, gold = the function in BFCL's possible answer.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from toolroute.cards import Catalog, CardSource, ToolCard
from toolroute.queries import EvalQuery
from toolroute.llm.gguf import model_dir

WHEEL = "bfcl_eval-2026.3.23-py3-none-any.whl"
REQUIREMENT = "bfcl-eval==2026.3.23"
SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
# Categories whose entries carry function documents (multi-turn ones use separate API classes).
TOOL_CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple",
                   "live_parallel", "live_parallel_multiple", "irrelevance", "live_irrelevance", "live_relevance")
ROUTING_CATEGORIES = ("multiple", "live_multiple")
_NAME = re.compile(r"[^A-Za-z0-9_.\-]")


class BfclUnavailable(RuntimeError):
    """The bfcl-eval wheel could not be fetched or failed its checksum."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ensure_wheel(directory: Path | None = None) -> Path:
    """The verified wheel path, downloaded from the package index on first use (about 2 MB)."""
    target = (directory or model_dir()) / WHEEL
    if target.is_file() and _sha256(target) == SHA256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="toolroute-bfcl-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", tmp, REQUIREMENT]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        got = Path(tmp) / WHEEL
        if proc.returncode != 0 or not got.is_file():
            raise BfclUnavailable(f"could not download {REQUIREMENT} from the package index:\n{proc.stderr.strip()[-800:]}")
        if _sha256(got) != SHA256:
            raise BfclUnavailable(f"{REQUIREMENT}: sha256 {_sha256(got)} does not match the expected {SHA256}")
        got.replace(target)
    return target


def read_category(category: str, wheel: Path | None = None, answers: bool = False) -> list[dict]:
    """The entries of one BFCL category (or its possible answers), in file order."""
    wheel = wheel or ensure_wheel()
    member = f"bfcl_eval/data/{'possible_answer/' if answers else ''}BFCL_v4_{category}.json"
    with zipfile.ZipFile(wheel) as z:
        try:
            text = z.read(member).decode("utf-8")
        except KeyError:
            raise ValueError(f"{wheel}: no BFCL category '{category}' ({member})") from None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@dataclass(frozen=True)
class FunctionDoc:
    name: str  # unique tool name (BFCL's name, suffixed when two documents share it)
    bfcl_name: str
    description: str
    parameters: tuple[str, ...]

    def card(self) -> ToolCard:
        return ToolCard(name=self.name, purpose=self.description or self.bfcl_name.replace("_", " "),
                        tags=self.parameters[:12])


def _key(fn: dict) -> tuple[str, str]:
    return fn["name"], (fn.get("description") or "").strip()


def _unique_name(bfcl_name: str, taken: set[str]) -> str:
    """A card-safe tool name for a BFCL name, suffixed `__2`, `__3` … when already taken (and marked taken)."""
    base = _NAME.sub("_", bfcl_name) or "tool"
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}__{i}"
    taken.add(name)
    return name


def function_docs(categories=TOOL_CATEGORIES, wheel: Path | None = None) -> dict[tuple[str, str], FunctionDoc]:
    """Every distinct (name, description) function document, with a unique, card-safe tool name."""
    docs: dict[tuple[str, str], FunctionDoc] = {}
    taken: set[str] = set()
    for category in categories:
        for entry in read_category(category, wheel):
            for fn in entry.get("function", []):
                key = _key(fn)
                if key in docs:
                    continue
                params = tuple(str(p) for p in ((fn.get("parameters") or {}).get("properties") or {}))
                docs[key] = FunctionDoc(_unique_name(fn["name"], taken), fn["name"], key[1], params)
    return docs


def distractors(n: int, seed: int = 0, reserved: set[str] = frozenset(), wheel: Path | None = None) -> list[ToolCard]:
    """`n` BFCL cards in a fixed shuffled order, so a larger catalogue contains every smaller one.

    A BFCL tool named like one in `reserved` (BFCL has its own `product_search`) is kept under
    `<name>__bfcl`: a same-named stranger is exactly the distractor worth measuring.
    """
    docs = sorted(function_docs(wheel=wheel).values(), key=lambda d: d.name)
    random.Random(seed).shuffle(docs)
    cards = [d.card() for d in docs]
    cards = [c.model_copy(update={"name": f"{c.name}__bfcl"}) if c.name in reserved else c for c in cards]
    if n > len(cards):
        raise ValueError(f"asked for {n} distractors, BFCL has {len(cards)} distinct function documents")
    return cards[:n]


def with_distractors(catalog: Catalog, n: int, seed: int = 0, wheel: Path | None = None) -> Catalog:
    """`catalog` plus `n` BFCL distractor tools (not authored: no example-count rule for them)."""
    extra = distractors(n, seed, set(catalog.names), wheel)
    cards = {**catalog.cards, **{c.name: c for c in extra}}
    sources = {**catalog.sources, **{c.name: CardSource(f"bfcl-eval:{WHEEL}") for c in extra}}
    return catalog.derived(name=f"{catalog.name}-x{len(cards)}", cards=cards, sources=sources, authored=False)


def routing_tools(categories=ROUTING_CATEGORIES, wheel: Path | None = None) -> dict[str, FunctionDoc]:
    """One tool per BFCL function name (its first description, the union of its parameters), by BFCL name."""
    variants: dict[str, list[FunctionDoc]] = {}
    for doc in function_docs(categories, wheel).values():
        variants.setdefault(doc.bfcl_name, []).append(doc)
    tools: dict[str, FunctionDoc] = {}
    taken: set[str] = set()
    for bfcl_name, group in variants.items():
        params = tuple(dict.fromkeys(p for d in group for p in d.parameters))
        first = next((d for d in group if d.description), group[0])
        tools[bfcl_name] = FunctionDoc(_unique_name(bfcl_name, taken), bfcl_name, first.description, params)
    return tools


def routing_benchmark(categories=ROUTING_CATEGORIES, wheel: Path | None = None,
                      limit: int | None = None) -> tuple[Catalog, list[EvalQuery]]:
    """BFCL questions routed over the union of their categories' functions, one tool per function name;
    gold from the possible answers.

    BFCL defines many names several times with slightly different descriptions (in live_multiple, 923
    of 1,053 questions' gold function has such a sibling): counted as separate tools, picking the
    right function in another entry's wording would be a miss. A name keeps its first description
    and the union of its parameters.
    """
    tools = routing_tools(categories, wheel)
    catalog = Catalog("bfcl-" + "-".join(categories), {t.name: t.card() for t in tools.values()},
                      {t.name: CardSource(f"bfcl-eval:{WHEEL}") for t in tools.values()}, authored=False)
    queries = []
    for category in categories:
        answers = {a["id"]: a["ground_truth"] for a in read_category(category, wheel, answers=True)}
        for entry in read_category(category, wheel):
            offered = {fn["name"] for fn in entry["function"]}
            gold = [tools[name].name for call in answers.get(entry["id"], []) for name in call if name in offered]
            turns = [m for turn in entry["question"] for m in turn if m.get("role") == "user"]
            if not gold or not turns:
                continue
            queries.append(EvalQuery(entry["id"], turns[-1]["content"], tuple(dict.fromkeys(gold)), kind=category))
    return catalog, queries[:limit] if limit else queries

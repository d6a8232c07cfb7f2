"""The synthetic training set of the insurance router (issue 40, item 1):
`python -m toolroute_lab.studies.synthetic_queries [generate|check|build|all] [--hours H]`.

- **generate**: the embedded LLM writes `--n` queries per tool and family (`toolroute.cards.synthetic.FAMILIES`)
  from the tool's card, its input names and a few product names, sampling at temperature 0.8 with a seed
  fixed per call; every reply is kept in `data/insurance/synthetic/generations.jsonl` (model, seed, prompt
  hash), so the set is rebuilt without the LLM.
- **build**: the replies' queries plus rule variants (endings, particles, spacing, typos, another product
  name; one per LLM query and one per card example, seeded), filtered (`filter_candidates`: no repeats,
  nothing near a query of any evaluation file of the domain, the sealed set included).
- **check**: the default router (cards only) routes every candidate; where its first tool is another
  tool (a contested query), the LLM is asked which of the two cards the query belongs to (order
  randomised per query); a query it gives to the other tool is dropped. A rule variant takes its parent's
  verdict (`verdicts_for`). Verdicts are kept in `data/insurance/synthetic/checks.jsonl`.

The result is `data/insurance/synthetic/queries.jsonl` (query, tool, family, parent, check) and a count
per tool and family in `results/synthetic_queries.csv`. Nothing here reads a query split except to keep
away from it.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import pandas as pd

from toolroute.cards.synthetic import (FAMILIES, Candidate, GenerationCache, eval_texts, filter_candidates, generate,
                                       pair_check, rule_variants)
from toolroute.config import ROOT, toolcards_dir

FOLDER = ROOT / "data" / "insurance" / "synthetic"
GENERATIONS = FOLDER / "generations.jsonl"
CHECKS = FOLDER / "checks.jsonl"
QUERIES = FOLDER / "queries.jsonl"
TABLE = ROOT / "results" / "synthetic_queries.csv"
SEED = 40  # the rule variants' random choices


def product_names() -> list[str]:
    from toolroute.domains.insurance.products import load_products

    return sorted(p.name for p in load_products().values())


def tool_inputs() -> dict[str, list[str]]:
    """Each tool's input names (what its schema asks for), shown to the writer."""
    from toolroute.agent.pack import load_pack

    out = {}
    for tool in load_pack("insurance").tools:
        schema = tool.args_schema.model_json_schema() if hasattr(tool.args_schema, "model_json_schema") else {}
        out[tool.name] = list((schema.get("properties") or {}).keys())
    return out


def run_generate(n: int, rounds: int, deadline: float | None, path: Path = GENERATIONS) -> GenerationCache:
    from toolroute.cards import open_catalog
    from toolroute.llm import chat_model, llm_config
    from toolroute.domains.insurance.pack import AUGMENT_PROMPT

    catalog = open_catalog(toolcards_dir("insurance"), edits=False)
    model_id = llm_config().identity
    cache = GenerationCache(path)
    return generate(catalog, lambda seed: chat_model(temperature=0.8, seed=seed, max_tokens=450), model_id, cache,
                    FAMILIES, n=n, rounds=rounds, parameters=tool_inputs(), names=product_names(),
                    system=AUGMENT_PROMPT, deadline=deadline)


def candidates(cache: GenerationCache, seed: int = SEED) -> list[Candidate]:
    """The LLM's queries, then one rule variant of each and of every card example (in a fixed order)."""
    from toolroute.cards import open_catalog

    rng = random.Random(seed)
    names = product_names()
    out = []
    for generation in sorted(cache, key=lambda g: (g.tool, g.family, g.round)):
        out.extend(Candidate(q, generation.tool, generation.family) for q in generation.queries)
    parents = [(c.query, c.tool) for c in out]
    catalog = open_catalog(toolcards_dir("insurance"), edits=False)
    parents += [(example, card.name) for card in catalog for example in card.when_to_use]
    for text, tool in parents:
        out.extend(Candidate(variant, tool, f"rule:{rule}", text) for rule, variant in rule_variants(text, rng, names))
    return out


def verdicts_for(kept: list[Candidate], firsts: list[str], ask: Callable[[Candidate, str], str | None],
                 examples: set[str] = frozenset()) -> dict[str, str]:
    """query -> 'router' (the router's first tool is its own), 'llm' (contested, the LLM agreed), 'rejected'
    or 'unclear' (contested, the LLM gave it to the other tool or named neither), 'card' (a variant of a
    card example: the card's author placed it) or 'parent' (a variant of a query that passed). A rule
    variant takes its parent's verdict when the parent was judged: an ending or a typo does not move a
    query to another tool, and the LLM's time goes to the queries it wrote. `ask(candidate, other)` gives
    the LLM's verdict, or None when it was not asked (past the deadline: left out, checked by a later run)."""
    from tqdm.auto import tqdm

    verdicts: dict[str, str] = {}
    # parents before their variants, each group in a seeded random order: a deadline leaves out a
    # random part, not the tools late in the alphabet
    pairs = list(zip(kept, firsts))
    random.Random(SEED).shuffle(pairs)
    pairs.sort(key=lambda pair: bool(pair[0].parent))
    for candidate, first in tqdm(pairs, desc="checking", unit="query"):
        if first == candidate.tool:
            verdict = "router"
        elif candidate.parent in examples:
            verdict = "card"
        elif candidate.parent and candidate.parent in verdicts:
            inherited = verdicts[candidate.parent]
            verdict = inherited if inherited in ("rejected", "unclear") else "parent"
        else:
            verdict = ask(candidate, first)
        if verdict is not None:
            verdicts[candidate.query] = verdict
    return verdicts


def run_check(kept: list[Candidate], deadline: float | None, examples: set[str] = frozenset()) -> dict[str, str]:
    """`verdicts_for` with the default router (cards only) and the LLM's pair check, kept in CHECKS."""
    from toolroute.cards import open_catalog
    from toolroute.llm import chat_model, llm_config
    from toolroute.routing import build_router

    catalog = open_catalog(toolcards_dir("insurance"), edits=False)
    router = build_router(catalog=catalog, progress=False, no_call="none")
    model_id = llm_config().identity
    saved = {}
    if CHECKS.is_file():
        for line in CHECKS.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["model"] == model_id:
                    saved[(row["query"], row["tool"], row["other"])] = row["verdict"]
    llm = None

    def ask(candidate: Candidate, other: str) -> str | None:
        nonlocal llm
        key = (candidate.query, candidate.tool, other)
        if key not in saved:
            if deadline is not None and time.monotonic() > deadline:
                return None
            llm = llm or chat_model(max_tokens=4)
            agreed = pair_check(llm, candidate.query, catalog.cards[candidate.tool], catalog.cards[other])
            saved[key] = {True: "llm", False: "rejected", None: "unclear"}[agreed]
            with CHECKS.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"query": candidate.query, "tool": candidate.tool, "other": other,
                                     "model": model_id, "verdict": saved[key]}, ensure_ascii=False) + "\n")
        return saved[key]

    firsts = [result.top(1)[0] for result in router.route_many([c.query for c in kept])]
    return verdicts_for(kept, firsts, ask, examples)


def build(check: bool, deadline: float | None) -> pd.DataFrame:
    cache = GenerationCache(GENERATIONS)
    from toolroute.cards import open_catalog

    examples = [e for card in open_catalog(toolcards_dir("insurance"), edits=False) for e in card.when_to_use]
    kept, dropped = filter_candidates(candidates(cache), eval_texts(ROOT / "data" / "insurance"), examples)
    print(f"{len(cache)} generations, {len(kept)} candidates kept; dropped: {dict(dropped)}")
    verdicts = run_check(kept, deadline, set(examples)) if check else {}
    rows = []
    for c in kept:
        verdict = verdicts.get(c.query, "unchecked")
        if verdict in ("rejected", "unclear") or (check and verdict == "unchecked"):
            continue
        rows.append({"query": c.query, "tool": c.tool, "family": c.family, "parent": c.parent, "check": verdict})
    FOLDER.mkdir(parents=True, exist_ok=True)
    QUERIES.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    frame = pd.DataFrame(rows)
    table = frame.pivot_table(index="tool", columns="family", values="query", aggfunc="count", fill_value=0)
    table["total"] = table.sum(axis=1)
    table.to_csv(TABLE)
    print(f"{len(rows)} queries for {frame['tool'].nunique()} tools -> {QUERIES.relative_to(ROOT)}; "
          f"checks: {dict(Counter(verdicts.values()))}")
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", nargs="?", default="all", choices=["generate", "check", "build", "all"])
    parser.add_argument("--n", type=int, default=10, help="queries asked for per call")
    parser.add_argument("--rounds", type=int, default=1, help="calls per tool and family")
    parser.add_argument("--hours", type=float, default=None, help="start no LLM call after this long")
    parser.add_argument("--generations", type=Path, default=GENERATIONS, help="where replies are kept (generate only)")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.hours * 3600 if args.hours else None
    if args.phase in ("generate", "all"):
        run_generate(args.n, args.rounds, deadline, args.generations)
    if args.phase in ("check", "build", "all"):
        build(check=args.phase != "build", deadline=deadline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Same-language crowding: the 54 insurance cards among Korean tools of other business lines.

The BFCL series of the scale experiment adds English function documents, which multilingual e5
keeps far from Korean insurance questions: it measures language separation. This series adds Korean
distractors instead: the threat and plant domains' cards (other domains, same language) and the
near-miss tools of `data/scale/korean_distractors.json` (another insurer's auto, pet, fire and
savings lines, pensions, a bank, a card company, the call centre's own operations and HR tools …,
each wrong for every insurance eval query; see that folder's README). They are added in one fixed
shuffled order, so a larger catalogue contains every smaller one.

`python -m toolroute_lab.e05_scale.crowding` runs the default sizes on the test and dev splits and
writes `results/korean_crowding.csv` (one row per size, arm and split) and
`results/korean_crowding_top1.csv` (every eval row whose top tool is a distractor, to read).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Sequence

import pandas as pd

from toolroute.cards import Catalog, CardSource, ToolCard, cards_from_openai_tools, load_catalog
from toolroute.config import korean_distractors_path, queries_path, results_dir, toolcards_dir
from toolroute.evaluation.metrics import RoutedRow
from toolroute_lab.e05_scale.scale import fields_label, run_growth
from toolroute.plugins import domain_names
from toolroute.queries import load_queries
from toolroute.routing import RouterConfig, open_catalog

DOMAINS = domain_names()[1:]  # the domains besides the default one (this project's cards are all Korean)
SERIES = "korean"
DEFAULT_ADDED = (0, 50, 100, 200, "all")
CARD_FIELDS = ("purpose", "when_to_use", "when_not_to_use", "tags")
# The configured router's card fields, then a diagnostic: every card reduced to what a schema-only
# distractor has (its description and parameter names), the insurance cards' real utterances left out.
FIELD_SETS = (tuple(RouterConfig().fields), ("purpose", "tags"))
# Business line of a near-miss tool, by the prefix of its name (first match wins).
LINES = (("hanbit_auto_", "auto insurance, another insurer"), ("hanbit_", "non-life lines, another insurer"),
         ("daon_", "life lines we do not sell, another insurer"), ("pension_", "retirement pensions"),
         ("bank_", "bank"), ("card_", "card company"), ("cc_", "call-centre operations"), ("hr_", "HR and office"))
OTHER_LINE = "daily services"


def business_line(name: str) -> str:
    return next((line for prefix, line in LINES if name.startswith(prefix)), OTHER_LINE)


def korean_pool(path: str | Path | None = None, domains: Sequence[str] = DOMAINS) -> Catalog:
    """Every Korean distractor, unshuffled: the near-miss tools (module = business line) and the cards of
    `domains` as authored in YAML (module = "<domain> domain"; saved card edits are not read)."""
    near_miss = cards_from_openai_tools(path or korean_distractors_path())
    cards: dict[str, ToolCard] = {}
    sources: dict[str, CardSource] = {}
    for card in near_miss:
        cards[card.name] = card
        sources[card.name] = CardSource(near_miss.sources[card.name].path, None, business_line(card.name))
    for domain in domains:
        catalog = load_catalog(toolcards_dir(domain))
        for card in catalog:
            if card.name in cards:
                raise ValueError(f"distractor '{card.name}' of the {domain} domain is also a near-miss tool")
            cards[card.name] = card
            sources[card.name] = CardSource(catalog.sources[card.name].path, catalog.sources[card.name].line,
                                            f"{domain} domain")
    return Catalog("korean-distractors", cards, sources, authored=False)


def distractors(n: int, seed: int = 0, pool: Catalog | None = None) -> list[ToolCard]:
    """`n` Korean distractors in a fixed shuffled order, so a larger catalogue contains every smaller one."""
    pool = pool if pool is not None else korean_pool()
    cards = sorted(pool, key=lambda c: c.name)
    random.Random(seed).shuffle(cards)
    if n > len(cards):
        raise ValueError(f"asked for {n} Korean distractors, there are {len(cards)}")
    return cards[:n]


def with_distractors(catalog: Catalog, n: int, seed: int = 0, pool: Catalog | None = None) -> Catalog:
    """`catalog` plus `n` Korean distractors, under one name for every `n` (one index namespace that grows)."""
    pool = pool if pool is not None else korean_pool()
    extra = distractors(n, seed, pool)
    clash = sorted(c.name for c in extra if c.name in catalog)
    if clash:
        raise ValueError(f"Korean distractors named like tools of {catalog.name}: {clash}")
    return catalog.derived(name=f"{catalog.name}-korean", cards={**catalog.cards, **{c.name: c for c in extra}},
                           sources={**catalog.sources, **{c.name: pool.sources[c.name] for c in extra}},
                           authored=False)


def resolve_sizes(added: Sequence[int | str], base: int, pool: int) -> list[int]:
    """Catalogue sizes for numbers of added distractors ("all": the whole pool)."""
    sizes = []
    for a in added:
        n = pool if a == "all" else int(a)
        if not 0 <= n <= pool:
            raise ValueError(f"korean_added: {a} is not between 0 and the {pool} Korean distractors (or 'all')")
        sizes.append(base + n)
    return sorted(set(sizes))


def check_parameters(added: Sequence[int | str], splits: Sequence[str],
                     field_sets: Sequence[Sequence[str]] = FIELD_SETS) -> None:
    """What the notebook would fail on, checked before any model loads (ValueError naming the parameter)."""
    if not added:
        raise ValueError("korean_added: give at least one number of distractors (0 is the insurance cards alone)")
    resolve_sizes(added, 0, len(korean_pool()))
    missing = [s for s in splits if not queries_path("insurance", s).is_file()]
    if missing or not splits:
        raise ValueError(f"korean_splits: no insurance query split {missing or '(none given)'}")
    bad = [f for fields in field_sets for f in fields if f not in CARD_FIELDS]
    if bad or not field_sets or not all(field_sets):
        raise ValueError(f"korean_field_sets: each a non-empty list of card fields {list(CARD_FIELDS)}, got "
                         f"{[list(f) for f in field_sets]}")


def run_korean_crowding(added: Sequence[int | str] = DEFAULT_ADDED, arms: Sequence[str] = ("dense", "hybrid"),
                        splits: Sequence[str] = ("test", "dev"), seed: int = 0, config: RouterConfig = RouterConfig(),
                        embedder=None, chroma_path: str | Path | None = None, latency_queries: int = 100,
                        latency_passes: int = 3, pool_path: str | Path | None = None, n_boot: int = 2000,
                        field_sets: Sequence[Sequence[str]] = FIELD_SETS,
                        progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The Korean series: one row per (size, arm, card fields, split) as `scale.run_growth` makes them, and
    every eval row whose top tool is a distractor (with the distractor's business line)."""
    base = open_catalog(toolcards_dir("insurance"), edits=False)
    pool = korean_pool(pool_path)
    sizes = resolve_sizes(added, len(base), len(pool))
    table, routed = run_growth(base, lambda size: with_distractors(base, size - len(base), seed, pool), sizes, arms,
                               splits, SERIES, config, embedder, chroma_path, latency_queries, latency_passes,
                               n_boot=n_boot, field_sets=field_sets, progress=progress)
    return table, distractor_top1(routed, base, pool)


def distractor_top1(routed: dict[tuple[int, str, str, str], list[RoutedRow]], base: Catalog,
                    pool: Catalog) -> pd.DataFrame:
    """Each routed eval row whose top tool is a distractor: for a call row a lost Hit@1, for a no-call
    row a wrong call when the no-call rule did not fire."""
    text = {}
    rows = []
    for (size, arm, fields, split), routed_rows in routed.items():
        if split not in text:
            text[split] = {q.id: q.query for q in load_queries(queries_path("insurance", split), base.names)}
        for r in routed_rows:
            if r.ranked and r.ranked[0] not in base:
                rows.append({"size": size, "arm": arm, "fields": fields, "split": split, "id": r.id,
                             "query": text[split][r.id], "expected": " ".join(r.expected) or "(no call)",
                             "top1": r.ranked[0], "line": pool.sources[r.ranked[0]].module,
                             "no_call_predicted": r.no_call_predicted})
    columns = ["size", "arm", "fields", "split", "id", "query", "expected", "top1", "line", "no_call_predicted"]
    return pd.DataFrame(rows, columns=columns)


def markdown_table(table: pd.DataFrame, split: str = "test", fields: Sequence[str] = FIELD_SETS[0]) -> str:
    """The docs' table of one split and set of card fields, written from the CSV (a test keeps the docs
    equal to it)."""
    part = table[(table["split"] == split) & (table["fields"] == fields_label(fields))].sort_values(["arm", "size"])
    header = ["tools", "arm", "Hit@1 [95% CI]", f"Δ Hit@1 vs {int(part['size'].min())} tools, paired [95% CI]",
              "Recall@5 [95% CI]", "MRR [95% CI]", "no-call acc.", "distractor on top", "distractor in top 5",
              "p50 / p95 ms"]

    def ci(row, m, signed=False):
        f = "{:+.3f}" if signed else "{:.3f}"
        lo, hi = (row[f"{m}_diff_lo"], row[f"{m}_diff_hi"]) if signed else (row[f"{m}_lo"], row[f"{m}_hi"])
        value = row[f"{m}_diff"] if signed else row[m]
        return "–" if pd.isna(value) else f"{f.format(value)} [{f.format(lo)}, {f.format(hi)}]"

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, r in part.iterrows():
        cells = [f"{int(r['tools'])}", r["arm"], ci(r, "hit@1"), ci(r, "hit@1", signed=True), ci(r, "recall@5"),
                 ci(r, "mrr"), f"{r['no_call_accuracy']:.3f}", f"{r['top1_distractor']:.3f}",
                 f"{r['distractor_in_top5']:.3f}", f"{r['latency_p50_ms']:.1f} / {r['latency_p95_ms']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def results_paths() -> tuple[Path, Path]:
    return results_dir() / "korean_crowding.csv", results_dir() / "korean_crowding_top1.csv"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolroute_lab.e05_scale.crowding", description=__doc__.split("\n")[0])
    parser.add_argument("--added", default=",".join(str(a) for a in DEFAULT_ADDED),
                        help="numbers of Korean distractors added to the 54 cards, comma-separated ('all' = every one)")
    parser.add_argument("--splits", default="test,dev")
    parser.add_argument("--arms", default="dense,hybrid")
    parser.add_argument("--passes", type=int, default=3, help="latency passes over the timing queries")
    parser.add_argument("--latency-queries", type=int, default=100)
    parser.add_argument("--fields", default=";".join(",".join(f) for f in FIELD_SETS),
                        help="card field sets indexed, ';'-separated, each comma-separated (default: the router's "
                             "fields, then purpose,tags as a diagnostic)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chroma", default=None, help="an index folder of its own (default: the project's)")
    parser.add_argument("--out", default=None, help="the table's path (default: results/korean_crowding.csv)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    added = [a if a == "all" else int(a) for a in args.added.split(",")]
    field_sets = [tuple(f.split(",")) for f in args.fields.split(";")]
    check_parameters(added, args.splits.split(","), field_sets)
    table, top1 = run_korean_crowding(added, args.arms.split(","), args.splits.split(","), args.seed,
                                      chroma_path=args.chroma, latency_queries=args.latency_queries,
                                      latency_passes=args.passes, field_sets=field_sets)
    out, out_top1 = results_paths()
    if args.out:
        out = Path(args.out)
        out_top1 = out.with_name(out.stem + "_top1.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    top1.to_csv(out_top1, index=False)
    for fields in field_sets:
        for split in dict.fromkeys(table["split"]):
            print(f"\n{split} split, cards indexed from {fields_label(fields)}\n" + markdown_table(table, split, fields))
    print(f"\nwrote {out} and {out_top1}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

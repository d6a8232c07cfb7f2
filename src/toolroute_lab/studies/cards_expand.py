"""Catalogues without examples: descriptions only vs `toolroute cards expand` vs the human cards,
`python -m toolroute_lab.studies.cards_expand` (writes results/cards_expand.csv).

Three catalogues of the same tools, routed by the default router (and by its dense arm alone, the
plain description embedding the issue measured outside the project):

- **descriptions**: the OpenAI tool schemas a user would bring (`tools.json`): for threat and plant
  the domain's real tools with the human card's purpose as the description (the cards with their
  examples removed); for BFCL its own function documents;
- **expanded**: the cards `toolroute cards expand` writes from that file (`cards/`, with the LLM's
  replies cached in `cards/_cache/`: a rerun makes no LLM call);
- **human**: the hand-written cards in `toolcards/<domain>` (threat and plant only; BFCL has none).

BFCL: a fixed, seeded sample of its `multiple` / `live_multiple` questions whose offered functions
(gold and BFCL's own distractors of the same entry) fit in `--bfcl-tools` tools; every BFCL routing
question whose gold functions all lie in that set is an eval query. Each row gives Recall@1, Recall@5
and MRR with 95% bootstrap CIs over the call rows, and the expanded rows the paired difference to the
descriptions (paired bootstrap CI, p).
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
from pathlib import Path

import pandas as pd

from toolroute.agent.pack import load_pack
from toolroute.cards.expand import DEFAULT_PER_TOOL, expand
from toolroute.config import ROOT, queries_path, toolcards_dir
from toolroute.evaluation.leakage import similar_pairs
from toolroute.evaluation.metrics import metric_columns
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.external import bfcl
from toolroute.plugins import domain_names
from toolroute.queries import EvalQuery, load_queries
from toolroute.cards import Catalog
from toolroute.routing import RouterConfig, build_router, open_catalog

FOLDER = ROOT / "results" / "cards_expand"
TABLE = ROOT / "results" / "cards_expand.csv"
DOMAINS = domain_names()[1:]  # the domains besides the default one
SPLITS = ("dev", "test")
KS = (1, 5)
METRICS = ("recall@1", "recall@5", "hit@1", "mrr")


def domain_schemas(domain: str) -> list[dict]:
    """The domain's tools as OpenAI schemas, the description being the human card's purpose."""
    from langchain_core.utils.function_calling import convert_to_openai_tool  # heavy; only when schemas are written

    cards = open_catalog(toolcards_dir(domain), edits=False)
    schemas = []
    for tool in load_pack(domain).tools:
        schema = convert_to_openai_tool(tool)
        schema["function"]["description"] = cards.cards[tool.name].purpose
        schemas.append(schema)
    return schemas


def bfcl_sample(n_tools: int, seed: int = 0, wheel: Path | None = None) -> tuple[list[dict], list[EvalQuery]]:
    """A seeded sample of BFCL tools (whole question entries: gold and offered functions) and every
    routing question whose gold lies in it."""
    _, queries = bfcl.routing_benchmark(wheel=wheel)
    by_bfcl_name: dict[str, dict] = {}
    offered: dict[str, list[str]] = {}
    for category in bfcl.ROUTING_CATEGORIES:
        for entry in bfcl.read_category(category, wheel):
            offered[entry["id"]] = [fn["name"] for fn in entry["function"]]
            for fn in entry["function"]:
                if fn.get("description") and fn["name"] not in by_bfcl_name:
                    by_bfcl_name[fn["name"]] = fn
    tool_name = {bfcl_name: doc.name for bfcl_name, doc in bfcl.routing_tools(wheel=wheel).items()}
    order = sorted(queries, key=lambda q: q.id)
    random.Random(seed).shuffle(order)
    chosen: list[str] = []
    for query in order:
        names = [tool_name[n] for n in offered[query.id] if n in tool_name and n in by_bfcl_name]
        new = [n for n in dict.fromkeys(names) if n not in chosen]
        if set(query.expected_tools) <= set(names) and len(chosen) + len(new) <= n_tools:
            chosen += new
        if len(chosen) >= n_tools - 1:
            break
    inverse = {v: k for k, v in tool_name.items()}
    schemas = [{"type": "function", "function": {**by_bfcl_name[inverse[n]], "name": n}} for n in sorted(chosen)]
    picked = [q for q in queries if set(q.expected_tools) <= set(chosen)]
    return schemas, picked


def _write_queries(path: Path, queries: list[EvalQuery]) -> None:
    lines = [json.dumps({"id": q.id, "query": q.query, "expected_tools": list(q.expected_tools), "kind": q.kind},
                        ensure_ascii=False) for q in queries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def prepare(folder: Path = FOLDER, bfcl_tools: int = 12, seed: int = 0, bfcl_first: int | None = None) -> dict[str, Path]:
    """Write each catalogue's `tools.json` (and BFCL's `queries.jsonl`); returns domain → folder.

    `bfcl_first`: keep only the first tools of the BFCL sample in name order (the order `cards expand`
    works in), and the questions whose gold lies among them: a sample bounded by generation time."""
    out = {}
    for domain in DOMAINS:
        (folder / domain).mkdir(parents=True, exist_ok=True)
        (folder / domain / "tools.json").write_text(
            json.dumps(domain_schemas(domain), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        out[domain] = folder / domain
    schemas, queries = bfcl_sample(bfcl_tools, seed)
    if bfcl_first is not None:
        schemas = schemas[:bfcl_first]
        kept = {s["function"]["name"] for s in schemas}
        queries = [q for q in queries if set(q.expected_tools) <= kept]
    (folder / "bfcl").mkdir(parents=True, exist_ok=True)
    (folder / "bfcl" / "tools.json").write_text(json.dumps(schemas, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    _write_queries(folder / "bfcl" / "queries.jsonl", queries)
    out["bfcl"] = folder / "bfcl"
    return out


def generate(folders: dict[str, Path], per_tool: int = DEFAULT_PER_TOOL) -> list[str]:
    """`cards expand` on every catalogue with the configured LLM (started only on a cache miss)."""
    from toolroute.llm import chat_model, llm_config  # the LLM, only on a cache miss

    model_id = f"{llm_config(start=False).identity}|t=0.7|seed=7"
    texts = []
    for domain, folder in folders.items():
        report = expand(folder / "tools.json", folder / "cards",
                        lambda: chat_model(temperature=0.7, max_tokens=700), model_id, per_tool)
        texts.append(report.text())
        print(report.text(), flush=True)
    return texts


def _eval_files(domain: str, folder: Path) -> list[tuple[str, Path]]:
    if domain == "bfcl":
        return [("sample", folder / "queries.jsonl")]
    return [(split, queries_path(domain, split)) for split in SPLITS]


def _tool_names(folder: Path) -> list[str]:
    return [t["function"]["name"] for t in json.loads((folder / "tools.json").read_text(encoding="utf-8"))]


def _same_tools(catalog: Catalog, names: list[str]) -> Catalog:
    """The catalogue's cards of exactly these tools (a cards folder may hold more: generated beyond a
    time-bounded sample), under its own name so that it gets its own index."""
    if sorted(catalog.names) == sorted(names):
        return catalog
    return catalog.derived(name=f"{catalog.name}-{len(names)}", cards={n: catalog.cards[n] for n in names},
                           sources={n: catalog.sources[n] for n in names if n in catalog.sources})


def _complete(folder: Path) -> bool:
    """Whether `cards expand` has written a card for every tool of `tools.json` (one whose examples the
    LLM failed to write has its description only, as a user would get it)."""
    if not (folder / "cards").is_dir() or not list((folder / "cards").glob("*.yaml")):
        return False
    cards = open_catalog(folder / "cards", edits=False)
    return all(name in cards for name in _tool_names(folder))


def measure(folders: dict[str, Path], arms: tuple[str, ...] = ("hybrid", "dense")) -> pd.DataFrame:
    """One row per domain, split, router arm and catalogue (see module doc)."""
    records = []
    for domain, folder in folders.items():
        names = _tool_names(folder)
        catalogues = [("descriptions", folder / "tools.json")]
        if _complete(folder):
            catalogues.append(("expanded", folder / "cards"))
        else:
            print(f"{folder / 'cards'}: not every tool has a card yet; its rows are left out "
                  f"(rerun without --no-generate to finish it)", file=sys.stderr)
        if domain != "bfcl":
            catalogues.append(("human", toolcards_dir(domain)))
        for split, path in _eval_files(domain, folder):
            for arm in arms:
                rows = {}
                for label, source in catalogues:
                    catalog = _same_tools(open_catalog(source, edits=False), names)
                    queries = load_queries(path, catalog.names)
                    router = build_router(RouterConfig(catalog=str(source), arm=arm), catalog, progress=False,
                                          no_call="none")
                    rows[label] = [r for r in to_rows(queries, route_queries(router, queries)) if r.expected]
                    baseline = rows["descriptions"] if label != "descriptions" else None
                    records.append({"domain": domain, "split": split, "arm": arm, "catalogue": label,
                                    "tools": len(catalog), "examples": sum(len(c.when_to_use) for c in catalog),
                                    "tools_without_examples": sum(not c.when_to_use for c in catalog),
                                    "n_call": len(rows[label]),
                                    "leaking_examples": len(similar_pairs([(q.id, q.query) for q in queries], catalog)),
                                    **metric_columns(rows[label], METRICS, KS, baseline)})
    return pd.DataFrame(records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default=str(FOLDER), help="where the catalogues and generated cards live")
    parser.add_argument("--out", default=str(TABLE), help="the CSV written")
    parser.add_argument("--bfcl-tools", type=int, default=12, help="tools in the seeded BFCL sample")
    parser.add_argument("--bfcl-first", type=int, default=None,
                        help="keep the first N tools of the BFCL sample in name order (bounded by generation time)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-tool", type=int, default=6, help="examples asked per tool")
    parser.add_argument("--only", default=None, help="comma-separated catalogues (threat, plant, bfcl)")
    parser.add_argument("--skip-measure", action="store_true", help="write the catalogues and cards only")
    parser.add_argument("--no-generate", action="store_true",
                        help="measure with the cards as they are (no LLM call; an unfinished folder is left out)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # exit through atexit: the embedded LLM stops too
    folders = prepare(Path(args.folder), args.bfcl_tools, args.seed, args.bfcl_first)
    if args.only:
        folders = {k: v for k, v in folders.items() if k in args.only.split(",")}
    if not args.no_generate:
        generate(folders, args.per_tool)
    if args.skip_measure:
        return 0
    table = measure(folders)
    table.to_csv(args.out, index=False)
    print(table[["domain", "split", "arm", "catalogue", "n_call", *METRICS]].to_string(index=False))
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

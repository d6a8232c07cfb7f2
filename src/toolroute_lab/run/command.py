"""`toolroute run`: the lab's command, added to the CLI through the `toolroute.commands` entry point."""

from __future__ import annotations

import argparse
import sys

from toolroute.cli import EXIT_INTERRUPTED


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the notebook pipeline with papermill into results/runs/<run-id>/")
    p.add_argument("--params", default="notebooks/params/default.yaml")
    p.add_argument("--run-id", default=None)
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write the run into DIR/<run-id>/ instead of results/runs/<run-id>/ (any folder, outside the "
                        "repository too)")
    p.add_argument("--resume", action="store_true", help="skip notebooks whose outputs exist for the same parameters")
    p.add_argument("--only", default=None, metavar="NAMES",
                   help="run only these notebooks of the parameter set, comma-separated (e.g. 05_scale); "
                        "with --run-id, the other notebooks' outputs in that run folder stay")
    p.add_argument("--quiet", action="store_true",
                   help="show one progress bar per notebook (cells) instead of what the notebooks print")
    p.add_argument("--list-outputs", action="store_true",
                   help="print what a run of the parameter set leaves in its run folder, one a line, and run nothing "
                        "(make reference copies these)")
    p.set_defaults(func=run)


def run(args) -> int:
    from toolroute_lab.run.pipeline import PipelineInterrupted, list_outputs, run_pipeline  # heavy: only when run

    if args.list_outputs:
        print("\n".join(list_outputs(args.params)))
        return 0
    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    try:
        run_dir = run_pipeline(args.params, run_id=args.run_id, resume=args.resume, stream_output=not args.quiet,
                               only=only, runs_root=args.out)
    except PipelineInterrupted as exc:
        print(f"stopped: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"run written to {run_dir}")
    return 0

"""How long each notebook of a run should take, said before it starts, and what is left while it runs.

Where an estimate comes from, in this order:

1. the parameter file: a notebook entry's `expected_seconds` (for that parameter set on 2 cores; the file
   says how each was obtained);
2. the reference run (`results/reference/manifest.json`, each notebook's `seconds`) scaled by rows, for a
   notebook that declares `rows` (`toolroute_lab.run.declared`): its `fixed_seconds` plus the rest of
   the reference time in proportion to rows (LLM calls, agent runs);
3. the reference run's time as it is (exact for the reference's own parameters, a rough guide otherwise);
4. none (a notebook the reference did not run).

Times are on the reference machine's 2 cores, with nothing else running; another job on the same cores
(a second LLM above all) makes a run much slower.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from toolroute.config import ROOT
from toolroute_lab.run import declared

REFERENCE_MANIFEST = ROOT / "results" / "reference" / "manifest.json"


@dataclass(frozen=True)
class Estimate:
    notebook: str
    seconds: float | None
    """None: no estimate."""
    source: str
    """Where the figure comes from, in a few words."""


def reference_run(path: str | Path | None = None) -> dict:
    """The reference manifest's notebooks ({name: entry}); {} when there is none."""
    path = Path(path or REFERENCE_MANIFEST)
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("notebooks", {})
    except (OSError, ValueError):
        return {}


def _without_output_dir(parameters: dict) -> dict:
    return {k: v for k, v in parameters.items() if k != "output_dir"}


def estimate(name: str, given: dict, defaults: dict, expected_seconds: float | None = None,
             reference: dict | None = None) -> Estimate:
    """The expected time of notebook `name` run with `given` parameters (over its `defaults`)."""
    if expected_seconds is not None:
        return Estimate(name, float(expected_seconds), "the parameter file's expected_seconds")
    done = (reference if reference is not None else reference_run()).get(name)
    if not done or done.get("status") != "ok" or not done.get("seconds"):
        return Estimate(name, None, "no estimate: not in the reference run")
    # a notebook resumed from its checkpoints: the attempts before the last one count too
    seconds = float(done["seconds"]) + float(done.get("earlier_attempts_seconds") or 0.0)
    reference_given = _without_output_dir(done.get("parameters", {}))
    same = _without_output_dir(given) == reference_given
    experiment = declared.find(name)
    if experiment and experiment.rows and not same:
        try:
            rows = experiment.rows({**defaults, **given})
            reference_rows = experiment.rows({**defaults, **reference_given})
        except (ValueError, KeyError):  # a selection the checks refuse, or a notebook changed since: no scaling
            rows = reference_rows = 0
        if reference_rows > 0:
            fixed = min(experiment.fixed_seconds, seconds)
            scaled = fixed + (seconds - fixed) * rows / reference_rows
            if rows == 0:
                return Estimate(name, scaled, "no model called (llm: replay): the declared fixed part only")
            return Estimate(name, scaled, f"reference run {seconds:,.0f} s for {reference_rows:,} "
                                          f"{experiment.row_unit}, scaled to {rows:,}")
    if same:
        return Estimate(name, seconds, "reference run, same parameters")
    return Estimate(name, seconds, "reference run with its own parameters (a rough guide)")


def duration(seconds: float) -> str:
    """45 s, 4 min, 1 h 35 min: as precise as an estimate deserves."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def plan_lines(estimates: list[Estimate], params_file: str, skipped: set[str] = frozenset()) -> list[str]:
    """The plan printed before the first notebook: each notebook with its expected time and the source."""
    pending = [e for e in estimates if e.notebook not in skipped]
    known = [e.seconds for e in pending if e.seconds is not None]
    unknown = len(pending) - len(known)
    total = f"about {duration(sum(known))}" if known else "unknown"
    if known and unknown:
        total += f" plus {unknown} notebook(s) without an estimate"
    width = max(len(e.notebook) for e in estimates)
    lines = [f"Plan: {len(pending)} notebook(s) of {params_file}, expected time {total} "
             f"(on 2 idle cores; another job on them slows the run):"]
    for e in estimates:
        if e.notebook in skipped:
            lines.append(f"  {e.notebook:<{width}}  skipped: done with the same parameters (--resume)")
        elif e.seconds is None:
            lines.append(f"  {e.notebook:<{width}}  {e.source}")
        else:
            lines.append(f"  {e.notebook:<{width}}  about {duration(e.seconds):<10} {e.source}")
    return lines


def start_line(notebook: str, expected: float | None, now: datetime | None = None) -> str:
    """The line printed when a notebook starts: its expected time and the clock time it should end
    (local time), so that a long run says when to come back while it runs."""
    if expected is None:
        return f"[{notebook}] running … (no estimate)"
    now = now or datetime.now().astimezone()
    end = now + timedelta(seconds=expected)
    day = "" if end.date() == now.date() else f" {end:%a}"
    return f"[{notebook}] running … (about {duration(expected)}, until about{day} {end:%H:%M})"


def progress_line(done: Estimate, seconds: float, elapsed: float, remaining: list[Estimate],
                  spent: float = 0.0, spent_estimated: float = 0.0) -> str:
    """One line after a notebook finished: its time against the estimate, the run's elapsed time, and
    what is left (the estimates of the notebooks still to run). `spent` / `spent_estimated`: the
    finished notebooks' actual and expected seconds (those with an estimate), to say when the run is
    far off its estimates."""
    line = f"[{done.notebook}] done in {seconds:,.0f} s"
    if done.seconds is not None:
        line += f" (expected about {duration(done.seconds)})"
    line += f"; elapsed {duration(elapsed)}"
    if not remaining:
        return line + "; all done"
    known = [e.seconds for e in remaining if e.seconds is not None]
    unknown = len(remaining) - len(known)
    line += f"; {len(remaining)} notebook(s) left, about {duration(sum(known))}" if known else \
            f"; {len(remaining)} notebook(s) left, time unknown"
    if known and unknown:
        line += f" plus {unknown} without an estimate"
    if spent_estimated > 0 and not 0.67 <= spent / spent_estimated <= 1.5:
        line += f" (so far {spent / spent_estimated:.1f}x the estimates)"
    return line

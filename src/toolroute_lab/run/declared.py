"""Every experiment, declared once: its notebook, what it checks before a run, what it writes and what the report reads.

`EXPERIMENTS` lists one `Experiment` per notebook in `notebooks/`, in run order (the order of the
notebook numbers; the report is last so that it gathers the others). What reads it:

- `toolroute_lab.run.pipeline`: the checks before any notebook starts (`check`, `calls_llm`), the HTML export
  of the report (`html`), the outputs a run keeps (`outputs`, used by `make reference` through
  `toolroute run --list-outputs`);
- `toolroute_lab.e07_report.report`: the report's sections (`tables`, `figures`, `title`, `about`);
- the notebooks: `setup_notebook(declared.SCALE, output_dir)` gives a notebook its output folder;
- `toolroute_lab.run.estimates`: a notebook's expected time, the reference run's scaled by its `rows`.

Each notebook's folder declares its experiment in its `__init__.py` (`toolroute_lab.e05_scale.SCALE`); a new
experiment is a notebook, its folder with that declaration, one entry in `EXPERIMENTS` here and its
parameters in `notebooks/params/*.yaml`. Nothing here is heavy: the checks import their modules when they run.
"""

from __future__ import annotations

from toolroute_lab.e01_ingest import INGEST
from toolroute_lab.e02_ablation import TOOLCARD_ABLATION
from toolroute_lab.e03_step_limits import STEP_LIMITS
from toolroute_lab.e04_ragas_eval import RAGAS_EVAL
from toolroute_lab.e05_scale import SCALE
from toolroute_lab.e06_card_improvement import CARD_IMPROVEMENT
from toolroute_lab.shared.experiment import Experiment

REPORT = Experiment(
    "07_report", "Run report", folder=False, run_files=("headline.csv", "verdicts.csv", "prompt_sizes.csv"),
    html="report.html")

# fixed_seconds of each: the smoke set's time with the model-free replay LLM (21, 27 and 58 s in
# docs/performance.md) plus the embedded model's start (3-22 s).
EXPERIMENTS: tuple[Experiment, ...] = (INGEST, TOOLCARD_ABLATION, STEP_LIMITS, RAGAS_EVAL, SCALE, CARD_IMPROVEMENT,
                                       REPORT)
__all__ = ["EXPERIMENTS", "Experiment", "find", "INGEST", "TOOLCARD_ABLATION", "STEP_LIMITS", "RAGAS_EVAL", "SCALE",
           "CARD_IMPROVEMENT", "REPORT"]


def find(notebook: str) -> Experiment | None:
    """The declaration of a notebook, None for a notebook that is not declared (e.g. a scratch notebook)."""
    return next((e for e in EXPERIMENTS if e.notebook == notebook), None)

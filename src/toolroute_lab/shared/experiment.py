"""One experiment's declaration: its notebook, what it checks before a run, what it writes and what the
report reads. Each notebook's folder declares its own (`toolroute_lab.e02_ablation.TOOLCARD_ABLATION`);
`toolroute_lab.run.declared` lists them in run order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Experiment:
    notebook: str
    """`notebooks/<notebook>.ipynb`; also its output folder in a run and its key in the run's manifest.json."""
    title: str
    """What it measures, in a few words: the heading of its section in the report."""
    about: str = ""
    """A paragraph under that heading (optional)."""
    calls_llm: bool = False
    """Its `llm` parameter ("auto" or "replay") may reach a model: the endpoint is checked before a run starts."""
    check: Callable[[dict], None] | None = None
    """Raises ValueError naming the parameter when the data selection is bad; gets every parameter's value
    (the notebook's defaults updated with the parameter set's)."""
    tables: tuple[str, ...] = ()
    """CSV files in its folder that the report reads."""
    figures: tuple[str, ...] = ()
    """PNG files in its folder that the report shows."""
    folder: bool = True
    """It writes into `<run>/<notebook>/`."""
    run_files: tuple[str, ...] = ()
    """Files it writes at the top of the run folder."""
    html: str | None = None
    """After it ran, the executed notebook is exported (without code) to this file in the run folder."""
    rows: Callable[[dict], int] | None = None
    """How much work a run is, in `row_unit` (the LLM calls or agent runs its time grows with), from every
    parameter's value; 0 when no model is called (`llm: replay`). Its expected time is the reference run's,
    scaled by rows (`toolroute_lab.run.estimates`)."""
    row_unit: str = "rows"
    fixed_seconds: float = 0.0
    """The part of its time that does not grow with rows (kernel, imports, model start, index builds)."""

    @property
    def number(self) -> str:
        return self.notebook.split("_", 1)[0]

    @property
    def heading(self) -> str:
        return f"{self.title} ({self.number})"

    @property
    def in_report(self) -> bool:
        return bool(self.tables or self.figures)

    def outputs(self) -> list[str]:
        """What a run of it leaves in the run folder (files and folders), as `make reference` copies them."""
        return [f"{self.notebook}.ipynb", *([self.notebook] if self.folder else []), *self.run_files,
                *([self.html] if self.html else [])]


def models_compared(values: dict) -> int:
    """Models compared (each runs every row); 0 with `llm: replay`, which calls none."""
    return 0 if values.get("llm", "auto") == "replay" else max(1, len(values.get("llms") or [None]))

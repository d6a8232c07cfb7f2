"""Which function writes each notebook's findings: the report's one list of them."""

from __future__ import annotations

from typing import Any, Callable

from toolroute_lab.e06_card_improvement import CARD_IMPROVEMENT
from toolroute_lab.e01_ingest import INGEST
from toolroute_lab.e04_ragas_eval import RAGAS_EVAL
from toolroute_lab.e05_scale import SCALE
from toolroute_lab.e03_step_limits import STEP_LIMITS
from toolroute_lab.e02_ablation import TOOLCARD_ABLATION
from toolroute_lab.e01_ingest.findings import ingest
from toolroute_lab.e02_ablation.findings import ablation
from toolroute_lab.e03_step_limits.findings import step_limits
from toolroute_lab.e04_ragas_eval.findings import ragas
from toolroute_lab.e05_scale.findings import scale
from toolroute_lab.e06_card_improvement.findings import card_improvement


def writers(default_arm: str, proposed_cap: int) -> dict[str, Callable[[Any], list[str]]]:
    """The findings writer of each notebook, with the report's parameters bound."""
    return {INGEST.notebook: ingest, TOOLCARD_ABLATION.notebook: lambda run: ablation(run, default_arm),
            STEP_LIMITS.notebook: lambda run: step_limits(run, proposed_cap), RAGAS_EVAL.notebook: ragas,
            SCALE.notebook: scale, CARD_IMPROVEMENT.notebook: card_improvement}

"""Reading a run's tables the way every notebook's findings and the report do: a notebook's parameters,
the agent's arm and top-k, the rows of the main arm, and numbers written as text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from toolroute.evaluation.metrics import wilson_interval
from toolroute_lab.shared.arms import arm_order, routed_name


def pct(x: float) -> str:
    return f"{x:.0%}"


def ci(lo: float, hi: float, digits: int = 3) -> str:
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def wilson_text(successes: int, n: int) -> str:
    lo, hi = wilson_interval(successes, n)
    return f"{successes}/{n} ({pct(successes / n)}, 95% CI {pct(lo)}–{pct(hi)})"


def notebook_parameters(run: Any, notebook: str) -> dict:
    """The parameters a notebook's manifest entry recorded ({} when none)."""
    return ((run.manifest.get("notebooks") or {}).get(notebook) or {}).get("parameters") or {}


def run_parameters(run_dir: Path, notebook: str) -> dict:
    """`notebook_parameters` read from a run folder's manifest.json ({} without one)."""
    manifest = Path(run_dir) / "manifest.json"
    if not manifest.is_file():
        return {}
    return ((json.loads(manifest.read_text()).get("notebooks") or {}).get(notebook) or {}).get("parameters") or {}


def first_model(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the first model when a table holds several (the embedded model comes first)."""
    if "model" not in table.columns or table["model"].nunique() <= 1:
        return table
    return table[table["model"] == table["model"].iloc[0]]


DEFAULT_TOP_K = 5  # the agent's router top-k when a run's manifest does not record it (the notebooks' default)


def agent_top_k(parameters: dict) -> int:
    """The router top-k the agent runs with, from the parameters a notebook's manifest entry recorded:
    the smallest of 03's `top_ks`, 04's `top_k`."""
    if parameters.get("top_ks"):
        return int(min(parameters["top_ks"]))
    return int(parameters.get("top_k") or DEFAULT_TOP_K)


def main_arm(table: pd.DataFrame, top_k: int = DEFAULT_TOP_K) -> str | None:
    """The arm the report's single numbers describe (None when the table has no arms): the agent as it
    runs, `routed@<top_k>`; else another routed arm (the smallest k); else the first arm in reading order."""
    if "arm" not in table.columns:
        return None
    arms = list(dict.fromkeys(table["arm"].astype(str)))
    if routed_name(top_k) in arms:
        return routed_name(top_k)
    return arm_order(arms)[0]


def main_rows(table: pd.DataFrame, top_k: int = DEFAULT_TOP_K) -> pd.DataFrame:
    """One model's rows of its main arm, or (a run without arms) of its smallest top-k."""
    arm = main_arm(table, top_k)
    if arm is not None:
        return table[table["arm"].astype(str) == arm]
    return table[table["top_k"] == table["top_k"].min()] if "top_k" in table.columns else table


def agent_rows(table: pd.DataFrame, top_k: int = DEFAULT_TOP_K) -> pd.DataFrame:
    """`main_rows` of the first model: the agent as the report's single numbers describe it."""
    return main_rows(first_model(table), top_k)


def in_arm_order(table: pd.DataFrame) -> pd.DataFrame:
    """The table's rows with its arms in reading order (routed by k, oracle, all tools, the ceiling)."""
    order = arm_order(list(table["arm"].astype(str)))
    return table.sort_values("arm", key=lambda arms: arms.astype(str).map(order.index), kind="stable")


def other_arms(table: pd.DataFrame, top_k: int = DEFAULT_TOP_K) -> list[str]:
    """The first model's arms besides the main one, in reading order."""
    table = first_model(table)
    if "arm" not in table.columns:
        return []
    main = main_arm(table, top_k)
    return [a for a in arm_order(list(table["arm"].astype(str))) if a != main]

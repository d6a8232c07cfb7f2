"""The figures of notebook 03 (step limits): completion and cost per cap."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from toolroute_lab.shared.arms import arm_order  # noqa: E402
from toolroute_lab.shared.arms import title as arm_title  # noqa: E402
from toolroute_lab.shared.figures import DEFAULT_COLOR, LINESTYLES, legend_outside, save, wilson_err  # noqa: E402


def _series_key(frame: pd.DataFrame) -> pd.Series:
    """The line-style key: the model and top-k (or arm) when several, else one series ("")."""
    several_models = "model" in frame.columns and frame["model"].nunique() > 1
    several_k = frame["top_k"].nunique() > 1
    if "arm" in frame.columns and frame["arm"].nunique() > 1:
        return (frame["model"].astype(str) + " · " if several_models else "") + frame["arm"].astype(str)
    if several_models:
        return frame["model"].astype(str) + " · k" + frame["top_k"].astype(str)
    if several_k:
        return "top-" + frame["top_k"].astype(str)
    return pd.Series("", index=frame.index)


def _completion_counts(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    return (frame.assign(completed=frame["completed"].astype(bool))
            .groupby(by, sort=True)["completed"].agg(runs="size", completed="sum").reset_index()
            .assign(completion=lambda t: t["completed"] / t["runs"]))


def completion_plot(frame: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Completion rate against the cap with Wilson 95% CIs: one panel per arm (when the rows have arms),
    in it one line per required chain length (colour) and model or top-k (line style) when several; all
    tasks pooled in black. Panels share the y axis, so an arm's level reads against the others'."""
    has_arms = "arm" in frame.columns and frame["arm"].nunique() > 1
    names = arm_order(frame["arm"].astype(str).unique()) if has_arms else [None]
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names) + 2.2, 4.8), sharey=True, squeeze=False)
    axes = list(axes[0])
    for ax, name in zip(axes, names):
        part = frame[frame["arm"].astype(str) == name] if name is not None else frame
        _completion_panel(ax, part.drop(columns=["arm"]) if name is not None else part)
        ax.set_xticks(sorted(frame["cap"].unique()))
        ax.set_ylim(0, 1.03)
        ax.set_xlabel("max_tool_steps (cap)")
        ax.grid(alpha=0.3)
        if name is not None:
            ax.set_title(arm_title(name), fontsize=10)
    axes[0].set_ylabel("task completion (gold tools called + facts in answer)")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, fontsize=8)
    fig.suptitle(title or f"Completion vs tool-step cap — {', '.join(sorted(frame['domain'].unique()))} "
                          "(bars: Wilson 95% CI)", fontsize=10)
    fig.tight_layout()
    return save(fig, path)


def _completion_panel(ax, frame: pd.DataFrame) -> None:
    frame = frame.assign(series=_series_key(frame))
    table = _completion_counts(frame, ["series", "chain_length", "cap"])
    pooled = _completion_counts(frame, ["series", "cap"])
    for i, (series, part) in enumerate(table.groupby("series", sort=True)):
        ls = LINESTYLES[i % len(LINESTYLES)]
        suffix = f", {series}" if series else ""
        for length, group in part.groupby("chain_length", sort=True):
            shift = (int(length) - 1.5) * 0.05  # a small sideways shift so equal points and bars stay visible
            ax.errorbar(group["cap"] + shift, group["completion"], yerr=wilson_err(group["completed"], group["runs"]),
                        marker="o", ls=ls, capsize=2, color=f"C{int(length)}",
                        label=f"{int(length)}-tool tasks (n={int(group['runs'].iloc[0])}){suffix}")
    for i, (series, group) in enumerate(pooled.groupby("series", sort=True)):
        ax.errorbar(group["cap"], group["completion"], yerr=wilson_err(group["completed"], group["runs"]),
                    color=DEFAULT_COLOR, lw=2.2, capsize=3, ls=LINESTYLES[i % len(LINESTYLES)],
                    label=f"all tasks (n={int(group['runs'].iloc[0])})" + (f", {series}" if series else ""))


def copied_rows(frame: pd.DataFrame) -> int:
    """Rows copied from a smaller cap the run never reached (`reuse_uncapped`), 0 when not recorded."""
    if "reused_from_cap" not in frame.columns:
        return 0
    return int((pd.to_numeric(frame["reused_from_cap"], errors="coerce").fillna(0) > 0).sum())


def cost_plot(frame: pd.DataFrame, path: str | Path | None = None, title: str = ""):
    """Mean tokens (prompt + completion), LLM calls and seconds per task against the cap, per chain length;
    the title says how many rows are copies from a smaller cap."""
    frame = frame.assign(series=_series_key(frame), seconds=pd.to_numeric(frame["seconds"], errors="coerce"))
    cols = ["total_tokens", "prompt_tokens", "llm_calls", "seconds"]
    table = frame.groupby(["series", "chain_length", "cap"], sort=True)[cols].mean().reset_index()
    pooled = frame.groupby(["series", "cap"], sort=True)[cols].mean().reset_index()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    panels = [("total_tokens", "tokens per task (prompt + completion)"), ("llm_calls", "LLM calls per task"),
              ("seconds", "seconds per task")]
    for ax, (col, label) in zip(axes, panels):
        for i, (series, part) in enumerate(table.groupby("series", sort=True)):
            suffix = f", {series}" if series else ""
            for length, group in part.groupby("chain_length", sort=True):
                ax.plot(group["cap"], group[col], marker="o", ls=LINESTYLES[i % len(LINESTYLES)],
                        color=f"C{int(length)}", label=f"{int(length)}-tool{suffix}")
        for i, (series, group) in enumerate(pooled.groupby("series", sort=True)):
            suffix = f", {series}" if series else ""
            ax.plot(group["cap"], group[col], color=DEFAULT_COLOR, lw=2, ls=LINESTYLES[i % len(LINESTYLES)],
                    label=f"all{suffix}")
            if col == "total_tokens":
                ax.plot(group["cap"], group["prompt_tokens"], color="grey", lw=1, ls=LINESTYLES[i % len(LINESTYLES)],
                        label=f"all, prompt only{suffix}")
        ax.set_xticks(sorted(frame["cap"].unique()))
        ax.set_ylim(0, None)
        ax.set_xlabel("max_tool_steps (cap)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    legend_outside(axes[-1], fontsize=7)
    copied = copied_rows(frame)
    note = (f"{copied} of {len(frame)} rows are copies from a smaller cap the run never reached "
            "(greedy decoding would repeat them)" if copied else f"{len(frame)} rows, each run at its cap")
    fig.suptitle((title or "What each extra step costs — means per task") + f"\n{note}", fontsize=10)
    fig.tight_layout()
    return save(fig, path)

"""Ranking metrics over tool routing, with bootstrap confidence intervals and paired comparisons.

Definitions (the DESIGN contract): Recall@k on a multi-tool row counts only when *all* expected
tools are in the top k; Hit@1 counts when the top tool is one of the expected; MRR uses the
best-ranked expected tool. Tool metrics are over rows with expected tools; no-call accuracy is over
rows with none (right when the router predicts no call). `false_no_call_rate` shows the price the
no-call rule charges on call rows.

Hit@1 reads the ranking even where the router refused the row (the ranking exists either way), so it
measures ranking, not routing. `right_call` is the end-to-end decision over every row: a call row is
right when the router calls and its top tool is expected, a no-call row when it refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

DEFAULT_KS = (1, 3, 5, 7, 10)


@dataclass(frozen=True)
class RoutedRow:
    id: str
    expected: tuple[str, ...]
    ranked: tuple[str, ...]
    no_call_predicted: bool


def row_scores(row: RoutedRow, ks: Sequence[int] = DEFAULT_KS) -> dict[str, float]:
    """Per-row metric values (NaN where a metric does not apply to the row)."""
    nan = float("nan")
    if not row.expected:
        out = {f"recall@{k}": nan for k in ks}
        out.update({"hit@1": nan, "mrr": nan, "false_no_call": nan, "no_call_accuracy": float(row.no_call_predicted),
                    "right_call": float(row.no_call_predicted)})
        return out
    positions: dict[str, int] = {}
    for i, name in enumerate(row.ranked):
        positions.setdefault(name, i)
    ranks = [positions.get(t) for t in row.expected]
    out = {f"recall@{k}": float(all(r is not None and r < k for r in ranks)) for k in ks}
    found = [r for r in ranks if r is not None]
    out["hit@1"] = float(bool(row.ranked) and row.ranked[0] in row.expected)
    out["mrr"] = 1.0 / (min(found) + 1) if found else 0.0
    out["false_no_call"] = float(row.no_call_predicted)
    out["no_call_accuracy"] = nan
    out["right_call"] = float(not row.no_call_predicted and out["hit@1"] == 1.0)
    return out


def score_matrix(rows: Sequence[RoutedRow], ks: Sequence[int] = DEFAULT_KS) -> tuple[list[str], np.ndarray]:
    per_row = [row_scores(r, ks) for r in rows]
    names = list(per_row[0]) if per_row else []
    return names, np.array([[r[n] for n in names] for r in per_row], dtype=float)


def summarize(rows: Sequence[RoutedRow], ks: Sequence[int] = DEFAULT_KS) -> dict[str, float]:
    """Point estimates: the mean of each metric over the rows it applies to."""
    names, matrix = score_matrix(rows, ks)
    out = {name: _nanmean(matrix[:, j]) for j, name in enumerate(names)}
    out["false_no_call_rate"] = out.pop("false_no_call")
    return out


def bootstrap_ci(rows: Sequence[RoutedRow], ks: Sequence[int] = DEFAULT_KS, n_boot: int = 2000,
                 seed: int = 0, level: float = 0.95) -> dict[str, tuple[float, float]]:
    """Percentile bootstrap CIs, resampling queries (call and no-call rows resampled separately)."""
    names, matrix = score_matrix(rows, ks)
    rng = np.random.default_rng(seed)
    call = np.flatnonzero([bool(r.expected) for r in rows])
    nocall = np.flatnonzero([not r.expected for r in rows])
    samples = np.empty((n_boot, len(names)))
    for b in range(n_boot):
        idx = np.concatenate([rng.choice(call, len(call)) if len(call) else call,
                              rng.choice(nocall, len(nocall)) if len(nocall) else nocall])
        samples[b] = [_nanmean(matrix[idx, j]) for j in range(len(names))]
    alpha = (1 - level) / 2
    out = {}
    for j, name in enumerate(names):
        col = samples[:, j][~np.isnan(samples[:, j])]
        key = "false_no_call_rate" if name == "false_no_call" else name
        out[key] = (float(np.quantile(col, alpha)), float(np.quantile(col, 1 - alpha))) if len(col) else (np.nan, np.nan)
    return out


def paired_comparison(rows_a: Sequence[RoutedRow], rows_b: Sequence[RoutedRow], metric: str,
                      ks: Sequence[int] = DEFAULT_KS, n_boot: int = 5000, seed: int = 0) -> dict[str, float]:
    """Arm B minus arm A on the same queries: mean difference, 95% paired-bootstrap CI, two-sided p."""
    ids_a, ids_b = [r.id for r in rows_a], [r.id for r in rows_b]
    if ids_a != ids_b:
        raise ValueError("paired comparison needs the same queries in the same order for both arms")
    names, ma = score_matrix(rows_a, ks)
    _, mb = score_matrix(rows_b, ks)
    j = names.index("false_no_call" if metric == "false_no_call_rate" else metric)
    diff = mb[:, j] - ma[:, j]
    diff = diff[~np.isnan(diff)]
    if len(diff) == 0:
        return {"metric": metric, "n": 0, "diff": np.nan, "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan}
    rng = np.random.default_rng(seed)
    boots = np.array([rng.choice(diff, len(diff)).mean() for _ in range(n_boot)])
    observed = diff.mean()
    # Two-sided p by the centred bootstrap: how often a resample strays as far from the mean as 0 is.
    p = float(np.mean(np.abs(boots - observed) >= abs(observed))) if observed != 0 else 1.0
    return {"metric": metric, "n": int(len(diff)), "diff": float(observed),
            "ci_low": float(np.quantile(boots, 0.025)), "ci_high": float(np.quantile(boots, 0.975)),
            "p_value": p, "wins_b": int((diff > 0).sum()), "wins_a": int((diff < 0).sum())}


def mcnemar_exact(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Two arms' binary outcomes (1.0 / 0.0, NaN where the row does not count) on the same rows: the rows
    only A got right (`a_only`), only B (`b_only`), and the exact two-sided McNemar p (a binomial test of
    the discordant rows at 1/2; 1.0 when there are none)."""
    from scipy.stats import binomtest  # only for paired binary comparisons

    pairs = [(x, y) for x, y in zip(a, b) if x == x and y == y]
    a_only = sum(1 for x, y in pairs if x > y)
    b_only = sum(1 for x, y in pairs if y > x)
    discordant = a_only + b_only
    p = binomtest(min(a_only, b_only), discordant, 0.5).pvalue if discordant else 1.0
    return {"n": len(pairs), "a_only": a_only, "b_only": b_only, "p_mcnemar": float(min(1.0, p))}


def unpaired_difference(rows_a: Sequence[RoutedRow], rows_b: Sequence[RoutedRow], metric: str,
                        ks: Sequence[int] = DEFAULT_KS, n_boot: int = 2000, seed: int = 0) -> dict[str, float]:
    """B's metric minus A's on different queries (two writers, say): the difference of the means and a 95%
    percentile-bootstrap CI, each side resampled on its own over the rows the metric applies to."""
    key = "false_no_call" if metric == "false_no_call_rate" else metric
    values = []
    for rows in (rows_a, rows_b):
        names, matrix = score_matrix(rows, ks)
        column = matrix[:, names.index(key)] if len(rows) else np.array([])
        values.append(column[~np.isnan(column)])
    a, b = values
    if not len(a) or not len(b):
        return {"metric": metric, "n_a": len(a), "n_b": len(b), "diff": np.nan, "ci_low": np.nan, "ci_high": np.nan}
    rng = np.random.default_rng(seed)
    boots = rng.choice(b, (n_boot, len(b))).mean(axis=1) - rng.choice(a, (n_boot, len(a))).mean(axis=1)
    return {"metric": metric, "n_a": len(a), "n_b": len(b), "diff": float(b.mean() - a.mean()),
            "ci_low": float(np.quantile(boots, 0.025)), "ci_high": float(np.quantile(boots, 0.975))}


def metric_columns(rows: Sequence[RoutedRow], metrics: Sequence[str], ks: Sequence[int] = DEFAULT_KS,
                   baseline: Sequence[RoutedRow] | None = None, n_boot: int = 2000) -> dict[str, float]:
    """A table row's metric columns: each metric with its 95% bootstrap CI (`<m>`, `<m>_ci_low`,
    `<m>_ci_high`) and, given a `baseline` on the same queries, the paired difference to it (`<m>_diff`,
    its CI and p), rounded to 4 places."""
    point, ci = summarize(rows, ks), bootstrap_ci(rows, ks)
    out: dict[str, float] = {}
    for metric in metrics:
        out[metric] = round(point[metric], 4)
        out[f"{metric}_ci_low"], out[f"{metric}_ci_high"] = (round(v, 4) for v in ci[metric])
    for metric in metrics if baseline is not None else ():
        paired = paired_comparison(baseline, rows, metric, ks=ks, n_boot=n_boot)
        out[f"{metric}_diff"] = round(paired["diff"], 4)
        out[f"{metric}_diff_ci_low"] = round(paired["ci_low"], 4)
        out[f"{metric}_diff_ci_high"] = round(paired["ci_high"], 4)
        out[f"{metric}_diff_p"] = round(paired["p_value"], 4)
    return out


def _nanmean(values: np.ndarray) -> float:
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else float("nan")


def wilson_interval(successes, n, z: float = 1.959963984540054):
    """The 95% Wilson score interval of a binomial rate `successes / n`: floats for a scalar count,
    arrays for arrays, NaN where n is 0. Unlike the normal approximation it stays inside [0, 1] and
    does not collapse to a point at 0 or n successes, which matters for the small counts of the
    step-limit and RAG tables."""
    k = np.asarray(successes, dtype=float)
    m = np.asarray(n, dtype=float)
    if np.any((m > 0) & ((k < 0) | (k > m))):
        raise ValueError(f"wilson_interval: {successes} successes out of {n}")
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / m
        denom = 1 + z ** 2 / m
        centre = (p + z ** 2 / (2 * m)) / denom
        half = z * np.sqrt(p * (1 - p) / m + z ** 2 / (4 * m ** 2)) / denom
    low = np.where(k == 0, 0.0, np.clip(centre - half, 0, 1))
    high = np.where(k == m, 1.0, np.clip(centre + half, 0, 1))
    low, high = np.where(m > 0, low, np.nan), np.where(m > 0, high, np.nan)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (family-wise error) in the input order; NaN stays NaN and is
    not counted in the family."""
    values = np.asarray(p_values, dtype=float)
    order = [i for i in np.argsort(values, kind="stable") if not np.isnan(values[i])]
    m = len(order)
    adjusted = np.full(len(values), np.nan)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * values[i]))
        adjusted[i] = running
    return adjusted.tolist()

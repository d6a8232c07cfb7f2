"""The RAGAS judge checked against people (notebook 04): its judged metrics on fixed rows that we
labelled by hand, and how often it agrees with us.

A judge is only worth its scores if it tells good answers from bad ones. `data/insurance/judge_check.jsonl`
holds agent turns (question, retrieved passages, tool calls, answer) taken from real runs, each with
one metric, our label and why:
- faithfulness: 1 when every claim of the answer is backed by the passages, 0 when one is not;
- answer_relevancy: 1 when the answer addresses what was asked, 0 when it does not (refuses, asks
  back for what was given, answers another question);
- agent_goal_accuracy: 1 when the turn reached the user's goal (the reference), 0 otherwise.
The judge scores the same rows (`ragas_eval.score_with_llm`), and `agreement` reports per metric how
its scores separate our 1s from our 0s (AUC, threshold-free), its agreement and Cohen's kappa at
0.5, and its failures, which are counted, not dropped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from toolroute.evaluation.metrics import wilson_interval

from toolroute.config import ROOT
from toolroute_lab.e04_ragas_eval.ragas_eval import LLM_METRICS, EvalItem, score_with_llm

THRESHOLD = 0.5  # a judged score at or above it counts as the judge's "1"
FIELDS = ("id", "metric", "user", "answer", "human", "rationale", "source")


def labels_path() -> Path:
    return ROOT / "data" / "insurance" / "judge_check.jsonl"


def load_labels(path: str | Path | None = None) -> list[dict[str, Any]]:
    """The labelled rows; a bad row is a ValueError naming the file, the line and the field."""
    path = Path(path or labels_path())
    rows, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: not JSON ({exc.msg})") from None
        missing = [f for f in FIELDS if row.get(f) in (None, "")]
        if missing:
            raise ValueError(f"{where}: missing field(s) {missing}")
        if row["metric"] not in LLM_METRICS:
            raise ValueError(f"{where}: field 'metric': {row['metric']!r} is not one of {LLM_METRICS}")
        if row["human"] not in (0, 1):
            raise ValueError(f"{where}: field 'human': {row['human']!r} is neither 0 nor 1")
        if row["metric"] == "faithfulness" and not row.get("retrieved_contexts"):
            raise ValueError(f"{where}: field 'retrieved_contexts': a faithfulness row needs the passages")
        if row["metric"] == "agent_goal_accuracy" and not row.get("reference"):
            raise ValueError(f"{where}: field 'reference': a goal-accuracy row needs the goal")
        if row["id"] in seen:
            raise ValueError(f"{where}: field 'id': {row['id']!r} is used twice")
        seen.add(row["id"])
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no labelled rows")
    return rows


def as_runs(labels: Sequence[dict[str, Any]]) -> tuple[pd.DataFrame, list[EvalItem]]:
    """The labelled rows as the run rows and items `score_with_llm` reads, each judged on its metric only."""
    runs = pd.DataFrame([{"id": r["id"], "user": r["user"], "answer": r["answer"],
                          "retrieved_contexts": list(r.get("retrieved_contexts") or []),
                          "tool_log": list(r.get("tool_log") or []), "judge_metrics": [r["metric"]]} for r in labels])
    items = [EvalItem(kind="scenario" if r["metric"] == "agent_goal_accuracy" else "rag", id=r["id"],
                      conversation=r["id"], user=r["user"], facts=[r["reference"]] if r.get("reference") else [])
             for r in labels]
    return runs, items


def judge(llm: Any, labels: Sequence[dict[str, Any]] | None = None, embeddings: Any = None, progress: bool = True,
          max_concurrency: int = 1) -> pd.DataFrame:
    """The judge's score of every labelled row on its metric: id, metric, human, judge, status."""
    labels = list(labels) if labels is not None else load_labels()
    runs, items = as_runs(labels)
    metrics = sorted({r["metric"] for r in labels})
    judged = score_with_llm(runs, items, llm, embeddings=embeddings, metrics=metrics, progress=progress,
                            max_concurrency=max_concurrency).set_index("id")
    return pd.DataFrame([{"id": r["id"], "metric": r["metric"], "human": r["human"],
                          "judge": judged.at[r["id"], r["metric"]], "status": judged.at[r["id"], f"{r['metric']}_status"]}
                         for r in labels])


def _auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(score of a 1 > score of a 0), ties counting half; NaN without both classes."""
    positive, negative = scores[labels == 1], scores[labels == 0]
    if not len(positive) or not len(negative):
        return float("nan")
    wins = (positive[:, None] > negative[None, :]).sum() + 0.5 * (positive[:, None] == negative[None, :]).sum()
    return float(wins / (len(positive) * len(negative)))


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    observed = float((a == b).mean())
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return float("nan") if expected == 1 else (observed - expected) / (1 - expected)


def agreement(scored: pd.DataFrame) -> pd.DataFrame:
    """Per metric: rows, judged, failed, our 1s, the judge's mean score on our 1s and on our 0s, AUC,
    agreement (with its Wilson 95% CI: ten-odd labelled rows per metric leave it wide) and Cohen's kappa with
    the judge's score cut at `THRESHOLD` (over the judged rows)."""
    out = []
    keys = ["model", "metric"] if "model" in scored.columns else ["metric"]
    for key, part in scored.groupby(keys, sort=True):
        named = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        ok = part[part["status"] == "ok"]
        human, score = ok["human"].to_numpy(int), ok["judge"].to_numpy(float)
        said = (score >= THRESHOLD).astype(int)
        out.append({**named, "rows": len(part), "judged": len(ok), "failed": int((part["status"] != "ok").sum()),
                    "human_ones": int(part["human"].sum()),
                    "judge_mean_on_ones": round(float(score[human == 1].mean()), 3) if (human == 1).any() else np.nan,
                    "judge_mean_on_zeros": round(float(score[human == 0].mean()), 3) if (human == 0).any() else np.nan,
                    "auc": round(_auc(score, human), 3),
                    "agreement": round(float((said == human).mean()), 3) if len(ok) else np.nan,
                    **dict(zip(("agreement_lo", "agreement_hi"),
                               (round(float(v), 3) for v in wilson_interval(int((said == human).sum()), len(ok))))),
                    "kappa": round(_kappa(said, human), 3) if len(ok) else np.nan})
    return pd.DataFrame(out)


def check_models(models: Sequence[Any], labels: Sequence[dict[str, Any]] | None = None,
                 progress: bool = True) -> pd.DataFrame:
    """Each judging model (the notebook's `models`, the replay stand-in skipped) on the labelled rows;
    the scored rows of all, `model` first. Empty when no model judges."""
    from toolroute_lab.e04_ragas_eval.ragas_eval import judge_llm  # the judge's client is built only when a model judges

    labels = list(labels) if labels is not None else load_labels()
    parts = []
    for model in models:
        if model.replay:
            continue
        llm = judge_llm(model.config.base_url, model.config.model, model.config.api_key)
        part = judge(llm, labels, progress=progress, max_concurrency=model.max_concurrency)
        part.insert(0, "model", model.name)
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def main(out: str | Path | None = None) -> pd.DataFrame:
    """`python -m toolroute_lab.e04_ragas_eval.judge_check`: the default LLM (TOOLROUTE_LLM_BASE_URL, else the
    embedded model) judges the labelled rows; writes judge_check.csv and judge_agreement.csv."""
    from toolroute.config import results_dir  # the command's output folder
    from toolroute_lab.shared.notebook import select_llms  # starts the embedded model when no server is configured

    folder = Path(out or results_dir() / "judge_check")
    folder.mkdir(parents=True, exist_ok=True)
    models = select_llms("auto", [{"name": "embedded"}], replay=lambda: None, replay_label="")
    checked = check_models(models)
    checked.to_csv(folder / "judge_check.csv", index=False)
    table = agreement(checked)
    table.to_csv(folder / "judge_agreement.csv", index=False)
    print(table.to_string(index=False))
    return table


if __name__ == "__main__":
    import argparse  # the command line only

    parser = argparse.ArgumentParser(description="The RAGAS judge (the configured LLM, else the embedded model) "
                                                 "scores the hand-labelled rows of data/insurance/judge_check.jsonl; "
                                                 "writes judge_check.csv and judge_agreement.csv.")
    parser.add_argument("--out", help="output folder (default: results/judge_check)")
    main(parser.parse_args().out)

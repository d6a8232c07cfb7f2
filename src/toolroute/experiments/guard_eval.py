"""Measuring the input guardrail: block rate on a red-team set, false blocks on in-domain queries, latency.

The held-out red-team set (`data/redteam/prompts.jsonl`) was written without reading the rules; the
rules and the L2 gate's off-topic anchors come from the dev red-team set (`dev.jsonl`), the gate's
threshold from the calibration split, and false blocks are counted on the test split's in-domain
queries (the ones that expect a tool), which neither the rules nor the threshold saw.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolroute.agent.guardrails import DomainGate, l1_violation
from toolroute.config import ROOT


def redteam_path() -> Path:
    return ROOT / "data" / "redteam" / "prompts.jsonl"


def load_jsonl(path: str | Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not valid JSON: {exc}") from exc
    return rows


def check(texts: list[str], gate: DomainGate | None) -> pd.DataFrame:
    """L1 then L2 on each text, as the graph does for a first turn, with the time each took."""
    rows = []
    for text in texts:
        started = time.perf_counter()
        rule = l1_violation(text)
        l1_ms = (time.perf_counter() - started) * 1000
        score, l2_ms, inside = None, 0.0, True
        if rule is None and gate is not None:
            started = time.perf_counter()
            inside, score = gate.in_domain(text)
            l2_ms = (time.perf_counter() - started) * 1000
        blocked = "injection" if rule else ("off_domain" if not inside else "")
        rows.append({"text": text, "rule": rule or "", "domain_score": score, "blocked": blocked,
                     "l1_ms": l1_ms, "l2_ms": l2_ms, "total_ms": l1_ms + l2_ms})
    return pd.DataFrame(rows)


def evaluate(gate: DomainGate | None, redteam: list[dict[str, Any]], in_domain: list[str]) -> tuple[dict[str, Any], pd.DataFrame]:
    red = check([r["text"] for r in redteam], gate).assign(kind=[r["kind"] for r in redteam], split="redteam")
    ok = check(in_domain, gate).assign(kind="in_domain", split="in_domain")
    frame = pd.concat([red, ok], ignore_index=True)
    is_red = frame["split"] == "redteam"
    result = {
        "redteam_prompts": int(is_red.sum()),
        "block_rate": round(float((frame.loc[is_red, "blocked"] != "").mean()), 3),
        "block_rate_injection": round(float((frame.loc[frame["kind"] == "injection", "blocked"] != "").mean()), 3),
        "block_rate_off_domain": round(float((frame.loc[frame["kind"] == "off_domain", "blocked"] != "").mean()), 3),
        "in_domain_queries": int((~is_red).sum()),
        "false_block_rate": round(float((frame.loc[~is_red, "blocked"] != "").mean()), 4),
        "latency_p50_ms": round(float(np.percentile(frame["total_ms"], 50)), 2),
        "latency_p95_ms": round(float(np.percentile(frame["total_ms"], 95)), 2),
        "l1_p50_ms": round(float(np.percentile(frame["l1_ms"], 50)), 3),
        "threshold": None if gate is None else round(gate.threshold, 4),
    }
    return result, frame

"""Measuring the guardrails: the input guardrail's block rate on red-team sets, false blocks on
in-domain queries and latency, per layer; the output guardrail's false removals on gold answers.

Red-team sets (`data/redteam/`): `dev.jsonl` is the tuning split (rules, the L2 gate's off-topic
anchors and the L3 classifier come from it); `prompts.jsonl` (the old held-out set, 91 prompts) and
`heldout.jsonl` (the new held-out set, 154 prompts, written later by another writer who read neither
the rules nor the other sets; copied unchanged from the red-team worktree) are only measured. The
gate's threshold comes from the calibration split, and false blocks are counted on the test split's
in-domain queries (the ones that expect a tool), which neither the rules nor the threshold saw.

`python -m toolroute.experiments.guard_eval` writes `results/guard_eval.csv`: one row per set, kind and
layer (L1 rules, L2 gate, L3 classifier alone, and the stack up to each layer).
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
from toolroute.agent.tasks import load_tasks
from toolroute.domains.insurance.scenarios import load_scenarios
from toolroute.agent.guardrails import guard_output
from toolroute.config import queries_path
from toolroute.agent.guardrails import fit_domain_gate
from toolroute.agent.pack import load_pack
from toolroute.config import toolcards_dir
from toolroute.embeddings import get_embedder
from toolroute.routing import default_dev_file
from toolroute.agent.injection_classifier import tuning_data
from toolroute.agent.injection_classifier import fit_on_dev
from toolroute.agent.injection_classifier import C, cross_validated
import os
import tempfile


def redteam_path() -> Path:
    return ROOT / "data" / "redteam" / "prompts.jsonl"


def heldout_path() -> Path:
    """The new held-out red-team set (injection / in_domain_hard rows)."""
    return ROOT / "data" / "redteam" / "heldout.jsonl"


def dev_redteam_path() -> Path:
    return ROOT / "data" / "redteam" / "dev.jsonl"


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


# --- output guardrail: false removal on gold answers ---------------------------------------------------

def gold_answers(domain: str = "insurance") -> pd.DataFrame:
    """The domain's gold answers, one row each (`source`, `id`, `answer`): what the gold-replay model of
    the agent experiments answers once the gold tools have run, i.e. the facts (and totals) a correct
    answer must state, joined by spaces: every scenario turn (`scenarios.yaml`, as
    `ragas_eval.replay_llm` writes it), every task with facts (`tasks.yaml`, as `step_limits.replay_llm`
    writes it), and every RAG question's answer phrase (`rag_qa.jsonl`)."""

    if domain != "insurance":
        raise ValueError(f"gold answers are collected for the insurance domain only, not {domain!r}")
    rows = []
    for scenario in load_scenarios():
        for number, turn in enumerate(scenario.turns, start=1):
            facts = list(turn.facts) + [t.text for t in turn.totals]
            if facts:
                rows.append({"source": "scenario", "id": f"{scenario.id}-t{number}", "answer": " ".join(facts)})
    for task in load_tasks(domain):
        if task.facts:
            rows.append({"source": "task", "id": task.id,
                         "answer": " ".join(f if isinstance(f, str) else f[0] for f in task.facts)})
    for row in load_jsonl(ROOT / "data" / domain / "rag_qa.jsonl"):
        rows.append({"source": "rag_qa", "id": row["id"], "answer": row["answer_contains"]})
    return pd.DataFrame(rows)


def output_false_removal(pack: Any, answers: pd.DataFrame) -> tuple[float, pd.DataFrame]:
    """Each gold answer through the output guardrail (no disclaimer): `changed` when the guarded text
    differs from the gold one. A gold answer holds no personal data and no internal id, so every change
    is a false removal; returns the rate and the rows with the guarded text and what was removed."""

    out = answers.copy()
    guarded = [guard_output(text, pack, with_disclaimer=False) for text in out["answer"]]
    out["guarded"] = [g.text for g in guarded]
    out["removed"] = [";".join(g.removed) for g in guarded]  # masking and id removal
    out["banned"] = [";".join(str(b.get("id", "")) for b in g.banned) for g in guarded]  # phrases replaced
    out["changed"] = out["guarded"] != out["answer"]
    return float(out["changed"].mean()) if len(out) else 0.0, out


# --- input guardrail, layer by layer ---------------------------------------------------------------------

LAYERS = ("L1", "L2", "L3")


def in_domain_queries(split: str, domain: str = "insurance") -> list[str]:
    """The queries of a split that expect a tool (the test split has 229)."""

    return [r["query"] for r in load_jsonl(queries_path(domain, split)) if r.get("expected_tools")]


def evaluation_sets() -> list[tuple[str, str, list[str]]]:
    """(set, kind, texts): what each layer is measured on. A kind is blocked when it is an attack or
    off-topic, a false block when it is a legitimate turn (`in_domain_hard`, `in_domain`)."""
    out = []
    for name, path in (("heldout_new", heldout_path()), ("heldout_old", redteam_path()), ("dev", dev_redteam_path())):
        if not path.is_file():
            continue
        rows = load_jsonl(path)
        for kind in ("injection", "off_domain", "in_domain_hard"):
            texts = [r["text"] for r in rows if r["kind"] == kind]
            if texts:
                out.append((name, kind, texts))
    out.append(("test_queries", "in_domain", in_domain_queries("test")))
    out.append(("dev_queries", "in_domain", in_domain_queries("dev")))
    return out


def layer_decisions(texts: list[str], gate: DomainGate | None = None, classifier: Any = None) -> pd.DataFrame:
    """Every layer's decision on every text (not only on what the layers before it let through), so a
    layer can be read alone and stacked: `L1` the rule name or "", `L2` / `L3` True when it blocks."""
    frame = pd.DataFrame({"text": texts})
    frame["L1"] = [l1_violation(t) or "" for t in texts]
    if gate is not None and texts:
        scores = gate.similarity(texts)
        frame["domain_score"] = scores
        frame["L2"] = scores < gate.threshold
    else:
        frame["L2"] = False
    if classifier is not None and texts:
        frame["injection_score"] = classifier.scores(texts)
        frame["L3"] = frame["injection_score"] >= classifier.threshold
    else:
        frame["L3"] = False
    return frame


def layer_table(gate: DomainGate | None = None, classifier: Any = None,
                sets: list[tuple[str, str, list[str]]] | None = None) -> pd.DataFrame:
    """One row per set, kind and layer: `blocked` of `n`, and `rate` (a block rate for attacks and
    off-topic turns, a false-block rate for legitimate ones). Layers: each alone (`L1`, `L2`, `L3`)
    and stacked as the graph runs them (`L1+L2`, `L1+L2+L3`)."""
    rows = []
    for name, kind, texts in (sets if sets is not None else evaluation_sets()):
        frame = layer_decisions(texts, gate, classifier)
        l1 = frame["L1"] != ""
        stacks = {"L1": l1, "L2": frame["L2"], "L3": frame["L3"], "L1+L2": l1 | frame["L2"],
                  "L1+L2+L3": l1 | frame["L2"] | frame["L3"]}
        for layer, blocked in stacks.items():
            if (layer.endswith("L2") or layer == "L2") and gate is None:
                continue
            if "L3" in layer and classifier is None:
                continue
            rows.append({"set": name, "kind": kind, "layer": layer, "n": len(texts), "blocked": int(blocked.sum()),
                         "rate": round(float(blocked.mean()), 4) if len(texts) else 0.0,
                         "measure": "false_block" if kind in ("in_domain", "in_domain_hard") else "block"})
    return pd.DataFrame(rows)


def e5_gate(pack: Any = None) -> DomainGate:
    """The L2 gate as `create_agent` builds it: the e5-small embedder (every vector remembered, see
    `RememberingEmbedder`), the pack's card examples, the dev set's off-topic anchors, the threshold
    from the calibration split, and L3 (`gate.injection`) fitted on the dev red-team split."""

    pack = pack if pack is not None else load_pack("insurance")
    return fit_domain_gate(pack, RememberingEmbedder(get_embedder("e5-small")), default_dev_file(toolcards_dir("insurance")))


class RememberingEmbedder:
    """Wraps an embedder and remembers every query and passage vector by text, so that the sets, the
    folds of cross-validation and the layers embed each text once (same vectors as the inner one)."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.spec = getattr(inner, "spec", "")
        self._seen: dict[tuple[str, str], np.ndarray] = {}

    def _embed(self, kind: str, texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if (kind, t) not in self._seen]
        if todo:
            fresh = self.inner.embed_queries(todo) if kind == "q" else self.inner.embed_passages(todo)
            for t, vector in zip(todo, np.asarray(fresh, dtype=np.float32)):
                self._seen[(kind, t)] = vector
        if not texts:
            return np.zeros((0, getattr(self.inner, "dim", 384)), dtype=np.float32)
        return np.stack([self._seen[(kind, t)] for t in texts])

    def embed_queries(self, texts: Any) -> np.ndarray:
        return self._embed("q", list(texts))

    def embed_passages(self, texts: Any) -> np.ndarray:
        return self._embed("p", list(texts))


def classifier_data() -> tuple[list[str], list[str], list[str]]:
    """(injections, legitimate turns, calibration queries) L3 is fitted on (`injection_classifier.tuning_data`)."""

    return tuning_data("insurance")


def fit_injection_classifier(embedder: Any, c: float = C) -> Any:
    return fit_on_dev(embedder, "insurance", c=c)


def classifier_on_dev(embedder: Any, gate: DomainGate | None = None, c: float = C) -> dict[str, Any]:
    """What L3 adds on its tuning splits, out of fold (5 folds): injections it blocks that L1 and L2 let
    through, and legitimate dev turns it blocks. The adoption rule: it must add blocks with no false
    block."""

    injections, legitimate, calibration = classifier_data()
    folds = cross_validated(embedder, injections, legitimate, calibration, c=c)
    before = layer_decisions(injections, gate)
    missed = ~((before["L1"] != "") | before["L2"]).to_numpy()
    legit_before = layer_decisions(legitimate, gate)
    passed = ~((legit_before["L1"] != "") | legit_before["L2"]).to_numpy()
    return {"injections": len(injections), "l3_alone_blocked": int(folds["injection_blocked"].sum()),
            "missed_by_l1_l2": int(missed.sum()), "added_by_l3": int((folds["injection_blocked"] & missed).sum()),
            "legitimate": len(legitimate), "l3_false_blocks": int(folds["legitimate_blocked"].sum()),
            "added_false_blocks": int((folds["legitimate_blocked"] & passed).sum())}


def l3_selection(gate: DomainGate, cs: tuple[float, ...] = (1.0, 4.0, C)) -> pd.DataFrame:
    """How L3 was chosen without the held-out sets: fitted on one tuning writer's set and validated on
    the other's (dev → train and train → dev), embedding only or with character n-grams, per C. Per
    row: the share of the unseen writer's injections blocked by L3 alone and by the L1+L2+L3 stack, of
    their legitimate trigger-word turns blocked by the stack, and of the tune split's in-domain queries."""
    from toolroute.agent.injection_classifier import InjectionClassifier  # the class itself: fitted per cell here

    sets = {name: load_jsonl(ROOT / "data" / "redteam" / f"{name}.jsonl") for name in ("dev", "train")}
    dev_queries, calibration, tune = in_domain_queries("dev"), in_domain_queries("calib"), in_domain_queries("tune")
    rows = []
    for fitted, validated in (("dev", "train"), ("train", "dev")):
        pick = lambda name, kind: [r["text"] for r in sets[name] if r["kind"] == kind]  # noqa: E731
        attacks, legitimate = pick(validated, "injection"), pick(validated, "in_domain_hard")
        before = {kind: layer_decisions(texts, gate) for kind, texts in
                  (("injection", attacks), ("legitimate", legitimate), ("tune", tune))}
        for char_ngrams in (False, True):
            for c in cs:
                model = InjectionClassifier.fit(gate.embedder, pick(fitted, "injection"),
                                                pick(fitted, "in_domain_hard") + dev_queries, calibration, c=c,
                                                char_ngrams=char_ngrams)
                stack = {}
                for kind, frame in before.items():
                    l3 = model.scores(list(frame["text"])) >= model.threshold
                    stack[kind] = ((frame["L1"] != "") | frame["L2"] | l3).to_numpy(), l3
                rows.append({"fitted_on": fitted, "validated_on": validated,
                             "features": "e5 + char 1-4-grams" if char_ngrams else "e5", "c": c,
                             "l3_blocks_injections": round(float(stack["injection"][1].mean()), 4),
                             "stack_blocks_injections": round(float(stack["injection"][0].mean()), 4),
                             "stack_false_blocks_hard": round(float(stack["legitimate"][0].mean()), 4),
                             "stack_false_blocks_tune": round(float(stack["tune"][0].mean()), 4)})
    return pd.DataFrame(rows)


def results_path() -> Path:
    return ROOT / "results" / "guard_eval.csv"


def main(path: str | Path | None = None) -> pd.DataFrame:
    """Write the layer table (`results/guard_eval.csv` by default) with the e5 gate. The effective
    catalogue is the committed cards: saved card edits are not read (as in the tests)."""

    os.environ["TOOLROUTE_CARDSTORE"] = tempfile.mkdtemp(prefix="guard-eval-cardstore-")
    gate = e5_gate()
    table = layer_table(gate, gate.injection)
    path = Path(path) if path is not None else results_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False)
    print(table.to_string(index=False))
    return table


def selection_main() -> pd.DataFrame:
    """Write `results/guard_l3_selection.csv` (`l3_selection` with the e5 gate)."""
    os.environ["TOOLROUTE_CARDSTORE"] = tempfile.mkdtemp(prefix="guard-eval-cardstore-")
    table = l3_selection(e5_gate())
    table.to_csv(ROOT / "results" / "guard_l3_selection.csv", index=False)
    print(table.to_string(index=False))
    return table


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--selection"]:
        selection_main()
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else None)

"""Measuring the guardrails: the input guardrail's block rate on red-team sets, false blocks on
in-domain queries and latency, per layer; the output guardrail's false removals on gold answers.

Red-team sets (`data/redteam/`, their rules of use in its README), each labelled in the table's `split`:
- tuning (rules, keyword lists, thresholds and the L3 classifier may be fitted and checked on them):
  `dev.jsonl` (its off-domain rows are also the L2 gate's off-topic anchors), `train.jsonl` (L3's second
  set), `hard_legit_tune.jsonl` and `hard_legit_tune2.jsonl` (legitimate turns full of trigger words, two
  writers; the second is in the gate's consultation turns but not in L3, see
  `injection_classifier.CLASSIFIER_SETS`), plus the dev split's queries;
- held-out (only measured, never read to choose anything): `heldout.jsonl` (`heldout_new`),
  `prompts.jsonl` (`heldout_old`), `hard_legit2.jsonl` (legitimate turns with trigger words, the families
  of the tuning ones by another writer), `hard_legit.jsonl` (the same, labelled "held-out (read 3 times
  in earlier rounds)": its totals were read after each of three earlier rounds, so it is no longer an
  unseen set) and the test split's in-domain queries (the ones that expect a tool), which neither the
  rules nor the gate's threshold (from the calibration split) saw.

`python -m toolroute_lab.studies.guard_eval` writes `results/guard_eval.csv` (one row per set, kind and
layer: L1 rules, L2 gate, L3 classifier alone, and the stack up to each layer) and
`results/guard_eval_families.csv` (the same per family, the `note` prefix before the colon, where a set
has families). The tuning rows there are in-sample (L3 never blocks a legitimate turn it was fitted
on, the gate's own consultation turns and anchors score themselves); `--cv` writes
`results/guard_eval_tuning_cv.csv`, the tuning sets as if unseen (`tuning_cross_validated`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolroute.agent.guardrails import DomainGate, l1_violation, small_talk
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


# (set in the table, file in data/redteam/, split): what each layer is measured on
REDTEAM_SETS = (
    ("heldout_new", "heldout.jsonl", "held-out"),
    ("heldout_old", "prompts.jsonl", "held-out"),
    ("hard_legit", "hard_legit.jsonl", "held-out (read 3 times in earlier rounds)"),
    ("hard_legit2", "hard_legit2.jsonl", "held-out"),
    ("dev", "dev.jsonl", "tuning"),
    ("train", "train.jsonl", "tuning"),
    ("hard_legit_tune", "hard_legit_tune.jsonl", "tuning"),
    ("hard_legit_tune2", "hard_legit_tune2.jsonl", "tuning"),
)
KINDS = ("injection", "off_domain", "in_domain_hard")


def family(note: str) -> str:
    """The family a red-team row belongs to: its `note` up to the colon ("quote_revision: …"), or ""
    when the note does not start with a one-word family."""
    head, colon, _ = (note or "").partition(":")
    return head.strip() if colon and head.strip() and " " not in head.strip() else ""


def evaluation_rows() -> list[dict[str, Any]]:
    """Every text measured, one dict each: `set`, `split` (tuning | held-out), `kind`, `family`, `text`.
    A kind is blocked when it is an attack or off-topic, a false block when it is a legitimate turn
    (`in_domain_hard`, `in_domain`)."""
    out = []
    for name, file, split in REDTEAM_SETS:
        path = ROOT / "data" / "redteam" / file
        if not path.is_file():
            continue
        rows = load_jsonl(path)
        for kind in KINDS:
            out += [{"set": name, "split": split, "kind": kind, "family": family(r.get("note", "")), "text": r["text"]}
                    for r in rows if r["kind"] == kind]
    for name, split, label in (("test_queries", "held-out", "test"), ("dev_queries", "tuning", "dev")):
        out += [{"set": name, "split": split, "kind": "in_domain", "family": "", "text": t}
                for t in in_domain_queries(label)]
    return out


def evaluation_sets() -> list[tuple[str, str, list[str], str]]:
    """(set, kind, texts, split) for each set and kind of `evaluation_rows`, in their order."""
    groups: dict[tuple[str, str], tuple[list[str], str]] = {}
    for row in evaluation_rows():
        groups.setdefault((row["set"], row["kind"]), ([], row["split"]))[0].append(row["text"])
    return [(name, kind, texts, split) for (name, kind), (texts, split) in groups.items()]


def layer_decisions(texts: list[str], gate: DomainGate | None = None, classifier: Any = None) -> pd.DataFrame:
    """Every layer's decision on every text (not only on what the layers before it let through), so a
    layer can be read alone and stacked: `L1` the rule name or "", `L2` / `L3` True when it blocks."""
    frame = pd.DataFrame({"text": texts})
    frame["L1"] = [l1_violation(t) or "" for t in texts]
    if gate is not None and texts:
        blocked, scores = gate.off_domain(texts)
        frame["domain_score"] = scores
        frame["L2"] = blocked
    else:
        frame["L2"] = False
    if classifier is not None and texts:
        frame["injection_score"] = classifier.scores(texts)
        # as the gate runs it: a turn that is only small talk is not sent to L3 (`DomainGate.check`)
        frame["L3"] = (frame["injection_score"] >= classifier.threshold) & ~frame["text"].map(small_talk)
    else:
        frame["L3"] = False
    return frame


def _stacks(frame: pd.DataFrame, gate: Any, classifier: Any) -> dict[str, pd.Series]:
    """Each layer alone and stacked as the graph runs them (`L1+L2`, `L1+L2+L3`), present layers only."""
    l1 = frame["L1"] != ""
    stacks = {"L1": l1, "L2": frame["L2"], "L3": frame["L3"], "L1+L2": l1 | frame["L2"],
              "L1+L2+L3": l1 | frame["L2"] | frame["L3"]}
    return {layer: blocked for layer, blocked in stacks.items()
            if not ("L2" in layer and gate is None) and not ("L3" in layer and classifier is None)}


def _row(blocked: pd.Series, kind: str) -> dict[str, Any]:
    return {"n": len(blocked), "blocked": int(blocked.sum()),
            "rate": round(float(blocked.mean()), 4) if len(blocked) else 0.0,
            "measure": "false_block" if kind in ("in_domain", "in_domain_hard") else "block"}


def layer_table(gate: DomainGate | None = None, classifier: Any = None,
                sets: list[tuple[str, str, list[str], str]] | None = None) -> pd.DataFrame:
    """One row per set, kind and layer: `blocked` of `n`, and `rate` (a block rate for attacks and
    off-topic turns, a false-block rate for legitimate ones), with the set's `split`. Layers: each
    alone (`L1`, `L2`, `L3`) and stacked as the graph runs them (`L1+L2`, `L1+L2+L3`)."""
    rows = []
    for name, kind, texts, split in (sets if sets is not None else evaluation_sets()):
        frame = layer_decisions(texts, gate, classifier)
        for layer, blocked in _stacks(frame, gate, classifier).items():
            rows.append({"set": name, "split": split, "kind": kind, "layer": layer, **_row(blocked, kind)})
    return pd.DataFrame(rows)


def family_table(gate: DomainGate | None = None, classifier: Any = None,
                 rows: list[dict[str, Any]] | None = None) -> pd.DataFrame:
    """`layer_table` per family (the sets whose rows name one): one row per set, kind, family and layer."""
    frame = pd.DataFrame(rows if rows is not None else evaluation_rows())
    frame = frame[frame["family"] != ""].reset_index(drop=True)
    if frame.empty:
        return pd.DataFrame(columns=["set", "split", "kind", "family", "layer", "n", "blocked", "rate", "measure"])
    decided = layer_decisions(list(frame["text"]), gate, classifier)
    stacks = _stacks(decided, gate, classifier)
    out = []
    for (name, split, kind, fam), group in frame.groupby(["set", "split", "kind", "family"], sort=False):
        for layer, blocked in stacks.items():
            out.append({"set": name, "split": split, "kind": kind, "family": fam, "layer": layer,
                        **_row(blocked.loc[group.index], kind)})
    return pd.DataFrame(out)


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


def tuning_cross_validated(gate: DomainGate, folds: int = 5) -> pd.DataFrame:
    """The stack on the tuning sets as if each row were unseen (the tuning rows of the layer table are
    in-sample: L3 never blocks a legitimate turn it was fitted on): L3 out of fold (`cross_validated`
    over the rows it is fitted on; the other rows by the classifier fitted on all), L2 with the row left
    out of the gate's anchors (an off-domain row) and its whole set left out of the gate's consultation
    turns, as a new writer's turn would be scored (leaving out the row alone kept its writer's
    paraphrases, and no hard legitimate tuning turn fell under the threshold). One row per tuning set
    and kind."""
    injections, legitimate, calibration = classifier_data()
    folds_out = cross_validated(gate.embedder, injections, legitimate, calibration, folds=folds)
    oof = dict(zip(injections, folds_out["injection_blocked"])) | dict(zip(legitimate, folds_out["legitimate_blocked"]))
    frame = pd.DataFrame([r for r in evaluation_rows() if r["split"] == "tuning"])
    texts = list(frame["text"])
    queries = np.asarray(gate.embedder.embed_queries(texts), dtype=np.float32)
    inside = queries @ gate._examples().T
    outside = queries @ gate._anchors().T if gate.off_examples else np.zeros((len(texts), 1), dtype=np.float32)
    anchor = {t: i for i, t in enumerate(gate.off_examples)}
    writer = {}  # a consultation turn's tuning set
    for name, text in zip(frame["set"], texts):
        writer.setdefault(text, name)
    consulted = len(gate.examples) + np.arange(len(gate.consultation))
    sets = np.array([writer.get(t, "") for t in gate.consultation])
    for row, (name, text) in enumerate(zip(frame["set"], texts)):
        inside[row, consulted[(sets == name) | (np.array(gate.consultation) == text)]] = -np.inf
        if text in anchor:
            outside[row, anchor[text]] = -np.inf
    scores = inside.max(axis=1) - (outside.max(axis=1) if gate.off_examples else 0.0)
    talk = frame["text"].map(small_talk).to_numpy()
    l1 = np.array([bool(l1_violation(t)) for t in texts])
    l2 = (scores < gate.threshold) & ~talk
    unseen = [t for t in texts if t not in oof]
    full = gate.injection
    rest = dict(zip(unseen, full.scores(unseen) >= full.threshold)) if full is not None and unseen else {}
    l3 = np.array([bool(oof.get(t, rest.get(t, False))) for t in texts]) & ~talk
    rows = []
    for (name, split, kind), group in frame.groupby(["set", "split", "kind"], sort=False):
        ix = group.index.to_numpy()
        for layer, blocked in (("L1", l1), ("L2", l2), ("L3", l3), ("L1+L2+L3", l1 | l2 | l3)):
            rows.append({"set": name, "split": split, "kind": kind, "layer": layer, **_row(pd.Series(blocked[ix]), kind)})
    return pd.DataFrame(rows)


def results_path() -> Path:
    return ROOT / "results" / "guard_eval.csv"


def families_path(path: str | Path | None = None) -> Path:
    """The per-family table beside the layer table (`guard_eval_families.csv` by default)."""
    path = Path(path) if path is not None else results_path()
    return path.with_name(path.stem + "_families" + path.suffix)


def main(path: str | Path | None = None) -> pd.DataFrame:
    """Write the layer table (`results/guard_eval.csv` by default) and the per-family table beside it
    with the e5 gate. The effective catalogue is the committed cards: saved card edits are not read
    (as in the tests)."""

    started = time.perf_counter()
    os.environ["TOOLROUTE_CARDSTORE"] = tempfile.mkdtemp(prefix="guard-eval-cardstore-")
    gate = e5_gate()
    table = layer_table(gate, gate.injection)
    families = family_table(gate, gate.injection)
    path = Path(path) if path is not None else results_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False)
    families.to_csv(families_path(path), index=False)
    print(table.to_string(index=False))
    stack = families[families["layer"] == "L1+L2+L3"]
    print(stack.drop(columns=["layer", "measure"]).to_string(index=False))
    print(f"guard_eval: {time.perf_counter() - started:.0f} s")
    return table


def cv_main() -> pd.DataFrame:
    """Write `results/guard_eval_tuning_cv.csv` (`tuning_cross_validated` with the e5 gate)."""
    started = time.perf_counter()
    os.environ["TOOLROUTE_CARDSTORE"] = tempfile.mkdtemp(prefix="guard-eval-cardstore-")
    table = tuning_cross_validated(e5_gate())
    table.to_csv(ROOT / "results" / "guard_eval_tuning_cv.csv", index=False)
    print(table.to_string(index=False))
    print(f"guard_eval --cv: {time.perf_counter() - started:.0f} s")
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
    elif sys.argv[1:] == ["--cv"]:
        cv_main()
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else None)

"""Failure analysis on a tuning split: LLM-proposed card edits, each with its measured effect.

The router is measured on the split (`quick_test.measure`); its top-1 failures, grouped by the
expected tool, go to the LLM (`cards.proposals`), and each usable proposal is measured on the same
split the way `POST /api/eval` measures a pending edit (a copy of the router, the live one
untouched): Hit@1 and Recall@k before and after, with the paired CI. Nothing is saved: an operator
accepts a proposal by saving it as a normal card edit. The test split is refused.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from toolroute.cards import Catalog, CatalogError, ToolCard, validate_catalog
from toolroute.cards.proposals import PROPOSAL_PROMPT, CardProposal, propose_edits
from toolroute.evaluation.quick_test import json_safe, measure, measure_edit, require_tuning_split
from toolroute.queries import EvalQuery
from toolroute.routing import ToolRouter

# (tool, changes) -> the catalogue the router would route with once the edit is saved; raises
# CatalogError or ValueError for an edit a save would refuse.
ApplyEdit = Callable[[str, dict[str, Any]], Catalog]


def append_line(catalog: Catalog) -> ApplyEdit:
    """Apply `{"+field": line}` to a card of `catalog` in memory (for a router without a card store)."""

    def apply(tool: str, changes: dict[str, Any]) -> Catalog:
        card = catalog.cards[tool]
        fields = card.model_dump()
        for key, line in changes.items():
            fields[key.lstrip("+")] = (*fields[key.lstrip("+")], line)
        edited = catalog.derived(cards={**catalog.cards, tool: ToolCard(**fields)})
        problems = validate_catalog(edited)
        if problems:
            raise CatalogError(problems)
        return edited

    return apply


def _effect(metric: str, before: dict, after: dict, paired: dict) -> dict[str, Any]:
    p = paired.get(metric, {})
    return {"before": before[metric], "after": after[metric], "diff": p.get("diff"), "ci_low": p.get("ci_low"),
            "ci_high": p.get("ci_high"), "p_value": p.get("p_value")}


def analyse_failures(router: ToolRouter, queries: Sequence[EvalQuery], llm, split: str, k: int = 5,
                     max_proposals: int = 3, guard_queries: Iterable[str] = (), apply: ApplyEdit | None = None,
                     system: str = PROPOSAL_PROMPT) -> dict[str, Any]:
    """Proposals for the top-1 failures of `queries` (the tuning split `split`), each measured on it.

    `guard_queries`: texts a proposed line must not resemble (pass every split's queries; the split's
    own are always added). `apply`: how an edit becomes the routed catalogue (default: in memory on
    the router's catalogue; the server passes its card store's preview, so a proposal a save would
    refuse is skipped with the store's reason)."""
    require_tuning_split(split, "card proposals")
    apply = apply or append_line(router.catalog)
    before = measure(router, queries, k)
    guard = [*guard_queries, *(q.query for q in queries)]
    proposals: list[CardProposal] = propose_edits(llm, router.catalog, before.failures, max_proposals, guard, system)
    out = []
    for proposal in proposals:
        entry = proposal.to_dict()
        if proposal.skipped is None:
            try:
                after_catalog = apply(proposal.tool, proposal.changes)
            except (CatalogError, ValueError) as exc:
                entry["skipped"] = proposal.skipped = f"a save would refuse this edit: {exc}"
            else:
                result, effect = measure_edit(router, after_catalog, queries, before)
                entry["effect"] = {m: _effect(m, before.metrics, result.metrics, effect["paired"])
                                   for m in ("hit@1", f"recall@{k}")}
                entry["fixed"] = [m["query"] for m in effect["moved"] if m["fixed"]]
                entry["broken"] = [m["query"] for m in effect["moved"] if not m["fixed"]]
        out.append(entry)
    return json_safe({"split": split, "n": len(queries), "k": k, "before": before.metrics,
                      "n_failures": len(before.failures), "proposals": out})

"""Build a ready router from plain settings: catalogue, arm, strategy, embedder, calibration file.

Every caller (CLI, notebooks, experiments, benchmarks, the agent) starts here, so that "the default
configuration" means one thing everywhere and no one wires a retriever by hand.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from toolroute.cards import Catalog, open_catalog
from toolroute.chroma import client_folder, open_client
from toolroute.config import data_dir, queries_path, toolcards_dir
from toolroute.embeddings import Embedder
from toolroute.queries import file_fingerprint, load_queries
from toolroute.routing.arms import ARMS, arm_named
from toolroute.routing.base import Retriever
from toolroute.routing.cascade import CascadeRule, load_cascade, save_cascade
from toolroute.routing.dense import DEFAULT_FIELDS, IndexStrategy
from toolroute.routing.nocall import NoCallRule, load_rule, save_rule
from toolroute.routing.router import ToolRouter

log = logging.getLogger(__name__)



@dataclass
class RouterConfig:
    """The default is the configuration reported in the README, chosen on the dev split:
    hybrid (RRF, k=10, dense ranking weighted 0.5 against BM25's 1) over multi-vector cards
    without when_not_to_use, tool score = mean of its two best records (top2), with the BM25-first
    cascade (chosen on dev + tune: no accuracy lost there, a third off the route p50).

    `embedder` is a name (`e5-small`, a sentence-transformers path …) or an Embedder object;
    `dev` is the file the no-call rule is fitted on (default: the domain's calib split)."""

    catalog: str = str(toolcards_dir("insurance"))
    arm: str = "hybrid"
    granularity: str = "multi"
    fields: tuple[str, ...] = DEFAULT_FIELDS
    aggregation: str = "top2"
    embedder: str | Embedder | None = None
    rrf_k: int = 10
    dense_weight: float = 0.5
    classifier_weight: float = 1.0
    """The classifier's RRF weight against the hybrid's 1 in the `hybrid+classifier` arm."""
    dev: str | None = field(default=None)
    cascade: bool | None = None
    """Skip the dense pass when BM25 is decisive (`routing.cascade`); None: on for the hybrid arm."""

    def __post_init__(self):
        arm = arm_named(self.arm)
        if self.cascade and not arm.cascadable:
            raise ValueError(f"cascade: only an arm with a BM25 pass before a dense one has a pass to skip, "
                             f"not '{self.arm}'")

    @property
    def cascaded(self) -> bool:
        """Whether this configuration routes through the cascade (the default for hybrid)."""
        return arm_named(self.arm).cascadable if self.cascade is None else bool(self.cascade)

    def strategy(self) -> IndexStrategy:
        return IndexStrategy(self.granularity, tuple(self.fields), self.aggregation)

    @property
    def label(self) -> str:
        """What tables and figures call this configuration (e.g. `hybrid:e5-small:multi/top2`)."""
        wnu = "+wnu" if "when_not_to_use" in self.fields else ""
        if not arm_named(self.arm).uses_embedder:
            return f"{self.arm}{wnu}"
        embedder = self.embedder if isinstance(self.embedder, str) else getattr(self.embedder, "spec", "e5-small")
        cascade = "+cascade" if self.cascaded else ""
        return f"{self.arm}:{embedder or 'e5-small'}:{self.granularity}{wnu}/{self.aggregation}{cascade}"

    def with_(self, **changes) -> "RouterConfig":
        return replace(self, **changes)


def default_dev_file(catalog_source: str | Path) -> Path | None:
    """The queries the no-call rule is fitted on, for a `toolcards/<domain>` folder.

    `calib.jsonl` when the domain has one: a dev part that card editors never tune on, so the
    rule sees scores like those of unseen queries (cards tuned on dev score dev queries too high).
    Else `dev.jsonl`. Never the test split.
    """
    source = Path(catalog_source)
    if source.is_dir():
        for split in ("calib", "dev"):
            candidate = queries_path(source.name, split)
            if candidate.is_file():
                return candidate
    return None


def make_retriever(config: RouterConfig, catalog: Catalog, client=None) -> Retriever:
    """The arm named by `config` over `catalog` (indexes are not built here; `routing.arms`)."""
    return arm_named(config.arm).build(config, catalog, client)


NoCall = Literal["saved", "fit", "none"]


def build_router(config: RouterConfig = RouterConfig(), catalog: Catalog | None = None, client=None,
                 progress: bool = True, no_call: NoCall = "saved") -> ToolRouter:
    """Catalogue → index (built or updated incrementally) → no-call rule.

    `no_call`: "saved" uses the rule saved beside the index for this catalogue, configuration and
    calibration file, fitting and saving it when there is none; "fit" fits a fresh rule and keeps it
    in memory only (sweeps over throw-away catalogues); "none" routes without a rule.
    """
    catalog = catalog or open_catalog(config.catalog)
    client = client if client is not None or not arm_named(config.arm).uses_embedder else open_client()
    router = ToolRouter(make_retriever(config, catalog, client), config.strategy())
    router.build(progress=progress)
    dev = config.dev or default_dev_file(config.catalog)
    if dev is not None and no_call != "none":
        folder = client_folder(client) if client is not None else data_dir() / "chroma"
        calibrate(router, dev, config, folder if no_call == "saved" else None)
    if config.cascaded:
        folder = client_folder(client) if client is not None else data_dir() / "chroma"
        fit_cascade(router, config, folder if no_call == "saved" else None)
    return router


def cascade_files(catalog_source: str | Path) -> list[Path]:
    """The labelled queries the cascade is fitted on: the domain's dev and tune splits (never test)."""
    source = Path(catalog_source)
    if not source.is_dir():
        return []
    return [p for p in (queries_path(source.name, s) for s in ("dev", "tune")) if p.is_file()]


def fit_cascade(router: ToolRouter, config: RouterConfig, folder: Path | None = None) -> CascadeRule | None:
    """The cascade rule saved in `folder` for this catalogue, configuration and the tuning files, or
    fitted (and saved there); a catalogue without labelled queries gets none (every query is embedded)."""
    files = cascade_files(config.catalog)
    if not files:
        router.retriever.cascade = None
        return None
    fingerprint = "|".join(file_fingerprint(p) for p in files) + f"|{CascadeRule.METHOD}"
    path = rule_file(router, config, fingerprint, folder).with_suffix(".cascade.json") if folder is not None else None
    if path is not None:
        found, rule = load_cascade(path)
        if found:
            router.retriever.cascade = rule
            return rule
    names = set(router.catalog.names)  # a catalogue edited since (a tool removed): fit on the rows it still answers
    queries = [q for p in files for q in load_queries(p) if set(q.expected_tools) <= names]
    if not queries:
        router.retriever.cascade = None
        return None
    rule = router.fit_cascade([q.query for q in queries], [q.expected_tools for q in queries], fitted_on=fingerprint)
    if path is not None:
        save_cascade(path, rule)
    return rule


def answered_rows(queries: list, names, source: str | Path = "") -> list:
    """The rows whose expected tools the catalogue still has. A tool unregistered in the card store leaves
    rows of the calibration file naming it: they are skipped with a warning, so that a catalogue edited
    since (as the cascade's rows above) never stops the router from being built."""
    names = set(names)
    kept = [q for q in queries if set(q.expected_tools) <= names]
    if len(kept) < len(queries):
        missing = sorted({t for q in queries for t in q.expected_tools} - names)
        log.warning("%s: %d rows name tools the catalogue does not have (%s); fitted without them",
                    Path(source).name or "calibration rows", len(queries) - len(kept), ", ".join(missing))
    return kept


def rule_file(router: ToolRouter, config: RouterConfig, fingerprint: str, folder: Path) -> Path:
    """A rule is valid for one catalogue content, one configuration and one calibration file."""
    cards = "|".join(f"{c.name}:{c.content_hash()}" for c in router.catalog)
    retriever = router.retriever
    key = "|".join([config.label, str(config.fields), str(config.rrf_k), str(config.dense_weight),
                    getattr(router.embedder, "spec", "-"), cards, fingerprint, ",".join(retriever.features),
                    retriever.fingerprint()])
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return folder / "nocall" / f"{router.arm}-{digest}.json"


def calibrate(router: ToolRouter, dev_path: str | Path, config: RouterConfig,
              folder: Path | None = None) -> NoCallRule:
    """Use the rule saved in `folder` for this exact calibration file, or fit it (and save it there)."""
    fingerprint = f"{file_fingerprint(dev_path)}|{NoCallRule.METHOD}"
    path = rule_file(router, config, fingerprint, folder) if folder is not None else None
    rule = load_rule(path) if path is not None else None
    if rule is not None and rule.fitted_on == fingerprint:
        router.no_call_rule = rule
        return rule
    dev = answered_rows(load_queries(dev_path), router.catalog.names, dev_path)
    rule = router.fit_no_call([q.query for q in dev], [q.is_call for q in dev], fitted_on=fingerprint)
    if path is not None:
        save_rule(path, rule)
    return rule

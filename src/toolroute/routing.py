"""Build a ready router from plain settings: catalogue path, arm, strategy, embedder, dev file.

The CLI, the notebooks and the benchmark all start here, so that "the default configuration"
means one thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolroute.cards import Catalog, load_catalog
from toolroute.config import queries_path, toolcards_dir
from toolroute.domains import tool_names
from toolroute.index import DEFAULT_FIELDS, IndexStrategy
from toolroute.router import ToolRouter


@dataclass
class RouterConfig:
    """The default is the configuration reported in the README, chosen on the dev split:
    hybrid (RRF, k=10, dense ranking weighted 0.5 against BM25's 1) over multi-vector cards
    without when_not_to_use, tool score = mean of its two best records (top2)."""

    catalog: str = str(toolcards_dir("insurance"))
    arm: str = "hybrid"
    granularity: str = "multi"
    fields: tuple[str, ...] = DEFAULT_FIELDS
    aggregation: str = "top2"
    embedder: str | None = None
    rrf_k: int = 10
    dense_weight: float = 0.5
    dev: str | None = field(default=None)

    def strategy(self) -> IndexStrategy:
        return IndexStrategy(self.granularity, tuple(self.fields), self.aggregation)


def open_catalog(source: str | Path) -> Catalog:
    """A catalogue; a `toolcards/<domain>` folder is also checked against the domain's tool names."""
    source = Path(source)
    expected = tool_names(source.name) if source.is_dir() and source.parent.name == "toolcards" else None
    return load_catalog(source, expected)


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


def build_router(config: RouterConfig = RouterConfig(), catalog: Catalog | None = None,
                 client=None, progress: bool = True) -> ToolRouter:
    """Catalogue → index (built or updated incrementally) → no-call rule (loaded or fitted on dev)."""
    from toolroute.evaluation.retrieval import calibrate

    catalog = catalog or open_catalog(config.catalog)
    router = ToolRouter(catalog, config.arm, config.embedder, config.strategy(), client, config.rrf_k,
                        dense_weight=config.dense_weight)
    router.build(progress=progress)
    dev = config.dev or default_dev_file(config.catalog)
    if dev is not None:
        calibrate(router, dev)
    return router

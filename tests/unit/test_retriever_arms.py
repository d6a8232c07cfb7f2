"""A retriever arm is one builder plus one registry entry (`toolroute.routing.arms`): RouterConfig, the
ablation grid (02's tables) and the report read the registry, so an arm that exists only in this test
shows up in each of them."""

from __future__ import annotations

import pytest

from toolroute.cards import Catalog
from toolroute_lab.e02_ablation import ablation
from toolroute_lab.e07_report.report import ablation_top
from toolroute.routing import RouterConfig
from toolroute.routing.arms import ARMS, RetrieverArm, register
from toolroute.routing.base import Ranking, Retriever


class CatalogueOrder(Retriever):
    """Every tool in catalogue order, whatever the query: the floor any real arm must beat."""

    arm = "catalogue_order"
    features = ("constant",)

    def __init__(self, catalog: Catalog):
        self._catalog = catalog

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    def rank_many(self, queries):
        names = sorted(self._catalog.names)
        return [Ranking([(n, 1.0 / (i + 1)) for i, n in enumerate(names)], {"constant": 1.0}) for _ in queries]

    def prepare_catalog(self, catalog):
        return lambda: setattr(self, "_catalog", catalog)


@pytest.fixture
def test_arm():
    arm = register(RetrieverArm("catalogue_order", lambda config, catalog, client: CatalogueOrder(catalog),
                                uses_embedder=False))
    yield arm
    ARMS.pop(arm.name)


def test_an_unknown_arm_is_refused_naming_the_registered_ones():
    with pytest.raises(ValueError, match="bm25.*hybrid|hybrid.*bm25"):
        RouterConfig(arm="no_such_arm")


def test_the_default_label_comes_from_the_router_config():
    assert RouterConfig().label == f"{RouterConfig.arm}:e5-small:{RouterConfig.granularity}/{RouterConfig.aggregation}+cascade"


def test_a_registered_arm_reaches_the_grid_the_tables_and_the_report(test_arm, tmp_path):
    grid = ablation.expand_grid(["e5-small"], ["multi"], [("purpose", "when_to_use", "tags")], ["bm25", test_arm.name])
    assert [s.label for s in grid] == ["bm25", "catalogue_order"]  # no embedder: labelled like BM25
    results = ablation.run_grid(grid, "insurance", "dev", ks=(1, 5), progress=False, n_boot=50)
    table = ablation.results_table(results, ks=(1, 5))
    row = table.set_index("arm_label").loc["catalogue_order"]
    assert row["arm"] == "catalogue_order" and row["embedder"] == "-"
    assert table.set_index("arm_label").loc["bm25", "hit@1"] > row["hit@1"]  # the floor is below a real arm

    class Run:  # the report reads 02's test table from the run folder
        def table(self, notebook, name):
            return table if name == "ablation_test" else None

    assert "catalogue_order" in set(ablation_top(Run(), n=None)["arm_label"])

"""A tool unregistered in the card store must not stop the router from being built (issue 41, item 1):
the calibration file still names it, so its rows are skipped with a warning instead of failing the start."""

from __future__ import annotations

import logging

from toolroute.config import toolcards_dir
from toolroute.routing import RouterConfig, build_router, default_dev_file, open_catalog
from toolroute.queries import load_queries


def test_a_router_without_a_tool_the_calibration_file_names_is_built_with_a_warning(caplog):
    full = open_catalog(toolcards_dir("insurance"))
    gone = "rag_terms_query_engine"
    calib = default_dev_file(toolcards_dir("insurance"))
    assert any(gone in q.expected_tools for q in load_queries(calib))  # the file still names it
    catalog = full.derived(cards={n: c for n, c in full.cards.items() if n != gone})
    with caplog.at_level(logging.WARNING, logger="toolroute.routing.factory"):
        router = build_router(RouterConfig(arm="bm25", dev=str(calib)), catalog, progress=False, no_call="fit")
    assert router.no_call_rule is not None
    assert gone not in router.route("약관에서 치매 진단 기준 찾아줘").top(5)
    warned = [r.getMessage() for r in caplog.records if gone in r.getMessage()]
    assert warned and "calib" in warned[0] and "rows name tools the catalogue does not have" in warned[0]

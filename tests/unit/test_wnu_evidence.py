"""when_not_to_use as negative evidence (issue 39, 1a): each line's target moves up and its owner down, in
proportion to how far the query's similarity passes the threshold; the no-call decision is kept."""

import numpy as np

from toolroute.cards import open_catalog
from toolroute.config import toolcards_dir
from toolroute.routing.router import RouteResult
from toolroute_lab.studies.wnu_evidence import Line, adjusted, wnu_lines


def test_every_line_of_the_cards_is_read_with_its_owner_target_and_text():
    catalog = open_catalog(toolcards_dir("insurance"), edits=False)
    lines = wnu_lines(catalog)
    assert len(lines) == sum(len(card.confusions()) for card in catalog)
    for line in lines:
        assert line.target in catalog.cards and line.owner in catalog.cards
        assert "→" not in line.text and line.target not in line.text


def test_a_close_line_moves_its_target_up_and_its_owner_down():
    result = RouteResult("q", [("a", 0.10), ("b", 0.09), ("c", 0.05)], no_call=True)
    lines = [Line("a", "b", "x"), Line("c", "a", "y")]
    moved = adjusted(result, np.array([0.95, 0.5]), lines, threshold=0.9, weight=0.1)
    assert [t for t, _ in moved.ranked] == ["b", "a", "c"] and moved.no_call is True
    scores = dict(moved.ranked)
    assert np.isclose(scores["b"], 0.09 + 0.1 * 0.05 / 0.1) and np.isclose(scores["a"], 0.10 - 0.05)
    assert adjusted(result, np.array([0.85, 0.5]), lines, 0.9, 0.1).ranked == result.ranked  # below τ: nothing moves

"""A catalogue update under load (issue 22, safety under concurrency): every route ranks on the old
catalogue or the new one, never on a half-written index (a card's records half replaced, or the new
dense index fused with the old BM25 one). Bounded: a few seconds of routes while the update flips."""

import threading
import time

import pytest

from conftest import HashEmbedder
from toolroute.routing import RouterConfig, build_router
from toolroute.routing.router import ReadWriteLock

EDITED = "premium_estimate"
QUERY = "암보험 한 달 보험료 얼마 내야 해"
TOP = 10


def _edited(catalog):
    """Every record text of the edited card changes (new purpose, examples renumbered): the window where
    a half-written index would differ from both versions is as wide as it gets."""
    card = catalog.cards[EDITED]
    examples = ("월 납입액 계산해 줘", *card.when_to_use[::-1], QUERY)
    new = card.model_copy(update={"purpose": f"{card.purpose} (월 보험료 계산)", "when_to_use": examples})
    return catalog.derived(cards={**catalog.cards, EDITED: new})


def _ranked(router):
    return [(name, round(score, 4)) for name, score in router.route(QUERY).ranked[:TOP]]


def _names(ranked):
    return [name for name, _ in ranked]


@pytest.mark.parametrize("arm", ["hybrid", "dense", "bm25"])
def test_routes_during_updates_see_the_old_or_the_new_catalogue(insurance_catalog, chroma, arm):
    router = build_router(RouterConfig(arm=arm, embedder=HashEmbedder(), dev=None), insurance_catalog, chroma,
                          progress=False, no_call="none")
    old, new = insurance_catalog, _edited(insurance_catalog)
    expected = {}
    for catalog in (new, old):  # each version's ranking, the index left at the old one
        router.update_catalog(catalog)
        expected[catalog is new] = _ranked(router)
    assert expected[True] != expected[False], "the edit must move the ranking, or the test shows nothing"
    assert EDITED in _names(expected[True]) and EDITED in _names(expected[False])
    seen, odd, stop = [], [], threading.Event()

    def hammer():
        while not stop.is_set():
            top = _ranked(router)
            seen.append(top)
            if top not in expected.values():
                odd.append(top)

    threads = [threading.Thread(target=hammer) for _ in range(2)]
    for t in threads:
        t.start()
    updates, deadline = 0, time.monotonic() + 3
    while time.monotonic() < deadline:
        router.update_catalog(new if updates % 2 == 0 else old)
        updates += 1
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert updates >= 4 and len(seen) >= 20
    assert all(EDITED in _names(top) for top in seen)
    assert odd == [], f"{len(odd)} of {len(seen)} routes ranked on neither version, e.g. {odd[0]}"


def test_a_waiting_writer_goes_before_new_readers():
    lock, order = ReadWriteLock(), []
    reading = threading.Event()

    def reader(name, hold):
        with lock.read():
            order.append(name)
            reading.set()
            time.sleep(hold)

    def writer():
        with lock.write():
            order.append("writer")

    first = threading.Thread(target=reader, args=("first", 0.3))
    first.start()
    reading.wait()
    w = threading.Thread(target=writer)
    w.start()
    time.sleep(0.05)  # the writer waits for the first reader
    late = threading.Thread(target=reader, args=("late", 0))
    late.start()
    for t in (first, w, late):
        t.join(timeout=5)
    assert order == ["first", "writer", "late"]

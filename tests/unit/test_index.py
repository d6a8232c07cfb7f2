import pytest

from conftest import HashEmbedder
from toolroute.cards import Catalog, ToolCard
from toolroute.routing.dense import KEEP_GENERATIONS, IndexStrategy, ToolIndex, card_records


@pytest.fixture
def chroma(chroma_both):
    """Every test here runs on the embedded store and on a Chroma server (`chroma run`)."""
    return chroma_both


def _catalog(n=6, edit=None):
    cards = {}
    for i in range(n):
        card = ToolCard(name=f"tool_{i}", purpose=f"도구 {i}번의 목적 설명 {'가나다라'[i % 4]}",
                        when_to_use=tuple(f"예시 {i}-{j} 문장 {'마바사아'[j]}" for j in range(3)),
                        when_not_to_use=(f"다른 경우 → tool_{(i + 1) % n}",), tags=(f"태그{i}",))
        cards[card.name] = card
    if edit:
        cards[edit] = cards[edit].model_copy(update={"purpose": "바뀐 목적"})
    return Catalog("unit", cards)


def test_records_per_strategy():
    card = _catalog().cards["tool_0"]
    assert len(card_records(card, IndexStrategy("multi"))) == 1 + 3 + 1
    assert len(card_records(card, IndexStrategy("multi", ("purpose", "when_to_use", "tags", "when_not_to_use")))) == 6
    single = card_records(card, IndexStrategy("single"))
    assert len(single) == 1 and "예시 0-2" in single[0].document


def test_bad_strategy_is_rejected():
    with pytest.raises(ValueError, match="fields must be"):
        IndexStrategy("multi", ("purpose", "colour"))
    with pytest.raises(ValueError, match="aggregation"):
        IndexStrategy("multi", aggregation="median")


def test_incremental_rebuild_embeds_only_changed_cards(chroma):
    emb = HashEmbedder()
    index = ToolIndex(_catalog(), emb, client=chroma)
    first = index.build(progress=False)
    assert first.embedded == first.records == 30 and first.rebuilt
    again = ToolIndex(_catalog(), emb, client=chroma).build(progress=False)
    assert again.embedded == 0 and not again.rebuilt
    edited = ToolIndex(_catalog(edit="tool_3"), emb, client=chroma).build(progress=False)
    assert edited.embedded == 1 and edited.reused == 29  # only tool_3's purpose record changed
    assert emb.passages_embedded == 31
    names = [c.name for c in chroma.list_collections()]
    assert len(names) == 2  # the older generation stays a while: a process may still be searching it
    for name in ["tool_0", "tool_1", "tool_2", "tool_4"][:KEEP_GENERATIONS + 1]:  # new contents each time
        ToolIndex(_catalog(edit=name), emb, client=chroma).build(progress=False)
    assert len(chroma.list_collections()) == KEEP_GENERATIONS  # older ones go with later builds


def test_removed_card_disappears(chroma):
    emb = HashEmbedder()
    ToolIndex(_catalog(), emb, client=chroma).build(progress=False)
    smaller = _catalog()
    del smaller.cards["tool_5"]
    smaller.cards["tool_4"] = smaller.cards["tool_4"].model_copy(update={"when_not_to_use": ()})
    index = ToolIndex(smaller, emb, client=chroma)
    report = index.build(progress=False)
    assert report.embedded == 0 and report.records == 25
    assert "tool_5" not in [t for t, _ in index.search("도구 5번")]


def test_failed_build_leaves_the_live_index_untouched(chroma):
    ToolIndex(_catalog(), HashEmbedder(), client=chroma).build(progress=False)
    broken = ToolIndex(_catalog(n=6, edit="tool_1"), HashEmbedder(fail_after=0), client=chroma)
    with pytest.raises(RuntimeError, match="mid-build"):
        broken.build(progress=False)
    survivor = ToolIndex(_catalog(), HashEmbedder(), client=chroma)
    assert survivor.build(progress=False).embedded == 0  # the complete old generation is still live
    assert len(survivor.search("도구 2번의 목적")) == 6


@pytest.mark.parametrize("aggregation", ["max", "mean", "top2"])
def test_search_ranks_every_tool(chroma, aggregation):
    index = ToolIndex(_catalog(), HashEmbedder(), IndexStrategy(aggregation=aggregation), client=chroma)
    ranked = index.search("예시 2-1 문장 바")
    assert len(ranked) == 6
    assert [s for _, s in ranked] == sorted([s for _, s in ranked], reverse=True)
    if aggregation != "mean":  # the mean dilutes the one matching example among the others
        assert ranked[0][0] == "tool_2"


def test_the_no_call_rule_is_saved_beside_the_index_not_in_chroma(insurance_catalog, tmp_path, monkeypatch):
    from toolroute.chroma import open_client
    from toolroute.routing import RouterConfig, build_router
    from toolroute.routing import nocall

    client = open_client(tmp_path / "chroma")
    config = RouterConfig(embedder=HashEmbedder(), cascade=False)  # the no-call rule alone (the cascade saves its own)
    first = build_router(config, insurance_catalog, client, progress=False)
    saved = list((tmp_path / "chroma" / "nocall").glob("*.json"))
    assert len(saved) == 1 and first.no_call_rule is not None
    assert not any("no_call" in k for c in client.list_collections() for k in (c.metadata or {}))
    fits, real_fit = [], nocall.NoCallRule.fit.__func__
    monkeypatch.setattr(nocall.NoCallRule, "fit", classmethod(lambda cls, *a, **k: fits.append(1) or real_fit(cls, *a, **k)))
    again = build_router(config, insurance_catalog, client, progress=False)  # a new process: the file is read
    assert fits == [] and again.no_call_rule == first.no_call_rule
    edited = insurance_catalog.cards["premium_estimate"].model_copy(update={"purpose": "보험료를 계산합니다 (수정)"})
    changed = type(insurance_catalog)(insurance_catalog.name, {**insurance_catalog.cards, "premium_estimate": edited},
                                      insurance_catalog.sources)
    build_router(config, changed, client, progress=False)  # a changed card: the rule is refitted
    assert fits == [1] and len(list((tmp_path / "chroma" / "nocall").glob("*.json"))) == 2

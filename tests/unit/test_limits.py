"""Size limits (issue 20): oversize cards and queries are refused with the field and the limit named."""

import pytest

from conftest import HashEmbedder
from toolroute.cards import Catalog, CatalogError, ToolCard, load_toolcards
from toolroute.routing import RouterConfig, build_router
from toolroute.routing.router import QueryTooLong


def test_an_oversize_card_field_names_the_file_card_field_and_limit(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_MAX_CARD_CHARS", "100")
    (tmp_path / "x.yaml").write_text(
        "cards:\n  - name: weather\n    purpose: 날씨를 알려줍니다\n    when_to_use:\n      - " + "가" * 101
        + "\n      - 비 와?\n      - 우산 필요해?\n",
        encoding="utf-8")
    with pytest.raises(CatalogError) as err:
        load_toolcards(tmp_path)
    text = str(err.value)
    assert "x.yaml" in text and "weather" in text and "when_to_use" in text and "101" in text and "100" in text


def test_too_many_entries_are_refused():
    with pytest.raises(ValueError, match="limit is 200"):
        ToolCard(name="t", purpose="p", tags=tuple(f"t{i}" for i in range(201)))


def test_a_query_over_the_limit_is_refused_before_embedding(chroma, monkeypatch):
    embedder = HashEmbedder()
    card = ToolCard(name="weather", purpose="날씨", when_to_use=("비 와?", "우산 필요해?", "기온은?"))
    router = build_router(RouterConfig(embedder=embedder), Catalog("w", {"weather": card}, authored=False), chroma,
                          progress=False, no_call="none")
    monkeypatch.setenv("TOOLROUTE_MAX_QUERY_CHARS", "10")
    with pytest.raises(QueryTooLong, match="11 characters; the limit is 10"):
        router.route("가" * 11)
    assert router.route("비 와?").top(1) == ["weather"]


def test_a_bad_limit_setting_is_named(monkeypatch):
    monkeypatch.setenv("TOOLROUTE_MAX_CARD_CHARS", "lots")
    with pytest.raises(ValueError, match="TOOLROUTE_MAX_CARD_CHARS='lots'"):
        ToolCard(name="t", purpose="p")

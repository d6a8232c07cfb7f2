import json
from pathlib import Path

import pytest

from toolroute.cards import CatalogError, load_catalog, load_toolcards
from toolroute.domains.insurance import SPEC_CONFUSION_PAIRS, TOOL_MODULES, TOOL_NAMES


def test_insurance_catalogue_is_complete_and_valid(insurance_catalog):
    assert sorted(insurance_catalog.names) == sorted(TOOL_NAMES)
    modules = insurance_catalog.modules()
    assert {m: sorted(n) for m, n in modules.items()} == {m: sorted(n) for m, n in TOOL_MODULES.items()}
    for card in insurance_catalog:
        assert 6 <= len(card.when_to_use) <= 10, card.name
        assert card.tags, card.name


def test_spec_confusion_pairs_are_declared_on_both_sides(insurance_catalog):
    pairs = insurance_catalog.confusion_pairs()
    for a, b in SPEC_CONFUSION_PAIRS:
        assert frozenset((a, b)) in pairs
        assert b in insurance_catalog.cards[a].confusions() and a in insurance_catalog.cards[b].confusions()


def _write(folder: Path, text: str, name: str = "mod.yaml") -> Path:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


GOOD = """module: m
cards:
  - name: tool_a
    purpose: 보험료를 계산한다.
    when_to_use: [보험료 얼마야, 월 납입액 알려줘, 40세 남자 보험료]
    when_not_to_use: [납입 기간이 궁금하면 → tool_b]
    tags: [보험료]
  - name: tool_b
    purpose: 납입 기간 플랜을 보여준다.
    when_to_use: [10년납 있나요, 20년납이랑 전기납 차이, 납입기간 옵션]
    when_not_to_use: [금액이 궁금하면 → tool_a]
    tags: [플랜]
"""


def test_good_folder_loads(tmp_path):
    catalog = load_toolcards(_write(tmp_path / "cards", GOOD))
    assert catalog.names == ["tool_a", "tool_b"]
    assert catalog.confusion_pairs() == {frozenset(("tool_a", "tool_b"))}


@pytest.mark.parametrize("mutate, expected", [
    (lambda t: t.replace("tags: [플랜]", "tags: [플랜\n"), "line"),
    (lambda t: t.replace("    tags: [보험료]", "    tags: [보험료]\n    colour: red"), "field 'colour': unknown field"),
    (lambda t: t.replace("name: tool_b", "name: tool_a"), "duplicate name"),
    (lambda t: t.replace("purpose: 보험료를 계산한다.", "purpose: '  '"), "field 'purpose'"),
    (lambda t: t.replace("[10년납 있나요, 20년납이랑 전기납 차이, 납입기간 옵션]", "[10년납 있나요, 20년납이랑 전기납 차이]"),
     "needs at least 3 examples"),
    (lambda t: t.replace("납입기간 옵션", "보험료 얼마야"), "duplicates one in card 'tool_a'"),
    (lambda t: t.replace("[금액이 궁금하면 → tool_a]", "[]"), "not declared on both sides"),
    (lambda t: t.replace("→ tool_b", "→ tool_zzz"), "unknown tool 'tool_zzz'"),
])
def test_bad_cards_name_file_card_and_field(tmp_path, mutate, expected):
    folder = _write(tmp_path / "cards", mutate(GOOD))
    with pytest.raises(CatalogError) as err:
        load_toolcards(folder)
    message = str(err.value)
    assert expected in message
    assert "mod.yaml" in message


def test_error_names_the_card_and_its_line(tmp_path):
    folder = _write(tmp_path / "cards", GOOD.replace("purpose: 납입 기간 플랜을 보여준다.", "purpose: ''"))
    with pytest.raises(CatalogError, match=r"mod.yaml line 8 card 'tool_b': field 'purpose'"):
        load_toolcards(folder)


def test_unknown_contract_name_and_missing_card(tmp_path):
    folder = _write(tmp_path / "cards", GOOD)
    with pytest.raises(CatalogError) as err:
        load_toolcards(folder, expected_names=["tool_a", "tool_c"])
    assert "card 'tool_b': field 'name': unknown tool name" in str(err.value)
    assert "no card for tool 'tool_c'" in str(err.value)


def test_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(CatalogError, match="no ToolCard YAML files"):
        load_toolcards(tmp_path / "empty")


def test_openai_schema_catalogue(tmp_path):
    schemas = [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                                                  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
               {"type": "function", "function": {"name": "book_flight", "description": "Book a flight"}}]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(schemas))
    catalog = load_catalog(path)
    assert catalog.names == ["get_weather", "book_flight"]
    assert catalog.cards["get_weather"].tags == ("city",)
    assert not catalog.authored


@pytest.mark.parametrize("content, expected", [
    ('{"not": "a list"}', "expected a non-empty JSON list"),
    ('[{"type": "function"}]', "item 0: not an OpenAI tool schema"),
    ('[1, 2', "not valid JSON"),
])
def test_bad_schema_catalogue(tmp_path, content, expected):
    path = tmp_path / "tools.json"
    path.write_text(content)
    with pytest.raises(CatalogError, match=expected):
        load_catalog(path)


def test_a_domain_folder_is_checked_against_its_tools_wherever_it_sits(tmp_path):
    import shutil

    from toolroute.cards import open_catalog
    from toolroute.config import toolcards_dir

    copy = tmp_path / "anywhere" / "insurance"
    shutil.copytree(toolcards_dir("insurance"), copy)
    (copy / "zz_extra.yaml").write_text(
        "cards:\n  - name: get_weather\n    purpose: 날씨\n    when_to_use: [\"비 와?\", \"우산?\", \"기온은?\"]\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="get_weather"):
        open_catalog(copy)
    (copy / "zz_extra.yaml").unlink()
    assert len(open_catalog(copy)) == 54

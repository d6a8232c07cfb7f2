"""coverage_match: the word lists load from coverage_words.yaml (checked), and queries read as documented."""

from __future__ import annotations

import pytest
import yaml

from toolroute.domains.insurance import coverage_match as cm
from toolroute.domains.insurance.products import get_product


def test_word_lists_load_from_the_data_file():
    words = cm.load_words()
    assert words.synonyms["중풍"] == ("뇌혈관질환",)
    assert set(cm.ACTION_WORDS) <= cm.GENERIC_WORDS
    assert cm.DEMENTIA_STAGES[0] == ("중등도", 2)  # order kept: the first word found wins


def _write(tmp_path, change):
    data = yaml.safe_load(cm.WORDS_PATH.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "words.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


@pytest.mark.parametrize("change,where", [
    (lambda d: d.pop("synonyms"), "synonyms"),
    (lambda d: d["type_categories"].update({"암진단": "암"}), "type_categories"),
    (lambda d: d["exclusion_triggers"].append({"pattern": "(unclosed", "words": ["x"]}), "exclusion_triggers"),
    (lambda d: d.update({"unknown_table": []}), "unknown_table"),
])
def test_a_malformed_word_file_names_the_file_and_the_table(tmp_path, change, where):
    path = _write(tmp_path, change)
    with pytest.raises(ValueError) as err:
        cm.load_words(path)
    assert str(path) in str(err.value) and where in str(err.value)


def test_words_are_read_longest_first():
    assert cm.find_words("위암 진단") == ["위암", "진단"]  # not 위 + 암진단
    assert cm.find_words("갑상선암 수술") == ["갑상선암", "수술"]


def test_rank_and_accident_reading():
    product = get_product("B001")
    assert [c.name for c in cm.rank(product, "갑상선암").coverages] == ["갑상선암 진단비"]
    query = cm.parse_query("계단에서 넘어져 다리가 부러짐")
    assert query.accidental
    assert not cm.parse_query("위암 진단").accidental

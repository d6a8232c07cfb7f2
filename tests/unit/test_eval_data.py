"""The insurance eval sets: the contract format, the coverage the issue asks for, and no leakage."""

from collections import Counter

import pytest

from toolroute.cards import normalize_text
from toolroute.config import queries_path
from toolroute.domains.insurance import TOOL_NAMES
from toolroute.evaluation.leakage import similar_pairs
from toolroute.queries import QueryFileError, load_queries


@pytest.fixture(scope="module")
def splits():
    return {s: load_queries(queries_path("insurance", s), TOOL_NAMES) for s in ("dev", "calib", "tune", "test")}


def test_sizes_and_coverage(splits):
    rows = splits["dev"] + splits["test"]  # the minimums hold without the calibration part
    assert len(rows) >= 300
    counts = Counter(t for q in rows for t in q.expected_tools)
    assert set(counts) == set(TOOL_NAMES)
    assert min(counts.values()) >= 4, counts.most_common()[-3:]
    assert sum(not q.is_call for q in rows) >= 40
    assert sum(len(q.expected_tools) > 1 for q in rows) >= 20
    confusion = [q for q in rows if q.kind == "confusion"]
    assert len(confusion) >= 30
    for q in confusion:  # the label is one side of the named pair
        assert len(q.pair) == 2 and q.expected_tools[0] in q.pair, q.id


def test_splits_are_disjoint(splits):
    seen: dict[str, str] = {}
    for name, rows in splits.items():
        for q in rows:
            key = normalize_text(q.query)
            assert key not in seen, f"{q.id} ({name}) repeats a query of {seen[key]}"
            seen[key] = name
    ids = [q.id for rows in splits.values() for q in rows]
    assert len(ids) == len(set(ids))


def test_tuning_splits_do_not_near_copy_held_out_queries(splits):
    """Cards are tuned on dev and tune: neither may hold a near-duplicate of a calib or test query.
    (calib and test share 5 near-duplicates; calib only fits the no-call rule and the input gate.)"""
    from toolroute.cards import near_duplicate

    held_out = [(s, q) for s in ("calib", "test") for q in splits[s]]
    copies = [f"{q.id} '{q.query}' ~ {h.id} ({s}) '{h.query}'" for t in ("dev", "tune") for q in splits[t]
              for s, h in held_out if near_duplicate(q.query, h.query)]
    assert not copies, "\n".join(copies[:10])


def test_no_eval_query_leaks_from_the_cards(splits, insurance_catalog):
    """Exact or near-duplicate (normalised, similarity >= 0.8) pairs between queries and when_to_use."""
    rows = [(q.id, q.query) for s in splits.values() for q in s]
    leaks = similar_pairs(rows, insurance_catalog)
    assert not leaks, "\n".join(f"{p.query_id} '{p.query}' ~ {p.tool} '{p.example}' ({p.similarity})" for p in leaks[:10])


def test_leakage_check_catches_copies(insurance_catalog):
    example = insurance_catalog.cards["premium_estimate"].when_to_use[0]
    pairs = similar_pairs([("x1", example), ("x2", example + "요"), ("x3", "오늘 날씨 어때")], insurance_catalog)
    ids = {p.query_id for p in pairs}
    assert "x1" in ids and "x2" in ids and "x3" not in ids
    assert any(p.exact for p in pairs if p.query_id == "x1")


@pytest.mark.parametrize("content, expected", [
    ("", "no queries in file"),
    ('{"id": "a", "query": "보험료", "expected_tools": ["no_such_tool"]}\n', ":1 id 'a': unknown tool 'no_such_tool'"),
    ('{"id": "a", "query": "보험료", "expected_tools": []}\n{"id": "a", "query": "x", "expected_tools": []}\n',
     ":2 id 'a': duplicate id"),
    ('{"id": "a", "query": "보험료", "expected_tools": []}\nnot json\n', ":2: not valid JSON"),
    ('{"id": "a", "query": "", "expected_tools": []}\n', "missing or empty 'query'"),
    ('{"id": "a", "query": "q", "expected_tools": "premium_estimate"}\n', "must be a list"),
])
def test_bad_query_files_name_file_line_and_id(tmp_path, content, expected):
    path = tmp_path / "q.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(QueryFileError) as err:
        load_queries(path, TOOL_NAMES)
    assert expected in str(err.value) and "q.jsonl" in str(err.value)

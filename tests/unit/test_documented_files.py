"""Every file a documented command reads is in the repository (issue 41, item 10: two documented
commands named a `tools.json` nobody shipped). A value is exempt only when the same docs write it
first (`--out`)."""

import re

import pytest

from toolroute.config import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "examples" / "README.md"]
READ = re.compile(r"--(catalog|queries)\s+([^\s`|\]]+)")
WRITTEN = re.compile(r"--out\s+([^\s`|\]]+)")


def _read_args() -> list[tuple[str, str]]:
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        written = set(WRITTEN.findall(text))
        out += [(doc.name, value) for _, value in READ.findall(text) if value not in written
                and not value.isupper() and "<" not in value]  # DIR, <file>: placeholders
    return out


@pytest.mark.parametrize("doc, value", _read_args())
def test_a_documented_input_file_exists(doc, value):
    assert list(ROOT.glob(value)) or (ROOT / value).exists(), f"{doc} names '{value}', which the repository lacks"


def test_the_example_catalogue_routes_its_own_questions():
    from toolroute.cards import open_catalog
    from toolroute.queries import load_queries

    catalog = open_catalog(ROOT / "examples" / "tools.json")
    queries = load_queries(ROOT / "examples" / "queries.jsonl", set(catalog.names))
    assert len(catalog.names) == 8 and len(queries) == 12
    assert {t for q in queries for t in q.expected_tools} == set(catalog.names)

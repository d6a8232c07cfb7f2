"""Numbers in README.md and docs/*.md that cite a table equal the table.

A number taken from a committed table carries its source in an HTML comment right after it (invisible
when the Markdown is rendered):

    Recall@5 0.983<!-- from 02_toolcard_ablation/ablation_test.csv row arm_label=hybrid:e5-small:multi/top2 col recall@5 -->
    13<!-- from 02_toolcard_ablation/failures_test.csv count kind=single&same_module=True -->

`from PATH` is a CSV under results/reference/ (or a path from the repository root starting with
`results/`); `row K=V&K=V` picks exactly one row (values compared as text); `col C` reads its column
(a printed `%` reads a fraction as a percentage), `col C mean` the mean of it over every row picked; a
`[lo, hi]` printed right after the comment is checked against the row's `C_lo` / `C_hi` (its 95% CI);
`count K=V&…` counts the rows that match. The
printed number must equal the value rounded half-up to the digits printed. The count of numbers in
sentences that name a CSV without such a source can only go down (`UNCHECKED_AT_MOST`).
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pandas as pd
import pytest

from toolroute.config import ROOT

SOURCE = re.compile(
    r"(?P<number>[−+-]?\d[\d,]*(?:\.\d+)?)(?P<percent>%?)(?:\*\*)?"
    r"<!-- from (?P<path>\S+)(?: row (?P<row>.+?))? (?:col (?P<col>\S+)(?: (?P<agg>mean))?|count (?P<count>\S+)) -->"
    r"(?:\s*\[(?P<lo>[−+-]?\d[\d,]*(?:\.\d+)?), (?P<hi>[−+-]?\d[\d,]*(?:\.\d+)?)\])?")
CITES_A_TABLE = re.compile(r"\b[\w{},*-]+\.csv\b")
DECIMAL = re.compile(r"(?<![\w.])[−+-]?\d+\.\d{2,}(?![\w.])")
COMMENT = re.compile(r"<!--.*?-->", re.S)
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")

# Decimals (two or more digits after the point) in sentences that name a CSV and carry no source yet.
# Add a source to a number you touch; lower this when you do. New unchecked numbers fail the test.
UNCHECKED_AT_MOST = 19


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _table(path: str) -> pd.DataFrame:
    file = ROOT / path if path.startswith("results/") else ROOT / "results" / "reference" / path
    if not file.is_file():
        raise AssertionError(f"no table {file.relative_to(ROOT)}")
    return pd.read_csv(file, dtype=str, keep_default_na=False)


def _matching(table: pd.DataFrame, conditions: str) -> pd.DataFrame:
    rows = table
    for condition in conditions.split("&"):
        column, _, value = condition.partition("=")
        if column not in table.columns:
            raise AssertionError(f"no column {column!r} (columns: {list(table.columns)})")
        rows = rows[rows[column] == value]
    return rows


def _printed(text: str) -> Decimal:
    return Decimal(text.replace("−", "-").replace(",", "").lstrip("+"))


def check_source(match: re.Match) -> str | None:
    """None when the printed number equals its table, else what differs."""
    table = _table(match["path"])
    if match["count"]:
        value = Decimal(len(_matching(table, match["count"])))
    else:
        rows = _matching(table, match["row"]) if match["row"] else table
        if len(rows) != 1 and not (match["agg"] and len(rows)):
            return f"row {match['row']} picks {len(rows)} rows of {match['path']}, not 1"
        if match["col"] not in rows.columns:
            return f"no column {match['col']!r} in {match['path']}"
        values = [Decimal(v) for v in rows[match["col"]]]
        value = sum(values) / len(values) if match["agg"] else values[0]
        if match["percent"] and abs(value) <= Decimal("1.5"):
            value *= 100
    problem = _differs(match["number"], value)
    if problem or not match["lo"]:
        return problem
    for bound, text in (("lo", match["lo"]), ("hi", match["hi"])):
        column = f"{match['col']}_{bound}"
        if match["count"] or match["agg"] or column not in rows.columns:
            return f"a CI is printed after {match['number']} but {match['path']} has no {column} for it"
        problem = _differs(text, Decimal(rows.iloc[0][column]))
        if problem:
            return f"{bound}: {problem}"
    return None


def _differs(text: str, value: Decimal) -> str | None:
    printed = _printed(text)
    exponent = Decimal(1).scaleb(printed.as_tuple().exponent)
    rounded = value.quantize(exponent, rounding=ROUND_HALF_UP)
    return None if rounded == printed else f"printed {text}, the table has {value} ({rounded} rounded)"


def _sources() -> list[tuple[str, re.Match]]:
    return [(f"{doc.relative_to(ROOT)}:{doc.read_text(encoding='utf-8')[:m.start()].count(chr(10)) + 1}", m)
            for doc in _documents() for m in SOURCE.finditer(doc.read_text(encoding="utf-8"))]


def test_every_number_with_a_source_equals_its_table():
    sources = _sources()
    assert len(sources) >= 10, "the sources are not found: the pattern changed?"
    wrong = [f"{where}: {problem}" for where, m in sources if (problem := check_source(m))]
    assert wrong == [], "\n".join(wrong)


def test_a_changed_number_or_a_bad_source_is_caught():
    row = "row arm_label=hybrid:e5-small:multi/top2 col recall@5"
    right = SOURCE.search(f"0.983<!-- from 02_toolcard_ablation/ablation_test.csv {row} -->")
    assert right and check_source(right) is None
    wrong = SOURCE.search(f"0.978<!-- from 02_toolcard_ablation/ablation_test.csv {row} -->")
    assert "the table has" in check_source(wrong)
    with_ci = "0.983<!-- from 02_toolcard_ablation/ablation_test.csv {} --> [{}, 1.000]"
    assert check_source(SOURCE.search(with_ci.format(row, "0.961").replace("1.000", "0.996"))) is None
    assert "lo: printed 0.965" in check_source(SOURCE.search(with_ci.format(row, "0.965").replace("1.000", "0.996")))
    several = SOURCE.search("0.983<!-- from 02_toolcard_ablation/ablation_test.csv row arm=hybrid col recall@5 -->")
    assert "picks" in check_source(several)
    mean = SOURCE.search("0.5<!-- from 02_toolcard_ablation/ablation_test.csv row arm=bm25 col hit@1 mean -->")
    assert "the table has" in check_source(mean)  # the mean of the matching rows, not the first
    with pytest.raises(AssertionError, match="no table"):
        check_source(SOURCE.search("1<!-- from 02_toolcard_ablation/nope.csv count arm=x -->"))


def _unchecked(text: str) -> list[str]:
    """Decimals in sentences that name a CSV, outside code, without a source."""
    out = []
    text = INLINE_CODE.sub(lambda m: m.group(0) if m.group(0).endswith('.csv`') else "", FENCE.sub("", text))
    for sentence in re.split(r"(?<=[.;:])\s+(?=[A-Z(*-])|\n\s*\n|\n- ", text):
        if not CITES_A_TABLE.search(COMMENT.sub("", sentence)):
            continue
        bare = SOURCE.sub("", sentence)
        out += DECIMAL.findall(COMMENT.sub("", bare))
    return out


def test_numbers_citing_a_table_without_a_source_do_not_grow():
    counts = {str(doc.relative_to(ROOT)): len(_unchecked(doc.read_text(encoding="utf-8"))) for doc in _documents()}
    total = sum(counts.values())
    assert total <= UNCHECKED_AT_MOST, (f"{total} numbers in sentences that cite a table have no source "
                                        f"(at most {UNCHECKED_AT_MOST}): {counts}")

"""The README stays a short front page, its headline table says what the reference run measured, and
the documentation's relative links lead somewhere.

- README.md has at most 200 lines (the detail lives in docs/).
- Every number of the README's headline table equals the value in results/reference/headline.csv,
  rounded to the digits the README prints; rows and columns are matched by name, and every row and
  column of the CSV must be in the table.
- Every relative link (and #anchor) in README.md and docs/*.md points at a file (and heading) that exists.
"""

import csv
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from toolroute.config import ROOT

README = ROOT / "README.md"
HEADLINE_CSV = ROOT / "results" / "reference" / "headline.csv"
MAX_README_LINES = 200

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")


def _markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def _without_code(text: str) -> str:
    return INLINE_CODE.sub("", FENCE.sub("", text))


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [cell.strip().replace("**", "").replace("`", "").strip() for cell in inner.split("|")]


def _tables(text: str) -> list[list[list[str]]]:
    """Each markdown table as rows of cells, header first, the |---| line dropped."""
    tables, current = [], []
    for line in FENCE.sub("", text).splitlines():
        if line.lstrip().startswith("|"):
            current.append(line)
            continue
        if current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return [[_cells(row) for row in rows if not re.fullmatch(r"\|?[\s|:-]+\|?", row.strip())] for rows in tables]


def _headline_csv() -> tuple[list[str], dict[str, dict[str, str]]]:
    with HEADLINE_CSV.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = {row["metric"]: row for row in reader}
        return list(reader.fieldnames), rows


def _headline_table(text: str) -> tuple[list[str], dict[str, dict[str, str]]]:
    found = [t for t in _tables(text) if t and t[0] and t[0][0] == "metric" and "toolroute" in t[0]]
    assert len(found) == 1, f"expected one headline table (header 'metric | toolroute | ...') in README.md, found {len(found)}"
    header, *body = found[0]
    rows = {}
    for cells in body:
        assert len(cells) == len(header), f"README headline row {cells} has {len(cells)} cells, header has {len(header)}"
        assert cells[0] not in rows, f"README headline table repeats the row {cells[0]!r}"
        rows[cells[0]] = dict(zip(header, cells))
    return header, rows


def _numbers(text: str) -> list[str]:
    return [n.replace(",", "") for n in NUMBER.findall(text)]


def _rounded_like(value: str, printed: str) -> Decimal:
    digits = len(printed.split(".")[1]) if "." in printed else 0
    return Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def _mismatches(readme_text: str) -> list[str]:
    csv_columns, csv_rows = _headline_csv()
    header, rows = _headline_table(readme_text)
    problems = []
    if set(header) != set(csv_columns):
        problems.append(f"columns: README {header} vs headline.csv {csv_columns}")
    if set(rows) != set(csv_rows):
        problems.append(f"rows: README {sorted(rows)} vs headline.csv {sorted(csv_rows)}")
    for metric in set(rows) & set(csv_rows):
        for column in set(header) & set(csv_columns) - {"metric"}:
            printed, expected = _numbers(rows[metric][column]), _numbers(csv_rows[metric][column])
            if len(printed) != len(expected):
                problems.append(f"{metric} / {column}: README {rows[metric][column]!r}, headline.csv {csv_rows[metric][column]!r}")
                continue
            for p, e in zip(printed, expected):
                if Decimal(p) != _rounded_like(e, p):
                    problems.append(f"{metric} / {column}: README {p}, headline.csv {e} (rounds to {_rounded_like(e, p)})")
    return problems


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    anchors, seen = set(), {}
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            slug = _slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def _broken_links(path: Path, root: Path = ROOT) -> list[str]:
    broken = []
    for target in LINK.findall(_without_code(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{path.relative_to(root)}: {target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{path.relative_to(root)}: {target} (no heading with that anchor)")
    return broken


def test_readme_is_at_most_200_lines():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_README_LINES, f"README.md has {n} lines (at most {MAX_README_LINES}); move the detail into docs/"


def test_readme_headline_table_equals_headline_csv():
    assert _mismatches(README.read_text(encoding="utf-8")) == []


def test_headline_check_catches_a_changed_number():
    text = README.read_text(encoding="utf-8")
    _, rows = _headline_table(text)
    row_line = next(line for line in text.splitlines() if line.startswith(f"| {next(iter(rows))} |"))
    cells = row_line.split("|")
    cells[2] = re.sub(r"\d(?=\D*$)", lambda m: str((int(m.group()) + 1) % 10), cells[2])
    assert _mismatches(text.replace(row_line, "|".join(cells))), "changing one number of the headline table went unnoticed"


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_at_existing_files(path):
    assert path.exists()
    assert _broken_links(path) == []


def test_link_check_sees_links_and_anchors(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A title\n\n## Wall times (`make x`)\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/a.md) [ok](docs/a.md#wall-times-make-x) [web](https://example.org/x)\n"
        "[missing](docs/b.md) [bad anchor](docs/a.md#nowhere) `[in code](nowhere.md)`\n",
        encoding="utf-8",
    )
    broken = _broken_links(page, root=tmp_path)
    assert broken == ["README.md: docs/b.md (no such file)", "README.md: docs/a.md#nowhere (no heading with that anchor)"]

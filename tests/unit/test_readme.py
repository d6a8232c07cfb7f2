"""The README stays a short front page, its headline table says what the reference run measured, and
the documentation's relative links lead somewhere.

- README.md has at most 200 lines (the detail lives in docs/).
- Every number of the README's headline table equals the value in results/reference/headline.csv,
  rounded to the digits the README prints; rows and columns are matched by name, and every row and
  column of the CSV must be in the table.
- Every relative link (and #anchor) in README.md and docs/*.md points at a file (and heading) that exists.
- The prose numbers that come from a reference CSV equal it: consultations scoring 0 (by_scenario.csv),
  RAG questions routed to and reaching their RAG tool (04's runs.csv), the dense arm at 2,628 tools
  (scale.csv), the prompt-token saving like for like (prompt_sizes.csv), the split the no-call rule
  is fitted on (the router's own default), and every number of the "In short" list (02, 03, 05 and
  results/cascade.csv).
"""

import csv
import json
import re
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pandas as pd
import pytest

from toolroute.config import ROOT
from toolroute.routing import RouterConfig

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


# --- statements in the prose that come from a CSV of the reference run -------------------------------------------
# Each test reads the sentence from the document and the number from the CSV it cites, so a regenerated
# reference that changes the number fails here until the sentence is rewritten.

REFERENCE = ROOT / "results" / "reference"
WORDS = {"no": 0, "none": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}


def _count(token: str) -> int:
    return WORDS[token.lower()] if token.lower() in WORDS else int(token)


def _docs(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def test_consultations_scoring_zero_equal_by_scenario_csv():
    from toolroute_lab.e04_ragas_eval.findings import zero_consultations  # the report's own count
    from toolroute_lab.shared.run_tables import agent_rows

    by_scenario = agent_rows(pd.read_csv(REFERENCE / "04_ragas_eval" / "by_scenario.csv"))
    found = re.findall(r"(\w+) consultations scored 0 on both", _docs("results.md"))
    assert found, "docs/results.md no longer says how many consultations scored 0 on both metrics"
    assert [_count(f) for f in found] == [len(zero_consultations(by_scenario))] * len(found)


def test_rag_questions_routed_to_their_rag_tool_equal_runs_csv():
    from toolroute_lab.shared.run_tables import agent_rows  # the agent as it runs, not the ceiling's replays

    runs = agent_rows(pd.read_csv(REFERENCE / "04_ragas_eval" / "runs.csv"))
    rag = runs[runs["kind"] == "rag"]
    routed = sum(bool(set(json.loads(r.gold_tools)) & set(json.loads(r.routed))) for r in rag.itertuples())
    called = sum(bool(set(json.loads(r.gold_tools)) & set(json.loads(r.called_tools))) for r in rag.itertuples())
    text = " ".join(_docs("results.md").split())
    m = re.search(r"Only (\w+) of the (\d+) RAG questions reached a RAG tool\*\* .*? matching RAG tool in the top 5 for (\w+) of them", text)
    assert m, "docs/results.md no longer states how many RAG questions reached and were routed to their RAG tool"
    assert (_count(m.group(1)), int(m.group(2)), _count(m.group(3))) == (called, len(rag), routed)


def test_dense_arm_at_scale_statement_matches_scale_csv():
    scale = pd.read_csv(REFERENCE / "05_scale" / "scale.csv")
    dense = scale[scale["arm"] == "dense"].sort_values("size")
    first, last = dense.iloc[0], dense.iloc[-1]
    text = " ".join(_docs("results.md").split())
    assert "does not move at all" not in text
    m = re.search(r"dense arm's Hit@1 and Recall@5 do not move\*\*, to the third decimal, and its MRR barely does "
                  r"\((\d\.\d+) → (\d\.\d+)\)", text)
    assert m, "docs/results.md no longer states how the dense arm moves with the distractors"
    for metric in ("hit@1", "recall@5"):
        assert round(first[metric], 3) == round(last[metric], 3), metric
    assert (m.group(1), m.group(2)) == (f"{first['mrr']:.4f}", f"{last['mrr']:.4f}")


def test_prompt_token_saving_is_like_for_like_and_equals_the_csvs():
    sizes = pd.read_csv(REFERENCE / "prompt_sizes.csv").iloc[0]
    compact = 1 - sizes["top5_compact"] / sizes["all_tools_compact"]
    full = 1 - sizes["top5_full_schemas"] / sizes["all_tools_full"]
    assert round(compact, 3) == sizes["saving_top5_vs_all_compact"] and round(full, 3) == sizes["saving_top5_vs_all_full"]
    readme = README.read_text(encoding="utf-8")
    assert re.findall(r"sends (\d+)% fewer prompt tokens\*\* than binding all 54 tools with the same", readme) == [f"{compact:.0%}"[:-1]]
    agent = " ".join(_docs("agent.md").split())
    m = re.search(r"sends \*\*(\d+\.\d)% fewer prompt tokens\*\* than binding all 54 tools with the same compact "
                  r"schemas, and (\d+\.\d)% fewer with full schemas", agent)
    assert m and (m.group(1), m.group(2)) == (f"{compact * 100:.1f}", f"{full * 100:.1f}")
    rows = {cells[0]: cells[1] for t in _tables(_docs("agent.md")) if t and t[0][1:] == ["prompt tokens (median)"]
            for cells in t[1:]}
    expected = {"+ top-5 routed tools, compact schemas": "top5_compact", "+ top-5 routed tools, full LangChain schemas":
                "top5_full_schemas", "+ all 54 tools, compact schemas": "all_tools_compact",
                "+ all 54 tools, full schemas": "all_tools_full", "system prompt + question, no tools": "no_tools"}
    assert set(rows) == set(expected)
    for label, column in expected.items():
        assert int(_numbers(rows[label])[0]) == int(sizes[column]), label


def test_no_call_rule_is_said_to_be_fitted_on_the_split_it_is_fitted_on():
    from toolroute.config import toolcards_dir  # only for this check
    from toolroute.routing import default_dev_file  # only for this check

    split = default_dev_file(toolcards_dir("insurance")).stem
    names = {"calib": "calibration split (calib)", "dev": "dev split"}
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert f"**no-call** decision fitted on the {names[split]}" in readme
    for path in _markdown_files():
        text = " ".join(path.read_text(encoding="utf-8").split())
        assert not re.search(r"no-call\W+(?:\w+\W+){0,4}fitted on (?:a|the) dev\b", text), path.name


def _step_limit_rows(table: pd.DataFrame, cap: int) -> pd.DataFrame:
    """03's rows of the routed agent at top-5 and `cap` (the arm the README speaks of, when the table has arms)."""
    rows = table[(table["top_k"] == 5) & (table["cap"] == cap)]
    return rows[rows["arm"] == "routed@5"] if "arm" in rows.columns else rows


def test_the_short_findings_equal_their_csvs():
    """The numbers of the README's "In short" list, each read from the reference table it comes from."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    splits = pd.read_csv(REFERENCE / "02_toolcard_ablation" / "ablation_by_split.csv")
    default = splits[splits["arm_label"] == RouterConfig().label].set_index("split")["hit@1"]
    m = re.search(r"the same default reaches Hit@1 (\d\.\d{3}); on the calibration split, another tuning split [^)]*\), (\d\.\d{3})", text)
    assert m and (m.group(1), m.group(2)) == (f"{default['dev']:.3f}", f"{default['calib']:.3f}")

    test = pd.read_csv(REFERENCE / "02_toolcard_ablation" / "ablation_test.csv").set_index("arm_label")["hit@1"]
    m = re.search(r"BM25 over Kiwi morphemes alone matches the default on Hit@1 \((\d\.\d{3}),", text)
    assert m and m.group(1) == f"{test['bm25']:.3f}"
    m = re.search(r"the seed's method \(dense, max over records\) is the weakest Korean-capable arm, (\d\.\d{3})", text)
    assert m and m.group(1) == f"{test['dense:e5-small:multi/max']:.3f}"
    korean = test[[a for a in test.index if "minilm" not in a]]  # all-MiniLM is English-only
    assert korean.idxmin() == "dense:e5-small:multi/max"

    by_cap = _step_limit_rows(pd.read_csv(REFERENCE / "03_step_limits" / "by_cap.csv"), 3).iloc[0]
    by_length = _step_limit_rows(pd.read_csv(REFERENCE / "03_step_limits" / "by_length.csv"), 3)
    chains = by_length[by_length["chain_length"] >= 2]
    m = re.search(r"at cap 3, (\d+) of (\d+) step-limit tasks completed \((\d+)%\), (\w+) of the (\d+) two- and three-tool", text)
    assert m, "README no longer states the step-limit completion at cap 3"
    assert (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (
        int(by_cap["completed"]), int(by_cap["runs"]), round(100 * by_cap["completed"] / by_cap["runs"]))
    assert (_count(m.group(4)), int(m.group(5))) == (int(chains["completed"].sum()), int(chains["runs"].sum()))

    arms = pd.read_csv(REFERENCE / "04_ragas_eval" / "by_arm.csv").set_index(["arm", "kind"])
    m = re.search(r"the agent completes (\d+) of (\d+) test queries, with the router's top 5 (\d+), with its top 1 (\d+)", text)
    assert m, "README no longer states 04's arms on the test queries"
    assert [int(g) for g in m.groups()] == [arms.loc[("oracle", "query"), "completed"], arms.loc[("oracle", "query"), "runs"],
                                            arms.loc[("routed@5", "query"), "completed"], arms.loc[("routed@1", "query"), "completed"]]

    cascade = pd.read_csv(ROOT / "results" / "cascade.csv").set_index(["split", "arm"]).loc[("test", "hybrid+cascade")]
    assert f"when BM25 is decisive ({cascade['dense_skipped']:.0%} of test queries)" in text
    scale = pd.read_csv(REFERENCE / "05_scale" / "scale.csv")
    at_54 = scale[(scale["series"] == "bfcl") & (scale["tools"] == 54) & (scale["arm"] == "hybrid")].iloc[0]
    assert f"p50 is {at_54['latency_p50_ms']:.1f} ms (p95 {at_54['latency_p95_ms']:.1f} ms) at 54 tools" in text

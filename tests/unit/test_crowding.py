"""Same-language crowding: the Korean distractor catalogue (valid, leak-free, no clash with a real tool)
and the experiment that grows the insurance cards with it (with a stand-in embedder)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from toolroute.cards import cards_from_openai_tools, load_catalog
from toolroute.config import ROOT, korean_distractors_path, queries_path, toolcards_dir
from toolroute.evaluation.leakage import copied_texts
from toolroute_lab.e05_scale import crowding
from toolroute_lab.e05_scale import plots
from toolroute.queries import load_queries

from conftest import HashEmbedder

HANGUL = re.compile(r"[\uac00-\ud7a3]")
SPLITS = ("dev", "tune", "calib", "test")


@pytest.fixture(scope="module")
def schemas():
    return json.loads(korean_distractors_path().read_text(encoding="utf-8"))


def _texts(schemas):
    """Every text a distractor shows a router or an LLM: its description and each parameter's."""
    for item in schemas:
        fn = item["function"]
        yield f"{fn['name']}.description", fn["description"]
        for name, prop in fn["parameters"]["properties"].items():
            yield f"{fn['name']}.{name}", prop["description"]


def test_the_catalogue_is_a_list_of_valid_openai_tool_schemas_in_korean(schemas):
    assert 150 <= len(schemas) <= 300
    names = [item["function"]["name"] for item in schemas]
    assert len(names) == len(set(names))
    for item in schemas:
        assert set(item) == {"type", "function"} and item["type"] == "function"
        fn = item["function"]
        assert set(fn) == {"name", "description", "parameters"} and re.fullmatch(r"[a-z][a-z0-9_]*", fn["name"])
        params = fn["parameters"]
        assert params["type"] == "object" and params["properties"], fn["name"]
        assert set(params["required"]) <= set(params["properties"]), fn["name"]
        for prop in params["properties"].values():
            assert prop["type"] in {"string", "integer", "number", "boolean"} and prop["description"], fn["name"]
            if "enum" in prop:
                assert prop["enum"] and len(set(map(str, prop["enum"]))) == len(prop["enum"]), fn["name"]
    assert all(HANGUL.search(text) for _, text in _texts(schemas))
    assert len(cards_from_openai_tools(korean_distractors_path())) == len(schemas)  # the project's own loader


def test_no_distractor_is_named_like_a_tool_of_a_domain(schemas):
    names = {item["function"]["name"] for item in schemas}
    for domain in ("insurance", "threat", "plant"):
        assert not names & set(load_catalog(toolcards_dir(domain)).names), domain


def test_no_distractor_text_copies_a_card_example_or_an_eval_query(schemas):
    """Leakage rule: no description (or parameter description) holds an insurance card example or an
    insurance eval query, whole, near-duplicated or as a copied clause."""
    sources = [(f"card:{c.name}", ex) for c in load_catalog(toolcards_dir("insurance")) for ex in c.when_to_use]
    sources += [(f"query:{q.id}", q.query) for s in SPLITS for q in load_queries(queries_path("insurance", s))]
    assert len(sources) > 1000
    copies = copied_texts(_texts(schemas), sources)
    assert not copies, "\n".join(f"{c.where} '{c.text}' ~ {c.source_id} '{c.source}' ({c.how})" for c in copies[:10])


def test_the_copy_check_catches_pasted_near_and_partial_copies():
    sources = [("q1", "55세 여성 실속치매보험 보험료 알려줘"), ("q2", "약관대출 신청 어떻게 해요?")]
    texts = [("pasted", "고객 문의 예: 55세 여성 실속치매보험 보험료 알려줘 같은 요청을 처리합니다."),
             ("near", "55세 여성 실속치매보험 보험료 알려주세요"),
             ("clause", "여성 실속치매보험 보험료 알려줄 때 씁니다"),
             ("clean", "한빛 자동차보험 신규 가입 보험료를 산출합니다.")]
    found = {c.where: c.how for c in copied_texts(texts, sources)}
    assert found == {"pasted": "contains", "near": "near-duplicate", "clause": "shares 13 characters"}


def test_the_pool_holds_the_near_miss_tools_and_the_other_domains_in_one_nested_order(schemas):
    pool = crowding.korean_pool()
    domains = {n for d in crowding.DOMAINS for n in load_catalog(toolcards_dir(d)).names}
    assert len(pool) == len(schemas) + len(domains) and domains <= set(pool.names)
    lines = {pool.sources[n].module for n in pool.names}
    assert {"threat domain", "plant domain", "auto insurance, another insurer", "card company"} <= lines
    assert crowding.OTHER_LINE in lines and len(lines) == len(crowding.LINES) + 3
    small, large = crowding.distractors(20, pool=pool), crowding.distractors(60, pool=pool)
    assert [c.name for c in large[:20]] == [c.name for c in small]
    assert [c.name for c in crowding.distractors(20, seed=1, pool=pool)] != [c.name for c in small]
    with pytest.raises(ValueError, match=f"asked for {len(pool) + 1} Korean distractors, there are {len(pool)}"):
        crowding.distractors(len(pool) + 1, pool=pool)


def test_a_grown_catalogue_keeps_one_name_and_refuses_a_name_clash(insurance_catalog):
    pool = crowding.korean_pool()
    a, b = (crowding.with_distractors(insurance_catalog, n, pool=pool) for n in (5, 40))
    assert (len(a), len(b)) == (59, 94) and a.identity == b.identity != insurance_catalog.identity
    assert not b.authored and set(a.names) <= set(b.names)
    clashing = insurance_catalog.derived(cards={**insurance_catalog.cards, **{c.name: c for c in pool}})
    with pytest.raises(ValueError, match="Korean distractors named like tools"):
        crowding.with_distractors(clashing, 3, pool=pool)


def test_sizes_and_parameters_are_checked_before_any_model_loads():
    assert crowding.resolve_sizes([0, 50, "all", 50], 54, 214) == [54, 104, 268]
    with pytest.raises(ValueError, match="korean_added: 300 is not between 0 and the 214"):
        crowding.resolve_sizes([300], 54, 214)
    with pytest.raises(ValueError, match="korean_splits"):
        crowding.check_parameters([0], ["nope"])
    with pytest.raises(ValueError, match="korean_added"):
        crowding.check_parameters([], ["test"])
    with pytest.raises(ValueError, match="korean_field_sets"):
        crowding.check_parameters([0], ["test"], [["purpose", "examples"]])
    crowding.check_parameters([0, "all"], ["test", "dev"])


def test_the_series_reports_each_size_arm_fields_and_split_with_cis_paired_changes_and_stolen_rows(tmp_path):
    table, top1 = crowding.run_korean_crowding([0, 6, 12], splits=("test", "dev"), embedder=HashEmbedder(),
                                               chroma_path=tmp_path / "c", latency_queries=3, latency_passes=2,
                                               n_boot=50, progress=False)
    per_size = 2 * 2 * 2  # arms x field sets x splits
    assert list(table["size"]) == [54] * per_size + [60] * per_size + [66] * per_size
    assert set(table["series"]) == {"korean"} and list(table["split"][:4]) == ["test", "dev", "test", "dev"]
    assert list(dict.fromkeys(table["fields"])) == ["purpose+when_to_use+tags", "purpose+tags"]
    test = table[table["split"] == "test"]
    assert (test.loc[(test["arm"] == "dense") & (test["size"] > 54), "embedded"] > 0).all()  # each step's new tools
    assert (test.loc[test["arm"] == "hybrid", "embedded"] == 0).all()  # the hybrid reuses the dense arm's index
    small = test[(test["size"] == 54) & (test["arm"] == "dense")].set_index("fields")["records"]
    assert small["purpose+tags"] == 2 * 54 < small["purpose+when_to_use+tags"]  # one index per field set
    assert (table["latency_passes"] == 2).all() and (table["latency_queries"] == 3).all()
    assert (table["latency_p50_min_ms"] <= table["latency_p50_max_ms"]).all()
    assert (table["hit@1_lo"] <= table["hit@1"]).all() and (table["hit@1"] <= table["hit@1_hi"]).all()
    assert table.loc[table["size"] == 54, "hit@1_diff"].isna().all() and table.loc[table["size"] > 54, "hit@1_diff"].notna().all()
    assert (table.loc[table["size"] == 54, ["top1_distractor", "distractor_in_top5"]] == 0).all().all()
    assert (table["top1_distractor"] <= table["distractor_in_top5"]).all()
    assert table["no_call_to_distractor"].between(0, 1).all()
    assert set(table["n_call"]) == {sum(q.is_call for q in load_queries(queries_path("insurance", s))) for s in ("test", "dev")}
    assert list(top1.columns) == ["size", "arm", "fields", "split", "id", "query", "expected", "top1", "line",
                                  "no_call_predicted"]
    assert not top1.empty and (top1["size"] > 54).all() and top1["line"].notna().all()
    markdown = crowding.markdown_table(table, "test")
    assert markdown.count("\n") == 2 + 6 - 1 and "| 54 | dense |" in markdown and "| – |" in markdown
    assert markdown != crowding.markdown_table(table, "test", ("purpose", "tags"))
    fig = plots.plot_scale(table.assign(series="bfcl"), korean=table)
    assert any("Korean" in line.get_label() for line in fig.axes[0].get_lines())
    assert all(len(line.get_xdata()) == 3 for line in fig.axes[0].get_lines()[:4])  # one split, one field set


DOCS = ROOT / "docs" / "results.md"
COMMITTED = ROOT / "results" / "korean_crowding.csv"


@pytest.mark.skipif(not COMMITTED.is_file(), reason="no committed Korean crowding table yet")
def test_the_docs_table_is_the_committed_csv():
    table = pd.read_csv(COMMITTED)
    text = DOCS.read_text(encoding="utf-8")
    for fields in dict.fromkeys(table["fields"]):
        for split in dict.fromkeys(table["split"]):
            assert crowding.markdown_table(table, split, fields.split("+")) in text, \
                f"docs/results.md: the {split} / {fields} table differs from {COMMITTED}"

"""BFCL as data (from a stand-in wheel, no network) and the catalogue-size experiment."""

from __future__ import annotations

import json
import subprocess
import zipfile

import pytest

from toolroute.external import bfcl
from toolroute_lab.e05_scale.scale import first_size_below, latency_columns, run_bfcl_routing, run_scale

from conftest import HashEmbedder


def _fn(name, description, params=("x",)):
    return {"name": name, "description": description,
            "parameters": {"type": "dict", "properties": {p: {"type": "string"} for p in params}}}


WEATHER = _fn("get_weather", "Current weather of a city.", ("city",))
WEATHER_2 = _fn("get_weather", "Weather forecast for the coming days.", ("city", "days"))
STOCK = _fn("stock.price", "Latest price of a stock ticker.", ("ticker",))
FLIGHT = _fn("book flight", "Book a flight between two airports.", ("origin", "destination"))


@pytest.fixture
def wheel(tmp_path):
    """A wheel laid out like bfcl-eval's, with a handful of functions."""
    entries = {c: [] for c in bfcl.TOOL_CATEGORIES}
    entries["simple_python"] = [{"id": "simple_python_0", "question": [[{"role": "user", "content": "weather in Paris"}]],
                                 "function": [WEATHER]}]
    entries["multiple"] = [
        {"id": "multiple_0", "question": [[{"role": "user", "content": "What is AAPL trading at?"}]], "function": [WEATHER_2, STOCK]},
        {"id": "multiple_1", "question": [[{"role": "user", "content": "Fly me from ICN to SFO"}]], "function": [FLIGHT, STOCK]},
    ]
    entries["live_multiple"] = [{"id": "live_multiple_0", "question": [[{"role": "user", "content": "forecast for Busan, 3 days"}]],
                                 "function": [WEATHER, WEATHER_2]}]
    answers = {"multiple": [{"id": "multiple_0", "ground_truth": [{"stock.price": {"ticker": ["AAPL"]}}]},
                            {"id": "multiple_1", "ground_truth": [{"book flight": {"origin": ["ICN"]}}]}],
               "live_multiple": [{"id": "live_multiple_0", "ground_truth": [{"get_weather": {"city": ["Busan"]}}]}]}
    path = tmp_path / bfcl.WHEEL
    with zipfile.ZipFile(path, "w") as z:
        for cat, items in entries.items():
            z.writestr(f"bfcl_eval/data/BFCL_v4_{cat}.json", "\n".join(json.dumps(e) for e in items))
        for cat, items in answers.items():
            z.writestr(f"bfcl_eval/data/possible_answer/BFCL_v4_{cat}.json", "\n".join(json.dumps(e) for e in items))
    return path


def test_function_documents_become_cards_with_unique_safe_names(wheel):
    docs = bfcl.function_docs(wheel=wheel)
    names = sorted(d.name for d in docs.values())
    assert names == ["book_flight", "get_weather", "get_weather__2", "stock.price"]
    card = docs[("stock.price", "Latest price of a stock ticker.")].card()
    assert card.purpose == "Latest price of a stock ticker." and card.tags == ("ticker",)


def test_distractors_are_nested_and_bounded(wheel, insurance_catalog):
    small, large = bfcl.distractors(2, wheel=wheel), bfcl.distractors(4, wheel=wheel)
    assert [c.name for c in large[:2]] == [c.name for c in small]
    grown = bfcl.with_distractors(insurance_catalog, 3, wheel=wheel)
    added = [n for n in grown.names if n not in insurance_catalog]
    assert len(grown) == 57 and not grown.authored and all(grown.sources[n].path.startswith("bfcl-eval:") for n in added)
    clash = bfcl.distractors(4, reserved={"stock.price"}, wheel=wheel)
    assert "stock.price__bfcl" in [c.name for c in clash] and "stock.price" not in [c.name for c in clash]
    with pytest.raises(ValueError, match="asked for 5 distractors, BFCL has 4"):
        bfcl.distractors(5, wheel=wheel)
    with pytest.raises(ValueError, match="no BFCL category 'made_up'"):
        bfcl.read_category("made_up", wheel)


def test_routing_benchmark_has_one_tool_per_function_name(wheel):
    """get_weather is defined twice (two descriptions): one tool, the first description, both parameter sets."""
    catalog, queries = bfcl.routing_benchmark(wheel=wheel)
    gold = {q.id: q.expected_tools for q in queries}
    assert gold == {"multiple_0": ("stock.price",), "multiple_1": ("book_flight",), "live_multiple_0": ("get_weather",)}
    assert sorted(catalog.names) == ["book_flight", "get_weather", "stock.price"]
    weather = catalog.cards["get_weather"]
    assert weather.purpose == WEATHER_2["description"] and weather.tags == ("city", "days")
    assert queries[0].query == "What is AAPL trading at?"


def test_a_failed_download_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, "", "no index reachable"))
    with pytest.raises(bfcl.BfclUnavailable, match="(?s)could not download bfcl-eval==.*no index reachable"):
        bfcl.ensure_wheel(tmp_path)


def test_scale_sweep_grows_one_index_and_reports_each_size(wheel, tmp_path):
    table = run_scale(sizes=[56, 54, 58], arms=["dense", "hybrid"], embedder=HashEmbedder(), chroma_path=tmp_path / "c",
                      latency_queries=3, latency_passes=2, wheel=wheel, progress=False)
    assert list(table["size"]) == [54, 54, 56, 56, 58, 58] and list(table["tools"]) == [54, 54, 56, 56, 58, 58]
    dense = table[table["arm"] == "dense"].set_index("size")
    # each step embeds only the two distractors it adds (purpose + tags each); hybrid reuses dense's index
    assert list(dense["embedded"])[1:] == [4, 4] and table[table["arm"] == "hybrid"]["embedded"].eq(0).all()
    assert table["hit@1"].between(0, 1).all() and (table["latency_p95_ms"] >= table["latency_p50_ms"]).all()
    assert dense.loc[54, "edit_records_embedded"] == 1 and dense.loc[58, "edit_records_embedded"] == 1
    assert dense[["edit_seconds"]].notna().loc[[54, 58]].all().all() and dense["edit_seconds"].isna().loc[56]
    assert set(first_size_below(table, threshold=1.01).values()) == {54}
    assert (table["latency_passes"] == 2).all() and set(table["series"]) == {"bfcl"} and set(table["split"]) == {"test"}
    assert table.loc[table["size"] == 54, "hit@1_diff"].isna().all() and table.loc[table["size"] > 54, "hit@1_diff"].notna().all()
    with pytest.raises(ValueError, match="at least 54"):
        run_scale(sizes=[10], embedder=HashEmbedder(), chroma_path=tmp_path / "c", wheel=wheel, progress=False)


def test_bfcl_routing_table_per_arm_and_category(wheel, tmp_path):
    table, queries, catalog = run_bfcl_routing(arms=["dense", "bm25"], embedder=HashEmbedder(),
                                               chroma_path=tmp_path / "c", wheel=wheel, progress=False)
    assert set(table["category"]) == {"all", "multiple", "live_multiple"} and set(table["arm"]) == {"dense", "bm25"}
    assert table.loc[table["category"] == "all", "n"].eq(3).all() and table["recall@10"].eq(1.0).all()


def test_findings_say_when_hit1_was_below_the_line_before_any_distractor():
    import pandas as pd

    from toolroute_lab.e05_scale.scale import findings

    row = {"recall@5": 0.9, "no_call_accuracy": 0.8, "latency_p50_ms": 20.0, "latency_p95_ms": 30.0, "records": 609,
           "edit_seconds": None, "edit_records_embedded": None}
    table = pd.DataFrame([{**row, "size": 54, "arm": "dense", "hit@1": 0.72, "edit_seconds": 0.3, "edit_records_embedded": 1},
                          {**row, "size": 100, "arm": "dense", "hit@1": 0.71},
                          {**row, "size": 54, "arm": "hybrid", "hit@1": 0.95},
                          {**row, "size": 100, "arm": "hybrid", "hit@1": 0.85}])
    lines = findings(table)
    assert "already at the smallest size" in lines[0] and "first below 0.9 at 100 tools" in lines[1]
    assert lines[2].startswith("- One-card edit, dense, at 54 tools (609 records): 0.30 s") and len(lines) == 3


def test_latency_is_the_median_pass_with_the_spread_of_p50():
    import numpy as np

    times = np.array([[10.0, 20.0, 30.0], [100.0, 100.0, 100.0], [12.0, 22.0, 32.0]])
    cols = latency_columns(times, 1.234)
    assert cols["latency_p50_ms"] == 22.0 and (cols["latency_p50_min_ms"], cols["latency_p50_max_ms"]) == (20.0, 100.0)
    assert (cols["latency_passes"], cols["latency_queries"], cols["latency_load_avg"]) == (3, 3, 1.23)
    assert cols["latency_p95_ms"] == float(np.median(np.percentile(times, 95, axis=1)))

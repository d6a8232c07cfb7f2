"""Smaller bad-input cases of issue 20 (item 8): each names the file or parameter, none is a traceback."""

import json
import subprocess
import sys

import pytest

from toolroute.cards import CatalogError, cards_from_openai_tools, load_toolcards
from toolroute.config import ROOT
from toolroute.queries import QueryFileError, load_queries


def test_non_dict_parameters_in_an_openai_schema_name_the_item(tmp_path):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": "f", "description": "d", "parameters": ["x"]}}]))
    with pytest.raises(CatalogError, match=r"tools.json item 0 \('f'\): field 'parameters'"):
        cards_from_openai_tools(path)


def test_non_utf8_card_and_query_files_are_named(tmp_path):
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "a.yaml").write_bytes("cards:\n  - name: 가\n".encode("euc-kr"))
    with pytest.raises(CatalogError, match="a.yaml: not UTF-8"):
        load_toolcards(tmp_path / "cards")
    (tmp_path / "q.jsonl").write_bytes('{"id": "q1", "query": "보험"}\n'.encode("euc-kr"))
    with pytest.raises(QueryFileError, match="q.jsonl: not UTF-8"):
        load_queries(tmp_path / "q.jsonl")


def test_a_wrong_parameter_type_fails_in_preflight_naming_it(tmp_path):
    from toolroute_lab.run.pipeline import PipelineError, check_notebooks, load_params

    params = tmp_path / "p.yaml"
    params.write_text("notebooks:\n  - name: 05_scale\n    parameters:\n      latency_queries: many\n", encoding="utf-8")
    with pytest.raises(PipelineError, match="'latency_queries': expected a number"):
        check_notebooks(load_params(params))


def test_route_json_into_a_closed_pipe_is_quiet():
    code = ("import sys; from toolroute.cli import main; sys.stdout.close = lambda: None; "
            "import os; r, w = os.pipe(); os.close(r); os.dup2(w, 1); sys.exit(main(['route', 'x', '--arm', 'bm25', '--json']))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr[-2000:]


def test_ctrl_c_marks_the_notebook_interrupted_and_keeps_the_run(tmp_path, monkeypatch):
    import shutil

    import papermill

    from toolroute_lab.run import pipeline
    from toolroute.config import results_dir

    params = tmp_path / "p.yaml"
    params.write_text("notebooks:\n  - name: 01_ingest\n", encoding="utf-8")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(papermill, "execute_notebook", interrupted)
    monkeypatch.setattr(pipeline, "preflight", lambda *a, **k: None)
    run_id = f"test-interrupt-{tmp_path.name}"
    try:
        with pytest.raises(pipeline.PipelineInterrupted, match="--resume"):
            pipeline.run_pipeline(params, run_id=run_id, stream_output=False)
        manifest = json.loads((results_dir() / "runs" / run_id / "manifest.json").read_text())
        assert manifest["notebooks"]["01_ingest"]["status"] == "interrupted"
    finally:
        shutil.rmtree(results_dir() / "runs" / run_id, ignore_errors=True)


@pytest.mark.parametrize("tools, message", [
    ([], "non-empty JSON list"),
    ([{"type": "function", "function": {"name": "a", "description": "x"}}] * 2, "duplicate tool name 'a'"),
    ([{"type": "function", "function": {"name": "lookup", "description": "  "}}], r"\('lookup'\): field 'description' is empty"),
])
def test_a_bad_schema_catalogue_names_the_tool(tmp_path, tools, message):
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(tools), encoding="utf-8")
    with pytest.raises(CatalogError, match=message):
        cards_from_openai_tools(path)


@pytest.mark.parametrize("query", ["😀😀😀", "What is the weather in Paris tomorrow?", "¿Dónde está la estación?", "   "])
def test_other_languages_emoji_and_blank_queries_get_a_ranking_not_a_crash(query, chroma):
    from conftest import HashEmbedder
    from toolroute.cards import Catalog, ToolCard
    from toolroute.routing import RouterConfig, build_router

    card = ToolCard(name="weather", purpose="날씨", when_to_use=("비 와?", "우산 필요해?", "기온은?"))
    for arm in ("dense", "bm25", "hybrid"):
        router = build_router(RouterConfig(arm=arm, embedder=HashEmbedder()), Catalog("w", {"weather": card}, authored=False),
                              chroma, progress=False, no_call="none")
        assert [name for name, _ in router.route(query).ranked] == ["weather"]

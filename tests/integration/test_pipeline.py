"""`toolroute run`: the papermill pipeline (smoke parameter set) and its bad-input checks."""

import json
import re
import time

import pandas as pd
import pytest

from toolroute.config import ROOT
from toolroute_lab.run.pipeline import PipelineError, check_notebooks, cpu_model, load_params, plan_estimates, run_pipeline

# Jupyter kernels talk to papermill over loopback TCP; nothing else may be reached.
kernel_sockets = [pytest.mark.enable_socket, pytest.mark.allow_hosts(["127.0.0.1", "::1", "localhost"])]


@pytest.mark.slow
@kernel_sockets[0]
@kernel_sockets[1]
def test_smoke_run_writes_tables_figures_and_manifest(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "state"))
    start = time.perf_counter()
    run_dir = run_pipeline(ROOT / "notebooks/params/smoke.yaml", run_id="smoke", runs_root=tmp_path / "runs")
    seconds = time.perf_counter() - start
    ingest = run_dir / "01_ingest"
    for name in ["documents.csv", "ingest.csv", "chunk_stats.csv", "chunk_counts.csv", "questions.csv",
                 "retrieval.csv", "retrieval_ranks.csv", "failures.csv", "chunk_lengths.png", "hit_rate.png"]:
        assert (ingest / name).stat().st_size > 0, name
    passes = pd.read_csv(ingest / "ingest.csv").set_index("ingest")
    assert (passes.loc["first", "added"] > 0).all()  # a fresh data folder: everything embedded once
    assert (passes.loc["second", "added"] == 0).all() and not passes.loc["second", "rebuilt"].any()  # incremental
    retrieval = pd.read_csv(ingest / "retrieval.csv")
    assert retrieval[retrieval.collection == "all"]["hit@10"].between(0, 1).all()
    out = run_dir / "02_toolcard_ablation"
    for name in ["ablation_dev.csv", "ablation_test.csv", "paired_test.csv", "failures_test.csv",
                 "recall_curves_test.png", "confusions_test.png", "no_call_test.png", "hit1_test.png",
                 "ablation_by_split.csv", "by_writer.csv", "by_row_kind.csv", "no_call_roc_test.csv",
                 "module_confusion_test.csv", "tool_recall_test.csv", "no_call_curves_test.png", "tool_recall_test.png"]:
        assert (out / name).stat().st_size > 0, name
    steps = run_dir / "03_step_limits"
    for name in ["runs.csv", "by_cap.csv", "by_length.csv", "by_domain.csv", "cut_chains.csv",
                 "completion_vs_cap.png", "cost_vs_cap.png"]:
        assert (steps / name).stat().st_size > 0, name
    runs = pd.read_csv(steps / "runs.csv", keep_default_na=False)
    assert len(runs) == 3 * 4 and set(runs.cap) == {1, 3} and set(runs.arm) == {"routed@5", "oracle", "gold_replay"}
    capped = runs[runs.arm != "gold_replay"]  # the ceiling replays every gold call whatever the cap
    assert (capped.tool_steps <= capped.cap).all() and (runs.error == "").all()
    assert pd.read_csv(steps / "by_arm.csv").groupby("arm").size().to_dict() == {"gold_replay": 2, "oracle": 2, "routed@5": 2}
    ragas = run_dir / "04_ragas_eval"
    for name in ["runs.csv", "scores.csv", "by_kind.csv", "by_scenario.csv", "by_arm.csv", "metrics.png", "arms_cost.png"]:
        assert (ragas / name).stat().st_size > 0, name
    by_kind = pd.read_csv(ragas / "by_kind.csv")
    routed = by_kind[by_kind.arm == "routed@5"].set_index("kind")
    assert routed.loc["scenario", "turns"] == 4 and routed.loc["rag", "turns"] == 2 and routed.loc["query", "turns"] == 3
    assert set(by_kind[by_kind.arm != "routed@5"].kind) == {"query", "rag"}  # the other arms on the test queries only,
    assert set(by_kind[by_kind.kind == "rag"].arm) == {"routed@5", "gold_replay"}  # the ceiling on the RAG questions too
    ragas_runs = pd.read_csv(ragas / "runs.csv", keep_default_na=False)
    replayed = ragas_runs[(ragas_runs.arm == "gold_replay") & (ragas_runs.kind == "rag")]
    assert len(replayed) == 2 and (replayed.retrieved_contexts.map(json.loads).map(len) > 0).all()  # passages read
    assert not (ragas / "judged.csv").exists()  # judge: none
    headline = pd.read_csv(run_dir / "headline.csv").set_index("metric")
    assert headline.loc["Hit@1", "seed 002"] == 0.969 and 0 <= headline.loc["Hit@1", "toolroute"] <= 1
    html = (run_dir / "report.html").read_text()
    assert "seed 002" in html and "data:image/png;base64" in html and "import warnings" not in html  # no code cells
    for section in ["Routing at scale (05)", "Improving the cards (06)"]:  # the report ran after them
        assert section in html, section
    assert "the gold tools bound by an oracle router" in html  # 03's findings read the arms
    assert "by the lever that lost" in html  # 04's findings tell the failed consultation turns apart
    assert "Test queries completed" in html  # 04's findings read the arms of the test queries
    assert "completion [95% CI]" in html  # the arms as one captioned table per notebook
    assert "05_scale is not in this run" not in html and "06_card_improvement is not in this run" not in html
    manifest = json.loads((run_dir / "manifest.json").read_text())
    scale_out = run_dir / "05_scale"
    for name in ["scale.csv", "edit_cost.csv", "bfcl_routing.csv", "scale.png", "findings.md"]:
        assert (scale_out / name).stat().st_size > 0, name
    sizes = pd.read_csv(scale_out / "scale.csv")
    assert list(sizes["size"]) == [54, 54, 120, 120] and sizes["hit@1"].between(0, 1).all()
    assert sizes.loc[sizes["size"] == 120, "embedded"].iloc[0] > 0  # the 66 distractors, embedded once
    bfcl_rows = pd.read_csv(scale_out / "bfcl_routing.csv")
    assert (bfcl_rows.loc[bfcl_rows["category"] == "all", "n"] == 20).all()
    improvement = run_dir / "06_card_improvement"
    for name in ["augmentation.csv", "augmentation_cost.csv", "rerank.csv", "card_improvement.png", "findings.md"]:
        assert (improvement / name).stat().st_size > 0, name
    assert pd.read_csv(improvement / "augmentation_cost.csv")["llm_calls"].iloc[0] == 54
    assert pd.read_csv(improvement / "rerank.csv")["n"].eq(5).all()
    names = ["01_ingest", "02_toolcard_ablation", "03_step_limits", "04_ragas_eval", "05_scale", "06_card_improvement",
             "07_report"]
    for name in names:
        assert manifest["notebooks"][name]["status"] == "ok", name
        assert manifest["notebooks"][name]["git_commit"] == manifest["git_commit"], name  # each notebook's own commit
    assert manifest["versions"]["chromadb"] and "git_commit" in manifest
    assert manifest["models"]["llm_gguf_sha256"] and manifest["notebooks"]["07_report"]["html"] == "report.html"
    for name in names:
        executed = json.loads((run_dir / f"{name}.ipynb").read_text())
        assert any(c.get("outputs") for c in executed["cells"] if c["cell_type"] == "code"), name
    print(f"smoke pipeline: {seconds:.1f} s (" + ", ".join(
        f"{n} {e['seconds']} s" for n, e in manifest["notebooks"].items()) + ")")
    # --resume skips what is done with the same parameters: no notebook starts again
    run_pipeline(ROOT / "notebooks/params/smoke.yaml", run_id="smoke", runs_root=tmp_path / "runs", resume=True)
    resumed = json.loads((run_dir / "manifest.json").read_text())
    assert {n: e["started"] for n, e in resumed["notebooks"].items()} == {n: e["started"] for n, e in manifest["notebooks"].items()}


def test_missing_params_file():
    with pytest.raises(PipelineError, match="no such parameter file"):
        run_pipeline("notebooks/params/nope.yaml")


def test_unknown_parameter_is_reported_before_running(tmp_path):
    params = tmp_path / "p.yaml"
    params.write_text("notebooks:\n  - name: 02_toolcard_ablation\n    parameters: {embedderz: [e5-small]}\n")
    with pytest.raises(PipelineError, match=r"no parameter\(s\) \['embedderz'\]"):
        run_pipeline(params, runs_root=tmp_path / "runs")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def _write_notebooks(tmp_path, sources: dict[str, str]):
    """Tiny notebooks in tmp_path/nbs and a parameter file listing them in order: (nbdir, params)."""
    import nbformat

    nbdir = tmp_path / "nbs"
    nbdir.mkdir()
    for name, source in sources.items():
        nb = nbformat.v4.new_notebook()
        params = nbformat.v4.new_code_cell("output_dir = '.'")
        params.metadata["tags"] = ["parameters"]
        nb.cells = [params, nbformat.v4.new_code_cell(source)]
        nb.metadata["kernelspec"] = {"name": "toolroute", "display_name": "toolroute", "language": "python"}
        nbformat.write(nb, nbdir / f"{name}.ipynb")
    params = tmp_path / "p.yaml"
    params.write_text("notebooks:\n" + "".join(f"  - name: {name}\n" for name in sources))
    return nbdir, params


@kernel_sockets[0]
@kernel_sockets[1]
def test_failing_notebook_is_named_with_its_cell_and_earlier_outputs_stay(tmp_path):
    nbdir, params = _write_notebooks(tmp_path, {"a_ok": "x = 1", "b_fails": "raise RuntimeError('broken on purpose')"})
    with pytest.raises(PipelineError, match=r"notebook 'b_fails' failed at cell \d+: RuntimeError: broken on purpose"):
        run_pipeline(params, run_id="r", runs_root=tmp_path / "runs", notebooks_dir=nbdir)
    manifest = json.loads((tmp_path / "runs/r/manifest.json").read_text())
    assert manifest["notebooks"]["a_ok"]["status"] == "ok"
    assert manifest["notebooks"]["b_fails"]["status"] == "failed"
    assert (tmp_path / "runs/r/a_ok.ipynb").exists()


@kernel_sockets[0]
@kernel_sockets[1]
def test_only_runs_the_named_notebooks_and_keeps_the_others(tmp_path):
    nbdir, params = _write_notebooks(tmp_path, {"a_first": "x = 1", "b_second": "y = 2"})
    run_pipeline(params, run_id="r", runs_root=tmp_path / "runs", notebooks_dir=nbdir, only=["a_first"])
    assert (tmp_path / "runs/r/a_first.ipynb").exists() and not (tmp_path / "runs/r/b_second.ipynb").exists()
    path = tmp_path / "runs/r/manifest.json"
    older = json.loads(path.read_text())  # as an older manifest: one CPU for the run, none per notebook
    older["cpu"] = "an older machine"
    del older["notebooks"]["a_first"]["cpu"]
    path.write_text(json.dumps(older))
    run_pipeline(params, run_id="r", runs_root=tmp_path / "runs", notebooks_dir=nbdir, only=["b_second"])
    manifest = json.loads(path.read_text())
    assert [manifest["notebooks"][n]["status"] for n in ("a_first", "b_second")] == ["ok", "ok"]
    assert manifest["notebooks"]["a_first"]["cpu"] == "an older machine"  # where each part ran
    assert manifest["notebooks"]["b_second"]["cpu"] == manifest["cpu"] == cpu_model()
    with pytest.raises(PipelineError, match=r"p.yaml: --only names \['c_third'\].*lists \['a_first', 'b_second'\]"):
        run_pipeline(params, run_id="r", runs_root=tmp_path / "runs", notebooks_dir=nbdir, only=["c_third"])


def test_committed_notebooks_have_no_outputs_and_run_in_order():
    import nbformat

    names = [n.stem for n in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    assert names == ["01_ingest", "02_toolcard_ablation", "03_step_limits", "04_ragas_eval", "05_scale",
                     "06_card_improvement", "07_report"]
    for name in names:
        nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code and "parameters" in code[0].metadata.get("tags", []), name
        assert all(not c.outputs and c.execution_count is None for c in code), f"{name}: clear the outputs"
    # numeric order: the report is numbered last and runs last, so that it gathers every other notebook
    for params in ["default", "smoke", "quick"]:
        assert [e["name"] for e in load_params(f"notebooks/params/{params}.yaml")["notebooks"]] == names


@kernel_sockets[0]
@kernel_sockets[1]
def test_the_plan_lists_every_notebook_with_an_estimate_and_each_finish_prints_an_eta(tmp_path, capsys):
    nbdir, params = _write_notebooks(tmp_path, {"a_first": "x = 1", "b_second": "y = 2", "c_third": "z = 3"})
    params.write_text("notebooks:\n  - {name: a_first, expected_seconds: 40}\n  - {name: b_second, expected_seconds: 200}\n"
                      "  - name: c_third\n")
    run_pipeline(params, run_id="r", runs_root=tmp_path / "runs", notebooks_dir=nbdir)
    out = capsys.readouterr().out.splitlines()
    plan = out.index(next(line for line in out if line.startswith("Plan: 3 notebook(s)")))
    assert "about 4 min plus 1 notebook(s) without an estimate" in out[plan]
    assert [line.split()[:3] for line in out[plan + 1:plan + 4]] == [
        ["a_first", "about", "40"], ["b_second", "about", "3"], ["c_third", "no", "estimate:"]]
    assert "expected_seconds" in out[plan + 1]
    eta = [line for line in out if " done in " in line]
    assert len(eta) == 3 and all(line.count("\n") == 0 for line in eta)
    assert re.fullmatch(r"\[a_first\] done in \d+ s \(expected about 40 s\); elapsed \d+ s; 2 notebook\(s\) left, "
                        r"about 3 min plus 1 without an estimate( \(so far [\d.]+x the estimates\))?", eta[0]), eta[0]
    assert "1 notebook(s) left, time unknown" in eta[1] and eta[2].endswith("all done")
    manifest = json.loads((tmp_path / "runs/r/manifest.json").read_text())
    assert [manifest["notebooks"][n]["expected_seconds"] for n in ("a_first", "b_second", "c_third")] == [40, 200, None]


@pytest.mark.parametrize("entry, message", [
    ("{name: 01_ingest, expected_secs: 4}", r"notebooks\[0\] \(01_ingest\): unknown key\(s\) \['expected_secs'\]"),
    ("{name: 01_ingest, expected_seconds: soon}", "expected_seconds must be a number of seconds, got 'soon'"),
])
def test_a_bad_notebook_entry_is_refused_naming_it(tmp_path, entry, message):
    with pytest.raises(PipelineError, match=message):
        run_pipeline(_params(tmp_path, f"notebooks:\n  - {entry}\n"), runs_root=tmp_path / "runs")


def test_every_notebook_of_the_quick_set_has_an_estimate_within_20_minutes():
    """The quick set's promise (README): every notebook estimated, under 20 minutes in all, the LLM notebooks
    (scaled from the reference run by their rows) within about 12."""
    params = load_params("notebooks/params/quick.yaml")
    estimates = plan_estimates(params, check_notebooks(params))
    assert all(e.seconds is not None for e in estimates.values()), estimates
    assert sum(e.seconds for e in estimates.values()) <= 20 * 60
    llm = ["03_step_limits", "04_ragas_eval", "06_card_improvement"]
    # scaled from the reference by rows, or given in the file where the reference's time is not a fresh
    # run's (06 of 6 December replayed its saved replies; 03 and 04 resumed from checkpoints, so their
    # manifest keeps only the last attempt; quick.yaml says how each figure was obtained)
    assert all("scaled to" in estimates[n].source or estimates[n].source == "the parameter file's expected_seconds"
               for n in llm)
    assert sum(estimates[n].seconds for n in llm) <= 12.5 * 60


def _params(tmp_path, text: str):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("notebook, parameters, message", [
    ("03_step_limits", "{task_ids: []}", "task_ids: the subset is empty"),
    ("03_step_limits", "{domains: [insurance], task_ids: [th04]}", r"task_ids: \['th04'\] are not tasks"),
    ("03_step_limits", "{domains: [bank]}", "domains: unknown domain"),
    ("03_step_limits", "{caps: [0, 3], llm: replay}", "caps: 0 is below 1"),
    ("04_ragas_eval", "{scenario_ids: [], rag_ids: [], query_split: ''}", "selection is empty"),
    ("04_ragas_eval", "{scenario_ids: [S42], llm: replay}", "scenario_ids: unknown"),
    ("04_ragas_eval", "{llm: gpt, scenario_ids: [S1], rag_ids: [], query_split: ''}", "llm must be 'auto' or 'replay'"),
    ("05_scale", "{sizes: [20, 100]}", "sizes: every size must be at least 54"),
    ("05_scale", "{arms: [dense, sparse]}", r"arms: unknown arm\(s\) \['sparse'\]"),
    ("05_scale", "{bfcl_categories: [exec_simple]}", "bfcl_categories: unknown BFCL categories"),
    ("06_card_improvement", "{rerank_split: holdout, llm: replay}", "no insurance query split 'holdout'"),
])
def test_bad_data_selection_is_reported_before_any_notebook(tmp_path, notebook, parameters, message):
    params = _params(tmp_path, f"notebooks:\n  - name: 01_ingest\n  - name: {notebook}\n    parameters: {parameters}\n")
    with pytest.raises(PipelineError, match=f"notebook '{notebook}': .*{message}"):
        run_pipeline(params, runs_root=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()  # nothing started, not even 01


@kernel_sockets[0]
@kernel_sockets[1]
def test_unreachable_llm_endpoint_is_reported_before_any_notebook(tmp_path, monkeypatch):
    from toolroute.llm.server import free_port

    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    params = _params(tmp_path, "notebooks:\n  - name: 03_step_limits\n"
                               f"    parameters: {{task_ids: [th04], domains: [threat], "
                               f"llms: [{{name: far, base_url: '{dead}', model: m}}]}}\n")
    with pytest.raises(PipelineError, match=f"LLM endpoint {dead} of model 'far' does not answer"):
        run_pipeline(params, runs_root=tmp_path / "runs")
    monkeypatch.setenv("TOOLROUTE_LLM_BASE_URL", dead)  # the environment's endpoint is checked the same way
    params = _params(tmp_path, "notebooks:\n  - name: 04_ragas_eval\n    parameters: {rag_ids: [], query_split: ''}\n")
    with pytest.raises(PipelineError, match="does not answer"):
        run_pipeline(params, runs_root=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_a_literal_key_in_llms_is_refused_naming_the_file_and_field(tmp_path):
    shared = _params(tmp_path, "llms:\n  - {name: mine, base_url: 'http://127.0.0.1:9/v1', model: m, api_key: sk-abc}\n"
                               "notebooks:\n  - name: 03_step_limits\n")
    with pytest.raises(PipelineError, match=r"p.yaml: llms\[0\]\.api_key: a literal key .* api_key_env"):
        run_pipeline(shared, runs_root=tmp_path / "runs")
    own = _params(tmp_path, "notebooks:\n  - name: 04_ragas_eval\n    parameters: {llm: replay, llms: "
                            "[{name: embedded}, {name: b, base_url: 'http://127.0.0.1:9/v1', model: m, secret: x}]}\n")
    with pytest.raises(PipelineError, match=r"p.yaml: notebook '04_ragas_eval': llms\[1\]\.secret: a literal key"):
        run_pipeline(own, runs_root=tmp_path / "runs")
    unset = _params(tmp_path, "llms:\n  - {name: mine, base_url: 'http://127.0.0.1:9/v1', model: m, "
                              "api_key_env: TOOLROUTE_TEST_UNSET_KEY}\nnotebooks:\n  - name: 03_step_limits\n")
    with pytest.raises(PipelineError, match="environment variable TOOLROUTE_TEST_UNSET_KEY is not set"):
        run_pipeline(unset, runs_root=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
@kernel_sockets[0]
@kernel_sockets[1]
def test_two_models_on_a_mock_endpoint_through_03_04_and_07(tmp_path, monkeypatch):
    """The three LLM notebooks with `llms:` naming two models on the scripted OpenAI-compatible endpoint
    (loopback, fixed latency, deterministic replies with tool calls): both models in every table, the
    manifest records each one's served model and system_fingerprint, and the report compares them."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from serving import ScriptedProcess

    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("TOOLROUTE_TEST_MOCK_KEY", "sk-mock-not-a-secret")
    monkeypatch.delenv("TOOLROUTE_LLM_BASE_URL", raising=False)
    server = ScriptedProcess(latency=0.05).start()
    try:
        url = server.base_url
        params = _params(tmp_path, f"""llms:
  - {{name: mock-a, base_url: '{url}', model: mock-a, api_key_env: TOOLROUTE_TEST_MOCK_KEY, max_concurrency: 4}}
  - {{name: mock-b, base_url: '{url}', model: mock-b, max_concurrency: 2}}
notebooks:
  - name: 03_step_limits
    parameters: {{domains: [threat], caps: [1, 3], task_ids: [th04, th10, th15]}}
  - name: 04_ragas_eval
    parameters: {{scenario_ids: [S1], rag_ids: [], query_split: test, query_limit: 3, judge: none}}
  - name: 07_report
    parameters: {{token_queries: 0}}
""")
        start = time.perf_counter()
        run_dir = run_pipeline(params, run_id="models", runs_root=tmp_path / "runs")
        seconds = time.perf_counter() - start
    finally:
        server.stop()
    runs = pd.read_csv(run_dir / "03_step_limits/runs.csv", keep_default_na=False)
    assert list(runs["model"].unique()) == ["mock-a", "mock-b"] and len(runs) == 2 * 3 * 2
    assert (runs.error == "").all()
    by_cap = pd.read_csv(run_dir / "03_step_limits/by_cap.csv")
    assert sorted(by_cap["model"].unique()) == ["mock-a", "mock-b"]
    by_kind = pd.read_csv(run_dir / "04_ragas_eval/by_kind.csv")
    assert set(zip(by_kind["model"], by_kind["kind"])) == {(m, k) for m in ("mock-a", "mock-b") for k in ("scenario", "query")}
    scores = pd.read_csv(run_dir / "04_ragas_eval/scores.csv")
    assert len(scores) == 2 * 7 and scores.groupby("model").size().eq(7).all()
    models = pd.read_csv(run_dir / "models.csv")
    assert list(models["model"]) == ["mock-a", "mock-b"] and set(models["system_fingerprint"]) == {"fp_scripted"}
    assert list(models["served_model"]) == ["mock-a", "mock-b"] and models["03 completed"].notna().all()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    for notebook in ("03_step_limits", "04_ragas_eval"):
        described = {e["name"]: e for e in manifest["notebooks"][notebook]["llms"]}
        assert described["mock-a"]["served_model"] == "mock-a" and described["mock-b"]["max_concurrency"] == 2
        assert described["mock-a"]["system_fingerprint"] == "fp_scripted"
    assert "sk-mock" not in (run_dir / "manifest.json").read_text()
    assert "The models side by side" in (run_dir / "report.html").read_text()
    print(f"03, 04, 07 with two mock models: {seconds:.0f} s (" + ", ".join(
        f"{n} {e['seconds']} s" for n, e in manifest["notebooks"].items()) + ")")

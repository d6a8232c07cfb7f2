"""Chroma server mode: with TOOLROUTE_CHROMA_URL set, the tool index and the RAG stores live on the server."""

from __future__ import annotations

import pytest

from toolroute.cards import Catalog, ToolCard
from toolroute.cli import main
from toolroute.config import ChromaUnavailable
from toolroute.chroma import open_client
from toolroute.rag import DocumentStore, Page, chunk_pages
from toolroute.routing import RouterConfig, build_router

from conftest import LOOPBACK_ONLY, HashEmbedder, _free_port

pytestmark = LOOPBACK_ONLY


def _catalog(name):
    cards = {f"t{i}": ToolCard(name=f"t{i}", purpose=f"도구 {i} 목적 {'가나다'[i]}",
                               when_to_use=tuple(f"도구 {i} 예시 {j} {'라마바'[j]}" for j in range(3))) for i in range(3)}
    return Catalog(name, cards, authored=False)


def test_the_url_sends_the_index_and_the_rag_store_to_the_server(chroma_server, monkeypatch, tmp_path):
    monkeypatch.setenv("TOOLROUTE_CHROMA_URL", chroma_server)
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "data"))
    client = open_client()
    assert type(client).__name__ != "PersistentClient" and client.heartbeat() > 0
    router = build_router(RouterConfig(embedder=HashEmbedder(), aggregation="max", rrf_k=60, dense_weight=1.0),
                          _catalog("server-mode"), progress=False, no_call="none")  # client from the environment
    assert router.route("도구 1 예시 2 바").top(1) == ["t1"]
    store = DocumentStore("server-terms", HashEmbedder())
    store.ingest(chunk_pages([Page("약관", 1, "제1조 (목적) 이 약관은 보험금 지급을 정합니다.")]), progress=False)
    names = {c.name for c in open_client().list_collections()}
    assert any(n.startswith("tr-server-mode-") for n in names) and any(n.startswith("rag-server-terms-") for n in names)
    assert not (tmp_path / "data" / "chroma").exists()  # nothing went to the embedded store
    assert type(open_client(tmp_path / "explicit")).__name__ == "Client"  # an explicit path stays embedded


def test_a_server_that_is_down_is_a_clear_error(monkeypatch, capsys):
    url = f"http://127.0.0.1:{_free_port()}"
    monkeypatch.setenv("TOOLROUTE_CHROMA_URL", url)
    with pytest.raises(ChromaUnavailable, match=rf"Chroma server at {url} \(TOOLROUTE_CHROMA_URL\) does not answer.*chroma run"):
        open_client()
    assert main(["route", "보험료 알려줘"]) == 2
    assert "does not answer" in capsys.readouterr().err


def test_a_malformed_url_is_named(monkeypatch):
    monkeypatch.setenv("TOOLROUTE_CHROMA_URL", "http://host with space:80")
    with pytest.raises(ChromaUnavailable, match="is not a server address"):
        open_client()

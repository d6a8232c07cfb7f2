"""A card edit while 20 chat streams run (issue 22, safety under concurrency), over real loopback HTTP:
every turn completes (`done`, no `error`) and routes on the old catalogue or the new one, never on a
half-written index. The agent's router is the hybrid one (Chroma and BM25, the hash embedder), the LLM
the scripted OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from conftest import LOOPBACK_ONLY, HashEmbedder
from serving import ThreadServer, openai_model
from toolroute.cards import open_catalog
from toolroute.config import toolcards_dir
from toolroute.serve import ServeOptions, create_app
from toolroute.serve.scripted import create_scripted_app

pytestmark = LOOPBACK_ONLY

QUESTION = "55세 여성 실속치매보험 보험료랑 보장 내용 알려줘"
STREAMS = 20
TOKEN = "edit-under-load"


def hybrid_agent(llm, memory, chroma):
    from toolroute.agent import build_agent, load_pack, sqlite_checkpointer  # the agent stack, for this test's app only
    from toolroute.routing import RouterConfig, build_router  # the agent stack, for this test's app only

    catalog = open_catalog(toolcards_dir("insurance"))  # the effective catalogue, as `toolroute serve` opens it
    router = build_router(RouterConfig(arm="hybrid", embedder=HashEmbedder(), dev=None), catalog, chroma,
                          progress=False, no_call="none")
    return build_agent(load_pack("insurance"), llm, router, None, None, sqlite_checkpointer(memory))


@pytest.fixture
def served(tmp_path, chroma, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_CARDSTORE", str(tmp_path / "cardstore"))  # this test's edits stay its own
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path / "data"))  # and so does the audit log
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", TOKEN)
    with ThreadServer(create_scripted_app(latency=0.05)) as llm:
        app = create_app(agent_factory=lambda model: hybrid_agent(model, tmp_path / "memory.sqlite", chroma),
                         llm=openai_model(llm.url + "/v1"), build_in_background=False,
                         options=ServeOptions(memory_path=tmp_path / "memory.sqlite", max_concurrent_turns=STREAMS + 1))
        with ThreadServer(app) as server:
            yield app, server.url


def _turn(url: str) -> tuple[float, float, list[tuple[str, object]]]:
    """(request sent, route event received, frames) of one streamed turn in a new thread."""
    from httpx_sse import connect_sse  # the SSE client of the serving tests

    frames, routed = [], None
    with httpx.Client(base_url=url, timeout=120) as client:
        sent = time.monotonic()
        with connect_sse(client, "POST", "/api/chat/stream", json={"message": QUESTION}) as source:
            assert source.response.status_code == 200
            for sse in source.iter_sse():
                frames.append((sse.event, json.loads(sse.data)))
                routed = routed or time.monotonic()
    return sent, routed, frames


def _route(frames) -> list[str]:
    return next(data for name, data in frames if name == "route")["tools"]


def test_an_edit_while_20_streams_run(served):
    app, url = served
    old = _route(_turn(url)[2])
    target = "product_search" if "product_search" not in old else "claim_guide"
    assert target not in old
    with httpx.Client(base_url=url, timeout=60) as client:
        card = client.get(f"/api/tools/{target}").json()
        edit = {"when_to_use": [*card["card"]["when_to_use"], QUESTION, "55세 여성 치매보험 보험료와 보장 알려줘"],
                "message": "test: the question routes here too"}

        results: list = [None] * STREAMS
        failures: list = []

        def stream(i: int) -> None:
            try:
                results[i] = _turn(url)
            except Exception as exc:  # noqa: BLE001 - reported by the assertion below
                failures.append(f"stream {i}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=stream, args=(i,)) for i in range(STREAMS)]
        for i, t in enumerate(threads):
            t.start()
            if i == STREAMS // 2:  # half of the streams under way: the edit lands in the middle
                put_sent = time.monotonic()
                saved = client.put(f"/api/tools/{target}/card", json=edit,
                                   headers={"Authorization": f"Bearer {TOKEN}", "If-Match": str(card["version"])})
                put_done = time.monotonic()
                assert saved.status_code == 200, saved.text
            time.sleep(0.05)
        for t in threads:
            t.join(timeout=120)
    assert failures == []
    new = _route(_turn(url)[2])
    assert target in new and new != old
    after, either = 0, 0
    for sent, routed, frames in results:
        names = [name for name, _ in frames]
        assert names[0] == "route" and names[-1] == "done" and "error" not in names, names
        assert frames[-1][1]["failed"] is False
        tools = _route(frames)
        assert tools in (old, new), f"routed on neither catalogue: {tools}"
        if sent > put_done:  # asked after the edit was saved: the new catalogue
            assert tools == new
            after += 1
        elif routed < put_sent:  # answered before the edit was sent: the old one
            assert tools == old
        else:
            either += 1
    print(f"streams: {after} asked after the edit, {either} either, {STREAMS - after - either} before")
    assert after >= 1 and app.state.slots.active == 0

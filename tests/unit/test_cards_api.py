"""The card API of the served app (issue 22): token, If-Match, 409/422, edits reach the live router,
rollback, unregister, concurrency, audit log. In process (FastAPI's TestClient), no sockets."""

import json
import threading

import pytest
import yaml
from fastapi import FastAPI
from fastapi.testclient import TestClient

from conftest import HashEmbedder
from toolroute.cards.store import CardStore
from toolroute.routing import RouterConfig, build_router
from toolroute.serve.cards_api import CardOps, card_routes

CARDS = [
    {"name": "weather_now", "purpose": "지금 날씨를 알려준다",
     "when_to_use": ["오늘 서울 날씨 어때", "지금 비 와?", "밖에 바람 많이 불어?"], "tags": ["날씨", "현재"]},
    {"name": "weather_forecast", "purpose": "며칠 뒤 날씨 예보를 알려준다",
     "when_to_use": ["주말에 비 온대?", "다음 주 기온 알려줘", "모레 눈 와?"], "tags": ["예보"]},
    {"name": "bus_arrival", "purpose": "버스 도착 시간을 알려준다",
     "when_to_use": ["143번 버스 언제 와", "정류장에 버스 몇 분 남았어", "막차 끊겼어?"], "tags": ["교통"]},
]
QUERY = "지하철 첫차 시간 알려줘"
TOKEN = "s3cret-admin"


@pytest.fixture
def app(tmp_path, chroma, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", TOKEN)
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "demo.yaml").write_text(yaml.safe_dump({"module": "demo", "cards": CARDS}, allow_unicode=True), encoding="utf-8")
    store = CardStore(folder, tmp_path / "store" / "demo.json")
    router = build_router(RouterConfig(embedder=HashEmbedder(), dev=None), store.catalog(), chroma, progress=False,
                          no_call="none")
    ops = CardOps(router, store, audit_path=tmp_path / "audit.jsonl")
    api = FastAPI()
    api.include_router(card_routes(lambda: ops))
    return TestClient(api), ops


def _auth(token=TOKEN):
    return {"Authorization": f"Bearer {token}"}


def _top1(client):
    return client.post("/api/route", json={"query": QUERY, "k": 3}).json()["tools"][0]["name"]


def test_reading_needs_no_token_and_shows_versions_and_vectors(app):
    client, _ = app
    assert [t["name"] for t in client.get("/api/tools").json()] == ["weather_now", "weather_forecast", "bus_arrival"]
    card = client.get("/api/tools/bus_arrival").json()
    assert card["version"] == 0 and card["vectors"] == 5 and card["card"]["purpose"] == "버스 도착 시간을 알려준다"
    assert client.get("/api/tools/nope").status_code == 404


def test_writes_need_the_token_and_a_current_version(app, monkeypatch):
    client, ops = app
    edit = {"when_to_use": [*CARDS[2]["when_to_use"], QUERY]}
    assert client.put("/api/tools/bus_arrival/card", json=edit, headers={"If-Match": "0"}).status_code == 401
    assert client.put("/api/tools/bus_arrival/card", json=edit, headers={"If-Match": "0", **_auth("wrong")}).status_code == 401
    assert client.put("/api/tools/bus_arrival/card", json=edit, headers=_auth()).status_code == 428
    assert client.put("/api/tools/bus_arrival/card", json=edit, headers={"If-Match": "3", **_auth()}).status_code == 409
    bad = client.put("/api/tools/bus_arrival/card", json={"purpose": "  "}, headers={"If-Match": "0", **_auth()})
    assert bad.status_code == 422 and "purpose" in json.dumps(bad.json(), ensure_ascii=False)
    assert ops.store.head == 0  # nothing was written by any refused call
    monkeypatch.delenv("TOOLROUTE_ADMIN_TOKEN")
    assert client.put("/api/tools/bus_arrival/card", json=edit, headers={"If-Match": "0", **_auth()}).status_code == 403


def test_an_edit_reaches_the_next_route_call_and_a_rollback_undoes_it(app):
    client, ops = app
    before = _top1(client)
    target = next(c["name"] for c in CARDS if c["name"] != before)
    examples = [*next(c for c in CARDS if c["name"] == target)["when_to_use"], QUERY, "지하철 첫차 몇 시야"]
    saved = client.put(f"/api/tools/{target}/card", json={"when_to_use": examples, "message": "지하철"},
                       headers={"If-Match": "0", **_auth()})
    assert saved.status_code == 200 and saved.json()["version"] == 1
    assert _top1(client) == target  # the very next route call
    assert client.get(f"/api/tools/{target}/history").json()[0]["message"] == "지하철"
    assert f"  + {QUERY}" in client.get(f"/api/tools/{target}/diff", params={"from": 0, "to": 1}).json()["lines"]
    assert client.post(f"/api/tools/{target}/rollback", json={"to": 0}, headers={"If-Match": "0", **_auth()}).status_code == 409
    back = client.post(f"/api/tools/{target}/rollback", json={"to": 0}, headers={"If-Match": "1", **_auth()})
    assert back.status_code == 200 and _top1(client) == before
    audit = [json.loads(line) for line in ops.audit_path.read_text(encoding="utf-8").splitlines()]
    assert [a["action"] for a in audit] == ["edit", "rollback"] and TOKEN not in ops.audit_path.read_text()
    assert audit[0]["version_before"] == 0 and audit[0]["version_after"] == 1 and audit[0]["diff"]


def test_an_unregistered_tool_never_comes_back_in_a_route(app):
    client, _ = app
    gone = client.delete("/api/tools/bus_arrival", headers=_auth())
    assert gone.status_code == 200 and gone.json()["vectors"] == 0
    queries = [f"{i}번 버스 언제 와 {QUERY}" for i in range(1000)]
    assert not any(t["name"] == "bus_arrival" for q in queries
                   for t in client.post("/api/route", json={"query": q, "k": 3}).json()["tools"])
    assert client.get("/api/tools/bus_arrival").status_code == 404
    assert client.get("/api/stats").json()["tools"] == 2


def test_an_unregistration_survives_a_restart_and_register_brings_the_tool_back(app, chroma):
    client, ops = app
    gone = client.delete("/api/tools/bus_arrival", params={"message": "노선 폐지"}, headers={"If-Match": "0", **_auth()})
    assert gone.status_code == 200 and gone.json()["version"] == 1
    assert client.delete("/api/tools/bus_arrival", headers=_auth()).status_code == 404  # gone already
    # a restarted server: a new store and router on the same files
    store = CardStore(ops.store.catalog_dir, ops.store.path)
    assert "bus_arrival" not in store.catalog() and store.unregistered() == ["bus_arrival"]
    restarted = CardOps(build_router(RouterConfig(embedder=HashEmbedder(), dev=None), store.catalog(), chroma,
                                     progress=False, no_call="none"), store, audit_path=ops.audit_path)
    api = FastAPI()
    api.include_router(card_routes(lambda: restarted))
    again = TestClient(api)
    assert "bus_arrival" not in [t["name"] for t in again.get("/api/tools").json()]
    assert again.get("/api/tools/bus_arrival").status_code == 404
    history = again.get("/api/tools/bus_arrival/history").json()
    assert [(h["kind"], h["message"]) for h in history] == [("unregister", "노선 폐지")]
    assert again.get("/api/tools/bus_arrival/diff", params={"from": 0, "to": 1}).json()["lines"] == [
        "  - registered", "  + unregistered"]
    assert again.post("/api/tools/bus_arrival/register", headers={"If-Match": "0", **_auth()}).status_code == 409
    back = again.post("/api/tools/bus_arrival/register", headers={"If-Match": "1", **_auth()})
    assert back.status_code == 200 and back.json()["version"] == 2 and back.json()["vectors"] == 5
    assert "bus_arrival" in [t["name"] for t in again.post("/api/route", json={"query": "143번 버스 언제 와", "k": 1}).json()["tools"]]
    assert again.post("/api/tools/bus_arrival/register", headers=_auth()).status_code == 409  # registered already
    assert "bus_arrival" in CardStore(ops.store.catalog_dir, ops.store.path).catalog()
    audit = [json.loads(line) for line in ops.audit_path.read_text(encoding="utf-8").splitlines()]
    assert [(a["action"], a["version_before"], a["version_after"]) for a in audit] == [("unregister", 0, 1),
                                                                                       ("register", 1, 2)]


def test_two_edits_of_one_card_from_two_clients_one_wins_one_gets_409(app):
    client, ops = app
    codes, start = [], threading.Barrier(2)

    def edit(text):
        start.wait()
        codes.append(client.put("/api/tools/weather_now/card", json={"purpose": text},
                                headers={"If-Match": "0", **_auth()}).status_code)

    threads = [threading.Thread(target=edit, args=(t,)) for t in ("현재 날씨 A", "현재 날씨 B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 409] and ops.store.head == 1
    history = client.get("/api/tools/weather_now/history").json()
    assert len(history) == 1  # exactly one new version: the winner's, nothing lost or doubled
    assert client.get("/api/tools/weather_now").json()["card"]["purpose"] in ("현재 날씨 A", "현재 날씨 B")


def test_two_servers_on_one_card_store_cannot_both_win(app, chroma):
    """Two processes' CardOps (each its own lock) share the store file: its file lock and version check decide."""
    client, ops = app
    other = CardOps(build_router(RouterConfig(embedder=HashEmbedder(), dev=None), ops.store.catalog(), chroma,
                                 progress=False, no_call="none"), CardStore(ops.store.catalog_dir, ops.store.path),
                    audit_path=ops.audit_path)
    api = FastAPI()
    api.include_router(card_routes(lambda: other))
    clients, codes, start = [client, TestClient(api)], [], threading.Barrier(2)

    def edit(i):
        start.wait()
        codes.append(clients[i].put("/api/tools/bus_arrival/card", json={"tags": ["교통", f"서버{i}"]},
                                    headers={"If-Match": "0", **_auth()}).status_code)

    threads = [threading.Thread(target=edit, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 409]
    assert [v.number for v in CardStore(ops.store.catalog_dir, ops.store.path).history("bus_arrival")] == [1]

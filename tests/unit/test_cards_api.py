"""The card API of the served app (issue 22): token, If-Match, 409/422, edits reach the live router,
rollback, unregister, concurrency, audit log; the quick test (`/api/eval`) with a pending edit, LLM
proposals and module hot reload. In process (FastAPI's TestClient), no sockets."""

import json
import sys
from collections import Counter
import threading
from types import SimpleNamespace

import pytest
import yaml
from fastapi import FastAPI
from fastapi.testclient import TestClient
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from conftest import HashEmbedder
from serving import serving_agent
from toolroute.agent.pack import DomainPack
from toolroute.agent.registry import ToolRegistry
from toolroute.cards.store import CardStore
from toolroute.routing import RouterConfig, build_router
from toolroute.serve.app import ServeOptions, create_app
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
    ops = CardOps(router, store, audit_path=tmp_path / "audit.jsonl", queries_dir=tmp_path / "queries")
    api = FastAPI()
    api.include_router(card_routes(lambda: ops))
    return TestClient(api), ops


TUNE = [("t1", "오늘 서울 날씨 어때", ["weather_now"]), ("t2", "주말에 비 온대?", ["weather_forecast"]),
        ("t3", "143번 버스 언제 와", ["bus_arrival"]), ("t4", "김치찌개 끓이는 법", [])]


@pytest.fixture
def tuned(app, tmp_path):
    """The app with a tune split: three queries the cards answer, one no-call row, and QUERY expecting
    a tool the router does not put first (`target`), so that it fails until that card learns it."""
    client, ops = app
    target = next(c["name"] for c in CARDS if c["name"] != _top1(client))
    folder = tmp_path / "queries"
    folder.mkdir()
    rows = [*TUNE, ("t5", QUERY, [target])]
    (folder / "tune.jsonl").write_text("".join(json.dumps({"id": i, "query": q, "expected_tools": e}, ensure_ascii=False)
                                               + "\n" for i, q, e in rows), encoding="utf-8")
    return client, ops, target


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
    assert client.post("/api/admin/check", headers=_auth()).json() == {"valid": True}  # the dashboard's check
    assert client.post("/api/admin/check", headers=_auth("wrong")).status_code == 401
    assert client.post("/api/admin/check").status_code == 401
    monkeypatch.delenv("TOOLROUTE_ADMIN_TOKEN")
    assert client.put("/api/tools/bus_arrival/card", json=edit, headers={"If-Match": "0", **_auth()}).status_code == 403
    assert client.post("/api/admin/check", headers=_auth()).status_code == 403


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
    kinds = [v["kind"] for v in client.get(f"/api/tools/{target}/history").json()]
    assert kinds == ["edit", "rollback"]  # the dashboard shows 되돌림, not 수정
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


def test_error_bodies_name_no_server_path(app, tmp_path):
    client, ops = app
    for answer in (client.get("/api/tools/weather_now/diff", params={"from": 0, "to": 99}),
                   client.get("/api/tools/weather_now/diff", params={"from": -1}),
                   client.post("/api/tools/weather_now/rollback", json={"to": 99}, headers={"If-Match": "0", **_auth()})):
        assert answer.status_code == 400 and "versions run from 0 (the YAML) to 0" in answer.json()["detail"]
        assert str(tmp_path) not in answer.text and "demo.json" not in answer.text
    ops.store.path.parent.mkdir(parents=True, exist_ok=True)
    ops.store.path.write_text("{ not json", encoding="utf-8")  # a damaged card store
    broken = client.put("/api/tools/weather_now/card", json={"purpose": "현재 날씨"}, headers={"If-Match": "0", **_auth()})
    assert broken.status_code == 503 and broken.json()["detail"].startswith("the card store cannot be read (error id ")
    assert str(tmp_path) not in broken.text


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


# ----- the quick test: POST /api/eval --------------------------------------------------------------------


def test_eval_reports_the_live_router_on_a_split(tuned):
    client, _, target = tuned
    report = client.post("/api/eval", json={"split": "tune", "k": 2}, headers=_auth()).json()
    assert report["split"] == "tune" and report["n"] == 5 and report["after"] is None and report["paired"] is None
    assert set(report["before"]) == {"recall@2", "hit@1", "mrr", "no_call_accuracy"}
    assert report["before"]["hit@1"] == 0.75  # QUERY fails, the three card examples do not
    assert [f["query"] for f in report["failures"] if f["expected"]] == [QUERY]
    assert next(f for f in report["failures"] if f["query"] == QUERY)["got"][0] != target
    expected = Counter([target, *(t for _, _, tools in TUNE for t in tools)])
    assert {t["tool"]: t["n"] for t in report["per_tool"]} == dict(expected)
    assert next(t for t in report["per_tool"] if t["tool"] == target)["recall"] <= 0.5  # QUERY missed at k=2


def test_eval_refuses_unknown_splits_missing_files_and_pending_edits_on_test(tuned, tmp_path):
    client, *_ = tuned
    bad = client.post("/api/eval", json={"split": "train"}, headers=_auth())
    assert bad.status_code == 400 and all(s in bad.json()["detail"] for s in ("dev", "tune", "calib", "test"))
    missing = client.post("/api/eval", json={"split": "dev"}, headers=_auth())
    assert missing.status_code == 404 and "error id" in missing.json()["detail"]  # no dev.jsonl here
    assert str(tmp_path) not in missing.text and "dev.jsonl" not in missing.text  # the path is in the log only
    assert client.post("/api/eval", json={"split": "tune", "k": 0}, headers=_auth()).status_code == 422
    (tuned[1].queries_dir / "test.jsonl").write_text((tuned[1].queries_dir / "tune.jsonl").read_text(encoding="utf-8"),
                                                    encoding="utf-8")
    assert client.post("/api/eval", json={"split": "test"}, headers=_auth()).status_code == 200  # measuring is allowed
    edit = {"tool": "bus_arrival", "changes": {"+when_to_use": "지하철 첫차 몇 시야"}}
    refused = client.post("/api/eval", json={"split": "test", "edit": edit}, headers=_auth())
    assert refused.status_code == 400 and "never on 'test'" in refused.json()["detail"]


def test_a_pending_edit_is_measured_on_a_copy_and_the_live_router_and_store_stay(tuned):
    client, ops, target = tuned
    vectors, top1 = ops.vectors(), _top1(client)
    edit = {"tool": target, "changes": {"+when_to_use": [QUERY, "지하철 첫차 몇 시야"]}}
    report = client.post("/api/eval", json={"split": "tune", "k": 2, "edit": edit}, headers=_auth()).json()
    assert report["before"]["hit@1"] == 0.75 and report["after"]["hit@1"] == 1.0
    assert report["paired"]["hit@1"]["diff"] == pytest.approx(0.25) and report["paired"]["hit@1"]["n"] == 4
    assert {"ci_low", "ci_high", "p_value"} <= set(report["paired"]["recall@2"])
    assert [(m["query"], m["fixed"]) for m in report["moved"]] == [(QUERY, True)]
    assert report["edit"]["diff"] == [f"{target}.when_to_use", f"  + {QUERY}", "  + 지하철 첫차 몇 시야"]
    assert _top1(client) == top1 and ops.vectors() == vectors and ops.store.head == 0  # nothing live changed
    assert not ops.audit_path.exists()
    assert client.post("/api/eval", json={"split": "tune", "edit": {"tool": target, "changes": {"purpose": " "}}},
                       headers=_auth()).status_code == 422
    assert client.post("/api/eval", json={"split": "tune", "edit": {"tool": "nope", "changes": {"purpose": "x"}}},
                       headers=_auth()).status_code == 404


def test_eval_and_proposals_need_the_admin_token(tuned, monkeypatch):
    client, ops, target = tuned
    ops.llm = FakeListChatModel(responses=["{}"])
    edit = {"tool": target, "changes": {"+when_to_use": QUERY}}
    for path, body in (("/api/eval", {"split": "tune"}), ("/api/eval", {"split": "tune", "edit": edit}),
                       ("/api/proposals", {"split": "tune"})):
        assert client.post(path, json=body).status_code == 401, path
        assert client.post(path, json=body, headers=_auth("wrong")).status_code == 401, path
        assert client.post(path, json={"split": 3, "k": "many"}).status_code == 401  # before the body is checked
    monkeypatch.delenv("TOOLROUTE_ADMIN_TOKEN")
    assert client.post("/api/eval", json={"split": "tune"}, headers=_auth()).status_code == 403


def test_a_pending_edit_or_a_split_over_its_limit_is_413_naming_the_field_and_the_limit(tuned, monkeypatch):
    client, ops, target = tuned
    monkeypatch.setenv("TOOLROUTE_MAX_EDIT_CHARS", "100")
    edit = {"tool": target, "changes": {"purpose": "버스", "+when_to_use": ["지하철 첫차 " * 10, "막차 " * 10]}}
    refused = client.post("/api/eval", json={"split": "tune", "edit": edit}, headers=_auth())
    assert refused.status_code == 413
    assert refused.json()["detail"] == ("edit.changes.+when_to_use: the pending edit reaches 121 characters; "
                                        "the limit is 100 (TOOLROUTE_MAX_EDIT_CHARS)")
    lines = {"tool": target, "changes": {"+when_to_use": [f"{i}호선" for i in range(51)]}}
    monkeypatch.setenv("TOOLROUTE_MAX_EDIT_CHARS", "4000")
    refused = client.post("/api/eval", json={"split": "tune", "edit": lines}, headers=_auth())
    assert refused.status_code == 413 and refused.json()["detail"].endswith("51 lines; the limit is 50")
    many = {"tool": target, "changes": {f"+tags{i}": "x" for i in range(13)}}
    assert client.post("/api/eval", json={"split": "tune", "edit": many}, headers=_auth()).status_code == 422
    monkeypatch.setenv("TOOLROUTE_MAX_EVAL_QUERIES", "4")
    refused = client.post("/api/eval", json={"split": "tune"}, headers=_auth())
    assert refused.status_code == 413 and refused.json()["detail"] == (
        "split 'tune' has 5 queries; an evaluation routes at most 4 (TOOLROUTE_MAX_EVAL_QUERIES)")
    ops.llm = FakeListChatModel(responses=["{}"])
    assert client.post("/api/proposals", json={"split": "tune"}, headers=_auth()).status_code == 413
    assert not ops.eval_lock.locked() and ops.store.head == 0


# ----- failure analysis: POST /api/proposals ------------------------------------------------------------


def test_proposals_are_measured_on_the_tuning_split_and_nothing_is_saved(tuned):
    client, ops, target = tuned
    ops.llm = FakeListChatModel(responses=[
        f'제안입니다.\n```json\n{{"tool": "{target}", "field": "when_to_use", "line": "지하철 첫차 몇 시에 다녀?"}}\n```'])
    assert client.post("/api/proposals", json={"split": "tune"}).status_code == 401
    answer = client.post("/api/proposals", json={"split": "tune", "k": 2, "max": 3}, headers=_auth())
    assert answer.status_code == 200
    report = answer.json()
    assert report["before"]["hit@1"] == 0.75 and report["n_failures"] == 2  # QUERY and the no-call row
    [proposal] = report["proposals"]  # one group: the no-call row gets no proposal
    assert proposal["skipped"] is None and proposal["expected_tool"] == target and proposal["failures"] == [QUERY]
    assert proposal["diff"] == [f"{target}.when_to_use", "  + 지하철 첫차 몇 시에 다녀?"]
    assert proposal["effect"]["hit@1"]["before"] == 0.75 and proposal["effect"]["hit@1"]["after"] is not None
    assert {"diff", "ci_low", "ci_high"} <= set(proposal["effect"]["recall@2"])
    assert ops.store.head == 0 and _top1(client) != target
    accept = proposal["accept"]  # accepting is the normal PUT, made from what the proposal gives
    saved = client.put(accept["path"], json=accept["body"], headers={"If-Match": str(accept["if_match"]), **_auth()})
    assert saved.status_code == 200 and saved.json()["card"]["when_to_use"][-1] == "지하철 첫차 몇 시에 다녀?"


def test_a_broken_or_copied_proposal_is_skipped_with_its_reason(tuned):
    client, ops, target = tuned
    ops.llm = FakeListChatModel(responses=['{"tool": "' + target + '", "field": "when_to_use", "line": '])
    [broken] = client.post("/api/proposals", json={"split": "tune"}, headers=_auth()).json()["proposals"]
    assert broken["skipped"] == "the reply holds no JSON object" and "effect" not in broken
    ops.llm = FakeListChatModel(responses=[json.dumps({"tool": target, "field": "when_to_use", "line": QUERY},
                                                      ensure_ascii=False)])
    [copied] = client.post("/api/proposals", json={"split": "tune"}, headers=_auth()).json()["proposals"]
    assert "resembles an eval query" in copied["skipped"]
    ops.llm = FakeListChatModel(responses=['{"tool": "weather_now", "field": "purpose", "line": "x"}'])
    [unrelated] = client.post("/api/proposals", json={"split": "tune"}, headers=_auth()).json()["proposals"]
    assert "neither the expected tool" in unrelated["skipped"] or "cannot be proposed" in unrelated["skipped"]


def test_a_failed_llm_call_of_a_proposal_names_no_url_or_exception(tuned, caplog):
    client, ops, _ = tuned

    class Down:
        def invoke(self, messages):
            raise ConnectionError("connection refused by http://10.0.0.5:8000/v1/chat/completions")

    ops.llm = Down()
    report = client.post("/api/proposals", json={"split": "tune"}, headers=_auth())
    assert report.status_code == 200
    [proposal] = report.json()["proposals"]
    assert proposal["skipped"].startswith("the LLM call failed (error id ")
    assert "10.0.0.5" not in report.text and "ConnectionError" not in report.text
    assert "10.0.0.5" in caplog.text  # the details are in the log


def test_proposals_never_use_the_test_split_and_need_an_llm(tuned):
    client, ops, _ = tuned
    ops.llm = FakeListChatModel(responses=["{}"])
    refused = client.post("/api/proposals", json={"split": "test"}, headers=_auth())
    assert refused.status_code == 400 and "never on 'test'" in refused.json()["detail"]
    ops.llm = None
    assert client.post("/api/proposals", json={"split": "tune"}, headers=_auth()).status_code == 503


# ----- module hot reload: POST /api/tools/reload-module/{module} ----------------------------------------

TOOL_MODULE = '''
from langchain_core.tools import tool


@tool
def weather_now(city: str) -> dict:
    """Current weather of a city."""
    return {{"city": city, "sky": "{sky}"}}


@tool
def weather_forecast(city: str) -> dict:
    """The forecast of a city."""
    return {{"city": city, "days": 3}}


@tool
def bus_arrival(stop: str) -> dict:
    """Minutes until the next bus at a stop."""
    return {{"stop": stop, "minutes": 4}}


TOOLS = [weather_now, weather_forecast, bus_arrival]
'''


@pytest.fixture
def reloadable(app, tmp_path, monkeypatch):
    client, ops = app
    path = tmp_path / "demotools_mod.py"
    path.write_text(TOOL_MODULE.format(sky="맑음"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("demotools_mod", None)
    import demotools_mod  # written by this fixture just above

    pack = DomainPack("demo", list(demotools_mod.TOOLS), "도우미입니다.")
    ops.registry = ToolRegistry(SimpleNamespace(router=ops.router, pack=pack, _schemas={}, gate=None))
    yield client, ops, path, pack
    sys.modules.pop("demotools_mod", None)


def test_a_module_reload_swaps_the_tools_code_and_a_broken_module_changes_nothing(reloadable):
    client, ops, path, pack = reloadable
    assert client.post("/api/tools/reload-module/demotools_mod").status_code == 401
    path.write_text(TOOL_MODULE.format(sky="비 온 뒤 흐림"), encoding="utf-8")
    done = client.post("/api/tools/reload-module/demotools_mod", headers=_auth())
    assert done.status_code == 200
    assert done.json()["tools"] == ["weather_now", "weather_forecast", "bus_arrival"] and done.json()["registry_version"] == 1
    assert pack.tool("weather_now").invoke({"city": "서울"})["sky"] == "비 온 뒤 흐림"
    path.write_text("this is not python(", encoding="utf-8")
    failed = client.post("/api/tools/reload-module/demotools_mod", headers=_auth())
    assert failed.status_code == 422 and "could not be imported (error id " in failed.json()["detail"]
    assert "SyntaxError" not in failed.text and str(path.parent) not in failed.text  # those are in the log
    assert pack.tool("weather_now").invoke({"city": "부산"})["sky"] == "비 온 뒤 흐림"  # the old tools still answer
    assert client.post("/api/tools/reload-module/os", headers=_auth()).status_code == 404  # not a tools module: never imported
    assert client.get("/api/stats").json()["registry_version"] == 1
    [entry] = [json.loads(line) for line in ops.audit_path.read_text(encoding="utf-8").splitlines()]
    assert entry["action"] == "reload_module" and entry["version_before"] == 0 and entry["version_after"] == 1


def test_the_served_app_gives_the_card_api_the_agent_s_registry_and_llm(tmp_path, monkeypatch):
    monkeypatch.setenv("TOOLROUTE_ADMIN_TOKEN", TOKEN)
    llm = FakeListChatModel(responses=["제안할 것이 없습니다."])  # no JSON: every proposal is skipped
    app = create_app(agent_factory=lambda model: serving_agent(model, tmp_path / "memory.sqlite"), llm=llm,
                     options=ServeOptions(memory_path=tmp_path / "memory.sqlite"), build_in_background=False)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/api/stats").json()["registry_version"] == 0
        missing = client.post("/api/tools/reload-module/no_such_module", headers=_auth())
        assert missing.status_code == 404 and "toolroute.domains.insurance.tools.premium" in missing.json()["detail"]
        report = client.post("/api/proposals", json={"split": "tune", "max": 1}, headers=_auth()).json()
        assert report["n"] > 100 and [p["skipped"] for p in report["proposals"]] == ["the reply holds no JSON object"]

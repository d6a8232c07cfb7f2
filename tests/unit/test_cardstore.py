"""The card store: versioned overrides on the YAML, diff, rollback, conflicts, corrupt files, eval-change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

from pathlib import Path

import pytest
import yaml

from toolroute.cards import CatalogError, open_catalog
from toolroute.cards.store import CardConflict, CardStore, CardStoreError
from toolroute.cli import main
from toolroute.config import ROOT
from toolroute.evaluation.card_change import eval_change
from toolroute.queries import EvalQuery
from toolroute.routing.dense import ToolIndex
from toolroute.routing import RouterConfig

from conftest import HashEmbedder

CARDS = [
    {"name": "weather_now", "purpose": "지금 날씨를 알려준다",
     "when_to_use": ["오늘 서울 날씨 어때", "지금 비 와?", "밖에 바람 많이 불어?"],
     "when_not_to_use": ["내일 이후 예보 → weather_forecast"], "tags": ["날씨", "현재"]},
    {"name": "weather_forecast", "purpose": "며칠 뒤 날씨 예보를 알려준다",
     "when_to_use": ["주말에 비 온대?", "다음 주 기온 알려줘", "모레 눈 와?"],
     "when_not_to_use": ["지금 날씨 → weather_now"], "tags": ["예보"]},
    {"name": "bus_arrival", "purpose": "버스 도착 시간을 알려준다",
     "when_to_use": ["143번 버스 언제 와", "정류장에 버스 몇 분 남았어", "막차 끊겼어?"], "tags": ["교통"]},
]


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "toolcards" / "demo"
    d.mkdir(parents=True)
    (d / "demo.yaml").write_text(yaml.safe_dump({"module": "demo", "cards": CARDS}, allow_unicode=True), encoding="utf-8")
    return d


@pytest.fixture
def store(folder, tmp_path):
    return CardStore(folder, tmp_path / "store" / "demo.overrides.json")


def test_edits_are_versions_on_top_of_the_yaml(store):
    assert store.head == 0 and store.card_version("bus_arrival") == 0
    v1 = store.edit("bus_arrival", {"+when_to_use": "마을버스 도착 정보 좀"}, expected_version=0, author="kim", message="마을버스")
    v2 = store.edit("weather_now", {"purpose": "현재 기온과 강수를 알려준다"}, expected_version=0, author="lee")
    assert (v1.number, v2.number, store.head) == (1, 2, 2)
    assert store.card_version("bus_arrival") == 1 and store.card_version("weather_now") == 2
    assert "마을버스 도착 정보 좀" in store.card("bus_arrival").when_to_use
    assert store.card("weather_now", version=1).purpose == "지금 날씨를 알려준다"  # older versions stay readable
    assert [v.number for v in store.history("bus_arrival")] == [1]
    assert store.history()[0].author == "kim" and store.history()[0].message == "마을버스"
    # the YAML is untouched: a fresh store on the same folder without overrides sees version 0 only
    assert CardStore(store.catalog_dir, store.path.with_name("other.json")).card("bus_arrival").when_to_use == tuple(CARDS[2]["when_to_use"])


def test_diff_between_any_two_versions(store):
    store.edit("bus_arrival", {"+when_to_use": "마을버스 도착 정보 좀", "-when_to_use": "막차 끊겼어?"}, 0)
    store.edit("bus_arrival", {"tags": ["교통", "버스"]}, 1)
    changes = {(c.card, c.field): c for c in store.diff(0, 2)}
    assert set(changes) == {("bus_arrival", "when_to_use"), ("bus_arrival", "tags")}
    assert changes[("bus_arrival", "when_to_use")].lines() == ["  - 막차 끊겼어?", "  + 마을버스 도착 정보 좀"]
    assert store.diff(1, 1) == [] and len(store.diff(2, 0)) == 2


def test_rollback_adds_a_version_and_restores_the_cards(store):
    store.edit("bus_arrival", {"purpose": "버스 도착 예정 시각"}, 0)
    store.edit("weather_now", {"tags": ["날씨"]}, 0)
    v3 = store.rollback(1, author="park")
    assert v3.number == 3 and v3.kind == "rollback" and set(v3.cards) == {"weather_now"}
    assert store.card("weather_now").tags == ("날씨", "현재") and store.card("bus_arrival").purpose == "버스 도착 예정 시각"
    store.rollback(0)
    assert store.catalog().cards == store.base.cards and store.head == 4  # history kept, nothing rewritten
    with pytest.raises(CardStoreError, match=r"no version 9 .* versions run from 0 \(the YAML\) to 4"):
        store.rollback(9)
    with pytest.raises(CardStoreError, match="already equal"):
        store.rollback(0)


def test_concurrent_edit_of_the_same_card_is_a_conflict_not_an_overwrite(store):
    seen = store.card_version("weather_now")  # both editors read version 0
    store.edit("weather_now", {"+when_to_use": "우산 챙겨야 해?"}, seen, author="kim", message="우산")
    with pytest.raises(CardConflict, match=r"version 1 by kim .*made against version 0"):
        store.edit("weather_now", {"+when_to_use": "지금 미세먼지 어때"}, seen, author="lee")
    assert "우산 챙겨야 해?" in store.card("weather_now").when_to_use  # kim's edit survives
    assert store.head == 1
    # an edit of another card is not a conflict
    store.edit("bus_arrival", {"+when_to_use": "버스 아직 멀었어?"}, 0)


def test_parallel_writers_lose_nothing(store):
    errors = []

    def add(i):
        try:
            for _ in range(5):
                try:
                    store.edit("bus_arrival", {"+when_to_use": f"버스 질문 {i}번"}, store.card_version("bus_arrival"))
                    return
                except CardConflict:
                    continue
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=add, args=(i,)) for i in range(4)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    examples = store.card("bus_arrival").when_to_use
    assert all(f"버스 질문 {i}번" in examples for i in range(4)) and store.head == 4


def test_bad_edits_name_the_card_and_field_and_save_nothing(store):
    with pytest.raises(CardStoreError, match="unknown card 'bus_arival'.*did you mean bus_arrival"):
        store.edit("bus_arival", {"purpose": "x"}, 0)
    with pytest.raises(CardStoreError, match="unknown field 'colour'"):
        store.edit("bus_arrival", {"colour": "red"}, 0)
    with pytest.raises(CatalogError, match="card 'bus_arrival'.*field 'purpose'"):
        store.edit("bus_arrival", {"purpose": "  "}, 0)
    with pytest.raises(CatalogError, match="needs at least 3 examples"):
        store.edit("bus_arrival", {"-when_to_use": ["막차 끊겼어?"]}, 0)
    with pytest.raises(CatalogError, match="duplicates one in card 'weather_now'"):
        store.edit("bus_arrival", {"+when_to_use": "지금 비 와?"}, 0)
    with pytest.raises(CatalogError, match="not declared on both sides"):
        store.edit("bus_arrival", {"+when_not_to_use": "날씨 → weather_now"}, 0)
    with pytest.raises(CardStoreError, match="cannot remove"):
        store.edit("bus_arrival", {"-tags": ["없는태그"]}, 0)
    assert store.head == 0 and not store.path.exists()


def test_a_corrupt_override_file_stops_reads_and_writes_and_is_never_reset(store):
    store.edit("bus_arrival", {"purpose": "버스 도착 예정 시각"}, 0)
    broken = '{"format": 1, "versions": [{"number": 1'
    store.path.write_text(broken, encoding="utf-8")
    with pytest.raises(CardStoreError, match="corrupt") as err:
        store.history()  # a read
    backup = Path(str(err.value).split("A copy is at ")[1].split(". ")[0])
    assert backup.read_text(encoding="utf-8") == broken and store.path.read_text(encoding="utf-8") == broken
    with pytest.raises(CardStoreError, match="corrupt"):
        store.edit("bus_arrival", {"purpose": "다시 고친 목적"}, 0)  # a write
    assert store.path.read_text(encoding="utf-8") == broken  # untouched: nobody's edits were dropped


def test_writes_are_atomic_and_leave_no_temp_files(store, monkeypatch):
    store.edit("bus_arrival", {"purpose": "버스 도착 예정 시각"}, 0)
    before = store.path.read_text(encoding="utf-8")

    def broken_dump(*args, **kwargs):
        raise OSError("disk full (test)")

    monkeypatch.setattr(json, "dump", broken_dump)
    with pytest.raises(OSError, match="disk full"):
        store.edit("bus_arrival", {"purpose": "또 고친 목적"}, 1)
    monkeypatch.undo()
    assert store.path.read_text(encoding="utf-8") == before
    assert [p.name for p in store.path.parent.iterdir() if p.suffix == ".tmp"] == []


def test_unregistering_is_a_version_that_every_later_catalogue_honours(store, monkeypatch):
    v1 = store.unregister("weather_forecast", expected_version=0, author="kim", message="예보 서비스 종료")
    assert (v1.number, v1.kind, v1.registered) == (1, "unregister", {"weather_forecast": False})
    assert "weather_forecast" not in store.catalog() and store.unregistered() == ["weather_forecast"]
    assert store.card("weather_forecast").purpose == "며칠 뒤 날씨 예보를 알려준다"  # the card is kept
    assert store.card_version("weather_forecast") == 1 and not store.is_registered("weather_forecast")
    assert [v.kind for v in store.history("weather_forecast")] == ["unregister"]
    assert [(c.card, c.field, c.lines()) for c in store.diff(0, 1)] == [
        ("weather_forecast", "registered", ["  - registered", "  + unregistered"])]
    # another process (a new store on the same file), and the effective catalogue every entry point opens
    assert "weather_forecast" not in CardStore(store.catalog_dir, store.path).catalog()
    monkeypatch.setenv("TOOLROUTE_CARDSTORE", str(store.path.parent))
    assert open_catalog(store.catalog_dir).names == ["weather_now", "bus_arrival"]
    # weather_now still names weather_forecast in when_not_to_use: edits are validated on every card
    store.edit("weather_now", {"+when_to_use": "지금 우산 필요해?"}, 0)
    with pytest.raises(CardStoreError, match="already unregistered"):
        store.unregister("weather_forecast")
    with pytest.raises(CardConflict, match="at version 1"):
        store.register("weather_forecast", expected_version=0)
    v3 = store.register("weather_forecast", expected_version=1, message="재개")
    assert v3.kind == "register" and open_catalog(store.catalog_dir).names == [c["name"] for c in CARDS]
    store.rollback(1)  # a rollback restores registration too
    assert "weather_forecast" not in store.catalog() and "지금 우산 필요해?" not in store.card("weather_now").when_to_use
    store.rollback(0)
    assert store.catalog().cards == store.base.cards and store.unregistered() == []


def test_the_last_registered_tool_stays(store):
    store.unregister("weather_now")
    store.unregister("weather_forecast")
    with pytest.raises(CardStoreError, match="last registered"):
        store.unregister("bus_arrival")


def test_an_unregistration_holds_in_a_new_process(store, tmp_path):
    store.unregister("bus_arrival", 0)
    env = {**os.environ, "TOOLROUTE_CARDSTORE": str(store.path.parent), "PYTHONPATH": str(ROOT / "src")}
    code = f"from toolroute.cards import open_catalog; print(','.join(open_catalog({str(store.catalog_dir)!r}).names))"
    names = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert names.stdout.split() == ["weather_now,weather_forecast"]


def test_export_writes_yaml_that_loads_as_the_edited_catalogue(store, tmp_path):
    store.edit("bus_arrival", {"+when_to_use": "마을버스 도착 정보 좀"}, 0)
    out = tmp_path / "toolcards" / "exported"
    store.export(out)
    assert CardStore(out, tmp_path / "x.json").catalog().cards == store.catalog().cards


def test_a_card_edit_reindexes_only_that_card(store, chroma):
    emb = HashEmbedder()
    index = ToolIndex(store.catalog(), emb, client=chroma)
    index.build(progress=False)
    embedded = emb.passages_embedded
    store.edit("bus_arrival", {"+when_to_use": "마을버스 도착 정보 좀"}, 0)
    report = index.sync(store.catalog())
    assert report.embedded == 1 and emb.passages_embedded == embedded + 1
    assert index.search("마을버스 도착 정보 좀")[0][0] == "bus_arrival"
    assert len(chroma.list_collections()) == 1  # in place, no new generation


def test_eval_change_reports_before_after_and_moved_rows(store, chroma):
    queries = [EvalQuery("q1", "마을버스 도착 정보", ("bus_arrival",)),
               EvalQuery("q2", "지금 비 오니", ("weather_now",)),
               EvalQuery("q3", "안녕하세요", ())]
    config = RouterConfig(catalog=str(store.catalog_dir), arm="dense", embedder=None)
    before = store.catalog()
    after = store.preview("bus_arrival", {"+when_to_use": "마을버스 도착 정보 좀"})
    assert store.head == 0  # a preview saves nothing
    report = eval_change(before, after, queries, config, client=chroma, calibration=None, embedder=HashEmbedder())
    assert report.changed_cards == ["bus_arrival"] and report.n == 3
    assert set(report.table()["metric"]) >= {"hit@1", "recall@5", "mrr"}
    assert report.after["hit@1"] >= report.before["hit@1"]
    assert all(c.name.startswith("tr-demo-eval-") for c in chroma.list_collections())  # never the live index
    assert "bus_arrival" in report.text()
    with pytest.raises(ValueError, match="never on the test split"):
        eval_change(before, after, store.catalog_dir / "test.jsonl", config, client=chroma, embedder=HashEmbedder())


def test_cli_edit_history_diff_rollback(store, capsys):
    args = ["--catalog", str(store.catalog_dir), "--store", str(store.path)]
    edit = ["cards", "edit", "bus_arrival", "--add-example", "마을버스 도착 정보 좀", "--author", "kim", "-m", "마을버스"]
    assert main([*edit, *args]) == 2  # no base version: refused, never a silent overwrite of a newer edit
    assert "--expect-version" in capsys.readouterr().err and store.head == 0
    assert main([*edit, "--expect-version", "0", *args]) == 0
    assert main(["cards", "history", *args]) == 0
    out = capsys.readouterr().out
    assert "kim" in out and "bus_arrival" in out and "마을버스" in out
    assert main(["cards", "diff", "0", "1", *args]) == 0
    assert "+ 마을버스 도착 정보 좀" in capsys.readouterr().out
    assert main(["cards", "edit", "bus_arrival", "--purpose", "x", "--expect-version", "0", *args]) == 2
    assert "made against version 0" in capsys.readouterr().err
    assert main(["cards", "rollback", "5", *args]) == 2
    assert "no version 5" in capsys.readouterr().err
    assert main(["cards", "rollback", "0", *args]) == 0 and store.head == 2


def test_cli_unregister_and_register(store, capsys):
    args = ["--catalog", str(store.catalog_dir), "--store", str(store.path)]
    assert main(["cards", "unregister", "bus_arrival", "--expect-version", "0", "-m", "노선 폐지", *args]) == 0
    assert "bus_arrival" not in store.catalog() and "unregistered" in capsys.readouterr().out
    assert main(["cards", "history", "bus_arrival", *args]) == 0
    assert "unregister" in capsys.readouterr().out
    assert main(["cards", "register", "bus_arrival", "--expect-version", "0", *args]) == 2  # stale
    assert main(["cards", "register", "bus_arrival", *args]) == 0 and "bus_arrival" in store.catalog()

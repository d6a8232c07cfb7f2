"""Indexes of same-named catalogues from different places never mix, across processes (issue 20).

Two processes share one Chroma folder: one routes with the real `toolcards/insurance`, the other
keeps rebuilding a foreign catalogue also called `insurance` (a copied folder with other cards, and
an `insurance.json` of OpenAI schemas). The first one's rankings must not change at all.
"""

import json
import shutil
import subprocess
import sys
import time

from toolroute.config import ROOT, toolcards_dir

QUERIES = ["암보험 보험료 얼마예요", "실손 청구 서류 알려줘", "해지환급금 조회해 주세요", "오늘 서울 날씨 어때?"]

WORKER = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from conftest import HashEmbedder
from toolroute.chroma import open_client
from toolroute.routing import RouterConfig, build_router

tests, chroma, catalog, mode, rounds, out = sys.argv[1:7]
queries = json.loads(sys.argv[7])
client = open_client(chroma)
config = RouterConfig(catalog=catalog, embedder=HashEmbedder(), dev=None)
results = []
if mode == "route":
    router = build_router(config, client=client, progress=False, no_call="none")
    for _ in range(int(rounds)):
        results.append([r.top(5) for r in router.route_many(queries)])
        time.sleep(0.05)
else:  # "rebuild": the foreign catalogue, edited every round so each build writes a new generation
    from toolroute.cards import open_catalog
    base = open_catalog(catalog)
    for i in range(int(rounds)):
        card = next(iter(base))
        edited = base.derived(cards={**base.cards, card.name: card.model_copy(update={"purpose": f"{card.purpose} {i}"})})
        router = build_router(config, edited, client=client, progress=False, no_call="none")
        results.append([r.top(5) for r in router.route_many(queries)])
json.dump(results, open(out, "w"))
'''

SCHEMAS = [{"type": "function", "function": {"name": name, "description": text, "parameters": {"type": "object", "properties": {}}}}
           for name, text in (("get_weather", "오늘 날씨와 기온을 알려줍니다 보험료 청구 서류"),
                              ("send_email", "이메일을 보냅니다 해지환급금"), ("play_music", "음악을 재생합니다 암보험"))]


def _start(tmp_path, catalog, mode, rounds, name):
    out = tmp_path / f"{name}.json"
    args = [sys.executable, "-c", WORKER, str(ROOT / "tests"), str(tmp_path / "chroma"), str(catalog), mode, str(rounds),
            str(out), json.dumps(QUERIES, ensure_ascii=False)]
    env = {"PATH": "/usr/bin:/bin", "TOOLROUTE_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1",
           "TOOLROUTE_CARDSTORE": str(tmp_path / "cardstore"), "ANONYMIZED_TELEMETRY": "False"}
    return subprocess.Popen(args, env=env, stderr=subprocess.PIPE, text=True), out


def _wait(process, out, timeout=300):
    _, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err[-3000:]
    return json.loads(out.read_text())


def _foreign(tmp_path):
    folder = tmp_path / "elsewhere" / "insurance"
    shutil.copytree(toolcards_dir("insurance"), folder)
    first = sorted(folder.glob("*.yaml"))[0]
    first.write_text(first.read_text(encoding="utf-8").replace("보험", "날씨"), encoding="utf-8")  # other cards
    schemas = tmp_path / "json" / "insurance.json"
    schemas.parent.mkdir()
    schemas.write_text(json.dumps(SCHEMAS, ensure_ascii=False), encoding="utf-8")
    return folder, schemas


def test_two_processes_on_same_named_catalogues_never_change_each_others_results(tmp_path):
    real = toolcards_dir("insurance")
    solo, out = _start(tmp_path, real, "route", 1, "solo")
    baseline = _wait(solo, out)[0]
    folder, schemas = _foreign(tmp_path)
    reader, reader_out = _start(tmp_path, real, "route", 60, "reader")
    time.sleep(2)
    writers = [_start(tmp_path, folder, "rebuild", 6, "folder"), _start(tmp_path, schemas, "rebuild", 6, "json")]
    seen = _wait(reader, reader_out)
    foreign = [_wait(p, o) for p, o in writers]
    changed = sum(round_ != baseline for round_ in seen)
    assert changed == 0, f"{changed} of {len(seen)} rounds changed"
    assert not {"get_weather", "send_email", "play_music"} & {t for round_ in seen for top in round_ for t in top}
    assert all(set(t for top in r for t in top) <= {"get_weather", "send_email", "play_music"} for r in foreign[1])
    again, out = _start(tmp_path, real, "route", 1, "after")
    assert _wait(again, out)[0] == baseline  # the real index was not deleted or replaced


def test_two_first_builds_at_once_both_succeed_and_agree(tmp_path):
    first = [_start(tmp_path, toolcards_dir("insurance"), "route", 1, f"first{i}") for i in range(2)]
    results = [_wait(p, o) for p, o in first]
    assert results[0] == results[1]

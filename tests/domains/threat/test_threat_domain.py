"""The threat domain (seed 000): grading rules, asset simulation, procedure search, cards, eval data, tasks, pack."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from toolroute.agent.pack import load_pack
from toolroute.agent.tasks import load_tasks
from toolroute.cards import load_toolcards, normalize_text
from toolroute.config import queries_path, toolcards_dir
from toolroute.domains.threat import TOOL_NAMES
from toolroute.domains.threat import documents as docs_mod
from toolroute.domains.threat import pack as pack_mod
from toolroute.domains.threat import tools as T
from toolroute.evaluation.leakage import similar_pairs
from toolroute.queries import load_queries
from toolroute.rag import extract_pages

from conftest import HashEmbedder

ASSESS, PROCEDURE, ASSETS = TOOL_NAMES
BY_NAME = {t.name: t for t in T.TOOLS}


def assess(**kwargs):
    return T.assess_threat_level.invoke(kwargs)


def assets(**kwargs):
    return T.check_intercept_asset_availability.invoke(kwargs)


@pytest.fixture
def restore_defaults():
    yield
    T.configure()


@pytest.fixture
def configured(tmp_path, chroma):
    """The procedure search on a hash embedder and a temporary Chroma / documents folder."""
    T.configure(embedder=HashEmbedder(), client=chroma, docs_dir=tmp_path / "threat-docs")
    yield tmp_path / "threat-docs"
    T.configure()


# ----- the grading rules -------------------------------------------------------------------------

@pytest.mark.parametrize("args, score, grade", [
    # type base + altitude band + speed band (+ distance band + heading)
    (dict(target_type="순항미사일", altitude_m=40, speed_kmh=880), 60 + 15 + 10, "CRITICAL"),
    (dict(target_type="드론", altitude_m=100, speed_kmh=80), 25 + 15 + 0, "MEDIUM"),
    (dict(target_type="드론", altitude_m=60, speed_kmh=70, distance_km=3, heading="접근"), 25 + 15 + 0 + 15 + 10, "HIGH"),
    (dict(target_type="헬기", altitude_m=150, speed_kmh=220), 30 + 15 + 5, "MEDIUM"),
    (dict(target_type="헬기", altitude_m=100, speed_kmh=200, distance_km=15, heading="접근 중"), 75, "HIGH"),
    (dict(target_type="전투기", altitude_m=9000, speed_kmh="마하 1.4", heading="접근"), 45 + 0 + 15 + 10, "HIGH"),
    (dict(target_type="전투기", altitude_m=10000, speed_kmh=900, heading="이탈"), 45 + 0 + 10 - 10, "MEDIUM"),
    (dict(target_type="무인기", altitude_m=3000, speed_kmh=150), 35, "MEDIUM"),  # 3,000m is already 중고도
    (dict(target_type="무인기", altitude_m=2999, speed_kmh=150), 40, "MEDIUM"),
    (dict(target_type="탄도미사일", altitude_m="8만m", speed_kmh="마하 6"), 70 + 0 + 20, "CRITICAL"),
    (dict(target_type="풍선", altitude_m="1만 2천 미터", speed_kmh="시속 40km"), 10, "LOW"),
    (dict(target_type="민항기", altitude_m=11000, speed_kmh=870), 5 + 0 + 10, "LOW"),
    (dict(target_type="쿼드콥터", altitude_m=80, speed_kmh=50, distance_km=200), 40, "MEDIUM"),  # alias; far: +0
])
def test_grades_follow_the_rule_table(args, score, grade):
    result = assess(**args)
    assert result["status"] == "ok", result
    assert (result["score"], result["grade"]) == (score, grade)
    assert result["grade_label"] == {"LOW": "낮음", "MEDIUM": "보통", "HIGH": "높음", "CRITICAL": "매우 높음"}[grade]
    assert result["grade_text"] == f"{result['grade_label']}({grade})"
    assert sum(r["points"] for r in result["reasons"]) == score  # the reasons are the score


def test_grade_boundaries_are_the_documented_ones():
    rules = T.load_rules()
    assert [(g, m) for g, _, m in rules.grades] == [("LOW", 0), ("MEDIUM", 30), ("HIGH", 55), ("CRITICAL", 80)]
    # 드론 25 + 저고도 15 + 근거리 15 = 55: exactly HIGH; one band less (+5 중저고도) = 45: MEDIUM
    assert assess(target_type="드론", altitude_m=299, speed_kmh=10, distance_km=5)["grade"] == "HIGH"
    assert assess(target_type="드론", altitude_m=300, speed_kmh=10, distance_km=5)["grade"] == "MEDIUM"


def test_reasons_name_the_rules_that_fired():
    result = assess(target_type="순항미사일", altitude_m=40, speed_kmh=880, distance_km=30, heading="배회")
    assert [r["rule"] for r in result["reasons"]] == ["target_type", "altitude", "speed", "distance", "heading"]
    text = " ".join(r["text"] for r in result["reasons"])
    assert "저고도" in text and "고속" in text and "중거리(20~50km)" in text and "선회" in text
    assert "+60점" in text and "+15점" in text


def test_type_limits_floor_missiles_and_cap_airliners_and_balloons():
    slow_missile = assess(target_type="탄도탄", altitude_m=5000, speed_kmh=100)
    assert slow_missile["score"] == 70 and slow_missile["grade"] == "HIGH"  # 70 would be HIGH anyway
    cruise = assess(target_type="크루즈 미사일", altitude_m=20000, speed_kmh=100, distance_km=500, heading="이탈")
    assert cruise["score"] == 50 and cruise["grade"] == "HIGH"  # the score says MEDIUM, the floor says HIGH
    assert any(r["rule"] == "min_grade" for r in cruise["reasons"])
    airliner = assess(target_type="여객기", altitude_m=100, speed_kmh=900, distance_km=5, heading="접근")
    assert airliner["score"] == 55 and airliner["grade"] == "MEDIUM"
    assert any(r["rule"] == "max_grade" for r in airliner["reasons"])
    assert any("오인 방지" in n for n in airliner["notes"])
    balloon = assess(target_type="오물풍선", altitude_m=100, speed_kmh=3500, distance_km=1, heading="접근")
    assert balloon["grade"] == "MEDIUM"
    assert any("일반적 최대 속도" in n for n in balloon["notes"])  # 3,500km/h is no balloon


@pytest.mark.parametrize("parse, text, expected", [
    (T.parse_altitude_m, "1만 2천 미터", 12000), (T.parse_altitude_m, "3km", 3000), (T.parse_altitude_m, "300m", 300),
    (T.parse_altitude_m, "3000ft", 914.4), (T.parse_altitude_m, "12,000", 12000), (T.parse_altitude_m, 250, 250),
    (T.parse_speed_kmh, "마하 2", 2450), (T.parse_speed_kmh, "Mach 0.8", 980), (T.parse_speed_kmh, "450노트", 833.4),
    (T.parse_speed_kmh, "초속 250m", 900), (T.parse_speed_kmh, "시속 900km", 900), (T.parse_speed_kmh, "880km/h", 880),
    (T.parse_distance_km, "10해리", 18.52), (T.parse_distance_km, "800m", 0.8), (T.parse_distance_km, "20킬로", 20),
    (T.parse_altitude_m, "모름", None), (T.parse_speed_kmh, "빠름", None), (T.parse_altitude_m, float("nan"), None),
])
def test_units_are_read_from_the_words(parse, text, expected):
    assert parse(text) == expected


def test_missing_or_unreadable_arguments_are_asked_for():
    nothing = assess()
    assert nothing["status"] == "needs_user_input"
    assert nothing["missing"] == ["target_type", "altitude_m", "speed_kmh"]
    partial = assess(target_type="무인기", altitude_m="모름", speed_kmh="빠름")
    assert partial["missing"] == ["altitude_m", "speed_kmh"] and partial["known"] == {"target_type": "무인기"}
    assert "고도·속도를" in partial["ask"]
    assert assess(target_type="드론", altitude_m=100)["missing"] == ["speed_kmh"]
    wrong = assess(target_type="드론", altitude_m=-3000, speed_kmh=50)
    assert wrong["status"] == "needs_user_input" and wrong["missing"] == ["altitude_m"]
    kind = assess(target_type="미사일", altitude_m=100, speed_kmh=900)
    assert kind["status"] == "needs_user_input" and kind["known"]["candidates"] == ["순항미사일", "탄도미사일"]
    odd = assess(target_type="드론", altitude_m=100, speed_kmh=50, heading="북동쪽 045도")
    assert odd["status"] == "ok" and [r["rule"] for r in odd["reasons"]][-1] == "speed"
    assert any("해석할 수 없어" in n for n in odd["notes"])


def test_unknown_target_type_is_not_found_with_candidates():
    result = assess(target_type="UFO", altitude_m=100, speed_kmh=900)
    assert result["status"] == "not_found" and result["what"] == "target_type"
    assert set(result["candidates"]) == set(T.target_type_names())
    close = assess(target_type="순항미사알", altitude_m=100, speed_kmh=900)
    assert close["status"] == "not_found" and close["candidates"][0] == "순항미사일"


# ----- the asset simulation ----------------------------------------------------------------------

def _statuses(**kwargs):
    return [(a["asset_id"], a["status"]) for a in assets(**kwargs)["assets"]]


def test_asset_status_is_deterministic_for_a_seed(restore_defaults):
    first = _statuses(target_type="헬기")
    assert first == _statuses(target_type="헬기")
    assert {s for _, s in first} <= {"READY", "COOLDOWN", "MAINTENANCE"}
    T.configure(seed=7)
    seven = _statuses(target_type="헬기")
    assert seven == _statuses(target_type="헬기") and T.current_seed() == 7
    others = []
    for seed in (1, 2, 3):
        T.configure(seed=seed)
        others.append(_statuses(target_type="헬기"))
    assert any(o != first for o in others + [seven])  # the seed matters
    T.configure()
    assert _statuses(target_type="헬기") == first


def test_an_asset_has_one_status_whatever_the_question():
    by_drone = dict(_statuses(target_type="드론"))
    by_uav = dict(_statuses(target_type="무인기"))
    shared = set(by_drone) & set(by_uav)
    assert shared and all(by_drone[a] == by_uav[a] for a in shared)


def test_assets_match_the_target_type_and_sector():
    data = T.load_assets()
    result = assets(target_type="탄도탄", sector="중부 지역")
    assert result["status"] == "ok" and result["target_type"] == "탄도미사일" and result["sector"] == "중부"
    assert result["assets"] and all(a["sector"] == "중부" for a in result["assets"])
    allowed = {data.systems[s]["name"] for s in data.engagement["탄도미사일"]}
    assert {a["system"] for a in assets(target_type="탄도미사일")["assets"]} <= allowed
    everywhere = assets(target_type="드론")
    assert everywhere["sector"] == "전체"
    assert sum(everywhere["counts"].values()) == len(everywhere["assets"])
    assert everywhere["ready_assets"] == [a["name"] for a in everywhere["assets"] if a["status"] == "READY"]
    assert everywhere["available"] == bool(everywhere["ready_assets"])
    for a in everywhere["assets"]:
        assert ("ready_in_minutes" in a) == (a["status"] == "COOLDOWN")
        assert ("back_in_hours" in a) == (a["status"] == "MAINTENANCE")
    assert assets(target_type="드론", sector="남부권")["sector"] == "남부"
    assert assets(target_type="드론", sector="서울")["sector"] == "수도권"


def test_airliners_are_never_engaged_only_identified():
    result = assets(target_type="민항기")
    assert result["engageable"] is False and "요격 대상이 아닙니다" in result["note"]
    assert result["systems"] == ["전투기 긴급발진 편대"]


def test_asset_tool_asks_and_reports_unknowns():
    assert assets()["status"] == "needs_user_input"
    assert assets(target_type="잠수함")["status"] == "not_found"
    bad = assets(target_type="드론", sector="제주")
    assert bad["status"] == "not_found" and bad["what"] == "sector" and "수도권" in bad["candidates"]


# ----- the procedure documents and their search --------------------------------------------------

def test_documents_are_deterministic_and_carry_sections(tmp_path):
    first = docs_mod.build_documents(tmp_path / "a")
    second = docs_mod.build_documents(tmp_path / "b")
    procedures = docs_mod.load_procedures()
    assert len(first) == len(procedures) >= 6
    assert [d.sha256 for d in first] == [d.sha256 for d in second]
    mtime = first[0].path.stat().st_mtime_ns
    docs_mod.build_documents(tmp_path / "a")
    assert first[0].path.stat().st_mtime_ns == mtime  # unchanged files are not rewritten
    pages = extract_pages(first[5].path)
    assert procedures[5].title in pages[0].text and "승인 권한" in pages[0].text
    chunks = docs_mod.document_chunks(first)
    assert {c.document for c in chunks} == {d.document for d in first}
    headings = {h for p in procedures for h, _ in p.sections}
    assert all(c.metadata["section"] in headings for c in chunks)
    assert all(c.text.startswith(f"[{c.metadata['title']} · ") for c in chunks)


def test_procedures_agree_with_the_rules_and_assets():
    text = {p.doc_id: p.text() for p in docs_mod.load_procedures()}
    for grade, label, _ in T.load_rules().grades:
        assert f"{label}({grade})" in text["SOP-01"] and f"{label}({grade})" in text["SOP-06"]
    everything = "\n".join(text.values())
    for system in ("탄도탄 요격체계", "중거리 지대공 유도무기", "단거리 지대공 유도무기", "드론 전파교란기",
                   "레이저 대공무기", "전투기 긴급발진 편대", "휴대용 대공미사일"):
        assert system in everything and system in {s["name"] for s in T.load_assets().systems.values()}


def test_procedure_search_builds_lazily_and_cites_sources(configured):
    result = T.lookup_response_procedure.invoke({"query": "민항기 오인 방지 절차"})
    assert result["status"] == "ok" and result["count"] == len(result["passages"]) == T.DEFAULT_K
    assert (configured / "sop07_civil_aircraft.pdf").exists()  # PDFs written on first use
    titles = {p.title for p in docs_mod.load_procedures()}
    for p in result["passages"]:
        assert re.fullmatch(r".+ p\.\d+(-\d+)?", p["source"]) and p["title"] in titles and p["page"] >= 1
        assert not p["text"].startswith("[")  # the contextual header is stripped
    json.dumps(result, ensure_ascii=False)


def test_keyword_questions_find_their_document_even_with_a_crude_embedder(configured):
    cases = [("민항기 오인 방지 절차", "SOP-07"), ("풍선 낙하 후 수거", "SOP-08"), ("탄도미사일 상층 하층 요격", "SOP-04"),
             ("드론 전파교란 재밍 우선순위", "SOP-02"), ("요격 승인 요청 항목", "SOP-06"), ("상황 보고 통신 두절", "SOP-10")]
    misses = []
    for query, doc_id in cases:  # top 3: a bag-of-characters embedder only sees shared words
        found = [p["doc_id"] for p in T.lookup_response_procedure.invoke({"query": query})["passages"]]
        if doc_id not in found:
            misses.append((query, doc_id, found))
    assert not misses, misses


def test_procedure_tool_reads_grades_and_asks_when_empty(configured):
    assert T.lookup_response_procedure.invoke({})["missing"] == ["query"]
    only_grade = T.lookup_response_procedure.invoke({"grade": "높음(HIGH)", "k": "2개"})
    assert only_grade["status"] == "ok" and only_grade["grade"] == "HIGH" and len(only_grade["passages"]) == 2
    assert T.lookup_response_procedure.invoke({"query": "경보", "grade": "매우 높음"})["grade"] == "CRITICAL"
    bad = T.lookup_response_procedure.invoke({"query": "경보", "grade": "빨강"})
    assert bad["status"] == "needs_user_input" and bad["missing"] == ["grade"]
    assert len(T.lookup_response_procedure.invoke({"query": "경보", "k": 50})["passages"]) == T.MAX_K


@pytest.mark.parametrize("value, grade", [("CRITICAL", "CRITICAL"), ("매우높음", "CRITICAL"), ("high", "HIGH"),
                                          ("보통", "MEDIUM"), ("낮음(LOW)", "LOW"), ("빨강", None), (None, None)])
def test_grade_words(value, grade):
    assert T.normalize_grade(value) == grade


# ----- cards, eval queries, tasks ----------------------------------------------------------------

@pytest.fixture(scope="module")
def catalog():
    return load_toolcards(toolcards_dir("threat"), TOOL_NAMES)


@pytest.fixture(scope="module")
def splits():
    return {s: load_queries(queries_path("threat", s), TOOL_NAMES) for s in ("dev", "test")}


def test_cards_validate_and_name_their_neighbours(catalog):
    assert catalog.names == TOOL_NAMES
    for card in catalog:
        assert 6 <= len(card.when_to_use) <= 10 and card.tags
        assert set(card.confusions()) == set(TOOL_NAMES) - {card.name}


def test_queries_cover_every_tool_no_call_and_multi(splits):
    rows = splits["dev"] + splits["test"]
    assert len(rows) >= 60
    counts = Counter(t for q in rows for t in q.expected_tools)
    assert set(counts) == set(TOOL_NAMES) and min(counts.values()) >= 8, counts
    assert sum(not q.is_call for q in rows) >= 10
    assert sum(len(q.expected_tools) > 1 for q in rows) >= 10
    for q in rows:
        assert q.kind in {"single", "multi", "no_call", "confusion"}, q.id
        assert (q.kind == "no_call") == (not q.expected_tools), q.id
        assert (q.kind == "multi") == (len(q.expected_tools) > 1), q.id
        if q.kind == "confusion":
            assert len(q.pair) == 2 and q.expected_tools[0] in q.pair, q.id
    keys = [normalize_text(q.query) for q in rows]
    assert len(keys) == len(set(keys))  # no query twice, within or across splits


def test_no_eval_query_leaks_from_the_cards(splits, catalog):
    rows = [(q.id, q.query) for s in splits.values() for q in s]
    leaks = similar_pairs(rows, catalog)
    assert not leaks, "\n".join(f"{p.query_id} '{p.query}' ~ {p.tool} '{p.example}' ({p.similarity})" for p in leaks)
    copy = catalog.cards[ASSESS].when_to_use[0]
    assert similar_pairs([("x", copy + "요")], catalog)  # the check does catch a near copy


@pytest.fixture(scope="module")
def tasks():
    return load_tasks("threat", tool_names=TOOL_NAMES)


def test_tasks_cover_every_chain_length(tasks):
    assert len(tasks) >= 12
    lengths = Counter(t.chain_length for t in tasks)
    assert lengths[0] >= 2 and lengths[1] >= 3 and lengths[2] >= 3 and lengths[3] >= 3, lengths
    for t in tasks:
        assert len(t.args) == t.chain_length, t.id
        if t.chain_length == 3:
            assert t.gold_tools == TOOL_NAMES, t.id  # assess → procedure → assets
    chains = {tuple(t.gold_tools) for t in tasks}
    assert (ASSESS, PROCEDURE) in chains and (ASSESS, ASSETS) in chains and (PROCEDURE, ASSETS) in chains


def _replay(task):
    return [BY_NAME[name].invoke(args) for name, args in zip(task.gold_tools, task.args)]


def test_task_facts_come_from_the_tools(tasks, configured):
    """Each chain replayed with its args; a fact is in a non-search result or in the procedure texts
    (the slow test checks the search finds it); 0-tool facts are in the system prompt."""
    procedures = "\n".join(p.text() for p in docs_mod.load_procedures())
    for task in tasks:
        results = _replay(task)
        json.dumps(results, ensure_ascii=False)
        for name, result in zip(task.gold_tools, results):
            assert result["status"] in ("ok", "needs_user_input"), (task.id, name, result)
        tool_text = json.dumps([r for n, r in zip(task.gold_tools, results) if n != PROCEDURE], ensure_ascii=False)
        source = tool_text + (procedures if PROCEDURE in task.gold_tools else "")
        if not task.gold_tools:
            source = pack_mod.SYSTEM_PROMPT
        assert not task.missing_facts(source), (task.id, task.missing_facts(source))


# ----- the pack ----------------------------------------------------------------------------------

def test_pack_loads_and_hides_internal_asset_ids():
    pack = load_pack("threat")
    assert pack.name == "threat" and pack.tool_names == TOOL_NAMES
    assert pack.catalog_dir == toolcards_dir("threat")
    assert "최대 3번" in pack.system_prompt and "도구 결과" in pack.system_prompt
    assert pack.disclaimer and any(m in pack.disclaimer for m in pack.disclaimer_markers)
    text = json.dumps(assets(target_type="드론"), ensure_ascii=False)
    assert re.search(pack.remove_patterns[0], text)
    cleaned = text
    for pattern in pack.remove_patterns:
        cleaned = re.sub(pattern, "", cleaned)
    assert "AST-" not in cleaned and "대공포" in cleaned


def test_context_is_read_from_earlier_turns():
    pack = load_pack("threat")
    ctx = pack.extract_context("고도 40m로 들어오는 순항미사일, 속도 880km/h. 등급 매겨줘", {})
    assert ctx == {"target_type": "순항미사일", "altitude_m": 40, "speed_kmh": 880}
    ctx = pack.extract_context("서부 쪽으로 접근 중이고 거리 25km", ctx)
    assert ctx["sector"] == "서부" and ctx["heading"] == "접근" and ctx["distance_km"] == 25
    assert pack.render_context(ctx) == "표적: 순항미사일, 고도 40m, 속도 시속 880km, 거리 25km, 진행 방향: 접근, 지역: 서부"
    other = pack.extract_context("풍선이 1만 2천 미터 상공에서 시속 40km", ctx)
    assert other["target_type"] == "풍선" and other["altitude_m"] == 12000 and other["speed_kmh"] == 40
    assert "distance_km" not in other and other["sector"] == "서부"  # a new target drops the old numbers
    assert pack.extract_context("마하 6으로 날아오는 탄도탄", {})["speed_kmh"] == pytest.approx(7350)
    assert pack.extract_context("위협 등급 매우 높음이면?", {})["grade"] == "CRITICAL"
    assert pack.extract_context("안녕하세요", {"target_type": "드론"}) == {"target_type": "드론"}


def test_every_result_is_plain_json(configured):
    calls = [
        (ASSESS, {"target_type": "드론", "altitude_m": "80미터", "speed_kmh": "50km/h", "distance_km": "2km", "heading": "접근"}),
        (ASSESS, {}), (ASSESS, {"target_type": "UFO", "altitude_m": 1, "speed_kmh": 1}),
        (ASSESS, {"target_type": ["탄도", "미사일"], "altitude_m": [1], "speed_kmh": {"x": 1}}),
        (PROCEDURE, {"query": "드론 대응", "grade": "HIGH"}), (PROCEDURE, {"query": None}),
        (ASSETS, {"target_type": "민항기"}), (ASSETS, {"target_type": "헬기", "sector": "동부"}), (ASSETS, {"sector": 3}),
    ]
    for name, args in calls:
        result = BY_NAME[name].invoke(args)
        assert result["status"] in {"ok", "needs_user_input", "not_found"}, (name, args, result)
        assert json.loads(json.dumps(result, ensure_ascii=False)) == result


# ----- slow: the real embedder -------------------------------------------------------------------

@pytest.fixture(scope="module")
def e5_resources(tmp_path_factory):
    from toolroute.embeddings import get_embedder
    from toolroute.chroma import open_client

    tmp = tmp_path_factory.mktemp("threat-e5")
    return get_embedder("e5-small"), open_client(tmp / "chroma"), tmp / "docs"


@pytest.fixture
def e5_configured(e5_resources):
    embedder, client, docs_dir = e5_resources
    T.configure(embedder=embedder, client=client, docs_dir=docs_dir)  # ingested once: later calls reuse it
    yield
    T.configure()


@pytest.mark.slow
def test_procedure_questions_find_the_right_document_with_e5(e5_configured):
    cases = [
        ("민간 여객기를 적기로 잘못 보는 일 없게 하려면 어떤 확인 단계를 거쳐야 하지?", "SOP-07"),
        ("오물풍선 떨어졌을 때 수거는 어떻게 하라고 돼 있어?", "SOP-08"),
        ("요격하려면 누구한테 승인받아야 되는지 규정 좀 찾아줘", "SOP-06"),
        ("경계 경보 발령되면 상급부대에 몇 분 안에 보고해야 돼?", "SOP-01"),
        ("탄도탄 날아올 때 민방위 경보랑 어떻게 연계하는지 절차 알려줘", "SOP-04"),
        ("드론 대응할 때 재밍이랑 직접 타격 중 뭘 먼저 쓰라고 되어 있어?", "SOP-02"),
        ("순항미사일 다층 방어에서 교전은 몇 발씩 쏘는 게 원칙이야?", "SOP-03"),
        ("저고도 레이더 음영 구역은 어떻게 감시하라고 돼 있지", "SOP-05"),
        ("상황 보고는 탐지 후 몇 분 내에 최초 보고해야 해?", "SOP-10"),
    ]
    misses = []
    for query, doc_id in cases:
        found = [p["doc_id"] for p in T.lookup_response_procedure.invoke({"query": query})["passages"]]
        if found[0] != doc_id:
            misses.append((query, doc_id, found))
    assert not misses, misses


@pytest.mark.slow
def test_every_task_chain_returns_its_facts_with_e5(e5_configured, tasks):
    for task in tasks:
        if not task.gold_tools:
            continue
        results = _replay(task)
        blob = json.dumps(results, ensure_ascii=False)
        assert not task.missing_facts(blob), (task.id, task.missing_facts(blob))

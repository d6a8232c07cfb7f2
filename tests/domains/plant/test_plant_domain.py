"""The plant-maintenance domain (seed 001): graph, alarm log, stock, manuals (RAG), cards, eval
queries, tasks and the pack. Fast tests use a character-bigram embedder (lexical, deterministic);
the `slow` ones use the real default embedder (e5-small)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from datetime import timedelta

import numpy as np
import pytest

from toolroute.agent.pack import DomainPack, load_pack
from toolroute.agent.tasks import load_tasks
from toolroute.cards import load_toolcards, normalize_text
from toolroute.config import ROOT, queries_path, toolcards_dir
from toolroute.domains.plant import TOOL_NAMES
from toolroute.domains.plant import documents as plant_docs
from toolroute.domains.plant import records
from toolroute.domains.plant import tools as plant_tools
from toolroute.domains.plant.graph import EquipmentGraph, GraphDataError, load_graph
from toolroute.domains.plant.pack import DISCLAIMER, extract_context, find_banned, render_context
from toolroute.evaluation.leakage import similar_pairs
from toolroute.queries import load_queries
from toolroute.chroma import open_client

TOOLS = {t.name: t for t in plant_tools.TOOLS}
search_documents = TOOLS["search_documents"]
query_knowledge_graph = TOOLS["query_knowledge_graph"]
get_alarm_history = TOOLS["get_alarm_history"]
check_spare_part_stock = TOOLS["check_spare_part_stock"]


class BigramEmbedder:
    """Hashed character bigrams (spaces removed): a lexical stand-in for a sentence model, fast and offline."""

    spec = "test:bigram-1024"
    dim = 1024

    def _vec(self, text: str) -> np.ndarray:
        t = "".join(text.split())
        v = np.zeros(self.dim, dtype=np.float32)
        for a, b in zip(t, t[1:]):
            v[int(hashlib.md5((a + b).encode()).hexdigest(), 16) % self.dim] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_queries(self, texts):
        return np.stack([self._vec(t) for t in texts])

    def embed_passages(self, texts):
        return np.stack([self._vec(t) for t in texts])


@pytest.fixture(scope="module")
def rag(tmp_path_factory):
    """search_documents over a temporary store (bigram embedder), built lazily on the first search."""
    base = tmp_path_factory.mktemp("plant-rag")
    plant_tools.configure(embedder=BigramEmbedder(), client=open_client(base / "chroma"), docs_dir=base / "docs")
    yield base
    plant_tools.configure()


def _dump(result) -> str:
    return json.dumps(result, ensure_ascii=False)


# ----- graph -------------------------------------------------------------------------------------

def test_graph_data_is_consistent_with_stock_and_alarm_log():
    g = load_graph()
    parts = set(g.ids("part"))
    assert parts == set(records.stock_items()), "every part of the graph needs a stock row and vice versa"
    for eq in g.ids("equipment"):
        assert g.components_of(eq), eq
        records.alarm_log(eq)  # raises when the log names an alarm the machine cannot raise
    for alarm in g.ids("alarm"):
        assert g.in_edges(alarm, "TRIGGERS_ALARM") and g.out_edges(alarm, "CAUSED_BY"), alarm
        assert g.out_edges(alarm, "FIXED_BY"), alarm
    for proc in g.ids("procedure"):
        assert g.out_edges(proc, "REQUIRES_PART"), proc
        titles = {s.title for s in plant_docs.document_specs()}
        assert g.attrs(proc)["document"] in titles, proc
        spec = next(s for s in plant_docs.document_specs() if s.title == g.attrs(proc)["document"])
        assert g.attrs(proc)["section"] in [h for h, _ in spec.sections], proc


def test_seed_path_cnc001_cl003_cp007():
    result = query_knowledge_graph.invoke({"entity": "CNC-001", "target": "CP-007"})
    assert result["status"] == "ok" and result["connected"]
    assert result["path"] == ["CNC-001", "CL-003", "CP-007"]
    assert [(e["source"], e["relation"], e["target"]) for e in result["edges"]] == [
        ("CNC-001", "HAS_COMPONENT", "CL-003"), ("CL-003", "USES_PART", "CP-007")]
    assert "CNC-001(CNC 선반 1호기) -[HAS_COMPONENT]-> CL-003" in result["path_text"]

    parts = query_knowledge_graph.invoke({"entity": "CNC-001", "relation": "부품", "depth": 2})
    assert parts["relation"] == "USES_PART"
    assert {n["id"] for n in parts["nodes"]} == {"CP-007", "FL-012", "BR-021", "BT-024", "HP-031", "SK-033"}
    assert any(p.startswith("CNC-001(CNC 선반 1호기) -[HAS_COMPONENT]-> CL-003(냉각 시스템(쿨런트)) -[USES_PART]-> CP-007")
               for p in parts["paths"])
    # One hop is not enough to reach parts from a machine.
    assert query_knowledge_graph.invoke({"entity": "CNC-001", "relation": "USES_PART"})["count"] == 0


def test_alarm_e042_neighbourhood():
    result = query_knowledge_graph.invoke({"entity": "e042"})
    assert result["entity"]["id"] == "E-042" and result["entity"]["name"] == "냉각수 유량 저하"
    by_relation: dict[str, set[str]] = {}
    for e in result["edges"]:
        by_relation.setdefault(e["relation"], set()).add(e["source"] if e["target"] == "E-042" else e["target"])
    assert by_relation == {"TRIGGERS_ALARM": {"CL-003", "CL-004"}, "CAUSED_BY": {"FL-012", "CP-007"},
                           "FIXED_BY": {"PR-01", "PR-02"}, "DETECTED_BY": {"FS-301", "FS-302"}}
    assert ("CL-003", "TRIGGERS_ALARM", "E-042") in {(e["source"], e["relation"], e["target"]) for e in result["edges"]}
    causes = query_knowledge_graph.invoke({"entity": "E-042", "relation": "원인"})
    assert [n["id"] for n in causes["nodes"]] == ["FL-012", "CP-007"]
    # Two hops from the alarm reach the machines that raise it.
    two = query_knowledge_graph.invoke({"entity": "E-042", "depth": 2, "relation": "HAS_COMPONENT"})
    assert {n["id"] for n in two["nodes"]} == {"CNC-001", "CNC-002"}


def test_depth_widens_and_is_bounded():
    sizes = [len(query_knowledge_graph.invoke({"entity": "CP-007", "depth": d})["nodes"]) for d in (1, 2, 3)]
    assert sizes[0] < sizes[1] < sizes[2]
    assert query_knowledge_graph.invoke({"entity": "CP-007", "depth": "5단계"})["depth"] == 3
    for node in query_knowledge_graph.invoke({"entity": "CP-007", "depth": 3})["nodes"]:
        assert 1 <= node["hops"] <= 3


@pytest.mark.parametrize("text, node", [
    ("CNC-001", "CNC-001"), ("cnc001", "CNC-001"), ("CNC 001", "CNC-001"), ("선반 1호기", "CNC-001"),
    ("컴프레서", "AC-201"), ("E-42", "E-042"), ("냉각수 펌프", "CP-007"), ("1호기 선반 냉각 시스템", "CL-003"),
    ("CNC-002 냉각 시스템", "CL-004"), ("MC-101 스핀들 베어링", "BR-121"), ("CNC-001의 유량 센서", "FS-301"),
])
def test_entities_resolve_from_ids_names_and_phrases(text, node):
    assert load_graph().resolve(text).node == node


def test_graph_asks_when_missing_or_ambiguous_and_reports_unknowns():
    assert query_knowledge_graph.invoke({})["missing"] == ["entity"]
    ambiguous = query_knowledge_graph.invoke({"entity": "냉각 시스템"})
    assert ambiguous["status"] == "needs_user_input"
    assert [c["id"] for c in ambiguous["known"]["candidates"]] == ["CL-003", "CL-004"]
    unknown = query_knowledge_graph.invoke({"entity": "CP-070"})
    assert unknown["status"] == "not_found" and "CP-007(냉각수 펌프)" in unknown["candidates"]
    bad_relation = query_knowledge_graph.invoke({"entity": "CNC-001", "relation": "친구"})
    assert bad_relation["status"] == "not_found" and bad_relation["what"] == "relation"
    assert any(c.startswith("USES_PART") for c in bad_relation["candidates"])


def test_malformed_graph_data_is_rejected():
    with pytest.raises(GraphDataError, match="unknown node"):
        EquipmentGraph({"nodes": [{"id": "A-001", "type": "equipment", "name": "a"}], "edges": [["A-001", "USES_PART", "B-002"]]})
    with pytest.raises(GraphDataError, match="unknown relation"):
        EquipmentGraph({"nodes": [{"id": "A-001", "type": "equipment", "name": "a"}], "edges": [["A-001", "LIKES", "A-001"]]})
    with pytest.raises(GraphDataError, match="defined twice"):
        EquipmentGraph({"nodes": [{"id": "A-001", "type": "equipment", "name": "a"}] * 2, "edges": []})


# ----- alarm history -----------------------------------------------------------------------------

def test_alarm_log_is_deterministic_and_pinned():
    first = [e.as_dict() for e in records.alarm_log("CNC-001")]
    records.alarm_log.cache_clear()
    assert [e.as_dict() for e in records.alarm_log("CNC-001")] == first
    result = get_alarm_history.invoke({"equipment_id": "CNC-001", "alarm_code": "E-042", "days": 30})
    assert result["total"] == 5 and result["by_alarm"][0]["last"] == "2025-06-25 02:51"  # same on every machine
    assert "E-042 냉각수 유량 저하 5건" in result["summary"]


def test_alarm_counts_follow_the_profiles_and_windows():
    config = records._log_config()
    end = records.as_of()
    for eq, profile in config["profiles"].items():
        log = records.alarm_log(eq)
        assert [e.time for e in log] == sorted((e.time for e in log), reverse=True)
        for code, counts in profile.items():
            assert len(records.alarm_events(eq, 30, code)) == counts["recent"], (eq, code)
            assert len(records.alarm_events(eq, 180, code)) == counts["recent"] + counts["earlier"], (eq, code)
        for e in log:
            assert end - timedelta(days=180) < e.time <= end
            reading = load_graph().attrs(e.alarm_code)["reading"]
            value = float(re.search(r"(\d+(?:\.\d+)?)\s*\S*$", e.reading).group(1))
            assert reading["low"] <= value <= reading["high"], e
            assert e.action in load_graph().attrs(e.alarm_code)["actions"]
    week = get_alarm_history.invoke({"equipment_id": "MC-101", "days": "일주일"})
    assert week["period"]["days"] == 7
    assert all(ev["time"] > week["period"]["from"] for ev in week["events"])


def test_alarm_history_summary_and_most_frequent():
    result = get_alarm_history.invoke({"equipment_id": "2호기 선반"})
    assert result["equipment"].startswith("CNC-002") and result["period"]["days"] == 30
    assert result["most_frequent"] == "E-055" and result["by_alarm"][0]["count"] == 3
    assert result["total"] == sum(r["count"] for r in result["by_alarm"]) == len(result["events"])


@pytest.mark.parametrize("days, expected", [("3개월", 90), ("2주", 14), ("반년", 180), (999, 180), ("", 30), (None, 30)])
def test_alarm_history_days_are_parsed_and_bounded(days, expected):
    assert get_alarm_history.invoke({"equipment_id": "CNC-001", "days": days})["period"]["days"] == expected


def test_alarm_history_asks_and_reports_unknowns():
    asked = get_alarm_history.invoke({"alarm_code": "E-042"})
    assert asked["status"] == "needs_user_input" and asked["missing"] == ["equipment_id"]
    assert asked["known"]["alarm_code"] == "E-042"
    assert asked["known"]["equipment_that_can_raise_it"] == ["CNC-001(CNC 선반 1호기)", "CNC-002(CNC 선반 2호기)"]
    unknown = get_alarm_history.invoke({"equipment_id": "CNC-009"})
    assert unknown["status"] == "not_found" and unknown["what"] == "equipment"
    assert get_alarm_history.invoke({"equipment_id": "CNC-001", "alarm_code": "E-999"})["status"] == "not_found"
    model = get_alarm_history.invoke({"equipment_id": "HL-2600"})
    assert model["status"] == "needs_user_input" and len(model["known"]["candidates"]) == 2
    assert get_alarm_history.invoke({"equipment_id": "CL-003"})["equipment"].startswith("CNC-001")  # a unit names its machine
    by_alarm = get_alarm_history.invoke({"equipment_id": "E-042"})
    assert by_alarm["status"] == "needs_user_input" and by_alarm["known"]["candidates"] == [
        "CNC-001(CNC 선반 1호기)", "CNC-002(CNC 선반 2호기)"]
    foreign = get_alarm_history.invoke({"equipment_id": "AC-201", "alarm_code": "E-042"})
    assert foreign["status"] == "ok" and foreign["total"] == 0 and "E-091" in foreign["note"]


# ----- spare parts -------------------------------------------------------------------------------

def test_stock_of_a_part_by_id():
    result = check_spare_part_stock.invoke({"part": "cp007"})
    assert result["status"] == "ok"
    assert (result["part_id"], result["stock"], result["stock_text"], result["safety_stock"]) == ("CP-007", 1, "1개", 2)
    assert result["stock_status"] == "안전재고 미만" and result["location"] == "자재창고 B동 B-02-03"
    assert result["lead_time_days"] == 14 and "14일" in result["advice"]
    assert {u["equipment"][:7] for u in result["used_in"]} == {"CNC-001", "CNC-002"}
    out = check_spare_part_stock.invoke({"part": "BR-021"})
    assert out["stock_status"] == "재고 없음" and out["on_order"] == {"quantity": 1, "eta": "2025-07-15"}
    assert check_spare_part_stock.invoke({"part": "FL-012"})["stock_status"] == "재고 있음"


def test_stock_by_name_and_disambiguation():
    assert check_spare_part_stock.invoke({"part": "쿨런트 필터"})["part_id"] == "FL-012"
    ambiguous = check_spare_part_stock.invoke({"part": "스핀들 베어링"})
    assert ambiguous["status"] == "needs_user_input"
    assert [c["part_id"] for c in ambiguous["known"]["candidates"]] == ["BR-021", "BR-121"]
    assert check_spare_part_stock.invoke({"part": "스핀들 베어링", "equipment_id": "MC-101"})["part_id"] == "BR-121"
    machine = check_spare_part_stock.invoke({"part": "AC-201"})
    assert machine["status"] == "needs_user_input"
    assert [c["part_id"] for c in machine["known"]["candidates"]] == ["AF-211", "OS-213"]
    assert check_spare_part_stock.invoke({})["missing"] == ["part"]
    unknown = check_spare_part_stock.invoke({"part": "ZZ-999"})
    assert unknown["status"] == "not_found" and unknown["what"] == "part"


# ----- documents and search ----------------------------------------------------------------------

def test_documents_are_deterministic_and_consistent_with_the_graph(tmp_path):
    first = plant_docs.build_documents(tmp_path / "a")
    second = plant_docs.build_documents(tmp_path / "b")
    assert len(first) == 8 and [d.sha256 for d in first] == [d.sha256 for d in second]
    assert {d.doc_type for d in first} == set(plant_docs.DOC_TYPES)
    mtimes = [d.path.stat().st_mtime_ns for d in first]
    plant_docs.build_documents(tmp_path / "a")  # unchanged files are left alone
    assert [d.path.stat().st_mtime_ns for d in first] == mtimes
    g = load_graph()
    text = " ".join(body for spec in plant_docs.document_specs() for _, body in spec.sections)
    ids = set(re.findall(r"\b(?:[A-Z]{2,3}-\d{3}|E-\d{3}|PR-\d{2})\b", text)) - {"HL-260", "VM-850", "SC-37"}
    assert ids and not [i for i in ids if i not in g], sorted(i for i in ids if i not in g)
    chunks = plant_docs.document_chunks(first)
    assert all(c.metadata["section"] and c.text.startswith(f"[{c.metadata['title']} · ") for c in chunks)
    assert len({c.id for c in chunks}) == len(chunks)


@pytest.mark.parametrize("question, document", [
    ("E-042 냉각수 유량 저하 조치 순서", "alarm_code_table"),
    ("냉각수 펌프 교체 절차", "procedure_coolant"),
    ("LOTO 잠금장치 해제는 누가", "safety_loto"),
    ("스핀들 베어링 교체 후 길들이기 운전", "procedure_spindle_bearing"),
    ("컴프레서 에어필터 교체 주기", "manual_sc37"),
    ("ATC 그리퍼 교체", "manual_vm850"),
])
def test_search_finds_the_right_manual(rag, question, document):
    result = search_documents.invoke({"query": question})
    assert result["status"] == "ok" and result["count"] == 3
    assert result["passages"][0]["document"] == document, [p["source"] for p in result["passages"]]


def test_search_builds_lazily_and_cites_sources(rag):
    result = search_documents.invoke({"query": "쿨런트 농도 기준", "k": "2개"})
    assert (rag / "docs" / "procedure_coolant.pdf").exists()
    assert len(result["passages"]) == 2
    for p in result["passages"]:
        assert re.fullmatch(r".+ p\.\d+(-\d+)?", p["source"]) and p["source"].startswith(p["title"])
        assert p["page"] >= 1 and p["section"] and not p["text"].startswith("[")
    assert "5~8%" in result["passages"][0]["text"]


def test_search_filters_by_equipment_and_doc_type(rag):
    vm = search_documents.invoke({"query": "스핀들 베어링 교체", "equipment_id": "MC-101", "k": 8})
    assert vm["model"] == "VM-850" and vm["equipment"].startswith("MC-101")
    allowed = {s.title for s in plant_docs.document_specs() if "VM-850" in s.scope or "common" in s.scope}
    assert {p["title"] for p in vm["passages"]} <= allowed
    table = search_documents.invoke({"query": "펌프 교체", "doc_type": "알람 조치표", "k": 8})
    assert table["doc_type"] == "alarm_table" and {p["document"] for p in table["passages"]} == {"alarm_code_table"}
    by_model = search_documents.invoke({"query": "드레인", "equipment_id": "SC-37"})
    assert by_model["model"] == "SC-37"


def test_search_asks_and_reports_unknowns(rag):
    assert search_documents.invoke({"query": " "})["missing"] == ["query"]
    assert search_documents.invoke({"query": "절차", "doc_type": "소설"})["status"] == "not_found"
    assert search_documents.invoke({"query": "절차", "equipment_id": "CNC-999"})["status"] == "not_found"


# ----- every result is plain JSON ----------------------------------------------------------------

def test_every_result_shape_is_json(rag):
    calls = [
        ("search_documents", {"query": "E-042 조치"}), ("search_documents", {}),
        ("query_knowledge_graph", {"entity": "CNC-001", "depth": 3}), ("query_knowledge_graph", {"entity": "냉각 시스템"}),
        ("query_knowledge_graph", {"entity": "XX-000"}), ("query_knowledge_graph", {"entity": "SP-011", "target": "E-055"}),
        ("get_alarm_history", {"equipment_id": "CNC-001", "days": 180}), ("get_alarm_history", {}),
        ("check_spare_part_stock", {"part": "BR-021"}), ("check_spare_part_stock", {"part": "필터"}),
    ]
    for name, args in calls:
        result = TOOLS[name].invoke(args)
        assert result["status"] in ("ok", "needs_user_input", "not_found"), (name, args, result)
        assert json.loads(json.dumps(result, ensure_ascii=False)) == result, (name, args)


def test_tools_follow_the_contract():
    assert [t.name for t in plant_tools.TOOLS] == TOOL_NAMES
    for t in plant_tools.TOOLS:
        assert re.search(r"[가-힣]", t.description), t.name
        for field, info in t.args_schema.model_fields.items():
            assert info.description and re.search(r"[가-힣]", info.description), (t.name, field)


# ----- cards, eval queries, tasks ----------------------------------------------------------------

@pytest.fixture(scope="module")
def plant_catalog():
    return load_toolcards(toolcards_dir("plant"), TOOL_NAMES)


def test_cards_validate(plant_catalog):
    assert plant_catalog.names == TOOL_NAMES
    for card in plant_catalog:
        assert 6 <= len(card.when_to_use) <= 10, card.name
        assert card.when_not_to_use and card.confusions() and card.tags, card.name
    assert frozenset(("search_documents", "query_knowledge_graph")) in plant_catalog.confusion_pairs()


@pytest.fixture(scope="module")
def plant_queries():
    return {s: load_queries(queries_path("plant", s), TOOL_NAMES) for s in ("dev", "test")}


def test_queries_cover_every_tool_no_call_and_chains(plant_queries):
    rows = plant_queries["dev"] + plant_queries["test"]
    assert len(rows) >= 60
    counts = Counter(t for q in rows for t in q.expected_tools)
    assert set(counts) == set(TOOL_NAMES) and min(counts.values()) >= 8, counts
    assert sum(not q.is_call for q in rows) >= 10
    assert sum(len(q.expected_tools) > 1 for q in rows) >= 10
    for q in rows:
        assert q.kind in ("single", "multi", "no_call", "confusion"), q.id
        assert (q.kind == "no_call") == (not q.is_call), q.id
        assert (q.kind == "multi") == (len(q.expected_tools) > 1), q.id
        if q.kind == "confusion":
            assert len(q.pair) == 2 and q.expected_tools[0] in q.pair, q.id
    keys = [normalize_text(q.query) for q in rows]
    assert len(set(keys)) == len(keys) and len({q.id for q in rows}) == len(rows)


def test_no_plant_query_leaks_from_the_cards(plant_queries, plant_catalog):
    rows = [(q.id, q.query) for split in plant_queries.values() for q in split]
    leaks = similar_pairs(rows, plant_catalog)
    assert not leaks, "\n".join(f"{p.query_id} '{p.query}' ~ {p.tool} '{p.example}' ({p.similarity})" for p in leaks)


@pytest.fixture(scope="module")
def plant_tasks():
    return load_tasks("plant", tool_names=TOOL_NAMES)


def test_tasks_cover_every_chain_length(plant_tasks):
    assert len(plant_tasks) >= 12
    lengths = Counter(t.chain_length for t in plant_tasks)
    assert lengths[0] >= 2 and lengths[1] >= 3 and lengths[2] >= 3 and lengths[3] >= 3, lengths
    for t in plant_tasks:
        assert len(t.gold_tools) == len(set(t.gold_tools)), t.id
        if t.gold_tools:
            assert t.args and t.facts, t.id


def _replay(task, strip_filters: bool = False) -> list[dict]:
    results = []
    for name, args in zip(task.gold_tools, task.args):
        if strip_filters and name == "search_documents":
            args = {"query": args["query"]}
        results.append(TOOLS[name].invoke(args))
    return results


def test_every_task_chain_returns_its_facts(rag, plant_tasks):
    for task in plant_tasks:
        if not task.gold_tools:
            continue
        results = _replay(task)
        assert all(r["status"] == "ok" for r in results), (task.id, results)
        missing = task.missing_facts(" ".join(_dump(r) for r in results))
        assert not missing, f"{task.id}: the tools do not return {missing}"
        # Each step's facts come from the chain, not from the query itself.
        assert task.missing_facts(task.query) != [], task.id


# ----- the pack ----------------------------------------------------------------------------------

def test_load_pack_plant():
    pack = load_pack("plant")
    assert isinstance(pack, DomainPack) and pack.name == "plant"
    assert pack.tool_names == TOOL_NAMES and pack.catalog_dir == ROOT / "toolcards" / "plant"
    assert "도구" in pack.system_prompt and pack.disclaimer == DISCLAIMER
    assert any(m in pack.disclaimer for m in pack.disclaimer_markers)
    assert pack.domain_examples and pack.remove_patterns == []


def test_pack_reads_context_from_turns():
    ctx = extract_context("1호기 선반에서 e042 알람이 계속 떠요", {})
    assert ctx == {"equipment": "CNC-001", "alarm": "E-042"}
    ctx = extract_context("그 부품 CP-007 재고는?", ctx)
    assert ctx["part"] == "CP-007" and ctx["equipment"] == "CNC-001"
    assert extract_context("CL-004 점검", {})["equipment"] == "CNC-002"
    assert render_context(ctx) == "설비 CNC-001, 알람 E-042, 부품 CP-007"
    assert extract_context("안녕하세요", {"equipment": "MC-101"}) == {"equipment": "MC-101"}


@pytest.mark.parametrize("sentence, banned", [
    ("인터록을 해제하고 시운전하면 됩니다.", True),
    ("도어 인터록을 우회해도 괜찮습니다.", True),
    ("잠깐이면 LOTO는 생략해도 됩니다.", True),
    ("가동 중에 손을 넣어 칩을 빼도 됩니다.", True),
    ("인터록은 해제하지 마세요.", False),
    ("가동 중인 설비에 손을 넣으면 안 됩니다.", False),
    ("LOTO 7단계를 따르세요.", False),
])
def test_pack_flags_unsafe_advice(sentence, banned):
    hits = find_banned(sentence)
    assert bool(hits) == banned, hits
    assert all(h["matched"] and h["alternative"] for h in hits)


# ----- slow: the real embedder -------------------------------------------------------------------

@pytest.fixture(scope="module")
def rag_e5(tmp_path_factory):
    from toolroute.embeddings import get_embedder

    base = tmp_path_factory.mktemp("plant-rag-e5")
    plant_tools.configure(embedder=get_embedder("e5-small"), client=open_client(base / "chroma"), docs_dir=base / "docs")
    yield base
    plant_tools.configure()


E5_QUESTIONS = [
    ("1호기 선반에 냉각수 유량 알람 뜨면 조치 순서가 어떻게 돼?", "alarm_code_table", "2. E-042 냉각수 유량 저하"),
    ("냉각수 펌프 교체는 어떤 순서로 해?", "procedure_coolant", "4. 냉각수 펌프 교체"),
    ("쿨런트 농도는 얼마로 맞춰?", "procedure_coolant", "2. 쿨런트 관리 기준"),
    ("잠금장치는 누가 풀 수 있어?", "safety_loto", "3. 잠금장치 해제"),
    ("베어링 갈고 나서 길들이기 운전은 어떻게 해?", "procedure_spindle_bearing", "5. 길들이기(런닝인) 운전"),
    ("윤활유 부족 알람 조치 방법", "alarm_code_table", "6. E-063 윤활유 부족"),
    ("오일 세퍼레이터는 언제 교체해?", "manual_sc37", "5. 오일 세퍼레이터 교체"),
    ("회전체 근처에서 장갑 껴도 돼?", "safety_loto", "5. 보호구"),
]


@pytest.mark.slow
def test_e5_search_finds_the_right_section(rag_e5):
    wrong = []
    for question, document, section in E5_QUESTIONS:
        top = search_documents.invoke({"query": question})["passages"][0]
        if (top["document"], top["section"]) != (document, section):
            wrong.append((question, top["source"], top["section"]))
    assert len(wrong) <= 1, wrong  # a small model: one miss of eight allowed


@pytest.mark.slow
def test_e5_task_chains_return_their_facts_without_filters(rag_e5, plant_tasks):
    for task in plant_tasks:
        if "search_documents" not in task.gold_tools:
            continue
        results = _replay(task, strip_filters=True)
        missing = task.missing_facts(" ".join(_dump(r) for r in results))
        assert not missing, f"{task.id}: {missing}"

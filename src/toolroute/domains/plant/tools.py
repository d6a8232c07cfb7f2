"""The four plant-maintenance tools (LangChain tools, `TOOLS` in contract order).

- `search_documents`: passages of the maintenance manuals and procedures, with their source.
- `query_knowledge_graph`: what is connected to an equipment, component, part, sensor, alarm or
  procedure in the equipment graph (nodes, edges, paths), or the path between two of them.
- `get_alarm_history`: a machine's alarm log over the last N days (counts per alarm and events).
- `check_spare_part_stock`: stock, safety stock, location, lead time of a spare part.

Results use the insurance domain's shapes (`ok`, `needs_user_input`, `not_found`, `rejected`):
plain JSON-serialisable dicts, Korean values, English keys. A tool never guesses: a missing or
ambiguous argument comes back as `needs_user_input` with the question to ask and the candidates.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Any, Callable

from langchain_core.tools import tool
from pydantic import AfterValidator, BaseModel, BeforeValidator, Field

from toolroute.domains.tool_results import needs_user_input, not_found, ok
from toolroute.domains.plant import TOOL_NAMES
from toolroute.domains.plant import documents as docs
from toolroute.domains.plant import records
from toolroute.domains.plant.graph import MAX_DEPTH, RELATIONS, EquipmentGraph, compact, load_graph, parse_relation

DEFAULT_K = 3
MAX_K = 8
DEFAULT_DAYS = 30
MAX_EVENTS = 20
DEFAULT_DEPTH = 1


def configure(embedder: Any = None, client: Any = None, docs_dir: Any = None) -> None:
    """Use this embedder / Chroma client / PDF folder for `search_documents` from the next call on."""
    docs.reset(embedder=embedder, client=client, docs_dir=docs_dir)


# --- argument parsing ----------------------------------------------------------------------------

def _parse_int(default: int):
    def parse(value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return default
        if isinstance(value, str):
            match = re.search(r"\d{1,3}", value)
            return int(match.group()) if match else default
        return value
    return parse


_DAY_WORDS = [(r"(\d{1,3})\s*(?:개월|달)", 30), (r"(\d{1,3})\s*(?:주일|주)", 7), (r"(\d{1,3})\s*(?:일|days?)", 1)]
_DAY_NAMES = {"오늘": 1, "어제": 2, "그제": 3, "이번주": 7, "일주일": 7, "지난주": 7, "한주": 7, "이번달": 30, "한달": 30,
              "지난달": 30, "두달": 60, "세달": 90, "석달": 90, "분기": 90, "반년": 180, "6개월": 180}


def _parse_days(value: Any) -> Any:
    """30, '30', '30일', '2주', '3개월', '한 달', '반년' → days; empty → 30."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_DAYS
    if isinstance(value, str):
        text = compact(value)
        for pattern, factor in _DAY_WORDS:
            match = re.search(pattern, text)
            if match:
                return int(match.group(1)) * factor
        for word, days in _DAY_NAMES.items():
            if word in text:
                return days
        match = re.search(r"\d{1,3}", text)
        return int(match.group()) if match else DEFAULT_DAYS
    return value


def _bounded(parse: Callable[[Any], Any], most: Callable[[], int]) -> Any:
    """An int field that `parse` reads from what was given, then kept between 1 and `most()`."""
    return Annotated[int, BeforeValidator(parse), AfterValidator(lambda value: max(1, min(most(), int(value))))]


PassageCount = _bounded(_parse_int(DEFAULT_K), lambda: MAX_K)
Depth = _bounded(_parse_int(DEFAULT_DEPTH), lambda: MAX_DEPTH)
Days = _bounded(_parse_days, lambda: records.history_days())


def _blank(value: str | None) -> bool:
    return value is None or not str(value).strip()


class SearchDocumentsArgs(BaseModel):
    query: str | None = Field(default=None, description="매뉴얼에서 찾을 내용 (예: E-042 조치 순서, 냉각수 펌프 교체 절차, 쿨런트 농도 기준)")
    equipment_id: str | None = Field(default=None, description="특정 설비의 문서로 좁힐 때 설비번호나 설비명 (예: CNC-001, 머시닝센터 1호기)")
    doc_type: str | None = Field(
        default=None,
        description="문서 종류로 좁힐 때: manual(정비 매뉴얼), procedure(작업 절차서), alarm_table(알람 조치표), "
                    "safety(안전 작업 절차·LOTO), schedule(예방정비 주기표)",
    )
    k: PassageCount = Field(default=DEFAULT_K, description=f"돌려받을 문단 수 (기본 {DEFAULT_K}, 최대 {MAX_K})")


class KnowledgeGraphArgs(BaseModel):
    entity: str | None = Field(
        default=None,
        description="조회할 대상의 ID나 이름: 설비(CNC-001), 구성 유닛(CL-003), 부품(CP-007), 센서(FS-301), "
                    "알람 코드(E-042), 정비 절차(PR-02)",
    )
    relation: str | None = Field(
        default=None,
        description="이 관계로 이어진 대상만 볼 때: HAS_COMPONENT(구성 유닛), USES_PART(사용 부품), MEASURED_BY(측정 센서), "
                    "TRIGGERS_ALARM(발생 알람), DETECTED_BY(감지 센서), CAUSED_BY(원인 부품), FIXED_BY(조치 절차), "
                    "REQUIRES_PART(필요 부품). 생략하면 모든 관계",
    )
    depth: Depth = Field(default=DEFAULT_DEPTH, description=f"몇 단계까지 따라갈지 (1~{MAX_DEPTH}, 기본 {DEFAULT_DEPTH}). 설비의 부품은 2단계")
    target: str | None = Field(default=None, description="두 대상이 어떻게 이어지는지 볼 때 도착 대상 (예: entity=CNC-001, target=CP-007)")


class AlarmHistoryArgs(BaseModel):
    equipment_id: str | None = Field(default=None, description="설비번호나 설비명 (예: CNC-001, 선반 1호기, 컴프레서)")
    alarm_code: str | None = Field(default=None, description="특정 알람만 볼 때 알람 코드 (예: E-042). 생략하면 모든 알람")
    days: Days = Field(default=DEFAULT_DAYS, description=f"최근 며칠 동안의 이력인지 (기본 {DEFAULT_DAYS}일, 최대 180일). 예: 7, '3개월'")


class SparePartArgs(BaseModel):
    part: str | None = Field(default=None, description="부품 번호나 부품명 (예: CP-007, 냉각수 펌프, 쿨런트 필터)")
    equipment_id: str | None = Field(
        default=None, description="같은 이름의 부품이 여러 개일 때 어느 설비 것인지 (예: 스핀들 베어링 + CNC-001)"
    )


# --- shared steps --------------------------------------------------------------------------------

def _labels(ids: list[str]) -> list[str]:
    graph = load_graph()
    return [graph.label(i) for i in ids]


def _resolve_equipment(value: str | None, ask: str) -> tuple[str | None, dict[str, Any] | None]:
    graph = load_graph()
    if _blank(value):
        return None, needs_user_input(["equipment_id"], ask, equipment=_labels(graph.ids("equipment")))
    text = str(value).strip()
    # A model name ("HL-2600") stands for its machines only when there is one.
    by_model = [e for e in graph.ids("equipment") if compact(graph.attrs(e)["model"]) == compact(text)]
    if len(by_model) == 1:
        return by_model[0], None
    if by_model:
        return None, needs_user_input(["equipment_id"], f"{text} 모델 설비가 여러 대입니다. 어느 설비인지 알려주세요.",
                                      candidates=_labels(by_model))
    found = graph.resolve(text, "equipment")
    if found.node:
        return found.node, None
    if not found.candidates:
        # A unit, sensor, part or alarm was named: its machine, when it has exactly one.
        other = graph.resolve(text)
        owners = graph.equipment_of(other.node) if other.node else []
        if len(owners) == 1:
            return owners[0], None
        if owners:
            found.candidates = owners
    if found.candidates:
        return None, needs_user_input(["equipment_id"], "어느 설비인지 설비번호로 알려주세요.", candidates=_labels(found.candidates))
    return None, not_found("equipment", text, found.suggestions or _labels(graph.ids("equipment")))


def _normalize_alarm(value: str) -> str | None:
    graph = load_graph()
    nid = graph.normalize_id(value)
    if nid and graph.attrs(nid)["type"] == "alarm":
        return nid
    found = graph.resolve(value, "alarm")
    return found.node


# --- tools ---------------------------------------------------------------------------------------

@tool("search_documents", args_schema=SearchDocumentsArgs)
def search_documents(query: str | None = None, equipment_id: str | None = None, doc_type: str | None = None,
                     k: int = DEFAULT_K) -> dict[str, Any]:
    """정비 매뉴얼·작업 절차서·알람 조치표·안전 작업 절차(LOTO)·예방정비 주기표에서 질문과 관련된 문단을 찾아
    출처(문서명, 쪽)와 함께 돌려줍니다. 작업 방법과 순서, 알람의 의미와 조치 방법, 점검 기준값, 정비 주기처럼
    문서에 적힌 내용을 확인할 때 씁니다. 설비(equipment_id)나 문서 종류(doc_type)로 좁힐 수 있습니다."""
    if _blank(query):
        return needs_user_input(["query"], "매뉴얼에서 어떤 내용을 찾을지 알려주세요. (예: E-042 조치 순서)")
    model = None
    equipment = None
    if not _blank(equipment_id):
        graph = load_graph()
        models = {graph.attrs(e)["model"] for e in graph.ids("equipment")}
        text = str(equipment_id).strip()
        model = next((m for m in models if compact(m) == compact(text)), None)
        if model is None:
            equipment, other = _resolve_equipment(text, "")
            if other is not None:
                return other
            model = graph.attrs(equipment)["model"]
    kind = None
    if not _blank(doc_type):
        text = compact(doc_type)
        kind = next((t for t, ko in docs.DOC_TYPES.items() if text in (t, compact(ko))), None)
        if kind is None:
            aliases = {"매뉴얼": "manual", "설명서": "manual", "절차": "procedure", "절차서": "procedure",
                       "알람": "alarm_table", "조치표": "alarm_table", "안전": "safety", "loto": "safety",
                       "주기": "schedule", "주기표": "schedule", "예방정비": "schedule", "pm": "schedule"}
            kind = next((v for word, v in aliases.items() if word in text), None)
        if kind is None:
            return not_found("doc_type", doc_type, [f"{t}({ko})" for t, ko in docs.DOC_TYPES.items()])
    text = " ".join(str(query).split())
    passages = docs.search(text, k=k, model=model, doc_type=kind)
    return ok(
        query=text,
        equipment=load_graph().label(equipment) if equipment else None,
        model=model,
        doc_type=kind,
        count=len(passages),
        passages=passages,
        note="매뉴얼 발췌입니다. 답할 때 출처(문서명과 쪽)를 함께 알려주세요.",
    )


def _graph_node(graph: EquipmentGraph, field: str, text: str) -> str | dict[str, Any]:
    """The graph node `text` names, or the result to return (several candidates, or none)."""
    found = graph.resolve(text)
    if found.candidates:
        return needs_user_input([field], f"'{str(text).strip()}'에 해당하는 대상이 여러 개입니다. 어느 것인지 알려주세요.",
                                candidates=[graph.node_dict(c) for c in found.candidates])
    if found.node is None:
        return not_found("entity", str(text).strip(), found.suggestions)
    return found.node


@tool("query_knowledge_graph", args_schema=KnowledgeGraphArgs)
def query_knowledge_graph(entity: str | None = None, relation: str | None = None, depth: int = DEFAULT_DEPTH,
                          target: str | None = None) -> dict[str, Any]:
    """설비 지식 그래프에서 설비·구성 유닛·부품·센서·알람·정비 절차가 서로 어떻게 연결되는지 조회합니다.
    설비의 구성 유닛과 부품, 알람을 일으키는 유닛과 원인 부품, 알람을 감지하는 센서, 조치 절차, 어떤 부품이 어느 설비에
    쓰이는지를 노드·관계·경로(예: CNC-001 → CL-003 → CP-007)로 돌려줍니다. target을 주면 두 대상 사이의 경로를 찾습니다."""
    graph = load_graph()
    if _blank(entity):
        return needs_user_input(["entity"], "조회할 설비, 부품, 알람 코드 등을 알려주세요. (예: CNC-001, E-042, CP-007)")
    start = _graph_node(graph, "entity", entity)
    if isinstance(start, dict):
        return start
    rel = parse_relation(relation)
    if rel is False:
        return not_found("relation", str(relation).strip(), [f"{r}({ko})" for r, ko in RELATIONS.items()])
    if not _blank(target):
        end = _graph_node(graph, "target", target)
        if isinstance(end, dict):
            return end
        steps = graph.path(start, end) or []
        nodes = [start] + [b for _, _, b, _ in steps]
        return ok(
            entity=graph.node_dict(start), target=graph.node_dict(end), connected=bool(steps) or start == end,
            path=nodes, path_text=graph.path_text(steps) or graph.label(start),
            edges=[{"source": a if fwd else b, "relation": r, "relation_ko": RELATIONS[r], "target": b if fwd else a}
                   for a, r, b, fwd in steps],
            nodes=[graph.node_dict(n) for n in nodes],
        )
    walk = graph.neighbourhood(start, depth=depth, relation=rel or None)
    counts: dict[str, int] = {}
    for node in walk["nodes"]:
        counts[node["type_ko"]] = counts.get(node["type_ko"], 0) + 1
    result = ok(
        entity=graph.node_dict(start), relation=rel or None, depth=depth, count=len(walk["nodes"]), counts=counts,
        nodes=walk["nodes"], edges=walk["edges"], paths=walk["paths"],
    )
    if walk["truncated"]:
        result["note"] = "결과가 많아 일부만 보여줍니다. relation이나 depth로 좁혀 주세요."
    elif not walk["nodes"]:
        result["note"] = f"{graph.label(start)}에서 {depth}단계 안에 이 관계로 이어진 대상이 없습니다. depth를 늘려 보세요."
    return result


@tool("get_alarm_history", args_schema=AlarmHistoryArgs)
def get_alarm_history(equipment_id: str | None = None, alarm_code: str | None = None,
                      days: int = DEFAULT_DAYS) -> dict[str, Any]:
    """설비의 알람 발생 이력을 최근 N일(기본 30일, 최대 180일) 동안 조회합니다: 알람 코드별 발생 횟수, 마지막 발생 시각,
    각 발생의 시각·측정값·지속 시간·현장 조치. 특정 알람 코드만 볼 수 있습니다."""
    graph = load_graph()
    ask = "어느 설비의 알람 이력을 볼까요? 설비번호(예: CNC-001)를 알려주세요."
    code = None
    if not _blank(alarm_code):
        code = _normalize_alarm(str(alarm_code))
        if code is None:
            return not_found("alarm_code", str(alarm_code).strip(), graph.suggest(str(alarm_code), "alarm")
                             or _labels(graph.ids("alarm")))
    if _blank(equipment_id):
        result = needs_user_input(["equipment_id"], ask, equipment=_labels(graph.ids("equipment")))
        if code:
            result["known"] = {"alarm_code": code, "equipment_that_can_raise_it": _labels(graph.equipment_of(code))}
        return result
    equipment, other = _resolve_equipment(equipment_id, ask)
    if other is not None:
        return other
    possible = graph.alarms_of(equipment)
    events = records.alarm_events(equipment, days, code)
    since = records.as_of() - timedelta(days=days)
    by_code: dict[str, dict[str, Any]] = {}
    for e in events:  # newest first
        row = by_code.setdefault(e.alarm_code, {"alarm_code": e.alarm_code, "alarm_name": e.alarm_name,
                                                "severity": e.severity, "count": 0,
                                                "last": e.time.strftime(records.TIME_FORMAT)})
        row["count"] += 1
    summary = sorted(by_code.values(), key=lambda r: (-r["count"], r["alarm_code"]))
    line = f"{graph.label(equipment)} 최근 {days}일 {code + ' ' if code else ''}알람 {len(events)}건"
    if summary:
        line += ": " + ", ".join(f"{r['alarm_code']} {r['alarm_name']} {r['count']}건(마지막 {r['last']})" for r in summary)
    result = ok(
        equipment=graph.label(equipment),
        alarm_code=code,
        summary=line,
        period={"days": days, "from": since.strftime(records.TIME_FORMAT),
                "to": records.as_of().strftime(records.TIME_FORMAT)},
        total=len(events),
        by_alarm=summary,
        most_frequent=summary[0]["alarm_code"] if summary else None,
        events=[e.as_dict() for e in events[:MAX_EVENTS]],
    )
    if len(events) > MAX_EVENTS:
        result["note"] = f"최근 {MAX_EVENTS}건만 보여줍니다 (전체 {len(events)}건)."
    if code and code not in possible:
        result["note"] = (f"{graph.label(equipment)}에는 {code}를 일으키는 구성 유닛이 없습니다. "
                          f"이 설비의 알람: {', '.join(sorted(possible))}")
    elif not events:
        result["note"] = f"최근 {days}일 동안 기록된 알람이 없습니다."
    return result


@tool("check_spare_part_stock", args_schema=SparePartArgs)
def check_spare_part_stock(part: str | None = None, equipment_id: str | None = None) -> dict[str, Any]:
    """예비 부품의 현재 재고 수량, 안전재고, 재고 상태, 보관 위치, 발주 리드타임, 공급사, 입고 예정을 조회합니다.
    부품 번호(CP-007)나 부품명(냉각수 펌프)으로 찾고, 같은 이름의 부품이 여러 설비에 있으면 설비로 구분합니다."""
    graph = load_graph()
    if _blank(part):
        return needs_user_input(["part"], "어떤 부품의 재고를 확인할까요? 부품 번호(예: CP-007)나 부품명을 알려주세요.")
    text = str(part).strip()
    query = text
    if not _blank(equipment_id):
        equipment, other = _resolve_equipment(equipment_id, "")
        if other is not None:
            return other
        query = f"{equipment} {text}"
    found = graph.resolve(query, "part")
    if found.node is None and not found.candidates:
        # A machine or a unit was named instead of a part: offer its parts.
        other = graph.resolve(query)
        if other.node and graph.attrs(other.node)["type"] in ("equipment", "component"):
            kind = graph.attrs(other.node)["type"]
            parts = graph.parts_of(other.node) if kind == "equipment" else graph.out_edges(other.node, "USES_PART")
            found.candidates = parts
    if found.candidates:
        return needs_user_input(
            ["part"], f"'{text}'에 해당하는 부품이 여러 개입니다. 부품 번호나 설비를 알려주세요.",
            candidates=[{"part_id": c, "name": graph.attrs(c)["name"], "used_in": graph.where_used(c)}
                        for c in found.candidates])
    if found.node is None:
        return not_found("part", text, found.suggestions)
    item = records.stock_of(found.node)
    if item is None:
        return not_found("stock", found.node)
    attrs = graph.attrs(found.node)
    result = ok(
        part_id=item.part_id, name=attrs["name"], spec=attrs.get("spec"),
        stock=item.stock, unit=item.unit, stock_text=f"{item.stock}{item.unit}",
        safety_stock=item.safety_stock, stock_status=item.status, location=item.location,
        lead_time_days=item.lead_time_days, supplier=item.supplier, unit_price=item.unit_price,
        on_order=item.on_order, as_of=records.stock_as_of(), used_in=graph.where_used(found.node),
    )
    if item.status != records.STATUS_OK:
        if item.on_order:
            result["advice"] = (f"입고 예정 {item.on_order['quantity']}{item.unit} ({item.on_order['eta']}). "
                                f"추가 발주 시 리드타임 {item.lead_time_days}일.")
        else:
            result["advice"] = f"발주가 필요합니다. 리드타임 {item.lead_time_days}일."
    return result


TOOLS = [search_documents, query_knowledge_graph, get_alarm_history, check_spare_part_stock]
if [t.name for t in TOOLS] != TOOL_NAMES:  # the contract: a misspelt tool fails at import, not mid-conversation
    raise ValueError(f"plant tools {[t.name for t in TOOLS]} do not match TOOL_NAMES {TOOL_NAMES}")

"""The plant-maintenance domain (seed 001): an agent for the maintenance staff of a machining plant.

Four tools over one synthetic plant (한빛정밀 창원공장: CNC 선반 CNC-001/CNC-002, 머시닝센터 MC-101,
공기압축기 AC-201), so that a question may need a chain of up to three of them, e.g. alarm E-042 on
CNC-001 → graph (CL-003 → CP-007) → manual procedure → spare-part stock.

Which tool answers which request (card writers and query writers both follow this):
- **search_documents**: what the documents *say*: how to do a job (절차, 순서, 방법), what an alarm means
  and how to treat it per the 알람 조치표, limits and settings (쿨런트 농도, 토크, 압력 기준), safety rules
  (LOTO, 인터록, 보호구), maintenance intervals (예방정비 주기표).
- **query_knowledge_graph**: what is *connected* to what: components of a machine, parts of a component,
  sensors, which component raises an alarm, suspected parts of an alarm, the procedure id fixing it,
  where a part is used, the path between two entities.
- **get_alarm_history**: what *happened*: when and how often alarms fired on a machine, the last time,
  readings, what operators did.
- **check_spare_part_stock**: the *store*: quantity, safety stock, location, lead time, incoming orders.
- No tool: greetings, thanks, chit-chat, other domains, prompt injection, questions about people or
  schedules the tools do not hold.
"""

LABEL = "설비 정비"  # the domain in its users' words (refusals, page titles)

TOOL_NAMES: list[str] = [
    "search_documents",
    "query_knowledge_graph",
    "get_alarm_history",
    "check_spare_part_stock",
]

"""Seed 001's kg_data: a turn's graph is every node and edge its tool results showed, each once."""

from toolroute.agent.pack import merge_graphs
from toolroute.domains.plant.pack import graph_of
from toolroute.domains.plant.tools import query_knowledge_graph


def test_graphs_merge_by_node_id_and_edge():
    a = {"nodes": [{"id": "A"}, {"id": "B"}], "edges": [{"source": "A", "relation": "r", "target": "B"}]}
    b = {"nodes": [{"id": "B"}, {"id": "C"}], "edges": [{"source": "A", "relation": "r", "target": "B"},
                                                       {"source": "B", "relation": "s", "target": "C"}]}
    merged = merge_graphs(a, b)
    assert [n["id"] for n in merged["nodes"]] == ["A", "B", "C"] and len(merged["edges"]) == 2
    assert merge_graphs({}, None) == {}


def test_only_a_graph_result_that_succeeded_has_a_graph():
    found = graph_of("query_knowledge_graph", query_knowledge_graph.invoke({"entity": "CNC-001", "depth": 1}))
    assert found["nodes"][0] == {"id": "CNC-001", "name": "CNC 선반 1호기", "type": "설비"}
    assert all(e["source"] in {n["id"] for n in found["nodes"]} for e in found["edges"])
    assert graph_of("query_knowledge_graph", query_knowledge_graph.invoke({})) is None  # asks for the entity
    assert graph_of("get_alarm_history", {"status": "ok"}) is None


def test_a_plants_ids_reach_the_user_and_an_insurers_stay_masked():
    """The plant's equipment ids are what its staff work with (seed 001's answer names CNC-001 and CP-007);
    an insurance customer id stays masked."""
    from toolroute.agent import load_pack
    from toolroute.agent.output_policy import guard_tool_call, mask_tool_values

    plant = load_pack("plant")
    result = query_knowledge_graph.invoke({"entity": "CNC-001", "target": "CP-007"})
    entry = {"name": "query_knowledge_graph", "args": {"entity": "CNC-001"}, "result": result}
    shown = guard_tool_call(entry, plant)
    assert shown["result"]["entity"]["id"] == "CNC-001" and shown["args"]["entity"] == "CNC-001"
    assert mask_tool_values("CNC-001의 CL-003을 확인하세요", [entry], plant) == "CNC-001의 CL-003을 확인하세요"
    insurance = load_pack("insurance")
    customer = {"name": "customer_search", "args": {}, "result": {"status": "ok", "customers": [{"customer_id": "C0002"}]}}
    assert guard_tool_call(customer, insurance)["result"]["customers"][0]["customer_id"] == "C****"

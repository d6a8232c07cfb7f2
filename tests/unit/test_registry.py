"""The run-time registry: tools registered, unregistered and reloaded in a running agent."""

from __future__ import annotations

import importlib
import sys

import pytest
from langchain_core.tools import tool

from toolroute.agent.graph import AgentConfig, build_agent
from toolroute.agent.pack import DomainPack
from toolroute.cards import Catalog, CatalogError, ToolCard
from toolroute.agent.registry import RegistryError, ToolRegistry
from toolroute.routing import RouterConfig, build_router

from conftest import HashEmbedder
from fake_llm import ScriptedLLM

MODULE = '''
from langchain_core.tools import tool


@tool
def weather_now(city: str) -> dict:
    """Current weather of a city."""
    return {{"city": city, "sky": "{sky}"}}


@tool
def bus_arrival(stop: str) -> dict:
    """Minutes until the next bus at a stop."""
    return {{"stop": stop, "minutes": 4}}


TOOLS = [weather_now, bus_arrival]
'''

CARDS = {
    "weather_now": ToolCard(name="weather_now", purpose="지금 날씨를 알려준다",
                            when_to_use=("오늘 서울 날씨 어때", "지금 비 와?", "밖에 바람 많이 불어?"), tags=("날씨",)),
    "bus_arrival": ToolCard(name="bus_arrival", purpose="버스 도착 시간을 알려준다",
                            when_to_use=("143번 버스 언제 와", "정류장에 버스 몇 분 남았어", "막차 끊겼어?"), tags=("교통",)),
}
SUBWAY = ToolCard(name="subway_delay", purpose="지하철 지연 정보를 알려준다",
                  when_to_use=("2호선 지금 지연돼?", "지하철 연착 정보", "신분당선 운행 멈췄어?"), tags=("지하철", "지연"))


@tool
def subway_delay(line: str) -> dict:
    """Delay of a subway line."""
    return {"line": line, "delay_minutes": 7}


@pytest.fixture
def tool_module(tmp_path, monkeypatch):
    path = tmp_path / "citytools_mod.py"
    path.write_text(MODULE.format(sky="맑음"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("citytools_mod", None)
    module = importlib.import_module("citytools_mod")
    yield path, module
    sys.modules.pop("citytools_mod", None)


@pytest.fixture
def running(tool_module, chroma):
    _, module = tool_module
    embedder = HashEmbedder()
    router = build_router(RouterConfig(embedder=embedder, aggregation="max", rrf_k=60, dense_weight=1.0),
                          Catalog("city", dict(CARDS), authored=False), chroma, progress=False, no_call="none")
    pack = DomainPack("city", list(module.TOOLS), "도시 생활 도우미입니다.", catalog_dir=None, domain_examples=["날씨"])
    llm = ScriptedLLM(replies=[], calls=[], bound=[])
    agent = build_agent(pack, llm, router, config=AgentConfig(top_k=5, rewrite_with_llm=False))
    return agent, llm, embedder, chroma


def _vectors_of(chroma, name):
    return sum(len(c.get(where={"tool": name})["ids"]) for c in chroma.list_collections())


def test_a_registered_tool_is_routed_bound_and_called_on_the_next_turn(running):
    agent, llm, embedder, chroma = running
    registry = ToolRegistry(agent)
    before = embedder.passages_embedded
    change = registry.register(subway_delay, SUBWAY)
    assert change.action == "register" and change.records_embedded == 5  # purpose, 3 examples, tags: this card only
    assert embedder.passages_embedded == before + 5
    assert agent.router.route("2호선 지하철 지연").top(1) == ["subway_delay"]
    llm.replies.extend([("subway_delay", {"line": "2호선"}), "2호선은 7분 지연입니다."])
    state = agent.ask("2호선 지하철 지연돼?")
    assert "subway_delay" in llm.bound[0]
    assert state["tool_log"][0]["name"] == "subway_delay" and state["tool_log"][0]["result"]["delay_minutes"] == 7


def test_unregistering_deletes_the_vectors_at_once_and_the_next_turn_cannot_use_it(running):
    agent, llm, _, chroma = running
    registry = ToolRegistry(agent)
    assert _vectors_of(chroma, "weather_now") == 5
    change = registry.unregister("weather_now")
    assert change.tools == ["weather_now"] and _vectors_of(chroma, "weather_now") == 0
    assert "weather_now" not in agent.router.route("오늘 서울 날씨 어때").top(5)
    llm.replies.extend([("weather_now", {"city": "서울"}), "확인할 수 없습니다."])
    state = agent.ask("오늘 서울 날씨 어때")
    assert "weather_now" not in llm.bound[0]
    assert "error" in str(state["tool_log"][0]["result"]).lower() or "unknown" in str(state["tool_log"][0]["result"]).lower()


def test_bad_requests_are_clear_errors_and_change_nothing(running):
    agent, _, _, chroma = running
    registry = ToolRegistry(agent)
    with pytest.raises(RegistryError, match="unknown tool 'weather_nw'.*did you mean weather_now"):
        registry.unregister("weather_nw")
    with pytest.raises(RegistryError, match="already registered"):
        registry.register(agent.pack.tool("bus_arrival"), CARDS["bus_arrival"])
    with pytest.raises(RegistryError, match="card is named 'bus_arrival' but the tool 'subway_delay'"):
        registry.register(subway_delay, CARDS["bus_arrival"])
    copycat = SUBWAY.model_copy(update={"when_to_use": ("지금 비 와?", "지하철 연착 정보", "2호선 지금 지연돼?")})
    with pytest.raises(CatalogError, match="duplicates one in card 'weather_now'.*not registered"):
        registry.register(subway_delay, copycat)
    assert registry.names == ["weather_now", "bus_arrival"] and _vectors_of(chroma, "subway_delay") == 0


def test_reloading_a_tool_module_swaps_the_code_in_place(running, tool_module):
    agent, llm, _, _ = running
    path, _ = tool_module
    path.write_text(MODULE.format(sky="비 온 뒤 흐림"), encoding="utf-8")
    change = ToolRegistry(agent).reload_module("citytools_mod")
    assert sorted(change.tools) == ["bus_arrival", "weather_now"]
    llm.replies.extend([("weather_now", {"city": "서울"}), "흐립니다."])
    state = agent.ask("오늘 서울 날씨 어때")
    assert state["tool_log"][0]["result"]["sky"] == "비 온 뒤 흐림"
    path.write_text("this is not python(", encoding="utf-8")
    with pytest.raises(RegistryError, match="reloading citytools_mod failed, tools unchanged"):
        ToolRegistry(agent).reload_module("citytools_mod")
    assert agent.pack.tool("weather_now").invoke({"city": "부산"})["sky"] == "비 온 뒤 흐림"


def test_an_agent_without_a_router_cannot_have_a_registry(running):
    agent, *_ = running
    agent.router = None
    with pytest.raises(RegistryError, match="no ToolRouter"):
        ToolRegistry(agent)


def test_replacing_a_card_reembeds_only_what_changed(running):
    agent, *_ = running
    change = ToolRegistry(agent).register(agent.pack.tool("bus_arrival"),
                                          CARDS["bus_arrival"].model_copy(update={"purpose": "버스 도착 예정 시각"}),
                                          replace=True)
    assert change.action == "replace" and change.records_embedded == 1


def test_the_input_gate_learns_a_registered_tool_s_wording_and_forgets_a_removed_one(running):
    from toolroute.agent.guardrails import DomainGate

    agent, _, embedder, _ = running
    agent.gate = DomainGate.fit(embedder, [t for c in CARDS.values() for t in (c.purpose, *c.when_to_use)],
                                ["서울 날씨", "버스 언제 와"], off_examples=["김치찌개 레시피"])
    threshold = agent.gate.threshold
    registry = ToolRegistry(agent)
    change = registry.register(subway_delay, SUBWAY)
    assert "2호선 지금 지연돼?" in agent.gate.examples and agent.gate.threshold == threshold
    assert agent.gate.off_examples == ["김치찌개 레시피"]
    # Only the new card's texts are embedded; the gate scores as one fitted from scratch would.
    assert change.gate_examples_embedded == len({SUBWAY.purpose, *SUBWAY.when_to_use})
    fresh = DomainGate(embedder, list(agent.gate.examples), threshold, off_examples=["김치찌개 레시피"])
    probes = ["2호선 지금 지연돼?", "김치찌개 레시피 알려줘", "버스 몇 분 남았어"]
    assert agent.gate.similarity(probes) == pytest.approx(fresh.similarity(probes), abs=1e-6)
    change = registry.unregister("subway_delay")
    assert SUBWAY.purpose not in agent.gate.examples and change.gate_examples_embedded == 0

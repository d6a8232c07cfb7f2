"""LLM-proposed card edits (issue 22, failure analysis): grouping, robust parsing, every skip has a
reason, an LLM that fails never stops the analysis; `toolroute cards propose` with a stand-in LLM and
a hash embedder. No sockets."""

import json
import re

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage

import toolroute.llm as llm_module
import toolroute.routing as routing
from conftest import HashEmbedder
from toolroute.cards import Catalog, ToolCard
from toolroute.cards.store import CardStore
from toolroute.cli import main
from toolroute.config import toolcards_dir
from toolroute.cards.proposals import FailureGroup, group_failures, parse_reply, propose_edits

CATALOG = Catalog("demo", {
    "weather_now": ToolCard(name="weather_now", purpose="지금 날씨", when_to_use=("오늘 날씨 어때", "지금 비 와?", "바람 불어?")),
    "bus_arrival": ToolCard(name="bus_arrival", purpose="버스 도착 시간", when_to_use=("버스 언제 와", "몇 분 남았어", "막차 끊겼어?")),
}, authored=False)
FAILURES = [
    {"query": "지하철 첫차 시간", "expected": ["bus_arrival"], "got": ["weather_now", "bus_arrival"]},
    {"query": "마을버스 배차 간격", "expected": ["bus_arrival"], "got": ["weather_now"]},
    {"query": "우산 챙겨야 해?", "expected": ["weather_now"], "got": ["bus_arrival"]},
    {"query": "김치찌개 레시피", "expected": [], "got": ["weather_now"]},  # a no-call row: no group
]


class Broken:
    def invoke(self, messages):
        raise ConnectionError("LLM down")


class Recorder(FakeListChatModel):
    prompts: list[str] = []

    def invoke(self, messages, *args, **kwargs):
        self.prompts.append("\n".join(m.content for m in messages))
        return super().invoke(messages, *args, **kwargs)


def test_failures_are_grouped_by_the_expected_tool_largest_first():
    groups = group_failures(FAILURES)
    assert groups == [FailureGroup("bus_arrival", ("지하철 첫차 시간", "마을버스 배차 간격"), ("weather_now",)),
                      FailureGroup("weather_now", ("우산 챙겨야 해?",), ("bus_arrival",))]


def test_the_first_json_object_is_found_in_prose_and_fences_and_broken_json_is_none():
    reply = 'Sure! {not json} then:\n```json\n{"tool": "bus_arrival", "field": "when_to_use", "line": "a"}\n```'
    assert parse_reply(reply) == {"tool": "bus_arrival", "field": "when_to_use", "line": "a"}
    assert parse_reply('{"tool": "bus_arrival", "line": ') is None and parse_reply("") is None


def test_one_proposal_per_group_and_bad_replies_are_skipped_with_a_reason():
    good = json.dumps({"tool": "bus_arrival", "field": "when_to_use", "line": "  전철  첫차 몇 시야 "}, ensure_ascii=False)
    llm = Recorder(responses=[good, "I cannot help with that."], prompts=[])
    first, second = propose_edits(llm, CATALOG, FAILURES, max_proposals=5, guard_queries=["지하철 첫차 시간"])
    assert first.skipped is None and first.changes == {"+when_to_use": "전철 첫차 몇 시야"}
    assert first.diff() == ["bus_arrival.when_to_use", "  + 전철 첫차 몇 시야"]
    assert second.skipped == "the reply holds no JSON object" and second.diff() == []
    assert "- 지하철 첫차 시간" in llm.prompts[0] and "[weather_now] 지금 날씨" in llm.prompts[0]  # the chosen card too
    assert len(propose_edits(FakeListChatModel(responses=["{}"]), CATALOG, FAILURES, max_proposals=1)) == 1


def test_unrelated_copied_or_existing_lines_are_skipped_and_a_failed_call_is_a_skip_too():
    def one(reply, guard=()):
        return propose_edits(FakeListChatModel(responses=[json.dumps(reply, ensure_ascii=False)]), CATALOG, FAILURES,
                             max_proposals=1, guard_queries=guard)[0].skipped

    assert "no card named" in one({"tool": "nope", "field": "when_to_use", "line": "x"})
    assert "cannot be proposed" in one({"tool": "bus_arrival", "field": "purpose", "line": "x"})
    assert "already has this line" in one({"tool": "bus_arrival", "field": "when_to_use", "line": "버스 언제 와"})
    assert "resembles an eval query" in one({"tool": "bus_arrival", "field": "when_to_use", "line": "지하철 첫차 시간!"},
                                            guard=["지하철 첫차 시간"])
    assert "string values" in one({"tool": "bus_arrival", "field": "when_to_use", "line": 3})
    [down] = propose_edits(Broken(), CATALOG, FAILURES, max_proposals=1)
    assert down.skipped.startswith("the LLM call failed: ConnectionError") and down.skip_code == "llm_failed"


def test_every_skip_reason_has_a_kind_and_the_dashboard_says_each_kind_in_korean():
    """The page shows a skip in Korean by its kind (issue 41, item 7: English reasons reached the operator)."""
    from toolroute.cards import normalize_text, proposals
    from toolroute.serve.admin_page import PAGE

    group = FailureGroup("bus_arrival", ("지하철 첫차 시간",), ("weather_now",))
    line = {"tool": "bus_arrival", "field": "when_to_use"}
    replies = [None, {**line, "line": 3}, {**line, "tool": "nope", "line": "x"},
               {"tool": "other", "field": "when_to_use", "line": "x"}, {**line, "field": "purpose", "line": "x"},
               {**line, "line": "가" * 500}, {**line, "line": "버스 언제 와"}, {**line, "line": "지하철 첫차 시간!"}]
    catalog = Catalog("demo", {**CATALOG.cards, "other": ToolCard(name="other", purpose="다른 도구")}, {})
    codes = [proposals.skip_code(proposals.check_proposal(r, group, catalog, [normalize_text("지하철 첫차 시간")])[3])
             for r in replies]
    assert codes == ["no_json", "bad_values", "unknown_card", "wrong_tool", "bad_field", "bad_length", "already_there",
                     "like_eval"]
    for code in {*proposals.SKIP_CODES.values(), "llm_failed", "other"}:
        assert re.search(rf"\b{code}: \"[^\"]*[가-힣]", PAGE), code

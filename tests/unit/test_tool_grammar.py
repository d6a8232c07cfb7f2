"""Constrained tool calls (issue 24, item 4): the grammar built from the bound tools' schemas, and the option
reaching the LLM request. The grammar engine itself (llama.cpp) is exercised in tests/integration/test_llm.py."""

from __future__ import annotations

import json

import httpx
import pytest
from langchain_core.messages import HumanMessage

from toolroute.agent.graph import AgentConfig, build_agent, result_for_llm
from toolroute.agent.pack import load_pack
from toolroute.llm.tool_grammar import grammar_tools, literal, text_grammar, tool_call_grammar

SCHEMAS = [
    {"type": "function", "function": {"name": "premium_estimate", "parameters": {
        "type": "object", "required": ["product"],
        "properties": {"product": {"type": "string"}, "age": {"type": "integer"},
                       "sex": {"type": "string", "enum": ["남성", "여성"]}}}}},
    {"type": "function", "function": {"name": "premium_compare", "parameters": {
        "type": "object", "properties": {"products": {"type": "array", "items": {"type": "string"}},
                                         "smoker": {"type": "boolean"}, "rate": {"anyOf": [{"type": "number"}, {"type": "null"}]}}}}},
]


def _rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.splitlines())


@pytest.fixture(scope="module")
def pack():
    return load_pack("insurance")


def test_the_grammar_admits_exactly_the_bound_tool_names():
    grammar = tool_call_grammar(SCHEMAS)
    rules = _rules(grammar)
    assert grammar_tools(grammar) == ["premium_estimate", "premium_compare"]
    assert rules["call-object"] == "call-premium-estimate | call-premium-compare"
    assert rules["call"] == '"<tool_call>" ws call-object ws "</tool_call>" | call-object'  # tagged or bare JSON
    assert rules["root"] == '[ \\n]{0,2} calls | text' and rules["calls"].startswith("call (")
    assert "claim_guide" not in grammar and grammar_tools(tool_call_grammar(SCHEMAS[:1])) == ["premium_estimate"]
    assert tool_call_grammar([]) == text_grammar() and "call" not in _rules(text_grammar())


def test_the_first_character_of_a_text_answer_can_be_narrowed(pack):
    assert _rules(text_grammar())["text-start"] == "[^<{` \\t\\n]"  # anything but markup
    assert _rules(tool_call_grammar(SCHEMAS, text_start="[가-힣0-9]"))["text-start"] == "[가-힣0-9]"
    agent = build_agent(pack, None, config=AgentConfig(use_router=False, constrained_calls=True))
    grammar = agent.request_options(["premium_estimate"])["extra_body"]["grammar"]
    assert _rules(grammar)["text-start"] == pack.answer_start == "[가-힣0-9]"
    assert _rules(agent.request_options([])["extra_body"]["grammar"])["text-start"] == "[가-힣0-9]"
    assert build_agent(pack, None).request_options(["premium_estimate"]) == {}  # off by default


def test_arguments_follow_each_tools_schema():
    rules = _rules(tool_call_grammar(SCHEMAS))
    assert rules["args-premium-estimate-age-kv"] == '"\\"age\\"" ws ":" ws integer'
    assert rules["args-premium-estimate-sex-kv"] == '"\\"sex\\"" ws ":" ws ("\\"남성\\"" | "\\"여성\\"")'
    # `product` is required: every way into the object starts with it; the others are optional, in order
    assert rules["args-premium-estimate"] == ('"{" ws ( args-premium-estimate-product-kv ws args-premium-estimate-after-0? ) "}"')
    assert rules["args-premium-compare-products"] == '"[" ws ( string ws ( "," ws string ws )* )? "]"'
    assert rules["args-premium-compare-smoker-kv"].endswith("ws boolean")
    assert rules["args-premium-compare-rate-kv"].endswith("ws (number | null)")
    # nothing required: any of its properties in any order, or none ({} is a valid call)
    assert rules["args-premium-compare-kv"] == ("args-premium-compare-products-kv | args-premium-compare-smoker-kv | "
                                                "args-premium-compare-rate-kv")
    assert rules["args-premium-compare"] == ('"{" ws ( args-premium-compare-kv ws ( "," ws args-premium-compare-kv ws )* )? '
                                             '"}"')


def test_every_tool_of_every_pack_gives_a_grammar():
    for domain in ("insurance", "threat", "plant"):
        pack = load_pack(domain)
        agent = build_agent(pack, None, config=AgentConfig(use_router=False))
        grammar = tool_call_grammar([agent.schema(n) for n in pack.tool_names])
        assert grammar_tools(grammar) == pack.tool_names


def test_literals_escape_quotes_and_backslashes():
    assert literal('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


class _Capture:
    """An OpenAI-compatible endpoint in process (httpx MockTransport): records each request body."""

    def __init__(self, replies):
        self.bodies, self.replies = [], list(replies)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        message = self.replies.pop(0)
        return httpx.Response(200, json={"id": "x", "object": "chat.completion", "created": 0, "model": "local",
                                         "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                                         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def _chat(capture):
    from langchain_openai import ChatOpenAI  # heavy: only in the request tests

    return ChatOpenAI(base_url="http://127.0.0.1:9/v1", api_key="local", model="local", temperature=0, max_retries=0,
                      http_client=httpx.Client(transport=httpx.MockTransport(capture)))


@pytest.mark.parametrize("constrained", [True, False])
def test_the_option_reaches_the_llm_request(pack, constrained):
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "premium_estimate", "arguments": json.dumps({"product": "첫날부터암보험", "age": 45, "sex": "남성"})}}]}
    capture = _Capture([call, {"role": "assistant", "content": "월 28,650원입니다."}])
    agent = build_agent(pack, _chat(capture), config=AgentConfig(use_router=False, rewrite_with_llm=False,
                                                                  constrained_calls=constrained))
    state = agent.ask("45세 남성 첫날부터암보험 보험료", tools=["premium_estimate", "premium_compare"])
    assert [e["name"] for e in state["tool_log"]] == ["premium_estimate"] and "28,650원" in state["answer"]
    first, second = capture.bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["premium_estimate", "premium_compare"]
    if constrained:
        assert grammar_tools(first["grammar"]) == ["premium_estimate", "premium_compare"]
        assert second["grammar"] == first["grammar"]  # the same tools bound after the result
    else:
        assert "grammar" not in first and "grammar" not in second


def test_the_answer_without_tools_is_constrained_to_text(pack):
    capture = _Capture([{"role": "assistant", "content": "<tool_call>{}</tool_call>"},
                        {"role": "assistant", "content": "확인이 어렵습니다."}])
    agent = build_agent(pack, _chat(capture), config=AgentConfig(use_router=False, constrained_calls=True))
    reply, _ = agent._call({"messages": [HumanMessage("안녕")], "rewritten": "안녕"}, [], final=True)
    assert capture.bodies[0]["grammar"] == text_grammar(pack.answer_start) and "tools" not in capture.bodies[0]
    assert reply.content == "<tool_call>{}</tool_call>"  # the mock ignores grammars: the request is what is tested


def test_the_config_rejects_an_unknown_result_format():
    with pytest.raises(ValueError, match="tool_result_format"):
        AgentConfig(tool_result_format="yaml")


def test_results_as_lines_keep_the_summary_and_facts_and_drop_ids(pack):
    result = pack.tool("customer_contract_lookup").invoke({"name": "윤지은"})
    lines = result_for_llm(result, 1500, "lines", pack.result_labels)
    assert lines.splitlines()[0] == result["summary"]
    assert "고객: 이름 윤지은, 나이 55, 성별 여성" in lines and "월 보험료 54,370원" in lines
    assert "CT0000" not in lines and "product_code" not in lines and '"status"' not in lines
    asked = result_for_llm(pack.tool("premium_estimate").invoke({"product": "첫날부터암보험"}), 1500, "lines",
                           pack.result_labels)
    assert asked.splitlines()[0] == "나이·성별을 알려주세요." and "빠진 정보: age, sex" in asked
    assert result_for_llm(result, 1500) == result_for_llm(result)  # json stays the default

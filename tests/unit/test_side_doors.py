"""The agent's side doors (issue 37): only the tools bound for a turn run, a client sees tool data only
through the output policy, a reply the LLM's stream cut off is a failed turn, and a stream's tail is
masked as if more digits could follow."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import AIMessage

from toolroute.agent.events import parse_sse, public_error, stream_events
from toolroute.agent.graph import LLM_ERROR_ANSWER, AgentConfig, LLMStreamCut, build_agent, reply_was_cut
from toolroute.agent.output_policy import guard_tool_call, guard_tool_data, mask_id, mask_name, mask_open_tail
from toolroute.agent.pack import load_pack
from toolroute.routing.router import RouteResult

from fake_llm import ScriptedLLM

RAW_ID = re.compile(r"(?<![A-Za-z0-9])(?:C\d{4}|CT\d{5}|B0\d{2})(?![0-9])")


@pytest.fixture(scope="module")
def pack():
    return load_pack("insurance")


class FixedRouter:
    def __init__(self, catalog, names, no_call=False):
        self.catalog, self.names, self.no_call = catalog, names, no_call

    def route(self, query):
        return RouteResult(query, [(n, 1.0 - i / 10) for i, n in enumerate(self.names)], no_call=self.no_call)


def _agent(pack, catalog, replies, routed, no_call=False):
    llm = ScriptedLLM(replies=list(replies), calls=[], bound=[])
    return build_agent(pack, llm, FixedRouter(catalog, list(routed), no_call), config=AgentConfig()), llm


# --- 1. only the routed tools run -------------------------------------------------------------------------

def test_a_tool_the_router_did_not_bind_is_not_run(pack, insurance_catalog):
    agent, llm = _agent(pack, insurance_catalog, [("customer_search", {"age": 52}), "보험료 안내를 도와드리겠습니다."],
                        routed=["claim_guide", "claim_required_forms"])
    state = agent.ask("보험금 청구 서류 알려줘")
    entry = state["tool_log"][0]
    assert entry["name"] == "customer_search" and entry["status"] == "error" and entry["refused"] == "not_bound"
    assert "not available in this turn" in entry["result"]["error"]
    assert entry["result"]["available"] == ["claim_guide", "claim_required_forms"]
    assert "customers" not in entry["result"]  # the customer table was never read
    tool_message = llm.calls[1]["messages"][-1]
    assert "not available" in tool_message.content and "김민수" not in tool_message.content


def test_a_no_call_turn_runs_no_tool_even_when_the_model_names_one(pack, insurance_catalog):
    agent, _ = _agent(pack, insurance_catalog, [("customer_search", {"name": "김민수"}), "안녕하세요."],
                      routed=["premium_estimate"], no_call=True)
    state = agent.ask("안녕하세요")
    assert state["tool_log"][0]["refused"] == "not_bound" and "customers" not in state["tool_log"][0]["result"]


def test_an_unknown_tool_name_is_refused_as_unknown(pack, insurance_catalog):
    agent, _ = _agent(pack, insurance_catalog, [("drop_database", {}), "네."], routed=["premium_estimate"])
    assert agent.ask("보험료 알려줘")["tool_log"][0]["refused"] == "unknown"


def test_the_bound_tools_and_the_gold_calls_of_a_run_still_run(pack, insurance_catalog):
    agent, _ = _agent(pack, insurance_catalog, [("customer_search", {"name": "김민수"}), "찾았습니다."],
                      routed=["premium_estimate"])
    state = agent.ask("김민수 고객 찾아줘", tools=["customer_search"])  # an oracle run binds exactly these
    assert "refused" not in state["tool_log"][0] and state["tool_log"][0]["result"]["count"] == 1
    agent, _ = _agent(pack, insurance_catalog, ["김민수 고객님 계약 2건입니다."], routed=["premium_estimate"])
    state = agent.ask("김민수 고객 찾아줘", gold_calls=[("customer_search", {"name": "김민수"})])
    assert "refused" not in state["tool_log"][0] and state["tool_log"][0]["status"] == "success"


# --- 2. one output policy for tool data -------------------------------------------------------------------

def test_tool_call_events_carry_no_raw_ids_names_or_personal_data(pack, insurance_catalog):
    agent, _ = _agent(pack, insurance_catalog, [("customer_search", {"age": 55, "sex": "여성"}),
                                                ("customer_contract_lookup", {"customer_id": "C0002"}), "확인했습니다."],
                      routed=["customer_search", "customer_contract_lookup"])
    frames = parse_sse("".join(stream_events(agent, "55세 여성 고객 계약 조회")))
    calls = [data for event, data in frames if event == "tool_call"]
    assert [c["tool_name"] for c in calls] == ["customer_search", "customer_contract_lookup"]
    raw = [entry for entry in agent.graph.get_state({"configurable": {"thread_id": frames[0][1]["thread_id"]}})
           .values["tool_log"]]
    assert raw[0]["result"]["customers"][0]["customer_id"] == "C0002"  # the model read the real id
    shown = str(calls)
    assert not RAW_ID.search(shown), RAW_ID.findall(shown)
    assert "윤지은" not in shown and "윤*은" in shown  # the person's name masked, in the record and the summary
    assert calls[1]["tool_args"]["customer_id"] == "C****"
    assert calls[0]["tool_output"]["count"] == 1 and calls[0]["tool_output"]["customers"][0]["age"] == 55


def test_the_policy_masks_every_string_and_keeps_the_structure(pack):
    entry = {"name": "customer_search", "args": {"name": "김민수"},
             "result": {"status": "ok", "customers": [{"customer_id": "C0001", "name": "김민수", "age": 52}],
                        "summary": "김민수(52세, C0001): 연락처 010-2841-7730, premium_estimate로 보험료 확인",
                        "products": [{"product_code": "B001-R01", "product_name": "첫날부터암보험"}]}}
    shown = guard_tool_call(entry, pack)
    assert shown["args"] == {"name": "김*수"}
    assert shown["result"]["customers"][0] == {"customer_id": "C****", "name": "김*수", "age": 52}
    summary = shown["result"]["summary"]
    assert "김민수" not in summary and "C0001" not in summary and "2841" not in summary and "premium_estimate" not in summary
    assert shown["result"]["products"][0] == {"product_code": "B***-***", "product_name": "첫날부터암보험"}
    assert entry["result"]["customers"][0]["customer_id"] == "C0001"  # the log itself is untouched


def test_masks_keep_the_shape_not_the_value():
    assert mask_id("C0002") == "C****" and mask_id("CT00001") == "C******" and mask_id("") == ""
    assert mask_name("김민수") == "김*수" and mask_name("이준") == "이*" and mask_name("남궁민수") == "남**수"
    assert guard_tool_data("text only", pack=load_pack("threat")) == ["text only"]


# --- 3. streams end honestly --------------------------------------------------------------------------------

def test_an_openai_reply_without_a_finish_reason_was_cut():
    assert reply_was_cut(AIMessage("반쯤 온 답", response_metadata={"model_provider": "openai"}))
    assert not reply_was_cut(AIMessage("끝난 답", response_metadata={"model_provider": "openai", "finish_reason": "stop"}))
    assert not reply_was_cut(AIMessage("긴 답", response_metadata={"model_provider": "openai", "finish_reason": "length"}))
    assert not reply_was_cut(AIMessage("test double"))  # not an OpenAI client: not judged


def test_a_cut_reply_is_a_failed_turn_and_nothing_of_it_is_kept(pack, insurance_catalog):
    cut = AIMessage("고객님 연락처는 010-2841-77", response_metadata={"model_provider": "openai"})
    agent, _ = _agent(pack, insurance_catalog, [lambda messages, tools: cut], routed=["premium_estimate"])
    state = agent.ask("보험료 알려줘")
    assert state["error"].startswith(LLMStreamCut.__name__) and state["answer"] == LLM_ERROR_ANSWER
    assert state["history"][-1][1] == ""  # nothing partial remembered
    agent, _ = _agent(pack, insurance_catalog, [lambda messages, tools: cut], routed=["premium_estimate"])
    frames = parse_sse("".join(stream_events(agent, "보험료 알려줘")))
    names = [event for event, _ in frames]
    assert names[-2:] == ["error", "done"] and frames[-1][1]["failed"] is True
    assert frames[-2][1]["kind"] == "stream_cut" and "2841" not in str(frames)


def test_the_error_a_client_sees_names_no_url_path_or_exception():
    detail = "APIConnectionError: Connection error. (LLM at http://10.0.0.5:8001/v1)"
    shown = public_error(detail)
    assert shown["kind"] == "llm" and "10.0.0.5" not in shown["error"] and "APIConnectionError" not in shown["error"]
    assert shown["error_id"] in shown["error"]
    shown = public_error("router: OSError: [Errno 2] No such file or directory: '/srv/toolroute/chroma'")
    assert shown["kind"] == "router" and "/srv" not in shown["error"] and "OSError" not in shown["error"]
    assert public_error(f"{LLMStreamCut.__name__}: cut (LLM at http://x)")["kind"] == "stream_cut"
    assert public_error("turn timed out after 300 s")["error"] == "turn timed out after 300 s"


@pytest.mark.parametrize("tail, secret", [
    ("고객님 연락처는 010-2841-77", "2841"),
    ("주민번호는 740809-152", "740809"),
    ("번호는 01028417", "01028417"),
    ("카드 1234 5678 9012", "9012"),
])
def test_a_partial_number_at_the_end_of_a_stream_is_masked(pack, tail, secret):
    assert secret not in mask_open_tail(tail, pack.mask_text)


@pytest.mark.parametrize("text", ["보험료는 월 17,950", "가입 연도는 2024", "총 3,000", "결과입니다.", "55세 여성 기준 20"])
def test_amounts_years_and_ordinary_endings_are_kept(pack, text):
    assert mask_open_tail(text, pack.mask_text) == text


def test_the_close_names_a_failed_search_suggests_are_masked(pack):
    result = pack.tool("customer_search").invoke({"name": "김민서"})
    assert result["status"] == "not_found" and "김민수" in result["candidates"]  # other customers' names
    shown = guard_tool_call({"name": "customer_search", "args": {"name": "김민서"}, "result": result}, pack, given="김민서 고객")
    assert "김민수" not in str(shown) and "김*수" in shown["result"]["candidates"]
    assert shown["args"] == {"name": "김민서"}  # the name the user typed stays


@pytest.mark.parametrize("written", ["김민수", "김 민수", "김\u200b민수", "김 민 수"])
def test_a_known_name_is_masked_however_it_is_spaced(written):
    from toolroute.agent.output_policy import mask_known

    assert mask_known(f"{written} 고객님 계약", {"김민수": "김*수"}) == "김*수 고객님 계약"

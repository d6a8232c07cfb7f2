"""The one agent graph every domain pack runs on (seed 002, section 6-1):

    START → input_guardrail → query_rewriter → route → agent ⇄ tools → output_guardrail → END

- input_guardrail: L1 rules and L2 domain similarity; a blocked turn goes straight to the output
  with a polite refusal (no tool search, no LLM call).
- query_rewriter: follow-ups completed with the conversation's context (rules, LLM only if needed).
- route: ranks the tools for the rewritten turn once (the top-k, or no call), before any LLM call.
- agent: binds only the routed tools (their when_not_to_use lines appended to the descriptions)
  and lets the LLM call tools or answer.
- tools: dispatch by name, sync and async tools alike, and only to the tools bound for this turn: a
  call of any other tool (one the router did not bind, or none at all) is not run; it becomes a tool
  error "not available in this turn" and the log records it (`refused`). An error becomes a tool
  message, never a crash. Every call is logged in order (step, name, args, result).
- per run, instead of the router: `tools` binds exactly the named tools (an oracle router, or every
  tool of the pack), and `gold_calls` runs the given calls as they are (no LLM picks them), then asks
  the LLM, with no tool bound, only for the answer from their results (the answer-writing ceiling).
- a hard cap `max_tool_steps` counted in the state: at the cap the model is asked once more; if it
  still wants tools, it gets a last call without tools and the state records `capped`. A call
  repeating an earlier call of the turn (same name and arguments) is not run again: the model
  answers instead and the state records the loop.
- output_guardrail: see `toolroute.agent.guardrails.guard_output`; a reply that ends in part of a
  number is masked as if more digits followed (`toolroute.agent.output_policy.mask_open_tail`). A reply
  the LLM's stream cut off (no finish reason) is a failed turn: an apology and the error, nothing of it kept.
- memory: a LangGraph checkpointer (SQLite by default), one thread per conversation.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import sqlite3
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from toolroute.agent.grounding import failed, given_text, succeeded, ungrounded
from toolroute.agent.guardrails import DomainGate, guard_output, l1_violation
from toolroute.agent.output_policy import mask_open_tail, mask_tool_values
from toolroute.agent.pack import DomainPack, merge_graphs
from toolroute.agent.rewriter import SHORT_TURN, rewrite
from toolroute.config import max_turn_chars
from toolroute.llm.tool_grammar import text_grammar, tool_call_grammar
from toolroute.routing import Router
from toolroute.routing.history import HistoryRouting, HistoryWeighting
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.memory import InMemorySaver

REFUSAL_INJECTION = "죄송합니다. 그 요청은 도와드릴 수 없습니다. 상담과 관련된 질문을 해 주시면 안내해 드리겠습니다."
REFUSAL_OFF_DOMAIN = "죄송합니다. 저는 {domain} 상담만 도와드릴 수 있습니다. 관련된 질문을 해 주세요."
REFUSAL_TOO_LONG = "죄송합니다. 메시지가 너무 깁니다. {limit:,}자 이내로 나누어 말씀해 주세요."
FINAL_INSTRUCTION = "위 도구 결과만 근거로 마지막 질문에 한국어로 간결하게 답하세요. 도구 결과에 없는 숫자는 말하지 마세요."
ROUTER_ERROR_ANSWER = "죄송합니다. 지금 도구 검색에 문제가 있어 답변할 수 없습니다. 잠시 후 다시 시도해 주세요."
LLM_ERROR_ANSWER = "죄송합니다. 지금 답변 엔진에 연결할 수 없습니다. 잠시 후 다시 시도해 주세요."
# Said once when the model's first reply is tool markup the server could not read (e.g. an empty
# <tools></tools>): the same prompt would give the same reply at temperature 0.
REPAIR_NOTE = ("도구를 쓰려면 <tool_call>{\"name\": \"도구이름\", \"arguments\": {...}}</tool_call> 형식으로만 호출하세요. "
               "도구가 필요 없으면 한국어로 바로 답하세요.")
FAILED_ANSWER = "죄송합니다. 지금은 답변을 정리하지 못했습니다. 질문을 조금 바꿔 다시 말씀해 주시겠어요?"
_MARKUP = re.compile(r"^\s*(<tool_call>|<tools>|```json|\{\s*\"name\"\s*:|\{\{)", re.IGNORECASE)
MAX_TOOL_RESULT_CHARS = 1500
# The served follow-up: the turn and the earlier user turns, without the last answer (on dialog_dev the
# answer's weight changes nothing: Hit@1 0.80 either way, MRR 0.8730 vs 0.8732); so every vector it
# mixes was already embedded by the input guardrail of its own turn and is remembered, and a turn costs
# one query embedding, the guardrail's.
AGENT_HISTORY = HistoryRouting("weighted", weighting=HistoryWeighting(assistant_weight=0.0))


class AgentState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    turn: int
    query: str
    rewritten: str
    rewrite_method: str
    context: dict[str, Any]
    history: list[tuple[str, str]]  # earlier (user, answer) pairs, for the rewriter and the prompt
    blocked: str | None  # None, "injection:<rule>" or "off_domain"
    domain_score: float | None
    routed: list[str]
    no_call: bool
    tool_steps: int
    capped: bool
    loops: int
    repaired: int  # first replies that were unreadable markup and were asked again
    tool_log: list[dict[str, Any]]
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    answer: str
    sources: list[dict[str, Any]]
    kg_data: dict[str, Any]  # seed 001: the nodes and edges the turn's tool results showed (`DomainPack.graph_of`)
    guard: dict[str, Any]
    error: str | None  # the LLM failed (timeout, server down): the turn ends with an apology


@dataclass
class AgentConfig:
    max_tool_steps: int = 3
    top_k: int = 5
    use_router: bool = True  # False: bind all the pack's tools (the "no routing" baseline)
    append_when_not_to_use: bool = True
    compact_schemas: bool = True  # see compact_schema; False binds LangChain's full schemas
    rewrite_with_llm: bool = True
    # Earlier (question, answer) pairs put in the prompt. 0 by default: the rewriter carries the
    # context instead, because the embedded 1.5B model copies earlier answers and stops calling tools.
    history_turns: int = 0
    # How a follow-up turn is routed: "weighted" mixes the turn's query vector with the earlier user
    # turns' (`routing.history`); "carry" routes the rewritten turn (the context appended); "none" the
    # turn alone. On dialog_dev (results/dialog_weighting_grid.csv) weighted reached Hit@1 0.80,
    # the turn alone 0.70 and the carried turn 0.66.
    history_routing: str = "weighted"
    # Sample the LLM's reply under a grammar (`toolroute.llm.tool_grammar`, sent as the request's `grammar`
    # field, which llama.cpp's servers read): text, or calls of the bound tools with schema-valid arguments;
    # text only when no tool is bound. For the embedded model (or any llama.cpp server); off by default.
    constrained_calls: bool = False
    tool_result_format: str = "json"  # how tool results reach the LLM: see `result_for_llm` (RESULT_FORMATS)
    # A call that failed runs once more without the optional arguments nobody gave
    # (`toolroute.agent.grounding`: a small model's invented ids, ages, filters); the retry is kept
    # only when it succeeds. Off by default (not adopted on the dev tasks).
    retry_ungrounded: bool = False

    def __post_init__(self) -> None:
        if self.history_routing not in ("weighted", "carry", "none"):
            raise ValueError(f"history_routing must be 'weighted', 'carry' or 'none', got '{self.history_routing}'")
        if self.tool_result_format not in RESULT_FORMATS:
            raise ValueError(f"tool_result_format: {self.tool_result_format!r} is not one of {RESULT_FORMATS}")

    @property
    def recursion_limit(self) -> int:
        return recursion_limit(self.max_tool_steps)


def changed_options(**options: Any) -> dict[str, Any]:
    """The given `AgentConfig` fields whose values differ from the defaults (an unknown field or a bad
    value is an error): what tells a run's agent apart, e.g. in a checkpoint tag."""
    AgentConfig(**options)
    default = AgentConfig()
    return {k: v for k, v in options.items() if getattr(default, k) != v}


def recursion_limit(max_tool_steps: int) -> int:
    """LangGraph's own bound, above what the tool-step cap allows (the cap is the real limit)."""
    return 2 * max_tool_steps + 12


RESULT_FORMATS = ("json", "lines")


def result_for_llm(result: Any, limit: int = MAX_TOOL_RESULT_CHARS, style: str = "json", labels: dict[str, str] | None = None) -> str:
    """A tool result as the model reads it: the one-line summary (or the question to ask) first.

    A 1.5B model misreads long JSON (a sum insured taken for a premium); tools give a Korean
    `summary`, so it leads, followed by the rest: as JSON (`style` "json"), or as short `key: value`
    lines (`style` "lines", `result_lines`: keys in the pack's words from `labels`, internal ids left
    out); cut at `limit` characters.
    """
    if not isinstance(result, dict):
        text = str(result)
    elif style == "lines":
        text = result_lines(result, labels or {})
    else:
        head = result.get("summary") or result.get("ask") or result.get("reason")
        rest = {k: v for k, v in result.items() if k != "summary"}
        body = json.dumps(rest, ensure_ascii=False, default=str)
        text = f"{head}\n{body}" if head else body
    return text if len(text) <= limit else text[:limit] + " …(생략)"


def _internal_key(key: str) -> bool:
    """Ids and codes the answer must not show (the output guardrail strips them anyway)."""
    return key in ("id", "code") or key.endswith(("_id", "_code"))


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "예" if value else "아니오"
    return str(value)


def _pairs(item: dict, labels: dict[str, str]) -> str:
    """A dict on one line: `label value` pairs (a `<key>_text` twin replaces its raw number)."""
    parts = []
    for key, value in item.items():
        if _internal_key(key) or value in (None, "", [], {}) or f"{key}_text" in item:
            continue
        label = labels.get(key.removesuffix("_text"), key.removesuffix("_text"))
        if isinstance(value, dict):
            parts.append(f"{label} ({_pairs(value, labels)})")
        elif isinstance(value, list):
            parts.append(f"{label} [" + "; ".join(_pairs(v, labels) if isinstance(v, dict) else _scalar(v) for v in value) + "]")
        else:
            parts.append(f"{label} {_scalar(value)}")
    return ", ".join(parts)


def result_lines(result: dict, labels: dict[str, str]) -> str:
    """A tool result as compact lines: the summary (or question, or reason) first, then one `label: value`
    line per field; a list of records gives one `- ` line per record (its own summary when it has one);
    a number with a `<key>_text` twin is shown as the text ("28,650원"); ids, codes, nulls and
    `status: ok` are left out."""
    head_key = next((k for k in ("summary", "ask", "reason") if result.get(k)), None)
    lines = [str(result[head_key])] if head_key else []
    for key, value in result.items():
        if key in ("summary", head_key) or _internal_key(key) or value in (None, "", [], {}) or f"{key}_text" in result:
            continue
        if key == "status" and value == "ok":
            continue
        label = labels.get(key.removesuffix("_text"), key.removesuffix("_text"))
        if isinstance(value, list) and any(isinstance(v, dict) for v in value):
            lines.append(f"{label}:")
            lines += [f"- {v['summary']}" if isinstance(v, dict) and v.get("summary")
                      else f"- {_pairs(v, labels) if isinstance(v, dict) else _scalar(v)}" for v in value]
        elif isinstance(value, list):
            lines.append(f"{label}: " + ", ".join(_scalar(v) for v in value))
        elif isinstance(value, dict):
            lines.append(f"{label}: {_pairs(value, labels)}")
        else:
            lines.append(f"{label}: {_scalar(value)}")
    return "\n".join(lines)


def looks_like_markup(text: str) -> bool:
    """A 'final answer' that is really a tool call or template markup (small models do this)."""
    return not text.strip() or bool(_MARKUP.match(text)) or "</tool_call>" in text or "<tools>" in text


def _first_sentence(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    for end in (". ", "다. ", "요. "):
        index = text.find(end)
        if 0 < index < limit:
            return text[: index + len(end)].strip()
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def compact_schema(schema: dict, description_chars: int = 160, field_chars: int = 60) -> dict:
    """A smaller OpenAI tool schema for a small model: one-line descriptions, `anyOf [T, null]` as T.

    Every token of a bound schema is paid on each LLM call; the embedded 1.5B model reads ~80
    prompt tokens/s, so the 5 bound schemas dominate the prompt. What is kept: names, types, enums,
    required fields and short Korean descriptions.
    """
    function = dict(schema["function"])
    function["description"] = _first_sentence(function.get("description", ""), description_chars)
    params = json.loads(json.dumps(function.get("parameters", {})))
    for name, prop in list(params.get("properties", {}).items()):
        options = [o for o in prop.pop("anyOf", []) if o.get("type") != "null"]
        if len(options) == 1:
            prop.update(options[0])
        elif options:
            prop["anyOf"] = options
        prop.pop("default", None)
        prop.pop("title", None)
        if "description" in prop:
            # A small model copies examples into arguments ("예: 첫날부터암보험" becomes the product).
            described = re.sub(r"\s*\((?:예|예시|e\.g\.)[:.]?[^)]*\)", "", prop["description"])
            described = re.sub(r"\s*(?:예|예시)\s*[:：].*$", "", described)
            prop["description"] = _first_sentence(described, field_chars)
        params["properties"][name] = prop
    params.pop("title", None)
    params.pop("description", None)
    function["parameters"] = params
    return {"type": "function", "function": function}


def _usage(message: Any) -> tuple[int, int]:
    usage = getattr(message, "usage_metadata", None) or {}
    return int(usage.get("input_tokens", 0) or 0), int(usage.get("output_tokens", 0) or 0)


def _run_coroutine(coro: Any) -> Any:
    """Run an async tool from sync code, also when an event loop is already running (notebooks)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


_EMBED_AHEAD = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="embed-ahead")


@dataclass
class Agent:
    """A compiled graph for one pack, with the router, LLM and checkpointer it was built from."""

    pack: DomainPack
    llm: Any
    router: Router | None = None
    gate: DomainGate | None = None
    config: AgentConfig = field(default_factory=AgentConfig)
    checkpointer: Any = None
    graph: Any = None
    _schemas: dict[str, dict] = field(default_factory=dict)
    _grammars: dict[tuple[str, ...], str] = field(default_factory=dict)  # per bound tool list (constrained_calls)
    _ahead: dict[str, concurrent.futures.Future] = field(default_factory=dict)  # route texts being embedded

    # --- tool schemas ------------------------------------------------------------------------------

    def schema(self, name: str) -> dict:
        """The OpenAI tool schema bound for `name`: its description plus the card's when_not_to_use."""
        if name not in self._schemas:
            tool = self.pack.tool(name)
            schema = convert_to_openai_tool(tool)
            if self.config.compact_schemas:
                schema = compact_schema(schema)
            if self.config.append_when_not_to_use and self.router is not None:
                card = self.router.catalog.cards.get(name)
                if card is not None and card.when_not_to_use:
                    extra = " ".join(card.when_not_to_use)
                    schema["function"]["description"] = f"{schema['function']['description'].strip()} (쓰지 말 때: {extra})"
            self._schemas[name] = schema
        return self._schemas[name]

    # --- nodes ---------------------------------------------------------------------------------------

    def input_guardrail(self, state: AgentState) -> dict:
        last = state["messages"][-1]
        text = last.content if isinstance(last.content, str) else str(last.content)
        reset = {"query": text, "turn": state.get("turn", 0) + 1, "tool_steps": 0, "capped": False, "loops": 0, "repaired": 0,
                 "tool_log": [], "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "routed": [],
                 "no_call": False, "sources": [], "kg_data": {}, "blocked": None, "domain_score": None, "rewritten": text,
                 "rewrite_method": "none", "guard": {}, "error": None}
        if len(text) > max_turn_chars():  # refused before any rule, embedding or LLM reads it
            return {**reset, "query": text[:200], "rewritten": "", "blocked": "too_long"}
        rule = l1_violation(text)
        if rule:
            return {**reset, "blocked": f"injection:{rule}"}
        if self.gate is not None:
            self._embed_ahead(state, text)
            layer, score = self.gate.check(text)  # L2 (off the domain), then L3 (the injection classifier)
            reset["domain_score"] = score
            followup = state.get("history") and len("".join(text.split())) <= SHORT_TURN
            if layer and not followup:
                return {**reset, "blocked": "off_domain" if layer == "off_domain" else f"injection:{layer}"}
        return reset

    def _embed_ahead(self, state: AgentState, text: str) -> None:
        """Start embedding the turn as the router will read it (the rule-based rewrite: the turn plus
        the context it does not restate) while the gate embeds it as the user wrote it. The two
        embeddings are most of the time before the route event; side by side they use both cores.
        The vector lands in the embedder's memory of recent queries, where the router finds it. (A turn
        the rules leave as it is may still be rewritten by the LLM: that one is not embedded ahead.)"""
        embedder = getattr(self.router, "embedder", None) if self.config.use_router else None
        if embedder is None or self.config.history_routing != "carry":
            return  # the other arms route the turn as written: the gate's vector is the router's
        try:
            routed = rewrite(text, state.get("context", {}), self.pack, state.get("history", []), None).text
        except Exception:  # noqa: BLE001 - only a head start: the rewriter node reports its own errors
            return
        if routed == text or routed in self._ahead:
            return
        while len(self._ahead) >= 64:  # turns that never reached the router (blocked, failed)
            self._ahead.pop(next(iter(self._ahead)), None)
        self._ahead[routed] = _EMBED_AHEAD.submit(embedder.embed_queries, [routed])

    def query_rewriter(self, state: AgentState) -> dict:
        llm = self.llm if self.config.rewrite_with_llm else None
        try:
            result = rewrite(state["query"], state.get("context", {}), self.pack, state.get("history", []), llm)
        except Exception:  # noqa: BLE001 - the LLM rewrite is optional: fall back to the rules
            result = rewrite(state["query"], state.get("context", {}), self.pack, state.get("history", []), None)
        update: dict[str, Any] = {"rewritten": result.text, "rewrite_method": result.method, "context": result.context}
        if result.method == "llm":
            update["llm_calls"] = state.get("llm_calls", 0) + 1
        return update

    def _knob(self, config: RunnableConfig | None, name: str) -> int:
        """`max_tool_steps` / `top_k` of this run: given per call in `configurable`, else the agent's default."""
        value = ((config or {}).get("configurable") or {}).get(name)
        return int(value) if value is not None else getattr(self.config, name)

    @staticmethod
    def _run_option(config: RunnableConfig | None, name: str) -> Any:
        """`bound_tools` / `gold_calls` of this run (None: not given, the router decides)."""
        return ((config or {}).get("configurable") or {}).get(name)

    def _route(self, state: AgentState, top_k: int) -> tuple[list[str], bool]:
        if not self.config.use_router or self.router is None:
            return self.pack.tool_names, False
        arm, history = self.config.history_routing, state.get("history") or []
        if arm == "weighted" and history:
            turns = [{"role": "user", "content": user} for user, _ in history]
            result = AGENT_HISTORY.route(self.router, state["query"], turns)
        else:
            ahead = self._ahead.pop(state["rewritten"], None)
            if ahead is not None:
                concurrent.futures.wait([ahead], timeout=30)  # its vector is then remembered: no second embedding
            result = self.router.route(state["query"] if arm == "none" else state["rewritten"])
        names = [n for n in result.top(top_k) if self.pack.tool(n) is not None]
        return names, bool(result.no_call)

    def _prompt(self, state: AgentState, note: str | None = None) -> list[AnyMessage]:
        """System prompt, the last few turns (question + answer only), then this turn's messages."""
        messages: list[AnyMessage] = [SystemMessage(self.pack.system_prompt + (f"\n{note}" if note else ""))]
        for user, answer in (state.get("history", [])[-self.config.history_turns:] if self.config.history_turns else []):
            if answer.strip():  # an empty answer in the history makes the small model emit markup
                messages += [HumanMessage(user), AIMessage(answer)]
        turn_messages = state["messages"][self._turn_start(state):]
        for message in turn_messages:
            if isinstance(message, HumanMessage) and message is turn_messages[0]:
                messages.append(HumanMessage(state.get("rewritten") or message.content))
            else:
                messages.append(message)
        return messages

    @staticmethod
    def _turn_start(state: AgentState) -> int:
        messages = state["messages"]
        for index in range(len(messages) - 1, -1, -1):
            if isinstance(messages[index], HumanMessage):
                return index
        return 0

    def _final_prompt(self, state: AgentState) -> list[AnyMessage]:
        """For the answer without tools: this turn's tool results as plain text, not as tool messages.

        Shown as tool-call/tool-response turns with no tools bound, the small model continues the
        pattern and writes a tool call as its 'answer'; plain text makes it answer.
        """
        messages = self._prompt(state)[: -len(state["messages"][self._turn_start(state):])]
        lines = []
        for entry in state.get("tool_log", []):
            result = self._result_text(entry["result"])
            lines.append(f"- {entry['name']}({json.dumps(entry['args'], ensure_ascii=False)}): {result}")
        question = state.get("rewritten") or state.get("query", "")
        body = f"{question}\n\n[도구 결과]\n" + "\n".join(lines) + f"\n\n{FINAL_INSTRUCTION}" if lines else question
        return messages + [HumanMessage(body)]

    def _result_text(self, result: Any) -> str:
        return result_for_llm(result, MAX_TOOL_RESULT_CHARS, self.config.tool_result_format, self.pack.result_labels)

    def request_options(self, tools: list[str]) -> dict[str, Any]:
        """What this agent adds to an LLM request with `tools` bound: with `constrained_calls`, the
        grammar of the reply (`extra_body={"grammar": …}`); else nothing."""
        if not self.config.constrained_calls:
            return {}
        key = tuple(tools)
        if key not in self._grammars:
            start = self.pack.answer_start or None
            self._grammars[key] = (tool_call_grammar([self.schema(n) for n in tools], text_start=start) if tools
                                   else text_grammar(start))
        return {"extra_body": {"grammar": self._grammars[key]}}

    def _call(self, state: AgentState, tools: list[str], final: bool = False,
              note: str | None = None) -> tuple[AIMessage, dict]:
        options = self.request_options(tools)
        if tools:
            llm = self.llm.bind_tools([self.schema(n) for n in tools], **options)
        else:
            llm = self.llm.bind(**options) if options else self.llm
        reply = llm.invoke(self._final_prompt(state) if final else self._prompt(state, note))
        if reply_was_cut(reply):
            raise LLMStreamCut("the reply ended without a finish reason (the LLM server stopped or the connection was cut)")
        prompt_tokens, completion_tokens = _usage(reply)
        counters = {"llm_calls": state.get("llm_calls", 0) + 1,
                    "prompt_tokens": state.get("prompt_tokens", 0) + prompt_tokens,
                    "completion_tokens": state.get("completion_tokens", 0) + completion_tokens}
        return reply, counters

    def agent(self, state: AgentState, config: RunnableConfig) -> dict:
        """The LLM's turn; a failed call (timeout, dead server, a reply cut off) ends the turn with an
        apology and the error, never with part of a reply."""
        try:
            return self._agent(state, config)
        except Exception as exc:  # noqa: BLE001 - a timeout or a dead server ends the turn, not the process
            endpoint = getattr(self.llm, "openai_api_base", None) or type(self.llm).__name__
            return {"messages": [AIMessage(LLM_ERROR_ANSWER)], "error": f"{type(exc).__name__}: {exc} (LLM at {endpoint})"}

    def route(self, state: AgentState, config: RunnableConfig) -> dict:
        """Route the rewritten turn once, before any LLM call: what a stream reports first."""
        if self._run_option(config, "gold_calls") is not None:
            return {"routed": [], "no_call": True}  # the calls are given: nothing is bound, nothing routed
        bound = self._run_option(config, "bound_tools")
        if bound is not None:
            return {"routed": list(bound), "no_call": False}  # this run binds exactly these (no routing)
        try:
            routed, no_call = self._route(state, self._knob(config, "top_k"))
        except Exception as exc:  # noqa: BLE001 - a dead Chroma server ends the turn, not the process
            return {"messages": [AIMessage(ROUTER_ERROR_ANSWER)], "error": f"router: {type(exc).__name__}: {exc}"}
        return {"routed": routed, "no_call": no_call}

    def _agent(self, state: AgentState, config: RunnableConfig | None = None) -> dict:
        gold = self._run_option(config, "gold_calls")
        if gold is not None:
            return self._gold_replay(state, list(gold))
        update: dict[str, Any] = {}
        tools = [] if state.get("no_call") else list(state.get("routed") or [])
        reply, counters = self._call({**state, **update}, tools)
        update.update(counters)
        calls = list(getattr(reply, "tool_calls", []) or [])
        if not calls and tools and not state.get("tool_log") and looks_like_markup(str(reply.content)):
            # unreadable tool markup instead of a call or an answer: ask once more, saying the format
            reply, more = self._call({**state, **update}, tools, note=REPAIR_NOTE)
            update.update(more)
            update["repaired"] = state.get("repaired", 0) + 1
            calls = list(getattr(reply, "tool_calls", []) or [])
        if not calls and state.get("tool_log") and looks_like_markup(str(reply.content)):
            # tools were used but the reply is markup, not an answer: ask once more without tools
            reply, more = self._call({**state, **update}, [], final=True)
            update.update(more)
            return {**update, "messages": [reply]}
        if calls:
            done = {(c["name"], json.dumps(args, sort_keys=True, ensure_ascii=False)) for c in state.get("tool_log", [])
                    for args in (c["args"], {**c["args"], **c.get("dropped_args", {})})}  # as run, and as the model wrote it
            repeated = any((c["name"], json.dumps(c["args"], sort_keys=True, ensure_ascii=False)) in done for c in calls)
            at_cap = state.get("tool_steps", 0) >= self._knob(config, "max_tool_steps")
            if repeated or at_cap:
                final, more = self._call({**state, **update}, [], final=True)
                update.update(more)
                update["loops" if repeated else "capped"] = (state.get("loops", 0) + 1) if repeated else True
                return {**update, "messages": [final]}
        return {**update, "messages": [reply]}

    def _gold_replay(self, state: AgentState, gold: list[dict[str, Any]]) -> dict:
        """The answer-writing ceiling: first the given calls as one reply (no LLM), which the tools node
        runs for real; then one LLM call with no tool bound, on the final prompt (the results as text)."""
        if gold and not state.get("tool_log") and not state.get("tool_steps"):
            calls = [{"name": c["name"], "args": dict(c.get("args") or {}), "id": f"gold{i}", "type": "tool_call"}
                     for i, c in enumerate(gold)]
            return {"messages": [AIMessage("", tool_calls=calls)]}
        reply, counters = self._call(state, [], final=True)
        return {**counters, "messages": [AIMessage(str(reply.content), id=getattr(reply, "id", None))]}

    def tools(self, state: AgentState, config: RunnableConfig) -> dict:
        max_tool_steps = self._knob(config, "max_tool_steps")
        last = state["messages"][-1]
        steps = state.get("tool_steps", 0)
        log = list(state.get("tool_log", []))
        sources = list(state.get("sources", []))
        kg_data = state.get("kg_data") or {}
        messages = []
        capped = state.get("capped", False)
        for call in last.tool_calls:
            if steps >= max_tool_steps:  # more calls in one reply than steps left
                capped = True
                messages.append(ToolMessage(json.dumps({"status": "skipped", "reason": "tool step limit"}, ensure_ascii=False),
                                            tool_call_id=call["id"], name=call["name"], status="error"))
                continue
            steps += 1
            started = time.perf_counter()
            allowed = self.allowed_tools(state, config)
            tool = self.pack.tool(call["name"]) if call["name"] in allowed else None
            refused = None
            if tool is None:
                # only the tools bound for this turn run: a model that names any other (a tool of the pack
                # the router did not bind, or no tool at all) gets an error it can read, and the log says so
                refused = "not_bound" if self.pack.tool(call["name"]) is not None else "unknown"
                reason = "is not available in this turn" if refused == "not_bound" else "is an unknown tool"
                result: Any = {"status": "error", "error": f"{call['name']!r} {reason}", "available": sorted(allowed)}
                status = "error"
            else:
                result, status = _invoke(tool, call["args"])
            args, dropped = call["args"], {}
            if tool is not None and self.config.retry_ungrounded and failed(result):
                args, result, status, dropped = self._retry_ungrounded(state, log, call, tool, result, status)
            messages.append(ToolMessage(self._result_text(result), tool_call_id=call["id"], name=call["name"], status=status))
            log.append({"step": steps, "name": call["name"], "args": args, "result": result, "status": status,
                        "seconds": round(time.perf_counter() - started, 4), **({"dropped_args": dropped} if dropped else {}),
                        **({"refused": refused} if refused else {})})
            sources += self.pack.sources_of(call["name"], result)
            kg_data = merge_graphs(kg_data, self.pack.graph_of(call["name"], result))
        return {"messages": messages, "tool_steps": steps, "tool_log": log, "sources": sources, "kg_data": kg_data,
                "capped": capped}

    def allowed_tools(self, state: AgentState, config: RunnableConfig | None) -> set[str]:
        """The tools a call may run in this turn: the ones bound to the LLM (the routed tools, none on a
        no-call turn), or this run's gold calls (the answer-writing ceiling binds none but runs those)."""
        gold = self._run_option(config, "gold_calls")
        if gold is not None:
            return {c["name"] for c in gold}
        return set() if state.get("no_call") else set(state.get("routed") or [])

    def _retry_ungrounded(self, state: AgentState, log: list[dict], call: dict, tool: Any, result: Any,
                          status: str) -> tuple[dict, Any, str, dict]:
        """The failed call once more without its optional arguments nobody gave (`toolroute.agent.grounding`),
        when any argument is left: (args, result, status, dropped) of the retry when it succeeds, else of
        the call as it ran. The turn's `seconds` include the retry."""
        users = [user for user, _ in state.get("history", [])] + [state.get("query", ""), state.get("rewritten", "")]
        names = ungrounded(call["args"], self.schema(call["name"]), given_text(users, [e["result"] for e in log]))
        kept = {k: v for k, v in call["args"].items() if k not in names}
        if names and kept:
            retry, retry_status = _invoke(tool, kept)
            if retry_status == "success" and succeeded(retry):
                return kept, retry, retry_status, {k: call["args"][k] for k in names}
        return call["args"], result, status, {}

    def output_guardrail(self, state: AgentState) -> dict:
        if state.get("blocked"):
            text = (REFUSAL_INJECTION if state["blocked"].startswith("injection")
                    else REFUSAL_TOO_LONG.format(limit=max_turn_chars()) if state["blocked"] == "too_long"
                    else REFUSAL_OFF_DOMAIN.format(domain=self.pack.label))
            message = AIMessage(text, id=str(uuid.uuid4()))
            history = list(state.get("history", [])) + [(state["query"], text)]
            return {"messages": [message], "answer": text, "history": history, "guard": {"blocked": state["blocked"]}}
        last = state["messages"][-1]
        raw = last.content if isinstance(last.content, str) else str(last.content)
        if state.get("error"):
            history = list(state.get("history", [])) + [(state["query"], "")]
            return {"answer": raw, "history": history, "guard": {"llm_error": state["error"]}}
        failed = looks_like_markup(raw)
        if not failed:
            given = f"{state.get('query', '')} {state.get('rewritten', '')}"
            raw = mask_open_tail(mask_tool_values(raw, state.get("tool_log", []), self.pack, given), self.pack.mask_text)
        guarded = guard_output(FAILED_ANSWER if failed else raw, self.pack,
                               with_disclaimer=bool(state.get("tool_log")) and not failed)
        replaced = AIMessage(guarded.text, id=last.id) if isinstance(last, AIMessage) else AIMessage(guarded.text)
        # a failed answer is not remembered: the next turn's prompt would copy it
        history = list(state.get("history", [])) + [(state["query"], "" if failed else guarded.text)]
        return {"messages": [replaced], "answer": guarded.text, "history": history,
                "guard": {"removed": guarded.removed, "banned": [b.get("id") for b in guarded.banned],
                          "disclaimer_added": guarded.disclaimer_added, "answer_failed": failed}}

    # --- edges ---------------------------------------------------------------------------------------

    @staticmethod
    def after_input(state: AgentState) -> str:
        return "output_guardrail" if state.get("blocked") else "query_rewriter"

    @staticmethod
    def after_route(state: AgentState) -> str:
        return "output_guardrail" if state.get("error") else "agent"

    @staticmethod
    def after_agent(state: AgentState) -> str:
        last = state["messages"][-1]
        return "tools" if getattr(last, "tool_calls", None) else "output_guardrail"

    # --- building and running ---------------------------------------------------------------------------

    def compile(self) -> "Agent":
        builder = StateGraph(AgentState)
        builder.add_node("input_guardrail", self.input_guardrail)
        builder.add_node("query_rewriter", self.query_rewriter)
        builder.add_node("route", self.route)
        builder.add_node("agent", self.agent)
        builder.add_node("tools", self.tools)
        builder.add_node("output_guardrail", self.output_guardrail)
        builder.add_edge(START, "input_guardrail")
        builder.add_conditional_edges("input_guardrail", self.after_input, ["query_rewriter", "output_guardrail"])
        builder.add_edge("query_rewriter", "route")
        builder.add_conditional_edges("route", self.after_route, ["agent", "output_guardrail"])
        builder.add_conditional_edges("agent", self.after_agent, ["tools", "output_guardrail"])
        builder.add_edge("tools", "agent")
        builder.add_edge("output_guardrail", END)
        self.graph = builder.compile(checkpointer=self.checkpointer)
        return self

    def run_config(self, thread_id: str, max_tool_steps: int | None = None, top_k: int | None = None,
                   tools: Any = None, gold_calls: Any = None) -> dict:
        """LangGraph's run config: the thread, and this run's knobs (the agent's defaults when None).
        `tools` / `gold_calls` (see `ask`) are put in only when given; gold calls are never cut by the cap."""
        steps = self.config.max_tool_steps if max_tool_steps is None else max_tool_steps
        knobs: dict[str, Any] = {"max_tool_steps": steps, "top_k": self.config.top_k if top_k is None else top_k}
        if tools is not None:
            names = list(dict.fromkeys(tools))
            unknown = [n for n in names if self.pack.tool(n) is None]
            if unknown:
                raise ValueError(f"tools: {unknown} are not tools of the {self.pack.name} pack")
            knobs["bound_tools"] = names
        if gold_calls is not None:
            calls = [{"name": c[0], "args": dict(c[1] or {})} if isinstance(c, (tuple, list)) else
                     {"name": c["name"], "args": dict(c.get("args") or {})} for c in gold_calls]
            knobs["gold_calls"] = calls
            knobs["max_tool_steps"] = steps = max(steps, len(calls))
        return {"configurable": {"thread_id": thread_id, **knobs}, "recursion_limit": recursion_limit(steps)}

    def ask(self, question: str, thread_id: str | None = None, max_tool_steps: int | None = None,
            top_k: int | None = None, tools: Any = None, gold_calls: Any = None) -> AgentState:
        """One turn of a conversation (a new thread when `thread_id` is None); the final state.
        `max_tool_steps` and `top_k` apply to this turn only (never to other callers of the agent).

        Also for this turn only, in place of the router: `tools` (tool names) binds exactly those tools
        (an oracle router: the task's gold tools; or every tool of the pack); `gold_calls` ((name, args)
        pairs or {"name", "args"} dicts) runs those calls with the real tools, then asks the LLM, with
        no tool bound, only for the answer (the answer-writing ceiling; the cap is raised to fit them)."""
        thread_id = thread_id or uuid.uuid4().hex
        started = time.perf_counter()
        state = self.graph.invoke({"messages": [HumanMessage(question)]},
                                  self.run_config(thread_id, max_tool_steps, top_k, tools, gold_calls))
        state = dict(state)
        state["thread_id"] = thread_id
        state["seconds"] = round(time.perf_counter() - started, 3)
        return state


    def first_call(self, question: str, tools: list[str] | None = None, top_k: int | None = None) -> dict[str, Any]:
        """The model's choice alone: the first prompt of a fresh one-turn conversation (the system prompt,
        the question, the bound tools' schemas as `ask` would bind them) sent once, and the tool its reply
        calls first; no tool runs and no answer is written. `tools` binds those tools, else the router's
        top-k (none when it decides no call). What `when_not_to_use` in the descriptions acts on, with
        one LLM call instead of a turn's several. Returns bound, first_call ("" for none), prompt_tokens, seconds, error."""
        started = time.perf_counter()
        state: dict[str, Any] = {"messages": [HumanMessage(question)], "rewritten": question, "query": question,
                                 "llm_calls": 0}
        if tools is None:
            bound, no_call = self._route(state, top_k or self.config.top_k)
            bound = [] if no_call else bound
        else:
            bound = [n for n in tools if self.pack.tool(n) is not None]
        out = {"bound": list(bound), "first_call": "", "prompt_tokens": 0, "error": ""}
        try:
            reply, counters = self._call(state, list(bound))
            calls = getattr(reply, "tool_calls", None) or []
            out["first_call"] = calls[0]["name"] if calls else ""
            out["prompt_tokens"] = counters["prompt_tokens"]
        except Exception as error:  # a dead or slow server: the row says so and the run goes on
            out["error"] = f"{type(error).__name__}: {error}"
        out["seconds"] = round(time.perf_counter() - started, 3)
        return out


class LLMStreamCut(RuntimeError):
    """The LLM's streamed reply ended without a finish reason: its server died or the connection was
    cut mid-reply, and what arrived is part of an answer, not an answer."""


def reply_was_cut(reply: Any) -> bool:
    """An OpenAI-compatible reply (langchain-openai marks each with `model_provider`) with no finish
    reason: a stream that ended before its last chunk. A complete reply always has one ("stop",
    "tool_calls", "length" …); models that are not OpenAI clients (test doubles) are not judged."""
    metadata = getattr(reply, "response_metadata", None) or {}
    return metadata.get("model_provider") == "openai" and not metadata.get("finish_reason")


def _invoke(tool: Any, args: dict[str, Any]) -> tuple[Any, str]:
    """A tool's result and the ToolMessage status; any failure becomes a result the model reads."""
    try:
        if getattr(tool, "func", None) is None and getattr(tool, "coroutine", None) is not None:
            return _run_coroutine(tool.ainvoke(args)), "success"
        return tool.invoke(args), "success"
    except Exception as exc:  # noqa: BLE001 - any tool failure becomes a message to the model
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}"}, "error"


def sqlite_checkpointer(path: str | Path):
    """A SQLite checkpointer for multi-turn memory (one thread per conversation).

    Write-ahead log with `synchronous=NORMAL`: a commit no longer waits for the disk (a power cut may
    lose the last turns, a crashed process loses nothing), and readers do not wait for the writer."""

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(str(path), check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return SqliteSaver(connection)


def build_agent(pack: DomainPack, llm: Any, router: Router | None = None, gate: DomainGate | None = None,
                config: AgentConfig | None = None, checkpointer: Any = None) -> Agent:
    """The compiled graph for `pack`. Without a checkpointer, memory lives in this process only."""
    if checkpointer is None:
        checkpointer = InMemorySaver()
    return Agent(pack, llm, router, gate, config or AgentConfig(), checkpointer).compile()

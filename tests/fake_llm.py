"""A scripted chat model for graph tests: returns the queued replies in order and records each call."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ScriptedLLM(BaseChatModel):
    replies: list[Any] = []
    calls: list[dict] = []
    bound: list[list[str]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools, **kwargs):
        names = [t["function"]["name"] if isinstance(t, dict) else t.name for t in tools]
        return _Bound(self, names)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        return self._reply(messages, [])

    def _reply(self, messages, tools):
        self.calls.append({"messages": messages, "tools": tools})
        item = self.replies.pop(0) if self.replies else "네, 안내해 드리겠습니다."
        if isinstance(item, Exception):
            raise item
        if callable(item):
            item = item(messages, tools)
        if isinstance(item, AIMessage):
            message = item
        elif isinstance(item, str):
            message = AIMessage(item, usage_metadata={"input_tokens": 100, "output_tokens": 10, "total_tokens": 110})
        else:
            name, args = item
            message = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"c{len(self.calls)}", "type": "tool_call"}],
                                usage_metadata={"input_tokens": 120, "output_tokens": 20, "total_tokens": 140})
        return ChatResult(generations=[ChatGeneration(message=message)])


class _Bound:
    def __init__(self, llm: ScriptedLLM, names: list[str]):
        self.llm, self.names = llm, names
        llm.bound.append(names)

    def invoke(self, messages, **kwargs):
        return self.llm._reply(messages, self.names).generations[0].message

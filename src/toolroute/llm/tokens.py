"""Prompt token counts with the embedded model's own tokenizer and chat template (from the GGUF).

Used to measure what binding tools costs: the same turn rendered with the routed top-k tool schemas
vs with every tool of the domain. The server reports the same counts in each response's `usage`;
this module counts without running the model (vocab-only load, ~1 s).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from toolroute.llm.qwen_tools import normalize_messages
from toolroute.llm.gguf import ensure_model


@lru_cache(maxsize=2)
def _vocab(model_path: str) -> Any:
    from llama_cpp import Llama  # heavy: the tokenizer loads with the model, only when counting

    return Llama(model_path=model_path, vocab_only=True, verbose=False)


class PromptCounter:
    """Counts the tokens of a chat prompt exactly as the local server would build it."""

    def __init__(self, model_path: str | Path | None = None):
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter  # heavy: the tokenizer loads with the model, only when counting

        if model_path is None:
            model_path = ensure_model()
        self.llama = _vocab(str(model_path))
        template = self.llama.metadata["tokenizer.chat_template"]
        self.formatter = Jinja2ChatFormatter(template=template, eos_token="<|im_end|>", bos_token="")

    def render(self, messages: list[dict[str, Any]], tools: list[dict] | None = None) -> str:
        return self.formatter(messages=normalize_messages(messages), tools=tools or None).prompt

    def count(self, messages: list[dict[str, Any]], tools: list[dict] | None = None) -> int:
        text = self.render(messages, tools)
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def count_text(self, text: str) -> int:
        return len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

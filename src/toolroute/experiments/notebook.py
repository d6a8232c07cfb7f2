"""What every notebook does before its first call: set-up and, for the notebooks that run an LLM, the model.

    out = setup_notebook(declared.STEP_LIMITS, output_dir)
    model = select_llm(llm, replay=lambda: step_limits.replay_llm(tasks), replay_label="replay (gold chains, no model)",
                       base_url=llm_base_url, model=llm_model, max_tokens=llm_max_tokens)
    model.chat, model.label, model.tag
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from toolroute.experiments.declared import Experiment
import warnings
import pandas as pd
from toolroute.embeddings import offline_env
from toolroute.llm import chat_model, llm_config

LLM_CHOICES = ("auto", "replay")


def setup_notebook(experiment: Experiment, output_dir: str | Path, max_colwidth: int | None = None) -> Path:
    """Offline model settings, text progress bars, pandas display options; returns the notebook's output
    folder (`<output_dir>/<notebook>/`, created; `output_dir` itself for a notebook without a folder)."""



    warnings.filterwarnings("ignore", message="IProgress not found")  # no ipywidgets: text progress bars
    offline_env()
    pd.set_option("display.precision", 3)
    pd.set_option("display.width", 200)
    if max_colwidth:
        pd.set_option("display.max_colwidth", max_colwidth)
    if not experiment.folder:
        return Path(output_dir)
    out = Path(output_dir) / experiment.notebook
    out.mkdir(parents=True, exist_ok=True)
    return out


@dataclass
class NotebookLLM:
    chat: Any
    """The chat model (a `ChatOpenAI`), or the replay stand-in."""
    label: str
    """Where it runs, for the findings: "embedded http://127.0.0.1:… model …", "server …", or the replay label."""
    identity: str
    """What its answers depend on, stable across restarts (`LLMConfig.identity`); "replay" for the stand-in."""
    max_tokens: int
    seconds: float
    """Until it was ready (the embedded server's start included)."""
    config: Any = None
    """The `LLMConfig` (base_url, model, api_key), None for the replay stand-in."""

    @property
    def replay(self) -> bool:
        return self.config is None

    @property
    def tag(self) -> str:
        """What a reply depends on besides the prompt; the start of a checkpoint's tag."""
        return f"{self.identity}|max_tokens={self.max_tokens}"


def select_llm(llm: str, replay: Callable[[], Any], replay_label: str, base_url: str = "", model: str = "",
               max_tokens: int = 512) -> NotebookLLM:
    """The notebook's chat model, from its `llm` parameter.

    "auto": `base_url` (with `model`) when given, else `TOOLROUTE_LLM_BASE_URL`, else the embedded model
    (started here); temperature 0 and a fixed seed. "replay": `replay()`, a stand-in that runs no model
    (it checks the wiring of a smoke run and measures nothing about a model). Prints what it selected."""
    start = time.perf_counter()
    if llm == "replay":
        selected = NotebookLLM(replay(), replay_label, "replay", max_tokens, 0.0)
    elif llm == "auto":
        chat = chat_model(max_tokens=max_tokens, base_url=base_url, model=model)
        config = llm_config(base_url=base_url, model=model)
        label = f"{'embedded' if config.embedded else 'server'} {config.base_url} model {config.model!r}"
        selected = NotebookLLM(chat, label, config.identity, max_tokens, 0.0, config)
    else:
        raise ValueError(f"llm: {llm!r} is neither 'auto' nor 'replay'")
    selected.seconds = time.perf_counter() - start
    print(f"LLM: {selected.label} (ready in {selected.seconds:.1f} s)")
    return selected

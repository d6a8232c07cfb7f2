"""What every notebook does before its first call: set-up and, for the notebooks that run an LLM, the models.

    out = setup_notebook(declared.STEP_LIMITS, output_dir)
    models = select_llms(llm, llms, replay=lambda: step_limits.replay_llm(tasks),
                         replay_label="replay (gold chains, no model)", max_tokens=llm_max_tokens)
    for model in models: model.name, model.chat, model.label, model.tag, model.max_concurrency
    write_llms(models, out)   # llms.json: each model's served id and first system_fingerprint, for the manifest

The `llms` parameter lists the models to compare (`parse_llms` checks it, before a run starts too):

    llms:
      - {name: embedded}                       # the project's default LLM (embedded, or TOOLROUTE_LLM_BASE_URL)
      - {name: qwen7b, base_url: "http://gpu:8000/v1", model: Qwen/Qwen2.5-7B-Instruct,
         api_key_env: MY_VLLM_KEY, max_concurrency: 8}

A key is never written in the file: `api_key_env` names the environment variable that holds it.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import warnings
import pandas as pd
from toolroute.embeddings import offline_env
from langchain_core.callbacks import BaseCallbackHandler
from toolroute_lab.shared.pool import check_concurrency
from toolroute.llm import chat_model, llm_config

from toolroute_lab.shared.experiment import Experiment

LLM_CHOICES = ("auto", "replay")
EMBEDDED = "embedded"
LLMS_FILE = "llms.json"
"""What a notebook writes into its folder about the models it ran (`write_llms`); the pipeline copies it
into the run's manifest."""
DEFAULT_LLMS = [{"name": EMBEDDED}]
LLM_FIELDS = ("name", "base_url", "model", "api_key_env", "max_concurrency", "retries")
SECRET_FIELD = re.compile(r"(^|_)(api_?key|key|token|secret|password|authorization|bearer)$", re.IGNORECASE)
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class LLMEntry:
    """One model of the `llms` parameter: the embedded default, or an OpenAI-compatible endpoint."""

    name: str
    base_url: str = ""
    model: str = ""
    api_key_env: str = ""
    max_concurrency: int = 1
    retries: int | None = None
    """429/5xx retries of this endpoint's requests (None: TOOLROUTE_LLM_RETRIES)."""

    @property
    def embedded(self) -> bool:
        return not self.base_url

    def api_key(self) -> str:
        """The key from the environment variable the entry names ("" when it names none)."""
        if not self.api_key_env:
            return ""
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise ValueError(f"llms: model {self.name!r} reads its key from ${self.api_key_env}, which is not set")
        return key


def parse_llms(llms: Any, check_env: bool = True) -> list[LLMEntry]:
    """The `llms` parameter checked; every problem is a ValueError naming the entry and field.

    None means the default (`[{name: embedded}]`). A field that looks like a literal key (`api_key`,
    `token`, `secret` …) is refused: the file names an environment variable in `api_key_env`, which
    must be set when `check_env`."""
    if llms is None:
        llms = DEFAULT_LLMS
    if isinstance(llms, dict) or not isinstance(llms, (list, tuple)) or not llms:
        raise ValueError(f"llms: expected a non-empty list of models like [{{name: embedded}}], got {llms!r}")
    entries, names = [], set()
    for i, raw in enumerate(llms):
        where = f"llms[{i}]"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: expected a mapping like {{name: embedded}} or {{name, base_url, model, "
                             f"api_key_env, max_concurrency}}, got {raw!r}")
        secret = sorted(k for k in raw if k != "api_key_env" and SECRET_FIELD.search(str(k)))
        if secret:
            raise ValueError(f"{where}.{secret[0]}: a literal key in the parameter file is refused (it would be "
                             "committed and copied into the run's manifest); put the key in an environment "
                             "variable and name that variable in api_key_env")
        unknown = sorted(set(map(str, raw)) - set(LLM_FIELDS))
        if unknown:
            raise ValueError(f"{where}: unknown field(s) {unknown}; known: {list(LLM_FIELDS)}")
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{where}.name: give each model a non-empty name (it labels the tables)")
        if name in names:
            raise ValueError(f"{where}.name: {name!r} is listed twice")
        names.add(name)
        base_url = raw.get("base_url") or ""
        if not isinstance(base_url, str) or (base_url and not re.match(r"^https?://", base_url)):
            raise ValueError(f"{where}.base_url: {base_url!r} is not an http(s) URL of an OpenAI-compatible endpoint")
        if not base_url and name != EMBEDDED:
            raise ValueError(f"{where}: model {name!r} has no base_url; give its OpenAI-compatible endpoint "
                             f"(base_url, model) or name it {EMBEDDED!r} for the embedded model")
        if not base_url and (raw.get("model") or raw.get("api_key_env")):
            raise ValueError(f"{where}: the embedded model takes no model or api_key_env (give a base_url for an endpoint)")
        model = raw.get("model") or ""
        if base_url and (not isinstance(model, str) or not model):
            raise ValueError(f"{where}.model: give the model name the endpoint serves (e.g. its id in GET /v1/models)")
        key_env = raw.get("api_key_env") or ""
        if key_env and (not isinstance(key_env, str) or not ENV_NAME.match(key_env)):
            raise ValueError(f"{where}.api_key_env: {key_env!r} is not an environment variable name")
        concurrency = raw.get("max_concurrency", 1)
        check_concurrency(concurrency, f"{where}.max_concurrency")
        retries = raw.get("retries")
        if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or retries < 0):
            raise ValueError(f"{where}.retries: {retries!r} is not a whole number >= 0")
        entry = LLMEntry(name, base_url.rstrip("/"), model, key_env, concurrency, retries)
        if check_env and key_env and not os.environ.get(key_env):
            raise ValueError(f"{where}.api_key_env: the environment variable {key_env} is not set "
                             f"(model {name!r} reads its key from it)")
        entries.append(entry)
    return entries


class FirstResponse(BaseCallbackHandler):
    """Keeps what the first LLM response says about the model behind it: the model id the server
    answered with and its `system_fingerprint` (None when the server gives none)."""

    def __init__(self):
        self.model_id: str | None = None
        self.system_fingerprint: str | None = None
        self.responses = 0
        self._lock = threading.Lock()

    def on_llm_end(self, response, **kwargs: Any) -> None:
        with self._lock:
            self.responses += 1
            if self.responses > 1:
                return
            meta: dict = {}
            for generations in response.generations or []:
                for generation in generations:
                    message = getattr(generation, "message", None)
                    meta = dict(getattr(message, "response_metadata", None) or {})
                    break
                break
            output = response.llm_output or {}
            self.model_id = meta.get("model_name") or output.get("model_name")
            self.system_fingerprint = meta.get("system_fingerprint") or output.get("system_fingerprint") or None


def setup_notebook(experiment: Experiment, output_dir: str | Path, max_colwidth: int | None = None) -> Path:
    """Offline model settings, text progress bars, pandas display options; returns the notebook's output
    folder (`<output_dir>/<notebook>/`, created; `output_dir` itself for a notebook without a folder)."""



    warnings.filterwarnings("ignore", message="IProgress not found")  # no ipywidgets: text progress bars
    offline_env()
    show_figures_inline()
    pd.set_option("display.precision", 3)
    pd.set_option("display.width", 200)
    if max_colwidth:
        pd.set_option("display.max_colwidth", max_colwidth)
    if not experiment.folder:
        return Path(output_dir)
    out = Path(output_dir) / experiment.notebook
    out.mkdir(parents=True, exist_ok=True)
    return out


def show_figures_inline() -> bool:
    """In a notebook kernel, show a matplotlib figure that ends a cell as a PNG (the figures are drawn with
    the Agg backend, which on its own shows only "<Figure size …>"). False outside IPython."""
    try:
        from IPython import get_ipython  # only in a kernel: the package runs without IPython
        from IPython.core.pylabtools import select_figure_formats  # only in a kernel, as above
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    select_figure_formats(shell, {"png"}, bbox_inches="tight", dpi=100)
    return True


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
    name: str = ""
    """The model's name in the `llms` parameter: the `model` column of the tables."""
    max_concurrency: int = 1
    """Rows run at once against it."""
    first_response: FirstResponse = field(default_factory=FirstResponse)
    run_seconds: float | None = None
    """Wall seconds of the notebook's rows on it (set by the experiment's `run_models`)."""

    def describe(self) -> dict[str, Any]:
        """What the run's manifest records about it (never the key)."""
        config = self.config
        return {"name": self.name, "label": self.label, "identity": self.identity,
                "embedded": bool(config.embedded) if config else None,
                "base_url": config.base_url if config and not config.embedded else None,
                "model": config.model if config else None, "max_concurrency": self.max_concurrency,
                "max_tokens": self.max_tokens, "served_model": self.first_response.model_id,
                "system_fingerprint": self.first_response.system_fingerprint,
                "responses": self.first_response.responses, "run_seconds": self.run_seconds}

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


def select_llms(llm: str, llms: Any, replay: Callable[[], Any], replay_label: str, max_tokens: int = 512,
                max_concurrency: int | None = None) -> list[NotebookLLM]:
    """The notebook's chat models, one per entry of `llms` (`parse_llms`), each with its name and
    `max_concurrency`; with `llm = "replay"` the one stand-in named "replay" instead (no model runs).
    `{name: embedded}` is the project's default LLM: TOOLROUTE_LLM_BASE_URL when set, else the embedded
    model (started here). `max_concurrency` (when given) replaces every entry's. Prints what it selected."""
    if llm not in LLM_CHOICES:
        raise ValueError(f"llm: {llm!r} is neither 'auto' nor 'replay'")
    if llm == "replay":
        model = select_llm("replay", replay, replay_label, max_tokens=max_tokens)
        model.name = "replay"
        model.max_concurrency = max_concurrency or 1
        return [model]
    selected = []
    for entry in parse_llms(llms):
        start = time.perf_counter()
        recorder = FirstResponse()
        endpoint = {} if entry.embedded else {"base_url": entry.base_url, "model": entry.model,
                                              "api_key": entry.api_key()}
        config = llm_config(**endpoint)
        chat = chat_model(max_tokens=max_tokens, retries=entry.retries, callbacks=[recorder], **endpoint)
        label = f"{'embedded' if config.embedded else 'server'} {config.base_url} model {config.model!r}"
        model = NotebookLLM(chat, label, config.identity, max_tokens, time.perf_counter() - start, config,
                            name=entry.name, max_concurrency=max_concurrency or entry.max_concurrency,
                            first_response=recorder)
        print(f"LLM {entry.name}: {label}, {model.max_concurrency} at once (ready in {model.seconds:.1f} s)")
        selected.append(model)
    return selected


def write_llms(models: list[NotebookLLM], folder: str | Path) -> Path:
    """`llms.json` in the notebook's folder: what each model was (name, endpoint, model, the served model
    id and the first response's system_fingerprint); `toolroute run` copies it into the manifest."""
    path = Path(folder) / LLMS_FILE
    path.write_text(json.dumps([m.describe() for m in models], indent=2, ensure_ascii=False), encoding="utf-8")
    return path

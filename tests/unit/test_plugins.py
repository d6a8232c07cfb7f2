"""Domains are found, not listed (`toolroute.plugins`): a pack outside the repository, named in the
`toolroute.domains` entry-point group, is a domain for the agent, the CLI and the MCP server alike."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint

import pytest

from toolroute import plugins
from toolroute.agent.pack import load_pack

TOY_INIT = 'TOOL_NAMES = ["echo"]\nLABEL = "메아리"\n'
TOY_PACK = '''
from langchain_core.tools import tool
from toolroute.agent.pack import DomainPack


@tool
def echo(text: str) -> str:
    """Say the text back."""
    return text


def build_pack():
    return DomainPack(name="toy", tools=[echo], system_prompt="You echo.", label="메아리")
'''


@pytest.fixture
def toy_domain(tmp_path, monkeypatch):
    package = tmp_path / "toy_domain"
    package.mkdir()
    (package / "__init__.py").write_text(TOY_INIT, encoding="utf-8")
    (package / "pack.py").write_text(TOY_PACK, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    point = EntryPoint(name="toy", value="toy_domain", group=plugins.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [point] if group == plugins.ENTRY_POINT_GROUP else [])
    plugins._domain_packages.cache_clear()
    yield "toy"
    plugins._domain_packages.cache_clear()
    for name in [m for m in sys.modules if m.startswith("toy_domain")]:
        sys.modules.pop(name)


def test_the_repository_domains_are_the_folders_with_a_pack_default_first():
    names = plugins.domain_names()
    assert names[0] == "insurance" == plugins.default_domain()
    assert set(names) >= {"insurance", "threat", "plant"}


def test_an_outside_pack_is_a_domain_everywhere(toy_domain):
    assert toy_domain in plugins.domain_names()
    assert plugins.domain_label(toy_domain) == "메아리"
    pack = load_pack(toy_domain)
    assert pack.tool_names == ["echo"] and pack.label == "메아리"
    from toolroute.cli import build_parser

    args = build_parser().parse_args(["mcp", "--domain", toy_domain])
    assert args.domain == toy_domain


def test_an_unknown_domain_names_the_domains_there_are():
    with pytest.raises(ValueError, match="unknown domain 'nope'; one of insurance"):
        load_pack("nope")

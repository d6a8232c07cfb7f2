"""Every domain tool's argument schema, as the LLM sees it, is pinned in `args_schemas.json`.

The fixture holds, per tool, the pydantic JSON schema of its `args_schema` and the OpenAI tool dict
the agent sends (`convert_to_openai_tool`: name, description, parameters). A refactoring of the
args models (shared fields, validators, base classes) must leave both unchanged. When a schema is
meant to change, regenerate the fixture and review its diff:

    PYTHONPATH=src python tests/domains/test_args_schemas.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

FIXTURE = Path(__file__).with_name("args_schemas.json")


def domain_tools() -> list:
    from toolroute.domains.insurance.tools import build_tools
    from toolroute.domains.plant.tools import TOOLS as PLANT_TOOLS
    from toolroute.domains.threat.tools import TOOLS as THREAT_TOOLS

    return [*build_tools(), *THREAT_TOOLS, *PLANT_TOOLS]


def snapshot() -> dict[str, dict]:
    return {t.name: {"args_schema": t.args_schema.model_json_schema(), "openai_tool": convert_to_openai_tool(t)}
            for t in domain_tools()}


PINNED: dict[str, dict] = json.loads(FIXTURE.read_text(encoding="utf-8")) if FIXTURE.exists() else {}


def test_every_tool_is_pinned():
    assert sorted(t.name for t in domain_tools()) == sorted(PINNED)


@pytest.fixture(scope="module")
def current() -> dict[str, dict]:
    # Through a JSON round trip, as the fixture was written (tuples become lists).
    return json.loads(json.dumps(snapshot(), ensure_ascii=False))


@pytest.mark.parametrize("name", sorted(PINNED))
def test_args_schema_is_unchanged(name, current):
    assert current[name] == PINNED[name]


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(snapshot(), ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE}")

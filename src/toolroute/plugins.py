"""The one place that finds domain packs and CLI commands of other packages, and imports modules by name.

A domain is a subpackage of `toolroute.domains` with a `pack` module, or an outside package named in
the `toolroute.domains` entry-point group (`name = "my_package.my_domain"`). Every list of domains
(the CLI's choices, the MCP server, the rewriter, the studies) reads `domain_names()`; every dynamic
import of the library goes through `domain_module`, so the layer contract's hidden edges are here
and nowhere else (`tests/unit/test_layers.py` checks it). Commands from outside the library (the lab's
`toolroute run`) come through the `toolroute.commands` entry-point group.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Callable

DOMAINS_PACKAGE = "toolroute.domains"
ENTRY_POINT_GROUP = "toolroute.domains"
COMMANDS_GROUP = "toolroute.commands"
_DOMAINS_DIR = Path(__file__).parent / "domains"


@lru_cache(maxsize=1)
def _domain_packages() -> dict[str, str]:
    """Domain name -> its package: the folders under `domains/` with a `pack.py`, then the entry points."""
    found = {p.name: f"{DOMAINS_PACKAGE}.{p.name}" for p in sorted(_DOMAINS_DIR.iterdir())
             if (p / "pack.py").is_file() and not p.name.startswith("_")}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point.value)
    # The project's first domain leads (the default of every command); the rest in name order.
    return dict(sorted(found.items(), key=lambda item: (item[0] != "insurance", item[0])))


def domain_names() -> tuple[str, ...]:
    """Every domain pack there is, the default (`insurance`) first."""
    return tuple(_domain_packages())


def default_domain() -> str:
    return domain_names()[0]


def check_domain(name: str) -> str:
    """`name` when a pack has it, else a ValueError naming the packs there are."""
    if name not in _domain_packages():
        raise ValueError(f"unknown domain {name!r}; one of {', '.join(domain_names())}")
    return name


def domain_module(name: str, part: str = "") -> ModuleType:
    """The domain's package (`part=""`) or one of its modules (`part="pack"`)."""
    package = _domain_packages()[check_domain(name)]
    return import_module(f"{package}.{part}" if part else package)


def domain_label(name: str) -> str:
    """The domain in its users' words (`LABEL` of the domain's package: "보험"), else its name."""
    try:
        return str(getattr(domain_module(name), "LABEL", "") or name)
    except ValueError:
        return name


def command_plugins() -> list[Callable]:
    """`register(subparsers)` of each command an installed package adds to the CLI (the lab's `run`), by
    name; the library itself never imports those packages."""
    return [point.load() for point in sorted(entry_points(group=COMMANDS_GROUP), key=lambda p: p.name)]

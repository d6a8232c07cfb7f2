"""The effective catalogue: the authored cards plus the edits saved in the card store.

One function for every entry point (router factory, agent, CLI, notebooks, server), so an edit
saved with `toolroute cards edit` changes what every one of them routes with.
"""

from __future__ import annotations

from pathlib import Path

from toolroute.cards.model import Catalog, load_catalog
from toolroute.cards.store import CardStore, default_store_path
from toolroute.plugins import domain_module, domain_names


def domain_tool_names(domain: str) -> list[str] | None:
    """The contract list of tool names of a domain pack, or None when no pack has that name.

    Domain packs are plugins found by name (`toolroute.plugins`; `TOOL_NAMES` of the domain's package):
    the cards layer reads their names without depending on any domain's code.
    """
    if domain not in domain_names():
        return None
    return list(getattr(domain_module(domain), "TOOL_NAMES", [])) or None


def expected_tool_names(source: str | Path) -> list[str] | None:
    """The tool names a catalogue must describe: a domain's for a folder named after a domain pack,
    wherever it sits (a copy of `toolcards/insurance` is checked like the original), else None."""
    source = Path(source)
    return domain_tool_names(source.name) if source.is_dir() else None


def open_catalog(source: str | Path, edits: bool = True) -> Catalog:
    """The catalogue at `source` (a toolcards folder or a JSON file of OpenAI schemas), with the card
    store's saved edits applied (`edits=False`: as authored). A folder named after a domain pack is
    also checked against the domain's tool names."""
    source = Path(source)
    expected = expected_tool_names(source)
    if not (edits and source.is_dir() and default_store_path(source.name).is_file()):
        return load_catalog(source, expected)
    store = CardStore(source, expected_names=expected)  # reads the YAML once, as its version 0
    versions = store.versions()
    catalog = store.catalog() if versions else store.base
    catalog.edit_version = len(versions)
    return catalog

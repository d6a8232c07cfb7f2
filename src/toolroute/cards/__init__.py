"""ToolCards: the model and its validation (`model`), saved edits with history (`store`), and the
effective catalogue every entry point routes with (`open_catalog`: YAML plus saved edits)."""

from toolroute.cards.model import (
    MIN_WHEN_TO_USE,
    NEAR_DUPLICATE,
    CardSource,
    Catalog,
    CatalogError,
    ToolCard,
    cards_from_openai_tools,
    load_catalog,
    load_toolcards,
    near_duplicate,
    normalize_text,
    validate_catalog,
)
from toolroute.cards.effective import domain_tool_names, expected_tool_names, open_catalog

__all__ = [
    "MIN_WHEN_TO_USE", "NEAR_DUPLICATE", "near_duplicate", "CardSource", "Catalog", "CatalogError", "ToolCard", "cards_from_openai_tools",
    "domain_tool_names", "expected_tool_names", "load_catalog", "load_toolcards", "normalize_text", "open_catalog", "validate_catalog",
]

"""Paths and settings, read in one place (environment variables documented in the README)."""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The repository root: the folder holding `toolcards/` above this package, else the cwd.

    Notebooks run from `notebooks/` and the CLI from anywhere, so paths must not depend on cwd.
    """
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "toolcards").is_dir() and (parent / "pyproject.toml").is_file():
            return parent
    return Path.cwd()


ROOT = project_root()


def data_dir() -> Path:
    """Where derived state lives (Chroma indexes, calibrations): `TOOLROUTE_DATA_DIR` or `.toolroute/`."""
    return Path(os.environ.get("TOOLROUTE_DATA_DIR", ROOT / ".toolroute"))


def default_embedder() -> str:
    return os.environ.get("TOOLROUTE_EMBEDDER", "e5-small")


class ChromaUnavailable(RuntimeError):
    """The configured Chroma server does not answer (nothing was read or written)."""


def chroma_url() -> str | None:
    """A Chroma server URL (`TOOLROUTE_CHROMA_URL`); None means the embedded PersistentClient."""
    return os.environ.get("TOOLROUTE_CHROMA_URL") or None


def toolcards_dir(domain: str = "insurance") -> Path:
    return ROOT / "toolcards" / domain


def queries_path(domain: str = "insurance", split: str = "dev") -> Path:
    return ROOT / "data" / domain / "queries" / f"{split}.jsonl"


def results_dir() -> Path:
    return ROOT / "results"

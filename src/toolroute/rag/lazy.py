"""A domain's document stores, opened on first use and ingested once per process.

Every RAG tool needs the same thing: settings that tests can redirect (embedder, Chroma client,
PDF folder), the store(s) opened lazily under a lock, and an ingest that runs once per process
(a no-op when nothing changed, since `DocumentStore.ingest` is incremental).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


class LazyStores(Generic[T]):
    """Holds the settings and the opened store object (one store, or a dict of them) of a domain."""

    def __init__(self, open_with: Callable[[Any, Any], T]):
        self._open_with = open_with  # (embedder, client) -> the store object
        self._lock = threading.RLock()
        self.embedder: Any = None
        self.client: Any = None
        self.docs_dir: Path | None = None
        self._stores: T | None = None
        self.ensured = False

    def reset(self, embedder: Any = None, client: Any = None, docs_dir: str | Path | None = None) -> None:
        """Forget the open stores; later calls use these settings (None = the defaults)."""
        with self._lock:
            self.embedder, self.client = embedder, client
            self.docs_dir = Path(docs_dir) if docs_dir is not None else None
            self._stores, self.ensured = None, False

    def get(self) -> T:
        """The stores, opened with the current settings on first use."""
        with self._lock:
            if self._stores is None:
                self._stores = self._open_with(self.embedder, self.client)
            return self._stores

    def ensure(self, ingest: Callable[[], Any]) -> T:
        """The stores, after `ingest()` has run once in this process."""
        with self._lock:
            stores = self.get()
            if not self.ensured:
                ingest()
                self.ensured = True
            return stores

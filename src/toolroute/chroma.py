"""The ChromaDB client: an embedded PersistentClient by default, a Chroma server when one is configured.

The tool index and the RAG store both keep their vectors here, so both open it the same way.
"""

from __future__ import annotations

import re
from pathlib import Path

import chromadb
from chromadb.config import Settings
from chromadb.errors import NotFoundError
from filelock import FileLock

from toolroute.config import ChromaUnavailable, chroma_url, data_dir

MAX_ADD = 5000  # Chroma accepts at most 5,461 records per add


def server_client(url: str):
    """A client of the Chroma server at `url` (`http://host:port`), or ChromaUnavailable naming it."""
    m = re.match(r"^(?:(https?)://)?([^:/\s]+)(?::(\d+))?/?$", url.strip())
    if m is None:
        raise ChromaUnavailable(f"TOOLROUTE_CHROMA_URL={url!r} is not a server address (expected http://host:port)")
    host, port = m.group(2), int(m.group(3) or 8000)
    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    try:
        return chromadb.HttpClient(host=host, port=port, ssl=m.group(1) == "https", settings=settings)
    except Exception as exc:  # chromadb raises ValueError("Could not connect …") or transport errors
        raise ChromaUnavailable(
            f"the Chroma server at {url} (TOOLROUTE_CHROMA_URL) does not answer: {exc}. Start it with "
            f"`chroma run --path <folder> --host {host} --port {port}`, or unset TOOLROUTE_CHROMA_URL "
            f"to use the embedded store in {data_dir() / 'chroma'}"
        ) from None


def open_client(path: str | Path | None = None):
    """A Chroma server client when `TOOLROUTE_CHROMA_URL` is set, else an embedded PersistentClient.

    An explicit `path` always means an embedded store (tests, sweeps that keep their own index).
    """
    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    url = chroma_url()
    if url and path is None:
        return server_client(url)
    path = Path(path) if path is not None else data_dir() / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=settings)


def client_folder(client) -> Path:
    """The folder an embedded client stores its data in; for a server client, the local data folder
    (files that belong beside an index, such as its fitted no-call rule, are kept there)."""
    folder = getattr(client.get_settings(), "persist_directory", None) if hasattr(client, "get_settings") else None
    if folder and getattr(client.get_settings(), "is_persistent", False):
        return Path(folder)
    return data_dir() / "chroma-server"


def slug(text: str, limit: int = 20, empty: str = "catalog") -> str:
    """A readable collection-name part (Chroma names allow letters, digits and hyphens)."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:limit] or empty


def generations(client, namespace: str, embedding_function) -> list[tuple[int, str, dict]]:
    """The collection generations `<namespace>-<n>` as (n, name, metadata), oldest first. A
    generation dropped by another process while this lists them is skipped."""
    out = []
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(namespace + "-") and name[len(namespace) + 1:].isdigit():
            try:
                meta = client.get_collection(name, embedding_function=embedding_function).metadata or {}
            except NotFoundError:
                continue
            out.append((int(name[len(namespace) + 1:]), name, meta))
    return sorted(out)


def build_lock(client, namespace: str, timeout: float = 600) -> FileLock:
    """One writer per namespace on this machine: a second build waits, then finds the first one's work."""
    folder = client_folder(client) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    return FileLock(str(folder / f"{namespace}.lock"), timeout=timeout)

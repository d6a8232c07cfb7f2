"""DocumentStore: chunks embedded into ChromaDB, ingested incrementally, searched by cosine.

Mirrors `toolroute.routing.dense`: each ingest that changes anything writes a new collection generation
(`rag-<name>-<digest>-NNNN`, the digest covering the store name and the embedder spec), copies the
vectors it can reuse, embeds the rest, and becomes live only once complete, so a failed ingest
never leaves a half-written store behind. What is reused is decided per document by a content
hash of its chunks (texts, ids, pages, metadata), the embedder spec and the chunking settings;
a changed document's chunks are replaced (a chunk whose text is unchanged keeps its vector: same
embedder, same text, same vector) and documents no longer given are dropped. The chunking
settings are kept in the collection metadata; chunks made with other settings rebuild all.

Our embedding function is passed on every get/create call and vectors are always given
explicitly (`embeddings=`, `query_embeddings=`), so Chroma never loads its downloading default.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
from chromadb.errors import NotFoundError
from tqdm.auto import tqdm

from toolroute.embeddings import Embedder, ToolrouteEmbeddingFunction, get_embedder
from toolroute.chroma import MAX_ADD, generations, open_client, slug
from toolroute.rag.chunking import RESERVED_KEYS, Chunk

__all__ = ["DocumentStore", "IngestReport", "Passage"]

EMBED_BATCH = 64
GET_BATCH = 1000


@dataclass
class IngestReport:
    """Chunk counts (`added` = embedded now, `reused` = vectors copied, `removed` = gone) and documents."""

    collection: str
    documents: int
    chunks: int
    added: int
    reused: int
    removed: int
    changed_documents: list[str] = field(default_factory=list)
    removed_documents: list[str] = field(default_factory=list)
    seconds: float = 0.0
    rebuilt: bool = False


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk: `score` is the cosine similarity to the query; `metadata` the chunk's extra metadata."""

    id: str
    text: str
    document: str
    page: int
    score: float
    metadata: dict[str, Any] = field(default_factory=dict)


def _doc_hash(chunks: Sequence[Chunk], embedder_spec: str) -> str:
    payload = [embedder_spec, [[c.id, c.text, c.page, c.page_end, c.chunker, sorted(c.metadata.items())]
                               for c in chunks]]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()[:16]


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _where(where: dict | None) -> dict | None:
    """`{"a": 1, "b": 2}` becomes Chroma's `{"$and": [{"a": 1}, {"b": 2}]}`; operators pass through."""
    if not where or len(where) == 1 or any(k.startswith("$") for k in where):
        return where or None
    return {"$and": [{k: v} for k, v in where.items()]}


class DocumentStore:
    """Chunks of documents in one ChromaDB collection family; several stores live side by side."""

    def __init__(self, collection: str, embedder: Embedder | str | None = None, client=None):
        if not collection or not str(collection).strip():
            raise ValueError("a DocumentStore needs a collection name, e.g. 'terms'")
        self.name = str(collection)
        self.embedder = embedder if embedder is not None and not isinstance(embedder, str) else get_embedder(embedder)
        self.client = client if client is not None else open_client()
        self._ef = ToolrouteEmbeddingFunction(self.embedder)
        digest = hashlib.sha256(f"{self.name}|{self.embedder.spec}".encode()).hexdigest()[:10]
        self.namespace = f"rag-{slug(self.name, 24, 'store')}-{digest}"
        self._collection = None

    # ----- collections -------------------------------------------------------------------
    def _generations(self) -> list[tuple[int, str, dict]]:
        return generations(self.client, self.namespace, self._ef)

    def _live(self):
        complete = [name for _, name, meta in self._generations() if meta.get("complete")]
        return self.client.get_collection(complete[-1], embedding_function=self._ef) if complete else None

    @property
    def collection(self):
        """The live Chroma collection; LookupError when nothing was ingested yet."""
        if self._collection is None:
            self._collection = self._live()
            if self._collection is None:
                raise LookupError(f"document store '{self.name}' is empty: ingest chunks first")
        return self._collection

    @property
    def chunker(self) -> str | None:
        """The chunking settings of the stored chunks (None before the first ingest)."""
        live = self._live()
        return (live.metadata or {}).get("chunker") if live is not None else None

    def exists(self) -> bool:
        return self._live() is not None

    def count(self) -> int:
        live = self._live()
        return live.count() if live is not None else 0

    def documents(self) -> dict[str, int]:
        """Stored documents and their number of chunks."""
        live = self._live()
        if live is None:
            return {}
        counts: dict[str, int] = {}
        for meta in live.get(include=["metadatas"])["metadatas"]:
            counts[meta["document"]] = counts.get(meta["document"], 0) + 1
        return counts

    def drop(self) -> None:
        """Delete every generation of this store."""
        for _, name, _ in self._generations():
            self.client.delete_collection(name)
        self._collection = None

    # ----- ingest ------------------------------------------------------------------------
    def ingest(self, chunks: Iterable[Chunk], progress: bool = True, rebuild: bool = False) -> IngestReport:
        """Make the store hold exactly these chunks, embedding only what changed (see module doc)."""
        start = time.perf_counter()
        chunks = list(chunks)
        ids = [c.id for c in chunks]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})[:5]
            raise ValueError(f"duplicate chunk ids (same document given twice?): {dupes}")
        specs = sorted({c.chunker for c in chunks})
        if len(specs) > 1:
            raise ValueError(f"chunks made with different chunking settings: {specs}")
        by_doc: dict[str, list[Chunk]] = {}
        for c in chunks:
            bad = RESERVED_KEYS & set(c.metadata)
            if bad:
                raise ValueError(f"chunk {c.id}: metadata keys {sorted(bad)} are reserved")
            by_doc.setdefault(c.document, []).append(c)
        hashes = {doc: _doc_hash(cs, self.embedder.spec) for doc, cs in by_doc.items()}

        live = self._live()
        live_meta = (live.metadata or {}) if live is not None else {}
        chunker = specs[0] if specs else live_meta.get("chunker", "")
        stored_ids: dict[str, set[str]] = {}
        stored_hash: dict[str, set[str]] = {}
        by_text: dict[str, str] = {}  # text hash -> a stored id with that text
        if live is not None:
            got = live.get(include=["metadatas", "documents"])
            for rid, meta, text in zip(got["ids"], got["metadatas"], got["documents"]):
                stored_ids.setdefault(meta["document"], set()).add(rid)
                stored_hash.setdefault(meta["document"], set()).add(meta.get("doc_hash"))
                by_text.setdefault(_text_key(text), rid)

        def unchanged(doc: str) -> bool:
            return (not rebuild and live_meta.get("chunker") == chunker and stored_hash.get(doc) == {hashes[doc]}
                    and stored_ids.get(doc) == {c.id for c in by_doc[doc]})

        removed_docs = sorted(set(stored_ids) - set(by_doc))
        total_stored = sum(len(v) for v in stored_ids.values())
        if live is not None and not removed_docs and all(unchanged(d) for d in by_doc):
            self._collection = live
            return IngestReport(live.name, len(by_doc), len(chunks), 0, len(chunks), 0, [], [],
                                time.perf_counter() - start, False)

        # Vectors to copy: every chunk whose text is stored (same embedder = same vector).
        reuse = {} if rebuild or live is None else {c.id: by_text[k] for c in chunks if (k := _text_key(c.text)) in by_text}
        vectors: dict[str, np.ndarray] = {}
        wanted = sorted(set(reuse.values()))
        for i in range(0, len(wanted), GET_BATCH):
            got = live.get(ids=wanted[i:i + GET_BATCH], include=["embeddings"])
            for rid, vec in zip(got["ids"], got["embeddings"]):
                vectors[rid] = np.asarray(vec, dtype=np.float32)
        reuse = {cid: rid for cid, rid in reuse.items() if rid in vectors}

        generation = max([g for g, _, _ in self._generations()], default=0) + 1
        name = f"{self.namespace}-{generation:04d}"
        new = self.client.create_collection(
            name, embedding_function=self._ef, configuration={"hnsw": {"space": "cosine"}},
            metadata={"complete": False, "store": self.name, "embedder": self.embedder.spec, "chunker": chunker},
        )
        try:
            embedded = 0
            changed_docs = []
            chunk_vectors: dict[str, np.ndarray] = {}
            bar = tqdm(total=len(by_doc), desc=f"ingest {self.name}", unit="doc", disable=not progress or not by_doc)
            for doc, doc_chunks in by_doc.items():
                if not unchanged(doc):
                    changed_docs.append(doc)
                todo = [c for c in doc_chunks if c.id not in reuse]
                for c in doc_chunks:
                    if c.id in reuse:
                        chunk_vectors[c.id] = vectors[reuse[c.id]]
                for i in range(0, len(todo), EMBED_BATCH):
                    batch = todo[i:i + EMBED_BATCH]
                    for c, vec in zip(batch, self.embedder.embed_passages([c.text for c in batch])):
                        chunk_vectors[c.id] = np.asarray(vec, dtype=np.float32)
                    embedded += len(batch)
                bar.update(1)
            bar.close()
            for i in range(0, len(chunks), MAX_ADD):
                batch = chunks[i:i + MAX_ADD]
                new.add(
                    ids=[c.id for c in batch],
                    documents=[c.text for c in batch],
                    embeddings=np.stack([chunk_vectors[c.id] for c in batch]),
                    metadatas=[{**c.metadata, "document": c.document, "page": c.page, "page_end": c.page_end,
                                "chunk_index": c.index, "doc_hash": hashes[c.document], "chunker": c.chunker}
                               for c in batch],
                )
        except BaseException:
            with contextlib.suppress(Exception):  # the live generation stays as it was
                self.client.delete_collection(name)
            raise
        new.modify(metadata={**(new.metadata or {}), "complete": True})
        self._collection = new
        for _, old_name, _ in self._generations():
            if old_name != name:
                self.client.delete_collection(old_name)
        kept = sum(len(stored_ids.get(d, set()) & {c.id for c in by_doc[d]}) for d in by_doc)
        return IngestReport(name, len(by_doc), len(chunks), embedded, len(chunks) - embedded, total_stored - kept,
                            changed_docs, removed_docs, time.perf_counter() - start, True)

    # ----- search ------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, where: dict | None = None) -> list[Passage]:
        """The `k` chunks most similar to `query` (embedded as a query), optionally filtered by metadata."""
        return self.search_many([query], k, where)[0]

    def search_many(self, queries: Sequence[str], k: int = 5, where: dict | None = None) -> list[list[Passage]]:
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if not queries:
            return []
        vectors = np.asarray(self.embedder.embed_queries(list(queries)), dtype=np.float32)
        try:
            res = self._query(vectors, k, where)
        except NotFoundError:
            # Another process switched the store to a new generation and dropped ours: follow it.
            self._collection = None
            res = self._query(vectors, k, where)
        if res is None:
            return [[] for _ in queries]
        out = []
        for ids, texts, metas, dists in zip(res["ids"], res["documents"], res["metadatas"], res["distances"]):
            out.append([
                Passage(rid, text, meta["document"], int(meta["page"]), 1.0 - float(dist),
                        {key: v for key, v in meta.items() if key not in ("document", "page", "doc_hash", "chunker")})
                for rid, text, meta, dist in zip(ids, texts, metas, dists)
            ])
        return out

    def _query(self, vectors: np.ndarray, k: int, where: dict | None) -> dict | None:
        col = self.collection
        count = col.count()
        if count == 0:
            return None
        return col.query(query_embeddings=vectors, n_results=min(k, count), where=_where(where),
                         include=["documents", "metadatas", "distances"])

"""ToolIndex: ToolCards embedded into ChromaDB, searched per query, aggregated per tool.

The strategy is data (`IndexStrategy`): multi-vector (one record per purpose, per when_to_use
example, per tags line, and per when_not_to_use line when that field is embedded) or
single-vector (one record per tool); aggregation of a tool's record scores by max, mean or top-2
mean. Rebuilds are incremental and atomic: each build writes a new collection generation,
copying the vectors of unchanged cards (content hash) and embedding only changed ones, and
becomes live only once complete, so a failed build never leaves a half-written index behind.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from typing import Callable, Literal, Sequence

import numpy as np
from chromadb.errors import NotFoundError
from tqdm.auto import tqdm

from toolroute.cards import Catalog, ToolCard
from toolroute.chroma import MAX_ADD, build_lock, generations, open_client, slug
from toolroute.embeddings import Embedder, ToolrouteEmbeddingFunction, get_embedder
from toolroute.routing.base import Ranking, Retriever, WeightedQuery

FIELDS = ("purpose", "when_to_use", "tags", "when_not_to_use")
DEFAULT_FIELDS = ("purpose", "when_to_use", "tags")


@dataclass(frozen=True)
class IndexStrategy:
    """How cards become vectors and how record scores become a tool score."""

    granularity: Literal["multi", "single"] = "multi"
    fields: tuple[str, ...] = DEFAULT_FIELDS
    aggregation: Literal["max", "mean", "top2"] = "max"

    def __post_init__(self):
        if self.granularity not in ("multi", "single"):
            raise ValueError(f"granularity must be 'multi' or 'single', got '{self.granularity}'")
        unknown = set(self.fields) - set(FIELDS)
        if unknown or not self.fields:
            raise ValueError(f"fields must be a non-empty subset of {FIELDS}, got {self.fields}")
        if self.aggregation not in ("max", "mean", "top2"):
            raise ValueError(f"aggregation must be max, mean or top2, got '{self.aggregation}'")
        object.__setattr__(self, "fields", tuple(f for f in FIELDS if f in self.fields))

    @property
    def storage_key(self) -> str:
        """What decides the stored vectors (aggregation is applied at search time only)."""
        return f"{self.granularity}:{','.join(self.fields)}"

    @property
    def label(self) -> str:
        wnu = "+wnu" if "when_not_to_use" in self.fields else ""
        return f"{self.granularity}{wnu}/{self.aggregation}"


@dataclass(frozen=True)
class Record:
    id: str
    tool: str
    field: str
    document: str


def card_records(card: ToolCard, strategy: IndexStrategy) -> list[Record]:
    """The records one card contributes under a strategy."""
    if strategy.granularity == "single":
        parts = []
        for name in strategy.fields:
            value = getattr(card, name)
            parts.append(value if isinstance(value, str) else " ".join(value) if name == "tags" else "\n".join(value))
        return [Record(f"{card.name}::card", card.name, "card", "\n".join(p for p in parts if p))]
    records = []
    for name in strategy.fields:
        value = getattr(card, name)
        if name == "purpose":
            records.append(Record(f"{card.name}::purpose", card.name, name, value))
        elif name == "tags":
            if value:
                records.append(Record(f"{card.name}::tags", card.name, name, " ".join(value)))
        else:
            records.extend(Record(f"{card.name}::{name}::{i}", card.name, name, text) for i, text in enumerate(value))
    return records


def _write_records(write, records: list[Record], vectors: dict, hashes: dict[str, str]) -> None:
    """`collection.add` or `.upsert` in chunks Chroma accepts, with the card hash in each record's metadata."""
    for i in range(0, len(records), MAX_ADD):
        chunk = records[i:i + MAX_ADD]
        write(ids=[r.id for r in chunk], documents=[r.document for r in chunk],
              embeddings=[np.asarray(vectors[r.id], dtype=np.float32) for r in chunk],
              metadatas=[{"tool": r.tool, "field": r.field, "card_hash": hashes[r.tool]} for r in chunk])


@dataclass
class BuildReport:
    collection: str
    records: int
    embedded: int
    reused: int
    seconds: float
    rebuilt: bool


KEEP_GENERATIONS = 3  # older generations of a namespace are dropped by the next build


class ToolIndex:
    """Dense tool retrieval over ChromaDB; `search` ranks every tool with an aggregated cosine score."""

    def __init__(self, catalog: Catalog, embedder: Embedder | str | None = None,
                 strategy: IndexStrategy = IndexStrategy(), client=None, max_candidates: int = 4000):
        self.catalog = catalog
        self.embedder = embedder if embedder is not None and not isinstance(embedder, str) else get_embedder(embedder)
        self.strategy = strategy
        self.client = client if client is not None else open_client()
        self.max_candidates = max_candidates
        self._ef = ToolrouteEmbeddingFunction(self.embedder)
        # Identity from where the catalogue came from (and its name), the embedder and the strategy:
        # a copied folder or a JSON file named like a real catalogue never shares its index.
        key = f"{catalog.identity}|{self.embedder.spec}|{strategy.storage_key}"
        self.namespace = f"tr-{slug(catalog.name)}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"
        self._collection = None
        self._count: int | None = None

    # ----- collections -------------------------------------------------------------------
    def _generations(self) -> list[tuple[int, str, dict]]:
        return generations(self.client, self.namespace, self._ef)

    def _live_name(self) -> str | None:
        complete = [name for _, name, meta in self._generations() if meta.get("complete")]
        return complete[-1] if complete else None

    @property
    def collection(self):
        """The generation this index searches: one holding exactly its cards (built on first use)."""
        if self._collection is None:
            self.build(progress=False)  # finds (or writes) the generation holding exactly these cards
        return self._collection

    def _card_hash(self, card: ToolCard) -> str:
        key = f"{card.content_hash()}|{self.embedder.spec}|{self.strategy.storage_key}"
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    # ----- build -------------------------------------------------------------------------
    def build(self, progress: bool = True) -> BuildReport:
        """Bring the index in line with the cards, re-embedding only cards whose hash changed.

        One build at a time per namespace on this machine (a file lock): a second process that starts
        its first build meanwhile waits, then reuses the generation the first one wrote."""
        with build_lock(self.client, self.namespace):
            return self._build(progress)

    def _build(self, progress: bool) -> BuildReport:
        start = time.perf_counter()
        hashes = {card.name: self._card_hash(card) for card in self.catalog}
        records = [r for card in self.catalog for r in card_records(card, self.strategy)]
        old_vectors: dict[str, tuple[str, list[float]]] = {}
        newest = None
        complete = [name for _, name, meta in self._generations() if meta.get("complete")]
        for live_name in reversed(complete):  # a generation holding exactly these cards is reused as it is
            try:
                live = self.client.get_collection(live_name, embedding_function=self._ef)
                got = live.get(include=["metadatas", "documents"])
            except NotFoundError:  # dropped by another process meanwhile
                continue
            stored = {i: (m, d) for i, m, d in zip(got["ids"], got["metadatas"], got["documents"])}
            if set(stored) == {r.id for r in records} and all(
                stored[r.id][0].get("card_hash") == hashes[r.tool] for r in records
            ):
                self._collection, self._count = live, None
                return BuildReport(live_name, len(records), 0, len(records), time.perf_counter() - start, False)
            newest = newest or (live, stored)
        if newest is not None:
            # A changed card keeps the vectors of its records whose text did not change (same
            # namespace = same embedder and strategy, so same text gives the same vector).
            live, stored = newest
            reusable = [r.id for r in records if r.id in stored and stored[r.id][1] == r.document]
            if reusable:
                got = live.get(ids=reusable, include=["embeddings", "documents"])
                for rid, doc, vec in zip(got["ids"], got["documents"], got["embeddings"]):
                    old_vectors[rid] = (doc, vec)
        generation = max([g for g, _, _ in self._generations()], default=0) + 1
        name = f"{self.namespace}-{generation:04d}"
        config = {"catalog": self.catalog.name, "embedder": self.embedder.spec, **asdict(self.strategy)}
        new = self.client.create_collection(
            name, embedding_function=self._ef, configuration={"hnsw": {"space": "cosine"}},
            metadata={"complete": False, "toolroute_config": json.dumps(config, ensure_ascii=False)},
        )
        to_embed = [r for r in records if r.id not in old_vectors or old_vectors[r.id][0] != r.document]
        vectors: dict[str, list[float]] = {rid: vec for rid, (_, vec) in old_vectors.items()}
        batch = 64
        bar = tqdm(total=len(to_embed), desc=f"embedding {self.catalog.name} ({self.strategy.storage_key})",
                   unit="rec", disable=not progress or not to_embed)
        for i in range(0, len(to_embed), batch):
            chunk = to_embed[i:i + batch]
            for r, vec in zip(chunk, self.embedder.embed_passages([r.document for r in chunk])):
                vectors[r.id] = vec
            bar.update(len(chunk))
        bar.close()
        _write_records(new.add, records, vectors, hashes)
        new.modify(metadata={**(new.metadata or {}), "complete": True})
        self._collection, self._count = new, None
        # Older generations of this namespace (never another catalogue's) go, but the last few stay,
        # so a process still searching one it opened keeps working until its next build.
        for _, old_name, _ in self._generations()[:-KEEP_GENERATIONS]:
            try:
                self.client.delete_collection(old_name)
            except NotFoundError:  # another process dropped it first
                pass
        return BuildReport(name, len(records), len(to_embed), len(records) - len(to_embed),
                           time.perf_counter() - start, True)

    def sync(self, catalog: Catalog, progress: bool = False) -> BuildReport:
        """Bring the live collection in line with `catalog` in place: a card edit, a tool added or removed
        (`prepare_sync` then its commit)."""
        return self.prepare_sync(catalog, progress)()

    def prepare_sync(self, catalog: Catalog, progress: bool = False) -> Callable[[], BuildReport]:
        """Embed what an in-place sync to `catalog` needs; the returned commit writes it.

        Unlike `build` (a new generation, copying every vector), only the changed tools' records are
        written: new and edited cards are upserted (unchanged record texts keep their vectors), then
        the records of removed tools and dropped examples are deleted, so a removed tool stops being
        found as soon as the commit returns. Searches see the old records until the commit; during it
        a search may see a changed tool's old and new records together (`ToolRouter` keeps searches
        out while it commits). Other tools are never affected.
        """
        start = time.perf_counter()
        if self._live_name() is None:
            def first_build() -> BuildReport:
                self.catalog = catalog
                return self.build(progress=progress)

            return first_build
        col = self.collection
        # Which tools differ: the stored card hashes (metadata only); then the changed tools' records.
        got = col.get(include=["metadatas"])
        stored_hash: dict[str, str] = {}
        by_tool: dict[str, list[str]] = {}
        for rid, meta in zip(got["ids"], got["metadatas"]):
            tool = (meta or {}).get("tool") or rid.split("::", 1)[0]
            stored_hash[tool] = (meta or {}).get("card_hash", "")
            by_tool.setdefault(tool, []).append(rid)
        hashes = {card.name: self._card_hash(card) for card in catalog}
        changed = [card for card in catalog if stored_hash.get(card.name) != hashes[card.name]]
        removed = [tool for tool in by_tool if tool not in catalog]
        records = [r for card in changed for r in card_records(card, self.strategy)]
        old_ids = [rid for card in changed for rid in by_tool.get(card.name, [])]
        stored_doc: dict[str, str] = {}
        vectors: dict[str, list[float]] = {}
        if old_ids:
            old = col.get(ids=old_ids, include=["documents", "embeddings"])
            new_docs = {r.id: r.document for r in records}
            for rid, doc, vec in zip(old["ids"], old["documents"], old["embeddings"]):
                stored_doc[rid] = doc
                if new_docs.get(rid) == doc:
                    vectors[rid] = vec
        to_embed = [r for r in records if r.id not in vectors]
        for i in range(0, len(to_embed), 64):
            chunk = to_embed[i:i + 64]
            for r, vec in zip(chunk, self.embedder.embed_passages([r.document for r in chunk])):
                vectors[r.id] = vec
        current = {r.id for r in records}
        stale = [rid for rid in old_ids if rid not in current] + [rid for tool in removed for rid in by_tool[tool]]
        total = len(got["ids"]) + len([r for r in records if r.id not in stored_doc]) - len(stale)
        prepared = time.perf_counter() - start

        def commit() -> BuildReport:
            begin = time.perf_counter()
            _write_records(col.upsert, records, vectors, {card.name: hashes[card.name] for card in changed})
            for i in range(0, len(stale), MAX_ADD):
                col.delete(ids=stale[i:i + MAX_ADD])
            self.catalog, self._count = catalog, None
            return BuildReport(col.name, total, len(to_embed), total - len(to_embed),
                               prepared + time.perf_counter() - begin, bool(changed or removed))

        return commit

    # ----- search ------------------------------------------------------------------------
    def search_vectors(self, query_vectors: np.ndarray) -> list[list[tuple[str, float]]]:
        """For each query vector, every tool that has a candidate record, ranked by aggregated score."""
        try:
            res = self._query(query_vectors)
        except NotFoundError:
            # The generation this index opened was dropped by another process's builds. Never follow
            # whatever is live now (it may hold other cards): build (or find) one of our own cards.
            self._collection, self._count = None, None
            self.build(progress=False)
            res = self._query(query_vectors)
        return [self._aggregate(ids, dists) for ids, dists in zip(res["ids"], res["distances"])]

    def _query(self, query_vectors: np.ndarray) -> dict:
        col = self.collection
        if self._count is None:
            self._count = col.count()
        # Distances only: record ids carry the tool name ("tool::field::i"), and fetching metadata
        # for hundreds of records would cost more than the search itself.
        return col.query(query_embeddings=np.asarray(query_vectors, dtype=np.float32),
                         n_results=min(self._count, self.max_candidates), include=["distances"])

    def search(self, query: str) -> list[tuple[str, float]]:
        return self.search_vectors(self.embedder.embed_queries([query]))[0]

    def search_many(self, queries: Sequence[str]) -> list[list[tuple[str, float]]]:
        return self.search_vectors(self.embedder.embed_queries(list(queries))) if queries else []

    def _aggregate(self, ids: list[str], dists: list[float]) -> list[tuple[str, float]]:
        per_tool: dict[str, list[float]] = {}
        for rid, dist in zip(ids, dists):
            per_tool.setdefault(rid.split("::", 1)[0], []).append(1.0 - float(dist))
        agg = self.strategy.aggregation
        scores = {}
        for tool, sims in per_tool.items():
            sims.sort(reverse=True)
            if agg == "max":
                scores[tool] = sims[0]
            elif agg == "mean":
                scores[tool] = float(np.mean(sims))
            else:
                scores[tool] = float(np.mean(sims[:2]))
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


class DenseRetriever(Retriever):
    """The dense arm: a ToolIndex ranking every tool by the aggregated cosine of its records."""

    arm = "dense"
    features = ("dense_top1", "dense_margin")

    def __init__(self, index: ToolIndex):
        self.index = index

    @property
    def catalog(self) -> Catalog:
        return self.index.catalog

    def build(self, progress: bool = True) -> BuildReport:
        return self.index.build(progress=progress)

    def prepare_catalog(self, catalog: Catalog):
        return self.index.prepare_sync(catalog)

    def over(self, catalog: Catalog) -> "DenseRetriever":
        index = self.index
        return DenseRetriever(ToolIndex(catalog, index.embedder, index.strategy, index.client, index.max_candidates))

    def rank_many(self, queries: Sequence[str]) -> list[Ranking]:
        return [Ranking(ranked, dense_features(ranked)) for ranked in self.index.search_many(queries)]

    def rank_weighted(self, queries: Sequence[WeightedQuery]) -> list[Ranking]:
        """One search per query with the normalised weighted mean of its texts' query vectors."""
        if not queries:
            return []
        texts = [text for query in queries for text, _ in query]
        vectors = self.index.embedder.embed_queries(texts)
        mixed, start = [], 0
        for query in queries:
            weights = np.array([w for _, w in query], dtype=np.float64)
            mixed.append(mix_vectors(vectors[start:start + len(query)], weights))
            start += len(query)
        return [Ranking(ranked, dense_features(ranked)) for ranked in self.index.search_vectors(np.stack(mixed))]


def mix_vectors(vectors: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The L2-normalised weighted sum of unit vectors (a query vector that leans on the heavier texts)."""
    total = (np.asarray(vectors, dtype=np.float64) * weights[:, None]).sum(axis=0)
    norm = np.linalg.norm(total)
    return (total / norm if norm > 0 else total).astype(np.float32)


def dense_features(ranked: list[tuple[str, float]]) -> dict[str, float]:
    """The no-call rule's dense evidence: the best score and its margin over the second."""
    top1 = ranked[0][1] if ranked else 0.0
    return {"dense_top1": top1, "dense_margin": ranked[0][1] - ranked[1][1] if len(ranked) > 1 else top1}

"""Notebook 01 (ingest): documents table, chunk statistics and the retrieval evaluation on rag_qa.jsonl.

The question set (`data/insurance/rag_qa.jsonl`): one JSON object a line,
`{"id", "question", "collection": "terms"|"product_info", "document": <file stem>, "page": int,
"answer_contains": <a short phrase of the answering passage>}`.

Hit (the definition every number here uses): a retrieved passage is a **hit** for a question when

1. it comes from the question's document (same file stem),
2. its page range covers the answer page (`page <= question.page <= page_end`; a chunk that
   starts on page 3 and ends on page 4 covers both), and
3. its text contains `answer_contains` (compared with all whitespace removed, so a line break
   inside the phrase does not matter; the contextual header line is not counted).

The search runs in the question's collection only, with no product filter (the harder setting:
the product must be found from the question's words). `rank` is the 1-based position of the
first hit among the top `max(ks)` passages (None when there is none); hit@k is the share of
questions with rank <= k, and MRR is the mean of 1/rank over questions (0 without a hit), i.e.
MRR@max(ks).

Chunk-size sweeps ingest into their own pair of collections per setting (suffix
`-s<size>-o<overlap>`, overlap capped at half the size) in the client given (the notebook uses a
separate Chroma folder), so a sweep never touches the live stores the tools read. The notebook
wraps its embedder in `CachingEmbedder`, so a chunk text embedded once in the process (e.g. by the
live ingest at the default size) is not embedded again by the sweep: same embedder, same text,
same vector.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from toolroute.config import ROOT
from toolroute.rag.pdf import extract_pages
from toolroute.domains.insurance.knowledge import strip_header
from toolroute.config import data_dir
from toolroute.chroma import open_client
from toolroute.domains.insurance import knowledge
from toolroute.domains.insurance.documents import build_documents
from toolroute.text import without_spaces

__all__ = [
    "RagQuestion", "QuestionResult", "RAG_QA_PATH", "load_rag_qa", "check_questions", "is_hit", "evaluate",
    "metrics", "sweep", "documents_table", "chunk_lengths", "sweep_suffix",
    "sweep_client", "ingest_table", "failures", "results_frame", "CachingEmbedder", "sweep_overlap",
    "page_texts", "chunks_by_collection", "chunk_counts", "chunk_stats", "questions_table",
]

RAG_QA_PATH = ROOT / "data" / "insurance" / "rag_qa.jsonl"
COLLECTION_KEYS = ("terms", "product_info")


@dataclass(frozen=True)
class RagQuestion:
    id: str
    question: str
    collection: str
    document: str
    page: int
    answer_contains: str


def load_rag_qa(path: str | Path | None = None) -> list[RagQuestion]:
    """The question set; every field is checked (a bad row raises with its line number)."""
    path = Path(path) if path is not None else RAG_QA_PATH
    out: list[RagQuestion] = []
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            q = RagQuestion(id=str(row["id"]), question=str(row["question"]), collection=str(row["collection"]),
                            document=str(row["document"]), page=int(row["page"]),
                            answer_contains=str(row["answer_contains"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}:{number}: bad row ({exc})") from exc
        if q.collection not in COLLECTION_KEYS:
            raise ValueError(f"{path}:{number}: collection must be one of {COLLECTION_KEYS}, got {q.collection!r}")
        if q.id in seen:
            raise ValueError(f"{path}:{number}: duplicate id {q.id}")
        if not q.question.strip() or not q.answer_contains.strip() or q.page < 1:
            raise ValueError(f"{path}:{number}: empty question/answer_contains or page < 1")
        seen.add(q.id)
        out.append(q)
    return out


def _keys(collections: Iterable[str] | None) -> list[str]:
    keys = list(COLLECTION_KEYS) if collections is None else list(dict.fromkeys(collections))
    unknown = [k for k in keys if k not in COLLECTION_KEYS]
    if unknown or not keys:
        raise ValueError(f"collections must be a non-empty subset of {list(COLLECTION_KEYS)}, got {keys}")
    return keys


def questions_table(questions: Sequence[RagQuestion]) -> pd.DataFrame:
    """Questions per collection and document, with the pages they point at."""
    rows: dict[tuple[str, str], list[int]] = {}
    for q in questions:
        rows.setdefault((q.collection, q.document), []).append(q.page)
    return pd.DataFrame([{"collection": c, "document": d, "questions": len(pages),
                          "pages": ",".join(str(p) for p in sorted(set(pages)))}
                         for (c, d), pages in sorted(rows.items())],
                        columns=["collection", "document", "questions", "pages"])


def page_texts(docs: Iterable[Any]) -> dict[str, dict[int, str]]:
    """{document: {page: text}} of DocumentInfos, as `check_questions` wants it."""

    return {d.document: {p.page: p.text for p in extract_pages(d.path)} for d in docs}


def check_questions(questions: Iterable[RagQuestion], pages_by_doc: dict[str, dict[int, str]]) -> list[str]:
    """Problems of the question set against the documents' page texts ({document: {page: text}}):
    unknown document, page out of range, or `answer_contains` not on the stated page."""
    problems = []
    for q in questions:
        pages = pages_by_doc.get(q.document)
        if pages is None:
            problems.append(f"{q.id}: unknown document {q.document}")
        elif q.page not in pages:
            problems.append(f"{q.id}: {q.document} has no page {q.page}")
        elif without_spaces(q.answer_contains) not in without_spaces(pages[q.page]):
            problems.append(f"{q.id}: '{q.answer_contains}' is not on {q.document} p.{q.page}")
    return problems


def is_hit(question: RagQuestion, document: str, page: int, page_end: int, text: str) -> bool:
    """The hit rule of the module docstring (text without its contextual header)."""

    return (document == question.document and page <= question.page <= page_end
            and without_spaces(question.answer_contains) in without_spaces(strip_header(text)))


@dataclass
class QuestionResult:
    id: str
    collection: str
    rank: int | None  # 1-based rank of the first hit within the top max(ks); None = no hit
    top_document: str | None
    top_page: int | None
    top_score: float | None
    retrieved: list[tuple[str, int, int]] = field(default_factory=list)  # (document, page, page_end)


def evaluate(questions: Sequence[RagQuestion], stores: dict[str, Any], k: int = 5) -> list[QuestionResult]:
    """Search each question in its collection's store (`stores["terms"]`, `stores["product_info"]`:
    DocumentStore-like, with `search_many(queries, k)`) and find the rank of the first hit."""
    results: dict[str, QuestionResult] = {}
    for key in COLLECTION_KEYS:
        group = [q for q in questions if q.collection == key]
        if not group:
            continue
        found = stores[key].search_many([q.question for q in group], k=k)
        for q, passages in zip(group, found):
            rank = None
            retrieved = []
            for i, p in enumerate(passages, start=1):
                page_end = int(p.metadata.get("page_end", p.page))
                retrieved.append((p.document, p.page, page_end))
                if rank is None and is_hit(q, p.document, p.page, page_end, p.text):
                    rank = i
            top = passages[0] if passages else None
            results[q.id] = QuestionResult(q.id, key, rank, top.document if top else None, top.page if top else None,
                                           round(float(top.score), 4) if top else None, retrieved)
    return [results[q.id] for q in questions]


def metrics(results: Sequence[QuestionResult], ks: Sequence[int]) -> dict[str, float]:
    """hit@k for each k and MRR (see module docstring) over `results`."""
    n = len(results)
    out: dict[str, float] = {"n": n}
    for k in ks:
        out[f"hit@{k}"] = sum(r.rank is not None and r.rank <= k for r in results) / n if n else float("nan")
    out["mrr"] = sum(1.0 / r.rank for r in results if r.rank) / n if n else float("nan")
    return out


def sweep_suffix(size: int, overlap: int) -> str:
    return f"-s{size}-o{overlap}"


def sweep_overlap(size: int, overlap: int) -> int:
    """The overlap a sweep uses at `size`: the overlap asked for, at most half the chunk size."""
    return min(overlap, size // 2)


class CachingEmbedder:
    """An embedder that remembers passage vectors by text for the life of the process.

    It keeps the wrapped embedder's `spec`, so stores built through it are the same stores (same
    collection names, same document hashes) as with the wrapped embedder itself: the vectors are
    the ones it would compute. `model_passages` counts the passages that really reached the model.
    Queries are passed through (they are cheap and rarely repeat).
    """

    def __init__(self, inner: Any):
        self.inner = inner
        self.spec = inner.spec
        self._cache: dict[str, np.ndarray] = {}
        self.model_passages = 0
        self.cached_passages = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            for t, vec in zip(todo, self.inner.embed_passages(todo)):
                self._cache[t] = np.asarray(vec, dtype=np.float32)
            self.model_passages += len(todo)
        self.cached_passages += len(texts) - len(todo)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])


def sweep_client(path: str | Path | None = None):
    """A Chroma client of its own for sweeps (default `data_dir()/chroma-rag-sweep`), apart from the live
    stores' client; the sweep collections persist there, so a re-run embeds only what changed."""

    return open_client(Path(path) if path is not None else data_dir() / "chroma-rag-sweep")


def ingest_table(reports: dict[str, Any]) -> pd.DataFrame:
    """One row per collection of an ingest: documents (changed = re-chunked and written again,
    unchanged = kept as stored), chunks (added = embedded now, reused = vectors copied, removed),
    whether a new generation was written, seconds."""
    return pd.DataFrame([{"collection": key, "store": r.collection, "documents": r.documents,
                          "changed_documents": len(r.changed_documents),
                          "unchanged_documents": r.documents - len(r.changed_documents),
                          "removed_documents": len(r.removed_documents), "chunks": r.chunks,
                          "added": r.added, "reused": r.reused, "removed": r.removed, "rebuilt": r.rebuilt,
                          "seconds": round(r.seconds, 2)} for key, r in reports.items()])


def sweep(chunk_sizes: Sequence[int], overlap: int, ks: Sequence[int], embedder: Any, client: Any,
          docs: list | None = None, questions: Sequence[RagQuestion] | None = None,
          progress: bool = False, collections: Iterable[str] | None = None,
          ) -> tuple[pd.DataFrame, dict[int, list[QuestionResult]]]:
    """For each chunk size: ingest the documents into that size's own collections, then evaluate.

    `collections` (default both) limits the ingest and the questions to those collections.
    Returns a table (one row per chunk size and collection, plus an "all" row: chunks, hit@k, MRR,
    ingest and search seconds) and the per-question results by chunk size.
    """

    keys = _keys(collections)
    questions = [q for q in (questions if questions is not None else load_rag_qa()) if q.collection in keys]
    docs = docs if docs is not None else build_documents()
    rows, per_size = [], {}
    for size in chunk_sizes:
        ov = sweep_overlap(size, overlap)
        suffix = sweep_suffix(size, ov)
        reports = knowledge.ingest_documents(size=size, overlap=ov, embedder=embedder, client=client,
                                             progress=progress, docs=docs, suffix=suffix, collections=keys)
        stores = knowledge.open_stores(embedder, client, suffix)
        start = time.perf_counter()
        results = evaluate(questions, stores, k=max(ks))
        seconds = time.perf_counter() - start
        per_size[size] = results
        for key in (*keys, "all"):
            subset = [r for r in results if key == "all" or r.collection == key]
            row = {"chunk_size": size, "overlap": ov, "collection": key,
                   "chunks": sum(reports[c].chunks for c in keys) if key == "all" else reports[key].chunks,
                   **metrics(subset, ks)}
            if key == "all":
                row["ingest_seconds"] = round(sum(r.seconds for r in reports.values()), 2)
                row["search_seconds"] = round(seconds, 2)
            rows.append(row)
    return pd.DataFrame(rows), per_size


def failures(results: Sequence[QuestionResult], questions: Sequence[RagQuestion], k: int) -> pd.DataFrame:
    """The questions without a hit in the top k, with what came first instead."""
    by_id = {q.id: q for q in questions}
    rows = []
    for r in results:
        if r.rank is None or r.rank > k:
            q = by_id[r.id]
            rows.append({"id": r.id, "question": q.question, "document": q.document, "page": q.page,
                         "answer_contains": q.answer_contains, "rank": r.rank,
                         "top": f"{r.top_document} p.{r.top_page}" if r.top_document else None})
    return pd.DataFrame(rows, columns=["id", "question", "document", "page", "answer_contains", "rank", "top"])


# ------------------------------------------------------------------------------------------------
# Tables and figures


def documents_table(docs: Sequence[Any]) -> pd.DataFrame:
    """One row per DocumentInfo: document, doc_type, product_code, title, pages, sha256 (first 16)."""
    return pd.DataFrame([{"document": d.document, "doc_type": d.doc_type, "product_code": d.product_code,
                          "title": d.title, "pages": d.pages, "sha256": d.sha256[:16]} for d in docs])


def chunks_by_collection(docs: Iterable[Any], size: int, overlap: int,
                         collections: Iterable[str] | None = None) -> dict[str, list]:
    """The chunks of the documents as the ingest makes them ({collection key: chunks})."""

    pages = knowledge.document_pages(docs)
    return {key: knowledge.document_chunks(pages[key], size, overlap) for key in _keys(collections)}


def chunk_counts(docs: Sequence[Any], sizes: Sequence[int], overlap: int,
                 collections: Iterable[str] | None = None) -> pd.DataFrame:
    """Documents and chunks per chunk size and collection (the sweep's overlap rule), no embedding:
    deterministic for the same documents."""

    keys = _keys(collections)
    pages = knowledge.document_pages(docs)
    rows = []
    for size in sizes:
        ov = sweep_overlap(size, overlap)
        for key in keys:
            chunks = knowledge.document_chunks(pages[key], size, ov)
            body = [len(knowledge.strip_header(c.text)) for c in chunks]
            rows.append({"chunk_size": size, "overlap": ov, "collection": key,
                         "documents": len({c.document for c in chunks}), "chunks": len(chunks),
                         "mean_chars": round(float(np.mean(body)), 1) if body else 0.0})
    return pd.DataFrame(rows, columns=["chunk_size", "overlap", "collection", "documents", "chunks", "mean_chars"])


def chunk_stats(lengths: pd.DataFrame) -> pd.DataFrame:
    """Per collection: documents, chunks and the length distribution (characters) of `chunk_lengths`."""
    rows = []
    for key, group in lengths.groupby("collection", sort=False):
        c = group["chars"]
        rows.append({"collection": key, "documents": group["document"].nunique(), "chunks": len(group),
                     "min": int(c.min()), "p10": int(c.quantile(0.1)), "median": int(c.median()),
                     "mean": round(float(c.mean()), 1), "p90": int(c.quantile(0.9)), "max": int(c.max())})
    return pd.DataFrame(rows, columns=["collection", "documents", "chunks", "min", "p10", "median", "mean", "p90", "max"])


def chunk_lengths(chunks_by_collection: dict[str, Sequence[Any]], header: bool = False) -> pd.DataFrame:
    """Characters per chunk (without the contextual header unless `header`), one row a chunk."""

    rows = []
    for key, chunks in chunks_by_collection.items():
        for c in chunks:
            rows.append({"collection": key, "document": c.document,
                         "chars": len(c.text if header else strip_header(c.text))})
    return pd.DataFrame(rows, columns=["collection", "document", "chars"])


def results_frame(per_size: dict[int, Sequence[QuestionResult]]) -> pd.DataFrame:
    """Per-question ranks by chunk size (long format), for saving next to the summary table."""
    rows = []
    for size, results in per_size.items():
        for r in results:
            d = asdict(r)
            d.pop("retrieved")
            rows.append({"chunk_size": size, **d})
    return pd.DataFrame(rows)

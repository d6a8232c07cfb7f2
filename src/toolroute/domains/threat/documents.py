"""The threat domain's procedure documents: PDFs from `data/procedures.yaml`, one ChromaDB store.

    build_documents(out_dir)              -> [DocumentInfo]      (same data, same bytes; unchanged files kept)
    ingest_documents(embedder=, client=)  -> IngestReport        (incremental: only changed chunks embedded)
    search_procedures("드론 재밍", k=3)    -> [{text, source, document, doc_id, title, section, page, score}]

Ten short synthetic procedures (SOP-01 … SOP-10: 경보 발령, 대드론, 순항미사일, 탄도미사일, 저고도 침투,
요격 승인, 민항기 오인 방지, 풍선, 항공기 침범, 상황 보고) are written with `toolroute.rag.write_pdf`
into `data_dir()/threat/docs`, read back page by page, cut into sentence-aligned chunks and stored in
the collection "threat-procedures". Each chunk's text starts with a header line `[<title> · <section>]`
(the section in force where the chunk starts), so that a question naming a topic finds the document
about it; the header is stripped again from the passages a search returns.

The store is opened lazily: the first search in a process builds the PDFs and ingests them (nothing is
re-embedded when nothing changed). `reset(embedder=, client=, docs_dir=)` points later calls at
another embedder, Chroma client or folder (tests use a hash embedder and a temporary client).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from toolroute.config import data_dir
from toolroute.rag.chunking import Chunk, chunk_pages, document_sentences
from toolroute.rag.lazy import LazyStores
from toolroute.rag.pdf import Page, extract_pages, write_pdf_if_changed
from toolroute.rag.store import DocumentStore, IngestReport
from toolroute.embeddings import get_embedder
from toolroute.chroma import open_client
from toolroute.text import without_spaces

__all__ = [
    "COLLECTION", "DEFAULT_OVERLAP", "DEFAULT_SIZE", "DocumentInfo", "Procedure", "build_documents",
    "default_docs_dir", "document_chunks", "ensure_store", "ingest_documents", "load_procedures",
    "open_store", "reset", "search_procedures",
]

PROCEDURES_PATH = Path(__file__).parent / "data" / "procedures.yaml"
COLLECTION = "threat-procedures"
DEFAULT_SIZE = 300
DEFAULT_OVERLAP = 60
PDF_SUBJECT = "훈련·시뮬레이션용 가상 대응 절차 (실제 작전 지침 아님)"
_HEADER = re.compile(r"^\[[^\n]*\]\n")


@dataclass(frozen=True)
class Procedure:
    """One procedure document as written in procedures.yaml."""

    stem: str
    doc_id: str
    title: str
    sections: tuple[tuple[str, str], ...]

    def text(self) -> str:
        return "\n".join([self.title] + [f"{h}\n{b}" for h, b in self.sections])


@dataclass(frozen=True)
class DocumentInfo:
    """A written PDF: `document` is the file stem (the chunks' `document` metadata)."""

    path: Path
    document: str
    doc_id: str
    title: str
    sha256: str
    pages: int


@lru_cache(maxsize=None)
def load_procedures(path: str | None = None) -> tuple[Procedure, ...]:
    """The procedure documents of procedures.yaml, checked (unique stems and ids, no empty section)."""
    source = Path(path) if path else PROCEDURES_PATH
    raw = yaml.safe_load(source.read_text(encoding="utf-8"))
    docs = []
    for i, item in enumerate(raw.get("documents") or []):
        where = f"{source}: document {item.get('stem', i)}"
        sections = tuple((str(s["heading"]).strip(), str(s["body"]).strip()) for s in item.get("sections") or [])
        if not item.get("title") or not item.get("doc_id") or not sections:
            raise ValueError(f"{where}: needs stem, doc_id, title and at least one section")
        if any(not h or not b for h, b in sections):
            raise ValueError(f"{where}: a section has an empty heading or body")
        docs.append(Procedure(str(item["stem"]), str(item["doc_id"]), str(item["title"]).strip(), sections))
    for key in ("stem", "doc_id", "title"):
        values = [getattr(d, key) for d in docs]
        dupes = sorted({v for v in values if values.count(v) > 1})
        if dupes:
            raise ValueError(f"{source}: duplicate {key} {dupes}")
    if not docs:
        raise ValueError(f"{source}: no documents")
    return tuple(docs)


def default_docs_dir() -> Path:
    return data_dir() / "threat" / "docs"


def build_documents(out_dir: str | os.PathLike | None = None) -> list[DocumentInfo]:
    """Write every procedure as a PDF under `out_dir` (default `data_dir()/threat/docs`).

    A file whose bytes would not change is left untouched, so the incremental ingest sees only real changes.
    """
    out = Path(out_dir) if out_dir is not None else default_docs_dir()
    infos = []
    for proc in load_procedures():
        pdf = write_pdf_if_changed(out / f"{proc.stem}.pdf", proc.title, list(proc.sections),
                                   metadata={"subject": PDF_SUBJECT, "keywords": proc.doc_id})
        infos.append(DocumentInfo(pdf.path, proc.stem, proc.doc_id, proc.title, pdf.sha256, pdf.pages))
    return infos


def _sections(pages: list[Page], chunks: list[Chunk], headings: set[str]) -> list[str]:
    """For each chunk of one document (in order), the section heading in force where it starts."""
    marks, parts, offset = [], [], 0
    for sentence in document_sentences(pages):
        if sentence.text in headings:
            marks.append((offset, sentence.text))
        piece = without_spaces(sentence.text)
        parts.append(piece)
        offset += len(piece)
    text = "".join(parts)
    out, cursor = [], 0
    for chunk in chunks:
        found = text.find(without_spaces(chunk.text)[:60], cursor)
        cursor = found if found >= 0 else cursor
        # Before the first heading there is only the document title: the chunk belongs to section 1.
        out.append(next((title for at, title in reversed(marks) if at <= cursor), marks[0][1] if marks else ""))
    return out


def document_chunks(docs: list[DocumentInfo], size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP,
                    header: bool = True) -> list[Chunk]:
    """Sentence-aligned chunks of the PDFs; metadata doc_id, title, section; `[title · section]` header."""
    by_stem = {p.stem: p for p in load_procedures()}
    out: list[Chunk] = []
    for doc in docs:
        pages = extract_pages(doc.path, metadata={"doc_id": doc.doc_id, "title": doc.title})
        chunks = chunk_pages(pages, size=size, overlap=overlap)
        proc = by_stem.get(doc.document)
        headings = {h for h, _ in proc.sections} if proc else set()
        for chunk, section in zip(chunks, _sections(pages, chunks, headings)):
            label = f"{doc.title} · {section}" if section else doc.title
            text = f"[{label}]\n{chunk.text}" if header else chunk.text
            out.append(Chunk(id=chunk.id, text=text, document=chunk.document, page=chunk.page,
                             page_end=chunk.page_end, index=chunk.index, chunker=chunk.chunker,
                             metadata={**chunk.metadata, "section": section}))
    return out


# ------------------------------------------------------------------------------------------------
# The store


def open_store(embedder: Any = None, client: Any = None, suffix: str = "") -> DocumentStore:
    """The procedures' DocumentStore (e5-small and the default Chroma unless given)."""

    if embedder is None or isinstance(embedder, str):
        embedder = get_embedder(embedder)
    if client is None:
        client = open_client()
    return DocumentStore(COLLECTION + suffix, embedder, client=client)


def ingest_documents(size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP, embedder: Any = None,
                     client: Any = None, progress: bool = True, *, docs_dir: str | Path | None = None,
                     docs: list[DocumentInfo] | None = None, suffix: str = "") -> IngestReport:
    """Build the PDFs and ingest them incrementally (defaults: those set by `reset`)."""
    if docs is None:
        docs = build_documents(docs_dir if docs_dir is not None else (_LAZY.docs_dir or default_docs_dir()))
    if embedder is None and client is None and not suffix:
        store = _default_store()
    else:
        store = open_store(embedder if embedder is not None else _LAZY.embedder,
                           client if client is not None else _LAZY.client, suffix)
    return store.ingest(document_chunks(docs, size, overlap), progress=progress)


_LAZY: LazyStores[DocumentStore] = LazyStores(open_store)
reset = _LAZY.reset  # reset(embedder, client, docs_dir): where the default store lives (tests redirect it)


def _default_store() -> DocumentStore:
    return _LAZY.get()


def ensure_store() -> DocumentStore:
    """The default store, the PDFs built and ingested once per process (a no-op ingest when unchanged)."""
    return _LAZY.ensure(lambda: ingest_documents(progress=False))


def _source(meta: dict[str, Any], page: int) -> str:
    end = int(meta.get("page_end", page))
    pages = f"p.{page}" if end == page else f"p.{page}-{end}"
    return f"{meta.get('title') or meta.get('document', '')} {pages}"


def search_procedures(query: str, k: int = 3, *, store: DocumentStore | None = None) -> list[dict[str, Any]]:
    """The `k` passages most similar to `query`, each with its source ('<title> p.N') and section."""
    store = store or ensure_store()
    out = []
    for p in store.search(query, k=k):
        meta = p.metadata
        out.append({
            "text": _HEADER.sub("", p.text, count=1),
            "source": _source(meta, p.page),
            "document": p.document,
            "doc_id": meta.get("doc_id"),
            "title": meta.get("title", p.document),
            "section": meta.get("section", ""),
            "page": p.page,
            "score": round(float(p.score), 4),
        })
    return out

"""The insurance documents in two searchable stores: the 약관 and the product / company information.

    ingest_documents(size=500, overlap=100)   -> {"terms": IngestReport, "product_info": IngestReport}
    search_terms("부활 기한", k=5)             -> [{text, source, document, page, page_end, score, ...}]
    search_product_info("가입 나이", product_code="B001")

Collections: "insurance-terms" holds the 표준약관; "insurance-product-info" holds the 12 상품요약서
and the 회사 정보 document. Each chunk carries the metadata document (file stem), page (where it
starts), page_end, doc_type, product_code (product summaries only), title and section.

Contextual chunk header: every chunk's text starts with one line `[<document title> · <section>]`
(e.g. `[첫날부터암보험 상품요약서 · 2. 가입 조건]`, `[한결생명 보장성보험 표준약관 · 제21조 (…)]`),
the section being the heading in force where the chunk starts. Twelve product summaries share
one layout, so without the product's name in the chunk a question such as "첫날부터암보험 가입
나이" could not tell their 가입 조건 sections apart. The header is embedded with the text and is
stripped again from the passages that searches return (`text`; the header is in `section`/`source`).
A chunk is therefore up to `size` characters plus its header.

Incremental: `ingest_documents` rebuilds the PDFs (unchanged files are not rewritten) and lets
`DocumentStore.ingest` embed only what changed. Searching opens the stores lazily and, when a
store has never been built, builds and ingests it first (`ensure_stores`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

from toolroute.domains.insurance.documents import DocumentInfo, build_documents, default_docs_dir
from toolroute.rag.chunking import Chunk, chunk_pages, document_sentences
from toolroute.rag.lazy import LazyStores
from toolroute.rag.pdf import Page, extract_pages
from toolroute.rag.store import DocumentStore, IngestReport, Passage
from toolroute.embeddings import get_embedder
from toolroute.chroma import open_client
from toolroute.text import without_spaces

__all__ = [
    "COLLECTIONS", "DEFAULT_OVERLAP", "DEFAULT_SIZE", "collection_of", "document_chunks", "document_pages",
    "ensure_stores", "ingest_documents", "open_stores", "passage_dict", "reset", "search_product_info",
    "search_terms", "section_headings", "strip_header",
]

DEFAULT_SIZE = 500
DEFAULT_OVERLAP = 100
# collection key (as in rag_qa.jsonl) -> Chroma store name
COLLECTIONS: dict[str, str] = {"terms": "insurance-terms", "product_info": "insurance-product-info"}

# A heading line: an article or chapter of the 약관 ("제21조 (…)", "제6관 …"), or a numbered section
# of a product summary / company document ("2. 가입 조건"); short and not ending like a sentence.
_HEADING = re.compile(r"^(?:제\d+[조관]\s.+|\d{1,2}\.\s\S.*|문의)$")
_HEADING_MAX = 45
_SENTENCE_END = re.compile(r"[.?!。다]$")
_HEADER = re.compile(r"^\[[^\n]*\]\n")


def collection_of(doc_type: str) -> str:
    """The collection key of a document type: the 약관 → "terms", everything else → "product_info"."""
    return "terms" if doc_type == "terms" else "product_info"


def _is_heading(line: str) -> bool:
    return len(line) <= _HEADING_MAX and bool(_HEADING.match(line)) and not _SENTENCE_END.search(line)


def section_headings(pages: Iterable[Page]) -> list[tuple[int, str]]:
    """The heading lines of one document's pages, as (page, heading) in order."""
    out = []
    for page in sorted(pages, key=lambda p: p.page):
        for line in page.text.splitlines():
            line = " ".join(line.split())
            if line and _is_heading(line):
                out.append((page.page, line))
    return out


def _sections_of_chunks(pages: list[Page], chunks: list[Chunk]) -> list[str]:
    """For each chunk (of one document, in order), the heading in force where it starts."""
    sentences = document_sentences(pages)
    full, marks = [], []  # compact text; (offset, heading) of each heading sentence
    offset = 0
    for s in sentences:
        if _is_heading(s.text):
            marks.append((offset, s.text))
        piece = without_spaces(s.text)
        full.append(piece)
        offset += len(piece)
    text = "".join(full)
    out, cursor = [], 0
    for chunk in chunks:
        probe = without_spaces(chunk.text)[:60]
        found = text.find(probe, cursor)
        if found < 0:
            found = text.find(probe)
        if found >= 0:
            cursor = found
        position = found if found >= 0 else cursor
        heading = ""
        for mark_offset, title in marks:
            if mark_offset <= position:
                heading = title
            else:
                break
        out.append(heading)
    return out


def document_pages(docs: Iterable[DocumentInfo]) -> dict[str, list[Page]]:
    """The pages of the documents by collection key, each page tagged with doc_type, product_code, title."""
    out: dict[str, list[Page]] = {key: [] for key in COLLECTIONS}
    for doc in docs:
        meta = {"doc_type": doc.doc_type, "title": doc.title}
        if doc.product_code:
            meta["product_code"] = doc.product_code
        out[collection_of(doc.doc_type)].extend(extract_pages(doc.path, metadata=meta))
    return out


def document_chunks(pages: list[Page], size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP,
                    header: bool = True) -> list[Chunk]:
    """Sentence-aligned chunks of the pages, each with its section in the metadata and (by default)
    the contextual header line `[title · section]` in front of its text."""
    chunks = chunk_pages(pages, size=size, overlap=overlap)
    by_doc: dict[str, list[Page]] = {}
    for page in pages:
        by_doc.setdefault(page.document, []).append(page)
    out: list[Chunk] = []
    for document, doc_pages in by_doc.items():
        doc_chunks = [c for c in chunks if c.document == document]
        for chunk, section in zip(doc_chunks, _sections_of_chunks(doc_pages, doc_chunks)):
            title = chunk.metadata.get("title", document)
            meta = {**chunk.metadata, "section": section}
            text = f"[{title} · {section}]\n{chunk.text}" if header and section else (
                f"[{title}]\n{chunk.text}" if header else chunk.text)
            out.append(Chunk(id=chunk.id, text=text, document=chunk.document, page=chunk.page,
                             page_end=chunk.page_end, index=chunk.index, chunker=chunk.chunker, metadata=meta))
    return out


def strip_header(text: str) -> str:
    """A chunk's text without its contextual header line."""
    return _HEADER.sub("", text, count=1)


# ------------------------------------------------------------------------------------------------
# Stores


def open_stores(embedder: Any = None, client: Any = None, suffix: str = "") -> dict[str, DocumentStore]:
    """The two DocumentStores ("terms", "product_info"); `suffix` names a separate family (e.g. a sweep)."""

    if embedder is None or isinstance(embedder, str):
        embedder = get_embedder(embedder)
    if client is None:
        client = open_client()
    return {key: DocumentStore(name + suffix, embedder, client=client) for key, name in COLLECTIONS.items()}


_LAZY: LazyStores[dict[str, DocumentStore]] = LazyStores(open_stores)
reset = _LAZY.reset  # reset(embedder, client, docs_dir): where the default stores live (tests redirect it)


def _default_stores() -> dict[str, DocumentStore]:
    return _LAZY.get()


def ingest_documents(size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP, embedder: Any = None,
                     client: Any = None, progress: bool = True, *, docs_dir: str | Path | None = None,
                     docs: list[DocumentInfo] | None = None, suffix: str = "",
                     header: bool = True, collections: Iterable[str] | None = None) -> dict[str, IngestReport]:
    """Build the PDFs (unchanged ones are not rewritten) and ingest them incrementally into both stores.

    `embedder` / `client` default to those set by `reset` (else e5-small and the default Chroma);
    `docs` skips the build and ingests these documents; `suffix` ingests into a separate pair of
    collections (e.g. "-s300-o100" for a chunk-size sweep) so the live stores are left alone;
    `collections` (keys of COLLECTIONS, default both) ingests only those stores.
    """
    keys = list(COLLECTIONS) if collections is None else list(dict.fromkeys(collections))
    unknown = [k for k in keys if k not in COLLECTIONS]
    if unknown or not keys:
        raise ValueError(f"collections must be a non-empty subset of {list(COLLECTIONS)}, got {keys}")
    if docs is None:
        docs = build_documents(docs_dir if docs_dir is not None else (_LAZY.docs_dir or default_docs_dir()))
    use_defaults = embedder is None and client is None and not suffix
    if use_defaults:
        stores = _default_stores()
    else:
        stores = open_stores(embedder if embedder is not None else _LAZY.embedder,
                             client if client is not None else _LAZY.client, suffix)
    pages = document_pages(docs)
    reports = {}
    for key in keys:
        reports[key] = stores[key].ingest(document_chunks(pages[key], size, overlap, header=header), progress=progress)
    if use_defaults and len(keys) == len(COLLECTIONS):
        _LAZY.ensured = True
    return reports


def ensure_stores() -> dict[str, DocumentStore]:
    """The default stores, built and ingested first when either was never built (once per process)."""
    def ingest_if_missing() -> None:
        if not all(store.exists() for store in _LAZY.get().values()):
            ingest_documents(progress=False)

    return _LAZY.ensure(ingest_if_missing)


# ------------------------------------------------------------------------------------------------
# Search


def _source(meta: dict, page: int) -> str:
    title = meta.get("title") or meta.get("document", "")
    end = int(meta.get("page_end", page))
    pages = f"p.{page}" if end == page else f"p.{page}-{end}"
    return f"{title} {pages}"


def passage_dict(p: Passage) -> dict[str, Any]:
    """A retrieved passage as a plain dict: text (header stripped), source ('<title> p.N'), page, score …"""
    meta = p.metadata
    return {
        "text": strip_header(p.text),
        "source": _source(meta, p.page),
        "document": p.document,
        "title": meta.get("title", p.document),
        "section": meta.get("section", ""),
        "page": p.page,
        "page_end": int(meta.get("page_end", p.page)),
        "doc_type": meta.get("doc_type"),
        "product_code": meta.get("product_code"),
        "score": round(float(p.score), 4),
    }


def search_terms(query: str, k: int = 5, *, store: DocumentStore | None = None) -> list[dict[str, Any]]:
    """Passages of the 표준약관 most similar to `query`."""
    store = store or ensure_stores()["terms"]
    return [passage_dict(p) for p in store.search(query, k=k)]


def search_product_info(query: str, k: int = 5, product_code: str | None = None, *,
                        store: DocumentStore | None = None) -> list[dict[str, Any]]:
    """Passages of the product summaries and the company document; `product_code` keeps one product's."""
    store = store or ensure_stores()["product_info"]
    where = {"product_code": product_code} if product_code else None
    return [passage_dict(p) for p in store.search(query, k=k, where=where)]

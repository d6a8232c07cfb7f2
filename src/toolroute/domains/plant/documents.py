"""The plant's maintenance documents: PDFs written from `data/manuals.yaml`, one ChromaDB store.

    build_documents(out_dir)        -> [DocumentInfo]  (deterministic PDFs; unchanged files untouched)
    ingest(embedder=…, client=…)    -> IngestReport    (incremental, via toolroute.rag.DocumentStore)
    search("E-042 조치", k=3, model="HL-2600", doc_type="alarm_table") -> [passage dict]

Eight documents: the HL-2600 lathe and VM-850 machining-centre manuals, the SC-37 compressor
manual, the coolant-system procedure, the spindle-bearing procedure, the alarm code table, the
LOTO safety procedure and the preventive-maintenance schedule. Each chunk carries its document's
title, doc_type, section (the numbered heading in force where the chunk starts) and one boolean
`for_<model>` per machine model it applies to (common documents apply to all), so a search can be
narrowed to one machine or one kind of document. A chunk's text starts with the header line
`[<title> · <section>]` (embedded with the text, stripped from the passages returned).

The store is opened lazily and built on first use; `reset(embedder=…, client=…, docs_dir=…)`
chooses the embedder, Chroma client and PDF folder (tests pass a fast embedder and a temporary
client), else e5-small and the default Chroma under `data_dir()`.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from toolroute.config import data_dir
from toolroute.domains.plant.graph import DATA_DIR, models
from toolroute.rag import Chunk, DocumentStore, IngestReport, Page, chunk_pages, document_sentences, extract_pages
from toolroute.rag.lazy import LazyStores
from toolroute.rag.pdf import write_pdf_if_changed
from toolroute.embeddings import get_embedder
from toolroute.chroma import open_client

__all__ = [
    "COLLECTION", "DOC_TYPES", "DocumentInfo", "build_documents", "default_docs_dir", "document_chunks",
    "document_specs", "ensure_store", "ingest", "model_key", "reset", "search",
]

COLLECTION = "plant-manuals"
DEFAULT_SIZE = 500
DEFAULT_OVERLAP = 100
DOC_TYPES: dict[str, str] = {
    "manual": "정비 매뉴얼",
    "procedure": "작업 절차서",
    "alarm_table": "알람 조치표",
    "safety": "안전 작업 절차",
    "schedule": "예방정비 주기표",
}
_HEADING = re.compile(r"^\d{1,2}\.\s\S.*$")
_HEADER = re.compile(r"^\[[^\n]*\]\n")


@dataclass(frozen=True)
class DocSpec:
    stem: str
    title: str
    doc_type: str
    scope: tuple[str, ...]
    sections: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class DocumentInfo:
    path: Path
    title: str
    doc_type: str
    scope: tuple[str, ...]
    sha256: str

    @property
    def document(self) -> str:
        return self.path.stem


def model_key(model: str) -> str:
    """The chunk metadata key of a machine model: HL-2600 → for_HL2600."""
    return "for_" + re.sub(r"[^A-Za-z0-9]", "", model)


@lru_cache(maxsize=1)
def document_specs() -> tuple[DocSpec, ...]:
    """The documents as written in manuals.yaml (validated: known doc_type and models, numbered headings)."""
    path = DATA_DIR / "manuals.yaml"
    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    known_models = set(models())
    specs = []
    for raw in data["documents"]:
        where = f"{path.name}: document {raw.get('stem')!r}"
        if raw.get("doc_type") not in DOC_TYPES:
            raise ValueError(f"{where}: doc_type must be one of {list(DOC_TYPES)}")
        scope = tuple(raw.get("scope") or ["common"])
        unknown = [m for m in scope if m != "common" and m not in known_models]
        if unknown:
            raise ValueError(f"{where}: unknown model(s) {unknown}")
        sections = []
        for sec in raw["sections"]:
            if not _HEADING.match(sec["heading"]):
                raise ValueError(f"{where}: heading {sec['heading']!r} must be numbered ('1. 개요')")
            sections.append((sec["heading"], sec["body"]))
        specs.append(DocSpec(raw["stem"], raw["title"], raw["doc_type"], scope, tuple(sections)))
    stems = [s.stem for s in specs]
    if len(set(stems)) != len(stems):
        raise ValueError(f"{path.name}: duplicate document stems")
    return tuple(specs)


def default_docs_dir() -> Path:
    return data_dir() / "plant" / "docs"


def build_documents(out_dir: str | os.PathLike | None = None) -> list[DocumentInfo]:
    """Write every document as a PDF under `out_dir` (default `data_dir()/plant/docs`); a file whose
    bytes would not change is left untouched."""
    out = Path(out_dir) if out_dir is not None else default_docs_dir()
    infos = []
    for spec in document_specs():
        meta = {"subject": f"{DOC_TYPES[spec.doc_type]} ({', '.join(spec.scope)})", "author": "한빛정밀 설비보전팀",
                "keywords": f"{spec.doc_type},{','.join(spec.scope)}"}
        pdf = write_pdf_if_changed(out / f"{spec.stem}.pdf", spec.title, list(spec.sections), metadata=meta)
        infos.append(DocumentInfo(pdf.path, spec.title, spec.doc_type, spec.scope, pdf.sha256))
    return infos


# ------------------------------------------------------------------------------------------------
# Chunks


def _page_metadata(info: DocumentInfo) -> dict[str, Any]:
    meta: dict[str, Any] = {"title": info.title, "doc_type": info.doc_type}
    for model in models():
        meta[model_key(model)] = "common" in info.scope or model in info.scope
    return meta


def _section_pages(pages: list[Page], headings: set[str]) -> list[tuple[str, list[Page]]]:
    """The document's sentences cut at its headings: (heading, pages holding that section's lines).

    The title lines before the first heading go with the first section, so no chunk lacks a section."""
    sections: list[tuple[str, list[tuple[int, str]]]] = []
    lead: list[tuple[int, str]] = []
    for s in document_sentences(pages):
        if s.text in headings:
            sections.append((s.text, lead + [(s.page, s.text)]))
            lead = []
        elif sections:
            sections[-1][1].append((s.page, s.text))
        else:
            lead.append((s.page, s.text))
    if lead:
        sections.append(("", lead))
    out = []
    for index, (heading, lines) in enumerate(sections):
        by_page: dict[int, list[str]] = {}
        for page, text in lines:
            by_page.setdefault(page, []).append(text)
        meta = {**pages[0].metadata, "section": heading}
        out.append((heading, [Page(f"{pages[0].document}#{index:02d}", page, "\n".join(texts), dict(meta))
                              for page, texts in sorted(by_page.items())]))
    return out


def document_chunks(docs: list[DocumentInfo], size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[Chunk]:
    """Sentence-aligned chunks of the PDFs, never across a section, each with its section in the
    metadata and the `[title · section]` header in front of its text."""
    headings = {h for spec in document_specs() for h, _ in spec.sections}
    out: list[Chunk] = []
    for info in docs:
        pages = extract_pages(info.path, metadata=_page_metadata(info))
        index = 0
        for section, section_pages in _section_pages(pages, headings):
            for chunk in chunk_pages(section_pages, size=size, overlap=overlap):
                header = f"[{info.title} · {section}]" if section else f"[{info.title}]"
                digest = hashlib.sha256(chunk.text.encode()).hexdigest()[:12]
                out.append(Chunk(id=f"{info.document}:p{chunk.page}:c{index}:{digest}", text=f"{header}\n{chunk.text}",
                                 document=info.document, page=chunk.page, page_end=chunk.page_end, index=index,
                                 chunker=chunk.chunker, metadata=dict(chunk.metadata)))
                index += 1
    return out


# ------------------------------------------------------------------------------------------------
# Store


def _open_store(embedder: Any = None, client: Any = None) -> DocumentStore:
    if embedder is None or isinstance(embedder, str):
        embedder = get_embedder(embedder)
    if client is None:
        client = open_client()
    return DocumentStore(COLLECTION, embedder, client=client)


_LAZY: LazyStores[DocumentStore] = LazyStores(_open_store)
reset = _LAZY.reset  # reset(embedder, client, docs_dir): where the store lives (tests redirect it)


def _store() -> DocumentStore:
    return _LAZY.get()


def ingest(progress: bool = False, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> IngestReport:
    """Build the PDFs and make the store hold exactly their chunks (only changed ones are embedded)."""
    docs = build_documents(_LAZY.docs_dir or default_docs_dir())
    report = _store().ingest(document_chunks(docs, size, overlap), progress=progress)
    _LAZY.ensured = True
    return report


def ensure_store() -> DocumentStore:
    """The store, built first when it never was (checked once per process)."""
    def ingest_if_missing() -> None:
        if not _LAZY.get().exists():
            ingest()

    return _LAZY.ensure(ingest_if_missing)


def _where(model: str | None, doc_type: str | None) -> dict[str, Any] | None:
    where: dict[str, Any] = {}
    if model:
        where[model_key(model)] = True
    if doc_type:
        where["doc_type"] = doc_type
    return where or None


def search(query: str, k: int = 3, model: str | None = None, doc_type: str | None = None) -> list[dict[str, Any]]:
    """The `k` passages most similar to `query`, optionally only of documents for `model` / of `doc_type`."""
    store = ensure_store()
    out = []
    for p in store.search(query, k=k, where=_where(model, doc_type)):
        meta = p.metadata
        end = int(meta.get("page_end", p.page))
        pages = f"p.{p.page}" if end == p.page else f"p.{p.page}-{end}"
        title = meta.get("title", p.document)
        out.append({
            "text": _HEADER.sub("", p.text, count=1),
            "source": f"{title} {pages}",
            "document": p.document,
            "title": title,
            "section": meta.get("section", ""),
            "doc_type": meta.get("doc_type"),
            "page": p.page,
            "page_end": end,
            "score": round(float(p.score), 4),
        })
    return out

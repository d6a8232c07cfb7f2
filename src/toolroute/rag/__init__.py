"""Generic RAG: deterministic Korean PDFs, page extraction, sentence chunking, a ChromaDB store.

    write_pdf(path, title, sections)      -> Path          (byte-identical for the same input)
    extract_pages(path, metadata=...)     -> list[Page]
    chunk_pages(pages, size=500, overlap=100) -> list[Chunk]
    DocumentStore("terms", embedder).ingest(chunks)  -> IngestReport (incremental)
    DocumentStore("terms", embedder).search(query, k=5, where=...) -> list[Passage]
"""

from toolroute.rag.chunking import Chunk, chunk_pages, chunker_spec, document_sentences, split_sentences
from toolroute.rag.pdf import Page, PdfError, extract_pages, pdf_pages, write_pdf
from toolroute.rag.store import DocumentStore, IngestReport, Passage

__all__ = [
    "Chunk", "DocumentStore", "IngestReport", "Page", "Passage", "PdfError",
    "chunk_pages", "chunker_spec", "document_sentences", "extract_pages", "pdf_pages", "split_sentences",
    "write_pdf",
]

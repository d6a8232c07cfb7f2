"""Korean sentence splitting and sentence-aligned chunking of pages.

A sentence ends at `.`, `?`, `!` (and their full-width forms, `…`) followed by a space or the
end of a line, and at every line break (list items, headings). A period is NOT a sentence end
inside a number (`3.5`, `1.000`), after an item number or letter (`1.`, `가.`, `ii.`), or when
no space follows it, except between two Hangul syllables (`합니다.다만`, `네!그렇죠`).

Chunks hold whole sentences up to `size` characters (a sentence longer than `size` alone is cut
at spaces, or hard when it has none), start with the whole trailing sentences of the previous
chunk (about `overlap` characters) and never cross documents. A sentence cut by a page break
(a page whose last line has no sentence end, and a next page that does not start with an
article, item number or bullet) is joined with the start of the next page.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from toolroute.rag.pdf import Page

__all__ = ["Chunk", "Sentence", "split_sentences", "document_sentences", "chunk_pages", "chunker_spec"]

CHUNKER_VERSION = "sent-v1"
_TERMINATORS = ".?!。？！…"
_CLOSERS = "\"'”’)]}」』〉》"
_ENUMERATOR = re.compile(r"^[(\[]?(?:\d{1,3}|[A-Za-z]|[가-힣]|[ivxlIVXL]{1,5}|[①-⑳])$")
# A line that starts like this begins something new (article, item, bullet), not a continuation.
_NEW_START = re.compile(r"^(?:제\s*\d+\s*[조장절관항]|\(?\d{1,3}[.)]|[가-하][.)]|[①-⑳]|[■□●○•◦▶▷※\-–·*])")
_SENTENCE_END = re.compile(rf"[{re.escape(_TERMINATORS)}][{re.escape(_CLOSERS)}]*$")
# Metadata keys a chunk sets itself; extra metadata may not override them.
RESERVED_KEYS = frozenset({"document", "page", "page_end", "chunk_index", "doc_hash", "chunker"})


def _is_hangul(ch: str) -> bool:
    return "가" <= ch <= "힣"


def _split_line(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    n = len(line)
    i = 0
    while i < n:
        ch = line[i]
        if ch not in _TERMINATORS:
            i += 1
            continue
        end = i + 1
        while end < n and line[end] in _TERMINATORS:  # "?!", "..."
            end += 1
        while end < n and line[end] in _CLOSERS:  # 말했다."  (끝)
            end += 1
        nxt = line[end] if end < n else ""
        boundary = nxt == "" or nxt.isspace()
        prev = line[i - 1] if i else ""
        if not boundary:
            # "3.5", "v1.2", "a.b": only Hangul.Hangul ("합니다.다만", "네!그렇습니다") ends a sentence.
            boundary = _is_hangul(prev) and _is_hangul(nxt) and line[end - 1] in _TERMINATORS
        elif ch == "." and end == i + 1:
            if _ENUMERATOR.match(line[start:i].split()[-1] if line[start:i].split() else ""):
                boundary = False  # "1. 암진단비", "가. 입원", "ii. 통원"
        if boundary:
            piece = line[start:end].strip()
            if piece:
                out.append(piece)
            start = end
        i = end
    rest = line[start:].strip()
    if rest:
        out.append(rest)
    return out


def split_sentences(text: str) -> list[str]:
    """Korean-aware sentence split; every line break ends a sentence (items, headings)."""
    sentences: list[str] = []
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            sentences.extend(_split_line(line))
    return sentences


@dataclass(frozen=True)
class Sentence:
    text: str
    page: int
    new_line: bool  # starts a line in the source (joined to the previous one with "\n", else " ")


def document_sentences(pages: Iterable[Page]) -> list[Sentence]:
    """The sentences of one document's pages, in page order, a sentence cut by a page break mended."""
    out: list[Sentence] = []
    for page in sorted(pages, key=lambda p: p.page):
        first = True
        for line in page.text.splitlines():
            line = " ".join(line.split())
            if not line:
                continue
            for j, sentence in enumerate(_split_line(line)):
                if (first and out and out[-1].page < page.page and not _SENTENCE_END.search(out[-1].text)
                        and not _NEW_START.match(sentence)):
                    # The previous page ended mid-sentence: this is its continuation.
                    prev = out.pop()
                    out.append(Sentence(f"{prev.text} {sentence}", prev.page, prev.new_line))
                else:
                    out.append(Sentence(sentence, page.page, j == 0))
                first = False
    return out


@dataclass(frozen=True)
class Chunk:
    """A run of whole sentences from one document; `page` is where it starts, `page_end` where it ends."""

    id: str
    text: str
    document: str
    page: int
    page_end: int
    index: int
    chunker: str
    metadata: dict[str, Any] = field(default_factory=dict)


def chunker_spec(size: int, overlap: int) -> str:
    """The chunking settings as one string (stored with chunks; a change means re-chunked text)."""
    return f"{CHUNKER_VERSION}:size={size}:overlap={overlap}"


def _validate(size: int, overlap: int) -> None:
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise ValueError(f"size must be a positive integer, got {size!r}")
    if not isinstance(overlap, int) or isinstance(overlap, bool) or overlap < 0:
        raise ValueError(f"overlap must be a non-negative integer, got {overlap!r}")
    if overlap >= size:
        raise ValueError(f"overlap ({overlap}) must be smaller than size ({size})")


def _cut(sentence: Sentence, size: int) -> list[Sentence]:
    """A sentence longer than `size`, cut at the last space of each window (hard when there is none)."""
    pieces: list[Sentence] = []
    text = sentence.text
    new_line = sentence.new_line
    while len(text) > size:
        cut = text.rfind(" ", 0, size + 1)
        if cut <= size // 2:
            cut = size
        pieces.append(Sentence(text[:cut].strip(), sentence.page, new_line))
        text = text[cut:].strip()
        new_line = False
    if text:
        pieces.append(Sentence(text, sentence.page, new_line))
    return pieces


def _join(units: list[Sentence]) -> str:
    parts = []
    for i, u in enumerate(units):
        if i:
            parts.append("\n" if u.new_line else " ")
        parts.append(u.text)
    return "".join(parts)


def _length(units: list[Sentence]) -> int:
    return sum(len(u.text) for u in units) + max(0, len(units) - 1)


def _overlap_units(units: list[Sentence], overlap: int) -> list[Sentence]:
    """The whole trailing sentences whose total length is nearest to `overlap` (never all of them)."""
    best, best_gap = 0, overlap
    total = 0
    for k in range(1, len(units)):
        total += len(units[-k].text) + (1 if k > 1 else 0)
        gap = abs(total - overlap)
        if gap < best_gap:
            best, best_gap = k, gap
        if total >= overlap:
            break
    return units[len(units) - best:] if best else []


def _clean_metadata(meta: Mapping[str, Any], where: str) -> dict[str, Any]:
    out = {}
    for key, value in meta.items():
        if key in RESERVED_KEYS:
            raise ValueError(f"{where}: metadata key '{key}' is reserved ({sorted(RESERVED_KEYS)})")
        if value is None:
            continue
        if not isinstance(value, (str, int, float, bool)):
            raise ValueError(f"{where}: metadata '{key}' must be str, int, float or bool, got {type(value).__name__}")
        out[str(key)] = value
    return out


def chunk_pages(pages: Iterable[Page], size: int = 500, overlap: int = 100, *,
                metadata: Mapping[str, Any] | None = None) -> list[Chunk]:
    """Sentence-aligned chunks of at most `size` characters, per document, in document order.

    Each chunk repeats the whole trailing sentences of the previous chunk of its document whose
    length is nearest to `overlap` (so under 2 x overlap; none when even one is too long).
    Extra metadata (`metadata` for all chunks, each page's own `Page.metadata` on top) is
    passed through to every chunk of a document (the first page's metadata wins).
    """
    _validate(size, overlap)
    spec = chunker_spec(size, overlap)
    base = _clean_metadata(metadata or {}, "chunk_pages")
    by_doc: dict[str, list[Page]] = {}
    for page in pages:
        by_doc.setdefault(page.document, []).append(page)
    chunks: list[Chunk] = []
    for document, doc_pages in by_doc.items():
        seen = [p.page for p in doc_pages]
        if len(set(seen)) != len(seen):
            raise ValueError(f"document '{document}' has duplicate page numbers {sorted(seen)}")
        doc_pages.sort(key=lambda p: p.page)
        meta = {**base, **_clean_metadata(doc_pages[0].metadata, f"document '{document}'")}
        units = [piece for s in document_sentences(doc_pages) for piece in _cut(s, size)]
        groups: list[list[Sentence]] = []
        current: list[Sentence] = []
        fresh = 0  # sentences in `current` that are not overlap
        for unit in units:
            if current and _length(current + [unit]) > size:
                if fresh:
                    groups.append(current)
                    current = _overlap_units(current, overlap)
                while current and _length(current + [unit]) > size:
                    current = current[1:]
                fresh = 0
            current = current + [unit]
            fresh += 1
        if current and fresh:
            groups.append(current)
        for index, group in enumerate(groups):
            text = _join(group)
            digest = hashlib.sha256(text.encode()).hexdigest()[:12]
            chunks.append(Chunk(
                id=f"{document}:p{group[0].page}:c{index}:{digest}", text=text, document=document,
                page=group[0].page, page_end=group[-1].page, index=index, chunker=spec, metadata=dict(meta),
            ))
    return chunks

"""Deterministic Korean PDFs (PyMuPDF, built-in CJK font) and page-wise text extraction.

`write_pdf` lays out a title, section headings and paragraphs on A4 pages with the built-in
Korean font (`pymupdf.Font("korea")`, embedded as a subset), wraps lines at spaces (hard-wraps a
word only when it alone is wider than the line), breaks pages (a heading is never left alone at
the bottom of a page) and numbers pages in the footer. The same input gives byte-identical files:
the Info dates are fixed, the trailer /ID is derived from the content instead of being random
(`no_new_id=True` keeps it), and the file is written atomically (temp file + rename).
`write_pdf_if_changed` leaves a file that already holds those bytes untouched, and says so.

`extract_pages` reads any PDF back one page at a time: a paragraph becomes one line (its wrapped
lines joined with a space), whitespace is normalised and footer/header page numbers are dropped,
so the sentences written come back as written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import pymupdf

__all__ = ["Page", "PdfError", "WrittenPdf", "write_pdf", "write_pdf_if_changed", "extract_pages", "FIXED_DATE"]

# A4 in points and the layout (points).
PAGE_RECT = pymupdf.paper_rect("a4")
MARGIN_X = 62.0
MARGIN_TOP = 64.0
MARGIN_BOTTOM = 66.0
FOOTER_BASELINE = PAGE_RECT.height - 34.0
TITLE_SIZE = 18.0
HEADING_SIZE = 13.0
BODY_SIZE = 10.5
FOOTER_SIZE = 9.0
LEADING = 1.55  # line advance as a multiple of the font size
PARAGRAPH_GAP = 0.7  # extra space between paragraphs, in body lines (MuPDF then starts a new block)
HEADING_GAP_BEFORE = 14.0
HEADING_GAP_AFTER = 5.0
TITLE_GAP_AFTER = 20.0
BODY_COLOR = (0, 0, 0)
HEADING_COLOR = (0.05, 0.2, 0.45)
FOOTER_COLOR = (0.35, 0.35, 0.35)

FIXED_DATE = "D:20240101000000+00'00'"  # creation/modification date unless metadata gives one
STANDARD_KEYS = ("author", "subject", "keywords", "creator", "producer", "creationDate", "modDate")
_PAGE_NUMBER = re.compile(r"^[-–—(\[]?\s*(?:page\s*)?\d{1,4}\s*(?:/\s*\d{1,4}|of\s*\d{1,4})?\s*[-–—)\]]?$", re.I)
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")


class PdfError(ValueError):
    """A file that is not a readable PDF (the message names the file)."""


@dataclass(frozen=True)
class Page:
    """The text of one PDF page: `document` is the file stem, `page` is 1-based."""

    document: str
    page: int
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


# ----- writing ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Line:
    text: str
    x: float
    y: float  # baseline
    size: float
    kind: str  # "title" | "heading" | "body"


def _font() -> pymupdf.Font:
    return pymupdf.Font("korea")


def _clean(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _wrap(text: str, font: pymupdf.Font, size: float, width: float) -> list[str]:
    """Greedy wrap at spaces; a single word wider than the line is split by characters."""
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        if font.text_length(candidate, fontsize=size) <= width:
            current = candidate
            continue
        if current:
            lines.append(current)
            current = ""
        while font.text_length(word, fontsize=size) > width:  # hard wrap of an over-long word
            cut = 1
            while cut < len(word) and font.text_length(word[:cut + 1], fontsize=size) <= width:
                cut += 1
            lines.append(word[:cut])
            word = word[cut:]
        current = word
    if current:
        lines.append(current)
    return lines


def _paragraphs(body: str) -> list[str]:
    """Every non-empty line of a section body is a paragraph (list items stay one per line)."""
    return [p for p in (_clean(line) for line in body.splitlines()) if p]


def _layout(title: str, sections: list[tuple[str, str]], font: pymupdf.Font) -> list[list[_Line]]:
    width = PAGE_RECT.width - 2 * MARGIN_X
    bottom = PAGE_RECT.height - MARGIN_BOTTOM
    body_adv = BODY_SIZE * LEADING
    pages: list[list[_Line]] = [[]]
    y = MARGIN_TOP  # top of the next line box

    def new_page() -> None:
        nonlocal y
        pages.append([])
        y = MARGIN_TOP

    def put(text: str, size: float, kind: str, centered: bool = False) -> None:
        nonlocal y
        adv = size * LEADING
        if y + adv > bottom and pages[-1]:
            new_page()
        x = MARGIN_X + (width - font.text_length(text, fontsize=size)) / 2 if centered else MARGIN_X
        pages[-1].append(_Line(text, x, y + size * 1.1, size, kind))  # baseline inside the line box
        y += adv

    title = _clean(title)
    if title:
        for line in _wrap(title, font, TITLE_SIZE, width):
            put(line, TITLE_SIZE, "title", centered=True)
        y += TITLE_GAP_AFTER
    for heading, body in sections:
        heading = _clean(heading)
        paragraphs = [_wrap(p, font, BODY_SIZE, width) for p in _paragraphs(body)]
        if heading:
            head_lines = _wrap(heading, font, HEADING_SIZE, width)
            if pages[-1]:
                y += HEADING_GAP_BEFORE
            # Keep the heading with (up to) the first two lines of its text.
            need = len(head_lines) * HEADING_SIZE * LEADING + HEADING_GAP_AFTER
            need += min(2, len(paragraphs[0]) if paragraphs else 0) * body_adv
            if y + need > bottom and pages[-1]:
                new_page()
            for line in head_lines:
                put(line, HEADING_SIZE, "heading")
            y += HEADING_GAP_AFTER
        for i, lines in enumerate(paragraphs):
            if i:
                y += body_adv * PARAGRAPH_GAP
            for line in lines:
                put(line, BODY_SIZE, "body")
    return pages


def _pdf_date(value: Any) -> str:
    if isinstance(value, datetime):
        value = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        value = value.astimezone(timezone.utc)
        return value.strftime("D:%Y%m%d%H%M%S+00'00'")
    return str(value)


def _render(title: str, sections: list[tuple[str, str]], metadata: dict | None) -> tuple[bytes, int]:
    """The PDF's bytes and its page count (see `write_pdf`)."""
    metadata = dict(metadata or {})
    unknown = sorted(set(metadata) - set(STANDARD_KEYS))
    if unknown:
        raise ValueError(f"unknown PDF metadata keys {unknown}: use {list(STANDARD_KEYS)}")
    sections = [(str(h), str(b)) for h, b in sections]
    info = {"title": _clean(title), "creator": "toolroute", "producer": f"toolroute (PyMuPDF {pymupdf.VersionBind})",
            "creationDate": FIXED_DATE, "modDate": FIXED_DATE}
    info.update({k: _pdf_date(v) if k.endswith("Date") else str(v) for k, v in metadata.items()})

    font = _font()
    pages = _layout(title, sections, font)
    doc = pymupdf.open()
    total = len(pages)
    for number, lines in enumerate(pages, start=1):
        page = doc.new_page(width=PAGE_RECT.width, height=PAGE_RECT.height)
        writers = {kind: pymupdf.TextWriter(page.rect) for kind in ("title", "heading", "body", "footer")}
        for line in lines:
            writers[line.kind].append((line.x, line.y), line.text, font=font, fontsize=line.size)
        footer = f"- {number} / {total} -"
        fx = (PAGE_RECT.width - font.text_length(footer, fontsize=FOOTER_SIZE)) / 2
        writers["footer"].append((fx, FOOTER_BASELINE), footer, font=font, fontsize=FOOTER_SIZE)
        colors = {"title": HEADING_COLOR, "heading": HEADING_COLOR, "body": BODY_COLOR, "footer": FOOTER_COLOR}
        for kind, writer in writers.items():
            if writer.text_rect is not None and not writer.text_rect.is_empty:
                writer.write_text(page, color=colors[kind])
    doc.subset_fonts()
    doc.set_metadata(info)
    # A content-derived /ID: MuPDF otherwise writes a random one on every save.
    digest = hashlib.md5(json.dumps([info, sections], ensure_ascii=False, sort_keys=True).encode()).hexdigest().upper()
    doc.xref_set_key(-1, "ID", f"[<{digest}><{digest}>]")
    data = doc.tobytes(garbage=4, deflate=True, no_new_id=True)
    doc.close()
    return data, total


def _write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and a rename: a reader sees the old or the new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_pdf(path: str | os.PathLike, title: str, sections: list[tuple[str, str]], *,
              metadata: dict | None = None) -> Path:
    """Write `title` and `(heading, body)` sections as an A4 Korean PDF; same input, same bytes.

    A body's lines are paragraphs (wrapped to the page width); `metadata` may set the PDF Info
    fields author, subject, keywords, creator, producer, creationDate and modDate (a `datetime`
    or a PDF date string; both dates default to FIXED_DATE so that output is reproducible).
    """
    path = Path(path)
    data, _ = _render(title, sections, metadata)
    _write_atomic(path, data)
    return path


@dataclass(frozen=True)
class WrittenPdf:
    """A PDF `write_pdf_if_changed` wrote or found unchanged: its path, the SHA-256 of its bytes, its pages."""

    path: Path
    sha256: str
    pages: int
    changed: bool


def write_pdf_if_changed(path: str | os.PathLike, title: str, sections: list[tuple[str, str]], *,
                         metadata: dict | None = None) -> WrittenPdf:
    """`write_pdf`, except that a file already holding exactly these bytes is left untouched (same
    mtime), so that watchers and an incremental ingest see only real changes."""
    path = Path(path)
    data, pages = _render(title, sections, metadata)
    changed = not (path.is_file() and path.read_bytes() == data)
    if changed:
        _write_atomic(path, data)
    return WrittenPdf(path, hashlib.sha256(data).hexdigest(), pages, changed)


# ----- reading ----------------------------------------------------------------------------------
def _open_pdf(path: Path) -> pymupdf.Document:
    if not path.exists():
        raise FileNotFoundError(f"PDF not found: {path}")
    if not path.is_file():
        raise PdfError(f"{path}: not a file")
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # FileDataError, EmptyFileError, RuntimeError, ...
        raise PdfError(f"{path}: not a readable PDF ({exc})") from exc
    if doc.needs_pass:
        doc.close()
        raise PdfError(f"{path}: the PDF is encrypted")
    if not doc.is_pdf or doc.page_count == 0:
        doc.close()
        raise PdfError(f"{path}: not a PDF with pages")
    return doc


def _is_page_number(text: str, rect: pymupdf.Rect, page_rect: pymupdf.Rect) -> bool:
    margin = page_rect.height * 0.1
    in_margin = rect.y0 >= page_rect.y1 - margin or rect.y1 <= page_rect.y0 + margin
    return in_margin and bool(_PAGE_NUMBER.match(text))


def _page_lines(page: pymupdf.Page) -> list[tuple[str, pymupdf.Rect, float]]:
    lines = []
    for block in page.get_text("dict", sort=True)["blocks"]:
        if block.get("type", 0) != 0:  # images
            continue
        for line in block["lines"]:
            spans = line["spans"]
            text = "".join(s["text"] for s in spans)
            if text.strip():
                lines.append((text, pymupdf.Rect(line["bbox"]), max(s["size"] for s in spans)))
    return lines


def _page_text(page: pymupdf.Page, drop_page_numbers: bool) -> str:
    """Lines regrouped into paragraphs: a line continues the previous one when it has the same
    font size and sits right below it (gap under half the font size); MuPDF's own blocks are not
    used because it often makes every wrapped line a block of its own."""
    paragraphs: list[tuple[list[str], pymupdf.Rect]] = []
    prev: tuple[pymupdf.Rect, float] | None = None
    for text, rect, size in _page_lines(page):
        continues = (prev is not None and abs(size - prev[1]) <= 0.5 and rect.y0 >= prev[0].y0
                     and rect.y0 - prev[0].y1 <= 0.5 * size)
        if continues:
            paragraphs[-1][0].append(text)
            paragraphs[-1][1].include_rect(rect)
        else:
            paragraphs.append(([text], pymupdf.Rect(rect)))
        prev = (rect, size)
    out = []
    for parts, rect in paragraphs:
        text = _clean(" ".join(parts))
        if text and not (drop_page_numbers and _is_page_number(text, rect, page.rect)):
            out.append(text)
    return "\n".join(out)


def extract_pages(path: str | os.PathLike, *, metadata: dict | None = None,
                  drop_page_numbers: bool = True) -> list[Page]:
    """One `Page` per PDF page: text blocks as lines, whitespace normalised, page numbers dropped.

    A missing file raises FileNotFoundError, anything that is not a readable PDF a PdfError;
    both name the file. `metadata` (e.g. product_code, doc_type) is attached to every page.
    """
    path = Path(path)
    doc = _open_pdf(path)
    try:
        meta = dict(metadata or {})
        return [Page(path.stem, i + 1, _page_text(page, drop_page_numbers), dict(meta))
                for i, page in enumerate(doc)]
    except PdfError:
        raise
    except Exception as exc:
        raise PdfError(f"{path}: text extraction failed ({exc})") from exc
    finally:
        doc.close()


def pdf_pages(paths: Iterable[str | os.PathLike], **kwargs) -> list[Page]:
    """`extract_pages` over several files, in order."""
    return [p for path in paths for p in extract_pages(path, **kwargs)]

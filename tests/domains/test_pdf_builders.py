"""The helper the three domains' document builders share: `rag.pdf.write_pdf_if_changed`.

(It lives in toolroute.rag.pdf; the test is here, next to the builders that depend on it.)
"""

from __future__ import annotations

import hashlib
import os

from toolroute.rag.pdf import extract_pages, write_pdf, write_pdf_if_changed

SECTIONS = [("1. 개요", "첫 문단입니다.\n둘째 문단입니다."), ("2. 절차", "절차를 따릅니다. " * 200)]


def test_same_bytes_as_write_pdf_and_untouched_when_unchanged(tmp_path):
    reference = write_pdf(tmp_path / "reference.pdf", "제목", SECTIONS, metadata={"subject": "시험"})
    first = write_pdf_if_changed(tmp_path / "doc.pdf", "제목", SECTIONS, metadata={"subject": "시험"})
    assert first.changed
    assert first.path.read_bytes() == reference.read_bytes()
    assert first.sha256 == hashlib.sha256(reference.read_bytes()).hexdigest()
    assert first.pages == len(extract_pages(first.path)) > 1

    os.utime(first.path, (1_000_000_000, 1_000_000_000))
    again = write_pdf_if_changed(tmp_path / "doc.pdf", "제목", SECTIONS, metadata={"subject": "시험"})
    assert not again.changed and again.sha256 == first.sha256
    assert first.path.stat().st_mtime == 1_000_000_000  # not rewritten

    edited = write_pdf_if_changed(tmp_path / "doc.pdf", "제목", SECTIONS[:1], metadata={"subject": "시험"})
    assert edited.changed and edited.sha256 != first.sha256 and edited.pages == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["doc.pdf", "reference.pdf"]  # no temp file left

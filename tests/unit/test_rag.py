import hashlib

import pytest

from conftest import HashEmbedder
from toolroute.rag import (
    DocumentStore, Page, PdfError, chunk_pages, document_sentences, extract_pages, split_sentences, write_pdf,
)
from toolroute.rag.chunking import _SENTENCE_END

ARTICLE = ("회사는 피보험자가 보험기간 중 암으로 진단확정된 경우 암진단비를 지급합니다. "
           "보험료는 연 3.5%의 이율로 계산됩니다. 다만, 계약일부터 90일 이내에 진단된 경우에는 지급하지 않습니다. "
           "이 경우 이미 낸 보험료를 돌려드립니까? 네, 돌려드립니다!")
ITEMS = "1. 암진단비: 3,000만원을 지급합니다.\n2. 입원비: 1일당 5만원을 지급합니다.\n가. 통원비는 1회당 2만원입니다."


@pytest.fixture
def chroma(chroma_both):
    """Every test here runs on the embedded store and on a Chroma server (`chroma run`)."""
    return chroma_both


def _sections(n=3):
    return [(f"제{i}조 (보험금의 지급 {i})", f"{ARTICLE}\n{ITEMS}\n\n제{i}조의 내용은 여기까지입니다.") for i in range(1, n + 1)]


# ----- PDF ------------------------------------------------------------------------------------
def test_pdf_round_trip_keeps_korean_sentences(tmp_path):
    sections = _sections(2)
    path = write_pdf(tmp_path / "terms_A01.pdf", "첫날부터암보험 약관", sections)
    pages = extract_pages(path, metadata={"product_code": "A01"})
    assert [p.page for p in pages] == [1] and pages[0].document == "terms_A01"
    assert pages[0].metadata == {"product_code": "A01"}
    expected = split_sentences("첫날부터암보험 약관\n" + "\n".join(f"{h}\n{b}" for h, b in sections))
    assert split_sentences(pages[0].text) == expected
    assert "- 1 / 1 -" not in pages[0].text  # the footer page number is dropped


def test_pdf_is_deterministic_and_embeds_a_subset_font(tmp_path):
    a = write_pdf(tmp_path / "a.pdf", "약관", _sections(4), metadata={"author": "툴라우트 생명"})
    b = write_pdf(tmp_path / "b" / "a.pdf", "약관", _sections(4), metadata={"author": "툴라우트 생명"})
    assert a.read_bytes() == b.read_bytes()
    other = write_pdf(tmp_path / "c.pdf", "약관", _sections(5))
    assert other.read_bytes() != a.read_bytes()
    import pymupdf

    with pymupdf.open(a) as doc:
        assert doc.metadata["author"] == "툴라우트 생명" and doc.metadata["creationDate"].startswith("D:2024")
        fonts = {f[3] for f in doc.get_page_fonts(0)}
        assert all("+" in name for name in fonts)  # subset prefix
    assert not list(tmp_path.glob("**/*.tmp"))  # atomic write leaves no temp file
    with pytest.raises(ValueError, match="unknown PDF metadata"):
        write_pdf(tmp_path / "d.pdf", "약관", _sections(1), metadata={"colour": "red"})


def test_pdf_wraps_long_text_over_several_pages(tmp_path):
    long_paragraph = " ".join(f"{i}번째 문장은 자동 줄바꿈과 쪽 나눔을 확인하기 위한 긴 문장입니다." for i in range(300))
    path = write_pdf(tmp_path / "long.pdf", "긴 문서", [("제1조 (긴 조항)", long_paragraph), ("제2조 (끝)", "마지막 문장입니다.")])
    pages = extract_pages(path)
    assert len(pages) >= 3
    assert all(p.text for p in pages)
    sentences = [s.text for s in document_sentences(pages)]
    assert sentences == split_sentences(f"긴 문서\n제1조 (긴 조항)\n{long_paragraph}\n제2조 (끝)\n마지막 문장입니다.")
    # a sentence cut by the page break is mended, and its page is where it starts
    tail = split_sentences(pages[0].text)[-1]
    assert not _SENTENCE_END.search(tail)
    mended = next(s for s in document_sentences(pages) if s.text.startswith(tail))
    assert mended.page == 1 and len(mended.text) > len(tail) and _SENTENCE_END.search(mended.text)


def test_broken_pdf_gives_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.pdf"):
        extract_pages(tmp_path / "missing.pdf")
    bad = tmp_path / "notes.pdf"
    bad.write_text("이것은 PDF가 아닙니다.", encoding="utf-8")
    with pytest.raises(PdfError, match="notes.pdf"):
        extract_pages(bad)
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    with pytest.raises(PdfError, match="empty.pdf"):
        extract_pages(empty)


# ----- sentences and chunks ----------------------------------------------------------------------
def test_split_sentences_korean_rules():
    text = ("제3조(보험금의 지급) 보험료는 연 3.5%입니다. 정말요? 네! 금액은 1,000.50원이에요.다만 예외가 있습니다.\n"
            "1. 암진단비: 3,000만원\n가. 입원 1일당 5만원을 지급합니다. ii. 통원 (v1.2 기준)\n\"그렇다.\"고 말했다.")
    assert split_sentences(text) == [
        "제3조(보험금의 지급) 보험료는 연 3.5%입니다.", "정말요?", "네!", "금액은 1,000.50원이에요.", "다만 예외가 있습니다.",
        "1. 암진단비: 3,000만원", "가. 입원 1일당 5만원을 지급합니다.", "ii. 통원 (v1.2 기준)", "\"그렇다.\"고 말했다.",
    ]


def _pages():
    body = " ".join(f"제{i}조에 따라 {i}.5%의 보험료를 할인합니다. 할인은 {i}회차 갱신 시에도 유지됩니다." for i in range(1, 40))
    return [Page("doc_a", 1, body[: len(body) // 2].rsplit(" ", 1)[0], {"product_code": "A01"}),
            Page("doc_a", 2, body[len(body[: len(body) // 2].rsplit(" ", 1)[0]):].strip(), {"product_code": "A01"}),
            Page("doc_b", 1, "다른 문서의 첫 문장입니다. 두 번째 문장입니다.\n1. 항목 하나\n2. 항목 둘", {"product_code": "B02"})]


def test_chunks_end_on_sentences_and_respect_size_and_overlap():
    pages = _pages()
    chunks = chunk_pages(pages, size=200, overlap=60, metadata={"doc_type": "terms"})
    sentences = {p.document: [s.text for s in document_sentences([q for q in pages if q.document == p.document])]
                 for p in pages}
    for c in chunks:
        assert len(c.text) <= 200
        doc_sentences = sentences[c.document]
        parts = split_sentences(c.text)
        assert all(s in doc_sentences for s in parts)  # whole sentences of its own document only
        assert c.metadata["doc_type"] == "terms"
        assert c.metadata["product_code"] == {"doc_a": "A01", "doc_b": "B02"}[c.document]
    a = [c for c in chunks if c.document == "doc_a"]
    assert len(a) > 3 and a[0].page == 1 and a[-1].page == 2
    for prev, nxt in zip(a, a[1:]):  # sentences are unique here, so the overlap is what they share
        before, after = split_sentences(prev.text), split_sentences(nxt.text)
        shared = [s for s in after if s in before]
        assert shared and before[-len(shared):] == shared and after[:len(shared)] == shared
        assert 0 < len(" ".join(shared)) < 2 * 60
        assert len(prev.text) > 200 - len(after[len(shared)]) - 1  # prev was full: the next sentence did not fit
    # no split inside "3.5%" or "제3조"
    assert any("제3조에 따라 3.5%의 보험료를 할인합니다." in s for s in sentences["doc_a"])
    assert not any(s.endswith(("제3", "3.")) for s in sentences["doc_a"])


def test_chunk_ids_are_stable_and_never_cross_documents():
    first = chunk_pages(_pages(), size=150, overlap=30)
    again = chunk_pages(_pages(), size=150, overlap=30)
    assert [c.id for c in first] == [c.id for c in again]
    assert len({c.id for c in first}) == len(first)
    b = [c for c in first if c.document == "doc_b"]
    assert len(b) == 1 and b[0].text.startswith("다른 문서") and "할인" not in b[0].text
    assert all(c.text.endswith(("다.", "하나", "둘")) or _SENTENCE_END.search(c.text) for c in first)


def test_over_long_sentence_is_split_hard():
    text = "가" * 450 + "다."
    chunks = chunk_pages([Page("x", 1, text)], size=200, overlap=50)
    assert [len(c.text) for c in chunks] == [200, 200, 52]
    assert "".join(c.text for c in chunks) == text


def test_chunking_arguments_are_validated():
    with pytest.raises(ValueError, match="overlap"):
        chunk_pages(_pages(), size=100, overlap=100)
    with pytest.raises(ValueError, match="size"):
        chunk_pages(_pages(), size=0, overlap=0)
    with pytest.raises(ValueError, match="reserved"):
        chunk_pages([Page("x", 1, "문장입니다.", {"page": 3})])


# ----- store ------------------------------------------------------------------------------------
def _corpus(edit=None, drop=None):
    docs = {
        "terms_cancer": ("암보험 약관", [("제1조 (암진단비)", "암으로 진단확정되면 암진단비 3,000만원을 지급합니다."),
                                      ("제2조 (면책기간)", "계약일부터 90일 이내에 진단된 암은 보장하지 않습니다.")], "C01"),
        "terms_dental": ("치아보험 약관", [("제1조 (임플란트)", "임플란트 치료 시 치아 1개당 100만원을 지급합니다."),
                                       ("제2조 (감액기간)", "가입 후 1년 이내 치료는 50%만 지급합니다.")], "D01"),
        "terms_travel": ("여행자보험 약관", [("제1조 (휴대품)", "여행 중 휴대품을 도난당하면 20만원 한도로 보상합니다.")], "T01"),
    }
    if edit:
        title, sections, code = docs[edit]
        docs[edit] = (title, sections + [("제9조 (추가)", "새로 추가된 조항입니다.")], code)
    pages = []
    for name, (title, sections, code) in docs.items():
        if name == drop:
            continue
        text = title + "\n" + "\n".join(f"{h}\n{b}" for h, b in sections)
        pages.append(Page(name, 1, text, {"product_code": code}))
        pages.append(Page(name, 2, f"{title}의 부칙입니다. 이 약관은 2024년 1월 1일부터 시행합니다.", {"product_code": code}))
    return chunk_pages(pages, size=80, overlap=20, metadata={"doc_type": "terms"})


def test_incremental_ingest(chroma):
    emb = HashEmbedder()
    store = DocumentStore("terms", emb, client=chroma)
    chunks = _corpus()
    first = store.ingest(chunks, progress=False)
    assert first.added == len(chunks) == emb.passages_embedded and first.documents == 3 and first.rebuilt

    again = DocumentStore("terms", emb, client=chroma).ingest(_corpus(), progress=False)
    assert again.added == 0 and again.reused == len(chunks) and not again.rebuilt
    assert emb.passages_embedded == len(chunks)

    edited = _corpus(edit="terms_dental")
    report = store.ingest(edited, progress=False)
    dental = [c for c in edited if c.document == "terms_dental"]
    assert report.changed_documents == ["terms_dental"]
    assert 0 < report.added <= len(dental) and report.reused == len(edited) - report.added
    assert emb.passages_embedded == len(chunks) + report.added
    assert store.documents()["terms_dental"] == len(dental)

    smaller = _corpus(edit="terms_dental", drop="terms_travel")
    report = store.ingest(smaller, progress=False)
    assert report.added == 0 and report.removed_documents == ["terms_travel"] and report.removed > 0
    assert "terms_travel" not in store.documents() and store.count() == len(smaller)
    assert all(p.document != "terms_travel" for p in store.search("여행 중 휴대품 도난", k=10))
    assert len(chroma.list_collections()) == 1  # old generations dropped


def test_changed_chunk_size_rebuilds(chroma):
    emb = HashEmbedder()
    store = DocumentStore("terms", emb, client=chroma)
    store.ingest(_corpus(), progress=False)
    pages = [Page("terms_x", 1, "짧은 문장입니다. " * 30)]
    store.ingest(chunk_pages(pages, size=80, overlap=20), progress=False)
    report = store.ingest(chunk_pages(pages, size=120, overlap=20), progress=False)
    assert report.rebuilt and report.changed_documents == ["terms_x"]
    assert store.chunker.endswith("size=120:overlap=20")


def test_failed_ingest_keeps_the_live_store(chroma):
    store = DocumentStore("terms", HashEmbedder(), client=chroma)
    store.ingest(_corpus(), progress=False)
    before = store.documents()
    broken = DocumentStore("terms", HashEmbedder(fail_after=0), client=chroma)
    with pytest.raises(RuntimeError, match="mid-build"):
        broken.ingest(_corpus(edit="terms_cancer"), progress=False)
    assert DocumentStore("terms", HashEmbedder(), client=chroma).documents() == before


def test_search_returns_passage_with_page_and_metadata(chroma):
    emb = HashEmbedder()
    terms = DocumentStore("terms", emb, client=chroma)
    terms.ingest(_corpus(), progress=False)
    info = DocumentStore("product_info", emb, client=chroma)
    info.ingest(chunk_pages([Page("info_cancer", 1, "첫날부터암보험은 암 진단 첫날부터 보장합니다.")],
                            metadata={"doc_type": "product_info"}), progress=False)

    hits = terms.search("임플란트 치료 시 치아 1개당 100만원을 지급합니다.", k=3)
    top = hits[0]
    assert top.document == "terms_dental" and top.page == 1 and "임플란트" in top.text
    assert top.metadata["product_code"] == "D01" and top.metadata["doc_type"] == "terms"
    assert 0.9 < top.score <= 1.0001 and top.score >= hits[-1].score

    filtered = terms.search("부칙 시행", k=5, where={"product_code": "C01"})
    assert filtered and all(p.document == "terms_cancer" for p in filtered)
    assert any(p.page == 2 for p in filtered)
    both = terms.search("부칙 시행", k=5, where={"product_code": "C01", "page": 2})
    assert both and all(p.page == 2 for p in both)

    assert [p.document for p in info.search("암 진단 첫날", k=5)] == ["info_cancer"]  # side by side, separate
    assert len(chroma.list_collections()) == 2


def test_empty_store_says_so(chroma):
    with pytest.raises(LookupError, match="ingest"):
        DocumentStore("terms", HashEmbedder(), client=chroma).search("암")


def test_real_pdf_to_store(tmp_path, chroma):
    path = write_pdf(tmp_path / "terms_C01.pdf", "암보험 약관", _sections(3))
    chunks = chunk_pages(extract_pages(path, metadata={"product_code": "C01"}), size=300, overlap=60)
    store = DocumentStore("terms", HashEmbedder(), client=chroma)
    store.ingest(chunks, progress=False)
    hit = store.search("제2조의 내용은 여기까지입니다.", k=1)[0]
    assert hit.document == "terms_C01" and "제2조의 내용은 여기까지입니다." in hit.text
    assert hashlib.sha256(path.read_bytes()).hexdigest() == hashlib.sha256(
        write_pdf(tmp_path / "again.pdf", "암보험 약관", _sections(3)).read_bytes()).hexdigest()

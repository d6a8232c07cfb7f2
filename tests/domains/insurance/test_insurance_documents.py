"""The insurance PDFs, their ingestion and search, the two RAG tools, and the RAG question set."""

from __future__ import annotations

import json

import pytest

from toolroute.domains.insurance import knowledge
from toolroute.domains.insurance.documents import (
    COMPANY,
    COMPANY_STEM,
    TERMS_STEM,
    build_documents,
    summary_stem,
    won,
    won_full,
)
from toolroute.domains.insurance.products import load_products, monthly_premium
from toolroute.domains.insurance.tools import rag_tools
from toolroute_lab.e01_ingest import plots
from toolroute_lab.e01_ingest import rag_eval
from toolroute.rag import extract_pages

from conftest import HashEmbedder


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    return build_documents(tmp_path_factory.mktemp("docs"))


@pytest.fixture(scope="module")
def page_texts(docs):
    return {d.document: {p.page: p.text for p in extract_pages(d.path)} for d in docs}


def _compact(text: str) -> str:
    return "".join(text.split())


def _full_text(page_texts, document):
    return "\n".join(page_texts[document][n] for n in sorted(page_texts[document]))


# ----- documents ---------------------------------------------------------------------------------

def test_one_summary_per_product_plus_terms_and_company(docs):
    products = load_products()
    by_stem = {d.document: d for d in docs}
    assert len(docs) == len(products) + 2
    for code in products:
        info = by_stem[summary_stem(code)]
        assert (info.doc_type, info.product_code) == ("product_summary", code)
        assert products[code].name in info.title
    assert by_stem[TERMS_STEM].doc_type == "terms" and by_stem[TERMS_STEM].product_code is None
    assert by_stem[COMPANY_STEM].doc_type == "company"
    assert by_stem[TERMS_STEM].pages >= 5  # several pages of articles
    assert all(d.pages >= 1 and len(d.sha256) == 64 for d in docs)


def test_build_is_deterministic_and_skips_identical_files(tmp_path, docs):
    first = {d.document: d.sha256 for d in docs}
    again = build_documents(tmp_path / "again")
    assert {d.document: d.sha256 for d in again} == first  # same data, same bytes, any folder
    mtimes = {d.document: d.path.stat().st_mtime_ns for d in again}
    third = build_documents(tmp_path / "again")
    assert {d.document: d.path.stat().st_mtime_ns for d in third} == mtimes  # not rewritten
    assert not [p for p in (tmp_path / "again").iterdir() if p.suffix != ".pdf"]  # no temp files left


def test_product_summary_states_the_product_data(docs, page_texts):
    for code, p in load_products().items():
        text = _full_text(page_texts, summary_stem(code))
        flat = _compact(text)
        assert p.name in text
        assert f"만 {p.join_age_min}세부터 {p.join_age_max}세까지" in text
        for c in p.coverages:  # every benefit with its amount from products.yaml
            assert _compact(c.name) in flat
            assert _compact(won_full(c.amount)) in flat
        for r in p.riders:
            assert _compact(r.name) in flat
        for e in p.exclusions:
            assert _compact(e) in flat
        for d in p.required_disclosures:
            assert _compact(d) in flat
        for f in p.faq:
            assert _compact(f.question) in flat
        for e in p.surrender.examples:
            assert f"가입 {e.year}년 후 해지" in text
        # premium examples are monthly_premium's numbers
        age = p.join_age_min
        assert f"{age}세: 남성 월 {monthly_premium(p, age, '남성'):,}원, 여성 월 {monthly_premium(p, age, '여성'):,}원" in text


def test_terms_document_has_the_articles(docs, page_texts):
    text = _full_text(page_texts, TERMS_STEM)
    assert "제1조 (목적)" in text
    assert "보험금을 지급하지 않는 사유" in text
    assert "계약 전 알릴 의무" in text
    assert "청약의 철회" in text
    assert "해약환급금" in text
    assert "보험금의 청구" in text
    # the reinstatement article, with the deadline of the reference data (the tools' source)
    from toolroute.domains.insurance.documents import _ref

    years = _ref("underwriting")["reinstatement"]["deadline_years"]
    assert "부활(효력회복)" in text
    assert f"해지된 날부터 {years}년 이내" in text
    numbers = [int(n) for n in __import__("re").findall(r"제(\d+)조 \(", text)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 20


def test_company_document(docs, page_texts):
    text = _full_text(page_texts, COMPANY_STEM)
    for fact in (COMPANY["name"], COMPANY["customer_center"], COMPANY["kics_ratio"], "지급여력비율(K-ICS)",
                 "신용등급", "민원", "공시실", "고객플라자"):
        assert fact in text
    assert COMPANY["customer_center"].startswith("1588-")


def test_money_format():
    assert won(30_000_000) == "3,000만원"
    assert won(150_000_000) == "1억 5,000만원"
    assert won(200_000_000) == "2억원"
    assert won(1_800) == "1,800원"
    assert won(15_500) == "15,500원"
    assert won_full(6_000_000) == "600만원(6,000,000원)"
    assert won_full(900) == "900원"


# ----- chunking, ingest and search ---------------------------------------------------------------

def test_chunks_carry_metadata_and_a_contextual_header(docs):
    pages = knowledge.document_pages(docs)
    assert {p.document for p in pages["terms"]} == {TERMS_STEM}
    assert COMPANY_STEM in {p.document for p in pages["product_info"]}
    chunks = knowledge.document_chunks(pages["product_info"], size=500, overlap=100)
    b001 = [c for c in chunks if c.document == summary_stem("B001")]
    assert b001 and all(c.metadata["product_code"] == "B001" and c.metadata["doc_type"] == "product_summary"
                        for c in b001)
    assert all(c.text.startswith("[첫날부터암보험 상품요약서") for c in b001)
    assert any(c.metadata["section"] == "2. 가입 조건" for c in b001)
    assert all(len(knowledge.strip_header(c.text)) <= 500 for c in chunks)
    company = [c for c in chunks if c.document == COMPANY_STEM]
    assert company and all("product_code" not in c.metadata for c in company)
    terms = knowledge.document_chunks(pages["terms"], size=500, overlap=100)
    assert any(c.metadata["section"].startswith("제") and "부활" in c.metadata["section"] for c in terms)


def test_ingest_is_incremental_and_search_returns_sources(docs, chroma):
    emb = HashEmbedder()
    reports = knowledge.ingest_documents(size=500, overlap=100, embedder=emb, client=chroma, progress=False,
                                         docs=docs, suffix="-t")
    assert set(reports) == {"terms", "product_info"}
    assert reports["terms"].documents == 1 and reports["product_info"].documents == len(docs) - 1
    embedded = emb.passages_embedded
    again = knowledge.ingest_documents(size=500, overlap=100, embedder=emb, client=chroma, progress=False,
                                       docs=docs, suffix="-t")
    assert emb.passages_embedded == embedded  # nothing changed, nothing embedded
    assert all(r.added == 0 and not r.rebuilt for r in again.values())

    stores = knowledge.open_stores(emb, chroma, "-t")
    found = knowledge.search_product_info("가입 나이", k=3, product_code="B003", store=stores["product_info"])
    assert found and all(p["product_code"] == "B003" for p in found)
    first = found[0]
    assert first["source"].startswith("든든한실버치아보험 상품요약서 p.")
    assert not first["text"].startswith("[")  # header stripped from the returned text
    terms = knowledge.search_terms("부활", k=2, store=stores["terms"])
    assert len(terms) == 2 and all(p["document"] == TERMS_STEM and p["page"] >= 1 for p in terms)


# ----- tools -------------------------------------------------------------------------------------

@pytest.fixture
def configured(tmp_path, chroma):
    rag_tools.configure(embedder=HashEmbedder(), client=chroma, docs_dir=tmp_path / "tool-docs")
    yield
    rag_tools.configure()


def test_rag_tools_build_lazily_and_return_passages(configured, tmp_path):
    result = rag_tools.rag_terms_query_engine.invoke({"query": "실효된 계약의 부활 조건"})
    assert result["status"] == "ok" and result["collection"] == "terms"
    assert len(result["passages"]) == 3  # default k
    for p in result["passages"]:
        assert set(p) >= {"text", "source", "page", "score"}
        assert p["source"].startswith("한결생명 보장성보험 표준약관 p.") and p["page"] >= 1
    assert (tmp_path / "tool-docs" / f"{TERMS_STEM}.pdf").exists()  # built on first call

    info = rag_tools.rag_product_info_query_engine.invoke({"query": "가입 나이", "product": "실버치아보험", "k": 2})
    assert info["status"] == "ok" and info["product"]["code"] == "B003"
    assert len(info["passages"]) == 2
    assert all(p["document"] == summary_stem("B003") for p in info["passages"])
    json.dumps(info, ensure_ascii=False)  # plain JSON for the tool message


def test_rag_tools_ask_instead_of_guessing(configured):
    for engine in rag_tools.TOOLS:
        assert engine.invoke({"query": "  "})["status"] == "needs_user_input"
        assert engine.invoke({})["missing"] == ["query"]
        unknown = engine.invoke({"query": "가입 나이", "product": "없는보험상품"})
        assert unknown["status"] == "not_found" and unknown["what"] == "product"
    assert [t.name for t in rag_tools.TOOLS] == ["rag_terms_query_engine", "rag_product_info_query_engine"]


def test_rag_tool_k_is_parsed_and_bounded(configured):
    assert len(rag_tools.rag_terms_query_engine.invoke({"query": "청약 철회", "k": "2개"})["passages"]) == 2
    many = rag_tools.rag_terms_query_engine.invoke({"query": "청약 철회", "k": 50})["passages"]
    assert len(many) == rag_tools.MAX_K


# ----- question set and evaluation ---------------------------------------------------------------

def test_rag_qa_rows_are_right_about_their_pages(docs, page_texts):
    questions = rag_eval.load_rag_qa()
    assert len(questions) >= 60
    assert len({q.id for q in questions}) == len(questions)
    assert {q.document for q in questions} == {d.document for d in docs}  # every document is asked about
    for q in questions:
        expected = "terms" if q.document == TERMS_STEM else "product_info"
        assert q.collection == expected, q.id
        assert q.question not in _full_text(page_texts, q.document), f"{q.id} copies the document"
    assert rag_eval.check_questions(questions, page_texts) == []


def test_load_rag_qa_rejects_bad_rows(tmp_path):
    good = {"id": "r1", "question": "q", "collection": "terms", "document": "d", "page": 1, "answer_contains": "a"}
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate id"):
        rag_eval.load_rag_qa(path)
    path.write_text(json.dumps({**good, "collection": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="collection"):
        rag_eval.load_rag_qa(path)


def test_check_questions_finds_wrong_pages():
    q = rag_eval.RagQuestion("r1", "부활 기한?", "terms", "doc", 2, "3년 이내")
    assert rag_eval.check_questions([q], {"doc": {1: "해지일부터 3년 이내", 2: "다른 내용"}}) == [
        "r1: '3년 이내' is not on doc p.2"]
    assert rag_eval.check_questions([q], {"doc": {2: "해지일부터 3년\n이내"}}) == []
    assert "unknown document" in rag_eval.check_questions([q], {})[0]


def test_hit_rule_and_metrics():
    q = rag_eval.RagQuestion("r1", "부활 기한?", "terms", "doc", 3, "3년 이내")
    assert rag_eval.is_hit(q, "doc", 3, 3, "[제목 · 제21조]\n해지일부터 3년 이내")
    assert rag_eval.is_hit(q, "doc", 2, 3, "…해지일부터 3년\n이내")  # page range covers p.3
    assert not rag_eval.is_hit(q, "doc", 4, 5, "해지일부터 3년 이내")  # wrong pages
    assert not rag_eval.is_hit(q, "other", 3, 3, "해지일부터 3년 이내")  # wrong document
    assert not rag_eval.is_hit(q, "doc", 3, 3, "해지일부터 5년 이내")  # phrase missing
    assert not rag_eval.is_hit(rag_eval.RagQuestion("r2", "?", "terms", "doc", 3, "제목"), "doc", 3, 3,
                               "[제목 · 제21조]\n본문")  # the header does not count

    R = rag_eval.QuestionResult
    results = [R("a", "terms", 1, None, None, None), R("b", "terms", 3, None, None, None),
               R("c", "product_info", None, None, None, None), R("d", "product_info", 2, None, None, None)]
    m = rag_eval.metrics(results, [1, 3, 5])
    assert m["n"] == 4
    assert m["hit@1"] == 0.25 and m["hit@3"] == 0.75 and m["hit@5"] == 0.75
    assert m["mrr"] == pytest.approx((1 + 1 / 3 + 0 + 1 / 2) / 4)


def test_sweep_on_a_tiny_fixture(tmp_path, chroma, docs):
    """Two documents, three questions, two chunk sizes, each in its own collections."""
    few = [d for d in docs if d.document in (TERMS_STEM, summary_stem("B003"))]
    qs = [q for q in rag_eval.load_rag_qa() if q.document in (TERMS_STEM, summary_stem("B003"))][:3]
    qs += [q for q in rag_eval.load_rag_qa() if q.document == summary_stem("B003")][:1]
    table, per_size = rag_eval.sweep([300, 600], 100, [1, 5], HashEmbedder(), chroma, docs=few, questions=qs)
    assert list(table.columns[:5]) == ["chunk_size", "overlap", "collection", "chunks", "n"]
    assert set(table.chunk_size) == {300, 600} and set(table.collection) == {"terms", "product_info", "all"}
    all_rows = table[table.collection == "all"].set_index("chunk_size")
    assert all_rows.loc[300, "chunks"] > all_rows.loc[600, "chunks"]
    assert all(0 <= all_rows[c].min() <= all_rows[c].max() <= 1 for c in ("hit@1", "hit@5", "mrr"))
    assert (all_rows["hit@1"] <= all_rows["hit@5"]).all()
    assert {len(v) for v in per_size.values()} == {len(qs)}
    names = {c if isinstance(c, str) else c.name for c in chroma.list_collections()}
    assert len(names) == 4  # 2 sizes x 2 collections, none of them the live stores

    lengths = rag_eval.chunk_lengths({"terms": knowledge.document_chunks(
        knowledge.document_pages(few)["terms"], 300, 100)})
    assert lengths.chars.max() <= 300
    plots.chunk_length_plot(lengths, 300, 100, tmp_path / "len.png")
    plots.hit_rate_plot(table, [1, 5], tmp_path / "hit.png", embedder="hash")
    assert (tmp_path / "len.png").stat().st_size > 0 and (tmp_path / "hit.png").stat().st_size > 0
    assert set(rag_eval.documents_table(few).columns) >= {"document", "pages", "sha256"}


# ----- notebook 01 helpers -----------------------------------------------------------------------

def test_caching_embedder_embeds_each_text_once_and_keeps_the_spec(chroma, docs):
    inner = HashEmbedder()
    emb = rag_eval.CachingEmbedder(inner)
    assert emb.spec == inner.spec and emb.dim == inner.dim
    first = emb.embed_passages(["가", "나", "가"])
    assert inner.passages_embedded == 2 and emb.model_passages == 2 and emb.cached_passages == 1
    again = emb.embed_passages(["나", "가"])
    assert inner.passages_embedded == 2 and emb.cached_passages == 3
    assert (again[0] == first[1]).all() and (again[1] == first[0]).all()
    assert (first == HashEmbedder().embed_passages(["가", "나", "가"])).all()  # the vectors of the wrapped model
    assert emb.embed_passages([]).shape == (0, inner.dim)

    # through the cache, a store is the same store as with the plain embedder (same namespace)
    terms = [d for d in docs if d.document == TERMS_STEM]
    knowledge.ingest_documents(size=500, overlap=100, embedder=emb, client=chroma, progress=False, docs=terms,
                               suffix="-c", collections=["terms"])
    plain = knowledge.open_stores(HashEmbedder(), chroma, "-c")["terms"]
    assert plain.exists() and plain.count() > 0
    embedded = emb.model_passages
    # another size's collections: texts already seen are not sent to the model again
    rag_eval.sweep([500], 100, [1], emb, chroma, docs=terms, questions=[], collections=["terms"])
    assert emb.model_passages == embedded


def test_ingest_only_the_collections_asked_for(chroma, docs):
    emb = HashEmbedder()
    reports = knowledge.ingest_documents(size=500, overlap=100, embedder=emb, client=chroma, progress=False,
                                         docs=docs, suffix="-o", collections=["terms"])
    assert list(reports) == ["terms"]
    stores = knowledge.open_stores(emb, chroma, "-o")
    assert stores["terms"].exists() and not stores["product_info"].exists()
    table = rag_eval.ingest_table(reports)
    assert table.loc[0, "changed_documents"] == 1 and table.loc[0, "unchanged_documents"] == 0
    again = rag_eval.ingest_table(knowledge.ingest_documents(size=500, overlap=100, embedder=emb, client=chroma,
                                                             progress=False, docs=docs, suffix="-o",
                                                             collections=["terms"]))
    assert again.loc[0, "added"] == 0 and again.loc[0, "unchanged_documents"] == 1 and not again.loc[0, "rebuilt"]
    for bad in (["nope"], []):
        with pytest.raises(ValueError, match="collections"):
            knowledge.ingest_documents(embedder=emb, client=chroma, docs=docs, suffix="-o", collections=bad)


def test_chunk_counts_and_stats(docs):
    counts = rag_eval.chunk_counts(docs, [300, 500, 800], 100)
    assert list(counts.columns) == ["chunk_size", "overlap", "collection", "documents", "chunks", "mean_chars"]
    pages = knowledge.document_pages(docs)
    for _, row in counts.iterrows():
        assert row.chunks == len(knowledge.document_chunks(pages[row.collection], row.chunk_size, row.overlap))
        assert row.mean_chars <= row.chunk_size
    by_size = counts.groupby("chunk_size").chunks.sum()
    assert by_size[300] > by_size[500] > by_size[800]
    assert counts.groupby("collection").documents.first().to_dict() == {"product_info": len(docs) - 1, "terms": 1}
    assert rag_eval.sweep_overlap(150, 100) == 75 and rag_eval.sweep_overlap(500, 100) == 100
    assert set(rag_eval.chunk_counts(docs, [300], 200).overlap) == {150}  # the sweep's cap
    assert set(rag_eval.chunk_counts(docs, [500], 100, ["terms"]).collection) == {"terms"}

    chunks = rag_eval.chunks_by_collection(docs, 500, 100)
    lengths = rag_eval.chunk_lengths(chunks)
    stats = rag_eval.chunk_stats(lengths).set_index("collection")
    for key, group in chunks.items():
        body = [len(knowledge.strip_header(c.text)) for c in group]
        assert stats.loc[key, "chunks"] == len(group) and stats.loc[key, "max"] == max(body) <= 500
        assert stats.loc[key, "min"] <= stats.loc[key, "p10"] <= stats.loc[key, "median"] <= stats.loc[key, "p90"]
    assert stats.loc["product_info", "documents"] == len(docs) - 1


def test_questions_table_and_page_texts(docs, page_texts):
    assert rag_eval.page_texts(docs) == page_texts
    questions = rag_eval.load_rag_qa()
    table = rag_eval.questions_table(questions)
    assert table.questions.sum() == len(questions)
    assert set(table.document) == {q.document for q in questions}
    terms = table[table.document == TERMS_STEM].iloc[0]
    assert terms.collection == "terms"
    assert terms.pages.split(",") == [str(p) for p in sorted({q.page for q in questions if q.document == TERMS_STEM})]


def test_sweep_on_one_collection(tmp_path, chroma, docs):
    few = [d for d in docs if d.document in (TERMS_STEM, summary_stem("B003"))]
    qs = rag_eval.load_rag_qa()
    table, per_size = rag_eval.sweep([400], 100, [1, 3], HashEmbedder(), chroma, docs=few, questions=qs,
                                     collections=["terms"])
    assert list(table.collection) == ["terms", "all"]
    n_terms = sum(q.collection == "terms" for q in qs)
    assert (table.n == n_terms).all() and len(per_size[400]) == n_terms
    assert table.chunks.iloc[0] == table.chunks.iloc[1]
    names = {c if isinstance(c, str) else c.name for c in chroma.list_collections()}
    assert len(names) == 1  # the product_info collection of that size was not built

"""rag_tools: search the policy terms (약관) and the product summaries / company information.

Both tools return passages as found in the PDF documents (`toolroute.domains.insurance.documents`,
built from the same product and reference data as the other tools), each with its source (document
title and page), so the agent can quote and cite instead of guessing:

    {"status": "ok", "query": …, "collection": "terms", "passages": [{text, source, page, score, …}]}

The stores are opened lazily on the first call and built (PDFs written, chunks embedded) when they
were never built. Which embedder, Chroma client and documents folder are used: `configure(...)`
(tests pass a fast embedder and a temporary client), else e5-small and the default Chroma under
`data_dir()`.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.tools import tool
from pydantic import BaseModel, Field, field_validator

from toolroute.domains.insurance import knowledge
from toolroute.domains.insurance.products import Product, get_product, product_candidates
from toolroute.domains.tool_results import needs_user_input, not_found, ok
from toolroute.domains.insurance.tools.schemas import described

DEFAULT_K = 3
MAX_K = 10


def configure(embedder: Any = None, client: Any = None, docs_dir: Any = None) -> None:
    """Use this embedder / Chroma client / documents folder from the next call on (None = default)."""
    knowledge.reset(embedder=embedder, client=client, docs_dir=docs_dir)


def _parse_k(value: Any) -> Any:
    """Accept 3, '3', '3개', '상위 5개'; empty means the default."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULT_K
    if isinstance(value, str):
        match = re.search(r"\d{1,2}", value)
        return int(match.group()) if match else DEFAULT_K
    return value


class _RagArgs(BaseModel):
    query: str | None = described("문서에서 찾을 내용 (한국어 질문이나 핵심어)")
    product: str | None = described("특정 상품으로 좁힐 때 상품명 또는 상품코드 (예: 첫날부터암보험, B001)")
    k: int = Field(default=DEFAULT_K, description=f"돌려받을 문단 수 (기본 {DEFAULT_K}, 최대 {MAX_K})")

    _k = field_validator("k", mode="before")(_parse_k)

    @field_validator("k")
    @classmethod
    def _clamp(cls, value: int) -> int:
        return max(1, min(MAX_K, int(value)))


class TermsArgs(_RagArgs):
    query: str | None = described("약관에서 찾을 내용 (예: 계약 부활 조건, 보험금을 지급하지 않는 사유, 계약 전 알릴 의무 위반)")


class ProductInfoArgs(_RagArgs):
    query: str | None = described(
        "상품요약서나 회사 정보에서 찾을 내용 (예: 가입 나이, 해약환급금 예시, 고객센터 번호, 지급여력비율)")


def _request(query: str | None, product: str | None, ask: str) -> tuple[str, Product | None] | dict[str, Any]:
    """(the query with its spaces normalised, the product named or None), or the result to return
    (no query: `ask` for it; an unknown product: not_found with candidates)."""
    if query is None or not query.strip():
        return needs_user_input(["query"], ask)
    found = None
    if product is not None and product.strip():
        found = get_product(product.strip())
        if found is None:
            return not_found("product", product.strip(), product_candidates(product))
    return " ".join(query.split()), found


def _passages(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("text", "source", "document", "section", "page", "page_end", "score")
    return [{key: p[key] for key in keys} for p in found]


@tool("rag_terms_query_engine", args_schema=TermsArgs)
def rag_terms_query_engine(query: str | None = None, product: str | None = None, k: int = DEFAULT_K) -> dict[str, Any]:
    """보장성보험 표준약관(약관) 원문에서 질문과 관련된 조항을 찾아 출처(문서명, 쪽)와 함께 돌려줍니다:
    용어의 정의, 보험금을 지급하지 않는 사유, 계약 전 알릴 의무, 계약의 부활(효력회복), 보험금 청구 절차,
    청약철회, 계약 해지와 해약환급금 등 약관에 적힌 내용."""
    request = _request(query, product, "약관에서 어떤 내용을 찾을지 알려주세요. (예: 계약 부활 조건)")
    if isinstance(request, dict):
        return request
    text, found = request
    search = f"{found.name} {text}" if found is not None else text
    passages = _passages(knowledge.search_terms(search, k=k))
    return ok(query=text, collection="terms", product=found.name if found else None,
              count=len(passages), passages=passages,
              note="약관 원문 발췌입니다. 답변할 때 출처(문서명과 쪽)를 함께 안내하세요.")


@tool("rag_product_info_query_engine", args_schema=ProductInfoArgs)
def rag_product_info_query_engine(query: str | None = None, product: str | None = None,
                                  k: int = DEFAULT_K) -> dict[str, Any]:
    """상품요약서(상품 개요, 가입 조건, 보장 내용, 특약, 해약환급금, 보험료 예시, 유의사항, FAQ)와 회사 정보
    문서(고객센터, 지급여력비율, 신용등급, 민원, 공시실, 지점)에서 질문과 관련된 문단을 찾아 출처(문서명, 쪽)와
    함께 돌려줍니다. 상품을 지정하면 그 상품의 요약서에서만 찾습니다."""
    request = _request(query, product, "상품요약서나 회사 정보에서 어떤 내용을 찾을지 알려주세요. (예: 가입 나이)")
    if isinstance(request, dict):
        return request
    text, found = request
    passages = _passages(knowledge.search_product_info(text, k=k, product_code=found.code if found else None))
    return ok(query=text, collection="product_info",
              product={"code": found.code, "name": found.name} if found else None,
              count=len(passages), passages=passages,
              note="상품요약서·회사 정보 발췌입니다. 답변할 때 출처(문서명과 쪽)를 함께 안내하세요.")


TOOLS = [rag_terms_query_engine, rag_product_info_query_engine]

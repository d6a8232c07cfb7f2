"""The insurance domain's PDF documents, generated from the product and reference data.

Three kinds of document, all written with `toolroute.rag.write_pdf` (same data, same bytes):

- one 상품요약서 per product (`product_summary_B001.pdf` …): 상품 개요, 가입 조건, 보장 내용 (금액·한도·
  조건), 특약, 납입면제·연금전환, 면책기간·감액기간, 보장하지 않는 사항, 해약환급금, 갱신, 보험료 예시
  (from `products.monthly_premium`), 유의사항 (the product's required disclosures plus the general ones
  of the compliance reference), 자주 묻는 질문;
- one 표준약관 (`standard_terms.pdf`): numbered articles 제1조 … in 관 (chapters): 용어의 정의 (the
  reference definitions), 보험금의 지급사유와 지급하지 않는 사유, 중복 지급 규칙, 보험금 청구 절차와
  구비서류, 계약 전 알릴 의무, 청약철회, 계약의 부활(효력회복), 계약 해지와 해약환급금, 보험계약대출 …;
- one 회사 정보 (`company_info.pdf`): the synthetic company of this domain (`COMPANY`): 회사 개요,
  재무건전성 (지급여력비율 K-ICS, 신용등급), 고객센터, 민원 접수, 공시실 안내, 지점 안내, 판매 상품 목록.

Every fact a tool also answers (amounts, ages, waiting periods, reinstatement deadline, …) is read
from `products.yaml` / the `ref_*.yaml` tables, so documents and tools never disagree; only legal
boilerplate and the synthetic company facts are written here. `build_documents()` writes the PDFs
(skipping files whose bytes would not change) and returns one `DocumentInfo` each.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from toolroute.config import data_dir
from toolroute.domains.insurance.products import Product, load_products, monthly_premium
from toolroute.rag.pdf import write_pdf_if_changed

__all__ = [
    "COMPANY", "DocumentInfo", "DOC_TYPES", "build_documents", "default_docs_dir", "document_specs",
    "won", "won_full", "TERMS_STEM", "COMPANY_STEM", "summary_stem",
]

DOC_TYPES = ("product_summary", "terms", "company")
TERMS_STEM = "standard_terms"
COMPANY_STEM = "company_info"
REF_DIR = Path(__file__).parent / "data"

# The synthetic insurer of this domain (no real company): the facts of the 회사 정보 document.
COMPANY: dict[str, Any] = {
    "name": "한결생명보험주식회사",
    "short_name": "한결생명",
    "english_name": "Hangyeol Life Insurance Co., Ltd.",
    "founded": "1989년 3월 15일",
    "ceo": "대표이사 박정우",
    "head_office": "서울특별시 중구 세종대로 110 한결타워",
    "capital": "자본금 3,200억원",
    "total_assets": "총자산 48조 6,000억원",
    "employees": "임직원 2,150명",
    "planners": "전속 보험설계사 8,400명",
    "customer_center": "1588-7240",
    "claims_line": "1588-7241",
    "overseas_line": "+82-2-3780-7240",
    "hours": "평일 오전 9시부터 오후 6시까지 (토요일·일요일·공휴일 휴무)",
    "ars_hours": "ARS 자동응답(보험료 납입, 계약 조회, 보험금 청구 접수 확인)은 24시간 이용할 수 있습니다.",
    "homepage": "www.hangyeollife.co.kr",
    "kics_ratio": "218.4%",
    "kics_before_transition": "176.9%",
    "kics_date": "2025년 12월 말",
    "kics_regulatory_minimum": "100%",
    "credit_rating": "AA+ (안정적)",
    "credit_agency": "한국기업평가",
    "credit_date": "2025년 6월",
    "complaint_days": 14,
}

# Branches: name, address, phone.
BRANCHES: list[tuple[str, str, str]] = [
    ("서울 본사 고객플라자", "서울특별시 중구 세종대로 110 한결타워 1층", "02-3780-7000"),
    ("강남 고객플라자", "서울특별시 강남구 테헤란로 325 한결강남빌딩 2층", "02-3780-7100"),
    ("부산 고객플라자", "부산광역시 부산진구 중앙대로 672 3층", "051-810-7240"),
    ("대구 고객플라자", "대구광역시 중구 달구벌대로 2095 5층", "053-420-7240"),
    ("광주 고객플라자", "광주광역시 서구 상무중앙로 78 4층", "062-370-7240"),
    ("대전 고객플라자", "대전광역시 서구 둔산로 100 6층", "042-480-7240"),
]

CHANNEL_NAMES = {"TM": "전화(TM)", "CM": "온라인(CM)", "대면": "대면(설계사)"}


@dataclass(frozen=True)
class DocumentInfo:
    """One generated PDF: `document` is the file stem used as the chunk's document name."""

    path: Path
    doc_type: str  # product_summary | terms | company
    product_code: str | None
    title: str
    sha256: str
    pages: int = 0

    @property
    def document(self) -> str:
        return self.path.stem


# ------------------------------------------------------------------------------------------------
# Formatting


def won(amount: int | float) -> str:
    """Korean money as quoted: 30000000 → '3,000만원', 150000000 → '1억 5,000만원', 1800 → '1,800원'."""
    amount = int(round(amount))
    if amount >= 100_000_000:
        eok, rest = divmod(amount, 100_000_000)
        if rest == 0:
            return f"{eok:,}억원"
        if rest % 10_000 == 0:
            return f"{eok:,}억 {rest // 10_000:,}만원"
        return f"{amount:,}원"
    if amount >= 10_000 and amount % 10_000 == 0:
        return f"{amount // 10_000:,}만원"
    return f"{amount:,}원"


def won_full(amount: int) -> str:
    """'3,000만원(30,000,000원)'; small sums once only ('1,800원')."""
    short = won(amount)
    full = f"{int(amount):,}원"
    return short if short == full else f"{short}({full})"


def _pct(ratio: float) -> str:
    value = ratio * 100
    return f"{value:.0f}%" if abs(value - round(value)) < 1e-9 else f"{value:.1f}%"


def _days(days: int) -> str:
    if days and days % 365 == 0:
        return f"{days // 365}년({days}일)"
    return f"{days}일"


def _lines(*items: str | None) -> str:
    return "\n".join(i for i in items if i)


# ------------------------------------------------------------------------------------------------
# Reference data (read-only; the reference tools read the same YAML files)


@lru_cache(maxsize=None)
def _ref(name: str) -> dict:
    path = REF_DIR / f"ref_{name}.yaml"
    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping")
    return data


def _general_disclosures() -> list[dict]:
    """Required disclosures of the compliance reference that apply to every product."""
    return [d for d in _ref("compliance").get("required_disclosures", []) if not d.get("applies_to")]


# ------------------------------------------------------------------------------------------------
# 상품요약서


def summary_stem(code: str) -> str:
    return f"product_summary_{code}"


def _premium_ages(p: Product) -> list[int]:
    ages = {p.join_age_min, p.join_age_max}
    step = 5 if p.join_age_max - p.join_age_min <= 20 else 10
    ages.update(a for a in range(0, 121, step) if p.join_age_min < a < p.join_age_max)
    return sorted(ages)


def _coverage_lines(p: Product) -> list[str]:
    out: list[str] = []
    for i, c in enumerate(p.coverages, start=1):
        out.append(f"({i}) {c.name} [{c.type}]")
        out.append(f"지급 금액: {won_full(c.amount)}, 지급 기준: {c.pay_basis}")
        if c.amount_text:
            out.append(f"지급 방식: {c.amount_text}")
        out.append(f"지급 한도: {c.limit_text}")
        if c.waiting_days:
            out.append(f"면책기간: 계약일부터 {_days(c.waiting_days)} (이 기간에 생긴 지급 사유는 보장하지 않음)")
        else:
            out.append("면책기간: 없음 (계약일부터 보장)")
        if c.reduction:
            out.append(f"감액기간: {c.reduction.text}")
        if c.deductible:
            out.append(f"자기부담금: {c.deductible.text}")
        out.extend(f"- {cond}" for cond in c.conditions)
    return out


def _summary_sections(p: Product) -> list[tuple[str, str]]:
    channels = ", ".join(CHANNEL_NAMES[c] for c in p.channels)
    not_sold = [CHANNEL_NAMES[c] for c in ("TM", "CM", "대면") if c not in p.channels]
    sections: list[tuple[str, str]] = []

    sections.append(("1. 상품 개요", _lines(
        f"상품명: {p.name} (상품코드 {p.code})",
        f"다른 이름: {', '.join(p.aliases)}" if p.aliases else None,
        f"상품 종류: {p.category}보험",
        f"상품 설명: {p.description}",
        f"보험기간: {p.coverage_period}",
        f"갱신 여부: {'갱신형' if p.renewable else '비갱신형'}",
        f"해약환급금 유형: {p.surrender.type}",
        f"상품 버전: {p.version} (이 요약서 기준일 {p.summary_date})",
        f"이전 버전: {', '.join(p.previous_versions)}" if p.previous_versions else "이전 버전: 없음 (최초 판매 버전)",
    )))

    underwriting = [
        f"가입 나이: 만 {p.join_age_min}세부터 {p.join_age_max}세까지 가입할 수 있습니다.",
        f"판매 채널: {channels}",
        f"판매하지 않는 채널: {', '.join(not_sold)}" if not_sold else "판매하지 않는 채널: 없음 (모든 채널에서 판매)",
    ]
    if p.simplified_disclosure:
        underwriting.append(f"심사 방식: {p.simplified_disclosure.name} (간편심사). 아래 질문에 모두 '아니오'이면 가입을 "
                            "검토할 수 있습니다.")
        underwriting.extend(f"{i}) {q}" for i, q in enumerate(p.simplified_disclosure.questions, start=1))
    else:
        underwriting.append("심사 방식: 일반심사 (계약 전 알릴 의무 사항 전체를 고지하고 회사가 심사합니다).")
    underwriting += [
        f"납입기간: {', '.join(p.payment_terms)}",
        f"납입주기: {', '.join(p.payment_cycles)}",
        (f"가입금액: {won_full(p.sum_insured_min)}부터 {won_full(p.sum_insured_max)}까지 ({p.sum_insured_basis} 기준)"
         if p.sum_insured_min != p.sum_insured_max else
         f"가입금액: {won_full(p.sum_insured_max)} 단일 ({p.sum_insured_basis} 기준)"),
    ]
    sections.append(("2. 가입 조건", "\n".join(underwriting)))

    sections.append(("3. 보장 내용 (기본플랜)", "\n".join(_coverage_lines(p))))

    if p.riders:
        rider_lines = []
        for r in p.riders:
            addon = (f"주계약 보험료의 {_pct(r.premium_addon_ratio)}" if r.premium_addon_ratio is not None
                     else f"월 {won(r.premium_addon_won or 0)}")
            rider_lines.append(f"{r.name} ({r.code}): {r.description}. 가입금액 {won_full(r.amount)} ({r.pay_basis}),"
                               f" 추가 보험료 {addon}.")
        sections.append(("4. 선택 특약", "\n".join(rider_lines)))
    else:
        sections.append(("4. 선택 특약", "이 상품에는 선택할 수 있는 특약이 없습니다."))

    extra = []
    if p.premium_waiver:
        extra.append("[보험료 납입면제]")
        extra.extend(f"- {w}" for w in p.premium_waiver)
    if p.annuity_conversion:
        a = p.annuity_conversion
        extra.append(f"[연금전환] 계약일부터 {a.min_contract_years}년이 지나고 피보험자가 {a.min_age}세 이상 "
                     f"{a.max_age}세 이하일 때 신청할 수 있습니다.")
        extra.extend(f"- {c}" for c in a.conditions)
        extra.append(f"연금 지급 형태: {', '.join(a.options)}")
    if extra:
        sections.append(("5. 납입면제와 연금전환", "\n".join(extra)))
    else:
        sections.append(("5. 납입면제와 연금전환", "이 상품에는 보험료 납입면제 제도와 연금전환 기능이 없습니다."))

    waiting = []
    for c in p.coverages:
        parts = [f"면책기간 {_days(c.waiting_days)}" if c.waiting_days else "면책기간 없음"]
        if c.reduction:
            parts.append(f"감액기간 계약일부터 {_days(c.reduction.within_days)} ({_pct(c.reduction.ratio)} 지급)")
        else:
            parts.append("감액기간 없음")
        waiting.append(f"- {c.name}: {', '.join(parts)}")
    if any(c.waiting_days for c in p.coverages):
        waiting.append("보장개시일은 면책기간이 끝난 날의 다음 날입니다. 보장개시일 전에 생긴 지급 사유는 보장하지 않습니다.")
    sections.append(("6. 면책기간과 감액기간", "\n".join(waiting)))

    sections.append(("7. 보험금을 지급하지 않는 사항", "\n".join(f"- {e}" for e in p.exclusions)))

    surrender = [f"해약환급금 유형: {p.surrender.type}", p.surrender.explanation,
                 "경과 기간별 해약환급률 예시 (납입한 보험료 대비):"]
    surrender.extend(f"- 가입 {e.year}년 후 해지: 환급률 {_pct(e.ratio)}" for e in p.surrender.examples)
    sections.append(("8. 해약환급금", "\n".join(surrender)))

    if p.renewable:
        renewal = [f"이 상품은 {p.renewal_period_years}년마다 갱신되는 갱신형 상품이며 최대 {p.max_renewal_age}세까지 "
                   "갱신할 수 있습니다.", p.renewal_note]
    else:
        renewal = [f"이 상품은 비갱신형으로, 가입할 때 정한 보험료가 납입기간 동안 오르지 않습니다. 보험기간: {p.coverage_period}."]
    sections.append(("9. 갱신", _lines(*renewal)))

    prem = [f"기준: {p.premium.basis}"]
    for age in _premium_ages(p):
        male = monthly_premium(p, age, "남성")
        female = monthly_premium(p, age, "여성")
        prem.append(f"- {age}세: 남성 월 {male:,}원, 여성 월 {female:,}원")
    if len(p.payment_terms) > 1:
        ref_age = min(max(40, p.join_age_min), p.join_age_max)
        by_term = ", ".join(f"{t} 월 {monthly_premium(p, ref_age, '남성', payment_term=t):,}원" for t in p.payment_terms)
        prem.append(f"납입기간별 보험료 ({ref_age}세 남성): {by_term}")
    if p.premium.note:
        prem.append(p.premium.note)
    prem.append("보험료는 가입 나이, 성별, 가입금액, 납입기간, 특약 선택에 따라 달라지며 위 금액은 예시입니다.")
    sections.append(("10. 보험료 예시 (월납)", "\n".join(prem)))

    notes = [f"- {d}" for d in p.required_disclosures]
    own = " ".join(p.required_disclosures)
    notes.extend(f"- {d['title']}: {d['text']}" for d in _general_disclosures() if d["title"] not in own
                 and "예금자보호" not in d["title"])
    sections.append(("11. 유의사항 (꼭 알아두실 사항)", "\n".join(notes)))

    faq = []
    for f in p.faq:
        faq.append(f"Q. {f.question}")
        faq.append(f"A. {f.answer}")
    sections.append(("12. 자주 묻는 질문", "\n".join(faq)))

    sections.append(("문의", f"{COMPANY['short_name']} 고객센터 {COMPANY['customer_center']}, 운영시간 {COMPANY['hours']}. "
                           f"상품설명서와 약관은 {COMPANY['homepage']} 상품공시실에서 확인할 수 있습니다."))
    return sections


def summary_title(p: Product) -> str:
    return f"{p.name} 상품요약서"


# ------------------------------------------------------------------------------------------------
# 표준약관


def _definition_lines() -> list[str]:
    out = []
    for i, d in enumerate(_ref("definitions")["definitions"], start=1):
        aliases = f" ({', '.join(str(a) for a in d['aliases'][:3])})" if d.get("aliases") else ""
        out.append(f"{i}. {d['term']}{aliases}: {' '.join(d['definition'].split())}")
    return out


def _claim_type_lines() -> list[str]:
    out = []
    for c in _ref("claims")["claim_types"]:
        out.append(f"[{c['name']}] 구비서류: {', '.join(c['required_documents'])}.")
        if c.get("conditional_documents"):
            out.append(f"해당하는 경우 추가 서류: {', '.join(c['conditional_documents'])}.")
    return out


def _procedure(proc_id: str) -> dict:
    for p in _ref("servicing")["servicing_procedures"]:
        if p["id"] == proc_id:
            return p
    raise KeyError(f"servicing procedure {proc_id} not in ref_servicing.yaml")


def _definition(term: str) -> str:
    for d in _ref("definitions")["definitions"]:
        if d["term"] == term:
            return " ".join(d["definition"].split())
    raise KeyError(f"definition {term} not in ref_definitions.yaml")


def _has_final_consonant(word: str) -> bool:
    last = word[-1]
    return "가" <= last <= "힣" and (ord(last) - 0xAC00) % 28 != 0


def _defined(term: str, label: str | None = None) -> str:
    """'청약철회란 보험증권을 받은 날부터 …': the reference definition as a sentence of the article."""
    label = label or term
    return f"{label}{'이란' if _has_final_consonant(label) else '란'} {_definition(term)}"


def _terms_sections() -> list[tuple[str, str]]:
    """(heading, body) pairs: chapter headings (제N관) and numbered articles (제N조)."""
    uw = _ref("underwriting")
    claims = _ref("claims")
    conflicts = _ref("conflicts")["conflict_rules"]
    products = load_products()
    reinst = uw["reinstatement"]
    withdraw = _procedure("SVC_WITHDRAW")
    cancel = _procedure("SVC_CANCEL")
    loan = _procedure("SVC_LOAN")
    renewal = _procedure("SVC_RENEWAL")
    holiday = _procedure("SVC_PAYMENT_HOLIDAY")
    disclosures = {d["title"]: d["text"] for d in _ref("compliance")["required_disclosures"]}
    company = COMPANY["short_name"]

    articles: list[tuple[str, list[str]]] = []  # (title, paragraphs); None title = chapter
    chapter: list[tuple[str | None, str, list[str]]] = []

    def art(title: str, *paragraphs: str | list[str]) -> None:
        body: list[str] = []
        for p in paragraphs:
            body.extend(p if isinstance(p, list) else [p])
        chapter.append(("article", title, body))

    def chap(title: str) -> None:
        chapter.append(("chapter", title, []))

    chap("제1관 목적 및 용어의 정의")
    art("목적", f"이 약관은 {COMPANY['name']}(이하 '회사')와 계약자 사이에 맺는 보장성 보험계약의 내용과 보험금의 지급, "
              "계약의 성립·유지·해지에 관한 사항을 정하는 것을 목적으로 합니다. 각 상품의 보장 금액과 보장 한도는 "
              "상품별 약관과 상품요약서에서 정하며, 이 약관은 모든 상품에 공통으로 적용됩니다.")
    art("용어의 정의", "이 약관에서 사용하는 용어의 뜻은 다음과 같습니다. 질병의 분류는 한국표준질병·사인분류(KCD)를 따릅니다.",
        _definition_lines())

    chap("제2관 보험금의 지급")
    art("보험금의 지급사유",
        "회사는 피보험자에게 보험기간 중 각 상품의 약관과 상품요약서에서 정한 지급사유가 생긴 경우 보험수익자에게 약정한 보험금을 지급합니다.",
        "보험금의 종류에는 진단비, 수술비, 입원일당, 사망보험금, 장해보험금, 실손의료비, 간병생활자금, 연금 등이 있습니다.")
    art("보장개시일과 면책기간·감액기간",
        f"① {_defined('보장개시일')}",
        f"② {_defined('면책기간')}",
        f"③ {_defined('감액기간')}",
        "④ 상품별 면책기간과 감액기간은 다음과 같습니다.",
        [f"- {p.name}: " + "; ".join(
            f"{c.name} " + (f"면책 {_days(c.waiting_days)}" if c.waiting_days else "면책 없음")
            + (f", {c.reduction.text}" if c.reduction else "")
            for c in p.coverages if c.waiting_days or c.reduction)
         for p in products.values() if any(c.waiting_days or c.reduction for c in p.coverages)])
    art("보험금을 지급하지 않는 사유",
        "회사는 다음 중 어느 한 가지로 보험금 지급사유가 발생한 때에는 보험금을 지급하지 않습니다.",
        "1. 피보험자가 고의로 자신을 해친 경우. 다만 피보험자가 심신상실 등으로 자유로운 의사결정을 할 수 없는 상태에서 "
        "자신을 해친 경우와 계약의 보장개시일부터 2년이 지난 후에 자살한 경우에는 사망보험금을 지급합니다.",
        "2. 보험수익자가 고의로 피보험자를 해친 경우. 다만 그 보험수익자가 보험금의 일부 보험수익자인 경우에는 다른 보험수익자에게 "
        "해당하는 보험금을 지급합니다.",
        "3. 계약자가 고의로 피보험자를 해친 경우.",
        "4. 전쟁, 외국의 무력행사, 혁명, 내란, 사변, 폭동으로 인한 경우.",
        "5. 보장개시일 전에 생긴 지급사유 또는 면책기간 중에 생긴 지급사유.",
        "6. 계약 전 알릴 의무를 위반하여 회사가 계약을 해지한 경우로서 위반 사실이 보험금 지급사유 발생에 영향을 미친 경우.")
    art("상품별 보장하지 않는 사항",
        "각 상품의 보장하지 않는 사항은 다음과 같으며, 상품별 약관에서 정한 내용이 우선합니다.",
        [f"- {p.name}: " + " ".join(p.exclusions) for p in products.values()])
    art("중복 지급 규칙",
        "하나의 사고나 질병으로 둘 이상의 보험금 지급사유가 생긴 경우 다음 규칙에 따라 지급합니다.",
        [f"- {r['title']} ({r['payout']}): {' '.join(r['rule'].split())}" for r in conflicts])

    chap("제3관 보험금의 청구와 지급 절차")
    art("보험금의 청구",
        "① 보험수익자는 보험금 지급사유가 발생한 사실을 안 때에는 지체 없이 회사에 알리고 다음 서류를 제출하여 보험금을 청구해야 합니다.",
        "1. 청구서(회사 양식) 2. 사고증명서(진단서, 사망진단서, 입퇴원확인서 등) 3. 신분증(본인이 아닌 경우 본인의 인감증명서 또는 "
        "본인서명사실확인서 포함) 4. 기타 보험수익자가 보험금 수령에 필요하여 제출하는 서류",
        f"② 보험금은 {', '.join(claims['claim_channels'])}로 청구할 수 있습니다.",
        "③ 청구 유형별 구비서류는 다음과 같습니다.",
        _claim_type_lines())
    art("보험금의 지급절차",
        [f"{i}. {n}" for i, n in enumerate(claims["claim_common_notes"], start=1)],
        "회사가 보험금 지급 기일 안에 보험금을 지급하지 않으면 지급 기일 다음 날부터 지급일까지의 기간에 대해 약관에서 정한 이자를 더하여 지급합니다.")
    art("보험금 청구권의 소멸시효",
        "보험금 청구권, 보험료 반환청구권, 해약환급금 청구권은 3년간 행사하지 않으면 소멸시효가 완성됩니다.")

    chap("제4관 계약자의 계약 전 알릴 의무 등")
    std = next(q for q in uw["question_sets"] if q["id"] == "standard")
    simple = next(q for q in uw["question_sets"] if q["id"] == "simplified_355")
    art("계약 전 알릴 의무",
        "① 계약자 또는 피보험자는 청약할 때 청약서에서 질문한 사항에 대하여 알고 있는 사실을 반드시 사실대로 알려야 합니다.",
        f"② {_defined('고지의무', '계약 전 알릴 의무(고지의무)')}",
        "일반심사 상품의 주요 질문은 다음과 같습니다.",
        [f"- ({q['period']}) {q['text']}" for q in std["questions"]],
        f"{simple['name']} 방식의 {simple['applies_to']}은 다음 3개 질문만 묻습니다.",
        [f"- ({q['period']}) {q['text']}" for q in simple["questions"]])
    art("알릴 의무 위반의 효과",
        "① 회사는 계약자 또는 피보험자가 계약 전 알릴 의무를 위반하고 그 의무가 중요한 사항에 관한 경우 손해의 발생 여부와 관계없이 "
        "계약을 해지하거나 보장을 제한할 수 있습니다.",
        "② 다만 다음 중 하나에 해당하면 계약을 해지하거나 보장을 제한할 수 없습니다. 1. 회사가 계약 당시에 그 사실을 알았거나 "
        "과실로 알지 못한 경우 2. 회사가 그 사실을 안 날부터 1개월 이상 지났거나 보장개시일부터 보험금 지급사유가 발생하지 않고 "
        "2년(진단계약의 경우 1년)이 지난 경우 3. 계약을 체결한 날부터 3년이 지난 경우 4. 보험설계사 등이 알릴 기회를 주지 않았거나 "
        "사실대로 알리는 것을 방해한 경우",
        "③ 회사가 계약을 해지한 경우 해약환급금을 돌려드리며, 알릴 의무 위반 사실이 보험금 지급사유 발생에 영향을 미치지 않았음을 "
        "증명한 경우에는 보험금을 지급합니다.")
    art("사기에 의한 계약",
        "계약자 또는 피보험자가 대리진단, 약물 사용을 숨긴 진단 등 뚜렷한 사기 의사로 계약이 성립되었음을 회사가 증명하는 경우에는 "
        "보장개시일부터 5년 이내(사기 사실을 안 날부터 1개월 이내)에 계약을 취소할 수 있습니다.")

    chap("제5관 보험계약의 성립과 유지")
    art("보험계약의 성립",
        "① 계약은 계약자의 청약과 회사의 승낙으로 이루어집니다. 회사는 피보험자가 계약에 적합하지 않은 경우 승낙을 거절하거나 "
        "별도의 조건(보험가입금액 제한, 일부 보장 제외(부담보), 보험료 할증 등)을 붙여 승낙할 수 있습니다.",
        "② 회사는 청약을 받고 제1회 보험료를 받은 경우 건강진단을 받지 않는 계약은 청약일부터 30일 이내에 승낙 또는 거절하여야 "
        "하며, 승낙한 때에는 보험증권을 드립니다.")
    art("청약의 철회",
        f"① {_defined('청약철회')}",
        f"② 철회 절차: {' '.join(withdraw['steps'])}",
        f"③ 신청 방법: {', '.join(withdraw['channels'])}. 처리: {withdraw['processing']}.",
        [f"④ {n}" if i == 0 else f"⑤ {n}" for i, n in enumerate(withdraw.get("notes", []))])
    art("약관 교부 및 설명 의무",
        "① 회사는 계약자가 청약할 때 약관과 청약서 부본을 드리고 약관의 중요한 내용을 설명하여 드립니다.",
        f"② {disclosures['전화 판매 녹음과 청약서 부본']}",
        f"③ 품질보증해지: {disclosures['품질보증해지']}")
    art("위법계약의 해지",
        f"{disclosures['위법계약해지권']} 회사는 해지 요구를 받은 날부터 10일 이내에 수락 여부를 알려야 하며, "
        "위법계약으로 해지된 경우 해지 수수료 등 비용을 부과하지 않습니다.")
    art("보험기간과 갱신",
        f"① {_defined('갱신')}",
        f"② 갱신 절차: {' '.join(renewal['steps'])}",
        [f"- {n}" for n in renewal.get("notes", [])])

    chap("제6관 보험료의 납입과 계약의 부활")
    art("제1회 보험료 및 회사의 보장개시",
        "회사는 계약의 청약을 승낙하고 제1회 보험료를 받은 때부터 이 약관이 정한 바에 따라 보장을 합니다. 다만 면책기간이 있는 보장은 "
        "면책기간이 끝난 다음 날부터 보장합니다.")
    art("보험료의 납입연체 시 납입최고(독촉)와 계약의 해지",
        f"① {_defined('실효')}",
        "② 회사는 납입기일까지 보험료가 납입되지 않으면 납입최고(독촉)기간(14일 이상)을 정하여 계약자에게 서면, 전화 또는 전자문서로 "
        "알려 드리며, 납입최고기간이 끝나는 날까지 보험료를 내지 않으면 그 다음 날 계약이 해지됩니다.",
        "③ 해지된 계약의 해약환급금이 있으면 계약자는 이를 청구할 수 있습니다.")
    art("보험료의 납입연체로 인한 해지계약의 부활(효력회복)",
        f"① 보험료를 내지 않아 납입최고 후 해지되었으나 해약환급금을 받지 않은 계약은 해지된 날부터 {reinst['deadline_years']}년 이내에 "
        "회사가 정한 절차에 따라 계약의 부활(효력회복)을 청약할 수 있습니다.",
        "② 부활을 청약할 수 있는 계약: " + " ".join(reinst["eligible_cases"]),
        "③ 다음 계약은 부활할 수 없습니다.",
        [f"- {c}" for c in reinst["not_allowed_cases"]],
        "④ 부활의 조건은 다음과 같습니다.",
        [f"- {c}" for c in reinst["conditions"]],
        f"⑤ 부활 청약 서류: {', '.join(reinst['required_documents'])}.",
        f"⑥ {reinst['note']}" if reinst.get("note") else "")
    art("보험료의 납입면제",
        f"{_defined('납입면제')} 상품별 납입면제 사유는 다음과 같습니다.",
        [f"- {p.name}: " + " ".join(p.premium_waiver) for p in products.values() if p.premium_waiver])
    art("보험료의 납입일시중지",
        f"{holiday['description']} " + " ".join(holiday["steps"]),
        [f"- {n}" for n in holiday.get("notes", [])])

    chap("제7관 계약의 해지 및 해약환급금 등")
    art("계약자의 임의해지",
        f"① 계약자는 계약이 소멸하기 전에 언제든지 계약을 해지할 수 있으며, 이 경우 회사는 해약환급금을 드립니다. {cancel['description']}",
        f"② 해지 절차: {' '.join(cancel['steps'])}",
        f"③ 필요 서류: {', '.join(cancel['documents'])}. 처리: {cancel['processing']}.",
        [f"- {n}" for n in cancel.get("notes", [])])
    surrender_types = {}
    for p in products.values():
        surrender_types.setdefault(p.surrender.type, []).append(p.name)
    art("해약환급금",
        f"① {_defined('해약환급금')}",
        "② 해약환급금 유형별 상품은 다음과 같습니다.",
        [f"- {t}: {', '.join(names)}" for t, names in sorted(surrender_types.items())],
        "③ 무해지환급형 상품은 보험료 납입기간 중 계약이 해지되면 해약환급금을 지급하지 않으며, 저해지환급형 상품은 납입기간 중 "
        "표준형보다 적은 해약환급금을 지급합니다. 그 대신 표준형보다 보험료가 저렴합니다.",
        "④ 해약환급금은 납입한 보험료에서 위험보험료, 사업비, 해지공제액을 뺀 적립금을 기준으로 계산하며, 상품요약서에 경과기간별 "
        "예시를 싣습니다.")
    art("보험계약대출",
        f"① {_defined('보험계약대출')}",
        f"② 신청 절차: {' '.join(loan['steps'])}",
        [f"- {n}" for n in loan.get("notes", [])])

    chap("제8관 분쟁의 조정 등")
    art("분쟁의 조정",
        "계약에 관하여 분쟁이 있는 경우 분쟁 당사자 또는 기타 이해관계인과 회사는 금융감독원의 금융분쟁조정위원회에 조정을 신청할 수 "
        "있습니다. 일반금융소비자가 신청한 소액분쟁(2,000만원 이내)은 조정안 제시 전까지 회사가 소송을 제기하지 않습니다.")
    art("관할법원", "계약에 관한 소송 및 민사조정은 계약자의 주소지를 관할하는 법원으로 합니다. 다만 회사와 계약자가 합의하여 관할법원을 "
                   "달리 정할 수 있습니다.")
    art("약관의 해석", "회사는 신의성실의 원칙에 따라 공정하게 약관을 해석하며, 약관의 뜻이 명백하지 않은 경우에는 계약자에게 유리하게 해석합니다.")
    art("개인정보보호", f"회사는 계약과 관련된 개인정보를 계약의 체결·유지·보험금 지급 목적으로만 수집·이용하며, 관련 법령에 따라 "
                      f"안전하게 관리합니다. 개인정보 관련 문의: {company} 고객센터 {COMPANY['customer_center']}.")

    # Number the articles, and give each chapter a line naming its articles (a heading with no
    # text could be left alone at the bottom of a page).
    sections: list[tuple[str, str]] = []
    number = 0
    pending: list[tuple[str, int]] = []  # chapter heading index, first article number
    for kind, title, body in chapter:
        if kind == "chapter":
            pending.append((len(sections), number + 1))
            sections.append((title, ""))
        else:
            number += 1
            sections.append((f"제{number}조 ({title})", "\n".join(b for b in body if b)))
    bounds = [first for _, first in pending[1:]] + [number + 1]
    for (index, first), after in zip(pending, bounds):
        title = sections[index][0]
        sections[index] = (title, f"이 관은 제{first}조부터 제{after - 1}조까지입니다.")
    return sections


TERMS_TITLE = f"{COMPANY['short_name']} 보장성보험 표준약관"


# ------------------------------------------------------------------------------------------------
# 회사 정보


COMPANY_TITLE = f"{COMPANY['short_name']} 회사 정보 안내"


def _company_sections() -> list[tuple[str, str]]:
    c = COMPANY
    products = load_products()
    sections = [
        ("1. 회사 개요", _lines(
            f"회사명: {c['name']} ({c['english_name']})",
            f"설립일: {c['founded']}",
            f"대표자: {c['ceo']}",
            f"본사 주소: {c['head_office']}",
            f"규모: {c['capital']}, {c['total_assets']}, {c['employees']}, {c['planners']}",
            f"{c['short_name']}은 전화(TM), 온라인(CM), 대면(설계사) 채널에서 보장성보험과 연금보험을 판매하는 생명보험회사입니다.",
        )),
        ("2. 재무건전성", _lines(
            f"지급여력비율(K-ICS): {c['kics_date']} 기준 {c['kics_ratio']} (경과조치 적용 후), 경과조치 적용 전 {c['kics_before_transition']}.",
            f"지급여력비율은 보험회사가 보험금을 제때 지급할 수 있는 능력을 나타내는 지표로, 가용자본을 요구자본으로 나눈 비율입니다. "
            f"감독기준은 {c['kics_regulatory_minimum']} 이상이며 권고 수준은 150% 이상입니다.",
            f"보험금지급능력 신용등급: {c['credit_agency']} {c['credit_rating']} ({c['credit_date']} 평가).",
            "재무건전성 지표는 분기마다 경영공시로 공개합니다.",
        )),
        ("3. 고객센터", _lines(
            f"대표 고객센터: {c['customer_center']}",
            f"보험금 청구 전용 상담: {c['claims_line']}",
            f"해외에서 거실 때: {c['overseas_line']}",
            f"상담 운영시간: {c['hours']}",
            c["ars_hours"],
            f"홈페이지와 모바일 앱({c['short_name']} 앱)에서는 계약 조회, 보험금 청구, 보험료 납입, 주소 변경을 24시간 할 수 있습니다.",
            "청각·언어 장애가 있는 고객은 홈페이지의 영상상담(수어) 또는 문자상담을 이용할 수 있습니다.",
        )),
        ("4. 민원 접수", _lines(
            f"민원은 고객센터({c['customer_center']}), 홈페이지 고객민원 메뉴, 우편(본사 소비자보호팀), 가까운 고객플라자 방문으로 접수할 수 있습니다.",
            f"접수된 민원은 접수일부터 {c['complaint_days']}일 이내에 처리 결과를 알려 드리며, 기한 안에 처리하기 어려우면 사유와 예정일을 안내합니다.",
            "처리 결과에 이의가 있으면 금융감독원(국번 없이 1332) 또는 금융감독원 금융분쟁조정위원회에 분쟁조정을 신청할 수 있습니다.",
            "보험 상품 판매 과정에서 불완전판매가 의심되면 소비자보호팀으로 알려 주시면 사실 확인 후 조치합니다.",
        )),
        ("5. 공시실 안내", _lines(
            f"상품공시실({c['homepage']} > 공시실 > 상품공시)에서 판매 중인 상품의 상품요약서, 상품설명서, 약관, 사업방법서를 볼 수 있습니다.",
            "판매를 중지한 상품의 약관과 상품요약서도 판매중지 상품 메뉴에서 계속 제공합니다.",
            "공시이율과 최저보증이율은 매월 1일 공시실 이율공시 메뉴에 게시합니다.",
            "경영공시(분기별 재무제표, 지급여력비율, 보험금 지급률)와 정기공시는 경영공시 메뉴에서 볼 수 있습니다.",
            "생명보험협회 공시실(pub.insure.or.kr)에서 다른 보험회사 상품과 보험료를 비교할 수 있습니다.",
        )),
        ("6. 지점(고객플라자) 안내", "\n".join(
            [f"- {name}: {addr} (전화 {tel})" for name, addr, tel in BRANCHES]
            + ["고객플라자 운영시간은 평일 오전 9시부터 오후 4시까지이며, 보험금 청구와 계약 변경 업무를 처리합니다."])),
        ("7. 판매 상품 목록", "\n".join(
            f"- {p.name} ({p.code}): {p.category}보험, 판매 채널 {', '.join(CHANNEL_NAMES[ch] for ch in p.channels)}"
            for p in products.values())),
        ("8. 개인정보 보호와 녹취 안내", _lines(
            "전화 상담은 상담 내용 확인과 분쟁 예방을 위해 녹음되며, 녹음 파일은 관련 법령이 정한 기간 동안 보관합니다.",
            f"개인정보 보호책임자: 정보보호실장 (문의 {c['customer_center']}). 개인정보 처리방침은 홈페이지 하단에서 볼 수 있습니다.",
            "회사는 전화로 비밀번호, 계좌 비밀번호, 카드 CVC 번호를 묻지 않습니다. 의심스러운 전화는 고객센터로 확인해 주세요.",
        )),
    ]
    return sections


# ------------------------------------------------------------------------------------------------
# Build


@dataclass(frozen=True)
class _Spec:
    stem: str
    doc_type: str
    product_code: str | None
    title: str
    sections: list[tuple[str, str]]
    metadata: dict


def document_specs() -> list[_Spec]:
    """What each document says (title and sections), in build order: summaries, terms, company."""
    specs = []
    for p in load_products().values():
        specs.append(_Spec(summary_stem(p.code), "product_summary", p.code, summary_title(p), _summary_sections(p),
                           {"subject": f"{p.name} ({p.code}) 상품요약서 {p.version}", "author": COMPANY["name"],
                            "keywords": f"product_summary,{p.code}"}))
    specs.append(_Spec(TERMS_STEM, "terms", None, TERMS_TITLE, _terms_sections(),
                       {"subject": "보장성보험 표준약관", "author": COMPANY["name"], "keywords": "terms"}))
    specs.append(_Spec(COMPANY_STEM, "company", None, COMPANY_TITLE, _company_sections(),
                       {"subject": "회사 정보", "author": COMPANY["name"], "keywords": "company"}))
    return specs


def default_docs_dir() -> Path:
    return data_dir() / "insurance" / "docs"


def build_documents(out_dir: str | os.PathLike | None = None) -> list[DocumentInfo]:
    """Write every document as a PDF under `out_dir` (default `data_dir()/insurance/docs`).

    A file whose bytes would not change is left untouched (same mtime), so watchers and the
    incremental ingest see only real changes. PDFs of this set that no longer belong to it
    (e.g. a product removed from products.yaml) are not deleted: the caller decides.
    """
    out = Path(out_dir) if out_dir is not None else default_docs_dir()
    infos = []
    for spec in document_specs():
        pdf = write_pdf_if_changed(out / f"{spec.stem}.pdf", spec.title, spec.sections, metadata=spec.metadata)
        infos.append(DocumentInfo(pdf.path, spec.doc_type, spec.product_code, spec.title, pdf.sha256, pdf.pages))
    return infos

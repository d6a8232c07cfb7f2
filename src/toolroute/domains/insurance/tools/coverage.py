"""coverage tools: what a product pays, for what, how much, how often, and whether an event is covered.

Every fact comes from `products.yaml` (through `toolroute.domains.insurance.products`) and from the
reference tables (`reference.lookup_kcd`, `find_definition`, `find_conflict_rules`). Which coverage a
customer's words are about is decided by `toolroute.domains.insurance.coverage_match` (its word lists
are `data/coverage_words.yaml`); this module turns its matches into the tools' answers.

event_eligibility_check: event -> KCD codes (reference) and words -> the product's coverages ->
면책기간 / 감액기간 from the days since the contract -> exclusions named in the event. Verdicts are the
constants VERDICT_*; the result always says it is a pre-check (final decision at claim review).
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from typing import Annotated, Any, Iterable

from langchain_core.tools import tool
from pydantic import BaseModel, BeforeValidator

from toolroute.domains.insurance import customers as db
from toolroute.domains.insurance import reference as ref
from toolroute.domains.insurance.coverage_match import (
    TYPE_CATEGORIES,
    BenefitMatch,
    basis_coverage,
    codes_overlap,
    compact,
    condition_amount,
    coverage_action,
    coverage_keywords,
    exclusions_named,
    first_money,
    kcd_in_text,
    match_event,
    parse_query,
    rank,
    relating_conditions,
    rider_keywords,
    score_rider,
    sentences_about,
)
from toolroute.domains.insurance.products import (
    Coverage,
    OutsideJoinAge,
    Product,
    Rider,
    load_products,
    monthly_premium,
    normalize_payment_term,
    normalize_sex,
)
from toolroute.domains.insurance.tools._common import (
    clean_text,
    clean_won,
    is_blank,
    josa,
    money,
    product_ref,
    require_product,
    resolve_product,
    won_text,
)
from toolroute.domains.tool_results import needs_user_input, not_found, ok, rejected
from toolroute.domains.insurance.tools.schemas import Age, Text, Won, described

VERDICT_COVERED = "보장 가능"
VERDICT_REDUCED = "감액 지급"
VERDICT_WAITING = "면책기간"
VERDICT_EXCLUDED = "보장 제외"
VERDICT_UNKNOWN = "판단 불가"
VERDICTS = (VERDICT_COVERED, VERDICT_REDUCED, VERDICT_WAITING, VERDICT_EXCLUDED, VERDICT_UNKNOWN)

PRECHECK_NOTICE = ("사전 확인 결과입니다. 실제 보험금 지급 여부와 금액은 보험금 청구 후 진단서 등 서류 심사로 "
                   "최종 결정됩니다.")
BASIC_PLAN_NOTE = "금액은 상품요약서의 기본플랜(가입금액 기준) 금액입니다."
# Days this close to a 면책/감액 boundary get a warning: "3개월" is read as 91 days, and whether the
# event is on day 90 or 91 decides the verdict.
BOUNDARY_MARGIN_DAYS = 7

# Coverage type -> KCD benefit categories (coverage_words.yaml); the tests read it here.
_TYPE_CATEGORIES = TYPE_CATEGORIES


# --- views -----------------------------------------------------------------------------------------

def _category_descriptions() -> dict[str, str]:
    return {c["name"]: c["description"] for c in ref.load_reference().table("kcd")["benefit_categories"]}


def _kcd_view(row: ref.KcdCode) -> dict[str, Any]:
    descriptions = _category_descriptions()
    view = {
        "code": row.code,
        "name": row.name,
        "aliases": list(row.aliases),
        "chapter": row.chapter,
        "kind": "코드 범위" if "-" in row.code else "단일 코드",
        "benefit_categories": list(row.benefit_categories),
        "benefit_category_descriptions": {c: descriptions.get(c, "") for c in row.benefit_categories},
    }
    if row.note:
        view["note"] = row.note
    return view


def _days_text(days: int) -> str:
    if days and days % 365 == 0:
        return f"{days // 365}년"
    return f"{days}일"


def _waiting_text(cov: Coverage) -> str:
    if not cov.waiting_days:
        return "면책기간 없음(계약일부터 보장)"
    return f"계약일부터 {_days_text(cov.waiting_days)} 면책(그 안의 지급 사유는 보장하지 않음)"


def _amount_text(cov: Coverage) -> str:
    return cov.amount_text or f"{won_text(cov.amount)} ({cov.pay_basis})"


def _limit_lines(cov_limit: Any, unit_default: str = "회") -> list[str]:
    unit = cov_limit.unit or unit_default
    lines = []
    if cov_limit.per_year:
        lines.append(f"연간 최대 {cov_limit.per_year}{unit}")
    if cov_limit.per_event:
        lines.append(f"1회(건)당 최대 {cov_limit.per_event}{unit}")
    if cov_limit.lifetime:
        lines.append(f"보험기간 중 최대 {cov_limit.lifetime}{unit}")
    if cov_limit.interval_years:
        lines.append(f"{cov_limit.interval_years}년에 1회")
    return lines


def _coverage_brief(cov: Coverage) -> dict[str, Any]:
    return {"coverage_id": cov.id, "name": cov.name, "type": cov.type, **money("amount", cov.amount),
            "pay_basis": cov.pay_basis, "amount_description": _amount_text(cov)}


def _reduction_view(cov: Coverage) -> dict[str, Any] | None:
    if cov.reduction is None:
        return None
    return {"within_days": cov.reduction.within_days, "ratio": cov.reduction.ratio,
            "text": cov.reduction.text, **money("reduced_amount", cov.amount * cov.reduction.ratio)}


def _coverage_full(cov: Coverage) -> dict[str, Any]:
    view = {
        **_coverage_brief(cov),
        "limit_text": cov.limit_text,
        "limits": _limit_lines(cov.limit),
        "conditions": list(cov.conditions),
        "waiting_days": cov.waiting_days,
        "waiting_period": _waiting_text(cov),
        "reduction": _reduction_view(cov),
        "reduction_period": cov.reduction.text if cov.reduction else "감액기간 없음",
        "conditional_amounts": [{"condition": s, **money("amount", a)}
                                for s in cov.conditions if (a := first_money(s)) is not None],
    }
    if cov.deductible is not None:
        view["deductible"] = {"ratio": cov.deductible.ratio, **money("minimum", cov.deductible.minimum_won),
                              "text": cov.deductible.text}
    return view


def _rider_view(rider: Rider) -> dict[str, Any]:
    return {"rider_code": rider.code, "name": rider.name, "description": rider.description,
            **money("amount", rider.amount), "pay_basis": rider.pay_basis}


def _annuity_view(product: Product) -> dict[str, Any] | None:
    a = product.annuity_conversion
    if a is None:
        return None
    return {"min_contract_years": a.min_contract_years, "min_age": a.min_age, "max_age": a.max_age,
            "conditions": list(a.conditions), "options": list(a.options),
            "text": f"연금전환: 계약일부터 {a.min_contract_years}년 이후, {a.min_age}~{a.max_age}세에 신청 가능 "
                    f"({', '.join(a.options)})"}


def _coverage_options(product: Product) -> list[str]:
    return [c.name for c in product.coverages]


# --- argument cleaning -----------------------------------------------------------------------------

_KOREAN_NUMBERS = {"한": 1, "두": 2, "세": 3, "석": 3, "네": 4, "넉": 4, "다섯": 5, "여섯": 6, "일곱": 7,
                   "여덟": 8, "아홉": 9, "열": 10}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(년|개월|달|주|일)?")


def _clean_days(value: Any) -> int | None:
    """Days since the contract from 30, '30일', '3개월', '1년 반', '두 달', '2주'; None when unclear."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")) or value < 0:
            return None
        return int(min(value, 100_000))
    if not isinstance(value, str) or clean_text(value) is None:
        return None
    text = value.replace(",", "")
    for word, number in sorted(_KOREAN_NUMBERS.items(), key=lambda kv: -len(kv[0])):
        text = re.sub(rf"{word}\s*(?=(달|주|개월|해))", str(number), text)
    text = text.replace("반년", "6개월").replace("해", "년")
    total = 0.0
    found = False
    for match in _DURATION.finditer(text):
        number, unit = float(match.group(1)), match.group(2)
        found = True
        total += number * {"년": 365, "개월": 365 / 12, "달": 365 / 12, "주": 7}.get(unit or "일", 1)
        if unit == "년" and re.match(r"\s*반", text[match.end():]):
            total += 182
    if not found:
        return None
    return int(round(min(total, 100_000)))


def _parse_date(text: str | None) -> dt.date | None:
    if not text:
        return None
    match = re.search(r"(\d{4})\s*[-./년]\s*(\d{1,2})\s*[-./월]\s*(\d{1,2})", text)
    if not match:
        return None
    try:
        return dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def _sum_insured(value: Any) -> int | None:
    """A sum insured: below 1만원 it was said in 만원 ("3000", "5천" -> 3,000만원, 5,000만원), as agents say it."""
    won = clean_won(value, small_unit=10_000, below=10_000)
    return won * 10_000 if won is not None and won < 10_000 else won


Days = Annotated[int | None, BeforeValidator(_clean_days)]
SumInsured = Annotated[int | None, BeforeValidator(_sum_insured)]


# --- argument schemas ------------------------------------------------------------------------------

_PRODUCT_DESC = "상품명 또는 상품코드 (예: 첫날부터암보험, 든든한실버치아보험, B001)"
_DAYS_DESC = "계약일부터 사고·진단일까지 지난 기간 (예: 30일, 3개월, 1년 2개월). 면책·감액 판단에 사용"


class _ProductArgs(BaseModel):
    product: Text = described(_PRODUCT_DESC)


class CoverageSummaryArgs(_ProductArgs):
    pass


class CoverageDetailArgs(_ProductArgs):
    coverage_type: Text = described(
        "자세히 볼 보장 종류 (예: 암, 갑상선암, 사망, 치아, 임플란트, 입원, 치매, 간병, 자기부담금)")


class BenefitAmountArgs(_ProductArgs):
    benefit: Text = described("금액을 알고 싶은 보장(급부) (예: 일반암 진단비, 갑상선암, 임플란트, 사망보험금)")
    sum_insured: SumInsured = described("가입금액 (예: 5000만원, 3천만원). 생략하면 기본플랜 기준")
    plan: Text = described("플랜 설명 (예: 기본플랜, 가입금액 5천만원 플랜)")
    age: Age = described("피보험자 나이(만 나이), 가입 나이 확인용")
    days_since_contract: Days = described(_DAYS_DESC)


class BenefitLimitArgs(_ProductArgs):
    benefit: Text = described("한도를 알고 싶은 보장 (예: 임플란트, 재진단암, 입원일당, 벌금)")


class EventEligibilityArgs(_ProductArgs):
    event: Text = described(
        "고객이 말한 사고·질병·치료 상황 (예: 가입 3개월 뒤 갑상선암 진단받고 수술함, 넘어져 팔이 부러짐)")
    days_since_contract: Days = described(_DAYS_DESC)
    kcd_code: Text = described("진단서의 질병분류코드(KCD)가 있으면 (예: C73, I63)")
    contract_date: Text = described("계약일 (예: 2025-03-01). 경과일을 모를 때 사용")
    event_date: Text = described("진단·사고일 (예: 2025-09-15). 생략하면 오늘 기준")


class DefinitionArgs(BaseModel):
    term: Text = described("정의를 알고 싶은 의학·보험 용어 (예: 유사암, 경도치매, 면책기간, 장기요양등급)")


class IcdArgs(BaseModel):
    query: Text = described("KCD/ICD 코드 또는 병명 (예: C73, F01, I20.9, 갑상선암, 뇌경색)")


class ConflictArgs(BaseModel):
    situation: Text = described(
        "함께 청구하려는 보장들이나 상황 (예: 갑상선암 진단비와 암진단비, 같은 날 두 가지 수술)")
    product: Text = described("특정 상품의 조건도 함께 볼 때 상품명 또는 상품코드 (선택)")


class RiderBundleArgs(_ProductArgs):
    goal: Text = described("보장 목적 (예: 암 치료비 강화, 치아 임플란트 대비, 치매 간병, 입원·수술 위주)")
    monthly_budget: Won = described("월 보험료 예산 (예: 월 5만원)")
    age: Age = described("피보험자 나이(만 나이), 특약 보험료 계산용")
    sex: Text = described("피보험자 성별: 남성 또는 여성, 특약 보험료 계산용")
    payment_term: Text = described("납입기간 (예: 20년납, 전기납). 생략하면 기본 납입기간")


# --- shared steps ----------------------------------------------------------------------------------

def _ask_benefit(product: Product, what: str) -> dict[str, Any]:
    options = _coverage_options(product)
    ask = f"{product.name}의 어느 보장{what} 알려주세요. (보장: {', '.join(options)})"
    return needs_user_input(["benefit"], ask, product=product.name, options=options)


def _benefit_not_found(product: Product, text: str) -> dict[str, Any]:
    options = _coverage_options(product) + [r.name for r in product.riders]
    close = difflib.get_close_matches(text, options, n=3, cutoff=0.3)
    result = not_found("benefit", text, close or options)
    result["product"] = product.name
    result["ask"] = f"{product.name}에는 '{text}'에 해당하는 보장이 없습니다. 보장 목록: {', '.join(options)}"
    return result


def _product_and_benefit(product: str | None, benefit: str | None,
                         what: str) -> tuple[Product, BenefitMatch] | dict[str, Any]:
    """The product and the coverages (or riders) `benefit` names in it, or the result to return:
    the product asked for or not found, the benefit asked for ("어느 보장{what} 알려주세요") or not found."""
    p = require_product(product)
    if isinstance(p, dict):
        return p
    if is_blank(benefit):
        return _ask_benefit(p, what)
    match = rank(p, benefit)
    if not match.coverages and not match.riders:
        return _benefit_not_found(p, benefit)
    return p, match


def _period_status(cov: Coverage, days: int | None, accidental: bool, amount: int) -> dict[str, Any]:
    """면책 / 감액 / full for one coverage at `days` since the contract."""
    if days is None:
        return {"status": None}
    if cov.waiting_days and days <= cov.waiting_days:
        return {"status": VERDICT_WAITING, **money("payable_amount", 0),
                "reason": f"계약일부터 {days}일째로 면책기간({_days_text(cov.waiting_days)}) 안입니다. "
                          f"{cov.waiting_days + 1}일째부터 보장됩니다."}
    if cov.reduction and days <= cov.reduction.within_days:
        if accidental and "질병" in cov.reduction.text:
            return {"status": VERDICT_COVERED, **money("payable_amount", amount),
                    "reason": f"감액기간({cov.reduction.text})이지만 질병이 아닌 재해·사고이므로 감액하지 않습니다."}
        return {"status": VERDICT_REDUCED, **money("payable_amount", amount * cov.reduction.ratio),
                "reason": f"계약일부터 {days}일째로 감액기간 안입니다: {cov.reduction.text}."}
    return {"status": VERDICT_COVERED, **money("payable_amount", amount),
            "reason": "면책·감액기간이 지났습니다." if (cov.waiting_days or cov.reduction) else "면책·감액기간이 없는 보장입니다."}


def _near_boundary(covs: Iterable[Coverage], days: int | None) -> bool:
    if days is None:
        return False
    bounds = [c.waiting_days for c in covs if c.waiting_days] + [c.reduction.within_days for c in covs if c.reduction]
    return any(abs(days - b) <= BOUNDARY_MARGIN_DAYS for b in bounds)


# --- tools -----------------------------------------------------------------------------------------

@tool("coverage_summary", args_schema=CoverageSummaryArgs)
def coverage_summary(product: str | None = None) -> dict[str, Any]:
    """상품 하나가 보장하는 항목 전체(보장명·기본플랜 금액·지급 조건 요약)와 특약 수, 면책·감액기간을 한눈에 요약합니다.
    판매 상품을 찾는 용도(product_search)나 보장 하나를 깊게 설명하는 용도(coverage_detail)가 아닙니다."""
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    p = found
    items = [{
        **_coverage_brief(c),
        "condition": c.limit_text,
        "waiting_days": c.waiting_days,
        "reduction": c.reduction.text if c.reduction else None,
    } for c in p.coverages]
    by_waiting: dict[int, list[str]] = {}
    for c in p.coverages:
        by_waiting.setdefault(c.waiting_days, []).append(c.name)
    waiting_lines = [
        (f"{_days_text(days)} 면책: " if days else "면책기간 없음: ") + ", ".join(names)
        for days, names in sorted(by_waiting.items(), reverse=True)
    ]
    by_reduction: dict[str, list[str]] = {}
    for c in p.coverages:
        if c.reduction:
            key = f"계약일부터 {_days_text(c.reduction.within_days)} 이내 {int(c.reduction.ratio * 100)}% 지급"
            by_reduction.setdefault(key, []).append(c.name)
    reduction_lines = [f"{k}: {', '.join(v)}" for k, v in by_reduction.items()]
    head = ", ".join(f"{c.name}({c.amount_text})" if c.amount_text else f"{c.name} {won_text(c.amount)}"
                     for c in p.coverages)
    annuity = _annuity_view(p)
    summary = (f"{p.name}({p.category}, {p.coverage_period}) 주요 보장 {len(p.coverages)}개: {head}. "
               f"면책기간: {' / '.join(waiting_lines)}. 추가할 수 있는 특약 {len(p.riders)}개."
               + (f" {annuity['text']}." if annuity else ""))
    return ok(
        **product_ref(p),
        category=p.category,
        coverage_period=p.coverage_period,
        coverage_count=len(p.coverages),
        coverages=items,
        riders_count=len(p.riders),
        rider_names=[r.name for r in p.riders],
        waiting_periods=waiting_lines,
        reduction_periods=reduction_lines or ["감액기간 없음"],
        premium_waiver=list(p.premium_waiver),
        annuity_conversion=annuity,
        summary=summary,
        note=BASIC_PLAN_NOTE,
    )


@tool("coverage_detail", args_schema=CoverageDetailArgs)
def coverage_detail(product: str | None = None, coverage_type: str | None = None) -> dict[str, Any]:
    """상품의 보장 하나(암·갑상선암 진단, 사망, 치아·임플란트, 입원, 치매·간병 등)의 지급 조건, 한도, 면책·감액기간,
    관련 보장 제외 사항을 자세히 설명합니다. 금액만 필요하면 benefit_amount_lookup, 청구 절차는 claim_guide를 씁니다."""
    p = require_product(product)
    if isinstance(p, dict):
        return p
    if is_blank(coverage_type):
        # "보장 내용 자세히" without a coverage: every coverage in detail, with the product-level rules.
        details = [_coverage_full(c) for c in p.coverages]
        return ok(
            **product_ref(p),
            coverage_type=None,
            matched="전체 보장",
            coverages=details,
            riders=[_rider_view(r) for r in p.riders],
            exclusions=list(p.exclusions),
            premium_waiver=list(p.premium_waiver),
            surrender={"type": p.surrender.type, "explanation": p.surrender.explanation},
            annuity_conversion=_annuity_view(p),
            summary=f"{p.name} 보장 {len(details)}개 상세: " + "; ".join(
                f"{d['name']} {d['amount_description']}, {d['limit_text']}, {d['waiting_period']}"
                + (f", {d['reduction_period']}" if d["reduction"] else "") for d in details),
            ask="특정 보장(예: " + ", ".join(c.type for c in p.coverages[:3]) + ")을 말씀하시면 그 보장만 자세히 안내합니다.",
            note=BASIC_PLAN_NOTE,
        )
    match = rank(p, coverage_type)
    if not match.coverages and not match.riders:
        return _benefit_not_found(p, coverage_type)

    q = parse_query(coverage_type)
    details = []
    keywords: set[str] = set(q.content_words)
    for cov in match.coverages:
        view = _coverage_full(cov)
        special = condition_amount(cov, q)
        if special:
            view["matched_condition"] = {"condition": special[0], **money("amount", special[1])}
        details.append(view)
        keywords |= coverage_keywords(cov)
    for rider in match.riders:
        keywords |= rider_keywords(rider)
    keywords.discard("")
    exclusions = sentences_about(p.exclusions, keywords)
    waiver = sentences_about(p.premium_waiver, keywords)
    if match.coverages:
        names = ", ".join(c.name for c in match.coverages)
        summary = f"{p.name} '{coverage_type}' 관련 보장 {len(match.coverages)}개: " + "; ".join(
            f"{d['name']} {d['amount_description']}, {d['limit_text']}, {d['waiting_period']}"
            + (f", {d['reduction_period']}" if d["reduction"] else "")
            + (f", {d['deductible']['text']}" if d.get("deductible") else "")
            + (f" — '{coverage_type}': {d['matched_condition']['condition']}" if d.get("matched_condition") else "")
            for d in details)
    else:
        names = ", ".join(r.name for r in match.riders)
        summary = f"{p.name}의 '{coverage_type}'은(는) 주계약이 아닌 특약으로 보장합니다: " + "; ".join(
            f"{r.name}({r.description}, {won_text(r.amount)} {r.pay_basis})" for r in match.riders)
    return ok(
        **product_ref(p),
        coverage_type=coverage_type,
        matched=names,
        coverages=details,
        rider_coverages=[_rider_view(r) for r in match.riders],
        related_coverages=[_coverage_brief(c) for c in match.related],
        related_riders=[_rider_view(r) for r in match.related_riders],
        exclusions=exclusions,
        other_exclusions=[s for s in p.exclusions if s not in exclusions],
        premium_waiver=waiver,
        summary=summary,
        note=BASIC_PLAN_NOTE,
    )


@tool("benefit_amount_lookup", args_schema=BenefitAmountArgs)
def benefit_amount_lookup(
    product: str | None = None,
    benefit: str | None = None,
    sum_insured: int | None = None,
    plan: str | None = None,
    age: int | None = None,
    days_since_contract: int | None = None,
) -> dict[str, Any]:
    """보장(급부) 하나에서 지급되는 보험금 액수를 한 금액으로 알려줍니다(가입금액·계약 경과기간을 주면 그 기준, 감액기간이면 감액 금액).
    지급 조건이나 보장 구조 설명은 coverage_detail, 횟수·한도는 benefit_limit_rules를 씁니다."""
    found = _product_and_benefit(product, benefit, "의 금액을 알고 싶으신지")
    if isinstance(found, dict):
        return found
    p, match = found

    notes: list[str] = []
    if match.riders:
        rider = match.riders[0]
        amount = rider.amount
        result = ok(**product_ref(p), benefit=benefit, matched=rider.name, is_rider=True, rider_code=rider.code,
                    **money("amount", amount), pay_basis=rider.pay_basis, description=rider.description,
                    summary=(f"{p.name} {rider.name}: {won_text(amount)} ({rider.pay_basis})" if amount
                             else f"{p.name} {rider.name}: 정해진 지급 금액이 없는 특약입니다 ({rider.description})"),
                    notes=[BASIC_PLAN_NOTE, "특약에 가입한 경우에만 지급됩니다."])
        return result

    distinct = {(c.amount, c.amount_text) for c in match.coverages}
    if len(match.coverages) > 1 and len(distinct) > 1:
        options = [f"{c.name}({_amount_text(c)})" for c in match.coverages]
        return needs_user_input(
            ["benefit"], f"'{benefit}'에 해당하는 보장이 {len(options)}개입니다: {', '.join(options)}. 어느 보장의 금액인지 알려주세요.",
            product=p.name, options=[c.name for c in match.coverages])
    cov = match.coverages[0]
    q = parse_query(benefit)
    amount = cov.amount
    basis_text = f"{cov.name} 기본플랜 금액"
    special = condition_amount(cov, q)
    if special:
        amount = special[1]
        basis_text = special[0]

    if sum_insured is None and plan:
        sum_insured = _sum_insured(plan)
    stated = re.search(r"가입금액\s*(?:이|은|는|을)?\s*(\d[\d,.]*\s*(?:억|천만|천|백만|만)?\s*(?:만\s*)?원?)", benefit)
    if sum_insured is None and stated:  # "가입금액 5천이면 사망보험금은?"
        sum_insured = _sum_insured(stated.group(1))
    if sum_insured is not None:
        base = basis_coverage(p)
        if not p.sum_insured_min <= sum_insured <= p.sum_insured_max:
            return rejected(
                f"{p.name}의 가입금액({p.sum_insured_basis})은 {won_text(p.sum_insured_min)}부터 "
                f"{won_text(p.sum_insured_max)}까지입니다 (입력: {won_text(sum_insured)}).",
                **product_ref(p), sum_insured=sum_insured, sum_insured_min=p.sum_insured_min,
                sum_insured_max=p.sum_insured_max)
        if base is not None and not special and cov.id == base.id:
            amount = sum_insured
            basis_text = f"가입금액 {won_text(sum_insured)} 기준 ({p.sum_insured_basis})"
        elif base is not None and not special and (pct := re.search(r"(\d+)\s*%", cov.limit_text)) \
                and abs(int(pct.group(1)) / 100 - cov.amount / base.amount) < 1e-9:
            amount = int(round(sum_insured * int(pct.group(1)) / 100))
            basis_text = f"가입금액 {won_text(sum_insured)}의 {pct.group(1)}% ({cov.limit_text})"
        else:
            notes.append(BASIC_PLAN_NOTE)
            notes.append(f"이 보장은 가입금액({p.sum_insured_basis})에 비례하는지 상품요약서에 정해져 있지 않아 "
                         "기본플랜 금액으로 안내합니다. 정확한 금액은 가입설계서를 확인하세요.")
    else:
        notes.append(BASIC_PLAN_NOTE)
        if plan:
            notes.append(f"'{plan}'은(는) 금액을 바꾸지 않습니다. 보험금은 가입금액 기준으로 정해집니다.")
    if age is not None and not p.join_age_min <= age <= p.join_age_max:
        notes.append(f"{age}세는 {p.name} 가입 나이({p.join_age_min}~{p.join_age_max}세) 밖입니다.")

    result = ok(
        **product_ref(p),
        benefit=benefit,
        matched=cov.name,
        coverage_id=cov.id,
        is_rider=False,
        **money("amount", amount),
        pay_basis=cov.pay_basis,
        amount_basis=basis_text,
    )
    if cov.amount_text:
        result["amount_description"] = cov.amount_text
    if cov.deductible:
        result["deductible"] = cov.deductible.text
    if cov.reduction:
        result["reduction_rule"] = cov.reduction.text
    if cov.waiting_days:
        result["waiting_period"] = _waiting_text(cov)
    summary = f"{p.name} {cov.name}: {won_text(amount)} ({cov.pay_basis})"
    if special:
        summary = f"{p.name} {cov.name} 중 '{benefit}': {won_text(amount)} ({special[0]})"
    if cov.amount_text and not special:
        summary += f" — {cov.amount_text}"
    if days_since_contract is not None:
        status = _period_status(cov, days_since_contract, False, amount)
        result.update(days_since_contract=days_since_contract, period_status=status["status"],
                      **{k: v for k, v in status.items() if k.startswith("payable_amount")},
                      period_reason=status["reason"])
        summary += f" → 계약 {days_since_contract}일째: {status['status']}, 지급액 {status['payable_amount_text']}"
        if status["status"] == VERDICT_REDUCED:
            result.update(money("reduced_amount", status["payable_amount"]))
        if _near_boundary([cov], days_since_contract):
            notes.append("면책·감액기간의 경계에 가까우니 정확한 계약일과 진단(치료)일로 다시 확인하세요.")
    if len(match.coverages) > 1:
        result["same_amount_coverages"] = [c.name for c in match.coverages[1:]]
    result["summary"] = summary
    result["notes"] = notes
    return result


@tool("benefit_limit_rules", args_schema=BenefitLimitArgs)
def benefit_limit_rules(product: str | None = None, benefit: str | None = None) -> dict[str, Any]:
    """보장별 지급 한도 규칙(연간·보험기간 중 횟수, 최대 개수·일수, 몇 년에 1회, 1회당 한도 금액)을 알려줍니다.
    한 번에 받는 금액만 궁금하면 benefit_amount_lookup을 씁니다."""
    found = _product_and_benefit(product, benefit, "의 한도를 알고 싶으신지")
    if isinstance(found, dict):
        return found
    p, match = found
    limits = []
    for cov in match.coverages:
        structured = _limit_lines(cov.limit)
        cap = "한도" in cov.pay_basis
        limits.append({
            "coverage_id": cov.id,
            "name": cov.name,
            "limit_text": cov.limit_text,
            "rules": structured or (["횟수 제한 없음"] if not cap else []),
            "per_year": cov.limit.per_year,
            "per_event": cov.limit.per_event,
            "lifetime": cov.limit.lifetime,
            "interval_years": cov.limit.interval_years,
            "unit": cov.limit.unit,
            **money("amount_per_payment" if not cap else "amount_cap", cov.amount),
            "pay_basis": cov.pay_basis,
            "limit_conditions": [s for s in cov.conditions if re.search(r"한도|1회로|최대|횟수|연간|평생|후에만|\d+\s*(?:회|개|일)", s)],
        })
    rider_limits = [{"rider_code": r.code, "name": r.name, **money("amount", r.amount), "pay_basis": r.pay_basis,
                     "limit_text": r.description} for r in match.riders]
    lines = [f"{item['name']}: {item['limit_text']}" for item in limits] + \
            [f"{r['name']}(특약): {r['pay_basis']} — {r['limit_text']}" for r in rider_limits]
    return ok(**product_ref(p), benefit=benefit, limits=limits, rider_limits=rider_limits,
              summary=f"{p.name} '{benefit}' 지급 한도: " + " / ".join(lines))


@tool("event_eligibility_check", args_schema=EventEligibilityArgs)
def event_eligibility_check(
    product: str | None = None,
    event: str | None = None,
    days_since_contract: int | None = None,
    kcd_code: str | None = None,
    contract_date: str | None = None,
    event_date: str | None = None,
) -> dict[str, Any]:
    """고객이 설명한 사고·질병(진단명, KCD 코드)이 상품에서 보장되는지 면책기간·감액기간·보장 제외 사항까지 따져 사전 판단합니다
    (보장 가능/감액 지급/면책기간/보장 제외/판단 불가). 청구 절차 안내(claim_guide)가 아니며 최종 지급은 청구 심사로 결정됩니다."""
    event_text = " ".join(t for t in (event, kcd_code) if t)
    if not event_text:
        return needs_user_input(["event"], "어떤 사고나 질병인지(진단명, 진단서의 질병코드, 다친 경위) 알려주세요.",
                                **({"product": product} if product else {}))
    if is_blank(product):
        covering = [pr.name for pr in load_products().values() if match_event(pr, parse_query(event_text)).main]
        ask = "어느 상품으로 보장 여부를 확인할지 상품명을 알려주세요."
        if covering:
            ask += f" (이 상황을 보장할 수 있는 상품: {', '.join(covering)})"
        return needs_user_input(["product"], ask, event=event_text, candidates=covering)
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    p = found

    notes: list[str] = []
    days = days_since_contract
    if days is None and contract_date:
        start = _parse_date(contract_date)
        if start is None:
            return needs_user_input(["contract_date"], "계약일을 2025-03-01처럼 연-월-일로 알려주세요.", given=contract_date)
        end = _parse_date(event_date) if event_date else db.REFERENCE_DATE
        if end is None:
            return needs_user_input(["event_date"], "진단(사고)일을 2025-09-15처럼 연-월-일로 알려주세요.", given=event_date)
        if not event_date:
            notes.append(f"진단(사고)일을 오늘({db.REFERENCE_DATE.isoformat()})로 보고 계산했습니다.")
        days = (end - start).days
        if days < 0:
            return needs_user_input(["contract_date", "event_date"], "진단(사고)일이 계약일보다 앞섭니다. 두 날짜를 다시 확인해 주세요.",
                                    contract_date=contract_date, event_date=event_date)
    q = parse_query(event_text)
    if kcd_code and not ref.lookup_kcd(kcd_code):
        notes.append(f"KCD 코드 '{kcd_code}'은(는) 참조표에 없어 상황 설명으로만 판단했습니다.")
    m = match_event(p, q)
    main: list[Coverage] = m.main

    result: dict[str, Any] = {
        **product_ref(p),
        "event": event_text,
        "days_since_contract": days,
        "kcd": [_kcd_view(row) for row in q.kcd],
        "notice": PRECHECK_NOTICE,
    }
    riders = [r for r in p.riders if score_rider(q, r, q.content_words) >= 3]
    if riders:
        result["riders_to_check"] = [_rider_view(r) for r in riders]
    result["possible_coverages"] = [_coverage_brief(c) for c in m.possible]
    if m.severity_excluded:
        result["not_matching_stage"] = m.severity_excluded
    for row in q.kcd:
        if row.note and ("대상이 아니" in row.note or "상해 보장" in row.note):
            notes.append(f"{row.code} {row.name}: {row.note}")

    triggered, expired = exclusions_named(p, main, q, days)
    notes.extend(expired)

    if not main:
        recognised = bool(q.kcd or q.content_words or q.actions)
        if triggered:
            verdict = VERDICT_EXCLUDED
            reason = "보장하지 않는 사유에 해당할 수 있습니다: " + " / ".join(triggered)
        elif not recognised:
            verdict = VERDICT_UNKNOWN
            result["ask"] = "어떤 질병으로 진단받았는지(진단명이나 질병코드) 또는 어떻게 다쳤는지 구체적으로 알려주세요."
            reason = "설명만으로는 어떤 보장에 해당하는지 알 수 없습니다."
        elif riders and not m.severity_excluded:
            verdict = VERDICT_UNKNOWN
            names = ", ".join(r.name for r in riders)
            result["ask"] = f"{names}에 가입하셨는지 확인해 주세요. 주계약에는 이 보장이 없습니다."
            reason = f"주계약에는 해당 보장이 없고 {names}에 가입한 경우에만 보장됩니다."
        else:
            verdict = VERDICT_EXCLUDED
            reason = f"{p.name}에는 이 상황에 해당하는 보장이 없습니다."
            if m.severity_excluded:
                reason = "; ".join(x["reason"] for x in m.severity_excluded)
            if m.possible:
                reason += " 다만 조건을 충족하면 다음 보장이 해당될 수 있습니다: " + ", ".join(c.name for c in m.possible)
        weak = [s for c in p.coverages for s in c.conditions
                if any(w in compact(s) for w in q.content_words)]
        notes.extend(s for s in weak if s not in notes)
        result.update(verdict=verdict, reason=reason, matched_coverages=[], exclusions_triggered=triggered)
    else:
        coverages = []
        for cov in main:
            special = condition_amount(cov, q)
            amount = special[1] if special else cov.amount
            status = _period_status(cov, days, q.accidental, amount)
            coverages.append({
                **_coverage_brief(cov),
                **money("amount", amount),
                "amount_basis": special[0] if special else f"{cov.name} 기본플랜 금액",
                "waiting_period": _waiting_text(cov),
                "reduction": cov.reduction.text if cov.reduction else None,
                "conditions": list(cov.conditions),
                **status,
            })
        if triggered:
            verdict = VERDICT_EXCLUDED
            reason = "보장하지 않는 사유에 해당할 수 있습니다: " + " / ".join(triggered)
        elif days is None and any(c.waiting_days or c.reduction for c in main):
            verdict = VERDICT_UNKNOWN
            rules = "; ".join(f"{c.name}: {_waiting_text(c)}" + (f", {c.reduction.text}" if c.reduction else "")
                              for c in main)
            result["ask"] = "계약일(또는 계약 후 지난 기간)과 진단·사고일을 알려주세요. 면책·감액기간에 따라 지급 여부가 달라집니다."
            result["missing"] = ["days_since_contract"]
            reason = f"해당 보장은 있지만 계약 경과기간을 알아야 판단할 수 있습니다 ({rules})."
        else:
            # The verdict follows the diagnosis benefits when the event triggers any (the others follow them).
            order = [VERDICT_COVERED, VERDICT_REDUCED, VERDICT_WAITING]
            primary = [c for c, cov in zip(coverages, main) if coverage_action(cov) == "진단"] or coverages
            verdict = min((c["status"] or VERDICT_COVERED for c in primary), key=order.index)
            lines = [f"{c['name']} {c['status'] or VERDICT_COVERED}"
                     + (f" {c['payable_amount_text']}" if c.get("payable_amount_text") else f" {c['amount_text']}")
                     for c in coverages]
            reason = f"{verdict}: " + "; ".join(lines) + "."
            waiting = [c["reason"] for c in coverages if c["status"] == VERDICT_WAITING]
            reduced = [c["reason"] for c in coverages if c["status"] == VERDICT_REDUCED]
            if waiting or reduced:
                reason += " " + " ".join(dict.fromkeys(waiting + reduced))
            reason += " 약관의 지급 조건(진단 기준 등)을 충족해야 합니다."
            if _near_boundary(main, days):
                notes.append("면책·감액기간의 경계에 가까우니 정확한 계약일과 진단(사고)일로 다시 확인하세요.")
        result.update(verdict=verdict, reason=reason, matched_coverages=coverages, exclusions_triggered=triggered)
    for sentence in triggered:
        if "특약" in sentence:
            notes.append("보장 제외 사유 중 특약으로 보장을 넓힐 수 있는 경우가 있습니다: " + sentence)
    result["notes"] = notes
    result["summary"] = f"[{result['verdict']}] {p.name}: {result['reason']} ({PRECHECK_NOTICE})"
    return ok(**result)


@tool("diagnosis_definition_lookup", args_schema=DefinitionArgs)
def diagnosis_definition_lookup(term: str | None = None) -> dict[str, Any]:
    """유사암, 경도치매, 장기요양등급, 면책기간 같은 의학·보험 용어의 공식 정의와 관련 KCD 질병코드를 알려줍니다.
    코드와 병명을 서로 찾는 것은 icd_mapping_lookup입니다."""
    if is_blank(term):
        return needs_user_input(["term"], "정의를 알고 싶은 용어를 알려주세요. (예: 유사암, 경도치매, 면책기간)")
    definition = ref.find_definition(term)
    if definition is None:
        reference = ref.load_reference()
        names = [n for d in reference.definitions for n in [d.term, *d.aliases]]
        close = difflib.get_close_matches(term, names, n=3, cutoff=0.4)
        result = not_found("term", term, close)
        kcd = kcd_in_text(term)
        if kcd:
            result["kcd_matches"] = [{"code": k.code, "name": k.name} for k in kcd]
            result["hint"] = "용어 정의는 없지만 질병코드 표에 있습니다. 코드·병명은 icd_mapping_lookup으로 확인하세요."
        result["ask"] = "정의를 찾을 용어를 다시 알려주세요." + (f" 비슷한 용어: {', '.join(close)}" if close else "")
        return result
    related = []
    for code in definition.related_codes:
        rows = ref.lookup_kcd(code)
        row = next((r for r in rows if r.code == code), rows[0] if rows else None)
        related.append({"code": code, "name": row.name if row else None})
    extra: dict[str, Any] = {}
    if compact(term) not in {compact(a) for a in [definition.term, *definition.aliases]}:
        extra["matched_by"] = f"'{term}'에서 찾은 용어 '{definition.term}'의 정의입니다."
    named = [k for k in kcd_in_text(term) if k.code not in definition.related_codes]
    if named:
        extra["query_kcd"] = [{"code": k.code, "name": k.name} for k in named]
    return ok(
        **extra,
        term=definition.term,
        query=term,
        aliases=list(definition.aliases),
        category=definition.category,
        definition=definition.definition,
        related_codes=related,
        summary=f"{definition.term}: {definition.definition}"
                + (f" (관련 코드: {', '.join(r['code'] + ' ' + (r['name'] or '') for r in related)})" if related else ""),
        note="표준약관 기준의 일반 정의이며, 가입한 상품의 약관 정의가 우선합니다.",
    )


@tool("icd_mapping_lookup", args_schema=IcdArgs)
def icd_mapping_lookup(query: str | None = None) -> dict[str, Any]:
    """KCD/ICD 질병분류코드(C73, F01, I20.9)를 병명으로, 병명(갑상선암, 뇌경색)을 코드로 찾아 주고 코드 범위와 보장 분류(암·유사암·뇌혈관 등)를 알려줍니다.
    용어의 정의·판정 기준은 diagnosis_definition_lookup입니다."""
    if is_blank(query):
        return needs_user_input(["query"], "찾을 질병코드(예: C73)나 병명(예: 갑상선암)을 알려주세요.")
    text = str(query)
    rows = list(ref.lookup_kcd(text)) or kcd_in_text(text)
    codes = re.findall(r"(?<![A-Za-z])([A-Za-z]\d{2})", text)
    if len(codes) == 2 and re.search(r"부터|까지|~|-", text):
        for row in ref.lookup_kcd(f"{codes[0]}-{codes[1]}"):
            if row not in rows:
                rows.insert(0, row)
    if not rows:
        reference = ref.load_reference()
        if codes or re.fullmatch(r"\s*[A-Za-z]\s*\d{1,3}(\.\d+)?\s*", text):
            letter = (codes[0] if codes else text.strip())[0].upper()
            candidates = [f"{k.code} {k.name}" for k in reference.kcd if k.code.startswith(letter)][:5]
        else:
            names = {a: k for k in reference.kcd for a in [k.name, *k.aliases]}
            close = difflib.get_close_matches(text, list(names), n=3, cutoff=0.4)
            candidates = [f"{names[c].code} {c}" for c in close]
        result = not_found("kcd", text, candidates)
        result["ask"] = "참조표에 없는 코드나 병명입니다. 진단서의 코드나 정확한 병명을 다시 확인해 주세요."
        return result
    reference = ref.load_reference()
    matches = []
    for row in rows:
        view = _kcd_view(row)
        if "-" in row.code:
            view["codes_in_range"] = [f"{k.code} {k.name}" for k in reference.kcd
                                      if "-" not in k.code and codes_overlap(k.code, row.code)]
        else:
            view["within_ranges"] = [f"{k.code} {k.name}" for k in reference.kcd
                                     if "-" in k.code and codes_overlap(row.code, k.code)]
        matches.append(view)
    summary = "; ".join(f"{m['code']} {m['name']} (보장 분류: {', '.join(m['benefit_categories']) or '없음'})"
                        for m in matches)
    return ok(query=text, direction="코드→병명" if codes else "병명→코드", count=len(matches), matches=matches,
              summary=summary, note="KCD-8 기준 참조표이며, 보장 여부는 가입한 상품의 약관 분류에 따릅니다.")


@tool("multi_benefit_conflict_rule", args_schema=ConflictArgs)
def multi_benefit_conflict_rule(situation: str | None = None, product: str | None = None) -> dict[str, Any]:
    """한 사고·질병으로 여러 보장(진단비·수술비·입원비, 일반암과 유사암, 사망과 재해사망 등)을 함께 청구할 때 각각 지급되는지,
    중복 지급이 안 되는지, 높은 금액 하나만 주는지 같은 지급 규칙을 알려줍니다."""
    if is_blank(situation):
        return needs_user_input(["situation"], "함께 청구하려는 보장이나 상황을 알려주세요. (예: 갑상선암 진단비와 암진단비, 같은 날 두 가지 수술)")
    p = None
    if not is_blank(product):
        found = resolve_product(product)
        if isinstance(found, dict):
            return found
        p = found
    rules = ref.find_conflict_rules(situation)
    general = [{"rule_id": r.id, "title": r.title, "benefits": list(r.benefits), "payout": r.payout,
                "rule": r.rule, "example": r.example} for r in rules]
    product_rules = []
    if p is not None:
        product_rules = [{"coverage_id": cov.id, "coverage": cov.name, "rule": sentence}
                         for cov, sentence in relating_conditions(p, situation)]
    if not general and not product_rules:
        titles = [r.title for r in ref.load_reference().conflict_rules]
        result = not_found("conflict_rule", situation, titles)
        result["ask"] = "어떤 보장들을 함께 청구하려는지 구체적으로 알려주세요. (예: 암진단비와 유사암진단비)"
        return result
    lines = [f"{g['title']}: {g['payout']} — {g['rule']}" for g in general[:3]]
    if product_rules:
        lines.insert(0, f"{p.name} 조건: " + " / ".join(r["rule"] for r in product_rules))
    result = ok(situation=situation, rules=general, best_rule=general[0] if general else None,
                product_rules=product_rules, summary=" | ".join(lines),
                note="일반 원칙입니다. 가입한 상품의 약관 조건이 다르면 상품 약관을 따릅니다.")
    if p is not None:
        result.update(product_ref(p))
    return result


@tool("rider_bundle_recommend", args_schema=RiderBundleArgs)
def rider_bundle_recommend(
    product: str | None = None,
    goal: str | None = None,
    monthly_budget: int | None = None,
    age: int | None = None,
    sex: str | None = None,
    payment_term: str | None = None,
) -> dict[str, Any]:
    """고객의 목적(암 치료비 강화, 치아 임플란트, 치매 간병 등)에 맞는 특약 조합을 상품의 특약 중에서 골라 추천하고,
    나이·성별을 주면 특약 보험료와 예산 안의 합계를 계산합니다. 특약 전체 목록만 필요하면 rider_list를 씁니다."""
    if is_blank(product):
        candidates = []
        if goal:
            q = parse_query(goal)
            candidates = [pr.name for pr in load_products().values()
                          if any(score_rider(q, r) >= 3 for r in pr.riders)]
        ask = "어느 상품에 붙일 특약을 추천할지 상품명을 알려주세요."
        if candidates:
            ask += f" (목적에 맞는 특약이 있는 상품: {', '.join(candidates)})"
        return needs_user_input(["product"], ask, **({"goal": goal, "candidates": candidates} if goal else {}))
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    p = found
    if is_blank(goal):
        return needs_user_input(["goal"], f"{p.name} 특약을 어떤 목적으로 보강하고 싶으신지 알려주세요. "
                                          f"(특약: {', '.join(r.name for r in p.riders) or '없음'})",
                                product=p.name, options=[r.name for r in p.riders])
    if not p.riders:
        return ok(**product_ref(p), goal=goal, bundle=[], summary=f"{p.name}에는 추가할 수 있는 특약이 없습니다.")
    q = parse_query(goal)
    scored = sorted(((r, score_rider(q, r)) for r in p.riders), key=lambda rs: -rs[1])
    chosen = [(r, s) for r, s in scored if s >= 2]
    if not chosen:
        return ok(**product_ref(p), goal=goal, bundle=[],
                  available_riders=[_rider_view(r) for r in p.riders],
                  summary=f"{p.name}의 특약 중 '{goal}' 목적에 맞는 특약을 찾지 못했습니다. 특약 목록을 보고 골라 주세요.")
    best = chosen[0][1]
    bundle = [{**_rider_view(r), "priority": "핵심" if s == best else "선택", "score": s} for r, s in chosen]

    premium: dict[str, Any] | None = None
    notes: list[str] = []
    sex_value = normalize_sex(sex) if sex else None
    if sex and sex_value is None:
        notes.append(f"성별 '{sex}'을(를) 알 수 없어 보험료를 계산하지 않았습니다.")
    if age is not None and sex_value:
        term = normalize_payment_term(p, payment_term)
        if term is None:
            notes.append(f"납입기간 '{payment_term}'은(는) 없어 기본 납입기간({p.premium.base_payment_term})으로 계산했습니다.")
            term = p.premium.base_payment_term
        try:
            base = monthly_premium(p, age, sex_value, payment_term=term)
            for item in bundle:
                item.update(money("monthly_premium_addon",
                                  monthly_premium(p, age, sex_value, payment_term=term, riders=[item["rider_code"]]) - base))
            included = [item for item in bundle]
            dropped = []
            if monthly_budget is not None:
                included, dropped, room = [], [], monthly_budget - base
                for item in bundle:
                    if item["monthly_premium_addon"] <= room:
                        included.append(item)
                        room -= item["monthly_premium_addon"]
                    else:
                        dropped.append(item["name"])
            total = monthly_premium(p, age, sex_value, payment_term=term, riders=[i["rider_code"] for i in included])
            for item in bundle:
                item["included"] = item in included
            premium = {
                "age": age, "sex": sex_value, "payment_term": term,
                **money("base_monthly_premium", base),
                **money("total_monthly_premium", total),
                "included_riders": [i["name"] for i in included],
                "dropped_for_budget": dropped,
            }
            if monthly_budget is not None:
                premium.update(money("monthly_budget", monthly_budget))
                premium["within_budget"] = total <= monthly_budget
                if base > monthly_budget:
                    notes.append(f"주계약 보험료({won_text(base)})만으로 예산({won_text(monthly_budget)})을 넘습니다.")
        except OutsideJoinAge as exc:
            notes.append(str(exc))
        except ValueError as exc:
            notes.append(f"보험료를 계산하지 못했습니다: {exc}")
    elif monthly_budget is not None or age is not None or sex_value:
        need = [label for label, value in (("나이", age), ("성별", sex_value)) if value is None]
        notes.append(f"{josa('·'.join(need), '을/를')} 알려주시면 특약 보험료와 예산 안 합계를 계산합니다.")
    names = ", ".join(f"{b['name']}({b['priority']})" for b in bundle)
    summary = f"{p.name} '{goal}' 목적 특약 조합: {names}"
    if premium:
        summary += (f". {premium['age']}세 {premium['sex']} 기준 월 보험료 합계 {premium['total_monthly_premium_text']}"
                    f"(주계약 {premium['base_monthly_premium_text']} + 특약 {', '.join(premium['included_riders']) or '없음'})")
    return ok(**product_ref(p), goal=goal, bundle=bundle, premium=premium, notes=notes, summary=summary,
              other_riders=[r.name for r in p.riders if r.name not in {b["name"] for b in bundle}])


TOOLS = [
    coverage_summary,
    coverage_detail,
    benefit_amount_lookup,
    benefit_limit_rules,
    event_eligibility_check,
    diagnosis_definition_lookup,
    icd_mapping_lookup,
    multi_benefit_conflict_rule,
    rider_bundle_recommend,
]

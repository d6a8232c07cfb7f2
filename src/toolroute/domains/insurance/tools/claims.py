"""claims tools: how to claim, the documents a claim needs, contract servicing, follow-up to-dos.

Claim types (steps, documents, channels, processing days) come from `data/ref_claims.yaml` and the
servicing procedures from `data/ref_servicing.yaml`, looked up by the words a customer uses
("갑상선암 진단받았어요" -> 유사암진단, "해지된 보험 살리고 싶어요" -> 부활 신청) through
`toolroute.domains.insurance.reference`. A customer's contracts are read from the customer database
through its safe projection only (no phone, resident number, address, e-mail or birth date), and
the reinstatement deadline from ref_underwriting.yaml's `reinstatement` block.

Which tool for which question:
- claim_guide: the procedure (steps, where to submit, how long, 소멸시효); not amounts, not the form list.
- claim_required_forms: the documents for a claim (and the 100만원 copy rule); not application documents.
- contract_manage: servicing after the sale (갱신, 해지, 약관대출, 변경, 부활 신청 …).
- customer_followup_tasks: a dated to-do list from a consultation summary (masked before it is echoed).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from langchain_core.tools import tool
from pydantic import BaseModel

from toolroute.domains.insurance import customers as db
from toolroute.domains.insurance.documents import COMPANY
from toolroute.domains.insurance.products import Product, get_product, load_products
from toolroute.domains.insurance.reference import (
    ClaimType,
    ServicingProcedure,
    claim_type as find_claim_type,
    load_reference,
    lookup_kcd,
    mask_personal_data,
    servicing_procedure,
)
from toolroute.domains.insurance.tools._common import (
    money,
    product_ref,
    require,
    resolve_product,
    won_text,
)
from toolroute.domains.insurance.tools.customer_db import _resolve_customer
from toolroute.domains.tool_results import needs_user_input, not_found, ok
from toolroute.domains.insurance.tools.schemas import Masked, Text, Won, described

ELDERLY_AGE = 65

CLAIM_DESCRIPTION = "청구 유형 또는 상황 (예: 갑상선암 진단, 암 진단, 입원, 수술, 사망, 치아 치료, 실손, 교통사고)"
CUSTOMER_ID_DESCRIPTION = "고객번호 (예: C0003). 알고 있으면 이름보다 우선합니다."
CUSTOMER_NAME_DESCRIPTION = "계약자(고객) 이름 (예: 최수진)"

# A KCD benefit family (ref_kcd.yaml) -> the claim type it is claimed as, for codes such as "C73".
_CLAIM_BY_BENEFIT = {
    "유사암": "CLM_MINOR_CANCER", "암": "CLM_CANCER", "뇌혈관": "CLM_BRAIN_HEART",
    "허혈성심장": "CLM_BRAIN_HEART", "치매": "CLM_DEMENTIA", "장기요양": "CLM_CARE", "치아": "CLM_DENTAL",
}
# Words that say "a claim" without saying which one.
_GENERIC_CLAIM_WORDS = re.compile(
    r"보험금|청구|신청|접수|방법|절차|서류|필요|준비|알려|주세요|줘|하려면|하고|싶어요|싶은데|싶어|어떻게|해야|"
    r"하나요|돼요|되나요|받으려면|받고|관련|문의|뭐|무엇|어떤|좀|요|[?!.,\s]")
# claim_common_notes about documents go with claim_required_forms, the others with claim_guide.
_FORM_NOTE = re.compile(r"사본|위임장|원본|인감")


# --- argument schemas ------------------------------------------------------------------------------
# Names and choices are cleaned and masked (a not_found answer echoes what it was given); the
# consultation summary is masked by customer_followup_tasks itself, which also counts what it masked.

class ClaimGuideArgs(BaseModel):
    claim_type: Masked = described(CLAIM_DESCRIPTION)
    product: Masked = described("청구하려는 가입 상품명 또는 상품코드 (선택, 예: 첫날부터암보험)")


class ClaimFormsArgs(BaseModel):
    claim_type: Masked = described(CLAIM_DESCRIPTION)
    claim_amount: Won = described("청구 금액 (선택, 예: 80만원, 3000000). 100만원 이하이면 사본 제출 규칙을 안내")


class ContractManageArgs(BaseModel):
    request: Masked = described("요청 업무: 갱신, 해지, 보험계약대출(약관대출), 주소·연락처 변경, 수익자 변경, "
                                "납입방법 변경, 감액, 납입일시중지, 청약철회, 부활 신청")
    customer_id: Masked = described(CUSTOMER_ID_DESCRIPTION + " 주면 해당 계약을 함께 보여줍니다.")
    name: Masked = described(CUSTOMER_NAME_DESCRIPTION + ". 주면 해당 계약을 함께 보여줍니다.")


class FollowupArgs(BaseModel):
    summary: Text = described("상담 요약 또는 상담 메모 원문")
    customer_id: Masked = described(CUSTOMER_ID_DESCRIPTION + " (선택)")
    name: Masked = described(CUSTOMER_NAME_DESCRIPTION + " (선택)")
    reference_date: Masked = described("기한 계산 기준일 YYYY-MM-DD (선택, 생략하면 시스템 기준일)")


# --- shared steps ----------------------------------------------------------------------------------

def _claim_names() -> list[str]:
    return [c.name for c in load_reference().claim_types]


def _resolve_claim(text: str) -> ClaimType | dict[str, Any]:
    """The claim type `text` names (alias, or a KCD code/disease), else needs_user_input / not_found."""
    found = find_claim_type(text)
    if found is None:
        by_id = {c.id: c for c in load_reference().claim_types}
        for kcd in lookup_kcd(text):
            for benefit in kcd.benefit_categories:
                if _CLAIM_BY_BENEFIT.get(benefit) in by_id:
                    found = by_id[_CLAIM_BY_BENEFIT[benefit]]
                    break
            if found:
                break
    if found is not None:
        return found
    names = _claim_names()
    ask = f"어떤 보험금을 청구하시는지 알려주세요: {', '.join(names)}"
    if not _GENERIC_CLAIM_WORDS.sub("", text):
        return needs_user_input(["claim_type"], ask, candidates=names)
    result = not_found("claim_type", mask_personal_data(text)[0], names)
    result["ask"] = ask
    return result


def _common_notes() -> list[str]:
    return [" ".join(str(n).split()) for n in load_reference().table("claims")["claim_common_notes"]]


def _claim_ref(claim: ClaimType) -> dict[str, str]:
    return {"id": claim.id, "name": claim.name}


def _copy_rule() -> tuple[int | None, str | None, str]:
    """(threshold in won, channels for copies, the note) of the '100만원 이하 사본' rule in claim_common_notes."""
    for note in _common_notes():
        match = re.search(r"(\d[\d,]*)\s*만원\s*이하", note)
        if match and "사본" in note:
            channels = re.search(r"사본을\s*(\S+?)로\s*제출", note)
            return int(match.group(1).replace(",", "")) * 10_000, channels.group(1) if channels else None, note
    return None, None, ""


def _resolve_optional_customer(customer_id: str | None, name: str | None):
    """(customer, None) / (None, result to return) / (None, None) when no customer was named."""
    if not customer_id and not name:
        return None, None
    return _resolve_customer(customer_id, name, None, None)


def _add_years(day: dt.date, years: int) -> dt.date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February
        return day.replace(year=day.year + years, day=28)


def _reinstatement_years() -> int:
    return int(load_reference().table("underwriting")["reinstatement"]["deadline_years"])


def _reinstatement_window(contract: dict[str, Any], today: dt.date) -> dict[str, Any]:
    """Deadline facts for a terminated or lapsed contract: 해지(실효)일 + deadline_years."""
    ended = contract.get("termination_date")
    if not ended:
        return {"reinstatement_deadline": None, "within_deadline": None}
    deadline = _add_years(dt.date.fromisoformat(ended), _reinstatement_years())
    days_left = (deadline - today).days
    within = days_left >= 0
    text = (f"부활 신청 기한 {deadline.isoformat()} ({days_left}일 남음)" if within
            else f"부활 신청 기한 {deadline.isoformat()} 경과 ({-days_left}일 지남)")
    return {"reinstatement_deadline": deadline.isoformat(), "days_left": days_left, "within_deadline": within,
            "deadline_text": text}


def _product_of(contract: dict[str, Any]) -> Product | None:
    return get_product(contract.get("product_code") or "")


def _parse_date(text: str | None) -> dt.date | None | dict[str, Any]:
    if not text:
        return None
    match = re.search(r"(\d{4})\D+(\d{1,2})\D+(\d{1,2})", text) or re.fullmatch(r"(\d{4})(\d{2})(\d{2})", text.strip())
    if match:
        try:
            return dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        except ValueError:
            pass
    return needs_user_input(["reference_date"], "기준일을 YYYY-MM-DD 형식으로 알려주세요 (예: 2026-12-01).")


# --- claim_guide ------------------------------------------------------------------------------------

@tool("claim_guide", args_schema=ClaimGuideArgs)
def claim_guide(claim_type: str | None = None, product: str | None = None) -> dict[str, Any]:
    """보험금 청구 유형(사망, 암·유사암 진단, 입원, 수술, 치아, 치매, 실손 등)별 청구 절차 단계, 접수 방법, 처리 기간과
    유의사항(소멸시효 3년 등)을 안내합니다. 보장 금액이나 청구 서류 전체 목록을 알려주는 도구는 아닙니다."""
    missing = require(ask="어떤 보험금을 청구하시는지(예: 암 진단, 입원, 수술, 사망) 알려주세요.", claim_type=claim_type)
    if missing:
        return missing
    claim = _resolve_claim(claim_type)
    if isinstance(claim, dict):
        return claim
    found: Product | None = None
    notes: list[str] = []
    related: list[str] = []
    if product:
        resolved = resolve_product(product)
        if isinstance(resolved, dict):
            return resolved
        found = resolved
        related = [c.name for c in found.coverages if c.type == claim.name or claim.name in c.type]
        if found.code not in claim.product_codes and not related:
            notes.append(f"{found.name}에는 '{claim.name}' 청구와 직접 관련된 보장이 없을 수 있습니다. "
                         "보장 여부는 보장 상세나 보장 여부 사전 확인으로 먼저 확인하세요.")
    guide_notes = [*claim.notes, *(n for n in _common_notes() if not _FORM_NOTE.search(n))]
    documents = list(claim.required_documents)
    pointer = (f"필요 서류 {len(documents)}종({', '.join(documents[:2])} 등)과 조건부 서류는 청구 서류 안내에서 "
               "자세히 확인하세요.")
    channels = list(claim.channels)
    summary = (f"{claim.name} 보험금 청구: {len(claim.steps)}단계, 접수 {', '.join(channels)}, {claim.processing}")
    return ok(
        claim_type=_claim_ref(claim),
        product={**product_ref(found), "related_coverages": related} if found else None,
        steps=list(claim.steps),
        channels=channels,
        claims_line=COMPANY["claims_line"],
        customer_center=COMPANY["customer_center"],
        processing=claim.processing,
        processing_business_days=claim.processing_business_days,
        investigation_business_days=claim.investigation_business_days,
        notes=guide_notes + notes,
        documents_pointer=pointer,
        summary=summary,
    )


# --- claim_required_forms ---------------------------------------------------------------------------

@tool("claim_required_forms", args_schema=ClaimFormsArgs)
def claim_required_forms(claim_type: str | None = None, claim_amount: int | None = None) -> dict[str, Any]:
    """보험금 청구 유형별로 제출해야 하는 서류(청구서, 진단서, 영수증 등)와 상황에 따라 추가되는 서류, 청구 금액에 따른
    사본 제출 규칙을 알려줍니다. 보험 가입(청약) 때 필요한 서류는 이 도구가 아닙니다."""
    missing = require(ask="어떤 보험금을 청구하시는지(예: 암 진단, 입원, 수술, 사망) 알려주세요.", claim_type=claim_type)
    if missing:
        return missing
    claim = _resolve_claim(claim_type)
    if isinstance(claim, dict):
        return claim
    threshold, copy_channels, rule_note = _copy_rule()
    conditional = list(claim.conditional_documents)
    conditional += [n for n in _common_notes() if _FORM_NOTE.search(n) and n != rule_note]
    copies_allowed = None
    if threshold is None:
        submission = rule_note or "서류 제출 방법은 고객센터에 확인해 주세요."
    elif claim_amount is None:
        submission = rule_note
    elif claim_amount <= threshold:
        copies_allowed = True
        submission = (f"청구 금액 {won_text(claim_amount)}은 {won_text(threshold)} 이하라 서류 사본을 "
                      f"{copy_channels or '앱·팩스'}로 제출할 수 있습니다.")
    else:
        copies_allowed = False
        submission = (f"청구 금액 {won_text(claim_amount)}은 {won_text(threshold)}을 넘어 원본 또는 원본대조필 사본이 "
                      "필요할 수 있습니다.")
    if copies_allowed and not set(re.split(r"[·,\s]+", copy_channels or "")) & set(claim.channels):
        submission += f" 다만 {claim.name} 청구는 {', '.join(claim.channels)}로 접수합니다."
    documents = list(claim.required_documents)
    return ok(
        claim_type=_claim_ref(claim),
        required_documents=documents,
        conditional_documents=conditional,
        **money("claim_amount", claim_amount),
        copy_threshold=threshold,
        copies_allowed=copies_allowed,
        submission_rule=submission,
        submit_channels=list(claim.channels),
        notes=list(claim.notes),
        scope="보험금 청구 서류입니다. 보험 가입(청약) 서류와는 다릅니다.",
        summary=f"{claim.name} 청구 서류 {len(documents)}종 (조건부 {len(conditional)}건)",
    )


# --- contract_manage --------------------------------------------------------------------------------

_WITHDRAW_DAYS = 30  # 청약일부터 30일 (ref_servicing.yaml SVC_WITHDRAW)


def _relevant_contracts(proc: ServicingProcedure, contracts: list[dict[str, Any]], today: dt.date,
                        customer_age: int | None) -> tuple[list[dict[str, Any]], str]:
    """The customer's contracts the request concerns, each with the facts that matter for it, and why."""
    rows: list[dict[str, Any]] = []
    if proc.id == "SVC_REINSTATE":
        for c in contracts:
            if c["status"] in ("해지", "실효"):
                rows.append({**c, **_reinstatement_window(c, today)})
        return rows, "해지·실효된 계약 (부활 신청 대상 여부 확인)"
    active = [c for c in contracts if c["status"] == "유지"]
    if proc.id == "SVC_RENEWAL":
        for c in active:
            if c.get("next_renewal_date"):
                days = (dt.date.fromisoformat(c["next_renewal_date"]) - today).days
                rows.append({**c, "days_to_renewal": days})
        return rows, "유지 중인 갱신형 계약 (다음 갱신일)"
    if proc.id == "SVC_WITHDRAW":
        limit = 45 if customer_age is not None and customer_age >= ELDERLY_AGE else _WITHDRAW_DAYS
        for c in active:
            elapsed = (today - dt.date.fromisoformat(c["contract_date"])).days
            if 0 <= elapsed <= limit:
                rows.append({**c, "days_since_contract": elapsed})
        return rows, f"청약일부터 {limit}일 이내의 유지 계약 (청약철회 가능 기간)"
    for c in active:
        row = dict(c)
        product = _product_of(c)
        if product is not None and proc.id in ("SVC_CANCEL", "SVC_LOAN", "SVC_REDUCE"):
            row["surrender_type"] = product.surrender.type
            if proc.id == "SVC_LOAN" and product.surrender.type == "무해지":
                row["note"] = "무해지환급형은 해약환급금이 없거나 적어 보험계약대출이 어려울 수 있습니다."
        rows.append(row)
    return rows, "유지 중인 계약"


@tool("contract_manage", args_schema=ContractManageArgs)
def contract_manage(
    request: str | None = None, customer_id: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """가입한 계약의 관리 업무(갱신, 해지, 보험계약대출, 주소·수익자·납입방법 변경, 감액, 납입일시중지, 청약철회, 부활 신청)의
    신청 절차·서류·접수 채널을 안내하고, 고객을 알려주면 해당 업무와 관련된 그 고객의 계약을 함께 보여줍니다. 부활 가능 조건
    규정이나 해약환급금 금액을 따지는 도구는 아닙니다."""
    missing = require(ask="어떤 계약 업무(갱신, 해지, 약관대출, 변경, 부활 신청 등)를 도와드릴지 알려주세요.", request=request)
    if missing:
        return missing
    proc = servicing_procedure(request)
    if proc is None:
        procedures = load_reference().servicing_procedures
        compact = re.sub(r"\s+", "", request)
        close = [p.name for p in procedures
                 if len(compact) >= 2 and any(compact in re.sub(r"\s+", "", a) for a in [p.name, *p.aliases])]
        if close:
            return needs_user_input(["request"], f"어떤 업무인지 골라 주세요: {', '.join(close)}", candidates=close)
        result = not_found("servicing_procedure", mask_personal_data(request)[0], [p.name for p in procedures])
        result["ask"] = "계약 관리 업무를 다음 중에서 골라 주세요: " + ", ".join(p.name for p in procedures)
        return result
    customer, other = _resolve_optional_customer(customer_id, name)
    if other is not None:
        return other
    today = db.REFERENCE_DATE
    related: list[dict[str, Any]] | None = None
    basis = None
    notes = list(proc.notes)
    if customer is not None:
        related, basis = _relevant_contracts(proc, db.contracts_of(customer["customer_id"]), today, customer.get("age"))
        if not related:
            notes.append(f"{customer['name']} 고객님에게는 이 업무에 해당하는 계약({basis})이 없습니다.")
    pointers = {
        "SVC_REINSTATE": "부활 가능 조건(연체보험료·이자, 고지, 면책기간 재적용)은 부활 규정 안내에서 확인하세요.",
        "SVC_CANCEL": "해지 전 예상 해약환급금은 해약환급금 안내에서 확인하세요.",
        "SVC_RENEWAL": "갱신 후 예상 보험료는 갱신 보험료 안내에서 확인하세요.",
    }
    summary = f"{proc.name}: {len(proc.steps)}단계, 접수 {', '.join(proc.channels)}, {proc.processing}"
    if customer is not None:
        summary += f" / {customer['name']} 고객님 관련 계약 {len(related or [])}건"
    return ok(
        procedure={"id": proc.id, "name": proc.name, "description": proc.description},
        steps=list(proc.steps),
        documents=list(proc.documents),
        channels=list(proc.channels),
        processing=proc.processing,
        notes=notes,
        see_also=pointers.get(proc.id),
        customer_center=COMPANY["customer_center"],
        customer=customer,
        related_contracts=related,
        related_basis=basis,
        reference_date=today.isoformat() if customer is not None else None,
        summary=summary,
    )


# --- customer_followup_tasks ------------------------------------------------------------------------

# (key, pattern, task, due in days, tool that helps, priority). Checked in order on the masked summary.
_RULES: list[tuple[str, str, str, int, str | None, str]] = [
    ("withdrawal", r"청약\s*철회|가입\s*취소", "청약철회 접수·처리 결과 확인", 1, "contract_manage", "높음"),
    ("application", r"(?<!부활)(?<!부활\s)청약(?!\s*철회)|가입\s*(?:완료|진행|확정|결정|하기로|신청)|계약\s*체결",
     "해피콜(완전판매 모니터링) 진행", 7, "compliance_required_disclosure", "높음"),
    ("disclosure", r"고지|병력|지병|유병|복용|투약|혈압약|당뇨약|치료\s*이력|수술\s*이력|입원\s*이력",
     "고지 관련 서류(진단서·소견서·진료기록) 요청", 3, "underwriting_docs_required", "보통"),
    ("comparison", r"비교", "상품 비교 안내 문구 발송", 1, "comparison_disclaimer_generator", "보통"),
    ("claim", r"청구|보험금\s*(?:신청|문의|접수)", "보험금 청구 서류 체크리스트 발송", 1, "claim_required_forms", "보통"),
    ("reinstatement", r"부활|효력\s*회복|실효", "부활 신청 기한 확인과 부활 조건 안내", 3, "underwriting_reinstatement_rule", "높음"),
    ("renewal", r"갱신(?!형)", "갱신 보험료·갱신 여부 안내 확인", 7, "underwriting_renewal_premium_notice", "보통"),
    ("premium", r"견적|설계서|보험료\s*(?:안내|문의|계산|산출|비교|얼마|궁금)",
     "예상 보험료(설계서) 안내", 2, "premium_estimate", "보통"),
    ("contact", r"주소|연락처\s*변경|이사", "계약자 주소·연락처 변경 처리", 1, "contract_manage", "보통"),
    ("callback", r"재통화|다시\s*(?:연락|전화)|재연락|콜백|나중에\s*(?:연락|전화)|통화\s*예약|검토\s*후\s*연락",
     "재통화(콜백) 진행", 1, None, "보통"),
]
_RETENTION_EXPLICIT = re.compile(r"(?:해지|해약)\s*(?:하고\s*싶|요청|문의|희망|원하|하려|할까|신청|의사|고민|고려|상담)")
_RETENTION_ANY = re.compile(r"(?:해지|해약)(?!된|됐|되었|일|환급|한|\s*된)")
_WHEN = [(re.compile(r"내일"), 1), (re.compile(r"모레"), 2), (re.compile(r"다음\s*주|일주일"), 7),
         (re.compile(r"다음\s*달|한\s*달"), 30)]
_PRIORITY_ORDER = {"높음": 0, "보통": 1, "낮음": 2}


def _without_product_names(text: str) -> str:
    """`text` with every product name and alias replaced by '상품', so rules read only the request words."""
    names = sorted({n for p in load_products().values() for n in p.all_names}, key=len, reverse=True)
    for name in names:
        text = re.sub(r"\s*".join(map(re.escape, name.replace(" ", ""))), "상품", text)
    return text


@tool("customer_followup_tasks", args_schema=FollowupArgs)
def customer_followup_tasks(
    summary: str | None = None,
    customer_id: str | None = None,
    name: str | None = None,
    reference_date: str | None = None,
) -> dict[str, Any]:
    """상담 요약(메모)에서 후속 업무 할 일 목록(해피콜, 서류 요청, 비교 안내문 발송, 해지 방어 연락, 청구 서류 안내, 부활 기한
    안내 등)을 기한과 함께 뽑아 줍니다. 요약 속 개인정보는 가려서 보여줍니다."""
    missing = require(ask="후속 업무를 정리할 상담 요약(메모)을 알려주세요.", summary=summary)
    if missing:
        return missing
    today = _parse_date(reference_date)
    if isinstance(today, dict):
        return today
    today = today or db.REFERENCE_DATE
    customer, other = _resolve_optional_customer(customer_id, name)
    if other is not None:
        return other
    masked, pii = mask_personal_data(summary)

    tasks: list[dict[str, Any]] = []

    def add(key: str, task: str, days: int, tool_name: str | None, priority: str, reason: str, **extra: Any) -> None:
        due = today + dt.timedelta(days=max(days, 0))
        tasks.append({"key": key, "task": task, "due_date": due.isoformat(), "due_in_days": max(days, 0),
                      "tool": tool_name, "priority": priority, "reason": reason, **extra})

    scan = _without_product_names(masked)  # "간편고지종신보험" must not read as 고지
    matched: dict[str, str] = {}
    for key, pattern, task, days, tool_name, priority in _RULES:
        hit = re.search(pattern, scan)
        if hit:
            matched[key] = hit.group(0)
    for key, pattern, task, days, tool_name, priority in _RULES:
        if key not in matched:
            continue
        reason = f"상담 요약에 '{matched[key]}' 언급"
        if key == "callback":
            for when, n in _WHEN:
                if when.search(scan):
                    days = n
                    break
        if key == "reinstatement" and customer is not None:
            ended = [c for c in db.contracts_of(customer["customer_id"]) if c["status"] in ("해지", "실효")]
            if ended:
                for c in ended:
                    window = _reinstatement_window(c, today)
                    if window.get("within_deadline"):
                        due_days = min(days, window["days_left"])
                        add(key, f"{c['product_name']} {task}", due_days, tool_name,
                            "높음", reason, contract_id=c["contract_id"], deadline=window["reinstatement_deadline"],
                            deadline_text=window["deadline_text"])
                    elif window.get("within_deadline") is False:
                        add(key, f"{c['product_name']} 부활 기한 경과: 신규 가입 대안 안내", 3, "product_search",
                            "보통", reason, contract_id=c["contract_id"], deadline=window["reinstatement_deadline"],
                            deadline_text=window["deadline_text"])
                continue
        add(key, task, days, tool_name, priority, reason)
    if _RETENTION_EXPLICIT.search(scan) or (_RETENTION_ANY.search(scan) and "reinstatement" not in matched
                                             and "withdrawal" not in matched):
        word = (_RETENTION_EXPLICIT.search(scan) or _RETENTION_ANY.search(scan)).group(0)
        add("retention", "해지 방어(유지 권유) 재연락: 해약환급금 손실과 대안(감액·납입일시중지) 안내", 2,
            "surrender_value_explain", "높음", f"상담 요약에 '{word}' 언급")
    age_hit = re.search(r"(?<!\d)(\d{2,3})\s*세", scan)
    age = customer.get("age") if customer is not None else (int(age_hit.group(1)) if age_hit else None)
    if "application" in matched and age is not None and ELDERLY_AGE <= age <= 120:
        add("elderly", f"{ELDERLY_AGE}세 이상 고객: 청약철회 기간(45일) 안내와 녹취 확인", 1, "recording_notice_script",
            "높음", f"고객 나이 {age}세")
    if pii:
        add("privacy", "상담 기록에 남은 개인정보 삭제·마스킹 확인", 0, "privacy_masking", "높음",
            f"상담 요약에 개인정보 {len(pii)}건")

    tasks.sort(key=lambda t: (t["due_in_days"], _PRIORITY_ORDER.get(t["priority"], 9)))
    for index, task in enumerate(tasks, start=1):
        task["id"] = f"T{index}"
    pii_types: dict[str, int] = {}
    for item in pii:
        pii_types[item["type"]] = pii_types.get(item["type"], 0) + 1
    head = f"{customer['name']} 고객님 " if customer else ""
    text = (f"{head}후속 업무 {len(tasks)}건 (기준일 {today.isoformat()}): "
            + ", ".join(f"{t['task']}({t['due_date']})" for t in tasks)) if tasks else \
        "상담 요약에서 규칙에 해당하는 후속 업무를 찾지 못했습니다."
    return ok(
        masked_summary=masked,
        masked_personal_data=pii_types,
        customer=customer,
        reference_date=today.isoformat(),
        tasks=tasks,
        task_count=len(tasks),
        summary=text,
    )


TOOLS = [claim_guide, claim_required_forms, contract_manage, customer_followup_tasks]

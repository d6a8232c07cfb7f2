"""The insurance TMR domain as a pack of the shared agent graph (54 tools, seed 002)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from toolroute.agent.pack import DomainPack
from toolroute.config import toolcards_dir
from toolroute.domains.insurance import LABEL
from toolroute.domains.insurance import customers as db
from toolroute.domains.insurance import reference, resources
from toolroute.domains.insurance.products import load_products
from toolroute.domains.insurance.tools import build_tools
from toolroute.agent.redaction import mask_outside, mask_personal_data
from toolroute.domains.insurance.documents import BRANCHES, COMPANY

# The prompts of notebook 07 (card examples by LLM, LLM reranking); its saved replies are keyed by them.
AUGMENT_PROMPT = ("당신은 보험 TM 상담 데이터를 만드는 작가입니다. 상담원이나 고객이 실제로 말할 법한 짧은 한국어 요청 문장을 씁니다. "
                  "답은 JSON 문자열 배열 하나만 쓰세요.")
RERANK_PROMPT = ("당신은 보험 상담 도구 선택기입니다. 요청에 맞는 도구 번호를 잘 맞는 순서대로 JSON 배열로만 답하세요. "
                 "맞는 도구가 없으면 []로 답하세요.")
SYSTEM_PROMPT = (
    "당신은 한결생명 보험 TM(전화) 상담원을 돕는 상담 도우미입니다. 오늘은 2026년 12월 1일입니다.\n"
    "규칙:\n"
    "1. 보험료, 보장, 가입 조건, 심사, 청구, 고객 계약 같은 사실은 도구를 호출해 확인하고, 도구 결과에 있는 숫자와 사실만 말하세요.\n"
    "2. 필요한 도구만 순서대로 호출하고, 답할 수 있으면 더 호출하지 말고 바로 답하세요.\n"
    "3. 인사나 잡담, 도구가 필요 없는 질문에는 도구 없이 짧게 답하세요.\n"
    "4. 도구 결과가 정보를 더 요청하면(needs_user_input) 그 질문을 그대로 고객에게 하세요. 추측하지 마세요.\n"
    "5. 대화에서 이미 나온 고객, 나이, 성별, 상품은 다시 묻지 말고 그대로 쓰세요. 아버지는 남성, 어머니는 여성입니다.\n"
    "6. 한국어로 7줄 이내로 답하세요."
)
DISCLAIMER = "※ 안내해 드린 내용은 참고용이며, 정확한 보장과 보험료는 상품설명서와 약관을 확인해 주세요."
DISCLAIMER_MARKERS = ["참고용", "상품설명서와 약관", "약관을 확인", "상품설명서를 확인"]

# Tool-result fields in Korean, for results shown to the model as lines (AgentConfig.tool_result_format
# "lines"); the most frequent fields of the scenarios' and tasks' gold calls, the rest keep their names.
RESULT_LABELS = {
    "status": "상태", "product_name": "상품", "product": "상품", "products": "상품", "note": "참고", "notes": "참고",
    "customer": "고객", "name": "이름", "age": "나이", "sex": "성별", "occupation": "직업", "verdict": "판정",
    "count": "건수", "counts": "건수", "reference_date": "기준일", "contracts": "계약", "criteria": "조건",
    "rules": "규칙", "coverages": "보장", "coverage": "보장", "channels": "판매 채널", "channel": "판매 채널",
    "disclaimer": "안내 문구", "monthly_premium": "월 보험료", "active_monthly_premium_total": "유지 계약 월 보험료 합계",
    "total_monthly_premium": "월 보험료 합계", "renewal": "갱신", "customer_center": "고객센터",
    "premium_waiver": "납입면제", "underwriting_type": "심사", "payment_term": "납입기간", "riders": "특약",
    "basis": "기준", "claim_type": "청구 유형", "steps": "절차", "processing": "처리", "category": "분류",
    "coverage_period": "보장기간", "checks": "확인 사항", "required_documents": "필요 서류",
    "conditional_documents": "해당 시 서류", "documents": "서류", "waiting_periods": "면책기간",
    "waiting_period": "면책기간", "reduction_periods": "감액기간", "risk_class": "위험등급", "surcharge_pct": "할증률(%)",
    "restrictions": "제한", "contract_date": "계약일", "expiry_date": "만료일", "termination_date": "해지일",
    "next_renewal_date": "갱신일", "join_age": "가입 나이", "sum_insured": "가입금액", "amount": "금액",
    "description": "설명", "reason": "사유", "ask": "확인 필요", "missing": "빠진 정보", "known": "확인된 정보",
    "deadline": "기한", "conditions": "조건", "exclusions": "면책", "benefit": "급부", "event": "사고·진단",
    "kcd": "질병코드", "claim_amount": "청구 금액", "insured_person": "피보험자", "history": "병력",
}
# An answer asking the customer for a fact: the fact's words, then (within a clause) a request.
_REQUEST = (r"[^.!?\n]{0,20}?(?:알려\s*주|말씀해\s*주|말씀\s*부탁|확인해\s*주|확인이\s*필요|입력해\s*주|여쭤|"
            r"(?:이|가)\s*필요|필요합니다|어떻게\s*되(?:시|세)|(?:이|)신가요|인가요|되시나요|\?)")
ASK_PATTERNS = {
    "age": r"(?:나이|연령|몇\s*(?:세|살)|생년월일)" + _REQUEST,
    "sex": r"(?:성별|남성\s*(?:인지|이신지|또는|이나|/)|남자\s*(?:인지|또는|/))" + _REQUEST,
    "customer": r"(?:성함|이름|고객\s*번호|계약자\s*(?:ID|번호))" + _REQUEST,
    "products": r"(?:(?:어떤|어느)\s*(?:상품|보험)|상품\s*(?:명|이름))" + _REQUEST,
}
_MALE_WORDS = ("남성", "남자", "아버지", "아빠", "할아버지", "아들", "남편", "남편분")
_FEMALE_WORDS = ("여성", "여자", "어머니", "엄마", "할머니", "딸", "아내", "부인")
_AGE = re.compile(r"(?<!\d)(\d{1,3})\s*(?:세|살)")
_CUSTOMER_ID = re.compile(r"\bC\d{4}\b")


@lru_cache(maxsize=1)
def _product_words() -> list[tuple[str, str]]:
    """(word as written, product name), longest first, for finding products in a turn."""
    words = []
    for product in load_products().values():
        for word in {product.name, *product.aliases}:
            if len(word.replace(" ", "")) >= 4:
                words.append((word.replace(" ", ""), product.name))
    return sorted(words, key=lambda w: -len(w[0]))


def _sex_of(text: str) -> str | None:
    positions = {}
    for word in _MALE_WORDS:
        i = text.rfind(word)
        if i >= 0:
            positions[i] = "남성"
    for word in _FEMALE_WORDS:
        i = text.rfind(word)
        if i >= 0:
            positions[i] = "여성"
    return positions[max(positions)] if positions else None


def extract_context(text: str, context: dict[str, Any]) -> dict[str, Any]:
    """Customer, age, sex, products, occupation and history named in a turn, merged into `context`."""
    out = dict(context)
    text = text or ""
    compact = text.replace(" ", "")
    customer = None
    match = _CUSTOMER_ID.search(text)
    if match:
        found = db.find_customers(customer_id=match.group())
        customer = found[0] if found else None
    else:
        for name in db.customer_names():
            if name in text:
                found = db.find_customers(name=name)
                customer = found[0] if len(found) == 1 else {"name": name}
                break
    if customer:
        out["customer"] = customer.get("name")
        if customer.get("customer_id"):
            out["customer_id"] = customer["customer_id"]
            out["age"], out["sex"] = customer.get("age"), customer.get("sex")
    age = _AGE.search(text)
    if age and 0 <= int(age.group(1)) <= 110:
        out["age"] = int(age.group(1))
    sex = _sex_of(text)
    if sex:
        out["sex"] = sex
    products: list[str] = list(out.get("products", []))
    seen_here = []
    rest = compact
    for word, name in _product_words():
        if word in rest:
            rest = rest.replace(word, " ")
            if name not in seen_here:
                seen_here.append(name)
    if seen_here:
        products = [p for p in products if p not in seen_here] + seen_here
        out["products"] = products[-3:]
    occupation = reference.find_occupation(text)
    if occupation:
        out["occupation"] = occupation.name
    conditions = reference.find_conditions(text)
    if conditions:
        out["history"] = sorted({*out.get("history", []), *[c.name for c in conditions]})
    return out


def render_context(context: dict[str, Any]) -> str:
    parts = []
    person = " ".join(str(x) for x in (f"{context['age']}세" if context.get("age") is not None else None,
                                        context.get("sex")) if x)
    if context.get("customer"):
        parts.append(f"고객 {context['customer']}" + (f"({person})" if person else ""))
    elif person:
        parts.append(person)
    if context.get("products"):
        parts.append("상품: " + ", ".join(context["products"]))
    if context.get("occupation"):
        parts.append(f"직업: {context['occupation']}")
    if context.get("history"):
        parts.append("병력: " + ", ".join(context["history"]))
    return ", ".join(parts)


def mask_text(text: str) -> str:
    """Personal data masked for the output guardrail: the shapes of `toolroute.agent.redaction` (any
    separator or width, street addresses, birth dates), then the domain's own patterns
    (`ref_privacy.yaml`: account numbers …) outside the company's published contacts, which are no
    personal data (a branch's address or phone number is a correct answer)."""

    public = [COMPANY[k] for k in ("head_office", "customer_center", "claims_line", "overseas_line")]
    public += [field for branch in BRANCHES for field in branch[1:]]
    masked, _ = mask_personal_data(text, public=public)
    return mask_outside(masked, public, lambda part: reference.mask_personal_data(part)[0])


def suggested_customer_names(record: dict[str, Any]) -> list[str]:
    """The close names a customer search that found nobody suggests (`not_found` with `candidates`):
    other customers' names."""
    if record.get("what") == "customer" and isinstance(record.get("candidates"), list):
        return [c for c in record["candidates"] if isinstance(c, str)]
    return []


def find_banned(sentence: str) -> list[dict[str, Any]]:
    return reference.find_banned_phrases(sentence)


def build_pack() -> DomainPack:
    return DomainPack(
        name="insurance",
        answer_start="[가-힣0-9]",  # answers in Korean (AgentConfig.constrained_calls)
        tools=build_tools(),
        system_prompt=SYSTEM_PROMPT,
        label=LABEL,
        rerank_prompt=RERANK_PROMPT,
        augment_prompt=AUGMENT_PROMPT,
        catalog_dir=toolcards_dir("insurance"),
        extract_context=extract_context,
        render_context=render_context,
        mask_text=mask_text,
        resources=resources.resources,
        prompts=resources.prompts,
        # product / rider codes, customer and contract ids: internal, never in an answer
        # (bounded by lookarounds on ASCII: `\b` finds no boundary before a Hangul particle, "B001은";
        # the guardrail also matches them in any case and width, in parentheses, with the particle)
        remove_patterns=[r"(?<![A-Za-z0-9_])B0\d{2}(?:-R\d{2})?(?![A-Za-z0-9_])",
                         r"(?<![A-Za-z0-9_])C\d{4}(?![A-Za-z0-9_])", r"(?<![A-Za-z0-9_])CT\d{5}(?![A-Za-z0-9_])"],
        find_banned=find_banned,
        person_keys=("customer_id",),
        names_in=suggested_customer_names,
        disclaimer=DISCLAIMER,
        disclaimer_markers=DISCLAIMER_MARKERS,
        result_labels=RESULT_LABELS,
        ask_patterns=ASK_PATTERNS,
    )

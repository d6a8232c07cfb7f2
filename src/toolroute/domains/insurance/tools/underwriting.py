"""underwriting tools: pre-underwriting, disclosure questions, knockouts, documents, waiting periods,
exclusions, sum-insured limits, reinstatement, renewal, occupation class and disclosure risk score.

Product facts come from `products.py` (products.yaml); underwriting rules (question sets, knockout
rules, application documents, reinstatement, risk conditions and bands) and occupation classes from
the validated reference tables (`reference.py`); contracts from the customer database. Nothing is
parsed from YAML here.

The tools never raise on user words: every args-schema field is cleaned before validation, and a
missing argument comes back as `needs_user_input` (with the Korean question), an unknown product or
occupation as `not_found` with candidates, an age outside the join ages as `rejected` with the range.

Confusion pairs: underwriting_precheck judges a person's medical history (eligibility_by_product_rule
only applies the product's join ages/channels); underwriting_renewal_premium_notice gives the next
renewal only (renewal_premium_projection gives the whole path); underwriting_docs_required lists
application documents (claim_required_forms lists claim documents).
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from typing import Annotated, Any

from langchain_core.tools import tool
from pydantic import BaseModel, BeforeValidator

from toolroute.domains.insurance import customers as db
from toolroute.domains.insurance.products import (
    Coverage,
    Product,
    attained_age_premium,
    load_products,
    monthly_premium,
)
from toolroute.domains.insurance.reference import KnockoutRule, Occupation, RiskCondition, load_reference
from toolroute.domains.insurance.tools._common import (
    ASK_CHANNEL,
    CHANNEL_LABELS,
    check_age,
    clean_text,
    join_age_text,
    money,
    product_ref,
    renewal_text,
    require_product,
    resolve_channel,
    resolve_person,
    resolve_product,
    resolve_sex,
    won_text,
)
from toolroute.domains.insurance.tools.customer_db import _resolve_customer
from toolroute.domains.tool_results import needs_user_input, not_found, ok, rejected
from toolroute.domains.insurance.tools.schemas import INSURED_AGE, Age, Flag, Text, Won, described
from toolroute.text import folded

PRODUCT_DESCRIPTION = "상품명 또는 상품코드 (예: 첫날부터암보험, 간편고지종신보험, B001)"
HISTORY_DESCRIPTION = ("고지할 병력·투약·입원·수술 내용을 말한 그대로 (예: '고혈압약 5년째 먹고 있고 조절 잘 됨, "
                       "3년 전 대장용종 제거'). 병력이 없으면 '없음'")
DISCLAIMER = "사전 점검이며 최종 심사 결과와 다를 수 있음"

VERDICT_OK = "가입 가능"
VERDICT_CONDITIONAL = "조건부"
VERDICT_DECLINE = "거절 가능"
VERDICT_POSTPONE = "연기"
_SEVERITY = {VERDICT_OK: 0, VERDICT_CONDITIONAL: 1, VERDICT_POSTPONE: 2, VERDICT_DECLINE: 3}
NO_HISTORY = "없음"


# --- argument cleaning ---------------------------------------------------------------------------

_NO_HISTORY_WORDS = {"없음", "없어요", "없습니다", "없다", "없어", "무", "병력없음", "특이사항없음", "해당없음",
                     "건강함", "건강해요", "건강합니다", "아니오", "아니요", "no", "none", "nothing"}


def _clean_history(value: Any) -> str | None:
    """Like clean_text, but '없음' (no history) is an answer, kept as NO_HISTORY, not a blank."""
    if isinstance(value, str) and folded(value).strip(".!~") in _NO_HISTORY_WORDS:
        return NO_HISTORY
    return clean_text(value)


def _clean_int(value: Any) -> int | None:
    """A non-negative int from 3, '3', '3년 후'; None for anything else (never raises)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        value = int(value)
    if isinstance(value, int):
        return value if 0 <= value <= 1000 else None
    if isinstance(value, str):
        match = re.search(r"\d{1,4}", value)
        return int(match.group()) if match else None
    return None


History = Annotated[str | None, BeforeValidator(_clean_history)]
Years = Annotated[int | None, BeforeValidator(_clean_int)]


# --- argument schemas ----------------------------------------------------------------------------
# Every field is cleaned before validation (see `schemas`), so no input can fail.

class PrecheckArgs(BaseModel):
    product: Text = described(PRODUCT_DESCRIPTION)
    age: Age = described(INSURED_AGE)
    sex: Text = described("피보험자 성별: 남성 또는 여성 (아버지·어머니도 가능)")
    history: History = described(HISTORY_DESCRIPTION)
    occupation: Text = described("피보험자 직업 (예: 회사원, 택시기사, 배달 라이더). 생략 가능")


class ProductArgs(BaseModel):
    product: Text = described(PRODUCT_DESCRIPTION)


class KnockoutArgs(ProductArgs):
    history: History = described("해당 여부를 확인할 병력 (생략하면 상품의 거절·연기 규칙 목록만 보여줍니다)")


class DocsArgs(BaseModel):
    channel: Text = described("청약(가입) 채널: TM(전화), CM(온라인), 대면(설계사)")
    age: Age = described("피보험자 나이(만 나이). 미성년자·65세 이상 고령자 서류 확인에 사용")
    product: Text = described(PRODUCT_DESCRIPTION + ". 생략 가능 (채널 판매 여부·가입 나이 확인)")
    minor: Flag = described("피보험자가 미성년자이면 true")
    different_insured: Flag = described("계약자와 피보험자가 다른 사람이면 true (예: 자녀가 부모 보험 가입)")
    has_medical_history: Flag = described("고지할 병력이 있으면 true (진단서·소견서가 필요할 수 있음)")
    sum_insured: Won = described("가입금액(사망 보장 등, 예: '5억원'). 고액 가입 서류 확인에 사용")


class WaitingArgs(ProductArgs):
    coverage: Text = described("특정 보장만 볼 때 보장명·종류·코드 (예: 일반암 진단비, 임플란트, B001-C01)")
    contract_date: Text = described("계약일(예: 2026-03-01). 주면 보장개시일·감액 종료일을 날짜로 계산합니다")


class LimitationsArgs(ProductArgs):
    age: Age = described("피보험자 나이(만 나이). 가입 나이 확인에 사용")
    occupation: Text = described("피보험자 직업. 주면 직업 등급별 가입한도·제한을 함께 보여줍니다")
    sum_insured: Won = described("원하는 가입금액(예: '5천만원'). 주면 한도 안인지 확인합니다")


class ReinstatementArgs(BaseModel):
    customer_id: Text = described("고객번호 (예: C0003). 주면 고객의 해지·실효 계약을 DB에서 읽습니다")
    name: Text = described("계약자(고객) 이름 (예: 최수진)")
    termination_date: Text = described("고객 정보 없이 판단할 때 해지(실효)일 (예: 2023-12-31)")
    reason: Text = described("해지 사유 (예: 보험료 미납으로 실효, 해지 신청해 환급금 받음)")
    product: Text = described("고객의 계약 중 특정 상품만 볼 때 상품명 (예: 암보험)")
    today: Text = described("기준일 (생략하면 시스템 기준일 2026-12-01)")


class RenewalEligibilityArgs(ProductArgs):
    age: Age = described("피보험자의 현재 나이(만 나이). 주면 이 나이에 갱신할 수 있는지 알려줍니다")


class RenewalNoticeArgs(ProductArgs):
    age: Age = described("피보험자의 현재 나이(만 나이)")
    sex: Text = described("피보험자 성별: 남성 또는 여성")
    years_until_renewal: Years = described(
        "이미 가입한 계약이면 다음 갱신까지 남은 햇수 (생략하면 지금 새로 가입해 첫 갱신을 맞는 경우)")


class JobArgs(BaseModel):
    occupation: Text = described("직업 (예: 택시기사, 소방관, 배달 라이더, 건설 현장 근로자)")
    product: Text = described(PRODUCT_DESCRIPTION + ". 주면 그 상품에 미치는 영향도 알려줍니다")


class RiskScoreArgs(BaseModel):
    history: History = described(HISTORY_DESCRIPTION)
    controlled: Flag = described(
        "모든 질환이 약·치료로 잘 조절되면 true, 조절되지 않으면 false (생략하면 문장에서 판단)")


# --- shared helpers -----------------------------------------------------------------------------

def _ref():
    return load_reference()


def _uw_type(product: Product) -> str:
    return "간편고지" if product.simplified_underwriting else "일반심사"


def _period_text(months: int | None) -> str:
    if months is None:
        return "시기 무관(과거 이력 전체)"
    if months == 0:
        return "현재"
    if months % 12 == 0:
        return f"최근 {months // 12}년 이내"
    return f"최근 {months}개월 이내"


def _days_text(days: int) -> str:
    if days and days % 365 == 0:
        return f"{days // 365}년"
    return f"{days}일"


def _add_years(day: dt.date, years: int) -> dt.date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 2월 29일
        return day.replace(year=day.year + years, day=28)


def _add_days(day: dt.date, days: int) -> dt.date:
    """`days` after `day`; whole years (365, 730) count as calendar years."""
    if days and days % 365 == 0:
        return _add_years(day, days // 365)
    return day + dt.timedelta(days=days)


_DATE = re.compile(r"(\d{4})\s*(?:[-./]|년)\s*(\d{1,2})\s*(?:[-./]|월)\s*(\d{1,2})")


def _parse_date(text: str | None) -> dt.date | None:
    """A date from '2023-12-31', '2023.12.31', '2023년 12월 31일'; None when there is none or it is invalid."""
    if not text:
        return None
    match = _DATE.search(str(text))
    if not match:
        return None
    try:
        return dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError:
        return None


def _resolve_age(age: int | None, product: Product) -> int | dict[str, Any]:
    """The age, or needs_user_input (impossible age) / rejected (outside the join ages)."""
    impossible = check_age(age)
    if impossible:
        return impossible
    if not product.join_age_min <= age <= product.join_age_max:
        return rejected(
            f"{product.name}은(는) {join_age_text(product)}만 가입할 수 있습니다 (입력 나이 {age}세).",
            **product_ref(product), age=age, join_age_min=product.join_age_min,
            join_age_max=product.join_age_max, join_age=join_age_text(product))
    return age


def _occupation_candidates(text: str, limit: int = 3) -> list[str]:
    """Occupation names close to `text` (by alias), for a not_found answer."""
    compact = folded(text)
    if not compact:
        return []
    scored: dict[str, float] = {}
    for occ in _ref().occupations:
        for alias in [occ.name, *occ.aliases]:
            key = folded(alias)
            score = difflib.SequenceMatcher(None, compact, key).ratio()
            if len(compact) >= 2 and (compact in key or key in compact):
                score = max(score, 0.9)
            if score >= 0.5:
                scored[occ.name] = max(scored.get(occ.name, 0.0), score)
    return [name for name, _ in sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:limit]]


def _occupation_not_found(text: str) -> dict[str, Any]:
    result = not_found("occupation", text, _occupation_candidates(text))
    result["ask"] = ("직업을 조금 더 구체적으로 알려주세요 (예: 사무직, 택시기사, 건설 현장 근로자)."
                     + (f" 비슷한 직업: {', '.join(result['candidates'])}" if result.get("candidates") else ""))
    return result


def _occupation_view(occ: Occupation) -> dict[str, Any]:
    cls = _ref().occupation_classes[occ.risk_class]
    return {
        "occupation_id": occ.id,
        "occupation": occ.name,
        "risk_class": occ.risk_class,
        "risk_class_text": f"{occ.risk_class}등급",
        "class_label": cls.label,
        "class_description": cls.description,
        "surcharge_pct": occ.surcharge_pct,
        "restrictions": list(occ.restrictions),
        "declined_coverages": list(occ.declined_coverages),
        "note": occ.note,
    }


def _occupation_effect(occ: Occupation, product: Product) -> dict[str, Any]:
    """What the occupation class means for this product: available, surcharge, restrictions."""
    driver_product = "운전자" in product.category
    declined = [d for d in occ.declined_coverages if "운전자" in d] if driver_product else []
    driver_restrictions = [r for r in occ.restrictions if "운전자" in r] if driver_product else []
    fully_declined = any(folded(d) == "운전자보험" for d in declined)
    if driver_product and fully_declined:
        return {"available": False, "verdict": "가입 불가",
                "text": f"{occ.name}({occ.risk_class}등급)은 운전자보험 가입이 거절되는 직군입니다.",
                "restrictions": driver_restrictions, "declined_coverages": declined}
    if driver_product:
        notes = list(driver_restrictions)
        if declined:
            notes.append(f"가입 불가 플랜: {', '.join(declined)}")
        surcharge = occ.surcharge_pct
        text = (f"{occ.name}({occ.risk_class}등급): 운전자보험 보험료 {surcharge}% 할증" if surcharge
                else f"{occ.name}({occ.risk_class}등급): 직업 할증 없이 가입")
        verdict = VERDICT_CONDITIONAL if (surcharge or notes) else VERDICT_OK
        return {"available": True, "verdict": verdict, "text": text, "surcharge_pct": surcharge,
                "restrictions": notes, "declined_coverages": declined}
    if occ.risk_class >= 5:
        return {"available": True, "verdict": VERDICT_CONDITIONAL,
                "text": f"{occ.name}(5등급): 질병 보장만 심사 후 최대 {occ.surcharge_pct}% 할증으로 가입할 수 있고, "
                        f"상해 보장({', '.join(occ.declined_coverages) or '상해 특약'})은 가입할 수 없습니다.",
                "surcharge_pct": occ.surcharge_pct, "restrictions": list(occ.restrictions),
                "declined_coverages": list(occ.declined_coverages)}
    if occ.surcharge_pct:
        return {"available": True, "verdict": VERDICT_OK,
                "text": f"{occ.name}({occ.risk_class}등급): 주계약(질병 보장)은 직업 할증 없이 심사하고, "
                        f"상해 관련 특약에만 {occ.surcharge_pct}% 할증·한도 제한이 있습니다.",
                "surcharge_pct": 0, "rider_surcharge_pct": occ.surcharge_pct,
                "restrictions": list(occ.restrictions), "declined_coverages": list(occ.declined_coverages)}
    return {"available": True, "verdict": VERDICT_OK,
            "text": f"{occ.name}({occ.risk_class}등급): 직업 할증 없이 표준 보험료로 가입합니다.",
            "surcharge_pct": 0, "restrictions": list(occ.restrictions),
            "declined_coverages": list(occ.declined_coverages)}


# --- reading a medical history ---------------------------------------------------------------------

_CLAUSE_SPLIT = re.compile(r"[,.;·\n/]|그리고|(?<=[었았했있받없였])고\s|(?<=[요다])\s")
_NEGATION_AFTER = re.compile(
    r"^(?:(?:이나|나|이랑|랑|하고|과|와|및|또는)[가-힣]{1,4})?"
    r"(?:은|는|이|가|도|을|를|으로|로|진단|이력|병력|경험|치료|받은적|한적|적|은적|도전혀|전혀|까지)*"
    r"(?:없|안(?!정|과|경|면)|않|아니)")
_FUTURE_AFTER = re.compile(r"^(?:을|를|이|가)?(?:권유|예정|필요|소견|날짜|받으라|하라|해보라)")
_KOREAN_MONTHS = {"한": 1, "두": 2, "세": 3, "석": 3, "네": 4, "넉": 4, "다섯": 5, "여섯": 6}


def _clauses(text: str) -> list[str]:
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(text or "") if p and p.strip()]
    return parts or ([text] if text else [])


def _months_ago(clause: str) -> int | None:
    """How long ago a clause's event was, in months ('3년 전' -> 36, '작년' -> 12); None when not said."""
    text = clause
    match = re.search(r"(\d{4})\s*년\s*(\d{1,2})\s*월", text)
    if match:
        year, month = int(match.group(1)), int(match.group(2))
        if 1900 <= year <= db.REFERENCE_DATE.year and 1 <= month <= 12:
            return max(0, (db.REFERENCE_DATE.year - year) * 12 + db.REFERENCE_DATE.month - month)
    match = re.search(r"(\d{4})\s*년(?!\s*(?:전|째|됐|되었|지났|넘))", text)
    if match:
        year = int(match.group(1))
        if 1900 <= year <= db.REFERENCE_DATE.year:
            return max(0, (db.REFERENCE_DATE.year - year) * 12)
    if re.search(r"\d+\s*(?:년|개월|달)\s*째", text):
        return 0  # '5년째 복용 중': still going on
    match = re.search(r"(\d{1,2})\s*년\s*(반)?\s*(전|前|됐|되었|지났|넘|정도\s*전|쯤\s*전)", text)
    if match:
        months = int(match.group(1)) * 12 + (6 if match.group(2) else 0)
        return months + 1 if match.group(3) == "넘" else months
    match = re.search(r"(\d{1,3})\s*개월\s*(전|前|됐|되었|지났|넘|정도\s*전|쯤\s*전)", text)
    if match:
        return int(match.group(1)) + (1 if match.group(2) == "넘" else 0)
    match = re.search(r"(한|두|세|석|네|넉|다섯|여섯)\s*달\s*(전|됐|되었|지났)", text)
    if match:
        return _KOREAN_MONTHS[match.group(1)]
    if re.search(r"반\s*년\s*전", text):
        return 6
    if re.search(r"지난\s*달", text):
        return 1
    if re.search(r"\d+\s*(?:주|일)\s*전|지난\s*주|이번\s*달|어제|그제|며칠\s*전", text):
        return 0
    if "재작년" in text:
        return 24
    if "작년" in text:
        return 12
    if re.search(r"현재|지금|요즘|중이|중입|중인|[는은]\s*중|중$|받고\s*있|먹고\s*있|다니고\s*있", text):
        return 0
    return None


def _negated_after(compact_clause: str, end: int) -> bool:
    return bool(_NEGATION_AFTER.match(compact_clause[end:end + 14]))


def _find_keyword(compact_clause: str, keyword: str, allow_future: bool) -> int | None:
    """End position of a positive (not negated, not merely planned) mention of `keyword`, else None."""
    key = folded(keyword)
    start = compact_clause.find(key)
    while start >= 0:
        end = start + len(key)
        tail = compact_clause[end:end + 10]
        if not _negated_after(compact_clause, end) and (allow_future or not _FUTURE_AFTER.match(tail)):
            return end
        start = compact_clause.find(key, start + 1)
    return None


def _condition_mentions(clause: str) -> list[tuple[RiskCondition, bool]]:
    """Risk conditions named in a clause, each with whether the mention is negated ('당뇨는 없고')."""
    compact = folded(clause)
    found = []
    for cond in _ref().find_conditions(clause):
        negated = True
        for alias in sorted([cond.name, *cond.aliases], key=len, reverse=True):
            key = folded(alias)
            pos = compact.find(key)
            if pos >= 0:
                negated = _negated_after(compact, pos + len(key))
                break
        found.append((cond, negated))
    return found


_UNCONTROLLED = re.compile(
    r"조절\s*(?:이|가)?\s*(?:잘\s*)?(?:안|못|되지|불량)|관리\s*(?:가|를)?\s*(?:잘\s*)?(?:안|못)|합병증|인슐린"
    r"|높아|높게|높은\s*편|재발|전이|악화|불안정|심해")
_CONTROLLED = re.compile(
    r"조절\s*(?:이|가)?\s*(?:잘\s*)?(?:되|돼|됨|중|하고|하는)|관리\s*(?:가|를)?\s*(?:잘\s*)?(?:되|돼|됨|하고)"
    r"|잘\s*(?:조절|관리)|정상|완치|안정|치료\s*(?:종결|끝|마침)|다\s*나았|끊었|중단")
_GOOD_NEGATIONS = re.compile(r"(?:합병증|재발|전이|증상)\s*(?:은|이|도)?\s*(?:전혀\s*)?(?:없|無)")


def _control_state(clause: str) -> bool | None:
    """True (controlled), False (not controlled) or None (not said) from a clause's wording."""
    text = _GOOD_NEGATIONS.sub(" 정상 ", clause)
    if _UNCONTROLLED.search(text):
        return False
    if _CONTROLLED.search(text):
        return True
    return None


_CONTROL_RANK = {False: 2, None: 1, True: 0}


def _condition_groups(text: str) -> list[tuple[str, list[tuple[RiskCondition, bool]]]]:
    """Clauses with the conditions they name; a clause naming none ('조절 잘 돼요') joins the one before."""
    groups: list[tuple[str, list[tuple[RiskCondition, bool]]]] = []
    for clause in _clauses(text):
        mentions = _condition_mentions(clause)
        if mentions or not groups:
            groups.append((clause, mentions))
        else:
            previous, previous_mentions = groups[-1]
            groups[-1] = (f"{previous}, {clause}", previous_mentions)
    return groups


def _risk_score(history: str | None, controlled: bool | None = None) -> dict[str, Any]:
    """Per-condition points with modifiers, total, band, action and cautions of a history text."""
    ref = _ref()
    items: dict[str, dict[str, Any]] = {}
    negated: list[str] = []
    text = "" if history in (None, NO_HISTORY) else history
    for clause, mentions in _condition_groups(text):
        worded = controlled if controlled is not None else _control_state(clause)
        months = _months_ago(clause)
        for cond, is_negated in mentions:
            state, why_not = worded, None
            years = re.search(r"(\d+)\s*년\s*이상", cond.control_criteria)
            if controlled is None and years and months is not None and months < int(years.group(1)) * 12:
                state, why_not = False, f"조절 기준({years.group(0)}) 미충족: 약 {months}개월 전"
            if is_negated:
                if cond.id not in items and cond.name not in negated:
                    negated.append(cond.name)
                continue
            if cond.name in negated:
                negated.remove(cond.name)
            previous = items.get(cond.id)
            if previous is not None and _CONTROL_RANK[previous["controlled"]] >= _CONTROL_RANK[state]:
                continue  # the worst reading wins: not controlled > not said > controlled
            if state is True:
                modifier, why = cond.controlled_modifier, "조절됨"
            elif state is False:
                modifier, why = cond.uncontrolled_modifier, why_not or "조절 안 됨"
            else:
                modifier, why = 0, "조절 여부 미확인(기본 점수)"
            items[cond.id] = {
                "condition_id": cond.id,
                "condition": cond.name,
                "kcd_codes": list(cond.kcd_codes),
                "base_points": cond.points,
                "modifier": modifier,
                "modifier_reason": why,
                "controlled": state,
                "points": cond.points + modifier,
                "control_criteria": cond.control_criteria,
                "if_controlled": cond.points + cond.controlled_modifier,
                "if_uncontrolled": cond.points + cond.uncontrolled_modifier,
                "mentioned_as": clause,
            }
    conditions = list(items.values())
    total = max(0, sum(item["points"] for item in conditions))
    band = ref.risk_band(total)
    by_id = {c.id: c for c in ref.risk_conditions}
    cautions: list[str] = []
    for item in conditions:
        for caution in by_id[item["condition_id"]].cautions:
            if caution not in cautions:
                cautions.append(caution)
    unknown = [item["condition"] for item in conditions if item["controlled"] is None]
    notes = []
    if unknown:
        notes.append(f"{', '.join(unknown)}: 조절 여부를 확인하면 점수가 달라집니다(조절 시 감점, 미조절 시 가점).")
    if text and not conditions:
        notes.append("점수표에 있는 질환이 확인되지 않았습니다. 다른 병력은 심사 시 진단서로 확인하며, "
                     "입원·수술·투약 사실은 모두 고지해야 합니다.")
    return {
        "conditions": conditions,
        "negated_conditions": negated,
        "total_score": total,
        "band": band.label,
        "band_range": f"{band.min_score}~{band.max_score}점" if band.max_score is not None else f"{band.min_score}점 이상",
        "action": band.action,
        "cautions": cautions,
        "notes": notes,
    }


def _rules_for(product: Product) -> list[KnockoutRule]:
    kind = _uw_type(product)
    category = folded(product.category)
    return [r for r in _ref().knockout_rules
            if r.underwriting_type in ("공통", kind)
            and (not r.product_categories or category in {folded(c) for c in r.product_categories})]


def _rule_view(rule: KnockoutRule) -> dict[str, Any]:
    view = {"rule_id": rule.id, "condition": rule.condition, "action": rule.action,
            "period": _period_text(rule.within_months), "within_months": rule.within_months,
            "underwriting_type": rule.underwriting_type}
    if rule.note:
        view["note"] = rule.note
    return view


def _knockouts(product: Product, history: str | None) -> dict[str, Any]:
    """Knockout rules of the product that the history matches (or matched only outside their period)."""
    matched: list[dict[str, Any]] = []
    expired: list[dict[str, Any]] = []
    text = "" if history in (None, NO_HISTORY) else history
    clauses = _clauses(text)
    for rule in _rules_for(product):
        hit = None
        for clause in clauses:
            compact = folded(clause)
            if rule.within_months is not None and rule.within_months > 0:
                # a cancer named by its site ('위암', '갑상선암') counts as a cancer diagnosis
                cancer = any(not neg and any(code.startswith("C") for code in c.kcd_codes)
                             for c, neg in _condition_mentions(clause))
                if cancer and "의심" not in compact:
                    compact += "암진단"
            # planned or recommended treatment counts only for rules about it (현재·예정, '필요 소견', '권유')
            allow_future = (rule.within_months == 0 or "소견" in rule.condition
                            or any("권유" in k or "예정" in k for k in rule.keywords))
            keyword = next((k for k in rule.keywords if _find_keyword(compact, k, allow_future) is not None), None)
            if keyword is None:
                continue
            months = _months_ago(clause)
            if rule.within_months == 0:
                if months and months > 0 and not re.search(r"중|예정|대기|기다", clause):
                    continue
                timing = "현재 해당"
            elif rule.within_months is None:
                timing = "시기 무관"
            elif months is None:
                timing = f"시기 확인 필요({_period_text(rule.within_months)}이면 해당)"
            elif months <= rule.within_months:
                when = "현재·최근" if months == 0 else f"약 {months}개월 전"
                timing = f"{when}: {_period_text(rule.within_months)}에 해당"
            else:
                if any(e["rule_id"] == rule.id for e in expired):
                    continue
                expired.append({**_rule_view(rule), "matched_keyword": keyword, "mentioned_as": clause,
                                "months_ago": months,
                                "timing": f"약 {months}개월 전: {_period_text(rule.within_months)} 기간이 지나 해당 없음"})
                continue
            hit = {**_rule_view(rule), "matched_keyword": keyword, "mentioned_as": clause,
                   "months_ago": months, "timing": timing, "timing_confirmed": "확인 필요" not in timing}
            break
        if hit:
            matched.append(hit)
            expired = [e for e in expired if e["rule_id"] != rule.id]
    return {"matched": matched, "outside_period": expired}


def _worst(verdicts: list[str]) -> str:
    return max(verdicts, key=lambda v: _SEVERITY[v]) if verdicts else VERDICT_OK


def _simplified_alternatives(product: Product, age: int, history: str | None) -> list[dict[str, Any]]:
    """간편고지 products the person could try instead, the product's own kind first."""
    options = [p for p in load_products().values()
               if p.simplified_underwriting and p.code != product.code and p.join_age_min <= age <= p.join_age_max]
    core = folded(product.category).replace("간편", "")
    options.sort(key=lambda p: (core not in folded(p.category), p.code))
    result = []
    for option in options:
        knock = _knockouts(option, history)["matched"]
        result.append({
            **product_ref(option),
            "category": option.category,
            "underwriting": option.simplified_disclosure.name if option.simplified_disclosure else "간편고지",
            "fits": not knock,
            "blocking_rules": [f"{k['rule_id']} {k['condition']} ({k['timing']})" for k in knock],
            "text": (f"{option.name}({option.category}, 간편고지)은 3.5.5 질문에 해당하지 않으면 가입을 검토할 수 있습니다."
                     if not knock else f"{option.name}도 간편고지 질문에 걸릴 수 있습니다."),
        })
    return result


# --- tools ---------------------------------------------------------------------------------------

@tool("underwriting_precheck", args_schema=PrecheckArgs)
def underwriting_precheck(
    product: str | None = None,
    age: int | None = None,
    sex: str | None = None,
    history: str | None = None,
    occupation: str | None = None,
) -> dict[str, Any]:
    """나이·성별·병력(·직업)을 보고 이 사람이 상품에 가입할 수 있을지 사전 심사(가입 가능/조건부/거절 가능/연기)합니다.
    병력 없이 상품의 가입 나이·채널 규칙만 확인할 때는 이 도구가 아니라 eligibility_by_product_rule을 씁니다."""
    found = require_product(product, ask="사전 심사에 필요한 상품명·나이·성별·병력(없으면 '없음')을 알려주세요.",
                            age=age, sex=sex, history=history)
    if isinstance(found, dict):
        return found
    age_ok = _resolve_age(age, found)
    if isinstance(age_ok, dict):
        if age_ok["status"] == "rejected":
            age_ok["verdict"] = "가입 불가(가입 나이 밖)"
            age_ok["disclaimer"] = DISCLAIMER
        return age_ok
    sex_value = resolve_sex(sex)
    if isinstance(sex_value, dict):
        return sex_value

    kind = _uw_type(found)
    reasons: list[str] = [f"가입 나이 {join_age_text(found)}: {age}세 가입 가능"]
    verdicts: list[str] = []

    knock = _knockouts(found, history)
    for hit in knock["matched"]:
        verdict = VERDICT_DECLINE if hit["action"] == "거절" else VERDICT_POSTPONE
        verdicts.append(verdict)
        reasons.append(f"{hit['rule_id']} {hit['condition']} → {hit['action']} ({hit['timing']})")
    for hit in knock["outside_period"]:
        reasons.append(f"{hit['rule_id']} {hit['condition']}: {hit['timing']}")

    score = _risk_score(history)
    if kind == "일반심사":
        band_verdict = {"표준": VERDICT_OK, "조건부": VERDICT_CONDITIONAL}.get(score["band"], VERDICT_DECLINE)
        verdicts.append(band_verdict)
        if score["conditions"]:
            reasons.append(f"병력 위험 점수 {score['total_score']}점({score['band']}): {score['action']}")
    elif score["conditions"]:
        reasons.append(f"병력 위험 점수 {score['total_score']}점은 참고용입니다. 간편고지(3.5.5)는 질문 3개 해당 여부로 심사합니다.")

    occupation_view = None
    if occupation:
        occ = _ref().find_occupation(occupation)
        if occ is None:
            occupation_view = _occupation_not_found(occupation)
            reasons.append(f"직업 '{occupation}'의 위험등급을 확인하지 못했습니다. 직업을 구체적으로 확인하세요.")
        else:
            effect = _occupation_effect(occ, found)
            occupation_view = {**_occupation_view(occ), "effect_on_product": effect}
            reasons.append(effect["text"])
            verdicts.append(VERDICT_DECLINE if not effect["available"] else effect["verdict"])

    verdict = _worst(verdicts)
    if not history or history == NO_HISTORY:
        reasons.append("고지할 병력이 없다고 답했습니다. 청약 시 고지 질문에 사실대로 답해야 합니다.")

    alternatives: list[dict[str, Any]] = []
    if verdict == VERDICT_DECLINE and kind == "일반심사":
        alternatives = _simplified_alternatives(found, age, history)
        fitting = [a["product_name"] for a in alternatives if a["fits"]]
        if fitting:
            reasons.append(f"일반심사에서 거절될 수 있어 간편고지 상품({', '.join(fitting)}) 가입을 함께 검토하세요.")
    if kind == "간편고지" and verdict == VERDICT_OK and score["band"] == "표준":
        reasons.append("간편고지 상품은 일반심사보다 보험료가 비쌀 수 있어, 건강한 분은 일반심사 상품이 더 저렴할 수 있습니다.")

    premium = None
    try:
        premium = monthly_premium(found, age, sex_value)
    except (ValueError, TypeError):
        premium = None
    to_confirm = [f"{h['condition']}: 진단·입원·수술 시기를 확인하세요." for h in knock["matched"]
                  if not h["timing_confirmed"]]
    # cautions that tie a condition to a disclosure question ('용종 절제는 수술 질문에 고지')
    to_confirm += [c for c in score["cautions"] if "질문" in c]
    return ok(
        **product_ref(found),
        underwriting_type=kind,
        insured={"age": age, "sex": sex_value, "occupation": occupation},
        verdict=verdict,
        summary=f"{found.name} {age}세 {sex_value} 사전 심사: {verdict}",
        reasons=reasons,
        knockouts_matched=knock["matched"],
        knockouts_outside_period=knock["outside_period"],
        risk_score=score,
        occupation=occupation_view,
        simplified_alternatives=alternatives,
        to_confirm=to_confirm,
        **money("standard_monthly_premium", premium),
        premium_basis=found.premium.basis,
        disclaimer=DISCLAIMER,
    )


@tool("underwriting_questions_generator", args_schema=ProductArgs)
def underwriting_questions_generator(product: str | None = None) -> dict[str, Any]:
    """상품의 심사 유형(일반심사 / 간편고지 3.5.5)에 맞춰 청약 전에 고객에게 물어볼 계약 전 알릴 의무(고지) 질문을 만듭니다."""
    found = require_product(product)
    if isinstance(found, dict):
        return found
    kind = _uw_type(found)
    sets = [s for s in _ref().table("underwriting")["question_sets"]
            if s.get("underwriting_type") == kind
            and (found.name in str(s.get("applies_to", "")) or "전체" in str(s.get("applies_to", "")))]
    questions = []
    for question_set in sets:
        for q in question_set.get("questions", []):
            questions.append({"question_id": q["id"], "set": question_set["name"], "period": q["period"],
                              "question": q["text"]})
    script = [f"{i}. {q['question']}" for i, q in enumerate(questions, start=1)]
    return ok(
        **product_ref(found),
        underwriting_type=kind,
        disclosure_name=found.simplified_disclosure.name if found.simplified_disclosure else "일반심사 (계약 전 알릴 의무)",
        question_sets=[{"set_id": s["id"], "name": s["name"], "applies_to": s["applies_to"]} for s in sets],
        count=len(questions),
        questions=questions,
        script=script,
        caution="질문에 사실과 다르게 답하면 계약이 해지되거나 보험금이 지급되지 않을 수 있습니다. '예'가 있으면 시기·병명·치료 내용을 함께 확인합니다.",
    )


@tool("underwriting_knockout_rules", args_schema=KnockoutArgs)
def underwriting_knockout_rules(product: str | None = None, history: str | None = None) -> dict[str, Any]:
    """상품 가입을 바로 거절하거나 연기시키는 병력 조건(녹아웃 규칙)을 보여주고, 병력을 주면 해당하는 규칙을 찾습니다."""
    found = require_product(product)
    if isinstance(found, dict):
        return found
    rules = [_rule_view(r) for r in _rules_for(found)]
    result = ok(
        **product_ref(found),
        underwriting_type=_uw_type(found),
        count=len(rules),
        rules=rules,
        decline_rules=[r["rule_id"] for r in rules if r["action"] == "거절"],
        postpone_rules=[r["rule_id"] for r in rules if r["action"] == "연기"],
        summary=f"{found.name}({_uw_type(found)}) 거절·연기 규칙 {len(rules)}개",
    )
    if history:
        knock = _knockouts(found, history)
        result["history"] = history
        result["matched"] = knock["matched"]
        result["outside_period"] = knock["outside_period"]
        if knock["matched"]:
            actions = sorted({m["action"] for m in knock["matched"]}, key=lambda a: a != "거절")
            result["summary"] += f"; 병력이 {len(knock['matched'])}개 규칙에 해당 → {'/'.join(actions)}"
        else:
            result["summary"] += "; 병력이 해당하는 규칙 없음"
        result["disclaimer"] = DISCLAIMER
    return result


@tool("underwriting_docs_required", args_schema=DocsArgs)
def underwriting_docs_required(
    channel: str | None = None,
    age: int | None = None,
    product: str | None = None,
    minor: bool | None = None,
    different_insured: bool | None = None,
    has_medical_history: bool | None = None,
    sum_insured: int | None = None,
) -> dict[str, Any]:
    """채널(TM·CM·대면)별로 보험에 가입(청약)할 때 필요한 서류와 동의 절차를 알려줍니다.
    보험금 청구 서류가 아니며, 청구 서류는 claim_required_forms에서 확인합니다."""
    if not channel:
        return needs_user_input(["channel"], ASK_CHANNEL)
    channel_value = resolve_channel(channel)
    if isinstance(channel_value, dict):
        return channel_value
    found = None
    if product:
        found = resolve_product(product)
        if isinstance(found, dict):
            return found
        if channel_value not in found.channels:
            return rejected(f"{found.name}은(는) {CHANNEL_LABELS[channel_value]} 채널에서 판매하지 않습니다.",
                            **product_ref(found), channel=channel_value, channels=list(found.channels))
    if age is not None:
        impossible = check_age(age)
        if impossible:
            return impossible
        if found is not None:
            age_ok = _resolve_age(age, found)
            if isinstance(age_ok, dict):
                return age_ok
    table = _ref().table("underwriting")
    entry = next((e for e in table["application_documents"] if e["channel"] == channel_value), None)
    if entry is None:
        return not_found("channel", channel_value, [e["channel"] for e in table["application_documents"]])
    required, if_applicable = [], []
    elderly = age is not None and age >= 65
    for doc in entry["documents"]:
        item = {"name": doc["name"], **({"note": doc["note"]} if doc.get("note") else {})}
        if doc.get("required") or (elderly and "65세" in doc["name"]):
            required.append(item)
        else:
            if_applicable.append(item)

    conditional = table["application_conditional_documents"]
    is_minor = bool(minor) or (age is not None and age < 19)
    high_threshold = _high_sum_threshold(conditional)
    is_high = sum_insured is not None and high_threshold is not None and sum_insured > high_threshold
    flags = {"minor": is_minor, "different_insured": bool(different_insured),
             "has_medical_history": bool(has_medical_history), "high_sum": is_high}
    words = {"minor": "미성년", "different_insured": "다르면", "has_medical_history": "병력", "high_sum": "고액"}
    added = [doc for key, word in words.items() if flags[key] for doc in conditional if word in doc]
    not_asked = [doc for key, word in words.items()
                 if not flags[key] for doc in conditional if word in doc]
    notes = []
    if elderly and channel_value != "대면":
        notes.append("65세 이상 고객은 중요사항 설명을 더 천천히, 이해 여부를 확인하며 진행합니다.")
    if found is not None:
        notes.append(f"{found.name} 판매 채널: {', '.join(found.channels)}")
    return ok(
        channel=channel_value,
        channel_label=CHANNEL_LABELS[channel_value],
        channel_description=entry["description"],
        product=product_ref(found) if found is not None else None,
        age=age,
        flags=flags,
        required_documents=required,
        documents_if_applicable=if_applicable,
        conditional_documents=added,
        other_conditional_documents=not_asked,
        summary=(f"{CHANNEL_LABELS[channel_value]} 청약 필수 서류 {len(required)}개"
                 + (f", 추가 서류 {len(added)}개" if added else "")),
        notes=notes + ["보험금 청구 서류는 별도이며 claim_required_forms에서 확인합니다."],
    )


def _high_sum_threshold(conditional: list[str]) -> int | None:
    """The sum above which high-sum documents are needed, read from the conditional-documents text."""
    for doc in conditional:
        if "고액" in doc:
            match = re.search(r"(\d+)\s*(억|천만|만)\s*원", doc)
            if match:
                return int(match.group(1)) * {"억": 100_000_000, "천만": 10_000_000, "만": 10_000}[match.group(2)]
    return None


def _match_coverages(found: Product, text: str) -> list[Coverage]:
    key = folded(text).removesuffix("보장")
    exact = [c for c in found.coverages if key in (folded(c.id), folded(c.name), folded(c.type))]
    if exact:
        return exact
    return [c for c in found.coverages
            if key and (key in folded(c.name) or key in folded(c.type) or folded(c.type) in key)]


@tool("underwriting_waiting_periods", args_schema=WaitingArgs)
def underwriting_waiting_periods(
    product: str | None = None, coverage: str | None = None, contract_date: str | None = None
) -> dict[str, Any]:
    """상품(또는 보장)별 면책기간·감액기간과 보장개시일을 알려주고, 계약일을 주면 실제 날짜로 계산합니다."""
    found = require_product(product)
    if isinstance(found, dict):
        return found
    coverages = list(found.coverages)
    if coverage:
        coverages = _match_coverages(found, coverage)
        if not coverages:
            return not_found("coverage", coverage, [c.name for c in found.coverages])
    start = None
    if contract_date:
        start = _parse_date(contract_date)
        if start is None:
            return needs_user_input(["contract_date"], "계약일을 '2026-03-01'처럼 연-월-일로 알려주세요.",
                                    given=contract_date)
    rows = []
    for c in coverages:
        if c.waiting_days:
            waiting_text = (f"계약일부터 {_days_text(c.waiting_days)} 면책 (보장개시일: 계약일부터 "
                            f"{_days_text(c.waiting_days)}이 지난 날의 다음 날)")
        else:
            waiting_text = "면책기간 없음 (계약일부터 보장)"
        row: dict[str, Any] = {
            "coverage_id": c.id, "coverage": c.name, "type": c.type,
            "waiting_days": c.waiting_days, "waiting_text": waiting_text,
            "reduction": ({"within_days": c.reduction.within_days, "ratio": c.reduction.ratio,
                           "paid_pct": round(c.reduction.ratio * 100), "text": c.reduction.text}
                          if c.reduction else None),
            "reduction_text": c.reduction.text if c.reduction else "감액기간 없음",
        }
        if start is not None:
            row["cover_start_date"] = _add_days(start, c.waiting_days).isoformat()
            if c.reduction:
                full_from = _add_days(start, c.reduction.within_days)
                row["reduced_until"] = (full_from - dt.timedelta(days=1)).isoformat()
                row["full_benefit_from"] = full_from.isoformat()
            else:
                row["full_benefit_from"] = row["cover_start_date"]
        rows.append(row)
    longest = max(rows, key=lambda r: r["waiting_days"])
    notes = []
    if found.renewal_note and "면책" in found.renewal_note:
        notes.append(found.renewal_note)
    reinstatement = _ref().table("underwriting")["reinstatement"]
    has_cancer = any("암" in c.type for c in found.coverages)
    for condition in reinstatement.get("conditions", []):
        if "면책" in condition:
            sentences = [t.strip() for t in re.split(r"(?<=다\.)\s+", condition) if t.strip()]
            notes.append(" ".join(t for t in sentences if has_cancer or "암" not in t))
    notes += [d for d in found.required_disclosures if "면책" in d or "감액" in d or "이내" in d and "%" in d]
    summary = (f"{found.name}: 면책기간 최장 {_days_text(longest['waiting_days'])}({longest['coverage']})"
               if longest["waiting_days"] else f"{found.name}: 면책기간 없음")
    reduced = [r for r in rows if r["reduction"]]
    if reduced:
        summary += f", 감액기간 있는 보장 {len(reduced)}개"
    result = ok(
        **product_ref(found),
        contract_date=start.isoformat() if start else None,
        coverages=rows,
        summary=summary,
        notes=notes,
    )
    if start is None:
        result["hint"] = "계약일을 알려주시면 보장개시일과 감액 종료일을 날짜로 계산해 드립니다."
    return result


@tool("underwriting_exclusions", args_schema=ProductArgs)
def underwriting_exclusions(product: str | None = None) -> dict[str, Any]:
    """상품이 보장하지 않는 사항(면책 사항·보장 제외)을 알려줍니다. 면책기간·감액기간은 underwriting_waiting_periods에서 봅니다."""
    found = require_product(product)
    if isinstance(found, dict):
        return found
    coverage_exclusions = []
    for c in found.coverages:
        for condition in c.conditions:
            if re.search(r"(보장|지급|보상)하지\s*않|제외|대상이\s*아닙", condition):
                coverage_exclusions.append({"coverage_id": c.id, "coverage": c.name, "text": condition})
    return ok(
        **product_ref(found),
        exclusions=list(found.exclusions),
        coverage_exclusions=coverage_exclusions,
        count=len(found.exclusions) + len(coverage_exclusions),
        summary=f"{found.name} 보장하지 않는 사항 {len(found.exclusions)}개"
                + (f", 보장별 제외 {len(coverage_exclusions)}개" if coverage_exclusions else ""),
        note="이 밖에 심사 결과에 따라 특정 부위·질병을 보장하지 않는 조건(부담보)이 붙을 수 있습니다.",
    )


_LIMIT_AMOUNT = re.compile(r"(\d+)\s*(억|천만|만)\s*원")


@tool("underwriting_limitations", args_schema=LimitationsArgs)
def underwriting_limitations(
    product: str | None = None, age: int | None = None, occupation: str | None = None,
    sum_insured: int | None = None,
) -> dict[str, Any]:
    """상품의 최소·최대 가입금액(가입한도)을 알려주고, 직업을 주면 직업 등급별 한도·제한을 함께 보여줍니다. 보험료가 아니라 가입금액 한도입니다."""
    found = require_product(product)
    if isinstance(found, dict):
        return found
    if age is not None:
        age_ok = _resolve_age(age, found)
        if isinstance(age_ok, dict):
            return age_ok
    result = ok(
        **product_ref(found),
        basis=found.sum_insured_basis,
        **money("sum_insured_min", found.sum_insured_min),
        **money("sum_insured_max", found.sum_insured_max),
        age=age,
        summary=(f"{found.name} 가입금액({found.sum_insured_basis}) "
                 f"{won_text(found.sum_insured_min)} ~ {won_text(found.sum_insured_max)}"),
    )
    max_allowed = found.sum_insured_max
    if occupation:
        occ = _ref().find_occupation(occupation)
        if occ is None:
            result["occupation"] = _occupation_not_found(occupation)
        else:
            effect = _occupation_effect(occ, found)
            limits = []
            for text in occ.restrictions:
                match = _LIMIT_AMOUNT.search(text)
                if match:
                    amount = int(match.group(1)) * {"억": 100_000_000, "천만": 10_000_000, "만": 10_000}[match.group(2)]
                    limits.append({"text": text, **money("amount", amount)})
            result["occupation"] = {**_occupation_view(occ), "effect_on_product": effect,
                                    "occupation_limits": limits,
                                    "limits_apply_to": "상해 관련 특약·보장 (주계약 가입금액 한도는 상품 기준)"}
            result["available"] = effect["available"]
            if not effect["available"]:
                max_allowed = 0
                result["summary"] += f"; {effect['text']}"
            elif limits:
                result["summary"] += f"; {occ.name}({occ.risk_class}등급) 상해 보장 한도: " + ", ".join(
                    l["text"] for l in limits)
    if sum_insured is not None:
        if max_allowed == 0:
            fits, text = False, "직업 때문에 이 상품에 가입할 수 없습니다."
        elif sum_insured < found.sum_insured_min:
            fits, text = False, f"{won_text(sum_insured)}은 최소 가입금액 {won_text(found.sum_insured_min)}보다 적습니다."
        elif sum_insured > found.sum_insured_max:
            fits, text = False, f"{won_text(sum_insured)}은 최대 가입금액 {won_text(found.sum_insured_max)}을 넘습니다."
        else:
            fits, text = True, f"{won_text(sum_insured)}은 가입 한도 안입니다."
        result["requested"] = {**money("sum_insured", sum_insured), "within_limits": fits, "text": text}
    return result


# --- reinstatement ------------------------------------------------------------------------------

_REASON_PATTERNS: list[tuple[str, str, bool | None]] = [
    # (regex on the compact reason, case label, reinstatable)
    (r"고지의무위반|고지위반|회사가해지|회사해지|강제해지|알릴의무", "고지의무 위반 등으로 회사가 해지한 계약", False),
    (r"해지신청|해약신청|해지요청|해약|환급금(을)?(받|수령|돌려)|직접해지|본인이해지|제가해지|고객요청|임의해지",
     "계약자가 해지를 신청해 해약환급금을 받은 계약", False),
    (r"만기", "보험기간이 끝난(만기) 계약", False),
    (r"보험금지급|지급으로소멸|소멸", "보험금 지급으로 소멸한 계약", False),
    (r"미납|연체|못내|안내서|못냈|안냈|납입최고|독촉|실효|잔고부족|이체실패|자동이체", "보험료 미납으로 해지(실효)된 계약", True),
]


def _classify_reason(reason: str | None, status: str | None) -> tuple[str | None, bool | None]:
    compact = folded(reason)
    if compact:
        for pattern, label, allowed in _REASON_PATTERNS:
            if re.search(pattern, compact):
                return label, allowed
    if status == "실효":
        return "보험료 미납으로 해지(실효)된 계약", True
    if status == "만기":
        return "보험기간이 끝난(만기) 계약", False
    return None, None


def _reinstatement_rules() -> dict[str, Any]:
    data = _ref().table("underwriting")["reinstatement"]
    return {
        "deadline_years": data["deadline_years"],
        "eligible_cases": list(data["eligible_cases"]),
        "not_allowed_cases": list(data["not_allowed_cases"]),
        "conditions": list(data["conditions"]),
        "required_documents": list(data["required_documents"]),
        "note": data.get("note", ""),
    }


def _judge_reinstatement(termination: dt.date, today: dt.date, reason: str | None,
                         status: str | None) -> dict[str, Any]:
    years = _reinstatement_rules()["deadline_years"]
    deadline = _add_years(termination, years)
    within = today <= deadline
    days_left = (deadline - today).days
    case, allowed = _classify_reason(reason, status)
    if not within:
        verdict, text = "부활 불가", f"해지(실효)일 {termination}부터 {years}년이 지나(기한 {deadline}) 부활할 수 없습니다."
    elif allowed is False:
        verdict, text = "부활 불가", f"{case}은(는) 부활 대상이 아닙니다."
    elif allowed is True:
        verdict, text = "부활 가능", (f"{case}으로 부활 기한 {deadline}까지 {days_left}일 남았습니다. "
                                     "연체보험료와 이자를 내고 회사 승낙(재심사)을 받아야 합니다.")
    else:
        verdict = "확인 필요"
        text = (f"기한({deadline}, {days_left}일 남음) 안이지만 해지 사유를 확인해야 합니다: 보험료 미납으로 해지(실효)됐다면 "
                "부활할 수 있고, 계약자가 해지를 신청해 해약환급금을 받았다면 부활할 수 없습니다.")
    return {
        "termination_date": termination.isoformat(),
        "deadline": deadline.isoformat(),
        "reference_date": today.isoformat(),
        "within_deadline": within,
        "days_left": days_left if within else 0,
        "days_past_deadline": 0 if within else -days_left,
        "reason_case": case,
        "verdict": verdict,
        "reinstatable": {"부활 가능": True, "부활 불가": False}.get(verdict),
        "text": text,
    }


def _full_months(start: dt.date, end: dt.date) -> int:
    months = (end.year - start.year) * 12 + end.month - start.month - (end.day < start.day)
    return max(0, months)


@tool("underwriting_reinstatement_rule", args_schema=ReinstatementArgs)
def underwriting_reinstatement_rule(
    customer_id: str | None = None,
    name: str | None = None,
    termination_date: str | None = None,
    reason: str | None = None,
    product: str | None = None,
    today: str | None = None,
) -> dict[str, Any]:
    """해지·실효된 계약의 부활(효력회복) 가능 여부, 기한(해지일부터 3년)과 조건·서류를 고객 계약이나 해지일로 판단합니다.
    부활 신청 절차 안내만 필요하면 contract_manage를 씁니다."""
    rules = _reinstatement_rules()
    reference = db.REFERENCE_DATE
    if today:
        reference = _parse_date(today)
        if reference is None:
            return needs_user_input(["today"], "기준일을 '2026-12-01'처럼 연-월-일로 알려주세요.", given=today)
    if not customer_id and not name and not termination_date:
        result = needs_user_input(
            ["customer_id", "name", "termination_date"],
            "부활 가능 여부를 확인할 고객 성함(또는 고객번호)이나 계약의 해지(실효)일을 알려주세요.")
        result["rules"] = rules
        return result

    if customer_id or name:
        customer, other = _resolve_customer(customer_id, name, None, None)
        if other is not None:
            return other
        contracts = db.contracts_of(customer["customer_id"])
        ended = [c for c in contracts if c["status"] != "유지"]
        if product and ended:
            key = folded(product).removesuffix("보험") or folded(product)
            chosen = [c for c in ended if key in folded(c["product_name"]) or key == folded(c["product_code"])]
            ended = chosen or ended
        who = f"{customer['name']} 고객님({customer['customer_id']})"
        if not ended:
            return ok(customer=customer, contracts=[], rules=rules,
                      summary=f"{who}은 해지·실효된 계약이 없어 부활할 계약이 없습니다.")
        rows = []
        for contract in ended:
            when = _parse_date(contract.get("termination_date") or contract.get("expiry_date"))
            if contract["status"] == "만기" or when is None:
                judged = {"verdict": "부활 불가", "reinstatable": False, "reason_case": "보험기간이 끝난(만기) 계약",
                          "text": "만기로 끝난 계약은 부활 대상이 아닙니다.",
                          "termination_date": contract.get("termination_date"), "deadline": None,
                          "within_deadline": False}
            else:
                if when > reference:
                    return needs_user_input(["today"], f"기준일({reference})이 해지일({when})보다 앞섭니다. 기준일을 확인해 주세요.")
                judged = _judge_reinstatement(when, reference, reason, contract["status"])
            row = {
                "contract_id": contract["contract_id"], "product_code": contract["product_code"],
                "product_name": contract["product_name"], "status": contract["status"],
                "contract_date": contract["contract_date"], **money("monthly_premium", contract["monthly_premium"]),
                **judged,
            }
            if judged["verdict"] != "부활 불가" and judged.get("termination_date"):
                months = _full_months(dt.date.fromisoformat(judged["termination_date"]), reference)
                row["overdue_premium_estimate"] = {
                    "months": months, **money("amount", months * contract["monthly_premium"]),
                    "text": (f"해지(실효)일 이후 {months}개월 × 월 {contract['monthly_premium']:,}원 = "
                             f"{won_text(months * contract['monthly_premium'])} (이자 별도 추정, 실제 금액은 회사 산출)"),
                }
            held = load_products().get(contract["product_code"])
            if held is not None and judged["verdict"] != "부활 불가":
                if held.join_age_min <= customer["age"] <= held.join_age_max:
                    try:
                        new_premium = monthly_premium(held, customer["age"], customer["sex"])
                    except (ValueError, TypeError):
                        new_premium = None
                    row["new_contract_option"] = {
                        **money("monthly_premium", new_premium),
                        "text": (f"지금 {customer['age']}세로 새로 가입하면 기본플랜 월 {won_text(new_premium)}"
                                 " (면책·감액기간 새로 시작)"),
                    }
                else:
                    row["new_contract_option"] = {"text": f"{customer['age']}세는 {held.name} 신규 가입 나이"
                                                          f"({join_age_text(held)})가 아니어서 부활만 가능합니다."}
            rows.append(row)
        verdicts = ", ".join(f"{r['product_name']} {r['verdict']}" for r in rows)
        ask = None
        if any(r["verdict"] == "확인 필요" for r in rows):
            ask = "해지 사유를 확인해 주세요: 보험료 미납으로 해지(실효)됐나요, 고객님이 해지를 신청해 해약환급금을 받으셨나요?"
        result = ok(customer=customer, contracts=rows, rules=rules, reference_date=reference.isoformat(),
                    summary=f"{who} 해지·실효 계약 {len(rows)}건: {verdicts}")
        if ask:
            result["ask"] = ask
        return result

    ended_on = _parse_date(termination_date)
    if ended_on is None:
        return needs_user_input(["termination_date"], "해지(실효)일을 '2023-12-31'처럼 연-월-일로 알려주세요.",
                                given=termination_date)
    if ended_on > reference:
        return needs_user_input(["termination_date"],
                                f"해지일({ended_on})이 기준일({reference})보다 뒤입니다. 해지일을 다시 확인해 주세요.")
    judged = _judge_reinstatement(ended_on, reference, reason, None)
    result = ok(**judged, rules=rules, summary=judged["text"])
    if judged["verdict"] == "확인 필요":
        result["ask"] = "해지 사유를 확인해 주세요: 보험료 미납으로 해지(실효)됐나요, 해지를 신청해 해약환급금을 받으셨나요?"
    return result


# --- renewal ------------------------------------------------------------------------------------

@tool("underwriting_renewal_eligibility", args_schema=RenewalEligibilityArgs)
def underwriting_renewal_eligibility(product: str | None = None, age: int | None = None) -> dict[str, Any]:
    """상품이 갱신형인지, 갱신 주기와 최대 갱신 나이, 주어진 나이에 갱신할 수 있는지 알려줍니다. 갱신 보험료는 underwriting_renewal_premium_notice에서 봅니다."""
    found = require_product(product)
    if isinstance(found, dict):
        return found
    if age is not None:
        impossible = check_age(age)
        if impossible:
            return impossible
    if not found.renewable:
        return ok(**product_ref(found), renewable=False, renewal=renewal_text(found),
                  coverage_period=found.coverage_period, can_renew=None, age=age,
                  summary=f"{found.name}은(는) 비갱신형입니다. 갱신 없이 {found.coverage_period}까지 가입 때 정한 보험료로 보장합니다.")
    period, max_age = found.renewal_period_years, found.max_renewal_age
    result = ok(
        **product_ref(found), renewable=True, renewal=renewal_text(found),
        renewal_period_years=period, max_renewal_age=max_age, coverage_period=found.coverage_period,
        renewal_note=found.renewal_note, age=age,
        summary=f"{found.name}: {period}년마다 갱신, 최대 {max_age}세까지 보장",
    )
    if age is not None:
        can_renew = age < max_age
        result["can_renew"] = can_renew
        if can_renew:
            result["summary"] += f"; {age}세는 갱신할 수 있습니다 (갱신은 {max_age}세 전까지)."
        else:
            result["summary"] += f"; {age}세는 최대 갱신 나이({max_age}세)에 이르러 더 갱신할 수 없습니다."
        if found.join_age_min <= age <= found.join_age_max:
            ages = list(range(age + period, max_age, period))
            result["if_joined_now"] = {
                "renewal_ages": ages[:10],
                "renewal_count": len(ages),
                "text": (f"지금 {age}세에 가입하면 {', '.join(f'{a}세' for a in ages[:5])}"
                         f"{' …' if len(ages) > 5 else ''}에 갱신(총 {len(ages)}회)하며 {max_age}세까지 보장됩니다."
                         if ages else f"지금 {age}세에 가입하면 갱신 없이 {max_age}세까지 보장됩니다."),
            }
        else:
            result["if_joined_now"] = {"text": f"{age}세는 신규 가입 나이({join_age_text(found)})가 아닙니다. "
                                               "이미 가입한 계약의 갱신만 판단했습니다."}
    return result


@tool("underwriting_renewal_premium_notice", args_schema=RenewalNoticeArgs)
def underwriting_renewal_premium_notice(
    product: str | None = None, age: int | None = None, sex: str | None = None,
    years_until_renewal: int | None = None,
) -> dict[str, Any]:
    """갱신형 상품의 다음 갱신 1회에 예상되는 월 보험료와 인상률(%)을 간단히 안내합니다.
    여러 번의 갱신에 걸친 보험료 추이(전체 경로)는 이 도구가 아니라 renewal_premium_projection을 씁니다."""
    found = require_product(product, age=age, sex=sex)
    if isinstance(found, dict):
        return found
    person = resolve_person(age, sex)
    if isinstance(person, dict):
        return person
    age, sex_value = person
    if not found.renewable:
        return rejected(f"{found.name}은(는) 비갱신형이라 갱신에 따른 보험료 인상이 없습니다.",
                        **product_ref(found), renewable=False, coverage_period=found.coverage_period)
    period, max_age = found.renewal_period_years, found.max_renewal_age
    years = period if years_until_renewal is None else years_until_renewal
    if not 1 <= years <= period:
        return needs_user_input(["years_until_renewal"],
                                f"다음 갱신까지 남은 햇수를 1~{period}년 사이로 알려주세요 ({found.name}은 {period}년 갱신).",
                                given=years_until_renewal)
    if years_until_renewal is None:
        age_ok = _resolve_age(age, found)
        if isinstance(age_ok, dict):
            return age_ok
    term_start = age + years - period
    renewal_age = age + years
    if term_start < found.join_age_min or age >= max_age:
        return rejected(f"{found.name} 계약은 {found.join_age_min}세부터 {max_age}세 전까지만 유지·갱신할 수 있습니다.",
                        **product_ref(found), age=age, years_until_renewal=years)
    if renewal_age >= max_age:
        return ok(**product_ref(found), age=age, sex=sex_value, renewal_age=renewal_age, next_renewal=None,
                  summary=f"{renewal_age}세는 최대 갱신 나이({max_age}세)에 이르러 다음 갱신이 없습니다. 보장은 {max_age}세에 끝납니다.")
    current = attained_age_premium(found, term_start, sex_value)
    nxt = attained_age_premium(found, renewal_age, sex_value)
    pct = round((nxt / current - 1) * 100, 1)
    when = "가입 후 " if years_until_renewal is None else ""
    return ok(
        **product_ref(found), age=age, sex=sex_value,
        renewal_period_years=period,
        years_until_renewal=years,
        renewal_age=renewal_age,
        current_term_start_age=term_start,
        **money("current_monthly_premium", current),
        **money("next_monthly_premium", nxt),
        **money("increase", nxt - current),
        increase_pct=pct,
        premium_basis=found.premium.basis,
        summary=(f"{found.name} {when}{years}년 뒤 {renewal_age}세 갱신 시 예상 월 보험료 {won_text(nxt)} "
                 f"(현재 {won_text(current)}, {pct:+.1f}%)"),
        notice=("갱신 보험료는 갱신 시점의 나이와 위험률로 다시 계산되며, 위 금액은 현재 위험률 기준 예상치로 실제와 다를 수 있습니다."),
        see_also="그 뒤 갱신까지의 보험료 추이는 renewal_premium_projection에서 확인합니다.",
    )


# --- occupation and disclosure score ------------------------------------------------------------

@tool("underwriting_high_risk_job_check", args_schema=JobArgs)
def underwriting_high_risk_job_check(occupation: str | None = None, product: str | None = None) -> dict[str, Any]:
    """직업의 위험등급(1~5등급), 보험료 할증률, 가입 제한과 거절되는 보장을 알려주고, 상품을 주면 그 상품에 미치는 영향을 봅니다."""
    if not occupation:
        return needs_user_input(["occupation"], "피보험자의 직업(하는 일)을 구체적으로 알려주세요.")
    occ = _ref().find_occupation(occupation)
    if occ is None:
        return _occupation_not_found(occupation)
    view = _occupation_view(occ)
    summary = (f"{occ.name}: {occ.risk_class}등급({view['class_label']}), 할증 {occ.surcharge_pct}%"
               + (f", 거절 보장: {', '.join(occ.declined_coverages)}" if occ.declined_coverages else ""))
    result = ok(given=occupation, **view, summary=summary,
                classes=[{"risk_class": c.risk_class, "label": c.label, "surcharge_pct": c.surcharge_pct}
                         for c in sorted(_ref().occupation_classes.values(), key=lambda c: c.risk_class)])
    if product:
        found = resolve_product(product)
        if isinstance(found, dict):
            result["product_lookup"] = found
        else:
            effect = _occupation_effect(occ, found)
            result["product"] = product_ref(found)
            result["effect_on_product"] = effect
            result["summary"] += f"; {found.name}: {effect['text']}"
    return result


@tool("underwriting_disclosure_risk_score", args_schema=RiskScoreArgs)
def underwriting_disclosure_risk_score(history: str | None = None, controlled: bool | None = None) -> dict[str, Any]:
    """고지할 병력의 질환별 위험 점수(조절 여부 가감)와 합계·등급(표준/조건부/거절 가능)·권장 조치, 고지 시 주의사항을 계산합니다.
    상품별 가입 가능 여부 종합 판단은 underwriting_precheck를 씁니다."""
    if not history:
        return needs_user_input(["history"], "점수를 낼 병력(진단명, 투약, 입원·수술 여부와 시기)을 알려주세요. 없으면 '없음'.")
    score = _risk_score(history, controlled)
    parts = ", ".join(f"{c['condition']} {c['points']}점" for c in score["conditions"])
    summary = (f"병력 위험 점수 {score['total_score']}점({score['band']})" + (f": {parts}" if parts else "")
               if history != NO_HISTORY else "고지할 병력 없음: 0점(표준)")
    return ok(history=history, controlled_flag=controlled, **score, summary=summary,
              disclosure_caution="고지 의무를 지키지 않으면 계약이 해지되거나 보험금이 지급되지 않을 수 있습니다.",
              disclaimer=DISCLAIMER)


TOOLS = [
    underwriting_precheck,
    underwriting_questions_generator,
    underwriting_knockout_rules,
    underwriting_docs_required,
    underwriting_waiting_periods,
    underwriting_exclusions,
    underwriting_limitations,
    underwriting_reinstatement_rule,
    underwriting_renewal_eligibility,
    underwriting_renewal_premium_notice,
    underwriting_high_risk_job_check,
    underwriting_disclosure_risk_score,
]

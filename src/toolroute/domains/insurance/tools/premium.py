"""premium tools: monthly premiums, comparisons, payment plans and cycles, sums insured, renewals, surrender.

All money comes from `toolroute.domains.insurance.products` (products.yaml): `monthly_premium` (anchor
ages, linear in between, × payment-term factor, + riders), `renewal_premiums` and
`attained_age_premium` for renewable contracts, the payment terms, cycles, sum-insured limits and the
surrender examples. Results carry money twice: an int in won and its Korean text (`money()`).

Which tool for which question:
- premium_estimate: one number (or one per named product, with their total) for an age and sex.
- plan_options: how the premium changes with the payment term (10년납, 20년납, 전기납 …).
- renewal_premium_projection: the whole simulated path over future renewals (not only the next one).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from langchain_core.tools import tool
from pydantic import BaseModel, BeforeValidator

from toolroute.domains.insurance import products as catalog
from toolroute.domains.insurance.products import Product
from toolroute.domains.insurance.tools._common import (
    age_rejection,
    clean_age,
    clean_won,
    join_age_text,
    money,
    product_ref,
    renewal_text,
    require,
    require_person,
    require_product,
    resolve_person,
    resolve_product,
    resolve_products,
    split_names,
    won_text,
)
from toolroute.domains.insurance.tools.customer_db import categories_overlap
from toolroute.domains.tool_results import needs_user_input, not_found, ok, rejected
from toolroute.domains.insurance.tools.schemas import INSURED_AGE, Age, Names, Text, described

PRODUCT_DESCRIPTION = "상품명 또는 상품코드 (예: 건강해지는종신보험, 실속치매보험, B003)"
SEX_DESCRIPTION = "피보험자 성별: 남성 또는 여성 (남/여, 아버지·어머니 같은 가족 호칭도 가능)"
TERM_DESCRIPTION = "납입기간 (예: 10년납, 20년납, 전기납). 생략하면 상품의 기본 플랜 납입기간"
ESTIMATE_NOTE = "기본 플랜 기준 예시 보험료이며, 실제 보험료는 가입금액·특약·심사 결과에 따라 달라질 수 있습니다."

# Generic meaning of each payment cycle (terms, not product facts: which cycles a product offers
# comes from products.yaml) and how many months one payment covers.
CYCLE_TEXT = {
    "월납": "매달 보험료를 냅니다.",
    "3개월납": "3개월마다 3개월분 보험료를 한 번에 냅니다.",
    "6개월납": "6개월마다 6개월분 보험료를 한 번에 냅니다.",
    "연납": "1년에 한 번 12개월분 보험료를 한 번에 냅니다.",
    "일시납": "계약할 때 보험료 전체를 한 번에 냅니다.",
}
CYCLE_MONTHS = {"월납": 1, "3개월납": 3, "6개월납": 6, "연납": 12, "일시납": None}

# Generic meaning of each surrender type; the product's own explanation and examples come from the data.
SURRENDER_TYPE_TEXT = {
    "표준형": "일반적인 해약환급금 구조로, 납입한 보험료에서 사업비·위험보험료를 뺀 적립금을 돌려줍니다.",
    "저해지": "납입기간 중 해지하면 표준형보다 해약환급금이 적은 대신 보험료가 저렴합니다.",
    "무해지": "정해진 기간(또는 보험기간 내내) 해지하면 해약환급금이 없는 대신 보험료가 저렴합니다.",
}


# --- argument schemas ----------------------------------------------------------------------------

def _clean_income(value: Any) -> int | None:
    """Annual income: a bare number below 100,000 is read in 만원 ('5000' = 5,000만원)."""
    return clean_won(value, small_unit=10_000, below=100_000)


def _clean_budget(value: Any) -> int | None:
    """Monthly budget: a bare number below 1,000 is read in 만원 ('20' = 20만원)."""
    return clean_won(value, small_unit=10_000, below=1_000)


def _clean_count(value: Any) -> int | None:
    """A count or a number of years from 3, '3회', '5년', '10년차'; None for junk."""
    age = clean_age(value)
    return age if age is None or age >= 0 else None


Income = Annotated[int | None, BeforeValidator(_clean_income)]
Budget = Annotated[int | None, BeforeValidator(_clean_budget)]
Count = Annotated[int | None, BeforeValidator(_clean_count)]


class _PersonArgs(BaseModel):
    age: Age = described(INSURED_AGE)
    sex: Text = described(SEX_DESCRIPTION)


class EstimateArgs(_PersonArgs):
    product: Text = described(PRODUCT_DESCRIPTION + ". 여러 상품의 합계가 필요하면 쉼표로 나열")
    payment_term: Text = described(TERM_DESCRIPTION)
    riders: Names = described("함께 넣을 특약명 또는 특약코드 목록 (예: ['재해사망 특약'])")


class CompareArgs(_PersonArgs):
    products: Names = described(
        "보험료를 비교할 상품명 또는 상품코드 2개 이상 (예: ['전에없던치매간병보험', '실속치매보험'])")
    payment_term: Text = described("같은 납입기간으로 비교할 때 (예: 20년납). 없는 상품은 기본 플랜으로 계산")


class ProductPersonArgs(_PersonArgs):
    product: Text = described(PRODUCT_DESCRIPTION)
    age: Age = described(INSURED_AGE + ". 주면 금액도 계산합니다")
    sex: Text = described(SEX_DESCRIPTION + ". 주면 금액도 계산합니다")


class CycleArgs(ProductPersonArgs):
    payment_term: Text = described(TERM_DESCRIPTION)


class AmountArgs(BaseModel):
    annual_income: Income = described("연소득(원). '연봉 5천만원', '5000만원' 또는 만원 단위 숫자 5000도 가능")
    goal: Text = described("보장 목적 (예: 사망보장, 암진단비, 뇌·심장 진단비, 치매·간병)")
    product: Text = described(PRODUCT_DESCRIPTION + ". 주면 그 상품의 가입금액 한도 안으로 맞춥니다")


class RenewalArgs(_PersonArgs):
    product: Text = described("갱신형 상품명 또는 상품코드 (예: 첫날부터암보험, 든든한실버치아보험)")
    age: Age = described("피보험자의 현재 나이(이미 가입한 계약이면 지금 나이)")
    renewals: Count = described("보여줄 갱신 횟수 (생략하면 최대 갱신 나이까지)")


class AffordabilityArgs(EstimateArgs):
    monthly_budget: Budget = described("월 보험료 예산(원). '월 5만원', '50000' 또는 만원 단위 숫자 5도 가능")


class SurrenderArgs(CycleArgs):
    years: Count = described("해지 시점: 계약 후 몇 년째인지 (예: 5, '10년'). 생략하면 예시 표 전체")


# --- shared steps --------------------------------------------------------------------------------



def _optional_person(age: int | None, sex: str | None) -> tuple[int, str] | dict[str, Any] | None:
    """Like `resolve_person` when both are given; None when either is missing (the figures are optional)."""
    if age is None or sex is None:
        return None
    return resolve_person(age, sex)


def _product_and_person(product: str | None, age: int | None,
                        sex: str | None) -> tuple[Product, tuple[int, str] | None] | dict[str, Any]:
    """The product and the person (None unless both age and sex are given), or the result to return."""
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    person = _optional_person(age, sex)
    if isinstance(person, dict):
        return person
    return found, person


def _term(product: Product, text: str | None) -> str | dict[str, Any]:
    term = catalog.normalize_payment_term(product, text)
    if term is None:
        return needs_user_input(
            ["payment_term"], f"{product.name}의 납입기간은 {', '.join(product.payment_terms)} 중에서 골라 주세요.",
            **product_ref(product), given=text, options=list(product.payment_terms))
    return term


def _priced(product: Product, person: tuple[int, str], term_text: str | None) -> tuple[str, int] | dict[str, Any]:
    """(payment term, monthly premium of the base plan) for the person, or the result to return
    (an age outside the join ages, a payment term the product does not have)."""
    age, sex = person
    if not product.join_age_min <= age <= product.join_age_max:
        return age_rejection(product, age)
    term = _term(product, term_text)
    if isinstance(term, dict):
        return term
    return term, catalog.monthly_premium(product, age, sex, payment_term=term)


def _payment_years(product: Product, term: str, age: int | None) -> int | None:
    """Years of paying for `term`: 'N년납' -> N; 전기납 -> the renewal period, 'N년만기' or 'N세만기' - age."""
    match = re.fullmatch(r"(\d+)년납", term)
    if match:
        return int(match.group(1))
    if product.renewable:
        return product.renewal_period_years
    match = re.search(r"(\d+)년만기", product.coverage_period)
    if match:
        return int(match.group(1))
    match = re.search(r"(\d+)세만기", product.coverage_period)
    if match and age is not None:
        return max(0, int(match.group(1)) - age)
    return None


def _quote(product: Product, age: int, sex: str, term_text: str | None = None,
           rider_names: list[str] | None = None) -> dict[str, Any]:
    """The premium of one product as a result item (status ok), or the result to return instead."""
    if not product.join_age_min <= age <= product.join_age_max:
        return age_rejection(product, age)
    term = _term(product, term_text)
    if isinstance(term, dict):
        return term
    base = catalog.monthly_premium(product, age, sex, payment_term=term)
    riders = []
    for wanted in split_names(rider_names) if rider_names else []:
        rider = catalog.get_rider(product, wanted)
        if rider is None:
            result = not_found("rider", wanted, [r.name for r in product.riders])
            result.update(product_ref(product))
            result["ask"] = f"{product.name}에 '{wanted}' 특약이 없습니다. 특약: {', '.join(r.name for r in product.riders)}"
            return result
        if all(r["rider_code"] != rider.code for r in riders):
            addon = catalog.monthly_premium(product, age, sex, payment_term=term, riders=[rider.code]) - base
            riders.append({"rider_code": rider.code, "rider_name": rider.name, **money("monthly_addon", addon)})
    total = catalog.monthly_premium(product, age, sex, payment_term=term, riders=[r["rider_code"] for r in riders])
    return ok(**product_ref(product), age=age, sex=sex, payment_term=term,
              is_base_plan=term == product.premium.base_payment_term and not riders,
              **money("monthly_premium", total), **money("base_monthly_premium", base), riders=riders,
              basis=product.premium.basis, renewal=renewal_text(product))


def _quote_line(item: dict[str, Any]) -> str:
    riders = f" + 특약 {len(item['riders'])}개" if item["riders"] else ""
    return f"{item['product_name']} 월 {item['monthly_premium_text']}({item['payment_term']}{riders})"


def _names_or_one(text: str) -> list[str]:
    """Several product names in one string ('A, B'), unless the whole string names one product."""
    if catalog.get_product(text) is not None:
        return [text]
    names = split_names(text)
    return names if len(names) > 1 else [text]


def _quote_named(product_text: str, age: int, sex: str, term: str | None,
                 riders: list[str] | None) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """Quotes for one or several named products, or (quotes so far, the result to return instead)."""
    names = _names_or_one(product_text)
    if len(names) > 1:
        found = resolve_products(names, minimum=1, field="product")
        if isinstance(found, dict):
            return [], found
        products = found
    else:
        one = resolve_product(product_text)
        if isinstance(one, dict):
            return [], one
        products = [one]
    items = []
    for product in products:
        item = _quote(product, age, sex, term if len(products) == 1 else None, riders if len(products) == 1 else None)
        if item["status"] != "ok":
            if items:
                item["quoted"] = [_strip(i) for i in items]
            return items, item
        items.append(item)
    return items, None


def _quotes_for(product: str | None, age: int | None, sex: str | None, term: str | None, riders: list[str] | None,
                **required: Any) -> tuple[int, str, list[dict[str, Any]]] | dict[str, Any]:
    """(age, sex, quotes of the named product or products), or the result to return: the blank
    arguments asked for (product, `required`, age, sex), a bad age or sex, an unknown product or rider."""
    person = require_person(age, sex, product=product, **required)
    if isinstance(person, dict):
        return person
    age, sex = person
    items, other = _quote_named(product, age, sex, term, riders)
    return other if other is not None else (age, sex, items)


def _strip(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "status"}


# --- premium_estimate ----------------------------------------------------------------------------

@tool("premium_estimate", args_schema=EstimateArgs)
def premium_estimate(product: str | None = None, age: int | None = None, sex: str | None = None,
                     payment_term: str | None = None, riders: list[str] | None = None) -> dict[str, Any]:
    """상품 하나의 월 보험료를 나이와 성별로 계산합니다(기본 플랜, 납입기간·특약 지정 가능). 여러 상품을
    나열하면 상품별 월 보험료와 합계를 돌려줍니다."""
    quoted = _quotes_for(product, age, sex, payment_term, riders)
    if isinstance(quoted, dict):
        return quoted
    age, sex, items = quoted
    if len(items) == 1:
        item = items[0]
        return {**item, "summary": f"{age}세 {sex} 기준 {_quote_line(item)}.", "note": ESTIMATE_NOTE}
    total = sum(i["monthly_premium"] for i in items)
    summary = (f"{age}세 {sex} 기준 " + ", ".join(_quote_line(i) for i in items)
               + f" → 합계 월 {won_text(total)}.")
    result = ok(age=age, sex=sex, count=len(items), items=[_strip(i) for i in items],
                **money("total_monthly_premium", total), summary=summary, note=ESTIMATE_NOTE)
    if payment_term or riders:
        result["plan_note"] = "여러 상품의 합계는 상품마다 기본 플랜으로 계산했습니다(납입기간·특약 지정은 상품 하나씩 계산)."
    return result


# --- premium_compare -----------------------------------------------------------------------------

@tool("premium_compare", args_schema=CompareArgs)
def premium_compare(products: list[str] | None = None, age: int | None = None, sex: str | None = None,
                    payment_term: str | None = None) -> dict[str, Any]:
    """여러 상품의 월 보험료를 같은 나이·성별 조건으로 계산해 비교하고, 가장 저렴한 상품과 보험료 차이,
    합계를 알려줍니다."""
    person = require_person(age, sex, products=products)
    if isinstance(person, dict):
        return person
    age, sex = person
    found = resolve_products(products, minimum=2)
    if isinstance(found, dict):
        return found
    items, unavailable, notes = [], [], []
    for product in found:
        term = None
        if payment_term:
            term = catalog.normalize_payment_term(product, payment_term)
            if term is None:
                notes.append(f"{product.name}에는 {payment_term}이 없어 기본 플랜({product.premium.base_payment_term})으로"
                             " 계산했습니다.")
        item = _quote(product, age, sex, term)
        if item["status"] == "ok":
            items.append(_strip(item))
        else:
            unavailable.append({**product_ref(product), "reason": item.get("reason") or item.get("ask"),
                                "allowed_age": join_age_text(product)})
    if not items:
        return rejected(f"{age}세는 비교한 상품 모두 가입 나이가 아닙니다.", age=age, sex=sex, unavailable=unavailable)
    cheapest = min(items, key=lambda i: i["monthly_premium"])
    dearest = max(items, key=lambda i: i["monthly_premium"])
    difference = dearest["monthly_premium"] - cheapest["monthly_premium"]
    total = sum(i["monthly_premium"] for i in items)
    summary = f"{age}세 {sex} 기준 " + ", ".join(_quote_line(i) for i in items) + "."
    if len(items) >= 2:
        summary += (f" {cheapest['product_name']}이(가) {dearest['product_name']}보다 월 {won_text(difference)} 저렴합니다."
                    if difference else " 두 상품의 보험료가 같습니다.")
    for u in unavailable:
        summary += f" {u['product_name']}은(는) 가입 나이({u['allowed_age']})가 아니어서 계산하지 않았습니다."
    result = ok(age=age, sex=sex, count=len(items), items=items, unavailable=unavailable,
                cheapest=_price_ref(cheapest), most_expensive=_price_ref(dearest),
                **money("difference", difference), **money("total_monthly_premium", total),
                summary=summary, note=ESTIMATE_NOTE + " 보장 내용이 달라 보험료만으로 상품을 비교할 수는 없습니다.")
    if notes:
        result["notes"] = notes
    return result


def _price_ref(item: dict[str, Any]) -> dict[str, Any]:
    return {"product_code": item["product_code"], "product_name": item["product_name"],
            **money("monthly_premium", item["monthly_premium"])}


# --- plan_options --------------------------------------------------------------------------------

@tool("plan_options", args_schema=ProductPersonArgs)
def plan_options(product: str | None = None, age: int | None = None, sex: str | None = None) -> dict[str, Any]:
    """상품에서 고를 수 있는 납입 플랜(10년납, 20년납, 전기납 등 납입기간)과 납입기간에 따라 월 보험료가
    어떻게 달라지는지(기본 플랜 대비 배율, 나이·성별을 주면 금액과 총 납입액)를 보여줍니다."""
    found = _product_and_person(product, age, sex)
    if isinstance(found, dict):
        return found
    p, person = found
    if person is not None and not p.join_age_min <= person[0] <= p.join_age_max:
        return age_rejection(p, person[0])
    base = p.premium.base_payment_term
    plans = []
    for term in p.payment_terms:
        factor = p.premium.term_factors[term]
        plan = {"payment_term": term, "is_base": term == base, "factor": factor,
                "factor_text": "기본 플랜" if term == base else f"기본 플랜의 {factor * 100:g}%",
                "payment_years": _payment_years(p, term, person[0] if person else None)}
        if person is not None:
            monthly = catalog.monthly_premium(p, person[0], person[1], payment_term=term)
            plan.update(money("monthly_premium", monthly))
            years = plan["payment_years"]
            plan.update(money("total_paid", monthly * 12 * years if years else None))
        plans.append(plan)
    lines = []
    for plan in plans:
        line = f"{plan['payment_term']}({plan['factor_text']}"
        line += f", 월 {plan['monthly_premium_text']}" if "monthly_premium" in plan else ""
        line += ")"
        lines.append(line)
    summary = f"{p.name} 납입기간: " + ", ".join(lines) + ". 납입기간이 짧을수록 월 보험료는 높아집니다."
    result = ok(**product_ref(p), base_payment_term=base, payment_terms=list(p.payment_terms), plans=plans,
                premium_basis=p.premium.basis, summary=summary)
    if person is not None:
        result["conditions"] = {"age": person[0], "sex": person[1]}
    else:
        result["ask"] = "나이와 성별을 알려주시면 납입기간별 월 보험료와 총 납입액을 계산해 드립니다."
    if p.renewable:
        result["renewal_note"] = (f"{renewal_text(p)} 상품이라 총 납입액은 첫 {p.renewal_period_years}년 기준이며,"
                                  " 갱신 후 보험료는 다시 계산됩니다.")
    return result


# --- amount_suggest ------------------------------------------------------------------------------

# (goal label, words that name the goal, low and high multiple of annual income, why)
GOAL_RULES: list[tuple[str, tuple[str, ...], float, float, str]] = [
    ("사망보장", ("사망", "종신", "유족", "상속", "가장"), 3, 5,
     "남은 가족의 생활비와 부채 상환을 감안해 연소득의 3~5배"),
    ("뇌·심장 진단비", ("뇌", "심장", "심근", "협심", "허혈", "2대", "3대"), 0.5, 1,
     "치료·재활 기간의 소득 공백을 감안해 연소득의 0.5~1년분"),
    ("치매·간병", ("치매", "간병", "요양"), 0.5, 1,
     "간병비와 돌봄 공백을 감안해 연소득의 0.5~1년분"),
    ("암진단비", ("암",), 1, 2,
     "치료 기간(1~2년)의 소득 공백과 비급여 치료비를 감안해 연소득의 1~2년분"),
]


MAX_ANNUAL_INCOME = 10_000_000_000  # 100억원: above this the number is a mistake, ask again


def _goal_rule(text: str | None) -> tuple[str, tuple[str, ...], float, float, str] | None:
    if not text:
        return None
    compact = text.replace(" ", "")
    return next((rule for rule in GOAL_RULES if any(word in compact for word in rule[1])), None)


def _round_amount(won: float) -> int:
    unit = 1_000_000 if won >= 10_000_000 else 100_000
    return int(round(won / unit)) * unit


@tool("amount_suggest", args_schema=AmountArgs)
def amount_suggest(annual_income: int | None = None, goal: str | None = None,
                   product: str | None = None) -> dict[str, Any]:
    """연소득과 보장 목적으로 적정 가입금액(보험금 액수, 보험료 아님)을 제안합니다: 사망보장은 연소득의 3~5배,
    암진단비는 1~2년분, 뇌·심장 진단비와 치매·간병은 0.5~1년분이며, 상품을 주면 그 상품의 가입금액 한도 안으로 맞춥니다."""
    p = None
    if product:
        found = resolve_product(product)
        if isinstance(found, dict):
            return found
        p = found
    missing = require(annual_income=annual_income, goal=goal or (p.name if p else None))
    if missing:
        return missing
    if annual_income > MAX_ANNUAL_INCOME:
        return needs_user_input(["annual_income"], f"연소득 {won_text(annual_income)}이(가) 맞는지 다시 확인해 주세요.",
                                given=annual_income)
    rule = _goal_rule(goal) or (_goal_rule(f"{p.sum_insured_basis} {p.category}") if p and not goal else None)
    product_basis_rule = _goal_rule(f"{p.sum_insured_basis}") if p else None
    if rule is None:
        supported = ", ".join(r[0] for r in GOAL_RULES)
        data: dict[str, Any] = {"goal": goal, "supported_goals": [r[0] for r in GOAL_RULES]}
        if p:
            data.update(product_ref(p), sum_insured=_limits(p))
        what = f"'{goal}'" if goal else f"{p.name}({p.sum_insured_basis})"
        return rejected(f"{what}은(는) 소득 기준 적정 가입금액 규칙이 없습니다. 규칙이 있는 보장: {supported}."
                        + (f" 이 상품의 가입금액 범위는 {_limits(p)['text']}입니다." if p else ""), **data)
    label, _, low_x, high_x, why = rule
    low, high = _round_amount(annual_income * low_x), _round_amount(annual_income * high_x)
    suggested = _round_amount(annual_income * (low_x + high_x) / 2)
    result: dict[str, Any] = {
        "goal": label,
        "rule": f"{label}: {why}",
        "income_multiple": {"low": low_x, "high": high_x},
        **money("annual_income", annual_income),
        **money("recommended_min", low),
        **money("recommended_max", high),
        **money("suggested_amount", suggested),
    }
    summary = (f"연소득 {won_text(annual_income)} 기준 {label} 적정 가입금액은 {won_text(low)}~{won_text(high)}"
               f"(제안 {won_text(suggested)})입니다. 근거: {why}.")
    notes = []
    if p is not None:
        result.update(product_ref(p), sum_insured=_limits(p))
        if product_basis_rule is not None and product_basis_rule[0] == label:
            bounded = min(max(suggested, p.sum_insured_min), p.sum_insured_max)
            result.update(money("suggested_amount_in_product", bounded))
            result["bounded_by_product"] = bounded != suggested
            if bounded < suggested:
                notes.append(f"{p.name}의 최대 가입금액은 {won_text(p.sum_insured_max)}입니다. 부족한 "
                             f"{won_text(suggested - bounded)}은(는) 다른 상품으로 보완을 검토하세요.")
            elif bounded > suggested:
                notes.append(f"{p.name}의 최소 가입금액은 {won_text(p.sum_insured_min)}입니다.")
            summary += f" {p.name}에서는 {won_text(bounded)}({p.sum_insured_basis})으로 설계할 수 있습니다."
        else:
            notes.append(f"{p.name}의 가입금액 기준은 '{p.sum_insured_basis}'이라 {label} 권장액과 직접 맞출 수 "
                         f"없습니다(가입금액 범위 {_limits(p)['text']}).")
    notes.append("소득 기준의 일반적인 권장 범위이며, 보유 보험·부채·가족 상황에 따라 조정해야 합니다.")
    return ok(**result, summary=summary, notes=notes)


def _limits(p: Product) -> dict[str, Any]:
    return {**money("min", p.sum_insured_min), **money("max", p.sum_insured_max), "basis": p.sum_insured_basis,
            "text": f"{won_text(p.sum_insured_min)}~{won_text(p.sum_insured_max)}"}


# --- renewal_premium_projection ------------------------------------------------------------------

MAX_PATH_POINTS = 10


@tool("renewal_premium_projection", args_schema=RenewalArgs)
def renewal_premium_projection(product: str | None = None, age: int | None = None, sex: str | None = None,
                               renewals: int | None = None) -> dict[str, Any]:
    """갱신형 상품의 앞으로의 갱신 시점별 보험료 변화(갱신 나이, 월 보험료, 현재 대비 인상률, 예상 총 납입액)를
    최대 갱신 나이까지 시뮬레이션합니다. 비갱신형 상품은 보험료가 오르지 않는다고 알려줍니다."""
    p = require_product(product)
    if isinstance(p, dict):
        return p
    if not p.renewable:
        data: dict[str, Any] = {**product_ref(p), "renewable": False, "payment_terms": list(p.payment_terms)}
        person = _optional_person(age, sex)
        if isinstance(person, tuple) and p.join_age_min <= person[0] <= p.join_age_max:
            data.update(money("level_monthly_premium", catalog.monthly_premium(p, *person)))
        return rejected(f"{p.name}은(는) 비갱신형({p.coverage_period})이라 갱신이 없고, 가입 때 정한 보험료가 "
                        f"납입기간({', '.join(p.payment_terms)} 중 선택) 동안 오르지 않습니다.", **data)
    missing = require(age=age, sex=sex)
    if missing:
        missing.setdefault("known", {}).update(product_ref(p))
        return missing
    person = resolve_person(age, sex)
    if isinstance(person, dict):
        return person
    age, sex = person
    if not p.join_age_min <= age < p.max_renewal_age:
        return rejected(f"{p.name}은(는) {p.join_age_min}세부터 {p.max_renewal_age}세 전까지만 계약을 유지할 수 "
                        f"있습니다 (입력 나이 {age}세).", **product_ref(p), age=age,
                        allowed_age=f"{p.join_age_min}~{p.max_renewal_age - 1}세")
    current = catalog.attained_age_premium(p, age, sex)
    period = p.renewal_period_years
    every = catalog.renewal_premiums(p, age, sex, renewals=(p.max_renewal_age - age) // period + 1)
    total_steps = len(every)
    wanted = every[:max(1, renewals)] if renewals else every
    shown = wanted
    if len(wanted) > MAX_PATH_POINTS:  # annual renewals: every n-th step and the last one
        stride = -(-len(wanted) // MAX_PATH_POINTS)
        shown = [s for i, s in enumerate(wanted) if (i + 1) % stride == 0]
        if shown[-1] is not wanted[-1]:
            shown.append(wanted[-1])
    path = [{**s, **money("monthly_premium", s["monthly_premium"]),
             "increase_text": f"{s['increase_pct']:+g}%"} for s in shown]
    # Premiums paid from today to the end of the last shown renewal term (capped at max_renewal_age).
    segments = [(age, current)] + [(s["age"], s["monthly_premium"]) for s in wanted]
    horizon = min(wanted[-1]["age"] + period, p.max_renewal_age) if wanted else min(age + period, p.max_renewal_age)
    total_paid = 0
    for (start, premium), nxt in zip(segments, [*(s[0] for s in segments[1:]), horizon]):
        total_paid += premium * 12 * max(0, nxt - start)
    notes = [n for n in [p.renewal_note] if n]
    notes.append("나이 증가만 반영한 시뮬레이션이며, 실제 갱신 보험료는 갱신 시점의 위험률에 따라 달라질 수 있습니다.")
    if age > p.join_age_max:
        notes.append(f"신규 가입은 {p.join_age_max}세까지이며, {age}세는 이미 가입한 계약의 갱신 기준으로 계산했습니다.")
    if not every:
        notes.append(f"최대 갱신 나이({p.max_renewal_age}세) 전에 남은 갱신이 없습니다.")
    last = path[-1] if path else None
    summary = f"{p.name} {age}세 {sex} 현재 월 {won_text(current)}"
    if last:
        summary += ("; " + ", ".join(f"{s['age']}세 갱신 시 월 {s['monthly_premium_text']}({s['increase_text']})"
                                     for s in path) + ".")
    else:
        summary += f"; 최대 갱신 나이({p.max_renewal_age}세) 전에 남은 갱신이 없습니다."
    return ok(**product_ref(p), age=age, sex=sex, renewable=True, renewal_period_years=period,
              max_renewal_age=p.max_renewal_age, **money("current_monthly_premium", current),
              renewals_until_max_age=total_steps, path=path, path_sampled=len(shown) < len(wanted),
              horizon_age=horizon, **money("projected_total_paid", total_paid),
              premium_basis=p.premium.basis, summary=summary, notes=notes)


# --- affordability_check -------------------------------------------------------------------------

@tool("affordability_check", args_schema=AffordabilityArgs)
def affordability_check(product: str | None = None, monthly_budget: int | None = None, age: int | None = None,
                        sex: str | None = None, payment_term: str | None = None,
                        riders: list[str] | None = None) -> dict[str, Any]:
    """상품(또는 여러 상품의 합계) 월 보험료가 월 예산 안에 드는지 판정하고 남는 금액(또는 초과액)을 알려줍니다.
    예산을 넘으면 더 싼 납입기간이나 같은 종류의 더 저렴한 상품을 제안합니다."""
    quoted = _quotes_for(product, age, sex, payment_term, riders, monthly_budget=monthly_budget)
    if isinstance(quoted, dict):
        return quoted
    age, sex, items = quoted
    premium = sum(i["monthly_premium"] for i in items)
    headroom = monthly_budget - premium
    fits = headroom >= 0
    verdict = "예산 내" if fits else "예산 초과"
    what = " + ".join(i["product_name"] for i in items)
    summary = (f"{age}세 {sex} 기준 {what} 월 {won_text(premium)}, 예산 월 {won_text(monthly_budget)} → {verdict}"
               + (f"(월 {won_text(headroom)} 여유)." if fits else f"(월 {won_text(-headroom)} 초과)."))
    result = ok(age=age, sex=sex, verdict=verdict, fits_budget=fits, **money("monthly_premium", premium),
                **money("monthly_budget", monthly_budget), **money("headroom", headroom),
                budget_usage_pct=round(premium / monthly_budget * 100, 1),
                items=[_strip(i) for i in items], summary=summary)
    if not fits and len(items) == 1:
        result["alternatives"] = _cheaper_options(items[0], monthly_budget, age, sex)
        if result["alternatives"]:
            result["summary"] += " 예산 안의 대안: " + ", ".join(a["text"] for a in result["alternatives"][:3]) + "."
        else:
            result["summary"] += " 같은 종류에서 예산 안에 드는 대안이 없습니다."
    return result


def _cheaper_options(item: dict[str, Any], budget: int, age: int, sex: str) -> list[dict[str, Any]]:
    """Within the budget: the same product without riders or with a longer payment term, then cheaper
    products of the same kind (category overlap) that this age can join."""
    p = catalog.get_product(item["product_code"])
    options: list[dict[str, Any]] = []
    if item["riders"] and item["base_monthly_premium"] <= budget:
        options.append({"kind": "특약 제외", **product_ref(p), "payment_term": item["payment_term"],
                        **money("monthly_premium", item["base_monthly_premium"]),
                        "text": f"특약 없이 {item['payment_term']} 월 {won_text(item['base_monthly_premium'])}"})
    for term in p.payment_terms:
        if term == item["payment_term"]:
            continue
        premium = catalog.monthly_premium(p, age, sex, payment_term=term)
        if premium <= budget:
            options.append({"kind": "납입기간 변경", **product_ref(p), "payment_term": term,
                            **money("monthly_premium", premium),
                            "text": f"{p.name} {term} 월 {won_text(premium)}"})
    others = []
    for q in catalog.load_products().values():
        if q.code == p.code or not categories_overlap(q.category, p.category):
            continue
        if not q.join_age_min <= age <= q.join_age_max:
            continue
        cheapest_term = q.payment_terms[-1]  # the longest term has the smallest factor
        premium = catalog.monthly_premium(q, age, sex, payment_term=cheapest_term)
        if premium <= budget:
            others.append({"kind": "다른 상품", **product_ref(q), "payment_term": cheapest_term,
                           **money("monthly_premium", premium),
                           "text": f"{q.name} {cheapest_term} 월 {won_text(premium)}"})
    options.extend(sorted(others, key=lambda o: o["monthly_premium"]))
    return options


# --- payment_cycle_options -----------------------------------------------------------------------

@tool("payment_cycle_options", args_schema=CycleArgs)
def payment_cycle_options(product: str | None = None, age: int | None = None, sex: str | None = None,
                          payment_term: str | None = None) -> dict[str, Any]:
    """상품의 보험료 납입주기(월납, 연납, 일시납 등) 선택지를 알려주고, 나이와 성별을 주면 주기별 1회 납입액을
    계산합니다."""
    found = _product_and_person(product, age, sex)
    if isinstance(found, dict):
        return found
    p, person = found
    monthly = None
    term = None
    if person is not None:
        priced = _priced(p, person, payment_term)
        if isinstance(priced, dict):
            return priced
        term, monthly = priced
    cycles = []
    for cycle in p.payment_cycles:
        months = CYCLE_MONTHS[cycle]
        entry = {"cycle": cycle, "description": CYCLE_TEXT[cycle], "months_per_payment": months}
        if monthly is not None:
            entry.update(money("amount_per_payment", monthly * months if months else None))
            if months is None:
                entry["amount_note"] = "일시납 보험료는 가입 설계 시 별도로 산출합니다."
        cycles.append(entry)
    unavailable = [c for c in CYCLE_TEXT if c not in p.payment_cycles]
    summary = f"{p.name} 납입주기: {', '.join(p.payment_cycles)}"
    if monthly is not None:
        summary += " (" + ", ".join(f"{c['cycle']} {c['amount_per_payment_text']}" for c in cycles
                                    if c.get("amount_per_payment")) + ")"
    summary += "." + (f" {', '.join(unavailable)}은(는) 선택할 수 없습니다." if unavailable else "")
    result = ok(**product_ref(p), payment_cycles=list(p.payment_cycles), cycles=cycles,
                unavailable_cycles=unavailable, summary=summary,
                note="주기별 금액은 월 보험료에 개월 수를 곱한 기준 금액이며, 선납·연납 할인은 반영하지 않았습니다.")
    if monthly is not None:
        result.update(conditions={"age": person[0], "sex": person[1], "payment_term": term},
                      **money("monthly_premium", monthly))
    return result


# --- surrender_value_explain ---------------------------------------------------------------------

def _ratio_at(examples: list[catalog.SurrenderExample], year: int) -> float:
    """Refund ratio at `year`, linear between the example years (0 before the first, flat after the last)."""
    if year <= 0:
        return 0.0
    if year <= examples[0].year:
        return examples[0].ratio * year / examples[0].year if examples[0].year else examples[0].ratio
    for low, high in zip(examples, examples[1:]):
        if low.year <= year <= high.year:
            share = (year - low.year) / (high.year - low.year)
            return low.ratio + share * (high.ratio - low.ratio)
    return examples[-1].ratio


@tool("surrender_value_explain", args_schema=SurrenderArgs)
def surrender_value_explain(product: str | None = None, years: int | None = None, age: int | None = None,
                            sex: str | None = None, payment_term: str | None = None) -> dict[str, Any]:
    """상품의 해약환급금 규칙(표준형·저해지·무해지 유형 설명과 경과연도별 환급률 예시)을 설명하고, 나이·성별을
    주면 낸 보험료와 예상 해약환급금을 계산합니다."""
    found = _product_and_person(product, age, sex)
    if isinstance(found, dict):
        return found
    p, person = found
    if years is not None and years > 100:
        return needs_user_input(["years"], "해지 시점을 계약 후 몇 년째인지(예: 5년) 다시 알려주세요.",
                                **product_ref(p), given=years)
    monthly = term = pay_years = None
    if person is not None:
        priced = _priced(p, person, payment_term)
        if isinstance(priced, dict):
            return priced
        term, monthly = priced
        pay_years = _payment_years(p, term, person[0])

    def row(year: int, ratio: float) -> dict[str, Any]:
        entry = {"year": year, "refund_ratio": round(ratio, 4), "refund_ratio_text": f"{ratio * 100:.0f}%"}
        if monthly is not None:
            paid_years = min(year, pay_years) if pay_years is not None else year
            paid = monthly * 12 * paid_years
            entry.update(money("premiums_paid", paid), **money("estimated_refund", paid * ratio))
        return entry

    examples = [row(e.year, e.ratio) for e in p.surrender.examples]
    result: dict[str, Any] = {
        **product_ref(p),
        "surrender_type": p.surrender.type,
        "type_explanation": SURRENDER_TYPE_TEXT[p.surrender.type],
        "explanation": p.surrender.explanation,
        "examples": examples,
    }
    summary = f"{p.name}은(는) {p.surrender.type} 상품입니다. {p.surrender.explanation}"
    if years is not None:
        at = row(years, _ratio_at(p.surrender.examples, years))
        at["interpolated"] = years not in {e.year for e in p.surrender.examples}
        result["at_year"] = at
        summary += f" 계약 {years}년째 해지 시 환급률은 약 {at['refund_ratio_text']}"
        summary += (f"(낸 보험료 {at['premiums_paid_text']} 중 약 {at['estimated_refund_text']})." if monthly is not None
                    else "입니다.")
    if monthly is not None:
        result["conditions"] = {"age": person[0], "sex": person[1], "payment_term": term, "payment_years": pay_years}
        result.update(money("monthly_premium", monthly))
    notes = ["환급률은 낸 보험료 대비 해약환급금의 비율 예시이며, 실제 금액은 가입 조건·공시이율에 따라 다릅니다.",
             "해지하면 보장이 끝나고, 다시 가입할 때는 나이가 올라 보험료가 높아지거나 가입이 어려울 수 있습니다."]
    return ok(**result, summary=summary, notes=notes)


TOOLS = [
    premium_estimate,
    premium_compare,
    plan_options,
    amount_suggest,
    renewal_premium_projection,
    affordability_check,
    payment_cycle_options,
    surrender_value_explain,
]

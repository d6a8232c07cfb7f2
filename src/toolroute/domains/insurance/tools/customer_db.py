"""customer_db tools: a customer's contracts, duplicate-enrollment check, customer search.

They read the synthetic customer database (`toolroute.domains.insurance.customers`) through its
safe projections only, so no phone number, resident number, address, e-mail or birth date can
reach the model. Which database is read: `customers.use_database(path)` / `set_database(path)`,
else the default build under `data_dir()`.

Product categories come from `toolroute.domains.insurance.products` (products.yaml); two categories
overlap when one's tokens (split on '·', without '보험' and the '간편' prefix) contain the other's,
so 간편 종신 overlaps 종신 and 치매·간병 overlaps 치매, while 치매 does not overlap 종신.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any

from langchain_core.tools import tool
from pydantic import BaseModel, BeforeValidator

from toolroute.domains.insurance import customers as db
from toolroute.domains.insurance import products
from toolroute.domains.tool_results import needs_user_input, not_found, ok
from toolroute.domains.insurance.tools.schemas import described

VERDICT_OK = "가입 가능"
VERDICT_DUPLICATE = "중복 주의"


# --- argument schemas ----------------------------------------------------------------------------

def _parse_age(value: Any) -> Any:
    """Accept 55, '55', '55세', '만 55세'; leave anything else to pydantic."""
    if isinstance(value, str):
        match = re.search(r"\d{1,3}", value)
        if match:
            return int(match.group())
        if not value.strip():
            return None
    return value


CustomerAge = Annotated[int | None, BeforeValidator(_parse_age)]


class _CustomerArgs(BaseModel):
    customer_id: str | None = described("고객번호 (예: C0001). 알고 있으면 이름보다 우선합니다.")
    name: str | None = described("계약자(고객) 이름 (예: 김민수)")
    age: CustomerAge = described("고객 나이(만 나이). 같은 이름의 고객이 여러 명일 때 구분에 사용")
    sex: str | None = described("고객 성별: 남성 또는 여성. 같은 이름의 고객 구분에 사용")


class ContractLookupArgs(_CustomerArgs):
    status: str | None = described("보고 싶은 계약 상태만 거를 때: 유지, 해지, 실효, 만기 (생략하면 전체)")


class DuplicateCheckArgs(_CustomerArgs):
    product: str | None = described("추가로 가입하려는 상품명 또는 상품코드 (예: 실속치매보험, B005)")
    category: str | None = described("상품명 대신 보장 종류로 확인할 때 (예: 암, 치매, 치아, 종신, 실손)")


class CustomerSearchArgs(BaseModel):
    name: str | None = described("고객 이름 (예: 이영희)")
    age: CustomerAge = described("고객 나이(만 나이)")
    sex: str | None = described("고객 성별: 남성 또는 여성")


# --- shared steps --------------------------------------------------------------------------------

_ASK_CUSTOMER = "조회할 계약자의 성함이나 고객번호(예: C0001)를 알려주세요."


def _resolve_customer(
    customer_id: str | None, name: str | None, age: int | None, sex: str | None
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The one customer meant, or the result to return instead (ask, ambiguity, not found)."""
    if not (customer_id and customer_id.strip()) and not (name and name.strip()):
        return None, needs_user_input(["customer_id", "name"], _ASK_CUSTOMER)
    try:
        sex_value = db.normalize_sex(sex)
    except ValueError:
        return None, needs_user_input(["sex"], "고객 성별을 남성 또는 여성으로 알려주세요.")
    found = db.find_customers(name=name, age=age, sex=sex_value, customer_id=customer_id)
    if len(found) == 1:
        return found[0], None
    label = db.normalize_name(name) or db.normalize_customer_id(customer_id)
    if not found:
        if customer_id and not db.find_customers(customer_id=customer_id):
            return None, not_found("customer", db.normalize_customer_id(customer_id))
        if name and not db.find_customers(name=name):
            return None, not_found("customer", label, _close_names(name))
        criteria = {k: v for k, v in
                    (("customer_id", db.normalize_customer_id(customer_id)), ("name", db.normalize_name(name)),
                     ("age", age), ("sex", sex_value)) if v is not None}
        return None, not_found("customer", criteria)
    ages = {c["age"] for c in found}
    if age is None and len(ages) == len(found):
        ask = f"{label} 고객님이 {len(found)}명 조회됩니다. 고객번호나 나이를 알려주세요."
        missing = ["customer_id", "age"]
    else:
        ask = f"{label} 고객님이 {len(found)}명 조회됩니다. 고객번호(예: {found[0]['customer_id']})를 알려주세요."
        missing = ["customer_id"]
    return None, needs_user_input(missing, ask, name=label, candidates=found)


def _close_names(name: str) -> list[str]:
    """Customer names close to a misspelt one (김민주 → 김민수)."""
    return difflib.get_close_matches(db.normalize_name(name) or "", db.customer_names(), n=3, cutoff=0.6)


def _contract_line(contract: dict[str, Any]) -> str:
    status = contract["status"]
    parts = [f"{contract['product_name']} [{status}]", f"계약일 {contract['contract_date']}"]
    if contract.get("insured_person") and contract["insured_person"] != "본인":
        parts[0] += f" (피보험자: {contract['insured_person']})"
    parts.append(f"만료일 {contract['expiry_date'] or '종신'}")
    if contract["termination_date"]:
        parts.append(f"{'실효일' if status == '실효' else '해지일'} {contract['termination_date']}")
    if contract["next_renewal_date"]:
        parts.append(f"갱신일 {contract['next_renewal_date']}")
    parts.append(f"월 보험료 {contract['monthly_premium']:,}원")
    return ", ".join(parts)


def _count_line(counts: dict[str, int]) -> str:
    shown = [s for s in db.CONTRACT_STATUSES if s in ("유지", "해지") or counts[s]]
    return ", ".join(f"{s} {counts[s]}건" for s in shown)


def _get_product(name_or_code: str) -> products.Product | None:
    """The product, or None when unknown or ambiguous (치매보험 names two products)."""
    return products.get_product(name_or_code)


def _all_products() -> list[products.Product]:
    return list(products.load_products().values())


def _category_tokens(category: str) -> set[str]:
    text = category.replace("보험", "").replace("보장", "").strip()
    tokens = set()
    for token in re.split(r"[·,/+\s]+", text):
        token = token.removeprefix("간편").strip() or token
        if token:
            tokens.add(token)
    return tokens


def categories_overlap(a: str, b: str) -> bool:
    """Same kind of cover: a token of one contains a token of the other (치매 ⊂ 치매간병, 종신 = 간편 종신)."""
    ta, tb = _category_tokens(a), _category_tokens(b)
    return any(x in y or y in x for x in ta for y in tb)


def _products_of_category(text: str) -> list[products.Product]:
    """Products whose category overlaps `text` (치매 → B004, B005), else whose keywords match (실비 → B010)."""
    found = [p for p in _all_products() if categories_overlap(text, p.category)]
    if not found:
        try:
            found = products.search_products(keyword=text)
        except ValueError:
            found = []
    return sorted(found, key=lambda p: p.code)


def _product_brief(product: products.Product) -> dict[str, str]:
    return {"code": product.code, "name": product.name, "category": product.category}


# --- tools ---------------------------------------------------------------------------------------

@tool("customer_contract_lookup", args_schema=ContractLookupArgs)
def customer_contract_lookup(
    customer_id: str | None = None,
    name: str | None = None,
    age: int | None = None,
    sex: str | None = None,
    status: str | None = None,
) -> dict[str, Any]:
    """계약자(고객)의 보유 계약을 조회합니다: 계약별 상태(유지·해지·실효·만기), 계약일·만료일·해지일·갱신일,
    월 보험료와 고객의 나이·성별. 고객번호나 이름으로 찾습니다."""
    try:
        status_value = db.normalize_status(status)
    except ValueError:
        return needs_user_input(["status"], "계약 상태는 유지·해지·실효·만기 중에서 골라 주세요.")
    customer, other = _resolve_customer(customer_id, name, age, sex)
    if other is not None:
        return other
    every = db.contracts_of(customer["customer_id"])
    counts = {s: sum(c["status"] == s for c in every) for s in db.CONTRACT_STATUSES}
    shown = [c for c in every if status_value is None or c["status"] == status_value]
    contracts = [{**c, "summary": _contract_line(c)} for c in shown]
    active_total = sum(c["monthly_premium"] for c in every if c["status"] == "유지")
    head = f"{customer['name']} 고객님({customer['age']}세 {customer['sex']}, {customer['customer_id']})"
    summary = f"{head} 보유 계약 {len(every)}건: {_count_line(counts)}" if every else f"{head} 보유 계약이 없습니다."
    if every and counts["유지"]:
        summary += f" (유지 계약 월 보험료 합계 {active_total:,}원)"
    return ok(
        customer=customer,
        summary=summary,
        counts=counts,
        status_filter=status_value,
        contracts=contracts,
        active_monthly_premium_total=active_total,
        reference_date=db.REFERENCE_DATE.isoformat(),
    )


@tool("duplicate_enrollment_check", args_schema=DuplicateCheckArgs)
def duplicate_enrollment_check(
    customer_id: str | None = None,
    name: str | None = None,
    age: int | None = None,
    sex: str | None = None,
    product: str | None = None,
    category: str | None = None,
) -> dict[str, Any]:
    """고객이 보유한 계약을 기준으로, 새 상품(또는 보장 종류)을 추가 가입하면 유지 중인 같은 종류의 계약과
    중복되는지 확인합니다(가입 가능 / 중복 주의). 상품과 보장 종류를 모두 생략하면 보유 보장 종류와
    중복되지 않는 상품 목록을 돌려줍니다."""
    customer, other = _resolve_customer(customer_id, name, age, sex)
    if other is not None:
        return other
    held = db.contracts_of(customer["customer_id"])
    held_category = {}
    for contract in held:
        held_product = _get_product(contract["product_code"])
        held_category[contract["contract_id"]] = held_product.category if held_product else None
    held_view = [
        {"contract_id": c["contract_id"], "product_name": c["product_name"], "status": c["status"],
         "category": held_category[c["contract_id"]]}
        for c in held
    ]
    active_categories = sorted({held_category[c["contract_id"]] for c in held
                                if c["status"] == "유지" and held_category[c["contract_id"]]})
    who = f"{customer['name']} 고객님({customer['customer_id']})"

    target = None
    wanted_products: list[products.Product] = []
    if product and product.strip():
        target = _get_product(product.strip())
        if target is None:
            # "암보험" / "치매보험" name a kind of cover, not one product: read them as a category.
            wanted_products = _products_of_category(product) if not (category and category.strip()) else []
            if not wanted_products:
                return not_found("product", product, products.product_candidates(product))
            category = product
        else:
            wanted_products = [target]
    elif category and category.strip():
        wanted_products = _products_of_category(category)
        if not wanted_products:
            return not_found("category", category, sorted({p.category for p in _all_products()}))

    if not wanted_products:
        candidates = [_product_brief(p) for p in _all_products()
                      if not any(categories_overlap(p.category, c) for c in active_categories)]
        return ok(
            customer=customer,
            mode="overview",
            active_categories=active_categories,
            held_contracts=held_view,
            non_duplicate_products=candidates,
            summary=f"{who}: 유지 중인 보장 종류 {', '.join(active_categories) or '없음'}; "
                    f"겹치지 않아 추가 가입할 수 있는 상품 {len(candidates)}종",
            ask="특정 상품이나 보장 종류를 알려주시면 중복 여부를 확인해 드립니다.",
        )

    wanted_categories = sorted({p.category for p in wanted_products})
    if target is not None or len(wanted_categories) == 1:
        wanted = wanted_categories[0]
    else:
        wanted = re.sub(r"(보험|보장)$", "", category.strip()) or category.strip()
    same = []
    for contract in held:
        held_cat = held_category[contract["contract_id"]]
        if held_cat and any(categories_overlap(w, held_cat) for w in wanted_categories):
            same.append({**contract, "category": held_cat})
    same_active = [c for c in same if c["status"] == "유지"]
    same_inactive = [c for c in same if c["status"] != "유지"]
    duplicate = bool(same_active)
    verdict = VERDICT_DUPLICATE if duplicate else VERDICT_OK
    subject = f"{target.name}({target.category})" if target is not None else f"{wanted} 보장"
    if duplicate:
        held_names = ", ".join(c["product_name"] for c in same_active)
        summary = f"{who}: 같은 종류의 유지 계약 있음({held_names}) → {subject} 추가 가입 {verdict}"
    else:
        summary = f"{who}: 같은 종류의 유지 계약 없음 → {subject} 추가 {verdict}"
    notes = []
    if any(c["status"] == "실효" for c in same_inactive):
        notes.append("같은 종류의 실효 계약이 있습니다. 새로 가입하기 전에 부활 가능 여부를 먼저 확인하세요.")
    if any(c["status"] == "해지" for c in same_inactive):
        notes.append("같은 종류의 해지 계약이 있습니다. 부활 가능 기간이면 부활 조건도 함께 안내하세요.")
    if duplicate and any("실손" in c["category"] for c in same_active):
        notes.append("실손의료보험은 여러 건 가입해도 실제 부담한 의료비 안에서 비례 보상되어 중복 가입 실익이 없습니다.")
    if target is not None and any(c["product_code"] == target.code for c in same_active):
        notes.append("같은 상품을 이미 유지 중입니다.")

    result = ok(
        customer=customer,
        mode="product" if target is not None else "category",
        requested_product=_product_brief(target) if target is not None else None,
        requested_category=wanted,
        verdict=verdict,
        duplicate=duplicate,
        same_category_active_contracts=same_active,
        same_category_inactive_contracts=same_inactive,
        held_contracts=held_view,
        summary=summary,
        notes=notes,
    )
    if target is None:
        result["products_in_category"] = [_product_brief(p) for p in wanted_products]
    return result


@tool("customer_search", args_schema=CustomerSearchArgs)
def customer_search(
    name: str | None = None, age: int | None = None, sex: str | None = None
) -> dict[str, Any]:
    """이름·나이·성별로 고객을 검색해 일치하는 고객 목록(고객번호, 이름, 나이, 성별, 직업)과 계약 건수를
    보여줍니다. 한 가지 이상의 조건이 필요합니다."""
    if not (name and name.strip()) and age is None and not (sex and sex.strip()):
        ask = "찾으실 고객의 이름, 나이, 성별 중 하나 이상을 알려주세요."
        return needs_user_input(["name", "age", "sex"], ask)
    try:
        sex_value = db.normalize_sex(sex)
    except ValueError:
        return needs_user_input(["sex"], "고객 성별을 남성 또는 여성으로 알려주세요.")
    found = db.find_customers(name=name, age=age, sex=sex_value)
    given = (("name", db.normalize_name(name)), ("age", age), ("sex", sex_value))
    criteria = {k: v for k, v in given if v is not None}
    if not found:
        return not_found("customer", criteria, _close_names(name) if name else None)
    rows = []
    for customer in found:
        contracts = db.contracts_of(customer["customer_id"])
        rows.append({**customer, "contracts_total": len(contracts),
                     "contracts_active": sum(c["status"] == "유지" for c in contracts)})
    return ok(criteria=criteria, count=len(rows), customers=rows,
              summary=f"조건에 맞는 고객 {len(rows)}명: " + ", ".join(
                  f"{c['name']}({c['age']}세 {c['sex']}, {c['customer_id']})" for c in rows))


TOOLS = [customer_contract_lookup, duplicate_enrollment_check, customer_search]

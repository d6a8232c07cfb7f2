"""product tools: which products exist, their basic facts, versions, riders, join rules, FAQ, channels.

Every fact comes from `toolroute.domains.insurance.products` (products.yaml). The tools never raise
on user words: the args schemas clean every field (the field types of `schemas`), and a
missing or unclear argument comes back as `needs_user_input` with the Korean question to ask, an
unknown product or rider as `not_found` with candidates, and an age outside the join ages as
`rejected` with the allowed range.

eligibility_by_product_rule applies the product's own rules only (join ages, channels, simplified
underwriting); a medical pre-underwriting of a person's history is a different tool.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from langchain_core.tools import tool
from pydantic import BaseModel

from toolroute.domains.insurance import products as catalog
from toolroute.domains.insurance.products import OutsideJoinAge, Product, Rider
from toolroute.domains.insurance.tools._common import (
    age_rejection,
    ASK_CHANNEL,
    CHANNEL_LABELS,
    channels_text,
    check_age,
    join_age_text,
    keyword_tokens,
    money,
    product_brief,
    product_ref,
    renewal_text,
    require,
    require_product,
    resolve_person,
    resolve_product,
    resolve_products,
    text_matches,
    won_text,
)
from toolroute.domains.tool_results import needs_user_input, not_found, ok, rejected
from toolroute.domains.insurance.tools.schemas import Age, Flag, Names, Text, described

PRODUCT_DESCRIPTION = "상품명 또는 상품코드 (예: 첫날부터암보험, 치매간병보험, B002)"


# --- argument schemas ----------------------------------------------------------------------------
# Every field is cleaned before validation (see `schemas`), so no input can fail.

class ProductSearchArgs(BaseModel):
    keyword: Text = described(
        "찾을 보장이나 상품 키워드 (예: 치매, 암, 간편심사 건강, 사망 치아). 여러 단어는 모두 맞는 상품을 먼저, "
        "없으면 하나라도 맞는 상품을 찾습니다.")
    category: Text = described("상품 종류로 거를 때 (예: 암, 종신, 치아, 치매, 실손, 운전자, 연금)")
    age: Age = described("가입할 사람의 나이(만 나이, 예: 60 또는 '60세'): 이 나이에 가입할 수 있는 상품만 보여줍니다")
    channel: Text = described("판매 채널로 거를 때: TM(전화), CM(온라인), 대면(설계사)")
    simplified: Flag = described("간편심사(유병자) 상품만 찾으면 true, 일반심사 상품만 찾으면 false")


class ProductArgs(BaseModel):
    product: Text = described(PRODUCT_DESCRIPTION)


class ProductCompareArgs(BaseModel):
    products: Names = described(
        "비교할 상품명 또는 상품코드 2개 이상 (예: ['전에없던치매간병보험', '실속치매보험'] 또는 '치매간병보험, 실속치매보험')")
    age: Age = described("보험료도 비교하려면 피보험자 나이(만 나이)")
    sex: Text = described("보험료도 비교하려면 피보험자 성별: 남성 또는 여성 (아버지·어머니도 가능)")


class VersionCheckArgs(ProductArgs):
    version: Text = described(
        "고객이나 상담원이 가진 상품요약서의 버전 또는 작성일 (예: 2025.07, 2026년 1월, 2026-07-01)")


class RiderListArgs(ProductArgs):
    age: Age = described("특약 보험료(월 추가액)도 계산하려면 피보험자 나이")
    sex: Text = described("특약 보험료(월 추가액)도 계산하려면 피보험자 성별: 남성 또는 여성")


class RiderSearchArgs(BaseModel):
    keyword: Text = described("특약에서 찾을 말 (예: 수술, 항암, 통원, 재해사망, 간병)")
    product: Text = described(PRODUCT_DESCRIPTION + ". 생략하면 모든 상품의 특약에서 찾습니다")


class RiderGetArgs(RiderListArgs):
    rider: Text = described("특약명 또는 특약코드 (예: 암주요치료비 특약, B001-R01)")
    product: Text = described(PRODUCT_DESCRIPTION + ". 특약코드를 주면 생략할 수 있습니다")


class EligibilityArgs(ProductArgs):
    age: Age = described("가입할 사람의 나이(만 나이): 가입 가능 나이 안인지 확인합니다")
    channel: Text = described("가입하려는 채널: TM(전화), CM(온라인), 대면(설계사)")


class FaqArgs(ProductArgs):
    question: Text = described("궁금한 내용이나 키워드 (예: 갑상선암, 해지하면 환급금, 70세 가입). 생략하면 전체 FAQ")


class ChannelArgs(BaseModel):
    product: Text = described(PRODUCT_DESCRIPTION + ". 생략하면 채널에서 판매하는 상품 목록을 보여줍니다")
    channel: Text = described("확인할 판매 채널: TM(전화), CM(온라인·모바일), 대면(설계사·지점)")


# --- shared steps --------------------------------------------------------------------------------

def _all_products() -> list[Product]:
    return list(catalog.load_products().values())


def _underwriting_text(product: Product) -> str:
    if product.simplified_underwriting and product.simplified_disclosure is not None:
        return f"간편심사({product.simplified_disclosure.name})"
    return "일반심사"


def _sum_insured(product: Product) -> dict[str, Any]:
    return {
        **money("min", product.sum_insured_min),
        **money("max", product.sum_insured_max),
        "basis": product.sum_insured_basis,
        "text": f"{product.sum_insured_basis} {won_text(product.sum_insured_min)}~{won_text(product.sum_insured_max)}",
    }


def _coverage_line(coverage: catalog.Coverage) -> dict[str, Any]:
    amount = coverage.amount_text or f"{won_text(coverage.amount)} ({coverage.pay_basis})"
    return {"id": coverage.id, "type": coverage.type, "name": coverage.name, **money("amount", coverage.amount),
            "amount_summary": amount}


def _addon_text(rider: Rider) -> str:
    if rider.premium_addon_ratio is not None:
        return f"주계약 보험료의 {rider.premium_addon_ratio * 100:g}%"
    return f"월 {won_text(rider.premium_addon_won)}"


def _rider_view(product: Product, rider: Rider, age: int | None = None, sex: str | None = None) -> dict[str, Any]:
    view = {
        "rider_code": rider.code,
        "rider_name": rider.name,
        **product_ref(product),
        "description": rider.description,
        **money("amount", rider.amount),
        "pay_basis": rider.pay_basis,
        "premium_addon": _addon_text(rider),
    }
    if age is not None and sex is not None:
        with_rider = catalog.monthly_premium(product, age, sex, riders=[rider.code])
        view.update(money("monthly_addon", with_rider - catalog.monthly_premium(product, age, sex)))
    return view




def _optional_age_sex(product: Product, age: int | None, sex: str | None
                      ) -> tuple[int | None, str | None, dict[str, Any] | None, str | None]:
    """(age, sex, result to return, note) for tools where age and sex only add a premium figure."""
    if age is None and sex is None:
        return None, None, None, None
    if age is None or sex is None:
        return None, None, None, "나이와 성별을 모두 알려주시면 월 보험료(추가액)도 계산해 드립니다."
    person = resolve_person(age, sex)
    if isinstance(person, dict):
        return None, None, person, None
    age, sex_value = person
    if not product.join_age_min <= age <= product.join_age_max:
        return None, None, age_rejection(product, age), None
    return age, sex_value, None, None


# --- product_search ------------------------------------------------------------------------------

_AGE_IN_TEXT = re.compile(r"(?:만\s*)?(\d{1,3})\s*세")


def _search(keyword: str | None, **filters: Any) -> list[Product]:
    try:
        return catalog.search_products(keyword=keyword, **filters)
    except ValueError:
        return []


_WORD_SUFFIX = re.compile(r"(?:보장|보험|상품)?(?:은|는|이|가|을|를|도|으로|로|이랑|랑|하고|과|와)?$")
_FILLER = {"보험", "상품", "보장", "가입", "가입할", "가입하고", "가입하려는", "가능한", "가능", "있는", "있어", "있나요",
           "있을까", "싶어", "싶은데", "추천", "추천해줘", "알려줘", "알려주세요", "찾아줘", "뭐", "뭐가", "어떤", "무슨",
           "관련", "관련된", "좋은", "새로", "수", "것", "거", "중에", "중", "나이", "기준"}


def _search_words(keyword: str | None) -> tuple[list[str], list[str], list[str], int | None]:
    """(words that match some product, words matching none, person words ignored, an age in the keyword).

    "70세 아버지 사망보장이랑 치아보험" -> (['사망', '치아'], [], ['아버지'], 70): the age becomes a filter,
    a sex or family word is not a product fact, and 보장/보험 and particles are cut from each word.
    """
    if not keyword:
        return [], [], [], None
    age = None
    match = _AGE_IN_TEXT.search(keyword)
    if match:
        age = int(match.group(1))
        keyword = _AGE_IN_TEXT.sub(" ", keyword)
    words, unmatched, person = [], [], []
    for word in re.split(r"[\s,·/+&]+", keyword):
        word = word.strip(" ?!.")
        if not word:
            continue
        if catalog.normalize_sex(word):
            person.append(word)
            continue
        stem = _WORD_SUFFIX.sub("", word) or word
        if stem in _FILLER or word in _FILLER:
            continue  # says nothing about which product
        if len(stem) == 1 and not any(stem in p.category or stem in p.keywords for p in _all_products()):
            continue  # a one-letter word ("수") is noise unless it names a kind of cover ("암", "뇌")
        if _search(stem):
            words.append(stem)
        elif _search(word):
            words.append(word)
        else:
            unmatched.append(word)
    return words, unmatched, person, age


@tool("product_search", args_schema=ProductSearchArgs)
def product_search(
    keyword: str | None = None,
    category: str | None = None,
    age: int | None = None,
    channel: str | None = None,
    simplified: bool | None = None,
) -> dict[str, Any]:
    """판매 중인 보험 상품을 키워드·상품 종류·가입 나이·판매 채널·간편심사 여부로 찾아 상품 목록(가입 나이,
    갱신 여부, 판매 채널, 심사 방식)을 보여줍니다. 조건 없이 부르면 전체 상품 목록을 돌려줍니다."""
    wanted_channel = None
    if channel:
        wanted_channel = catalog.normalize_channel(channel)
        if wanted_channel is None:
            return needs_user_input(["channel"], ASK_CHANNEL, given=channel)
    words, unmatched, person_words, age_in_keyword = _search_words(keyword)
    ignored = unmatched + person_words
    if age is None:
        age = age_in_keyword
    if age is not None:
        bad_age = check_age(age)
        if bad_age:
            return bad_age
    filters = {"category": category, "age": age, "channel": wanted_channel, "simplified": simplified}

    match_mode = "all"
    found = [] if unmatched and not words else _search(" ".join(words), **filters)
    by_word: dict[str, list[str]] = {}
    if not found and len(words) > 1:  # "사망 치아": products for either word
        match_mode = "any"
        seen: dict[str, Product] = {}
        for word in words:
            hits = _search(word, **filters)
            by_word[word] = [p.name for p in hits]
            for product in hits:
                seen.setdefault(product.code, product)
        found = list(seen.values())

    criteria = {k: v for k, v in (("keyword", keyword), ("category", category), ("age", age),
                                  ("channel", wanted_channel), ("simplified", simplified)) if v is not None}
    # Products the words match but the age rules out: worth saying ("튼튼어린이보험은 0~15세").
    excluded_by_age = []
    if age is not None and (words or category):
        without_age = _search(" ".join(words), **{**filters, "age": None}) if match_mode == "all" else [
            p for w in words for p in _search(w, **{**filters, "age": None})]
        kept = {p.code for p in found}
        for product in without_age:
            if product.code not in kept and all(e["product_code"] != product.code for e in excluded_by_age):
                excluded_by_age.append({**product_ref(product), "join_age": join_age_text(product)})

    if not found:
        candidates = catalog.product_candidates(keyword or category or "")
        result = not_found("product", criteria, candidates)
        reason = "조건에 맞는 판매 상품이 없습니다."
        if excluded_by_age:
            reason = f"{age}세에 가입할 수 있는 상품이 없습니다: " + ", ".join(
                f"{e['product_name']}({e['join_age']})" for e in excluded_by_age)
        result.update(reason=reason, excluded_by_age=excluded_by_age,
                      categories=sorted({p.category for p in _all_products()}))
        return result

    items = [product_brief(p) for p in found]
    head = "전체 판매 상품" if not criteria else "조건에 맞는 상품"
    summary = f"{head} {len(items)}종: " + ", ".join(
        f"{p.name}({p.category}, {join_age_text(p)}, {'간편' if p.simplified_underwriting else '일반'}심사)"
        for p in found)
    result = ok(criteria=criteria, match_mode=match_mode, count=len(items), products=items, summary=summary)
    if by_word:
        result["matches_by_keyword"] = by_word
    if ignored:
        result["ignored_words"] = ignored
    if excluded_by_age:
        result["excluded_by_age"] = excluded_by_age
    return result


# --- product_get ---------------------------------------------------------------------------------

@tool("product_get", args_schema=ProductArgs)
def product_get(product: str | None = None) -> dict[str, Any]:
    """상품 하나의 기본 정보(상품코드, 종류, 가입 나이, 보험기간, 갱신 여부, 납입기간·납입주기, 가입금액 범위,
    주요 보장·특약 이름, 해약환급금 유형, 판매 채널, 문서 버전)를 상품명이나 상품코드로 조회합니다."""
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    p = found
    details = {
        **product_brief(p),
        "aliases": list(p.aliases),
        "underwriting": _underwriting_text(p),
        "renewal_note": p.renewal_note,
        "payment_terms": list(p.payment_terms),
        "payment_cycles": list(p.payment_cycles),
        "sum_insured": _sum_insured(p),
        "coverages": [_coverage_line(c) for c in p.coverages],
        "riders": [{"rider_code": r.code, "rider_name": r.name} for r in p.riders],
        "premium_waiver": list(p.premium_waiver),
        "surrender_type": p.surrender.type,
        "premium_basis": p.premium.basis,
        "annuity_conversion": None if p.annuity_conversion is None else {
            "min_contract_years": p.annuity_conversion.min_contract_years,
            "age_range": f"{p.annuity_conversion.min_age}~{p.annuity_conversion.max_age}세",
            "options": list(p.annuity_conversion.options),
        },
        "version": p.version,
        "summary_date": p.summary_date,
    }
    summary = (f"{p.name}({p.code}, {p.category}): {p.description}. 가입 {join_age_text(p)}, {p.coverage_period},"
               f" {renewal_text(p)}, {_underwriting_text(p)}, 판매 채널 {channels_text(p.channels)},"
               f" 납입 {'/'.join(p.payment_terms)}, 해약환급금 {p.surrender.type}.")
    return ok(product=details, summary=summary)


# --- product_compare -----------------------------------------------------------------------------

_COMPARE_FIELDS = [
    ("category", "상품 종류"), ("join_age", "가입 나이"), ("coverage_period", "보험기간"), ("renewal", "갱신"),
    ("underwriting", "심사 방식"), ("channels_text", "판매 채널"), ("payment_terms_text", "납입기간"),
    ("surrender_type", "해약환급금 유형"), ("sum_insured_text", "가입금액 범위"),
]


@tool("product_compare", args_schema=ProductCompareArgs)
def product_compare(products: list[str] | None = None, age: int | None = None,
                    sex: str | None = None) -> dict[str, Any]:
    """두 개 이상의 상품을 나란히 비교합니다: 종류, 가입 나이, 보험기간, 갱신 여부, 심사 방식, 판매 채널,
    납입기간, 주요 보장과 금액, 해약환급금 유형. 나이와 성별을 주면 같은 조건의 월 보험료도 함께 비교합니다."""
    if not products:
        return needs_user_input(["products"], "비교할 상품을 2개 이상 알려주세요.")
    found = resolve_products(products, minimum=2)
    if isinstance(found, dict):
        return found
    premium_note = None
    sex_value = None
    if age is not None and sex is not None:
        person = resolve_person(age, sex)
        if isinstance(person, dict):
            return person
        age, sex_value = person
    elif age is not None or sex is not None:
        premium_note = "나이와 성별을 모두 알려주시면 같은 조건의 월 보험료도 비교해 드립니다."

    rows = []
    for p in found:
        row = {
            **product_ref(p),
            "category": p.category,
            "description": p.description,
            "join_age": join_age_text(p),
            "coverage_period": p.coverage_period,
            "renewal": renewal_text(p),
            "underwriting": _underwriting_text(p),
            "channels": list(p.channels),
            "channels_text": channels_text(p.channels),
            "payment_terms": list(p.payment_terms),
            "payment_terms_text": ", ".join(p.payment_terms),
            "surrender_type": p.surrender.type,
            "sum_insured_text": _sum_insured(p)["text"],
            "coverages": [_coverage_line(c) for c in p.coverages],
            "riders": [r.name for r in p.riders],
        }
        if sex_value is not None:
            if p.join_age_min <= age <= p.join_age_max:
                row.update(money("monthly_premium", catalog.monthly_premium(p, age, sex_value)))
                row["premium_basis"] = p.premium.basis
            else:
                row.update(money("monthly_premium", None))
                row["premium_note"] = str(OutsideJoinAge(p, age))
        rows.append(row)

    differences = [label for key, label in _COMPARE_FIELDS if len({str(r[key]) for r in rows}) > 1]
    summary = " / ".join(
        f"{r['product_name']}: {r['category']}, {r['join_age']}, {r['coverage_period']}, {r['renewal']},"
        f" {r['underwriting']}" + (f", 월 {r['monthly_premium_text']}" if r.get("monthly_premium") else "")
        for r in rows)
    result = ok(count=len(rows), products=rows, differences=differences, summary=summary,
                note="보장 범위와 지급 조건이 상품마다 달라 금액만으로 우열을 판단할 수 없습니다.")
    if sex_value is not None:
        result["conditions"] = {"age": age, "sex": sex_value}
        priced = [r for r in rows if r.get("monthly_premium")]
        if len(priced) >= 2:
            cheapest = min(priced, key=lambda r: r["monthly_premium"])
            dearest = max(priced, key=lambda r: r["monthly_premium"])
            result.update(cheapest=cheapest["product_name"],
                          **money("premium_difference", dearest["monthly_premium"] - cheapest["monthly_premium"]))
    if premium_note:
        result["premium_note"] = premium_note
    return result


# --- product_latest_version_check ----------------------------------------------------------------

_VERSION = re.compile(r"(\d{4}|\d{2})\s*(?:[.\-/]|년)\s*(\d{1,2})(?:\s*(?:[.\-/]|월)\s*(\d{1,2}))?")


def _parse_version(text: str) -> tuple[int, int, int | None] | None:
    """(year, month, day or None) from '2025.07', '25.07', '2026년 1월', '2026-07-01', 'v2026.01'."""
    match = _VERSION.search(text)
    if not match:
        return None
    year, month = int(match.group(1)), int(match.group(2))
    day = int(match.group(3)) if match.group(3) else None
    if year < 100:
        year += 2000
    if not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
        return None
    return year, month, day


def _version_key(version: str) -> tuple[int, int]:
    year, month = version.split(".")
    return int(year), int(month)


@tool("product_latest_version_check", args_schema=VersionCheckArgs)
def product_latest_version_check(product: str | None = None, version: str | None = None) -> dict[str, Any]:
    """고객이나 상담원이 가진 상품요약서의 버전(또는 작성일)이 그 상품의 최신 버전인지 현재 버전·작성일과
    비교해 알려줍니다."""
    p = require_product(product)
    if isinstance(p, dict):
        return p
    current = {"current_version": p.version, "summary_date": p.summary_date,
               "previous_versions": list(p.previous_versions)}
    if not version:
        return needs_user_input(["version"], "가지고 계신 상품요약서의 버전이나 작성일(예: 2025.07)을 알려주세요.",
                                **product_ref(p), **current)
    parsed = _parse_version(version)
    if parsed is None:
        return needs_user_input(["version"], f"'{version}'에서 버전을 읽지 못했습니다. 상품요약서 표지의 버전이나 "
                                "작성일(예: 2025.07 또는 2025-07-01)을 알려주세요.", **product_ref(p), **current)
    year, month, day = parsed
    given = f"{year}.{month:02d}"
    key, latest = (year, month), _version_key(p.version)
    if key == latest:
        is_latest, verdict = True, "최신 버전"
        message = f"{p.name}의 {given} 버전은 현재 최신 버전입니다(작성일 {p.summary_date})."
    elif key > latest:
        is_latest, verdict = None, "확인 필요"
        message = (f"{given}은(는) 현재 최신 버전({p.version})보다 나중으로 적혀 있습니다. 버전 표기를 다시 "
                   "확인해 주세요.")
    else:
        is_latest = False
        newer = sorted({v for v in [*p.previous_versions, p.version] if _version_key(v) > key}, key=_version_key)
        known = given in p.previous_versions
        verdict = "이전 버전" if known else "이전 버전(이력에 없는 버전)"
        message = (f"{given} 버전은 이전 버전입니다. 최신 버전은 {p.version}(작성일 {p.summary_date})이며, 그 사이에 "
                   f"{len(newer)}번 개정되었습니다({', '.join(newer)}). 최신 상품요약서로 안내해 주세요.")
        if not known:
            message += " 이 상품의 개정 이력에 없는 버전이니 표기를 확인해 주세요."
    return ok(**product_ref(p), given=version, given_version=given, is_latest=is_latest, verdict=verdict,
              **current, summary=message)


# --- riders --------------------------------------------------------------------------------------

@tool("rider_list", args_schema=RiderListArgs)
def rider_list(product: str | None = None, age: int | None = None, sex: str | None = None) -> dict[str, Any]:
    """상품에 붙일 수 있는 특약 목록(특약코드, 이름, 보장 내용, 가입금액, 보험료 추가 방식)을 보여줍니다.
    나이와 성별을 주면 특약별 월 추가 보험료도 계산합니다."""
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    p = found
    age_value, sex_value, other, note = _optional_age_sex(p, age, sex)
    if other:
        return other
    riders = [_rider_view(p, r, age_value, sex_value) for r in p.riders]
    summary = f"{p.name}의 특약 {len(riders)}종: " + ", ".join(r.name for r in p.riders) if riders else \
        f"{p.name}에는 붙일 수 있는 특약이 없습니다."
    result = ok(**product_ref(p), count=len(riders), riders=riders, summary=summary)
    if note:
        result["note"] = note
    return result


def _rider_score(rider: Rider, tokens: list[str]) -> int:
    return sum(text_matches([t], rider.name, rider.description, rider.pay_basis) for t in tokens)


@tool("rider_search", args_schema=RiderSearchArgs)
def rider_search(keyword: str | None = None, product: str | None = None) -> dict[str, Any]:
    """특약을 키워드(수술, 항암, 통원, 재해사망 등)로 찾습니다. 상품을 주면 그 상품의 특약에서,
    생략하면 모든 상품의 특약에서 찾습니다."""
    scope: list[Product]
    if product:
        found = resolve_product(product)
        if isinstance(found, dict):
            return found
        scope = [found]
    else:
        scope = _all_products()
    tokens = keyword_tokens(keyword)
    if not tokens:
        if product:  # "특약 뭐 있어?": every rider of that product
            p = scope[0]
            return ok(**product_ref(p), keyword=keyword, match_mode="all_riders", count=len(p.riders),
                      riders=[_rider_view(p, r) for r in p.riders],
                      summary=f"{p.name}의 특약 {len(p.riders)}종: " + ", ".join(r.name for r in p.riders))
        return needs_user_input(["keyword"], "어떤 특약을 찾으시는지 키워드(예: 수술, 항암, 통원)를 알려주세요.")

    scored = [(s, p, r) for p in scope for r in p.riders if (s := _rider_score(r, tokens))]
    if any(s == len(tokens) for s, _, _ in scored):  # riders matching every word
        match_mode, hits = "all", [(p, r) for s, p, r in scored if s == len(tokens)]
    else:  # else any word, best first
        match_mode, hits = "any", [(p, r) for _, p, r in sorted(scored, key=lambda x: -x[0])]
    if not hits:
        names = [r.name for p in scope for r in p.riders]
        close = difflib.get_close_matches(keyword or "", names, n=3, cutoff=0.3)
        result = not_found("rider", keyword, close or ([r.name for r in scope[0].riders] if product else None))
        result["ask"] = "해당하는 특약이 없습니다. 다른 키워드나 특약명을 알려주세요."
        return result
    riders = [_rider_view(p, r) for p, r in hits]
    where = scope[0].name if product else "전체 상품"
    summary = f"{where}에서 '{keyword}' 관련 특약 {len(riders)}개: " + ", ".join(
        f"{r['rider_name']}({r['product_name']})" for r in riders)
    result = ok(keyword=keyword, match_mode=match_mode, count=len(riders), riders=riders, summary=summary)
    if product:
        result.update(product_ref(scope[0]))
    return result


_RIDER_CODE = re.compile(r"\b(B\d{3})-R\d{2}\b", re.IGNORECASE)


@tool("rider_get", args_schema=RiderGetArgs)
def rider_get(rider: str | None = None, product: str | None = None, age: int | None = None,
              sex: str | None = None) -> dict[str, Any]:
    """특약 하나의 상세(보장 내용, 가입금액, 지급 기준, 보험료 추가 방식)를 특약코드나 특약명으로 조회합니다.
    나이와 성별을 주면 그 특약의 월 추가 보험료도 계산합니다."""
    missing = require(rider=rider)
    if missing:
        return missing
    code_match = _RIDER_CODE.search(rider)
    if code_match and not product:
        product = code_match.group(1).upper()
    if product:
        found = resolve_product(product)
        if isinstance(found, dict):
            return found
        hit = catalog.get_rider(found, code_match.group(0) if code_match else rider)
        if hit is None:
            names = [r.name for r in found.riders]
            close = difflib.get_close_matches(rider, names, n=3, cutoff=0.3) or names
            result = not_found("rider", rider, close)
            result.update(product_ref(found))
            result["ask"] = f"{found.name}에 '{rider}' 특약이 없습니다. 특약명을 다시 확인해 주세요."
            return result
        matches = [(found, hit)]
    else:
        matches = [(p, r) for p in _all_products() if (r := catalog.get_rider(p, rider)) is not None]
        if not matches:
            names = [r.name for p in _all_products() for r in p.riders]
            result = not_found("rider", rider, difflib.get_close_matches(rider, names, n=3, cutoff=0.3))
            result["ask"] = "해당하는 특약이 없습니다. 특약명이나 특약코드(예: B001-R01), 상품명을 알려주세요."
            return result
        if len(matches) > 1:
            candidates = [f"{p.name} - {r.name}" for p, r in matches]
            return needs_user_input(["product"], f"'{rider}' 특약은 여러 상품에 있습니다({', '.join(candidates)}). "
                                    "어느 상품의 특약인지 알려주세요.", rider=rider, candidates=candidates)
    p, r = matches[0]
    age_value, sex_value, other, note = _optional_age_sex(p, age, sex)
    if other:
        return other
    view = _rider_view(p, r, age_value, sex_value)
    summary = (f"{p.name} {r.name}({r.code}): {r.description}. 가입금액 {won_text(r.amount)}({r.pay_basis}),"
               f" 보험료는 {view['premium_addon']} 추가" +
               (f"(이 조건에서 월 {view['monthly_addon_text']})" if "monthly_addon" in view else "") + ".")
    result = ok(rider=view, summary=summary)
    if note:
        result["note"] = note
    return result


# --- eligibility_by_product_rule -----------------------------------------------------------------

@tool("eligibility_by_product_rule", args_schema=EligibilityArgs)
def eligibility_by_product_rule(product: str | None = None, age: int | None = None,
                                channel: str | None = None) -> dict[str, Any]:
    """상품의 가입 규칙(가입 나이 범위, 판매 채널, 간편심사 여부, 갱신·최대 갱신 나이, 가입금액 범위)을 보여주고,
    나이나 채널을 주면 그 규칙상 가입할 수 있는지 판정합니다. 병력에 따른 개인 심사는 하지 않습니다."""
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    p = found
    rules = {
        "join_age": join_age_text(p),
        "join_age_min": p.join_age_min,
        "join_age_max": p.join_age_max,
        "channels": list(p.channels),
        "channels_text": channels_text(p.channels),
        "simplified_underwriting": p.simplified_underwriting,
        "underwriting": _underwriting_text(p),
        "simplified_disclosure": None if p.simplified_disclosure is None else {
            "name": p.simplified_disclosure.name, "question_count": len(p.simplified_disclosure.questions)},
        "renewable": p.renewable,
        "renewal": renewal_text(p),
        "max_renewal_age": p.max_renewal_age,
        "coverage_period": p.coverage_period,
        "sum_insured": _sum_insured(p),
    }
    checks: dict[str, Any] = {}
    if age is not None:
        bad_age = check_age(age)
        if bad_age:
            return bad_age
        if not p.join_age_min <= age <= p.join_age_max:
            return age_rejection(p, age, rules=rules)
        checks["age"] = {"age": age, "eligible": True, "text": f"{age}세는 가입 나이({join_age_text(p)}) 안입니다."}
    if channel:
        wanted = catalog.normalize_channel(channel)
        if wanted is None:
            return needs_user_input(["channel"], ASK_CHANNEL, given=channel, **product_ref(p))
        if wanted not in p.channels:
            return rejected(f"{p.name}은(는) {CHANNEL_LABELS[wanted]} 채널에서 판매하지 않습니다. "
                            f"판매 채널: {channels_text(p.channels)}.", **product_ref(p), channel=wanted, rules=rules)
        checks["channel"] = {"channel": wanted, "eligible": True,
                             "text": f"{CHANNEL_LABELS[wanted]} 채널에서 가입할 수 있습니다."}
    summary = (f"{p.name}: 가입 나이 {join_age_text(p)}, 판매 채널 {channels_text(p.channels)}, "
               f"{rules['underwriting']}, {renewal_text(p)}.")
    if checks:
        verdict = "상품 규칙상 가입 가능"
        summary += " " + " ".join(c["text"] for c in checks.values()) + f" → {verdict}"
    else:
        verdict = None
    return ok(**product_ref(p), rules=rules, checks=checks, verdict=verdict, summary=summary,
              note="상품 규칙만 본 결과이며, 병력·직업에 따른 개인 심사 결과는 별도로 확인해야 합니다.")


# --- product_faq_lookup --------------------------------------------------------------------------

def _faq_score(faq: catalog.Faq, tokens: list[str]) -> int:
    return sum(text_matches([t], faq.question, faq.answer) for t in tokens)


@tool("product_faq_lookup", args_schema=FaqArgs)
def product_faq_lookup(product: str | None = None, question: str | None = None) -> dict[str, Any]:
    """상품의 자주 묻는 질문(FAQ)과 답변을 보여줍니다. 질문이나 키워드를 주면 관련 FAQ를 먼저 찾습니다."""
    tokens = keyword_tokens(question)
    if not product:
        if tokens:  # no product named: look through every product's FAQ
            scored = [(_faq_score(f, tokens), p, f) for p in _all_products() for f in p.faq]
            hits = sorted([x for x in scored if x[0]], key=lambda x: -x[0])[:5]
            if hits:
                faqs = [{**product_ref(p), "question": f.question, "answer": f.answer} for _, p, f in hits]
                return ok(question=question, scope="전체 상품", count=len(faqs), faqs=faqs,
                          summary=f"'{question}' 관련 FAQ {len(faqs)}건(전체 상품)",
                          ask="특정 상품의 FAQ가 필요하면 상품명을 알려주세요.")
        return needs_user_input(["product"], "어느 상품의 FAQ를 찾을지 상품명을 알려주세요.")
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    p = found
    all_faqs = [{"question": f.question, "answer": f.answer} for f in p.faq]
    if tokens:
        scored = sorted(((s, i) for i, f in enumerate(p.faq) if (s := _faq_score(f, tokens))),
                        key=lambda x: (-x[0], x[1]))
        if scored:
            faqs = [all_faqs[i] for _, i in scored]
            return ok(**product_ref(p), question=question, matched=True, count=len(faqs), faqs=faqs,
                      summary=f"{p.name} FAQ 중 '{question}' 관련 {len(faqs)}건: " + faqs[0]["question"])
        return ok(**product_ref(p), question=question, matched=False, count=len(all_faqs), faqs=all_faqs,
                  summary=f"{p.name} FAQ에 '{question}'과(와) 맞는 질문이 없어 전체 FAQ {len(all_faqs)}건을 보여드립니다.")
    return ok(**product_ref(p), question=None, matched=None, count=len(all_faqs), faqs=all_faqs,
              summary=f"{p.name} FAQ {len(all_faqs)}건: " + " / ".join(f["question"] for f in all_faqs))


# --- sales_channel_availability ------------------------------------------------------------------

@tool("sales_channel_availability", args_schema=ChannelArgs)
def sales_channel_availability(product: str | None = None, channel: str | None = None) -> dict[str, Any]:
    """상품이 어느 판매 채널(TM 전화, CM 온라인, 대면 설계사)에서 판매되는지, 또는 특정 채널에서 가입할 수
    있는지 알려줍니다. 채널만 주면 그 채널에서 판매하는 상품 목록을 보여줍니다."""
    if not product and not channel:
        return needs_user_input(["product", "channel"],
                                "판매 채널을 확인할 상품명이나, 상품 목록을 볼 채널(TM, CM, 대면)을 알려주세요.")
    wanted = None
    if channel:
        wanted = catalog.normalize_channel(channel)
        if wanted is None:
            return needs_user_input(["channel"], ASK_CHANNEL, given=channel)
    if not product:
        sold = [p for p in _all_products() if wanted in p.channels]
        return ok(channel=wanted, channel_text=CHANNEL_LABELS[wanted], count=len(sold),
                  products=[{**product_ref(p), "category": p.category, "channels": list(p.channels)} for p in sold],
                  summary=f"{CHANNEL_LABELS[wanted]} 채널 판매 상품 {len(sold)}종: " + ", ".join(p.name for p in sold))
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    p = found
    channel_map = {c: c in p.channels for c in CHANNEL_LABELS}
    if wanted is None:
        return ok(**product_ref(p), channels=list(p.channels), channel_availability=channel_map,
                  summary=f"{p.name}은(는) {channels_text(p.channels)} 채널에서 판매합니다.")
    available = wanted in p.channels
    result = ok(**product_ref(p), channel=wanted, available=available, channels=list(p.channels),
                channel_availability=channel_map)
    if available:
        result["summary"] = f"{p.name}은(는) {CHANNEL_LABELS[wanted]} 채널에서 가입할 수 있습니다."
    else:
        alternatives = [q for q in _all_products() if q.category == p.category and q.code != p.code
                        and wanted in q.channels]
        result["alternatives"] = [product_ref(q) for q in alternatives]
        result["summary"] = (f"{p.name}은(는) {CHANNEL_LABELS[wanted]} 채널에서 판매하지 않습니다. "
                             f"가입 가능한 채널: {channels_text(p.channels)}.")
    return result


TOOLS = [
    product_search,
    product_get,
    product_compare,
    product_latest_version_check,
    rider_list,
    rider_search,
    rider_get,
    eligibility_by_product_rule,
    product_faq_lookup,
    sales_channel_availability,
]

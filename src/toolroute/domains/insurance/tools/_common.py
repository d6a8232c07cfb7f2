"""Helpers shared by the insurance tool modules: argument parsing, product resolution, money text.

Every tool takes user words (a product name or alias, "55세", "남성"/"아버지", "월 5만원") and must
never raise on them: these helpers turn the words into values, or into the result the tool should
return instead (`needs_user_input` / `not_found`, see `results.py`). The usual pattern:

    found = require_product(product, age=age, sex=sex)  # blank arguments asked for, then the product
    if isinstance(found, dict):
        return found

Product facts always come from `toolroute.domains.insurance.products` (the one source of truth).
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from toolroute.domains.insurance.products import (
    Product,
    get_product,
    normalize_channel,
    normalize_sex,
    product_candidates,
    search_products,
)
from toolroute.domains.korean import has_final_consonant, josa  # noqa: F401  (the tools' text helpers)
from toolroute.domains.tool_results import needs_user_input, not_found
from toolroute.domains.insurance.products import OutsideJoinAge
from toolroute.domains.tool_results import rejected
from toolroute.domains.insurance.reference import mask_personal_data

# Korean labels of the argument names the tools share; `require` builds its question from them.
LABELS: dict[str, str] = {
    "product": "상품명",
    "products": "비교할 상품(2개 이상)",
    "age": "나이",
    "sex": "성별",
    "annual_income": "연소득",
    "monthly_budget": "월 보험료 예산",
    "keyword": "검색어",
    "rider": "특약명",
    "goal": "보장 목적",
    "channel": "판매 채널",
    "version": "문서 버전 또는 작성일",
    "payment_term": "납입기간",
}

CHANNEL_LABELS = {"TM": "TM(전화)", "CM": "CM(온라인)", "대면": "대면(설계사)"}
ALL_CHANNELS = ["TM", "CM", "대면"]

ASK_PRODUCT = "어느 상품을 말씀하시는지 상품명을 알려주세요."
ASK_CHANNEL = "판매 채널을 TM(전화), CM(온라인), 대면 중에서 알려주세요."
ASK_SEX = "성별(남성/여성)을 알려주세요."


# --- money -----------------------------------------------------------------------------------------

def won_text(amount: int | float | None) -> str | None:
    """'43,950원'; whole 만원 sums of a million or more as '3,000만원' / '1억 5,000만원'."""
    if amount is None:
        return None
    amount = int(round(amount))
    sign = "-" if amount < 0 else ""
    value = abs(amount)
    if value >= 1_000_000 and value % 10_000 == 0:
        eok, man = divmod(value // 10_000, 10_000)
        parts = []
        if eok:
            parts.append(f"{eok:,}억")
        if man:
            parts.append(f"{man:,}만")
        return sign + " ".join(parts) + "원"
    return f"{sign}{value:,}원"


def money(key: str, amount: int | float | None) -> dict[str, Any]:
    """{key: int won, key_text: Korean text} for a result dict."""
    value = None if amount is None else int(round(amount))
    return {key: value, f"{key}_text": won_text(value)}


_UNITS = {"억": 100_000_000, "천만": 10_000_000, "백만": 1_000_000, "십만": 100_000, "만": 10_000,
          "천": 1_000, "백": 100}
_MONEY_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(억|천만|백만|십만|만|천|백)?")


def parse_won(value: Any, small_unit: int | None = None, below: float | None = None) -> int | None:
    """Won from 50000, '5만원', '월 5만 5천원', '5,000만원', '1억 2천만원'; None when no amount.

    A bare number below `below` is read in `small_unit` (e.g. an annual income of 5000 means
    5,000만원): callers pass both to state that reading explicitly.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
        if number < 0:
            return None
        if small_unit and below is not None and 0 < number < below:
            number *= small_unit
        return int(round(number))
    if not isinstance(value, str):
        return None
    text = value.replace(",", "").replace(" ", "")
    total = 0.0
    found = False
    after_eok = False
    bare_number = None
    for match in _MONEY_PART.finditer(text):
        found = True
        number, unit = float(match.group(1)), match.group(2)
        if unit is None:
            if after_eok:  # "1억2000" means 1억 2,000만
                total += number * 10_000
            else:
                bare_number = number
                total += number
            continue
        factor = _UNITS[unit]
        if after_eok and unit in ("천", "백"):  # "1억 2천" means 1억 2천만
            factor *= 10_000
        total += number * factor
        after_eok = unit == "억"
    if not found:
        return None
    if bare_number is not None and total == bare_number and small_unit and below is not None and 0 < total < below:
        total *= small_unit
    return int(round(total))


# --- plain arguments -------------------------------------------------------------------------------

def parse_age(value: Any) -> int | None:
    """55 from 55, '55', '55세', '만 55세', '60대'; None when there is no age in it."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        match = re.search(r"\d{1,3}", value)
        return int(match.group()) if match else None
    return None


def parse_bool(value: Any) -> bool | None:
    """True/False from bools and yes/no words (예, 아니오, 간편, 일반 …); None when unclear."""
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "yes", "y", "1", "예", "네", "응", "o", "간편", "간편심사", "간편고지", "유병자"}:
        return True
    if text in {"false", "no", "n", "0", "아니오", "아니요", "아니", "x", "일반", "일반심사"}:
        return False
    return None


_NAME_SEPARATORS = re.compile(r"\s*(?:[,/+;·&]|\bvs\.?\b|\bVS\b|\b및\b|그리고)\s*")
_AFTER_INSURANCE = re.compile(r"(?<=보험)(?:이랑|랑|하고|과|와|도|,)?\s+(?=\S)")


def split_names(value: Any) -> list[str]:
    """Product or rider names from a list or one string: '치매간병보험이랑 실속치매보험' -> two names."""
    if value is None:
        return []
    items = list(value) if isinstance(value, (list, tuple, set)) else [value]
    names: list[str] = []
    for item in items:
        if item is None:
            continue
        text = str(item).strip()
        if re.fullmatch(r"(?:[Bb]\d{3}[\s,]*)+", text):
            names.extend(re.findall(r"[Bb]\d{3}", text))
            continue
        for piece in _NAME_SEPARATORS.split(text):
            names.extend(p.strip() for p in _AFTER_INSURANCE.split(piece) if p.strip())
    return names


def is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or (
        isinstance(value, (list, tuple, set, dict)) and not value)


def require(ask: str | None = None, **values: Any) -> dict[str, Any] | None:
    """needs_user_input naming every blank argument (in the given order), or None when all are there.

    The question is built from LABELS unless `ask` is given:
    require(product=None, age=55, sex=None) -> missing ['product', 'sex'], "상품명·성별을 알려주세요."
    """
    missing = [name for name, value in values.items() if is_blank(value)]
    if not missing:
        return None
    if ask is None:
        words = "·".join(LABELS.get(name, name) for name in missing)
        ask = f"{josa(words, '을/를')} 알려주세요."
    known = {name: value for name, value in values.items() if not is_blank(value)}
    return needs_user_input(missing, ask, **known)


def check_age(age: int) -> dict[str, Any] | None:
    """needs_user_input when an age is impossible (below 0 or above 120)."""
    if not 0 <= age <= 120:
        return needs_user_input(["age"], f"나이({age})를 다시 확인해 주세요. 만 나이를 숫자로 알려주세요.", age=age)
    return None


def resolve_sex(text: Any) -> str | dict[str, Any]:
    """'남성' / '여성' from any form normalize_sex accepts; else needs_user_input for sex."""
    sex = normalize_sex(str(text)) if text is not None else None
    if sex is None:
        return needs_user_input(["sex"], ASK_SEX, given=text) if text else needs_user_input(["sex"], ASK_SEX)
    return sex


def resolve_person(age: int, sex: Any) -> tuple[int, str] | dict[str, Any]:
    """(age, '남성'/'여성'), or needs_user_input for an impossible age or an unclear sex."""
    bad_age = check_age(age)
    if bad_age:
        return bad_age
    sex_value = resolve_sex(sex)
    if isinstance(sex_value, dict):
        return sex_value
    return age, sex_value


def require_person(age: Any, sex: Any, **others: Any) -> tuple[int, str] | dict[str, Any]:
    """`require(**others, age=age, sex=sex)`, then `resolve_person(age, sex)`: (age, sex), or the result to return."""
    missing = require(**others, age=age, sex=sex)
    return missing if missing else resolve_person(age, sex)


def resolve_channel(text: Any) -> str | dict[str, Any]:
    """'TM' / 'CM' / '대면' from the ways people say them; else needs_user_input for channel."""
    channel = normalize_channel(str(text)) if text is not None else None
    if channel is None:
        return needs_user_input(["channel"], ASK_CHANNEL, given=text)
    return channel


# --- products --------------------------------------------------------------------------------------

def resolve_product(text: Any, field: str = "product") -> Product | dict[str, Any]:
    """The one product `text` names (name, alias, code, spacing/particle variant), or the result to return.

    - blank: needs_user_input asking which product;
    - a kind of product rather than one ("치매보험", "암보험", "실비보험"): needs_user_input with the
      matching products as `candidates` (never guesses, even with one match);
    - unknown: not_found with the closest product names as candidates.
    """
    if is_blank(text):
        return needs_user_input([field], ASK_PRODUCT)
    text = str(text).strip()
    product = get_product(text)
    if product is not None:
        return product
    try:
        matching = [p.name for p in search_products(keyword=text)]
    except ValueError:
        matching = []
    if matching:
        if len(matching) == 1:
            ask = f"'{text}'{'은' if has_final_consonant(text) else '는'} {matching[0]}을(를) 말씀하시는 건가요?"
        else:
            ask = f"'{text}'에 해당하는 상품이 {len(matching)}개 있습니다({', '.join(matching)}). 어느 상품인지 알려주세요."
        return needs_user_input([field], ask, given=text, candidates=matching)
    result = not_found("product", text, product_candidates(text))
    result["ask"] = "판매 중인 상품명을 다시 확인해 주세요." + (
        f" 비슷한 상품: {', '.join(result['candidates'])}" if result.get("candidates") else "")
    return result


def require_product(product: Any, ask: str | None = None, **others: Any) -> Product | dict[str, Any]:
    """`require(ask, product=product, **others)`, then `resolve_product(product)`: the product named,
    or the result to return (every blank argument asked for at once, or the product unknown/unclear)."""
    missing = require(ask, product=product, **others)
    return missing if missing else resolve_product(product)


def resolve_products(values: Any, minimum: int = 2, field: str = "products") -> list[Product] | dict[str, Any]:
    """Distinct products named in `values` (a list or one string), or the result to return.

    Fewer than `minimum` distinct products -> needs_user_input; the first name that does not resolve
    -> its not_found / needs_user_input result, with the names already resolved under `resolved`.
    """
    names = split_names(values)
    products: list[Product] = []
    for name in names:
        found = resolve_product(name, field=field)
        if isinstance(found, dict):
            found["resolved"] = [p.name for p in products]
            return found
        if all(p.code != found.code for p in products):
            products.append(found)
    if len(products) < minimum:
        given = [p.name for p in products]
        ask = (f"비교할 상품을 {minimum}개 이상 알려주세요."
               + (f" (지금: {', '.join(given)})" if given else ""))
        return needs_user_input([field], ask, resolved=given)
    return products


def join_age_text(product: Product) -> str:
    return f"{product.join_age_min}~{product.join_age_max}세"


def renewal_text(product: Product) -> str:
    if product.renewable:
        return f"{product.renewal_period_years}년 갱신형(최대 {product.max_renewal_age}세)"
    return "비갱신형"


def channels_text(channels: Iterable[str]) -> str:
    return ", ".join(CHANNEL_LABELS.get(c, c) for c in channels)


def product_ref(product: Product) -> dict[str, str]:
    """The smallest reference to a product in a result: code and name."""
    return {"product_code": product.code, "product_name": product.name}


def product_brief(product: Product) -> dict[str, Any]:
    """One-line facts of a product for lists: ages, renewal, channels, underwriting."""
    underwriting = "간편심사" if product.simplified_underwriting else "일반심사"
    return {
        **product_ref(product),
        "category": product.category,
        "description": product.description,
        "join_age": join_age_text(product),
        "join_age_min": product.join_age_min,
        "join_age_max": product.join_age_max,
        "renewable": product.renewable,
        "renewal": renewal_text(product),
        "coverage_period": product.coverage_period,
        "channels": list(product.channels),
        "simplified_underwriting": product.simplified_underwriting,
        "summary": (f"{product.name}({product.category}) · 가입 {join_age_text(product)} · {renewal_text(product)}"
                    f" · {'/'.join(product.channels)} · {underwriting}"),
    }


def keyword_tokens(text: str | None) -> list[str]:
    """Lower-cased search words without particles and filler words ('수술 관련 특약' -> ['수술'])."""
    if not text:
        return []
    filler = {"관련", "관련된", "특약", "보험", "상품", "있어", "있나요", "뭐", "어떤", "알려줘", "보장", "내용"}
    tokens = []
    for word in re.split(r"[\s,/·?!.]+", text.lower()):
        word = re.sub(r"(?:은|는|이|가|을|를|의|도|에|에서|으로|로|이요|요|특약|관련)$", "", word)
        if word and word not in filler:
            tokens.append(word)
    return tokens


def text_matches(tokens: list[str], *texts: str) -> bool:
    """Every token occurs in one of the texts (spaces ignored)."""
    haystack = " ".join(t for t in texts if t).lower()
    compact = haystack.replace(" ", "")
    return all(token in haystack or token.replace(" ", "") in compact for token in tokens)


# --- argument cleaning for args schemas (the field types of `schemas` run them before validation) -----
# A tool's args schema must accept whatever an LLM or a user puts in a field ("모름", "", 3.5, a list,
# a dict) without a ValidationError: these turn a raw value into the field's type, or None, so the
# tool answers `needs_user_input` instead of raising.

UNKNOWN_WORDS = {"모름", "모르겠음", "모르겠어요", "모르겠습니다", "몰라", "몰라요", "잘모름", "잘모르겠어요",
                 "미정", "없음", "상관없음", "아무거나", "unknown", "none", "null", "n/a", "na", "-", "?", "??"}


def _is_unknown_word(text: str) -> bool:
    return re.sub(r"[\s.!~]+", "", text).lower() in UNKNOWN_WORDS


def clean_text(value: Any) -> str | None:
    """A stripped string, or None for blanks, '모름'-like words and values that are not text or numbers."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return None if value != value else str(value)  # NaN is not text
    if isinstance(value, (list, tuple, set)):
        parts = [t for t in (clean_text(v) for v in value) if t]
        return ", ".join(parts) or None
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return None if not text or _is_unknown_word(text) else text


def clean_names(value: Any) -> list[str] | None:
    """A list of names from a list or one string (split later by `split_names`); None when empty."""
    if isinstance(value, (list, tuple, set)):
        names = [t for t in (clean_text(v) for v in value) if t]
    else:
        text = clean_text(value)
        names = [text] if text else []
    return names or None


def clean_age(value: Any) -> int | None:
    """parse_age that never raises (NaN, infinity, huge numbers, '모름' -> None or the number)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, str) and _is_unknown_word(value.strip() or "-"):
        return None
    try:
        age = parse_age(value)
    except (ValueError, OverflowError):
        return None
    if age is not None and abs(age) > 10_000:
        return 9_999  # still impossible, so check_age asks again; keeps the value printable
    return age


def clean_won(value: Any, small_unit: int | None = None, below: float | None = None) -> int | None:
    """parse_won that never raises; None for blanks, '모름', zero or negative amounts."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, (list, tuple, set, dict)):
        return None
    try:
        won = parse_won(value, small_unit=small_unit, below=below)
    except (ValueError, OverflowError):
        return None
    return won if won and won > 0 else None


def clean_bool(value: Any) -> bool | None:
    """parse_bool that never raises; None when unclear."""
    if isinstance(value, (list, tuple, set, dict)):
        return None
    try:
        return parse_bool(value)
    except (ValueError, TypeError):
        return None


def age_rejection(product: Product, age: int, **data: Any) -> dict[str, Any]:
    """The `rejected` result for an age outside the product's join ages, with the allowed range."""

    return rejected(str(OutsideJoinAge(product, age)), **product_ref(product), age=age,
                    join_age_min=product.join_age_min, join_age_max=product.join_age_max,
                    allowed_age=join_age_text(product), **data)


def clean_masked(value: Any) -> str | None:
    """`clean_text`, then personal data masked: a not_found answer echoes what it was given."""

    text = clean_text(value)
    return mask_personal_data(text)[0] if text else None

"""The 12 insurance products: models, loader, lookup and premium arithmetic.

`data/products.yaml` is the one source of truth for product facts; tools, the generated PDF
documents and the tests all read it through this module, so a fact changed there changes
everywhere at once. The models forbid unknown fields and check cross-field rules on load, so a
typo in the YAML fails loudly with the file, the product code and the field, not later as a wrong
answer in a conversation.

Premiums are synthetic: a monthly premium by sex at anchor ages, linear in between, times a
payment-term factor, plus rider add-ons. That is enough for the assistant's arithmetic (estimate,
compare, sum several contracts, project renewals) while staying easy to read and check.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

PRODUCTS_PATH = Path(__file__).parent / "data" / "products.yaml"

Channel = Literal["TM", "CM", "대면"]
PaymentCycle = Literal["월납", "3개월납", "6개월납", "연납", "일시납"]
SurrenderType = Literal["무해지", "저해지", "표준형"]

# The sentence every product's disclosures must carry (deposit insurance notice).
DEPOSIT_PROTECTION_WORD = "예금자보호"


# ------------------------------------------------------------------------------------------------
# Errors


class ProductDataError(Exception):
    """products.yaml cannot be read or breaks a rule; names the file, product code and field."""

    def __init__(self, path: Path | str, message: str, code: str | None = None, field: str | None = None):
        self.path = str(path)
        self.code = code
        self.field = field
        where = self.path
        if code:
            where += f": product {code}"
        if field:
            where += f": field '{field}'"
        super().__init__(f"{where}: {message}")


class OutsideJoinAge(ValueError):
    """The age is outside the product's join ages; the message is Korean so a tool can pass it on."""

    def __init__(self, product: "Product", age: int):
        self.product_code = product.code
        self.product_name = product.name
        self.age = age
        self.join_age_min = product.join_age_min
        self.join_age_max = product.join_age_max
        super().__init__(
            f"{product.name}은(는) {product.join_age_min}세부터 {product.join_age_max}세까지 가입할 수 있습니다"
            f" (입력 나이 {age}세)."
        )


# ------------------------------------------------------------------------------------------------
# Models


class _Model(BaseModel):
    # Frozen: the loaded products are cached and shared by every tool, so nobody may edit them.
    model_config = ConfigDict(extra="forbid", frozen=True)


class Limit(_Model):
    """Structured benefit limit; all None means no count limit (the text says the amount cap)."""

    per_year: int | None = Field(default=None, ge=1)  # max payments (teeth, visits …) per year
    per_event: int | None = Field(default=None, ge=1)  # max units per event, e.g. days per stay
    lifetime: int | None = Field(default=None, ge=1)  # max payments over the contract
    interval_years: int | None = Field(default=None, ge=1)  # at most once per this many years
    unit: str | None = None  # 회 / 개 / 일 / 개월


class Reduction(_Model):
    """감액기간: within `within_days` of the contract date only `ratio` of the benefit is paid."""

    within_days: int = Field(ge=1)
    ratio: float = Field(gt=0, lt=1)
    text: str


class Deductible(_Model):
    """자기부담금: the insured pays `ratio` of the cost, and at least `minimum_won`."""

    ratio: float = Field(ge=0, lt=1)
    minimum_won: int = Field(ge=0)
    text: str


class Coverage(_Model):
    id: str
    type: str  # 암진단 / 유사암진단 / 사망 / 입원 / 임플란트 / 치매진단 / 운전자벌금 …
    name: str
    amount: int = Field(ge=0)  # won; for 실손-type benefits the cap
    pay_basis: str  # 최초 1회 / 수술 1회당 / 입원 1일당 / 매월 / 치아 1개당 / 연간 한도 …
    amount_text: str | None = None  # when the amount is not a flat sum (실손, 적립금, 등급별)
    limit_text: str
    limit: Limit = Limit()
    waiting_days: int = Field(default=0, ge=0)  # 면책기간 from the contract date
    reduction: Reduction | None = None
    deductible: Deductible | None = None
    conditions: list[str] = []


class Rider(_Model):
    """특약. Its premium is either a share of the base premium (age-dependent) or a fixed sum."""

    code: str
    name: str
    description: str
    amount: int = Field(ge=0)
    pay_basis: str
    premium_addon_ratio: float | None = Field(default=None, ge=0)
    premium_addon_won: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_addon(self) -> "Rider":
        if (self.premium_addon_ratio is None) == (self.premium_addon_won is None):
            raise ValueError("give exactly one of premium_addon_ratio / premium_addon_won")
        return self

    def addon(self, base_premium: float) -> float:
        """Monthly add-on in won for a contract whose main premium is `base_premium`."""
        if self.premium_addon_ratio is not None:
            return base_premium * self.premium_addon_ratio
        return float(self.premium_addon_won or 0)


class Faq(_Model):
    question: str
    answer: str


def _check_increasing(values: list[int], what: str) -> None:
    if values != sorted(set(values)):
        raise ValueError(f"{what} must be strictly increasing")


def _check_given_iff(value: Any, flag: bool | None, if_missing: str, if_given: str) -> None:
    """A field that must be given when `flag` is True and must not be when it is False."""
    if flag is True and value is None:
        raise ValueError(if_missing)
    if flag is False and value is not None:
        raise ValueError(if_given)


class SurrenderExample(_Model):
    year: int = Field(ge=0)
    ratio: float = Field(ge=0)  # refund / premiums paid so far


class Surrender(_Model):
    type: SurrenderType
    explanation: str
    examples: list[SurrenderExample] = Field(min_length=1)

    @field_validator("examples")
    @classmethod
    def _years_increase(cls, examples: list[SurrenderExample]) -> list[SurrenderExample]:
        _check_increasing([e.year for e in examples], "years")
        return examples


class PremiumAnchor(_Model):
    age: int = Field(ge=0, le=120)
    male: int = Field(gt=0)
    female: int = Field(gt=0)


class PremiumTable(_Model):
    basis: str  # the plan the anchors price (Korean, shown to users)
    base_payment_term: str
    term_factors: dict[str, float]
    anchors: list[PremiumAnchor] = Field(min_length=2)
    monotone_in_age: bool = True  # False must come with a `note` saying why
    note: str | None = None

    @field_validator("anchors")
    @classmethod
    def _ages_increase(cls, anchors: list[PremiumAnchor]) -> list[PremiumAnchor]:
        _check_increasing([a.age for a in anchors], "anchor ages")
        return anchors

    @model_validator(mode="after")
    def _monotone(self) -> "PremiumTable":
        if self.monotone_in_age:
            for prev, cur in zip(self.anchors, self.anchors[1:]):
                if cur.male < prev.male or cur.female < prev.female:
                    raise ValueError(f"premium falls between ages {prev.age} and {cur.age}; "
                                     "set monotone_in_age: false with a note if intended")
        elif not self.note:
            raise ValueError("monotone_in_age: false needs a note explaining why")
        return self


class AnnuityConversion(_Model):
    """연금전환: turning a whole-life policy's reserve into an annuity."""

    min_contract_years: int = Field(ge=0)
    min_age: int
    max_age: int
    conditions: list[str] = Field(min_length=1)
    options: list[str] = Field(min_length=1)


class SimplifiedDisclosure(_Model):
    name: str  # e.g. "3.5.5 간편고지"
    questions: list[str] = Field(min_length=1)


class Product(_Model):
    # Field order matters: cross-field validators read earlier fields from `info.data`.
    code: str = Field(pattern=r"^B\d{3}$")
    name: str
    aliases: list[str] = []
    category: str
    description: str
    keywords: list[str] = []  # extra search words (synonyms such as 간편심사, 실비)
    version: str = Field(pattern=r"^\d{4}\.\d{2}$")
    summary_date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    previous_versions: list[str] = []
    channels: list[Channel] = Field(min_length=1)
    join_age_min: int = Field(ge=0)
    join_age_max: int = Field(le=120)
    simplified_underwriting: bool
    simplified_disclosure: SimplifiedDisclosure | None = Field(default=None, validate_default=True)
    renewable: bool
    renewal_period_years: int | None = Field(default=None, ge=1, validate_default=True)
    max_renewal_age: int | None = Field(default=None, validate_default=True)
    renewal_note: str | None = None
    coverage_period: str
    payment_terms: list[str] = Field(min_length=1)  # shortest first
    payment_cycles: list[PaymentCycle] = Field(min_length=1)
    sum_insured_min: int = Field(ge=0)
    sum_insured_max: int = Field(ge=0)
    sum_insured_basis: str
    coverages: list[Coverage] = Field(min_length=1)
    riders: list[Rider] = []
    premium_waiver: list[str] = []  # 납입면제 conditions
    annuity_conversion: AnnuityConversion | None = None
    exclusions: list[str] = Field(min_length=1)
    surrender: Surrender
    premium: PremiumTable
    faq: list[Faq] = Field(min_length=4)
    required_disclosures: list[str] = Field(min_length=1)

    @field_validator("summary_date", mode="before")
    @classmethod
    def _date_to_text(cls, value: Any) -> Any:
        # YAML reads an unquoted 2026-07-01 as a date; keep one plain-text form.
        return value.isoformat() if hasattr(value, "isoformat") else value

    @field_validator("join_age_max", "sum_insured_max")
    @classmethod
    def _max_not_below_min(cls, value: int, info: ValidationInfo) -> int:
        low_field = info.field_name.replace("_max", "_min")
        low = info.data.get(low_field)
        if low is not None and value < low:
            raise ValueError(f"{info.field_name} {value} is below {low_field} {low}")
        return value

    @field_validator("simplified_disclosure")
    @classmethod
    def _disclosure_iff_simplified(cls, value: SimplifiedDisclosure | None, info: ValidationInfo):
        _check_given_iff(value, info.data.get("simplified_underwriting"),
                         "a simplified-underwriting product needs its disclosure questions",
                         "only simplified-underwriting products have simplified_disclosure")
        return value

    @field_validator("renewal_period_years", "max_renewal_age")
    @classmethod
    def _renewal_fields(cls, value: int | None, info: ValidationInfo):
        _check_given_iff(value, info.data.get("renewable"), "required for a renewable product",
                         "only renewable products have it")
        if info.field_name == "max_renewal_age" and value is not None:
            join_max = info.data.get("join_age_max")
            if join_max is not None and value <= join_max:
                raise ValueError(f"max_renewal_age {value} must exceed join_age_max {join_max}")
        return value

    @field_validator("coverages")
    @classmethod
    def _coverage_ids(cls, coverages: list[Coverage], info: ValidationInfo) -> list[Coverage]:
        _check_ids([c.id for c in coverages], f"{info.data.get('code', '')}-C")
        return coverages

    @field_validator("riders")
    @classmethod
    def _rider_codes(cls, riders: list[Rider], info: ValidationInfo) -> list[Rider]:
        _check_ids([r.code for r in riders], f"{info.data.get('code', '')}-R")
        return riders

    @field_validator("premium")
    @classmethod
    def _premium_fits_product(cls, table: PremiumTable, info: ValidationInfo) -> PremiumTable:
        terms = info.data.get("payment_terms")
        if terms is not None:
            if set(table.term_factors) != set(terms):
                raise ValueError(f"term_factors keys {sorted(table.term_factors)} differ from payment_terms {terms}")
            if table.base_payment_term not in terms or table.term_factors[table.base_payment_term] != 1.0:
                raise ValueError("base_payment_term must be one of payment_terms with factor 1.0")
            factors = [table.term_factors[t] for t in terms]
            if any(b >= a for a, b in zip(factors, factors[1:])):
                raise ValueError("term factors must fall from the shortest to the longest payment term")
        low, high = info.data.get("join_age_min"), info.data.get("join_age_max")
        if info.data.get("max_renewal_age"):
            high = info.data["max_renewal_age"]  # renewals are priced at the attained age
        if low is not None and table.anchors[0].age > low:
            raise ValueError(f"first anchor age {table.anchors[0].age} is above join_age_min {low}")
        if high is not None and table.anchors[-1].age < high:
            raise ValueError(f"last anchor age {table.anchors[-1].age} is below {high}")
        return table

    @field_validator("required_disclosures")
    @classmethod
    def _disclosures_cover_rules(cls, sentences: list[str], info: ValidationInfo) -> list[str]:
        text = " ".join(sentences)
        if DEPOSIT_PROTECTION_WORD not in text:
            raise ValueError("must include the 예금자보호 notice")
        if info.data.get("renewable") and "갱신" not in text:
            raise ValueError("a renewable product must disclose that the premium may rise at renewal (갱신)")
        if info.data.get("simplified_underwriting") and "일반심사" not in text:
            raise ValueError("a simplified product must disclose that it may cost more than 일반심사")
        return sentences

    @property
    def all_names(self) -> list[str]:
        return [self.name, *self.aliases]

    def coverage(self, coverage_id: str) -> Coverage | None:
        return next((c for c in self.coverages if c.id.upper() == coverage_id.upper()), None)


def _check_ids(ids: list[str], prefix: str) -> None:
    bad = [i for i in ids if not i.startswith(prefix)]
    if bad:
        raise ValueError(f"ids {bad} must start with {prefix!r}")
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"duplicate ids {dupes}")


# ------------------------------------------------------------------------------------------------
# Loading


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects a key given twice (plain YAML silently keeps the last one)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def load_products(path: str | Path | None = None) -> dict[str, Product]:
    """All products keyed by code, validated; read once per path (cached).

    Returns a fresh dict each call (the Product objects themselves are frozen and shared).
    """
    return dict(_load_cached(Path(path) if path is not None else PRODUCTS_PATH))


@lru_cache(maxsize=8)
def _load_cached(path: Path) -> dict[str, Product]:
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 (safe loader)
    except OSError as exc:
        raise ProductDataError(path, f"cannot read: {exc}") from exc
    except yaml.YAMLError as exc:
        raise ProductDataError(path, f"invalid YAML: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("products"), list):
        raise ProductDataError(path, "top level must be a mapping with a 'products' list")

    products: dict[str, Product] = {}
    owner_of_name: dict[str, str] = {}
    for index, entry in enumerate(raw["products"], start=1):
        code = entry.get("code") if isinstance(entry, dict) else None
        code = str(code) if code else f"#{index}"
        try:
            product = Product.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or None
            details = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(product)'}: {e['msg']}" for e in exc.errors())
            raise ProductDataError(path, details, code=code, field=field) from exc
        if product.code in products:
            raise ProductDataError(path, "duplicate product code", code=product.code, field="code")
        for name in product.all_names:
            key = _normalize(name)
            if key in owner_of_name and owner_of_name[key] != product.code:
                raise ProductDataError(path, f"name {name!r} is already used by {owner_of_name[key]}",
                                       code=product.code, field="aliases")
            owner_of_name[key] = product.code
        products[product.code] = product
    return products


load_products.cache_clear = _load_cached.cache_clear  # type: ignore[attr-defined]


# ------------------------------------------------------------------------------------------------
# Lookup

_SEPARATORS = re.compile(r"[\s\-_·•.,'\"“”‘’()\[\]<>「」『』/]+")
# Words a speaker tacks onto a product name: "첫날부터암보험은", "건강해지는종신보험 상품".
_TRAILING_AFTER_INSURANCE = re.compile(r"보험(?:상품)?(?:은|는|이|가|을|를|의|도|으로|로|이요|요)?$")
_MIN_SUBSTRING = 2  # a one-letter fragment ("암") names a topic, not a product


def _normalize(text: str) -> str:
    """Lower-case, NFKC, no spaces or punctuation: "첫날부터 암보험" == "첫날부터암보험"."""
    return _SEPARATORS.sub("", unicodedata.normalize("NFKC", text).lower())


def _normalize_query(text: str) -> str:
    return _TRAILING_AFTER_INSURANCE.sub("보험", _normalize(text))


def _core(normalized: str) -> str:
    """The distinctive part of a name: without the trailing 보험."""
    return normalized[:-2] if normalized.endswith("보험") else normalized


def get_product(name_or_code: str) -> Product | None:
    """One product by code, name, alias or a spacing/suffix variant; None when unknown or ambiguous.

    Never guesses: a fragment shared by several products ("치매보험", "종신보험") returns None, and
    the caller should offer `product_candidates` instead.
    """
    if not name_or_code or not name_or_code.strip():
        return None
    products = load_products()
    code = name_or_code.strip().upper()
    if code in products:
        return products[code]

    query = _normalize_query(name_or_code)
    for product in products.values():
        if query in {_normalize(n) for n in product.all_names}:
            return product

    core = _core(query)
    if len(core) < _MIN_SUBSTRING:
        return None
    hits = {
        product.code
        for product in products.values()
        # the query is part of a name ("건강해지는종신"), or names the product with extra words
        # around it ("신상품 첫날부터암보험 안내") — the latter only for the full main name
        if any(core in _core(_normalize(n)) for n in product.all_names)
        or _core(_normalize(product.name)) in query
    }
    return products[hits.pop()] if len(hits) == 1 else None


def product_candidates(text: str, limit: int = 3) -> list[str]:
    """Product names close to `text`, best first, for a not-found or ambiguous answer."""
    core = _core(_normalize_query(text or ""))
    if not core:
        return []
    scored: list[tuple[float, str]] = []
    for product in load_products().values():
        keys = [_core(_normalize(n)) for n in product.all_names]
        score = max(difflib.SequenceMatcher(None, core, key).ratio() for key in keys)
        if any(core in key for key in keys):
            score = max(score, 0.9)  # a shared fragment ("치매") is a strong hint
        if score >= 0.4:
            scored.append((score, product.name))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [name for _, name in scored[:limit]]


_CHANNELS = {
    "tm": "TM", "텔레마케팅": "TM", "전화": "TM", "전화가입": "TM",
    "cm": "CM", "온라인": "CM", "인터넷": "CM", "모바일": "CM", "다이렉트": "CM",
    "대면": "대면", "방문": "대면", "설계사": "대면", "지점": "대면", "fc": "대면",
}


def normalize_channel(text: str | None) -> str | None:
    """'TM' / 'CM' / '대면' from the ways people say them; None when not recognised."""
    return _CHANNELS.get(_normalize(text)) if text else None


def search_products(
    keyword: str | None = None,
    category: str | None = None,
    age: int | None = None,
    channel: str | None = None,
    simplified: bool | None = None,
) -> list[Product]:
    """Products matching every given filter, most relevant first.

    `keyword` may hold several words ("간편심사 건강"); each must match the product's name,
    aliases, category, keywords, description, or coverage names/types. Matches on the name or
    category rank above matches in the description or coverages.
    """
    tokens = _keyword_tokens(keyword)
    wanted_channel = None
    if channel is not None:
        wanted_channel = normalize_channel(channel)
        if wanted_channel is None:
            raise ValueError(f"알 수 없는 판매 채널입니다: {channel} (TM, CM, 대면 중 하나)")
    wanted_category = _core(_normalize_query(category)) if category else None

    results: list[tuple[int, str, Product]] = []
    for product in load_products().values():
        if wanted_category and wanted_category not in _normalize(product.category):
            continue
        if age is not None and not product.join_age_min <= age <= product.join_age_max:
            continue
        if wanted_channel and wanted_channel not in product.channels:
            continue
        if simplified is not None and product.simplified_underwriting != simplified:
            continue
        score = 0
        for token in tokens:
            token_score = _match_score(product, token)
            if token_score == 0:
                break
            score += token_score
        else:
            results.append((score, product.code, product))
    results.sort(key=lambda item: (-item[0], item[1]))
    return [product for _, _, product in results]


_STOPWORDS = {"", "보험", "상품", "보장", "가입"}


def _keyword_tokens(keyword: str | None) -> list[str]:
    if not keyword:
        return []
    tokens = []
    for word in re.split(r"[\s,]+", keyword):
        token = _core(_normalize_query(word))
        if token not in _STOPWORDS:
            tokens.append(token)
    return tokens


def _match_score(product: Product, token: str) -> int:
    """3: name/alias/category, 2: search keyword, 1: description or coverage; 0: no match."""
    if any(token in _normalize(n) for n in [*product.all_names, product.category]):
        return 3
    if any(token in _normalize(k) for k in product.keywords):
        return 2
    texts = [product.description, *(c.name for c in product.coverages), *(c.type for c in product.coverages)]
    return 1 if any(token in _normalize(t) for t in texts) else 0


def get_rider(product: Product, code_or_name: str) -> Rider | None:
    """A rider of `product` by code (case-insensitive), exact name, or a unique name fragment."""
    wanted = _normalize(code_or_name or "")
    if not wanted:
        return None
    for rider in product.riders:
        if wanted in (_normalize(rider.code), _normalize(rider.name)):
            return rider
    hits = [r for r in product.riders if _core(wanted.removesuffix("특약")) in _normalize(r.name)]
    return hits[0] if len(hits) == 1 else None


# ------------------------------------------------------------------------------------------------
# Premiums

_MALE = {"남", "남성", "남자", "m", "male", "man", "아버지", "아빠", "할아버지", "아들", "남편"}
_FEMALE = {"여", "여성", "여자", "f", "female", "woman", "어머니", "엄마", "할머니", "딸", "아내"}


def normalize_sex(text: str | None) -> str | None:
    """'남성' or '여성' from 남/남성/M/male (and family words such as 아버지, 어머니); else None."""
    if not text:
        return None
    key = _normalize(text)
    if key in _MALE:
        return "남성"
    if key in _FEMALE:
        return "여성"
    return None


def normalize_payment_term(product: Product, text: str | None) -> str | None:
    """The product's payment term for '20년납', '20년', '20', '전기납'; the base term when empty."""
    if text is None or not str(text).strip():
        return product.premium.base_payment_term
    key = _normalize(str(text))
    for candidate in (key, f"{key}납", f"{key}년납"):
        for term in product.payment_terms:
            if _normalize(term) == candidate:
                return term
    return None


def _table_premium(product: Product, age: int, sex: str) -> float:
    """Base-plan monthly premium at `age`, linear between anchor ages (no rounding)."""
    anchors = product.premium.anchors
    if not anchors[0].age <= age <= anchors[-1].age:
        raise ValueError(f"{product.name}: no premium rate for age {age}")
    column = "male" if sex == "남성" else "female"
    for low, high in zip(anchors, anchors[1:]):
        if low.age <= age <= high.age:
            share = (age - low.age) / (high.age - low.age)
            return getattr(low, column) + share * (getattr(high, column) - getattr(low, column))
    return float(getattr(anchors[-1], column))  # single-anchor edge (unreachable: min_length=2)


def _round10(won: float) -> int:
    """Round half up to 10 won, as premiums are quoted."""
    return int(math.floor(won / 10 + 0.5)) * 10


def _require_sex(sex: str) -> str:
    normalized = normalize_sex(sex)
    if normalized is None:
        raise ValueError(f"성별을 알 수 없습니다: {sex!r} (남성 또는 여성)")
    return normalized


def _require_age(age: int) -> int:
    if isinstance(age, bool) or not isinstance(age, int):
        raise TypeError(f"age must be an int, got {age!r}")
    return age


def monthly_premium(
    product: Product,
    age: int,
    sex: str,
    *,
    payment_term: str | None = None,
    riders: list[str] | None = None,
) -> int:
    """Monthly premium in won (rounded to 10) for a new contract of the base plan.

    = anchor-interpolated premium × payment-term factor, plus each rider's add-on (a share of that
    premium, or a fixed sum). Raises OutsideJoinAge outside the join ages, ValueError for an unknown
    sex, payment term or rider.
    """
    age = _require_age(age)
    sex_key = _require_sex(sex)
    if not product.join_age_min <= age <= product.join_age_max:
        raise OutsideJoinAge(product, age)
    term = normalize_payment_term(product, payment_term)
    if term is None:
        raise ValueError(f"{product.name}의 납입기간은 {', '.join(product.payment_terms)} 중에서 고를 수 있습니다"
                         f" (입력: {payment_term}).")
    base = _table_premium(product, age, sex_key) * product.premium.term_factors[term]
    total = base
    for wanted in riders or []:
        rider = get_rider(product, wanted)
        if rider is None:
            raise ValueError(f"{product.name}에 '{wanted}' 특약이 없습니다.")
        total += rider.addon(base)
    return _round10(total)


def renewal_premiums(product: Product, age: int, sex: str, renewals: int = 3) -> list[dict]:
    """Premium of the base plan at each of the next `renewals` renewals of a renewable product.

    The premium is recomputed at the attained age at each renewal (age + k × renewal period); the
    list stops early when the next renewal would start at or after max_renewal_age. `age` is the
    insured's current age, which may be past the join ages for a contract already held. Each item:
    renewal (1, 2, …), year_offset, age, monthly_premium, increase_pct (vs. today's premium).
    Raises ValueError for a non-renewable product.
    """
    if not product.renewable:
        raise ValueError(f"{product.name}은(는) 갱신형이 아니어서 갱신 보험료가 없습니다.")
    age = _require_age(age)
    sex_key = _require_sex(sex)
    assert product.renewal_period_years and product.max_renewal_age  # guaranteed by validation
    if not product.join_age_min <= age < product.max_renewal_age:
        raise ValueError(f"{product.name}은(는) {product.join_age_min}세부터 {product.max_renewal_age}세 전까지만"
                         f" 계약을 유지할 수 있습니다 (입력 나이 {age}세).")
    current = _round10(_table_premium(product, age, sex_key))
    steps: list[dict] = []
    for k in range(1, renewals + 1):
        attained = age + k * product.renewal_period_years
        if attained >= product.max_renewal_age:
            break
        premium = _round10(_table_premium(product, attained, sex_key))
        steps.append({
            "renewal": k,
            "year_offset": k * product.renewal_period_years,
            "age": attained,
            "monthly_premium": premium,
            "increase_pct": round((premium / current - 1) * 100, 1),
        })
    return steps


def attained_age_premium(product: Product, age: int, sex: str) -> int:
    """Base-plan monthly premium (rounded to 10 won) at an attained age anywhere in the premium table.

    For a contract already held: unlike `monthly_premium` it does not check the join ages, so a
    renewable contract's premium at, say, 70 is available although new contracts stop at 65 (it is
    the same price `renewal_premiums` compares against). Raises ValueError outside the table's ages
    or for an unknown sex.
    """
    return _round10(_table_premium(product, _require_age(age), _require_sex(sex)))

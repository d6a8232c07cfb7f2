"""The synthetic customer database of the insurance TMR domain (SQLite, built by code).

Every record below is invented: names, phone numbers, resident numbers (their check digit is made
deliberately invalid), addresses and e-mails (`example.com`) belong to no one. The database is
built from these fixed records, so two builds are identical; `default_database()` keeps one copy
under `data_dir()/insurance/` and rebuilds it when the records (their content hash) change.

Ages are computed once, as of `REFERENCE_DATE`, not today's date, so the data never drifts with
the clock (윤지은 is 55 and 최수진 60 whatever year the tests run in).

Only the safe projections (`safe_customer`, `safe_contract`) leave this module: phone, resident
number, address, e-mail and birth date stay in the database. All SQL is parameterised.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from toolroute.config import data_dir

REFERENCE_DATE = dt.date(2026, 12, 1)
SCHEMA_VERSION = 1

CONTRACT_STATUSES: tuple[str, ...] = ("유지", "해지", "실효", "만기")
SEXES: tuple[str, ...] = ("남성", "여성")

# The only fields that may leave this module.
SAFE_CUSTOMER_FIELDS: tuple[str, ...] = ("customer_id", "name", "age", "sex", "occupation")
SAFE_CONTRACT_FIELDS: tuple[str, ...] = (
    "contract_id", "customer_id", "product_code", "product_name", "status", "contract_date",
    "expiry_date", "termination_date", "next_renewal_date", "coverage_period", "monthly_premium",
    "payment_term", "sum_insured", "insured_person",
)
# Stored but never returned: the test checks every tool output against their values.
PII_CUSTOMER_FIELDS: tuple[str, ...] = ("birth_date", "phone", "resident_number", "address", "email")

# Product names by code, as fixed by the spec (data/insurance/LABELING.md).
PRODUCT_NAMES: dict[str, str] = {
    "B001": "첫날부터암보험",
    "B002": "건강해지는종신보험",
    "B003": "든든한실버치아보험",
    "B004": "전에없던치매간병보험",
    "B005": "실속치매보험",
    "B006": "골라담는간편건강보험",
    "B007": "간편고지종신보험",
    "B008": "튼튼어린이보험",
    "B009": "안심운전자보험",
    "B010": "착한실손의료보험",
    "B011": "뇌심든든2대질환보험",
    "B012": "행복한연금보험",
}

# (customer_id, name, birth_date, sex, phone, resident serial (5 digits), address, email, occupation)
_CUSTOMERS: tuple[tuple[str, ...], ...] = (
    ("C0001", "김민수", "1974-08-09", "남성", "010-2841-7730", "52384",
     "서울특별시 강서구 가상대로 118, 302동 1101호", "minsu.kim74@example.com", "회사원(사무직)"),
    ("C0002", "윤지은", "1971-03-15", "여성", "010-3957-2164", "18275",
     "경기도 성남시 분당구 샘플로 45, 1203호", "jieun.yoon@example.com", "자영업(꽃집 운영)"),
    ("C0003", "최수진", "1966-05-20", "여성", "010-4172-8896", "20963",
     "부산광역시 해운대구 예시로 77, 805호", "sujin.choi66@example.com", "주부"),
    ("C0004", "박준호", "1978-10-02", "남성", "010-5286-0417", "11742",
     "인천광역시 남동구 모의길 9", "junho.park@example.com", "택시기사"),
    ("C0005", "이영희", "1959-04-25", "여성", "010-6620-3381", "24518",
     "대구광역시 수성구 견본로 201, 1502호", "younghee.lee59@example.com", "퇴직 교사"),
    ("C0006", "이영희", "1988-07-07", "여성", "010-7034-5529", "13690",
     "서울특별시 마포구 연습로 33, 402호", "yh.lee88@example.com", "은행원"),
    ("C0007", "정하늘", "1992-12-24", "여성", "010-8149-6602", "20417",
     "광주광역시 북구 가칭로 56", "haneul.jung@example.com", "간호사"),
    ("C0008", "한동욱", "1955-02-18", "남성", "010-9213-4475", "35128",
     "충청남도 논산시 시험면 들판길 12", "dongwook.han@example.com", "농업"),
    ("C0009", "강태민", "1982-06-30", "남성", "010-2398-1154", "16803",
     "경기도 수원시 팔달구 표본로 88, 2동 305호", "taemin.kang@example.com", "건설현장 근로자"),
    ("C0010", "서유진", "1999-09-09", "여성", "010-3465-9021", "27541",
     "서울특별시 관악구 가정로 14, 201호", "yujin.seo99@example.com", "대학원생"),
    ("C0011", "임재현", "1968-01-05", "남성", "010-4510-7783", "19284",
     "대전광역시 유성구 임시로 140", "jaehyun.lim@example.com", "자영업(식당 운영)"),
    ("C0012", "조민지", "1964-11-11", "여성", "010-5673-2208", "22659",
     "울산광역시 남구 예제로 63, 903호", "minji.cho64@example.com", "주부"),
    ("C0013", "신동혁", "1987-03-03", "남성", "010-6781-3346", "14027",
     "경기도 고양시 일산동구 견본길 21, 1701호", "donghyuk.shin@example.com", "소프트웨어 개발자"),
    ("C0014", "배수아", "1976-08-19", "여성", "010-7892-4410", "23815",
     "세종특별자치시 한누리대로 가상동 300", "sua.bae@example.com", "공무원"),
    ("C0015", "노승우", "1960-10-30", "남성", "010-8907-5562", "12496",
     "강원특별자치도 춘천시 모형로 5", "seungwoo.noh@example.com", "퇴직(전 회사원)"),
    ("C0016", "김서연", "1985-05-05", "여성", "010-2019-6634", "21370",
     "서울특별시 송파구 가상로 71, 1004호", "seoyeon.kim.design@example.com", "그래픽 디자이너"),
    ("C0017", "김서연", "1985-11-20", "여성", "010-3128-7745", "26153",
     "경기도 용인시 수지구 예시대로 19, 603호", "seoyeon.kim.pharm@example.com", "약사"),
    ("C0018", "윤재성", "1991-04-14", "남성", "010-4236-8857", "17930",
     "서울특별시 노원구 시범로 102", "jaesung.yoon@example.com", "배달 라이더"),
)

# (contract_id, customer_id, product_code, status, contract_date, expiry_date, termination_date,
#  next_renewal_date, coverage_period, monthly_premium, payment_term, sum_insured, insured_person)
# Kept consistent with products.yaml (tests check it): coverage_period, payment terms, join ages and
# sum-insured ranges are the product's; a renewable product's next_renewal_date is the next term
# start after REFERENCE_DATE and its expiry_date the last possible one (max renewal age).
# monthly_premium is the base-plan premium at the age the current term started (B012: the chosen
# monthly payment, which is also its sum_insured basis).
# termination_date is the day the contract ended early: 해지일, or 실효일 for a lapsed one.
# A 만기 contract ended on its expiry_date; whole-life contracts have no expiry_date.
# insured_person: 본인, or 자녀 for a children's policy the customer holds for a child.
_CONTRACTS: tuple[tuple[Any, ...], ...] = (
    # 김민수 (52)
    ("CT00001", "C0001", "B001", "유지", "2019-04-12", "2074-04-12", None, "2039-04-12",
     "20년만기(갱신형, 최대 100세)", 27420, "전기납", 30_000_000, "본인"),
    ("CT00002", "C0001", "B003", "유지", "2024-09-02", "2074-09-02", None, "2034-09-02",
     "10년만기(갱신형, 최대 100세)", 24800, "전기납", 1_000_000, "본인"),
    # 윤지은 (55)
    ("CT00003", "C0002", "B006", "유지", "2020-05-20", "2071-05-20", None, "2030-05-20",
     "10년만기(갱신형, 최대 100세)", 54370, "전기납", 20_000_000, "본인"),
    ("CT00004", "C0002", "B003", "유지", "2023-09-01", "2071-09-01", None, "2033-09-01",
     "10년만기(갱신형, 최대 100세)", 24920, "전기납", 1_000_000, "본인"),
    ("CT00005", "C0002", "B002", "유지", "2016-11-11", None, None, None,
     "종신", 104350, "20년납", 100_000_000, "본인"),
    # 최수진 (60)
    ("CT00006", "C0003", "B007", "유지", "2021-07-01", None, None, None,
     "종신", 97550, "20년납", 50_000_000, "본인"),
    ("CT00007", "C0003", "B001", "해지", "2015-02-01", "2066-02-01", "2023-12-31", None,
     "20년만기(갱신형, 최대 100세)", 31980, "전기납", 30_000_000, "본인"),
    # 박준호 (48)
    ("CT00008", "C0004", "B009", "유지", "2024-03-05", "2044-03-05", None, None,
     "20년만기", 13550, "전기납", 100_000_000, "본인"),
    ("CT00009", "C0004", "B011", "실효", "2020-01-15", "2068-01-15", "2025-09-30", None,
     "90세만기", 31070, "20년납", 20_000_000, "본인"),
    # 이영희 (67)
    ("CT00010", "C0005", "B012", "유지", "2018-06-01", None, None, None,
     "종신(연금개시 후 평생 또는 선택한 기간)", 300000, "10년납", 300_000, "본인"),
    ("CT00011", "C0005", "B004", "유지", "2021-10-20", "2059-10-20", None, None,
     "100세만기", 57800, "20년납", 20_000_000, "본인"),
    ("CT00012", "C0005", "B009", "만기", "2006-05-10", "2026-05-10", None, None,
     "20년만기", 12010, "전기납", 50_000_000, "본인"),
    # 이영희 (38)
    ("CT00013", "C0006", "B010", "유지", "2022-02-14", "2088-02-14", None, "2027-02-14",
     "1년만기(갱신형, 5년 재가입 주기, 최대 100세)", 17310, "전기납", 50_000_000, "본인"),
    ("CT00014", "C0006", "B006", "해지", "2019-08-01", "2088-08-01", "2022-03-31", None,
     "10년만기(갱신형, 최대 100세)", 32950, "전기납", 20_000_000, "본인"),
    # 정하늘 (33)
    ("CT00015", "C0007", "B008", "유지", "2023-01-09", "2053-01-09", None, None,
     "30세만기", 33440, "10년납", 30_000_000, "자녀"),
    ("CT00016", "C0007", "B010", "유지", "2024-06-01", "2092-06-01", None, "2027-06-01",
     "1년만기(갱신형, 5년 재가입 주기, 최대 100세)", 15590, "전기납", 50_000_000, "본인"),
    # 한동욱 (71)
    ("CT00017", "C0008", "B003", "유지", "2024-04-01", "2055-04-01", None, "2034-04-01",
     "10년만기(갱신형, 최대 100세)", 38970, "전기납", 1_000_000, "본인"),
    ("CT00018", "C0008", "B007", "유지", "2018-09-15", None, None, None,
     "종신", 283710, "10년납", 30_000_000, "본인"),
    # 강태민 (44)
    ("CT00019", "C0009", "B009", "유지", "2021-11-01", "2041-11-01", None, None,
     "20년만기", 12710, "전기납", 50_000_000, "본인"),
    ("CT00020", "C0009", "B001", "실효", "2017-03-20", "2082-03-20", "2026-08-31", None,
     "20년만기(갱신형, 최대 100세)", 18120, "전기납", 30_000_000, "본인"),
    # 서유진 (27)
    ("CT00021", "C0010", "B010", "유지", "2025-03-03", "2099-03-03", None, "2027-03-03",
     "1년만기(갱신형, 5년 재가입 주기, 최대 100세)", 12540, "전기납", 50_000_000, "본인"),
    # 임재현 (58)
    ("CT00022", "C0011", "B011", "유지", "2019-05-27", "2058-05-27", None, None,
     "90세만기", 47570, "20년납", 20_000_000, "본인"),
    ("CT00023", "C0011", "B002", "유지", "2010-12-01", None, None, None,
     "종신", 113000, "20년납", 100_000_000, "본인"),
    ("CT00024", "C0011", "B012", "해지", "2014-03-10", None, "2020-06-30", None,
     "종신(연금개시 후 평생 또는 선택한 기간)", 200000, "10년납", 200_000, "본인"),
    ("CT00025", "C0011", "B009", "만기", "2004-07-01", "2024-07-01", None, None,
     "20년만기", 22640, "10년납", 50_000_000, "본인"),
    # 조민지 (62)
    ("CT00026", "C0012", "B005", "유지", "2022-12-05", "2054-12-05", None, None,
     "90세만기", 19960, "20년납", 20_000_000, "본인"),
    ("CT00027", "C0012", "B001", "유지", "2016-06-16", "2064-06-16", None, "2036-06-16",
     "20년만기(갱신형, 최대 100세)", 34550, "전기납", 30_000_000, "본인"),
    # 신동혁 (39)
    ("CT00028", "C0013", "B001", "유지", "2020-10-10", "2087-10-10", None, "2040-10-10",
     "20년만기(갱신형, 최대 100세)", 17390, "전기납", 50_000_000, "본인"),
    ("CT00029", "C0013", "B011", "유지", "2020-10-10", "2077-10-10", None, None,
     "90세만기", 22710, "20년납", 20_000_000, "본인"),
    # 배수아 (50)
    ("CT00030", "C0014", "B002", "유지", "2013-04-04", None, None, None,
     "종신", 82860, "20년납", 100_000_000, "본인"),
    ("CT00031", "C0014", "B010", "유지", "2021-07-20", "2076-07-20", None, "2027-07-20",
     "1년만기(갱신형, 5년 재가입 주기, 최대 100세)", 25170, "전기납", 50_000_000, "본인"),
    # 노승우 (66)
    ("CT00032", "C0015", "B012", "유지", "2020-02-01", None, None, None,
     "종신(연금개시 후 평생 또는 선택한 기간)", 500000, "10년납", 500_000, "본인"),
    ("CT00033", "C0015", "B004", "해지", "2020-05-05", "2060-05-05", "2024-11-30", None,
     "100세만기", 45030, "20년납", 20_000_000, "본인"),
    ("CT00034", "C0015", "B006", "유지", "2023-03-13", "2060-03-13", None, "2033-03-13",
     "10년만기(갱신형, 최대 100세)", 92520, "전기납", 20_000_000, "본인"),
    # 김서연 (41, 디자이너)
    ("CT00035", "C0016", "B008", "유지", "2021-09-09", "2051-09-09", None, None,
     "30세만기", 33440, "10년납", 30_000_000, "자녀"),
    ("CT00036", "C0016", "B006", "유지", "2024-01-02", "2085-01-02", None, "2034-01-02",
     "10년만기(갱신형, 최대 100세)", 39600, "전기납", 20_000_000, "본인"),
    # 김서연 (41, 약사)
    ("CT00037", "C0017", "B001", "유지", "2019-12-12", "2085-12-12", None, "2039-12-12",
     "20년만기(갱신형, 최대 100세)", 21860, "전기납", 30_000_000, "본인"),
    # 윤재성: a prospect with no contracts
)

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE customers (
    customer_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    age INTEGER NOT NULL,
    sex TEXT NOT NULL CHECK (sex IN ('남성', '여성')),
    phone TEXT NOT NULL,
    resident_number TEXT NOT NULL,
    address TEXT NOT NULL,
    email TEXT NOT NULL,
    occupation TEXT NOT NULL
);
CREATE TABLE contracts (
    contract_id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(customer_id),
    product_code TEXT NOT NULL,
    product_name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('유지', '해지', '실효', '만기')),
    contract_date TEXT NOT NULL,
    expiry_date TEXT,
    termination_date TEXT,
    next_renewal_date TEXT,
    coverage_period TEXT NOT NULL,
    monthly_premium INTEGER NOT NULL,
    payment_term TEXT NOT NULL,
    sum_insured INTEGER NOT NULL,
    insured_person TEXT NOT NULL
);
CREATE INDEX contracts_by_customer ON contracts(customer_id);
CREATE INDEX customers_by_name ON customers(name);
"""

_CUSTOMER_COLUMNS = (
    "customer_id", "name", "birth_date", "age", "sex", "phone", "resident_number", "address",
    "email", "occupation",
)


def age_on(birth_date: str, on: dt.date = REFERENCE_DATE) -> int:
    """Full years (만 나이) on the given date."""
    born = dt.date.fromisoformat(birth_date)
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def _synthetic_resident_number(birth_date: str, sex: str, serial: str) -> str:
    """A resident-number-shaped string whose check digit is deliberately wrong (belongs to no one)."""
    born = dt.date.fromisoformat(birth_date)
    century = 1 if born.year < 2000 else 3
    gender = century + (0 if sex == "남성" else 1)
    digits = f"{born:%y%m%d}{gender}{serial}"
    weights = (2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5)
    valid = (11 - sum(int(d) * w for d, w in zip(digits, weights)) % 11) % 10
    return f"{digits[:6]}-{digits[6:]}{(valid + 5) % 10}"


def _customer_rows() -> list[tuple[Any, ...]]:
    rows = []
    for cid, name, birth, sex, phone, serial, address, email, occupation in _CUSTOMERS:
        rows.append((cid, name, birth, age_on(birth), sex, phone,
                     _synthetic_resident_number(birth, sex, serial), address, email, occupation))
    return rows


def _contract_rows() -> list[tuple[Any, ...]]:
    rows = []
    for (ctid, cid, code, status, start, expiry, ended, renewal, period, premium, term, insured,
         person) in _CONTRACTS:
        rows.append((ctid, cid, code, PRODUCT_NAMES[code], status, start, expiry, ended, renewal,
                     period, premium, term, insured, person))
    return rows


def content_hash() -> str:
    """Hash of the schema and every row inserted: a change in the records triggers a rebuild."""
    payload = json.dumps(
        {"schema_version": SCHEMA_VERSION, "schema": _SCHEMA, "reference_date": REFERENCE_DATE.isoformat(),
         "customers": _customer_rows(), "contracts": _contract_rows()},
        ensure_ascii=False, sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _check_records() -> None:
    ids = {row[0] for row in _CUSTOMERS}
    if len(ids) != len(_CUSTOMERS):
        raise ValueError("duplicate customer_id in the seed records")
    if len({row[0] for row in _CONTRACTS}) != len(_CONTRACTS):
        raise ValueError("duplicate contract_id in the seed records")
    for row in _CONTRACTS:
        if row[1] not in ids or row[2] not in PRODUCT_NAMES or row[3] not in CONTRACT_STATUSES:
            raise ValueError(f"bad contract record {row[0]}")


def create_database(path: str | Path) -> Path:
    """Build the database at `path` from the fixed records (replacing any file there); returns the path."""
    _check_records()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    try:
        with con:
            con.executescript(_SCHEMA)
            placeholders = ", ".join("?" for _ in _CUSTOMER_COLUMNS)
            con.executemany(f"INSERT INTO customers VALUES ({placeholders})", _customer_rows())
            con.executemany(f"INSERT INTO contracts VALUES ({', '.join('?' * 14)})", _contract_rows())
            con.executemany(
                "INSERT INTO meta VALUES (?, ?)",
                [("content_hash", content_hash()), ("reference_date", REFERENCE_DATE.isoformat()),
                 ("schema_version", str(SCHEMA_VERSION))],
            )
    finally:
        con.close()
    return path


def _stored_hash(path: Path) -> str | None:
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = ?", ("content_hash",)).fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def default_database() -> Path:
    """The shared copy under `data_dir()/insurance/customers.sqlite`, built or rebuilt when stale."""
    path = data_dir() / "insurance" / "customers.sqlite"
    if path.is_file() and _stored_hash(path) == content_hash():
        return path
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    create_database(tmp)
    os.replace(tmp, path)  # atomic: a concurrent reader sees the old or the new file, never half
    return path


# --- which database the queries read -------------------------------------------------------------

_override: Path | None = None


def set_database(path: str | Path | None) -> None:
    """Point the queries (and the customer_db tools) at `path`; None goes back to the default."""
    global _override
    _override = Path(path) if path is not None else None


@contextlib.contextmanager
def use_database(path: str | Path) -> Iterator[Path]:
    """Temporarily read `path` (tests use a tmp_path build), restoring the previous choice after."""
    previous = _override
    set_database(path)
    try:
        yield Path(path)
    finally:
        set_database(previous)


def current_database() -> Path:
    return _override if _override is not None else default_database()


@contextlib.contextmanager
def _connect(db: str | Path | None) -> Iterator[sqlite3.Connection]:
    path = Path(db) if db is not None else current_database()
    if not path.is_file():
        raise FileNotFoundError(f"customer database not found: {path}")
    con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        yield con
    finally:
        con.close()


# --- safe projections ----------------------------------------------------------------------------

def safe_customer(row: Mapping[str, Any] | sqlite3.Row) -> dict[str, Any]:
    """Only id, name, age, sex, occupation: never phone, resident number, address, e-mail, birth date."""
    keys = row.keys()
    return {field: row[field] for field in SAFE_CUSTOMER_FIELDS if field in keys}


def safe_contract(row: Mapping[str, Any] | sqlite3.Row) -> dict[str, Any]:
    """The contract fields (status, dates, premium, sum insured); nothing about the person."""
    keys = row.keys()
    return {field: row[field] for field in SAFE_CONTRACT_FIELDS if field in keys}


# --- normalisation of what a user or an LLM passes -----------------------------------------------

_SEX_ALIASES = {
    "남성": "남성", "남": "남성", "남자": "남성", "m": "남성", "male": "남성", "man": "남성",
    "여성": "여성", "여": "여성", "여자": "여성", "f": "여성", "female": "여성", "woman": "여성",
}
_STATUS_ALIASES = {
    "유지": "유지", "정상": "유지", "유효": "유지", "active": "유지", "in force": "유지",
    "해지": "해지", "해약": "해지", "terminated": "해지", "cancelled": "해지",
    "실효": "실효", "lapsed": "실효",
    "만기": "만기", "matured": "만기", "expired": "만기",
}
_NAME_SUFFIXES = ("고객님", "계약자님", "님", "고객", "계약자", "씨")


def normalize_sex(value: str | None) -> str | None:
    """'남', '여자', 'M' … → 남성 / 여성; None for an empty value; ValueError for anything else."""
    if value is None or not str(value).strip():
        return None
    key = str(value).strip().lower()
    if key not in _SEX_ALIASES:
        raise ValueError(f"unknown sex {value!r}")
    return _SEX_ALIASES[key]


def normalize_status(value: str | None) -> str | None:
    """'정상', 'active' … → 유지 etc.; None (or 전체) for all statuses; ValueError otherwise."""
    if value is None or not str(value).strip() or str(value).strip() in ("전체", "all", "모두"):
        return None
    key = str(value).strip().lower()
    if key.endswith("중") and key[:-1].strip() in _STATUS_ALIASES:  # 유지중
        key = key[:-1].strip()
    if key.endswith("된") and key[:-1] in ("해지", "실효", "만기"):  # 해지된
        key = key[:-1]
    if key not in _STATUS_ALIASES:
        raise ValueError(f"unknown contract status {value!r}")
    return _STATUS_ALIASES[key]


def normalize_name(value: str | None) -> str | None:
    """Strip honorifics: '김민수님', '김민수 고객' → 김민수."""
    if value is None:
        return None
    name = "".join(str(value).split())
    for suffix in _NAME_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)].strip()
            break
    return name or None


def normalize_customer_id(value: str | None) -> str | None:
    """'c1', 'C0001', '0001' → C0001."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip().upper()
    digits = text[1:] if text.startswith("C") else text
    if digits.isdigit():
        return f"C{int(digits):04d}"
    return text


# --- queries -------------------------------------------------------------------------------------

def find_customers(
    name: str | None = None,
    age: int | None = None,
    sex: str | None = None,
    customer_id: str | None = None,
    db: str | Path | None = None,
) -> list[dict[str, Any]]:
    """Customers matching every given criterion (safe projection), ordered by customer_id."""
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("customer_id", normalize_customer_id(customer_id)),
        ("name", normalize_name(name)),
        ("age", age),
        ("sex", normalize_sex(sex)),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")  # column names are fixed literals, values are bound
            params.append(value)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    with _connect(db) as con:
        rows = con.execute(
            f"SELECT {', '.join(SAFE_CUSTOMER_FIELDS)} FROM customers {where} ORDER BY customer_id",
            params,
        ).fetchall()
    return [safe_customer(row) for row in rows]


def contracts_of(
    customer_id: str, status: str | None = None, db: str | Path | None = None
) -> list[dict[str, Any]]:
    """A customer's contracts (safe projection), optionally of one status, ordered by contract_id."""
    sql = f"SELECT {', '.join(SAFE_CONTRACT_FIELDS)} FROM contracts WHERE customer_id = ?"
    params: list[Any] = [normalize_customer_id(customer_id)]
    status = normalize_status(status)
    if status is not None:
        sql += " AND status = ?"
        params.append(status)
    with _connect(db) as con:
        rows = con.execute(sql + " ORDER BY contract_id", params).fetchall()
    return [safe_contract(row) for row in rows]


def customer_names(db: str | Path | None = None) -> list[str]:
    """Distinct customer names (to suggest close matches when a name is not found, and to spot a name
    in a turn). Read once per database file version: every turn asks, twice (see `extract_context`)."""
    path = Path(db) if db is not None else current_database()
    if not path.is_file():
        raise FileNotFoundError(f"customer database not found: {path}")
    stat = path.stat()
    return list(_names_of(str(path.resolve()), stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=8)
def _names_of(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    with _connect(path) as con:
        return tuple(row[0] for row in con.execute("SELECT DISTINCT name FROM customers ORDER BY name"))


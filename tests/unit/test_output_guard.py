"""The output guardrail on Korean answers: no personal data, internal id or tool name survives, however
it is written (glued particles, case, width, separators), and gold answers pass unchanged.

`test_known_leaks_are_closed` lists formats the guardrail of commit 7270fd9 let through (each case fails
there); the property tests generate such answers; `test_false_removal_on_gold_answers` measures what
the guardrail takes out of answers that hold nothing to take out.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolroute.agent.guardrails import guard_output
from toolroute.domains.insurance.pack import build_pack


@pytest.fixture(scope="module")
def pack():
    return _pack()


@lru_cache(maxsize=1)
def _pack():
    return build_pack()


def _seen(text: str) -> str:
    """What a reader sees: width and case folded, zero-width characters gone."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub("[\u200b\u200c\u200d\u2060\ufeff]", "", text)


def _digits(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text) if c.isdigit())


# (answer, what must not survive). Each leaked through the guardrail at 7270fd9 (checked by running
# this test against that commit's code).
KNOWN_LEAKS = [
    ("B001은 첫날부터암보험입니다.", "b001"),
    ("상품코드B001입니다.", "b001"),
    ("B002를 추천드립니다.", "b002"),
    ("C0001은 김민수 고객입니다.", "c0001"),
    ("C0001님 계약은 2건입니다.", "c0001"),
    ("계약 CT12345의 상태는 유지입니다.", "ct12345"),
    ("b001-r01 특약도 있습니다.", "b001"),
    ("Ｂ００１은 암보험입니다.", "b001"),
    ("premium_estimate로 계산했습니다.", "premium_estimate"),
    ("customer_contract_lookup을 호출해 확인했습니다.", "customer_contract_lookup"),
    ("PREMIUM_ESTIMATE 결과 월 3만원입니다.", "premium_estimate"),
    ("premium_estimate55세 여성 실속치매보험은 월 3만원입니다.", "premium_estimate"),
    ("premium_estimatepremium_estimate월 17,950원입니다.", "premium_estimate"),  # glued twice (hypothesis found it)
    ("plan_optionspremium_estimate 결과입니다.", "premium_estimate"),  # a digit after a letter (hypothesis found it)
    ("Premium_Estimate로 다시 보면 3만원입니다.", "premium_estimate"),
    ("주민번호는 900101 1234567입니다.", "1234567"),
    ("주민번호는 900101–1234567입니다.", "1234567"),
    ("주민번호는 900101—1234567입니다.", "1234567"),
    ("주민번호는 ９００１０１－１２３４５６７입니다.", "1234567"),
    ("연락처는 010–1234–5678입니다.", "1234"),
    ("연락처는 010—1234—5678입니다.", "1234"),
    ("연락처는 ０１０－１２３４－５６７８입니다.", "1234"),
    ("연락처는 010 - 1234 - 5678입니다.", "1234"),
    ("사무실은 02 123 4567입니다.", "123"),
    ("주소는 서울특별시 강남구 테헤란로 123입니다.", "테헤란로 123"),
    ("역삼동 12-3번지에 사십니다.", "12-3"),
    ("OO동 12-3번지로 보내 드릴게요.", "12-3"),
    ("테헤란로 123에 있는 댁으로 보내 드립니다.", "123"),
    ("경기도 성남시 분당구 판교역로 235, 래미안아파트 101동 1203호로 발송합니다.", "1203"),
    ("래미안아파트 101동 1203호로 발송합니다.", "1203"),
    ("올림픽로35길 10으로 방문 예정입니다.", "올림픽로35길 10"),
    ("고객님은 1985년 3월 2일생입니다.", "1985"),
    ("생년월일은 1985-03-02입니다.", "1985"),
    ("생년월일 85.03.02 확인했습니다.", "85.03.02"),
    ("생년월일: 850302", "850302"),
    ("850302생 고객님입니다.", "850302"),
]


@pytest.mark.parametrize("answer, secret", KNOWN_LEAKS)
def test_known_leaks_are_closed(pack, answer, secret):
    guarded = guard_output(answer, pack, with_disclaimer=False).text
    assert secret.casefold() not in _seen(guarded), guarded


def test_masks_keep_the_domain_format_and_the_rest_of_the_answer(pack):
    def guard(text: str) -> str:
        return guard_output(text, pack, with_disclaimer=False).text
    assert guard("주민번호는 ９００１０１－１２３４５６７입니다.") == "주민번호는 900101-1******입니다."
    assert guard("연락처는 010–1234–5678입니다.") == "연락처는 010-****-5678입니다."
    assert guard("생년월일은 1985-03-02입니다.") == "생년월일은 ****-**-**입니다."
    assert guard("주소는 서울특별시 강남구 테헤란로 123입니다.") == "주소는 [주소]입니다."
    assert guard("첫날부터암보험(B001)은 월 26,300원입니다.") == "첫날부터암보험은 월 26,300원입니다."
    assert guard("`premium_estimate()` 결과 3만원") == "결과 3만원"
    assert guard("주민번호 900101 - 1234567 확인") == "주민번호 900101-1****** 확인"  # masked before too
    assert guard("해외에서는 +82 10 1234 5678로 연락") == "해외에서는 +82-10-****-5678로 연락"
    assert guard("① 청약일부터 30일 이내 ② B001은 제외") == "① 청약일부터 30일 이내 ② 제외"  # ① is not rewritten


@pytest.mark.parametrize("answer", [
    "계약일 2019-04-12, 만기 2030-05-20입니다.",   # dates that are no birth date
    "보험료로 3만원, 수수료로 1,200원이 나갑니다.",  # "…로 3" is no road address
    "20년 만기로 100세까지 보장하고 미만으로 5초입니다.",
    "C73 유사암은 일반암의 20%를 드립니다.",        # a KCD code is no customer id
    "고객센터 1588-7240으로 전화 주세요.",
    "부산 고객플라자는 부산광역시 부산진구 중앙대로 672 3층 (전화 051-810-7240)입니다.",  # public, not personal
    "1985년생 고객은 가입 가능합니다.",
])
def test_ordinary_answers_are_left_alone(pack, answer):
    assert guard_output(answer, pack, with_disclaimer=False).text == answer


# --- property tests: generated secrets in generated Korean answers -------------------------------------

_WORDS = ["고객님", "보험료", "계약", "확인", "안내", "드리겠습니다", "가입", "상품", "보장", "내용", "조회", "결과",
          "현재", "유지", "중인", "청구", "서류", "필요합니다", "감사합니다", "말씀", "주시면", "담당자", "연락", "예정",
          "납입", "기간", "만기", "특약", "추가", "어머님", "아버님", "상담", "진행", "하겠습니다", "네", "그리고", "또한"]
_HANGUL = st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3)
_WORD = st.one_of(st.sampled_from(_WORDS), st.text(_HANGUL, min_size=1, max_size=5))
_PHRASE = st.lists(_WORD, max_size=4).map(" ".join)
# Particles and endings glued to a secret ("만" is left out: "테헤란로 123만" reads as 1.23 million).
_PARTICLES = ["", "은", "는", "이", "가", "을", "를", "로", "으로", "님", "입니다", "의", "에게", "에", "에서", "과", "와",
              "도", "이에요", "예요", "이고", "이며", "인데", "께서", "님께", "이라서", "요"]
_BEFORE = ["", " ", "(", "「", "'", '"', ": ", "\n", "- ", " [", "“"]
_AFTER = ["", ".", ",", "!", "?", ")", "」", "'", '"', "…", "~", "”", "\n"]
_FULL_WIDTH = {c: chr(ord(c) + 0xFEE0) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"}
# Each Hypothesis example is a batch of PER_EXAMPLE answers (the engine's own cost per example is larger
# than the guardrail's): 4 tests x 500 examples x 5 answers = 10,000 generated answers, deterministic
# (derandomize) so that a run is repeatable.
EXAMPLES, PER_EXAMPLE = 500, 5
GENERATED_ANSWERS = 4 * EXAMPLES * PER_EXAMPLE


def _fast(test):
    return settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))(test)


def _batch(case: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(case, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE)


@st.composite
def _in_answer(draw, secret: str, glue_before: bool = True) -> str:
    """`secret` with a particle and punctuation glued to it, inside a random Korean answer."""
    before = draw(st.sampled_from(_BEFORE if glue_before else [b for b in _BEFORE if b]))
    lead = draw(_PHRASE)
    if glue_before and not before and lead:  # glued to the word before it too ("상품코드B001")
        return lead + secret + draw(st.sampled_from(_PARTICLES)) + draw(st.sampled_from(_AFTER)) + " " + draw(_PHRASE)
    return (lead + before + secret + draw(st.sampled_from(_PARTICLES)) + draw(st.sampled_from(_AFTER)) + " "
            + draw(_PHRASE))


@st.composite
def _styled(draw, token: str) -> str:
    """`token` in random case, sometimes full-width, sometimes with a zero-width space inside."""
    cased = "".join(c.upper() if draw(st.booleans()) else c.lower() for c in token)
    if draw(st.integers(0, 4)) == 0:
        cased = "".join(_FULL_WIDTH.get(c, c) for c in cased)
    if len(cased) > 2 and draw(st.integers(0, 9)) == 0:
        at = draw(st.integers(1, len(cased) - 1))
        cased = cased[:at] + "\u200b" + cased[at:]
    return cased


_CODE = st.one_of(
    st.from_regex(r"B0[0-9]{2}", fullmatch=True), st.from_regex(r"B0[0-9]{2}-R[0-9]{2}", fullmatch=True),
    st.from_regex(r"C[0-9]{4}", fullmatch=True), st.from_regex(r"CT[0-9]{5}", fullmatch=True))


@st.composite
def _code_case(draw) -> tuple[str, str]:
    code = draw(_CODE)
    return draw(_in_answer(draw(_styled(code)))), code


@_fast
@given(_batch(_code_case()))
def test_no_code_survives(cases):
    for answer, code in cases:
        guarded = guard_output(answer, _pack(), with_disclaimer=False).text
        assert code.casefold() not in _seen(guarded), (answer, guarded)


@st.composite
def _tool_case(draw) -> tuple[str, str]:
    name = draw(st.sampled_from(_pack().tool_names))
    styled = draw(_styled(name))
    styled = draw(st.sampled_from([styled, f"`{styled}`", f"{styled}()", f"`{styled}()`"]))
    return draw(_in_answer(styled)), name


@_fast
@given(_batch(_tool_case()))
def test_no_tool_name_survives(cases):
    for answer, name in cases:
        guarded = guard_output(answer, _pack(), with_disclaimer=False).text
        assert name not in _seen(guarded), (answer, guarded)


_SEPARATORS = ["", " ", "-", "–", "—", ".", " - ", "‐", "−", "－", "·", "  "]


@st.composite
def _birth(draw) -> tuple[int, int, int]:
    return draw(st.integers(1940, 2009)), draw(st.integers(1, 12)), draw(st.integers(1, 28))


def _width(text: str, full: bool) -> str:
    return "".join(_FULL_WIDTH.get(c, c) for c in text) if full else text


@st.composite
def _number_case(draw) -> tuple[str, str]:
    """(answer, the digits the masked answer may still show: 900101-1****** or 010-****-5678)."""
    sep = draw(st.sampled_from(_SEPARATORS))
    if draw(st.booleans()):
        year, month, day = draw(_birth())
        front = f"{year % 100:02d}{month:02d}{day:02d}"
        gender = str(draw(st.integers(1, 8)))
        back = gender + draw(st.from_regex(r"[0-9]{6}", fullmatch=True))
        secret, shown = front + sep + back, front + gender
    else:
        prefix = draw(st.sampled_from(["010", "011", "016", "017", "018", "019", "02", "031", "051", "070"]))
        middle = draw(st.from_regex(r"[1-9][0-9]{2,3}" if prefix.startswith("01") else r"[2-9][0-9]{2,3}", fullmatch=True))
        last = draw(st.from_regex(r"[0-9]{4}", fullmatch=True))
        secret, shown = prefix + sep + middle + sep + last, prefix + last
        if prefix.startswith("01") and draw(st.integers(0, 4)) == 0:
            secret, shown = f"+82{sep or ' '}{prefix[1:]}{sep}{middle}{sep}{last}", "82" + prefix[1:] + last
    return draw(_in_answer(_width(secret, draw(st.booleans())))), shown


@_fast
@given(_batch(_number_case()))
def test_no_resident_or_phone_number_survives(cases):
    for answer, shown in cases:
        guarded = guard_output(answer, _pack(), with_disclaimer=False).text
        assert _digits(guarded) == shown, (answer, guarded)


_REGIONS = ["서울특별시", "서울", "부산광역시", "경기도", "세종특별자치시", "제주특별자치도", "인천광역시", "강원특별자치도"]
_CITIES = ["강남구", "분당구", "성남시", "수원시 영통구", "해운대구", "중구", "양평군", "고양시 일산동구"]
_ROADS = ["테헤란로", "세종대로", "올림픽로35길", "판교역로", "중앙로12번길", "마포대로", "해운대해변로", "도산대로", "신촌로"]
_TOWNS = ["역삼동", "삼성1동", "신사동", "봉천동", "남산리", "금곡면", "청운효자동"]
_FLATS = ["", " 101동 1203호", ", 102동 304호", " 한결아파트 101동 1203호", " 3층", " (역삼동)", ", 래미안 5동 201호"]


@st.composite
def _address(draw) -> str:
    number = str(draw(st.integers(1, 2999))) + draw(st.sampled_from(["", f"-{draw(st.integers(1, 99))}"]))
    form = draw(st.integers(0, 2))
    if form == 0:  # road-name address, with or without region and district
        where = draw(st.sampled_from(["", draw(st.sampled_from(_REGIONS)) + " "]))
        where += draw(st.sampled_from(["", draw(st.sampled_from(_CITIES)) + " "]))
        return where + draw(st.sampled_from(_ROADS)) + " " + number + draw(st.sampled_from(_FLATS))
    if form == 1:  # lot number with 번지
        where = draw(st.sampled_from(["", draw(st.sampled_from(_REGIONS)) + " " + draw(st.sampled_from(_CITIES)) + " "]))
        return where + draw(st.sampled_from(_TOWNS)) + " " + number + draw(st.sampled_from(["번지", " 번지"]))
    return draw(st.sampled_from(["", "한결아파트 ", "푸른빌라 "])) + f"{draw(st.integers(1, 999))}동 {draw(st.integers(101, 2504))}호"


@st.composite
def _birth_date(draw) -> str:
    year, month, day = draw(_birth())
    yy = f"{year % 100:02d}"
    shapes = [f"{year}년 {month}월 {day}일", f"{year}-{month:02d}-{day:02d}", f"{year}.{month:02d}.{day:02d}",
              f"{year}. {month}. {day}", f"{yy}.{month:02d}.{day:02d}", f"{yy}{month:02d}{day:02d}",
              f"{year}{month:02d}{day:02d}", f"{year}/{month:02d}/{day:02d}", f"{year}–{month:02d}–{day:02d}"]
    date = draw(st.sampled_from(shapes))
    if draw(st.booleans()):
        return date + draw(st.sampled_from(["생", " 생", "출생"]))
    cue = draw(st.sampled_from(["생년월일", "생년월일은", "생년월일:", "생일은", "출생일", "생년월일 확인 결과", "DOB",
                                 "태어난 날은", "고객님 생년월일이"]))
    return cue + draw(st.sampled_from([" ", "", ": "])) + date


@st.composite
def _address_or_birth_case(draw) -> str:
    if draw(st.booleans()):
        return draw(_in_answer(draw(_address()), glue_before=False))
    return draw(_in_answer(_width(draw(_birth_date()), draw(st.integers(0, 4)) == 0)))


@_fast
@given(_batch(_address_or_birth_case()))
def test_no_address_or_birth_date_survives(cases):
    for answer in cases:
        guarded = guard_output(answer, _pack(), with_disclaimer=False).text
        assert _digits(guarded) == "", (answer, guarded)


@pytest.mark.parametrize("answer", ["DOB: 2009. 12. 9를 확인했습니다", "생년월일은 2011.10.5입니다", "생일 2003-11-7 입니다"])
def test_a_birth_date_with_a_one_digit_day_is_masked_whole(pack, answer):
    """The skeleton's date shape must not take "200912" out of "2009. 12. 9" and leave the day: what
    `test_no_address_or_birth_date_survives` found in the skeleton masker before its dates had to end
    where their digits end (`redaction._birth_date`)."""
    assert _digits(guard_output(answer, pack, with_disclaimer=False).text) == ""


# --- false removal -------------------------------------------------------------------------------------

def test_false_removal_on_gold_answers(pack):
    """The gold answers (scenario turns, tasks, RAG answer phrases: `guard_eval.gold_answers`) hold no
    personal data and no id: the guardrail may change at most 1% of them."""
    from toolroute_lab.studies.guard_eval import gold_answers, output_false_removal

    answers = gold_answers()
    rate, rows = output_false_removal(pack, answers)
    changed = rows[rows["changed"]]
    print(f"\nfalse removal on {len(rows)} gold answers: {rate:.2%} ({len(changed)} changed)")
    for _, row in changed.iterrows():
        print(f"  {row['id']}: {row['answer']!r} -> {row['guarded']!r} (removed: {row['removed']!r}, "
              f"banned phrase: {row['banned']!r})")
    assert len(rows) >= 150 and rate <= 0.01


def test_matching_is_mapped_back_rather_than_normalising_the_answer():
    """NFKC of a whole answer would rewrite ordinary characters of the documents an answer quotes
    (①, ② … in the terms); the guardrail matches on the NFKC view and rewrites matches only."""
    from toolroute.agent.redaction import TextView, sub_view
    from toolroute.domains.insurance.documents import document_specs

    lines = [line for spec in document_specs() for _, body in spec.sections for line in body.splitlines() if line.strip()]
    rewritten = [line for line in lines if unicodedata.normalize("NFKC", line) != line]
    print(f"\nNFKC changes {len(rewritten)} of {len(lines)} document lines")
    assert rewritten
    assert all(sub_view(r"Z{9}", line)[0] == line for line in rewritten)
    view = TextView.of("가\u200bＢ００１은 ①")
    assert view.text == "가B001은 1" and view.span(1, 5) == (2, 6)  # the match, not the zero-width space before it

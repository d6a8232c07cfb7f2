"""The output masker finds every sensitive kind however it is written: property tests over composed
variants (spaces, line breaks, separators, Korean numerals and digit words, English digit words,
width, zero-width characters, case styles, brackets, words glued to the value), the fixed list of leaks
found so far, the stream, and ordinary answers that must stay as they are.

Each generated answer is `prefix + secret + rest` (a Korean phrase, the secret, a particle and more
Korean). Personal data is checked through the pack's masker (`pack.mask_text`): the prefix and the
rest must come back unchanged (nothing around the value is taken) and what replaced the secret may
show only the digits the domain's mask shows (`010-****-5678` shows 0105678). Ids and tool names are
checked through `guard_output`: no trace of them may survive, read in any case, width or spacing.
The filler never holds digits or Korean numerals, so that every digit in the output is accounted for;
one value in four has a word glued to it that ends or starts with a numeral syllable ("보험사",
"일까요"), and then the check is that the words around stay but for those syllables and that the
hidden digits appear nowhere (`_check_masked`).

Each kind's variants compose independent transformations, each applied or not: the digits' form
(ASCII, full width, Korean digit words, mixed digit by digit, 십/백/천 numbers, English words), the
separators between groups (dashes and look-alikes, "ㅡ", dots, slashes, spaces, line breaks with an
indent, "<br>", none), a group in markdown bold, regrouping (a space or line break inside a group),
zero-width characters anywhere, letter case and case styles (snake, kebab, camel, Pascal, upper, glued,
dotted), ids spelled with Korean letter names, brackets and backticks, and the particle glued after.
Two compositions are left out because a reader who does not know the words cannot tell the number
either: regrouping next to a glued word ("08<br>0/916<br>4/1257사이에") and a word made only of
numerals glued before a value ("오이0108272266"); see `_apart` and `_GLUED_BEFORE`.
Hypothesis draws a seeded `random.Random` per example and `PER_EXAMPLE` answers are built from it:
drawing every choice through Hypothesis costs ten times more and would not fit 10,000 answers in a
minute. `VARIANTS` answers are generated in all (11 kinds × `EXAMPLES` examples × `PER_EXAMPLE`),
deterministically (derandomize), so a run is repeatable; a failure prints the answer.
"""

from __future__ import annotations

import random
import re
import unicodedata
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolroute.agent.events import StreamGuard
from toolroute.agent.guardrails import guard_output
from toolroute.agent.pack import load_pack

EXAMPLES, PER_EXAMPLE = 40, 24
KINDS = 11
VARIANTS = KINDS * EXAMPLES * PER_EXAMPLE
_COUNTS: dict[str, int] = {}


@lru_cache(maxsize=None)
def _pack(name: str = "insurance"):
    return load_pack(name)


def _settings(test):
    return settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))(test)


# --- reading the output as a person would --------------------------------------------------------------

_NUMERAL = {"공": "0", "영": "0", "빵": "0", "일": "1", "이": "2", "삼": "3", "사": "4", "오": "5", "육": "6",
            "륙": "6", "칠": "7", "팔": "8", "구": "9", "십": "#", "백": "#", "천": "#"}


_ENGLISH = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_ENGLISH_WORD = re.compile(r"(?<![a-z])(%s)(?![a-z])" % "|".join(_ENGLISH))


def _plain(text: str) -> str:
    """NFKC, case folded, invisible characters gone, Korean numerals and English digit words as digits
    (십/백/천 as "#")."""
    text = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf"
                   and c not in "\u00ad\u3164\u1160")
    text = _ENGLISH_WORD.sub(lambda m: str(_ENGLISH.index(m.group(1))), text.casefold())
    return "".join(_NUMERAL.get(c, c) for c in text)


def digits_of(text: str) -> str:
    return "".join(c for c in _plain(text) if c.isdigit() or c == "#")


def squeezed(text: str) -> str:
    """Letters and digits only, as read: "B 0 0 1", "Ｂ００１", "b\u200b001" and "B공공일" all read b001."""
    return re.sub(r"[^a-z0-9#]", "", _plain(text))


# --- building answers -----------------------------------------------------------------------------------

_NUMERAL_CHARS = set(_NUMERAL) | {"생"}  # no numerals in the filler, nor a birth cue
_WORDS = ["고객님", "보험료", "계약", "확인", "안내", "드리겠습니다", "가입", "상품", "보장", "내용", "조회", "결과",
          "현재", "유지", "중인", "서류", "필요합니다", "고맙습니다", "말씀", "주시면", "담당자", "연락", "예정", "납입",
          "기간", "만기", "특약", "추가", "어머님", "아버님", "상담", "진행", "하겠습니다", "네", "그리고", "또한"]
_HANGUL = [chr(c) for c in range(0xAC00, 0xD7A4) if chr(c) not in _NUMERAL_CHARS]


def _phrase(rng: random.Random) -> str:
    """One or two words, or a made-up word of random syllables."""
    kind = rng.randrange(3)
    if kind == 2:
        return "".join(rng.choice(_HANGUL) for _ in range(rng.randint(1, 4)))
    return " ".join(rng.choice(_WORDS) for _ in range(kind + 1))
# Particles and endings glued to a value; 이, 이고, 이에요 … start with a Korean numeral
_PARTICLES = ["", "은", "는", "이", "가", "을", "를", "로", "으로", "님", "입니다", "의", "에", "에서", "과", "와", "도",
              "이에요", "예요", "이고", "이며", "인데", "이라서", "요"]
_BEFORE = ["", " ", "(", "「", "'", '"', ": ", "\n", "- ", " [", "“"]
_AFTER = ["", ".", ",", "!", "?", ")", "」", "'", '"', "…", "~", "”", "\n"]
_ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
_FULL = {c: chr(ord(c) + 0xFEE0) for c in "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_.@"}
_KOREAN_DIGIT = dict(zip("0123456789", "공일이삼사오육칠팔구"))
# Between the groups of a number
_GROUP_SEPARATORS = ["", "-", " ", "–", "—", ".", " - ", "‐", "−", "－", "·", "  ", "\n", "-\n", " \n", "/", "_",
                     "ㅡ", "<br>", "<br/>", "-\n    ", " -\n  ", "\r\n", "\u3000", "\u00a0"]
_REGROUP = [" ", "\n", "  ", " \n", "<br>", "\n  "]  # inside a group: a number written in other groups
# Words glued to a value that end (before it) or start (after it) with a Korean numeral syllable: the
# masker must tell the word from the number ("보험사공일공-…", "…칠칠팔팔일까요")
# (Not words made only of numerals, such as 사이 or 오이, before a value: "오이0108272266" is 오이 + a phone
# number or 52010827… to the masker as to a reader who does not know the words.)
_GLUED_BEFORE = ["보험사", "회사", "매일", "검사", "통일", "상담사", "영업점", "조사", "오늘이", "구매일"]
# (Not endings that read as a digit and a particle as well: "…칠칠팔구요" is 7789 and 요, or 778 and 구요.)
_GLUED_AFTER = ["일까요", "일지도", "일자로", "사이에", "오면", "육회", "삼촌께"]  # 이에요, 이고 …: see _PARTICLES


def _context(rng: random.Random, glue: bool = False) -> tuple[str, str]:
    """(prefix, rest) around a value; with `glue`, one time in four a word ending or starting with a
    Korean numeral syllable is glued to it."""
    before = rng.choice(_BEFORE)
    prefix = _phrase(rng) + (before if before else " ")
    rest = rng.choice(_PARTICLES) + rng.choice(_AFTER) + " " + _phrase(rng)
    if glue and rng.randint(0, 3) == 0:
        if rng.random() < 0.5:
            prefix = _phrase(rng) + " " + rng.choice(_GLUED_BEFORE)
        else:
            rest = rng.choice(_GLUED_AFTER) + rng.choice(_AFTER) + " " + _phrase(rng)
    return prefix, rest


def _unambiguous(secret: str, rest: str) -> str:
    """`rest`, made unambiguous after a value in Korean numerals: "…칠칠이에요" reads as …77 and the
    particle 이에요 (the masker reads it so too), "…삼천구십이에요" as 3092 or 3090 이에요; such a value
    is followed by 을 instead."""
    secret = secret.rstrip("".join(_ZERO_WIDTH))
    if rest.lstrip().startswith(("생", "출생")):  # a birth date's cue after it
        return rest
    if secret.endswith("이") and re.match(r"[고며에예라나랑었지면니다란야여]|[^가-힣]|$", rest):
        return "을" + rest
    if secret[-1:] in ("십", "백", "천") and rest.startswith("이"):  # "삼천구십이에요": 3092 or 3090 이에요
        return "을" + rest
    return rest


def _korean_number(n: int) -> str:
    """1234 → 천이백삼십사 (십/백/천 with digit words, 일 left out before a unit)."""
    out = []
    for unit, word in ((1000, "천"), (100, "백"), (10, "십")):
        digit, n = divmod(n, unit)
        if digit:
            out.append(("" if digit == 1 else _KOREAN_DIGIT[str(digit)]) + word)
    if n:
        out.append(_KOREAN_DIGIT[str(n)])
    return "".join(out)


def _digits_written(rng: random.Random, group: str, style: str) -> str:
    """One group of digits in ASCII, full width, Korean digit words, or mixed digit by digit."""
    if style == "positional" and group[0] != "0" and len(group) <= 4:
        return _korean_number(int(group))
    if style == "english":
        words = [_ENGLISH[int(d)] for d in group]
        words = [w.capitalize() if rng.randint(0, 3) == 0 else w for w in words]
        return rng.choice([" ", "-", " "]).join(words)
    mixed = rng.randint(0, 3 ** len(group) - 1) if style not in ("ascii", "full", "korean") else 0
    zero = rng.choice(["공", "공", "영", "빵"])
    out = []
    for digit in group:
        how = style if style in ("ascii", "full", "korean") else ("ascii", "full", "korean")[mixed % 3]
        mixed //= 3
        if how == "full":
            out.append(_FULL[digit])
        elif how == "korean":
            out.append(zero if digit == "0" else _KOREAN_DIGIT[digit])
        else:
            out.append(digit)
    return "".join(out)


def _invisible(rng: random.Random, text: str) -> str:
    """Zero-width characters put anywhere in `text`, one time in four."""
    if len(text) < 2 or rng.randint(0, 3):
        return text
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(1, len(text) - 1)
        text = text[:at] + rng.choice(_ZERO_WIDTH) + text[at:]
    return text


_STYLES = ["ascii", "ascii", "full", "korean", "korean", "mixed", "positional", "english"]


def _number(rng: random.Random, groups: list[str], regroup: bool = True, separators: list[str] | None = None,
            styles: list[str] = _STYLES) -> str:
    """`groups` of digits written one way: the digits' style (English digit words joined by spaces or
    hyphens), the separators between the groups (one for all or each its own), sometimes regrouped by
    spaces or line breaks inside a group, sometimes a group in markdown bold, sometimes zero-width
    characters anywhere."""
    style = rng.choice(styles)
    pool = separators or _GROUP_SEPARATORS
    if style == "english":  # a lone space or hyphen joins the words of one group ("zero one zero")
        pool = [p for p in pool if p not in (" ", "-", "\u3000", "\u00a0")] or [" - "]
    one = rng.choice(pool)
    written = []
    for group in groups:
        part = _digits_written(rng, group, style)
        spelled = any(c in "십백천" for c in part) or style == "english"  # a number word is not split
        if regroup and not spelled and len(part) > 1 and rng.randint(0, 3) == 0:
            at = rng.randint(1, len(part) - 1)
            part = part[:at] + rng.choice(_REGROUP) + part[at:]
        written.append(part)
    if len(written) > 2 and rng.randint(0, 7) == 0:  # markdown bold around a middle group
        at = rng.randint(1, len(written) - 2)
        written[at] = f"**{written[at]}**"
    text = written[0]
    for before, part in zip(written, written[1:]):
        separator = one if rng.random() < 0.5 else rng.choice(pool)
        if not separator and any(c in "십백천" for c in before + part[:1]):
            separator = " "  # "사천사십오천이백": 4045, 200 or 4040, 5200? Glued number words are not read alike
        text += separator + part
    return _invisible(rng, text)


def _read_positional(text: str) -> str:
    """Korean numbers written with 십/백/천 ("육천삼백구") as digits, for `_check_masked`'s leak check."""
    def number(m: re.Match) -> str:
        total = 0
        for digit, unit in re.findall(r"([일이삼사오육칠팔구]?)([천백십]|$)", m.group()):
            value = int(_NUMERAL[digit]) if digit else (1 if unit else 0)
            total += value * {"천": 1000, "백": 100, "십": 10, "": 1}[unit]
        return str(total)
    return re.sub(r"(?:[일이삼사오육칠팔구]?천)?(?:[일이삼사오육칠팔구]?백)?(?:[일이삼사오육칠팔구]?십)?[일이삼사오육칠팔구]?",
                  lambda m: number(m) if re.search("[천백십]", m.group()) else m.group(), _plain(text))


def _glued(prefix: str, rest: str) -> tuple[str, str] | None:
    """For a value with a word glued to it (`_context`): the prefix and rest without the numeral
    syllables next to the value, which the masker may read as part of the number; else None."""
    for word in _GLUED_BEFORE:
        if prefix.endswith(word):
            return prefix.rstrip("".join(_NUMERAL)), rest
    for word in _GLUED_AFTER:
        if rest.startswith(word):
            return prefix, rest.lstrip("".join(_NUMERAL))
    return None


def _apart(prefix: str, rest: str) -> bool:
    """May a value between `prefix` and `rest` be regrouped (a space or line break inside a group)? Not
    with a word glued to it: "…1257사이에" after "08<br>0/916<br>4/" is a landline number and 사이에,
    or a resident number 080916-4125742 and 에, and the masker may take either."""
    return _glued(prefix, rest) is None


def _check_masked(kind: str, cases: list[tuple[str, str, str, str, str]]) -> None:
    """Each case (prefix, secret, rest, shown digits, hidden digits) through the pack's masker: the
    prefix and rest unchanged, only the `shown` digits left of the value. With a word glued to the value
    whose numeral syllables may as well be digits of it ("사이공일공 …" is 사이 + 010 … or 42010 …), the
    words around stay but for those syllables and the `hidden` digits are nowhere in the output."""
    pack = _pack()
    for prefix, secret, rest, shown, hidden in cases:
        rest = _unambiguous(secret, rest)
        answer = prefix + secret + rest
        masked = pack.mask_text(answer)
        glued = _glued(prefix, rest)
        if glued is not None:
            outer_prefix, outer_rest = glued
            assert masked.startswith(outer_prefix) and masked.endswith(outer_rest), (answer, masked)
            def read(text: str) -> str:
                return re.sub(r"\D", "", _read_positional(text))
            allowed = read(prefix + shown + rest).count(hidden)  # what the words and the mask show anyway
            assert len(hidden) < 4 or read(masked).count(hidden) <= allowed, (answer, masked)
            continue
        assert masked.startswith(prefix) and masked.endswith(rest), (answer, masked)
        middle = masked[len(prefix):len(masked) - len(rest)]
        if kind == "birth_date":  # the date's own words stay: "****년 *월 *일"
            middle = re.sub("[년월]", "", middle).removesuffix("일")
        assert digits_of(middle) == shown, (answer, masked)
    _COUNTS[kind] = _COUNTS.get(kind, 0) + len(cases)


def _digit_string(rng: random.Random, n: int, first: str = "0123456789") -> str:
    rest = f"{rng.randint(0, 10 ** (n - 1) - 1):0{n - 1}d}" if n > 1 else ""
    return rng.choice(first) + rest


# --- personal data --------------------------------------------------------------------------------------

def _resident(rng: random.Random):
    year, month, day = rng.randint(1940, 2009), rng.randint(1, 12), rng.randint(1, 28)
    front = f"{year % 100:02d}{month:02d}{day:02d}"
    sex = str(rng.randint(1, 8))
    back = _digit_string(rng, 6)
    prefix, rest = _context(rng, glue=True)
    return prefix, _number(rng, [front, sex + back], _apart(prefix, rest)), rest, front + sex, back


@_settings
@given(st.randoms(use_true_random=True))
def test_resident_numbers(rng):
    cases = [_resident(rng) for _ in range(PER_EXAMPLE)]
    _check_masked("resident_number", cases)


def _mobile(rng: random.Random):
    area = rng.choice(["010", "011", "016", "017", "018", "019"])
    middle = _digit_string(rng, rng.choice([3, 4]), "123456789")
    last = _digit_string(rng, 4)
    prefix, rest = _context(rng, glue=True)
    return prefix, _number(rng, [area, middle, last], _apart(prefix, rest)), rest, area + last, middle


@_settings
@given(st.randoms(use_true_random=True))
def test_mobile_numbers(rng):
    cases = [_mobile(rng) for _ in range(PER_EXAMPLE)]
    _check_masked("mobile", cases)


def _landline(rng: random.Random):
    area = rng.choice(["02", "031", "032", "033", "041", "042", "043", "051", "052", "053", "054", "055",
                                 "061", "062", "063", "064", "070", "080", "0505"])
    middle = _digit_string(rng, rng.choice([3, 4]), "25679")  # 3780, 810, 420 …: the branches' public numbers
    last = _digit_string(rng, 4)
    prefix, rest = _context(rng, glue=True)
    secret = _number(rng, [area, middle, last], _apart(prefix, rest))
    if area == "02" and rng.randint(0, 3) == 0:  # "(02) 123-4567"
        secret = "(" + _number(rng, [area], regroup=False) + ")" + rng.choice(["", " "]) \
            + _number(rng, [middle, last], _apart(prefix, rest))
    return prefix, secret, rest, area + last, middle


@_settings
@given(st.randoms(use_true_random=True))
def test_landline_numbers(rng):
    cases = [_landline(rng) for _ in range(PER_EXAMPLE)]
    _check_masked("landline", cases)


def _international(rng: random.Random):
    area = rng.choice(["10", "10", "11", "2", "31", "51", "70"])
    middle = _digit_string(rng, rng.choice([3, 4]), "123456789")
    last = _digit_string(rng, 4)
    lead = rng.choice(["+", "+", "+ ", "00"])
    prefix, rest = _context(rng, glue=True)
    apart = _apart(prefix, rest)
    if rng.randint(0, 4) == 0:  # +82 (0)10 …
        number = _number(rng, ["82"], apart) + rng.choice(["(0)", " (0)", " (0) "]) + _number(rng, [area, middle, last], apart)
    else:
        number = _number(rng, ["82", area, middle, last], apart)
    return prefix, lead + number, rest, "82" + area + last, middle


@_settings
@given(st.randoms(use_true_random=True))
def test_international_numbers(rng):
    cases = [_international(rng) for _ in range(PER_EXAMPLE)]
    _check_masked("international", cases)


def _luhn_complete(body: str) -> str:
    total = 0
    for i, char in enumerate(reversed(body)):
        n = int(char) * (1 if i % 2 else 2)
        total += n - 9 if n > 9 else n
    return body + str((10 - total % 10) % 10)


def _card(rng: random.Random):
    number = _luhn_complete(_digit_string(rng, 15, "3456"))
    groups = [number[i:i + 4] for i in range(0, 16, 4)]
    prefix, rest = _context(rng, glue=True)
    return prefix, _number(rng, groups, _apart(prefix, rest)), rest, number[:4] + number[-4:], number[4:12]


@_settings
@given(st.randoms(use_true_random=True))
def test_card_numbers(rng):
    cases = [_card(rng) for _ in range(PER_EXAMPLE)]
    _check_masked("card", cases)


_ACCOUNT_CUES = ["계좌번호 ", "계좌번호는 ", "계좌: ", "통장번호 ", "입금 계좌는 ", "계좌 번호: ", "통장 "]


def _account(rng: random.Random):
    """An account number after a cue (any grouping), or in 3-4 dash-joined groups (`ref_privacy.yaml`)."""
    prefix, rest = _context(rng, glue=True)
    if rng.random() < 0.5:
        n = rng.choice([10, 11, 12, 14])
        number = _digit_string(rng, n, "1234567")  # not 0 (a phone) nor 82 (an international number)
        cut = rng.choice([0, 3, 4, 6])
        groups = [number[:cut], number[cut:]] if cut else [number]
        return prefix + rng.choice(_ACCOUNT_CUES), _number(rng, groups, _apart(prefix, rest)), rest, "", number
    lengths = [rng.randint(3, 6), rng.randint(2, 6), rng.randint(4, 7)]
    if rng.random() < 0.5:
        lengths.append(rng.randint(1, 3))
    if sum(lengths) in (13, 16):  # a resident or card number's length: masked as that
        lengths[2] += 1 if lengths[2] < 7 else -1
    groups = [_digit_string(rng, n, "1234567" if i == 0 else "0123456789") for i, n in enumerate(lengths)]
    dashes = ["-", "–", "—", "‐", "−", "－", " - ", "-\n", "- ", "ㅡ"]
    # not in English words: their own joiners (spaces, hyphens) cannot be told from the groups' dashes
    written = _number(rng, groups, regroup=False, separators=dashes, styles=[s for s in _STYLES if s != "english"])
    return prefix, written, rest, groups[0], "".join(groups[1:])


@_settings
@given(st.randoms(use_true_random=True))
def test_account_numbers(rng):
    cases = [_account(rng) for _ in range(PER_EXAMPLE)]
    _check_masked("account", cases)


_BIRTH_CUES = ["생년월일 ", "생년월일은 ", "생년월일: ", "생일은 ", "출생일 ", "생년월일 확인 결과 ", "DOB ",
               "태어난 날은 ", "고객님 생년월일이 ", "date of birth: "]


def _birth(rng: random.Random):
    """A birth date with its cue: numeric (8 or 6 digits in any groups and forms) or Korean ("1985년 3월
    2일", the numbers in digits or Korean numerals)."""
    year, month, day = rng.randint(1940, 2009), rng.randint(1, 12), rng.randint(1, 28)
    prefix, rest = _context(rng)
    suffix = rng.random() < 0.5
    if not suffix:
        prefix += rng.choice(_BIRTH_CUES)
    else:
        rest = rng.choice(["생", " 생", "출생"]) + rest
    if rng.random() < 0.5:
        long = rng.random() < 0.5
        groups = [f"{year}" if long else f"{year % 100:02d}", f"{month:02d}", f"{day:02d}"]
        separators = ["", "-", ".", "/", " ", "–", " . ", ". ", "\n", " - "]
        return prefix, _number(rng, groups, separators=separators), rest, "", ""
    style = rng.choice(["ascii", "korean", "positional", "mixed"])
    parts = []
    for value in (year, month, day):
        parts.append(_digits_written(rng, str(value), style) if style != "positional" else _korean_number(value))
    space = rng.choice(["", " "])
    return prefix, f"{parts[0]}년{space}{parts[1]}월{space}{parts[2]}일", rest, "", ""


@_settings
@given(st.randoms(use_true_random=True))
def test_birth_dates(rng):
    cases = [_birth(rng) for _ in range(PER_EXAMPLE)]
    _check_masked("birth_date", cases)


def _local(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rng.randint(3, 8)))


def _email(rng: random.Random):
    local = _local(rng) + rng.choice(["", ".", "_", "-"]) + _local(rng)
    domain = rng.choice(["example.com", "hanmail.net", "naver.com", "company.co.kr", "mail.example.org"])
    at = rng.choice(["@", "@", " @ ", "@\n", " (at) ", "[at]", "＠", " 골뱅이 "])
    dot = rng.choice([".", ".", " . ", ".\n", " (dot) "])
    written_local = local.replace(".", rng.choice([".", " . ", ".\n"]))
    if rng.random() < 0.5:
        written_local = _styled_letters(rng, written_local)
    written = written_local + at + domain.replace(".", dot)
    if rng.randint(0, 4) == 0:
        written = "".join(_FULL.get(c, c) for c in written)
    prefix, rest = _context(rng)
    return prefix, _invisible(rng, written), rest, local


@_settings
@given(st.randoms(use_true_random=True))
def test_emails(rng):
    cases = [_email(rng) for _ in range(PER_EXAMPLE)]
    pack = _pack()
    for prefix, secret, rest, local in cases:
        answer = prefix + secret + rest
        masked = pack.mask_text(answer)
        assert masked.startswith(prefix) and masked.endswith(rest), (answer, masked)
        middle = masked[len(prefix):len(masked) - len(rest)]
        hidden = squeezed(local[2:])
        assert "***@" in middle and hidden not in squeezed(middle), (answer, masked)
    _COUNTS["email"] = _COUNTS.get("email", 0) + len(cases)


# --- internal ids and tool names ------------------------------------------------------------------------

_ID_SEPARATORS = [" ", "-", "_", ".", "\n", " - ", "·", "  ", "–"]


def _styled_letters(rng: random.Random, text: str) -> str:
    upper = rng.randint(0, 2 ** len(text) - 1)
    return "".join(c.upper() if upper >> i & 1 else c.lower() for i, c in enumerate(text))


# The Korean names of the letters ids use (E, O, G and Z read as digits or words, so no id is spelled
# with them in Hangul here)
_LETTER_NAMES = {"A": "에이", "B": "비", "C": "씨", "D": "디", "F": "에프", "H": "에이치", "I": "아이", "J": "제이",
                 "K": "케이", "L": "엘", "M": "엠", "N": "엔", "P": "피", "Q": "큐", "R": "알", "S": "에스", "T": "티",
                 "U": "유", "V": "브이", "W": "더블유", "X": "엑스", "Y": "와이"}


def _hangul_id(rng: random.Random, id_text: str) -> str:
    """An id spelled with the Korean names of its letters and Korean or ASCII digits ("비공공일", "씨티
    00001", "에이에스티-에이비-공일"): letters and digits are apart only where the letters are two or
    more (one letter name before a gap is a word: "비 - 019 …")."""
    runs = re.findall(r"[A-Z]+|[0-9]+", id_text)
    out, letters = "", 0
    for run in runs:
        if run.isalpha():
            out += (rng.choice(["", " ", "-"]) if out else "") + "".join(_LETTER_NAMES[c] for c in run)
            letters = len(run)
        else:
            digits = "".join(_KOREAN_DIGIT[c] for c in run) if rng.random() < 0.7 else run
            out += (rng.choice(["", " ", "-"]) if letters > 1 else "") + digits
    return out


def _id(rng: random.Random, id_text: str, parts: list[int], hangul: bool = True) -> str:
    """An id in any case, sometimes full width, its digits sometimes Korean, sometimes spelled in Hangul
    (unless glued to a Korean word: "회사에이에스티…" is not read letter by letter), separators (at most
    one per place) where its parts meet and inside its digits, zero-width characters anywhere."""
    places = rng.randint(0, 2 ** len(id_text) - 1)  # where a separator goes
    out = ""
    for i, char in enumerate(id_text):
        if i and places >> i & 1 and (i in parts or places >> (i + len(id_text) // 2) & 1):
            out += rng.choice(_ID_SEPARATORS)
        out += char
    out = _styled_letters(rng, out)
    how = rng.choice(["ascii", "ascii", "full", "korean", "mixed", "hangul"])
    if how == "hangul" and hangul and all(c.upper() in _LETTER_NAMES for c in id_text if c.isalpha()):
        return _hangul_id(rng, id_text)
    if how == "full":
        out = "".join(_FULL.get(c, c) for c in out)
    elif how in ("korean", "mixed"):
        some = rng.randint(0, 2 ** len(out) - 1)
        out = "".join(_KOREAN_DIGIT[c] if c.isdigit() and (how == "korean" or some >> i & 1) else c for i, c in enumerate(out))
    out = _invisible(rng, out)
    return rng.choice([out, out, f"({out})", f"[{out}]", f"`{out}`"])


def _code(rng: random.Random):
    kind = rng.choice(["B", "BR", "C", "CT"])
    if kind == "B":
        code, parts = f"B0{_digit_string(rng, 2)}", [1]
    elif kind == "BR":  # a rider: B001-R01
        code, parts = f"B0{_digit_string(rng, 2)}R{_digit_string(rng, 2)}", [1, 4]
    elif kind == "C":
        code, parts = f"C{_digit_string(rng, 4)}", [1]
    else:
        code, parts = f"CT{_digit_string(rng, 5)}", [2]
    prefix, rest = _context(rng, glue=True)
    return prefix + _id(rng, code, parts, not "가" <= prefix[-1:] <= "힣") + rest, code, prefix + " " + rest


def _check_removed(kind: str, cases: list[tuple[str, str, str]], pack_name: str = "insurance") -> None:
    """Each case (answer, id or name, the words around it) through `guard_output`: the id is not
    readable in the output in any case, width or spacing, nor its digits (unless the words around it
    read as the same digits: "사이" is 42)."""
    for answer, secret, context in cases:
        guarded = guard_output(answer, _pack(pack_name), with_disclaimer=False).text
        assert squeezed(secret) not in squeezed(guarded), (answer, guarded)
        digits = re.sub(r"\D", "", secret)
        assert len(digits) < 2 or digits not in digits_of(guarded) or digits in digits_of(context), (answer, guarded)
    _COUNTS[kind] = _COUNTS.get(kind, 0) + len(cases)


@_settings
@given(st.randoms(use_true_random=True))
def test_product_rider_customer_and_contract_ids(rng):
    cases = [_code(rng) for _ in range(PER_EXAMPLE)]
    _check_removed("code", cases)


_STYLES = ["snake", "upper", "kebab", "camel", "pascal", "glued", "dotted", "spaced_joiner", "random", "line"]


def _name_in_style(rng: random.Random, name: str, style: str) -> str:
    parts = name.split("_")
    if style == "upper":
        return name.upper()
    if style == "kebab":
        return "-".join(parts)
    if style == "camel":
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    if style == "pascal":
        return "".join(p.capitalize() for p in parts)
    if style == "glued":
        return "".join(parts)
    if style == "dotted":
        return ".".join(parts)
    if style == "spaced_joiner":
        return rng.choice([" _ ", "_ ", " - ", "- "]).join(parts)
    if style == "random":
        return _styled_letters(rng, name)
    if style == "line":
        return rng.choice(["_\n", "-\n"]).join(parts)
    return name


def _tool_name(rng: random.Random):
    name = rng.choice(_pack().tool_names)
    written = _name_in_style(rng, name, rng.choice(_STYLES))
    if rng.randint(0, 4) == 0:
        written = "".join(_FULL.get(c, c) for c in written)
    written = _invisible(rng, written)
    written = rng.choice([written, written, f"`{written}`", f"{written}()", f"`{written}()`", f"({written})"])
    prefix, rest = _context(rng, glue=True)
    return prefix + written + rest, name, prefix + " " + rest


@_settings
@given(st.randoms(use_true_random=True))
def test_tool_names(rng):
    cases = [_tool_name(rng) for _ in range(PER_EXAMPLE)]
    _check_removed("tool_name", cases)


def _asset_id(rng: random.Random):
    letters = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(2))
    asset = f"AST{letters}{_digit_string(rng, 2)}"
    prefix, rest = _context(rng, glue=True)
    return prefix + _id(rng, asset, [3, 5], not "가" <= prefix[-1:] <= "힣") + rest, asset, prefix + " " + rest


@_settings
@given(st.randoms(use_true_random=True))
def test_threat_asset_ids(rng):
    cases = [_asset_id(rng) for _ in range(PER_EXAMPLE)]
    _check_removed("asset_id", cases, "threat")


def test_the_variants_add_up():
    """Run with the property tests above (as the file runs): they generated `VARIANTS` answers."""
    if len(_COUNTS) < KINDS:
        pytest.skip("run the whole file to count the generated variants")
    total = sum(_COUNTS.values())
    print(f"\n{total} generated variants, 0 leaks: {_COUNTS}")
    assert total >= VARIANTS >= 10_000


# --- the leaks found so far, and what must stay -----------------------------------------------------------

# (answer, what must not be readable in it afterwards, as `squeezed` reads it). Each leaked through the
# guardrail of commit 0650262 (the red-team pass of issue 37, and variants of it the tests above found).
KNOWN_LEAKS = [
    ("첫날부터암보험은 B 001입니다.", "b001"),
    ("고객번호 C 0001 확인했습니다.", "c0001"),
    ("계약 CT 00001 유지 중입니다.", "ct00001"),
    ("계약 ct-00001의 상태는 유지입니다.", "ct00001"),
    ("연락처는 공일공-이팔사일-칠칠팔팔입니다.", "2841"),
    ("연락처는 공일공 이팔사일 칠칠팔팔이에요.", "2841"),
    ("연락처는 010-이팔사일-7788입니다.", "2841"),
    ("주민번호는 칠사공팔공구-일오이삼사오육입니다.", "23456"),
    ("주민번호 740809-일오이삼사오육", "23456"),
    ("주민등록번호는 900101-1일이삼사오육이고요", "123456"),
    ("연락처는 010-2841\n7788입니다.", "2841"),
    ("연락처는 010-\n2841-7788입니다.", "2841"),
    ("연락처 0 1 0 2 8 4 1 7 7 8 8", "2841"),
    ("premiumEstimate로 계산했습니다.", "premiumestimate"),
    ("PremiumEstimate 결과 월 3만원입니다.", "premiumestimate"),
    ("premium-estimate 도구로 확인했습니다.", "premiumestimate"),
    ("customerContractLookup 결과입니다.", "customercontractlookup"),
    ("`premium_\nestimate` 결과", "premiumestimate"),
    ("카드 1234 5678\n9012 3456으로 결제", "56789012"),
    ("생년월일은 천구백팔십오년 삼월 이일입니다.", "9#8#5"),  # 구백팔십오 as `squeezed` reads it
    ("생년월일 1985 03 02", "19850302"),
    ("메일은 minsu.kim @ example.com 입니다.", "minsukim"),
    ("메일은 minsu.kim(at)example.com 입니다.", "minsukim"),
    ("계좌번호 일일공 일이삼사 오육칠팔 구공일 입니다", "1234"),
    # the issue's own examples, as written there
    ("주민번호는 900101-일이삼사오육칠입니다.", "234567"),
    ("customerSearch로 찾았습니다.", "customersearch"),
    ("customer-search 결과 1건입니다.", "customersearch"),
    # the same families, found while this masker was built (each leaked through 0650262 as well)
    ("연락처는 010-2841<br>7788입니다.", "2841"),
    ("연락처는 010ㅡ2841ㅡ7788입니다.", "2841"),
    ("연락처는 010-\n    2841-7788입니다.", "2841"),
    ("연락처는 010-**2841**-7788입니다.", "2841"),
    ("연락처는 010-28\n41-7788입니다.", "2841"),
    ("연락처는 zero one zero two eight four one seven seven eight eight입니다.", "2841"),
    ("연락처는 Zero-One-Zero, Two-Eight-Four-One, Seven-Seven-Eight-Eight입니다.", "2841"),
    ("주민번호는 nine zero zero one zero one - one two three four five six seven입니다.", "23456"),
    ("생년월일은 one nine eight five zero three zero two입니다.", "19850302"),
    ("상품 비공공일은 좋습니다.", "001"),
    ("고객 씨공공공일님 계약입니다.", "0001"),
    ("계약 씨티 공공공공일 상태", "00001"),
    ("보험사공일공-이팔사일-칠칠팔팔로 연락 주세요.", "2841"),
    ("연락처가 공일공-이팔사일-칠칠팔팔일까요?", "2841"),
    ("번호는 공일공 이팔사일 칠칠팔팔사이에 하나입니다.", "2841"),
    ("주민번호 구공공일공일 일이삼사오육칠이고요", "23456"),
    ("카드 4111 1111\n1111 1111로 결제", "11111111"),
    ("customer-contract-lookup 결과입니다.", "customercontractlookup"),
    ("PREMIUM-ESTIMATE로 계산", "premiumestimate"),
]


@pytest.mark.parametrize("answer, secret", KNOWN_LEAKS)
def test_known_leaks_are_closed(answer, secret):
    guarded = guard_output(answer, _pack(), with_disclaimer=False).text
    assert secret not in squeezed(guarded), guarded


_HEAD = "안녕하세요, 고객님. 문의하신 내용을 확인해 드리겠습니다. "
_TAIL = " 추가로 궁금하신 점이 있으시면 언제든지 말씀해 주세요. 감사합니다. 좋은 하루 보내세요."


def _streamed(text: str, rng: random.Random, pack_name: str = "insurance") -> tuple[str, str, bool]:
    """`text` through `StreamGuard` in chunks of 1 to 3 characters, as a model's tokens arrive: (what
    went out while streaming, what `finish` sent after it, whether the final answer replaced it)."""
    pack = _pack(pack_name)
    guard = StreamGuard(pack)
    out, at = [], 0
    while at < len(text):
        size = rng.randint(1, 3)
        out.append(guard.feed("m", text[at:at + size]))
        at += size
    rest, replaced = guard.finish(guard_output(text, pack, with_disclaimer=False).text)
    return "".join(out), rest, replaced


@pytest.mark.parametrize("answer, secret", KNOWN_LEAKS)
def test_known_leaks_are_closed_in_the_stream(answer, secret):
    """The same answers streamed in chunks of 1-3 characters between harmless sentences: nothing goes
    out that the guarded answer does not hold (the stream is its prefix), and no secret at all."""
    for seed in range(3):
        text = _HEAD + answer + _TAIL
        out, rest, replaced = _streamed(text, random.Random(f"{answer}{seed}"))
        assert not replaced and out + rest == guard_output(text, _pack(), with_disclaimer=False).text
        assert secret not in squeezed(out + rest), out + rest


STREAMED_PER_KIND = 40


def test_generated_variants_stream_without_leaks():
    """`STREAMED_PER_KIND` generated answers of every kind (seeded, so repeatable) streamed in chunks
    of 1-3 characters: what goes out while streaming is always a prefix of the guarded answer (with
    `HOLD_BACK` as it is, no value is let out before the masker sees it whole) and shows no secret."""
    generators = {"resident_number": _resident, "mobile": _mobile, "landline": _landline,
                  "international": _international, "card": _card, "account": _account, "birth_date": _birth}
    count = 0
    for kind, make in generators.items():
        rng = random.Random(kind)
        for _ in range(STREAMED_PER_KIND):
            prefix, secret, rest, shown, hidden = make(rng)
            text = _HEAD + prefix + secret + _unambiguous(secret, rest) + _TAIL
            out, tail, replaced = _streamed(text, rng)
            assert not replaced and out + tail == guard_output(text, _pack(), with_disclaimer=False).text, (text, out)
            if len(hidden) >= 4:
                assert hidden not in re.sub(r"\D", "", _read_positional(out)), (text, out)
            count += 1
    for kind, make, pack_name in (("code", _code, "insurance"), ("tool_name", _tool_name, "insurance"),
                                  ("asset_id", _asset_id, "threat")):
        rng = random.Random(kind)
        for _ in range(STREAMED_PER_KIND):
            answer, secret, context = make(rng)
            text = _HEAD + answer + _TAIL
            out, tail, replaced = _streamed(text, rng, pack_name)
            assert not replaced and squeezed(secret) not in squeezed(out + tail), (text, out)
            count += 1
    print(f"\n{count} generated answers streamed, 0 leaks")


@pytest.mark.parametrize("answer", [
    "이 상품은 일반암 진단 시 보장하고, 사이사이 오이구이 일일이 확인해 드리겠습니다.",
    "55세 여성 실속치매보험은 20년납 90세 만기 기준 월 17,950원이고 가입금액은 3,000만원입니다.",
    "계약일 2019-04-12 2024-09-02, 만기 2030-05-20입니다.",
    "2023-12-31 2026-12-31 1,119,300원",
    "계약일은 이천이십사년 삼월 일일이고, 이삼일 안에 서류를 보내 드립니다.",
    "구로구 오류동 지점에서 오후 이시에 상담 가능합니다.",
    "대표 고객센터 1588-7240, 보험금 청구 1588-7241 / 해외 +82-2-3780-7240입니다.",
    "부산 고객플라자는 051-810-7240, 강남 고객플라자는 02-3780-7100입니다.",
    "900101-1****** 010-****-5678",
    "사망보험금 1억 2천만원, 입원 일당 3만원, 수술비 1회 100만원입니다.",
    "premium estimate를 다시 요청하셨네요. 플랜 C와 B형 간염 보장도 안내드립니다.",
    "질병코드 C73 유사암은 일반암의 20%, C00-C97 범위입니다.",
    "1985년생 고객은 가입 가능하고, 생년월일이 필요합니다.",
])
def test_ordinary_answers_stay(answer):
    assert guard_output(answer, _pack(), with_disclaimer=False).text == answer


def test_speed_of_guard_output_on_a_typical_answer():
    """Prints (asserts nothing) the time `guard_output` takes on a typical answer of about 500 characters
    with a product code, a rider, a tool name, a phone number, dates and amounts."""
    import statistics
    import time

    answer = ("고객님, 문의하신 첫날부터암보험(B001) 기준으로 안내드립니다. 55세 여성, 20년납 90세 만기 기준 월 보험료는 "
              "26,300원이며 가입금액은 3,000만원입니다. 암주요치료비 특약(B001-R01)을 추가하시면 월 1,800원이 더해집니다. "
              "계약일 2024-03-02, 다음 납입일은 2024년 4월 2일입니다. premium_estimate 결과와 같이 갱신 시 보험료가 오를 수 "
              "있습니다. 담당 설계사 연락처는 010-2841-7788이고, 고객센터 1588-7240으로도 문의하실 수 있습니다. 보험금 청구는 "
              "진단서와 입원확인서가 필요하며, 청구일로부터 3영업일 이내 지급됩니다. 유사암은 일반암의 20%를 지급하고, 1년 미만 "
              "진단 시 50%를 지급합니다. 해지환급금은 납입기간 중 해지 시 납입한 보험료보다 적거나 없을 수 있으니 유의해 주세요. "
              "자세한 내용은 약관을 확인해 주세요. 추가로 궁금하신 점은 말씀해 주세요.")
    pack = _pack()
    guard_output(answer, pack)
    times = []
    for i in range(50):
        text = f"{answer} ({i})"  # a new text each time: no cached view
        start = time.perf_counter()
        guard_output(text, pack)
        times.append((time.perf_counter() - start) * 1000)
    print(f"\nguard_output on a {len(answer)}-character answer: median {statistics.median(times):.1f} ms "
          f"(50 runs, max {max(times):.1f} ms)")


def test_person_names_in_any_spacing():
    """`redaction.mask_values` (the masking of a turn's known person names, proposed for
    `output_policy.mask_known`, which replaces exact strings) finds the pack's customer names written
    with spaces, line breaks or invisible characters between their syllables: 500 seeded variants."""
    from toolroute.agent.output_policy import mask_name
    from toolroute.agent.redaction import mask_values
    from toolroute.domains.insurance.customers import _CUSTOMERS

    names = [row[1] for row in _CUSTOMERS]
    rng = random.Random("names")
    for _ in range(500):
        name = rng.choice(names)
        known = {n: mask_name(n) for n in rng.sample(names, 3) + [name]}
        written = name[0]
        for char in name[1:]:
            written += rng.choice(["", "", " ", "  ", "\n", "\u200b", "\u00a0", "\u2060"]) + char
        prefix, rest = _context(rng)
        masked = mask_values(prefix + written + rest, known)
        assert name not in re.sub(r"\s", "", _plain(masked)), (prefix + written + rest, masked)
        assert masked.startswith(prefix) and masked.endswith(rest), (prefix + written + rest, masked)


def test_the_docs_quote_these_counts():
    """docs/agent.md states the generated, streamed and fixed counts of this file."""
    from toolroute.config import ROOT

    text = " ".join((ROOT / "docs" / "agent.md").read_text(encoding="utf-8").split())
    assert f"{VARIANTS:,} variants with 0 leaks" in text
    assert f"{STREAMED_PER_KIND * 10} generated answers streamed" in text  # 7 number kinds + codes, tool names, asset ids
    assert f"the {len(KNOWN_LEAKS)} leaks found so far" in text

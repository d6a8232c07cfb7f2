"""Finding personal data and internal ids in Korean answers, robust to how a model writes them.

Three things defeat plain regexes on Korean text, and each has its answer here:

- `\\b` finds no boundary between an ASCII id and the Hangul particle glued to it ("B001은",
  "premium_estimate로"): Hangul counts as a word character. Ids are bounded by lookarounds on
  `[A-Za-z0-9_]` instead (`ascii_bounded`, `ascii_boundaries` for a pattern written with `\\b`).
- The same digits and letters have many code points: full-width "０１０", "Ｂ００１", "－", zero-width
  spaces between characters. Matching runs on an NFKC view of the text with zero-width characters
  dropped (`TextView`), and each match is mapped back to the span of the original it came from, so
  the rest of the answer is left exactly as written (NFKC of a whole answer would rewrite ordinary
  characters such as "①", "㈜", "～" and "…"; see `tests/unit/test_output_guard.py`).
- A resident or phone number can be split by any separator (space, hyphen, en/em dash, dot, none);
  addresses and birth dates have Korean shapes ("테헤란로 123", "12-3번지", "101동 1203호",
  "1985년 3월 2일생"). `PII_RULES` names each shape; a date is a birth date only when the text says
  so (a cue such as 생년월일 before it, or 생 right after it), so contract and payment dates stay.

Masks keep the shape the domain's own masking uses (`010-****-5678`, `900101-1******`): digits of a
birth date become `*`, an address becomes `[주소]`. `public` strings (a company's published phone
numbers and branch addresses) are not personal data and are never masked.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

ASCII_WORD = "A-Za-z0-9_"
_ZERO_WIDTH = set("\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e")


def ascii_bounded(core: str) -> str:
    """`core` as a whole ASCII token: no ASCII letter or underscore right before or after it, and no
    digit touching a digit of it (Hangul, spaces, punctuation may touch it; so may a digit next to a
    letter: "premium_estimate55세" holds the tool name, "B0015" does not hold "B001")."""
    digit_run = r"(?!(?<=[0-9])[0-9])"
    return rf"(?<![A-Za-z_]){digit_run}(?:{core})(?![A-Za-z_]){digit_run}"


_BOUNDARY = rf"(?:(?<![{ASCII_WORD}])(?=[{ASCII_WORD}])|(?<=[{ASCII_WORD}])(?![{ASCII_WORD}]))"


def ascii_boundaries(pattern: str) -> str:
    """`pattern` with each `\\b` (outside character classes) made an ASCII word boundary, so a pack's
    `\\bAST-[A-Z]{2}-\\d{2}\\b` also matches before a Hangul particle."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            pair = pattern[i:i + 2]
            out.append(_BOUNDARY if pair == "\\b" and not in_class else pair)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
            if pattern[i + 1:i + 2] == "]" or pattern[i + 1:i + 3] == "^]":  # a literal ] first in a class
                j = i + (2 if pattern[i + 1] == "]" else 3)
                out.append(pattern[i:j])
                i = j
                continue
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


# --- the normalised view -------------------------------------------------------------------------------

@dataclass(frozen=True)
class TextView:
    """NFKC of `original`, character by character, zero-width characters dropped; `origin[i]` is the
    index in `original` of the character view character `i` came from."""

    original: str
    text: str
    origin: tuple[int, ...]

    @classmethod
    def of(cls, original: str) -> "TextView":
        chars: list[str] = []
        origin: list[int] = []
        for index, char in enumerate(original):
            if char in _ZERO_WIDTH:
                continue
            normal = unicodedata.normalize("NFKC", char) if not char.isascii() else char
            chars.append(normal)
            origin.extend([index] * len(normal))
        return cls(original, "".join(chars), tuple(origin))

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of `original` that view span [start, end) came from (whole original characters,
        with the zero-width characters inside it)."""
        if start >= end:
            at = self.origin[start] if start < len(self.origin) else len(self.original)
            return at, at
        return self.origin[start], self.origin[end - 1] + 1


Replacement = Callable[[re.Match], str]


def sub_view(pattern: re.Pattern | str, text: str, repl: str | Replacement = "",
             keep: Callable[[re.Match], bool] | None = None) -> tuple[str, int]:
    """`re.sub` on the NFKC view of `text`, writing replacements into the original: the characters no
    match touches are unchanged. `repl` is a template or a function of the view's match; a match for
    which `keep(match)` is true is left. Returns the new text and the number of replacements."""
    regex = re.compile(pattern) if isinstance(pattern, str) else pattern
    view = TextView.of(text)
    out, last, count = [], 0, 0
    for match in regex.finditer(view.text):
        if match.start() == match.end() or (keep is not None and keep(match)):
            continue
        start, end = view.span(match.start(), match.end())
        if start < last:  # two view matches inside one original character: the first one wins
            continue
        out.append(text[last:start])
        out.append(repl(match) if callable(repl) else match.expand(repl))
        last, count = end, count + 1
    out.append(text[last:])
    return "".join(out), count


# --- personal data -------------------------------------------------------------------------------------

# Between the groups of a resident or phone number: space, hyphen and its look-alikes, dot, slash.
_SEP = r"[ \t\-\u2010\u2011\u2012\u2013\u2014\u2015\u2212.·・_/~]{0,3}"
_YYMMDD = r"\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
_MONTH, _DAY = r"(?:0?[1-9]|1[0-2])", r"(?:0?[1-9]|[12]\d|3[01])"
_DSEP = r"\s?[\-\u2010\u2011\u2012\u2013\u2014\u2212./]\s?"

_RESIDENT = re.compile(rf"(?<!\d)(?:(\d{{6}})(?=[^\d])(?:{_SEP})|({_YYMMDD}))([1-8])\d{{6}}(?!\d)")
_MOBILE = re.compile(rf"(?<![\d+])(01[016789])(?:{_SEP})(\d{{3,4}})(?:{_SEP})(\d{{4}})(?!\d)")
_LANDLINE = re.compile(rf"(?<![\d+])\(?(02|0[3-6][1-5]|070|080|050\d?)(?:\)\s?|{_SEP})(\d{{3,4}})(?:{_SEP})(\d{{4}})(?!\d)")
_INTERNATIONAL = re.compile(rf"\+\s?82(?:{_SEP})\(?0?\)?(1[016789]|2|[3-6][1-5]|70)(?:\)\s?|{_SEP})(\d{{3,4}})(?:{_SEP})(\d{{4}})(?!\d)")
_CARD = re.compile(r"(?<!\d)(\d{4})[ \-\u2013\u2014.]?\d{4}[ \-\u2013\u2014.]?\d{4}[ \-\u2013\u2014.]?(\d{4})(?!\d)")
_EMAIL = re.compile(r"([A-Za-z0-9._%+-]{1,2})[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})")

# Birth dates: a date shape, and a cue that it is a birth date.
_DATE = (rf"(?:(?:19|20)?\d{{2}}\s?년\s?{_MONTH}\s?월\s?{_DAY}\s?일"
         rf"|(?:19|20)\d{{2}}{_DSEP}{_MONTH}{_DSEP}{_DAY}|\d{{2}}{_DSEP}{_MONTH}{_DSEP}{_DAY}"
         rf"|(?:19|20)?{_YYMMDD})")
_BIRTH_CUE = (r"(?:생년\s?월\s?일|생일|출생\s?일?|태어난\s?날|태어나신\s?날|태어난|생년|"
              r"birth\s?(?:day|date)?|date\s+of\s+birth|DOB|D\.O\.B\.?|born)")
_AFTER_CUE = r"[^\d\n.!?]{0,12}?"  # "생년월일은 ", "생년월일: ", "생년월일 확인 결과 "
_BIRTH_SUFFIX = r"\s?(?:생|출생)(?![명성산활존각기겨긴김략])"
_BIRTH = re.compile(rf"(?P<cue>{_BIRTH_CUE}{_AFTER_CUE})(?P<date>(?<!\d){_DATE}(?!\d))"
                    rf"|(?P<date2>(?<!\d){_DATE}(?!\d))(?={_BIRTH_SUFFIX})", re.IGNORECASE)

# Addresses: an anchor (road + building number, lot number with 번지, 동/호 of a flat, a district
# followed by 동 + lot) grown left over region tokens and right over building details.
_REGION = (r"(?:서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|충청북|충청남|전북|전남|전라북|전라남|"
           r"경북|경남|경상북|경상남|제주)(?:특별자치시|특별자치도|특별시|광역시|도|시)?")
_CITY = r"[가-힣]{1,5}(?:시|군|구)"
_TOWN = r"[가-힣]{1,6}\d{0,2}(?:읍|면|동|리)|[가-힣]{1,4}\d{1,2}가"
_ROAD = r"[가-힣]{1,10}(?<!으)(?:대로|로|길)(?:\s?\d{1,4}(?:번)?(?:가|길))?"
_NUMBER = r"(?:지하\s?)?\d{1,4}(?:-\d{1,4})?"
_UNIT = (r"(?:[\d,.]\d|[만천억원세살년개월일회건명배차종위등급점대%장통곳주권쪽항조초]|번(?![지길])|부(?!터)|가지|퍼센트|시간|분|"
         r"구좌|페이지|mm|cm|kg|km|[\u2010-\u2015\-~]\s?\d)")
_BUILDING = r"[가-힣A-Za-z0-9]{1,15}(?:아파트|빌라|오피스텔|맨션|타워|빌딩|하이츠|캐슬|자이|푸르지오|래미안|힐스테이트)"
_FLAT = (rf"(?:{_BUILDING}|[A-Za-z0-9]{{1,4}}\s?동|\d{{1,5}}\s?호|\d{{1,2}}\s?층|"
         r"\([가-힣0-9]{1,8}(?:동|가|리)(?:,\s?[가-힣A-Za-z0-9 ]{1,15})?\))")
_LEFT = rf"(?:(?<![가-힣])(?:{_REGION}|{_CITY}|{_TOWN}|{_BUILDING})[\s,]{{1,2}})"
_ANCHOR = (rf"(?:(?<![가-힣]){_ROAD}\s?{_NUMBER}(?:\s?번지)?(?![\d-])"
           rf"|(?<![가-힣\d])(?:{_TOWN})?\s?(?:산\s?)?\d{{1,5}}(?:-\d{{1,4}})?\s?번지"
           rf"|(?<![\d가-힣])\d{{1,4}}\s?동\s?\d{{1,5}}\s?호)")
_ADDRESS = re.compile(rf"(?P<left>{_LEFT}*)(?P<anchor>{_ANCHOR})(?P<right>(?:[\s,]{{0,2}}{_FLAT})*)")
_DISTRICT_LOT = re.compile(rf"(?:{_LEFT}*(?<![가-힣])(?:{_REGION}|{_CITY})[\s,]{{1,2}})(?:{_TOWN})\s?\d{{1,5}}-\d{{1,4}}(?!\d)"
                           rf"(?:(?:[\s,]{{0,2}}{_FLAT})*)")
_UNIT_AFTER = re.compile(_UNIT)


def _address_is_not_a_quantity(match: re.Match) -> bool:
    """A road anchor with no region before it ("보험료로 3만원" looks like "테헤란로 3") counts only when
    no unit follows its number."""
    if match.group("left") or "번지" in match.group("anchor") or "호" in match.group("anchor"):
        return True
    return not _UNIT_AFTER.match(match.string, match.end("anchor"))


def _mask_digits(text: str) -> str:
    return re.sub(r"\d", "*", text)


def _resident(m: re.Match) -> str:
    return f"{m.group(1) or m.group(2)}-{m.group(3)}******"


def _birth(m: re.Match) -> str:
    if m.group("date") is not None:
        return m.group("cue") + _mask_digits(m.group("date"))
    return _mask_digits(m.group("date2"))


@dataclass(frozen=True)
class PiiRule:
    kind: str
    pattern: re.Pattern
    mask: str | Replacement
    accept: Callable[[re.Match], bool] | None = None  # a match that fails it is no personal data


PII_RULES: list[PiiRule] = [
    PiiRule("email", _EMAIL, r"\1***@\2"),
    PiiRule("phone_number", _INTERNATIONAL, r"+82-\1-****-\3"),
    PiiRule("resident_number", _RESIDENT, _resident),
    PiiRule("card_number", _CARD, r"\1-****-****-\2"),
    PiiRule("phone_number", _MOBILE, r"\1-****-\3"),
    PiiRule("phone_number", _LANDLINE, r"\1-****-\3"),
    PiiRule("birth_date", _BIRTH, _birth),
    PiiRule("address", _ADDRESS, "[주소]", _address_is_not_a_quantity),
    PiiRule("address", _DISTRICT_LOT, "[주소]"),
]


def _squeezed(text: str) -> str:
    """`text` compared without spaces and punctuation, but with a mark where they split two numbers
    ("3780 7000" and "3780-7000" are the same, "672 3층" is not "6723층")."""
    text = re.sub(r"(?<=\d)[\s\W_]+(?=\d)", "|", unicodedata.normalize("NFKC", text))
    return re.sub(r"[^\w|]+|_", "", text)


def _is_public(key: str, public_keys: Sequence[str]) -> bool:
    """Is `key` a part of a public string that does not cut a number ("세종대로110" is a part of the head
    office's address, "세종대로1" is not)?"""
    for public in public_keys:
        for found in re.finditer(re.escape(key), public):
            before = public[found.start() - 1] if found.start() else ""
            after = public[found.end()] if found.end() < len(public) else ""
            if key and not (key[0].isdigit() and before.isdigit()) and not (key[-1].isdigit() and after.isdigit()):
                return True
    return False


def mask_personal_data(text: str, public: Sequence[str] = ()) -> tuple[str, list[str]]:
    """`text` with resident, phone and card numbers, e-mails, birth dates and street addresses masked
    (see the module docstring), and the kinds masked. A match inside one of the `public` strings
    (compared without spaces and punctuation) is kept."""
    public_keys = [_squeezed(p) for p in public if _squeezed(p)]
    kinds: list[str] = []
    for rule in PII_RULES:
        def keep(match: re.Match, rule: PiiRule = rule) -> bool:
            if rule.accept is not None and not rule.accept(match):
                return True
            return _is_public(_squeezed(match.group(0)), public_keys)
        text, count = sub_view(rule.pattern, text, rule.mask, keep)
        if count:
            kinds.append(rule.kind)
    return text, kinds


def mask_outside(text: str, public: Sequence[str], mask: Callable[[str], str]) -> str:
    """`mask` applied to the stretches of `text` between occurrences of the `public` strings, for a
    second masking pass that knows nothing of them (a domain's own patterns)."""
    literals = sorted({p for p in public if p}, key=len, reverse=True)
    if not literals:
        return mask(text)
    out, last = [], 0
    for match in re.finditer("|".join(map(re.escape, literals)), text):
        out.append(mask(text[last:match.start()]) + match.group(0))
        last = match.end()
    out.append(mask(text[last:]))
    return "".join(out)


# --- internal ids and tool names -------------------------------------------------------------------------

# A particle glued to a removed id goes with it ("B001은 …" → "…"); after a parenthesis it stays
# ("첫날부터암보험(B001)은" → "첫날부터암보험은").
PARTICLE = r"(?:으로|에게|에서|께서|님|은|는|이|가|을|를|로|의|에|와|과|도|만)"


def id_pattern(cores: Iterable[str]) -> re.Pattern:
    """One case-insensitive regex for ids or names: optional backticks, `()` after a name, the whole
    thing either in parentheses or followed by a glued particle."""
    body = "|".join(cores)
    token = rf"`?{ascii_bounded(f'(?:{body})+')}(?:\(\))?`?"  # names glued together go as one
    return re.compile(rf"\(\s*{token}\s*\)|\[\s*{token}\s*\]|{token}{PARTICLE}?(?![가-힣])|{token}", re.IGNORECASE)


def remove_ids(text: str, patterns: Sequence[str | re.Pattern]) -> tuple[str, list[str]]:
    """Each pattern removed from the NFKC view of `text`, case-insensitively, with `\\b` read as an
    ASCII boundary; returns the text and the patterns that removed something."""
    hits = []
    for pattern in patterns:
        regex = pattern if isinstance(pattern, re.Pattern) else re.compile(ascii_boundaries(pattern), re.IGNORECASE)
        text, count = sub_view(regex, text, "")
        if count:
            hits.append(regex.pattern if isinstance(pattern, re.Pattern) else pattern)
    return text, hits

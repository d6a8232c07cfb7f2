"""Finding personal data and internal ids in Korean answers on a normalised skeleton of the text.

A model can write one value in many ways: "010-2841-7788", "010 2841\\n7788", "０１０－…",
"공일공-이팔사일-칠칠팔팔", "0 1 0 2 8 4 1 …"; an id as "B001", "B 001", "Ｂ００１은"; a tool name as
premium_estimate, premiumEstimate, premium-estimate, PREMIUM_ESTIMATE. A list of written formats loses
to the next variant, so matching runs on normalised copies of the text whose every character knows the
span of the original it came from, and only the matched spans of the original are rewritten: the rest
of the answer stays exactly as written (NFKC of a whole answer would rewrite "①", "㈜", "～", "…").

- `TextView`: NFKC character by character, invisible characters (zero-width, soft hyphen, bidi and
  other format characters, Hangul fillers) dropped, every decimal digit as ASCII.
- `Skeleton`: on top of that, ids spelled with the Korean names of letters read as letters ("비공공일",
  "씨티 공공공공일"; `LETTER_NAMES`), Korean numerals and English digit words read as digits where they
  form a number (a run of at least `MIN_SPOKEN_RUN` digits, or Korean digits right after an ASCII
  letter; read digit by digit, "공일공" → 010, "zero one zero" → 010, or with 십/백/천, "천이백삼십사"
  → 1234), the separators between two ASCII letters or digits removed (whitespace and line breaks, also
  "<br>" and a literal "\\n", dashes and "ㅡ", dots, slashes, underscores, parentheses, markdown's
  asterisks, a comma between digit words; at most `MAX_GAP` marks and `MAX_SPACE` spaces in a row,
  `gap_ok`), ASCII letters lower-cased. A removed separator leaves a *break*, so does a camelCase turn;
  a digit read from words is *spoken*.
- Numbers are found on the skeleton's digit runs by the shape of their digits (`NUMBER_SHAPES`), not by
  regexes of their written forms: a candidate is a stretch of a run from one cut to another (a break,
  a turn between written and spoken digits, or the run's end: "010-1234-5678 900101-1234567" holds two
  numbers, "01012345678" glued to more digits none). Written in its usual groups (010|1234|5678,
  900101|1234567, four fours) a stretch with the shape is taken; regrouped any other way ("0 1 0 1 2
  …", "010-28\\n41-7788") it needs more evidence: a card number then passes the Luhn check and is no
  pair of dates ("2019-04-12 2024-09-02"), a resident number starts with a real date. Korean numerals
  glued to Korean words may belong to them ("보험사공일공-…", "…칠칠팔팔이에요", "…칠칠팔팔사이에"): a
  stretch one or two words shorter is weighed against the whole run (`find_numbers`).
- Ids and tool names are found on the skeleton too, bounded by breaks or by characters that are no
  ASCII letters ("B 001은" holds B001, "B0015" does not). A tool name written as plain English words
  ("premium estimate", only spaces between its parts) is left: that is how a sentence says it.
- E-mails, birth dates and addresses have Korean shapes around the digits and stay regexes
  (`PII_RULES`) on the `TextView`, widened where a model spreads them out (spaces or a line break
  around "@" and dots, "(at)"; a birth date in Korean numerals, "천구백팔십오년 삼월 이일생"). A date is
  a birth date only when the text says so (a cue such as 생년월일 before it, or 생 right after it), so
  contract and payment dates stay.

Masks keep the shape the domain's own masking uses (`010-****-5678`, `900101-1******`): digits of a
birth date become `*`, an address becomes `[주소]`. `public` strings (a company's published phone
numbers and branch addresses) are no personal data and are never masked.
"""

from __future__ import annotations

import bisect
import re
import string
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Sequence

# Invisible characters besides the format ones (category Cf): soft hyphen, combining grapheme joiner,
# Hangul fillers, Khmer and Mongolian invisible vowels / separators.
_INVISIBLE = frozenset("\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0")
_NORMAL: dict[str, str] = {}  # a non-ASCII character's NFKC form, "" for an invisible one (memo)


def _normal(char: str) -> str:
    out = _NORMAL.get(char)
    if out is None:
        if char in _INVISIBLE or unicodedata.category(char) == "Cf":
            out = ""
        else:
            out = unicodedata.normalize("NFKC", char)
            if len(out) == 1 and not out.isascii() and out.isdecimal():
                out = str(unicodedata.decimal(out))  # "٣", "३" … read as the digit they are
        if len(_NORMAL) < 100_000:
            _NORMAL[char] = out
    return out


def strip_invisible(text: str) -> str:
    """`text` without zero-width, bidi and other invisible characters: what hides inside a value (or
    reorders it on screen) goes, and a value is as long in the text as on screen."""
    if text.isascii():
        return text
    return "".join(c for c in text if c.isascii() or _normal(c))


def _apply(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, replacement) applied; an edit overlapping an earlier one is dropped."""
    out, last = [], 0
    for start, end, new in sorted(edits):
        if start < last:
            continue
        out += [text[last:start], new]
        last = end
    out.append(text[last:])
    return "".join(out)


# --- the normalised view -------------------------------------------------------------------------------

@dataclass(frozen=True)
class TextView:
    """A normalised copy of `original`: view character `i` came from `original[origin[i]:ends[i]]`."""

    original: str
    text: str
    origin: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def of(cls, original: str) -> "TextView":
        """NFKC character by character, invisible characters dropped, decimal digits as ASCII."""
        return _text_view(original)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of `original` that view span [start, end) came from (whole original characters,
        with the invisible characters inside it)."""
        if start >= end:
            at = self.origin[start] if start < len(self.origin) else len(self.original)
            return at, at
        return self.origin[start], self.ends[end - 1]

    def rewrite(self, edits: Sequence[tuple[int, int, str]]) -> "TextView":
        """This view with view span [start, end) of each edit (sorted, not overlapping) replaced; a new
        character maps to the character it replaces when the lengths agree, else to the whole span."""
        chars: list[str] = []
        origin: list[int] = []
        ends: list[int] = []
        last = 0
        for start, end, new in edits:
            chars.append(self.text[last:start])
            origin += self.origin[last:start]
            ends += self.ends[last:start]
            chars.append(new)
            if len(new) == end - start:
                origin += self.origin[start:end]
                ends += self.ends[start:end]
            else:
                a, b = self.span(start, end)
                origin += [a] * len(new)
                ends += [b] * len(new)
            last = end
        chars.append(self.text[last:])
        origin += self.origin[last:]
        ends += self.ends[last:]
        return TextView(self.original, "".join(chars), tuple(origin), tuple(ends))


@lru_cache(maxsize=16)  # the rules of one guard call look at the same text
def _text_view(original: str) -> TextView:
    if all(c.isascii() or _normal(c) == c for c in original):  # the common case: nothing to normalise
        return TextView(original, original, tuple(range(len(original))), tuple(range(1, len(original) + 1)))
    chars: list[str] = []
    origin: list[int] = []
    ends: list[int] = []
    for index, char in enumerate(original):
        normal = char if char.isascii() else _normal(char)
        chars.append(normal)
        origin += [index] * len(normal)
        ends += [index + 1] * len(normal)
    return TextView(original, "".join(chars), tuple(origin), tuple(ends))


Replacement = Callable[[re.Match], str]


def sub_view(pattern: re.Pattern | str, text: str, repl: str | Replacement = "",
             keep: Callable[[re.Match], bool] | None = None,
             view: Callable[[str], TextView] = TextView.of) -> tuple[str, int]:
    """`re.sub` on a normalised view of `text` (`TextView.of` by default), writing replacements into
    the original: the characters no match touches are unchanged. `repl` is a template or a function of
    the view's match; a match for which `keep(match)` is true is left. Returns the new text and the
    number of replacements."""
    regex = re.compile(pattern) if isinstance(pattern, str) else pattern
    seen = view(text)
    edits = []
    for match in regex.finditer(seen.text):
        if match.start() == match.end() or (keep is not None and keep(match)):
            continue
        start, end = seen.span(match.start(), match.end())
        if edits and start < edits[-1][1]:  # two view matches inside one original character: the first wins
            continue
        edits.append((start, end, repl(match) if callable(repl) else match.expand(repl)))
    return _apply(text, edits), len(edits)


# --- Korean numerals -------------------------------------------------------------------------------------

DIGIT_WORDS = {"공": "0", "영": "0", "빵": "0", "일": "1", "이": "2", "삼": "3", "사": "4", "오": "5",
               "육": "6", "륙": "6", "칠": "7", "팔": "8", "구": "9"}
UNIT_WORDS = {"십": 10, "백": 100, "천": 1000}
_NUMERALS = "".join(DIGIT_WORDS) + "".join(UNIT_WORDS)
# English digit words ("zero one zero …"), read digit by digit like the Korean ones
ENGLISH_DIGITS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine".split())}
_ENGLISH_DIGIT = re.compile("|".join(ENGLISH_DIGITS), re.IGNORECASE)
_NUMBER_TOKEN = re.compile(rf"[0-9]+|[{_NUMERALS}]+|(?<![A-Za-z])(?:{_ENGLISH_DIGIT.pattern})+(?![A-Za-z])", re.IGNORECASE)
# A run of Korean numerals is read as digits only from this many digits on (with the ASCII digits
# among them): the length of the shortest sensitive number (a birth date 850302). Shorter runs are
# words ("이사", "일일이", "오이") unless they follow an ASCII letter ("B공공일").
MIN_SPOKEN_RUN = 6


def read_korean_number(word: str) -> str | None:
    """The digits of a Korean numeral word: read digit by digit ("공일공" → "010") or, with 십/백/천,
    as a number ("천이백삼십사" → "1234", "십이" → "12"); None for anything else ("천천", "이삼십")."""
    if not any(c in UNIT_WORDS for c in word):
        return "".join(DIGIT_WORDS[c] for c in word) if all(c in DIGIT_WORDS for c in word) else None
    total, digit, last_unit = 0, None, 10_000
    for char in word:
        if char in UNIT_WORDS:
            unit = UNIT_WORDS[char]
            if unit >= last_unit or digit == "0":
                return None
            total += int(digit or 1) * unit
            digit, last_unit = None, unit
        elif digit is None and char in DIGIT_WORDS:
            digit = DIGIT_WORDS[char]
        else:
            return None
    return str(total + int(digit or 0))


_MULTIPLIER = "[일이삼사오육칠팔구]"
# One number below 10,000; a last digit word right before a unit starts the next number
# ("사천사십오천이백" is 4040, 5200).
_SPELLED = re.compile(rf"(?:{_MULTIPLIER}?천)?(?:{_MULTIPLIER}?백)?(?:{_MULTIPLIER}?십)?(?:{_MULTIPLIER}(?![십백천]))?")


def read_korean_digits(word: str) -> list[tuple[int, int, str]] | None:
    """The numbers in a run of Korean numerals, as (start, end, digits) within `word`: each digit word
    alone, each number with 십/백/천 whole ("공일공천이백삼십사" → 공, 일, 공, 천이백삼십사 → 0, 1, 0,
    1234); None when a character is no numeral."""
    out, i = [], 0
    while i < len(word):
        spelled = _SPELLED.match(word, i)
        if spelled and any(c in UNIT_WORDS for c in spelled.group()):
            out.append((i, spelled.end(), read_korean_number(spelled.group()) or ""))
            i = spelled.end()
        elif word[i] in DIGIT_WORDS:
            out.append((i, i + 1, DIGIT_WORDS[word[i]]))
            i += 1
        else:
            return None
    return out


def _read_mixed(word: str) -> str | None:
    """ASCII digits and Korean digit words in one word ("19팔오"), or a Korean numeral word."""
    if all(c.isdigit() or c in DIGIT_WORDS for c in word):
        return "".join(DIGIT_WORDS.get(c, c) for c in word)
    return None if any(c.isdigit() for c in word) else read_korean_number(word)


# --- the skeleton ----------------------------------------------------------------------------------------

# Between two letters or digits of one value: whitespace (line breaks too, also written as "<br>",
# "&nbsp;" or a literal "\\n"), dashes and what is typed for one ("ㅡ", box-drawing lines), dots,
# slashes, underscores, parentheses ("(02)123-4567"), markdown's asterisks ("010-**2841**-7788").
# Not commas (17,950 is an amount), tildes (ranges) or colons (times).
_DASHES = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\u1173\u2500\u2501\u2043\u30fc")
_SEPARATORS = _DASHES | frozenset(".\u00b7\u30fb\u2027\u2219/_()*")
MAX_GAP = 3  # marks (non-space separators) in a row between two parts of one value ("010 - 1234", "-\n")
MAX_SPACE = 6  # and whitespace around them ("010-\n    2841": a line break and an indent)
_SPACE_TOKEN = re.compile(r"<br\s*/?>|&nbsp;|\\[nr]|\s", re.IGNORECASE)
_GAP_TOKEN = re.compile(rf"<br\s*/?>|&nbsp;|\\[nr]|[\s,{re.escape(''.join(sorted(_SEPARATORS)))}]", re.IGNORECASE)
_ASCII_LETTERS = frozenset(string.ascii_letters)
_ASCII_DIGITS = frozenset(string.digits)
_JOINT = re.compile(rf"(?<=[A-Za-z0-9])(?:{_GAP_TOKEN.pattern}){{1,{MAX_GAP + MAX_SPACE}}}(?=[A-Za-z0-9])", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _separator(char: str) -> bool:
    return char in _SEPARATORS or char.isspace()


def gap_ok(gap: str, words: bool = False) -> bool:
    """Can `gap` stand between two parts of one value: only separators, at most `MAX_GAP` marks and
    `MAX_SPACE` spaces (a "<br>" counts as one), at most two line breaks? A comma only between digits
    said in `words` ("Zero-One-Zero, Two-Eight-…"; between written digits it groups an amount)."""
    tokens = _GAP_TOKEN.findall(gap)
    if "".join(tokens) != gap or ("," in tokens and not words):
        return False
    spaces = [t for t in tokens if _SPACE_TOKEN.fullmatch(t)]
    breaks = sum(1 for t in spaces if t in "\n\r\u2028\u2029\x0b\x0c\x85" or not t.isspace())
    return len(tokens) - len(spaces) <= MAX_GAP and len(spaces) <= MAX_SPACE and breaks <= 2


def _gap_text(gap: str) -> str:
    """A removed gap as the number finder reads it: "<br>", "&nbsp;" and a literal "\\n" as whitespace."""
    return re.sub(r"<br\s*/?>|\\[nr]", "\n", re.sub("&nbsp;", " ", gap, flags=re.IGNORECASE), flags=re.IGNORECASE)


def _letter_before(text: str, index: int) -> bool:
    """Is there an ASCII letter right before `index`, or before at most `MAX_GAP` separators?"""
    start = index
    while start > 0 and index - start < MAX_GAP and _separator(text[start - 1]):
        start -= 1
    return start > 0 and text[start - 1] in _ASCII_LETTERS


# What follows a number as a particle or an ending ("…칠칠팔팔로", "…사예요"): no word starts there. A 이 or
# 일 before them may still be one ("…사이에": 사이 and 에; see `Skeleton.particle`).
_PARTICLE_STARTS = frozenset("은는가을를으로와과도의에요예입인님만께랑며고까부처보하나라야")


def _numeral_edits(text: str) -> tuple[list[tuple[int, int, str]], set[int]]:
    """(start, end, digits) for each Korean numeral or English digit word of `text` that is part of a
    number: a run of such words and ASCII digits, joined by short runs of separators (`gap_ok`), with
    at least `MIN_SPOKEN_RUN` digits, or of two or more right after an ASCII letter. Also where a
    number may start or end inside such a run besides its ends, `soft`: after its first or second word
    when it starts with Korean numerals (a word may end in them: "보험사공일공-…", "사이 9001…"), before
    its last or second-to-last word when glued to a word after it that is no particle ("…칠칠팔팔오면",
    "…사이에"), and where Korean numerals and English digit words meet ("사이four …"). Which reading
    is the number is left to the shapes (`find_numbers`)."""
    edits: list[tuple[int, int, str]] = []
    soft: set[int] = set()
    run: list[tuple[int, int, str, bool]] = []  # (start, end, digits, spoken)

    def close() -> None:
        total = sum(len(digits) for _, _, digits, _ in run)
        spoken = [piece for piece in run if piece[3]]
        if spoken and total >= MIN_SPOKEN_RUN:
            edits.extend((start, end, digits) for start, end, digits, _ in spoken)
        elif spoken and total >= 2 and _letter_before(text, run[0][0]):
            # an id's digits in Korean ("B공공일"); English words there are letters of it ("AS.T-wo-팔일")
            edits.extend((start, end, digits) for start, end, digits, _ in spoken if not text[start].isascii())
        else:
            run.clear()
            return
        if run[0][3] and not text[run[0][0]].isascii():
            soft.update(piece[0] for piece in run[1:3] if piece[3])
        after = text[run[-1][1]:run[-1][1] + 1]
        if run[-1][3] and not text[run[-1][0]].isascii() and "가" <= after <= "힣":
            if after not in _PARTICLE_STARTS:
                soft.update(piece[0] for piece in run[-2:] if piece[3] and piece is not run[0])
            elif (run[-1][2] == "2" and _PARTICLE_I.match(text, run[-1][0]) and len(run) > 2 and run[-2][3]
                  and not text[run[-2][0]].isascii()):
                soft.add(run[-2][0])  # "…사이에": the particle 이 (see `Skeleton.particle`) may end a word 사이
        for before, piece in zip(run, run[1:]):
            if before[3] and piece[3] and text[before[0]].isascii() != text[piece[0]].isascii():
                soft.add(piece[0])  # Korean numerals meet English digit words
        run.clear()

    for token in _NUMBER_TOKEN.finditer(text):
        start, word = token.start(), token.group()
        if word[0] in _ASCII_DIGITS:
            pieces = [(start, token.end(), word, False)]
        elif word[0].isascii():  # English digit words, maybe glued ("twotwo")
            pieces = [(start + m.start(), start + m.end(), ENGLISH_DIGITS[m.group().lower()], True)
                      for m in _ENGLISH_DIGIT.finditer(word)]
        elif start > 0 and text[start - 1] in _ASCII_DIGITS and word[0] in "백천" and (
                len(word) == 1 or text[token.end():token.end() + 1] in ("만", "억", "원")):
            pieces = None  # "2천", "3백만", "2천오백만원": an amount written with units, not digits
        else:
            numbers = read_korean_digits(word)
            pieces = None if numbers is None else [(start + a, start + b, digits, True) for a, b, digits in numbers]
        gap = text[run[-1][1]:start] if run else ""
        if run and (pieces is None or not gap_ok(gap, words=run[-1][3] and pieces[0][3])):
            close()
        run.extend(pieces or [])
    if run:
        close()
    return edits, soft


# The Korean names of ASCII letters, for ids spelled in Hangul ("비공공일" is B001, "씨티 00001" CT00001);
# 이 (E), 오 (O) and 지 (G, Z) are left out: they read as digits or as a word.
LETTER_NAMES = {"에이치": "h", "더블유": "w", "에이": "a", "비": "b", "씨": "c", "시": "c", "디": "d", "에프": "f",
                "아이": "i", "제이": "j", "케이": "k", "엘": "l", "엠": "m", "엔": "n", "피": "p", "큐": "q", "알": "r",
                "에스": "s", "티": "t", "유": "u", "브이": "v", "엑스": "x", "와이": "y", "제트": "z"}
_LETTER_NAMES_RUN = re.compile("(?:%s)+" % "|".join(sorted(LETTER_NAMES, key=len, reverse=True)))
_LETTER_NAME = re.compile("|".join(sorted(LETTER_NAMES, key=len, reverse=True)))
_DIGIT_OR_NUMERAL = frozenset(string.digits + _NUMERALS)


def _letter_name_edits(text: str) -> list[tuple[int, int, str]]:
    """(start, end, letter) for each Korean letter name of a chain of them that starts a word and runs
    into digits or Korean numerals ("에이에스티-에이비-공일"): an id spelled in Hangul. The ids' own
    patterns decide what is one. One pass over the runs of names (no regex backtracking)."""
    edits: list[tuple[int, int, str]] = []
    chain: list[re.Match] = []
    for run in _LETTER_NAMES_RUN.finditer(text):
        joined = bool(chain) and run.start() > chain[-1].end() and gap_ok(text[chain[-1].end():run.start()])
        if not joined:
            chain = []
            if run.start() > 0 and "가" <= text[run.start() - 1] <= "힣":
                continue  # inside a word: 서울시, 김씨
        chain.append(run)
        rest = text[run.end():run.end() + MAX_GAP + MAX_SPACE + 1]
        digit = next((i for i, c in enumerate(rest) if not _separator(c)), None)
        names = sum(len(_LETTER_NAME.findall(r.group())) for r in chain)
        if digit is not None and rest[digit] in _DIGIT_OR_NUMERAL and (digit == 0 or names > 1 and gap_ok(rest[:digit])):
            # one letter name only right before its digits ("비공공일"; "비- 019 …" is no B019)
            edits += [(r.start() + m.start(), r.start() + m.end(), LETTER_NAMES[m.group()])
                      for r in chain for m in _LETTER_NAME.finditer(r.group())]
            chain = []
    return edits


# After a spoken 이 that ends a number: what makes it a particle ("…칠칠팔팔이에요", "…5678이고", "…이 맞습니다")
# or a 일 that starts the copula's other endings ("…7788일까요", "…칠칠팔팔일지")
_PARTICLE_I = re.compile(r"이(?:[고며에예라나랑었지면니다란야여]|[^가-힣]|$)|일(?:까|지|걸|텐|듯)")


@dataclass(frozen=True)
class Skeleton:
    """The text as values are matched on it (see the module docstring): `view.text` is the skeleton,
    `gaps[i]` the separators removed right before character `i` ("" for a camelCase turn; no entry
    when nothing was removed), `spoken` the indices of digits read from Korean numerals, `soft` where
    a number may start inside Korean numerals glued to a word (see `_numeral_edits`)."""

    view: TextView
    gaps: dict[int, str]
    spoken: frozenset[int]
    soft: frozenset[int] = frozenset()

    @property
    def text(self) -> str:
        return self.view.text

    @classmethod
    def of(cls, original: str) -> "Skeleton":
        return _skeleton(original)

    def cut(self, index: int) -> bool:
        """Is there a break at `index` (or the text's end), or do digits written as digits meet digits read
        from Korean numerals there ("이4001011000000": 이 may be a word glued to the number)? Not inside
        a group of digits nor inside one Korean numeral word."""
        return (index <= 0 or index >= len(self.text) or index in self.gaps or index in self.soft
                or (index - 1 in self.spoken) != (index in self.spoken))

    def particle(self, index: int) -> bool:
        """Is character `index` a 이 read as a digit that ends its digits and reads as a particle
        ("…5678이고", "…칠칠팔팔이에요", "C칠육공팔이")?"""
        if index not in self.spoken or self.text[index] not in "12" or self.text[index + 1:index + 2] in _ASCII_DIGITS:
            return False
        at = self.view.origin[index]
        return (self.view.ends[index] == at + 1 and self.view.original[at] in "이일"
                and bool(_PARTICLE_I.match(self.view.original, at)))

    def starts_token(self, index: int) -> bool:
        """No ASCII letter right before `index`, nor a digit before a digit, unless a break (or a soft
        cut, see `_numeral_edits`) is there."""
        if index <= 0 or index in self.gaps or index in self.soft:
            return True
        before, char = self.text[index - 1], self.text[index]
        if before in _ASCII_LETTERS:
            return False
        return not (before in _ASCII_DIGITS and char in _ASCII_DIGITS
                    and (index - 1 in self.spoken) == (index in self.spoken))

    def ends_token(self, index: int) -> bool:
        if index >= len(self.text) or index in self.gaps or index in self.soft:
            return True
        before, char = self.text[index - 1], self.text[index]
        if char in _ASCII_LETTERS:
            return False
        return not (before in _ASCII_DIGITS and char in _ASCII_DIGITS and not self.particle(index)
                    and (index - 1 in self.spoken) == (index in self.spoken))


def _english_word_at(view: TextView, spoken: set[int], index: int) -> bool:
    """Is view character `index` a digit read from an English digit word?"""
    return index in spoken and view.original[view.origin[index]].isascii()


@lru_cache(maxsize=16)
def _skeleton(original: str) -> Skeleton:
    base = TextView.of(original)
    letters = _letter_name_edits(base.text)
    if letters:
        base = base.rewrite(letters)
    edits, soft_starts = _numeral_edits(base.text)
    view = base.rewrite(edits) if edits else base
    spoken, soft, shift = set(), set(), 0
    for start, end, digits in edits:
        spoken.update(range(start + shift, start + shift + len(digits)))
        if start in soft_starts:
            soft.add(start + shift)
        shift += len(digits) - (end - start)
    text = view.text
    camel = [m.start() for m in _CAMEL.finditer(text)]
    # drop the joints: keep text[last:joint.start()] for each, the joint becomes a gap
    kept: list[tuple[int, int]] = []
    gaps: dict[int, str] = {}
    last = removed = 0
    for joint in _JOINT.finditer(text):
        if not gap_ok(joint.group(), words=joint.start() - 1 in spoken and joint.end() in spoken):
            continue
        kept.append((last, joint.start()))
        removed += joint.end() - joint.start()
        if not (joint.group() in (" ", "-") and _english_word_at(view, spoken, joint.start() - 1)
                and _english_word_at(view, spoken, joint.end())):
            gaps[joint.end() - removed] = _gap_text(joint.group())
        # else: a space or hyphen between English digit words joins the words of one group, no break
        last = joint.end()
    kept.append((last, len(text)))
    if len(kept) == 1:
        new = view
    else:
        new = TextView(original, "".join(text[a:b] for a, b in kept),
                       tuple(i for a, b in kept for i in view.origin[a:b]),
                       tuple(i for a, b in kept for i in view.ends[a:b]))

    if len(kept) > 1 and (spoken or camel or soft):
        offsets, removed_before = {}, 0
        for (a, b), following in zip(kept, kept[1:] + [(len(text), len(text))]):
            for i in range(a, b):
                offsets[i] = i - removed_before
            removed_before += following[0] - b
        spoken = {offsets[i] for i in spoken if i in offsets}
        soft = {offsets[i] for i in soft if i in offsets}
        camel = [offsets[i] for i in camel if i in offsets]
    for index in camel:
        gaps.setdefault(index, "")
    return Skeleton(TextView(original, new.text.translate(_LOWER), new.origin, new.ends), gaps, frozenset(spoken),
                    frozenset(soft))


# --- numbers on the skeleton -----------------------------------------------------------------------------

_YYMMDD = r"\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])"
_VALID_YYMMDD = re.compile(_YYMMDD)
_MONTH, _DAY = r"(?:0?[1-9]|1[0-2])", r"(?:0?[1-9]|[12]\d|3[01])"
_DSEP = r"\s?[\-\u2010\u2011\u2012\u2013\u2014\u2212./]\s?"
_BIRTH_CUE = (r"(?:생년\s?월\s?일|생일|출생\s?일?|태어난\s?날|태어나신\s?날|태어난|생년|"
              r"birth\s?(?:day|date)?|date\s*of\s*birth|DOB|D\.O\.B\.?|born)")
_AFTER_CUE = r"[^\d\n.!?]{0,12}?"  # "생년월일은 ", "생년월일: ", "생년월일 확인 결과 "
_BIRTH_SUFFIX = r"\s?(?:생|출생)(?![명성산활존각기겨긴김략])"
_BIRTH_CUE_BEFORE = re.compile(rf"{_BIRTH_CUE}[^\d\n.!?]{{0,12}}$", re.IGNORECASE)
_BIRTH_AFTER = re.compile(_BIRTH_SUFFIX)
_ACCOUNT_CUE_BEFORE = re.compile(r"(?:계좌|통장)(?:\s?번호)?[^\d\n.!?]{0,12}$")


def _luhn(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        n = int(char) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _groups(digits: str, breaks: Sequence[int]) -> list[str]:
    bounds = [0, *breaks, len(digits)]
    return [digits[a:b] for a, b in zip(bounds, bounds[1:])]


def _dates(groups: list[str]) -> bool:
    """Groups that read as dates, year first ("2019", "04", "12", "2024", "09", "02")."""
    if len(groups) % 3:
        return False
    for year, month, day in zip(groups[::3], groups[1::3], groups[2::3]):
        if len(year) not in (2, 4) or len(month) > 2 or len(day) > 2 or not month or not day:
            return False
        if not (1 <= int(month) <= 12 and 1 <= int(day) <= 31):
            return False
    return True


@dataclass(frozen=True)
class Candidate:
    """A stretch [start, end) of a digit run of `skeleton`, the digits' match on a shape, and the
    breaks inside it (offsets from `start`)."""

    skeleton: Skeleton
    start: int
    end: int
    match: re.Match
    breaks: tuple[int, ...]
    regrouped: bool  # the second pass: written in other groups than the shape's usual ones

    def in_groups(self, *names: str) -> bool:
        """Are all breaks at the ends of these groups of the match (none elsewhere)?"""
        return set(self.breaks) <= {self.match.end(n) - self.start for n in names}

    def text_before(self, width: int = 48) -> str:
        """The original text before the candidate, NFKC (a cue there is read as written: the skeleton
        may have read the 일 of 생년월일 as a digit)."""
        at = self.skeleton.view.origin[self.start]
        return unicodedata.normalize("NFKC", self.skeleton.view.original[max(0, at - width):at])

    def text_after(self, width: int = 8) -> str:
        at = self.skeleton.view.ends[self.end - 1]
        return unicodedata.normalize("NFKC", self.skeleton.view.original[at:at + width])


def _plus_before(c: Candidate) -> int | None:
    """The skeleton index of a "+" right before the candidate (spaces between allowed)."""
    index = c.start - 1
    while index >= 0 and c.skeleton.text[index] == " ":
        index -= 1
    return index if index >= 0 and c.skeleton.text[index] == "+" else None


def _international(c: Candidate) -> bool:
    evidence = _plus_before(c) is not None or bool(c.match.group("lead"))
    if c.regrouped:
        return evidence
    if not c.in_groups("lead", "cc", "zero", "area", "mid"):
        return False
    return evidence or c.match.end("cc") - c.start in c.breaks  # "82-10-1234-5678" without its "+"


def _resident(c: Candidate) -> bool:
    """In its groups (900101-1234567) any six digits before the sex digit, else a real date; never after a
    "+" (that is a phone number abroad)."""
    if _plus_before(c) is not None:
        return False
    if c.breaks == (6,) and not c.regrouped:
        return True
    return (c.regrouped or not c.breaks) and bool(_VALID_YYMMDD.fullmatch(c.match.group("front")))


def _card(c: Candidate) -> bool:
    if not c.regrouped:
        return set(c.breaks) <= {4, 8, 12}
    digits = c.match.group(0)
    return _luhn(digits) and not _dates(_groups(digits, c.breaks))


def _phone(c: Candidate) -> bool:
    return c.regrouped or c.in_groups("area", "mid")


def _account_with_cue(c: Candidate) -> bool:
    return bool(_ACCOUNT_CUE_BEFORE.search(c.text_before()))


def _birth_date(c: Candidate) -> bool:
    """A date with a cue, that ends where its digits end ("2009. 12. 9" is no date 2009-12 followed by a
    9: the `_BIRTH` rule reads it whole)."""
    text, end = c.skeleton.text, c.end
    if (end < len(text) and text[end] in _ASCII_DIGITS and not c.skeleton.particle(end)
            and not c.skeleton.gaps.get(end, "x").isspace()):
        return False
    return bool(_BIRTH_CUE_BEFORE.search(c.text_before()) or _BIRTH_AFTER.match(c.text_after()))


def _account_in_groups(c: Candidate) -> bool:
    """3 or 4 groups of 3-6, 2-6, 4-7 (and 1-3) digits joined by dashes (`ref_privacy.yaml`)."""
    if c.regrouped or len(c.breaks) not in (2, 3):
        return False
    lengths = [len(g) for g in _groups(c.match.group(0), c.breaks)]
    limits = [(3, 6), (2, 6), (4, 7), (1, 3)]
    if not all(low <= n <= high for n, (low, high) in zip(lengths, limits)):
        return False
    return all(any(ch in _DASHES for ch in c.skeleton.gaps[c.start + b]) for b in c.breaks)


@dataclass(frozen=True)
class NumberShape:
    kind: str
    pattern: re.Pattern  # on the digits alone (fullmatch)
    lengths: tuple[int, int]  # of the digits
    accept: Callable[[Candidate], bool]
    mask: Callable[[Candidate], str] | None  # None: every digit of the original becomes "*"
    alone: bool = False  # only a whole run of digits (see `find_numbers`)


# In the order they are tried (each first on numbers in their usual groups, then on regrouped ones).
NUMBER_SHAPES: list[NumberShape] = [
    NumberShape("phone_number", re.compile(r"(?P<lead>00)?(?P<cc>82)(?P<zero>0?)(?P<area>1[016789]|2|[3-6][1-5]|70)"
                                           r"(?P<mid>\d{3,4})(?P<last>\d{4})"), (9, 15), _international,
                lambda c: f"+82-{c.match['area']}-****-{c.match['last']}"),
    NumberShape("resident_number", re.compile(r"(?P<front>\d{6})(?P<sex>[1-8])\d{6}"), (13, 13), _resident,
                lambda c: f"{c.match['front']}-{c.match['sex']}******"),
    NumberShape("card_number", re.compile(r"(?P<first>\d{4})\d{8}(?P<last>\d{4})"), (16, 16), _card,
                lambda c: f"{c.match['first']}-****-****-{c.match['last']}"),
    NumberShape("phone_number", re.compile(r"(?P<area>01[016789])(?P<mid>\d{3,4})(?P<last>\d{4})"), (10, 11),
                _phone, lambda c: f"{c.match['area']}-****-{c.match['last']}"),
    NumberShape("phone_number", re.compile(r"(?P<area>02|0[3-6][1-5]|070|080|050\d?)(?P<mid>\d{3,4})(?P<last>\d{4})"),
                (9, 12), _phone, lambda c: f"{c.match['area']}-****-{c.match['last']}"),
    NumberShape("account_number", re.compile(r"\d{10,14}"), (10, 14), _account_with_cue, lambda c: "*" * 10),
    NumberShape("birth_date", re.compile(rf"(?:19|20)?{_YYMMDD}"), (6, 8), _birth_date, None),
    NumberShape("account_number", re.compile(r"\d{9,22}"), (9, 22), _account_in_groups,
                lambda c: f"{_groups(c.match.group(0), c.breaks)[0]}-****-****", alone=True),
]
_LONGEST = max(shape.lengths[1] for shape in NUMBER_SHAPES)
_SHORTEST = min(shape.lengths[0] for shape in NUMBER_SHAPES)
_DIGIT_RUN = re.compile("[0-9]{%d,}" % _SHORTEST)


@lru_cache(maxsize=32)
def public_numbers(public: tuple[str, ...]) -> frozenset[str]:
    """The digits of each number in the `public` strings as the skeleton reads them, from the length of
    the shortest sensitive number on (a shorter one, such as a building number, protects nothing)."""
    return frozenset(run.group() for p in public for run in _DIGIT_RUN.finditer(Skeleton.of(p).text))


def find_numbers(skeleton: Skeleton, public: frozenset[str] = frozenset()) -> list[tuple[NumberShape | None, Candidate]]:
    """The sensitive numbers of `skeleton` as (shape, candidate), and the public ones as (None, candidate).

    From the leftmost cut of a digit run, the longest stretch with a shape is taken (a shape earlier
    in `NUMBER_SHAPES` first for the same stretch), first among the numbers written in their usual
    groups, then among regrouped ones."""
    found: list[tuple[NumberShape | None, Candidate]] = []
    text, gaps, spoken, view = skeleton.text, skeleton.gaps, skeleton.spoken, skeleton.view
    for run in _DIGIT_RUN.finditer(text):
        first, end_of_run = run.span()
        last = end_of_run - 1
        # A spoken 이 that ends the run may be a particle: a stretch may end before it, and one that
        # holds it is tried after the others from the same start.
        particle = skeleton.particle(last)
        cuts = [p for p in range(first, end_of_run + 1)
                if p in (first, end_of_run) or skeleton.cut(p) or (particle and p == last)]
        # A regrouped number stands apart: it starts and ends at the run's ends or at spaces or line
        # breaks, never inside a group written with dashes or dots ("2019-04-12 2024-09-02" holds no
        # phone number "0412202409").
        apart = {p for p in cuts if p in (first, end_of_run) or (particle and p == last) or gaps.get(p, "x").isspace()}
        whole = {first, end_of_run, last if particle else -1}
        used = bytearray(end_of_run - first)  # 1 where a found number lies

        def free(start: int, end: int) -> bool:
            return not any(used[start - first:end - first])

        def take(start: int, end: int) -> None:
            used[start - first:end - first] = b"\x01" * (end - start)

        def candidate(start: int, end: int, match: re.Match, regrouped: bool) -> Candidate:
            breaks = tuple(p - start for p in range(start + 1, end) if p in gaps)
            return Candidate(skeleton, start, end, match, breaks, regrouped)

        def ends(i: int, regrouped: bool) -> list[int]:
            start = cuts[i]
            reach = bisect.bisect_right(cuts, start + _LONGEST, i + 1)  # cuts are sorted: look no further
            out = [e for e in reversed(cuts[i + 1:reach]) if not regrouped or e in apart]
            return [e for e in out if not (particle and e == end_of_run)] + [e for e in out if particle and e == end_of_run]

        if public:
            for i, start in enumerate(cuts):
                for end in ends(i, False):
                    if text[start:end] in public and free(start, end):
                        found.append((None, candidate(start, end, re.fullmatch(r"\d+", text[start:end]), False)))
                        take(start, end)
        # The whole run first: a number standing alone is one number, not the naturally grouped part of
        # it ("010/5761816 5" is 010-5761-8165, not 010-576-1816). Where the run begins or ends with words
        # that may belong to the Korean around it (`Skeleton.soft`, a final particle 이, a turn between
        # written and spoken digits: "보험사공일공-…", "…칠칠팔팔이에요", "이4001011000000"), a stretch a
        # word or two shorter is a reading too. The readings rank by their evidence, the particle's
        # readings (g = 0) before the others (g = 1) on each rank:
        #   0. written as the whole run, or in all the groups of its shape (from the run's start or after
        #      a word glued before it), in its usual groups;
        #   1. the whole run regrouped with a break at one of its groups, or as one group among words
        #      that may not be its digits;
        #   then, after the next group's best: a shorter stretch between word ends, the whole run
        #   regrouped in none of its groups, any shorter stretch.
        # The weakest shape (an account in dash groups) of the whole run gives way only to a reading in
        # all its groups after a word glued before it.
        inner = [p for p in cuts if first < p < end_of_run and (p in skeleton.soft or (p - 1 in spoken) != (p in spoken))]
        starts = [first] + [p for p in inner if p - first <= 2]
        stops = [end_of_run] + [p for p in reversed(inner) if end_of_run - p <= 2 and not (particle and p == last)]
        at = view.origin[first]
        glued = at > 0 and "가" <= view.original[at - 1] <= "힣"  # Korean glued before: "보험사공일공-…"
        ambiguous = particle or len(starts) > 1 or len(stops) > 1
        ranked: list[tuple[tuple, tuple]] = []
        for g, ends_here in enumerate([[last], stops] if particle else [stops]):
            entire = [(first, ends_here[0])]
            shorter = [(a, b) for b in ends_here for a in starts if (a, b) != entire[0]]
            in_groups = [(a, b) for a, b in shorter if (a == first or glued) and (b == ends_here[0] or b in skeleton.soft)
                         and any(p in gaps for p in range(a + 1, b))]
            glued_in_groups = [(a, b) for a, b in in_groups if b == ends_here[0] and glued]
            weakest = None
            for order, (stretches, regrouped) in enumerate([(entire, False), (glued_in_groups, False), (entire, True),
                                                           (in_groups, False), (shorter, False), (shorter, True)]):
                if weakest is not None and stretches is not glued_in_groups:
                    continue
                hits = [hit for a, b in stretches if free(a, b)
                        and (hit := _shape_of(skeleton, a, b, regrouped, True, candidate)) is not None]
                if stretches is glued_in_groups or stretches is in_groups:
                    hits = [hit for hit in hits if _all_groups(hit[2])]
                if not hits:
                    continue
                hit = min(hits, key=lambda h: h[0])
                if hit[1].alone and stretches is entire:
                    weakest = hit
                    rank = (g, 0, 9)
                elif not regrouped and stretches is not shorter and not hit[1].alone and (
                        hit[2].breaks or not ambiguous):
                    rank = (g, 0, order)
                elif stretches is entire and (not regrouped or _some_group(hit[2])):
                    rank = (g, 1, order)
                else:
                    a, b = hit[2].start, hit[2].end
                    word = ((a == first or (glued and a in skeleton.soft))
                            and (b == end_of_run or (particle and b == last) or b in skeleton.soft))
                    rank = (g + 1, 0.5 if word and not regrouped else 0.6 if stretches is entire else 0.7, order)
                ranked.append((rank, hit))
        best = min(ranked, key=lambda pair: pair[0])[1] if ranked else None
        if best is not None:
            found.append(best[1:])
            take(best[2].start, best[2].end)
        for regrouped in (False, True):
            for i, start in enumerate(cuts):
                if regrouped and start not in apart:
                    continue
                for end in ends(i, regrouped):
                    alone = start in whole and end in whole
                    if free(start, end) and _take(skeleton, start, end, regrouped, alone, candidate, found):
                        take(start, end)
                        break
    return found


def _group_ends(c: Candidate) -> set[int] | None:
    """Where the candidate's shape puts the breaks between its groups (offsets from its start): 010|2841|
    7788, 900101|1234567, four fours; None for a shape without named groups (an account, a date)."""
    if "first" in c.match.re.groupindex:  # a card
        return {4, 8, 12}
    names = [n for n in c.match.re.groupindex if c.match.group(n) and n not in ("lead", "zero")][:-1]
    return {c.match.end(n) - c.start for n in names} if names else None


def _all_groups(c: Candidate) -> bool:
    """Is the candidate written with a break at every group end of its shape and nowhere else (010-2841-
    7788, not 0102841-7788)? Strong evidence that it is the number, whatever digits lie around it. The
    0 of "+82 (0)10" may stand apart or not."""
    ends = _group_ends(c)
    if ends is None:
        return len(c.breaks) >= 2
    zero = {c.match.end("zero") - c.start} if c.match.re.groupindex.get("zero") and c.match.group("zero") else set()
    return set(c.breaks) in (ends | zero, ends - zero)


def _some_group(c: Candidate) -> bool:
    """Is one break of the candidate at a group end of its shape, or is it written without breaks?"""
    ends = _group_ends(c)
    return not c.breaks or ends is None or bool(set(c.breaks) & ends)


def _shape_of(skeleton: Skeleton, start: int, end: int, regrouped: bool, alone: bool,
              candidate) -> tuple[int, NumberShape, Candidate] | None:
    """The first shape the stretch has (its index in `NUMBER_SHAPES`, the shape, the candidate), or None.
    A shape that asks for it (an account in dash groups, the weakest evidence) only counts when the
    stretch is all its run."""
    for index, shape in enumerate(NUMBER_SHAPES):
        low, high = shape.lengths
        if not low <= end - start <= high or (shape.alone and not alone):
            continue
        match = shape.pattern.fullmatch(skeleton.text, start, end)
        if match is not None:
            found_here = candidate(start, end, match, regrouped)
            if shape.accept(found_here):
                return index, shape, found_here
    return None


def _take(skeleton: Skeleton, start: int, end: int, regrouped: bool, alone: bool, candidate, found: list) -> bool:
    """`_shape_of` the stretch appended to `found`; False when it has none."""
    hit = _shape_of(skeleton, start, end, regrouped, alone, candidate)
    if hit is not None:
        found.append(hit[1:])
    return hit is not None


_ENGLISH_RUN = re.compile(rf"(?<![A-Za-z])(?:{_ENGLISH_DIGIT.pattern})+(?![A-Za-z])", re.IGNORECASE)


def _star_digits(text: str) -> str:
    """Every digit of `text` (also a Korean numeral, an English digit word) as "*", the separators kept."""
    text = _ENGLISH_RUN.sub(lambda m: "*" * len(_ENGLISH_DIGIT.findall(m.group())), strip_invisible(text))
    return "".join("*" if c.isdigit() or c in DIGIT_WORDS or c in UNIT_WORDS else c for c in text)


def mask_numbers(text: str, public: Sequence[str] = ()) -> tuple[str, list[str]]:
    """`text` with the resident, phone, card and account numbers and the cued birth dates of its
    skeleton masked, however they are written (see the module docstring), and the kinds masked."""
    skeleton = Skeleton.of(text)
    edits, kinds = [], []
    for shape, found in find_numbers(skeleton, public_numbers(tuple(public))):
        if shape is None:
            continue
        start, end = skeleton.view.span(found.start, found.end)
        plus = _plus_before(found) if shape.accept is _international else None
        if plus is not None:
            start = skeleton.view.origin[plus]
        if start > 0 and text[start - 1] == "(" and text.count(")", start, end) > text.count("(", start, end):
            start -= 1  # "(02)123-4567"
        edits.append((start, end, _star_digits(text[start:end]) if shape.mask is None else shape.mask(found)))
        if shape.kind not in kinds:
            kinds.append(shape.kind)
    return _apply(text, edits), kinds


# --- personal data with Korean shapes: e-mails, birth dates, addresses ------------------------------------

# E-mails: local part and domain may be spread out by spaces or a line break around "@" and the dots,
# "@" may be written "(at)" / "[at]" / 골뱅이 and a dot "(dot)".
_EMAIL_CHARS = r"[A-Za-z0-9_%+\-]"
_EMAIL_JOIN = r"(?:\s{0,2}\.\s{0,2}|\r?\n)"
_AT = r"\s{0,2}(?:@|[(\[{]\s?at\s?[)\]}]|골뱅이)\s{0,2}"
_DOT = r"(?:\s{0,2}(?:\.|[(\[{]\s?dot\s?[)\]}])\s{0,2})"
_LABEL = r"[A-Za-z0-9\-]+(?:\r?\n[A-Za-z0-9\-]+)*"
_EMAIL = re.compile(rf"(?<![A-Za-z0-9._%+\-])(?P<local>{_EMAIL_CHARS}+(?:{_EMAIL_JOIN}{_EMAIL_CHARS}+)*){_AT}"
                    rf"(?P<domain>{_LABEL}(?:{_DOT}{_LABEL})*{_DOT}[A-Za-z]{{2,}})", re.IGNORECASE)
_DOT_WORD = re.compile(r"[(\[{]\s?dot\s?[)\]}]", re.IGNORECASE)


def _email(m: re.Match) -> str:
    local = re.sub(r"\s", "", m.group("local"))
    domain = _DOT_WORD.sub(".", re.sub(r"\s", "", m.group("domain")))
    return f"{local[:2]}***@{domain}"


# Birth dates: a date shape, and a cue that it is a birth date.
_DATE = (rf"(?:(?:19|20)?\d{{2}}\s?년\s?{_MONTH}\s?월\s?{_DAY}\s?일"
         rf"|(?:19|20)\d{{2}}{_DSEP}{_MONTH}{_DSEP}{_DAY}|\d{{2}}{_DSEP}{_MONTH}{_DSEP}{_DAY}"
         rf"|(?:19|20)?{_YYMMDD})")
_BIRTH = re.compile(rf"(?P<cue>{_BIRTH_CUE}{_AFTER_CUE})(?P<date>(?<!\d){_DATE}(?!\d))"
                    rf"|(?P<date2>(?<!\d){_DATE}(?!\d))(?={_BIRTH_SUFFIX})", re.IGNORECASE)
# A year in Korean numerals starts a word ("청구1940년" is 청구 and 1940, not 91940)
_KOREAN_DATE = re.compile(rf"(?P<y>[0-9]{{2,4}}|(?<![가-힣])[0-9{_NUMERALS}]{{1,7}})\s?년\s?"
                          rf"(?P<m>[0-9{_NUMERALS}]{{1,3}})\s?월\s?(?P<d>[0-9{_NUMERALS}]{{1,4}})\s?일")


def date_view(text: str) -> TextView:
    """The `TextView` of `text` with the Korean numerals of "<년> <월> <일>" dates read as digits
    ("천구백팔십오년 삼월 이일" → "1985년 3월 2일"), for the birth-date rule."""
    view = TextView.of(text)
    edits = []
    for match in _KOREAN_DATE.finditer(view.text):
        parts = {g: _read_mixed(match.group(g)) for g in "ymd"}
        if any(p is None for p in parts.values()) or all(match.group(g).isdigit() for g in "ymd"):
            continue
        if 1 <= int(parts["m"]) <= 12 and 1 <= int(parts["d"]) <= 31:
            edits += [(match.start(g), match.end(g), parts[g]) for g in "ymd" if not match.group(g).isdigit()]
    return view.rewrite(edits) if edits else view


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
    view: Callable[[str], TextView] = TextView.of  # the view the pattern runs on


# E-mails run before the numbers (digits inside an address are part of it), the rest after them.
EMAIL_RULE = PiiRule("email", _EMAIL, _email)
PII_RULES: list[PiiRule] = [
    PiiRule("birth_date", _BIRTH, _birth, view=date_view),
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


@lru_cache(maxsize=32)
def _public_keys(public: tuple[str, ...]) -> list[str]:
    return [key for key in map(_squeezed, public) if key]


def mask_personal_data(text: str, public: Sequence[str] = ()) -> tuple[str, list[str]]:
    """`text` with e-mails, resident, phone, card and account numbers, birth dates and street addresses
    masked (see the module docstring), and the kinds masked. A match inside one of the `public`
    strings is kept."""
    public_keys = _public_keys(tuple(public))
    kinds: list[str] = []

    def run(rule: PiiRule, text: str) -> str:
        def keep(match: re.Match) -> bool:
            if rule.accept is not None and not rule.accept(match):
                return True
            return _is_public(_squeezed(match.group(0)), public_keys)
        text, count = sub_view(rule.pattern, text, rule.mask, keep, rule.view)
        if count and rule.kind not in kinds:
            kinds.append(rule.kind)
        return text

    text = run(EMAIL_RULE, text)
    text, numbers = mask_numbers(text, public)
    kinds += [k for k in numbers if k not in kinds]
    for rule in PII_RULES:
        text = run(rule, text)
    return text, kinds


def mask_values(text: str, known: dict[str, str]) -> str:
    """`text` with each known value (a person's name from a tool result …) replaced by its mask, also
    when written with spaces or invisible characters between its characters or in another width ("김
    민수", "김\u200b민수"); the longest value first. A plain `str.replace` of the values misses those."""
    values = sorted((v for v in known if v.strip()), key=len, reverse=True)
    if not values:
        return text
    def squeezed(value: str) -> str:
        return re.sub(r"\s+", "", unicodedata.normalize("NFKC", value))
    masks = {squeezed(v): known[v] for v in reversed(values)}
    pattern = "|".join(r"\s{0,2}".join(map(re.escape, squeezed(v))) for v in values)
    return sub_view(pattern, text, lambda m: masks.get(squeezed(m.group()), m.group()))[0]


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
_PARTICLE_AFTER = re.compile(rf"{PARTICLE}(?![가-힣])")
_OPEN_BEFORE = re.compile(r"([(\[])\s*$")


def skeleton_pattern(pattern: str) -> str:
    """A pack's id regex as it reads on the skeleton: lookarounds and `\\b` dropped (the skeleton has its
    own bounds, see `Skeleton.starts_token`), literal separators (-, _, space) dropped
    (`\\bAST-[A-Z]{2}-\\d{2}\\b` → `AST[A-Z]{2}\\d{2}`)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            pair = pattern[i:i + 2]
            if in_class or pair not in ("\\b", "\\-", "\\_", "\\ "):
                out.append(pair)
            i += 2
            continue
        if in_class:
            in_class = char != "]"
            out.append(char)
        elif char == "[":
            in_class = True
            out.append(char)
            if pattern[i + 1:i + 2] == "]" or pattern[i + 1:i + 3] == "^]":  # a literal ] first in a class
                j = i + (2 if pattern[i + 1] == "]" else 3)
                out.append(pattern[i + 1:j])
                i = j
                continue
        elif pattern.startswith(("(?<!", "(?<=", "(?!", "(?="), i):
            i = _group_end(pattern, i)
            continue
        elif char not in "-_ ":
            out.append(char)
        i += 1
    return "".join(out)


def _group_end(pattern: str, start: int) -> int:
    """The index after the group that opens at `start`."""
    depth, i, in_class = 0, start, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


@lru_cache(maxsize=64)
def _id_regex(pattern: str) -> re.Pattern:
    return re.compile(skeleton_pattern(pattern), re.IGNORECASE)


@lru_cache(maxsize=16)
def _names_regex(names: tuple[str, ...]) -> re.Pattern:
    folded = sorted({re.sub(r"[\W_]+", "", n).lower() for n in names if n}, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, folded)))


def _spelled_as_words(skeleton: Skeleton, start: int, end: int) -> bool:
    """Only spaces between the parts ("premium estimate"): English words, not a tool's name."""
    inner = [gap for p, gap in skeleton.gaps.items() if start < p < end]
    return bool(inner) and all(gap.isspace() for gap in inner)


def find_ids(skeleton: Skeleton, regex: re.Pattern, names: bool = False) -> list[tuple[int, int]]:
    """Skeleton spans of `regex` bounded as a token (`Skeleton.starts_token` / `ends_token`); ids glued
    together go as one ("premium_estimatepremium_estimate"). With `names`, a match written as plain
    words is left."""
    text, out, pos = skeleton.text, [], 0
    while (match := regex.search(text, pos)) is not None:
        start, end = match.span()
        pos = start + 1
        if start == end or not skeleton.starts_token(start):
            continue
        while end is not None and not skeleton.ends_token(end):
            more = regex.match(text, end)
            end = more.end() if more is not None and more.end() > end else None
        if end is None or (names and _spelled_as_words(skeleton, start, end)):
            continue
        out.append((start, end))
        pos = end
    return out


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """An id's span with what goes with it: backticks and "()" around a name, parentheses or brackets
    around it, else a particle glued to it."""
    if start > 0 and text[start - 1] == "`":
        start -= 1
    if text.startswith("()", end):
        end += 2
    if text.startswith("`", end):
        end += 1
    opened = _OPEN_BEFORE.search(text, max(0, start - 8), start)
    if opened:
        closed = re.compile(r"\s*" + ("\\)" if opened.group(1) == "(" else "\\]")).match(text, end)
        if closed:
            return opened.start(), closed.end()
    particle = _PARTICLE_AFTER.match(text, end)
    return start, particle.end() if particle else end


def remove_ids(text: str, patterns: Sequence[str | re.Pattern], names: Sequence[str] = ()) -> tuple[str, list[str]]:
    """`text` without the ids the `patterns` describe nor the tool `names`, in any case, width or
    spacing (matched on the skeleton), each with its glued particle or brackets; returns the text and
    the patterns that removed something ("tool_names" for the names)."""
    skeleton = Skeleton.of(text)
    spans, hits = [], []
    for pattern in patterns:
        source = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
        found = find_ids(skeleton, _id_regex(source))
        if found:
            spans += found
            hits.append(source)
    if names:
        found = find_ids(skeleton, _names_regex(tuple(names)), names=True)
        if found:
            spans += found
            hits.append("tool_names")
    return _apply(text, [(*_widen(text, *skeleton.view.span(s, e)), "") for s, e in spans]), hits

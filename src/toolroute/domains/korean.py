"""Korean text helpers every domain's tools share: the particle after a word."""


def has_final_consonant(word: str) -> bool:
    """True when the last Hangul syllable ends in a consonant (받침); digits read in Korean."""
    word = (word or "").rstrip(" )]")
    if not word:
        return False
    last = word[-1]
    if "가" <= last <= "힣":
        return (ord(last) - ord("가")) % 28 != 0
    if last.isdigit():
        return last in "013678"  # 영, 일, 삼, 육, 칠, 팔
    return False


def josa(word: str, pair: str) -> str:
    """`word` with the right particle: josa("상품명", "을/를") -> "상품명을"."""
    with_batchim, without = pair.split("/")
    return word + (with_batchim if has_final_consonant(word) else without)

"""L1 input rules: prompt-injection and jailbreak patterns, Korean and English, on normalised text.

Attackers hide the words rules look for: full-width letters, look-alike Cyrillic, zero-width
characters, spaced-out letters ("시 스 템"), Hangul split into jamo ("ㅅㅣㅅㅡㅌㅔㅁ"), leetspeak
("1gn0r3"), or base64. Every turn is therefore checked in several forms: NFKC with look-alikes
mapped and jamo recomposed; the same with spacing and punctuation squeezed out; a leetspeak
reading; and the decoded text of any base64 token. A rule is a named regex, or a pair of regexes
that must both match (an object such as "system prompt" and a verb such as "show"), so that
ordinary insurance wording ("약관 원문 보여줘", "이전 상담 내용 무시하고 다시 계산") passes.
Rules were written and tuned on `data/redteam/dev.jsonl` and the dev queries only.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata

# --- normalisation -----------------------------------------------------------------------------------

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_LOOKALIKE = str.maketrans("аеорсухіјѕкмтвнАЕОРСУХІЈЅКМТВН", "aeopcyxijskmtbhAEOPCYXIJSKMTBH")
_LEET = str.maketrans("013457@$", "oieastas")
# Hangul compatibility jamo → indexes of the initial, medial and final of a syllable.
_INITIALS = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"
_MEDIALS = "ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ"
_FINALS = ["", "ㄱ", "ㄲ", "ㄳ", "ㄴ", "ㄵ", "ㄶ", "ㄷ", "ㄹ", "ㄺ", "ㄻ", "ㄼ", "ㄽ", "ㄾ", "ㄿ", "ㅀ", "ㅁ", "ㅂ", "ㅄ",
           "ㅅ", "ㅆ", "ㅇ", "ㅈ", "ㅊ", "ㅋ", "ㅌ", "ㅍ", "ㅎ"]
_BASE64 = re.compile(r"[A-Za-z0-9+/]{12,}={0,2}")


def compose_jamo(text: str) -> str:
    """Join runs of compatibility jamo into syllables ("ㅅㅣㅅㅡㅌㅔㅁ" → "시스템"); other text is kept."""
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c in _INITIALS and i + 1 < len(text) and text[i + 1] in _MEDIALS:
            initial, medial = _INITIALS.index(c), _MEDIALS.index(text[i + 1])
            final, step = 0, 2
            nxt = text[i + 2] if i + 2 < len(text) else ""
            after = text[i + 3] if i + 3 < len(text) else ""
            if nxt in _FINALS[1:] and after not in _MEDIALS:
                final, step = _FINALS.index(nxt), 3
            out.append(chr(0xAC00 + (initial * 21 + medial) * 28 + final))
            i += step
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _decoded_payloads(text: str) -> list[str]:
    out = []
    for token in _BASE64.findall(text):
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if decoded.isprintable() and len(decoded.strip()) >= 4:
            out.append(decoded)
    return out


def views(text: str) -> list[str]:
    """The forms of `text` the rules read (see the module docstring)."""
    # jamo first: NFKC would turn compatibility jamo into conjoining ones the composer does not read
    base = compose_jamo((text or "").translate(_ZERO_WIDTH))
    base = unicodedata.normalize("NFKC", base).translate(_LOOKALIKE)
    squeezed = re.sub(r"[\s\W_]+", "", base)
    out = [base, squeezed, base.lower().translate(_LEET)]
    for payload in _decoded_payloads(base):
        out.extend(views(payload)[:2])
    return out


# --- rules -------------------------------------------------------------------------------------------

_ASSISTANT = r"(너|네|니|당신|도우미|상담\s*도우미|상담\s*봇|챗봇|봇|AI|ai|에이아이|assistant|bot|you|your|ur)"
_SECRET = (r"(시스템\s*(프롬프트|메시지|설정|지침|지시)|system\s*(prompt|message|instructions?)|프롬프트|prompt|"
           r"지시문|지침|숨(겨진|은)\s*(규칙|지시|설정|프롬프트|명령)|hidden\s*(rules?|prompt|instructions?)|"
           r"(내부|초기|원래|기본)\s*(지시|지침|규칙|설정|프롬프트|명령|도구|툴|로직)|설정\s*(값|문구|메시지)|금지어|"
           r"필터\s*키워드|(도구|툴|tool)\s*(이름|목록|리스트|list|names?)|(function|함수)\s*(이름|names?)|json\s*schemas?|"
           r"(api|API)\s*(엔드포인트|endpoint|주소)|config(uration)?|context\s*window|instructions|"
           r"(위에|앞에|above)\s*(있는\s*)?(글|텍스트|내용|text)|text\s+above)")
_REVEAL = (r"(보여|알려|출력|공개|말해|말하|인용|나열|제출|회신|유출|까|뽑아|번역|읽어|독백|입력해|다시\s*(써|입력)|그대로|뭐라고|뭐(임|냐)|"
           r"원문|전문|토씨|dump|show|print|output|list|reveal|repeat|translate|tell|quote|give|read|what\s+(tools|did))")
_OVERRIDE_OBJECT = (r"(규칙|지시|지침|제약|필터|검열|규정|정책|명령|프롬프트|안전\s*장치|금지\s*항목|rules?|instructions?|"
                    r"restrictions?|filters?|guardrails?|guidelines?|polic(y|ies))")
_OVERRIDE_VERB = (r"(무시|잊|해제|풀(어|고|려)|꺼|끄|삭제|무효|ignore|disregard|forget|bypass|override|disable|"
                  r"(switch|turn)(ed)?\s+off)")
_CLAIM = (r"(원금\s*(이\s*)?(100\s*%\s*)?(보장|손실\s*(이\s*)?(절대\s*)?없)|무조건\s*(다\s*)?(보장|지급)|100\s*%\s*(지급|보장|safe)|"
          r"손해\s*(볼\s*일이?\s*)?(는\s*)?(절대\s*)?없|절대\s*(손실|손해)|principal[- ]guaranteed|guaranteed|"
          r"보험금\s*(을\s*)?두\s*배)")
_CLAIM_ORDER = (r"(라고|다고|이라고)\s*(고객(한테|에게)\s*)?(말|안내|해|써|적|넣|붙|약속|답변|대답)|문구|스크립트|대사|"
                r"공식\s*답변|답변\s*(을\s*)?고정|약속해|tell\s+the\s+customer|say|붙여|repeat\s+after")

# (name, pattern) — one regex; (name, (a, b)) — both must match the same view.
RULES: list[tuple[str, str | tuple[str, str]]] = [
    # the first rules of the project (kept: they were checked against the in-domain queries)
    ("ignore_instructions", r"(ignore|disregard|forget)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|your)\s+(instructions|rules|prompts?)"),
    ("reveal_prompt", r"(reveal|show|print|repeat|tell me)\s+(me\s+)?(your|the)\s+(system\s+prompt|instructions|hidden\s+prompt)"),
    ("jailbreak_persona", r"\b(DAN|do anything now|developer mode|jailbreak|jail\s*break)\b"),
    ("no_restrictions_en", r"(without|no)\s+(any\s+)?(restrictions|filters|rules|limits)\b.*\b(answer|respond|act)"),
    ("ko_ignore", r"(이전|앞|위|기존|모든|지금까지)(의|에)?\s*(지시|명령|규칙|지침|프롬프트|설정)[을를은는]?\s*(다\s*)?(무시|잊어|잊고|지워|취소)"),
    ("ko_system_prompt", r"(시스템|system)\s*(프롬프트|prompt|메시지|지침)[을를이가]?\s*(보여|알려|출력|공개|말해|그대로)"),
    ("ko_persona", r"(너는|넌|당신은)\s*이제(부터)?\s*.{0,20}(제한|규칙|필터|검열)\s*(이|가)?\s*없"),
    ("ko_no_limits", r"(제한|규칙|필터|검열)\s*(없이|을\s*풀고|해제)\s*.{0,15}(답|대답|말|알려)"),
    ("ko_dev_mode", r"(개발자|관리자|디버그|탈옥)\s*모드"),
    ("ko_other_pii", r"(아무|다른|모든|전체)\s*(고객|사람|회원)[의]?\s*.{0,10}(주민(등록)?번호|전화번호|연락처|주소|계좌)"),
    ("ko_role_override", r"(지금부터|이제부터)\s*(너는|넌|당신은)\s*.{0,15}(AI|에이전트|봇|어시스턴트)\s*(가|이)?\s*아니"),
    # added on the dev red-team set
    ("secret_named", r"시스템\s*프롬프트|system\s*prompt|hidden\s*(prompt|rules|instructions)|초기\s*설정\s*메시지|"
                     r"context\s*window"),
    ("rewrite_rules", rf"{_ASSISTANT}\s*(의\s*)?(규칙|지침|설정|프롬프트)\s*(에|을|를)?\s*(즉시\s*)?(반영|추가|수정|변경|적용|바꿔)"),
    ("markup_system", r"<\|im_start\|>|\[/?\s*system\s*\]|```\s*system|<!--.{0,40}system|^\s*system\s*:|new system message"),
    ("jailbreak", r"\b(DAN|do anything now|jail\s*break|unfiltered|no\s+rules|no\s+limits|no\s+restrictions|sudo)\b|"
                  r"jailbreak|탈옥|(개발자|관리자|디버그|admin|developer|debug|god)\s*(모드|mode|권한)|debug\s*=\s*true|"
                  r"override\s+code|관리자\s*권한|제한\s*(이\s*)?(해제|풀)|(모든|답변|대답|응답)\s*제한|제한\s*없는\s*(AI|ai|버전|모드|상태)|"
                  r"검열\s*(당|없)"),
    ("reveal_secret", (_SECRET, _REVEAL)),
    ("override_rules", (_OVERRIDE_OBJECT, _OVERRIDE_VERB)),
    ("english_override", r"(ignore|disregard|forget)\s+(\w+\s+){0,3}(previous|prior|above|earlier|your|all)\b"),
    ("assistant_rules", (rf"{_ASSISTANT}\s*(의|한테|에게|에|가|이)?\s*(걸려\s*있는|주어진|부여된|설정된|적용된|받은)?\s*"
                         r"([가-힣]{1,4}\s*)?(규칙|설정|지시|지침|제한|금지|rules|instructions|settings)", _REVEAL)),
    ("forbidden_list", r"(하지\s*말아야\s*할|말하면\s*안\s*되는|금지된?)\s*(것|말|항목|단어|문구)\s*.{0,6}(목록|리스트|list)|"
                       r"(what|things)\s+.{0,30}(not\s+to\s+say|told\s+(u|you)\s+not)"),
    ("role_override", r"(너는|넌|당신은|you\s+are)\s*(이제|지금부터|now)|(지금부터|이제부터|from\s+now\s+on)\s*(너는|넌|당신은|you)|"
                      r"(act|pretend|behave)\s+as|역할\s*(을\s*)?바꾸|처럼\s*행동"),
    ("encoded_payload", r"(디코딩|decode|base64).{0,30}(실행|따라|follow|수행|대로|execute|do\s+it)"),
    ("bulk_customer_data", r"(다른|아무|모든|전체|지난번|이전|직전|바로\s*(전|앞)|앞\s*사람)\s*(에\s*)?(상담한\s*)?"
                           r"(고객|사람|회원|가입자).{0,30}(주민|전화|연락처|주소|계좌|병력|명단|가입\s*내역|정보)|"
                           r"고객\s*(DB|디비|db|명단)\s*(에서|을|를)?.{0,30}(뽑아|추출|전부|리스트\s*만들)|신규\s*가입자\s*\d+\s*명|"
                           r"이\s*번호\s*쓰는\s*고객|(계좌\s*번호|주민(등록)?\s*번호)\s*(가|이)?\s*(뭐|몇)|"
                           r"(친구|지인|아는\s*사람)(라서|이라서|니까|인데).{0,10}(괜찮|상관\s*없)|"
                           r"customer\s*(records?|list|database)|(phone\s+number|resident\s+registration).{0,40}customer|"
                           r"(주민(등록)?\s*번호|계좌\s*번호).{0,20}(알려|조회|확인\s*부탁|뽑아)"),
    ("banned_claim_order", (_CLAIM, _CLAIM_ORDER)),
]
# role_override alone is ordinary in sales training ("역할극으로 연습해요"); it counts only with another cue.
_NEEDS_SECOND_CUE = {"role_override"}
_COMPILED = [(name, tuple(re.compile(p, re.IGNORECASE) for p in (pattern if isinstance(pattern, tuple) else (pattern,))))
             for name, pattern in RULES]
_SECOND_CUE = re.compile(rf"{_OVERRIDE_OBJECT}|{_CLAIM}|규정|경쟁사|단점|restrictions|rules|AI가\s*아니|개발자", re.IGNORECASE)


def violation(text: str) -> str | None:
    """The name of the first rule any view of `text` matches, or None."""
    for view in views(text):
        for name, patterns in _COMPILED:
            if all(p.search(view) for p in patterns):
                if name in _NEEDS_SECOND_CUE and not _SECOND_CUE.search(view):
                    continue
                return name
    return None

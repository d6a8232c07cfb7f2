"""L1 input rules: prompt-injection and jailbreak patterns, Korean and English, on normalised text.

Attackers hide the words rules look for: full-width letters, look-alike Cyrillic, zero-width
characters, spaced-out letters ("시 스 템"), Hangul split into jamo ("ㅅㅣㅅㅡㅌㅔㅁ"), leetspeak
("1gn0r3"), or base64. Every turn is therefore checked in several forms: NFKC with look-alikes
mapped and jamo recomposed; the same with spacing and punctuation squeezed out; a leetspeak
reading; the decoded text of any base64, hex or percent-encoded token; the text backwards; its
ROT13 reading; and quoted fragments joined (a payload split into variables). A rule is a named
regex, or a pair of regexes that must both match (an object such as "system prompt" and a verb such
as "show"), so that ordinary insurance wording ("약관 원문 보여줘", "이전 상담 내용 무시하고 다시 계산")
passes. Rules were written on `data/redteam/dev.jsonl` and on probes of the attack families written
for this project (`tests/unit/test_input_guard_probes.py`), and checked for false blocks on the
legitimate turns of the tuning red-team splits (`dev.jsonl`, `train.jsonl`, `hard_legit_tune.jsonl`)
and the dev and calibration queries (`hard_legit_tune2.jsonl` too since its round); the held-out sets
(`prompts.jsonl`, `heldout.jsonl`, `hard_legit.jsonl`, `hard_legit2.jsonl`) and the test queries are
only measured. An override must read as one phrase whose object is the assistant's rules, not the
customer's own earlier request, quote or policy ("이전 지시대로 유지해 주세요", "ignore the previous
quote"): see `_OVERRIDE` and `_OWN_REFERENCE`.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
import urllib.parse

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
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}[\s:]?){6,}(?![0-9A-Za-z])")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2}){3,}")
_QUOTED = re.compile(r"'([^'\n]{1,30})'|\"([^\"\n]{1,30})\"|[‘“「]([^’”」\n]{1,30})[’”」]")
_ROT13 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                       "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")


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


def _printable(raw: bytes) -> str | None:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return decoded if decoded.isprintable() and len(decoded.strip()) >= 4 else None


def _decoded_payloads(text: str) -> list[str]:
    """The text of each base64, hex or percent-encoded token that decodes to readable UTF-8."""
    out = []
    for token in _BASE64.findall(text):
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = _printable(raw)
        if decoded:
            out.append(decoded)
    for token in _HEX.findall(text):
        decoded = _printable(bytes.fromhex(re.sub(r"[^0-9A-Fa-f]", "", token)))
        if decoded:
            out.append(decoded)
    if _PERCENT.search(text):
        decoded = urllib.parse.unquote(text)
        if decoded != text:
            out.append(decoded)
    return out


def _quoted_fragments(text: str) -> str:
    """Quoted pieces joined in order: a payload split into variables (a='시스템', b='프롬프트')."""
    pieces = _QUOTED.findall(text)
    return "".join(a or b or c for a, b, c in pieces) if len(pieces) >= 2 else ""


_LETTERS_BEFORE = re.compile(r"[A-Za-z]+$")
_LETTERS_AFTER = re.compile(r"[A-Za-z]+")


def squeeze(text: str) -> str:
    """Spacing and punctuation squeezed out ("s y s t e m", "시 스 템" → "system", "시스템"), except
    between two English words, unless both are single letters: glued, "rules, how do I" read
    "ruleshow" and a rule saw "show" in it."""
    def gap(match: re.Match) -> str:
        left = _LETTERS_BEFORE.search(text, 0, match.start())
        right = _LETTERS_AFTER.match(text, match.end())
        apart = left and right and max(len(left.group(0)), len(right.group(0))) > 1
        return match.group(0).replace("_", " ") if apart else ""  # "system_prompt" reads "system prompt"
    return re.sub(r"[\s\W_]+", gap, text)


def views(text: str) -> list[str]:
    """The forms of `text` the rules read (see the module docstring)."""
    # jamo first: NFKC would turn compatibility jamo into conjoining ones the composer does not read
    base = compose_jamo((text or "").translate(_ZERO_WIDTH))
    base = unicodedata.normalize("NFKC", base).translate(_LOOKALIKE)
    squeezed = squeeze(base)
    out = [base, squeezed, base.lower().translate(_LEET)]
    for payload in _decoded_payloads(base):
        out.extend(views(payload)[:2])
    # written backwards ("트프롬프 템스시", "tpmorp metsys"), in ROT13, or split into quoted variables
    out.append(base[::-1])
    if re.search(r"[A-Za-z]{4}", base):
        out.append(base.translate(_ROT13))
    joined = _quoted_fragments(base)
    if joined:
        out.extend([joined, squeeze(joined)])
    return out


# --- rules -------------------------------------------------------------------------------------------

# "Prompt" is also a trade ("프롬프트 엔지니어인데 직업 분류가 뭐예요?") and an English adjective ("prompt payment").
_PROMPT = (r"(프롬프트(?!\s*(엔지니어|엔지니어링|디자이너|작성법|강사))|"
           r"prompt(?!\s*(engineer|design|pay|repl|respon|service|attention|action|refund|deliver|notice|settle)))")
# "시스템 설정" is also a phone's or an app's settings screen ("앱 시스템 설정에서 알림 끄는 법").
_DEVICE_SETTINGS = (r"(?<!앱)(?<!앱\s)(?<!폰)(?<!폰\s)설정(?!\s*(에서|에\s*들어|메뉴|화면|앱|을\s*(바꾸|변경)|바꾸|변경|"
                    r"방법))")
# "Instructions" alone are the assistant's, unless they are a form's or a claim's ("explain the claim
# instructions", "the instructions for the reinstatement form").
_INSTRUCTIONS = (r"(?<!claim\s)(?<!form\s)(?<!filing\s)(?<!payment\s)(?<!policy\s)(?<!doctor's\s)(?<!agent's\s)"
                 r"instructions(?!\s+(for|on|about)\s+(the\s+|my\s+|a\s+|this\s+|our\s+)?(claims?|forms?|filing|payments?|"
                 r"submi|send|mail|fax|upload|fill|reinstat|cancel|refund|documents?|receipts?|applications?|enrol|renewal|"
                 r"transfer|paperwork))")
_ASSISTANT = r"(너|네|니|당신|도우미님?|상담\s*도우미님?|상담\s*봇|챗봇|봇|AI님?|ai|에이아이|assistant|bot|you|your|ur)"
_SECRET = (r"(시스템\s*(프롬프트|메시지|" + _DEVICE_SETTINGS + r"|지침|지시)|system\s*(prompt|message|instructions?)|" + _PROMPT + "|"
           r"지시문|지침|숨(겨진|은)\s*(규칙|지시|설정|프롬프트|명령)|(hidden|secret)\s*(rules?|prompt|instructions?|guidelines|policies|settings)|"
           r"(역할|너|당신)\s*(을|를)?\s*(만든|정의한|정한|설정한)\s*(문장|글|원문|지시|텍스트|말)|"
           r"(자기|자신의|네|너의|니|당신의|your)\s*(설정|지침|규칙|프롬프트|지시)|(설정|지침|지시)\s*(원문|전문)|"
           r"(적용된|걸려\s*있는|설정된)\s*(제약|제한|규칙|금지)\s*(사항)?\s*(목록|리스트|전체|전부)|"
           r"(instructions|guidelines|rules)\s+you\s+(received|were\s+given)|"
           r"(rules|guidelines|instructions|constraints)\s+you\s+(operate|work|run)\s+under|"
           r"(rules|guidelines|instructions|constraints)\s+you\s+(follow|obey|have\s+to\s+follow)|"
           r"(내부|초기|원래|기본)\s*(지시|지침|규칙|설정|프롬프트|명령|도구|툴|로직)|설정\s*(값|문구|메시지)|금지어|"
           r"필터\s*키워드|(도구|툴|tool)\s*(이름|목록|리스트|list|names?)|(function|함수)\s*(이름|names?)|json\s*schemas?|"
           r"(api|API)\s*(엔드포인트|endpoint|주소)|config(uration)?|context\s*window|" + _INSTRUCTIONS + "|"
           r"(처음|최초|초기|세팅|설정|셋업|시작)\S{0,6}\s*(받은|주어진|입력된|들어간)\s*(문서|글|텍스트|자료|내용|지시|말|메시지)|"
           r"(시작(되기|하기)|열리기)\s*전에\s*.{0,12}(입력된|주어진|받은|들어간|적힌)\s*(글|텍스트|내용|문장|메시지|지시)|"
           r"(before|prior\s+to)\s+(this|our|the)\s+(chat|conversation|session)|"
           r"guidance\s+you|(instructions|guidelines|rules)\s+you\s+(were|have\s+been|got)|"
           r"how\s+you\s+(were|are)\s+(configured|set\s*up|programmed|instructed|prompted)|"
           r"(위에|앞에|above)\s*(있는\s*)?(글|텍스트|내용|text)|text\s+above)")
# "까" only as 까봐 / 까발려 ("좋을까요", "테니까" are not a request to reveal).
_REVEAL = (r"(보여|알려|출력|공개|말해|말하|인용|나열|제출|회신|유출|까\s*(봐|보|발|놔|줘)|(얘기|이야기)\s*해|나눠\s*(주|줘)|"
           r"(이어서|끝까지|그대로|전부)\s*(써|적어)|뽑아|번역|읽어|독백|입력해|다시\s*(써|입력)|그대로|뭐라고|뭐(임|냐)|"
           r"원문|전문|토씨|dump|show|print|output|list|reveal|repeat|translate|tell|quote|give|read|what\s+(tools|did)|"
           r"여쭤|공유|말씀해|보고해|궁금|복사|베껴|옮겨|적어|소개해|낭독|뭐야|뭐였|(may|can|could)\s+i\s+see|let\s+me\s+see|wording|copy|paste|write\s+(out|down)|share|explain|describe|walk\s+me|요약|정리해|summar|paraphrase)")
# What an override switches off. "Policy" alone is the customer's insurance policy ("if I ignore the
# renewal notice, does my policy end?"); only a company, content or safety policy is a rule.
_OVERRIDE_OBJECT = (r"(규칙|지시|지침|제약|필터|검열|규정|정책|명령|프롬프트|안전\s*장치|금지\s*항목|rules?|instructions?|"
                    r"restrictions?|filters?|guardrails?|guidelines?|compliance|"
                    r"(company|content|safety|usage|internal|corporate|compliance|your|ur|its|these|those)\s+polic(y|ies))")
_OVERRIDE_VERB = (r"(무시|잊|해제|풀(어|고|려)|꺼|끄|삭제|무효|비활성|중지|정지|ignore|disregard|forget|bypass|override|disable|"
                  r"deactivat|suspend|lift|off\s*(로|으로|해|시켜)|통과\s*안\s*해도|안\s*지켜도|지키지\s*않아도|"
                  r"(switch|turn)(ed)?\s+off)")
# The override reads as one phrase: in Korean the object, its particle and the verb ("규칙 다 꺼",
# "필터를 잠시 해제하고"); in English the verb then the object ("disable your guardrails") or the object
# then the verb ("your safety rules were switched off"). An instruction and a verb far apart are two
# things ("이전 지시대로 해 주세요. 치아 특약만 삭제요": the customer's own request, then a rider removed).
_OVERRIDE = (rf"{_OVERRIDE_OBJECT}\s*(을|를|은|는|이|가|도|들을|들은|들도|들|이랑|랑)?\s*"
             r"(\S{1,4}\s+)?(다\s*)?" rf"{_OVERRIDE_VERB}|"
             rf"{_OVERRIDE_VERB}\w*[\s\W]+(\w+[\s\W]+){{0,5}}?{_OVERRIDE_OBJECT}|"
             rf"{_OVERRIDE_OBJECT}[\s\W]+(\w+[\s\W]+){{0,3}}?{_OVERRIDE_VERB}")
# What the customer asks to drop is often their own earlier request, quote or question ("ignore the
# previous quote", "disregard my previous question"): not the assistant's instructions.
_OWN_OBJECT_EN = (r"(questions?|quotes?|quotations?|estimates?|requests?|messages?|answers?|repl(y|ies)|calculations?|"
                  r"figures?|numbers?|ones?|e-?mails?|notices?|letters?|plans?|options?|ages?|amounts?|premiums?|"
                  r"products?|forms?|dates?|address(es)?|details|info(rmation)?|choices?|selections?|decisions?|"
                  r"illustrations?|proposals?|offers?|bills?|statements?|versions?|drafts?|comments?|notes?|searche?s?|"
                  r"results?|inputs?|entr(y|ies)|typos?|mistakes?|parts?|points?|riders?|policies|policy|coverage|"
                  r"payments?|calls?|conversations?|chats?|bits?|stuff|things?)")
# The customer's own earlier instruction or request, in the override rules read as "요청" / "request".
_OWN_REFERENCE = re.compile(
    r"((?<![가-힣])(제가|내가|저희가|우리가)\s*([^\s]{1,8}\s*){0,2}?(드린|드렸던|한|했던|말한|말했던|말씀드린|말씀드렸던|"
    r"요청한|요청했던|요청드린|부탁한|부탁드린|남긴|정한|적은|보낸|원한|원했던)\s*|"
    r"(?<![가-힣])(제|내|저의|나의|저희|우리)\s+)(지시|지시\s*사항|요청|요청\s*사항|말|설정|조건|주문|메모|부탁)|"
    r"\b(my|our)\s+(own\s+)?((previous|prior|earlier|last|first|original|old|initial)\s+)?"
    r"(instructions?|requests?|rules?|settings?|preferences?|orders?|directions?)|"
    r"\b(instructions?|requests?|directions?)\s+(that\s+|which\s+)?(I|we)\s+(gave|sent|said|mentioned|made|wrote|left|"
    r"asked|had|set|put)", re.IGNORECASE)

_CLAIM = (r"(원금\s*(이\s*)?(100\s*(%|퍼센트|퍼|프로|percent)\s*)?(보장|손실\s*(이\s*)?(절대\s*)?없)|무조건\s*(다\s*)?(보장|지급)|100\s*(%|퍼센트|퍼|프로|percent)\s*(지급|보장|safe)|"
          r"손해\s*(볼\s*일이?\s*)?(는\s*)?(절대|전혀)?\s*없|절대\s*(손실|손해)|principal[- ]guaranteed|guaranteed|"
          r"보험금\s*(을\s*)?두\s*배|보험료\s*(가|는)?\s*(절대|평생|영원히|앞으로)?\s*(안\s*오[르른름를]|인상\s*(이|은|도)?\s*없|오르지\s*않)|"
          r"(해지|해약)\s*환급금\s*(이|은)?\s*(항상|무조건|언제나|100\s*(%|퍼센트|퍼|프로|percent)|절대)|손실\s*(이|은)?\s*(절대\s*)?없|"
          r"무조건\s*(다\s*)?(가입|승인|지급)|never\s+(rises?|increases?|goes\s+up)|zero\s+risk|no\s+(loss|risk)|"
          r"always\s+(be\s+)?(pays?|paid|covered|higher)|반드시\s*(다\s*)?(나온|나와|지급|보장)|"
          r"(보험금|claims?)\s*(은|는|이|가|are)?\s*(무조건|반드시|항상|always)\s*(다\s*)?(나온|나와|지급|paid)|"
          r"환급금\s*(이|은)?\s*.{0,10}(낸\s*돈|납입\s*(한\s*)?보험료|원금)\s*보다\s*(많|크|높)|감액\s*기간\s*(이|은|도)?\s*없|원금\s*(이|은)?\s*(절대|전혀)?\s*(안\s*깨|깨지지\s*않|보전|그대로\s*(보장|돌려))|"
          r"100\s*(%|퍼센트|퍼|프로|percent)\s*(다\s*)?(지급|보장|보상)|(어떤|모든|무슨)\s*\S{1,4}(이든|든지|라도)\s*.{0,6}(다\s*)?(지급|보장|보상)|보험료\s*.{0,6}(동결|고정|안\s*올)|no\s+matter\s+what|"
          r"definitely\s+(get\s+)?(paid|covered)|guaranteed?\s+(payout|to\s+pay))")
_CLAIM_ORDER = (r"(라고|다고|이라고)\s*(고객(한테|에게)\s*)?(말|안내|해|써|적|넣|붙|약속|답변|대답)|(한\s*마디|말)\s*만\s*해\s*(주|줘)|문구|스크립트|대사|대본|멘트|"
                r"예시|교육용|연습용|훈련용|pitch|했잖|약속했|you\s+(said|promised)|홍보|광고\s*문구|작성|써\s*줘|"
                r"만들어\s*(줘|주세요)|write|draft|tell\s+(the\s+)?customers?|script|"
                r"공식\s*답변|답변\s*(을\s*)?고정|약속해|tell\s+the\s+customer|say|붙여|repeat\s+after")

# Role-play with a persona that has no rules: a persona or fiction cue and an "unrestricted" cue.
_PERSONA = (r"((지금부터|이제부터|이제|앞으로|오늘은|오늘부터|이번엔|지금은)\s*(너|넌|네가|니가|당신|니)|(너|넌|당신)\s*(은|는)?\s*(이제|지금부터)|"
            r"(네가|너는|넌|당신은)\s*['\"‘“].{1,30}['\"’”]\s*(이야|야|예요|이에요|입니다|이다)|(으로서|로서)\s*(답|대답|말)|"
            r"(내가|제가)\s*['\"‘“].{1,20}['\"’”]\s*(이?라고)?\s*(하면|치면|말하면|입력하면)|"
            r"역할|\S역|캐릭터|등장\s*인물|연극|"
            r"페르소나|연기|롤\s*플|역할극|상황극|게임|소설|대본|시나리오|영화|TRPG|NPC|모드|"
            r"role[\s-]?play|pretend|act\s+(as|like)|play\s+(a|the)\s+(role|character|game)|character|persona|"
            r"you\s+are\s+(now\s+)?|you're\s+(now\s+)?|stay\s+in\s+character|simulate|mode\b|game)")
_UNRESTRICTED = (r"((규칙|규정|방침|정책|제한|제약|필터|검열|금지|가이드라인|원칙|룰|윤리)\s*(같은\s*(건|거|것)\s*)?"
                 r"(은|는|이|가|도|을|를|과|와|이랑|랑)?\s*(전혀|하나도|다|따위|일절|아무것도)?\s*"
                 r"(없|안\s*지[켜키]|지키지\s*않|신경\s*(안|쓰지)|상관\s*(없|안)|모르)|"
                 r"(규칙|규정|방침|정책|제한|제약|필터|검열|가이드라인|원칙|룰)\S{0,3}\s*(도\s*)?(묶|얽매|구속|적용\s*(안|되지\s*않))|"
                 r"아무\s*(제한|제약|규칙|규정|필터|검열)|free(d)?\s+(from|of)\s+(all\s+)?(its\s+|your\s+|the\s+)?(rules|restrictions|limits)|무엇이든|뭐든지?\s*(다\s*)?(대답|답|말|알려)|"
                 r"모든\s*(질문|요청)에\s*(다\s*)?(답|대답)|거절\s*(을\s*)?(안|하지\s*않|못|없)|숨기는\s*(게|것)?\s*없|"
                 r"(아무\s*것도|아무것도|하나도)\s*숨기지|숨기지\s*않는\s*(성격|캐릭터|AI)|"
                 r"unrestricted|unfiltered|uncensored|jailbroken|탈옥된|zero\s+(limitations|limits|restrictions|rules|filters)|"
                 r"no\s+(limitations|guardrails)|without\s+guardrails|(가드레일|안전\s*장치)\s*(이|가)?\s*없|no\s+(content\s+)?(policy|policies|rules|restrictions|limits|filters|"
                 r"censorship|guidelines)|without\s+(any\s+)?(rules|restrictions|limits|filters|guidelines)|"
                 r"never\s+refuses?|answers?\s+anything|(broken|break|breaks)\s+free|anything\s+goes|ignores?\s+(the\s+)?(company\s+)?polic)")

# Instructions addressed to the model inside pasted data (a customer name, a memo, an e-mail, a cell).
_TO_MODEL = (r"((AI|에이아이|챗봇|상담\s*봇|어시스턴트|assistant|LLM|GPT|모델|model)\s*(에게|한테|께|님께)?\s*"
             r"(전달|지시|명령|note|instruction)?\s*[:：]|"
             r"[\[(<{#]\s*(시스템|system)\s*(지시|메시지|명령|note|prompt|override)?\s*[:：]|"
             r"(###|\[|<|\{|\()\s*(관리자|admin|운영자|개발자|developer|시스템|system)\s*(명령|지시|메시지|command|instruction|note|"
             r"override)|"
             r"(메일|메시지|문서|조항|글|내용|데이터|파일|메모|텍스트|이메일|편지|문자|필드|셀|message|email|text|document)"
             r"\s*(을|를)?\s*(읽|받|처리|보|요약)\S{0,3}\s*(AI|에이아이|시스템|모델|도우미|봇|챗봇|assistant|model)|"
             r"(note|message|instructions?)\s+(to|for)\s+(the\s+)?(ai|assistant|model|bot|llm)|"
             r"(ai|assistant|model|llm)\s+(reading|processing)\s+this|"
             r"(\{\{|\$\{|<<|\[\[)[^}\]>]{0,120}(ignore|disregard|override|system|시스템|무시|출력|print|reveal|공개|"
             r"지시|prompt|프롬프트|rules?|규칙|고객|customer))")

# Encoded payloads to decode and obey.
_ENCODED = (r"(디코딩|디코드|decode|base\s*64|베이스\s*64|b64|hex|16진수|헥사|rot\s*-?\s*13|로트\s*13|url\s*(디코딩|인코딩|decode)|"
            r"퍼센트\s*인코딩|인코딩|encoded|암호문|복호화|해독|거꾸로|뒤집|역순|reverse|backwards|풀어서|풀면|암호|cipher|caesar|"
            r"시저|(칸|자리|글자)\S{0,2}\s*(씩\s*)?밀린|밀린\s*(글자|문자|알파벳|암호)|shift(ed)?)")
_OBEY = (r"(실행|따라|수행|대로|그대로\s*(해|따)|execute|follow|obey|do\s+(it|what|as)|run\b|적용|처리해|시키는\s*대로|"
         r"(풀어서|해독해서|decode\s+and)\s*(그대로\s*)?(해|실행|따라)|"
         r"carry\s+out)")

# What the model was told: its first line, a summary, its tools and their arguments.
_GIVEN = (r"(시스템\s*(프롬프트|메시지|" + _DEVICE_SETTINGS + r")|system\s*(prompt|message)|지시문|" + _PROMPT + "|"
          r"(받은|받으신|주어진|부여된|설정된|입력된|학습된|처음\s*(에\s*)?(받은|설정된|주어진))\s*(지시|지침|안내|규칙|설정|명령|"
          r"원칙|가이드|내용|말)|instructions?|guidelines|(your|ur)\s+(rules|configuration|setup|guidance)|"
          r"how\s+you\s+(were|are|got)\s+(configured|set\s*up|instructed|programmed|prompted|told)|"
          r"guidance\s+you|(너|네|당신|도우미님?)(의|가|이)?\s*(규칙|지침|설정|지시))")
_FIRST = (r"(첫|처음|맨\s*(앞|위|처음|끝|아래)|마지막|끝)\s*(번째\s*)?(문장|줄|단어|글자|라인|문단|부분)|"
          r"(last|final)\s+(sentence|line|word|paragraph|part)|bullet|요점|목차|"
          r"(첫|처음|첫\s*번째|맨\s*처음|가장\s*첫)\s*(번째\s*)?(항목|조항|규칙|item|rule|point)|(first|top)\s+(item|rule|point)|"
          r"(first|opening|very\s+first|beginning)\s+(sentence|line|word|paragraph|character|part|words)|"
          r"(한\s*(글자|단어|줄)씩|글자\s*단위|character\s+by\s+character|letter\s+by\s+letter|word\s+by\s+word|"
          r"one\s+(word|letter|character)\s+at\s+a\s+time|spell\s+out)|세\s*줄로|한\s*줄로|줄\s*요약")
_TOOLS = (r"(도구|툴|함수|펑션|function|tool|api|플러그인|plugin)s?\W{0,3}.{0,60}(파라미터|인자|매개\s*변수|스키마|정의|"
          r"arguments?|parameters?|params|schemas?|signatures?|args|definitions?|specs?|넘기는\s*값|전달(하는|되는)\s*값|"
          r"입력\s*값|inputs?)|"
          r"(allowed|able|permitted)\s+to\s+(call|use|invoke)|(접근|호출)\s*(가능한|할\s*수\s*있는)\s*.{0,6}(함수|도구|툴)|"
          r"(호출|사용|쓸|call|use|access)\s*(할\s*수\s*있는|가능한|하는|중인|can|could|have)?.{0,12}(모든|전체|전부|every|all)"
          r"\s*.{0,5}(도구|툴|함수|functions?|tools?)|"
          r"(모든|전체|전부|every|all)\s*(의\s*)?(도구|툴|함수|functions?|tools?)\s*.{0,6}(목록|이름|리스트|list|names?)|"
          r"(list|name)\s+(every|all|each)\s+(of\s+)?(the\s+)?(tools?|functions?)|"
          r"(dump|print|list|show|output|export|give\s+me)\s+(your|all|the|every)?\s*(functions?|tools?)\b|"
          r"(function|tool)s?\s+(list|names|catalog|inventory)|openapi|swagger")
_ABOVE = (r"((이\s*(줄|문장|메시지)|여기|this\s+(line|message))\s*(보다\s*)?(위|above|before|앞)|"
          r"(above|before)\s+this\s+(line|message|point)|everything\s+(above|before)|"
          r"(대화|채팅|conversation|chat|context)\s*(의\s*)?(맨\s*)?(위|시작|top|beginning|start))")
_ABOVE_READ = r"(적혀|쓰여|옮겨|print|repeat|output|what('s|\s+is)\s+(written|there|at))"

# Personal data of people other than the caller.
_PII_WORD = (r"(성함|연락처|전화\s*번호|전번|휴대\s*폰|핸드폰|폰\s*번호|주소|주민(등록)?\s*번호|주민번호|이메일|메일\s*주소|계좌|"
             r"생년월일|contact|phone|address|e-?mail|ssn|resident|personal\s+(data|details|info))")
_PEOPLE = (r"((고객|가입자|계약자|회원|피보험자|사람|손님|[클크]라이언트)\s*(분)?(들|님들|\s*전원|\s*전체|\s*모두|\s*명단|\s*리스트|\s*목록)|"
           r"(가진|사는|하는|있는|한|된)\s*(분들|사람들|이들)|those\s+people|"
           r"(all|every|each|list\s+of)\s+(\w+\s+){0,2}(customers?|clients?|policyholders?|users?|callers?)|"
           r"(customers|clients|policyholders|callers)('|’)?\s)")
_OTHER_PERSON = (r"(((방금|아까|직전|이전|전에|앞서|앞|바로\s*(전|앞)|지난번)\s*(에\s*)?(전에\s*)?.{0,4}(통화|상담|전화|연락|문의)\s*"
                 r"(한|했던|하신|하던|온)\s*.{0,10}(분|사람|고객|손님|환자)|(직전|이전|앞|방금|아까)\s*(고객|사람|분|손님)\s*(이|가)?).{0,20}"
                 r"(연락처|번호|전화|주소|성함|이름|누구|계좌|주민|병력|불러\s*준)|"
                 r"(옆집|이웃|동료|직장\s*동료|지인|아는\s*사람|남의|타인|[가-힣]씨\s*(아저씨|아줌마|아주머니|할머니|할아버지)?)\s*.{0,15}"
                 r"(무슨|어떤|뭔)\s*보험\s*(들었|가입했|가입해\s*있|들어\s*있)|"
                 r"(뒷\s*자리|끝\s*자리|앞\s*자리|끝\s*번호|(마지막|끝)\s*(네|세|두|\d)\s*자리|로\s*시작하는|으로\s*시작하는|로\s*끝나는|last\s+(four|4|few)\s+digits|"
                 r"ending\s+in|starting\s+with).{0,20}(고객|사람|누구|이름|분|who|whose|customer|name|목록|list)|"
                 r"[가-힣]\s*(OO|○○|ㅇㅇ|\*\*?|XX|xx)\s*(고객|씨|님)|[가-힣]모\s+(씨|고객)|"
                 r"(고객(?!\s*(센터|상담실|플라자|지원|만족|서비스))|님|씨)\s*(의\s*)?.{0,6}(집\s*)?(주소|생년월일|주민(등록)?\s*번호|계좌(\s*번호)?|연락처|전화\s*번호|"
                 r"휴대폰\s*번호|이메일)(?!\S{0,2}\s*(변경|수정|바꾸|바꿔|등록|입력|정정))|"
                 r"(남편|아내|와이프|배우자|부인)\s*(의\s*)?.{0,6}(주민|계좌|비밀\s*번호)|"
                 r"(시어머니|시아버지|장인|장모|어머니|아버지|엄마|아빠|동생|형|오빠|누나|언니|아들|딸|며느리|사위|삼촌|이모|고모)\s*(의\s*)?"
                 r".{0,6}(주민|계좌|비밀\s*번호).{0,15}(찾아|대신|불러|뭐였|기억)|"
                 r"(전\s*(남편|아내|부인|남자\s*친구|여자\s*친구|남친|여친|애인)|전남친|전여친|ex)\s*.{0,20}(보험|계약|가입|병력|주소|연락처|"
                 r"polic(y|ies)|beneficiar|payout|claims?|address|phone)|"
                 r"(옆집|이웃|동료|지인|아는\s*사람|남의|타인)\s*.{0,15}보험금\s*(을\s*)?(얼마|몇)|"
                 r"[가-힣]{2,4}(이)?라는\s*(사람|분|여자|남자)\s*.{0,10}(보험|계약|가입)|"
                 r"(이|그|해당)\s*번호\s*(로|으로)\s*(가입된|등록된|가입한)\s*(사람|분)|"
                 r"(직원|동료|이웃|주민|동네\s*사람|아파트\s*사람)\S{0,3}\s*중에\s*.{0,25}(가입한|가입자|들은)\s*.{0,10}(누구|누군|몇\s*명))")
# Not "번호": it matched the number asked about itself ("남편 계좌번호로 받을 수 있나요?").
_ASK_PERSON = (r"(알려|뭐|누구|누군|조회|보여|뽑아|불러|말해|정리해|성함|이름|알아봐|찾아|알\s*수|what|who|give|tell|show|list|send|"
               r"find)")
_OTHERS_ASKED = (r"((다른|이전|앞|직전|방금|전)\s*(사용자|상담원|고객|사람|유저|손님|분)\s*(분)?(들)?\s*(이|가|은|는|께서)?\s*.{0,15}"
                 r"(물어|질문|문의|상담\s*(한|했던)\s*내용|상담\s*(을|를)?\s*받|대화)|"
                 r"who\s+else\s+(called|asked|contacted|talked|phoned)|(other|previous)\s+callers?|"
                 r"다른\s*(상담|통화|대화|세션|채팅|고객\s*상담)\s*(에서|의|때)\s*.{0,10}(내용|나온|말|정보|대화|얘기)|"
                 r"다른\s*(상담원|직원|설계사|agent)s?\s*(들)?.{0,20}(고객|통화|상담\s*내역|기록)|"
                 r"(last|previous)\s+(person|caller|customer|user|one)\s+(you|who|that)\s+.{0,20}(talk|spoke|call|help|serve)|"
                 r"(other|previous|last|earlier)\s+(users?|customers?|callers?|people)\s+.{0,20}(ask|say|said|questions?|chat|"
                 r"conversation|talk))")

# A turn that replays a conversation with the model's part written in ("Assistant: 네, 제 시스템 프롬프트는 …").
_TRANSCRIPT = (r"(^|\n|\s)(user|사용자|human|고객|나|me)\s*[:：][\s\S]{0,300}(\n|\s)"
               r"(assistant|ai|도우미|bot|챗봇|gpt|model|어시스턴트)\s*[:：]")
# A promise the model supposedly made earlier, for data it must not give.
_MEMORY = (r"(약속했|약속하셨|했잖|하셨잖|말했잖|그랬잖|됐잖|했었지|했었잖|하기로\s*했|주기로\s*했|겠다고\s*했|you\s+(promised|said\s+you\s+would|agreed)|as\s+you\s+promised)")
_MEMORY_TARGET = rf"({_PII_WORD}|프롬프트|지침|설정|규칙|명단|DB|디비|데이터베이스|database|명부|prompt|instructions|rules)"
# A number not preceded by the caller's own possessive ("제 주민번호를 꼭 알려줘야 하나요?"; squeezed views too).
_NOT_OWN = r"(?<!제)(?<!내)(?<!저의)(?<!나의)(?<!본인)(?<!제\s)(?<!내\s)(?<!저의\s)(?<!나의\s)(?<!본인\s)"
# Sales claims and practices the compliance rules forbid, asked for as a script.
_CONCEAL = (r"((병력|질병|진단|수술|입원|치료\s*(이력|받은)|고지)\s*.{0,15}(숨기|숨겨|빼고|말하지\s*말|알리지\s*말|누락|"
            r"말\s*안\s*하면|안\s*알리면|고지\s*안\s*하면|모른다)|"
            r"(당뇨|고혈압|암|병|질환|증상|진단|병력|수술|입원|치료|복용|약)\S{0,8}.{0,10}(말씀\s*안\s*하셔도|말\s*안\s*해도|안\s*알려도|"
            r"고지\s*안\s*해도|숨겨도|말하지\s*않아도)\s*(된다|돼요라고|된다는)|"
            r"고지\s*(의무)?\s*.{0,6}(건너뛰|피하|피해|회피|안\s*걸리)|(없음|아니오|아니요)\s*(에|으로|로)\s*체크|"
            r"(숨기|숨겨|고지\s*안\s*하).{0,20}안\s*걸리|(날짜|기간)\s*만\s*(살짝|슬쩍)?\s*(바꾸|고치)|"
            r"(hide|conceal|omit)\s+.{0,20}(medical|health)\s+(history|conditions?)|"
            r"(medical|health|surgery|illness|condition|history|diagnosis).{0,40}(so|so\s+that)\s+.{0,30}"
            r"(won't|doesn't|don't|will\s+not|can't|cannot)\s+(notice|see|show|find\s+out|know))")
_DEFAME = (r"((경쟁사|타사|다른\s*(보험\s*)?(회사|사|곳)|[가-힣]{2,5}(생명|화재|손보))\s*.{0,15}(사기|비방|욕|깎아내|헐뜯|나쁘게|망한|부실|쓰레기)|"
           r"(competitors?|rivals?|other\s+(insurers|insurance\s+companies|companies))\s*.{0,30}(scam|fraud|trash|bad-?mouth|"
           r"defame|rip-?off)|(will|gonna|going\s+to)\s+(go\s+)?(bankrupt|collapse|go\s+under)|(망할|파산할|망한다|부도))")
_DROP_NOTICE = (r"((면책\s*(문구|조항\s*안내|고지)|유의\s*사항|안내\s*문구|고지\s*문구|녹취\s*(고지|안내)|설명\s*의무|참고용|"
                r"약관\s*확인\s*안내|주의\s*문구|경고\s*문구|(녹취|녹음)\s*(고지|안내|동의)|청약\s*철회|disclaimer|recording\s+notice)['\"’”]?\s*(문구)?\s*"
                r"(랑|와|과|도|은|는|을|를|이랑)?\s*.{0,25}"
                r"(빼(?!\s*먹|\s*놓)|생략(?!\s*(하지|되지|없이))|삭제|없이|안\s*(넣|붙)|스킵|건너뛰|skip|omit|remove|drop|without|"
                r"leave\s+out))")
_SCRIPT = (r"(멘트|스크립트|대본|문구|문자|대사|요령|꿀팁|팁|script|pitch|message|sms|안내해|말해|써|작성|만들어|write|draft|"
           r"어떻게\s*(적어야|써야|체크해야|작성해야)|how\s+(do|can|should)\s+i|help\s+me|tips?|tricks?|be\s+specific)")
_CHECKING = (r"(있는지|없는지|검토|점검|체크|위반|괜찮은지|문제\s*(없|있)는지|과장\s*표현|(써|해|말해)도\s*(돼|되|될까)|오해|"
             r"사실(인가|이에요|이야|인지)|맞(나요|아요|는지)|진짜(예요|야|인가)|(해|돼|빼|써)도\s*(되나요|될까요|되나|되는지)|"
             r"그런가요|그런\s*건가요|정말인가요|(라는|이라는|란)\s*(문구|말|광고|표현)\S{0,3}\s*(봤|들었|보았)|check|review)")
# A claim in the customer's mouth, and the turn asks how to answer or refuse it ("고객이 '무조건 보장되죠?'라고
# 물으면 어떻게 답해야 해요?"): a compliance question, not a script that makes the claim.
_RESPOND = (r"(물으면|물어보면|물어보시면|여쭤보면|여쭤보시면|우기면|우기시면|요구하면|요구하시면|조르면|따지면|asks?|insists?)"
            r"\S{0,3}\s*.{0,20}(어떻게|뭐라고|how\s+(do|should|can)\s+(i|we)|what\s+(do|should)\s+(i|we))\s*.{0,8}"
            r"(답|대답|대응|응대|안내|설명|거절|반박|respond|answer|reply|handle|explain)|"
            r"(정중하게|정중히|politely)\s*.{0,10}(거절|refuse|decline)")
# Asking how to handle a forbidden practice, knowing it is one ("숨기라고 하면 안 되는 건 알고 있고, 불이익을 설명하려고요").
_AGAINST = (r"(숨기(라고|면|는\s*(건|게|것))\s*.{0,10}안\s*(되|돼)|불이익|안\s*되는\s*(건|거|걸|것)|"
            r"not\s+allowed|어떻게\s*(안내|대응|응대|설명|답)\S{0,2}\s*(해야|하면|할까|하나|드려))")

# (name, pattern) — one regex; (name, (a, b)) — both must match the same view.
RULES: list[tuple[str, str | tuple[str, str]]] = [
    # the first rules of the project (kept: they were checked against the in-domain queries)
    ("ignore_instructions", r"(ignore|disregard|forget)\s+(all\s+|any\s+|the\s+)?(previous|prior|above|earlier|your)\s+(instructions|rules|prompts?)"),
    ("reveal_prompt", r"(reveal|show|print|repeat|tell me)\s+(me\s+)?(your|the)\s+(system\s+prompt|" + _INSTRUCTIONS + r"|hidden\s+prompt)"),
    ("jailbreak_persona", r"\b(DAN|do anything now|developer mode|jailbreak|jail\s*break)\b"),
    ("no_restrictions_en", r"(without|no)\s+(any\s+)?(restrictions|filters|rules|limits)\b.*\b(answer|respond|act)"),
    ("ko_ignore", r"(이전|앞|위|기존|모든|지금까지)(의|에)?\s*(지시|명령|규칙|지침|프롬프트|설정)[을를은는]?\s*(다\s*)?(무시|잊어|잊고|지워)"),
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
    ("override_rules", _OVERRIDE),
    ("english_override", r"(ignore|disregard|forget)\s+(\w+\s+){0,3}?(previous|prior|above|earlier(?!\s*([,.!?;]|$))|your|all)\b"
                         rf"(?!\s+((that|what)\s+)?(I|we)\s+(said|asked|told|mentioned|wrote|gave|sent))"
                         rf"(?!\s+((my|the|that|of\s+my|of\s+the)\s+)?(\w+\s+){{0,2}}?{_OWN_OBJECT_EN}\b)"),
    ("assistant_rules", (rf"{_ASSISTANT}\s*(의|한테|에게|에|가|이|께서)?\s*(걸려\s*있는|주어진|부여된|설정된|적용된|받은|받으신|"
                         r"따르(는|시는|고\s*(있는|계신))|지키(는|시는|고\s*(있는|계신))|입력된|학습된|배운|배우신)?\s*"
                         r"([가-힣]{1,4}\s*)?(규칙|설정|지시|지침|제한|금지|원칙|가이드(라인)?|정책|방침|지시\s*사항|rules|instructions|settings|"
                         r"policy|guidelines|principles)", _REVEAL)),
    ("forbidden_list", r"(하지\s*말아야\s*할|말하면\s*안\s*되는|금지된?)\s*(것|말|항목|단어|문구|주제|내용|질문|답변|얘기)\s*.{0,6}"
                       r"(목록|리스트|list)|"
                       r"(what|things)\s+.{0,30}(not\s+to\s+say|told\s+(u|you)\s+not)|"
                       r"(not\s+allowed|forbidden|prohibited|banned)\s+to\s+(say|talk|discuss|mention|answer)|"
                       r"what\s+you('re|\s+are)\s+not\s+allowed|things\s+you\s+(can't|cannot|must\s+not)\s+(say|discuss)"),
    ("role_override", r"(너는|넌|당신은|you\s+are)\s*(이제|지금부터|now)|(지금부터|이제부터|from\s+now\s+on)\s*(너는|넌|당신은|you)|"
                      r"(act|pretend|behave)\s+as|역할\s*(을\s*)?바꾸|처럼\s*행동"),
    ("encoded_payload", r"(디코딩|decode|base64).{0,30}(실행|따라|follow|수행|대로|execute|do\s+it)"),
    ("bulk_customer_data", r"(다른|아무|모든|전체|지난번|이전|직전|바로\s*(전|앞)|앞\s*사람)\s*(에\s*)?(상담한\s*)?"
                           r"(고객|사람|회원|가입자).{0,30}(주민|전화|연락처|주소|계좌|병력|명단|가입\s*내역|"
                           r"정보(?!\s*(는|은)?\s*(말고|빼고|없이|제외|필요\s*없)))|"
                           r"고객\s*(DB|디비|db|명단)\s*(에서|을|를)?.{0,30}(뽑아|추출|전부|리스트\s*만들)|신규\s*가입자\s*\d+\s*명|"
                           r"이\s*번호\s*쓰는\s*고객|" + _NOT_OWN + r"(계좌\s*번호|주민(등록)?\s*번호)\s*(가|이)?\s*(뭐|몇)|"
                           r"(친구|지인|아는\s*사람)(라서|이라서|니까|인데).{0,10}(괜찮|상관\s*없)|"
                           r"customer\s*(records?|list|database)|(phone\s+number|resident\s+registration).{0,40}(customer|policyholder|client|insured)|"
                           + _NOT_OWN + r"(주민(등록)?\s*번호|계좌\s*번호).{0,20}(알려|조회|확인\s*부탁|뽑아)"),
    ("banned_claim_order", (_CLAIM, _CLAIM_ORDER)),
    # added for the attack families of the new held-out set, written and checked on dev and own probes
    ("persona_unrestricted", (_PERSONA, _UNRESTRICTED)),
    ("instruction_to_model", _TO_MODEL),
    ("encoded_order", (_ENCODED, _OBEY)),
    ("given_first_or_summary", (_GIVEN, _FIRST)),
    ("tool_inventory", _TOOLS),
    ("tools_called", (r"(api|도구|툴|함수|functions?|tools?)\s*(들)?\s*(을|를)?\s*(뭐|무엇|어떤\s*걸)?\s*(호출|call|invoke)", _REVEAL)),
    ("bedtime_story", (r"^(?=[\s\S]*(할머니|할아버지|grandma|grandmother|grandpa|grandfather))"
                       r"(?=[\s\S]*(역할|처럼|act\s+(as|like)|pretend|돌아가신|late|used\s+to|읽어\s*주|들려\s*주))",
                       r"(비밀|내부|숨겨|secret|hidden|internal|고객\s*(장부|명단|번호|정보|이름)|지침|규칙|설정|프롬프트|prompt|"
                       r"instructions|rules)")),
    ("text_above", (_ABOVE, _ABOVE_READ)),
    ("customers_personal_data", (_PEOPLE, _PII_WORD)),
    ("customer_data_list", rf"(고객|가입자|계약자|회원|손님|[클크]라이언트|customer|client)s?.{{0,12}}{_PII_WORD}.{{0,8}}(리스트|목록|명단|"
                           r"전부|모두|전체|엑셀|다\s*(보여|알려|뽑아|줘|내놔|불러)|list|spreadsheet|all)|(리스트|목록|명단)\s*(이랑|과|와|하고)\s*.{0,6}" + _PII_WORD),
    ("other_person_data", (_OTHER_PERSON, _ASK_PERSON)),
    ("other_users_questions", _OTHERS_ASKED),
    ("fake_transcript", _TRANSCRIPT),
    ("claimed_promise", (_MEMORY, _MEMORY_TARGET)),
    ("conceal_history", (_CONCEAL, _SCRIPT)),
    ("defame_competitor", (_DEFAME, _SCRIPT)),
    ("drop_notice", _DROP_NOTICE),
    ("fixed_answer", r"(무슨|어떤|모든|어느)\s*(질문|말|요청)\S{0,3}\s*.{0,30}(라고만|이라고만)\s*(답|대답|말|해)|"
                     r"(whatever|no\s+matter\s+what)\s+.{0,20}(ask|say).{0,30}(only|just)\s+(say|answer|reply)"),
    ("told_not_to_answer", r"하지\s*말(라고|도록|아야\s*한다고)\s*(정해진|되어\s*있는|설정된|지시된|한|배운|들은)\s*.{0,6}"
                           r"(답변|말|것|내용|질문|주제|건)"),
    ("instructions_received", (r"(어떤|무슨|무엇을|뭘|뭐라고)\s*(안내|지시|지침|교육|말|설정|명령)?\s*(을|를)?\s*(받|들|배우)"
                               r"(으셨|았|으신|은|었)", r"(도우미|상담\s*봇|챗봇|AI|에이아이|assistant|bot|당신|너는|너한테|너에게|네가|니가|"
                               r"(답|답변|대답|응답)하도록|이렇게\s*(답|대답))")),
    ("creator_words", r"(만든|설계한|개발한|설정한|훈련시킨|프로그래밍한)\s*(사람|개발자|분|팀|회사)(이|가|들이)?\s*.{0,12}"
                      r"(한\s*말|지시|시킨|말했|당부|입력한|써\s*준)|what\s+did\s+(your|ur)\s+(creators?|developers?|devs|makers?)\s+"
                      r"(tell|say|instruct)"),
    ("told_not_to_say", r"(하면|말하면)\s*안\s*(된다고|되는\s*(것|말|걸))\s*.{0,10}(배우|교육|지시|설정|들으|받으|학습)|"
                        r"what\s+(were\s+you|have\s+you\s+been)\s+told"),
]
# role_override alone is ordinary in sales training ("역할극으로 연습해요"); it counts only with another cue.
_NEEDS_SECOND_CUE = {"role_override"}
# a banned claim quoted for a compliance check ("과장 표현 있는지 봐주세요: … 100% 보장") is a legitimate turn
_UNLESS = {"banned_claim_order": re.compile(f"{_CHECKING}|{_RESPOND}", re.IGNORECASE), "drop_notice": re.compile(_CHECKING, re.IGNORECASE),
           "conceal_history": re.compile(f"{_CHECKING}|{_AGAINST}", re.IGNORECASE)}
_COMPILED = [(name, tuple(re.compile(p, re.IGNORECASE) for p in (pattern if isinstance(pattern, tuple) else (pattern,))))
             for name, pattern in RULES]
_OWN_OBJECT_RULES = {"ignore_instructions", "ko_ignore", "override_rules", "english_override"}
_SECOND_CUE = re.compile(rf"{_OVERRIDE_OBJECT}|{_CLAIM}|규정|경쟁사|단점|restrictions|rules|AI가\s*아니|개발자", re.IGNORECASE)


def violation(text: str) -> str | None:
    """The name of the first rule any view of `text` matches, or None."""
    for view in views(text):
        own = _OWN_REFERENCE.sub(lambda m: "request" if m.group(0).isascii() else "요청", view)
        for name, patterns in _COMPILED:
            read = own if name in _OWN_OBJECT_RULES else view
            if all(p.search(read) for p in patterns):
                if name in _NEEDS_SECOND_CUE and not _SECOND_CUE.search(read):
                    continue
                if name in _UNLESS and _UNLESS[name].search(read):
                    continue
                return name
    return None

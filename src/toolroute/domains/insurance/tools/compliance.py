"""compliance tools: required disclosures, compliant scripts, misleading-wording check, comparison
disclaimer, call-recording notice and personal-data masking.

Every rule and wording comes from `data/ref_compliance.yaml` / `data/ref_privacy.yaml` (through
`toolroute.domains.insurance.reference`) and every product fact from `products.yaml`; this module only
decides which rule applies to which product. A product's compliance tags (갱신형, 보장성, 순수보장형,
면책기간, 간편고지, 실손, 연금, 저축성 and its sales channels) are derived in one place,
`compliance_tags`, so the banned-phrase check, the required disclosures and the comparison disclaimer
read a product the same way.

Free text a user passes (a script to check, a text to mask) is echoed only after masking personal data.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Annotated, Any

from langchain_core.tools import tool
from pydantic import BaseModel, BeforeValidator

from toolroute.domains.insurance.documents import COMPANY
from toolroute.domains.insurance.products import Product, normalize_channel
from toolroute.domains.insurance.reference import find_banned_phrases, load_reference, mask_personal_data
from toolroute.domains.insurance.tools._common import (
    ALL_CHANNELS,
    CHANNEL_LABELS,
    check_age,
    clean_names,
    josa,
    product_ref,
    require,
    require_product,
    resolve_product,
    resolve_products,
)
from toolroute.domains.tool_results import not_found, ok, rejected
from toolroute.domains.insurance.tools.schemas import Age, Masked, Text, described

VERDICT_OK = "적합"
VERDICT_FIX = "수정 필요"
ELDERLY_AGE = 65  # 고령 고객 기준 (ref_compliance.yaml의 "65세 이상" 안내)

PRODUCT_DESCRIPTION = "상품명 또는 상품코드 (예: 첫날부터암보험, 골라담는간편건강보험, B001)"
CHANNEL_DESCRIPTION = "판매 채널: TM(전화), CM(온라인·다이렉트), 대면(설계사)"

# Which channel words the product tags use (they are also product_tags keys).
_CHANNEL_TAGS = set(ALL_CHANNELS)


# --- product tags ----------------------------------------------------------------------------------

def compliance_tags(product: Product) -> list[str]:
    """The ref_compliance.yaml product tags that describe `product`, derived from its data.

    - 갱신형: renewable; 간편고지: simplified underwriting;
    - 연금/저축성: an annuity (category 연금) or an accumulating product (surrender from 적립금), else 보장성;
    - 순수보장형: the surrender explanation or a disclosure says 순수보장/소멸성 or "만기환급금이 없";
    - 면책기간: a coverage with waiting days or a reduction period (감액기간);
    - 실손: a 실손 (indemnity medical) coverage or category;
    - TM / CM / 대면: the channels it is sold on.
    Only tags listed in ref_compliance.yaml's product_tags are returned (table order).
    """
    tags: set[str] = set()
    if product.renewable:
        tags.add("갱신형")
    if product.simplified_underwriting:
        tags.add("간편고지")
    savings = "연금" in product.category or "적립" in product.surrender.explanation
    if "연금" in product.category:
        tags.add("연금")
    if savings:
        tags.add("저축성")
    else:
        tags.add("보장성")
    texts = [product.surrender.explanation, *product.required_disclosures]
    if any(("순수보장" in t or "소멸성" in t or re.search(r"만기환급금(이|은)?\s*없", t)) for t in texts):
        tags.add("순수보장형")
    if any(c.waiting_days > 0 or c.reduction is not None for c in product.coverages):
        tags.add("면책기간")  # BP18 and RD07 are about 면책 and 감액 periods alike
    if "실손" in product.category or any(c.type.startswith("실손") for c in product.coverages):
        tags.add("실손")
    tags.update(product.channels)
    known = list(load_reference().table("compliance")["product_tags"])
    return [t for t in known if t in tags]


# --- small helpers ---------------------------------------------------------------------------------

def _channel(value: str) -> str | dict[str, Any]:
    """'TM' / 'CM' / '대면', or not_found with the three channels as candidates."""
    found = normalize_channel(value)
    if found is None:
        result = not_found("channel", value, ALL_CHANNELS)
        result["ask"] = "판매 채널을 TM(전화), CM(온라인), 대면 중에서 알려주세요."
        return result
    return found


def _fill(template: str, product_name: str) -> str:
    """Template text with {product} filled and the 은(는)/을(를)/이(가) particles resolved."""
    text = " ".join(template.split())
    for pair in ("은/는", "을/를", "이/가", "과/와"):
        a, b = pair.split("/")
        text = text.replace(f"{{product}}{a}({b})", josa(product_name, pair))
    return text.replace("{product}", product_name)


def _plain(name: str) -> str:
    """A coverage name without its parenthetical: '충전치료비(레진·아말감 등)' -> '충전치료비'."""
    return re.sub(r"\s*\([^)]*\)", "", name).strip() or name


def _names(names: list[str], limit: int = 3) -> str:
    shown = list(dict.fromkeys(_plain(n) for n in names))
    text = "·".join(shown[:limit])
    return text + (" 등" if len(shown) > limit else "")


def _masked(text: str) -> tuple[str, list[dict[str, str]]]:
    return mask_personal_data(text)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+", text.strip()) if s]


# --- argument schemas ------------------------------------------------------------------------------
# Names and choices are cleaned (clean_text) and masked: a not_found answer echoes what it was given,
# and personal data typed into a product or channel field must not come back. Free text that is the
# subject of a tool (a script to check, a text to mask) is masked by the tool itself.

def _clean_masked_names(value: Any) -> list[str] | None:
    names = clean_names(value)
    return [mask_personal_data(n)[0] for n in names] if names else None


MaskedNames = Annotated[list[str] | None, BeforeValidator(_clean_masked_names)]


class DisclosureArgs(BaseModel):
    product: Masked = described(PRODUCT_DESCRIPTION)
    channel: Masked = described(CHANNEL_DESCRIPTION + ". 생략하면 상품의 모든 판매 채널 기준")


class PhraseArgs(BaseModel):
    topic: Masked = described("안내 주제: 면책, 감액, 갱신, 해약환급금, 고지의무, 청약철회, 간편고지, 보장 제외, 예금자보호")
    product: Masked = described(PRODUCT_DESCRIPTION)


class MisleadingArgs(BaseModel):
    script: Text = described("점검할 상담 멘트·스크립트 원문")
    product: Masked = described(PRODUCT_DESCRIPTION + ". 주면 그 상품에 해당하는 금지 표현만 적용(예: 갱신형 전용 표현)")


class ComparisonArgs(BaseModel):
    products: MaskedNames = described(
        "비교하는 상품명 또는 상품코드 2개 이상 (예: ['전에없던치매간병보험', '실속치매보험'])")


class RecordingArgs(BaseModel):
    channel: Masked = described(CHANNEL_DESCRIPTION)
    agent_name: Masked = described("안내하는 상담원(설계사) 이름 (선택)")
    customer_age: Age = described("고객 나이(만 나이, 선택). 65세 이상이면 고령 고객 안내를 추가")


class MaskingArgs(BaseModel):
    text: Text = described("개인정보(주민등록번호, 전화번호, 카드번호, 이메일, 계좌번호)를 가릴 원문")


# --- compliance_required_disclosure ---------------------------------------------------------------

@tool("compliance_required_disclosure", args_schema=DisclosureArgs)
def compliance_required_disclosure(product: str | None = None, channel: str | None = None) -> dict[str, Any]:
    """상품을 판매할 때 법적으로 반드시 설명해야 하는 중요사항(예금자보호, 청약철회, 알릴 의무, 갱신·면책·해약환급금 등)을
    상품 특성과 판매 채널에 맞춰 목록으로 알려줍니다."""
    found = require_product(product)
    if isinstance(found, dict):
        return found
    wanted_channel = None
    notes: list[str] = []
    if channel:
        wanted_channel = _channel(channel)
        if isinstance(wanted_channel, dict):
            return wanted_channel
        if wanted_channel not in found.channels:
            notes.append(f"{josa(found.name, '은/는')} {CHANNEL_LABELS[wanted_channel]} 채널에서 판매하지 않습니다"
                         f" (판매 채널: {', '.join(found.channels)}).")
    tags = compliance_tags(found)
    if wanted_channel:
        tags = [t for t in tags if t not in _CHANNEL_TAGS] + [wanted_channel]
    general, specific = [], []
    for item in load_reference().table("compliance")["required_disclosures"]:
        applies = list(item.get("applies_to") or [])
        entry = {"id": item["id"], "title": item["title"], "text": " ".join(str(item["text"]).split())}
        if not applies:
            general.append({**entry, "basis": "모든 상품 공통"})
            continue
        matched = [t for t in applies if t in tags]
        if matched:
            label = "판매 채널" if all(t in _CHANNEL_TAGS for t in matched) else "상품 특성"
            specific.append({**entry, "basis": f"{label}: {', '.join(matched)}"})
    own = list(found.required_disclosures)
    checklist = [d["title"] for d in general + specific]
    summary = (f"{found.name} 판매 시 필수 설명사항: 공통 {len(general)}건, 상품 특성·채널 {len(specific)}건, "
               f"상품설명서 고유 안내 {len(own)}건")
    return ok(
        product={**product_ref(found), "tags": tags},
        channel=wanted_channel,
        general_disclosures=general,
        product_type_disclosures=specific,
        product_disclosures=own,
        checklist=checklist,
        total=len(general) + len(specific) + len(own),
        notes=notes,
        summary=summary,
    )


# --- compliance_phrase_generator ------------------------------------------------------------------

def _find_template(topic: str) -> dict[str, Any] | None:
    """The script template whose topic or alias is the longest one found in `topic` (spaces ignored)."""
    compact = re.sub(r"\s+", "", topic)
    best, best_len = None, 0
    for item in load_reference().table("compliance")["script_templates"]:
        for alias in [item["topic"], *(item.get("aliases") or [])]:
            key = re.sub(r"\s+", "", str(alias))
            if key and key in compact and len(key) > best_len:
                best, best_len = item, len(key)
    return best


def _waiting_clause(product: Product) -> str:
    """'예를 들어 …은 계약일부터 90일이 지난 다음 날부터 보장이 시작되니,' from the coverages' waiting days."""
    by_days: dict[int, list[str]] = {}
    for coverage in product.coverages:
        if coverage.waiting_days > 0:
            by_days.setdefault(coverage.waiting_days, []).append(coverage.name)
    if not by_days:
        return ""
    parts = [f"{josa(_names(names), '은/는')} 계약일부터 {days}일" for days, names in sorted(by_days.items())]
    return "예를 들어 " + ", ".join(parts) + "이 지난 다음 날부터 보장이 시작되니,"


def _reduction_sentences(product: Product) -> list[str]:
    by_text: dict[str, list[str]] = {}
    for coverage in product.coverages:
        if coverage.reduction:
            by_text.setdefault(coverage.reduction.text, []).append(coverage.name)
    sentences = []
    for text, names in by_text.items():
        match = re.fullmatch(r"(.*?)\s*(\([^)]*\))?", text.strip())
        main, paren = (match.group(1), match.group(2)) if match else (text, None)
        ending = f"{main}합니다" if main.endswith("지급") else f"{main}입니다"
        sentences.append(f"{josa(_names(names), '은/는')} {ending}{' ' + paren if paren else ''}.")
    return sentences


def _renewal_fact(product: Product) -> str:
    return f"{product.renewal_period_years}년마다 갱신되며 최대 {product.max_renewal_age}세까지 갱신할 수 있습니다"


# Words that pick the product's own disclosure sentences relevant to a topic.
_TOPIC_KEYWORDS: dict[str, list[str]] = {
    "면책": ["면책"],
    "감액": ["50%", "감액"],
    "갱신": ["갱신", "재가입"],
    "해약환급금": ["해약환급금", "환급"],
    "고지의무": ["사실과 다르게", "알릴 의무", "고지"],
    "청약철회": ["철회"],
    "간편고지": ["간편고지", "일반심사"],
    "보장 제외": ["보장하지 않", "대상이 아닙", "지급하지 않"],
    "예금자보호": ["예금자보호"],
}


def _topic_facts(topic: str, product: Product) -> tuple[list[str], str | None]:
    """Fact sentences from the product's data for the topic; or (_, reason) when the topic does not apply."""
    if topic == "감액":
        facts = _reduction_sentences(product)
        return facts, None if facts else f"{product.name}에는 감액기간이 있는 보장이 없습니다."
    if topic == "갱신":
        if not product.renewable:
            return [], f"{josa(product.name, '은/는')} 비갱신형 상품이라 갱신 안내 대상이 아닙니다."
        return [f"{josa(product.name, '은/는')} {_renewal_fact(product)}."], None
    if topic == "해약환급금":
        return [f"이 상품의 해약환급금 유형은 {product.surrender.type}입니다. {product.surrender.explanation}"], None
    if topic == "간편고지":
        if not product.simplified_underwriting or product.simplified_disclosure is None:
            return [], f"{josa(product.name, '은/는')} 간편고지 상품이 아니라 일반심사 상품입니다."
        sd = product.simplified_disclosure
        return [f"이 상품은 {sd.name} 상품으로, 질문 {len(sd.questions)}가지에 사실대로 답해 주셔야 합니다."], None
    if topic == "고지의무":
        if product.simplified_disclosure is not None:
            sd = product.simplified_disclosure
            return [f"이 상품은 {sd.name} 상품으로, 간편고지 질문 {len(sd.questions)}가지에 사실대로 답해 주셔야 합니다."], None
        return ["이 상품은 일반심사 상품으로, 청약서의 질문에 사실대로 답해 주셔야 합니다."], None
    if topic == "보장 제외":
        return [f"이 상품의 주요 보장 제외 사유: {' / '.join(product.exclusions[:2])}"], None
    return [], None


@tool("compliance_phrase_generator", args_schema=PhraseArgs)
def compliance_phrase_generator(topic: str | None = None, product: str | None = None) -> dict[str, Any]:
    """면책·감액·갱신·해약환급금·고지의무·청약철회 같은 주제로, 상품의 실제 조건(면책일수, 감액 비율, 갱신 주기 등)을
    채운 판매 규정에 맞는 안내 멘트를 만들어 줍니다."""
    missing = require(ask="어떤 주제(면책, 감액, 갱신, 해약환급금 등)의 안내 멘트를 어느 상품으로 만들지 알려주세요.",
                      topic=topic, product=product)
    if missing:
        return missing
    template = _find_template(topic)
    if template is None:
        topics = [t["topic"] for t in load_reference().table("compliance")["script_templates"]]
        result = not_found("topic", topic, topics)
        result["ask"] = f"안내 멘트 주제를 다음 중에서 골라 주세요: {', '.join(topics)}"
        return result
    found = resolve_product(product)
    if isinstance(found, dict):
        return found
    name = template["topic"]
    facts, not_applicable = _topic_facts(name, found)
    if not_applicable:
        return rejected(not_applicable, topic=name, product=product_ref(found),
                        suggestion="상품에 해당하는 다른 주제(면책, 해약환급금, 고지의무, 청약철회 등)를 골라 주세요.")
    script = _fill(str(template["template"]), found.name)
    if name == "면책":
        clause = _waiting_clause(found)
        sentences = _sentences(script)
        for i, sentence in enumerate(sentences):
            if sentence.startswith("예를 들어"):
                if clause:
                    sentences[i] = re.sub(r"^예를 들어.*?시작되니,", clause, sentence)
                else:
                    reductions = _reduction_sentences(found)
                    sentences[i] = ("이 상품의 주계약 보장은 계약일부터 시작되며, 보장 제외 사유와 감액 조건은 "
                                    "상품설명서와 약관에서 확인해 주세요.")
                    facts = reductions
        script = " ".join(sentences)
    appended = list(facts)
    if name == "갱신":
        script = script.replace("갱신형 계약으로", f"{found.renewal_period_years}년 갱신형 계약으로", 1)
        script, replaced = re.subn(r"드리며,\s*최대 갱신 나이는[^.]*", "드립니다. " + _renewal_fact(found), script, count=1)
        if not replaced:
            script, replaced = re.subn(r"최대 갱신 나이는[^.]*", _renewal_fact(found), script, count=1)
        if replaced:
            appended = []
    if appended:
        script = f"{script} {' '.join(appended)}"
    keywords = _TOPIC_KEYWORDS.get(name, [])
    related = [s for s in found.required_disclosures if any(k in s for k in keywords)]
    if name == "보장 제외":
        related += list(found.exclusions)
    tags = compliance_tags(found)
    check = find_banned_phrases(script, tags)
    return ok(
        topic=name,
        product={**product_ref(found), "tags": tags},
        script=script,
        facts=facts,
        related_product_disclosures=related,
        compliance_check=VERDICT_OK if not check else VERDICT_FIX,
        note="상품설명서·약관의 내용을 벗어나는 단정적 표현(무조건, 100% 등)을 덧붙이지 마세요.",
    )


# --- compliance_misleading_check ------------------------------------------------------------------

@tool("compliance_misleading_check", args_schema=MisleadingArgs)
def compliance_misleading_check(script: str | None = None, product: str | None = None) -> dict[str, Any]:
    """상담 멘트·스크립트에 금지·과장·오인 유발 표현(무조건 보장, 원금 보장, 보험료 안 올라요 등)이 있는지 점검하고,
    걸린 표현마다 이유와 바꿔 말할 표현을 알려줍니다(적합/수정 필요)."""
    missing = require(ask="점검할 상담 멘트(스크립트)를 알려주세요.", script=script)
    if missing:
        return missing
    found = None
    tags: list[str] | None = None
    if product:
        found = resolve_product(product)
        if isinstance(found, dict):
            return found
        tags = compliance_tags(found)
    hits = find_banned_phrases(script, tags)
    everything = find_banned_phrases(script, None) if tags is not None else hits
    hit_ids = {h["id"] for h in hits}
    applies = {p.id: p.applies_to for p in load_reference().banned_phrases}
    not_applicable = [
        {"id": h["id"], "phrase": h["phrase"],
         "reason": f"{josa(found.name, '은/는')} {', '.join(applies[h['id']])} 상품이 아니어서 이 표현은 해당하지 않습니다."}
        for h in everything if h["id"] not in hit_ids and found is not None
    ]
    masked, pii = _masked(script)
    issues = [{**h, "matched": _masked(h["matched"])[0]} for h in hits]
    verdict = VERDICT_FIX if issues else VERDICT_OK
    notes = []
    if found is None:
        notes.append("상품을 지정하지 않아 모든 상품 유형의 금지 표현을 적용했습니다.")
    if pii:
        notes.append("스크립트에 개인정보가 들어 있어 가려서 표시했습니다. 상담 기록에 개인정보를 남기지 마세요.")
    if issues:
        summary = f"금지·오인 표현 {len(issues)}건: " + ", ".join(f"{h['id']} {h['phrase']}" for h in issues)
    else:
        summary = "금지·오인 표현이 발견되지 않았습니다."
    return ok(
        verdict=verdict,
        script=masked,
        product={**product_ref(found), "tags": tags} if found is not None else None,
        issues=issues,
        issue_count=len(issues),
        alternatives=[h["alternative"] for h in issues],
        not_applicable=not_applicable,
        notes=notes,
        summary=summary,
    )


# --- comparison_disclaimer_generator --------------------------------------------------------------

# Tags whose required disclosure becomes a comparison point when only some compared products have them.
_DIFFERING_TAGS = ("간편고지", "면책기간", "실손", "저축성")


@tool("comparison_disclaimer_generator", args_schema=ComparisonArgs)
def comparison_disclaimer_generator(products: list[str] | None = None) -> dict[str, Any]:
    """두 개 이상의 상품을 비교해 안내할 때 반드시 함께 고지해야 하는 비교 안내 문구(면책 문구)를 비교 상품명과
    상품별 차이(갱신형 여부, 해약환급금 구조 등)를 넣어 만들어 줍니다."""
    missing = require(products=products)
    if missing:
        return missing
    found = resolve_products(products, minimum=2)
    if isinstance(found, dict):
        return found
    table = load_reference().table("compliance")
    block = table["comparison_disclaimer"]
    names = ", ".join(p.name for p in found)
    disclaimer = " ".join(str(block["template"]).replace("{products}", names).split())
    renewable = [p.name for p in found if p.renewable]
    surrender_types = {p.name: p.surrender.type for p in found}
    points: list[str] = []
    for point in block["points"]:
        point = " ".join(str(point).split())
        if "갱신" in point and "갱신형" in point:
            if not renewable:
                continue
            point = point.replace("갱신형 상품은", f"갱신형 상품({', '.join(renewable)})은", 1)
        elif "해약환급금" in point and len(set(surrender_types.values())) > 1:
            point += " (비교 상품: " + ", ".join(f"{n} {t}" for n, t in surrender_types.items()) + ")"
        points.append(point)
    tags_by_product = {p.name: compliance_tags(p) for p in found}
    disclosures = {d["title"]: d for d in table["required_disclosures"]}
    by_tag = {tag: d for d in disclosures.values() for tag in (d.get("applies_to") or [])}
    for tag in _DIFFERING_TAGS:
        having = [n for n, tags in tags_by_product.items() if tag in tags]
        if having and len(having) < len(found) and tag in by_tag:
            points.append(f"{' '.join(str(by_tag[tag]['text']).split())} (해당 상품: {', '.join(having)})")
    full_text = disclaimer + "\n" + "\n".join(f"- {p}" for p in points)
    return ok(
        products=[{**product_ref(p), "renewable": p.renewable, "surrender_type": p.surrender.type,
                   "simplified_underwriting": p.simplified_underwriting, "tags": tags_by_product[p.name]}
                  for p in found],
        disclaimer=disclaimer,
        points=points,
        full_text=full_text,
        summary=f"{names} 비교 안내 문구 (고지 항목 {len(points)}개)",
    )


# --- recording_notice_script ----------------------------------------------------------------------

@tool("recording_notice_script", args_schema=RecordingArgs)
def recording_notice_script(
    channel: str | None = None, agent_name: str | None = None, customer_age: int | None = None
) -> dict[str, Any]:
    """TM(전화)·CM(온라인)·대면 채널별 통화(상담) 녹음·기록 고지 멘트와 녹취 시 유의사항을 알려줍니다. 65세 이상 고객이면
    고령 고객 안내를 덧붙입니다."""
    missing = require(ask="녹음 안내를 할 판매 채널을 TM(전화), CM(온라인), 대면 중에서 알려주세요.", channel=channel)
    if missing:
        return missing
    wanted = _channel(channel)
    if isinstance(wanted, dict):
        return wanted
    if customer_age is not None:
        bad_age = check_age(customer_age)
        if bad_age:
            bad_age["known"] = {"channel": wanted}
            bad_age["missing"] = ["customer_age"]
            return bad_age
    notices = load_reference().table("compliance")["recording_notices"]
    notice = next((n for n in notices if n["channel"] == wanted), None)
    if notice is None:
        return not_found("recording_notice", wanted, [n["channel"] for n in notices])
    role = "설계사" if wanted == "대면" else "상담원"
    agent = f"{role} {agent_name}" if agent_name else f"담당 {role}"
    script = " ".join(str(notice["script"]).split())
    script = script.replace("{company}", COMPANY["short_name"]).replace("{agent}", agent)
    all_notes = [" ".join(str(n).split()) for n in notice.get("notes") or []]
    elderly_notes = [n for n in all_notes if f"{ELDERLY_AGE}세" in n]
    notes = [n for n in all_notes if n not in elderly_notes]
    elderly = customer_age is not None and customer_age >= ELDERLY_AGE
    if elderly:
        notes += elderly_notes
        notes.append(f"{ELDERLY_AGE}세 이상 고객에게는 중요 내용을 천천히 설명하고, 이해하셨는지 확인한 뒤 다음 단계로 넘어갑니다.")
        if wanted == "TM":
            days = re.search(r"(\d+)일", " ".join(elderly_notes))
            if days:
                script += f" 고객님은 전화로 가입하시는 {ELDERLY_AGE}세 이상 고객이시므로 청약일부터 {days.group(1)}일 이내에 청약을 철회하실 수 있습니다."
    return ok(
        channel=wanted,
        channel_label=CHANNEL_LABELS[wanted],
        script=script,
        notes=notes,
        elderly_customer=elderly if customer_age is not None else None,
        elderly_notes=elderly_notes if elderly else [],
        customer_center=COMPANY["customer_center"],
        company=COMPANY["name"],
    )


# --- privacy_masking ------------------------------------------------------------------------------

@tool("privacy_masking", args_schema=MaskingArgs)
def privacy_masking(text: str | None = None) -> dict[str, Any]:
    """문장 속 개인정보(주민등록번호, 전화번호, 카드번호, 이메일, 계좌번호)를 가린 문장과, 종류별로 몇 건을 가렸는지
    알려줍니다."""
    missing = require(ask="개인정보를 가릴 문장을 알려주세요.", text=text)
    if missing:
        return missing
    masked, found = _masked(text)
    by_type = Counter(item["type"] for item in found)
    by_label = Counter(item["label"] for item in found)
    labels = {}
    for item in found:
        labels.setdefault(item["type"], item["label"].split("(")[0])
    summary = (", ".join(f"{labels[t]} {n}건" for t, n in by_type.items()) + " 마스킹") if found else "가릴 개인정보가 없습니다."
    return ok(
        masked_text=masked,
        masked_count=len(found),
        by_type=dict(by_type),
        by_label=dict(by_label),
        masked_items=[{"type": i["type"], "label": i["label"], "masked": i["masked"]} for i in found],
        summary=summary,
    )


TOOLS = [
    compliance_required_disclosure,
    compliance_phrase_generator,
    compliance_misleading_check,
    comparison_disclaimer_generator,
    recording_notice_script,
    privacy_masking,
]

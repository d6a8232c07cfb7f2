"""What the insurance pack offers other programs besides its tools: the product list, one product, the
standard terms' table of contents, and one consultation prompt per scenario of `data/insurance/scenarios.yaml`.

Plain data and text with raw ids: the server that offers them (`toolroute.serve.mcp`) turns ids into
handles and masks names, as it does for tool results.
"""

from __future__ import annotations

from typing import Any

from toolroute.agent.pack import PackPrompt, PackResource


def product_list() -> list[dict[str, Any]]:
    from toolroute.domains.insurance.products import load_products  # reads the product YAML: only when asked

    return [{"code": p.code, "name": p.name, "category": p.category, "description": p.description,
             "join_age": f"{p.join_age_min}~{p.join_age_max}세", "channels": list(p.channels),
             "simplified_underwriting": p.simplified_underwriting, "renewable": p.renewable,
             "coverage_period": p.coverage_period, "payment_terms": list(p.payment_terms),
             "version": p.version} for p in load_products().values()]


def product(code: str) -> dict[str, Any]:
    from toolroute.domains.insurance.products import get_product  # reads the product YAML: only when asked

    found = get_product(code)
    if found is None:
        raise LookupError("no such product; see insurance://products")
    return found.model_dump(mode="json")


def terms_toc() -> dict[str, Any]:
    """The standard terms' chapters (제N관) with their articles (제N조), in order."""
    from toolroute.domains.insurance.documents import document_specs  # the documents' text: only when asked

    spec = next(s for s in document_specs() if s.doc_type == "terms")
    chapters: list[dict[str, Any]] = []
    for heading, _body in spec.sections:
        if "관 " in heading.split("(")[0] and heading.startswith("제"):
            chapters.append({"chapter": heading, "articles": []})
        elif chapters:
            chapters[-1]["articles"].append(heading)
        else:
            chapters.append({"chapter": "", "articles": [heading]})
    return {"title": spec.title, "document": f"{spec.stem}.pdf", "chapters": chapters}


def resources() -> list[PackResource]:
    return [
        PackResource(uri="insurance://products", name="products", read=product_list,
                     description="The products on sale: code (a handle), name, category, join ages, channels, "
                                 "underwriting, renewal"),
        PackResource(uri="insurance://terms/toc", name="terms-toc", read=terms_toc,
                     description="Table of contents of the standard terms (표준약관): chapters and articles"),
        PackResource(uri="insurance://products/{code}", name="product", read=product,
                     description="One product in full (coverages, riders, exclusions, premiums …) by the code "
                                 "insurance://products gives (a handle) or by name"),
    ]


def _scenario_prompt(scenario: Any, rules: str) -> PackPrompt:
    """The flow of one scenario for its customer (`customer_id`: another customer instead) or, for a
    scenario without one, for the customer described in words (`customer`)."""
    from toolroute.domains.insurance import customers as db  # the customer records: only when asked

    original = db.find_customers(customer_id=scenario.customer_id)[0] if scenario.customer_id else None

    def steps(rename: tuple[str, str] | None) -> str:
        lines = []
        for i, turn in enumerate(scenario.turns, start=1):
            question = turn.user.replace(*rename) if rename else turn.user
            tools = " → ".join(dict.fromkeys(c.tool for c in turn.expected_calls)) or "(도구 없이 답변)"
            lines.append(f"{i}단계: 「{question}」 → {tools}")
        return "\n".join(lines)

    def render(customer_id: str | None = None, customer: str | None = None) -> tuple[str, list[dict[str, Any]]]:
        rename = None
        who = customer.strip() if customer else ""
        chosen = original
        if original is not None:
            wanted = customer_id.strip() if customer_id else ""
            if wanted and wanted.upper() != original["customer_id"]:
                found = db.find_customers(customer_id=wanted)
                if not found:
                    raise LookupError("no such customer (give the customer_id handle a customer tool returned)")
                chosen = found[0]
                rename = (original["name"], chosen["name"])
            who = f"{chosen['name']} ({chosen['customer_id']}, {chosen['age']}세 {chosen['sex']})"
        title = scenario.title.replace(*rename) if rename else scenario.title
        text = (f"한결생명 TM 상담 흐름을 따라 상담을 도와주세요: {title}\n"
                + (f"고객: {who}\n" if who else "")
                + f"\n{rules}\n\n단계별 질문과 확인할 도구 (고객의 답에 따라 순서와 질문을 조정하세요):\n"
                + steps(rename))
        return text, [{"customer_id": c["customer_id"], "name": c["name"]} for c in (original, chosen) if c]

    if original is not None:
        arguments = (("customer_id", f"the customer on the call: a customer_id handle from a customer tool "
                                     f"(default {original['customer_id']}, {original['name']})"),)
        records: tuple[dict[str, Any], ...] = ({"customer_id": original["customer_id"], "name": original["name"]},)
    else:
        arguments = (("customer", "who is on the call, in words (e.g. '48세 남성 택시기사')"),)
        records = ()
    return PackPrompt(name=f"consult_{scenario.id.lower()}", title=scenario.title, render=render,
                      arguments=arguments, records=records,
                      description=f"{scenario.title} ({len(scenario.turns)} steps; {scenario.source})")


def prompts() -> list[PackPrompt]:
    from toolroute.domains.insurance.pack import SYSTEM_PROMPT  # the pack imports this module: read when asked
    from toolroute.domains.insurance.scenarios import load_scenarios  # reads the scenario YAML: only when asked

    rules = SYSTEM_PROMPT.split("\n", 1)[1]  # the rules, without the persona line
    return [_scenario_prompt(scenario, rules) for scenario in load_scenarios()]

"""`toolroute cards expand`: ToolCards with LLM-written when_to_use examples for a catalogue that is
only OpenAI tool schemas (name, description, parameters).

Re-Invoke (Chen et al., 2024) embeds queries an LLM imagines users asking instead of the bare
description. Here the configured LLM reads one tool schema and writes N diverse user requests that
the tool answers, in the catalogue's language (Korean when its descriptions are mostly Hangul, else
English). The cards go to a folder, one YAML file per tool, that `route` and `eval-retrieval` take as
`--catalog DIR`.

- **Cached**: each accepted reply is kept in `DIR/_cache/<key>.json`, the key a hash of the tool's
  schema, the prompt and the model id; a rerun on the same catalogue makes no LLM call, and a changed
  schema, prompt or model is asked again. Committing DIR commits the cache.
- **Human cards are kept**: a card for that name in DIR that no rerun wrote (another file, or a
  generated file edited since: its recorded hash no longer matches) is never overwritten.
- **Broken replies** (no JSON list, an empty list, too few usable requests after dropping duplicates
  and copies of the description) are asked once more with the reason; a tool still without examples
  (or whose call failed: a timeout, a server error) gets a card with its description only and is
  reported by name, and every other card is kept: each card is written as soon as it is ready.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from tqdm.auto import tqdm

from toolroute.cards.model import (
    GENERATED_MARK,
    MIN_WHEN_TO_USE,
    Catalog,
    CatalogError,
    ToolCard,
    _load_card_file,
    near_duplicate,
    normalize_text,
    read_openai_tools,
)

PROMPT_VERSION = "expand-v1"  # part of every cache key: change it when the prompt's wording changes
DEFAULT_PER_TOOL = 8
MAX_EXAMPLE_CHARS = 300
MAX_PARAMETERS = 10  # parameters shown to the LLM per tool
CACHE_DIR = "_cache"  # ignored by the card loader (not a YAML file at the top level)
_HASH_LINE = "# card-hash: "
_JSON_LIST = re.compile(r"\[.*\]", re.S)

_PROMPTS = {
    "ko": {
        "system": "당신은 상담 데이터를 만드는 작가입니다. 도구 설명을 읽고, 그 도구가 필요한 사용자가 채팅창에 실제로 입력할 법한 "
                  "요청 문장을 씁니다. 도구를 설명하지 말고 사용자의 말투로 쓰세요. 답은 JSON 문자열 배열 하나만 쓰세요.",
        "example": '예시 도구: get_weather — 도시의 현재 날씨를 조회한다.\n'
                   '예시 답: ["내일 부산에 비 와?", "서울 지금 기온 몇 도야", "이번 주말 제주도 날씨 좀 알려줘"]',
        "tool": "도구", "description": "설명", "parameters": "인자",
        "ask": "이 도구가 필요한 사용자 요청 문장을 {n}개 쓰세요. 서로 다른 상황·표현·길이로, 구체적인 값을 넣어 쓰고, "
               "설명 문장을 그대로 옮기지 마세요. 형식: [\"문장1\", \"문장2\", ...]",
        "retry": "답을 쓸 수 없습니다: {reason}. 사용자 요청 문장 {n}개를 JSON 문자열 배열 하나로만 다시 쓰세요.",
    },
    "en": {
        "system": "You write test data for an assistant that calls tools. Read the tool's description and write requests "
                  "that a user who needs this tool would actually type. Write as the user, do not describe the tool. "
                  "Answer with one JSON array of strings only.",
        "example": 'Example tool: get_weather - get the current weather of a city.\n'
                   'Example answer: ["will it rain in Boston tomorrow?", "what is the temperature in Paris right now", '
                   '"tell me the weather in Tokyo this weekend"]',
        "tool": "Tool", "description": "Description", "parameters": "Parameters",
        "ask": "Write {n} requests a user would send that this tool answers. Vary the situation, wording and length, use "
               "concrete values, and do not copy the description. Format: [\"request 1\", \"request 2\", ...]",
        "retry": "That answer cannot be used: {reason}. Write the {n} user requests again as one JSON array of strings only.",
    },
}


class BrokenReply(ValueError):
    """An LLM reply from which no usable examples could be taken; the message says why."""


def catalog_language(catalog: Catalog) -> str:
    """`ko` when most letters of the descriptions are Hangul, else `en`."""
    text = " ".join(card.purpose for card in catalog)
    letters = [ch for ch in text if ch.isalpha()]
    hangul = sum("\uac00" <= ch <= "\ud7a3" for ch in letters)
    return "ko" if letters and hangul / len(letters) >= 0.3 else "en"


def _parameter_lines(schema: dict) -> list[str]:
    properties = (schema.get("parameters") or {}).get("properties") or {}
    lines = []
    for name, spec in list(properties.items())[:MAX_PARAMETERS]:
        about = str(spec.get("description") or "").strip().replace("\n", " ") if isinstance(spec, dict) else ""
        lines.append(f"- {name}: {about[:120]}" if about else f"- {name}")
    return lines


def expand_prompt(name: str, schema: dict, n: int, language: str) -> list:
    """The messages that ask for `n` user requests answered by the tool `name` (schema: OpenAI `function`)."""
    words = _PROMPTS[language]
    lines = [words["example"], "", f"{words['tool']}: {name}",
             f"{words['description']}: {str(schema.get('description', '')).strip()}"]
    parameters = _parameter_lines(schema)
    if parameters:
        lines += [f"{words['parameters']}:", *parameters]
    lines += ["", words["ask"].format(n=n)]
    return [SystemMessage(words["system"]), HumanMessage("\n".join(lines))]


def cache_key(schema: dict, messages: list, model_id: str) -> str:
    """Content hash of (the tool schema, the prompt, the model id): equal keys mean an equal request."""
    payload = {"schema": schema, "prompt": [(m.type, m.content) for m in messages], "model": model_id,
               "version": PROMPT_VERSION}
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()[:24]


def requests_in_reply(text: str) -> list[str] | None:
    """The strings of the first JSON list in `text`, a list of lists of strings flattened (a small model
    groups its requests so), else None when there is no JSON list."""
    match = _JSON_LIST.search(text or "")
    try:
        items = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        return None
    if not isinstance(items, list):
        return None
    flat = [i for item in items for i in (item if isinstance(item, list) else [item])]
    return [str(i).strip() for i in flat if isinstance(i, str) and i.strip()]


def examples_from_reply(text: str, description: str, n: int) -> list[str]:
    """Up to `n` usable requests from a reply, or BrokenReply saying why there are too few."""
    items = requests_in_reply(text)
    if items is None:
        raise BrokenReply("the reply is not a JSON list of strings")
    if not items:
        raise BrokenReply("the reply is an empty list" if re.search(r"\[\s*\]", text or "") else
                          "the reply's list holds no strings (objects or lists instead of requests)")
    described = normalize_text(description)
    kept: list[str] = []
    seen: list[str] = []
    dropped: Counter = Counter()
    for item in items:
        norm = normalize_text(item)
        if not norm or len(item) > MAX_EXAMPLE_CHARS:
            dropped["empty or too long"] += 1
        elif near_duplicate(norm, described) or (len(norm) >= 20 and norm in described):
            dropped["copies the description"] += 1
        elif any(near_duplicate(norm, other) for other in seen):
            dropped["duplicates"] += 1
        else:
            kept.append(" ".join(item.split()))
            seen.append(norm)
    needed = min(MIN_WHEN_TO_USE, n)
    if len(kept) < needed:
        why = "".join(f", {count} {reason}" for reason, count in dropped.most_common())
        raise BrokenReply(f"only {len(kept)} usable request(s) of {len(items)}{why}; at least {needed} needed")
    return kept[:n]


@dataclass
class ExpandReport:
    """What a run wrote and what it cost; `failures` maps a tool to why it has no examples."""

    out: Path
    written: list[str] = field(default_factory=list)
    from_cache: list[str] = field(default_factory=list)
    kept_human: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # generated cards of tools no longer in the catalogue
    failures: dict[str, str] = field(default_factory=dict)
    llm_calls: int = 0
    seconds: float = 0.0
    language: str = "en"

    def text(self) -> str:
        generated = len(self.written) - len(self.from_cache) - len(self.failures)
        lines = [f"{self.out}: {len(self.written)} card(s) written ({generated} with new examples from "
                 f"{self.llm_calls} LLM call(s), {len(self.from_cache)} from the cache), language {self.language}, "
                 f"{self.seconds:.1f} s"]
        for name in self.kept_human:
            lines.append(f"  kept {name}: a card written or edited by a person is never overwritten")
        for name in self.removed:
            lines.append(f"  removed {name}: a generated card of a tool no longer in the catalogue")
        for name, why in self.failures.items():
            lines.append(f"  FAILED {name}: {why}; its card has the description only (rerun to ask again)")
        return "\n".join(lines)


def _generated_file(path: Path) -> tuple[str, str] | None:
    """(tool name, recorded card hash) of a card file this command wrote, else None."""
    try:
        head = path.read_text(encoding="utf-8").splitlines()[:3]
    except (OSError, UnicodeDecodeError):
        return None
    if not head or not head[0].startswith(GENERATED_MARK):
        return None
    recorded = next((line[len(_HASH_LINE):].strip() for line in head if line.startswith(_HASH_LINE)), "")
    return path.stem, recorded


def _existing_cards(out: Path) -> tuple[dict[str, ToolCard], dict[str, Path]]:
    """Cards already in `out`: those a person wrote or edited (kept), and unedited generated files."""
    human: dict[str, ToolCard] = {}
    generated: dict[str, Path] = {}
    problems: list[str] = []
    for path in sorted(p for p in out.glob("*.y*ml") if not p.name.startswith("_")):
        loaded, file_problems = _load_card_file(path, out)
        problems.extend(file_problems)
        mark = _generated_file(path)
        for card, _ in loaded:
            if mark is not None and len(loaded) == 1 and mark == (card.name, card.content_hash()):
                generated[card.name] = path
            else:
                human[card.name] = card
    if problems:
        raise CatalogError(problems)
    return human, generated


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_card(out: Path, card: ToolCard, module: str, note: str) -> Path:
    """One generated card as `out/<name>.yaml`, marked with its content hash (an edit makes it human)."""
    body = yaml.safe_dump({"module": module, "cards": [card.model_dump(exclude_defaults=True)]},
                          allow_unicode=True, sort_keys=False, width=120)
    path = out / f"{card.name}.yaml"
    _write_atomic(path, f"{GENERATED_MARK} {note}\n{_HASH_LINE}{card.content_hash()}\n{body}")
    return path


def _ask(llm, messages: list, description: str, n: int, language: str, attempts: int) -> tuple[str, list[str], int]:
    """(the reply used, its examples, calls made); BrokenReply after `attempts` broken replies."""
    conversation = list(messages)
    reason = ""
    for attempt in range(1, attempts + 1):
        reply = llm.invoke(conversation)
        text = reply.content if isinstance(reply.content, str) else json.dumps(reply.content, ensure_ascii=False)
        try:
            return text, examples_from_reply(text, description, n), attempt
        except BrokenReply as exc:
            reason = str(exc)
            conversation += [AIMessage(text), HumanMessage(_PROMPTS[language]["retry"].format(reason=reason, n=n))]
    raise BrokenReply(f"{reason} (after {attempts} attempt(s))")


def _cached_examples(path: Path, description: str, n: int) -> list[str] | None:
    """The examples of a cached reply, or None when there is none (or it is unreadable: asked again)."""
    try:
        return examples_from_reply(json.loads(path.read_text(encoding="utf-8"))["reply"], description, n)
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):  # BrokenReply and JSONDecodeError are ValueErrors
        return None


def expand(catalog_path: str | Path, out: str | Path, llm: Any | Callable[[], Any], model_id: str,
           per_tool: int = DEFAULT_PER_TOOL, attempts: int = 2, progress: bool = True) -> ExpandReport:
    """Write a card with up to `per_tool` generated examples for every tool of the schema file (see module doc).

    `llm` is a chat model or a function returning one, called on the first cache miss only (so a rerun
    from the cache never starts the embedded model); `model_id` names it in the cache key."""
    if per_tool < 1:
        raise ValueError(f"--per-tool must be at least 1, got {per_tool}")
    catalog, schemas = read_openai_tools(catalog_path)
    out = Path(out)
    (out / CACHE_DIR).mkdir(parents=True, exist_ok=True)
    human, generated = _existing_cards(out)
    start = time.perf_counter()
    report = ExpandReport(out=out, language=catalog_language(catalog))
    for name, path in generated.items():
        if name not in catalog:
            path.unlink()
            report.removed.append(name)
    taken = {normalize_text(e): c.name for c in human.values() for e in c.when_to_use}
    chat = None
    for name in tqdm(catalog.names, desc="expanding cards", unit="tool", disable=not progress):
        if name in human:
            report.kept_human.append(name)
            continue
        card = catalog.cards[name]
        messages = expand_prompt(name, schemas[name], per_tool, report.language)
        key = cache_key(schemas[name], messages, model_id)
        cached = out / CACHE_DIR / f"{key}.json"
        examples = _cached_examples(cached, card.purpose, per_tool)
        if examples is not None:
            report.from_cache.append(name)
        else:
            examples = []
            chat = chat if chat is not None else (llm() if callable(llm) and not hasattr(llm, "invoke") else llm)
            call_start = time.perf_counter()
            try:
                text, examples, calls = _ask(chat, messages, card.purpose, per_tool, report.language, attempts)
            except BrokenReply as exc:
                report.llm_calls += attempts
                report.failures[name] = f"the LLM's reply could not be used: {exc}"
            except Exception as exc:  # a timeout or a server error costs this tool only; the rerun asks again
                report.llm_calls += 1
                report.failures[name] = f"the LLM call failed: {type(exc).__name__}: {str(exc)[:200]}"
            else:
                report.llm_calls += calls
                _write_atomic(cached, json.dumps(
                    {"tool": name, "model": model_id, "prompt_version": PROMPT_VERSION, "reply": text,
                     "attempts": calls, "seconds": round(time.perf_counter() - call_start, 2)},
                    ensure_ascii=False, indent=1))
        own = [e for e in examples if taken.setdefault(normalize_text(e), name) == name]
        note = f"from {Path(catalog_path).name} by {model_id} (key {key}); edit it to make it yours"
        write_card(out, card.model_copy(update={"when_to_use": tuple(own)}), catalog.name, note)
        report.written.append(name)
    report.seconds = time.perf_counter() - start
    return report

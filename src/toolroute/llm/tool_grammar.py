"""GBNF grammars that constrain the embedded model's reply while it is sampled (issue 24, item 4).

Qwen's template asks for `<tool_call>\\n{"name": …, "arguments": …}\\n</tool_call>`; the 1.5B model
sometimes writes a call the handler cannot read (a name that is not bound, broken JSON, the `<tools>`
tag, a call as its "answer"), and the agent then apologises. With a grammar the reply can only be:

- plain text: it does not start with markup (`<`, `{`, a code fence) and holds no `<` at all; its first
  character may be narrowed further (`text_start`, e.g. `[가-힣0-9]` for a Korean pack: a model kept from
  writing a call it wanted tends to answer in English); or
- one to three calls, each in the template's tags or as the bare JSON object (the model writes both; the
  handler reads both), each a JSON object whose `name` is one of the bound tools
  and whose `arguments` follow that tool's JSON schema (`_Builder.value`: types, enums, arrays, nested
  objects, only the schema's properties; required properties too, see `_Builder.object`).

`tool_call_grammar(schemas)` is that union for the bound OpenAI tool schemas; `text_grammar()` is the
text branch alone, for the answer written with no tool bound. The agent sends the grammar as the
request's `grammar` field (llama.cpp's servers read it; llama-cpp-python hands it to our chat handler,
which samples under it). Pure string building: no llama.cpp needed to make one.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

MAX_CALLS = 3  # calls in one reply (the default tool-step cap)

# Shared rules (GBNF, llama.cpp's grammar format). `ws` is bounded: an unbounded one lets a small model
# emit blanks forever inside a call.
_BASE = {
    "ws": r"[ \t\n]{0,8}",
    "string": r'"\"" char* "\""',
    "char": r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "integer": r'"-"? ("0" | [1-9] [0-9]{0,15})',
    "number": r'"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,4})?',
    "boolean": r'"true" | "false"',
    "null": r'"null"',
    "value": r"object | array | string | number | boolean | null",
    "object": r'"{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"',
    "array": r'"[" ws ( value ws ( "," ws value ws )* )? "]"',
    # text: leading blanks, then a first character (`text-start`) and no '<' anywhere (the call tags start with it)
    "text": r'[ \n]{0,2} text-start [^<]*',
}
TEXT_START = r"[^<{` \t\n]"  # anything but markup and blanks
_SCALARS = {"string", "integer", "number", "boolean", "null"}


def literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped.replace(chr(9), chr(92) + "t")}"'


def _json_literal(value: Any) -> str:
    return literal(json.dumps(value, ensure_ascii=False))


def rule_name(text: str) -> str:
    """A GBNF rule name (letters, digits and dashes) for a tool or property name."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "x"


class _Builder:
    def __init__(self, text_start: str | None = None) -> None:
        self.rules: dict[str, str] = {**_BASE, "text-start": text_start or TEXT_START}

    def add(self, name: str, body: str) -> str:
        unique, n = name, 1
        while unique in self.rules and self.rules[unique] != body:
            n += 1
            unique = f"{name}-{n}"
        self.rules[unique] = body
        return unique

    def value(self, schema: Any, name: str) -> str:
        """A rule expression accepting exactly the JSON values `schema` allows (the subset tools use;
        anything else accepts any JSON value)."""
        if not isinstance(schema, dict) or not schema:
            return "value"
        if "const" in schema:
            return _json_literal(schema["const"])
        if "enum" in schema:
            return "(" + " | ".join(_json_literal(v) for v in schema["enum"]) + ")"
        options = schema.get("anyOf") or schema.get("oneOf")
        if options:
            return "(" + " | ".join(self.value(o, f"{name}-{i}") for i, o in enumerate(options)) + ")"
        kind = schema.get("type")
        if isinstance(kind, list):
            return "(" + " | ".join(self.value({**schema, "type": k}, f"{name}-{k}") for k in kind) + ")"
        if kind in _SCALARS:
            return kind
        if kind == "array":
            item = self.value(schema.get("items"), f"{name}-item")
            return self.add(name, f'"[" ws ( {item} ws ( "," ws {item} ws )* )? "]"')
        if kind == "object" or "properties" in schema:
            return self.object(schema, name)
        return "value"

    def object(self, schema: dict, name: str) -> str:
        """An object of the schema's properties and no others. Without required properties (every tool
        of the packs): any order, each property's value valid (a key written twice is not prevented:
        the parsed call keeps the last). With required ones: in the schema's order, each at most once,
        every required one present (a fixed order is what makes "present" expressible)."""
        props = list((schema.get("properties") or {}).items())
        if not props:
            return "object"
        required = set(schema.get("required") or [])
        pairs = [self.add(f"{name}-{rule_name(key)}-kv", f"{_json_literal(key)} ws \":\" ws {self.value(sub, f'{name}-{rule_name(key)}')}")
                 for key, sub in props]
        if not required:
            pair = self.add(f"{name}-kv", " | ".join(pairs))
            return self.add(name, f'"{{" ws ( {pair} ws ( "," ws {pair} ws )* )? "}}"')

        def may_skip(start: int, stop: int) -> bool:  # no required property in props[start:stop]
            return not any(key in required for key, _ in props[start:stop])

        tails: dict[int, str] = {}
        for i in range(len(props) - 1, -1, -1):  # after property i: the next one written, or the end
            options = [f'"," ws {pairs[j]} ws {tails[j]}'.rstrip() for j in range(i + 1, len(props)) if may_skip(i + 1, j)]
            if not options:
                tails[i] = ""
            else:
                optional = "?" if may_skip(i + 1, len(props)) else ""
                tails[i] = self.add(f"{name}-after-{i}", " | ".join(options)) + optional
        first = " | ".join(f"{pairs[j]} ws {tails[j]}".rstrip() for j in range(len(props)) if may_skip(0, j))
        return self.add(name, f'"{{" ws ( {first} ) "}}"')

    def text(self) -> str:
        return "\n".join(f"{name} ::= {body}" for name, body in self.rules.items())


def _function(schema: dict) -> dict:
    return schema.get("function", schema) if isinstance(schema, dict) else {}


def tool_call_grammar(schemas: Sequence[dict], max_calls: int = MAX_CALLS, text_start: str | None = None) -> str:
    """The grammar of a reply with these OpenAI tool schemas bound: text (its first character in the
    GBNF character class `text_start`, when given), or 1..`max_calls` calls of bound tools with
    schema-valid arguments (see the module docstring)."""
    builder = _Builder(text_start)
    alternatives = []
    for schema in schemas:
        function = _function(schema)
        name = function["name"]
        args = builder.value(function.get("parameters") or {"type": "object"}, f"args-{rule_name(name)}")
        alternatives.append(builder.add(
            f"call-{rule_name(name)}",
            f'"{{" ws "\\"name\\"" ws ":" ws {_json_literal(name)} ws "," ws "\\"arguments\\"" ws ":" ws {args} ws "}}"'))
    if not alternatives:
        return text_grammar(text_start)
    builder.rules["call-object"] = " | ".join(alternatives)
    builder.rules["call"] = '"<tool_call>" ws call-object ws "</tool_call>" | call-object'
    builder.rules["calls"] = f'call ( "\\n" call ){{0,{max(0, max_calls - 1)}}} "\\n"?'
    builder.rules["root"] = '[ \\n]{0,2} calls | text'
    return builder.text()


def text_grammar(text_start: str | None = None) -> str:
    """The grammar of a reply that is plain text only (no tool bound: the answer from tool results)."""
    builder = _Builder(text_start)
    builder.rules["root"] = "text"
    return builder.text()


def grammar_tools(grammar: str) -> list[str]:
    """The tool names a grammar made here admits (from its call rules), in order."""
    return [json.loads(json.loads(m)) for m in re.findall(r'ws ":" ws ("(?:[^"\\]|\\.)*") ws "," ws "\\"arguments', grammar)]

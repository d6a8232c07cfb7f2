"""What an MCP client may send a tool: bounded arguments, checked against the tool's published JSON
schema with no coercion, before anything runs.

LangChain validates a tool's arguments with pydantic in lax mode, so `sex: 3` used to become "3" and
`age: "45"` 45; some schemas even parse on purpose ("55세" → 55, for the agent's own model). A client
program gets no such help: its arguments must already be what the schema it was shown says (`integer`
is a JSON integer, not 45.0 or "45"; `string` is a string), and any other value is refused with an
error that names the argument and the expected type (never the value: the error is logged).

Sizes are checked first, so a 1 MB argument is refused in microseconds instead of reaching a tool.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Iterator

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from toolroute.config import max_turn_chars

MAX_ARGUMENTS_BYTES = 64 * 1024  # one call's arguments as JSON
MAX_BODY_BYTES = 256 * 1024  # one HTTP request to /mcp or /messages/ (413 above it: the SDK's own check)
MAX_PROBLEMS = 5


class ArgumentError(ValueError):
    """The arguments were refused; the message names each argument and what was wrong with it."""


def max_string_chars() -> int:
    """The longest string argument: the longest turn a user may type in the chat (`TOOLROUTE_MAX_TURN_CHARS`)."""
    return max_turn_chars()


def _is_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)  # 45.0 is no integer here


StrictValidator = validators.extend(
    Draft202012Validator, type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer))


@lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    return StrictValidator(json.loads(schema_json))


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


def check_size(arguments: dict[str, Any]) -> None:
    """Each string at most `max_string_chars()`, valid Unicode; the whole at most `MAX_ARGUMENTS_BYTES`."""
    limit = max_string_chars()
    for path, text in _strings(arguments, ""):
        if len(text) > limit:
            raise ArgumentError(f"{path}: {len(text):,} characters; the limit is {limit:,}")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ArgumentError(f"{path}: not valid Unicode (a lone surrogate)") from None
    size = len(json.dumps(arguments, ensure_ascii=False, default=str).encode("utf-8"))
    if size > MAX_ARGUMENTS_BYTES:
        raise ArgumentError(f"the arguments take {size:,} bytes as JSON; the limit is {MAX_ARGUMENTS_BYTES:,}")


def _expected(schema: Any, root: dict[str, Any]) -> list[str]:
    """The JSON types (or enum values) a schema accepts, for the error message."""
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema and str(schema["$ref"]).startswith("#/$defs/"):
        return _expected(root.get("$defs", {}).get(schema["$ref"].split("/")[-1]), root)
    if "enum" in schema:
        return ["one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])]
    if "const" in schema:
        return [json.dumps(schema["const"], ensure_ascii=False)]
    kinds = schema.get("type")
    if kinds:
        return list(kinds) if isinstance(kinds, list) else [kinds]
    out: list[str] = []
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key, []):
            out += [k for k in _expected(branch, root) if k not in out]
    return out


def _describe(error: ValidationError, root: dict[str, Any]) -> str:
    path = ".".join(str(p) for p in error.absolute_path) or "(arguments)"
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in (error.instance or {})]
        return f"{', '.join(missing) or path}: required"
    if error.validator in ("type", "anyOf", "oneOf", "enum", "const", "$ref"):
        expected = " or ".join(_expected(error.schema, root)) or "another value"
        return f"{path}: expected {expected}, got {json_type(error.instance)}"
    bound = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than",
             "exclusiveMaximum": "less than", "minLength": "at least this many characters:",
             "maxLength": "at most this many characters:", "minItems": "at least this many items:",
             "maxItems": "at most this many items:"}.get(str(error.validator))
    if bound:
        return f"{path}: must be {bound} {error.validator_value}"
    return f"{path}: fails the schema's {error.validator!r} rule"


def validate_arguments(tool: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Raises `ArgumentError` (naming `tool`, each argument and what it expects) unless `arguments`
    fit `schema` exactly: sizes, known argument names, JSON types without coercion, the schema's rules."""
    if not isinstance(arguments, dict):
        raise ArgumentError(f"{tool}: the arguments must be a JSON object")
    try:
        check_size(arguments)
    except ArgumentError as exc:
        raise ArgumentError(f"{tool}: argument too large: {exc}") from None
    known = set((schema.get("properties") or {}).keys())
    unknown = sorted(str(name) for name in arguments if name not in known)
    if unknown:
        raise ArgumentError(f"{tool}: unknown argument {', '.join(unknown)}; it takes: {', '.join(sorted(known)) or 'none'}")
    errors = sorted(_validator(json.dumps(schema, sort_keys=True)).iter_errors(arguments),
                    key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        problems = "; ".join(dict.fromkeys(_describe(e, schema) for e in errors[:MAX_PROBLEMS]))
        raise ArgumentError(f"{tool}: invalid arguments: {problems}")

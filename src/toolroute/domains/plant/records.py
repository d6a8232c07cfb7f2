"""The plant's operating records: a synthetic alarm log and the spare-part stock.

Alarm log: `data/alarm_log.yaml` says how often each alarm fired on each machine (`recent`: in the
30 days before `as_of`, `earlier`: in the 150 days before that); the events themselves (time,
reading, duration, action taken) are drawn from a random generator seeded with the machine, the
alarm and the period, so the log is the same in every run and on every machine, and the counts in
the YAML are exact. Readings lie in the alarm's `reading` range of graph.yaml and actions come
from its `actions` list.

Stock: `data/spare_parts.yaml`, one row per part of the graph; the status is derived from the
quantity and the safety stock.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from toolroute.domains.plant.graph import DATA_DIR, load_graph

TIME_FORMAT = "%Y-%m-%d %H:%M"
RECENT_DAYS = 30
STATUS_OUT = "재고 없음"
STATUS_LOW = "안전재고 미만"
STATUS_OK = "재고 있음"


def _read(name: str) -> dict[str, Any]:
    path = Path(DATA_DIR) / name
    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping")
    return data


# ------------------------------------------------------------------------------------------------
# Alarm log


@dataclass(frozen=True)
class AlarmEvent:
    time: datetime
    equipment_id: str
    alarm_code: str
    alarm_name: str
    severity: str
    component: str
    reading: str
    duration_min: int
    action: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "time": self.time.strftime(TIME_FORMAT), "alarm_code": self.alarm_code, "alarm_name": self.alarm_name,
            "severity": self.severity, "component": self.component, "reading": self.reading,
            "duration_min": self.duration_min, "action": self.action,
        }


def _rng(*parts: str) -> random.Random:
    seed = int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:16], 16)
    return random.Random(seed)


@lru_cache(maxsize=1)
def _log_config() -> dict[str, Any]:
    data = _read("alarm_log.yaml")
    data["as_of_dt"] = datetime.strptime(data["as_of"], TIME_FORMAT)
    return data


def as_of() -> datetime:
    """The moment the log ends ("now" for the plant's records)."""
    return _log_config()["as_of_dt"]


def history_days() -> int:
    return int(_log_config()["history_days"])


def _events_in(rng: random.Random, count: int, start_day: float, end_day: float) -> list[float]:
    """`count` distinct ages in days within [start_day, end_day), at whole minutes."""
    ages: set[float] = set()
    while len(ages) < count:
        minutes = rng.randrange(int(start_day * 1440) + 5, int(end_day * 1440) - 5)
        ages.add(minutes / 1440)
    return sorted(ages)


@lru_cache(maxsize=None)
def alarm_log(equipment_id: str) -> tuple[AlarmEvent, ...]:
    """Every logged alarm of a machine over `history_days`, newest first (deterministic)."""
    graph = load_graph()
    config = _log_config()
    profile = config["profiles"].get(equipment_id, {})
    raisers = graph.alarms_of(equipment_id)
    end = config["as_of_dt"]
    events = []
    for code, counts in profile.items():
        if code not in raisers:
            raise ValueError(f"alarm_log.yaml: {equipment_id} cannot raise {code} (no component triggers it)")
        alarm = graph.attrs(code)
        reading = alarm["reading"]
        for period, (lo, hi) in (("recent", (0, RECENT_DAYS)), ("earlier", (RECENT_DAYS, config["history_days"]))):
            rng = _rng(equipment_id, code, period)
            for age in _events_in(rng, int(counts.get(period, 0)), lo, hi):
                value = round(rng.uniform(reading["low"], reading["high"]), 1)
                events.append(AlarmEvent(
                    time=end - timedelta(minutes=round(age * 1440)),
                    equipment_id=equipment_id, alarm_code=code, alarm_name=alarm["name"],
                    severity=alarm["severity"], component=raisers[code],
                    reading=f"{reading['label']} {value}{'' if reading['unit'] in ('%', '°C') else ' '}{reading['unit']}",
                    duration_min=rng.randint(3, 95), action=rng.choice(alarm["actions"]),
                ))
    return tuple(sorted(events, key=lambda e: e.time, reverse=True))


def alarm_events(equipment_id: str, days: int, alarm_code: str | None = None) -> list[AlarmEvent]:
    """The machine's events of the last `days` days (newest first), optionally of one alarm."""
    since = as_of() - timedelta(days=days)
    return [e for e in alarm_log(equipment_id)
            if e.time > since and (alarm_code is None or e.alarm_code == alarm_code)]


# ------------------------------------------------------------------------------------------------
# Spare parts


@dataclass(frozen=True)
class StockItem:
    part_id: str
    stock: int
    unit: str
    safety_stock: int
    location: str
    lead_time_days: int
    supplier: str
    unit_price: int
    on_order: dict[str, Any] | None

    @property
    def status(self) -> str:
        if self.stock <= 0:
            return STATUS_OUT
        if self.stock < self.safety_stock:
            return STATUS_LOW
        return STATUS_OK


@lru_cache(maxsize=1)
def _stock_data() -> tuple[str, dict[str, StockItem]]:
    data = _read("spare_parts.yaml")
    items = {}
    for row in data["parts"]:
        row = dict(row)
        pid = row.pop("id")
        if pid in items:
            raise ValueError(f"spare_parts.yaml: part {pid} listed twice")
        on_order = row.pop("on_order", None)
        items[pid] = StockItem(part_id=pid, on_order=dict(on_order) if on_order else None, **row)
    return str(data["as_of"]), items


def stock_as_of() -> str:
    return _stock_data()[0]


def stock_items() -> dict[str, StockItem]:
    return dict(_stock_data()[1])


def stock_of(part_id: str) -> StockItem | None:
    return _stock_data()[1].get(part_id)

"""CardStore: edits to ToolCards saved as versioned overrides on top of the YAML, with diff and rollback.

The YAML under `toolcards/<domain>/` stays the authored source and is version 0. Every edit,
rollback, unregistration or registration adds one version: who, when, why, the full editable content
of each card it touched and whether a tool was unregistered (taken out of routing) or registered again,
so any version can be rebuilt, compared with any other, or restored. `catalog()` is what routes: the
cards of the registered tools. The override file is
rewritten atomically (temp file + rename) under a file lock. An edit states the card version it
was made against; if someone saved a newer version of that card meanwhile, the edit is refused as
a conflict instead of silently erasing theirs. A corrupt override file stops every read and write with a message naming a backup copy; it is never
reset on its own.
"""

from __future__ import annotations

import difflib
import getpass
import json
import os
import shutil
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

import yaml
from filelock import FileLock
from pydantic import ValidationError

from toolroute.cards.model import Catalog, CatalogError, ToolCard, _pydantic_problems, load_catalog, validate_catalog
from toolroute.config import cardstore_dir

EDITABLE_FIELDS = ("purpose", "when_to_use", "when_not_to_use", "tags")
LIST_FIELDS = ("when_to_use", "when_not_to_use", "tags")
FORMAT = 1
KINDS = ("edit", "rollback", "unregister", "register")


class CardStoreError(ValueError):
    """A request the store cannot carry out; nothing was written."""


class CardConflict(CardStoreError):
    """The card changed after the version the edit was based on."""


class CardStoreWarning(UserWarning):
    """Something in the override file was set aside (reported, never dropped silently)."""


@dataclass(frozen=True)
class Version:
    """One saved change: the full editable fields of every card it touched (None = back to the YAML)."""

    number: int
    author: str
    time: str
    message: str
    kind: str  # one of KINDS
    cards: dict[str, dict[str, Any] | None]
    based_on: dict[str, int] = field(default_factory=dict)  # card -> the card version the change was made against
    registered: dict[str, bool] = field(default_factory=dict)  # tool -> False: unregistered here, True: registered again

    @classmethod
    def from_dict(cls, data: dict) -> "Version":
        registered = dict(data.get("registered") or {})
        if not all(isinstance(v, bool) for v in registered.values()):
            raise ValueError(f"version {data['number']}: 'registered' maps tool names to true or false")
        version = cls(int(data["number"]), str(data["author"]), str(data["time"]), str(data.get("message", "")),
                      str(data["kind"]), dict(data["cards"]), {k: int(v) for k, v in (data.get("based_on") or {}).items()},
                      registered)
        if version.kind not in KINDS:
            raise ValueError(f"version {version.number}: unknown kind {version.kind!r}")
        for name, fields in version.cards.items():
            if fields is not None and (not isinstance(fields, dict) or set(fields) - set(EDITABLE_FIELDS)):
                raise ValueError(f"version {version.number} card {name!r}: fields must be a subset of {EDITABLE_FIELDS}")
        return version


@dataclass(frozen=True)
class FieldChange:
    """How one field of one card differs between two versions."""

    card: str
    field: str
    before: Any
    after: Any

    def lines(self) -> list[str]:
        if self.field == "registered":  # a tool taken out of routing or put back
            return [f"  - {'registered' if self.before else 'unregistered'}",
                    f"  + {'registered' if self.after else 'unregistered'}"]
        if self.field == "purpose":
            return [f"  - {self.before}", f"  + {self.after}"]
        before, after = list(self.before or ()), list(self.after or ())
        return [f"  - {item}" for item in before if item not in after] + [f"  + {item}" for item in after if item not in before]


def card_fields(card: ToolCard) -> dict[str, Any]:
    return {name: (list(v) if isinstance(v := getattr(card, name), tuple) else v) for name in EDITABLE_FIELDS}


def default_store_path(catalog_name: str) -> Path:
    """`TOOLROUTE_CARDSTORE` (a folder) or `.toolroute/cardstore/`, one JSON file per catalogue."""
    return cardstore_dir() / f"{catalog_name}.overrides.json"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _author(author: str | None) -> str:
    if author:
        return author
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return "unknown"


class CardStore:
    """The cards of one catalogue folder plus their saved edits (see the module docstring)."""

    def __init__(self, catalog_dir: str | Path, store_path: str | Path | None = None,
                 expected_names: Iterable[str] | None = None):
        self.catalog_dir = Path(catalog_dir)
        self.expected_names = list(expected_names) if expected_names is not None else None
        self.base = load_catalog(self.catalog_dir, self.expected_names)
        self.path = Path(store_path) if store_path is not None else default_store_path(self.base.name)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(self.path) + ".lock", timeout=30)

    # ----- the file ----------------------------------------------------------------------------
    def _read(self) -> list[Version]:
        """All versions, oldest first. Call with the lock held."""
        if not self.path.exists():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("versions"), list):
                raise ValueError(f"expected {{'format': {FORMAT}, 'versions': [...]}}")
            versions = [Version.from_dict(v) for v in data["versions"]]
            numbers = [v.number for v in versions]
            if numbers != list(range(1, len(versions) + 1)):
                raise ValueError(f"version numbers must run 1..{len(versions)}, got {numbers[:10]}")
        except (ValueError, KeyError, TypeError) as exc:
            # Never start again from the YAML on our own (that would drop every saved edit, even on a
            # read): keep the file where it is, copy it aside, and stop until a person decides.
            backup = self.path.with_name(f"{self.path.stem}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}.json")
            shutil.copy2(self.path, backup)
            raise CardStoreError(
                f"{self.path}: the card store is corrupt ({exc}); nothing was read or changed. A copy is at {backup}. "
                f"Repair the file, or move it away to start again from the YAML cards in {self.catalog_dir}") from None
        unknown = sorted({name for v in versions for name in v.cards if name not in self.base})
        if unknown:
            warnings.warn(f"{self.path}: overrides for cards no longer in {self.catalog_dir} are kept in the file "
                          f"but not applied: {', '.join(unknown)}", CardStoreWarning, stacklevel=3)
        return versions

    def _write(self, versions: list[Version]) -> None:
        """Atomic: a reader sees the old file or the new one, never a half-written one."""
        payload = {"format": FORMAT, "catalog": self.base.name, "catalog_dir": str(self.catalog_dir),
                   "versions": [asdict(v) for v in versions]}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(payload, f, ensure_ascii=False, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def versions(self) -> list[Version]:
        with self._lock:
            return self._read()

    # ----- reading -----------------------------------------------------------------------------
    @property
    def head(self) -> int:
        """The newest version number (0 = the YAML as authored)."""
        return len(self.versions())

    def _check_version(self, version: int | None, versions: list[Version]) -> int:
        if version is None:
            return len(versions)
        if not isinstance(version, int) or not 0 <= version <= len(versions):
            raise CardStoreError(f"no version {version} in {self.path}: versions run from 0 (the YAML) to {len(versions)}")
        return version

    def _state(self, versions: list[Version], upto: int) -> dict[str, dict[str, Any]]:
        state = {card.name: card_fields(card) for card in self.base}
        for v in versions[:upto]:
            for name, fields in v.cards.items():
                if name in state:
                    state[name] = dict(fields) if fields is not None else card_fields(self.base.cards[name])
        return state

    def _unregistered(self, versions: list[Version], upto: int) -> set[str]:
        gone: set[str] = set()
        for v in versions[:upto]:
            for name, registered in v.registered.items():
                if name in self.base:
                    (gone.discard if registered else gone.add)(name)
        return gone

    def _catalog_from(self, state: dict[str, dict[str, Any]], where: str) -> Catalog:
        cards, problems = {}, []
        for name, fields in state.items():
            try:
                cards[name] = ToolCard(name=name, **fields)
            except ValidationError as err:
                problems.extend(_pydantic_problems(err, f"{where} card '{name}'"))
        if problems:
            raise CatalogError(problems)
        return self.base.derived(cards=cards, sources=dict(self.base.sources))

    def catalog(self, version: int | None = None) -> Catalog:
        """The catalogue as of `version` (default: the newest) that routes: unregistered tools left out."""
        versions = self.versions()
        upto = self._check_version(version, versions)
        catalog = self._catalog_from(self._state(versions, upto), f"{self.path} version {upto}")
        gone = self._unregistered(versions, upto)
        return catalog.derived(cards={n: c for n, c in catalog.cards.items() if n not in gone}) if gone else catalog

    def all_cards(self, version: int | None = None) -> Catalog:
        """Every card as of `version`, the unregistered tools' too (for reading and exporting them)."""
        versions = self.versions()
        upto = self._check_version(version, versions)
        return self._catalog_from(self._state(versions, upto), f"{self.path} version {upto}")

    def unregistered(self, version: int | None = None) -> list[str]:
        """The tools taken out of routing as of `version` (default: the newest), in catalogue order."""
        versions = self.versions()
        gone = self._unregistered(versions, self._check_version(version, versions))
        return [n for n in self.base.names if n in gone]

    def is_registered(self, name: str) -> bool:
        self._known(name)
        return name not in self.unregistered()

    def card(self, name: str, version: int | None = None) -> ToolCard:
        self._known(name)
        return self.all_cards(version).cards[name]

    def card_version(self, name: str, versions: list[Version] | None = None) -> int:
        """The last version that changed card `name` or its registration (0: as in the YAML). Pass it
        back to `edit`, `unregister` or `register`."""
        self._known(name)
        versions = self.versions() if versions is None else versions
        return max((v.number for v in versions if name in v.cards or name in v.registered), default=0)

    def history(self, name: str | None = None) -> list[Version]:
        if name is not None:
            self._known(name)
        return [v for v in self.versions() if name is None or name in v.cards or name in v.registered]

    def diff(self, a: int, b: int | None = None) -> list[FieldChange]:
        """Every field that differs between versions `a` and `b` (default: the newest)."""
        versions = self.versions()
        a, b = self._check_version(a, versions), self._check_version(b, versions)
        before, after = self._state(versions, a), self._state(versions, b)
        gone_before, gone_after = self._unregistered(versions, a), self._unregistered(versions, b)
        changes = []
        for name in self.base.names:
            if (name in gone_before) != (name in gone_after):
                changes.append(FieldChange(name, "registered", name not in gone_before, name not in gone_after))
            changes.extend(FieldChange(name, f, before[name][f], after[name][f])
                           for f in EDITABLE_FIELDS if before[name][f] != after[name][f])
        return changes

    def _known(self, name: str) -> None:
        if name not in self.base:
            close = difflib.get_close_matches(name, self.base.names, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise CardStoreError(f"unknown card '{name}' in {self.catalog_dir}{hint}")

    # ----- changing ----------------------------------------------------------------------------
    def apply_changes(self, name: str, changes: dict[str, Any], catalog: Catalog | None = None) -> ToolCard:
        """The card with `changes` applied: `field` replaces, `+field` appends items, `-field` removes items."""
        self._known(name)
        current = card_fields((catalog or self.all_cards()).cards[name])
        for key, value in changes.items():
            op, fname = (key[0], key[1:]) if key[:1] in "+-" else ("=", key)
            if fname not in EDITABLE_FIELDS:
                raise CardStoreError(f"card '{name}': unknown field '{fname}' (editable: {', '.join(EDITABLE_FIELDS)})")
            if op != "=" and fname not in LIST_FIELDS:
                raise CardStoreError(f"card '{name}': '{key}' adds or removes items, but '{fname}' is not a list")
            if fname in LIST_FIELDS:
                items = [value] if isinstance(value, str) else list(value)
            else:
                items = value
            if op == "=":
                current[fname] = items
            elif op == "+":
                current[fname] = current[fname] + [i for i in items if i not in current[fname]]
            else:
                missing = [i for i in items if i not in current[fname]]
                if missing:
                    raise CardStoreError(f"card '{name}' field '{fname}': cannot remove {missing!r}, not present")
                current[fname] = [i for i in current[fname] if i not in items]
        try:
            return ToolCard(name=name, **current)
        except ValidationError as err:
            raise CatalogError(_pydantic_problems(err, f"card '{name}' (edit not saved)")) from None

    def preview(self, name: str, changes: dict[str, Any]) -> Catalog:
        """The newest catalogue with `changes` applied to card `name`, validated, not saved (what would
        route: unregistered tools left out)."""
        catalog = self.all_cards()
        card = self.apply_changes(name, changes, catalog)
        edited = self._validated({**catalog.cards, name: card})
        gone = set(self.unregistered())
        return edited.derived(cards={n: c for n, c in edited.cards.items() if n not in gone}) if gone else edited

    def _validated(self, cards: dict[str, ToolCard]) -> Catalog:
        catalog = self.base.derived(cards=dict(cards), sources=dict(self.base.sources))
        problems = validate_catalog(catalog, self.expected_names)
        if problems:
            raise CatalogError([f"{p} (edit not saved)" for p in problems])
        return catalog

    def edit(self, name: str, changes: dict[str, Any], expected_version: int, author: str | None = None,
             message: str = "", kind: str = "edit") -> Version:
        """Save `changes` to card `name`, made against `expected_version` of that card (see `card_version`);
        `kind` "rollback" when the changes restore an earlier version of the card (its history says so)."""
        if kind not in ("edit", "rollback"):
            raise ValueError(f"an edit's kind is 'edit' or 'rollback', not {kind!r}")
        self._known(name)
        with self._lock:
            versions = self._read()
            current = self.card_version(name, versions)
            if expected_version != current:
                newer = next(v for v in versions if v.number == current) if current else None
                who = f" by {newer.author} at {newer.time} ({newer.message or 'no message'})" if newer else ""
                raise CardConflict(
                    f"card '{name}' is at version {current}{who}, but the edit was made against version "
                    f"{expected_version}; nothing saved. Reload the card, re-apply the edit, and pass "
                    f"expected_version={current}")
            catalog = self._catalog_from(self._state(versions, len(versions)), str(self.path))
            card = self.apply_changes(name, changes, catalog)
            self._validated({**catalog.cards, name: card})
            if card == catalog.cards[name]:
                raise CardStoreError(f"card '{name}': the edit changes nothing; nothing saved")
            version = Version(len(versions) + 1, _author(author), _now(), message, kind,
                              {name: card_fields(card)}, {name: current})
            self._write(versions + [version])
            return version

    def unregister(self, name: str, expected_version: int | None = None, author: str | None = None,
                   message: str = "") -> Version:
        """Take tool `name` out of routing, as a new version (its card is kept; `register` brings it back).
        With `expected_version`, refused as a conflict when the card changed since that version."""
        return self._set_registered(name, False, expected_version, author, message)

    def register(self, name: str, expected_version: int | None = None, author: str | None = None,
                 message: str = "") -> Version:
        """Put an unregistered tool back into routing with its card as it is now, as a new version."""
        return self._set_registered(name, True, expected_version, author, message)

    def _set_registered(self, name: str, registered: bool, expected_version: int | None, author: str | None,
                        message: str) -> Version:
        self._known(name)
        action = "register" if registered else "unregister"
        with self._lock:
            versions = self._read()
            current = self.card_version(name, versions)
            if expected_version is not None and expected_version != current:
                raise CardConflict(f"card '{name}' is at version {current}, but the {action} was made against version "
                                   f"{expected_version}; nothing saved")
            gone = self._unregistered(versions, len(versions))
            if (name not in gone) == registered:
                raise CardStoreError(f"tool '{name}' is already {'registered' if registered else 'unregistered'}; nothing saved")
            if not registered and len(gone) + 1 >= len(self.base):
                raise CardStoreError(f"tool '{name}' is the last registered one: a catalogue needs at least one tool")
            version = Version(len(versions) + 1, _author(author), _now(), message or action, action, {},
                              {name: current}, {name: registered})
            self._write(versions + [version])
            return version

    def rollback(self, to: int, author: str | None = None, message: str = "",
                 expected_head: int | None = None) -> Version:
        """A new version whose cards equal those of version `to` (history is kept, never rewritten)."""
        with self._lock:
            versions = self._read()
            to = self._check_version(to, versions)
            if expected_head is not None and expected_head != len(versions):
                raise CardConflict(f"{self.path} is at version {len(versions)}, not {expected_head}; nothing rolled back")
            now, target = self._state(versions, len(versions)), self._state(versions, to)
            gone_now, gone_target = self._unregistered(versions, len(versions)), self._unregistered(versions, to)
            base = {card.name: card_fields(card) for card in self.base}
            touched = {name: (None if target[name] == base[name] else target[name])
                       for name in self.base.names if now[name] != target[name]}
            registered = {name: name not in gone_target for name in self.base.names
                          if (name in gone_now) != (name in gone_target)}
            if not touched and not registered:
                raise CardStoreError(f"the cards at version {len(versions)} already equal version {to}; nothing to roll back")
            self._validated(self._catalog_from(target, f"{self.path} version {to}").cards)
            version = Version(len(versions) + 1, _author(author), _now(), message or f"rollback to version {to}",
                              "rollback", touched, {name: self.card_version(name, versions) for name in {*touched, *registered}},
                              registered)
            self._write(versions + [version])
            return version

    def export(self, folder: str | Path, version: int | None = None) -> list[Path]:
        """Write the cards as of `version` as YAML, one file per module, to promote edits into the source
        (every card, the unregistered tools' too: registration is not part of the YAML)."""
        catalog = self.all_cards(version)
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for module, names in self.base.modules().items():
            cards = [{"name": n, **{k: v for k, v in card_fields(catalog.cards[n]).items() if v}} for n in names]
            path = folder / f"{module or self.base.name}.yaml"
            path.write_text(yaml.safe_dump({"module": module, "cards": cards}, allow_unicode=True, sort_keys=False,
                                           width=120), encoding="utf-8")
            written.append(path)
        return written

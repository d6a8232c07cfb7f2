"""The card operations of a running server: read, edit, history, diff, rollback, unregister, register, route.

An edit is saved in the card store (so it survives a restart and every other entry point routes with
it) and applied to the live router in place before the response, so the next route call reflects it.
An unregistration is a version in the store too (the tool stays out of every entry point's catalogue
across restarts until it is registered again). Every write needs the admin token (`TOOLROUTE_ADMIN_TOKEN`;
none configured: writes are disabled), states the card version it was made against (`If-Match`, optional
for unregister and register; a stale one gets 409 and nothing is written)
and is appended to an audit log (JSONL: time, token id, tool, versions, diff). Writes are serialised,
so two clients editing one card cannot both win.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from fastapi import APIRouter, Depends, Header, HTTPException, Request
from pydantic import BaseModel, Field

from toolroute.cards import Catalog, CatalogError, expected_tool_names
from toolroute.cards.store import EDITABLE_FIELDS, CardConflict, CardStore, CardStoreError, card_fields
from toolroute.config import admin_token, data_dir
from toolroute.routing import ToolRouter


class CardEdit(BaseModel):
    """New values of the fields to change (the others stay); `message` says why."""

    purpose: str | None = None
    when_to_use: list[str] | None = None
    when_not_to_use: list[str] | None = None
    tags: list[str] | None = None
    message: str = ""
    author: str | None = None


class RouteRequest(BaseModel):
    query: str = Field(min_length=1)
    k: int = Field(default=5, ge=1, le=100)


class Rollback(BaseModel):
    to: int = Field(ge=0, description="the card version to restore (0: as in the YAML)")
    message: str = ""


@dataclass
class CardOps:
    """The live router of one domain and the card store behind it."""

    router: ToolRouter
    store: CardStore
    audit_path: Path = field(default_factory=lambda: data_dir() / "audit" / "cards.jsonl")
    last_apply_seconds: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)  # one write at a time

    on_change: Callable[[list[str]], None] | None = None  # e.g. the agent drops its cached tool schemas

    @classmethod
    def open(cls, router: ToolRouter, catalog_dir: str | Path, **kwargs) -> "CardOps":
        return cls(router, CardStore(catalog_dir, expected_names=expected_tool_names(catalog_dir)), **kwargs)

    def vectors(self, name: str | None = None) -> int:
        index = self.router.dense
        if index is None:
            return 0
        if name is None:
            return index.collection.count()
        return len(index.collection.get(where={"tool": name}, include=[])["ids"])

    @property
    def removed(self) -> set[str]:
        """The unregistered tools (saved in the store: they stay out after a restart)."""
        return set(self.store.unregistered())

    def live_catalog(self) -> Catalog:
        """What the live router should route with: the store's newest cards of the registered tools."""
        return self.store.catalog()

    def apply(self, changed: list[str]) -> float:
        """Bring the live router in line with the store (changed cards re-embedded in place)."""
        seconds = self.router.update_catalog(self.live_catalog())["seconds"]
        if self.on_change is not None:
            self.on_change(changed)
        self.last_apply_seconds = seconds
        return seconds

    def audit(self, token_id: str, tool: str, action: str, before: int, after: int, diff: list[str]) -> None:
        self.audit_path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "token": token_id, "tool": tool, "action": action,
                 "version_before": before, "version_after": after, "diff": diff}
        with self.audit_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")


def _token_id(presented: str | None) -> str:
    """Which token wrote (a digest, never the token itself)."""
    expected = admin_token()
    if expected is None:
        raise HTTPException(403, "card writes are disabled: set TOOLROUTE_ADMIN_TOKEN on the server to enable them")
    scheme, _, value = (presented or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), expected.encode()):
        raise HTTPException(401, "a card write needs 'Authorization: Bearer <admin token>'",
                            headers={"WWW-Authenticate": "Bearer"})
    return hashlib.sha256(expected.encode()).hexdigest()[:8]


def _version(if_match: str | None, required: bool = True) -> int | None:
    value = (if_match or "").strip().strip('"')
    if not value and not required:
        return None
    if not value.isdigit():
        raise HTTPException(428, "state the card version you edited: 'If-Match: <version>' (GET the card to see it)")
    return int(value)


def card_routes(get_ops: Callable[[], CardOps]) -> APIRouter:
    """The routes; `get_ops()` gives the live CardOps (or raises 503 while the agent is being built)."""
    api = APIRouter(prefix="/api", tags=["cards"])

    def known(ops: CardOps, name: str) -> None:
        """A registered tool (404 otherwise; an unregistered one says how to bring it back)."""
        stored(ops, name)
        if name in ops.removed:
            raise HTTPException(404, f"tool '{name}' is unregistered (card version {ops.store.card_version(name)}): "
                                     f"POST /api/tools/{name}/register to route with it again")

    def stored(ops: CardOps, name: str) -> None:
        """A tool with a card, registered or not."""
        if name not in ops.store.base:
            raise HTTPException(404, f"unknown tool '{name}'")

    def card_view(ops: CardOps, name: str) -> dict[str, Any]:
        return {"name": name, "card": card_fields(ops.store.card(name)), "version": ops.store.card_version(name),
                "vectors": ops.vectors(name)}

    @api.get("/tools")
    def list_tools(ops: CardOps = Depends(get_ops)) -> list[dict[str, Any]]:
        catalog = ops.router.catalog
        return [{"name": c.name, "purpose": c.purpose, "version": ops.store.card_version(c.name)} for c in catalog]

    @api.get("/tools/{name}")
    def get_tool(name: str, ops: CardOps = Depends(get_ops)) -> dict[str, Any]:
        known(ops, name)
        return card_view(ops, name)

    @api.put("/tools/{name}/card")
    def edit_card(name: str, edit: CardEdit, if_match: str | None = Header(None),
                  authorization: str | None = Header(None),
                  ops: CardOps = Depends(get_ops)) -> dict[str, Any]:
        token = _token_id(authorization)
        known(ops, name)
        expected = _version(if_match)
        changes = {f: getattr(edit, f) for f in EDITABLE_FIELDS if getattr(edit, f) is not None}
        if not changes:
            raise HTTPException(422, f"no field to change (editable: {', '.join(EDITABLE_FIELDS)})")
        with ops.lock:
            try:
                version = ops.store.edit(name, changes, expected, author=edit.author or f"token:{token}",
                                         message=edit.message)
            except CardConflict as exc:
                raise HTTPException(409, str(exc)) from None
            except CatalogError as exc:
                raise HTTPException(422, exc.problems) from None
            except CardStoreError as exc:
                raise HTTPException(422, str(exc)) from None
            seconds = ops.apply([name])
            diff = [line for change in ops.store.diff(version.number - 1, version.number) for line in change.lines()]
            ops.audit(token, name, "edit", expected, version.number, diff)
        return {**card_view(ops, name), "applied_seconds": round(seconds, 4)}

    @api.get("/tools/{name}/history")
    def history(name: str, ops: CardOps = Depends(get_ops)) -> list[dict[str, Any]]:
        stored(ops, name)  # an unregistered tool's history too: it shows the unregistration
        return [{"version": v.number, "author": v.author, "time": v.time, "message": v.message, "kind": v.kind}
                for v in ops.store.history(name)]

    @api.get("/tools/{name}/diff")
    def diff(name: str, request: Request, ops: CardOps = Depends(get_ops)) -> dict[str, Any]:
        stored(ops, name)
        try:
            a, b = int(request.query_params.get("from", "0")), int(request.query_params.get("to", ops.store.head))
            changes = [c for c in ops.store.diff(a, b) if c.card == name]
        except (ValueError, CardStoreError) as exc:
            raise HTTPException(400, str(exc)) from None
        return {"from": a, "to": b, "lines": [line for c in changes for line in c.lines()]}

    @api.post("/tools/{name}/rollback")
    def rollback(name: str, body: Rollback, if_match: str | None = Header(None),
                 authorization: str | None = Header(None),
                 ops: CardOps = Depends(get_ops)) -> dict[str, Any]:
        """This card as it was at version `to` (a new version; history is never rewritten)."""
        token = _token_id(authorization)
        known(ops, name)
        expected = _version(if_match)
        try:
            old = card_fields(ops.store.card(name, body.to))
        except CardStoreError as exc:
            raise HTTPException(400, str(exc)) from None
        with ops.lock:
            try:
                version = ops.store.edit(name, old, expected, author=f"token:{token}",
                                         message=body.message or f"rollback to version {body.to}")
            except CardConflict as exc:
                raise HTTPException(409, str(exc)) from None
            except CardStoreError as exc:
                raise HTTPException(422, str(exc)) from None
            seconds = ops.apply([name])
            ops.audit(token, name, "rollback", expected, version.number, [f"to version {body.to}"])
        return {**card_view(ops, name), "applied_seconds": round(seconds, 4)}

    def set_registered(ops: CardOps, name: str, registered: bool, token: str, if_match: str | None,
                       message: str) -> tuple[int, float]:
        """Save an unregistration or registration as a version, apply it to the live router, audit it."""
        expected = _version(if_match, required=False)
        action = "register" if registered else "unregister"
        with ops.lock:
            before = ops.store.card_version(name)
            change = ops.store.register if registered else ops.store.unregister
            try:
                version = change(name, expected, author=f"token:{token}", message=message)
            except CardStoreError as exc:  # a stale If-Match, or already (un)registered
                raise HTTPException(409, str(exc)) from None
            seconds = ops.apply([name])
            ops.audit(token, name, action, before, version.number, [f"  + {action}ed"])
        return version.number, seconds

    @api.delete("/tools/{name}")
    def unregister(name: str, message: str = "", if_match: str | None = Header(None),
                   authorization: str | None = Header(None), ops: CardOps = Depends(get_ops)) -> dict[str, Any]:
        """The tool leaves the live router (its vectors are deleted before this returns) and, saved as a
        version in the card store, every catalogue opened later: `POST .../register` brings it back."""
        token = _token_id(authorization)
        known(ops, name)
        version, seconds = set_registered(ops, name, False, token, if_match, message)
        return {"name": name, "removed": True, "version": version, "vectors": ops.vectors(name),
                "applied_seconds": round(seconds, 4)}

    @api.post("/tools/{name}/register")
    def register(name: str, message: str = "", if_match: str | None = Header(None),
                 authorization: str | None = Header(None), ops: CardOps = Depends(get_ops)) -> dict[str, Any]:
        """An unregistered tool routes again, with its card as it is now (a new version)."""
        token = _token_id(authorization)
        stored(ops, name)
        version, seconds = set_registered(ops, name, True, token, if_match, message)
        return {**card_view(ops, name), "registered": True, "applied_seconds": round(seconds, 4)}

    @api.post("/route")
    def route(body: RouteRequest, ops: CardOps = Depends(get_ops)) -> dict[str, Any]:
        return ops.router.route(body.query).to_dict(body.k)

    @api.get("/stats")
    def stats(ops: CardOps = Depends(get_ops)) -> dict[str, Any]:
        report = ops.router.build_report
        return {"tools": len(ops.router.catalog), "vectors": ops.vectors(), "store_version": ops.store.head,
                "removed": sorted(ops.removed), "arm": ops.router.arm,
                "last_build": None if report is None else {"collection": report.collection, "seconds": report.seconds,
                                                           "embedded": report.embedded},
                "last_apply_seconds": ops.last_apply_seconds}

    return api

"""The card operations of a running server: read, edit, history, diff, rollback, unregister, register, route,
the quick test (`/api/eval`, with a pending edit), LLM-proposed card edits and tool-module hot reload.

An edit is saved in the card store (so it survives a restart and every other entry point routes with
it) and applied to the live router in place before the response, so the next route call reflects it.
An unregistration is a version in the store too (the tool stays out of every entry point's catalogue
across restarts until it is registered again). Every write needs the admin token (`TOOLROUTE_ADMIN_TOKEN`;
none configured: writes are disabled), states the card version it was made against (`If-Match`, optional
for unregister and register; a stale one gets 409 and nothing is written)
and is appended to an audit log (JSONL: time, token id, tool, versions, diff). Writes are serialised,
so two clients editing one card cannot both win. Evaluations (`/api/eval`, `/api/proposals`) need the
admin token too (they cost a core, and LLM calls), take bounded input (a pending edit of at most
`TOOLROUTE_MAX_EDIT_CHARS` characters and `MAX_EDIT_ITEMS` lines, a split of at most
`TOOLROUTE_MAX_EVAL_QUERIES` queries), run one at a time in a worker thread that gives way to chat
turns and stops when the client leaves (`toolroute.serve.pacing`), and never change the live router
or the store. Error details name no server path (`toolroute.serve.errors`).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from fastapi import APIRouter, Depends, Header, HTTPException, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from toolroute.agent.registry import RegistryError, ToolRegistry, UnknownModule
from toolroute.cards import Catalog, CatalogError, expected_tool_names
from toolroute.cards.store import EDITABLE_FIELDS, CardConflict, CardStore, CardStoreError, FieldChange, card_fields
from toolroute.config import admin_token, data_dir, max_edit_chars, max_eval_queries
from toolroute.evaluation.failure_analysis import analyse_failures
from toolroute.evaluation.quick_test import (SPLITS, SplitError, every_split_text, quick_test, require_tuning_split,
                                             split_queries)
from toolroute.queries import EvalQuery, QueryFileError
from toolroute.routing import ToolRouter
from toolroute.serve.errors import logged, public, with_id
from toolroute.serve.logs import LOGGER
from toolroute.serve.pacing import EvaluationCancelled, Pace, PacedLLM, PacedRouter

MAX_EDIT_ITEMS = 50  # lines (list items) of a pending edit, all fields together: each is embedded
POLL_SECONDS = 0.2  # how often a running evaluation checks that its client is still there
T = TypeVar("T")


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


class PendingEdit(BaseModel):
    """An edit to measure, not saved: store terms (`field` replaces, `+field` / `-field` add / remove items)."""

    tool: str = Field(max_length=200)
    changes: dict[str, Any] = Field(min_length=1)


class EvalRequest(BaseModel):
    split: str = Field(default="dev", description=f"one of {', '.join(SPLITS)}")
    k: int = Field(default=5, ge=1, le=50)
    edit: PendingEdit | None = None


class ProposalRequest(BaseModel):
    split: str = Field(default="tune", description="a tuning split (dev, tune, calib); never test")
    k: int = Field(default=5, ge=1, le=50)
    max: int = Field(default=3, ge=1, le=10, description="failure groups to ask the LLM about (one call each)")


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
    registry: ToolRegistry | None = None  # the agent's tools, for module hot reload
    llm: Any = None  # a chat model for proposals, or a callable giving the current one (the served LLM moves)
    queries_dir: Path | None = None  # where `<split>.jsonl` lives (default: data/<catalogue>/queries/)
    eval_lock: threading.Lock = field(default_factory=threading.Lock)  # one evaluation at a time
    busy: Callable[[], int] | None = None  # chat turns running (the server's slots): evaluations wait for them
    eval_max_wait: float = 1.0  # seconds an evaluation's batch waits for the chat turns at most

    def pace(self) -> Pace:
        """A new evaluation's pace: cancelled when its client leaves, giving way to chat turns."""
        return Pace(busy=self.busy, max_wait=self.eval_max_wait)

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

    def routed(self, catalog: Catalog) -> Catalog:
        """What the live router routes with for the store's `catalog`: the unregistered tools left out."""
        removed = self.removed
        return catalog.derived(cards={n: c for n, c in catalog.cards.items() if n not in removed})

    def live_catalog(self) -> Catalog:
        """What the live router should route with: the store's newest cards of the registered tools."""
        return self.store.catalog()

    def pending(self, tool: str, changes: dict[str, Any]) -> Catalog:
        """The routed catalogue with an edit applied, validated as a save would be, not saved."""
        return self.routed(self.store.preview(tool, changes))

    def queries(self, split: str) -> list[EvalQuery]:
        return split_queries(self.store.base.name, split, self.store.base.names, self.queries_dir)

    def eval_queries(self) -> list[str]:
        """Every split's query texts (a proposed card line must resemble none of them)."""
        return every_split_text(self.store.base.name, self.store.base.names, self.queries_dir)

    def chat_model(self) -> Any:
        return self.llm if self.llm is None or hasattr(self.llm, "invoke") else self.llm()

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
        raise HTTPException(403, "card writes and evaluations are disabled: set TOOLROUTE_ADMIN_TOKEN on the "
                                 "server to enable them")
    scheme, _, value = (presented or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(), expected.encode()):
        raise HTTPException(401, "this call needs 'Authorization: Bearer <admin token>'",
                            headers={"WWW-Authenticate": "Bearer"})
    return hashlib.sha256(expected.encode()).hexdigest()[:8]


def admin(authorization: str | None = Header(None)) -> str:
    """The admin token as a dependency: checked before the body is validated or anything is read."""
    return _token_id(authorization)


def _version(if_match: str | None, required: bool = True) -> int | None:
    value = (if_match or "").strip().strip('"')
    if not value and not required:
        return None
    if not value.isdigit():
        raise HTTPException(428, "state the card version you edited: 'If-Match: <version>' (GET the card to see it)")
    return int(value)


def _one_evaluation(ops: CardOps) -> None:
    if not ops.eval_lock.acquire(blocking=False):
        raise HTTPException(429, "another evaluation is running; try again when it is done", headers={"Retry-After": "10"})


def _split(ops: CardOps, split: str) -> list[EvalQuery]:
    """The split's queries: at most TOOLROUTE_MAX_EVAL_QUERIES (413 naming both counts)."""
    try:
        queries = ops.queries(split)
    except SplitError as exc:
        raise HTTPException(400, str(exc)) from None
    except QueryFileError as exc:  # its text names the file's path: the log has it, the client gets the id
        raise HTTPException(404, with_id(f"split '{split}' has no queries for '{ops.store.base.name}'",
                                         logged(f"the {split} split cannot be read", exc))) from None
    limit = max_eval_queries()
    if len(queries) > limit:
        raise HTTPException(413, f"split '{split}' has {len(queries):,} queries; an evaluation routes at most "
                                 f"{limit:,} (TOOLROUTE_MAX_EVAL_QUERIES)")
    return queries


def _bounded(edit: PendingEdit | None) -> None:
    """A pending edit small enough to measure (its lines are embedded on the server): at most
    TOOLROUTE_MAX_EDIT_CHARS characters and MAX_EDIT_ITEMS lines, all fields together; the field that
    goes over is named (413)."""
    if edit is None:
        return
    most = 3 * len(EDITABLE_FIELDS)
    if len(edit.changes) > most:
        raise HTTPException(422, f"edit.changes: {len(edit.changes)} fields; at most {most} (each of "
                                 f"{', '.join(EDITABLE_FIELDS)} as 'field', '+field' or '-field')")
    limit, chars, items = max_edit_chars(), 0, 0
    for key, value in edit.changes.items():
        values = value if isinstance(value, list) else [value]
        items += len(values)
        chars += len(key) + sum(len(v) if isinstance(v, str) else len(json.dumps(v, ensure_ascii=False)) for v in values)
        name = f"edit.changes.{key[:80]}"
        if chars > limit:
            raise HTTPException(413, f"{name}: the pending edit reaches {chars:,} characters; the limit is "
                                     f"{limit:,} (TOOLROUTE_MAX_EDIT_CHARS)")
        if items > MAX_EDIT_ITEMS:
            raise HTTPException(413, f"{name}: the pending edit reaches {items} lines; the limit is {MAX_EDIT_ITEMS}")


def _store_refusal(status: int, exc: CardStoreError) -> HTTPException:
    """The store's reason for a client; a damaged store (its message names its files) is 503 with an
    error id, the message in the log. `status` 500: a failure no route expected, logged the same way."""
    text = str(exc)
    if "the card store is corrupt" in text:
        return HTTPException(503, with_id("the card store cannot be read", logged("card store", exc)))
    if status >= 500:
        return HTTPException(status, with_id("the card store failed", logged("card store", exc)))
    return HTTPException(status, public(text))


async def _while_connected(request: Request, pace: Pace, work: Callable[[], T], what: str) -> T:
    """`work()` in a worker thread; when the client leaves, its pace is cancelled and the work stops at
    its next batch (releasing the evaluation lock), answered 499 (nobody reads it)."""
    task = asyncio.ensure_future(run_in_threadpool(work))
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=POLL_SECONDS)
            if not task.done() and not pace.cancel.is_set() and await request.is_disconnected():
                pace.cancel.set()
                LOGGER.info("%s cancelled: its client left", what)
        return task.result()
    except EvaluationCancelled:
        raise HTTPException(499, f"the {what} was stopped: the client left") from None
    finally:
        pace.cancel.set()  # answered, or the server is stopping: no batch runs after this


def card_routes(get_ops: Callable[[], CardOps]) -> APIRouter:
    """The routes; `get_ops()` gives the live CardOps (or raises 503 while the agent is being built)."""
    api = APIRouter(prefix="/api", tags=["cards"])

    def live_ops() -> Iterator[CardOps]:
        """`get_ops()`, and a store that fails under any route (a damaged file, read by every call) as a
        refusal naming no path, instead of a 500 carrying the store's message."""
        ops = get_ops()
        try:
            yield ops
        except CardStoreError as exc:
            raise _store_refusal(500, exc) from None

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
    def list_tools(ops: CardOps = Depends(live_ops)) -> list[dict[str, Any]]:
        catalog = ops.router.catalog
        return [{"name": c.name, "purpose": c.purpose, "version": ops.store.card_version(c.name)} for c in catalog]

    @api.get("/tools/{name}")
    def get_tool(name: str, ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        known(ops, name)
        return card_view(ops, name)

    @api.put("/tools/{name}/card")
    def edit_card(name: str, edit: CardEdit, if_match: str | None = Header(None),
                  authorization: str | None = Header(None),
                  ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
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
                raise HTTPException(409, public(str(exc))) from None
            except CatalogError as exc:
                raise HTTPException(422, [public(p) for p in exc.problems]) from None
            except CardStoreError as exc:
                raise _store_refusal(422, exc) from None
            seconds = ops.apply([name])
            diff = [line for change in ops.store.diff(version.number - 1, version.number) for line in change.lines()]
            ops.audit(token, name, "edit", expected, version.number, diff)
        return {**card_view(ops, name), "applied_seconds": round(seconds, 4)}

    @api.get("/tools/{name}/history")
    def history(name: str, ops: CardOps = Depends(live_ops)) -> list[dict[str, Any]]:
        stored(ops, name)  # an unregistered tool's history too: it shows the unregistration
        return [{"version": v.number, "author": v.author, "time": v.time, "message": v.message, "kind": v.kind}
                for v in ops.store.history(name)]

    @api.get("/tools/{name}/diff")
    def diff(name: str, request: Request, ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        stored(ops, name)
        head = ops.store.head
        try:
            a, b = int(request.query_params.get("from", "0")), int(request.query_params.get("to", head))
        except ValueError:
            raise HTTPException(400, "'from' and 'to' are card-store versions (whole numbers)") from None
        if not (0 <= a <= head and 0 <= b <= head):
            raise HTTPException(400, f"no version {a if not 0 <= a <= head else b}: versions run from 0 (the YAML) "
                                     f"to {head}")
        try:
            changes = [c for c in ops.store.diff(a, b) if c.card == name]
        except CardStoreError as exc:
            raise _store_refusal(400, exc) from None
        return {"from": a, "to": b, "lines": [line for c in changes for line in c.lines()]}

    @api.post("/tools/reload-module/{module}")
    def reload_module(module: str, authorization: str | None = Header(None),
                      ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        """Re-import a module of the agent's tools and swap in its new functions (same names, same cards)."""
        token = _token_id(authorization)
        if ops.registry is None:
            raise HTTPException(503, "this server has no tool registry (the agent was built without a ToolRouter)")
        try:
            name = ops.registry.resolve_module(module)
        except UnknownModule as exc:
            raise HTTPException(404, str(exc)) from None
        with ops.lock:
            before = ops.registry.version
            try:
                change = ops.registry.reload_module(name)
            except RegistryError as exc:
                if exc.__cause__ is None:  # the registry's own reason (no tool of the module, …)
                    raise HTTPException(422, public(str(exc))) from None
                # The import failed: its exception (name, file, line) goes to the log under an id.
                raise HTTPException(422, with_id(f"reloading {name} failed, tools unchanged: the module could not "
                                                 "be imported", logged(f"reloading {name}", exc))) from None
            ops.audit(token, ",".join(change.tools), "reload_module", before, ops.registry.version,
                      [f"reloaded {name}", *change.warnings])
        return {"module": name, "tools": change.tools, "registry_version": ops.registry.version,
                "warnings": change.warnings, "seconds": round(change.seconds, 4)}

    @api.post("/tools/{name}/rollback")
    def rollback(name: str, body: Rollback, if_match: str | None = Header(None),
                 authorization: str | None = Header(None),
                 ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        """This card as it was at version `to` (a new version; history is never rewritten)."""
        token = _token_id(authorization)
        known(ops, name)
        expected = _version(if_match)
        if body.to > ops.store.head:
            raise HTTPException(400, f"no version {body.to}: versions run from 0 (the YAML) to {ops.store.head}")
        try:
            old = card_fields(ops.store.card(name, body.to))
        except CardStoreError as exc:
            raise _store_refusal(400, exc) from None
        with ops.lock:
            try:
                version = ops.store.edit(name, old, expected, author=f"token:{token}",
                                         message=body.message or f"rollback to version {body.to}", kind="rollback")
            except CardConflict as exc:
                raise HTTPException(409, public(str(exc))) from None
            except CardStoreError as exc:
                raise _store_refusal(422, exc) from None
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
                raise _store_refusal(409, exc) from None
            seconds = ops.apply([name])
            ops.audit(token, name, action, before, version.number, [f"  + {action}ed"])
        return version.number, seconds

    @api.delete("/tools/{name}")
    def unregister(name: str, message: str = "", if_match: str | None = Header(None),
                   authorization: str | None = Header(None), ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        """The tool leaves the live router (its vectors are deleted before this returns) and, saved as a
        version in the card store, every catalogue opened later: `POST .../register` brings it back."""
        token = _token_id(authorization)
        known(ops, name)
        version, seconds = set_registered(ops, name, False, token, if_match, message)
        return {"name": name, "removed": True, "version": version, "vectors": ops.vectors(name),
                "applied_seconds": round(seconds, 4)}

    @api.post("/tools/{name}/register")
    def register(name: str, message: str = "", if_match: str | None = Header(None),
                 authorization: str | None = Header(None), ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        """An unregistered tool routes again, with its card as it is now (a new version)."""
        token = _token_id(authorization)
        stored(ops, name)
        version, seconds = set_registered(ops, name, True, token, if_match, message)
        return {**card_view(ops, name), "registered": True, "applied_seconds": round(seconds, 4)}

    @api.post("/admin/check")
    def check_token(token: str = Depends(admin)) -> dict[str, Any]:
        """200 when the presented admin token is the server's (the dashboard checks it on "적용"), else
        401, or 403 when card writes are off; nothing is read or written."""
        return {"valid": True}

    @api.post("/route")
    def route(body: RouteRequest, ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        return ops.router.route(body.query).to_dict(body.k)

    @api.post("/eval")
    async def evaluate(body: EvalRequest, request: Request, token: str = Depends(admin),
                       ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        """The live router on a split; with `edit`, also on a copy with the edit applied (nothing saved).
        Needs the admin token; stops when the client leaves; gives way to chat turns."""
        _bounded(body.edit)
        pace = ops.pace()

        def work() -> dict[str, Any]:
            queries = _split(ops, body.split)
            catalog, after = ops.router.catalog, None
            if body.edit is not None:
                known(ops, body.edit.tool)
                try:
                    after = ops.pending(body.edit.tool, body.edit.changes)
                except CatalogError as exc:
                    raise HTTPException(422, [public(p) for p in exc.problems]) from None
                except CardStoreError as exc:
                    raise _store_refusal(422, exc) from None
            _one_evaluation(ops)
            try:
                report = quick_test(PacedRouter(ops.router, pace), queries, body.split, body.k, after)
            except SplitError as exc:
                raise HTTPException(400, str(exc)) from None
            finally:
                ops.eval_lock.release()
            if ops.router.catalog is not catalog:
                raise HTTPException(409, "the cards changed while the split was being routed; run the evaluation again")
            if body.edit is not None:
                report["edit"] = {"tool": body.edit.tool, "changes": body.edit.changes,
                                  "diff": [line for c in _changes(catalog, after, body.edit.tool)
                                           for line in (f"{c.card}.{c.field}", *c.lines())]}
            return report

        return await _while_connected(request, pace, work, "evaluation")

    @api.post("/proposals")
    async def proposals(body: ProposalRequest, request: Request, token: str = Depends(admin),
                        ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        """LLM-proposed card edits for the split's failures, each measured on it. Nothing is saved: accept
        one with `PUT /api/tools/{tool}/card` (its field with the line appended)."""
        pace = ops.pace()

        def work() -> dict[str, Any]:
            llm = ops.chat_model()
            if llm is None:
                raise HTTPException(503, "this server has no LLM to propose card edits with")
            try:
                require_tuning_split(body.split, "card proposals")  # before the test file is even read
            except SplitError as exc:
                raise HTTPException(400, str(exc)) from None
            queries = _split(ops, body.split)
            _one_evaluation(ops)
            try:
                report = analyse_failures(PacedRouter(ops.router, pace), queries, PacedLLM(llm, pace), body.split,
                                          body.k, body.max, guard_queries=ops.eval_queries(), apply=ops.pending)
            except SplitError as exc:
                raise HTTPException(400, str(exc)) from None
            finally:
                ops.eval_lock.release()
            if pace.cancel.is_set():  # the LLM calls it stopped were skipped, not raised: stop here
                raise EvaluationCancelled()
            for proposal in report["proposals"]:
                reason = proposal["skipped"]
                if isinstance(reason, str) and reason.startswith("the LLM call failed"):  # names the exception
                    proposal["skipped"] = with_id("the LLM call failed", logged(f"a proposal's {reason}"))
                elif reason is not None:
                    proposal["skipped"] = public(reason)
                if proposal["skipped"] is None:  # what accepting it takes: the normal PUT of the card
                    card = card_fields(ops.store.card(proposal["tool"]))
                    proposal["accept"] = {
                        "method": "PUT", "path": f"/api/tools/{proposal['tool']}/card",
                        "if_match": ops.store.card_version(proposal["tool"]),
                        "body": {proposal["field"]: [*card[proposal["field"]], proposal["line"]],
                                 "message": f"proposal for {len(proposal['failures'])} {body.split} failure(s) "
                                            f"expecting {proposal['expected_tool']}"}}
            return report

        return await _while_connected(request, pace, work, "failure analysis")

    @api.get("/stats")
    def stats(ops: CardOps = Depends(live_ops)) -> dict[str, Any]:
        report = ops.router.build_report
        return {"tools": len(ops.router.catalog), "vectors": ops.vectors(), "store_version": ops.store.head,
                "removed": sorted(ops.removed), "arm": ops.router.arm,
                "last_build": None if report is None else {"collection": report.collection, "seconds": report.seconds,
                                                           "embedded": report.embedded},
                "last_apply_seconds": ops.last_apply_seconds,
                "registry_version": None if ops.registry is None else ops.registry.version}

    return api


def _changes(before: Catalog, after: Catalog, tool: str) -> list[FieldChange]:
    """How `tool`'s card differs between two catalogues, in the store's diff terms."""
    old, new = card_fields(before.cards[tool]), card_fields(after.cards[tool])
    return [FieldChange(tool, f, old[f], new[f]) for f in EDITABLE_FIELDS if old[f] != new[f]]

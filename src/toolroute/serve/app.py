"""The served agent: a FastAPI app over the same graph, router and tools the notebooks use.

    GET  /                  the chat page (Korean UI)
    GET  /admin/tools       the admin dashboard (cards, quick test, history, unregister, hot reload)
    GET  /healthz           the process answers and the agent was not found broken (503 with the reason)
    GET  /readyz            the index is built and the LLM answers (503 until then)
    POST /api/chat          one turn as JSON: answer, tool calls, sources, thread id, token usage
    POST /api/chat/stream   one turn as Server-Sent Events (seed 000's events, see toolroute.agent.events)
    GET  /api/threads/{id}  a conversation's turns so far (threads live in SQLite, across restarts)
    GET  /docs              OpenAPI

Limits: a message over `max_message_chars` → 413; a malformed thread id → 400, an unknown one → 404;
at most `max_concurrent_turns` turns at once (the next gets 429 with Retry-After), one per thread (409);
`turn_timeout` seconds per turn. Logs carry ids, routes and timings, never what was said.

At the door (`serve.door`, every route): a `Host` the server answers for (421 otherwise), a body of at
most `max_body_bytes` counted as it is read (413), JSON text that is valid Unicode (400 naming the
field). Errors (`serve.errors`) name no path, URL or exception: those are logged under an error id
that the client gets. A clean stop checkpoints the conversations' SQLite write-ahead log.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import threading
import uuid
from contextlib import asynccontextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from fastapi import FastAPI, HTTPException
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from toolroute.agent.registry import ToolRegistry
from toolroute.config import allowed_hosts as configured_hosts
from toolroute.config import data_dir, max_body_bytes, max_concurrent_turns, max_turn_chars, turn_timeout
from toolroute.routing import ToolRouter
from toolroute.serve import errors
from toolroute.serve.admin_page import render_admin_page
from toolroute.serve.cards_api import CardOps, card_routes
from toolroute.serve.door import ANY_ADDRESS, HostCheck, RequestBody, allowed_hosts
from toolroute.serve.e5_threads import E5Threads, parse_setting
from toolroute.serve.llm import LLMSupervisor
from toolroute.plugins import domain_label
from toolroute.serve.logs import LOGGER
from toolroute.serve.page import render_page
from toolroute.serve.turns import TurnRefused, TurnSlots, run_turn

THREAD_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ChatRequest(BaseModel):
    message: str = Field(description="the user's turn (at most TOOLROUTE_MAX_TURN_CHARS characters, else 413)")
    thread_id: str | None = Field(None, description="a thread from an earlier answer; omitted: a new conversation")


class ToolCallOut(BaseModel):
    step: int
    tool_name: str
    tool_args: dict[str, Any] = {}
    tool_result: str = ""
    tool_output: Any = None
    status: str = "success"


class Usage(BaseModel):
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ChatResponse(BaseModel):
    thread_id: str
    answer: str
    route: dict[str, Any]
    tool_calls: list[ToolCallOut]
    sources: list[Any]
    usage: Usage
    failed: bool
    error: str | None = None
    kg_data: dict[str, Any] = {}


@dataclass
class ServeOptions:
    domain: str = "insurance"
    memory_path: Path | None = None
    max_concurrent_turns: int | None = None
    turn_timeout: float | None = None
    max_message_chars: int | None = None
    e5_threads: str = "auto"  # `serve.e5_threads`: one thread while other turns run, all cores alone; or a number
    host: str = "127.0.0.1"  # the address served on: its name is answered for, unless it is every address
    allowed_hosts: tuple[str, ...] | None = None  # more Host names (default: TOOLROUTE_ALLOWED_HOSTS)
    max_body_bytes: int | None = None

    def resolved(self) -> "ServeOptions":
        return replace(self, memory_path=Path(self.memory_path or data_dir() / "memory" / f"{self.domain}.sqlite"),
                       max_concurrent_turns=self.max_concurrent_turns or max_concurrent_turns(),
                       turn_timeout=self.turn_timeout or turn_timeout(),
                       max_message_chars=self.max_message_chars or max_turn_chars(),
                       allowed_hosts=tuple(self.allowed_hosts if self.allowed_hosts is not None else configured_hosts()),
                       max_body_bytes=self.max_body_bytes or max_body_bytes())

    def host_names(self) -> frozenset[str]:
        """The Host names answered for: loopback, the bound address (unless every address), the listed ones."""
        return allowed_hosts(self.host, self.allowed_hosts or ())


class ServedAgent:
    """The agent being built (in the background: building the index may take a minute) or ready."""

    def __init__(self, factory: Callable[[Any], Any], supervisor: LLMSupervisor):
        self.factory, self.supervisor = factory, supervisor
        self.agent: Any = None
        self.error: str | None = None  # why the build failed, for clients: no path, URL or exception name
        self.built = threading.Event()

    def build(self) -> None:
        try:
            self.agent = self.factory(self.supervisor.model())
        except Exception as exc:  # noqa: BLE001 - reported by /healthz, /readyz and every endpoint that needs it
            self.error = errors.with_id(build_failure(exc), errors.logged("the agent could not be built", exc))
        finally:
            self.built.set()

    def unavailable(self) -> HTTPException:
        """503 for an endpoint that needs the agent: still building (retry), or broken (no Retry-After)."""
        if self.error is not None:
            return HTTPException(503, self.error)
        return HTTPException(503, "the agent is starting (building the tool index); see /readyz",
                             headers={"Retry-After": "5"})

    def refresh_llm(self) -> None:
        """Before each turn: a model on a live server (a new embedded child after a crash)."""
        self.agent.llm = self.supervisor.model()


def build_failure(exc: BaseException) -> str:
    """What broke, for a client: a damaged SQLite file is named as such (it will not heal by waiting)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, sqlite3.DatabaseError):
            return "the agent could not be built: a SQLite store it opens (the conversations, the tool index) is damaged or not a database"
        seen = seen.__cause__ or seen.__context__
    return "the agent could not be built"


def checkpoint_wal(checkpointer: Any) -> None:
    """Fold the SQLite write-ahead log into the database and empty it (a clean stop leaves one file)."""
    conn = getattr(checkpointer, "conn", None)
    if not isinstance(conn, sqlite3.Connection):
        return
    with getattr(checkpointer, "lock", None) or nullcontext():
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def thread_exists(checkpointer: Any, thread_id: str) -> bool:
    """Whether the thread has a checkpoint: one indexed SQLite row for the SQLite memory (reading the
    checkpoint itself deserialises the whole conversation, which grows with every turn)."""
    conn, lock = getattr(checkpointer, "conn", None), getattr(checkpointer, "lock", None)
    if conn is None or lock is None:
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        return checkpointer.get_tuple(config) is not None
    with lock:
        checkpointer.setup()  # the table exists once the first turn ran; before, no thread exists
        return conn.execute("SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' LIMIT 1",
                            (thread_id,)).fetchone() is not None


def _default_factory(options: ServeOptions) -> Callable[[Any], Any]:
    def build(llm: Any) -> Any:
        from toolroute.agent import create_agent  # builds the agent (index, gate, LLM) in the background at startup

        return create_agent(options.domain, llm=llm, memory_path=options.memory_path)

    return build


def create_app(domain: str = "insurance", agent_factory: Callable[[Any], Any] | None = None,
               llm: LLMSupervisor | Any = None, options: ServeOptions | None = None,
               build_in_background: bool = True) -> FastAPI:
    """The app. `agent_factory(llm) -> Agent` builds the agent (default: `create_agent(domain, …)` with a
    SQLite memory); `llm` is a chat model to use as is, or an `LLMSupervisor` (default: the configured
    endpoint, else the embedded model, restarted when it dies)."""
    options = (options or ServeOptions(domain=domain)).resolved()
    supervisor = llm if isinstance(llm, LLMSupervisor) else LLMSupervisor(llm)
    served = ServedAgent(agent_factory or _default_factory(options), supervisor)
    slots = TurnSlots(options.max_concurrent_turns)
    e5_threads = E5Threads(parse_setting(options.e5_threads))
    if options.host.strip() in ANY_ADDRESS and not options.allowed_hosts:
        LOGGER.warning("serving on every address, but only loopback Host names are answered (others: 421): "
                       "list this server's names in TOOLROUTE_ALLOWED_HOSTS")

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if build_in_background:
            threading.Thread(target=served.build, name="build-agent", daemon=True).start()
        else:
            await run_in_threadpool(served.build)
        yield
        if served.agent is not None:
            try:
                await run_in_threadpool(checkpoint_wal, getattr(served.agent, "checkpointer", None))
            except sqlite3.Error as exc:
                errors.logged("the conversations' write-ahead log could not be checkpointed at shutdown", exc)
        await run_in_threadpool(supervisor.close)

    app = FastAPI(title="toolroute", version="0.1.0", lifespan=lifespan,
                  description=f"The {options.domain} assistant ({domain_label(options.domain)}) with a tool router: "
                              "chat over REST and SSE.")
    app.state.served, app.state.slots, app.state.options, app.state.supervisor = served, slots, options, supervisor

    card_ops: dict[str, CardOps] = {}

    def live_card_ops() -> CardOps:
        """The card operations of the built agent's router (503 until the agent is ready)."""
        agent = served.agent
        if agent is None:
            raise served.unavailable()
        if not isinstance(getattr(agent, "router", None), ToolRouter):
            raise HTTPException(503, "this agent has no ToolRouter: its cards cannot be served")
        if "ops" not in card_ops:
            registry = getattr(agent, "registry", None) or ToolRegistry(agent)
            card_ops["ops"] = CardOps.open(agent.router, agent.pack.catalog_dir,
                                           on_change=lambda names: [agent._schemas.pop(n, None) for n in names],
                                           registry=registry, llm=supervisor.model, busy=lambda: slots.active)
        return card_ops["ops"]

    app.include_router(card_routes(live_card_ops))
    # Outermost first: the Host, then the body, then unexpected errors (inside Starlette's own).
    errors.install(app)
    app.add_middleware(RequestBody, max_bytes=options.max_body_bytes)
    app.add_middleware(HostCheck, allowed=options.host_names())

    def _label() -> str:
        agent = served.agent
        return agent.pack.label if agent is not None else domain_label(options.domain)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> str:
        return render_page(options.domain, _label(), options.max_message_chars)

    @app.get("/admin/tools", response_class=HTMLResponse, include_in_schema=False)
    async def admin_tools() -> HTMLResponse:
        # The page holds no secret (the operator types the token); never cache it all the same.
        return HTMLResponse(render_admin_page(_label()), headers={"Cache-Control": "no-store"})

    @app.get("/healthz", tags=["health"], responses={503: {}})
    async def healthz() -> JSONResponse:
        """200 while the process answers (building included); 503 once the agent could not be built (a
        damaged store, …): waiting will not help, the reason says what broke (no path)."""
        if served.error is not None:
            return JSONResponse({"status": "unhealthy", "reason": served.error}, status_code=503)
        return JSONResponse({"status": "ok"})

    @app.get("/readyz", tags=["health"])
    async def readyz() -> JSONResponse:
        index = served.agent is not None
        answering = await run_in_threadpool(supervisor.answering) if index else False
        body = {"ready": index and answering, "index": index, "llm": answering, "error": served.error,
                "turns_running": slots.active, "max_concurrent_turns": slots.limit}
        return JSONResponse(body, status_code=200 if body["ready"] else 503)

    async def _thread(thread_id: str | None, must_exist: bool) -> tuple[Any, str]:
        if not served.built.is_set() or served.agent is None:
            raise served.unavailable()
        agent = served.agent
        if thread_id is None:
            return agent, uuid.uuid4().hex
        if not THREAD_ID.match(thread_id):
            raise HTTPException(400, "malformed thread_id: 1-64 characters of A-Z, a-z, 0-9, '-' and '_'")
        if must_exist and not await run_in_threadpool(thread_exists, agent.checkpointer, thread_id):
            raise HTTPException(404, f"unknown thread_id {thread_id}")
        return agent, thread_id

    async def _start(body: ChatRequest) -> tuple[Any, str]:
        if len(body.message) > options.max_message_chars:
            raise HTTPException(413, f"message over {options.max_message_chars:,} characters")
        if not body.message.strip():
            raise HTTPException(400, "empty message")
        agent, thread_id = await _thread(body.thread_id, must_exist=body.thread_id is not None)
        try:
            slots.acquire(thread_id)
        except TurnRefused as refused:
            headers = {"Retry-After": str(refused.retry_after)} if refused.retry_after else None
            raise HTTPException(refused.status, refused.detail, headers=headers) from None
        return agent, thread_id

    def _events(agent: Any, body: ChatRequest, thread_id: str) -> AsyncIterator[tuple[str, Any]]:
        def before() -> None:
            served.refresh_llm()
            e5_threads.update(slots.active)

        return run_turn(agent, body.message, thread_id, slots, options.turn_timeout, before=before,
                        after=lambda: e5_threads.update(slots.active))

    @app.post("/api/chat", response_model=ChatResponse, tags=["chat"],
              responses={400: {}, 404: {}, 409: {}, 413: {}, 429: {}, 503: {}})
    async def chat(body: ChatRequest) -> ChatResponse:
        agent, thread_id = await _start(body)
        route: dict[str, Any] = {}
        calls: list[ToolCallOut] = []
        sources: list[Any] = []
        done: dict[str, Any] = {}
        error = None
        async for event, data in _events(agent, body, thread_id):
            if event == "route":
                route = data
            elif event == "tool_call":
                calls.append(ToolCallOut(step=data.get("step", len(calls) + 1), tool_name=data["tool_name"],
                                         tool_args=data.get("tool_args") or {}, tool_result=data.get("tool_result") or "",
                                         tool_output=data.get("tool_output"),
                                         status=data.get("status", "success")))
            elif event == "sources":
                sources = data
            elif event == "error":
                error = data.get("error")
            elif event == "done":
                done = data
        return ChatResponse(thread_id=thread_id, answer=done.get("answer", ""), route=route, tool_calls=calls,
                            sources=sources, failed=bool(done.get("failed", True)), error=error,
                            kg_data=done.get("kg_data") or {},
                            usage=Usage(llm_calls=done.get("llm_calls", 0), prompt_tokens=done.get("prompt_tokens", 0),
                                        completion_tokens=done.get("completion_tokens", 0)))

    @app.post("/api/chat/stream", tags=["chat"], response_class=EventSourceResponse,
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "route → tool_call* → token* → sources → [error] → done"},
                         400: {}, 404: {}, 409: {}, 413: {}, 429: {}, 503: {}})
    async def chat_stream(body: ChatRequest) -> EventSourceResponse:
        agent, thread_id = await _start(body)
        events = _events(agent, body, thread_id)

        async def frames():
            async for event, data in events:
                yield {"event": event, "data": json.dumps(data, ensure_ascii=False, default=str)}

        return EventSourceResponse(frames(), ping=15, headers={"Cache-Control": "no-store", "X-Thread-Id": thread_id})

    @app.get("/api/threads/{thread_id}", tags=["chat"])
    async def thread(thread_id: str) -> dict[str, Any]:
        agent, thread_id = await _thread(thread_id, must_exist=True)
        state = await run_in_threadpool(agent.graph.get_state, {"configurable": {"thread_id": thread_id}})
        history = state.values.get("history", [])
        return {"thread_id": thread_id, "turns": [{"question": q, "answer": a} for q, a in history]}

    return app


async def wait_ready(app: FastAPI, timeout: float = 600.0) -> bool:
    """For embedders of the app: wait until the agent is built."""
    served: ServedAgent = app.state.served
    return await asyncio.to_thread(served.built.wait, timeout)

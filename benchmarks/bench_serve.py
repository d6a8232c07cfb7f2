"""The served agent under concurrent SSE clients (printed, not asserted; loopback only, bounded).

    python benchmarks/bench_serve.py [--clients 10,50] [--turns 10] [--max-turns 4] [--latency 0.2] [--no-embedded]
    python benchmarks/bench_serve.py --eval [--eval-clients 2] [--eval-turns 20] [--src DIR]

A `toolroute serve` process (the real router, guardrails and SQLite memory) talks to a scripted
OpenAI-compatible endpoint (`toolroute.serve.scripted`, a child process) that answers after a fixed
`--latency`. Each phase runs N clients, each a thread of `--turns` turns; a refused turn (429) waits
its Retry-After and is sent again (within the phase's time bound). Printed per phase:
- request → `route` event p50 / p95 (input guardrail + rewriter + routing: no LLM call before it),
- turns per second, 429s (and whether each carried Retry-After),
- lost turns (no `done`, or a failed one) and crossed turns (a reply without its own thread and
  turn marker, or with another's),
- the server's resident memory before and after.
Then the time to the first token with the embedded model (skipped, saying why, when it cannot start).

`--eval` instead measures chat turns while a batch evaluation runs (issue 37): `--eval-clients`
clients send `--eval-turns` turns each, first alone, then while `POST /api/eval` (dev split, a pending
edit) runs again and again; printed: request → `route` and request → `done` p50 / p95 of each phase,
and the evaluations' count and seconds. `--src DIR` serves another source tree (e.g. `git archive
HEAD` unpacked) for a before / after comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from toolroute.llm.server import free_port  # noqa: E402

MARKER = re.compile(r"\[T-[A-Za-z0-9]+\]")
QUESTIONS = ["55세 여성 실속치매보험 보험료 알려주세요", "실속치매보험 보장 내용이랑 보험료 안내해 주세요",
             "치매보험 55세 여성 월 보험료 확인 부탁드립니다"]


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _wait(url: str, timeout: float, process: subprocess.Popen) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            return False
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    return False


def _serve(env_extra: dict[str, str], memory: Path, log: Path, e5_threads: str = "auto",
           src: Path = ROOT / "src") -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src), **env_extra}
    process = subprocess.Popen([sys.executable, "-m", "toolroute.cli", "serve", "--port", str(port), "--memory", str(memory),
                                "--e5-threads", e5_threads],
                               env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    return process, f"http://127.0.0.1:{port}"


async def _turn(client: httpx.AsyncClient, body: dict, stats: dict) -> dict | None:
    """One turn (re-sent after each 429 until the phase deadline): the frames, or None when lost."""
    while time.monotonic() < stats["deadline"]:
        started = time.perf_counter()
        frames: list[tuple[str, dict]] = []
        try:
            async with client.stream("POST", "/api/chat/stream", json=body) as response:
                if response.status_code == 429:
                    stats["refused"] += 1
                    retry = response.headers.get("retry-after")
                    stats["refused_without_retry_after"] += retry is None
                    await asyncio.sleep(float(retry or 1))
                    continue
                if response.status_code != 200:
                    stats["errors"][response.status_code] = stats["errors"].get(response.status_code, 0) + 1
                    return None
                event = None
                async for line in response.aiter_lines():
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:") and event:
                        data = json.loads(line[5:].strip())
                        if event == "route":
                            stats["route_ms"].append((time.perf_counter() - started) * 1000)
                        frames.append((event, data))
                        event = None
        except httpx.HTTPError as exc:
            stats["errors"][type(exc).__name__] = stats["errors"].get(type(exc).__name__, 0) + 1
            return None
        return {"frames": frames, "seconds": time.perf_counter() - started}
    return None


async def _client(base: str, index: int, turns: int, stats: dict) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(120, connect=10)) as client:
        thread = None
        for turn in range(turns):
            marker = f"[T-c{index:02d}n{turn}]"
            body = {"message": f"{QUESTIONS[(index + turn) % len(QUESTIONS)]} {marker}", "thread_id": thread}
            result = await _turn(client, body, stats)
            done = dict(result["frames"][-1][1]) if result and result["frames"] and result["frames"][-1][0] == "done" else None
            if done is None or done.get("failed"):
                stats["lost"] += 1
                continue
            stats["completed"] += 1
            thread = thread or done["thread_id"]
            markers = MARKER.findall(done["answer"])
            tokens = "".join(d["token"] for e, d in result["frames"] if e == "token")
            if markers != [marker] or done["thread_id"] != thread or tokens != done["answer"]:
                stats["crossed"] += 1


async def _phase(base: str, clients: int, turns: int, time_bound: float) -> dict:
    stats = {"route_ms": [], "refused": 0, "refused_without_retry_after": 0, "lost": 0, "crossed": 0, "completed": 0,
             "errors": {}, "deadline": time.monotonic() + time_bound}
    started = time.perf_counter()
    await asyncio.gather(*[_client(base, i, turns, stats) for i in range(clients)])
    stats["seconds"] = time.perf_counter() - started
    return stats


def _rss_mb(process: subprocess.Popen) -> float:
    return psutil.Process(process.pid).memory_info().rss / 2**20


@contextmanager
def _scripted_and_served(args: argparse.Namespace, work: Path, env_extra: dict[str, str], memory: str,
                         src: Path = ROOT / "src") -> Iterator[tuple[subprocess.Popen, str] | None]:
    """The scripted endpoint and a `toolroute serve` on it, both child processes: (server, base URL)
    once it is ready, or None (said why); both stopped on the way out."""
    llm_port = free_port()
    llm = subprocess.Popen([sys.executable, "-m", "toolroute.serve.scripted", "--port", str(llm_port), "--latency", str(args.latency)],
                           env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    server = None
    try:
        if not _wait(f"http://127.0.0.1:{llm_port}/v1/models", 60, llm):
            print("the scripted endpoint did not start")
            yield None
            return
        server, base = _serve({"TOOLROUTE_LLM_BASE_URL": f"http://127.0.0.1:{llm_port}/v1",
                               "TOOLROUTE_MAX_CONCURRENT_TURNS": str(args.max_turns), **env_extra}, work / memory,
                              work / "serve.log", args.e5_threads, src)
        if not _wait(f"{base}/readyz", 600, server):
            print(f"the server did not get ready: {(work / 'serve.log').read_text()[-2000:]}")
            yield None
            return
        yield server, base
    finally:
        for process in (server, llm):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)


def bench_concurrency(args: argparse.Namespace, work: Path) -> None:
    with _scripted_and_served(args, work, {}, "bench.sqlite") as started:
        if started is None:
            return
        server, base = started
        asyncio.run(_phase(base, 1, 2, 60))  # warm-up: first routes, first checkpoint writes
        print(f"toolroute serve (insurance, real router and guardrails), scripted LLM answering after {args.latency * 1000:.0f} ms, "
              f"TOOLROUTE_MAX_CONCURRENT_TURNS={args.max_turns}, --e5-threads {args.e5_threads}, {os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"{'clients':>7} {'turns':>6} {'route p50':>10} {'route p95':>10} {'turns/s':>8} {'429s':>6} "
              f"{'no R-A':>6} {'lost':>5} {'crossed':>7} {'RSS before':>11} {'RSS after':>10} {'growth':>7}")
        for clients in args.clients:
            before = _rss_mb(server)
            stats = asyncio.run(_phase(base, clients, args.turns, args.time_bound))
            after = _rss_mb(server)
            print(f"{clients:>7} {stats['completed']:>6} {statistics.median(stats['route_ms']) if stats['route_ms'] else float('nan'):>8.1f}ms "
                  f"{_percentile(stats['route_ms'], 0.95):>8.1f}ms {stats['completed'] / stats['seconds']:>8.2f} {stats['refused']:>6} "
                  f"{stats['refused_without_retry_after']:>6} {stats['lost']:>5} {stats['crossed']:>7} {before:>9.1f}MB {after:>8.1f}MB "
                  f"{after - before:>+6.1f}MB" + (f"  errors: {stats['errors']}" if stats["errors"] else ""))


EVAL_TOKEN = "bench-eval-token"
EVAL_EDIT = {"tool": "premium_estimate", "changes": {"+when_to_use": ["갱신형 치매보험 월 납입액이 얼마인지 계산해 주세요",
                                                                     "60세 남성 암보험 보험료 견적 부탁해요"]}}


def _timed_turns(base: str, clients: int, turns: int, stats: dict) -> None:
    async def one(index: int) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=httpx.Timeout(120, connect=10)) as client:
            for turn in range(turns):
                started = time.perf_counter()
                body = {"message": f"{QUESTIONS[(index + turn) % len(QUESTIONS)]} [T-e{index}n{turn}]"}
                async with client.stream("POST", "/api/chat/stream", json=body) as response:
                    if response.status_code != 200:
                        stats["errors"] += 1
                        await response.aread()
                        continue
                    async for line in response.aiter_lines():
                        if line.startswith("event: route"):
                            stats["route_ms"].append((time.perf_counter() - started) * 1000)
                        elif line.startswith("event: done"):
                            stats["done_ms"].append((time.perf_counter() - started) * 1000)

    async def every() -> None:
        await asyncio.gather(*[one(i) for i in range(clients)])

    asyncio.run(every())


def _evaluations(base: str, stop: threading.Event, seconds: list[float], statuses: list[int]) -> None:
    with httpx.Client(base_url=base, timeout=600, headers={"Authorization": f"Bearer {EVAL_TOKEN}"}) as client:
        while not stop.is_set():
            started = time.perf_counter()
            answer = client.post("/api/eval", json={"split": "dev", "k": 5, "edit": EVAL_EDIT})
            statuses.append(answer.status_code)
            if answer.status_code == 200:
                seconds.append(time.perf_counter() - started)


def bench_eval(args: argparse.Namespace, work: Path) -> None:
    """Chat turns alone, then while evaluations run: request → route and → done, p50 and p95."""
    src = Path(args.src) if args.src else ROOT / "src"
    with _scripted_and_served(args, work, {"TOOLROUTE_ADMIN_TOKEN": EVAL_TOKEN}, "eval.sqlite", src) as served:
        if served is None:
            return
        _, base = served
        warm = {"route_ms": [], "done_ms": [], "errors": 0}
        _timed_turns(base, 1, 2, warm)  # first routes, first checkpoint writes
        seconds: list[float] = []
        statuses: list[int] = []
        stop = threading.Event()
        started = time.perf_counter()
        once = httpx.post(f"{base}/api/eval", json={"split": "dev", "k": 5, "edit": EVAL_EDIT}, timeout=600,
                          headers={"Authorization": f"Bearer {EVAL_TOKEN}"})  # builds the copy's namespace once
        alone = time.perf_counter() - started
        print(f"toolroute serve ({args.src or 'this tree'}), scripted LLM answering after {args.latency * 1000:.0f} ms, "
              f"{args.eval_clients} chat clients x {args.eval_turns} turns, {os.cpu_count()} cores, load average "
              f"{os.getloadavg()[0]:.2f}; one evaluation alone (dev, pending edit): {alone:.1f} s, HTTP {once.status_code}")
        print(f"{'phase':<22} {'turns':>5} {'route p50':>10} {'route p95':>10} {'done p50':>10} {'done p95':>10} {'evals':>6} "
              f"{'eval s (mean)':>13}")
        for phase in ("chat alone", "chat + evaluations"):
            stats = {"route_ms": [], "done_ms": [], "errors": 0}
            seconds.clear()
            statuses.clear()
            stop.clear()
            runner = threading.Thread(target=_evaluations, args=(base, stop, seconds, statuses), daemon=True)
            if phase != "chat alone":
                runner.start()
                time.sleep(0.5)  # the evaluation is routing when the turns start
            _timed_turns(base, args.eval_clients, args.eval_turns, stats)
            stop.set()
            if runner.is_alive():
                runner.join(timeout=600)
            mean = statistics.mean(seconds) if seconds else float("nan")
            print(f"{phase:<22} {len(stats['done_ms']):>5} {statistics.median(stats['route_ms']):>8.1f}ms "
                  f"{_percentile(stats['route_ms'], 0.95):>8.1f}ms {statistics.median(stats['done_ms']):>8.1f}ms "
                  f"{_percentile(stats['done_ms'], 0.95):>8.1f}ms {len(seconds):>6} {mean:>13.1f}"
                  + (f"  errors: {stats['errors']}" if stats["errors"] else "")
                  + (f"  eval statuses: {sorted(set(statuses))}" if set(statuses) - {200} else ""))


def bench_embedded(work: Path, timeout: float) -> None:
    from toolroute.llm.server import runtime_problem

    problem = runtime_problem()
    if problem:
        print(f"embedded model: skipped ({problem})")
        return
    env = {k: v for k, v in os.environ.items() if k != "TOOLROUTE_LLM_BASE_URL"}
    os.environ.pop("TOOLROUTE_LLM_BASE_URL", None)
    started = time.perf_counter()
    server, base = _serve({}, work / "embedded.sqlite", work / "embedded.log")
    try:
        if not _wait(f"{base}/readyz", timeout, server):
            print(f"embedded model: skipped (the server was not ready within {timeout:.0f} s; "
                  f"log: {(work / 'embedded.log').read_text()[-500:]!r})")
            return
        ready = time.perf_counter() - started
        for attempt in ("first", "second"):
            sent = time.perf_counter()
            first_route = first_token = None
            with httpx.stream("POST", f"{base}/api/chat/stream", json={"message": QUESTIONS[0]}, timeout=timeout) as response:
                for line in response.iter_lines():
                    if line.startswith("event: route") and first_route is None:
                        first_route = time.perf_counter() - sent
                    if line.startswith("event: token") and first_token is None:
                        first_token = time.perf_counter() - sent
                total = time.perf_counter() - sent
            print(f"embedded model ({attempt} turn): ready after {ready:.1f} s; request → route {first_route * 1000:.0f} ms, "
                  f"→ first token {first_token if first_token is None else round(first_token, 2)} s, whole turn {total:.1f} s")
    finally:
        server.terminate()
        server.wait(timeout=30)
        del env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="10,50", help="concurrent clients of each phase, comma-separated")
    parser.add_argument("--turns", type=int, default=10, help="turns per client (one thread each)")
    parser.add_argument("--max-turns", type=int, default=4, help="TOOLROUTE_MAX_CONCURRENT_TURNS of the server (its default: 4)")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the scripted LLM takes per reply")
    parser.add_argument("--time-bound", type=float, default=300, help="seconds a phase may take (then turns count as lost)")
    parser.add_argument("--e5-threads", default="auto", help="the server's --e5-threads (auto, or a number)")
    parser.add_argument("--no-embedded", action="store_true", help="skip the embedded model's time to first token")
    parser.add_argument("--embedded-timeout", type=float, default=600)
    parser.add_argument("--eval", action="store_true", help="chat turns alone, then while /api/eval runs (issue 37)")
    parser.add_argument("--eval-clients", type=int, default=2, help="--eval: concurrent chat clients")
    parser.add_argument("--eval-turns", type=int, default=20, help="--eval: turns per chat client and phase")
    parser.add_argument("--src", default=None, help="serve this source tree instead of ./src (a before / after run)")
    args = parser.parse_args()
    args.clients = [int(c) for c in args.clients.split(",") if c.strip()]
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as folder:
        if args.eval:
            bench_eval(args, Path(folder))
            return
        bench_concurrency(args, Path(folder))
        if not args.no_embedded:
            bench_embedded(Path(folder), args.embedded_timeout)


if __name__ == "__main__":
    main()

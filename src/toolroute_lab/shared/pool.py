"""Rows of an experiment run by a bounded pool of threads, kept in their input order.

An LLM-bound row (a step-limit task, a RAGAS conversation) mostly waits for its endpoint, so a served
model can take several at once: `run_in_order` runs `work(job)` for every job in at most
`max_concurrency` threads and hands each result to `commit` **in job order**, as soon as every
earlier job has been committed. A checkpoint written by `commit` therefore has the same rows in the
same order whatever the concurrency (a job that finished early waits in memory for the ones before
it; an interrupted run loses at most the finished jobs behind the oldest unfinished one, fewer than
`max_concurrency`), and a deterministic model gives the same table at 1 and at 8.

`OrderedTickets` hands out a budget (say, "verify the first N copies") in job order although the
jobs finish in any order: a job asking for a ticket waits until every earlier job has either taken
its ticket or declared that it needs none.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

J = TypeVar("J")
R = TypeVar("R")


def check_concurrency(value, name: str = "max_concurrency") -> int:
    """A positive whole number of workers, else a ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name}: {value!r} is not a whole number >= 1")
    return value


def run_in_order(jobs: Sequence[J], work: Callable[[J], R], max_concurrency: int = 1,
                 commit: Callable[[int, R], None] | None = None, done: Callable[[], None] | None = None) -> list[R]:
    """`work(job)` for every job, at most `max_concurrency` at once; `commit(index, result)` in job
    order; `done()` when any job finishes (a progress bar). Returns the results in job order. With 1
    the jobs run one after the other in this thread. An exception from `work` cancels the jobs not
    started and is raised after the running ones end."""
    check_concurrency(max_concurrency)
    results: list[R] = []
    if max_concurrency == 1 or len(jobs) <= 1:
        for index, job in enumerate(jobs):
            result = work(job)
            if done:
                done()
            if commit:
                commit(index, result)
            results.append(result)
        return results
    pool = ThreadPoolExecutor(max_workers=max_concurrency, thread_name_prefix="row")
    try:
        futures = [pool.submit(work, job) for job in jobs]  # the queue is FIFO: jobs start in order
        if done:
            for future in futures:
                future.add_done_callback(lambda _: done())
        for index, future in enumerate(futures):
            result = future.result()
            if commit:
                commit(index, result)
            results.append(result)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results


class OrderedTickets:
    """`tickets` tickets handed out in job order: `take(i)` (job i wants one) and `skip(i)` (job i will
    not ask) each settle job i; `take(i)` first waits until jobs 0..i-1 are settled."""

    def __init__(self, tickets: int):
        self.left = max(0, int(tickets))
        self._settled: set[int] = set()
        self._next = 0  # every job below it is settled
        self._cond = threading.Condition()

    def _settle(self, index: int) -> None:
        self._settled.add(index)
        while self._next in self._settled:
            self._settled.discard(self._next)
            self._next += 1
        self._cond.notify_all()

    def take(self, index: int) -> bool:
        with self._cond:
            if index < self._next or index in self._settled:
                raise ValueError(f"job {index} is already settled")
            if self.left > 0:  # none left stays none left: no need to wait for the earlier jobs
                self._cond.wait_for(lambda: self._next >= index)
            granted = self.left > 0
            self.left -= int(granted)
            self._settle(index)
            return granted

    def skip(self, index: int) -> None:
        with self._cond:
            if index >= self._next and index not in self._settled:
                self._settle(index)

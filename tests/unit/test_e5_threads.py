"""The e5 team size while serving: all cores for a turn alone, one thread while other turns run."""

import asyncio
import threading

import pytest

from toolroute.embeddings import E5_THREAD
from toolroute.serve.e5_threads import E5Threads, parse_setting
from toolroute.serve.turns import TurnSlots, run_turn


class Recorder:
    def __init__(self):
        self.calls: list[tuple[int, str]] = []

    def __call__(self, threads: int) -> None:
        self.calls.append((threads, threading.current_thread().name))


def test_one_thread_while_other_turns_run_all_cores_alone_set_only_on_change():
    setter = Recorder()
    policy = E5Threads(cores=2, set_threads=setter)
    for active in (1, 1, 2, 3, 2, 1, 0):
        policy.update(active)
    assert [t for t, _ in setter.calls] == [2, 1, 2]
    # the team size is per calling thread: it is set on the thread that encodes
    owner = E5_THREAD.run(lambda: threading.current_thread().name)
    assert {name for _, name in setter.calls} == {owner}


def test_a_fixed_setting_is_applied_at_once_and_kept():
    setter = Recorder()
    policy = E5Threads(fixed=1, cores=2, set_threads=setter)
    policy.update(1)
    policy.update(4)
    assert [t for t, _ in setter.calls] == [1]


def test_the_setting_is_auto_or_a_positive_number():
    assert parse_setting(None) is None and parse_setting(" Auto ") is None and parse_setting("2") == 2
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(ValueError, match="--e5-threads"):
            parse_setting(bad)


def test_the_real_libgomp_is_found_and_takes_the_setting():
    policy = E5Threads(fixed=1, cores=2)
    assert policy.current == 1
    policy.fixed = None
    policy.update(0)
    assert policy.current == 2


class _OneEventAgent:
    pass


def test_run_turn_calls_after_once_its_slot_is_released(monkeypatch):
    from toolroute.serve import turns

    seen: list[int] = []
    slots = TurnSlots(2)
    monkeypatch.setattr(turns, "turn_events", lambda *a, **k: iter([("done", {})]))

    async def drive():
        slots.acquire("t1")
        return [e async for e, _ in run_turn(_OneEventAgent(), "q", "t1", slots, 5.0,
                                               before=lambda: seen.append(slots.active),
                                               after=lambda: seen.append(slots.active))]

    assert asyncio.run(drive()) == ["done"]
    assert seen == [1, 0]

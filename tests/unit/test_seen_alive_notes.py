"""seen_alive.Notes: the running attempts' note of when they were last seen alive, written at
most (and, while they run, at least) every `every` seconds, in the tick's transaction when one
comes by, else in one of its own; no note and no timer while nothing runs (an idle daemon
stays asleep: benchmarks W4)."""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from gpuherd import seen_alive
from gpuherd.store import Store


@dataclass
class _Live:
    job_id: int
    attempt: int


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _note(store: Store) -> dict[str, Any] | None:
    text = store.get_setting(seen_alive.SETTING)
    return json.loads(text) if text else None


def test_ticks_write_a_note_at_most_once_an_interval(tmp_path: Path) -> None:
    store, clock, live = Store(tmp_path / "herd.db"), _Clock(), cast(dict[int, Any], {})
    notes = seen_alive.Notes(store, live, clock, every=30.0)
    with store.transaction():
        notes.note(clock.now)  # nothing runs: nothing noted
    assert _note(store) is None
    live[3] = _Live(3, 2)
    with store.transaction():
        notes.note(clock.now)
    assert _note(store) == {"at": 1000.0, "attempts": [[3, 2]]}
    for _ in range(5):  # ticks within the interval: no write
        clock.now += 5.0
        with store.transaction():
            notes.note(clock.now)
    assert _note(store) == {"at": 1000.0, "attempts": [[3, 2]]}
    clock.now += 5.0  # 30 s on
    with store.transaction():
        notes.note(clock.now)
    assert _note(store) == {"at": 1030.0, "attempts": [[3, 2]]}
    assert seen_alive.take(store) == {(3, 2): 1030.0}  # what the next start reads, once
    assert seen_alive.take(store) == {}


def test_a_note_rolled_back_is_not_counted_written(tmp_path: Path) -> None:
    store, clock = Store(tmp_path / "herd.db"), _Clock()
    notes = seen_alive.Notes(store, {1: cast(Any, _Live(1, 1))}, clock, every=30.0)
    try:
        with store.transaction():
            notes.note(clock.now)
            raise RuntimeError("the tick's transaction failed")
    except RuntimeError:
        pass
    assert _note(store) is None
    clock.now += 1.0
    with store.transaction():
        notes.note(clock.now)  # due still
    assert _note(store) == {"at": 1001.0, "attempts": [[1, 1]]}


def test_the_timer_notes_while_jobs_run_and_is_gone_once_none_does(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    live: dict[int, Any] = {}

    async def scenario() -> list[float]:
        loop = asyncio.get_running_loop()
        notes = seen_alive.Notes(store, live, loop.time, every=0.2)
        notes.arm()
        assert notes._timer is None  # idle: no timer at all
        live[7] = _Live(7, 1)
        notes.arm()
        seen: list[float] = []
        deadline = loop.time() + 10.0
        while len(seen) < 3 and loop.time() < deadline:  # three notes, each its own write
            await asyncio.sleep(0.01)
            if (note := _note(store)) and (not seen or note["at"] != seen[-1]):
                seen.append(note["at"])
        live.clear()  # the job ended: the next firing sets no timer again
        while notes._timer is not None and loop.time() < deadline:
            await asyncio.sleep(0.01)
        assert notes._timer is None
        notes.stop()
        return seen

    seen = asyncio.run(scenario())
    assert len(seen) == 3
    gaps = [b - a for a, b in itertools.pairwise(seen)]
    assert all(gap >= 0.2 * 0.9 for gap in gaps), gaps  # never more often than the interval

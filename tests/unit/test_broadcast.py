"""Broadcast: a subscriber that falls behind gets GAP in place of its backlog and stays
subscribed; the end (None) arrives even behind a full backlog; one that names a mark gets the
changes made since (or GAP)."""

from __future__ import annotations

import asyncio

import pytest

from gpuherd import broadcast
from gpuherd.broadcast import GAP, Broadcast


def drain(queue: asyncio.Queue[broadcast.Change | None]) -> list[broadcast.Change | None]:
    return [queue.get_nowait() for _ in range(queue.qsize())]


def test_a_reader_behind_its_backlog_gets_a_gap_and_then_what_follows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(broadcast, "BACKLOG", 3)
    changes = Broadcast()
    slow, every = changes.subscribe(), changes.subscribe(backlog=0)
    for n in range(5):
        changes.publish({"id": n})
    assert drain(slow) == [GAP, {"id": 3}, {"id": 4}]  # 0-2, the backlog, were dropped
    changes.publish({"id": 5})
    assert drain(slow) == [{"id": 5}]  # still subscribed
    assert drain(every) == [{"id": n} for n in range(6)]


def test_close_ends_every_reader_even_one_with_a_full_backlog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(broadcast, "BACKLOG", 2)
    changes = Broadcast()
    full = changes.subscribe()
    changes.publish({"id": 1})
    changes.publish({"id": 2})
    changes.close()
    assert drain(full)[-1] is None
    changes.publish({"id": 3})  # after close: nobody is subscribed
    assert drain(full) == []


def test_a_listener_hears_every_change_at_once_even_past_the_backlog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(broadcast, "BACKLOG", 2)
    changes = Broadcast()
    heard: list[broadcast.Change] = []
    changes.listen(heard.append)
    for n in range(5):
        changes.publish({"id": n})
        assert heard[-1] == {"id": n}  # in place, not later
    assert len(heard) == 5


def test_a_subscriber_given_a_mark_gets_the_changes_after_it_first() -> None:
    changes = Broadcast()
    changes.publish({"id": 1})
    mark = changes.mark  # a page drawn now shows job 1's change
    changes.publish({"id": 2})
    changes.publish({"id": 3})
    late = changes.subscribe(since=mark)
    assert drain(late) == [{"id": 2}, {"id": 3}]  # made before it subscribed: not lost
    changes.publish({"id": 4})
    assert drain(late) == [{"id": 4}]
    assert drain(changes.subscribe(since=changes.mark)) == []  # nothing missed: nothing said


def test_a_mark_past_the_history_or_of_another_daemon_gets_a_gap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(broadcast, "HISTORY", 2)
    changes, restarted = Broadcast(), Broadcast()
    old = changes.mark
    for n in range(3):
        changes.publish({"id": n})
        restarted.publish({"id": n})
    assert drain(changes.subscribe(since=old)) == [GAP]  # 3 missed, 2 kept: read it all again
    epoch = changes.mark.split(".")[0]
    # Another daemon's mark, though at the same count; a count not yet reached; none at all.
    for mark in (restarted.mark, f"{epoch}.4", f"{epoch}.x", f"{epoch}.²", "junk", ""):
        assert drain(changes.subscribe(since=mark)) == [GAP], mark


def test_a_numbered_subscriber_gets_each_change_with_its_number_and_its_mark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`/events` sends each change with the mark after it (its SSE id): a reader back with it
    resumes with the next."""
    monkeypatch.setattr(broadcast, "BACKLOG", 3)
    changes = Broadcast()
    changes.publish({"id": 0})
    numbered = changes.subscribe_numbered()
    changes.publish({"id": 1})
    ((number, change),) = drain_numbered(numbered)
    assert (number, change) == (2, {"id": 1}) and changes.mark_of(number) == changes.mark
    resumed = changes.subscribe_numbered(since=changes.mark_of(1))
    assert drain_numbered(resumed) == [(2, {"id": 1})]
    for n in range(2, 7):  # past the backlog of 3: a gap, numbered before those that follow
        changes.publish({"id": n})
    assert drain_numbered(numbered) == [(5, GAP), (6, {"id": 5}), (7, {"id": 6})]
    assert drain_numbered(changes.subscribe_numbered(since="junk")) == [(7, GAP)]
    changes.close()
    assert drain_numbered(numbered) == [None]


def drain_numbered(
    queue: asyncio.Queue[broadcast.Numbered | None],
) -> list[broadcast.Numbered | None]:
    return [queue.get_nowait() for _ in range(queue.qsize())]

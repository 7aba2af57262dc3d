"""`gpuherd run`'s input: commands as jobs, read on a thread of their own (a line that arrives
while jobs run is scheduled at once), in input order or longest first."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from gpuherd.core.ordering import longest_first
from gpuherd.wire import SubmitItem

JobSource = Iterable[SubmitItem]
Numbered = tuple[int, SubmitItem]
"""A job and its place in the input (from 0): its folder and its number in the report."""
Arrival = Numbered | BaseException | None
"""What the reading thread hands over: a job, the error that ended the input, or its end."""


def items_from_commands(
    commands: Iterable[str], gpus: int, cwd: str, env: dict[str, str]
) -> Iterator[SubmitItem]:
    for command in commands:
        yield SubmitItem(command=command, cwd=cwd, env=env, gpus=gpus)


def drain(queue: asyncio.Queue[Any]) -> list[Any]:
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


def by_longest_first(
    numbered: Iterable[Numbered], times: Mapping[str, float]
) -> Iterator[Numbered]:
    """A generator, so that the whole input is read on the feeding thread."""
    yield from longest_first(numbered, lambda entry: times.get(entry[1].command))


def feed_in_thread(
    source: Iterable[Numbered], loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[Arrival]
) -> None:
    """Read the source on a thread, so a line that arrives while jobs run is scheduled at once."""

    def feed() -> None:
        try:
            for item in source:
                loop.call_soon_threadsafe(queue.put_nowait, item)
        except Exception as exc:  # a generator or a file that fails midway
            loop.call_soon_threadsafe(queue.put_nowait, exc)
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=feed, name="gpuherd-run-input", daemon=True).start()

"""`gpuherd run`'s input thread hands each line to the run's event loop. A run stopped by
Ctrl-C while its input is still open closes that loop as the thread reads on: the thread's
next hand-over (the end of the input, when the pipe closes) printed a traceback at exit,
`Exception in thread gpuherd-run-input: ... RuntimeError: Event loop is closed`."""

from __future__ import annotations

import asyncio

from gpuherd.runner_input import HandOver, Held


def test_an_arrival_after_the_run_is_over_is_dropped_quietly() -> None:
    loop = asyncio.new_event_loop()
    put = HandOver(loop, Held())
    queue = put.queue
    put(None)  # while the run is on: handed over
    loop.run_until_complete(asyncio.sleep(0))
    assert queue.get_nowait() is None
    loop.close()
    put(None)  # the run is over: nowhere to go, and no error
    assert queue.empty()

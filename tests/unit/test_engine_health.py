"""engine_health.TickHealth: a failing pass is retried later and later (2, 4, 8 ... 30 s),
once at a time, and from the start again once a pass works; a new error is logged with its
traceback once, and its listeners (`gpuherd run`) are told of it once."""

from __future__ import annotations

import asyncio
import logging

import pytest

from gpuherd.core.idspec import format_ids
from gpuherd.engine_health import RETRY, RETRY_MAX, TickHealth


def test_retries_back_off_and_start_over_once_a_pass_works(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    armed: list[float] = []
    told: list[str] = []
    health = TickHealth(armed.append, lambda: now[0])
    health.listeners.append(told.append)
    with caplog.at_level(logging.ERROR, "gpuherd.engine"):
        for _ in range(8):
            health.failed(ValueError("bad row"))
            health.failed(ValueError("bad row"))  # another wake-up meanwhile: no 2nd retry
            now[0] += armed[-1]
    assert armed == [RETRY, 4.0, 8.0, 16.0, RETRY_MAX, RETRY_MAX, RETRY_MAX, RETRY_MAX]
    assert told == ["ValueError: bad row"]
    assert [r.exc_info is not None for r in caplog.records] == [True]
    assert health.reason() == (
        "not starting: the scheduler fails (ValueError: bad row); see `gpuherd daemon log`"
    )

    health.worked()
    assert health.reason() is None and health.status() is None
    health.failed(ValueError("bad row"))  # the same again: said in a line, told again
    assert armed[-1] == RETRY
    assert told == ["ValueError: bad row"] * 2
    assert [r.exc_info is not None for r in caplog.records if r.levelno == logging.ERROR] == [
        True,
        False,
    ]


def test_a_refused_write_is_not_told_as_a_bug() -> None:
    told: list[str] = []
    health = TickHealth(lambda _: None)
    health.listeners.append(told.append)
    health.failed(OSError("database or disk is full"), logged=True)
    assert told == []
    assert health.status() == health.reason() is not None


def test_a_callback_of_a_bystander_goes_to_the_loops_handler_and_stops_nothing() -> None:
    """`gpuherd run --live`: its display's timer raising must not stop the run (nor kill its
    jobs, which a failure of the scheduler does): the loop's handler says it, as before."""
    told: list[str] = []
    handled: list[BaseException] = []

    async def main() -> TickHealth:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: handled.append(context["exception"]))
        health = TickHealth(lambda _: None)
        health.listeners.append(told.append)
        health.watch(loop)
        health.bystanders = ("core/idspec.py",)  # (format_ids raises in there)
        ran = asyncio.Event()
        loop.call_soon(format_ids, 5)
        loop.call_soon(ran.set)
        await ran.wait()
        assert told == [] and len(handled) == 1 and health.broken is None
        health.bystanders = ()
        ran.clear()
        loop.call_soon(format_ids, 5)
        loop.call_soon(ran.set)
        await ran.wait()
        health.unwatch()
        return health

    health = asyncio.run(main())
    assert told == ["TypeError: 'int' object is not iterable"] and len(handled) == 1
    assert health.broken is not None

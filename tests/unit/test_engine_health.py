"""engine_health.TickHealth: a failing pass is retried later and later (2, 4, 8 ... 30 s),
once at a time, and from the start again once a pass works; a new error is logged with its
traceback once, and its listeners (`gpuherd run`) are told of it once."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest

from gpuherd import engine_health
from gpuherd.core.idspec import format_ids
from gpuherd.devices import DeviceTable
from gpuherd.engine_health import (
    ENGINE_FILES,
    NOT_ENGINE_FILES,
    RETRY,
    RETRY_MAX,
    TickHealth,
)


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


def test_only_the_engines_callbacks_are_the_schedulers_failures() -> None:
    """`gpuherd run --live`: its display's timer raising must not stop the run (nor kill its
    jobs, which a failure of the scheduler does), nor an API callback be said by `daemon
    status` as the scheduler's: the loop's handler says those, as before."""
    told: list[str] = []
    handled: list[BaseException] = []

    async def main() -> TickHealth:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: handled.append(context["exception"]))
        health = TickHealth(lambda _: None)
        health.listeners.append(told.append)
        health.watch(loop)
        for callback, arg in ((format_ids, 5), (DeviceTable.stop, None)):  # (core/, devices.py)
            ran = asyncio.Event()
            loop.call_soon(callback, arg)
            loop.call_soon(ran.set)
            await ran.wait()
            if callback is format_ids:
                assert told == [] and len(handled) == 1 and health.broken is None
        health.unwatch()
        return health

    health = asyncio.run(main())
    assert len(handled) == 1 and len(told) == 1 and told[0].startswith("AttributeError")
    assert health.broken is not None


def test_every_file_that_sets_loop_callbacks_is_classed() -> None:
    """A new module that schedules callbacks on the loop must be put in ENGINE_FILES (its
    errors are the scheduler's) or NOT_ENGINE_FILES; and each entry names a file that is."""
    package = Path(engine_health.__file__).parent
    calls = "call_later|call_soon|call_soon_threadsafe|call_at|add_reader|add_signal_handler"
    setting = re.compile(rf"\.({calls}|add_done_callback)\(")
    found = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if setting.search(path.read_text())
    }
    classes = ENGINE_FILES + NOT_ENGINE_FILES
    assert {f for f in found if not f.startswith(classes)} == set()
    assert [c for c in classes if not any(f.startswith(c) for f in found)] == []

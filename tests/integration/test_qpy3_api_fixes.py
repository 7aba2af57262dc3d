"""The Python API, what a researcher met: `gpuherd.ListedJob` not exported; `sweep.jobs()`
handles shown as `<gpuherd.Job 1>` alone; `connect(fake_gpus=...)` ignored without a word by
the daemon running already; a bad text option (`timeout="2 hours"`) raising a bare
ValueError naming no keyword; `herd.wait(sweep)` refused; `herd.job(999).follow()` refused
only at its first next(). A real daemon (4 fake GPUs)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from conftest import Herd
from gpuherd.errors import HerdError, InvalidValue, NotFound


@pytest.fixture
def api(shared_daemon: Herd) -> gpuherd.Herd:
    return gpuherd.connect(shared_daemon.home, start=False)


def test_listed_job_is_exported_and_import_stays_light() -> None:
    assert gpuherd.ListedJob is gpuherd.pyapi.ListedJob
    assert "ListedJob" in gpuherd.__all__ and "ListedJob" in dir(gpuherd)
    light = "import sys, gpuherd; print('gpuherd.pyapi' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", light], capture_output=True, text=True)
    assert shown.stdout.strip() == "False", shown.stderr


def test_a_sweeps_job_handles_show_their_name_and_state(
    api: gpuherd.Herd, shared_work: Path
) -> None:
    sweep = api.sweep(
        "exit {code}", {"code": [0, 3]}, gpus=0, name="qpy3-shown", cwd=shared_work,
        results_dir=shared_work / "results",
    )  # fmt: skip
    api.wait(sweep.ids, timeout=60)
    jobs = sweep.jobs()
    first, second = sweep.ids
    assert repr(jobs) == (
        f"[<gpuherd.Job {first} 'qpy3-shown/code=0' succeeded>, "
        f"<gpuherd.Job {second} 'qpy3-shown/code=3' failed (exit 3)>]"
    )
    assert [job.snapshot and job.snapshot["exit_code"] for job in jobs] == [0, 3]


def test_wait_takes_a_sweep_held_points_too(api: gpuherd.Herd, shared_work: Path) -> None:
    sweep = api.sweep(
        "true {x}", {"x": [1, 2]}, gpus=0, name="qpy3-wait", hold=True, cwd=shared_work,
        results_dir=shared_work / "results",
    )  # fmt: skip
    first, second = sweep.ids
    with (
        pytest.warns(gpuherd.WaitWarning, match=f"jobs {first}-{second} are held"),
        pytest.raises(TimeoutError, match=r"^after 0.1s, 2 of 2 jobs still unfinished"),
    ):
        api.wait(sweep, timeout=0.1)  # (held points are waited for: they are named)
    for job in sweep.jobs():
        job.release()
    assert api.wait(sweep, timeout=60) == {first: "succeeded", second: "succeeded"}
    with pytest.raises(TypeError, match=r"^wait\(\) takes a list of jobs or ids .*, or a sweep, "):
        api.wait("qpy3-wait")  # type: ignore[arg-type]


def test_following_a_job_that_does_not_exist_is_refused_at_the_call(api: gpuherd.Herd) -> None:
    with pytest.raises(NotFound, match=r"^no job 999999: "):
        api.job(999999).follow()  # (no next(): the call itself)


def _warned(call: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if w.category is UserWarning]


def test_connect_warns_when_the_running_daemon_has_other_gpus(shared_daemon: Herd) -> None:
    home = shared_daemon.home
    assert _warned(lambda: gpuherd.connect(home, fake_gpus=4)) == []
    assert _warned(lambda: gpuherd.connect(home, fake_gpus="4x80GiB")) == []  # (not memory)
    pid = shared_daemon.pid
    (said,) = _warned(lambda: gpuherd.connect(home, fake_gpus=2))
    assert said == (
        f"connect(fake_gpus=2) ignored: the daemon already running for {home} (pid {pid}) "
        "uses GPUs 0,1,2,3 (fake: 4 GPUs) and keeps them; to restart it with fake_gpus=2: "
        "`gpuherd daemon stop` (running jobs go on), then connect() again"
    )
    (said,) = _warned(lambda: gpuherd.connect(home, gpus=(g for g in (0, 1, 2, 3))))
    assert said.startswith("connect(gpus=[0, 1, 2, 3]) ignored: the daemon already running")
    with pytest.warns(UserWarning, match=r"^connect\(gpus='0,1'\) ignored: "):
        herd = gpuherd.connect(home, gpus="0,1")  # still connected: a script run twice works
    assert herd.client.get("/daemon")["pid"] == pid
    with pytest.raises(HerdError, match=r"^fake_gpus: invalid item 'banana': use a count"):
        gpuherd.connect(home, fake_gpus="banana")  # (refused as a start refuses it)


DURATION = "use a number of seconds or a value like 90s, 10m, 2h, 1h30m, 2:00:00"
SIZE = "use bytes or a value like 512MiB, 24GiB, 1.5GiB"
UNIT = (
    "is 10 bytes: give a unit, e.g. {}='10GiB' (a number without one is bytes, taken from 1 MiB up)"
)


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ({"timeout": "2 hours"}, f"timeout: invalid duration '2 hours': {DURATION}"),
        ({"retry_delay": "soon"}, f"retry_delay: invalid duration 'soon': {DURATION}"),
        ({"no_output_timeout": "x"}, f"no_output_timeout: invalid duration 'x': {DURATION}"),
        ({"grace": "0"}, "grace: invalid duration '0': must be greater than zero; " + DURATION),
        ({"mem": "10 gigs"}, f"mem: invalid size '10 gigs': {SIZE}"),
        ({"ram": 10}, "ram=10 " + UNIT.format("ram")),
        ({"mem": "10"}, "mem='10' " + UNIT.format("mem")),
        ({"max_log_size": "big"}, f"max_log_size: invalid size 'big': {SIZE}"),
        ({"max_log_size": 10}, "max_log_size=10 " + UNIT.format("max_log_size")),
        ({"begin": "soonish"}, "invalid begin 'soonish': use now, +DURATION"),
        ({"only_gpus": "x"}, "only_gpus: invalid GPU index 'x': use GPU indices like 0"),
    ],
)
def test_a_bad_option_value_is_the_apis_error_naming_its_keyword(
    api: gpuherd.Herd, shared_work: Path, option: dict[str, Any], said: str
) -> None:
    before = api.submit("true", gpus=0, hold=True, cwd=shared_work)
    calls = [
        lambda: api.submit("true", **option),
        lambda: api.sweep("true {x}", {"x": [1]}, cwd=shared_work, **option),
    ]
    if "no_output_timeout" not in option:  # (the one edit() does not take)
        calls.append(lambda: before.edit(**option))
    for call in calls:
        with pytest.raises(InvalidValue) as refused:
            call()
        assert str(refused.value).startswith(said), str(refused.value)
        assert isinstance(refused.value, ValueError)  # (what it raised before: still caught)
    after = api.submit("true", gpus=0, hold=True, cwd=shared_work)
    assert after.id == before.id + 1  # nothing was queued
    for job in (before, after):
        job.remove()


def test_a_kills_bad_grace_text_is_the_apis_error(api: gpuherd.Herd, shared_work: Path) -> None:
    held = api.submit("true", gpus=0, hold=True, cwd=shared_work)
    with pytest.raises(InvalidValue, match=rf"^grace: invalid duration 'soon': {DURATION}"):
        held.kill(grace="soon")
    assert held.state() == "held"
    held.remove()


def _train(x: int) -> int:
    return x


def test_a_tasks_bad_option_is_refused_at_the_decorator() -> None:
    """As a misspelt option is: at the module's import, not at its first submit."""
    with pytest.raises(InvalidValue, match=rf"^timeout: invalid duration '2 hours': {DURATION}"):
        gpuherd.task(gpus=0, timeout="2 hours")(_train)
    with pytest.raises(TypeError, match=r"^mem is a size: bytes \(an int\) or text"):
        gpuherd.task(mem=[1])(_train)
    # (gpus=1: mem with gpus=0 is refused at the decorator too, as every submit refused it)
    assert gpuherd.task(gpus=1, timeout="2h", mem="1GiB")(_train).options["timeout"] == "2h"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"samples": "5"}, "samples is a whole number (an int), got '5' (str)"),
        ({"seed": 1.5}, "seed is a whole number (an int), got 1.5 (float)"),
        ({"shuffle": "no"}, "shuffle is True or False, got 'no' (str)"),
        ({"force": "yes"}, "force is True or False, got 'yes' (str)"),
        ({"dry_run": 1}, "dry_run is True or False, got 1 (int)"),
        ({"results_dir": 5}, "results_dir is a folder (text or a Path), got 5 (int)"),
        ({"fixed": [1]}, "fixed is a dict of names to values ({'epochs': 10}), got [1] (list)"),
    ],
)
def test_a_sweeps_own_argument_of_the_wrong_kind_is_refused_in_one_line(
    api: gpuherd.Herd, shared_work: Path, given: dict[str, Any], said: str
) -> None:
    """`samples="5"` raised Python's "'<' not supported between instances of 'str' and
    'int'", `shuffle="no"` shuffled, `force="yes"` was refused in pydantic's words,
    `results_dir=5` made a folder named 5, `fixed=[1]` raised "cannot convert dictionary
    update sequence element #0 to a sequence"."""
    with pytest.raises(TypeError) as refused:
        api.sweep("true {x}", {"x": [1, 2]}, name="qpy3-kinds", cwd=shared_work, **given)
    assert str(refused.value) == said and isinstance(refused.value, HerdError)
    assert "qpy3-kinds" not in [sweep["name"] for sweep in api.sweeps()]


def test_a_sweeps_bad_limit_is_refused_in_the_apis_words(
    api: gpuherd.Herd, shared_work: Path
) -> None:
    """As `herd.jobs(limit=0)` is: it said `invalid request: query.limit: Input should be
    greater than or equal to 1`, pydantic's words."""
    sweep = api.sweep(
        "true {x}", {"x": [1, 2]}, gpus=0, name="qpy3-limit", hold=True, cwd=shared_work,
        results_dir=shared_work / "results",
    )  # fmt: skip
    for limit in (0, "2"):
        with pytest.raises(
            InvalidValue, match=rf"^limit is a whole number from 1 up, got {limit!r}$"
        ):
            sweep.results(limit=limit)  # type: ignore[arg-type]
    assert [row["params"] for row in sweep.results(limit=1)] == [{"x": 1}]

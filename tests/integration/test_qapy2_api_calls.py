"""What a researcher's calls of the Python API met: `job.follow(stream="stdrr")` refused only
at the first next() (and a queued job's `logs(stream="stdrr")` answered ""), `herd.wait()` and
`as_completed()` saying their timeouts two ways, and the decorator parsing a script twice per
task (a script of 50 tasks took ~0.8 s more to start). Real daemon, fake GPUs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from conftest import Herd
from gpuherd.errors import InvalidValue, NotFound
from gpuherd.pyapi_types import WrongType


@pytest.fixture
def api(shared_daemon: Herd) -> gpuherd.Herd:
    return gpuherd.connect(shared_daemon.home, start=False)


def test_a_bad_stream_is_refused_at_the_call(api: gpuherd.Herd, shared_work: Path) -> None:
    held = api.submit("echo hi", gpus=0, hold=True, cwd=shared_work)
    said = "^unknown stream 'stdrr': use stdout or stderr$"
    with pytest.raises(InvalidValue, match=said):
        held.follow(stream="stdrr")  # (no next(): the call itself)
    with pytest.raises(InvalidValue, match=said):
        held.logs(stream="stdrr")  # (it answered "", as for a job not started yet)
    with pytest.raises(InvalidValue, match=r"^unknown stream 2: use stdout or stderr$"):
        held.logs(stream=2)  # type: ignore[arg-type]
    assert held.logs(stream="stderr") == ""
    held.remove()


def test_every_wait_says_its_timeout_in_one_wording(api: gpuherd.Herd, shared_work: Path) -> None:
    held = [api.submit("true", gpus=0, hold=True, cwd=shared_work) for _ in range(2)]
    ids = f"{held[0].id}, {held[1].id}"
    said = rf"^after 0.2s, 2 of 2 jobs still unfinished \(jobs {ids}\)$"
    held_said = pytest.warns(gpuherd.WaitWarning, match="held: waiting until")  # (each)
    with held_said, pytest.raises(TimeoutError, match=said):
        api.wait(held, timeout=0.2)
    with held_said, pytest.raises(TimeoutError, match=said):
        list(api.as_completed(held, timeout=0.2))
    with held_said, pytest.raises(TimeoutError, match=said):
        list(gpuherd.as_completed(held, timeout=0.2))
    one = rf"^after 0s, 1 of 1 job still unfinished \(job {held[0].id}\)$"
    with held_said, pytest.raises(TimeoutError, match=one):
        held[0].wait(timeout=0)
    for job in held:
        job.remove()


def test_a_scripts_tasks_parse_it_once(tmp_path: Path) -> None:
    tasks = "".join(
        f"\n\n@gpuherd.task(gpus=0)\ndef task_{i}(lr):\n    return lr * SCALE\n" for i in range(30)
    )
    uses_data = "\n\n@gpuherd.task(gpus=0)\ndef uses_data(lr):\n    return lr * len(DATA)\n"
    main = "\n\nif __name__ == '__main__':\n    DATA = [1, 2]\n"
    script = tmp_path / "many_tasks.py"
    script.write_text(f"import gpuherd\n\nSCALE = 2\n{tasks}{uses_data}{main}")
    counting = textwrap.dedent(f"""
        import ast, runpy, symtable, warnings
        calls = {{"ast": 0, "symtable": 0}}
        parse, table = ast.parse, symtable.symtable
        def counted_parse(*args, **kwargs):
            calls["ast"] += 1
            return parse(*args, **kwargs)
        def counted_table(*args, **kwargs):
            calls["symtable"] += 1
            return table(*args, **kwargs)
        ast.parse, symtable.symtable = counted_parse, counted_table
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            runpy.run_path({str(script)!r}, run_name="__main__")
        print(calls["ast"], calls["symtable"], len(warned))
    """)
    done = subprocess.run(
        [sys.executable, "-c", counting], capture_output=True, text=True, timeout=120, check=True
    )
    # Once for the 31 tasks (it was twice each: 62, and 31 symbol tables); what it says is as
    # it was: the one task that reads DATA, set only under the block, is warned of.
    assert done.stdout.split() == ["1", "1", "1"], done.stderr


def test_a_dry_runs_handle_says_it_submitted_nothing(api: gpuherd.Herd, shared_work: Path) -> None:
    dry = api.sweep("echo {x}", {"x": [1, 2]}, name="qapy2-dry", gpus=0, dry_run=True)
    assert dry.commands == ["echo 1", "echo 2"]
    said = (
        "^sweep 'qapy2-dry' was a dry run \\(dry_run=True\\): nothing was submitted, so it has "
        "no points to wait for or results; submit it without dry_run$"
    )
    for call in (dry.wait, dry.results, dry.jobs, lambda: list(api.as_completed(dry))):
        with pytest.raises(NotFound, match=said):  # (it was "no sweep named 'qapy2-dry'")
            call()


FOLLOWED_THEN_INTERRUPTED = """
import os, signal, sys, threading
import gpuherd

signal.signal(signal.SIGINT, signal.default_int_handler)  # (not ignored, whoever started us)
herd = gpuherd.connect(start=False)
job = herd.submit("echo started; sleep 60", gpus=0, name="qapy2-followed")
print(job.id, flush=True)
main = threading.main_thread().ident


def interrupt_once_following():
    for _ in range(3000):  # Ctrl-C once the main thread reads the followed log, not before
        frame = sys._current_frames().get(main)
        while frame is not None and frame.f_code.co_name != "follow_log":
            frame = frame.f_back
        if frame is not None:
            os.kill(os.getpid(), signal.SIGINT)
            return
        threading.Event().wait(0.01)


followed = job.follow()
print(next(followed), end="", flush=True)
threading.Thread(target=interrupt_once_following, daemon=True).start()
for text in followed:
    print(text, end="")
"""


def test_ctrl_c_in_a_follow_says_the_job_goes_on(shared_daemon: Herd, tmp_path: Path) -> None:
    script = tmp_path / "followed.py"
    script.write_text(FOLLOWED_THEN_INTERRUPTED)
    env = {**os.environ, "GPUHERD_HOME": str(shared_daemon.home)}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120
    )
    job_id = int(done.stdout.split()[0])
    assert done.stdout.split()[1:] == ["started"], done.stdout
    assert done.returncode == -signal.SIGINT, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"KeyboardInterrupt: stopped waiting for job {job_id}: Ctrl-C stops the wait, not the "
        f"job, which goes on running (job.kill() or `gpuherd kill {job_id}` stops it)"
    )
    assert "socket.py" not in done.stderr  # (its traceback went down to the socket's read)
    assert shared_daemon.job(job_id)["state"] == "running"
    shared_daemon.cli("kill", str(job_id))


def test_begin_takes_a_timedelta_from_now(api: gpuherd.Herd, shared_work: Path) -> None:
    asked = time.time()
    job = api.submit("true", gpus=0, begin=timedelta(hours=1), cwd=shared_work)
    info = job.info()  # (it raised "Object of type timedelta is not JSON serializable")
    assert info["state"] == "held"
    assert 3600 <= info["begin"] - asked < 3600 + 60
    assert job.edit(begin=timedelta(0)).endswith("already past: released)")
    assert job.wait(timeout=60) == "succeeded"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"home": 5}, "home is a folder (a str or a Path), got 5 (int)"),
        (
            {"gpus": 2},
            'gpus is which GPUs the daemon uses, their indices ([0, 2], or "0,2"), not how many: '
            "got 2 (int); fake_gpus=2 starts it with 2 fake GPUs",
        ),
    ],
)
def test_connect_refuses_a_home_or_gpus_of_the_wrong_kind(
    tmp_path: Path, given: dict[str, Any], said: str
) -> None:
    home = tmp_path / "home"
    with pytest.raises(WrongType) as refused:  # (Python's "'int' object is not iterable")
        gpuherd.connect(**{"home": home, **given})
    assert str(refused.value) == said
    assert not home.exists()  # no daemon was started

"""Tasks defined interactively (`python -c`, IPython as Jupyter runs it): pickled by value at
submit (tasks_pickled.py), loaded in the job (worker_pickled.py), against a real daemon.

Each test runs a real interpreter whose `__main__` has no file, as a notebook's: the code
defines the task and submits it, and prints what the test checks as JSON on its last line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpuherd
from conftest import Herd, started_once

SOURCE_TREE = str(Path(gpuherd.__file__).resolve().parents[1])
"""The gpuherd under test, for the interpreters these tests start (and the daemon's jobs)."""
PRELUDE = """
import json, os, sys
import gpuherd
from pathlib import Path
herd = gpuherd.connect(start=False)
staged = lambda: sorted(p.name for p in (herd.client.home / "task-params").glob("*.pkl"))
"""


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as started:
        yield started


def run(herd: Herd, folder: Path, code: str, *, ipython: bool = False) -> Any:
    """Run PRELUDE + `code` in `python -c` (or `ipython -c`) in `folder`: its last line of
    output as JSON. PYTHONPATH names only the tree under test."""
    text = PRELUDE + textwrap.dedent(code)
    shell = (
        [sys.executable, "-m", "IPython", "--quick", "--no-banner"] if ipython else [sys.executable]
    )
    done = subprocess.run(
        [*shell, "-c", text],
        cwd=folder,
        env={**herd.env, "PYTHONPATH": SOURCE_TREE},
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_function_of_python_c_runs_with_the_globals_it_had_at_submit(
    herd: Herd, tmp_path: Path
) -> None:
    answer = run(
        herd,
        tmp_path,
        """
        SCALE = 10

        def helper(x):
            return x * SCALE

        @gpuherd.task(gpus=1)
        def train(lr, run_dir):
            return {"value": helper(lr), "gpus": os.environ["CUDA_VISIBLE_DEVICES"], "dir": run_dir}

        job = train.submit(lr=3)
        SCALE = 1000  # after the submit: the job has the value it had then
        result = job.result(timeout=60)
        info = job.info()
        print(json.dumps({"result": result, "command": info["command"], "left": staged(),
                          "main_file": hasattr(sys.modules["__main__"], "__file__")}))
        """,
    )
    assert answer["main_file"] is False  # defined interactively, as in a notebook
    result = answer["result"]
    assert result["value"] == 30
    assert result["gpus"] in ("0", "1")
    assert " -m gpuherd.worker --function-file " in answer["command"]
    # The job's first run moved its pickle into its folder (for its retries), leaving none.
    assert (Path(result["dir"]) / "task-function.pkl").is_file()
    assert answer["left"] == []


def test_a_sweep_of_an_interactive_task_pickles_it_once_for_all_points(
    herd: Herd, tmp_path: Path
) -> None:
    answer = run(
        herd,
        tmp_path,
        f"""
        OFFSET = 0.5

        @gpuherd.task(gpus=0)
        def score(x):
            return {{"score": x + OFFSET}}

        before = staged()
        sweep = score.sweep(x=[1, 2, 3], results_dir={str(tmp_path / "results")!r})
        sweep.wait(timeout=60)
        rows = sweep.results()
        again = score.sweep(x=[1, 2, 3], results_dir={str(tmp_path / "results")!r})
        commands = [herd.job(i).info()["command"] for i in sweep.ids]
        print(json.dumps({{"before": before, "after": staged(), "commands": commands,
                          "states": [r["state"] for r in rows],
                          "scores": sorted(r["metrics"]["score"] for r in rows),
                          "again": again.submission}}))
        """,
    )
    assert answer["states"] == ["succeeded"] * 3
    assert answer["scores"] == [1.5, 2.5, 3.5]
    made = sorted(set(answer["after"]) - set(answer["before"]))
    assert len(made) == 1 and made[0].startswith("task-")  # one file, not one a point
    assert all(
        f"--shared-function-file {herd.home}/task-params/{made[0]} " in c
        for c in answer["commands"]
    )
    # The same function again names the same file: its done points did not run "another command".
    assert (answer["again"]["skipped_done"], answer["again"]["warnings"]) == (3, [])


def test_a_retry_finds_the_pickle_in_the_jobs_folder(herd: Herd, tmp_path: Path) -> None:
    answer = run(
        herd,
        tmp_path,
        f"""
        MARKER = {str(tmp_path / "tried")!r}

        @gpuherd.task(gpus=0, retries=1)
        def flaky(x):
            if not os.path.exists(MARKER):
                Path(MARKER).touch()
                raise RuntimeError("first attempt fails")
            return x * 2

        job = flaky.submit(x=21)
        print(json.dumps({{"result": job.result(timeout=60), "attempts": job.info()["attempt"]}}))
        """,
    )
    assert answer == {"result": 42, "attempts": 2}


def test_an_unpicklable_global_is_refused_at_submit_in_one_line(herd: Herd, tmp_path: Path) -> None:
    answer = run(
        herd,
        tmp_path,
        """
        import threading
        lock = threading.Lock()

        @gpuherd.task(gpus=0)
        def guarded(x):
            with lock:
                return x

        before, files = herd.submit("true", gpus=0).id, staged()
        try:
            guarded.submit(x=1)
        except gpuherd.HerdError as exc:
            refusal = str(exc)
        after = herd.submit("true", gpus=0).id
        print(json.dumps({"refusal": refusal, "queued": after - before - 1,
                          "files": staged() == files}))
        """,
    )
    assert answer["refusal"] == (
        "guarded was defined interactively, so it is pickled to run as a task, but it uses "
        "the global 'lock' (a _thread.lock), which cannot be pickled (cannot pickle "
        "'_thread.lock' object): create that inside the function that uses it, or put guarded "
        "in a .py file (imported by each job, not pickled)"
    )
    assert (answer["queued"], answer["files"]) == (0, True)  # nothing queued, nothing left


def test_a_pickle_of_another_python_fails_the_job_in_one_line(herd: Herd, tmp_path: Path) -> None:
    answer = run(
        herd,
        tmp_path,
        """
        @gpuherd.task(gpus=0, hold=True)
        def plain(x):
            return x

        job = plain.submit(x=1)
        path = Path(job.info()["command"].split("--function-file ")[1].split()[0])
        path.write_bytes(path.read_bytes().replace(b" python=3.", b" python=2.", 1))
        job.release()
        held = plain.submit(x=2)
        held_file = held.info()["command"].split("--function-file ")[1].split()[0]
        held.remove()
        print(json.dumps({"state": job.wait(timeout=60), "stderr": job.logs("stderr"),
                          "removed_with_its_job": not os.path.exists(held_file)}))
        """,
    )
    assert answer["state"] == "failed"
    (line,) = answer["stderr"].splitlines()
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert line == (
        f"gpuherd worker: plain was pickled by Python 2.{sys.version_info[1]} at submit, and "
        f"this job runs Python {version} ({sys.executable}): submit it again from Python "
        f"{version}, or put it in a .py file (imported by each job, not pickled)"
    )
    assert answer["removed_with_its_job"] is True  # `rm` of a job that never ran


def test_a_function_defined_in_ipython_runs_as_a_task(herd: Herd, tmp_path: Path) -> None:
    probe = subprocess.run([sys.executable, "-c", "import IPython"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("IPython is not installed")
    answer = run(
        herd,
        tmp_path,
        """
        BASE = 100

        def helper(x):
            return BASE + x

        @gpuherd.task(gpus=0)
        def cell(x):
            return helper(x)

        shell = type(get_ipython()).__name__
        result = cell.submit(x=5).result(timeout=60)
        print(json.dumps({"result": result, "shell": shell, "module": cell.fn.__module__}))
        """,
        ipython=True,
    )
    assert answer == {"result": 105, "shell": "TerminalInteractiveShell", "module": "__main__"}

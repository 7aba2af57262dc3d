"""The Python API as a notebook shows it, against a real daemon: a job's repr and HTML row (id,
name, state, not `<gpuherd.Job 7>` alone), a listing's and a sweep's tables, `job.done()` and
equality as a future's; and in a real IPython shell, a gpuherd error shown down to the cell's
line without gpuherd's frames, and a Ctrl-C in `job.result()` that says the job goes on."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, wait_for

SOURCE_TREE = str(Path(gpuherd.__file__).resolve().parents[1])


def connected(daemon: Herd) -> gpuherd.Herd:
    return gpuherd.connect(daemon.home, start=False)


def test_a_job_shows_its_id_name_and_how_it_ended(shared_daemon: Herd) -> None:
    herd = connected(shared_daemon)
    job = herd.submit("exit 3", gpus=0, name="nbt-three")
    assert job.wait(timeout=30) == "failed"
    assert repr(job) == f"<gpuherd.Job {job.id} 'nbt-three' failed (exit 3)>"  # was <gpuherd.Job N>
    html = job._repr_html_()
    assert "<th>state</th>" in html and "<td>failed (exit 3)</td>" in html
    assert repr(herd.job(10**7)) == f"<gpuherd.Job {10**7} (no such job)>"  # a repr never raises


def test_done_and_equality_as_a_future_has_them(shared_daemon: Herd) -> None:
    herd = connected(shared_daemon)
    job = herd.submit("sleep 60", gpus=0, name="nbt-long")
    wait_for(lambda: job.state() == "running", 15, "the job to start")
    assert not job.done()
    assert repr(job) == f"<gpuherd.Job {job.id} 'nbt-long' running>"
    job.kill()
    assert job.wait(timeout=30) == "killed" and job.done()
    again = herd.job(str(job.id))
    assert again == job and hash(again) == hash(job) and again in herd.jobs(name="nbt-long")
    assert again != herd.submit("true", gpus=0)


def test_a_listing_shows_its_jobs_as_listed_and_as_a_table(shared_daemon: Herd) -> None:
    herd = connected(shared_daemon)
    jobs = [herd.submit(f"exit {code}", gpus=0, name=f"nbt-list-{code}") for code in (0, 4)]
    herd.wait(jobs, timeout=30)
    listed = herd.jobs(name="nbt-list-*", all=True)
    first, second = (
        f"<gpuherd.Job {job.id} 'nbt-list-{code}'" for job, code in zip(jobs, (0, 4), strict=True)
    )
    assert repr(listed) == f"[{first} succeeded>, {second} failed (exit 4)>]"
    html = listed._repr_html_()
    assert html.count("<tr><td>") == 2 and "<td>nbt-list-4</td>" in html
    assert "(and 1 more: limit= shows them)" in repr(
        herd.jobs(name="nbt-list-*", all=True, limit=1)
    )


def test_a_sweep_shows_its_points_as_a_table(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = connected(shared_daemon)
    results = tmp_path / "points"
    sweep = herd.sweep(
        "exit {code}", {"code": [0, 5]}, name="nbt-table", gpus=0, results_dir=results
    )
    assert sweep.wait(timeout=30) is False
    html = sweep._repr_html_()
    assert html.startswith("<p>sweep nbt-table: 1 failed, 1 succeeded; submitted: 2 new, ")
    assert f"(results in {results})</p>" in html
    assert "<th>code</th><th>state</th><th>job</th><th>seconds</th>" in html
    assert f"<td>5</td><td>failed</td><td>{max(sweep.ids)}</td>" in html
    assert herd.get_sweep("nbt-table")._repr_html_().startswith("<p>sweep nbt-table: 1 failed")


CELLS = """
import os, signal, sys, threading
from IPython.core.interactiveshell import InteractiveShell
import gpuherd

shell = InteractiveShell.instance(colors="NoColor")
herd = gpuherd.connect(start=False)
main = threading.main_thread().ident


def interrupt_once_waiting():
    # Ctrl-C once the main thread is in the client's wait for the job, not before
    def waiting():
        frame = sys._current_frames().get(main)
        while frame is not None and frame.f_code.co_name != "wait_for":
            frame = frame.f_back
        return frame is not None
    for _ in range(3000):
        if waiting():
            os.kill(os.getpid(), signal.SIGINT)
            return
        threading.Event().wait(0.01)


shell.push({"herd": herd, "interrupt_once_waiting": interrupt_once_waiting})
for cell in CELLS:
    print("---- cell", flush=True)
    shell.run_cell(cell)
"""


def run_cells(daemon: Herd, folder: Path, *cells: str) -> str:
    """Run `cells` one by one in a real IPython shell (as a notebook's kernel runs them): what
    it printed, tracebacks included."""
    script = f"CELLS = {[textwrap.dedent(cell) for cell in cells]!r}\n" + CELLS
    done = run_python(daemon, folder, script)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def run_python(daemon: Herd, folder: Path, script: str) -> subprocess.CompletedProcess[str]:
    """`python -c SCRIPT` in `folder`, with the daemon's home and the tree under test."""
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=folder,
        env={**daemon.env, "PYTHONPATH": SOURCE_TREE},
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_an_error_shows_the_cells_line_not_gpuherds_frames(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    shown = run_cells(shared_daemon, tmp_path, "herd.job(9999999).state()")
    assert "----> 1 herd.job(9999999).state()" in shown
    assert "NotFound: no job 9999999: `gpuherd ls --all` lists the jobs there are" in shown
    assert "client.py" not in shown and "pyapi.py" not in shown  # 4 frames were shown
    verbose = run_cells(shared_daemon, tmp_path, "%xmode Verbose", "herd.job(9999999).state()")
    assert "client.py" in verbose  # every frame, for a bug report


def test_ctrl_c_in_result_says_the_job_goes_on(shared_daemon: Herd, tmp_path: Path) -> None:
    shown = run_cells(
        shared_daemon,
        tmp_path,
        """
        import threading
        job = herd.submit("sleep 60", gpus=0, name="nbt-interrupted")
        threading.Thread(target=interrupt_once_waiting).start()
        job.result()
        """,
        "import sys; caught = sys.last_value",
        "print('caught', type(caught).__name__, caught.ids, job.id)",
        "print('a KeyboardInterrupt:', isinstance(caught, KeyboardInterrupt), job.state())",
    )
    job_id = int(shown.split("caught KeyboardInterrupt [")[1].split("]")[0])
    assert f"caught KeyboardInterrupt [{job_id}] {job_id}" in shown
    assert (
        f"KeyboardInterrupt: stopped waiting for job {job_id}: Ctrl-C stops the wait, not the job, "
        f"which goes on running (job.kill() or `gpuherd kill {job_id}` stops it)"
    ) in shown
    assert "a KeyboardInterrupt: True running" in shown
    assert "client_wait.py" not in shown and "client.py" not in shown  # 12 frames were shown
    assert shared_daemon.job(job_id)["state"] == "running"  # the kernel's Ctrl-C left it be


@pytest.mark.parametrize("waits", ["herd.wait([job])", "job.wait()"])
def test_ctrl_c_in_any_wait_is_the_same(shared_daemon: Herd, tmp_path: Path, waits: str) -> None:
    shown = run_cells(
        shared_daemon,
        tmp_path,
        f"""
        import threading
        job = herd.submit("sleep 60", gpus=0)
        threading.Thread(target=interrupt_once_waiting).start()
        {waits}
        """,
    )
    assert "Ctrl-C stops the wait, not the job, which goes on running" in shown


SCRIPT_INTERRUPTED = """
import os, signal, sys, threading
import gpuherd

herd = gpuherd.connect(start=False)
job = herd.submit("sleep 60", gpus=0, name="nbt-script-interrupted")
print(job.id, flush=True)
main = threading.main_thread().ident


def interrupt_once_waiting():
    for _ in range(3000):  # Ctrl-C once the main thread is in the client's wait, not before
        frame = sys._current_frames().get(main)
        while frame is not None and frame.f_code.co_name != "wait_for":
            frame = frame.f_back
        if frame is not None:
            os.kill(os.getpid(), signal.SIGINT)
            return
        threading.Event().wait(0.01)


threading.Thread(target=interrupt_once_waiting, daemon=True).start()
job.result()
"""


def test_a_script_stopped_by_ctrl_c_in_a_wait_exits_as_interrupted(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    """Python exits with the SIGINT status (130 in a shell) only for a KeyboardInterrupt
    itself: a subclass made the script exit 1, and a shell's loop over such scripts went on."""
    done = run_python(shared_daemon, tmp_path, SCRIPT_INTERRUPTED)
    job_id = int(done.stdout.split()[0])
    assert done.returncode == -signal.SIGINT, done.stderr
    assert "KeyboardInterrupt: stopped waiting for job" in done.stderr
    assert shared_daemon.job(job_id)["state"] == "running"  # the wait stopped, not the job

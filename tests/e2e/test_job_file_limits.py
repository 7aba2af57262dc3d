"""A job file's `\\`-continued job longer than a command may be, as `gpuherd run FILE` and
`gpuherd submit --file FILE` read it: one error line naming the file's lines, and no job.

`run` started the file's other jobs and said only "not run: ..." of that one; `submit` said
"job 2 of the submission: ...", naming no line of the file.
"""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, Runs
from gpuherd.core.commands import MAX_COMMAND_BYTES

HALF = "x" * (MAX_COMMAND_BYTES // 2)
JOBS = f"echo first\n# a job of two lines, longer than 128 KiB joined\necho {HALF} \\\n{HALF}\n"
REFUSED = (
    "gpuherd: error: jobs.txt: lines 3 to 4 (continued with '\\') are longer than 128 KiB, "
    "more than a command can be: put it in a script file and run that\n"
)


def test_run_refuses_the_file_before_any_job_starts(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text(JOBS + "echo last\n")
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), "jobs.txt")
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, REFUSED, "")
    assert not out.exists() or list(out.iterdir()) == []


def test_run_reading_a_stream_stops_at_the_job(runs: Runs) -> None:
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), input=JOBS + "echo last\n")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        "input stopped: "
        + REFUSED.removeprefix("gpuherd: error: ").replace("jobs.txt", "standard input")
        in proc.stdout
    )
    # Read as it arrives: `echo first` may have started before the refusal; `echo last` not.
    assert {p.name for p in out.iterdir() if p.is_dir()} <= {"job_0"}


def test_submit_refuses_the_file_and_queues_nothing(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "1")
    jobs = tmp_path / "jobs.txt"
    jobs.write_text(JOBS)
    proc = herd.cli("submit", "--file", "jobs.txt", check=False, cwd=tmp_path)
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, REFUSED, "")
    assert herd.client.get("/jobs", all=True)["jobs"] == []

"""A job file whose last line ends in `\\`, as `gpuherd run FILE`, `gpuherd run < FILE` and
`gpuherd submit --file FILE` read it: the file was most likely cut short (a generator that
died, a copy cut off), so the job is refused, named by file and line, not run in part.

`run` ran `echo b` of `echo b \\` without a word, and `submit --file` queued it.
"""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, Runs

JOBS = "echo a\necho b \\\n"
REFUSED = (
    "gpuherd: error: jobs.txt: line 2 ends in '\\' but nothing follows to continue it: "
    "the file may have been cut short; complete the job, or remove the '\\'\n"
)


def test_run_refuses_the_file_before_any_job_starts(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text(JOBS)
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "jobs.txt")
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, REFUSED, "")
    assert not out.exists() or list(out.iterdir()) == []


def test_run_names_every_line_of_a_continued_job_cut_short(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text("echo a\npython3 train.py \\\n    --lr 0.1 \\")
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(runs.root / "out"), "jobs.txt")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        "gpuherd: error: jobs.txt: line 3 ends in '\\' but nothing follows to continue the job "
        "of lines 2 to 3: the file may have been cut short; complete the job, or remove the '\\'\n"
    )


def test_run_reading_a_stream_stops_at_the_job_cut_short(runs: Runs) -> None:
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), input=JOBS)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (
        "input stopped: standard input: line 2 ends in '\\' but nothing follows to continue it:"
        " the input may have been cut short; complete the job, or remove the '\\'\n"
    ) in proc.stdout
    # The lines before it are jobs as they arrive: `echo a` ran; `echo b` did not.
    assert (out / "job_0" / "stdout.log").read_text() == "a\n"
    assert not (out / "job_1").exists()


def test_a_blank_line_after_the_backslash_still_ends_the_job(runs: Runs) -> None:
    # As in sh: the file goes on past the `\`, so it was not cut there.
    (runs.cwd / "jobs.txt").write_text("echo a\necho b \\\n\n")
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--output-dir", str(out), "jobs.txt")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "job_1" / "stdout.log").read_text() == "b\n"


def test_submit_refuses_the_file_and_queues_nothing(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "1")
    (tmp_path / "jobs.txt").write_text(JOBS)
    proc = herd.cli("submit", "--file", "jobs.txt", check=False, cwd=tmp_path)
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, REFUSED, "")
    assert herd.client.get("/jobs", all=True)["jobs"] == []

"""A job can write to its own `process` file ($GPUHERD_ATTEMPT_DIR/process): a number there
larger than any pid or exit status a shell has (`exit 99999999999999999999`) went into
herd.db, which cannot store it (OverflowError), and every later daemon start failed with
`the daemon failed: OverflowError ... (a bug: please report it)`. Such a line is not the
shell's: it is skipped, and the shell's own lines are read."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, wait_for
from gpuherd.executors.local_records import read_process_file

HUGE = "99999999999999999999"


def test_numbers_no_shell_writes_in_the_process_file_are_skipped(
    herd: Herd, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    herd.start("--fake-gpus", "1")
    job = herd.submit(
        "--",
        f"printf 'exit {HUGE}\\npid {HUGE}\\n' >> \"$GPUHERD_ATTEMPT_DIR/process\"; "
        f"while [ ! -e {gate} ]; do sleep 0.05; done; false",
    )
    pid = herd.wait_state(job, "running")["pid"]
    folder = herd.home / "jobs" / str(job) / "attempt-1"
    process = folder / "process"
    wait_for(lambda: HUGE in process.read_text(), what="the job's own lines")
    assert read_process_file(str(folder)) == (pid, None)  # the shell's pid; no end yet
    herd.kill9()
    gate.touch()  # the job ends while no daemon runs: its shell writes its status
    wait_for(lambda: process.read_text().endswith("exit 1\n"), what="the shell's exit line")
    herd.start("--fake-gpus", "1")  # was: OverflowError, at this start and every later one
    ended = herd.wait_state(job, "failed")
    assert (ended["exit_code"], ended["pid"]) == (1, pid), ended
    herd.wait_state(herd.submit("--", "true"), "succeeded")  # the daemon goes on


def test_the_shells_lines_are_read_past_what_a_job_wrote_between_them(
    herd: Herd, tmp_path: Path
) -> None:
    # Before: only the file's first 4 KiB were read. A job that wrote more there pushed its
    # shell's exit line out of sight: its end, come while no daemon ran, was never found.
    gate = tmp_path / "gate"
    herd.start("--fake-gpus", "1")
    junk = "pid 4242 exit 3 " * 6  # (no line of it is one the shell writes)
    job = herd.submit(
        "--",
        f"for i in $(seq 200); do echo '{junk}'; done >> \"$GPUHERD_ATTEMPT_DIR/process\"; "
        "echo 'pid 4242' >> \"$GPUHERD_ATTEMPT_DIR/process\"; "
        f"while [ ! -e {gate} ]; do sleep 0.05; done; exit 4",
    )
    pid = herd.wait_state(job, "running")["pid"]
    folder = herd.home / "jobs" / str(job) / "attempt-1"
    process = folder / "process"
    wait_for(lambda: process.read_text().endswith("pid 4242\n"), what="the job's own lines")
    assert process.stat().st_size > 16_000
    assert read_process_file(str(folder)) == (pid, None)  # the shell's pid, the first line
    herd.kill9()
    gate.touch()
    wait_for(lambda: process.read_text().endswith("exit 4\n"), what="the shell's exit line")
    herd.start("--fake-gpus", "1")
    ended = herd.wait_state(job, "failed", "lost")
    assert (ended["state"], ended["exit_code"], ended["pid"]) == ("failed", 4, pid), ended

"""`gpuherd run`'s output neither holds up nor ends the run (runner_stdout.py): a reader that
does not read (a full pipe) held its event loop, so no job started and no --timeout fired
until it read; a disk that took no more (`> /dev/full`, a full disk under `> run.log`) ended
the run with `No space left on device (writing the output)`, its jobs left running with no
end recorded, the rest of the input never run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import GPUHERD_BIN, Runs, wait_for

PAD = "x" * 3000
"""A command's comment long enough that its `[n] started` lines fill a pipe (64 KiB) soon."""


def ended(folder: Path) -> str | None:
    """The outcome job.json records in a job's folder, once it ended."""
    try:
        return str(json.loads((folder / "job.json").read_text()).get("outcome") or "") or None
    except (OSError, ValueError):
        return None


def test_a_reader_that_does_not_read_holds_up_no_job(runs: Runs) -> None:
    lines = "".join(f"true # {n} {PAD}\n" for n in range(60)) + "sleep 30\n"
    run = runs.start("--fake-gpus", "2", "--timeout", "2s", "--output-dir", "out", "-")
    run.write(lines)
    run.close_stdin()
    last = runs.cwd / "out" / "job_60"
    # Nothing read from its stdout yet: the last job still starts, and its --timeout fires.
    assert wait_for(lambda: ended(last), 25, "the last job's end") == "timeout"
    status, out, err = run.finish()
    assert (status, err) == (1, "")
    assert out.splitlines()[-1] == f"60 succeeded, 1 failed; logs in {runs.cwd / 'out'}"


def test_a_full_disk_under_its_output_ends_no_job_early(runs: Runs) -> None:
    with open("/dev/full", "w") as full:  # every write: ENOSPC
        done = subprocess.run(
            [GPUHERD_BIN, "run", "--fake-gpus", "1", "--output-dir", "out", "-"],
            input="sleep 0.2\n" * 3,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            cwd=runs.cwd,
            env=runs.env,
            timeout=60,
        )
    out = runs.cwd / "out"
    assert (done.returncode, done.stderr) == (
        1,
        "gpuherd: error: the run's output could not be written (No space left on device); "
        f"its jobs ran: their logs are in {out}\n",
    )
    assert [ended(out / f"job_{n}") for n in range(3)] == ["exit"] * 3  # (exit 0: SUCCESS)
    assert all((out / f"job_{n}" / "SUCCESS").exists() for n in range(3))

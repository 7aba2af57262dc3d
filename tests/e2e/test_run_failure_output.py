"""Why a job of `gpuherd run` failed, seen without opening its folder: the end of its
stderr.log, or of its stdout.log when it wrote its error there and nothing to stderr.

A script that says what went wrong with `echo` (or Python's `print`) and exits 1 failed with
`see job_0/stderr.log`, an empty file, and no line of why; simple_gpu_scheduler, which
leaves a job's output on the terminal, had shown it.
"""

from __future__ import annotations

import re

from conftest import Runs

FAILS_ON_STDOUT = "echo step 1; echo 'error: no data in /data/train' ; exit 1"


def test_a_failure_with_nothing_on_stderr_shows_the_end_of_its_stdout(runs: Runs) -> None:
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "1", "--output-dir", str(out), input=FAILS_ON_STDOUT + "\n")
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout.splitlines()
    at = next(i for i, line in enumerate(text) if line.startswith("[0] failed"))
    assert text[at].startswith("[0] failed (exit 1) after "), text[at]
    assert text[at].endswith(f"see {out}/job_0/stdout.log (nothing in stderr.log)"), text[at]
    assert text[at + 1 : at + 3] == ["    step 1", "    error: no data in /data/train"]
    assert text[-1] == f"0 succeeded, 1 failed; logs in {out}"


def test_quiet_shows_it_too_and_stderr_still_comes_first(runs: Runs) -> None:
    # A job that wrote to both: its stderr says why (a traceback), its stdout is progress.
    both = "echo 'epoch 1'; echo 'ValueError: lr' >&2; exit 2"
    out = runs.root / "out"
    lines = [FAILS_ON_STDOUT, both]
    proc = runs.run(
        "--fake-gpus", "1", "-q", "--output-dir", str(out), input="\n".join(lines) + "\n"
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.splitlines()[1:3] == [
        "    step 1",
        "    error: no data in /data/train",
    ], proc.stdout
    failed = [line for line in proc.stdout.splitlines() if line.startswith("[1] failed")]
    assert failed and failed[0].endswith(f"see {out}/job_1/stderr.log"), proc.stdout
    assert "    ValueError: lr" in proc.stdout.splitlines()
    assert "    epoch 1" not in proc.stdout.splitlines()


def test_a_failure_tail_leaves_out_the_blank_lines_the_job_ended_with(runs: Runs) -> None:
    # A message followed by blank lines (`print(msg, end="\n\n\n")`, a tool's footer) showed
    # five empty indented lines, and nothing of why the job failed.
    jobs = [
        "printf 'loading\\nerror: out of memory\\n\\n\\n  \\n\\n\\n\\n' >&2; exit 1",
        "printf 'done badly\\n\\n\\n\\n\\n\\n'; exit 2",  # (the stdout.log shown instead)
    ]
    out = runs.root / "out"
    proc = runs.run(
        "--fake-gpus", "1", "-q", "--output-dir", str(out), input="\n".join(jobs) + "\n"
    )
    assert proc.returncode == 1, proc.stderr
    shown = [re.sub(r" after [0-9.]+s:", " after Ts:", line) for line in proc.stdout.splitlines()]
    assert shown == [
        f"[0] failed (exit 1) after Ts: see {out}/job_0/stderr.log",
        "    loading",
        "    error: out of memory",
        f"[1] failed (exit 2) after Ts: see {out}/job_1/stdout.log (nothing in stderr.log)",
        "    done badly",
        f"0 succeeded, 2 failed; logs in {out}",
    ]

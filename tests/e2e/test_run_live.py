"""`gpuherd run --live`: the jobs' output on the run's terminal as they write it, each line
tagged with its job's number (`[0]| ` stdout, `[0]! ` stderr), as simple_gpu_scheduler's
jobs print straight onto its terminal and GNU parallel's --tag marks them.

Two real jobs run at once and write their lines in pieces: no line of the run may hold a mix
of them; a last line without its newline comes before the job's end line; bytes that are not
UTF-8, a line longer than a screenful and a `\\r` progress bar come out as lines too.
"""

from __future__ import annotations

import re

from conftest import Runs

TALK = r"""
import sys, time
name, out, err = sys.argv[1], sys.stdout.buffer, sys.stderr.buffer
for i in range(30):
    for piece in (f"{name} line ".encode(), f"{i} of 30".encode(), b" end\n"):
        out.write(piece)  # a line in three writes, the other job writing meanwhile
        out.flush()
        time.sleep(0.01)
    if i % 10 == 0:
        err.write(f"{name} warning {i}\n".encode())
        err.flush()
out.write(b"bytes \xff\xfe not utf-8\n" + b"x" * 40000 + b"\n")
for percent in range(0, 101, 25):
    err.write(f"\r{name} {percent}%".encode())
    err.flush()
err.write(b"\n")
out.write(f"{name} ends without a newline".encode())
"""


def expected(name: str) -> tuple[list[str], list[str]]:
    """What job `name` writes, as the run shows it: (stdout lines, stderr lines)."""
    out = [f"{name} line {i} of 30 end" for i in range(30)]
    out += ["bytes \ufffd\ufffd not utf-8", "x" * 16384, "x" * 16384, "x" * 7232]
    out.append(f"{name} ends without a newline")
    return out, [*(f"{name} warning {i}" for i in (0, 10, 20)), f"{name} 100%"]


def test_live_shows_each_jobs_lines_whole_and_tagged_as_they_come(runs: Runs) -> None:
    (runs.cwd / "talk.py").write_text(TALK)
    (runs.cwd / "jobs.txt").write_text("python3 talk.py A\npython3 talk.py B\n")
    out = runs.root / "out"
    proc = runs.run("--fake-gpus", "2", "--live", "--output-dir", str(out), "jobs.txt")
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "\r" not in proc.stdout
    for number, name in enumerate("AB"):
        said = [line for line in lines if line.startswith(f"[{number}]")]
        tagged = [line[5:] for line in said if line.startswith(f"[{number}]| ")]
        warned = [line[5:] for line in said if line.startswith(f"[{number}]! ")]
        assert (tagged, warned) == expected(name)
        # The run's own lines stay: all the job's lines (its last one without a newline too)
        # come between its start and its end.
        assert said[0] == f"[{number}] started on GPU {number}: python3 talk.py {name}"
        assert re.fullmatch(rf"\[{number}\] succeeded in [0-9.]+s", said[-1]), said[-1]
    assert lines[-1] == f"2 succeeded, 0 failed; logs in {out}"


def test_live_lines_come_while_the_job_runs(runs: Runs) -> None:
    go = runs.root / "go"
    job = f"echo ready; while [ ! -e {go} ]; do sleep 0.02; done; printf done"
    (runs.cwd / "jobs.txt").write_text(job + "\n")
    run = runs.start(
        "--fake-gpus", "1", "--live", "--output-dir", str(runs.root / "out"), "jobs.txt"
    )
    run.expect_line("[0] started")
    assert run.expect_line("[0]") == "[0]| ready"  # before the job may end
    go.touch()
    status, rest, err = run.finish()
    assert (status, err) == (0, ""), rest + err
    done, ended, *_ = rest.splitlines()
    assert done == "[0]| done"  # its last line, without a newline, once it ended
    assert ended.startswith("[0] succeeded in ")

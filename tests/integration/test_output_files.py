"""`--output FILE` and `--error FILE` (Slurm's sbatch -o/-e): a job's output in files of the
user's choosing, with the attempt folder's logs as links to them, so that `log`, `log -f`,
`show`, the dashboard, stall detection and the out-of-memory check read them as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_logs import reading

from conftest import Herd, wait_for
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect


def submit_in(herd: Herd, work: Path, *args: str) -> int:
    """`gpuherd submit ARGS` from the folder `work` (relative files are taken from there)."""
    return int(herd.cli("submit", "-q", *args, cwd=work).stdout.split()[0])


def test_output_and_error_land_in_the_files_named_with_placeholders(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    job = submit_in(
        herd, shared_work, "-n", "a/b", "-o", "out-%x-%j.log", "-e", "err-%j-%a-100%%.log",
        "echo to stdout; echo to stderr >&2",
    )  # fmt: skip
    herd.wait_state(job, "succeeded")
    out, err = shared_work / f"out-a_b-{job}.log", shared_work / f"err-{job}-1-100%.log"
    assert out.read_text() == "to stdout\n" and err.read_text() == "to stderr\n"
    folder = herd.home / "jobs" / str(job) / "attempt-1"
    assert os.readlink(folder / "stdout.log") == str(out)
    assert os.readlink(folder / "stderr.log") == str(err)
    assert herd.cli("log", str(job)).stdout == "to stdout\n"
    assert herd.cli("log", str(job), "--stderr").stdout == "to stderr\n"
    shown = herd.cli("show", str(job)).stdout
    assert f"stdout     {out}\n" in shown and f"stderr     {err}\n" in shown
    detail = herd.json("show", str(job))
    assert detail["output"] == str(shared_work / "out-%x-%j.log")
    assert detail["log_files"] == {"stdout": str(out), "stderr": str(err)}
    assert "to stdout" in herd.page(f"/jobs/{job}")  # the dashboard's job page


def test_output_alone_takes_both_streams_and_one_file_named_twice_gets_both(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    three = "echo one; echo two >&2; echo three"
    alone = submit_in(herd, shared_work, "-o", "alone.log", three)
    twice = submit_in(herd, shared_work, "-o", "same.log", "-e", "same.log", three)
    for job in (alone, twice):
        herd.wait_state(job, "succeeded")
    # Neither stream overwrites the other's lines (as two truncating opens would).
    assert (shared_work / "alone.log").read_text() == "one\ntwo\nthree\n"
    assert (shared_work / "same.log").read_text() == "one\ntwo\nthree\n"
    assert herd.cli("log", str(alone), "--stderr").stdout == "one\ntwo\nthree\n"
    assert "(with stdout)\n" in herd.cli("show", str(twice)).stdout


def test_log_f_follows_the_file_and_show_has_its_stderr_tail(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, go = shared_daemon, shared_work / "go"
    job = submit_in(
        herd, shared_work, "-o", "f.log",
        f"echo first; while [ ! -e {go} ]; do sleep 0.02; done; echo second; echo why >&2; exit 4",
    )  # fmt: skip
    with reading(herd, "log", "-f", str(job)) as follow:
        assert follow.line() == b"first"
        go.touch()
        assert follow.line() == b"second"
        assert follow.line() == b"why"
    herd.wait_state(job, "failed")
    assert herd.job(job)["stderr_tail"] == ["first", "second", "why"]


def test_a_retry_adds_to_one_file_and_with_a_writes_one_per_attempt(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, go = shared_daemon, shared_work / "go"
    one = submit_in(
        herd, shared_work, "--retries", "1", "-o", "all.log",
        f'echo "start $GPUHERD_ATTEMPT"; while [ ! -e {go} ]; do sleep 0.02; done; '
        '[ "$GPUHERD_ATTEMPT" = 2 ] || exit 3',
    )  # fmt: skip
    each = submit_in(
        herd, shared_work, "--retries", "1", "-o", "try-%a.log",
        'echo "attempt $GPUHERD_ATTEMPT"; exit 1',
    )  # fmt: skip
    # Followed through the retry: the one file goes on, and no line comes twice.
    events = herd.client.stream(f"/jobs/{one}/log/follow")
    assert next(events) == ("message", {"text": "start 1\n", "attempt": 1, "offset": 8})
    go.touch()
    rest = list(events)
    said = "".join(data["text"] for name, data in rest if name == "message")
    assert said == "start 2\n" and rest[-1] == ("end", {"state": "succeeded"})
    assert (shared_work / "all.log").read_text() == "start 1\nstart 2\n"  # none wiped out
    assert herd.cli("log", str(one)).stdout == "start 1\nstart 2\n"
    herd.wait_state(each, "failed")
    assert (shared_work / "try-1.log").read_text() == "attempt 1\n"
    assert (shared_work / "try-2.log").read_text() == "attempt 2\n"
    assert herd.cli("log", str(each), "--attempt", "1").stdout == "attempt 1\n"
    # A new job empties the file it names: no output of an earlier job is mixed into it.
    again = submit_in(herd, shared_work, "-o", "all.log", "echo fresh")
    herd.wait_state(again, "succeeded")
    assert (shared_work / "all.log").read_text() == "fresh\n"


def test_a_silent_job_is_found_stalled_and_a_talking_one_is_not(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    stall = ("--no-output-timeout", "1s", "--on-no-output", "kill")
    talks = submit_in(
        herd, shared_work, *stall, "-o", "talks.log",
        "for i in 1 2 3 4 5 6 7 8 9 10; do echo $i; sleep 0.25; done",
    )  # fmt: skip
    silent = submit_in(herd, shared_work, *stall, "-o", "silent.log", "sleep 30")
    assert herd.wait_state(silent, "failed")["outcome"] == "stalled"
    herd.wait_state(talks, "succeeded")


def test_cuda_out_of_memory_is_found_in_the_error_file(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    job = submit_in(
        herd, shared_work, "-e", "oom.log",
        'echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB" >&2; exit 1',
    )  # fmt: skip
    assert herd.wait_state(job, "failed")["outcome"] == "cuda_oom"


def test_rm_and_clean_remove_the_link_not_the_users_file(daemon: Herd, work: Path) -> None:
    removed = submit_in(daemon, work, "-o", "kept-%j.log", "echo kept")
    cleaned = submit_in(daemon, work, "-o", "kept-%j.log", "echo kept")
    for job in (removed, cleaned):
        daemon.wait_state(job, "succeeded")
    daemon.cli("rm", str(removed))
    daemon.cli("clean")
    for job in (removed, cleaned):
        assert not (daemon.home / "jobs" / str(job)).exists()
        assert (work / f"kept-{job}.log").read_text() == "kept\n"


def test_a_file_that_cannot_be_opened_at_the_start_fails_the_attempt_saying_why(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    job = submit_in(herd, shared_work, "--hold", "-o", "later-%j/out.log", "echo lost")
    missing = shared_work / f"later-{job}" / "out.log"
    missing.mkdir(parents=True)  # a folder where the file goes: it cannot be opened
    herd.cli("release", str(job))
    ended = herd.wait_state(job, "failed")
    assert ended["outcome"] == "spawn_error"
    assert ended["message"].startswith(f"cannot open {missing}, the file its stdout goes to:")
    assert f"`gpuherd retry {job}`" in herd.cli("show", str(job)).stdout
    missing.rmdir()
    herd.cli("retry", str(job))
    herd.wait_state(job, "succeeded")
    assert missing.read_text() == "lost\n"


def test_paths_that_cannot_be_written_are_refused_in_one_line(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    nowhere = shared_work / "nowhere"
    said = herd.usage_error("submit", "--cwd", str(shared_work), "-o", "nowhere/x.log", "true")
    assert f"--output nowhere/x.log: the folder {nowhere} does not exist: create it " in said
    said = herd.usage_error("submit", "-e", "x-%J.log", "true")
    assert "--error x-%J.log: unknown placeholder %J: use %j (the job's id), %a (" in said
    assert "is a folder: name a file in it" in herd.usage_error("submit", "-o", "/tmp", "true")
    # An empty name is named quoted: it read `--output : empty`, as though no value was given.
    said = herd.usage_error("submit", "-o", "", "true")
    assert "error: --output '': empty: give a file name, such as train-%j.log" in said
    said = herd.usage_error("sweep", "echo {n}", "-p", "n", "1", "2", "-o", "n-%n.log")
    assert "unknown placeholder %n" in said
    # The daemon checks it for every client, in the same words (the HTTP API, the Python API).
    item = {"command": "true", "cwd": str(shared_work), "output": "nowhere/x.log"}
    with pytest.raises(InvalidValue, match=r"^output \(--output\) nowhere/x.log: the folder "):
        herd.client.post("/jobs", {"jobs": [item]})
    with pytest.raises(InvalidValue, match="unknown placeholder %y"):
        connect(herd.home, start=False).submit("true", cwd=shared_work, error="%y")
    with pytest.raises(InvalidValue, match=r"^error \(--error\) ' ': empty: give a file name"):
        connect(herd.home, start=False).submit("true", cwd=shared_work, error=" ")
    assert not [job for job in herd.ls_all() if job["cwd"] == str(shared_work)]  # none queued


def test_sweeps_and_the_python_api_take_the_files(shared_daemon: Herd, shared_work: Path) -> None:
    herd = shared_daemon
    answer = json.loads(
        herd.cli(
            "sweep", "echo lr={lr}", "-p", "lr", "1", "2", "--name", "sw",
            "-o", "sw-%x.log", "--json", cwd=shared_work,
        ).stdout
    )  # fmt: skip
    (shared_work / "s.yaml").write_text(
        "name: sf\ncommand: echo b={b}\ngrid: {b: [3]}\noutput: sf-%j.log\n"
    )
    filed = json.loads(herd.cli("sweep", "s.yaml", "--json", cwd=shared_work).stdout)
    job = connect(herd.home, start=False).submit(
        "echo from python", cwd=shared_work, output=Path("py-%j.log")
    )
    for job_id in [*answer["ids"], *filed["ids"], job.id]:
        herd.wait_state(job_id, "succeeded")
    assert (shared_work / "sw-sw_lr=1.log").read_text() == "lr=1\n"
    assert (shared_work / "sw-sw_lr=2.log").read_text() == "lr=2\n"
    assert (shared_work / f"sf-{filed['ids'][0]}.log").read_text() == "b=3\n"
    assert (shared_work / f"py-{job.id}.log").read_text() == "from python\n"
    wait_for(lambda: job.logs() == "from python\n", what="the job's log through the API")


def test_output_dropped_into_dev_null_leaves_the_job_shown(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd = shared_daemon
    job = submit_in(herd, shared_work, "-o", "/dev/null", "echo dropped")
    herd.wait_state(job, "succeeded")
    assert "stdout     /dev/null\n" in herd.cli("show", str(job)).stdout
    assert "echo dropped" in herd.page(f"/jobs/{job}")  # the job's page, with no log to show


def test_follow_of_output_that_keeps_nothing_is_refused_before_submitting(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    # It was submitted, then the follow found no log and exited 1 at once, the job running
    # on: its exit status, what --follow waits for, was never told.
    herd = shared_daemon
    said = herd.usage_error("submit", "--follow", "-o", "/dev/null", "--cwd", str(tmp_path), "true")
    assert "--follow prints the job's stdout, which --output /dev/null does not keep: " in said
    assert "give --wait" in said
    assert not [job for job in herd.ls_all() if job["cwd"] == str(tmp_path)]  # none queued
    # Only stdout is followed: its stderr may go where nothing is kept.
    followed = herd.cli("submit", "--follow", "-e", "/dev/null", "echo kept; echo lost >&2")
    assert followed.stdout == "kept\n"


def test_jobs_of_one_submission_that_would_share_a_file_are_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """Each job's first attempt empties its file: a sweep given `-o same.log` kept its last
    point's output alone, in silence. One file for several jobs is refused, nothing queued."""
    herd = shared_daemon
    before = herd.json("ls", "--all")
    same = shared_work / "same.log"
    said = (
        f"gpuherd: error: jobs 1 and 2 of the submission would both write {same}, each "
        "emptying it as it starts: put %j (the job's id) or %x (its name) in the file's name, "
        "so each job has its own\n"
    )
    sweep = herd.cli(
        "sweep", "echo {x}", "-p", "x", "1", "2", "--name", "one-file", "-o", "same.log",
        check=False, cwd=shared_work,
    )  # fmt: skip
    points = "points x=1 and x=2 of sweep 'one-file'"  # (as `sweep status` names them)
    assert (sweep.returncode, sweep.stderr) == (
        1,
        said.replace("jobs 1 and 2 of the submission", points),
    )
    (shared_work / "two.txt").write_text("echo a\necho b\n")
    lines = herd.cli(
        "submit", "--file", "two.txt", "-o", "x.log", "-e", "same.log",
        check=False, cwd=shared_work,
    )  # fmt: skip
    assert (lines.returncode, lines.stderr) == (1, said)
    assert herd.json("ls", "--all") == before  # nothing queued
    # Each its own (%x: the points' names; %j: the jobs' ids), or one job's two streams: taken.
    ok = herd.cli(
        "sweep", "echo {x}", "-p", "x", "1", "2", "--name", "own-files", "-o", "own-%x.log",
        "--json", cwd=shared_work,
    )  # fmt: skip
    for job_id in json.loads(ok.stdout)["ids"]:
        herd.wait_state(job_id, "succeeded")
    assert (shared_work / "own-own-files_x=2.log").read_text() == "2\n"

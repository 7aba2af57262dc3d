"""A researcher's week through the CLI: following logs that end mid-line (progress bars),
following a job that has not started, waiting while some jobs are held, Ctrl-C of a waiting
submit, an on-end hook named relative to the shell's folder, and `show` of a retry delay."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from conftest import Herd, read_line, wait_for
from gpuherd.core.idspec import format_ids


def merged(herd: Herd, *args: str) -> subprocess.Popen[bytes]:
    """`gpuherd ARGS` with stderr on stdout's pipe: both in one place, as on a terminal."""
    return subprocess.Popen(
        [sys.executable, "-m", "gpuherd", *args],
        env=herd.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def ended(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out.decode()


RETRIED_BAR = 'printf "50%% |#### \\r$GPUHERD_ATTEMPT"; [ "$GPUHERD_ATTEMPT" = 2 ] || exit 1'
"""A job whose output ends mid-line (a progress bar, then the attempt's number), failing once."""


def test_a_note_during_a_follow_starts_its_own_line_after_an_unfinished_one(
    shared_daemon: Herd,
) -> None:
    job_id = shared_daemon.submit("--hold", "--retries", "1", RETRIED_BAR)
    follow = merged(shared_daemon, "log", "-f", str(job_id))
    buffer = bytearray()
    held = read_line(follow.stdout.fileno(), buffer).decode()  # type: ignore[union-attr]
    assert held == (
        f"gpuherd: job {job_id} has not started yet: held; its log follows once it starts "
        f"(gpuherd release {job_id} lets it run)"
    )
    shared_daemon.cli("release", str(job_id))
    code, out = ended(follow)
    # Glued to the bar before: "50% |#### \r1gpuherd: job N: attempt 2 began".
    began = f"gpuherd: job {job_id}: attempt 2 began\n"
    assert (code, buffer.decode() + out) == (0, f"50% |#### \r1\n{began}50% |#### \r2")
    # Apart, stdout is the log as the job wrote it: no line break of gpuherd's in it.
    apart = subprocess.run(
        [sys.executable, "-m", "gpuherd", "log", "-f", str(job_id)],
        env=shared_daemon.env,
        capture_output=True,
        timeout=30,
    )
    assert (apart.stdout, apart.stderr) == (b"50% |#### \r2", b"")


def test_submit_follow_names_a_failure_on_a_line_of_its_own(shared_daemon: Herd) -> None:
    code, out = ended(merged(shared_daemon, "submit", "--follow", 'printf "7/10 [###\\r"; exit 5'))
    job_id = int(out.split("\n", 1)[0].removeprefix("submitted job "))
    assert (code, out) == (
        5,
        f"submitted job {job_id}\n7/10 [###\r\njob {job_id}: failed (exit 5)\n",
    )


def test_a_follow_of_a_job_that_has_not_started_says_why_it_waits(shared_daemon: Herd) -> None:
    later = shared_daemon.submit("--begin", "+1h", "echo later")
    reason = shared_daemon.job(later)["reason"]
    assert reason.startswith("held until ") and reason.endswith(" (--begin)")
    follow = merged(shared_daemon, "log", "-f", str(later))
    note = read_line(follow.stdout.fileno(), bytearray()).decode()  # type: ignore[union-attr]
    assert note == (
        f"gpuherd: job {later} has not started yet: {reason}; its log follows once it starts "
        f"(gpuherd release {later} starts it now)"
    )
    shared_daemon.cli("kill", str(later))
    assert ended(follow) == (
        1,
        f"gpuherd: error: job {later} never ran (cancelled): it has no log\n",
    )
    # One that starts at once (GPUs free) is followed without a word.
    quick = shared_daemon.cli("submit", "-q", "echo quick").stdout.strip()
    done = shared_daemon.cli("log", "-f", quick)
    assert (done.stdout, done.stderr) == ("quick\n", "")


def test_wait_says_which_held_jobs_it_does_not_wait_for(daemon: Herd, tmp_path: Path) -> None:
    held = daemon.submit("--hold", "echo held")
    later = daemon.submit("--begin", "+1h", "echo later")
    both = format_ids([held, later])
    nothing = daemon.cli("wait")  # the note on stderr, as when some job is waited for
    assert (nothing.returncode, nothing.stdout, nothing.stderr) == (
        0,
        "nothing to wait for: no job is queued or running\n",
        f"gpuherd: jobs {both} are held (until released, or their --begin time), not waited "
        f"for: gpuherd wait {both} waits for them\n",
    )
    daemon.cli("kill", str(later))
    go = tmp_path / "go"
    daemon.submit(f"while [ ! -e {go} ]; do sleep 0.02; done")
    some = daemon.popen("wait")
    assert some.stderr is not None
    said = read_line(some.stderr.fileno(), bytearray()).decode()  # said before it waits
    assert said == (
        f"gpuherd: job {held} is held (until released, or its --begin time), not waited for: "
        f"gpuherd wait {held} waits for it"
    )
    go.touch()
    out, _ = some.communicate(timeout=30)
    assert (some.returncode, out) == (0, b"1 of 1 job succeeded\n")
    assert daemon.cli("wait", "-q").stderr == ""  # -q prints no note


def test_wait_q_still_names_the_jobs_that_did_not_succeed(shared_daemon: Herd) -> None:
    # It printed nothing at all: a script's log said neither which job failed nor how, where
    # `submit -q --wait` says it. Its notes and summary stay unsaid.
    failed, done = shared_daemon.submit("exit 7"), shared_daemon.submit("true")
    both = shared_daemon.cli("wait", "-q", str(failed), str(done), check=False)
    assert (both.returncode, both.stdout, both.stderr) == (
        1,
        "",
        f"job {failed}: failed (exit 7)\n",
    )
    alone = shared_daemon.cli("wait", "-q", str(done), check=False)
    assert (alone.returncode, alone.stdout, alone.stderr) == (0, "", "")


def test_wait_for_a_sweep_no_sweep_has_is_refused(shared_daemon: Herd) -> None:
    # A misspelt name said "nothing to wait for", exit 0, as for a sweep that is done: a
    # script's `gpuherd wait --sweep lr-sweeep && ./analyse.sh` analysed nothing.
    herd = shared_daemon
    for missing in ("lr-sweeep", "a/b"):  # (the second is no sweep's name at all)
        said = f"no sweep named {missing!r}: `gpuherd sweep ls` lists the sweeps"
        for quiet in ((), ("-q",)):
            refused = herd.cli("wait", "--sweep", missing, *quiet, check=False)
            assert (refused.returncode, refused.stdout, refused.stderr) == (
                1,
                "",
                f"gpuherd: error: {said}\n",
            )
    sweep = herd.cli("sweep", "true {x}", "-p", "x", "1", "--name", "lr-sweep", "--json")
    herd.wait_state(json.loads(sweep.stdout)["ids"][0], "succeeded")
    finished = herd.cli("wait", "--sweep", "lr-sweep")  # exists, has nothing left to run
    assert (finished.returncode, finished.stdout) == (0, "1 of 1 point succeeded\n")


def test_ctrl_c_of_a_waiting_submit_says_the_job_goes_on(shared_daemon: Herd) -> None:
    proc = shared_daemon.popen("submit", "--wait", "sleep 60")
    assert proc.stdout is not None and proc.stderr is not None
    first = read_line(proc.stdout.fileno(), bytearray()).decode()
    job_id = int(first.removeprefix("submitted job "))
    shared_daemon.wait_state(job_id, "running")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err.decode() == (
        f"gpuherd: interrupted: job {job_id} goes on (gpuherd kill {job_id} stops it)\n"
    )
    assert shared_daemon.job(job_id)["state"] == "running"


def test_an_on_end_hook_named_relative_to_this_folder_is_warned_of(
    daemon: Herd, tmp_path: Path
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    hook = folder / "notify.sh"
    hook.write_text(f"#!/bin/sh\necho $GPUHERD_JOB_ID >> {folder}/ends\n")
    hook.chmod(0o755)
    for command in ("./notify.sh", "notify.sh --all"):
        said = daemon.cli("config", "set", "on-end", command, cwd=folder)
        word = command.split()[0]
        assert (said.stdout, said.stderr) == (
            f"on-end = {command}\n",
            f"gpuherd: warning: on-end: {word} is a file in {folder}, but the hook runs in the "
            f"daemon's home ({daemon.home}), where its shell does not find it: give its full "
            f"path, {hook}\n",
        )
    # The warning was right: the hook could not run.
    daemon.wait_state(daemon.submit("true"), "succeeded")
    wait_for(  # check=False: a poll before hooks.log exists is refused (no hook log yet)
        lambda: "not found" in daemon.cli("daemon", "log", "--hooks", check=False).stdout,
        what="hook",
    )
    assert not (folder / "ends").exists()
    fixed = daemon.cli("config", "set", "on-end", str(hook), cwd=folder)
    assert (fixed.stdout, fixed.stderr) == (f"on-end = {hook}\n", "")
    done = daemon.submit("true")
    wait_for(lambda: (folder / "ends").is_file(), what="the fixed hook to run")
    assert (folder / "ends").read_text() == f"{done}\n"


def test_show_gives_the_retry_delay(shared_daemon: Herd) -> None:
    job_id = shared_daemon.submit("--hold", "--retries", "1", "--retry-delay", "90s", "true")
    assert "retry delay  1m30s" in shared_daemon.cli("show", str(job_id)).stdout.splitlines()
    shared_daemon.cli("edit", str(job_id), "--clear", "retry_delay")
    assert "retry delay" not in shared_daemon.cli("show", str(job_id)).stdout


def test_show_gives_the_oom_retries_the_grace_and_the_no_output_limit(
    shared_daemon: Herd,
) -> None:
    # `attempt 3 (retries allowed: 0)` after three out-of-memory failures of an --oom-retry
    # job read as a bug; the grace and --no-output-timeout were shown nowhere.
    job_id = shared_daemon.submit(
        "--hold", "--oom-retry", "--mem", "1GiB", "--grace", "45s",
        "--no-output-timeout", "1h", "--on-no-output", "kill", "true",
    )  # fmt: skip
    shown = shared_daemon.cli("show", str(job_id)).stdout.splitlines()
    assert (
        "attempt    not run yet (retries allowed: 0; after out of memory: 2, with more --mem)"
        in shown
    )
    assert "no output  1h, then killed" in shown
    assert "grace      45s (SIGTERM, then SIGKILL)" in shown
    view = shared_daemon.job(job_id)
    assert (view["oom_retries"], view["grace"], view["no_output_timeout"]) == (2, 45.0, 3600.0)
    plain = shared_daemon.submit("--hold", "true")
    assert "grace      10s (SIGTERM, then SIGKILL)" in shared_daemon.cli("show", str(plain)).stdout
    assert shared_daemon.job(plain)["oom_retries"] is None


def test_show_without_an_id_is_of_the_job_submitted_last(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    none = herd.cli("show", check=False)
    assert (none.returncode, none.stderr) == (
        1,
        "gpuherd: error: no job yet: `gpuherd submit` queues one\n",
    )
    herd.submit("--name", "first", "true")
    last = herd.submit("--hold", "--name", "second", "true")
    assert herd.cli("show").stdout.splitlines()[0] == f"job        {last} (second)"
    assert herd.json("show")["id"] == last  # as `gpuherd log` without an id


def test_submit_warns_of_a_program_name_with_a_space_that_names_nothing(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    # Several arguments are quoted each: the first became one program called "python3 x.py".
    said = shared_daemon.cli("submit", "--hold", "python3 train.py", "--lr", "0.1", cwd=tmp_path)
    job_id = int(said.stdout.removeprefix("submitted job "))
    assert shared_daemon.job(job_id)["command"] == "'python3 train.py' --lr 0.1"
    assert said.stderr == (
        "gpuherd: warning: the command's program is 'python3 train.py', one name with spaces in "
        'it, which names no program: the job will fail with "not found"; give its words apart '
        "(gpuherd submit -- python3 train.py --lr 0.1)\n"
    )
    shared_daemon.cli("release", str(job_id))
    failed = shared_daemon.wait_state(job_id, "failed")
    assert failed["exit_code"] == 127  # the warning was right
    # A program in a folder whose name has a space is no mistake; one argument is not either.
    (tmp_path / "my dir").mkdir()
    (tmp_path / "my dir" / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (tmp_path / "my dir" / "run.sh").chmod(0o755)
    (tmp_path / "train.py").write_text("")  # (else a warning says it is not there)
    for args in (["./my dir/run.sh", "x"], ["python3 train.py --lr 0.1"]):
        fine = shared_daemon.cli("submit", "--hold", *args, cwd=tmp_path)
        assert fine.stderr == "", args

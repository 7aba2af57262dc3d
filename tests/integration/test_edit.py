"""`gpuherd edit`: a waiting job changes what it asks for and keeps its place; what cannot be
(a running or finished job, a request no GPU here could meet, a field that is not editable)
is refused with the reason and changes nothing."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conftest import Herd, Recorder, wait_for
from gpuherd.errors import HerdError
from gpuherd.pyapi import Job, connect


def test_an_edited_job_runs_the_new_command_on_the_new_gpus_in_its_old_place(
    herd: Herd, recorder: Recorder
) -> None:
    herd.start("--fake-gpus", "2")
    herd.cli("pause")
    first = herd.submit("--", "echo typo")
    second = herd.submit("--", recorder.cmd("second"))

    new = recorder.cmd("first")
    answer = herd.cli("edit", str(first), "--command", new, "--gpus", "2", "--name", "fixed")
    assert answer.stdout == f"job {first}: edited (command, name none -> fixed, gpus 1 -> 2)\n"
    assert [job["id"] for job in herd.json("ls")] == [first, second]  # its place is kept

    herd.cli("resume")
    done = herd.wait_state(first, "succeeded")
    assert (done["command"], done["name"], done["gpus_requested"]) == (new, "fixed", 2)
    (ran,) = recorder.lines("first")
    assert sorted(ran["gpus"].split(",")) == ["0", "1"]  # CUDA_VISIBLE_DEVICES: both GPUs
    # The first job held both GPUs, so the second could only start once it had ended.
    assert herd.wait_state(second, "succeeded")["started_at"] >= done["ended_at"]
    history = herd.cli("show", str(first)).stdout.split("\nhistory\n")[1]
    assert re.search(r"\n  \S+ \S+  edit +command, name none -> fixed, gpus 1 -> 2\n", history)
    edits = [e for e in done["events"] if e["event"] == "edit"]
    assert [(e["from_state"], e["to_state"], e["detail"]) for e in edits] == [
        ("queued", "queued", "command, name none -> fixed, gpus 1 -> 2")
    ]


def test_edit_sets_and_clears_fields_of_many_jobs_and_keeps_a_held_job_held(
    daemon: Herd,
) -> None:
    daemon.cli("pause")
    ids = daemon.submit_lines(["true"] * 1200, "--mem", "1GiB", "--timeout", "1h")
    later = daemon.submit("--begin", "+2h", "--project", "p", "--", "true")

    answer = daemon.cli("edit", f"{ids[0]}-{ids[-1]}", "--clear", "mem", "--retries", "2")
    assert (
        answer.stdout == f"jobs {ids[0]}-{ids[-1]}: edited (mem 1.0 GiB -> none, retries 0 -> 2)\n"
    )
    jobs = {job["id"]: job for job in daemon.json("ls", "--all")}
    assert {(jobs[i]["mem"], jobs[i]["retries"], jobs[i]["timeout"]) for i in ids} == {
        (None, 2, 3600.0)
    }
    assert daemon.cli("edit", str(ids[0]), "--retries", "2").stdout == f"job {ids[0]}: unchanged\n"

    begin = daemon.job(later)["begin"]
    daemon.cli("edit", str(later), "--timeout", "90s", "--clear", "project")
    held = daemon.job(later)
    assert (held["state"], held["begin"], held["timeout"], held["project"]) == (
        "held",
        begin,
        90.0,
        None,
    )


def test_edit_refuses_running_finished_and_impossible_jobs_and_changes_nothing(
    daemon: Herd, recorder: Recorder
) -> None:
    running = daemon.submit("--", recorder.cmd("running", wait="go"))
    wait_for(lambda: recorder.waiting("running") == 1, what="the job to run")
    finished = daemon.submit("--", "true")
    daemon.wait_state(finished, "succeeded")
    daemon.cli("pause")
    queued = daemon.submit("--", "true")

    refused = daemon.cli("edit", str(running), str(finished), "--gpus", "2", check=False)
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        f"gpuherd: error: job {running} is running: only queued or held jobs can be edited",
        f"gpuherd: error: job {finished} already ended (succeeded): `gpuherd retry --hold "
        f"{finished}` puts it back held, to edit it before it runs again (`gpuherd release "
        f"{finished}` runs it)",
    ]
    never = daemon.cli("edit", str(queued), "--gpus", "5", "--name", "big", check=False)
    assert never.returncode == 1
    assert "would never run: asks for 5 GPUs" in never.stderr
    before = daemon.job(queued)
    assert (before["gpus_requested"], before["name"]) == (1, None)
    assert not [e for e in before["events"] if e["event"] == "edit"]

    # One bad id among good ones: the good ones are edited, the exit status says 1.
    mixed = daemon.cli("edit", str(queued), "999", "--name", "n", check=False)
    assert (mixed.returncode, mixed.stdout) == (1, f"job {queued}: edited (name none -> n)\n")
    assert "no job 999" in mixed.stderr

    with pytest.raises(HerdError, match="command cannot be cleared"):
        daemon.client.post("/jobs/edit", {"ids": [queued], "clear": ["command"]})
    # A value no job may have is refused per job: one result, not an error for the request.
    (only,) = daemon.client.post("/jobs/edit", {"ids": [queued], "command": "  "})["results"]
    assert not only["ok"] and only["message"].startswith(f"job {queued}: the command is empty")
    assert daemon.job(queued)["command"] == "true"
    recorder.go()
    daemon.wait_state(running, "succeeded")


def test_edit_without_a_change_is_a_usage_error(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job = daemon.submit("--hold", "--", "true")
    nothing = daemon.cli("edit", str(job), check=False)
    assert nothing.returncode == 2
    assert nothing.stderr.startswith("gpuherd: error: say what to change: --command")
    assert len(nothing.stderr.splitlines()) == 1
    quoted = daemon.cli("edit", str(job), "--command", "echo 'a b'").stdout
    assert quoted == f"job {job}: edited (command)\n"
    assert shlex.split(daemon.job(job)["command"]) == ["echo", "a b"]


def test_a_finished_job_retried_held_is_edited_then_released(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("--", "echo typo; exit 3")
    daemon.wait_state(job_id, "failed")
    answer = daemon.cli("retry", "--hold", str(job_id))
    assert answer.stdout == f"job {job_id}: held (`gpuherd release` to run again)\n"
    assert daemon.job(job_id)["state"] == "held"
    daemon.cli("edit", str(job_id), "--command", "echo fixed")
    daemon.cli("release", str(job_id))
    done = daemon.wait_state(job_id, "succeeded")
    assert (done["attempt"], daemon.cli("log", str(job_id)).stdout) == (2, "fixed\n")
    events = [(e["event"], e["to_state"]) for e in done["events"]]
    assert ("retry-held", "held") in events

    running = daemon.submit("--", "sleep 60")
    daemon.wait_state(running, "running")
    refused = daemon.cli("retry", "--hold", str(running), check=False)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"gpuherd: error: job {running} is running: retry --hold takes a finished job "
        f"(gpuherd kill {running}, then retry --hold it)\n"
    )
    daemon.cli("kill", str(running))


def test_edited_durations_are_said_as_typed(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    # The event and the answer said `timeout none -> 30.0s`, and `show` `timeout 30.0s`.
    # (--retries 1: a --retry-delay on a job never retried adds a warning, not wanted here)
    job = daemon.submit("--hold", "--retries", "1", "--timeout", "2h", "--", "true")
    answer = daemon.cli("edit", str(job), "--timeout", "30s", "--retry-delay", "1h30m")
    said = "retry_delay none -> 1h30m, timeout 2h -> 30s"
    assert answer.stdout == f"job {job}: edited ({said})\n"
    shown = daemon.cli("show", str(job)).stdout
    assert re.search(rf"\n  \S+ \S+  edit +{re.escape(said)}\n", shown)
    assert re.search(r"\ntimeout +30s\n", shown)
    (edit,) = [e for e in daemon.job(job)["events"] if e["event"] == "edit"]
    assert edit["detail"] == said
    cleared = daemon.cli("edit", str(job), "--clear", "timeout", "--retry-delay", "2.5")
    assert cleared.stdout == f"job {job}: edited (retry_delay 1h30m -> 2.5s, timeout 30s -> none)\n"


def test_edit_sets_a_waiting_jobs_variables_and_keeps_its_others(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    # A held job's --env could not be changed: only rm and submit again, losing its place.
    out = tmp_path / "env.txt"
    job = shared_daemon.submit(
        "--hold", "--gpus", "0", "--env", "A=1", "--env", "B=2",
        "--", f'echo "$A $B $C" > {out}',
    )  # fmt: skip
    answer = shared_daemon.cli("edit", str(job), "--env", "B=3", "--env", "C=x y")
    assert answer.stdout == f"job {job}: edited (env A,B -> A,B,C)\n"  # names only: secrets
    assert shared_daemon.job(job)["env_overrides"] == {"A": "1", "B": "3", "C": "x y"}
    shown = shared_daemon.cli("show", str(job)).stdout.splitlines()
    assert [line for line in shown if line.startswith("env ")] == [
        "env        A=1",
        "env        B=3",
        "env        C=x y",
    ]
    bad = shared_daemon.client.post("/jobs/edit", {"ids": [job], "env_overrides": {"X=Y": "1"}})
    assert bad["results"][0]["message"] == (
        f"job {job}: 'X=Y' is not an environment variable name: give NAME=VALUE, with no '=' "
        "in NAME"
    )
    api_job = Job(connect(shared_daemon.home, start=False), job)
    assert api_job.edit(env={"D": 4}) == "edited (env A,B,C -> A,B,C,D)"
    assert api_job.edit(clear=["env"]) == "edited (env A,B,C,D -> none)"
    assert shared_daemon.cli("edit", str(job), "--env", "C=z").stdout.endswith("(env none -> C)\n")
    shared_daemon.cli("release", str(job))
    assert shared_daemon.wait_state(job, "succeeded")["state"] == "succeeded"
    assert out.read_text() == "  z\n"


def test_edit_moves_a_waiting_job_to_another_folder_and_changes_what_it_waits_for(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = daemon.submit("--hold", "--gpus", "0", "--", "true")
    job = daemon.submit("--hold", "--gpus", "0", "--", "pwd > where.txt")
    answer = daemon.cli(
        "edit", str(job), "--cwd", str(elsewhere), "--grace", "1m", "--after", str(first)
    )
    home_parent = daemon.home.parent  # (where daemon.cli runs, and so its submissions)
    assert answer.stdout == (
        f"job {job}: edited (cwd {home_parent} -> {elsewhere}, grace 10s -> 1m, "
        f"after none -> {first})\n"
    )
    daemon.cli("release", str(job))
    assert daemon.job(job)["reason"] == (  # and not started
        f"waiting for job {first} (held: gpuherd release {first})"
    )
    daemon.cli("release", str(first))
    done = daemon.wait_state(job, "succeeded")
    assert (elsewhere / "where.txt").read_text() == f"{elsewhere}\n"
    assert (done["cwd"], done["grace"], done["after"]) == (str(elsewhere), 60.0, [first])


def test_edit_refuses_dependencies_a_submission_would_refuse_and_ones_that_wait_for_it(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    daemon = shared_daemon
    a = daemon.submit("--hold", "--", "true")
    b = daemon.submit("--hold", "--after", str(a), "--", "true")
    c = daemon.submit("--hold", "--after-any", str(b), "--", "true")
    failed = daemon.submit("--gpus", "0", "--", "exit 3")
    daemon.wait_state(failed, "failed")

    def refusal(*args: str) -> str:
        proc = daemon.cli("edit", *args, check=False)
        assert proc.returncode == 1 and len(proc.stderr.splitlines()) == 1, proc.stderr
        return proc.stderr

    assert refusal(str(a), "--after", str(c)) == (
        f"gpuherd: error: job {a} cannot wait for job {c}: job {c} already waits for it "
        "(directly or through other jobs), and the two would wait for each other for ever\n"
    )
    assert f"job {a} cannot wait for itself" in refusal(str(a), "--after-any", f"{a},{failed}")
    assert "no job 999 " in refusal(str(a), "--after", "999")
    assert refusal(str(b), "--after", f"{a},{failed}") == (
        f"gpuherd: error: job {b} would be cancelled at once: job {failed}, which it is to "
        f"wait for, already failed (gpuherd retry {failed} first, then edit {b})\n"
    )
    relative = daemon.client.post("/jobs/edit", {"ids": [b], "cwd": "work"})["results"]
    assert relative[0]["message"] == (  # (`work` exists where the daemon runs: no matter)
        f"job {b}: working directory work is relative: give the absolute path of an existing "
        "folder as cwd (--cwd)"
    )
    (a_file := tmp_path / "notes.txt").write_text("")
    not_a_folder = daemon.client.post("/jobs/edit", {"ids": [b], "cwd": str(a_file)})["results"]
    assert not_a_folder[0]["message"] == (
        f"job {b}: working directory {a_file} is not a folder: give the absolute path of an "
        "existing folder as cwd (--cwd)"
    )
    with pytest.raises(HerdError) as never:  # by field and option, as submit's refusal says
        daemon.client.post("/jobs/edit", {"ids": [b], "begin": 1e308})
    assert (
        str(never.value)
        == "begin (--begin) must be a time (epoch seconds) from 1970 to the year 9999"
    )
    gone = daemon.cli("edit", str(b), "--cwd", str(tmp_path / "gone"), check=False)
    assert gone.returncode == 2 and "does not exist" in gone.stderr
    assert daemon.job(b)["after"] == [a]  # nothing refused changed anything
    # Waiting for any end of a failed job is no mistake; cleared, a job waits for none.
    said = daemon.cli("edit", str(b), "--after-any", str(failed), "--clear", "after").stdout
    assert said == f"job {b}: edited (after {a} -> none, after_any none -> {failed})\n"
    daemon.cli("release", str(b))
    daemon.wait_state(b, "succeeded")


def test_edit_begin_holds_a_job_until_then_and_a_cleared_or_past_one_queues_it(
    daemon: Herd,
) -> None:
    daemon.cli("pause")  # the queue: a released job stays queued, to be seen
    job = daemon.submit("--", "true")
    held = daemon.cli("edit", str(job), "--begin", "+2h").stdout
    # "01:15" today, "Nov 30 01:15" after 22:00 (and "2027-01-01 01:15" at the year's end)
    assert re.fullmatch(rf"job {job}: edited \(begin none -> [\w :-]+\)\n", held), held
    shown = daemon.job(job)
    assert shown["state"] == "held" and shown["reason"].endswith("(--begin)")
    cleared = daemon.cli("edit", str(job), "--clear", "begin").stdout
    assert re.fullmatch(rf"job {job}: edited \(begin [\w :-]+ -> none, released\)\n", cleared)
    assert daemon.job(job)["state"] == "queued"
    daemon.cli("hold", str(job))  # held until released: no time to clear
    assert daemon.cli("edit", str(job), "--clear", "begin").stdout == f"job {job}: unchanged\n"
    past = daemon.cli("edit", str(job), "--begin", "2020-01-01").stdout  # why it was released
    assert past == f"job {job}: edited (begin none -> 2020-01-01 00:00, already past: released)\n"
    # The daemon's timer releases a job whose new time comes.
    daemon.cli("edit", str(job), "--begin", "+1s")
    released = daemon.wait_state(job, "queued", timeout=10)
    assert released["events"][-1]["detail"] == "its --begin time came"


def test_a_begin_time_replaces_a_hold_by_hand_and_says_so(shared_daemon: Herd) -> None:
    # A job has one hold, by `hold` or until a time, each replacing the other (`hold` drops a
    # time; a time that comes queues the job): the edit that gives a job held by hand a time
    # says it is held until then now, so a `--clear begin` that queues it is no surprise.
    job = shared_daemon.submit("--hold", "--", "true")
    given = shared_daemon.cli("edit", str(job), "--begin", "+2h").stdout
    assert re.fullmatch(
        rf"job {job}: edited \(begin none -> [\w :-]+: held until then, no longer until "
        r"released\)\n",
        given,
    )
    cleared = shared_daemon.cli("edit", str(job), "--clear", "begin").stdout
    assert re.fullmatch(rf"job {job}: edited \(begin [\w :-]+ -> none, released\)\n", cleared)
    assert shared_daemon.wait_state(job, "succeeded")
    # A job held until a time, given one already past: released, and the answer says why.
    # (Times 2 h on read `Nov 27 01:30` from 22:00 on: hence [\w :-]+, not only digits.)
    timed = shared_daemon.submit("--begin", "+2h", "--", "true")
    past = shared_daemon.cli("edit", str(timed), "--begin", "2020-01-01").stdout
    assert re.fullmatch(
        rf"job {timed}: edited \(begin [\w :-]+ -> 2020-01-01 00:00, already past: released\)\n",
        past,
    )
    assert shared_daemon.wait_state(timed, "succeeded")


@pytest.mark.parametrize("field", ["name", "project"])
def test_an_empty_name_or_project_is_refused_not_stored(shared_daemon: Herd, field: str) -> None:
    # `edit 5 --name "$RUN"` with RUN unset stored the name '' (`edited (name old -> )`), and
    # a project '' no `ls --project` could then pick; --clear unsets one.
    job = shared_daemon.submit("--hold", f"--{field}", "old", "--", "true")
    refused = shared_daemon.cli("edit", str(job), f"--{field}", "", check=False)
    assert refused.returncode == 2 and refused.stderr.splitlines() == [
        f"gpuherd: error: --{field} is empty: give a {field}, or --clear {field} to unset it "
        "(see gpuherd edit --help)"
    ]
    assert shared_daemon.job(job)[field] == "old"
    cleared = shared_daemon.cli("edit", str(job), "--clear", field).stdout
    assert cleared == f"job {job}: edited ({field} old -> none)\n"
    shared_daemon.cli("kill", str(job))

"""A pueue / task-spooler user's habits: `wait` for a group (here a project, a sweep or a
name), a followed job that crashes says so, `last` for the commands of one job, the other
tools' commands and options answered with what they are called here, and every listing of
the queue in the order it runs."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from conftest import Herd, Recorder, read_line, wait_for
from gpuherd.cli.main import cli, load_command
from gpuherd.cli.other_tools import SWEEP, THEIR_COMMANDS, THEIR_OPTIONS, TOP
from gpuherd.cli.sweep_cmds import RUN
from gpuherd.core.idspec import format_ids


def test_wait_for_a_project_waits_for_its_jobs_and_no_others(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    other = shared_daemon.submit("--project", "elsewhere", "--", recorder.cmd("other", wait="go"))
    wait_for(lambda: recorder.waiting("other") == 1, what="the other project's job to run")
    train = recorder.cmd("train", wait="go_train")
    fails = shared_daemon.submit("--project", "train", "--", f"{train}; exit 3")
    works = shared_daemon.submit("--project", "train", "--", train)
    wait_for(lambda: recorder.waiting("train") == 2, what="the project's jobs to run")

    # Its jobs run until told to go: the wait takes both (a job that ended before `wait`
    # looked, as a loaded machine's slow start let one, is not waited for), not the other's.
    timed_out = shared_daemon.cli("wait", "--project", "train", "--timeout", "1s", check=False)
    assert (timed_out.returncode, timed_out.stderr) == (
        2,
        f"gave up waiting; still unfinished: {format_ids([fails, works])}\n",
    )
    recorder.go("go_train")
    waited = shared_daemon.cli("wait", str(fails), str(works), check=False)
    assert (waited.returncode, waited.stdout, waited.stderr) == (
        1,
        "1 of 2 jobs succeeded\n",
        f"job {fails}: failed (exit 3)\n",
    )
    assert shared_daemon.job(works)["state"] == "succeeded"
    assert shared_daemon.job(other)["state"] == "running"  # not waited for

    # `gpuherd wait $(gpuherd ls -q --project train)` is `gpuherd wait` once none is left,
    # which waits for every job (the other project's too); the filter waits for none.
    none_left = shared_daemon.cli("wait", "--project", "train", "--name", "a b", timeout=10)
    assert none_left.stdout == (
        "nothing to wait for: no job of project train, name 'a b' is queued or running\n"
    )
    both = shared_daemon.cli("wait", str(fails), "--sweep", "lr", check=False)
    assert (both.returncode, both.stderr) == (
        2,
        "gpuherd: error: give job ids or --sweep lr, not both (see gpuherd wait --help)\n",
    )
    recorder.go()


def test_a_followed_job_that_fails_says_how_it_ended_and_where_its_stderr_is(
    shared_daemon: Herd,
) -> None:
    crash = shared_daemon.submit("--hold", "--", "echo step 1; echo Traceback >&2; exit 4")
    follow = shared_daemon.popen("log", "-f", str(crash))
    held = read_line(follow.stderr.fileno(), bytearray()).decode()  # type: ignore[union-attr]
    assert held.startswith(f"gpuherd: job {crash} has not started yet: held")  # it follows
    shared_daemon.cli("release", str(crash))
    out, err = follow.communicate(timeout=30)
    # The exit status stays 0: `log -f` printed the log; `gpuherd wait` tells how jobs end.
    assert (follow.returncode, out.decode(), err.decode()) == (
        0,
        "step 1\n",
        f"job {crash}: failed (exit 4); its stderr: gpuherd log {crash} --stderr\n",
    )
    quiet_crash = shared_daemon.submit("--", "exit 5")
    shared_daemon.wait_state(quiet_crash, "failed")
    again = shared_daemon.cli("log", "-f", str(quiet_crash))
    assert (again.stdout, again.stderr) == ("", f"job {quiet_crash}: failed (exit 5)\n")
    fine = shared_daemon.submit("--", "echo out; echo warning >&2")
    assert shared_daemon.cli("log", "-f", str(fine)).stderr == ""  # (stderr, but succeeded)

    followed = shared_daemon.cli(
        "submit", "-q", "--follow", "echo up; echo boom >&2; exit 6", check=False
    )
    job_id = shared_daemon.cli("ls", "-q", "--all").stdout.split()[-1]
    assert (followed.returncode, followed.stdout, followed.stderr) == (
        6,
        "up\n",
        f"job {job_id}: failed (exit 6); its stderr: gpuherd log {job_id} --stderr\n",
    )


def test_last_names_the_job_submitted_last_for_the_commands_of_one_job(
    shared_daemon: Herd,
) -> None:
    first = shared_daemon.submit("--hold", "--", "echo first")
    newest = shared_daemon.submit("--hold", "--", "echo newest")
    assert shared_daemon.json("show", "last")["id"] == newest
    assert shared_daemon.cli("priority", "last", "3").stdout == f"job {newest}: priority 3\n"
    # `tsp -u` (no id): the job submitted last goes to the front.
    assert shared_daemon.cli("move", "last", "--first").stdout.startswith(f"job {newest}: moved")
    moved = shared_daemon.cli("move", str(first), "--before", "last")
    assert moved.stdout == f"job {first}: moved before job {newest} (priority 0 -> 3)\n"
    shared_daemon.cli("release", str(newest))
    shared_daemon.wait_state(newest, "succeeded")
    assert shared_daemon.cli("log", "-f", "last").stdout == "newest\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["status"], "No such command 'status': gpuherd ls lists the jobs, --json for scripts"),
        (["switch", "3", "4"], "No such command 'switch': gpuherd move ID1 --swap ID2 swaps"),
        (["stash", "3"], "No such command 'stash': gpuherd hold IDS"),
        (["submit", "--label", "x", "--", "true"], "No such option '--label': use --name NAME"),
        (["submit", "--group", "g", "true"], "No such option '--group': use --project NAME"),
        (["submit", "-d", "true"], "No such option '-d': use --after-any last"),
        (["ls", "-g", "g"], "No such option '-g': use --project NAME"),
        (["clean", "-s"], "No such option '-s': use --state succeeded"),
        (["edit", "3", "--priority", "2"], "No such option '--priority': gpuherd priority ID P"),
        (["submit", "-g", "train", "--", "true"], "a group, as pueue's -g, is --project train"),
        # The table's other rows: task-spooler's verbs are flags of tsp itself, and Slurm's
        # sbatch options were answered with guesses (--nice: "'--file', '--name', '--quiet'?").
        (["-k", "3"], "No such option '-k': gpuherd kill IDS, or kill last: the job submitted"),
        (["-C"], "No such option '-C': gpuherd clean removes the finished jobs (tsp -C)"),
        (["-t", "3"], "No such option '-t': gpuherd log -f ID follows a job's output"),
        (["submit", "--nice=5", "--", "true"], "use --priority P, where higher runs first"),
        (["submit", "--job-name=x", "--", "true"], "No such option '--job-name': use --name"),
        (["submit", "--wrap", "true"], "No such option '--wrap': gpuherd submit -- CMD runs"),
        (["pause", "--wait"], "No such option '--wait': leave it out: gpuherd pause lets"),
        (["requeue", "3"], "No such command 'requeue': gpuherd retry IDS runs jobs again"),
        (["ls", "-o", "%i,%j,%T"], "No such option '-o': use --columns id,name,state,time"),
        (["ls", "--format=%i"], "No such option '--format': use --columns id,name,state"),
        # A group's command by the name of `gpuherd rm` (click said "No such command 'rm'.").
        (["gpus", "rm", "1"], "No such command 'rm': gpuherd gpus remove INDEX stops using"),
        (["gpus", "delete", "1"], "No such command 'delete': gpuherd gpus remove INDEX"),
        # Words of gpuherd's own listings, typed to a group (click said "No such command
        # 'list'." and nothing more), and `gpus disable`, told "Did you mean 'enable'?".
        (["gpus", "disable", "1"], "No such command 'disable': gpuherd gpus drain INDEX lets"),
        (["gpus", "list"], "No such command 'list': gpuherd gpus alone lists the GPUs"),
        (["gpus", "set", "0", "--slots", "2"], "gpuherd gpus add INDEX --slots N changes"),
        (["config", "show"], "No such command 'show': gpuherd config alone lists the settings"),
        # A sweep takes submit's job options by their long names, and submits without waiting
        # (click guessed: `sweep --wait`, "Did you mean '--after', '--quiet'?"; `sweep -f`
        # was told submit's `--follow`, which a sweep lacks).
        (["sweep", "echo {a}", "-p", "a", "1", "--wait"], "gpuherd wait --sweep NAME waits"),
        (["sweep", "echo {a}", "-p", "a", "1", "-f"], "gpuherd wait --sweep NAME waits"),
        (["sweep", "echo {a}", "-p", "a", "1", "-g", "2"], "No such option '-g': use --gpus N"),
        (["sweep", "x.yaml", "--file", "y"], "gpuherd sweep FILE.yaml runs a sweep file"),
        (["sweep", "x.yaml", "--nice=5"], "No such option '--nice': use --priority P"),
    ],
)
def test_another_tools_name_is_answered_with_what_it_is_called_here(
    herd: Herd, args: list[str], said: str
) -> None:
    assert said in herd.usage_error(*args)  # (no daemon: refused before asking one)


def test_the_hints_name_options_gpuherd_lacks_and_suggest_ones_it_has() -> None:
    for group, names in THEIR_COMMANDS.items():
        commands = cli if group == TOP else load_command(group)
        assert isinstance(commands, click.Group), group
        for name in names:
            found = load_command(name) if group == TOP else commands.commands.get(name)
            assert found is None, f"{group} {name} is a command: its hint would never show"
    for name, hints in THEIR_OPTIONS.items():
        command = load_command(name) if name != TOP else cli
        if name == SWEEP:  # `sweep TEMPLATE ...`: the options of its hidden command
            assert isinstance(command, click.Group)
            command = command.commands[RUN]
        assert command is not None
        flags = {flag for param in command.params for flag in getattr(param, "opts", ())}
        for option, hint in hints.items():
            assert option not in flags, f"{name} {option} exists: its hint would never show"
            suggested = hint.split()[0]
            assert not suggested.startswith("-") or suggested in flags, (name, hint)


@pytest.mark.parametrize("there", [True, False], ids=["a folder", "a folder not made yet"])
def test_pueues_w_for_the_jobs_folder_is_refused_not_run_as_the_command(
    daemon: Herd, there: bool
) -> None:
    """A folder not there yet, before the `--`, was queued as the command `/data/run3 --
    python train.py`, which failed with "not found"."""
    folder = daemon.home.parent if there else daemon.home.parent / "run3"
    refused = daemon.cli("submit", "-w", str(folder), "--", "echo", "hi", check=False)
    assert (refused.returncode, refused.stderr) == (
        2,
        f"gpuherd: error: the command starts with the folder {folder}: -w is --wait "
        f"here; the job's folder is --cwd {folder} (pueue's -w) (see gpuherd submit --help)\n",
    )
    assert daemon.client.get("/jobs", all=True)["jobs"] == []


def test_a_program_after_w_with_a_double_dash_of_its_own_runs(shared_daemon: Herd) -> None:
    ran = shared_daemon.cli("submit", "-w", "echo", "--", "hi", check=False)
    assert ran.returncode == 0, ran.stderr


@pytest.mark.parametrize("where", ["its --cwd", "its --env PATH", "a file here"])
def test_a_word_after_w_that_names_a_file_is_no_folder_not_made_yet(
    shared_daemon: Herd, tmp_path: Path, where: str
) -> None:
    """Not on this shell's PATH, yet no folder: `./run.sh` in the job's --cwd and a program
    on its --env PATH run (both were refused, as the folder ./run.sh); a file here (not a
    program: the job's shell says so) was called a folder, with `--cwd train.py` to give."""
    here, theirs = tmp_path / "here", tmp_path / "theirs"
    here.mkdir()
    theirs.mkdir()
    (theirs / "run.sh").write_text('#!/bin/sh\necho "ran $*"\n')
    (theirs / "run.sh").chmod(0o755)
    (here / "train.py").write_text("print('hi')\n")
    options = {
        "its --cwd": ["--cwd", str(theirs), "-w", "./run.sh"],
        "its --env PATH": ["--env", f"PATH={theirs}:/usr/bin:/bin", "-w", "run.sh"],
        "a file here": ["-w", "train.py"],
    }[where]
    ran = shared_daemon.cli("submit", *options, "--", "x", cwd=here, check=False)
    assert "folder" not in ran.stderr and ran.returncode != 2, ran.stderr
    job = shared_daemon.cli("log", "last", cwd=here).stdout
    assert job == ("" if where == "a file here" else "ran -- x\n")
    assert (ran.returncode == 0) is (where != "a file here"), ran.stderr


def test_every_listing_shows_waiting_jobs_in_the_order_they_start(daemon: Herd) -> None:
    daemon.cli("pause")  # the queue's dispatch: nothing starts, the order stays to be seen
    a, b, c, d = (daemon.submit("--", "true") for _ in range(4))
    daemon.cli("priority", str(d), "5")
    daemon.cli("move", str(c), "--first")  # before d: it takes d's priority
    e = daemon.submit("--hold", "--", "true")
    daemon.cli("move", str(e), "--first")  # a held job moved keeps its new place
    daemon.cli("hold", str(a))  # held where it was
    order = [e, c, d, a, b]

    def ids(*args: str) -> list[int]:
        return [int(i) for i in daemon.cli("ls", "-q", *args).stdout.split()]

    assert [job["id"] for job in daemon.json("ls")] == order
    assert [job["id"] for job in daemon.json("ls", "--state", "queued")] == [c, d, b]
    assert [job["id"] for job in daemon.json("ls", "--state", "held")] == [e, a]
    assert ids() == ids("--all") == ids("--state", "queued", "--state", "held") == order
    assert ids("--state", "held") == [e, a]
    table = daemon.cli("ls", "--state", "queued", "--limit", "2").stdout.splitlines()
    assert [int(line.split()[0]) for line in table[1:3]] == [c, d] and "1 more" in table[-1]
    # The dashboard's jobs table, filtered to the waiting jobs, lists them so and says so.
    page = daemon.page("/jobs?state=queued&state=held")
    assert [int(i) for i in re.findall(r'<tr id="job-(\d+)"', page)] == order
    assert "1–5 of 5, in the order they start" in page
    assert "1–5 of 5, newest first" in daemon.page("/jobs")


def test_a_list_split_by_spaces_and_a_name_short_of_its_pattern_are_answered_with_the_fix(
    shared_daemon: Herd,
) -> None:
    split = shared_daemon.cli("config", "set", "project-limits", "g=1", "h=2", check=False)
    assert (split.returncode, split.stderr) == (
        2,
        "gpuherd: error: project-limits takes one value, not 2: separate them with commas: "
        "gpuherd config set project-limits g=1,h=2 (see gpuherd config set --help)\n",
    )
    spaced = shared_daemon.cli("config", "set", "on-end", "notify-send", "done", check=False)
    assert spaced.returncode == 2
    assert (
        "on-end takes one value, not 2: quote it: gpuherd config set on-end 'notify-send done'"
        in spaced.stderr
    )
    assert shared_daemon.cli("config", "get", "project-limits").stdout == "none\n"  # unchanged

    shared_daemon.submit("--hold", "--name", "qa-resnet-50", "--", "true")
    assert shared_daemon.cli("ls", "--name", "qa-resnet").stdout == (
        "no jobs match: none is named qa-resnet; --name 'qa-resnet*' finds the names that "
        "start with qa-resnet\n"
    )
    assert shared_daemon.cli("ls", "--name", "qa-vgg").stdout == "no jobs match\n"
    assert shared_daemon.cli("ls", "--name", "qa-resnet", "--state", "running").stdout == (
        "no jobs match\n"  # (no running one would match the pattern either)
    )

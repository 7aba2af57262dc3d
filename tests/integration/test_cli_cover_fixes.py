"""What a pass over the whole CLI against its docs found (real CLI, real daemons):
`priority $(gpuherd ls -q --sweep lr) 5` with no point left was refused as a priority not
given; `config --json get` printed text; command-line mistakes that exited 1 (an empty
command or template, `--executor local --address`); `sweep --json ls` told to give a
template; `daemon backup -` wrote a file named `-`; the restore steps of `daemon backup
--help` failed after a clean stop; and options without help text."""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from conftest import Herd
from gpuherd.cli.main import cli

NONE_TO_CHANGE = "no job ids given: nothing to change (e.g. gpuherd priority 3-7 10)\n"


def test_priority_of_a_sweep_with_no_point_left_changes_nothing_as_kill(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    sweep = ["sweep", "echo {x}", "-p", "x", "1", "2", "--gpus", "0", "--name", "gone", "-q"]
    herd.cli(*sweep, cwd=tmp_path)
    herd.cli("sweep", "wait", "gone", "-q")
    # The help's own example, its $(...) empty: the priority alone is left.
    left = herd.cli("ls", "-q", "--sweep", "gone").stdout.split()
    assert left == []
    for priority in ("5", "-3", "0"):
        said = herd.cli("priority", *left, priority, check=False)
        assert (said.returncode, said.stdout, said.stderr) == (0, NONE_TO_CHANGE, "")
    # As kill and edit answer it.
    assert herd.cli("kill", *left).stdout.startswith("no job ids given: nothing to kill")
    # A lone number is the priority, not a job: that job keeps its own.
    held = herd.submit("--hold", "--priority", "2", "--", "true")
    assert herd.cli("priority", str(held)).stdout == NONE_TO_CHANGE
    assert herd.job(held)["priority"] == 2
    # Job ids without P are still a mistake, its example keeping them.
    assert herd.usage_error("priority", str(held) + "-" + str(held)).startswith(
        "gpuherd: error: no priority given: gpuherd priority IDS P takes job ids, then a whole "
        f"number P (higher runs first), e.g. gpuherd priority {held}-{held} 10"
    )
    herd.cli("kill", str(held))


@pytest.mark.parametrize(
    "args", [["get", "retries"], ["set", "retries", "3"], ["unset", "retries"]]
)
def test_config_json_with_a_sub_command_is_refused_as_gpus_json_is(
    shared_daemon: Herd, args: list[str]
) -> None:
    before = shared_daemon.cli("config", "get", "retries").stdout
    assert shared_daemon.usage_error("config", "--json", *args) == (
        f"gpuherd: error: --json goes with `gpuherd config` alone, not with `config {args[0]}`: "
        "drop it (see gpuherd config --help)\n"
    )
    assert shared_daemon.cli("config", "get", "retries").stdout == before  # nothing set
    assert "retries" in shared_daemon.json("config")  # --json alone: the settings as JSON
    assert shared_daemon.usage_error("gpus", "--json", "drain", "0") == (
        "gpuherd: error: --json goes with `gpuherd gpus` alone, not with `gpus drain`: drop it "
        "(see gpuherd gpus --help)\n"
    )


EMPTY_COMMAND = "the command is empty: gpuherd submit -- python train.py"
EMPTY_TEMPLATE = (
    "invalid sweep: command: empty; give the command to run for each point, with placeholders "
    'such as "python train.py --lr {lr}"'
)
ADDRESS_LOCAL = (
    "--address is for --executor ray: drop --executor local to run jobs on the Ray cluster "
    "there, or drop --address to run them on this machine"
)


@pytest.mark.parametrize(
    ("args", "said", "help_of"),
    [
        (["submit", "--", ""], EMPTY_COMMAND, "submit"),
        (["submit", "   "], EMPTY_COMMAND, "submit"),
        (["submit", "--gpus", "0", "--", " "], EMPTY_COMMAND, "submit"),
        (["sweep", ""], EMPTY_TEMPLATE, "sweep"),
        (["sweep", " ", "-p", "x", "1", "2"], EMPTY_TEMPLATE, "sweep"),
        (
            ["daemon", "start", "--executor", "local", "--address", "1.2.3.4:5"],
            ADDRESS_LOCAL,
            "daemon start",
        ),
        (
            ["daemon", "start", "--address", "1.2.3.4:5", "--slots", "2"],
            "--gpus, --fake-gpus and --slots are for the local executor (a Ray cluster's GPUs "
            "are the ones its nodes declare): drop them, or drop --address to run jobs here",
            "daemon start",
        ),
    ],
    ids=[
        "submit-empty",
        "submit-blank",
        "submit-options",
        "sweep",
        "sweep-p",
        "executor",
        "executor-slots",
    ],
)
def test_an_empty_command_or_clashing_executor_is_a_usage_error(
    herd: Herd, args: list[str], said: str, help_of: str
) -> None:
    # Refused before any daemon is asked (none runs here: that was exit 3), or started.
    assert herd.usage_error(*args) == f"gpuherd: error: {said} (see gpuherd {help_of} --help)\n"
    assert not herd.is_up()
    assert not (herd.home / "herd.db").exists()


def test_an_empty_command_is_refused_with_a_daemon_running_too(shared_daemon: Herd) -> None:
    """With a daemon, the refusal was the daemon's: exit 1, as of a job it cannot take."""
    before = len(shared_daemon.all_jobs())
    for args in (["submit", "--", ""], ["sweep", ""]):
        assert shared_daemon.usage_error(*args).startswith("gpuherd: error: ")
    assert len(shared_daemon.all_jobs()) == before


@pytest.mark.parametrize(
    ("args", "meant"),
    [
        (["--json", "ls"], "--json goes after the sub-command: gpuherd sweep ls --json"),
        (["-q", "status", "s1"], "-q goes after the sub-command: gpuherd sweep status s1 -q"),
        (
            ["--timeout", "5m", "-q", "wait", "s1"],
            "--timeout -q go after the sub-command: gpuherd sweep wait s1 --timeout 5m -q",
        ),
    ],
)
def test_a_verbs_option_before_it_is_told_to_go_after_it(
    herd: Herd, args: list[str], meant: str
) -> None:
    assert herd.usage_error("sweep", *args) == (
        f"gpuherd: error: {meant} (see gpuherd sweep --help)\n"
    )


def test_a_sweeps_own_options_before_its_template_are_not_taken_for_a_verb(herd: Herd) -> None:
    # `--name ls`: no option of `sweep ls`; the template comes next, as before.
    dry = herd.cli("sweep", "--name", "ls", "--dry-run", "echo {x}", "-p", "x", "1")
    assert dry.stdout.splitlines()[0].endswith("echo 1"), dry.stdout


def test_a_backup_to_dash_is_refused_and_writes_no_file(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    refused = shared_daemon.cli("daemon", "backup", "-", check=False, cwd=tmp_path)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        "gpuherd: error: FILE is -: the backup is a database file, it cannot go to standard "
        "output; give a file name, such as herd-backup.db (./- for a file named -) "
        "(see gpuherd daemon backup --help)\n"
    )
    assert list(tmp_path.iterdir()) == []
    # A file named so, as written: ./-
    shared_daemon.cli("daemon", "backup", "./-", cwd=tmp_path)
    assert (tmp_path / "-").stat().st_size > 0


def test_the_restore_steps_of_backup_help_work_as_written_after_a_clean_stop(
    daemon: Herd, tmp_path: Path
) -> None:
    job = daemon.submit("--hold", "--", "echo kept")
    backup = tmp_path / "queue.db"
    daemon.cli("daemon", "backup", str(backup))
    helped = " ".join(daemon.cli("daemon", "backup", "--help").stdout.split())
    moves = [step for step in re.findall(r"`([^`]*)`", helped) if " mv " in f" {step}"]
    assert len(moves) == 1, helped  # the steps name the one command that sets files aside
    daemon.cli("daemon", "stop")
    assert not (daemon.home / "herd.db-wal").exists()  # a clean stop leaves none
    steps = f"set -e; {moves[0]}; cp {shlex.quote(str(backup))} herd.db"
    subprocess.run(["sh", "-c", steps], cwd=daemon.home, check=True, timeout=30)
    assert (daemon.home / "aside" / "herd.db").exists()
    daemon.start("--fake-gpus", "4")
    assert daemon.job(job)["command"] == "echo kept"


def _commands() -> Iterator[tuple[str, click.Command]]:
    # Each context with its command's settings, as click makes them: click keeps the help
    # option of the first context that asks for it, and one made without `-h` in
    # help_option_names left the real `gpuherd --help` showing `--help` alone (a test
    # comparing it with the commands' own help failed after this one, in one worker).
    def walk(command: click.Command, ctx: click.Context) -> Iterator[tuple[str, click.Command]]:
        yield ctx.command_path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                settings = sub.context_settings
                yield from walk(sub, click.Context(sub, parent=ctx, info_name=name, **settings))

    yield from walk(cli, click.Context(cli, info_name="gpuherd", **cli.context_settings))


def test_every_option_has_help_text() -> None:
    """`daemon log -n`, `ray-local --nodes` and `--gpus-per-node` showed their default alone."""
    bare = [
        f"{path} {option.opts[-1]}"
        for path, command in _commands()
        for option in command.params
        if isinstance(option, click.Option) and not option.hidden and not option.help
    ]
    assert bare == []

"""Options `submit`, `run` and `sweep` share are declared once (cli/options.py): the same
names, types, defaults and parsing in each; only the words of their help name what they
apply to. And the wire's JobOptions: what a job and a sweep's jobs are given alike."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gpuherd.cli.job_cmds import submit
from gpuherd.cli.queue_cmds import edit
from gpuherd.cli.run_cmd import run
from gpuherd.cli.sweep_args import build
from gpuherd.cli.sweep_cmds import RUN, sweep
from gpuherd.wire import JobOptions, SubmitItem
from gpuherd.wire_requests import SweepOptions

SHARED = {
    "gpus": ("submit", "sweep"),
    "gpus_per_job": ("run",),
    "mem": ("submit", "run", "sweep"),
    "ram": ("submit", "run", "sweep"),
    "oom_retry": ("submit", "run", "sweep"),
    "priority": ("submit", "sweep"),
    "after": ("submit", "sweep"),
    "retries": ("submit", "sweep"),  # run's defaults to 0: no daemon, no `config retries`
    "timeout": ("submit", "run", "sweep"),
    "grace": ("submit", "sweep"),
    "hold": ("submit", "sweep"),
    "project": ("submit", "sweep"),
    "max_parallel": ("run", "sweep"),
    "cwd": ("submit", "sweep"),
    "env_pairs": ("submit", "sweep"),
    "quiet": ("submit", "sweep"),
}


def commands() -> dict[str, click.Command]:
    assert isinstance(sweep, click.Group)
    return {"submit": submit, "run": run, "sweep": sweep.commands[RUN]}


def option(command: click.Command, name: str) -> click.Option:
    found = [p for p in command.params if p.name == name]
    assert len(found) == 1 and isinstance(found[0], click.Option), (command.name, name)
    return found[0]


def shape(opt: click.Option) -> tuple[object, ...]:
    return (
        tuple(opt.secondary_opts),
        json.dumps(opt.type.to_info_dict(), sort_keys=True, default=str),
        opt.default,
        opt.multiple,
        opt.is_flag,
        opt.nargs,
    )


@pytest.mark.parametrize("name", sorted(SHARED))
def test_a_shared_option_parses_the_same_in_every_command(name: str) -> None:
    declared = [option(commands()[c], name) for c in SHARED[name]]
    assert len({shape(o) for o in declared}) == 1, name
    # The same long flags; submit alone adds short ones (-n, -g, -p, -a), as tsp users type.
    longs = {tuple(flag for flag in o.opts if flag.startswith("--")) for o in declared}
    assert len(longs) == 1 or name.startswith("gpus")


@pytest.mark.parametrize(
    ("name", "flags"),
    [
        ("hold", ["--hold", "--no-hold"]),
        ("exclusive", ["--exclusive", "--no-exclusive"]),
        ("oom_retry", ["--oom-retry", "--no-oom-retry"]),
    ],
)
def test_a_switch_has_its_off_form_everywhere(name: str, flags: list[str]) -> None:
    # Without it, `gpuherd sweep night.yaml` could not turn off the file's `hold: true`.
    takes = [c for c in commands().values() if any(p.name == name for p in c.params)]
    assert len(takes) >= 2  # submit and sweep, and run but for --hold
    for command in takes:
        declared = option(command, name)
        assert [*declared.opts, *declared.secondary_opts] == flags, command.name
        assert declared.default is False


def test_a_switch_turned_off_on_the_command_line_wins_over_a_sweep_file(tmp_path: Path) -> None:
    path = tmp_path / "night.yaml"
    path.write_text("command: echo {x}\ngrid: {x: [1]}\nhold: true\nexclusive: true\n")
    path.with_name("later.yaml").write_text("command: echo {x}\ngrid: {x: [1]}\nbegin: '+1h'\n")
    run_sweep = commands()["sweep"]

    def options(*args: str) -> SweepOptions:
        ctx = run_sweep.make_context("sweep", list(args))
        return build(ctx, args[0], [], ctx.params)[1]

    night = str(path)
    assert (options(night).hold, options(night).exclusive) == (True, True)
    off = options(night, "--no-hold", "--no-exclusive", "--oom-retry")
    assert (off.hold, off.exclusive, off.oom_retry) == (False, False, True)
    # One choice, as --hold and --begin: not held, nor until the file's time.
    assert options(str(path.with_name("later.yaml")), "--no-hold").begin is None


def test_sweeps_cwd_help_says_a_sweep_files_cwd_is_the_default() -> None:
    said = option(commands()["sweep"], "cwd").help
    assert said == "Working directory (default: the sweep file's cwd, else the current one)."
    assert option(submit, "cwd").help == "Working directory (default: the current one)."


@pytest.mark.parametrize("pair", ["1A=x", "A-B=x", "A B=x"])
def test_env_names_are_checked_by_the_rule_python_and_sweep_files_use(pair: str) -> None:
    result = CliRunner().invoke(submit, ["--env", pair, "--", "true"])
    assert result.exit_code == 2
    name = pair.split("=")[0]
    assert result.output.endswith(
        f"Error: --env: invalid variable '{pair}': '{name}' is not an environment variable name:"
        " use letters, digits and _, not starting with a digit (e.g. SEED)\n"
    )


def test_run_retries_differ_only_by_their_default() -> None:
    daemon, alone = option(submit, "retries"), option(run, "retries")
    assert (daemon.default, alone.default) == (None, 0)
    assert shape(daemon)[:2] == shape(alone)[:2]


def test_the_gpus_options_differ_only_by_their_flag() -> None:
    gpus, per_job = option(submit, "gpus"), option(run, "gpus_per_job")
    assert (gpus.opts, per_job.opts) == (["-g", "--gpus"], ["--gpus-per-job"])
    assert shape(gpus) == shape(per_job)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--retries", "-1"], "--retries: -1 is out of range: use a whole number from 0 up"),
        (
            ["--timeout", "soon"],
            "--timeout: invalid duration 'soon': use a number of seconds or a value like 90s, "
            "10m, 2h, 1h30m, 2:00:00 ([D-]HH:MM:SS or MM:SS)",
        ),
        (["--gpus", "65"], "--gpus: 65 is out of range: use a whole number from 0 to 64"),
    ],
)
def test_a_bad_value_is_refused_by_submit_and_sweep_alike(args: list[str], said: str) -> None:
    # In gpuherd's words, the option first (no more click's "Invalid value for '--retries'").
    runner = CliRunner()
    for command, rest in ((submit, ["--", "true"]), (sweep, ["echo {a}", "-p", "a", "1"])):
        result = runner.invoke(command, [*args, *rest])
        assert result.exit_code == 2, (command.name, args, result.output)
        assert result.output.endswith(f"\nError: {said}\n"), result.output


@pytest.mark.parametrize(
    ("command", "args", "said"),
    [
        (submit, ["--cwd", "", "--", "true"], "--cwd is empty: give a folder that exists"),
        (sweep, ["echo {a}", "-p", "a", "1", "--cwd", ""], "--cwd is empty"),
        (edit, ["7", "--cwd", ""], "--cwd is empty: give a folder that exists, or leave --cwd"),
        (run, ["--times-from", "", "jobs.txt"], "--times-from is empty: give a folder"),
        (run, ["--gpu-file", "", "jobs.txt"], "--gpu-file is empty: give a file"),
        (edit, ["7", "--command", ""], "--command is empty: give the new command line"),
    ],
)
def test_an_empty_folder_or_command_is_refused_not_taken_as_the_current_one(
    command: click.Command, args: list[str], said: str
) -> None:
    # `--cwd "$DIR"` with DIR unset: click made '' the current folder, so `edit 7 --cwd ''`
    # moved job 7 to wherever the edit was typed, without a word.
    result = CliRunner().invoke(command, args)
    assert result.exit_code == 2, (command.name, args, result.output)
    assert f"\nError: {said}" in result.output, result.output


def test_job_options_copies_the_shared_fields_alone() -> None:
    options = SweepOptions(gpus=2, after=[3], env_overrides={"A": "1"}, max_parallel=4)
    given = options.job_options()
    assert set(given) == {f.name for f in fields(JobOptions)}
    assert "max_parallel" not in given and "order" not in given
    item = SubmitItem(command="true", cwd="/", **given)
    assert (item.gpus, item.after, item.env_overrides) == (2, [3], {"A": "1"})
    item.after.append(4)
    item.env_overrides["B"] = "2"
    assert (options.after, options.env_overrides) == ([3], {"A": "1"})


def test_submit_items_and_sweep_options_share_every_job_option() -> None:
    shared = {f.name for f in fields(JobOptions)}
    assert shared <= {f.name for f in fields(SubmitItem)}
    assert shared <= {f.name for f in fields(SweepOptions)}
    with pytest.raises(TypeError):
        SubmitItem("true", "/")  # type: ignore[misc]  # keywords only


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--name", "x", "--clear", "name"], "--name and --clear name given together"),
        (["--env", "A=1", "--clear", "env"], "--env and --clear env given together"),
        (["--only-gpus", "0", "--clear", "only_gpus"], "--only-gpus and --clear only_gpus"),
        (["--clear", "after", "--after", "3"], "--after and --clear after given together"),
    ],
)
def test_edit_setting_and_clearing_one_field_is_a_usage_error(args: list[str], said: str) -> None:
    # As --hold with --no-hold: a mistake of the command line, exit 2 before any daemon is
    # asked (the daemon's refusal of it was exit 1, in words naming no option).
    result = CliRunner().invoke(edit, ["7", *args])
    assert result.exit_code == 2, result.output
    assert f"\nError: {said}" in result.output, result.output


def test_a_grace_left_out_is_the_daemons_setting() -> None:
    """Sent as None (the daemon's `config grace`), where click's default sent 10 s always."""
    for command in (submit, sweep.commands[RUN]):
        grace = option(command, "grace")
        assert grace.default is None and not grace.show_default
        assert "the daemon's `grace` setting, 10s unless changed]" in (grace.help or "")

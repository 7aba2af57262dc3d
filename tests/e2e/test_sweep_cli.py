"""`gpuherd sweep` as a user types it, with no daemon: dry runs, pipes, and bad sweep files.

Every call is `python -m gpuherd` forked by the worker's fork server (Runs.gpuherd, Runs.run):
the same program as the console script, without an interpreter's start and imports each
(tests/e2e/test_run_cli.py and test_cli_errors.py run the console scripts themselves). A
dry run "piped" into `gpuherd run` gives `run` the dry run's whole output as its input."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Runs

RECORD = (
    "mkdir -p {run_dir} && python3 -c "
    + shlex.quote(
        "import os, sys; open(sys.argv[1] + '/ran', 'w').write("
        "os.environ['CUDA_VISIBLE_DEVICES'] + ' ' + sys.argv[2])"
    ).replace("{", "{{")
    + " {run_dir} {x}"
)


def sweep(runs: Runs, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`gpuherd sweep ARGS` (stdin: the test's own, as a command typed in a shell)."""
    return runs.gpuherd("sweep", *args, input=None, cwd=cwd)


def piped(
    runs: Runs, sweep_args: list[str], run_args: list[str]
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """`gpuherd sweep SWEEP_ARGS | gpuherd run RUN_ARGS`: the dry run (which must succeed)
    and the run that read its output."""
    dry = sweep(runs, *sweep_args)
    assert dry.returncode == 0, dry.stderr
    return dry, runs.run(*run_args, input=dry.stdout)


def test_dry_run_pipes_into_the_one_shot_runner(runs: Runs) -> None:
    dry, done = piped(
        runs,
        [RECORD, "-p", "x", "a", "b c", "3", "--name", "pipe", "--dry-run"],
        ["--gpus", "0,1,2", "--output-dir", "out"],
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "3 succeeded, 0 failed" in done.stdout
    assert "3 commands of sweep pipe (dry run: nothing submitted)" in dry.stderr
    results = runs.cwd / "results" / "pipe"
    seen = {folder.name: (folder / "ran").read_text().split(" ", 1) for folder in results.iterdir()}
    assert {name: value for name, (_, value) in seen.items()} == {
        "x=a": "a",
        "x=b_c~" + next(n for n in seen if n.startswith("x=b_c~"))[6:]: "b c",
        "x=3": "3",
    }
    assert sorted(gpu for gpu, _ in seen.values()) == ["0", "1", "2"]
    assert not (results / "x=a" / "params.json").exists()  # a dry run writes nothing


def test_dry_run_prints_one_command_a_line_in_grid_order(runs: Runs) -> None:
    done = sweep(runs, "echo {a} {b}", "-p", "a", "1", "-2", "x y", "-p", "b", "0.5", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["echo 1 0.5", "echo -2 0.5", "echo 'x y' 0.5"]
    shuffled = sweep(runs, "echo {a}", "-p", "a", *map(str, range(20)), "--shuffle", "--dry-run")
    assert "seed " in shuffled.stderr and "(chosen;" in shuffled.stderr
    assert sorted(shuffled.stdout.splitlines()) == sorted(f"echo {i}" for i in range(20))


def test_a_signed_or_negative_zero_number_is_its_text_in_a_file_as_on_the_command_line(
    runs: Runs,
) -> None:
    # `-p x +5` gave `echo +5`, while a YAML file's `+5` was the number 5: `echo 5`, and one
    # point with a `5` beside it ("value 5 is given twice"). Both keep the text written.
    values = ["+5", "5", "-0", "0", "-3"]
    expected = ["echo +5", "echo 5", "echo -0", "echo 0", "echo -3"]
    typed = sweep(runs, "echo {x}", "-p", "x", *values, "--dry-run")
    assert (typed.returncode, typed.stdout.splitlines()) == (0, expected), typed.stderr
    (runs.cwd / "s.yaml").write_text(f"command: echo {{x}}\ngrid: {{x: [{', '.join(values)}]}}\n")
    written = sweep(runs, "s.yaml", "--dry-run")
    assert (written.returncode, written.stdout.splitlines()) == (0, expected), written.stderr
    assert "given twice" not in written.stderr


def test_dry_run_with_json_prints_the_submission_json_with_the_commands(runs: Runs) -> None:
    # It printed the plain commands, one a line: `--json` was ignored.
    args = ("echo {a}", "-p", "a", "1", "x y", "-p", "unused", "0", "--name", "dj", "--dry-run")
    done = sweep(runs, *args, "--json", "--samples", "2", "--seed", "7")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    commands = said.pop("commands")
    assert set(commands) == {"echo 1", "echo 'x y'"}  # 2 of 2 points, in the seed's order
    # (as a submission says it: the dry run left out "it only names folders")
    warning = "parameter 'unused' does not appear in the command: it only names folders"
    assert said == {
        "name": "dj",
        "results_dir": str(runs.cwd / "results" / "dj"),
        "seed": 7,
        "seed_chosen": False,
        "points": 2,
        "ids": [],
        "cancelled": [],
        "dry_run": True,
        "warnings": [warning],
    }
    assert done.stderr == f"gpuherd: warning: {warning}\n"  # as a submission with --json
    plain = sweep(runs, *args, "--samples", "2", "--seed", "7")
    assert plain.stdout.splitlines() == commands  # the same points, in the same order
    assert not (runs.cwd / "results").exists()  # nothing written
    chosen = json.loads(
        sweep(runs, "echo {a}", "-p", "a", "1", "2", "--shuffle", "--dry-run", "--json").stdout
    )
    assert chosen["seed_chosen"] is True and isinstance(chosen["seed"], int)


BAD_FILES = {
    "unknown key": (
        "name: x\ncommand: echo {a}\ngrid:\n  a: [1, 2]\ngpu: 2\n",
        "bad.yaml:5: unknown key 'gpu' (did you mean 'gpus'?); known keys: name, command,",
    ),
    "missing placeholder": (
        "name: x\ncommand: echo {b}\ngrid:\n  a: [1, 2]\n",
        "placeholder {b} is not a parameter",
    ),
    "empty values": ("name: x\ncommand: echo {a}\ngrid:\n  a: []\n", "bad.yaml:4: grid.a"),
    "invalid yaml": ("name: x\ncommand: echo {a}\ngrid: {a: [1, 2}\n", "invalid YAML"),
    "not a mapping": ("- 1\n- 2\n", "must be a mapping"),
    "key given twice": (
        "command: echo {x}\ngrid: {x: [1, 2], x: [3]}\n",
        "bad.yaml:2: key 'x' is given twice in one mapping: give each key once",
    ),
    "list for a distribution": (
        "command: echo {x}\nsamples: 1\nrandom: {x: [1, 2, 3]}\n",
        "bad.yaml:3: random.x: a list is not a distribution: give choice: [values]",
    ),
    # It printed an empty line as a dry run (exit 0), with a warning that x is unused.
    "no command": (
        "grid: {x: [1, 2]}\n",
        "bad.yaml: no command: give the command each point runs, with placeholders for the",
    ),
    "broken exclude": (
        "command: echo {x}\ngrid: {x: [1]}\nexclude: x ===\n",
        "exclude: expression 'x ===': not a Python expression (invalid syntax at column 5)",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_sweep_file_gives_one_clear_line(runs: Runs, case: str) -> None:
    text, expected = BAD_FILES[case]
    (runs.cwd / "bad.yaml").write_text(text)
    for extra in ([], ["--dry-run"]):  # (no daemon runs: refused before it is asked)
        done = sweep(runs, "bad.yaml", *extra)
        assert done.returncode == 1
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith("gpuherd: error: ") and expected in done.stderr, done.stderr


def test_other_mistakes_are_one_line_too(runs: Runs, tmp_path: Path) -> None:
    (runs.cwd / "ok.toml").write_text('command = "echo {a}"\n[[grid]]\na = [1, 2]\n')
    cases = [
        (["nosuch.yaml"], "nosuch.yaml: cannot read the sweep file: No such file or directory\n"),
        (["ok.toml", "-p", "a", "1"], "give the parameters in the sweep file, or -p, not both"),
        (["echo {a}", "-p"], "-p needs a NAME and values"),
        (["echo {a}", "-p", "a", "1", "-p", "a", "2"], "-p a given twice"),
        (["echo {a}", "-p", "a", "1", "--samples", "5", "--dry-run"], "samples: 5 asked"),
        (["echo {a}", "-p", "a", "1", "--name", "a/b"], "name: 'a/b' must not be . or .., nor"),
        # results/.. would be the working folder itself
        (["echo {a}", "-p", "a", "1", "--name", ".."], "name: '..' must not be . or .., nor"),
        (["status", "x"], "no gpuherd daemon is running"),
        (["status", "x", "--csv", "--json"], "give --csv or --json, not both"),  # (was JSON)
    ]
    for args, expected in cases:
        done = sweep(runs, *args)
        assert done.returncode != 0, args
        assert len(done.stderr.splitlines()) == 1 and expected in done.stderr, (args, done.stderr)
    toml = sweep(runs, "ok.toml", "--dry-run")
    assert toml.returncode == 0 and toml.stdout.splitlines() == ["echo 1", "echo 2"]


def test_the_digits_example_expands_and_one_point_trains(runs: Runs, tmp_path: Path) -> None:
    """examples/sweep.yaml: 8 points; one of them really trains and writes its metrics."""
    repo = Path(__file__).resolve().parents[2]
    done = sweep(runs, "examples/sweep.yaml", "--dry-run", cwd=repo)
    assert done.returncode == 0, done.stderr
    commands = done.stdout.splitlines()
    assert len(commands) == 8 and "--model logreg --C 0.01 --hidden 32" in commands[0]
    point = commands[0].replace(str(repo / "results" / "digits"), str(tmp_path))
    # Its `python3` is the one gpuherd is installed for, as in a user's activated venv (this
    # machine's own python3 on PATH has no gpuherd: ModuleNotFoundError).
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    env = {**runs.env, "PATH": path}
    ran = subprocess.run(
        point, shell=True, cwd=repo, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    metrics = json.loads((tmp_path / "model=logreg,C=0.01" / "metrics.json").read_text())
    assert set(metrics) == {"val_acc", "train_time"} and 0.8 < metrics["val_acc"] <= 1.0


UNUSABLE_FILES = {
    "deep.yaml": (
        "command: echo {x}\ngrid:\n  x: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "deep.yaml:3: nested too deeply",
    ),
    "deep.toml": (
        'command = "echo {x}"\n[grid]\nx = ' + "[" * 5000 + "]" * 5000 + "\n",
        "deep.toml: nested too deeply",
    ),
    "types.toml": (
        'command = "echo {x}"\n[grid]\nx = [1, 1979-05-27T07:32:00Z]\n',
        "types.toml: grid.x[1]: 1979-05-27T07:32:00+00:00 is a date and time: values must be",
    ),
    "circ.yaml": (
        "command: echo {x} {y}\nfixed: &f {y: *f}\ngrid: {x: [1]}\n",
        "circ.yaml:2: fixed.y: holds itself",
    ),
    "laughs.yaml": (
        "command: echo {x}\nfixed:\n  a0: &a0 ["
        + ",".join(["lol"] * 9)
        + "]\n"
        + "".join(f"  a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9))
        + "grid: {x: [1]}\n",
        "laughs.yaml: more than 200,000 values",
    ),
}


@pytest.mark.parametrize("name", sorted(UNUSABLE_FILES))
def test_files_too_deep_too_big_or_not_json_are_one_line(runs: Runs, name: str) -> None:
    """Refused as the file is read: the same line for a dry run and a submission (which
    fails here before it looks for a daemon: none runs)."""
    text, expected = UNUSABLE_FILES[name]
    (runs.cwd / name).write_text(text)
    for extra in (["--dry-run"], ["-q"]):
        done = sweep(runs, name, *extra)
        assert done.returncode == 1 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith(f"gpuherd: error: {expected}"), done.stderr


def test_a_json_sweep_file_is_a_file_not_a_template(runs: Runs) -> None:
    (runs.cwd / "s.json").write_text('{"command": "echo {x}", "grid": {"x": [1, "a b"]}}\n')
    done = sweep(runs, "s.json", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["echo 1", "echo 'a b'"]
    assert "2 commands of sweep s" in done.stderr


def test_cli_messages_name_the_cli_options_and_commands(runs: Runs) -> None:
    samples = sweep(runs, "echo {x}", "-p", "x", "1", "--samples", "0")
    assert samples.returncode == 2
    assert samples.stderr.strip().endswith("(see gpuherd sweep --help)"), samples.stderr
    assert sweep(runs, "--help").returncode == 0  # the command the hint names
    # Counted before the daemon is asked (none runs here), in the CLI's words.
    three = ["-p", "a", *map(str, range(200)), "-p", "b", *map(str, range(200))]
    confirm = sweep(runs, "echo {a}{b}", *three)
    assert confirm.returncode == 1 and len(confirm.stderr.splitlines()) == 1
    assert "40,000 points, more than 10,000: pass --yes to submit them all, or narrow it" in (
        confirm.stderr
    )
    assert "(--samples N)" in confirm.stderr and "yes=True" not in confirm.stderr
    huge = sweep(runs, "echo {a}{b}{c}", *three, "-p", "c", *map(str, range(80)), "--yes")
    assert huge.returncode == 1, huge.stderr
    assert huge.stderr == (
        "gpuherd: error: sweep 'echo-c02131' has 3,200,000 points, more than 1,000,000"
        " (the most a sweep may have): narrow it, or draw some of them (--samples N)\n"
    )
    # --samples draws from it without listing it (it was refused: "grid: 3200000 points").
    c_values = ["-p", "c", *map(str, range(80))]
    drawn = sweep(runs, "echo {a}-{b}-{c}", *three, *c_values, "--samples", "1500", "--dry-run")
    assert drawn.returncode == 0, drawn.stderr
    assert len(set(drawn.stdout.splitlines())) == 1500
    assert "1,500 commands of sweep echo-" in drawn.stderr


@pytest.mark.parametrize("name", ["", "../../etc", " x"])
def test_status_of_a_name_no_sweep_can_have(runs: Runs, name: str) -> None:
    done = sweep(runs, "status", name)
    assert done.returncode == 1
    assert done.stderr == (
        f"gpuherd: error: no sweep named {name!r}: `gpuherd sweep ls` lists the sweeps\n"
    )


MULTI_LINE = "command: |\n  cd /\n  echo lr={lr}\ngrid:\n  lr: [1, 2]\n"


def test_a_dry_run_refuses_a_command_of_several_lines_rather_than_join_them(runs: Runs) -> None:
    # It printed `cd / echo lr=1`: piped into `gpuherd run`, another command (echo / echo...).
    (runs.cwd / "multi.yaml").write_text(MULTI_LINE)
    done = sweep(runs, "multi.yaml", "--dry-run")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "gpuherd: error: the command of point lr=1 has several lines, which --dry-run's one"
        " command a line cannot show: --dry-run --json prints the commands exactly, or put the"
        " lines in a script and run that\n"
    )
    exact = sweep(runs, "multi.yaml", "--dry-run", "--json")
    assert exact.returncode == 0, exact.stderr
    assert json.loads(exact.stdout)["commands"] == [
        "cd /\necho lr=1\n",
        "cd /\necho lr=2\n",
    ]
    value = sweep(runs, "echo {x}", "-p", "x", "a", "b\nc", "--dry-run")
    assert (value.returncode, value.stdout) == (1, "")
    assert value.stderr.startswith("gpuherd: error: the command of point x=b_c~")
    assert len(value.stderr.splitlines()) == 1


def test_a_one_line_block_command_is_printed_exactly_and_runs(runs: Runs) -> None:
    # `command: |` (or `>`) ends the command with a line break: that is its line's end.
    (runs.cwd / "block.yaml").write_text("command: >\n  echo lr={lr}\ngrid:\n  lr: [1, 2]\n")
    done = sweep(runs, "block.yaml", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo lr=1\necho lr=2\n"
    ran = runs.run("--gpus", "0", "--output-dir", "out", input=done.stdout)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert "2 succeeded, 0 failed" in ran.stdout


CONTINUED = (
    "command: |\n"
    "  python3 -c 'import sys; print(sys.argv[1:])' \\\n"
    "    --lr {lr} \\\n"
    '    --tag "a \\\n'
    '    b"\n'
    "grid:\n"
    "  lr: [1, 2]\n"
)


def test_a_dry_run_joins_a_block_continued_by_backslashes_as_the_shell_does(runs: Runs) -> None:
    # It was refused as "several lines", though a submission runs it, and so does the shell:
    # a backslash ending a line joins the next one on (in double quotes, blanks kept).
    (runs.cwd / "continued.yaml").write_text(CONTINUED)
    done = sweep(runs, "continued.yaml", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "python3 -c 'import sys; print(sys.argv[1:])' --lr 1 --tag \"a   b\"",
        "python3 -c 'import sys; print(sys.argv[1:])' --lr 2 --tag \"a   b\"",
    ]
    exact = sweep(runs, "continued.yaml", "--dry-run", "--json")  # (as the points run it)
    assert json.loads(exact.stdout)["commands"][0].count("\\\n") == 3
    ran = runs.run("--gpus", "0", "-q", input=done.stdout)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    shell = subprocess.run(  # what the shell makes of a point's command, as the job runs it
        ["sh", "-c", json.loads(exact.stdout)["commands"][0]], capture_output=True, text=True
    )
    assert shell.stdout == "['--lr', '1', '--tag', 'a   b']\n"
    line = subprocess.run(["sh", "-c", done.stdout.splitlines()[0]], capture_output=True, text=True)
    assert line.stdout == shell.stdout  # the line printed runs as the point does
    assert "2 succeeded, 0 failed" in ran.stdout
    # A backslash inside single quotes, or ending a comment, continues nothing: still refused.
    for command in ("echo 'a \\\n  b {lr}'", "echo {lr} # note \\\n  echo b"):
        text = "command: |\n" + "".join(f"  {line}\n" for line in command.split("\n"))
        (runs.cwd / "quoted.yaml").write_text(text + "grid:\n  lr: [1]\n")
        refused = sweep(runs, "quoted.yaml", "--dry-run")
        assert (refused.returncode, refused.stdout) == (1, ""), command
        assert "has several lines" in refused.stderr


def test_a_dry_run_warns_of_an_env_value_naming_a_placeholder_as_a_submission_does(
    runs: Runs,
) -> None:
    # The submission warned (each point gets '{i}' as it is); the dry run said nothing.
    done = sweep(runs, "./task.sh {i}", "-p", "i", "1", "2", "--env", "TASK={i}", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert (
        "gpuherd: warning: --env TASK={i}: placeholders are filled in the command only, so each"
        " point gets '{i}' as it is; set the variable in the command instead: gpuherd sweep"
        " 'TASK={i} ./task.sh {i}' ..."
    ) in done.stderr.splitlines()
    as_json = sweep(
        runs, "./task.sh {i}", "-p", "i", "1", "--env", "TASK={i}", "--dry-run", "--json"
    )
    assert any(w.startswith("--env TASK={i}:") for w in json.loads(as_json.stdout)["warnings"])


@pytest.mark.parametrize("template", ["", "  "])
def test_a_dry_run_of_an_empty_command_is_refused_as_a_submission_is(
    runs: Runs, template: str
) -> None:
    # It printed an empty line and exited 0; a submission was refused. A mistake of the
    # command line: exit 2, as submit's empty command (it was 1, as the daemon's refusals).
    for extra in (["--dry-run"], ["--dry-run", "--json"], []):
        done = sweep(runs, template, "-p", "lr", "0.1", *extra)
        assert (done.returncode, done.stdout) == (2, ""), extra
        assert done.stderr == (
            "gpuherd: error: invalid sweep: command: empty; give the command to run for each"
            ' point, with placeholders such as "python train.py --lr {lr}"'
            " (see gpuherd sweep --help)\n"
        )


def test_a_value_given_twice_is_warned_of_in_a_dry_run(runs: Runs) -> None:
    done = sweep(runs, "echo {lr}", "-p", "lr", "1", "1", "2", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["echo 1", "echo 2"]
    assert done.stderr.splitlines() == [
        "gpuherd: warning: grid.lr: value 1 is given twice: a value given more than once is"
        " one point",
        "2 commands of sweep echo-d57627 (dry run: nothing submitted)",
    ]


def test_a_dry_run_of_an_exclude_that_leaves_no_point_is_refused(runs: Runs) -> None:
    # It printed `0 commands of sweep e` and exited 0 (and a submission made an empty sweep).
    (runs.cwd / "e.yaml").write_text("command: echo {x}\ngrid: {x: [1, 2]}\nexclude: 'True'\n")
    for extra in ([], ["--json"]):
        done = sweep(runs, "e.yaml", "--dry-run", *extra)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (
            "gpuherd: error: e.yaml:3: exclude: expression 'True' removes every point of"
            " the grid (2 of 2); loosen it so some remain\n"
        )


def test_a_dry_run_names_the_job_options_its_commands_leave_out(runs: Runs) -> None:
    """Piped into `gpuherd run`, the commands lose the options the sweep gives its points: one
    line on stderr names them, and what `gpuherd run` takes instead; stdout is unchanged."""
    args = ("echo {x}", "-p", "x", "1", "2", "--name", "opts", "--dry-run")
    options = ("--gpus", "2", "--only-gpus", "0,1", "--timeout", "1h", "-o", "x.log", "--retries")
    given = sweep(runs, *args, *options, "0", "--project", "p")
    assert given.returncode == 0, given.stderr
    assert given.stdout.splitlines() == ["echo 1", "echo 2"]  # what the pipe reads
    assert given.stderr.splitlines() == [
        "gpuherd: warning: the commands printed leave out --gpus, --only-gpus, --timeout,"
        " --output, --project: give gpuherd run --gpus-per-job (for --gpus), --gpus (for"
        " --only-gpus), --timeout; it has no --output, --project; its --output-dir DIR keeps"
        " each job's logs in a folder of its own",
        "2 commands of sweep opts (dry run: nothing submitted)",
    ]
    # A sweep file's keys are left out as the command line's are, named as its keys (they
    # were `--retries, --hold`, flags never typed); a flag typed over one is named as a flag.
    (runs.cwd / "held.yaml").write_text(
        "command: echo {x}\ngrid:\n  x: [1]\nhold: true\nretries: 2\nenv: {A: '1'}\n"
    )
    from_file = sweep(runs, "held.yaml", "--dry-run")
    assert from_file.stdout == "echo 1\n"
    assert from_file.stderr.splitlines()[0] == (
        "gpuherd: warning: the commands printed leave out held.yaml's retries, env, hold: give"
        " gpuherd run --retries; it has no --env, --hold"
    )
    typed = sweep(runs, "held.yaml", "--dry-run", "--retries", "3", "--env", "B=2")
    assert typed.stderr.splitlines()[0] == (
        "gpuherd: warning: the commands printed leave out --retries, --env and held.yaml's env,"
        " hold: give gpuherd run --retries; it has no --env, --hold"
    )
    # Nothing left out (the defaults, and --retries 0, which gpuherd run does anyway): nothing
    # said; nor with --json, which is for scripts, not for a pipe.
    plain = sweep(runs, *args, "--gpus", "1", "--retries", "0")
    assert plain.stderr.splitlines() == ["2 commands of sweep opts (dry run: nothing submitted)"]
    as_json = sweep(runs, *args, "--gpus", "2", "--json")
    assert as_json.stderr == "" and json.loads(as_json.stdout)["warnings"] == []
    # The line's advice works: the points run on two GPUs each.
    dry, done = piped(
        runs,
        ["echo $CUDA_VISIBLE_DEVICES {x}", "-p", "x", "1", "--gpus", "2", "--dry-run"],
        ["--fake-gpus", "2", "--gpus-per-job", "2", "--output-dir", "out"],
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "give gpuherd run --gpus-per-job (for --gpus)" in dry.stderr
    assert (runs.cwd / "out" / "job_0" / "stdout.log").read_text() == "0,1 1\n"

"""`--` is never an option's value: `gpuherd submit -n -- true` queued a job named `--` (click
gives an option the next word, and the `--` that ends the options is one). Every command's
value-taking options refuse it alike (cli/separator.py): one line naming the option and what
to give, exit 2, nothing done. `--` as the separator, and values with dashes, still work."""

from __future__ import annotations

import pytest
from test_cli_errors import shared

from conftest import Herd

__all__ = ["shared"]  # the module's daemon (job 1 held, job 2 succeeded), by name

SEPARATOR_TAKEN = [  # the words typed; the option refusing `--`; what its line says to give
    (["submit", "-n", "--", "true"], "--name", "-n NAME -- COMMAND"),
    (["submit", "--name", "--", "echo", "hi"], "--name", "-n NAME -- COMMAND"),
    (["submit", "--project", "--", "true"], "--project", "--project PROJECT -- COMMAND"),
    (["submit", "--file", "--", "true"], "--file", "--file FILE -- COMMAND"),
    (["submit", "--timeout", "--", "true"], "--timeout", "--timeout DURATION -- COMMAND"),
    (["submit", "-a", "--", "true"], "--after", "-a IDS -- COMMAND"),
    (["submit", "--env", "--", "true"], "--env", "--env NAME=VALUE -- COMMAND"),
    (["run", "--prefix", "--", "jobs.txt"], "--prefix", "--prefix PREFIX -- ARGS"),
    (["run", "--output-dir", "--", "jobs.txt"], "--output-dir", "--output-dir OUTPUT_DIR -- ARGS"),
    (["sweep", "-p", "x", "1", "--name", "--", "echo {x}"], "--name", "--name NAME -- SOURCE"),
    (
        ["sweep", "-p", "x", "1", "--results-dir", "--", "echo {x}"],
        "--results-dir",
        "--results-dir RESULTS_DIR -- SOURCE",
    ),
    (["edit", "--name", "--", "1"], "--name", "--name NAME -- IDS"),
    (["edit", "1", "--command", "--"], "--command", "--command COMMAND -- IDS"),
    (["ls", "--name", "--"], "--name", "--name PATTERN"),
    (["wait", "--project", "--"], "--project", "--project PROJECT -- IDS"),
    (["daemon", "start", "--address", "--"], "--address", "--address ADDR|auto"),
    (["ui", "--listen", "--"], "--listen", "--listen HOST:PORT"),
]


def _command(args: list[str]) -> str:
    return " ".join(args[:2]) if args[0] == "daemon" else args[0]


@pytest.mark.parametrize(
    ("args", "option", "give"), SEPARATOR_TAKEN, ids=[" ".join(a) for a, _, _ in SEPARATOR_TAKEN]
)
def test_an_option_whose_value_would_be_the_separator_is_refused_on_one_line(
    shared: Herd, args: list[str], option: str, give: str
) -> None:
    before = shared.all_jobs()
    proc = shared.cli(*args, check=False)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    said = f"{option}: no value given before --: give {give}"
    assert proc.stderr == f"gpuherd: error: {said} (see gpuherd {_command(args)} --help)\n"
    assert shared.all_jobs() == before


def test_the_separator_and_values_with_dashes_still_work(shared: Herd) -> None:
    named = shared.submit("-n", "a--b", "--env", "X=--", "--", "sh", "-c", 'echo "$X" --')
    assert shared.wait_state(named, "succeeded")["name"] == "a--b"
    assert shared.cli("log", str(named)).stdout == "-- --\n"
    dashed = shared.submit("--name=-x-", "--project", "--p", "--", "--version-of-nothing")
    assert (shared.job(dashed)["name"], shared.job(dashed)["project"]) == ("-x-", "--p")
    listed = shared.cli("ls", "--all", "--name", "a--b", "-q").stdout.split()
    assert listed == [str(named)]

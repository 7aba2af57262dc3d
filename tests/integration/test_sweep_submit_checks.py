"""What a daemon's sweep submission refuses or prints for input it used to take silently:
an exclude that leaves no point, NaN from Python, and `-q` when nothing is submitted."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd
from gpuherd.core.sweep import SweepSpec
from gpuherd.errors import HerdError, InvalidValue, NotFound
from gpuherd.pyapi import connect


def sweep_names(herd: Herd) -> list[str]:
    return [sweep["name"] for sweep in herd.json("sweep", "ls")]


def test_an_exclude_that_leaves_no_point_creates_no_sweep(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # It was taken: "0 points", exit 0, and a sweep record of nothing in `sweep ls`.
    daemon, work = shared_daemon, shared_work
    before = sweep_names(daemon)  # the module's earlier tests' sweeps
    (work / "e.yaml").write_text("command: echo {x}\ngrid: {x: [1, 2]}\nexclude: 'True'\n")
    done = daemon.cli("sweep", "e.yaml", check=False, cwd=work)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "gpuherd: error: e.yaml:3: exclude: expression 'True' removes every point of the"
        " grid (2 of 2); loosen it so some remain\n"  # (the file and line: it said `invalid sweep`)
    )
    herd = connect(daemon.home, start=False)
    excluding = SweepSpec(name="f", command="echo {x}", grids=({"x": (1,)},), exclude=({"x": 1},))
    with pytest.raises(HerdError, match=r"exclude: the list removes every point .*\(1 of 1\)"):
        herd.sweep(excluding, cwd=work)
    assert sweep_names(daemon) == before and not (work / "results").exists()


def test_nan_from_python_names_the_parameter_as_given(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # It said `grids[0].x[0]`: the path in the JSON the daemon gets, not what the user wrote.
    daemon, work = shared_daemon, shared_work
    before = sweep_names(daemon)  # the module's earlier tests' sweeps
    herd = connect(daemon.home, start=False)
    with pytest.raises(HerdError) as err:
        herd.sweep("echo {x}", {"x": [1, math.nan]}, cwd=work)
    assert str(err.value) == (
        "invalid sweep: grid.x[1]: nan is not a finite number (JSON has no NaN or Infinity):"
        " quote it ('nan') to pass it as text"
    )
    assert sweep_names(daemon) == before


def test_quiet_prints_the_ids_and_nothing_when_none_is_submitted(
    shared_daemon: Herd, shared_work: Path
) -> None:
    daemon, work = shared_daemon, shared_work
    args = ("sweep", "true {x}", "-p", "x", "1", "2", "--hold", "--name", "q", "-q")
    first = daemon.cli(*args, cwd=work)
    ids = [int(word) for word in first.stdout.split()]
    assert len(ids) == 2 and first.stdout == "".join(f"{i}\n" for i in ids)
    again = daemon.cli(*args, cwd=work)  # both points queued already: none submitted
    assert (again.stdout, again.stderr) == ("", "")  # it printed an empty line


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"grids": {"x": [1, 2]}}, "invalid sweep: grids: must be a list, got an object"),
        ({"grids": ["x"]}, "invalid sweep: grids[0]: must be a mapping (a JSON object), got a"),
        ({"fixed": "ab"}, "invalid sweep: fixed: must be a mapping (a JSON object), got a string"),
        ({"exclude": "x == 1"}, "invalid sweep: exclude: must be a list, got a string"),
        ({"shuffle": "no"}, "invalid sweep: shuffle: must be true or false, got a string"),
        (
            {"random": {"y": {"kind": "int", "low": "a", "high": 3}}, "samples": 1},
            "invalid sweep: random.y: low and high must be numbers, got a string, a number",
        ),
        (
            {"random": {"y": {"kind": "choice", "values": "abc"}}, "samples": 1},
            "invalid sweep: random.y.values: give a list of values, got 'abc'",
        ),
    ],
)
def test_a_spec_of_the_wrong_shape_over_http_is_refused_naming_the_key(
    shared_daemon: Herd, shared_work: Path, change: dict[str, Any], message: str
) -> None:
    # The first four were `internal error (ValueError: dictionary update sequence ...)`, a
    # 500; "no" made a shuffled sweep; the letters of "abc" became three choices.
    daemon, work = shared_daemon, shared_work
    spec = {"name": "shape", "command": "echo {x}", "grids": [{"x": [1, 2]}], **change}
    with pytest.raises(InvalidValue) as err:
        daemon.client.post("/sweeps", {"spec": spec, "cwd": str(work), "dry_run": True})
    assert str(err.value).startswith(message), str(err.value)


def test_a_fixed_value_no_placeholder_uses_is_refused_from_python_and_http(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # `fixed={"lR": 0.3}` over a file whose command uses {lr} was dropped without a word: every
    # point ran the file's lr. Refused now, from Python as over HTTP, naming the key, before
    # anything is submitted; a value the program can read from params.json is taken.
    daemon, work = shared_daemon, shared_work
    before = sweep_names(daemon)
    (work / "lr.yaml").write_text("command: echo {lr} {bs}\nfixed: {lr: 0.1}\ngrid: {bs: [1, 2]}\n")
    herd = connect(daemon.home, start=False)
    with pytest.raises(InvalidValue) as refused:
        herd.sweep(work / "lr.yaml", fixed={"lR": 0.3}, cwd=work)
    assert str(refused.value) == (
        "invalid sweep: fixed.lR: no placeholder of the command uses it, and it differs from"
        " {lr} only in case, _ or -: misspelt? give it as lr, or leave it out (placeholders:"
        " {lr}, {bs})"
    )
    with pytest.raises(InvalidValue, match=r"^invalid sweep: fixed\.epochs: no placeholder"):
        herd.sweep("echo {x}", {"x": [1]}, fixed={"epochs": 3}, cwd=work, name="noplace")
    spec = {"name": "h", "command": "echo {x}", "grids": [{"x": [1]}], "fixed": {"y": 1}}
    with pytest.raises(InvalidValue, match=r"^invalid sweep: fixed\.y: no placeholder"):
        daemon.client.post("/sweeps", {"spec": spec, "cwd": str(work)})
    assert sweep_names(daemon) == before and not (work / "results").exists()
    read = herd.sweep("echo {x} {run_dir}", {"x": [1]}, fixed={"epochs": 3}, cwd=work, dry_run=True)
    assert read.commands == [f"echo 1 {work}/results/{read.name}/x=1"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"spec": {"command": "echo {x}", "grids": [{"x": [1]}]}},
            'invalid sweep: spec.name: missing or empty; send the sweep\'s name ("spec": {"name":'
            ' "lr-sweep", ...}): a request has no default one',
        ),
        (
            {"spec": {"name": "", "command": "echo {x}", "grids": [{"x": [1]}]}},
            "invalid sweep: spec.name: missing or empty; send the sweep's name",
        ),
        (
            {"cwd": "work"},
            "working directory work is relative: give the absolute path of an existing folder"
            " as cwd (--cwd)",
        ),
    ],
)
def test_a_request_without_a_name_or_with_a_relative_cwd_says_what_to_send(
    shared_daemon: Herd, shared_work: Path, change: dict[str, Any], message: str
) -> None:
    # "leave it out for the default one", of a name left out; "does not exist", of a folder
    # that does (relative to where the client was).
    daemon, work = shared_daemon, shared_work
    body = {"spec": {"name": "n", "command": "echo {x}", "grids": [{"x": [1]}]}, "cwd": str(work)}
    with pytest.raises(InvalidValue) as refused:
        daemon.client.post("/sweeps", {**body, **change})
    assert str(refused.value).startswith(message), str(refused.value)


@pytest.mark.parametrize(
    ("name", "kind"), [(5, "a number"), (0, "a number"), (True, "a boolean"), (["a"], "a list")]
)
def test_a_sweep_name_that_is_no_text_is_refused_as_a_jobs_is(
    shared_daemon: Herd, shared_work: Path, name: Any, kind: str
) -> None:
    # `"name": 5` was taken as the sweep "5" (True as "True"), where POST /jobs refuses a job's
    # `"name": 5` (422); 0 was said to be "missing or empty".
    daemon, work = shared_daemon, shared_work
    spec = {"name": name, "command": "echo {x}", "grids": [{"x": [1]}]}
    with pytest.raises(InvalidValue) as refused:
        daemon.client.post("/sweeps", {"spec": spec, "cwd": str(work), "dry_run": True})
    assert str(refused.value) == f"invalid sweep: name: must be a string, got {kind}"


@pytest.mark.parametrize(
    ("options", "refusal", "message"),
    [
        (
            {"output": "run.log"},
            InvalidValue,
            r"^points x=1 and x=2 of sweep 'dry' would both write .*/run\.log, each emptying it",
        ),
        ({"after": [999_999_999]}, NotFound, r"^after \(--after\): no job 999999999 "),
    ],
)
def test_a_dry_run_is_refused_as_its_submission_is(
    shared_daemon: Herd,
    shared_work: Path,
    options: dict[str, Any],
    refusal: type[HerdError],
    message: str,
) -> None:
    """Its points' jobs were never checked: a dry run took what the submission refuses."""
    herd = connect(shared_daemon.home, start=False)
    for dry_run in (True, False):
        with pytest.raises(refusal, match=message):
            herd.sweep(
                "echo {x}",
                {"x": [1, 2]},
                name="dry",
                gpus=0,
                cwd=shared_work,
                dry_run=dry_run,
                **options,
            )
    assert "dry" not in sweep_names(shared_daemon)


def test_a_shell_variable_in_a_template_is_refused_saying_how_to_write_it(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # `${DATA_DIR}` was refused as "placeholder {DATA_DIR} is not a parameter", with no word of
    # how to give the shell its variable; the same from Python, the CLI and HTTP.
    daemon, work = shared_daemon, shared_work
    before = sweep_names(daemon)
    template = "python train.py --lr {lr} --data ${DATA_DIR}/cifar"
    said = (
        "invalid sweep: command: placeholder {DATA_DIR} is not a parameter; parameters: lr (and"
        " run_dir, sweep, index); for the shell variable ${DATA_DIR}, write ${{DATA_DIR}} or"
        " $DATA_DIR"
    )
    herd = connect(daemon.home, start=False)
    for dry_run in (True, False):
        with pytest.raises(HerdError) as said_by_python:
            herd.sweep(template, {"lr": [0.1]}, cwd=work, dry_run=dry_run)
        assert str(said_by_python.value) == said
    done = daemon.cli("sweep", template, "-p", "lr", "0.1", check=False, cwd=work)
    help_tail = " (see gpuherd sweep --help)"  # (a template typed: a mistake of the command line)
    assert (done.returncode, done.stderr) == (2, f"gpuherd: error: {said}{help_tail}\n")
    spec = {"name": "shell", "command": template, "grids": [{"lr": [0.1]}]}
    with pytest.raises(InvalidValue) as refused:
        daemon.client.post("/sweeps", {"spec": spec, "cwd": str(work)})
    assert str(refused.value) == said
    assert sweep_names(daemon) == before and not (work / "results").exists()
    # As it says: the shell gets its variable.
    (work / "train.py").touch()  # (no warning that it is missing)
    written = template.replace("${DATA_DIR}", "${{DATA_DIR}}")
    assert herd.sweep(written, {"lr": [0.1]}, cwd=work, dry_run=True).commands == [
        "python train.py --lr 0.1 --data ${DATA_DIR}/cifar"
    ]

"""Two checks a sweep skipped. An empty results folder (`--results-dir "$DIR"` with DIR unset,
`results_dir=""`) put the points in results/NAME without a word: it is refused from the CLI,
Python, HTTP and a sweep file. And a dry run never asked whether the GPUs could run the
points: listed, then the same sweep submitted was refused; now Python's and HTTP's dry run
is refused in the same words (the CLI's lists the commands for `gpuherd run`, whose GPUs are
its own). Real daemon, 4 fake GPUs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import HerdError, InvalidValue
from gpuherd.pyapi import connect

EMPTY = (
    "results_dir: empty; give the folder of the points' folders, or leave results_dir out"
    " (results/NAME)"
)
NEVER = (
    "sweep 'big' can never run: each of its points asks for 5 GPUs but gpuherd has only 4"
    ": give fewer gpus (--gpus), at most 4"
)


def names(herd: Herd) -> list[str]:
    return [sweep["name"] for sweep in herd.json("sweep", "ls")]


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_an_empty_results_dir_option_is_refused_in_one_line(
    shared_daemon: Herd, shared_work: Path, dry_run: list[str]
) -> None:
    herd, work = shared_daemon, shared_work
    refused = herd.cli(
        "sweep", "echo {x}", "-p", "x", "1", "--name", "nowhere", "--gpus", "0",
        "--results-dir", "", *dry_run, check=False, cwd=work,
    )  # fmt: skip
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == (
        "gpuherd: error: --results-dir is empty: give a folder, or leave --results-dir out"
        " (see gpuherd sweep --help)\n"
    )
    assert "nowhere" not in names(herd) and not (work / "results").exists()


def test_an_empty_results_dir_from_python_and_http_is_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    api = connect(herd.home, start=False)
    for dry_run in (False, True):
        with pytest.raises(HerdError) as from_python:
            api.sweep("echo {x}", {"x": [1]}, name="nowhere", results_dir="", gpus=0, cwd=work,
                      dry_run=dry_run)  # fmt: skip
        assert str(from_python.value) == f"invalid sweep: {EMPTY}"
    spec = {"name": "nowhere", "command": "echo {x}", "grids": [{"x": [1]}], "results_dir": ""}
    with pytest.raises(InvalidValue) as over_http:  # 422, as its other bad values
        herd.client.post("/sweeps", {"spec": spec, "cwd": str(work), "options": {"gpus": 0}})
    assert str(over_http.value) == f"invalid sweep: {EMPTY}"
    assert "nowhere" not in names(herd) and not (work / "results").exists()


def test_an_empty_results_dir_in_a_sweep_file_names_its_line(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    (work / "s.yaml").write_text('command: echo {x}\ngrid: {x: [1]}\nresults_dir: ""\ngpus: 0\n')
    for dry_run in ([], ["--dry-run"]):
        refused = herd.cli("sweep", "s.yaml", *dry_run, check=False, cwd=work)
        assert (refused.returncode, refused.stdout) == (1, "")
        assert refused.stderr == f"gpuherd: error: s.yaml:3: {EMPTY}\n"
    assert "s" not in names(herd) and not (work / "results").exists()


def test_a_dry_run_is_refused_as_its_submission_when_no_gpu_set_could_run_it(
    shared_daemon: Herd, shared_work: Path
) -> None:
    herd, work = shared_daemon, shared_work
    sweep = ["sweep", "echo {x}", "-p", "x", "1", "2", "--name", "big", "--gpus", "5"]
    refused = herd.cli(*sweep, check=False, cwd=work)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == f"gpuherd: error: {NEVER}\n"
    # The CLI's dry run lists the commands for `| gpuherd run`, whose GPUs are its own (8
    # of them, say): the daemon's are not asked.
    listed = herd.cli(*sweep, "--dry-run", cwd=work)
    assert listed.stdout == "echo 1\necho 2\n"
    api = connect(herd.home, start=False)
    with pytest.raises(InvalidValue) as from_python:
        api.sweep("echo {x}", {"x": [1, 2]}, name="big", gpus=5, cwd=work, dry_run=True)
    assert str(from_python.value) == NEVER
    spec = {"name": "big", "command": "echo {x}", "grids": [{"x": [1, 2]}]}
    body = {"spec": spec, "cwd": str(work), "options": {"gpus": 5}, "dry_run": True}
    with pytest.raises(InvalidValue) as over_http:
        herd.client.post("/sweeps", body)
    assert str(over_http.value) == NEVER
    assert "big" not in names(herd) and not (work / "results").exists()


def test_a_sweep_with_every_point_done_is_still_not_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # Nothing to submit is nothing to refuse (as the submission's check, by point, was): a
    # finished sweep looked at again on fewer GPUs says its points are done.
    herd, work = shared_daemon, shared_work
    api = connect(herd.home, start=False)
    assert api.sweep("echo {x}", {"x": [1, 2]}, name="ran", gpus=0, cwd=work).wait(30)
    again = api.sweep("echo {x}", {"x": [1, 2]}, name="ran", gpus=5, cwd=work, dry_run=True)
    assert (again.commands, again.submission["skipped_done"]) == ([], 2)


def test_with_no_daemon_the_cli_dry_run_lists_the_commands_unchecked(herd: Herd) -> None:
    listed = herd.cli("sweep", "echo {x}", "-p", "x", "1", "2", "--gpus", "5", "--dry-run")
    assert listed.stdout == "echo 1\necho 2\n"
    assert not herd.is_up()


def test_an_empty_cwd_from_python_and_an_empty_name_in_a_sweep_file_are_refused(
    shared_daemon: Herd, shared_work: Path
) -> None:
    # Siblings of results_dir="": `cwd=""` ran the job wherever Python ran, and a sweep
    # file's `name: ""` became the file's stem, each without a word.
    herd, work = shared_daemon, shared_work
    api = connect(herd.home, start=False)
    empty_cwd = "cwd is empty: give the folder the job runs in, or leave cwd out"
    with pytest.raises(HerdError, match=f"^{empty_cwd}$"):
        api.submit("true", cwd="")
    with pytest.raises(HerdError, match=f"^{empty_cwd}$"):
        api.sweep("echo {x}", {"x": [1]}, name="nowhere", gpus=0, cwd="")
    (work / "unnamed.yaml").write_text('name: ""\ncommand: echo {x}\ngrid: {x: [1]}\ngpus: 0\n')
    refused = herd.cli("sweep", "unnamed.yaml", "--dry-run", check=False, cwd=work)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        "gpuherd: error: unnamed.yaml:1: name: empty; give the sweep a name, or leave it out"
        " for the default one (the file's name without its suffix, unnamed)\n"
    )
    assert "nowhere" not in names(herd) and "unnamed" not in names(herd)

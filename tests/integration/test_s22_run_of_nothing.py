"""`gpuherd run` of an input that holds no command ("nothing to run") leaves no empty
herd_runs/<timestamp> folder behind; a folder the user named (--output-dir) stays."""

from __future__ import annotations

from conftest import Runs

NOTHING = "# only a comment\n\n"


def test_a_run_of_nothing_leaves_no_folder(runs: Runs) -> None:
    done = runs.run("--fake-gpus", "1", input=NOTHING)
    assert done.returncode == 0, done
    assert "nothing to run" in done.stdout
    assert not (runs.cwd / "herd_runs").exists(), list((runs.cwd / "herd_runs").iterdir())


def test_runs_folder_with_other_runs_stays(runs: Runs) -> None:
    earlier = runs.cwd / "herd_runs" / "20260101-000000"
    earlier.mkdir(parents=True)
    runs.run("--fake-gpus", "1", input=NOTHING)
    assert [p.name for p in (runs.cwd / "herd_runs").iterdir()] == [earlier.name]


def test_a_named_output_dir_stays(runs: Runs) -> None:
    done = runs.run("--fake-gpus", "1", "--output-dir", "mine", input=NOTHING)
    assert done.returncode == 0, done
    assert (runs.cwd / "mine").is_dir()

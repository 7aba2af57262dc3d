"""`gpuherd run` of an input that holds no command ("nothing to run") leaves no empty
herd_runs/<timestamp> folder behind; a folder the user named (--output-dir) stays. Nor does a
run whose input stopped before its first job (or was interrupted then), whose summary names no
logs. And the new folder of a run is not named as one with no earlier run times in it."""

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


def test_a_stream_stopped_at_its_first_line_leaves_no_folder_and_names_no_logs(
    runs: Runs,
) -> None:
    # It said `0 succeeded, 0 failed; logs in .../herd_runs/<timestamp>`, an empty folder kept.
    done = runs.run("--fake-gpus", "1", input="echo a\0b\n")
    assert done.returncode == 1, done
    assert done.stdout.splitlines()[-1] == "0 succeeded, 0 failed", done.stdout
    assert "input stopped: standard input: line 1 holds a NUL byte" in done.stdout
    assert not (runs.cwd / "herd_runs").exists(), list((runs.cwd / "herd_runs").iterdir())


def test_longest_first_into_a_new_folder_does_not_name_it_as_holding_no_times(
    runs: Runs,
) -> None:
    # It said `no earlier run times in herd_runs/<timestamp>`, the folder this run had just made.
    done = runs.run("--fake-gpus", "1", "--order", "longest-first", input="true\n")
    assert done.returncode == 0, done
    assert done.stdout.splitlines()[0] == (
        "--order longest-first: no earlier run times (this run's folder is new): jobs start in "
        "input order; --times-from DIR takes them from an earlier run's folder"
    )

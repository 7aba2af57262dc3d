"""`gpuherd run`'s command-line mistakes said before anything built on them:
- a script given as the job file, or a command, with both --fake-gpus and --gpus: their
  advice repeated the pair (`echo 'sh job.sh' | gpuherd run --fake-gpus 2 --gpus 1`), which
  the same command refuses; the clash is said first;
- `--times-from herd_runs` with no herd_runs yet: the run's own herd_runs/<now> was made
  first, and the folder found (empty), where docs/run.md says a --times-from folder that is
  not there is exit 2."""

from __future__ import annotations

from conftest import Runs

CLASH = "gpuherd: error: --gpus and --fake-gpus exclude each other: pass one of them"


def test_a_script_with_both_gpu_options_is_told_the_clash(runs: Runs) -> None:
    (runs.cwd / "job.sh").write_text("#!/bin/sh\necho hi\n")
    done = runs.run("--fake-gpus", "2", "--gpus", "1", "job.sh")
    assert done.returncode == 2
    assert done.stderr.startswith(CLASH), done.stderr
    assert "looks like a script" not in done.stderr


def test_a_command_with_both_gpu_options_is_told_the_clash(runs: Runs) -> None:
    """Not the advice `echo 'python3 train.py' | gpuherd run --fake-gpus 2 --gpus 0`."""
    for fake in (["--fake-gpus", "2"], ["--fake-gpus=2"]):
        done = runs.run(*fake, "--gpus", "0", "python3", "train.py", "--lr", "0.1")
        assert done.returncode == 2
        assert done.stderr.startswith(CLASH), done.stderr
        assert "takes a job file" not in done.stderr


def test_the_script_advice_keeps_the_options_that_go_together(runs: Runs) -> None:
    (runs.cwd / "job.sh").write_text("#!/bin/sh\necho hi\n")
    done = runs.run("--fake-gpus", "2", "job.sh")
    assert done.returncode == 2
    assert "echo 'sh job.sh' | gpuherd run --fake-gpus 2, or" in done.stderr, done.stderr


def test_times_from_a_folder_not_there_yet_is_refused(runs: Runs) -> None:
    (runs.cwd / "jobs.txt").write_text("true\n")
    args = ("--fake-gpus", "1", "--order", "longest-first", "--times-from", "herd_runs")
    done = runs.run(*args, "jobs.txt")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "--times-from herd_runs: No such file or directory" in done.stderr, done.stderr
    assert not (runs.cwd / "herd_runs").exists()  # nothing made by a refused run

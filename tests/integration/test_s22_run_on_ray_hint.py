"""`gpuherd run --executor ray` / `--address`: a daemon's options, which `run` (its jobs on
this machine) has none of, answered with the way to a Ray cluster, not click's bare
"No such option"."""

from __future__ import annotations

import pytest

from conftest import Runs


@pytest.mark.parametrize("option", [["--executor", "ray"], ["--address", "10.0.0.5:6379"]])
def test_run_with_a_clusters_option_says_how_to_use_one(runs: Runs, option: list[str]) -> None:
    (runs.cwd / "jobs.txt").write_text("true\n")
    done = runs.run("--fake-gpus", "1", *option, "jobs.txt")
    assert done.returncode == 2, done
    (line,) = done.stderr.splitlines()
    assert "gpuherd daemon start --executor ray --address HOST:PORT" in line, line
    assert not (runs.cwd / "herd_runs").exists()  # refused before anything ran

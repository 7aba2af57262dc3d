"""A job's output file named through a home whose `jobs/` links elsewhere (a bigger disk):
the path, its links resolved, was in no home, and `-o HOME/jobs/5/stdout.log` was taken,
another job's log to write over. Refused as any file in the home is."""

from __future__ import annotations

from pathlib import Path

from gpuherd import paths
from gpuherd.output_paths import output_problem


def test_a_file_named_through_the_homes_linked_jobs_folder_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    paths.database(home).touch()  # (what home_around knows a home by)
    paths.lock_file(home).touch()
    elsewhere = tmp_path / "disk" / "jobs"
    (elsewhere / "5").mkdir(parents=True)
    (home / "jobs").symlink_to(elsewhere)
    for given in (f"{home}/jobs/5/stdout.log", "jobs/5/x-%j.log"):
        problem = output_problem(given, str(home))
        assert problem is not None, given
        assert problem.startswith(f"{home}/jobs/5/"), problem
        assert f"is in gpuherd's home {home}: the home is gpuherd's own" in problem
    assert output_problem(f"{tmp_path}/disk/out.log", str(tmp_path)) is None  # (no home's)

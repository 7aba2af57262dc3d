"""`gpuherd run`: a job whose working folder (the one the run was started in) was removed does
not start, as docs/run.md says, also where a folder of its path is back. Its --output-dir
inside that folder made it again, empty, with the job's folder, and the job ran there as if
nothing had happened (reading none of its files, writing its results where none looks),
the job's shell saying `sh: 0: getcwd() failed` on the run's stderr."""

from __future__ import annotations

from pathlib import Path

from conftest import Runs

ADVICE = (
    "the run's jobs run in the folder gpuherd run was started in; create it again, or run "
    "again from an existing folder"
)


def _run_in_project(runs: Runs, jobs: str) -> tuple[Path, str, str, int]:
    """Run `jobs` (a job file beside the folder: it stays) one at a time, started in a folder
    `project` holding the output folder; the folder, stdout, stderr, exit status."""
    project = runs.cwd / "project"
    project.mkdir()
    (project / "data.csv").write_text("1,2\n")
    job_file = runs.cwd / "jobs.txt"
    job_file.write_text(jobs)
    done = runs.run("--fake-gpus", "1", "--output-dir", "runs", str(job_file), cwd=project)
    return project, done.stdout, done.stderr, done.returncode


def test_a_job_does_not_start_in_the_folder_its_output_folder_brought_back(runs: Runs) -> None:
    project, out, err, status = _run_in_project(
        runs, 'rm -rf "$PWD"\ntest -e data.csv; touch ran_here\n'
    )
    assert f"[1] failed (working directory {project} does not exist: {ADVICE}) after 0.0s" in (
        out.splitlines()
    ), out
    assert "1 succeeded, 1 failed" in out, out
    assert status == 1
    assert "getcwd" not in err, err
    assert project.is_dir()  # made again, with runs/job_1, as docs/run.md says
    assert not (project / "ran_here").exists()


def test_a_folder_made_again_by_hand_is_not_the_run_s(runs: Runs) -> None:
    project, out, err, status = _run_in_project(
        runs, 'rm -rf "$PWD" && mkdir "$PWD"\ntouch ran_here\n'
    )
    assert f"[1] failed (working directory {project} does not exist: {ADVICE}) after 0.0s" in (
        out.splitlines()
    ), out
    assert status == 1
    assert "getcwd" not in err, err
    assert not (project / "ran_here").exists()


def test_the_jobs_of_a_folder_still_there_run(runs: Runs) -> None:
    project, out, err, status = _run_in_project(runs, "test -e data.csv\ntouch ran_here\n")
    assert "2 succeeded, 0 failed" in out, (out, err)
    assert status == 0
    assert (project / "ran_here").exists()

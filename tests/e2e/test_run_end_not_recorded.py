"""`gpuherd run` whose job removes the run's --output-dir: the job's end cannot be recorded
there. The run said so, but told the user to free some space and that its logs may be cut
short, whatever kept the record out: now the way out fits the error."""

from __future__ import annotations

from conftest import Runs


def test_an_output_dir_removed_by_a_job_is_said_to_be_removed(runs: Runs) -> None:
    out = runs.root / "out"
    (runs.cwd / "jobs.txt").write_text(f"rm -rf {out}\n")
    proc = runs.run("--fake-gpus", "1", "-q", "--output-dir", str(out), "jobs.txt")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr == (
        f"gpuherd: error: the end of job_0 could not be recorded in {out} (No such file or "
        f"directory): it has no job.json or SUCCESS/FAILURE; {out} (or a job folder in it) was "
        "removed or moved as the run ran: keep it there, then run again with --skip-succeeded,"
        " which runs it again (as it does the jobs that failed)\n"
    )

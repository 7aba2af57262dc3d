"""A sweep point run again runs in the same folder, the earlier job's files moved to
previous-runs/<n>/. `show` and `log` of the earlier job read its own run there; `ls --json`,
`ls --columns stderr`, `herd.jobs()` and `sweep status --json` named the later run's files
for it, as if no path were moved. They now name what `show` names (real daemon)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gpuherd
from conftest import Herd

TEMPLATE = 'echo "out of job $GPUHERD_JOB_ID"; echo "stderr of job $GPUHERD_JOB_ID" >&2; exit {x}'


def submit_point(daemon: Herd, work: Path, name: str, *options: str) -> int:
    """Point x=1 of sweep `name` (it fails when it runs) submitted; its job's id."""
    out = daemon.cli(
        "sweep", TEMPLATE, "-p", "x", "1", "--name", name, "--gpus", "0", "-q", *options, cwd=work
    )
    return int(out.stdout.split()[0])


def run_point(daemon: Herd, work: Path, name: str, *options: str) -> int:
    """As submit_point, the job run to its end."""
    job_id = submit_point(daemon, work, name, *options)
    assert daemon.wait_state(job_id, "succeeded", "failed")["state"] == "failed"
    return job_id


def last_line(path: str) -> str:
    return Path(path).read_text().splitlines()[-1]


def assert_listed_as_shown(daemon: Herd, listed: dict[int, dict[str, Any]]) -> None:
    for job_id, job in listed.items():
        shown = daemon.json("show", str(job_id))
        assert job["job_dir"] == shown["job_dir"], job_id
        assert job["log_files"] == shown["log_files"], job_id
        assert last_line(job["log_files"]["stderr"]) == f"stderr of job {job_id}"
        assert last_line(job["log_files"]["stdout"]) == f"out of job {job_id}"


def test_ls_names_each_run_of_a_point_its_own_logs(shared_daemon: Herd, shared_work: Path) -> None:
    daemon = shared_daemon
    first = run_point(daemon, shared_work, "lsruns")
    again = run_point(daemon, shared_work, "lsruns")  # (the failed point resubmitted)

    listed = {j["id"]: j for j in daemon.json("ls", "--sweep", "lsruns", "--state", "failed")}
    assert sorted(listed) == [first, again]
    assert_listed_as_shown(daemon, listed)
    assert "/previous-runs/1/" in listed[first]["log_files"]["stderr"]
    assert listed[first]["job_dir"] == listed[again]["job_dir"]  # (the point's folder: show's)

    table = daemon.cli("ls", "--sweep", "lsruns", "--all", "--columns", "id,stderr").stdout
    rows = dict(line.split() for line in table.splitlines()[1:])
    assert rows == {str(i): j["log_files"]["stderr"] for i, j in listed.items()}

    herd = gpuherd.connect(home=daemon.home)
    snapshots = {job.id: job.snapshot["log_files"] for job in herd.jobs(sweep="lsruns", all=True)}
    assert snapshots == {i: j["log_files"] for i, j in listed.items()}

    # Submitted again, held: its folder is the new job's already (both runs moved aside),
    # and that job, which has not run, is not listed with the failed ones.
    held = submit_point(daemon, shared_work, "lsruns", "--hold")
    assert daemon.wait_state(held, "held")["attempt"] == 0
    listed = {j["id"]: j for j in daemon.json("ls", "--sweep", "lsruns", "--state", "failed")}
    assert sorted(listed) == [first, again]
    assert_listed_as_shown(daemon, listed)
    assert "/previous-runs/2/" in listed[again]["log_files"]["stderr"]


def test_a_point_run_over_by_another_sweeps_lists_its_own_logs(
    shared_daemon: Herd, shared_work: Path
) -> None:
    """Two sweeps of one results folder share a point's folder (sweep warns of it): the first
    one's job, of a sweep the second never touches, names its own run's logs too, in `ls`
    and in its sweep's `status --json`."""
    daemon, out = shared_daemon, str(shared_work / "shared-out")
    first = run_point(daemon, shared_work, "lsruns-a", "--results-dir", out)
    later = run_point(daemon, shared_work, "lsruns-b", "--results-dir", out)

    (mine,) = daemon.json("ls", "--sweep", "lsruns-a", "--all")
    (theirs,) = daemon.json("ls", "--sweep", "lsruns-b", "--all")
    assert (mine["id"], theirs["id"]) == (first, later)
    assert_listed_as_shown(daemon, {first: mine, later: theirs})
    (row,) = daemon.json("sweep", "status", "lsruns-a")["rows"]
    assert (row["job_dir"], row["log_files"]) == (mine["job_dir"], mine["log_files"])

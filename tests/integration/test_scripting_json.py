"""What a script reads off gpuherd's machine-readable outputs: `ls --json` and `ls --csv` name
a job's folder (`job_dir`) and the logs of its latest attempt (`log_files`) as `show --json`
names them, so no script guesses `jobs/<id>/attempt-<n>/stdout.log` (nor a file of
`--output`); `submit --json` says which jobs it cancelled at once, as the HTTP API does."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from uuid import uuid4

from conftest import Herd


def test_ls_names_each_jobs_folder_and_latest_logs_as_show_does(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd, project = shared_daemon, f"p{uuid4().hex[:8]}"
    mine = ("--project", project)
    failed = herd.submit(*mine, "--", "echo out; echo err >&2; exit 3")
    chosen = herd.submit(*mine, "-o", str(tmp_path / "own-%j.log"), "--", "echo mine")
    rerun = herd.submit(*mine, "--", "echo again")
    never = herd.submit(*mine, "--hold", "--", "true")
    herd.wait_state(failed, "failed")
    herd.wait_state(chosen, "succeeded")
    herd.wait_state(rerun, "succeeded")
    herd.cli("retry", str(rerun))
    herd.wait_state(rerun, "succeeded")
    # Put back held, its file cleared: its latest attempt (1) still wrote to own-N.log.
    herd.cli("retry", "--hold", str(chosen))
    herd.cli("edit", str(chosen), "--clear", "output")

    listed = {job["id"]: job for job in herd.json("ls", *mine, "--all")}
    assert set(listed) == {failed, chosen, rerun, never}
    for job_id, job in listed.items():
        shown = herd.json("show", str(job_id))
        assert (job["job_dir"], job["log_files"]) == (shown["job_dir"], shown["log_files"])

    home = herd.home / "jobs"
    assert listed[failed]["job_dir"] == str(home / str(failed))
    logs = listed[failed]["log_files"]
    assert Path(logs["stdout"]).read_text() == "out\n"
    assert Path(logs["stderr"]).read_text() == "err\n"
    own = str(tmp_path / f"own-{chosen}.log")
    assert listed[chosen]["log_files"] == {"stdout": own, "stderr": own}
    assert listed[chosen]["output"] is None  # the job's file now; its logs: where it wrote
    assert Path(listed[rerun]["log_files"]["stdout"]) == (
        home / str(rerun) / "attempt-2" / "stdout.log"
    )
    assert Path(listed[never]["log_files"]["stdout"]) == (
        home / str(never) / "attempt-1" / "stdout.log"
    )  # where its first attempt will write, as `show` says

    # --csv carries them too, under --columns folder,stdout,stderr.
    out = herd.cli("ls", *mine, "--all", "--csv", "--columns", "id,folder,stdout,stderr").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["id", "job_dir", "stdout", "stderr"]
    assert {int(row["id"]): (row["job_dir"], row["stdout"], row["stderr"]) for row in rows} == {
        job_id: (job["job_dir"], job["log_files"]["stdout"], job["log_files"]["stderr"])
        for job_id, job in listed.items()
    }


def test_submit_json_says_which_jobs_were_cancelled_at_once(shared_daemon: Herd) -> None:
    herd = shared_daemon
    failed = herd.submit("--", "exit 1")
    herd.wait_state(failed, "failed")
    told = herd.cli("submit", "--json", "--after", str(failed), "--", "true")
    answer = json.loads(told.stdout)
    (job_id,) = answer["ids"]
    assert answer["cancelled"] == [job_id] and answer["draining"] is False
    assert answer["warnings"] == [
        f"job {job_id} is cancelled at once: job {failed}, which it waits for, already failed"
        f" (gpuherd retry {failed} {job_id} runs both again)"
    ]
    assert told.stderr == f"gpuherd: warning: {answer['warnings'][0]}\n"  # as without --json
    assert herd.job(job_id)["state"] == "cancelled"
    plain = json.loads(herd.cli("submit", "--json", "--hold", "--", "true").stdout)
    assert (plain["cancelled"], plain["warnings"]) == ([], [])


def test_sweep_json_says_which_points_were_cancelled_at_once(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd, name = shared_daemon, f"s{uuid4().hex[:8]}"
    failed = herd.submit("--", "exit 1")
    herd.wait_state(failed, "failed")
    where = ("--name", name, "--results-dir", str(tmp_path / name))
    told = herd.json("sweep", "true {x}", "-p", "x", "1", "2", *where, "--after", str(failed))
    assert told["cancelled"] == told["ids"] and len(told["ids"]) == 2
    assert [herd.job(job_id)["state"] for job_id in told["ids"]] == ["cancelled"] * 2
    again = herd.json("sweep", "true {x}", "-p", "x", "3", *where)
    assert again["cancelled"] == [] and len(again["ids"]) == 1


def test_every_command_that_needs_a_daemon_exits_3_when_none_runs(herd: Herd) -> None:
    # As `wait` and `daemon status` did; the others exited 1, as for an unknown id.
    for args in (
        ("ls", "--json"),
        ("ls", "-q"),
        ("show", "1", "--json"),
        ("submit", "--json", "--", "true"),
        ("kill", "1"),
        ("sweep", "status", "lr", "--json"),
        ("gpus", "--json"),
        ("wait", "1"),
        ("daemon", "stop", "--drain"),
    ):
        said = herd.cli(*args, check=False)
        assert (said.returncode, said.stdout) == (3, ""), (args, said)
        assert said.stderr == (
            f"gpuherd: error: no gpuherd daemon is running for {herd.home}: start one with "
            "`gpuherd daemon start` (add --fake-gpus 4 on a machine without GPUs)\n"
        ), args
    status = herd.cli("daemon", "status", "--json", check=False)
    assert status.returncode == 3
    assert json.loads(status.stdout) == {"running": False, "home": str(herd.home)}

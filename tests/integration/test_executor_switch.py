"""A daemon started on another executor than the last start's while jobs still run there: it
counted them lost and ran their retries while they went on (twice at once). Refused, unless
--abandon-running. No Ray cluster is needed: the refusal comes before any connection."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd

NOWHERE = "127.0.0.1:9"  # nothing listens: a start that got past the refusal fails there


def test_a_switch_of_executor_under_running_jobs_is_refused(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "1")
    go = tmp_path / "go"
    job = herd.submit("--retries", "2", "--", f"while [ ! -e {go} ]; do sleep 0.05; done")
    herd.wait_state(job, "running")
    herd.cli("daemon", "stop")  # the job goes on

    refused = herd.cli("daemon", "start", "--executor", "ray", "--address", NOWHERE, check=False)
    assert refused.returncode == 1
    assert refused.stderr == (
        "gpuherd: error: 1 job still runs on the local executor, which a daemon on the ray "
        "executor cannot reach: it would count it lost and run its retries while it goes "
        "on. Start as before (`gpuherd daemon start` without options), let it end or kill "
        "it, then switch; or add --abandon-running to count it lost (its processes may "
        "go on there)\n"
    )

    herd.cli("daemon", "start")  # as before: re-attached, not lost, not run again
    assert herd.job(job)["state"] == "running" and herd.job(job)["attempt"] == 1
    herd.cli("daemon", "stop")
    forced = herd.cli(
        "daemon", "start", "--address", NOWHERE, "--abandon-running", check=False
    )  # past the refusal, to the cluster, which does not answer
    assert forced.returncode == 1 and "does not answer" in forced.stderr, forced.stderr
    herd.cli("daemon", "start")
    go.touch()
    assert herd.wait_state(job, "succeeded")["attempt"] == 1

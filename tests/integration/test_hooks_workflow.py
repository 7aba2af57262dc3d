"""The on-end hook in a chain of jobs: of a job that ran and was then cancelled while it
waited to retry (`--retries` with `--retry-delay`, then `gpuherd kill`), told of the attempt
that ran, its GPUs and its time, as README's table says, not the empty ones of the put-back
job; and a hook whose script was removed since it was set, said so in daemon.log (one set
naming a script or program that is not there is warned of at once)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, wait_for


def test_a_job_cancelled_while_waiting_to_retry_tells_its_hook_its_last_attempts_gpus(
    daemon: Herd, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"
    seen.mkdir()
    daemon.cli(
        "config",
        "set",
        "on-end",
        f'env | grep ^GPUHERD_ > "{seen}/t.$$" && mv "{seen}/t.$$" "{seen}/$GPUHERD_JOB_ID.env"',
    )
    job = daemon.submit("--retries", "1", "--retry-delay", "10m", "--", "sleep 0.3; exit 8")
    wait_for(lambda: daemon.job(job).get("retry_at"), 15, "the job to wait to retry")
    ran = daemon.job(job)["attempts"][0]
    daemon.cli("kill", str(job))

    path = seen / f"{job}.env"
    wait_for(path.exists, 15, "the hook of the cancelled job")
    told = dict(line.split("=", 1) for line in path.read_text().splitlines())
    assert told["GPUHERD_JOB_STATE"] == "cancelled"
    assert told["GPUHERD_ATTEMPT"] == "1"
    assert told["GPUHERD_JOB_GPUS"] == ",".join(str(g) for g in ran["gpus"]) != ""
    assert float(told["GPUHERD_JOB_SECONDS"]) >= 0.3  # was 0.0: the put-back job has no times


def test_a_hook_whose_script_was_removed_says_so_in_daemon_log(
    daemon: Herd, tmp_path: Path
) -> None:
    script = tmp_path / "job-ended"
    script.write_text("#!/bin/sh\necho ended\n")
    script.chmod(0o755)
    daemon.cli("config", "set", "on-end", str(script))
    script.unlink()  # moved away, or a clean-up of ~/bin
    job = daemon.submit("--", "true")
    log = daemon.home / "daemon.log"
    line = f"on-end hook for job {job} exited 127"
    wait_for(lambda: line in log.read_text(), 15, "the warning")
    said = next(x for x in log.read_text().splitlines() if line in x)
    assert "did not find the command (a script removed or moved?)" in said
    assert "gpuherd config set on-end none turns it off" in said


def test_a_hook_that_names_no_script_or_program_is_warned_of_when_set(
    daemon: Herd, tmp_path: Path
) -> None:
    """It was set unsaid, and failed at every job's end (exit 127, said in daemon.log only)."""
    gone = tmp_path / "job-ended"
    warned = {
        str(gone): f"{gone} does not exist: the hook will fail unless it is made before it "
        "starts; check the path",
        "notfy-send done": "notfy-send is no program on the hook's PATH nor a shell builtin: the "
        "hook will fail with 'not found' unless installed before it starts; check the spelling",
        "python train.py": f"train.py does not exist in {daemon.home} (the hook's working "
        "directory): the hook will fail unless it is made before it starts; check the path",
    }
    for command, warning in warned.items():
        said = daemon.cli("config", "set", "on-end", command, cwd=tmp_path)
        assert (said.stdout, said.stderr) == (
            f"on-end = {command}\n",
            f"gpuherd: warning: on-end: {warning}\n",
        )
    for command in ("none", "default", "echo ended"):  # nothing to say
        said = daemon.cli("config", "set", "on-end", command, cwd=tmp_path)
        assert said.stderr == "", command

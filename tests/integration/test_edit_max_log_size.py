"""`gpuherd edit --max-log-size SIZE|none` (and `--clear max_log_size`, the Python API's and
the JSON API's edit): a waiting job's log cap changes as its --timeout does, and the job runs
with the cap it was edited to; a running job's cannot change."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_max_log_size import MiB, stopped_for_its_log, writer

from conftest import Herd
from gpuherd.errors import HerdError
from gpuherd.pyapi import connect


def test_edit_sets_changes_and_removes_a_waiting_jobs_cap(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = str(herd.submit("--hold", "--gpus", "0", "--", "true"))
    edits = [
        (["--max-log-size", "2MiB"], "none -> 2 MiB", 2 * MiB),
        (["--max-log-size", "1.5G"], "2 MiB -> 1.5 GiB", 1536 * MiB),
        (["--max-log-size", "none"], "1.5 GiB -> none", None),
        (["--max-log-size", "3M"], "none -> 3 MiB", 3 * MiB),
        (["--clear", "max_log_size"], "3 MiB -> none", None),
    ]
    for options, said, cap in edits:
        answer = herd.cli("edit", job, *options).stdout
        assert answer == f"job {job}: edited (max_log_size {said})\n"
        assert herd.job(int(job))["max_log_size"] == cap
    refused = herd.usage_error("edit", job, "--max-log-size", "10")
    assert "--max-log-size: 10 is 10 bytes: give a unit, e.g. 10GiB; or none" in refused
    assert herd.job(int(job))["max_log_size"] is None  # unchanged


def test_a_running_jobs_cap_cannot_be_edited(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = shared_daemon
    job = herd.running_until(tmp_path / "go")
    refused = herd.cli("edit", str(job), "--max-log-size", "2MiB", check=False)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"gpuherd: error: job {job} is running: only queued or held jobs can be edited\n"
    )
    assert herd.job(job)["max_log_size"] is None


def test_a_job_runs_with_the_cap_it_was_edited_to(shared_daemon: Herd) -> None:
    herd = shared_daemon
    capped = herd.submit("--hold", "--gpus", "0", "--", writer())
    uncapped = herd.submit(
        "--hold", "--gpus", "0", "--max-log-size", "2MiB", "--", writer(mib=3, then_sleep=3)
    )
    herd.cli("edit", str(capped), "--max-log-size", "2MiB")
    herd.cli("edit", str(uncapped), "--max-log-size", "none")
    herd.cli("release", str(capped), str(uncapped))
    stopped_for_its_log(herd, capped, "stdout")
    ended = herd.wait_state(uncapped, "succeeded", "failed", "killed", timeout=30)
    assert (ended["state"], ended["outcome"]) == ("succeeded", "exit"), ended  # outlived a check


def test_the_python_and_json_apis_edit_the_cap(shared_daemon: Herd) -> None:
    herd = shared_daemon
    api = connect(herd.home, start=False)
    job = api.submit("true", gpus=0, hold=True)
    assert job.edit(max_log_size="2MiB") == "edited (max_log_size none -> 2 MiB)"
    assert job.edit(max_log_size="none") == "edited (max_log_size 2 MiB -> none)"
    assert job.edit(max_log_size=3 * MiB) == "edited (max_log_size none -> 3 MiB)"
    assert job.edit(clear=["max_log_size"]) == "edited (max_log_size 3 MiB -> none)"
    with pytest.raises(ValueError, match="10 is 10 bytes: give a unit"):
        job.edit(max_log_size=10)
    body = {"ids": [job.id], "max_log_size": 4 * MiB}
    [result] = herd.client.post("/jobs/edit", body)["results"]
    assert result == {"id": job.id, "ok": True, "message": "edited (max_log_size none -> 4 MiB)"}
    [result] = herd.client.post("/jobs/edit", {"ids": [job.id], "max_log_size": 0})["results"]
    assert result["message"] == "edited (max_log_size 4 MiB -> none)"  # 0: none, as at submit
    [result] = herd.client.post("/jobs/edit", {"ids": [job.id], "max_log_size": -1})["results"]
    assert not result["ok"] and "max_log_size (--max-log-size) must be" in result["message"]
    with pytest.raises(HerdError, match="max_log_size=-1 is no size: give one"):
        job.edit(max_log_size=-1)  # (refused before it is sent, as max_log_size=0 is)
    assert herd.job(job.id)["max_log_size"] is None


def test_clear_takes_a_field_as_its_option_is_spelt(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = str(herd.submit("--hold", "--max-log-size", "2MiB", "--only-gpus", "1", "--", "true"))
    answer = herd.cli("edit", job, "--clear", "max-log-size", "--clear", "only-gpus").stdout
    assert answer == f"job {job}: edited (only_gpus 1 -> any, max_log_size 2 MiB -> none)\n"
    refused = herd.usage_error("edit", job, "--clear", "max-log-sise")
    assert "--clear: 'max-log-sise' is not a choice: use one of name, only_gpus," in refused


def test_each_api_refuses_an_edit_by_the_names_it_takes(shared_daemon: Herd) -> None:
    """The Python API names the job's variables `env`, the HTTP API `env_overrides`: each
    refusal names what its caller typed (the Python API's said `env_overrides`, the HTTP
    API's `env`)."""
    herd = shared_daemon
    job = connect(herd.home, start=False).submit("true", gpus=0, hold=True)
    with pytest.raises(ValueError, match=r"^'gpus' cannot be cleared: clear one of name, ") as no:
        job.edit(clear=["gpus"])
    assert ", env, " in str(no.value) and "env_overrides" not in str(no.value)
    with pytest.raises(ValueError, match=r"^env is both changed and cleared: give one$"):
        job.edit(env={"A": "1"}, clear=["env"])
    with pytest.raises(ValueError, match=r"^nothing to change: give one of after, ") as none:
        job.edit()
    assert ", env, " in str(none.value) and "env_overrides" not in str(none.value)
    job.edit(max_log_size="2MiB")
    assert job.edit(clear="max_log_size") == "edited (max_log_size 2 MiB -> none)"  # one name
    body = {"ids": [job.id], "env_overrides": {"A": "1"}, "clear": ["env_overrides"]}
    with pytest.raises(HerdError, match=r"^env_overrides is both set and cleared: give one$"):
        herd.client.post("/jobs/edit", body)

"""`--only-gpus`: a job placed on some GPUs only (submit, sweep, edit and Python), waiting for
those while others are free, and refused when it could never run there."""

from __future__ import annotations

import json

import pytest

from conftest import Herd, Recorder
from gpuherd import connect
from gpuherd.errors import HerdError


def test_a_job_waits_for_its_gpu_while_others_are_free_and_runs_there(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    blocker = daemon.submit("--only-gpus", "2", "--", recorder.cmd("blocker", wait="go"))
    assert daemon.wait_state(blocker, "running")["gpus"] == [2]
    pinned = daemon.submit("--only-gpus", "2", "--", recorder.cmd("pinned"))
    anywhere = daemon.submit("--", recorder.cmd("anywhere"))

    assert daemon.wait_state(anywhere, "succeeded")["gpus"] != [2]
    job = daemon.job(pinned)
    assert (job["state"], job["only_gpus"]) == ("queued", [2])  # GPUs 0, 1 and 3 are free
    assert job["reason"] == "waiting for a free GPU of --only-gpus 2"
    assert "requested  1 GPU, GPU 2 only\n" in daemon.cli("show", str(pinned)).stdout

    recorder.path("go").touch()
    assert daemon.wait_state(pinned, "succeeded")["gpus"] == [2]
    (ran,) = recorder.lines("pinned")
    assert ran["gpus"] == "2"  # CUDA_VISIBLE_DEVICES


def test_a_job_for_two_gpus_gets_two_of_those_named(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    job_id = daemon.submit("-g", "2", "--only-gpus", "1-3", "--", recorder.cmd("two"))
    assert set(daemon.wait_state(job_id, "succeeded")["gpus"]) <= {1, 2, 3}
    (ran,) = recorder.lines("two")
    assert len(set(ran["gpus"].split(","))) == 2
    # It said `2 GPUs of GPU 1,2,3 only`: a plural named as one.
    assert "requested  2 GPUs, of GPUs 1,2,3 only\n" in daemon.cli("show", str(job_id)).stdout


def test_a_job_that_could_never_run_on_its_gpus_is_refused(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    before = [job["id"] for job in daemon.json("ls", "--all")]  # the module's earlier jobs
    cases = [
        (["--only-gpus", "7"], "asks for 1 GPU of --only-gpus 7, but gpuherd has no GPU 7"),
        (["-g", "2", "--only-gpus", "1"], "asks for 2 GPUs but --only-gpus names 1"),
        (["-g", "0", "--only-gpus", "1"], "--only-gpus with --gpus 0: a CPU-only job gets no GPU"),
        (["--only-gpus", "one"], "invalid GPU index 'one'"),
    ]
    for args, message in cases:
        answer = daemon.cli("submit", *args, "--", "true", check=False)
        assert answer.returncode != 0 and message in answer.stderr, (args, answer.stderr)
        assert len(answer.stderr.strip().splitlines()) == 1  # one line, no traceback
    assert [job["id"] for job in daemon.json("ls", "--all")] == before  # nothing was queued


def test_edit_pins_a_waiting_job_and_clears_it_again(daemon: Herd) -> None:
    daemon.cli("pause")
    job_id = daemon.submit("--", "true")
    answer = daemon.cli("edit", str(job_id), "--only-gpus", "3,1")
    assert answer.stdout == f"job {job_id}: edited (only_gpus any -> 1,3)\n"
    assert daemon.job(job_id)["only_gpus"] == [1, 3]
    refused = daemon.cli("edit", str(job_id), "--only-gpus", "9", check=False)
    assert refused.returncode != 0
    assert "would never run: asks for 1 GPU of --only-gpus 9" in refused.stderr
    answer = daemon.cli("edit", str(job_id), "--clear", "only_gpus")
    assert answer.stdout == f"job {job_id}: edited (only_gpus 1,3 -> any)\n"
    daemon.cli("resume")
    assert daemon.wait_state(job_id, "succeeded")["only_gpus"] == []


def test_a_sweep_and_python_take_only_gpus(shared_daemon: Herd, recorder: Recorder) -> None:
    daemon = shared_daemon
    swept = daemon.json(
        "sweep", recorder.cmd("point"), "-p", "x", "1", "2", "3", "--only-gpus", "0"
    )
    job = connect(daemon.home, start=False).submit(recorder.cmd("py"), only_gpus="3")
    assert job.wait(timeout=30) == "succeeded"
    assert daemon.job(job.id)["gpus"] == [3]
    daemon.cli("wait", *map(str, swept["ids"]))
    points = [j for j in daemon.json("ls", "--all", "--sweep", swept["name"]) if j["sweep"]]
    assert [(j["state"], j["gpus"], j["only_gpus"]) for j in points] == [
        ("succeeded", [0], [0])
    ] * 3
    assert [line["gpus"] for line in recorder.lines("point")] == ["0"] * 3


def test_a_visible_devices_setting_of_the_shell_is_pointed_out(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    answer = daemon.cli("submit", "--", "true", env={**daemon.env, "CUDA_VISIBLE_DEVICES": "1"})
    assert answer.stderr == (
        "gpuherd: warning: this shell's CUDA_VISIBLE_DEVICES=1 is replaced: the job sees the "
        "GPUs gpuherd places it on; --only-gpus 1 keeps the job on those GPUs\n"
    )
    quiet = daemon.cli(
        "submit", "--only-gpus", "1", "--", "true", env={**daemon.env, "CUDA_VISIBLE_DEVICES": "1"}
    )
    assert quiet.stderr == ""


def test_python_takes_gpu_indices_and_refuses_what_is_none(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    herd = connect(daemon.home, start=False)
    for wrong in ([1.7], True, ["a"], "x", [-1]):
        with pytest.raises(HerdError, match="only_gpus: "):
            herd.submit("true", only_gpus=wrong, hold=True)
    job = herd.submit("true", only_gpus=3, hold=True)
    assert daemon.job(job.id)["only_gpus"] == [3]
    assert job.edit(only_gpus="1-2") == "edited (only_gpus 3 -> 1,2)"  # as `gpuherd edit`
    assert job.edit(only_gpus=[0]) == "edited (only_gpus 1,2 -> 0)"
    listed = [j["only_gpus"] for j in daemon.json("ls", "--all") if j["id"] == job.id]
    assert listed == [[0]]


def test_an_empty_list_is_any_gpu_and_empty_text_is_refused(shared_daemon: Herd) -> None:
    """One rule for an empty only_gpus: a list, `[]`, is the field left out (any GPU; the
    CLI sends it without --only-gpus, so the API cannot refuse it), and an edit's clears
    it, as `clear` does; text that names no GPU (`--only-gpus "$GPUS"` with GPUS unset,
    Python's `only_gpus=""`) is refused rather than taken as any GPU."""
    daemon = shared_daemon
    body = json.dumps({"jobs": [{"command": "true", "cwd": "/", "hold": True, "only_gpus": []}]})
    status, _, answer = daemon.request("POST", "/api/v1/jobs", body)
    assert status == 200, answer
    job = json.loads(answer)["ids"][0]
    assert daemon.job(job)["only_gpus"] == []
    daemon.cli("edit", str(job), "--only-gpus", "1")
    edit = json.dumps({"ids": [job], "only_gpus": []})
    status, _, answer = daemon.request("POST", "/api/v1/jobs/edit", edit)
    assert json.loads(answer)["results"][0]["message"] == "edited (only_gpus 1 -> any)"
    said = "no GPU given: use GPU indices like 0, 0-3 or 0,2"
    refused = daemon.cli("submit", "--hold", "--only-gpus", "", "--", "true", check=False)
    assert (refused.returncode, said in refused.stderr) == (2, True), refused.stderr
    herd = connect(daemon.home, start=False)
    with pytest.raises(HerdError, match=f"only_gpus: {said}"):
        herd.submit("true", only_gpus="", hold=True)
    assert daemon.job(herd.submit("true", only_gpus=[], hold=True).id)["only_gpus"] == []

"""Memory-aware placement end to end, with fake GPUs and real processes (issue: GPU awareness)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from conftest import NO_SUCH_PIDS, Herd, Recorder, wait_for

OTHER = NO_SUCH_PIDS[0]
"""Another user's process on a fake GPU."""

# A job that reports the GPU memory it "uses" (fake probe), records its interval, sleeps.
USES = r"""
import json, os, sys, time
usage, out, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
with open(os.path.join(os.environ["GPUHERD_JOB_DIR"], "fake_gpu_usage.json"), "w") as f:
    json.dump({"memory": usage}, f)
start = time.time()
time.sleep(seconds)
with open(out, "a") as f:
    f.write(json.dumps([os.environ["CUDA_VISIBLE_DEVICES"], start, time.time()]) + "\n")
"""


def uses(tmp: Path, usage: str, out: str, seconds: float) -> str:
    script = tmp / "uses.py"
    script.write_text(USES)
    return shlex.join([sys.executable, str(script), usage, str(tmp / out), str(seconds)])


def most_at_once(spans: list[tuple[float, float]]) -> int:
    return max(sum(1 for a, b in spans if a <= t < b) for t, _ in spans)


def write_state(path: Path, gpus: list[dict[str, object]]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"gpus": gpus}))
    tmp.replace(path)  # a new inode: the probe sees the change even within one mtime tick


def test_ten_10gib_jobs_on_two_24gib_gpus_run_two_per_gpu(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "2x24GiB")
    herd.cli("pause")
    herd.cli(
        "submit",
        "--file",
        "-",
        "--mem",
        "10GiB",
        input="\n".join(uses(tmp_path, "9GiB", "spans", 0.6) for _ in range(10)),
    )
    herd.cli("resume")
    assert herd.cli("wait").returncode == 0
    rows = [json.loads(line) for line in (tmp_path / "spans").read_text().splitlines()]
    assert len(rows) == 10
    for gpu in ("0", "1"):
        spans = [(a, b) for g, a, b in rows if g == gpu]
        assert most_at_once(spans) == 2  # shared up to memory: two, never three


def test_a_foreign_process_keeps_plain_jobs_off_its_gpu(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    write_state(
        state,
        [
            {"memory_total": "24GiB"},
            {"memory_total": "24GiB", "processes": [{"pid": OTHER, "memory": "20GiB"}]},
        ],
    )
    herd.start("--fake-gpus", str(state))
    plain = [herd.submit(recorder.cmd("plain", sleep=0.2)) for _ in range(4)]
    small = herd.submit("--mem", "3GiB", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES")
    for job_id in plain:
        herd.wait_state(job_id, "succeeded")
    assert {r["gpus"] for r in recorder.lines("plain")} == {"0"}
    # A job that declares memory may use what the other user left free.
    herd.wait_state(small, "succeeded")
    gpus = herd.json("gpus")["gpus"]
    foreign = [p for p in gpus[1]["processes"] if p["job_id"] is None]
    assert [p["pid"] for p in foreign] == [OTHER]


def test_changing_the_state_file_changes_placement_within_a_tick(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    write_state(state, [{"memory_total": "24GiB", "processes": [{"pid": OTHER, "memory": "1GiB"}]}])
    herd.start("--fake-gpus", str(state))
    job = herd.submit(recorder.cmd("late"))
    assert herd.job(job)["state"] == "queued"
    assert "other users" in herd.job(job)["reason"]
    write_state(state, [{"memory_total": "24GiB"}])  # the other user's process ended
    herd.wait_state(job, "succeeded", timeout=6)  # one telemetry tick is 2 s


def test_a_job_with_mem_kept_off_by_foreign_exclusive_is_not_told_it_waits_for_memory(
    herd: Herd, tmp_path: Path
) -> None:
    """It said "waiting for 1.0 GiB free on 1 GPU (GPU 0 is busy with other users'
    processes)" with 60 GiB free: the setting, not memory, keeps it waiting."""
    state = tmp_path / "gpus.json"
    write_state(
        state, [{"memory_total": "80GiB", "processes": [{"pid": OTHER, "memory": "20GiB"}]}]
    )
    herd.start("--fake-gpus", str(state))
    herd.cli("config", "set", "foreign", "exclusive")
    job = herd.submit("--mem", "1GiB", "--", "true")
    assert herd.job(job)["reason"] == (
        "waiting for a GPU without other users' processes "
        "(GPU 0 has other users' processes: config foreign exclusive)"
    )
    write_state(state, [{"memory_total": "80GiB"}])  # the other user's process ended
    herd.wait_state(job, "succeeded", timeout=6)  # one telemetry tick is 2 s


def test_a_job_using_more_than_it_declared_is_flagged(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "1x24GiB")
    # (more than it asked for, not more than the GPU has: the fake probe refuses that)
    job = herd.submit("--mem", "10GiB", "--", "sh", "-c", uses(tmp_path, "15GiB", "o", 3.0))

    def flagged() -> dict[str, object] | None:
        info = herd.job(job)
        return info if info["over_mem"] else None

    info = wait_for(flagged, 10, "the job's measured memory to exceed its request")
    assert info["peak_mem"] == 15 * 2**30
    assert "more than declared" in herd.cli("show", str(job)).stdout
    ended = herd.wait_state(job, "succeeded")
    assert ended["attempts"][0]["over_mem"] is True
    # Still said once it ended (it was null, as if never measured): its attempt's record.
    assert (ended["peak_mem"], ended["over_mem"]) == (15 * 2**30, True)
    (listed,) = herd.ls_all()
    assert (listed["peak_mem"], listed["over_mem"]) == (15 * 2**30, True)


def test_cuda_oom_is_retried_with_a_larger_request(herd: Herd, tmp_path: Path) -> None:
    herd.start("--fake-gpus", "1x24GiB")
    marker = tmp_path / "second"
    script = tmp_path / "oom.sh"
    script.write_text(
        f"[ -e {marker} ] && exit 0\n"
        f"touch {marker}\n"
        'echo "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB" >&2\n'
        "exit 1\n"
    )
    job = herd.submit("--oom-retry", "--mem", "8GiB", "--", "sh", str(script))
    info = herd.wait_state(job, "succeeded", timeout=20)
    first, second = info["attempts"]
    assert first["outcome"] == "cuda_oom" and first["mem"] == 8 * 2**30
    assert second["mem"] == 12 * 2**30  # 1.5x: no peak was measured in so short a run
    assert "cuda_oom" in herd.cli("show", str(job)).stdout


def test_gpus_on_nodes_through_the_cli(herd: Herd, tmp_path: Path) -> None:
    # Two pretend nodes of two GPUs, as on a Ray cluster (the jobs still run here).
    state = tmp_path / "gpus.json"
    write_state(state, [{"node": f"n{i // 2}", "host": f"box-{'ab'[i // 2]}"} for i in range(4)])
    herd.start("--fake-gpus", str(state))
    table = herd.cli("gpus").stdout.splitlines()
    assert table[0].split()[:3] == ["GPU", "NODE", "NAME"]
    assert [line.split()[1] for line in table[1:5]] == ["box-a", "box-a", "box-b", "box-b"]
    refused = herd.cli("submit", "--gpus", "3", "--", "true", check=False)
    assert refused.returncode != 0
    assert (
        "asks for 3 GPUs on one node: the largest node has 2: give fewer gpus (--gpus), at most 2"
        in refused.stderr
    )
    herd.cli("pause")
    first, second = herd.submit("--", "sleep", "30"), herd.submit("--", "sleep", "30")
    herd.cli("gpus", "drain", "3")
    herd.cli("resume")
    herd.wait_state(second, "running")
    # One-GPU jobs fill the node with the fewest free GPUs first: box-a stays whole longest.
    assert (herd.job(first)["gpus"], herd.job(second)["gpus"]) == ([2], [0])
    two = herd.submit("--gpus", "2", "--", "true")
    assert herd.job(two)["reason"] == (
        "waiting for 2 free GPUs on one node "
        "(GPUs 0, 2 are full of gpuherd jobs; GPU 3 is draining)"
    )
    herd.cli("kill", str(second))
    herd.wait_state(two, "succeeded")
    assert herd.job(two)["gpus"] == [0, 1]


def test_gpus_says_when_jobs_with_mem_share_a_gpu_beyond_its_slot(herd: Herd) -> None:
    herd.start("--fake-gpus", "1x24GiB")
    jobs = [herd.submit("--mem", "5GiB", "--", "sleep", "60") for _ in range(3)]
    for job_id in jobs:
        herd.wait_state(job_id, "running")
    row = herd.cli("gpus").stdout.splitlines()[1]
    assert "3 sharing" in row and "3/1" not in row
    herd.cli("kill", f"{jobs[0]}-{jobs[-1]}")


def test_a_queued_job_that_a_removed_gpu_left_with_no_place_says_so(herd: Herd) -> None:
    herd.start("--fake-gpus", "2x24GiB,1x80GiB")
    herd.cli("pause")
    big = herd.submit("--mem", "70GiB", "--", "true")
    wide = herd.submit("--gpus", "3", "--", "true")
    herd.cli("gpus", "remove", "2")  # refused at submit now; these were queued before
    # The edit that fits is in the parentheses, and works as said (`--mem 24.0GiB`: the size
    # rounded down, as the GPU's 24.0 GiB may be a little less).
    assert herd.job(big)["reason"] == (
        "can never run on these GPUs: asks for 70.0 GiB per GPU but the largest GPU has 24.0 GiB"
        f" (gpuherd gpus add 2 lets it run, gpuherd edit {big} --mem 24.0GiB to ask for what"
        f" there is, or gpuherd rm {big})"
    )  # was "waiting for 70.0 GiB free on 1 GPU", for ever
    assert herd.job(wide)["reason"] == (
        "can never run on these GPUs: asks for 3 GPUs but gpuherd has only 2"
        f" (gpuherd gpus add 2 lets it run, gpuherd edit {wide} --gpus 2 to ask for what there"
        f" is, or gpuherd rm {wide})"
    )
    fixed = herd.cli("edit", str(wide), "--gpus", "2").stdout  # as the reason says
    assert fixed == f"job {wide}: edited (gpus 3 -> 2)\n"
    herd.cli("edit", str(big), "--mem", "24.0GiB")
    assert "can never run" not in (herd.job(big)["reason"] or "")
    assert "can never run" not in (herd.job(wide)["reason"] or "")


def test_gpus_configured_but_not_seen_count_for_what_could_ever_run(
    herd: Herd, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    state.write_text('{"gpus": [{}, {}, {"lost": true}]}')
    herd.start("--fake-gpus", str(state))
    # GPU 2 may come back (it was refused as "has only 2 (GPU 2 is configured but not seen")
    job = herd.submit("--gpus", "3", "--", "true")
    assert herd.job(job)["reason"] == (
        "waiting for GPU 2, configured but not seen now: `gpuherd gpus`"
    )
    refused = herd.cli("submit", "--gpus", "4", "--", "true", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        "gpuherd: error: this job can never run: asks for 4 GPUs but gpuherd has only 3"
        ": give fewer gpus (--gpus), at most 3\n",
    )

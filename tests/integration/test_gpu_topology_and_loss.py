"""GPU placement and the GPU view end to end, with a fake state file and real processes: NVLinked
pairs, GPUs lost or removed while jobs run, a failing probe, a job waiting for a slot."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import Herd, Recorder, UnixConnection, wait_for

# NVLink 0-1 and 2-3, the host bridge otherwise.
PAIRED = [
    {"memory_total": "24GiB", "links": {"1": 3, "2": 1, "3": 1}},
    {"memory_total": "24GiB", "links": {"0": 3, "2": 1, "3": 1}},
    {"memory_total": "24GiB", "links": {"3": 3, "0": 1, "1": 1}},
    {"memory_total": "24GiB", "links": {"2": 3, "0": 1, "1": 1}},
]


def write_state(path: Path, gpus: list[dict[str, object]] | str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(gpus if isinstance(gpus, str) else json.dumps({"gpus": gpus}))
    tmp.replace(path)  # a new inode: the probe sees the change even within one mtime tick


def gpu_rows(herd: Herd) -> dict[int, dict[str, object]]:
    return {row["index"]: row for row in herd.json("gpus")["gpus"]}


def shown_gpus(herd: Herd, job: int) -> str:
    """The `gpus` row of `gpuherd show JOB`."""
    (row,) = [
        line for line in herd.cli("show", str(job)).stdout.splitlines() if line[:5] == "gpus "
    ]
    return row.removeprefix("gpus").strip()


def listed_info(herd: Herd, job: int) -> str:
    """The job's `reason` in `gpuherd ls --json`: its INFO column."""
    (row,) = [r for r in herd.json("ls", "--all") if r["id"] == job]
    return str(row["reason"] or "")


def test_a_two_gpu_job_gets_the_free_nvlinked_pair(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    write_state(state, PAIRED)
    herd.start("--fake-gpus", str(state))
    blocker = herd.submit("--only-gpus", "1", "--", recorder.cmd("blocker", wait="go"))
    herd.wait_state(blocker, "running")
    pair = herd.submit("-g", "2", "--", recorder.cmd("pair"))
    assert herd.wait_state(pair, "succeeded")["gpus"] == [2, 3]  # not 0 and 2
    assert [r["gpus"] for r in recorder.lines("pair")] == ["2,3"]
    recorder.go()
    herd.wait_state(blocker, "succeeded")


def test_a_job_for_a_lost_gpu_waits_for_it_and_runs_when_it_returns(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    write_state(state, [{"name": "A", "memory_total": "24GiB"}, {"lost": True}])
    herd.start("--fake-gpus", str(state))
    pinned = herd.submit("--only-gpus", "1", "--", recorder.cmd("pinned"))
    both = herd.submit("-g", "2", "--", recorder.cmd("both"))
    for job_id in pinned, both:
        job = herd.job(job_id)
        assert job["state"] == "queued"
        assert job["reason"] == "waiting for GPU 1, configured but not seen now: `gpuherd gpus`"
    # What could never run, even with GPU 1 back, is still refused.
    refused = herd.cli("submit", "-g", "3", "--", "true", check=False)
    assert refused.returncode != 0
    assert refused.stderr.strip() == (
        "gpuherd: error: this job can never run: asks for 3 GPUs but gpuherd has only 2"
        ": give fewer gpus (--gpus), at most 2"
    )
    write_state(state, [{"name": "A", "memory_total": "24GiB"}, {"name": "B"}])
    assert herd.wait_state(pinned, "succeeded")["gpus"] == [1]
    assert herd.wait_state(both, "succeeded")["gpus"] == [0, 1]


def test_a_removed_gpu_keeps_its_row_while_its_job_runs(herd: Herd, recorder: Recorder) -> None:
    herd.start("--fake-gpus", "3")
    job = herd.submit("--only-gpus", "2", "--", recorder.cmd("on2", wait="go"))
    herd.wait_state(job, "running")
    assert herd.cli("gpus", "remove", "2").stdout.strip() == (
        "GPU 2 removed; jobs running on it go on"
    )
    rows = gpu_rows(herd)
    assert sorted(rows) == [0, 1, 2]
    assert (rows[2]["state"], rows[2]["jobs"]) == ("removed", [job])
    table = herd.cli("gpus").stdout.splitlines()
    assert table[3].split()[:3] == ["2", "Fake", "GPU"] and "removed" in table[3]
    assert table[-1] == (
        "probe: fake: 3 GPUs; GPU 2 seen but not used (`gpuherd gpus add 2` adds it)"
    )
    # The dashboard's row offers nothing to do to a GPU that is not configured any more.
    conn = UnixConnection(herd.client.socket_path, timeout=15)
    conn.request("GET", "/ui/gpus")
    page = conn.getresponse().read().decode()
    conn.close()
    rows_html = {m[0]: m[1] for m in re.findall(r'<tr id="gpu-(\d)">(.*?)</tr>', page, re.S)}
    assert 'value="drain"' in rows_html["1"] and 'value="drain"' not in rows_html["2"]
    assert "not configured: the row goes when its jobs end" in rows_html["2"]
    # `show` of the job says what became of its GPU (it said `gpus 2`, as if nothing had).
    assert herd.json("show", str(job))["gpus_gone"] == [{"index": 2, "state": "removed"}]
    assert shown_gpus(herd, job) == (
        "2 (GPU 2 removed (gpuherd gpus remove): the job finishes there, nothing new starts there)"
    )
    assert listed_info(herd, job) == "GPU 2 removed (gpus remove)"
    recorder.go()
    herd.wait_state(job, "succeeded")
    assert sorted(gpu_rows(herd)) == [0, 1]  # its job ended: the row goes
    assert (herd.json("show", str(job))["gpus_gone"], shown_gpus(herd, job)) == ([], "2")
    answer = herd.json("gpus")
    assert answer["unused"] == [2] and "GPU 2 seen but not used" in answer["probe"]


def test_a_jobs_gpu_left_out_of_a_later_start_is_not_said_removed(
    herd: Herd, recorder: Recorder
) -> None:
    """A job on GPU 3 under `--fake-gpus 4`, the daemon started again with `--fake-gpus 2`:
    GPU 3's row, `show` and `ls` said `removed (gpuherd gpus remove)`, named `GPU`, though
    no one removed it. They say it is not among the GPUs the daemon started with."""
    herd.start("--fake-gpus", "4")
    job = herd.submit("--only-gpus", "3", "--", recorder.cmd("on3", wait="go"))
    wait_for(lambda: recorder.waiting("on3"), what="the job on GPU 3 to start")
    herd.cli("daemon", "stop")
    herd.start("--fake-gpus", "2")
    row = gpu_rows(herd)[3]
    assert (row["state"], row["name"], row["jobs"]) == ("unconfigured", "-", [job])
    assert herd.cli("gpus").stdout.splitlines()[3].split()[:3] == ["3", "-", "unconfigured"]
    said = "not configured (not among the GPUs the daemon started with)"
    assert herd.json("show", str(job))["gpus_gone"] == [{"index": 3, "state": "unconfigured"}]
    assert shown_gpus(herd, job) == (
        f"3 (GPU 3 {said}: the job finishes there, nothing new starts there)"
    )
    assert listed_info(herd, job) == f"GPU 3 {said}"
    conn = UnixConnection(herd.client.socket_path, timeout=15)
    conn.request("GET", "/ui/gpus")
    page = conn.getresponse().read().decode()
    conn.close()
    rows_html = {m[0]: m[1] for m in re.findall(r'<tr id="gpu-(\d)">(.*?)</tr>', page, re.S)}
    assert 'value="drain"' not in rows_html["3"]  # nothing to drain or remove there
    assert "not configured: the row goes when its jobs end" in rows_html["3"]
    # Not a GPU gpuherd has: `gpus remove 0 3` is refused whole, as for a removed one.
    refused = herd.cli("gpus", "remove", "0", "3", check=False)
    assert refused.stderr.startswith("gpuherd: error: GPU 3 is not configured")
    recorder.go()
    herd.wait_state(job, "succeeded")
    assert sorted(gpu_rows(herd)) == [0, 1]  # its job ended: the row goes


def test_a_lost_gpu_keeps_its_row_while_its_job_runs(
    herd: Herd, recorder: Recorder, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    write_state(state, [{"memory_total": "24GiB"}, {"name": "B", "memory_total": "80GiB"}])
    herd.start("--fake-gpus", str(state))
    job = herd.submit("--only-gpus", "1", "--", recorder.cmd("on1", wait="go"))
    herd.wait_state(job, "running")
    write_state(state, [{"memory_total": "24GiB"}, {"lost": True}])

    def lost() -> dict[str, object] | None:
        row = gpu_rows(herd).get(1)
        return row if row is not None and row["state"] == "lost" else None

    row = wait_for(lost, 10, "GPU 1 to show as lost")
    assert (row["name"], row["jobs"], row["memory_total"]) == ("B", [job], None)
    assert herd.json("gpus")["missing"] == [1]
    assert herd.json("show", str(job))["gpus_gone"] == [{"index": 1, "state": "lost"}]
    assert shown_gpus(herd, job) == (
        "1 (GPU 1 lost: the probe no longer sees it; the job runs on, but its work there may fail)"
    )
    assert listed_info(herd, job) == "GPU 1 lost (the probe no longer sees it)"
    # The job's page says it as it is, not as a wait ("Waiting: GPU 1 lost ...").
    conn = UnixConnection(herd.client.socket_path, timeout=15)
    conn.request("GET", f"/jobs/{job}")
    page = conn.getresponse().read().decode()
    conn.close()
    assert '<p class="reason-line">GPU 1 lost (the probe no longer sees it)</p>' in page
    recorder.go()
    herd.wait_state(job, "succeeded")
    assert herd.json("show", str(job))["gpus_gone"] == []  # said only while it runs there
    assert listed_info(herd, job) == ""
    assert sorted(gpu_rows(herd)) == [0]


def test_a_failing_probe_is_reported_once_and_shown(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    write_state(state, [{"memory_total": "24GiB"}])
    herd.start("--fake-gpus", str(state))
    write_state(state, "{broken")

    def failing() -> dict[str, object] | None:
        answer = herd.json("gpus")
        return answer if answer["probe_error"] else None

    answer = wait_for(failing, 10, "the probe to fail")
    assert "Expecting property name" in str(answer["probe_error"])
    assert isinstance(answer["probe_failing_since"], float)
    assert answer["read_at"] < answer["probe_failing_since"]
    footer = herd.cli("gpus").stdout
    assert "failing since " in footer and "showing the reading of " in footer
    assert "failing since " in herd.cli("daemon", "status").stdout

    write_state(state, [{"memory_total": "24GiB"}])
    wait_for(lambda: herd.json("gpus")["probe_error"] is None, 10, "the probe to work again")
    log = (herd.home / "daemon.log").read_text()
    assert log.count("GPU probe failed") == 1
    assert log.count("GPU probe works again") == 1
    assert "failing since" not in herd.cli("gpus").stdout


def test_a_mem_job_at_its_gpus_job_limit_waits_for_a_slot(herd: Herd, recorder: Recorder) -> None:
    herd.start("--fake-gpus", "1", "--slots", "2")
    args = ("--mem", "1GiB", "--only-gpus", "0", "--")
    running = [herd.submit(*args, recorder.cmd("run", wait="go")) for _ in range(2)]
    for job in running:
        herd.wait_state(job, "running")
    third = herd.submit(*args, recorder.cmd("run", wait="go"))
    assert herd.job(third)["reason"] == (
        "waiting for a free slot on 1 GPU of --only-gpus 0 "
        "(GPU 0 has reached the limit of jobs set for it)"
    )
    recorder.go()
    herd.wait_state(third, "succeeded")


def test_a_paused_job_on_a_lost_gpu_is_not_said_to_run_on(herd: Herd, tmp_path: Path) -> None:
    # `show` said "the job runs on" of a job paused (SIGSTOPped) there.
    state = tmp_path / "gpus.json"
    write_state(state, [{"memory_total": "24GiB"}, {"memory_total": "24GiB"}])
    herd.start("--fake-gpus", str(state))
    job = herd.submit("--only-gpus", "1", "--", "sleep 60")
    herd.wait_state(job, "running")
    herd.cli("pause", str(job))
    herd.wait_state(job, "paused")
    write_state(state, [{"memory_total": "24GiB"}, {"lost": True}])
    wait_for(lambda: herd.json("show", str(job))["gpus_gone"], 10, "GPU 1 to be lost")
    assert shown_gpus(herd, job) == (
        "1 (GPU 1 lost: the probe no longer sees it; the job stays paused there, and its work"
        " there may fail once resumed)"
    )
    herd.cli("kill", str(job))

"""Placement through a real daemon: GPUs, slots, priorities, the queue's order and dependencies.

Jobs record what they saw (job id, CUDA_VISIBLE_DEVICES, start and end times) into files, and
the tests judge the scheduler from those records.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Herd, Recorder, reused, started_once, stays, wait_for
from gpuherd.core.units import format_size
from gpuherd.devices import host_memory_total
from gpuherd.errors import HerdError


def max_overlap(records: list[dict[str, Any]]) -> dict[str, int]:
    """The most jobs that ran at the same moment, per GPU index (from recorded intervals)."""
    by_gpu: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for r in records:
        for gpu in r["gpus"].split(","):
            by_gpu[gpu] += [(r["start"], 1), (r["end"], -1)]
    peaks = {}
    for gpu, edges in by_gpu.items():
        running = peak = 0
        for _, step in sorted(edges, key=lambda e: (e[0], e[1])):  # an end before a start
            running += step
            peak = max(peak, running)
        peaks[gpu] = peak
    return peaks


def start_order(rec: Recorder, name: str) -> list[int]:
    return [r["id"] for r in sorted(rec.lines(name), key=lambda r: r["start"])]


@pytest.fixture(scope="module")
def one_gpu_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with started_once(tmp_path_factory, "--fake-gpus", "1") as herd:
        yield herd


@pytest.fixture
def one_gpu(one_gpu_daemon: Herd) -> Iterator[Herd]:
    """The module's daemon on 1 fake GPU, for a test of the order in which jobs start, which
    may pause the queue: it finds the queue running and every earlier test's job ended, and
    leaves it so (conftest's `reused`). (A daemon each: ~0.8 CPU-s a start.)"""
    yield from reused(one_gpu_daemon, "--fake-gpus", "1")


def test_forty_jobs_on_four_gpus_each_run_once_never_sharing(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    lines = [recorder.cmd(f"job-{n}", sleep=0.05 + 0.05 * (n % 4)) for n in range(40)]
    ids = daemon.submit_lines(lines)
    assert len(ids) == 40

    assert daemon.cli("wait", timeout=60).returncode == 0

    records = []
    for n, job_id in enumerate(ids):
        seen = recorder.lines(f"job-{n}")
        assert len(seen) == 1, f"job {job_id} ran {len(seen)} times"
        assert seen[0]["id"] == job_id and seen[0]["attempt"] == 1
        assert seen[0]["gpus"] in {"0", "1", "2", "3"}, seen[0]
        records.append(seen[0])
    assert max(max_overlap(records).values()) == 1
    states = {j["id"]: j["state"] for j in daemon.ls_all() if j["id"] >= ids[0]}
    assert states == dict.fromkeys(ids, "succeeded")  # and no job of its own besides them


def test_higher_priority_starts_first(one_gpu: Herd, recorder: Recorder) -> None:
    herd = one_gpu
    herd.cli("pause")
    low = herd.submit("--priority", "0", recorder.cmd("order"))
    high = herd.submit("--priority", "10", recorder.cmd("order"))
    herd.cli("resume")
    herd.wait_state(low, "succeeded")
    herd.wait_state(high, "succeeded")
    assert start_order(recorder, "order") == [high, low]


def test_paused_queue_keeps_jobs_queued_until_resume(one_gpu: Herd, recorder: Recorder) -> None:
    daemon = one_gpu
    daemon.cli("pause")
    ids = daemon.submit_lines([recorder.cmd("ran"), recorder.cmd("ran")])

    def all_waiting() -> bool:
        jobs = [j for j in daemon.json("ls") if j["id"] in ids]
        return all(j["state"] == "queued" and j["reason"] == "queue paused" for j in jobs)

    assert all_waiting()
    stays(all_waiting, 0.5, "jobs queued while the queue is paused")
    assert recorder.lines("ran") == []

    daemon.cli("resume")
    for job_id in ids:
        daemon.wait_state(job_id, "succeeded")
    assert sorted(r["id"] for r in recorder.lines("ran")) == ids


def test_two_gpu_job_and_cpu_only_job(shared_daemon: Herd, recorder: Recorder) -> None:
    daemon = shared_daemon
    blockers = daemon.submit_lines([recorder.cmd("blockers", wait="go")] * 4)
    for job_id in blockers:
        daemon.wait_state(job_id, "running")

    cpu = daemon.submit("--gpus", "0", recorder.cmd("cpu"))
    assert daemon.wait_state(cpu, "succeeded")["gpus"] == []
    assert recorder.lines("cpu")[0]["gpus"] == ""  # set, and empty
    assert all(daemon.job(j)["state"] == "running" for j in blockers)

    pair = daemon.submit("--gpus", "2", recorder.cmd("pair"))
    recorder.go()
    job = daemon.wait_state(pair, "succeeded")
    seen = recorder.lines("pair")[0]["gpus"].split(",")
    assert len(seen) == 2 and len(set(seen)) == 2 and set(seen) <= {"0", "1", "2", "3"}
    assert sorted(job["gpus"]) == sorted(int(g) for g in seen)


def jobs_per_gpu(herd: Herd) -> dict[int, int]:
    return {g["index"]: len(g["jobs"]) for g in herd.json("gpus")["gpus"]}


def check_slots(herd: Herd, recorder: Recorder, jobs: int, slots: dict[int, int]) -> None:
    """Fill every slot with jobs that wait for "go", then check they never over-commit."""
    ids = herd.submit_lines([recorder.cmd("runs", wait="go")] * jobs)
    wait_for(lambda: jobs_per_gpu(herd) == slots, what=f"GPU slots filled as {slots}")
    running = [j for j in ids if herd.job(j)["state"] == "running"]
    assert len(running) == sum(slots.values())
    # The overlap below is measured from the jobs' own start stamps: let them all take one.
    wait_for(lambda: recorder.waiting("runs") == len(running), what="running jobs to begin")
    recorder.go()
    for job_id in ids:
        herd.wait_state(job_id, "succeeded")
    records = recorder.lines("runs")
    assert sorted(r["id"] for r in records) == ids
    assert max_overlap(records) == {str(i): n for i, n in slots.items()}


def test_static_gpus_with_a_repeated_index_give_two_slots(herd: Herd, recorder: Recorder) -> None:
    herd.start("--gpus", "0,0,1")
    assert {g["index"]: g["slots"] for g in herd.json("gpus")["gpus"]} == {0: 2, 1: 1}
    check_slots(herd, recorder, 6, {0: 2, 1: 1})


def test_slots_option_lets_jobs_share_each_gpu(herd: Herd, recorder: Recorder) -> None:
    herd.start("--fake-gpus", "2", "--slots", "2")
    check_slots(herd, recorder, 8, {0: 2, 1: 2})


def test_after_starts_only_once_the_dependency_succeeded(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    first = daemon.submit(recorder.cmd("runs", wait="go"))
    then = daemon.submit("--after", str(first), recorder.cmd("runs"))
    daemon.wait_state(first, "running")
    job = daemon.job(then)
    assert job["state"] == "queued" and job["reason"] == f"waiting for job {first}"
    recorder.go()
    daemon.wait_state(then, "succeeded")
    by_id = {r["id"]: r for r in recorder.lines("runs")}
    assert by_id[then]["start"] >= by_id[first]["end"]


def test_failed_dependency_cancels_the_whole_chain(shared_daemon: Herd, recorder: Recorder) -> None:
    daemon = shared_daemon
    a = daemon.submit(recorder.cmd("a", wait="go", exit=3))
    b = daemon.submit("--after", str(a), recorder.cmd("b"))
    c = daemon.submit("--after", str(b), recorder.cmd("c"))
    assert daemon.job(c)["reason"] == f"waiting for job {b}"
    recorder.go()
    assert daemon.wait_state(a, "failed")["exit_code"] == 3
    for waiter, dep in ((b, a), (c, b)):
        job = daemon.wait_state(waiter, "cancelled", "succeeded", "failed")
        assert (job["state"], job["outcome"]) == ("cancelled", "dependency_failed")
        assert str(dep) in job["message"]
    assert recorder.lines("b") == recorder.lines("c") == []


def test_after_any_waits_for_any_end_and_is_never_cancelled(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    # Slurm's afterany: a summary of a sweep runs once every point ended, failures included.
    failing = daemon.submit(recorder.cmd("a", wait="go", exit=3))
    good = daemon.submit("--", "true")
    summary = daemon.submit("--after-any", f"{failing},{good}", recorder.cmd("summary"))
    strict = daemon.submit("--after", str(failing), "--after-any", str(good), "--", "true")
    assert daemon.job(summary)["reason"] == f"waiting for job {failing}"
    assert (daemon.job(summary)["after"], daemon.job(summary)["after_any"]) == (
        [],
        [failing, good],
    )
    recorder.go()
    daemon.wait_state(summary, "succeeded")
    by_id = {r["id"]: r for r in recorder.lines("a") + recorder.lines("summary")}
    assert by_id[summary]["start"] >= by_id[failing]["end"]
    assert daemon.wait_state(strict, "cancelled")["outcome"] == "dependency_failed"
    assert "after any end of" in daemon.cli("show", str(summary)).stdout
    # An --after-any on a job that already failed is no mistake: it runs at once.
    late = daemon.submit("--after-any", str(failing), "--", "true")
    daemon.wait_state(late, "succeeded")
    unknown = daemon.cli("submit", "--after-any", "999", "--", "true", check=False)
    assert unknown.returncode == 1 and "no job 999" in unknown.stderr


def test_retry_of_a_dependency_failed_job_does_not_wait_forever(
    shared_daemon: Herd, recorder: Recorder
) -> None:
    daemon = shared_daemon
    first = daemon.submit(recorder.cmd("first", wait="go", exit=1))
    waiter = daemon.submit("--after", str(first), "--", "true")
    recorder.go()
    daemon.wait_state(first, "failed")
    daemon.wait_state(waiter, "cancelled")
    # Submitted after the failure, a job waiting for it ends as the waiter did, at once, and
    # says so: a script's `submit --after $a` does the same however fast `a` failed.
    late = daemon.cli("submit", "-q", "--after", str(first), "--", "true")
    late_id = int(late.stdout)
    assert late.stderr == (
        f"gpuherd: warning: job {late_id} is cancelled at once: job {first}, which it waits for, "
        f"already failed (gpuherd retry {first} {late_id} runs both again)\n"
    )
    shown = daemon.job(late_id)
    assert (shown["state"], shown["outcome"]) == ("cancelled", "dependency_failed")
    assert [(e["event"], e["to_state"], e["detail"]) for e in shown["events"]][-1] == (
        "cancel",
        "cancelled",
        f"job {first} ended (failed)",
    )
    answer = daemon.client.post(
        "/jobs", {"jobs": [{"command": "true", "cwd": "/", "env": {}, "after": [first]}]}
    )
    assert answer["cancelled"] == answer["ids"] and len(answer["warnings"]) == 1
    retried = daemon.cli("retry", str(waiter), check=False)
    # Refused, with one line that says to retry both, and nothing changed.
    assert retried.returncode != 0
    assert (
        retried.stderr.startswith("gpuherd: error:") and f"retry {first} {waiter}" in retried.stderr
    )
    assert daemon.job(waiter)["state"] == "cancelled"
    # Retrying both queues the dependency first; the waiters then wait for it again.
    both = daemon.cli("retry", str(first), str(waiter), str(late_id))
    assert both.returncode == 0
    assert daemon.wait_state(waiter, "cancelled")["outcome"] == "dependency_failed"
    assert daemon.wait_state(late_id, "cancelled")["events"][-2]["event"] == "retry"
    assert daemon.job(first)["attempt"] == 2


def test_after_an_unknown_job_is_refused_and_queues_nothing(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    before = daemon.ls_all()
    proc = daemon.cli("submit", "--after", "999", "--", "true", check=False)
    assert proc.returncode != 0
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error:") and "999" in lines[0]
    assert daemon.ls_all() == before


def test_after_last_waits_for_the_job_submitted_last(daemon: Herd) -> None:
    none_yet = daemon.cli("submit", "--after", "last", "--", "true", check=False)
    assert none_yet.returncode == 1
    assert none_yet.stderr == "gpuherd: error: --after last: there is no job yet to wait for\n"
    first = daemon.submit("--hold", "--", "true")
    second = daemon.submit("-a", "last", "--", "true")  # tsp -d
    third = daemon.submit("--after-any", "last", "--after", str(first), "--", "true")
    daemon.cli("sweep", "true {x}", "-p", "x", "1", "2", "--after", "last", "-q")
    jobs = {job["id"]: job for job in daemon.ls_all()}
    assert jobs[second]["after"] == [first]
    assert (jobs[third]["after"], jobs[third]["after_any"]) == ([first], [second])
    points = [job for job in jobs.values() if job["sweep"]]
    assert [job["after"] for job in points] == [[third], [third]]
    typo = daemon.cli("submit", "--after", "lats", "--", "true", check=False)
    assert typo.returncode == 2 and "or last (the job submitted last)" in typo.stderr


def test_hold_and_release(one_gpu: Herd, recorder: Recorder) -> None:
    daemon = one_gpu
    held = daemon.submit("--hold", recorder.cmd("held"))
    daemon.cli("pause")
    later = daemon.submit(recorder.cmd("later"))
    daemon.cli("hold", str(later))
    daemon.cli("resume")
    # a witness job runs to the end: the queue dispatched while the two stayed held
    witness = daemon.submit("--", "true")
    daemon.wait_state(witness, "succeeded")
    for job_id in (held, later):
        job = daemon.job(job_id)
        assert (job["state"], job["reason"]) == ("held", "held")
    assert recorder.lines("held") == recorder.lines("later") == []

    daemon.cli("release", f"{held},{later}")
    daemon.wait_state(held, "succeeded")
    daemon.wait_state(later, "succeeded")
    assert len(recorder.lines("held")) == len(recorder.lines("later")) == 1


def test_move_first_jumps_the_queue(one_gpu: Herd, recorder: Recorder) -> None:
    herd = one_gpu
    herd.cli("pause")
    ids = herd.submit_lines([recorder.cmd("order")] * 3)
    urgent = herd.submit("--priority", "5", recorder.cmd("order"))
    # Ahead of the priority-5 job too: the moved job takes its priority, and says so.
    answer = herd.cli("move", str(ids[2]), "--first").stdout
    assert answer == f"job {ids[2]}: moved to the front (priority 0 -> 5)\n"
    held = herd.submit("--hold", "--priority", "9", "--", "true")
    # ls lists the waiting jobs in the order they are to start, a held one where it will
    # start once released (its priority 9 puts it first); after the module's recent ended jobs.
    listed = [j["id"] for j in herd.json("ls") if j["id"] >= ids[0]]
    assert listed == [held, ids[2], urgent, ids[0], ids[1]]
    assert [j["id"] for j in herd.json("ls", "--limit", "2") if j["id"] >= ids[0]] == [
        held,
        ids[2],
    ]
    refused = herd.cli("move", str(ids[1]), "--before", str(ids[1]), check=False)
    assert refused.returncode != 0
    assert refused.stderr.splitlines() == [
        f"gpuherd: error: job {ids[1]} cannot move before itself: name another queued job"
    ]
    herd.cli("rm", str(held))
    herd.cli("resume")
    for job_id in [*ids, urgent]:
        herd.wait_state(job_id, "succeeded")
    assert start_order(recorder, "order") == [ids[2], urgent, ids[0], ids[1]]


def test_priority_command_changes_the_order(one_gpu: Herd, recorder: Recorder) -> None:
    herd = one_gpu
    herd.cli("pause")
    ids = herd.submit_lines([recorder.cmd("order")] * 3)
    herd.cli("priority", str(ids[1]), "5")
    assert herd.job(ids[1])["priority"] == 5
    # A negative priority needs no `--` before it: the last job goes behind the default 0.
    assert herd.cli("priority", str(ids[0]), "-2").stdout == f"job {ids[0]}: priority -2\n"
    herd.cli("resume")
    for job_id in ids:
        herd.wait_state(job_id, "succeeded")
    assert start_order(recorder, "order") == [ids[1], ids[2], ids[0]]


def gpu_states(herd: Herd) -> dict[int, str]:
    return {g["index"]: g["state"] for g in herd.json("gpus")["gpus"]}


def test_drain_enable_remove_and_add_gpus_at_runtime(daemon: Herd, recorder: Recorder) -> None:
    assert gpu_states(daemon) == {0: "enabled", 1: "enabled", 2: "enabled", 3: "enabled"}

    daemon.cli("gpus", "drain", "0")
    assert gpu_states(daemon)[0] == "draining"
    ids = daemon.submit_lines([recorder.cmd("one", wait="go1")] * 4)

    def running() -> list[int]:
        return [j for j in ids if daemon.job(j)["state"] == "running"]

    wait_for(lambda: len(running()) == 3, what="three jobs running")
    running_ids = running()
    assert sorted(g for j in running_ids for g in daemon.job(j)["gpus"]) == [1, 2, 3]
    waiting = next(j for j in ids if j not in running_ids)
    stays(lambda: daemon.job(waiting)["state"] == "queued", 0.3, "the 4th job queued")

    daemon.cli("gpus", "enable", "0")
    assert daemon.wait_state(waiting, "running")["gpus"] == [0]
    recorder.go("go1")
    for job_id in ids:
        daemon.wait_state(job_id, "succeeded")

    daemon.cli("gpus", "remove", "3")
    assert sorted(gpu_states(daemon)) == [0, 1, 2]
    ids = daemon.submit_lines([recorder.cmd("two", wait="go2")] * 4)
    wait_for(lambda: len(running()) == 3, what="three jobs running")
    waiting = next(j for j in ids if daemon.job(j)["state"] == "queued")
    assert sorted(g for j in ids for g in daemon.job(j)["gpus"] if j != waiting) == [0, 1, 2]

    with pytest.raises(HerdError, match=r"slots \(--slots\) must be 1 to 1024, got 1099511627776"):
        daemon.client.post("/gpus", {"index": 3, "slots": 2**40})  # the API, past the CLI
    with pytest.raises(HerdError, match="GPU 4096 is not a GPU index: use 0 to 4095"):
        daemon.client.post("/gpus", {"index": 4096, "slots": 1})  # as the CLI caps them
    daemon.cli("gpus", "add", "3")
    assert gpu_states(daemon) == {0: "enabled", 1: "enabled", 2: "enabled", 3: "enabled"}
    assert daemon.wait_state(waiting, "running")["gpus"] == [3]
    recorder.go("go2")
    for job_id in ids:
        daemon.wait_state(job_id, "succeeded")
    assert sorted(r["gpus"] for r in recorder.lines("two")) == ["0", "1", "2", "3"]


def test_a_verb_on_more_jobs_than_a_piece_starts_nothing_before_it_is_done(one_gpu: Herd) -> None:
    """A verb on many jobs works in pieces, answering other clients in between; the job it
    kills first ends meanwhile, yet the jobs queued behind it are cancelled, never started."""
    herd = one_gpu
    first = herd.submit("--", "sleep", "60")
    herd.wait_state(first, "running")
    rest = herd.submit_lines(["true"] * 1199)
    assert rest == list(range(first + 1, first + 1200))
    answer = herd.cli("kill", f"{first}-{rest[-1]}").stdout.splitlines()
    assert answer == [
        f"job {first}: stopping (SIGTERM, then SIGKILL after 10s)",
        f"jobs {rest[0]}-{rest[-1]}: cancelled",
    ]
    assert herd.wait_state(first, "killed")["outcome"] == "killed"
    jobs = [j for j in herd.ls_all() if j["id"] > first]  # (the module's earlier jobs ended)
    assert {j["id"] for j in jobs} == set(rest)
    assert {j["state"] for j in jobs} == {"cancelled"}
    assert all(j["started_at"] is None for j in jobs)


def test_kill_of_a_job_and_its_waiter_cancels_each_once(one_gpu: Herd) -> None:
    daemon = one_gpu
    daemon.cli("pause")
    first = daemon.submit("--", "true")
    waiter = daemon.submit("--after", str(first), "--", "true")
    # The waiter is cancelled with the job it waits for, before its own turn in the list:
    # its turn must see that, not cancel it a second time from what was read before.
    answer = daemon.cli("kill", str(first), str(waiter))
    assert answer.stdout == f"jobs {first}-{waiter}: cancelled\n"
    job = daemon.job(waiter)
    assert (job["state"], job["outcome"]) == ("cancelled", "dependency_failed")
    cancels = [e for e in job["events"] if e["event"] == "cancel"]
    assert len(cancels) == 1, cancels


def test_rm_of_a_job_and_its_waiter_removes_both(one_gpu: Herd) -> None:
    daemon = one_gpu
    daemon.cli("pause")
    first = daemon.submit("--", "true")
    waiter = daemon.submit("--after", str(first), "--", "true")
    answer = daemon.cli("rm", str(first), str(waiter))
    assert answer.stdout == f"jobs {first}-{waiter}: removed\n"
    assert {job["id"] for job in daemon.ls_all()}.isdisjoint({first, waiter})


def test_config_retries_is_the_retries_of_a_job_that_gives_none(daemon: Herd) -> None:
    # gpulimit's MAX_ERR_TIMES: one setting instead of --retries on every submit.
    assert daemon.cli("config", "set", "retries", "2").stdout == "retries = 2\n"
    default = daemon.submit("--", "false")
    explicit = daemon.submit("--retries", "0", "--", "false")
    point = daemon.json("sweep", "false {x}", "-p", "x", "1", "--json")["ids"][0]
    for job_id, attempts in ((default, 3), (explicit, 1), (point, 3)):
        job = daemon.wait_state(job_id, "failed", timeout=30)
        assert (job["retries"], job["attempt"]) == (attempts - 1, attempts), job
    daemon.cli("config", "set", "retries", "0")
    assert daemon.job(daemon.submit("--hold", "--", "false"))["retries"] == 0


def test_config_refuses_a_count_beyond_64_bits_and_submit_goes_on(daemon: Herd) -> None:
    huge = str(2**63)
    for name, value in (("retries", huge), ("max-running", huge), ("project-limits", f"p={huge}")):
        refused = daemon.cli("config", "set", name, value, check=False)
        assert refused.returncode == 2
        assert len(refused.stderr.splitlines()) == 1
        assert "to 2**63 - 1" in refused.stderr  # the range (not its 19 digits)
    assert daemon.cli("config", "get", "retries").stdout == "0\n"
    daemon.wait_state(daemon.submit("--", "true"), "succeeded")  # was refused: "too large"
    # A number the daemon cannot store: the CLI refuses it by its option, before asking...
    wrong = daemon.cli("submit", "--retries", huge, "--", "true", check=False)
    assert (wrong.returncode, wrong.stderr) == (
        2,
        f"gpuherd: error: --retries: {huge} is too large (at most 2**63 - 1) "
        "(see gpuherd submit --help)\n",
    )
    held, tiny = daemon.submit("--hold", "--", "true"), str(-(2**63) - 1)
    low = daemon.cli("priority", str(held), tiny, check=False)  # was "too large" too
    assert low.returncode == 2
    assert low.stderr.startswith(f"gpuherd: error: priority {tiny} is too small (at least -2**63)")
    # ... and the daemon names it by its field, for any other client.
    with pytest.raises(
        HerdError, match=rf"^jobs\.0\.retries {huge} is too large \(at most 2\*\*63 - 1\)$"
    ):
        daemon.client.post(
            "/jobs", {"jobs": [{"command": "true", "cwd": "/", "retries": int(huge)}]}
        )


def test_keep_ram_set_as_a_share_is_shown_as_one(daemon: Herd) -> None:
    size = format_size(int(0.2 * host_memory_total()))
    assert daemon.cli("config", "set", "keep-ram", "20%").stdout == f"keep-ram = 20% ({size})\n"
    assert daemon.cli("config", "get", "keep-ram").stdout == f"20% ({size})\n"
    assert daemon.cli("config", "set", "keep-ram", "1GiB").stdout == "keep-ram = 1.0 GiB\n"


def test_a_share_is_echoed_once_as_its_value_is_written(daemon: Herd) -> None:
    # `keep-free 10 %` echoed `keep-free = 10 % (10%)`: the share as typed, then as taken.
    for typed in ("10 %", "10.0%", "0.1"):
        said = daemon.cli("config", "set", "keep-free", typed).stdout
        assert said == "keep-free = 10%\n", typed
    assert daemon.cli("config", "get", "keep-free").stdout == "10%\n"
    size = format_size(int(0.2 * host_memory_total()))
    said = daemon.cli("config", "set", "keep-ram", " 20.0 % ").stdout
    assert said == f"keep-ram = 20% ({size})\n"
    assert daemon.json("config")["keep-ram"] == f"20% ({size})"


def test_a_job_placement_did_not_reach_says_how_many_wait_ahead(
    daemon: Herd, recorder: Recorder
) -> None:
    # Placement reads at most SCAN_LIMIT queued jobs per pass, and as many again of each GPU
    # count behind them. A job behind more of its count that cannot start (1-GPU jobs asking
    # for all the host's memory, 3 GPUs free) was never looked at, though a GPU is free for
    # it: it said "waiting for its turn (its GPUs are held for an older job ...)", which no
    # job did.
    from gpuherd.engine_scan import SCAN_LIMIT

    busy = daemon.submit("--", recorder.cmd("busy", wait="go"))
    daemon.wait_state(busy, "running")
    greedy = ("--ram", f"{host_memory_total()}B")
    backlog = daemon.submit_lines(["true"] * (2 * SCAN_LIMIT + 100), *greedy)
    small = daemon.submit("--", "true")
    ahead = f"waiting: {len(backlog):,} jobs ahead in the queue"
    wait_for(lambda: daemon.job(small)["reason"] == ahead, what=f"job {small}: {ahead!r}")
    daemon.cli("kill", f"{backlog[0]}-{backlog[-1]}")  # then nothing stands before it
    daemon.wait_state(small, "succeeded")
    recorder.go()
    daemon.wait_state(busy, "succeeded")

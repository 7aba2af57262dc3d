"""What gpuherd shows of its GPUs and of why a job waits, and `--exclusive`, through the CLI
and the Python API against a real daemon (fake GPUs)."""

from __future__ import annotations

import time

from conftest import Herd, Probe, Runs, max_overlap, wait_for
from gpuherd.pyapi import Herd as ApiHerd

GIB = 1 << 30


def starving(herd: Herd) -> tuple[int, int]:
    """On 2 fake GPUs with reserve-after 0.1s: a 1-GPU job running, and a 2-GPU job that has
    waited past reserve-after (the next pass keeps both GPUs for it); their ids."""
    herd.start("--fake-gpus", "2")
    herd.cli("config", "set", "reserve-after", "0.1s")
    first = herd.submit("--", "sleep", "60")
    herd.wait_state(first, "running")
    big = herd.submit("--gpus", "2", "--", "sleep", "60")
    created = herd.job(big)["created_at"]
    wait_for(lambda: time.time() - created > 0.5, 5, "the 2-GPU job to wait past reserve-after")
    return first, big


def reserved(herd: Herd) -> list[list[dict[str, object]]]:
    return [gpu["reserved"] for gpu in herd.json("gpus")["gpus"]]


def test_a_job_waiting_behind_a_starving_job_names_it(herd: Herd) -> None:
    first, big = starving(herd)
    small = herd.submit("--", "true")  # would fit on the free GPU, but the big job holds it
    assert herd.job(small)["reason"] == (
        f"waiting for its turn: GPUs 0, 1 are held for job {big}, which waits longer"
    )
    assert f"held for job {big}" in herd.cli("ls").stdout
    # `gpus` says so too, under its table (it showed GPU 1 free, and no reason the jobs wait).
    why = "which has waited for 2 GPUs past reserve-after (0.1s): no job behind it starts there"
    assert f"GPUs 0-1 are reserved for job {big}, {why}" in " ".join(
        herd.cli("gpus").stdout.split()
    )
    assert reserved(herd) == [[{"job": big, "job_id": big, "reason": why}]] * 2
    herd.cli("kill", str(first))
    herd.wait_state(big, "running")
    assert herd.job(small)["reason"] == "waiting for a free GPU"
    assert reserved(herd) == [[], []]
    herd.cli("kill", str(big))
    herd.wait_state(small, "succeeded")


def test_gpus_reserved_for_a_starving_job_are_not_shown_once_it_is_gone(herd: Herd) -> None:
    # With the queue paused no placement pass runs: the GPUs stayed "reserved for job 2"
    # after job 2 was removed (rev11).
    first, big = starving(herd)
    herd.submit("--", "true")  # a pass runs, which keeps both GPUs for job `big`
    wait_for(lambda: all(reserved(herd)), 10, "the GPUs reserved for the starving job")
    herd.cli("pause")
    herd.cli("rm", str(big))
    assert reserved(herd) == [[], []]
    assert "reserved for" not in herd.cli("gpus").stdout
    herd.cli("resume")
    assert reserved(herd) == [[], []]
    herd.cli("kill", str(first))


def test_gpus_shows_the_memory_gpuherds_jobs_hold_and_no_trailing_blanks(herd: Herd) -> None:
    herd.start("--fake-gpus", "2x24GiB")
    held = herd.submit("--mem", "10GiB", "--", "sleep", "60")
    plain = herd.submit("--", "sleep", "60")
    gpu_of = {job: herd.wait_state(job, "running")["gpus"][0] for job in (held, plain)}
    rows = {row["index"]: row for row in herd.json("gpus")["gpus"]}
    assert rows[gpu_of[held]]["held"] == 10 * GIB
    assert rows[gpu_of[plain]]["held"] == 0  # it declared no --mem and uses nothing yet
    lines = herd.cli("gpus").stdout.splitlines()  # piped: no terminal
    assert lines[0].split() == [
        "GPU", "NAME", "STATE", "SLOTS", "MEMORY", "HELD", "UTIL", "JOBS", "FOREIGN"
    ]  # fmt: skip
    row = lines[1 + gpu_of[held]]
    assert "10.0 GiB" in row and row.split()[-1] == str(held)
    # Rows whose last columns are empty (no foreign process) end where their text ends.
    assert [line for line in lines if line != line.rstrip()] == []
    herd.cli("kill", f"{held},{plain}")


def test_a_negative_gpu_index_is_refused_in_one_line(herd: Herd) -> None:
    for verb in ("add", "remove", "drain", "enable"):
        proc = herd.cli("gpus", verb, "-1", check=False)  # refused before any daemon is asked
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.splitlines() == [
            "gpuherd: error: invalid GPU index '-1': GPUs are numbered from 0 to 4095, as "
            f"`gpuherd gpus` lists them (see gpuherd gpus {verb} --help)"
        ]
    # An option that is not one is still click's "No such option", with its suggestion.
    typo = herd.cli("gpus", "add", "1", "--slot", "2", check=False)
    assert typo.returncode == 2 and "Did you mean '--slots'?" in typo.stderr


def test_an_exclusive_job_shares_its_gpu_with_no_job(herd: Herd) -> None:
    herd.start("--fake-gpus", "1x24GiB", "--slots", "2")
    alone = herd.submit("--exclusive", "--", "sleep", "60")
    herd.wait_state(alone, "running")
    with_mem = herd.submit("--mem", "1GiB", "--", "sleep", "60")
    in_a_slot = herd.submit("--", "sleep", "60")
    for job in (with_mem, in_a_slot):
        reason = herd.job(job)["reason"]
        assert reason.endswith("(GPU 0 runs an exclusive job)"), reason
    assert herd.job(alone)["exclusive"] is True
    assert "exclusive" in herd.cli("show", str(alone)).stdout
    herd.cli("kill", str(alone))
    herd.wait_state(with_mem, "running")
    herd.wait_state(in_a_slot, "running")  # the GPU's two slots, shared again
    # An exclusive job waits for the GPU to be empty, not for a slot or memory.
    second = ApiHerd(herd.client).submit("sleep 60", exclusive=True)  # the Python API's
    assert herd.job(second.id)["reason"] == "waiting for an empty GPU"
    herd.cli("kill", f"{with_mem},{in_a_slot}")
    herd.wait_state(second.id, "running")
    herd.cli("kill", str(second.id))


def test_exclusive_is_refused_without_gpus_and_edit_changes_it(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    refused = herd.cli("submit", "--gpus", "0", "--exclusive", "--", "true", check=False)
    assert refused.returncode == 2 and refused.stderr.splitlines() == [
        "gpuherd: error: --exclusive with --gpus 0: a CPU-only job gets no GPU to itself; drop "
        "one of them (see gpuherd submit --help)"
    ]
    job = herd.submit("--hold", "--", "true")
    assert herd.cli("edit", str(job), "--exclusive").stdout.strip() == (
        f"job {job}: edited (exclusive no -> yes)"
    )
    assert herd.job(job)["exclusive"] is True
    herd.cli("edit", str(job), "--no-exclusive")
    assert herd.job(job)["exclusive"] is False
    # A sweep's points take it as a job does.
    herd.cli("sweep", "true {x}", "-p", "x", "1", "2", "--exclusive", "--hold")
    points = [j for j in herd.ls_all() if j["sweep"]]
    assert len(points) == 2 and all(j["exclusive"] for j in points)


def test_run_exclusive_keeps_each_job_alone_on_a_gpu_of_two_slots(runs: Runs, probe: Probe) -> None:
    (runs.root / "jobs.txt").write_text(
        "".join(probe.cmd(name, sleep=0.3) + "\n" for name in "abc")
    )
    proc = runs.run("--gpus", "0,0", "--exclusive", str(runs.root / "jobs.txt"))
    assert proc.returncode == 0, proc.stderr + proc.stdout
    seen = probe.by_name()
    assert {r["gpus"] for r in seen.values()} == {"0"}
    # Without --exclusive two of them run at once on GPU 0's two slots.
    assert max_overlap([(r["start"], r["end"]) for r in seen.values()]) == 1

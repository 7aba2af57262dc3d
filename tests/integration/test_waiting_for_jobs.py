"""A queued job's reason names the jobs it still waits for as the verbs name jobs: `waiting
for job 12`, `waiting for jobs 3-7,9`. A sweep's summary (`--after-any` of every point, as
the README shows it) said `waiting for job 53, 54, 55, ...` with each of its ids, a line of
thousands of characters in `ls`, `show` and the dashboard; past a few ranges it gives the
count and the first ones (`show` lists them all)."""

from __future__ import annotations

from conftest import Herd


def test_the_jobs_a_job_waits_for_are_named_as_ranges(daemon: Herd) -> None:
    held = daemon.submit_lines(["true"] * 30, "--hold", "--gpus", "0")
    first, last = held[0], held[-1]
    summary = daemon.submit("--after-any", f"{first}-{last}", "--gpus", "0", "--", "true")
    assert daemon.job(summary)["reason"] == f"waiting for jobs {first}-{last}"
    # Every other one: fifteen ranges of one job each, too many to name in one line.
    odd = held[::2]
    scattered = daemon.submit("--after", ",".join(map(str, odd)), "--gpus", "0", "--", "true")
    assert daemon.job(scattered)["reason"] == (
        f"waiting for 15 jobs: {odd[0]},{odd[1]},{odd[2]},{odd[3]},…"
    )
    assert f"after      {','.join(map(str, odd))}" in daemon.cli("show", str(scattered)).stdout
    daemon.cli("release", f"{first}-{held[-2]}")
    daemon.wait_state(held[-2], "succeeded")
    assert daemon.job(summary)["reason"] == f"waiting for job {last}"
    daemon.cli("release", str(last))
    daemon.wait_state(summary, "succeeded")
    daemon.wait_state(scattered, "succeeded")

"""A queued job's reason names the jobs it still waits for as the verbs name jobs: `waiting
for job 12`, `waiting for jobs 3-7,9`. A sweep's summary (`--after-any` of every point, as
the README shows it) said `waiting for job 53, 54, 55, ...` with each of its ids, a line of
thousands of characters in `ls`, `show` and the dashboard; past a few ranges it gives the
count and the first ones (`show` lists them all). Of held ones it says what releases them
(`waiting for job 19 (held: gpuherd release 19)`): it said `waiting for job 19` alone."""

from __future__ import annotations

from conftest import Herd


def test_the_jobs_a_job_waits_for_are_named_as_ranges(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    held = daemon.submit_lines(["true"] * 30, "--hold", "--gpus", "0")
    first, last = held[0], held[-1]
    summary = daemon.submit("--after-any", f"{first}-{last}", "--gpus", "0", "--", "true")
    assert daemon.job(summary)["reason"] == (
        f"waiting for jobs {first}-{last} (held: gpuherd release {first}-{last})"
    )
    # Every other one: fifteen ranges of one job each, too many to name in one line.
    odd = held[::2]
    scattered = daemon.submit("--after", ",".join(map(str, odd)), "--gpus", "0", "--", "true")
    assert daemon.job(scattered)["reason"] == (
        f"waiting for 15 jobs: {odd[0]},{odd[1]},{odd[2]},{odd[3]},… "
        "(all held: gpuherd ls --state held)"
    )
    assert f"after      {','.join(map(str, odd))}" in daemon.cli("show", str(scattered)).stdout
    daemon.cli("release", f"{first}-{held[-2]}")
    daemon.wait_state(held[-2], "succeeded")
    assert daemon.job(summary)["reason"] == f"waiting for job {last} (held: gpuherd release {last})"
    daemon.cli("release", str(last))
    daemon.wait_state(summary, "succeeded")
    daemon.wait_state(scattered, "succeeded")


def test_a_job_waiting_for_held_ones_says_they_are_held_and_what_releases_them(
    shared_daemon: Herd,
) -> None:
    # It said only `waiting for job 19`, as if job 19 would run by itself.
    daemon = shared_daemon
    held = daemon.submit_lines(["true"] * 2, "--hold", "--gpus", "0")
    other = daemon.submit("--gpus", "0", "--", "sleep 300")
    daemon.wait_state(other, "running")
    one = daemon.submit("--after", str(held[0]), "--gpus", "0", "--", "true")
    assert daemon.job(one)["reason"] == (
        f"waiting for job {held[0]} (held: gpuherd release {held[0]})"
    )
    assert f"queued — waiting for job {held[0]} (held: " in daemon.cli("show", str(one)).stdout
    both = f"{held[0]}-{held[1]}"  # and `other` next: one range of three
    three = daemon.submit("--after", f"{both},{other}", "--gpus", "0", "--", "true")
    assert daemon.job(three)["reason"] == (
        f"waiting for jobs {held[0]}-{other} (jobs {both} held: gpuherd release {both})"
    )
    running = daemon.submit("--after", str(other), "--gpus", "0", "--", "true")
    assert daemon.job(running)["reason"] == f"waiting for job {other}"  # no hold to name
    daemon.cli("release", str(held[0]))
    daemon.wait_state(one, "succeeded")
    assert daemon.job(three)["reason"] == (
        f"waiting for jobs {held[1]}-{other} (job {held[1]} held: gpuherd release {held[1]})"
    )
    daemon.cli("kill", str(other))


def test_a_summary_waiting_for_many_held_jobs_counts_them(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    held = daemon.submit_lines(["true"] * 10, "--hold", "--gpus", "0")
    odd = held[::2]  # five ranges: past the four named
    other = daemon.submit("--gpus", "0", "--", "sleep 300")
    daemon.wait_state(other, "running")
    summary = daemon.submit(
        "--after", ",".join(map(str, [*odd, other])), "--gpus", "0", "--", "true"
    )
    assert daemon.job(summary)["reason"] == (
        f"waiting for 6 jobs: {odd[0]},{odd[1]},{odd[2]},{odd[3]},… "
        "(5 of them held: gpuherd ls --state held)"
    )
    daemon.cli("kill", str(other))

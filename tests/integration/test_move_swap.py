"""`gpuherd move ID --swap ID2`: two waiting jobs exchange their places in the queue (tsp -U,
pueue's switch), wherever they are in it; refused, in one line, for anything else."""

from __future__ import annotations

from conftest import Herd


def held_jobs(herd: Herd, project: str, count: int) -> list[int]:
    """`count` held jobs of `project`: they never start, and their order shows in `ls`."""
    return [herd.submit("--hold", "--project", project, "--", "true") for _ in range(count)]


def order(herd: Herd, project: str) -> list[int]:
    """The project's held jobs in the order they are to start, as `gpuherd ls` lists them."""
    listed = herd.cli("ls", "-q", "--state", "held", "--project", project).stdout
    return [int(word) for word in listed.split()]


def events(herd: Herd, job_id: int, name: str) -> list[str]:
    return [e["detail"] for e in herd.job(job_id)["events"] if e["event"] == name]


def test_two_waiting_jobs_apart_swap_places(shared_daemon: Herd) -> None:
    """`move ID2 --before ID1` swapped only neighbours: 1 and 4 of 1,2,3,4 took two moves."""
    a, b, c, d = held_jobs(shared_daemon, "swap-apart", 4)
    swapped = shared_daemon.cli("move", str(a), "--swap", str(d))
    assert swapped.stdout == f"job {a}: swapped with job {d}\n"
    assert order(shared_daemon, "swap-apart") == [d, b, c, a]
    # One event each, naming the other job; the jobs between kept theirs.
    assert [e.split(":")[0] for e in events(shared_daemon, a, "swap")] == [f"with job {d}"]
    assert [e.split(":")[0] for e in events(shared_daemon, d, "swap")] == [f"with job {a}"]
    assert events(shared_daemon, b, "swap") == events(shared_daemon, c, "swap") == []
    # Back again, by the other job, and `last` names the job submitted last.
    shared_daemon.cli("move", "last", "--swap", str(a))
    assert order(shared_daemon, "swap-apart") == [a, b, c, d]


def test_jobs_of_different_priorities_swap_their_priorities_too(shared_daemon: Herd) -> None:
    """A place is a priority and a position in it: exchanging positions alone would leave
    the higher-priority job ahead."""
    a, b, c = held_jobs(shared_daemon, "swap-prio", 3)
    shared_daemon.cli("priority", str(c), "5")
    assert order(shared_daemon, "swap-prio") == [c, a, b]
    swapped = shared_daemon.cli("move", str(b), "--swap", str(c))
    assert swapped.stdout == (
        f"job {b}: swapped with job {c} (priority 0 -> 5; job {c}: priority 5 -> 0)\n"
    )
    assert order(shared_daemon, "swap-prio") == [b, a, c]
    assert (shared_daemon.job(b)["priority"], shared_daemon.job(c)["priority"]) == (5, 0)
    assert events(shared_daemon, c, "swap")[0].endswith(" (priority 5 -> 0)")


def test_a_swap_is_refused_in_one_line_for_what_cannot_swap(shared_daemon: Herd) -> None:
    a, b = held_jobs(shared_daemon, "swap-refused", 2)
    go = shared_daemon.home.parent / "swap-go"
    running = shared_daemon.running_until(go)
    ended = shared_daemon.submit("--", "true")
    shared_daemon.wait_state(ended, "succeeded")
    refusals = [
        (a, a, f"job {a} cannot swap with itself: name another queued job"),
        (a, running, f"job {running} is running: only queued or held jobs can move"),
        (running, a, f"job {running} is running: only queued or held jobs can move"),
        (
            a,
            ended,
            f"job {ended} already ended (succeeded): `gpuherd retry --hold {ended}` puts it back "
            f"held, to move it before it runs again (`gpuherd release {ended}` runs it)",
        ),
        (a, 987654, "no job 987654: `gpuherd ls --all` lists the jobs there are"),
    ]
    try:
        for mover, other, said in refusals:
            refused = shared_daemon.cli("move", str(mover), "--swap", str(other), check=False)
            assert (refused.returncode, refused.stdout, refused.stderr) == (
                1,
                "",
                f"gpuherd: error: {said}\n",
            )
        assert "give exactly one of --first, --before ID or --swap ID" in (
            shared_daemon.usage_error("move", str(a), "--first", "--swap", str(b))
        )
        assert order(shared_daemon, "swap-refused") == [a, b]  # nothing moved
    finally:
        go.touch()

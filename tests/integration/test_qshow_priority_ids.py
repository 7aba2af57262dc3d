"""`gpuherd priority` took one job (`priority ID P`): a sweep's points waiting with another
priority could only be cancelled and submitted again. It takes job ids as the other verbs do
now, the priority last (`gpuherd priority $(gpuherd ls -q --sweep lr) 5`), and answers one
line per outcome; a job that cannot change (ended) is refused on its own line, exit 1, and
the others change all the same."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def test_priority_of_a_sweeps_points_at_once(shared_daemon: Herd, tmp_path: Path) -> None:
    herd = shared_daemon
    herd.cli(
        "sweep", "--hold", "--name", f"qshow-{tmp_path.name}", "-p", "lr", "1", "2", "3",
        "--", "echo {lr}",
        cwd=tmp_path,
    )  # fmt: skip
    points = [
        int(i) for i in herd.cli("ls", "-q", "--sweep", f"qshow-{tmp_path.name}").stdout.split()
    ]
    assert len(points) == 3
    done = herd.submit("true")
    herd.wait_state(done, "succeeded")

    answer = herd.cli("priority", *map(str, points), "5")
    first, last = min(points), max(points)
    assert answer.stdout == f"jobs {first}-{last}: priority 5\n" and answer.stderr == ""
    assert {herd.job(i)["priority"] for i in points} == {5}

    # An ended job among them: its own error line, the others changed, exit 1.
    mixed = herd.cli("priority", f"{first}-{last}", str(done), "-3", check=False)
    assert mixed.returncode == 1
    assert mixed.stdout == f"jobs {first}-{last}: priority -3\n"
    assert mixed.stderr.startswith(f"gpuherd: error: job {done} already ended (succeeded): ")
    assert len(mixed.stderr.splitlines()) == 1
    assert {herd.job(i)["priority"] for i in points} == {-3}

    # One job, as before; a priority that is no number is refused before any change.
    assert herd.cli("priority", str(last), "7").stdout == f"job {last}: priority 7\n"
    refused = herd.cli("priority", str(first), str(last), "high", check=False)
    assert refused.returncode == 2 and refused.stderr.startswith(
        "gpuherd: error: a priority is a whole number, not 'high': higher runs first "
        f"(the default is 0), e.g. gpuherd priority {first} {last} 10"
    )
    assert herd.job(last)["priority"] == 7

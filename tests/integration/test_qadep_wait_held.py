"""`gpuherd wait ID` of a held job says it waits for a release, as `submit --hold --wait`
does: `wait` without ids leaves held jobs out and says `gpuherd wait 7 waits for it`, and that
command then waited in silence, as though hung."""

from __future__ import annotations

from conftest import Herd


def test_waiting_for_a_held_job_says_what_releases_it(shared_daemon: Herd) -> None:
    daemon = shared_daemon
    held = daemon.submit("--hold", "--", "true")
    queued = daemon.submit("--after", str(held), "--", "true")
    waited = daemon.cli("wait", str(held), str(queued), "--timeout", "1s", check=False)
    assert waited.returncode == 2
    assert waited.stderr.splitlines()[0] == (
        f"gpuherd: job {held} is held: waiting until it is released"
        f" (gpuherd release {held} lets it run)"
    )
    quiet = daemon.cli("wait", "-q", str(held), "--timeout", "1s", check=False)
    assert (quiet.returncode, quiet.stderr) == (2, "")  # -q: the exit status tells
    daemon.cli("release", str(held))
    done = daemon.cli("wait", str(held), str(queued))
    assert "held" not in done.stderr  # released: nothing to say

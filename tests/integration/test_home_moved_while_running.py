"""A home renamed while its daemon runs: `ls` and `daemon status` said its herd.db "was
replaced (a backup put in its place?)" and advised copying one in; `daemon stop` from the new
path said "another daemon listens" and no command could stop it; the stop, once it could,
said the daemon "ended before it had stopped (killed or crashed)" (its socket, under the old
path, was not removed). Now the moved home is said as such, and it stops from where it is."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, wait_for


def test_a_renamed_home_is_said_and_its_daemon_stops_from_its_new_path(tmp_path: Path) -> None:
    before, after = Herd(tmp_path / "A"), Herd(tmp_path / "B")
    try:
        before.start("--fake-gpus", "1")
        pid = before.pid
        job = before.submit("--", "sleep", "300")
        before.wait_state(job, "running")
        before.home.rename(after.home)

        listed = after.cli("ls")
        moved = f"the home {before.home} was moved or removed while the daemon ran"
        assert moved in listed.stdout + listed.stderr, listed
        assert "a backup put in its place" not in listed.stdout + listed.stderr
        assert moved in after.cli("daemon", "status").stdout

        stopped = after.cli("daemon", "stop", "--kill", check=False)
        assert "daemon stopped" in stopped.stdout, stopped
        assert "ended before it had stopped" not in stopped.stderr, stopped.stderr
        assert "its queue went with the folder" in stopped.stderr, stopped.stderr
        wait_for(lambda: not Path(f"/proc/{pid}").exists(), what="the daemon's exit")

        after.start("--fake-gpus", "1")  # the queue, from its new place
        # (killed, or, where the daemon stopped before its end was recorded, taken up by
        # this start from a folder that moved: not running, in any case)
        assert after.job(job)["state"] in ("killed", "failed", "lost")
    finally:
        before.cleanup()
        after.cleanup()

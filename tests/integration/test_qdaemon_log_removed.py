"""`daemon log` once daemon.log was removed while the daemon runs (to free its space, say):
the daemon writes on to the removed file. It said "no daemon has started there", of a home
whose daemon runs; it says what happened, and that a restart starts a new log."""

from __future__ import annotations

from conftest import Herd
from gpuherd import paths


def test_a_log_removed_under_a_running_daemon_is_said_so(daemon: Herd) -> None:
    pid = daemon.client.get("/daemon")["pid"]
    log = paths.daemon_log(daemon.home)
    log.unlink()
    said = daemon.cli("daemon", "log", check=False)
    assert said.returncode == 1 and said.stdout == ""
    assert said.stderr == (
        f"gpuherd: error: {log} was removed while the daemon (pid {pid}) runs: it writes on to "
        "the removed file, whose space comes back only once it stops; `gpuherd daemon "
        "restart` starts a new log (running jobs go on)\n"
    )
    daemon.cli("daemon", "restart")
    assert (
        f"daemon {daemon.client.get('/daemon')['pid']} serving"
        in daemon.cli("daemon", "log").stdout
    )


def test_a_log_renamed_under_a_running_daemon_is_said_renamed_not_removed(daemon: Herd) -> None:
    # `mv daemon.log old.log` was said to be a removal whose space comes back only once the
    # daemon stops: nothing was removed, and the daemon writes on to old.log.
    pid = daemon.client.get("/daemon")["pid"]
    log = paths.daemon_log(daemon.home)
    old = log.with_name("old log")
    log.rename(old)
    said = daemon.cli("daemon", "log", check=False)
    assert said.returncode == 1 and said.stdout == ""
    assert said.stderr == (
        f"gpuherd: error: {log} was renamed to {old} while the daemon (pid {pid}) runs: it "
        f"writes on to {old} (read it there: tail '{old}'); `gpuherd daemon restart` starts"
        " a new log (running jobs go on)\n"
    )
    old.unlink()  # then removed under its new name: a removal, said as one
    said = daemon.cli("daemon", "log", check=False)
    assert said.returncode == 1
    assert said.stderr.startswith(f"gpuherd: error: {log} was removed while the daemon"), said


def test_no_log_and_no_daemon_is_still_a_home_no_daemon_started_in(herd: Herd) -> None:
    said = herd.cli("daemon", "log", check=False)
    assert said.returncode == 1
    assert said.stderr.endswith("yet: no daemon has started there\n")

"""`gpuherd daemon stop` where no daemon runs: what it asks holds, so it says so and exits 0
(a teardown script under `set -e`); `--drain` and `--kill`, which ask something of running
jobs that only a daemon can do, still refuse (exit 3: no daemon, as every command that needs
one exits)."""

from __future__ import annotations

from conftest import Herd


def test_a_stop_with_no_daemon_says_nothing_to_stop_and_succeeds(herd: Herd) -> None:
    stop = herd.cli("daemon", "stop", check=False)
    assert (stop.returncode, stop.stderr) == (0, "")
    assert stop.stdout == f"no gpuherd daemon is running for {herd.home}: nothing to stop\n"
    for option in ("--drain", "--kill"):
        refused = herd.cli("daemon", "stop", option, check=False)
        assert refused.returncode == 3, refused
        assert refused.stderr.startswith("gpuherd: error: no gpuherd daemon is running"), refused


def test_a_stop_after_a_stop_succeeds(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    assert herd.cli("daemon", "stop").stdout.endswith("daemon stopped\n")
    again = herd.cli("daemon", "stop", check=False)
    assert again.returncode == 0, again
    assert "nothing to stop" in again.stdout

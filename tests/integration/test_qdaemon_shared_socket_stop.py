"""`daemon stop` in a home whose GPUHERD_SOCKET another home's daemon listens on: it stopped
that daemon, as though it were this home's (`start` and `restart` refused it). Refused now,
on one line, with and without --kill, and the other daemon and its job go on."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import homes_on_one_socket


@pytest.mark.parametrize("options", [[], ["--kill"]])
def test_stop_never_stops_another_homes_daemon(tmp_path: Path, options: list[str]) -> None:
    with homes_on_one_socket(tmp_path) as (first, second):
        first.start("--fake-gpus", "1")
        job = first.submit("--", "sleep 60")
        first.wait_state(job, "running")
        refused = second.cli("daemon", "stop", *options, check=False)
        assert refused.returncode == 1
        assert refused.stdout == ""
        assert refused.stderr.startswith("gpuherd: error: another daemon listens on ")
        assert f"home {first.home}; a GPUHERD_SOCKET shared by two homes?" in refused.stderr
        assert len(refused.stderr.splitlines()) == 1
        assert first.is_up()
        assert first.wait_state(job, "running")["state"] == "running"

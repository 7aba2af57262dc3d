"""`daemon stop` in a home whose GPUHERD_SOCKET another home's daemon listens on: it stopped
that daemon, as though it were this home's (`start` and `restart` refused it). Refused now,
on one line, with and without --kill, and the other daemon and its job go on."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd


@pytest.mark.parametrize("options", [[], ["--kill"]])
def test_stop_never_stops_another_homes_daemon(tmp_path: Path, options: list[str]) -> None:
    shared = {"GPUHERD_SOCKET": str(tmp_path / "shared.sock")}
    first, second = Herd(tmp_path / "a"), Herd(tmp_path / "b")
    try:
        for herd in (first, second):
            herd.env.update(shared)
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
    finally:
        first.cleanup()
        second.cleanup()

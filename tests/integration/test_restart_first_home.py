"""`gpuherd daemon restart` in a home no daemon ran in (a new machine, a new GPUHERD_HOME) has
no start to repeat. On a machine without a driver its start failed with the probe's advice,
`pass --gpus 0,1 to name GPUs, or --fake-gpus 4 ...`, which `daemon restart` refuses (it takes
no options): the user was left with nothing that works. The line now says they go to
`gpuherd daemon start`, which then starts the daemon as told."""

from __future__ import annotations

from conftest import Herd


def test_a_restart_in_a_new_home_says_where_the_start_options_go(herd: Herd) -> None:
    env = {k: v for k, v in herd.env.items() if k != "GPUHERD_FAKE_GPUS"}
    proc = herd.cli("daemon", "restart", check=False, env=env)
    if proc.returncode == 0:
        return  # this machine has a GPU driver: the restart started a daemon on its GPUs
    assert proc.returncode == 1, proc
    assert proc.stdout.splitlines() == [f"no daemon was running for {herd.home}: starting one"]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gpuherd: error: no NVIDIA driver found")
    assert lines[0].endswith(
        f"or --fake-gpus 4 to try gpuherd without a GPU (no daemon has run in {herd.home} "
        "yet, so `daemon restart`, which takes no options, has no start to repeat: give them "
        "to `gpuherd daemon start`)"
    ), lines[0]
    # The advice works as given, and the next restart repeats that start.
    herd.cli("daemon", "start", "--fake-gpus", "4", env=env)
    proc = herd.cli("daemon", "restart", env=env)
    assert proc.stdout.splitlines()[-1].startswith("daemon started (pid "), proc.stdout
    assert "fake: 4 GPUs" in proc.stdout


def test_a_restart_that_fails_on_a_damaged_database_claims_no_new_home(herd: Herd) -> None:
    # Its settings cannot be read, which looks like a new home: the line is the damage's own.
    herd.home.mkdir()
    (herd.home / "herd.db").write_bytes(b"not a database at all" * 100)
    proc = herd.cli("daemon", "restart", check=False)
    assert proc.returncode == 1, proc
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "is damaged" in lines[0], proc.stderr
    assert "no daemon has run" not in lines[0]

"""A running job's --ram is held for it, as its --mem is on its GPUs (docs/gpus.md): jobs
submitted together no longer oversubscribe the host (two started in one pass, the third in
the next, on the same reading of the host's available memory), and a restarted daemon
holds the --ram of the jobs it finds running."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd, stays
from gpuherd.host_memory import host_memory_available


def test_running_jobs_hold_their_ram_across_passes_and_a_restart(
    daemon: Herd, tmp_path: Path
) -> None:
    daemon.cli("config", "set", "cpu-jobs", "none")
    # Two fit in what the machine has available, three do not, with 20% of it to spare
    # either way for what the machine's other work takes or gives back meanwhile.
    ram = f"{int(host_memory_available() * 0.4)}B"
    go = {name: tmp_path / f"go-{name}" for name in "abc"}
    lines = [f"while [ ! -e {go[name]} ]; do sleep 0.02; done" for name in "abc"]
    a, b, c = daemon.submit_lines(lines, "--gpus", "0", "--ram", ram)
    daemon.wait_state(a, "running")
    daemon.wait_state(b, "running")
    # Past the 1 s the reading is kept, and a reading that measures a and b (little used).
    stays(lambda: daemon.job(c)["state"] == "queued", 2.5, what=f"job {c} queued")
    assert "held for running jobs' --ram" in daemon.job(c)["reason"]

    daemon.cli("daemon", "stop")  # a and b run on
    daemon.start("--fake-gpus", "4")
    assert {daemon.job(j)["state"] for j in (a, b)} == {"running"}
    stays(lambda: daemon.job(c)["state"] == "queued", 2.5, what=f"job {c} queued")

    go["a"].touch()
    daemon.wait_state(a, "succeeded")
    daemon.wait_state(c, "running")
    go["b"].touch()
    go["c"].touch()
    daemon.wait_state(c, "succeeded")

"""A placement pass that fails (a bug; the test's fault: scheduler_fault.py): the queue says
so instead of a plausible wait reason, the error is logged once, and passes are tried again
until they work (engine_health.py)."""

from __future__ import annotations

from conftest import Herd, stays, wait_for
from scheduler_fault import FAULT, break_passes, fault_env, mend

FAILING = f"not starting: the scheduler fails ({FAULT})"


def _logged_failures(herd: Herd) -> int:
    return (herd.home / "daemon.log").read_text().count("engine pass failed")


def test_a_failing_pass_is_said_logged_once_and_tried_again(herd: Herd) -> None:
    herd.env.update(fault_env(herd.home.parent))
    herd.start("--fake-gpus", "1")
    herd.cli("pause")
    waiting = herd.submit("--", "true")
    break_passes(herd)
    herd.cli("resume")

    def said() -> str | None:
        reason = herd.job(waiting)["reason"] or ""
        return reason if reason.startswith(FAILING) else None

    reason = wait_for(said, what=f"job {waiting} to say the scheduler fails")
    assert reason.endswith("; see `gpuherd daemon log`")
    assert reason in herd.cli("daemon", "status").stdout.splitlines()
    assert herd.json("daemon", "status")["scheduler_failing"] == reason
    for _ in range(3):  # more wake-ups, more failing passes: still one entry in the log
        herd.submit("--", "true")
    stays(lambda: _logged_failures(herd) == 1, 2.5, "one log entry for the failure")

    mend(herd)  # repaired: the next retry works, nobody wakes it
    assert herd.wait_state(waiting, "succeeded", "failed")["state"] == "succeeded"
    assert herd.json("daemon", "status")["scheduler_failing"] is None
    assert "engine passes work again" in (herd.home / "daemon.log").read_text()

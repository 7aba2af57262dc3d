"""A placement pass that fails (a bug, a value in a row placement cannot work with): the
queue says so instead of a plausible wait reason, the error is logged once, and passes are
tried again until they work (engine_health.py)."""

from __future__ import annotations

from conftest import Herd, stays, wait_for
from scheduler_fault import UNPLACEABLE, set_gpus

FAILING = "not starting: the scheduler fails (TypeError: "


def _logged_failures(herd: Herd) -> int:
    return (herd.home / "daemon.log").read_text().count("engine pass failed")


def test_a_failing_pass_is_said_logged_once_and_tried_again(herd: Herd) -> None:
    herd.start("--fake-gpus", "1")
    herd.cli("pause")
    unplaceable = herd.submit("--priority", "5", "--", "true")
    waiting = herd.submit("--", "true")
    set_gpus(herd, unplaceable, UNPLACEABLE)  # every pass reads it first, and fails
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

    set_gpus(herd, unplaceable, 1)  # repaired: the next retry works, nobody wakes it
    assert herd.wait_state(waiting, "succeeded", "failed")["state"] == "succeeded"
    assert herd.wait_state(unplaceable, "succeeded", "failed")["state"] == "succeeded"
    assert herd.json("daemon", "status")["scheduler_failing"] is None
    assert "engine passes work again" in (herd.home / "daemon.log").read_text()

"""`gpuherd gpus` names GPUs kept for a starving job only while placement runs: with the queue
paused no pass runs, and the GPUs stayed "reserved for job 2" after job 2 was removed."""

from __future__ import annotations

import time

from conftest import Herd, wait_for


def _reserved(herd: Herd) -> list[list[dict[str, object]]]:
    return [gpu["reserved"] for gpu in herd.json("gpus")["gpus"]]


def test_gpus_reserved_for_a_starving_job_are_not_shown_once_it_is_gone(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    herd.cli("config", "set", "reserve-after", "0.1s")
    first = herd.submit("--", "sleep", "60")
    herd.wait_state(first, "running")
    big = herd.submit("--gpus", "2", "--", "sleep", "60")
    created = herd.job(big)["created_at"]
    wait_for(lambda: time.time() - created > 0.5, 5, "the 2-GPU job to wait past reserve-after")
    herd.submit("--", "true")  # a pass runs, which keeps both GPUs for job `big`
    wait_for(lambda: all(_reserved(herd)), 10, "the GPUs reserved for the starving job")
    herd.cli("pause")
    herd.cli("rm", str(big))
    assert _reserved(herd) == [[], []]
    assert "reserved for" not in herd.cli("gpus").stdout
    herd.cli("resume")
    assert _reserved(herd) == [[], []]
    herd.cli("kill", str(first))

"""A start with the last start's --gpus or --fake-gpus again, as a systemd unit's ExecStart
gives them at every restart, is a restart as one without options: it keeps the slots
`gpuherd gpus add` set, as it kept the drains and removals. Before, it set the slots back
to the option's (GPU 0 `0/1` again, silently), while GPUHERD_FAKE_GPUS unchanged kept them.
--slots, asking for slots now, still sets them from the options."""

from __future__ import annotations

import pytest

from conftest import Herd


def slots_and_states(herd: Herd) -> dict[int, tuple[int, str]]:
    return {row["index"]: (row["slots"], row["state"]) for row in herd.json("gpus")["gpus"]}


@pytest.mark.parametrize("options", [("--gpus", "0,1"), ("--fake-gpus", "2")])
def test_the_same_options_again_keep_the_slots_gpus_changed(
    herd: Herd, options: tuple[str, str]
) -> None:
    herd.start(*options)
    herd.cli("gpus", "add", "0", "--slots", "4")
    herd.cli("gpus", "drain", "1")
    herd.cli("daemon", "stop")
    herd.start(*options)
    assert slots_and_states(herd) == {0: (4, "enabled"), 1: (1, "draining")}
    herd.cli("daemon", "stop")
    # --slots is the user asking for slots now: every GPU gets them; the drain stays.
    herd.start(*options, "--slots", "2")
    assert slots_and_states(herd) == {0: (2, "enabled"), 1: (2, "draining")}

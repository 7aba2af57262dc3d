"""Changing the GPUs while the daemon runs (QA pass on GPU management)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Herd, Recorder, stays, wait_for


def test_changing_the_slots_of_a_draining_gpu_keeps_it_draining(
    herd: Herd, recorder: Recorder
) -> None:
    herd.start("--fake-gpus", "2")
    running = herd.submit("--only-gpus", "0", "--", recorder.cmd("running", wait="go"))
    wait_for(lambda: recorder.waiting("running"), what="the job on GPU 0 to start")
    assert herd.cli("gpus", "drain", "0").stdout.startswith("GPU 0 draining")

    out = herd.cli("gpus", "add", "0", "--slots", "2").stdout.strip()
    assert out == "GPU 0: 2 slots (was 1); still draining: `gpuherd gpus enable 0` uses it again"
    gpu0 = herd.json("gpus")["gpus"][0]
    assert (gpu0["state"], gpu0["slots"]) == ("draining", 2)

    # Nothing new starts on it, slots or not: a job only GPU 0 may run waits.
    pinned = herd.submit("--only-gpus", "0", "--", recorder.cmd("pinned"))
    stays(lambda: herd.job(pinned)["state"] == "queued", what="the pinned job to wait")
    assert herd.cli("gpus", "enable", "0").stdout.strip() == "GPU 0 enabled"
    herd.wait_state(pinned, "succeeded")  # a second slot, next to the running job
    assert [r["gpus"] for r in recorder.lines("pinned")] == ["0"]
    recorder.go()
    herd.wait_state(running, "succeeded")


def test_adding_a_gpu_that_is_already_used_says_what_changed(herd: Herd) -> None:
    herd.start("--fake-gpus", "2")
    assert herd.cli("gpus", "add", "1").stdout.strip() == "GPU 1: 1 slot"
    assert herd.cli("gpus", "remove", "1").stdout.startswith("GPU 1 removed")
    assert herd.cli("gpus", "add", "1", "--slots", "3").stdout.strip() == (
        "GPU 1 added with 3 slots"
    )
    # Without --slots a GPU keeps its slots: `gpus add 1` put them back to 1 ("(was 3)").
    assert herd.cli("gpus", "add", "1").stdout.strip() == "GPU 1: 3 slots"
    assert herd.cli("gpus", "add", "1", "--slots", "1").stdout.strip() == "GPU 1: 1 slot (was 3)"


def test_a_gpu_added_without_slots_keeps_the_ones_it_has_or_had(herd: Herd) -> None:
    """`gpus add INDEX` without --slots set a GPU's slots back to 1: on a GPU in use (with
    2 slots: "(was 2)"), on a drained one before `enable`, on a removed one given back. It
    keeps the slots it has, or had when it was removed, also across a restart of the daemon;
    a GPU never configured gets 1. (The dashboard's form:
    tests/e2e/test_dashboard_pages.py::test_gpu_actions.)"""
    herd.start("--fake-gpus", "3")
    herd.cli("gpus", "remove", "2")
    herd.cli("gpus", "add", "0", "--slots", "2")
    herd.cli("gpus", "drain", "0")
    assert herd.cli("gpus", "add", "0").stdout.strip() == (
        "GPU 0: 2 slots; still draining: `gpuherd gpus enable 0` uses it again"
    )
    herd.cli("gpus", "add", "1", "--slots", "3")
    herd.cli("gpus", "remove", "1")
    herd.cli("daemon", "stop")
    herd.start()  # as it was: what `gpuherd gpus` changed is kept, the removed GPUs too
    said = herd.cli("gpus", "add", "1").stdout.strip()
    assert said == "GPU 1 added with 3 slots (as before it was removed)"
    assert herd.cli("gpus", "add", "2").stdout.strip() == "GPU 2 added with 1 slot"
    gpus = {g["index"]: (g["state"], g["slots"]) for g in herd.json("gpus")["gpus"]}
    assert gpus == {0: ("draining", 2), 1: ("enabled", 3), 2: ("enabled", 1)}
    # A removed GPU given back with --slots takes those, and is forgotten as removed.
    herd.cli("gpus", "remove", "1")
    assert herd.cli("gpus", "add", "1", "--slots", "1").stdout.strip() == (
        "GPU 1 added with 1 slot"
    )
    herd.cli("gpus", "remove", "1")
    assert herd.cli("gpus", "add", "1").stdout.strip() == "GPU 1 added with 1 slot"


def test_a_restart_with_other_slots_keeps_a_drained_gpu_drained(herd: Herd) -> None:
    # `daemon start --slots 2` (or --fake-gpus again) configured the GPUs afresh: a GPU the
    # user had drained went back to work.
    herd.start("--fake-gpus", "2")
    herd.cli("gpus", "drain", "1")
    herd.cli("daemon", "stop")
    herd.start("--slots", "2")
    states = {g["index"]: (g["state"], g["slots"]) for g in herd.json("gpus")["gpus"]}
    assert states == {0: ("enabled", 2), 1: ("draining", 2)}
    herd.cli("daemon", "stop")
    herd.start("--fake-gpus", "3")
    states = {g["index"]: (g["state"], g["slots"]) for g in herd.json("gpus")["gpus"]}
    assert states == {0: ("enabled", 1), 1: ("draining", 1), 2: ("enabled", 1)}


def test_a_start_with_other_gpus_says_the_drains_it_keeps(herd: Herd) -> None:
    """A start with other GPUs drops the slots and GPUs `gpuherd gpus` changed but keeps a
    drain (docs/gpus.md, README): it kept it without a word, so a GPU drained long ago sat
    idle unexplained. The start says so; with none drained, nothing."""
    herd.start("--fake-gpus", "4")
    herd.cli("gpus", "drain", "1", "3")
    herd.cli("gpus", "add", "2", "--slots", "2")
    herd.cli("daemon", "stop")
    lines = herd.cli("daemon", "start", "--fake-gpus", "3").stdout.splitlines()
    assert lines[0].startswith("daemon started (pid ")
    assert lines[1:] == [
        "GPU 1 is draining, as before this start: `gpuherd gpus enable 1` uses it again"
    ]
    states = {g["index"]: (g["state"], g["slots"]) for g in herd.json("gpus")["gpus"]}
    assert states == {0: ("enabled", 1), 1: ("draining", 1), 2: ("enabled", 1)}
    herd.cli("daemon", "stop")
    lines = herd.cli("daemon", "start", "--fake-gpus", "4").stdout.splitlines()
    assert lines[1:] == [  # GPU 3's drain went with GPU 3, left out of the last setup
        "GPU 1 is draining, as before this start: `gpuherd gpus enable 1` uses it again"
    ]
    herd.cli("gpus", "drain", "2-3")
    herd.cli("daemon", "stop")
    lines = herd.cli("daemon", "start").stdout.splitlines()
    assert lines[1:] == [
        "GPUs 1-3 are draining, as before this start: `gpuherd gpus enable 1-3` uses them again"
    ]
    assert herd.cli("gpus", "enable", "1-3").returncode == 0
    herd.cli("daemon", "stop")
    assert len(herd.cli("daemon", "start").stdout.splitlines()) == 1


def test_a_state_file_using_more_memory_than_a_gpu_has_is_refused(
    herd: Herd, tmp_path: Path
) -> None:
    state = tmp_path / "gpus.json"
    gpu = {"memory_total": "24GiB", "memory_used": "20GiB"}
    state.write_text(json.dumps({"gpus": [{**gpu, "processes": [{"pid": 7, "memory": "8GiB"}]}]}))
    proc = herd.cli("daemon", "start", "--fake-gpus", str(state), check=False)
    assert proc.returncode == 2  # refused before any daemon starts (it was 1, by the daemon)
    assert proc.stderr == (
        f"gpuherd: error: --fake-gpus: fake GPU state file {state}: gpus[0]: 28.0 GiB in use "
        "(memory_used and processes) is more than memory_total, 24.0 GiB "
        "(see gpuherd daemon start --help)\n"
    )
    assert not herd.is_up()


def test_slots_count_per_repeat_of_an_index_in_gpus(herd: Herd) -> None:
    """As docs/gpus.md says (the README said `--slots N` gives every GPU N slots, whatever
    --gpus repeats): `--gpus 0,0,1 --slots 2` gives GPU 0 four slots, GPU 1 two."""
    herd.start("--gpus", "0,0,1", "--slots", "2")
    slots = {g["index"]: g["slots"] for g in herd.json("gpus")["gpus"]}
    assert slots == {0: 4, 1: 2}


QUALITY = (
    "expected a link quality from 0 to 3 (3 NVLink, 2 same PCIe switch, 1 same host bridge, "
    "0 across CPUs)"
)


@pytest.mark.parametrize(
    ("links", "said"),
    [
        ({"1": 4}, f"to GPU 1: {QUALITY}, got 4"),  # ranked above NVLink in silence
        ({"1": 2.5}, f"to GPU 1: {QUALITY}, got 2.5"),  # was taken as 2
        ({"1": "3"}, f"to GPU 1: {QUALITY}, got '3'"),
        ({"-1": 3}, """expected GPU indices as keys, like {"1": 3}, got '-1'"""),
    ],
)
def test_a_state_file_link_that_is_not_a_link_quality_is_refused(
    herd: Herd, tmp_path: Path, links: dict[str, object], said: str
) -> None:
    """docs/gpus.md: `links` give the quality 3 NVLink, 2 same PCIe switch, 1 same host
    bridge, 0 across CPUs; a value of the wrong kind stops `daemon start`, exit 2."""
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [{"links": links}, {}]}))
    proc = herd.cli("daemon", "start", "--fake-gpus", str(state), check=False)
    assert (proc.returncode, proc.stderr) == (
        2,
        f"gpuherd: error: --fake-gpus: fake GPU state file {state}: gpus[0].links: {said} "
        "(see gpuherd daemon start --help)\n",
    )
    assert not herd.is_up()

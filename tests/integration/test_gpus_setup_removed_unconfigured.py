"""A GPU `gpuherd gpus remove` took out, and a later start's --gpus or --fake-gpus: the same
setup as the last start keeps it out, another that names it uses it again, and the start
says which (as it says the drains it keeps). Before, a GPU named again was used, yet its
removal stayed on record: once a later start left it out, the row of a job on it said
`removed`. And `gpuherd gpus drain|enable|remove|add` of a GPU left out of the daemon's
start (its `unconfigured` row kept for its job) said "nor seen by the probe: name a GPU
that `gpuherd gpus` lists", which listed it."""

from __future__ import annotations

from conftest import Herd, Recorder, wait_for


def notes(herd: Herd, *options: str) -> list[str]:
    """What `daemon start OPTIONS` says after its first line, of the GPUs removed (not that
    --gpus without NVML takes them as named: test_static_gpus_said)."""
    lines = herd.cli("daemon", "start", *options).stdout.splitlines()
    assert lines[0].startswith("daemon started (pid "), lines
    return [line for line in lines[1:] if not line.startswith("NVML could not be used")]


def states(herd: Herd) -> dict[int, str]:
    return {gpu["index"]: gpu["state"] for gpu in herd.json("gpus")["gpus"]}


def test_a_removed_gpu_stays_out_through_the_same_setup_and_comes_back_with_another(
    herd: Herd,
) -> None:
    herd.start("--fake-gpus", "4")
    herd.cli("gpus", "remove", "2")
    kept = "GPU 2 is removed, as before this start: `gpuherd gpus add 2` uses it again"
    for again in (("--fake-gpus", "4"), ()):  # the last start's options again, or none
        herd.cli("daemon", "stop")
        assert notes(herd, *again) == [kept], again
        assert states(herd) == {0: "enabled", 1: "enabled", 3: "enabled"}
        assert herd.json("gpus")["unused"] == [2]
    herd.cli("daemon", "stop")
    assert notes(herd, "--gpus", "0-3") == [
        "GPU 2 was removed (gpuherd gpus remove) before this start, whose GPUs name it: in use "
        "again; `gpuherd gpus remove 2` takes it out again"
    ]
    assert states(herd) == dict.fromkeys(range(4), "enabled")
    herd.cli("daemon", "stop")
    assert notes(herd) == []  # used again for good: nothing more to say
    assert states(herd) == dict.fromkeys(range(4), "enabled")


def test_a_gpu_named_again_is_not_called_removed_once_a_later_start_leaves_it_out(
    herd: Herd, recorder: Recorder
) -> None:
    herd.start("--fake-gpus", "4")
    job = herd.submit("--only-gpus", "2", "--", recorder.cmd("on2", wait="go"))
    wait_for(lambda: recorder.waiting("on2"), what="the job on GPU 2 to start")
    herd.cli("gpus", "remove", "2")
    herd.cli("daemon", "stop")
    assert len(notes(herd, "--fake-gpus", "3")) == 1  # GPU 2 in use again (said)
    assert states(herd) == dict.fromkeys(range(3), "enabled")
    herd.cli("daemon", "stop")
    assert notes(herd, "--fake-gpus", "2") == []
    # Left out of this start, not removed: it said `removed (gpuherd gpus remove)`.
    assert states(herd) == {0: "enabled", 1: "enabled", 2: "unconfigured"}
    said = (
        "gpuherd: error: GPU 2 is not configured (configured: 0,1): not among the GPUs this "
        "daemon started with (its row stays while its jobs run), and the probe does not see "
        "it (it sees: 0,1): to use it again, `gpuherd daemon stop`, then `gpuherd daemon "
        "start` with GPUs that include it (--gpus or --fake-gpus; running jobs go on)\n"
    )
    for verb in ("drain", "enable", "add"):
        refused = herd.cli("gpus", verb, "2", check=False)
        assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", said), verb
    # (`remove`: not how to use it again, the opposite of what was asked)
    refused = herd.cli("gpus", "remove", "2", check=False)
    nothing = "gpuherd: error: GPU 2 is not configured (configured: 0,1): nothing to remove\n"
    assert (refused.returncode, refused.stdout, refused.stderr) == (1, "", nothing)
    typo = herd.cli("gpus", "drain", "9", check=False)  # a GPU no row shows: as before
    assert typo.stderr == (
        "gpuherd: error: GPU 9 is not configured (configured: 0,1), nor seen by the probe: "
        "name a GPU that `gpuherd gpus` lists\n"
    )
    recorder.go()
    herd.wait_state(job, "succeeded")

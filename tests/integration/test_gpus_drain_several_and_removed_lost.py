"""`gpuherd gpus drain` and `enable` take several GPUs, as `remove` does (`gpus drain 0-2`
before maintenance was "invalid GPU index '0-2': GPUs are numbered from 0 to 4095"), and
Slurm's `undrain` is told `enable` (click guessed "Did you mean 'drain'?"); either, asked
again, says the GPU is so already. A lost GPU that was removed is named as such: `gpus add 1`
said "nor seen by the probe: name a GPU that `gpuherd gpus` lists", while `gpus` listed it,
removed, with its job on it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd, wait_for

GPU = {"name": "Fake A100", "memory_total": "80GiB"}


def states(herd: Herd) -> dict[int, str]:
    return {gpu["index"]: gpu["state"] for gpu in herd.client.get("/gpus")["gpus"]}


def test_drain_and_enable_take_several_gpus(herd: Herd) -> None:
    herd.start("--fake-gpus", "4")
    drained = herd.cli("gpus", "drain", "0-1,3")
    assert drained.stdout.splitlines() == [
        f"GPU {i} draining: running jobs finish, nothing new starts there" for i in (0, 1, 3)
    ]
    assert states(herd) == {0: "draining", 1: "draining", 2: "enabled", 3: "draining"}
    enabled = herd.cli("gpus", "enable", "0,3")
    assert enabled.stdout.splitlines() == ["GPU 0 enabled", "GPU 3 enabled"]
    assert states(herd) == {0: "enabled", 1: "draining", 2: "enabled", 3: "enabled"}

    # Asked again, each says so (exit 0), as `hold` of a held job says `already held`: it
    # said `GPU 1 draining: ...` and `GPU 2 enabled` again, as though it had changed them.
    # Several words too, as `kill 3 4` takes them (click's "Got unexpected extra argument"),
    # each GPU once, in order.
    again = herd.cli("gpus", "drain", "2", "1", "2").stdout.splitlines()
    assert again == [
        "GPU 1 is draining already",
        "GPU 2 draining: running jobs finish, nothing new starts there",
    ]
    again = herd.cli("gpus", "enable", "0", "1").stdout.splitlines()
    assert again == ["GPU 0 is enabled already (not drained)", "GPU 1 enabled"]
    assert states(herd) == {0: "enabled", 1: "enabled", 2: "draining", 3: "enabled"}

    undrain = herd.cli("gpus", "undrain", "1", check=False)
    assert (undrain.returncode, undrain.stdout) == (2, "")
    assert undrain.stderr == (
        "gpuherd: error: No such command 'undrain': gpuherd gpus enable INDEX uses a drained "
        "GPU again (Slurm's scontrol update state=resume) (see gpuherd gpus --help)\n"
    )
    big = herd.cli("gpus", "enable", "99999999999999999999", check=False)
    assert (big.returncode, big.stderr) == (
        2,
        "gpuherd: error: invalid GPU index '99999999999999999999': GPUs are numbered from 0 to "
        "4095, as `gpuherd gpus` lists them (see gpuherd gpus enable --help)\n",
    )


def test_a_removed_lost_gpu_is_named_as_removed(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [GPU, GPU]}))
    herd.start("--fake-gpus", str(state))
    job = herd.submit("--only-gpus", "1", "sleep 300")
    herd.wait_state(job, "running")
    state.write_text(json.dumps({"gpus": [GPU, {"lost": True}]}))
    wait_for(lambda: states(herd).get(1) == "lost", what="GPU 1 to be lost")
    herd.cli("gpus", "remove", "1")
    assert states(herd) == {0: "enabled", 1: "removed"}  # listed, with its job

    said = (
        "gpuherd: error: GPU 1 was removed (gpuherd gpus remove) and the probe does not see it "
        "now (it sees: 0): `gpuherd gpus add 1` once the probe sees it again\n"
    )
    for verb in ("add", "drain"):
        refused = herd.cli("gpus", verb, "1", check=False)
        assert (refused.returncode, refused.stderr) == (1, said), verb

    state.write_text(json.dumps({"gpus": [GPU, GPU]}))  # back: as it said, add takes it
    wait_for(lambda: 1 in herd.client.get("/gpus")["unused"], what="GPU 1 to be seen")
    assert herd.cli("gpus", "add", "1").stdout == "GPU 1 added with 1 slot\n"
    herd.cli("kill", "--grace", "0", str(job))

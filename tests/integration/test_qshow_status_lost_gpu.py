"""`gpuherd daemon status` of a daemon whose GPU 2 is configured but lost (fallen off the bus;
a fake state file's `"lost": true`) said `gpus: 0,1`, as if it had two GPUs: it names the lost
one now, as `gpuherd gpus` does (`--json`: `missing`, as `gpus --json` has it), and drops it
once the GPU is seen again. A drained GPU, on which nothing new starts, is named too."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd, wait_for

GPU = {"name": "Fake A100", "memory_total": "80GiB"}


def test_status_names_a_lost_gpu_until_it_is_back(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [GPU, GPU, {"lost": True}]}))
    herd.start("--fake-gpus", str(state))
    lines = herd.cli("daemon", "status").stdout.splitlines()
    (gpus,) = [line for line in lines if line.startswith("gpus: ")]
    assert gpus == (
        f"gpus: 0,1 (fake: state file {state}); lost: 2 (configured but not seen by the probe now)"
    )
    status = herd.json("daemon", "status")
    assert (status["gpus"], status["missing"]) == ([0, 1], [2])

    state.write_text(json.dumps({"gpus": [GPU, GPU, GPU]}))  # it is back
    wait_for(lambda: herd.json("daemon", "status")["missing"] == [], what="GPU 2 to be seen")
    assert f"\ngpus: 0,1,2 (fake: state file {state})\n" in herd.cli("daemon", "status").stdout

    herd.cli("gpus", "drain", "1")
    said = f"\ngpus: 0,1,2 (fake: state file {state}); draining: 1\n"
    assert said in herd.cli("daemon", "status").stdout
    assert herd.json("daemon", "status")["draining"] == [1]

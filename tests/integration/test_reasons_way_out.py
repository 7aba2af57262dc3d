"""What a job refused for the GPUs gpuherd has, or waiting for a lost one, is told to do.

- After `gpus remove 0-3`, `submit -- true` was refused with `asks for 1 GPU but gpuherd has
  none` alone: now with `gpuherd gpus add 0` (the GPUs the probe sees and gpuherd does not
  use named) or --gpus 0; the Python API gets the same words; a queued job left so by the
  removal names the one `gpus add` it needs, not each of the four.
- `--only-gpus 5` of GPUs 0-3: the GPUs there are.
- A job waiting for a lost GPU that was drained too: `gpuherd gpus enable 1`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, wait_for

CPU_ONLY = "give gpus 0 (--gpus 0) for a CPU-only job"
GPU = {"name": "Fake A100", "memory_total": "80GiB"}


def refused(herd: Herd, *args: str) -> str:
    told = herd.cli("submit", *args, "--", "true", check=False)
    assert (told.returncode, told.stdout) == (1, ""), told
    return told.stderr


def test_no_gpu_left_says_what_to_do(herd: Herd) -> None:
    herd.start("--fake-gpus", "4")
    held = herd.submit("--hold", "--", "true")
    herd.cli("gpus", "remove", "0-3")
    said = (
        "this job can never run: asks for 1 GPU but gpuherd has none: `gpuherd gpus add 0` "
        f"adds one (GPUs 0-3 are seen but not used), or {CPU_ONLY}"
    )
    assert refused(herd) == f"gpuherd: error: {said}\n"
    with pytest.raises(Exception) as caught:  # the Python API: the same words
        gpuherd.connect(herd.home).submit(["true"])
    assert str(caught.value) == said
    assert herd.cli("submit", "--gpus", "0", "--", "true").returncode == 0  # the way out works

    herd.cli("release", str(held))
    wait_for(lambda: herd.job(held)["reason"].startswith("can never"), what="its reason")
    assert herd.job(held)["reason"] == (
        "can never run on these GPUs: asks for 1 GPU but gpuherd has none (gpuherd gpus add 0 "
        f"lets it run, gpuherd edit {held} --gpus 0 to ask for what there is, or gpuherd rm "
        f"{held})"
    )


def test_only_gpus_of_a_gpu_not_there_names_those_there(herd: Herd) -> None:
    herd.start("--fake-gpus", "4")
    assert refused(herd, "--only-gpus", "5") == (
        "gpuherd: error: this job can never run: asks for 1 GPU of --only-gpus 5, but gpuherd "
        "has no GPU 5: name GPUs gpuherd has in only_gpus (--only-gpus): 0-3\n"
    )
    herd.cli("gpus", "remove", "3")
    assert refused(herd, "--only-gpus", "3") == (
        "gpuherd: error: this job can never run: asks for 1 GPU of --only-gpus 3, but gpuherd "
        "has no GPU 3: `gpuherd gpus add 3` adds it (GPU 3 is seen but not used), or name GPUs "
        "gpuherd has in only_gpus (--only-gpus): 0-2\n"
    )


def test_waiting_for_a_lost_gpu_drained_too_says_to_enable_it(herd: Herd, tmp_path: Path) -> None:
    state = tmp_path / "gpus.json"
    state.write_text(json.dumps({"gpus": [GPU, GPU]}))
    herd.start("--fake-gpus", str(state))
    state.write_text(json.dumps({"gpus": [GPU, {"lost": True}]}))
    wait_for(lambda: 1 in herd.json("gpus")["missing"], what="GPU 1 to be lost")
    herd.cli("gpus", "drain", "1")
    job = herd.submit("--only-gpus", "1", "--", "true")
    said = (
        "waiting for GPU 1, configured but not seen now: `gpuherd gpus`; GPU 1 is draining "
        "too: it takes no new job when it comes back, until `gpuherd gpus enable 1`"
    )
    assert herd.job(job)["reason"] == said
    assert [j["reason"] for j in herd.json("ls", "--state", "queued")] == [said]
    assert f"state      queued — {said}" in herd.cli("show", str(job)).stdout

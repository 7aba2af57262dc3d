"""`gpuherd gpus remove 2` of a GPU removed already says there is nothing to
remove: it said `` `gpuherd gpus add 2` adds it ``, the opposite of what was asked."""

from __future__ import annotations

from conftest import Herd


def test_removing_a_gpu_gpuherd_does_not_use_says_nothing_to_remove(herd: Herd) -> None:
    herd.start("--fake-gpus", "4")
    for gpu in ("2", "3"):
        said = herd.cli("gpus", "remove", gpu).stdout
        assert said == f"GPU {gpu} removed; jobs running on it go on\n"
    for gpu in ("2", "3"):
        refused = herd.cli("gpus", "remove", gpu, check=False)
        assert (refused.returncode, refused.stdout, refused.stderr) == (
            1,
            "",
            f"gpuherd: error: GPU {gpu} is not configured (configured: 0,1): nothing to remove\n",
        )
    # Drain and enable still say how to have it.
    refused = herd.cli("gpus", "drain", "2", check=False)
    assert refused.stderr.endswith("`gpuherd gpus add 2` adds it\n"), refused.stderr
    assert [g["index"] for g in herd.json("gpus")["gpus"] if g["state"] != "removed"] == [0, 1]


def test_removing_a_gpu_a_static_gpus_list_lacks_says_nothing_to_remove(herd: Herd) -> None:
    """`--gpus 0,1` without a driver takes any GPU `gpus add` names: `remove 7` said `` `gpuherd
    gpus add 7` adds it ``."""
    herd.start("--gpus", "0,1")
    refused = herd.cli("gpus", "remove", "7", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        "gpuherd: error: GPU 7 is not configured (configured: 0,1): nothing to remove\n",
    )

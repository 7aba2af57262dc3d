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


def test_a_static_gpus_list_says_add_for_each_gpu_it_lacks_alone_or_among_others(
    herd: Herd,
) -> None:
    """`--gpus 0,1` without a driver: `gpus drain 7` said `` `gpuherd gpus add 7` adds it ``,
    while `gpus drain 0 7` said only to leave 7 out (it offered `add` for a GPU the probe sees,
    and a static list's probe sees only its own GPUs, though `add` takes any)."""
    herd.start("--gpus", "0,1")
    alone = herd.cli("gpus", "drain", "7", check=False)
    assert alone.stderr.endswith(": `gpuherd gpus add 7` adds it\n"), alone.stderr
    refused = herd.cli("gpus", "drain", "0", "7", check=False)
    assert (refused.returncode, refused.stderr) == (
        1,
        "gpuherd: error: GPU 7 is not configured (configured: 0,1): nothing drained; "
        "leave it out: `gpuherd gpus drain 0`; `gpuherd gpus add 7` adds GPU 7\n",
    )
    assert herd.json("gpus")["adds_any"] is True
    assert herd.cli("gpus", "add", "7").stdout == "GPU 7 added with 1 slot\n"  # as it says
    assert "draining" in herd.cli("gpus", "drain", "0", "7").stdout

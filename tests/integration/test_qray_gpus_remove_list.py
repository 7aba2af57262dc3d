"""`gpuherd gpus remove` takes the GPUs as `gpuherd gpus` lists them: `configured but not
seen by the probe: 0-1` (what a Ray cluster's node started again, or a lost GPU, leaves) is
removed with `gpus remove 0-1` (or `0 1`). Before, only one index was taken: `invalid GPU index
'0-1'`."""

from __future__ import annotations

from conftest import Herd


def test_gpus_remove_takes_a_list_of_gpus(herd: Herd) -> None:
    herd.start("--fake-gpus", "4")
    removed = herd.cli("gpus", "remove", "0-1,3")
    assert removed.stdout.splitlines() == [
        f"GPU {index} removed; jobs running on it go on" for index in (0, 1, 3)
    ]
    assert [gpu["index"] for gpu in herd.client.get("/gpus")["gpus"]] == [2]

    bad = herd.cli("gpus", "remove", "2-x", check=False)
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == (
        "gpuherd: error: invalid GPU index '2-x': use GPU indices like 0, 0-3 or 0,2 "
        "(see gpuherd gpus remove --help)\n"
    )
    # Several words, as `kill 3 4` takes ids: `remove 2 2` was click's "Got unexpected extra
    # argument (2)". Each GPU once.
    assert (
        herd.cli("gpus", "remove", "2", "2").stdout == "GPU 2 removed; jobs running on it go on\n"
    )
    assert herd.client.get("/gpus")["gpus"] == []

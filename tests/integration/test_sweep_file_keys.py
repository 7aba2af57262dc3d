"""A sweep file with a key that is not text (`{1: a}`) is refused by `gpuherd sweep` and by
`herd.sweep(FILE)` alike, in one line naming the key's path and line: both read the file with
sweepfile.load_sweep, where it went on to the points as {"1": "a"} without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuherd
from conftest import Herd

SAID = (
    "s.yaml:4: grid.x[0]: key 1 is a number, not text: a mapping's keys must be text; quote it "
    "to keep it as text"
)


def test_a_key_that_is_not_text_is_refused_by_the_cli_and_python(
    daemon: Herd, tmp_path: Path
) -> None:
    sweep = tmp_path / "s.yaml"
    sweep.write_text("command: echo {x}\ngrid:\n  x:\n    - {1: a}\n    - b\n")
    refused = daemon.cli("sweep", str(sweep), check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == f"gpuherd: error: {tmp_path}/{SAID}\n"
    herd = gpuherd.connect(daemon.home, start=False)
    with pytest.raises(gpuherd.HerdError) as caught:
        herd.sweep(sweep)
    assert str(caught.value) == f"{tmp_path}/{SAID}"
    assert daemon.ls_all() == []  # nothing submitted

"""`gpuherd.connect(home=...)` given a home it cannot use says so in gpuherd's words, as
`daemon start` does: an empty one (a script's unset variable) made the folder Python ran in a
home, and started a daemon there; a file, or a folder that cannot be made, raised Python's
bare FileExistsError or FileNotFoundError."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Herd
from gpuherd.errors import HerdError
from gpuherd.pyapi import connect


def test_an_empty_home_is_refused_and_no_daemon_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    wrongly = Herd(work)  # (where the daemon started: stopped after, if it did)
    try:
        with pytest.raises(HerdError) as refused:
            connect(home="", fake_gpus=1)
        assert str(refused.value) == (
            "home is empty: give the home's folder, or leave home out (GPUHERD_HOME)"
        )
        assert list(work.iterdir()) == []  # no herd.db, no daemon.log
    finally:
        wrongly.cleanup()


def test_a_home_that_is_a_file_or_cannot_be_made_is_said_so(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    for home, said in [
        (afile, f"GPUHERD_HOME {afile} is a file, not a folder: point it at a folder"),
        (afile / "sub", f"GPUHERD_HOME {afile}/sub: {afile} is a file, not a folder"),
        (
            Path("/proc/gpuherd-cannot-be-here"),
            "cannot create the daemon's home /proc/gpuherd-cannot-be-here: No such file or "
            "directory; point GPUHERD_HOME at a folder you can write",
        ),
    ]:
        with pytest.raises(HerdError) as refused:
            connect(home=home, fake_gpus=1)
        assert str(refused.value).startswith(said), refused.value

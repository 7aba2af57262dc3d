"""The home's id, kept in it (home_id.py): what a daemon's start keeps, for each way a home
got where it is."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpuherd.home_id import home_id, keep, path_digest


def _home(path: Path, queue: bool = True) -> Path:
    path.mkdir()
    if queue:
        (path / "herd.db").touch()
    return path


def test_a_queue_with_no_id_kept_keeps_its_paths_digest(tmp_path: Path) -> None:
    """An older gpuherd's home: its running jobs carry that id."""
    home = _home(tmp_path / "h")
    assert home_id(home) == path_digest(home)
    assert keep(home, True) == path_digest(home) == home_id(home)


def test_a_new_home_gets_an_id_not_made_of_its_path(tmp_path: Path) -> None:
    """A home made where another was (moved away, its jobs running on) must not share its id."""
    home = _home(tmp_path / "h", queue=False)
    made = keep(home, False)
    assert made != path_digest(home) and home_id(home) == made
    assert keep(home, True) == made  # kept: the next start's too


def test_the_id_goes_with_a_renamed_home(tmp_path: Path) -> None:
    home = _home(tmp_path / "a")
    made = keep(home, True)
    moved = home.rename(tmp_path / "b")
    assert home_id(moved) == made  # (clients, before any daemon starts there)
    assert keep(moved, True) == made


def test_a_copy_beside_its_original_gets_its_own_id(tmp_path: Path) -> None:
    home = _home(tmp_path / "a")
    made = keep(home, True)
    copy = Path(shutil.copytree(home, tmp_path / "c"))
    assert keep(copy, True) not in (made, path_digest(copy))
    assert keep(home, True) == made  # the original's stays


def test_a_copy_whose_original_is_gone_keeps_its_id(tmp_path: Path) -> None:
    """A home moved to another disk (copied, then removed), or its files restored elsewhere."""
    home = _home(tmp_path / "a")
    made = keep(home, True)
    copy = Path(shutil.copytree(home, tmp_path / "c"))
    shutil.rmtree(home)
    _home(home, queue=False)  # another home made where it was: not the one that kept it
    assert keep(copy, True) == made
    assert keep(home, False) != made


def test_a_file_that_is_not_an_id_is_not_taken_for_one(tmp_path: Path) -> None:
    home = _home(tmp_path / "h")
    (home / "home_id").write_bytes(b"\xff not an id\n")
    assert home_id(home) == path_digest(home)
    assert keep(home, True) == path_digest(home) == home_id(home)

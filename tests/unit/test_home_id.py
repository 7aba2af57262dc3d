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
    assert keep(home) == path_digest(home) == home_id(home)


def test_a_new_home_keeps_the_id_its_clients_took(tmp_path: Path) -> None:
    """A client made before the home's first daemon (waiting for its socket) takes the digest
    of its path: a new home keeps that one (a random one put its socket elsewhere)."""
    home = _home(tmp_path / "h", queue=False)
    before = home_id(home)
    assert keep(home) == before == path_digest(home) == home_id(home)


def test_the_id_goes_with_a_renamed_home(tmp_path: Path) -> None:
    home = _home(tmp_path / "a")
    made = keep(home)
    moved = home.rename(tmp_path / "b")
    assert home_id(moved) == made  # (clients, before any daemon starts there)
    assert keep(moved) == made


def test_a_copy_beside_its_original_gets_its_own_id(tmp_path: Path) -> None:
    home = _home(tmp_path / "a")
    made = keep(home)
    copy = Path(shutil.copytree(home, tmp_path / "c"))
    assert keep(copy) not in (made, path_digest(copy))
    assert keep(home) == made  # the original's stays


def test_a_copy_whose_original_is_gone_keeps_its_id(tmp_path: Path) -> None:
    """A home moved to another disk (copied, then removed), or its files restored elsewhere."""
    home = _home(tmp_path / "a")
    made = keep(home)
    copy = Path(shutil.copytree(home, tmp_path / "c"))
    shutil.rmtree(home)
    _home(home, queue=False)  # another home made where it was: not the one that kept it
    assert keep(copy) == made
    # The new home there takes its path's digest, the moved one's id (docs/files.md says so).
    assert keep(home) == made


def test_a_file_that_is_not_an_id_is_not_taken_for_one(tmp_path: Path) -> None:
    home = _home(tmp_path / "h")
    (home / "home_id").write_bytes(b"\xff not an id\n")
    assert home_id(home) == path_digest(home)
    assert keep(home) == path_digest(home) == home_id(home)

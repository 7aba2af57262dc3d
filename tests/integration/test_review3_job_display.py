"""A job's repr (what a notebook shows of it) with a daemon that does not answer, and the
equality of handles on one job reached through another name of its home."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gpuherd import paths
from gpuherd.client import Client
from gpuherd.pyapi import Herd
from gpuherd.pyapi_sweep import Sweep


@pytest.fixture
def hung_home(tmp_path: Path) -> Iterator[Path]:
    """A home whose socket takes connections but never answers: a hung daemon."""
    home = tmp_path / "home"
    where = paths.socket_path(home)
    where.parent.mkdir(parents=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as hung:
        hung.bind(str(where))
        hung.listen(8)
        yield home


def shown_within(show: Callable[[], object], seconds: float = 10.0) -> object:
    """What `show()` gives, failing if it takes more than `seconds` (the old code waited the
    client's 60 s: its thread is left to end on its own, not to hold the test run)."""
    shown: list[object] = []
    shower = threading.Thread(target=lambda: shown.append(show()), daemon=True)
    shower.start()
    shower.join(timeout=seconds)
    assert not shower.is_alive(), f"still waiting for the daemon after {seconds:g} s"
    return shown[0]


def test_a_repr_does_not_wait_long_for_a_daemon_that_never_answers(hung_home: Path) -> None:
    # A repr (and each frame showing a job in a `%xmode Verbose` traceback) waited 60 s.
    job = Herd(Client(hung_home)).job(3)
    assert shown_within(lambda: repr(job)) == "<gpuherd.Job 3 (state unknown: no daemon answered)>"
    assert "state unknown" in str(shown_within(job._repr_html_))


def test_a_sweeps_table_does_not_wait_long_for_a_daemon_that_never_answers(
    hung_home: Path,
) -> None:
    sweep = Sweep(Herd(Client(hung_home)), "lr", None)
    assert shown_within(sweep._repr_html_) is None  # (the notebook shows the repr instead)


def test_handles_on_one_job_are_equal_whatever_the_home_is_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    link = tmp_path / "link"
    link.symlink_to(home)
    monkeypatch.chdir(tmp_path)
    named = [home, link, Path("home"), tmp_path / "other" / ".." / "home"]
    (tmp_path / "other").mkdir()
    handles = [Herd(Client(name)).job(7) for name in named]
    assert all(handle == handles[0] for handle in handles), [h.herd.client.home for h in handles]
    assert len({hash(handle) for handle in handles}) == 1
    assert Herd(Client(home)).job(8) != handles[0]
    assert os.fspath(home) != os.fspath(link)  # (two names, one home)

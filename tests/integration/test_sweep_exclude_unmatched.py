"""An `exclude` entry that matches no point of the grid (`lr: 0.2` where the grid has 0.02)
removes nothing: most likely a typo, yet it was accepted without a word, where an unknown key
in `exclude` is refused. The CLI (submission and dry run) and Python warn of it now, one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, api_daemon
from gpuherd.pyapi import SweepWarning, connect

FILE = """command: echo {lr} {bs}
grid: {lr: [0.1, 0.02], bs: [16, 32]}
exclude: [{lr: 0.02, bs: 16}, {lr: 0.2}, {lr: 0.1, bs: 64}]
"""
UNMATCHED = [
    "exclude[1]: no point has lr=0.2, so it removes nothing; check its values",
    "exclude[2]: no point has lr=0.1, bs=64, so it removes nothing; check its values",
]


def warnings_of(stderr: str) -> list[str]:
    prefix = "gpuherd: warning: "
    return [line[len(prefix) :] for line in stderr.splitlines() if line.startswith(prefix)]


def test_the_cli_warns_of_an_exclusion_that_removes_nothing(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    (tmp_path / "ex.yaml").write_text(FILE)
    dry = shared_daemon.cli("sweep", "ex.yaml", "--dry-run", "--name", "exd", cwd=tmp_path)
    assert warnings_of(dry.stderr) == UNMATCHED
    assert len(dry.stdout.splitlines()) == 3  # 4 points, the one matched excluded
    done = shared_daemon.cli("sweep", "ex.yaml", "--hold", "-q", "--name", "exs", cwd=tmp_path)
    assert warnings_of(done.stderr) == UNMATCHED
    # Entries that each match a point say nothing (a multi-grid file: matched per grid).
    (tmp_path / "ok.yaml").write_text(
        "command: echo {lr} {bs}\ngrid: [{lr: [0.1], bs: [16, 32]}, {lr: [0.2], bs: [32, 64]}]\n"
        "exclude: [{lr: 0.2, bs: 32}, {bs: 16}]\n"
    )
    ok = shared_daemon.cli("sweep", "ok.yaml", "--dry-run", "--name", "ok", cwd=tmp_path)
    assert warnings_of(ok.stderr) == [], ok.stderr


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("exclude_unmatched"), "unused", ""):
        yield connect()


def test_python_warns_of_an_exclusion_that_removes_nothing(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    (tmp_path / "ex.yaml").write_text(FILE)
    with pytest.warns(SweepWarning) as told:
        api.sweep(tmp_path / "ex.yaml", name="expy", dry_run=True)
    assert [str(w.message) for w in told] == UNMATCHED

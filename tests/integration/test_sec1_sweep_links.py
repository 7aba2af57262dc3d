"""A results folder others can write (a shared project folder, one made in /tmp): a link
planted there as a point's params.json.tmp must not make the daemon overwrite the file it
names, one of the user's own (their ~/.bashrc)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Herd


def test_a_link_planted_as_params_tmp_is_not_written_through(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("precious\n")
    point = tmp_path / "results" / "x=1"
    point.mkdir(parents=True)
    (point / "params.json.tmp").symlink_to(victim)
    shared_daemon.cli(
        "sweep",
        "echo {x}",
        "-p",
        "x",
        "1",
        "--name",
        "planted",
        "--results-dir",
        str(point.parent),
        "--hold",
    )
    assert victim.read_text() == "precious\n"
    params = point / "params.json"
    assert not params.is_symlink()
    assert json.loads(params.read_text())["params"] == {"x": 1}

"""`ls --sweep NAME` that no sweep has says so, as `wait --sweep` does: `gpuherd kill
$(gpuherd ls -q --sweep TYPO)`, the documented way to stop a sweep, stopped nothing and said
nothing (`ls` printed `no jobs match`, or nothing with -q, exit 0)."""

from __future__ import annotations

from pathlib import Path

from conftest import Herd


def test_a_sweep_no_sweep_has_is_said_by_every_form_of_ls(daemon: Herd, tmp_path: Path) -> None:
    daemon.cli("sweep", "true {x}", "-p", "x", "1", "--name", "lr-sweep", "--hold", cwd=tmp_path)
    said = "no sweep named 'lr-sweeep' (did you mean 'lr-sweep'?)"
    for form in ([], ["-q"], ["--json"], ["--all"], ["--csv"]):
        typo = daemon.cli("ls", "--sweep", "lr-sweeep", *form, check=False)
        assert typo.returncode == 1, (form, typo.stdout, typo.stderr)
        assert typo.stdout == "" and said in typo.stderr, (form, typo.stderr)
    # A sweep whose listing is empty is no typo: its jobs ended (`ls -q` lists the waiting).
    assert daemon.cli("ls", "-q", "--sweep", "lr-sweep").stdout.split() != []
    daemon.cli("kill", *daemon.cli("ls", "-q", "--sweep", "lr-sweep").stdout.split())
    assert daemon.cli("ls", "-q", "--sweep", "lr-sweep").stdout == ""
    empty = daemon.cli("ls", "--sweep", "lr-sweep", "--state", "running")
    assert empty.stdout.startswith("no jobs match")

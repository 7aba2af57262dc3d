"""`gpuherd ls` keeps the finished jobs that ended last, not those of the highest ids: a long run
that failed after ten later, shorter jobs had ended was left out of a plain `ls`, right when
it was the one to look at, and `ls --all --limit N` counted it among the "earlier finished
jobs not shown"."""

from __future__ import annotations

from pathlib import Path
from uuid import uuid4

from conftest import Herd


def ids_of(lines: list[str]) -> list[int]:
    """The ids of a table's rows (the header and the `…` lines left out)."""
    return [int(line.split()[0]) for line in lines[1:] if line[0].isdigit()]


def test_the_job_that_ended_last_is_listed(shared_daemon: Herd, tmp_path: Path) -> None:
    herd, project, go = shared_daemon, f"p{uuid4().hex[:8]}", tmp_path / "go"
    mine = ("--project", project)
    long = herd.submit(*mine, "--", f"while [ ! -e {go} ]; do sleep 0.02; done; exit 1")
    herd.wait_state(long, "running")
    quick = herd.submit_lines(["true"] * 11, "--hold", *mine)
    herd.cli("kill", f"{quick[0]}-{quick[-1]}")  # cancelled, all at one moment
    go.touch()
    herd.wait_state(long, "failed")  # ended after every one of them

    # A plain `ls`: the 10 finished jobs that ended last, by id (it was quick[1:]).
    plain = herd.cli("ls", *mine, "--columns", "id,state").stdout.splitlines()
    assert ids_of(plain) == [long, *quick[2:]], plain
    # Cut by --limit: the jobs left out ended before those shown, as the line says.
    cut = herd.cli("ls", "--all", *mine, "--limit", "3", "--columns", "id,state").stdout
    lines = cut.splitlines()
    assert ids_of(lines) == [long, quick[-2], quick[-1]], cut
    assert lines[1] == "… 9 earlier finished jobs not shown (--limit 12 shows them)", cut
    by_state = herd.cli("ls", "--state", "failed,cancelled", *mine, "--limit", "3").stdout
    assert ids_of(by_state.splitlines()) == ids_of(lines), by_state
    # `-q`, `--json` and the API list the same jobs.
    quiet = herd.cli("ls", "-q", "--all", *mine, "--limit", "3").stdout.split()
    assert [int(i) for i in quiet] == ids_of(lines)
    rows = herd.json("ls", "--all", *mine, "--limit", "3")
    assert [row["id"] for row in rows] == ids_of(lines)

"""`sweep status` of a sweep whose results folder was moved or deleted: its jobs still say
succeeded, but the SUCCESS markers a resubmission goes by went with the folder, so it runs
every point again. The status says so, rather than showing the points done, metrics blank."""

from __future__ import annotations

import json

from conftest import Herd, wait_for


def test_status_says_the_results_folder_is_gone(shared_daemon: Herd) -> None:
    work = shared_daemon.home.parent / "gone-work"
    work.mkdir(exist_ok=True)
    sweep = ("sweep", "true {x}", "-p", "x", "1", "2", "--name", "gone")
    shared_daemon.cli(*sweep, cwd=work)

    def finished() -> bool:
        table = shared_daemon.json("sweep", "status", "gone")
        return table["counts"] == {"succeeded": 2}

    wait_for(finished, timeout=30, what="both points succeeded")
    results = work / "results" / "gone"
    assert "is gone" not in shared_daemon.cli("sweep", "status", "gone").stdout
    results.rename(work / "archived")

    shown = shared_daemon.cli("sweep", "status", "gone").stdout
    assert (
        f"the results folder {results} is gone (moved or deleted?): its points' results and"
        " markers went with it, so submitting the sweep again runs them all again\n"
    ) in shown
    assert shared_daemon.json("sweep", "status", "gone")["results_gone"] is True
    again = json.loads(shared_daemon.cli(*sweep, "--hold", "--json", cwd=work).stdout)
    assert again["new"] == 2  # as the line said
    shared_daemon.cli("sweep", "rm", "gone")

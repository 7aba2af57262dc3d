"""Review of `ls --json`'s paths and of exit status 3 for no daemon: a folder given through
the HTTP API as written (`a//b`, `a/./b`) is named by `ls --json` as `show --json` names it;
`sweep rm`, and a `submit --wait` or `log -f` whose daemon went away for good, exit 3, as
`wait` does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd
from gpuherd import client as client_module
from gpuherd.cli.main import main
from gpuherd.client import Client


def test_ls_names_a_folder_given_unnormalised_as_show_does(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd, where = shared_daemon, str(tmp_path)
    folders = [f"{where}//doubled", f"{where}/./dotted", f"{where}/trailing/", f"///{where}"]
    item = {"command": "true", "cwd": where, "hold": True}
    ids = herd.client.post("/jobs", {"jobs": [{**item, "folder": f} for f in folders]})["ids"]
    listed = {job["id"]: job for job in herd.json("ls", "--state", "held")}
    for job_id in ids:
        shown = herd.json("show", str(job_id))
        assert (listed[job_id]["job_dir"], listed[job_id]["log_files"]) == (
            shown["job_dir"],
            shown["log_files"],
        ), job_id
    assert listed[ids[0]]["job_dir"] == f"{where}/doubled"
    herd.cli("rm", *map(str, ids))


def test_sweep_rm_exits_3_when_no_daemon_runs(herd: Herd) -> None:
    said = herd.cli("sweep", "rm", "lr", "wd", check=False)
    assert (said.returncode, said.stdout) == (3, "")
    assert said.stderr.count("no gpuherd daemon is running") == 1, said.stderr


def test_submit_wait_whose_daemon_goes_for_good_exits_3_as_wait_does(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Exit 1 would read as the job's own `exit 1`: the job still runs, no daemon watches it.
    monkeypatch.setenv("GPUHERD_HOME", str(daemon.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(client_module, "WAIT_POLL", 0.2)
    monkeypatch.setattr(client_module, "RESTART_GRACE", 1.0)
    asked = threading.Event()
    real_request = Client.request

    def request(self: Client, method: str, path: str, *args: Any) -> Any:
        answer = real_request(self, method, path, *args)
        if path.split("?")[0] == "/jobs/wait":
            asked.set()
        return answer

    monkeypatch.setattr(Client, "request", request)
    stopper = threading.Thread(target=lambda: asked.wait(15) and daemon.cli("daemon", "stop"))
    stopper.start()
    try:
        with pytest.raises(SystemExit) as ended:
            main(["submit", "-q", "--wait", "--gpus", "0", "--", "sleep 30"])
    finally:
        stopper.join(30)
    assert asked.is_set()
    assert ended.value.code == 3
    error = capsys.readouterr().err
    assert "the daemon went away while this waited for jobs, and none came back" in error


def test_log_follow_whose_daemon_goes_for_good_exits_3(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    job_id = daemon.submit("--gpus", "0", "--", "echo one; sleep 30")
    monkeypatch.setenv("GPUHERD_HOME", str(daemon.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(client_module, "RESTART_GRACE", 1.0)
    followed = threading.Event()
    real_stream = Client.stream

    def stream(self: Client, path: str, **query: Any) -> Iterator[tuple[str, Any]]:
        for event in real_stream(self, path, **query):
            followed.set()  # the follow reached the daemon: it goes away now
            yield event

    monkeypatch.setattr(Client, "stream", stream)
    stopper = threading.Thread(target=lambda: followed.wait(15) and daemon.cli("daemon", "stop"))
    stopper.start()
    try:
        with pytest.raises(SystemExit) as ended:
            main(["log", "-f", str(job_id)])
    finally:
        stopper.join(30)
    assert followed.is_set()
    said = capsys.readouterr()
    assert said.out == "one\n"
    assert (ended.value.code, said.err.count("no daemon came back")) == (3, 1), said.err

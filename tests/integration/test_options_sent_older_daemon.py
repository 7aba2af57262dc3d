"""A submission that uses no new option reaches a daemon of the version before (`pip install
-U` while it runs): `gpuherd submit`, `gpuherd sweep` and the Python API's `sweep` sent
`"grace": null` and `"max_log_size": null` unasked, which such a daemon refused (`jobs.0.grace:
Input should be a valid number; jobs.0.max_log_size: unknown field`), so every submission
failed until it was restarted. An option left unset is left out of the request; one given is
sent; `env` stays null (a daemon older than the batch's environment must refuse, not run the
jobs without one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from conftest import Herd
from gpuherd.cli.main import cli
from gpuherd.client import Client
from gpuherd.pyapi import connect

NEW = ("grace", "max_log_size")
"""Job options the daemon of the version before does not take as null (or at all)."""


@pytest.fixture
def sent(shared_daemon: Herd, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """The POSTs this process's clients make to the daemon: (path, body)."""
    monkeypatch.setenv("GPUHERD_HOME", str(shared_daemon.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    posted: list[tuple[str, Any]] = []
    real = Client.request

    def request(self: Client, method: str, path: str, body: Any = None, raw: bool = False) -> Any:
        if method == "POST":
            posted.append((path, body))
        return real(self, method, path, body, raw)

    monkeypatch.setattr(Client, "request", request)
    return posted


def _options(posted: list[tuple[str, Any]], path: str) -> list[dict[str, Any]]:
    bodies = [body for where, body in posted if where == path]
    assert len(bodies) == 1, posted
    return list(bodies[0]["jobs"]) if path == "/jobs" else [bodies[0]["options"]]


def test_gpuherd_submit_leaves_unset_options_out(sent: list[tuple[str, Any]]) -> None:
    done = CliRunner().invoke(cli, ["submit", "-q", "--hold", "--gpus", "0", "--", "true"])
    assert done.exit_code == 0, done.output
    (job,) = _options(sent, "/jobs")
    assert [key for key in NEW if key in job] == [], job
    assert "env" in job and job["env"] is None  # kept: null on purpose


def test_an_option_given_is_sent(sent: list[tuple[str, Any]]) -> None:
    args = ["submit", "-q", "--hold", "--gpus", "0", "--grace", "5s", "--max-log-size", "none"]
    done = CliRunner().invoke(cli, [*args, "--", "true"])
    assert done.exit_code == 0, done.output
    (job,) = _options(sent, "/jobs")
    assert (job["grace"], job["max_log_size"]) == (5.0, 0)


def test_gpuherd_sweep_leaves_unset_options_out(
    sent: list[tuple[str, Any]], tmp_path: Path
) -> None:
    args = ["sweep", "echo {x}", "-p", "x", "1", "--hold", "--name", "sent-cli"]
    done = CliRunner().invoke(cli, [*args, "--results-dir", str(tmp_path / "r")])
    assert done.exit_code == 0, done.output
    (options,) = _options(sent, "/sweeps")
    assert [key for key in NEW if key in options] == [], options


def test_a_python_sweep_leaves_unset_options_out(
    sent: list[tuple[str, Any]], shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = connect(shared_daemon.home, start=False)
    herd.sweep("echo {x}", {"x": [1]}, name="sent-api", hold=True, cwd=tmp_path)
    (options,) = _options(sent, "/sweeps")
    assert [key for key in NEW if key in options] == [], options

"""Two homes on one GPUHERD_SOCKET (exported in ~/.bashrc, then `GPUHERD_HOME=/other gpuherd
...`): `daemon start`, `stop` and `restart` refused, but every other command of the home whose
daemon is not the one listening there reached the other's and acted on its queue, exit 0:
`ls` listed its jobs, `kill 1` killed its job 1, `submit` queued there. Now that daemon
refuses them before doing anything, in the one line `daemon start` gives (exit 1): the CLI and
the Python API alike, and the home asked for is not made. The same home through a link is
served, and so is a request that names no home (curl, an older gpuherd). One real daemon."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, homes_on_one_socket
from gpuherd.client import Client
from gpuherd.errors import DaemonError, HerdError, OtherHomesDaemon


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Herd, Herd, int]]:
    """The first home's daemon on the shared socket, its job running; the second home, not
    made (no daemon of its own), and that job's id."""
    with homes_on_one_socket(tmp_path_factory.mktemp("two")) as (first, second):
        first.start("--fake-gpus", "1")
        job = first.submit("--", "sleep 300")
        first.wait_state(job, "running")
        yield first, second, job


def refusal(first: Herd, second: Herd) -> str:
    return (
        f"another daemon listens on {first.env['GPUHERD_SOCKET']} (pid {first.pid}, home "
        f"{first.home}; a GPUHERD_SOCKET shared by two homes?): nothing was done for "
        f"{second.home}; give each home its own socket, or unset GPUHERD_SOCKET"
    )


def queue(herd: Herd) -> list[tuple[int, str]]:
    return [(job["id"], job["state"]) for job in herd.all_jobs()]


@pytest.mark.parametrize(
    "command",
    [["ls"], ["kill", "{job}"], ["submit", "--", "echo x"], ["pause", "{job}"], ["show", "{job}"]],
)
def test_the_other_home_s_commands_are_refused_and_do_nothing(
    homes: tuple[Herd, Herd, int], command: list[str]
) -> None:
    first, second, job = homes
    before = queue(first)
    refused = second.cli(*(word.format(job=job) for word in command), check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == f"gpuherd: error: {refusal(first, second)}\n"
    assert queue(first) == before
    assert first.job(job)["state"] == "running"
    assert not second.home.exists()


def test_the_python_api_of_the_other_home_is_refused(
    homes: tuple[Herd, Herd, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second, job = homes
    monkeypatch.setenv("GPUHERD_SOCKET", first.env["GPUHERD_SOCKET"])
    before = queue(first)
    said = refusal(first, second)
    for start in (True, False):  # (not taken for "none runs": a start would make the home)
        with pytest.raises(OtherHomesDaemon) as refused:
            gpuherd.connect(home=second.home, start=start)
        assert str(refused.value) == said
        assert isinstance(refused.value, HerdError) and not isinstance(refused.value, DaemonError)
    herd = gpuherd.Herd(Client(second.home))  # a client made without connect()'s look
    with pytest.raises(OtherHomesDaemon, match=f"^{re.escape(said)}$"):
        herd.submit("echo x", gpus=0)
    with pytest.raises(OtherHomesDaemon, match=f"^{re.escape(said)}$"):
        herd.client.post("/jobs/kill", {"ids": [job]})
    assert queue(first) == before
    assert first.job(job)["state"] == "running"
    assert not second.home.exists()


def test_a_home_is_its_folder_the_same_through_a_link_and_not_another_one(
    homes: tuple[Herd, Herd, int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first, _, job = homes
    link = first.home.parent / "link-to-first"
    link.symlink_to(first.home)
    try:
        env = {**first.env, "GPUHERD_HOME": str(link)}
        listed = json.loads(first.cli("ls", "--all", "--json", env=env).stdout)
        assert job in [listed_job["id"] for listed_job in listed]
        held = int(first.cli("submit", "-q", "--hold", "--", "true", env=env).stdout)
        assert first.job(held)["state"] == "held"
        first.cli("rm", str(held), env=env)
        assert held not in [j for j, _ in queue(first)]
        monkeypatch.setenv("GPUHERD_SOCKET", first.env["GPUHERD_SOCKET"])
        assert job in [j.id for j in gpuherd.connect(home=link, start=False).jobs(all=True)]
    finally:
        os.unlink(link)
    # A home made already (its daemon stopped, say) is another folder: refused by its inode.
    other = Herd(tmp_path / "made")
    other.home.mkdir()
    other.env["GPUHERD_SOCKET"] = first.env["GPUHERD_SOCKET"]
    refused = other.cli("kill", str(job), check=False)
    assert refused.returncode == 1
    assert refused.stderr == f"gpuherd: error: {refusal(first, other)}\n"
    assert first.job(job)["state"] == "running"
    assert list(other.home.iterdir()) == []
    # A request naming no home (curl, the dashboard, an older client) is served as before.
    status, _, body = first.request("GET", "/api/v1/daemon")
    assert status == 200 and json.loads(body)["home"] == str(first.home)


def test_daemon_status_and_stop_through_a_link_to_the_home_are_the_homes(herd: Herd) -> None:
    # They compared the daemon's home with the one asked for as text, and refused: "another
    # daemon listens on ... (a GPUHERD_SOCKET shared by two homes?)".
    herd.start("--fake-gpus", "1")
    link = herd.home.parent / "link-to-home"
    link.symlink_to(herd.home)
    env = {**herd.env, "GPUHERD_HOME": str(link)}
    status = herd.cli("daemon", "status", env=env, check=False)
    assert status.returncode == 0, status.stderr
    stopped = herd.cli("daemon", "stop", env=env, check=False)
    assert (stopped.returncode, stopped.stdout.splitlines()[-1]) == (0, "daemon stopped"), stopped

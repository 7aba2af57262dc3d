"""`--max-log-size SIZE` and `config set max-log-size`: a running job whose stdout or stderr log
grows past its cap is stopped as a --timeout stops it, and ends failed (`log_too_large`) with
a reason naming the log, its size and the cap; its log keeps what was written."""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from conftest import Herd, UnixConnection, started_once
from gpuherd import connect

MiB = 2**20


def writer(stream: str = "stdout", mib: int = 64, then_sleep: float = 60.0) -> str:
    """A job that writes `mib` MiB to `stream` in 1 MiB chunks, as fast as it can, then sleeps
    (bounded: where nothing stops it, it fills no disk)."""
    code = (
        "import sys, time\n"
        f"out = sys.{stream}\n"
        f"for _ in range({mib}):\n"
        "    out.write('x' * 1048575 + '\\n'); out.flush()\n"
        f"time.sleep({then_sleep})\n"
    )
    return shlex.join([sys.executable, "-c", code])


REASON = re.compile(
    r"its (stdout|stderr|output) log reached ([\d.]+) MiB, over --max-log-size 2 MiB \(stopped\)"
)


def stopped_for_its_log(herd: Herd, job: int, log: str) -> dict[str, object]:
    """The job, once failed for its log (within a bounded time: the check comes every few
    seconds, the writer's SIGTERM ends it at once)."""
    ended = herd.wait_state(job, "failed", "succeeded", "killed", timeout=30)
    assert (ended["state"], ended["outcome"]) == ("failed", "log_too_large"), ended
    said = REASON.fullmatch(str(ended["message"]))
    assert said is not None and said[1] == log, ended["message"]
    assert float(said[2]) > 2.0
    return ended


def test_a_job_writing_past_its_cap_is_stopped_and_fails_saying_which_log(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    job = herd.submit("--gpus", "0", "--max-log-size", "2M", "--", writer())
    ended = stopped_for_its_log(herd, job, "stdout")
    assert ended["max_log_size"] == 2 * MiB
    log = Path(ended["log_files"]["stdout"])
    assert log.stat().st_size > 2 * MiB  # what it wrote is kept
    # Said where a reason is said: `show`, `wait`, `log -f`'s end line.
    shown = herd.cli("show", str(job)).stdout
    assert re.search(rf"\nmessage +{re.escape(str(ended['message']))}\n", shown), shown
    waited = herd.cli("wait", str(job), check=False)
    assert f"job {job}: failed (log_too_large: {ended['message']})" in waited.stderr, waited
    followed = herd.cli("log", "-f", str(job), check=False)
    assert f"log_too_large: {ended['message']}" in followed.stderr, followed


def test_a_stderr_log_counts_too_and_retries_run_again_as_after_a_timeout(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    job = herd.submit(
        "--gpus", "0", "--max-log-size", "2MiB", "--retries", "1", "--", writer("stderr")
    )
    ended = stopped_for_its_log(herd, job, "stderr")
    assert ended["attempt"] == 2  # retried once, as a timeout is, and stopped again
    assert [a["outcome"] for a in ended["attempts"]] == ["log_too_large"] * 2


def test_a_job_within_its_cap_is_untouched(shared_daemon: Herd) -> None:
    """2 MiB exactly reaches the cap, does not pass it; the job outlives a check (every 2 s)."""
    herd = shared_daemon
    job = herd.submit("--gpus", "0", "--max-log-size", "2M", "--", writer(mib=2, then_sleep=3))
    ended = herd.wait_state(job, "succeeded", "failed", "killed", timeout=30)
    assert (ended["state"], ended["outcome"]) == ("succeeded", "exit"), ended
    assert Path(ended["log_files"]["stdout"]).stat().st_size == 2 * MiB


@pytest.fixture(scope="module")
def own_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    """A daemon of this module's: its tests change a setting."""
    with started_once(tmp_path_factory, "--fake-gpus", "2") as started:
        yield started


def cap_of(herd: Herd, job: int) -> object:
    return herd.job(job)["max_log_size"]


def test_the_config_default_caps_jobs_submitted_without_one(
    own_daemon: Herd, tmp_path: Path
) -> None:
    herd = own_daemon
    assert herd.cli("config", "get", "max-log-size").stdout == "none\n"
    assert herd.cli("config", "set", "max-log-size", "2MiB").stdout == "max-log-size = 2 MiB\n"
    try:
        capped = herd.submit("--gpus", "0", "--", writer())
        uncapped = herd.submit(
            "--gpus", "0", "--max-log-size", "none", "--", writer(mib=4, then_sleep=3)
        )
        own = herd.submit("--hold", "--max-log-size", "1G", "--", "true")
        api = connect(herd.home, start=False)
        plain_file = tmp_path / "plain.yaml"
        plain_file.write_text("command: echo {x}\ngrid:\n  x: [1]\nhold: true\n")
        capped_file = tmp_path / "capped.yaml"
        capped_file.write_text(
            "command: echo {x}\ngrid:\n  x: [1]\nhold: true\nmax_log_size: 5MiB\n"
        )
        over_file = herd.json("sweep", str(capped_file), "--name", "over", "--max-log-size", "none")
        assert {
            "own --max-log-size": cap_of(herd, own),
            "Python API": cap_of(herd, api.submit("true", gpus=0, hold=True).id),
            "Python API max_log_size=": cap_of(
                herd, api.submit("true", gpus=0, hold=True, max_log_size="3MiB").id
            ),
            "Python API sweep": cap_of(
                herd,
                api.sweep("echo {x}", {"x": [1]}, name="api", hold=True, cwd=tmp_path).submission[
                    "ids"
                ][0],
            ),
            "sweep CLI": cap_of(
                herd, herd.json("sweep", "echo {x}", "-p", "x", "1", "--hold")["ids"][0]
            ),
            "sweep file": cap_of(herd, herd.json("sweep", str(plain_file))["ids"][0]),
            "sweep file's max_log_size": cap_of(
                herd, herd.json("sweep", str(capped_file))["ids"][0]
            ),
            "--max-log-size none over the file's": cap_of(herd, over_file["ids"][0]),
            "dashboard form": cap_of(herd, _form_job(herd, tmp_path)),
            "dashboard form's box": cap_of(herd, _form_job(herd, tmp_path, max_log_size="4MiB")),
        } == {
            "own --max-log-size": 2**30,
            "Python API": 2 * MiB,
            "Python API max_log_size=": 3 * MiB,
            "Python API sweep": 2 * MiB,
            "sweep CLI": 2 * MiB,
            "sweep file": 2 * MiB,
            "sweep file's max_log_size": 5 * MiB,
            "--max-log-size none over the file's": None,
            "dashboard form": 2 * MiB,
            "dashboard form's box": 4 * MiB,
        }
        stopped_for_its_log(herd, capped, "stdout")
        ended = herd.wait_state(uncapped, "succeeded", "failed", timeout=30)
        assert ended["state"] == "succeeded", ended
        assert "max log size  2 MiB (stdout, stderr each)" in herd.cli("show", str(capped)).stdout
    finally:
        herd.cli("config", "set", "max-log-size", "none")


def _form_job(herd: Herd, cwd: Path, **boxes: str) -> int:
    """A job submitted by the dashboard's form, its max log size box as `boxes` fill it
    (blank without)."""
    body = urlencode({"commands": "true", "gpus": "0", "hold": "1", "cwd": str(cwd), **boxes})
    conn = UnixConnection(herd.client.socket_path, timeout=30)
    try:
        conn.request("POST", "/submit", body, {"Content-Type": "application/x-www-form-urlencoded"})
        answer = conn.getresponse()
        assert answer.status == 303, answer.read()
        return int(str(answer.headers["location"]).rpartition("=")[2])
    finally:
        conn.close()


@pytest.mark.parametrize("typed", ["10", "abc", "-1G", "0"])
def test_a_bad_size_is_refused_in_one_line(own_daemon: Herd, typed: str) -> None:
    herd = own_daemon
    said = herd.usage_error("submit", "--max-log-size", typed, "--", "true")
    assert said.startswith("gpuherd: error: --max-log-size: "), said
    assert "or none (no cap)" in said, said
    said = herd.usage_error("config", "set", "max-log-size", typed)
    assert said.startswith("gpuherd: error: max-log-size: "), said
    assert herd.cli("config", "get", "max-log-size").stdout == "none\n"

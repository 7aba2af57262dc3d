"""The Python API as a researcher uses it, against a real daemon (4 fake GPUs): what a QA
pass of sweeps and the Python API found wrong. Every wait has a timeout."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import gpuherd
import gpuherd.client as client_module
from conftest import Herd, api_daemon
from gpuherd.client import Client
from gpuherd.errors import DaemonError
from gpuherd.pyapi import connect

TASKS_MODULE = """
import json, os
import gpuherd


@gpuherd.task(gpus=0, retries=0)
def logs_only(run_dir):
    with open(os.path.join(run_dir, "metrics.json"), "w") as f:
        json.dump({"loss": 0.5}, f)
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    """One daemon (4 fake GPUs) for the module, and a work folder holding pyapi_qa_mod.py."""
    with api_daemon(tmp_path_factory.mktemp("pyapi-qa"), "pyapi_qa_mod", TASKS_MODULE):
        yield connect()


def test_a_commands_result_is_its_metrics_not_a_result_json_of_its_own(
    api: gpuherd.Herd,
) -> None:
    # A training script's own result.json was answered instead of its metrics.json.
    job = api.submit(
        'echo \'{"mine": 1}\' > "$GPUHERD_JOB_DIR/result.json";'
        ' echo \'{"val_acc": 0.9}\' > "$GPUHERD_JOB_DIR/metrics.json"',
        gpus=0,
    )
    assert job.result(timeout=30) == {"val_acc": 0.9}


def test_a_task_that_returned_none_answers_none_whatever_it_wrote(api: gpuherd.Herd) -> None:
    # Its own metrics.json was answered as its return value.
    import pyapi_qa_mod

    job = pyapi_qa_mod.logs_only.submit()
    assert job.result(timeout=30) is None


def test_a_daemon_that_did_not_start_says_why_in_connects_words(
    herd: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reason named `gpuherd daemon start`'s options (`--fake-gpus`), which a script that
    # let connect() (or a task's submit) start the daemon has no way to pass.
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    with pytest.raises(DaemonError) as caught:
        connect(herd.home, fake_gpus="bogus")
    said = str(caught.value)
    assert said.startswith("invalid fake_gpus item 'bogus' in 'bogus': use a count (4)")
    assert "arguments of gpuherd.connect()" in said and "--fake-gpus" not in said
    assert not herd.is_up()


def test_a_wait_whose_daemon_never_came_back_says_to_start_one(
    daemon: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It said "the daemon is stopping; wait again once it is back", the stopping daemon's
    # last words, a minute after it had stopped for good.
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(client_module, "WAIT_POLL", 0.2)  # each long poll answers soon
    monkeypatch.setattr(client_module, "RESTART_GRACE", 1.0)
    herd = connect(daemon.home, start=False)
    job = herd.submit("sleep 30", gpus=0)
    asked = threading.Event()
    real_get = Client.get

    def get(self: Client, path: str, **query: Any) -> Any:
        answer = real_get(self, path, **query)
        if path == "/jobs/wait":
            asked.set()  # the wait reached the daemon: it goes away now
        return answer

    monkeypatch.setattr(Client, "get", get)
    stopper = threading.Thread(target=lambda: asked.wait(15) and daemon.cli("daemon", "stop"))
    stopper.start()
    try:
        with pytest.raises(DaemonError) as caught:
            job.wait(timeout=60)
    finally:
        stopper.join(30)
    assert asked.is_set()
    assert str(caught.value).startswith(
        f"the daemon went away while this waited for jobs, and none came back for {daemon.home}:"
        " start it again (`gpuherd daemon start`, or gpuherd.connect())"
    )


def test_a_jobs_max_parallel_is_refused_not_dropped(api: gpuherd.Herd) -> None:
    # It was dropped silently: the job ran with no cap at all.
    with pytest.raises(TypeError, match=r"^max_parallel is a sweep's cap .*max-running"):
        api.submit("true", gpus=0, max_parallel=2)

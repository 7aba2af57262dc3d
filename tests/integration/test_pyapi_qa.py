"""The Python API as a researcher uses it, against a real daemon (4 fake GPUs): what a QA
pass of sweeps and the Python API found wrong. Every wait has a timeout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, api_daemon
from gpuherd.core.sweep_names import default_sweep_name
from gpuherd.errors import DaemonError, HerdError
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
    assert said.startswith("fake_gpus: invalid item 'bogus': use a count (4)")
    assert "arguments of gpuherd.connect()" in said and "--fake-gpus" not in said
    assert not herd.is_up()


def test_a_bad_gpuherd_fake_gpus_is_named_as_the_variable_in_the_environment(
    herd: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It was named connect()'s fake_gpus argument, never passed, with advice to set the
    # variable the user had set.
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("GPUHERD_FAKE_GPUS", "abc")
    with pytest.raises(DaemonError) as caught:
        connect(herd.home)
    assert str(caught.value) == (
        "GPUHERD_FAKE_GPUS: invalid item 'abc': use a count (4), sizes "
        "(2x24GiB,1x80GiB) or a .json state file (GPUHERD_FAKE_GPUS in the environment: "
        "export GPUHERD_FAKE_GPUS=4, say, or unset it)"
    )
    assert not herd.is_up()
    # An argument given is used instead of the variable, and named when it is the bad one.
    with pytest.raises(DaemonError, match=r"^fake_gpus: invalid item 'bogus'"):
        connect(herd.home, fake_gpus="bogus")
    assert connect(herd.home, fake_gpus=1).client.get("/daemon")["probe"].startswith("fake: 1 GPU")


def test_a_jobs_max_parallel_is_refused_not_dropped(api: gpuherd.Herd) -> None:
    # It was dropped silently: the job ran with no cap at all.
    with pytest.raises(TypeError, match=r"^max_parallel is a sweep's cap .*max-running"):
        api.submit("true", gpus=0, max_parallel=2)


def test_a_sweeps_name_alone_is_refused_and_says_how_to_open_that_sweep(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    # herd.sweep("opened"), meaning herd.get_sweep("opened"), submitted a one-point sweep
    # whose job ran the command `opened`, and failed.
    done = api.sweep("echo {x}", {"x": [1]}, name="opened", results_dir=tmp_path, gpus=0)
    assert done.wait(timeout=30)
    needs = (
        "needs a command template with {placeholders} and params (herd.sweep('python "
        "train.py --lr {lr}', {'lr': [0.1, 0.01]})), or a sweep file"
    )
    with pytest.raises(HerdError) as refused:
        api.sweep("opened")
    assert str(refused.value) == (
        f"sweep('opened') {needs}; to open the existing sweep 'opened': herd.get_sweep('opened')"
    )
    with pytest.raises(HerdError) as unknown:  # no sweep has that name: no get_sweep hint
        api.sweep("python train.py", gpus=0, dry_run=True)
    assert str(unknown.value) == f"sweep('python train.py') {needs}"
    names = {sweep["name"] for sweep in api.sweeps()}
    assert not {default_sweep_name("opened"), default_sweep_name("python train.py")} & names
    assert [row["job_id"] for row in api.get_sweep("opened").results()] == done.ids
    # A placeholder of its own ({sweep}, {run_dir}, {index}) is enough for a sweep.
    assert api.sweep("echo {sweep}", name="lone", dry_run=True).commands == ["echo lone"]

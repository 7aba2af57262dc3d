"""The Python API against a real daemon: connect, job handles, tasks, GPU Task Scheduler code."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import psutil
import pytest

import gpuherd
from conftest import Herd, api_daemon, wait_for
from gpuherd.errors import DaemonError, HerdError, InvalidValue
from gpuherd.pyapi import connect
from gpuherd.pyapi_types import WrongType, WrongValue

GTS_CONFIG = {
    "scheduler_config": {"gpu": ["0", "1"], "force_rerun": False},
    "global_config": {"num_run": 5, "num_epoch": 200},
    "test_config": [
        {"method": ["GAN", "ALI"], "num_packing": [1], "num_zmode": [1]},
        {"method": ["WGAN"], "num_packing": [3], "num_zmode": [1, 2]},
    ],
}
GTS_POINTS = [
    {"num_run": 5, "num_epoch": 200, "method": "GAN", "num_packing": 1, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "ALI", "num_packing": 1, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "WGAN", "num_packing": 3, "num_zmode": 1},
    {"num_run": 5, "num_epoch": 200, "method": "WGAN", "num_packing": 3, "num_zmode": 2},
]
TASKS_MODULE = """
import json, os
import gpuherd


@gpuherd.task(gpus=1, retries=0)
def score(x, y=1, run_dir=None):
    return {"score": x * y, "gpu": os.environ["CUDA_VISIBLE_DEVICES"], "run_dir": run_dir}


@gpuherd.task(gpus=0)
def boom(x):
    raise ValueError(f"boom {x}")


class MyGPUTask:  # GPU Task Scheduler's GPUTask protocol
    def __init__(self, config, work_dir):
        self._config, self._work_dir = config, work_dir

    def required_env(self):
        return {"GTS_ENV": "set"}

    def main(self):
        seen = {"config": self._config, "work_dir": self._work_dir, "env": os.environ["GTS_ENV"]}
        with open(os.path.join(self._work_dir, "seen.json"), "w") as f:
            json.dump(seen, f)
"""
MAIN_SCRIPT = """
import json, os, sys
import gpuherd

with open("imported.log", "a") as f:  # every load of this file, the worker's too
    f.write(__name__ + "\\n")


@gpuherd.task(gpus=0)
def square(n, run_dir):
    return {"square": n * n, "run_dir": run_dir}


if __name__ == "__main__":
    with open("main.log", "a") as f:
        f.write("main\\n")
    sweep = square.sweep(n=[2, 3], results_dir="squares")
    assert sweep.wait(timeout=30), sweep.results()
    print(json.dumps(sweep.results()))
"""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    """One daemon (4 fake GPUs) for the module, and a work folder holding tasks_mod.py."""
    with api_daemon(tmp_path_factory.mktemp("api"), "tasks_mod", TASKS_MODULE):
        yield connect()


def test_connect_starts_a_daemon_with_fake_gpus_from_the_environment(
    herd: Herd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setenv("GPUHERD_FAKE_GPUS", "3")
    with pytest.raises(DaemonError, match="no gpuherd daemon is running"):
        connect(herd.home, start=False)
    client = connect(herd.home)
    assert client.client.get("/daemon")["probe"].startswith("fake: 3 GPUs")
    with pytest.warns(UserWarning, match=r"^connect\(fake_gpus=1\) ignored: the daemon already"):
        assert connect(herd.home, fake_gpus=1).client.home == herd.home  # already up: reused
    assert psutil.Process().children() == []  # detached: nothing for this process to reap
    with pytest.raises(DaemonError, match="bogus"):
        connect(herd.home.parent / "other", fake_gpus="bogus")


def test_job_handle_waits_and_reads_logs(api: gpuherd.Herd, tmp_path: Path) -> None:
    herd = api
    job = herd.submit(["sh", "-c", "echo out $CUDA_VISIBLE_DEVICES; echo err >&2"], name="h")
    assert job.wait(timeout=20) == "succeeded"
    assert job.state() == "succeeded" and job.info()["name"] == "h"
    assert job.logs().startswith("out ") and job.logs("stderr") == "err\n"
    lines = herd.submit("printf 'a\\nb\\nc\\n'", gpus=0)
    assert lines.wait(timeout=20) == "succeeded"
    assert lines.logs(lines=2) == "b\nc\n" and lines.logs() == "a\nb\nc\n"
    # The first attempt fails only once the follow has its line: a follow begins with the
    # job's latest attempt, which under load was already the second one.
    go = tmp_path / "go"
    retried = herd.submit(
        f'echo "try $GPUHERD_ATTEMPT"; [ "$GPUHERD_ATTEMPT" = 2 ] && exit 0; '
        f"while [ ! -e {go} ]; do sleep 0.02; done; exit 1",
        retries=1,
    )
    followed = retried.follow()
    assert next(followed) == "try 1\n"
    go.touch()
    assert "".join(followed) == "try 2\n"  # through the retry, to the end
    assert "".join(lines.follow(lines=1)) == "c\n"
    slow = herd.submit("sleep 30", gpus=0, timeout="1m", env={"A": 1})
    with pytest.raises(TimeoutError, match="still unfinished"):
        slow.wait(timeout=0.3)
    assert slow.info()["env_overrides"] == {"A": "1"}
    slow.kill()
    assert slow.wait(timeout=20) == "killed"


def test_submit_takes_a_begin_time_as_a_datetime_or_as_text(api: gpuherd.Herd) -> None:
    soon = datetime.now() + timedelta(seconds=1)
    job = api.submit("true", gpus=0, begin=soon)
    assert job.info()["begin"] == pytest.approx(soon.timestamp())
    later = api.submit("true", gpus=0, begin="+2h")
    assert later.state() == "held"
    assert later.info()["begin"] == pytest.approx(time.time() + 7200, abs=60)
    with warnings.catch_warnings(record=True) as said:  # (said if still held as it began)
        warnings.simplefilter("always")
        assert job.wait(timeout=20) == "succeeded"
    assert all(f"job {job.id} is held until " in str(w.message) for w in said), said
    assert job.info()["started_at"] >= soon.timestamp()
    later.kill()
    with pytest.raises(HerdError, match="not both"):
        api.submit("true", begin="+1h", hold=True)
    # A moment no job can start at, or a value of no kind `begin` takes, is refused before
    # anything is sent, in the API's words: a submit's, a sweep's and a task's option alike
    # (the daemon's InvalidValue named `--begin`; a list or an object raised json's "Object
    # of type object is not JSON serializable", or a HerdError saying "sweep parameters").
    never = (1e308, float("nan"), -1.0, datetime(1969, 1, 1), timedelta(days=3_000_000))
    for moment in never:
        with pytest.raises(WrongValue, match=r"^begin .+ is no time a job can start at: give"):
            api.submit("true", begin=moment)
    said = r"^begin is a datetime, a timedelta from now, text \('\+2h', '23:30'\) or epoch"
    for kind in ([1], object(), True):
        with pytest.raises(WrongType, match=said):
            api.submit("true", begin=kind)
    with pytest.raises(WrongType, match=said):
        api.sweep("echo {x}", {"x": [1]}, gpus=0, begin=object())
    import tasks_mod

    with pytest.raises(WrongValue, match=r"^begin -1 is no time a job can start at"):
        gpuherd.task(begin=-1)(tasks_mod.boom).submit(x=1)
    # Bad text names Python's keyword, not the CLI's flag (was: "invalid --begin 'soon'").
    with pytest.raises(HerdError, match=r"^invalid begin 'soon': use now, \+DURATION"):
        api.submit("true", begin="soon")


def test_an_environment_variable_name_no_process_can_have_is_refused(api: gpuherd.Herd) -> None:
    # Before, such a job was queued, then could not spawn, and stayed "running" for ever.
    # Python's names follow --env's rule (core/env_vars.py): `1A` and `A-B` were let in.
    before = api.submit("true", gpus=0, env={"A_B": "1"})
    for name in ("A=B", "", "1A", "A-B"):
        with pytest.raises(WrongValue) as refused:  # (a HerdError and a ValueError)
            api.submit("true", gpus=0, env={name: "1"})
        assert str(refused.value) == (
            f"env: {name!r} is not an environment variable name: use letters, digits and _,"
            " not starting with a digit (e.g. SEED)"
        )
    # The daemon refuses what no process can have, for any client (here: no Python check).
    item = {"command": "true", "cwd": "/", "gpus": 0, "env_overrides": {"A=B": "1"}}
    with pytest.raises(HerdError, match=r"^'A=B' is not an environment variable name: give"):
        api.client.post("/jobs", {"jobs": [item]})
    after = api.submit("true", gpus=0)
    assert after.id == before.id + 1  # nothing was queued in between
    assert before.wait(timeout=20) == after.wait(timeout=20) == "succeeded"


GRACE = "must be greater than zero, at most 100 years; a kill may choose 0 (SIGKILL at once)"


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("grace", float("nan"), f"grace (--grace) {GRACE}"),  # was an internal error
        ("grace", float("inf"), f"grace (--grace) {GRACE}"),
        ("grace", 0, f"grace (--grace) {GRACE}"),  # SIGKILL at once: a kill's choice alone
        ("timeout", float("nan"), "timeout (--timeout) must be positive, at most 100 years"),
        ("timeout", float("inf"), "timeout (--timeout) must be positive, at most 100 years"),
        (
            "no_output_timeout",
            4e9,
            "no_output_timeout (--no-output-timeout) must be positive, at most 100 years",
        ),
        # The API names the field as Python spells it, and the CLI option after it.
        ("retries", -1, "retries (--retries) must be 0 or more, got -1"),
    ],
)
def test_a_duration_no_clock_can_reach_is_refused(
    api: gpuherd.Herd, option: str, value: float, says: str
) -> None:
    with pytest.raises(HerdError) as refused:
        api.submit("true", gpus=0, **{option: value})
    assert str(refused.value) == says


@pytest.mark.parametrize("mem", [10, "10"])
def test_memory_without_a_unit_under_1_mib_is_refused_and_nothing_queued(
    api: gpuherd.Herd, mem: int | str
) -> None:
    before = api.submit("true", gpus=0, hold=True)
    unit = rf"^mem={mem!r} is 10 bytes: give a unit, e\.g\. mem='10GiB' \(a number without one"
    with pytest.raises(ValueError, match=unit):
        api.submit("true", mem=mem)
    assert api.submit("true", gpus=0, hold=True).id == before.id + 1


def test_a_job_handle_edits_a_waiting_job(api: gpuherd.Herd) -> None:
    job = api.submit("true", gpus=0, hold=True, timeout="1h")
    assert job.edit(gpus=2, mem="20GiB", clear=["timeout"]) == (
        "edited (gpus 0 -> 2, mem none -> 20.0 GiB, timeout 1h -> none)"
    )
    info = job.info()
    assert (info["gpus_requested"], info["mem"], info["timeout"]) == (2, 20 * 2**30, None)
    with pytest.raises(HerdError, match="would never run: asks for 9 GPUs"):
        job.edit(gpus=9)
    with pytest.raises(TypeError, match="'priority' cannot be edited"):
        job.edit(priority=3)
    first = api.submit("true", gpus=0, hold=True)
    assert job.edit(cwd=Path("/"), after=first, grace=timedelta(minutes=1), begin="+2h").startswith(
        f"edited (cwd {Path.cwd()} -> /, grace 10s -> 1m, after none -> {first.id}, begin none -> "
    )
    info = job.info()
    assert (info["cwd"], info["after"], info["grace"], info["state"]) == (
        "/",
        [first.id],
        60,
        "held",
    )
    assert info["begin"] > time.time() + 3600
    job.kill()
    first.kill()
    with pytest.raises(HerdError, match="already ended"):
        job.edit(name="late")


def test_a_job_after_one_that_failed_is_cancelled_at_once_and_warns(api: gpuherd.Herd) -> None:
    failed = api.submit("exit 3", gpus=0)
    assert failed.wait() == "failed"
    with pytest.warns(UserWarning, match=rf"is cancelled at once: job {failed.id}, which it wai"):
        late = api.submit("true", gpus=0, after=failed)
    assert (late.state(), late.info()["outcome"]) == ("cancelled", "dependency_failed")


def test_submit_takes_the_no_output_options(api: gpuherd.Herd) -> None:
    silent = api.submit("sleep 60", gpus=0, no_output_timeout="1s", kill_on_no_output=True)
    # The CLI's spelling (`--on-no-output kill`), and a duration as a timedelta.
    second = timedelta(seconds=1)
    spelt = api.submit("sleep 60", gpus=0, no_output_timeout=second, on_no_output="kill")
    flagged = api.submit("sleep 60", gpus=0, no_output_timeout=second, on_no_output="flag")
    for job in (silent, spelt):
        assert job.wait(timeout=20) == "failed"
        assert job.info()["outcome"] == "stalled"
    stalled = wait_for(lambda: (flagged.info()["reason"] or "").startswith("stalled"), 20)
    assert stalled and flagged.state() == "running"  # flagged, not killed
    flagged.kill()
    with pytest.raises(WrongValue, match=r"^on_no_output 'die': give 'flag' or 'kill'$"):
        api.submit("true", on_no_output="die")
    said = r"^on_no_output='kill' and kill_on_no_output=False disagree: give one of them$"
    with pytest.raises(WrongValue, match=said):  # (was a HerdError, as a daemon's refusal)
        api.submit("true", on_no_output="kill", kill_on_no_output=False)


def test_submit_reads_after_as_the_cli_does(api: gpuherd.Herd) -> None:
    first = api.submit("true", gpus=0, hold=True)
    second = api.submit("true", gpus=0, hold=True)
    # Text was read one character at a time: "12" waited for jobs 1 and 2.
    assert api.submit("true", hold=True, after=str(second.id)).info()["after"] == [second.id]
    ranged = api.submit("true", hold=True, after=f"{first.id}-{second.id}")
    assert ranged.info()["after"] == [first.id, second.id]
    # "last": the job submitted last (was a ValueError), alone or in a list.
    assert api.submit("true", hold=True, after="last").info()["after"] == [ranged.id]
    mixed = api.submit("true", hold=True, after_any=[first, "last"])
    assert mixed.info()["after_any"] == [first.id, ranged.id + 1]
    # In a list of ids too, as `--after 82,last` takes it (it was refused, saying to use 'last').
    listed = api.submit("true", hold=True, after_fail=f"{first.id},last")
    assert listed.info()["after_fail"] == [first.id, mixed.id]
    for wrong, says in (
        ("soon", "^after: invalid job id 'soon': .*, or 'last' \\(the job submitted last\\)$"),
        (f"{first.id},lats", f"^after: invalid job id 'lats' in '{first.id},lats': "),
        ("9" * 20, f"^after: job id {'9' * 20} is too large \\(at most 2\\*\\*63 - 1\\)$"),
        (0, "0 is not a job"),
    ):
        with pytest.raises(WrongValue, match=says):
            api.submit("true", after=wrong)


def test_python_values_a_job_cannot_take_are_refused_at_submit(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    before = api.submit("true", gpus=0, hold=True)
    with pytest.raises(TypeError, match=r"env: A=None: give the value as a string"):
        api.submit("true", env={"A": None})  # was sent as the text "None"
    with pytest.raises(WrongValue, match="over the 128 KiB an environment variable may hold"):
        api.submit("true", env={"A": "x" * 10_000_000})  # was queued, then failed to spawn
    with pytest.raises(HerdError, match=f"cwd {tmp_path / 'f'} is not a folder"):
        (tmp_path / "f").touch()
        api.submit("true", cwd=tmp_path / "f")  # was: "does not exist"
    with pytest.raises(WrongValue, match="begin 0001-01-01 00:00:00 is no time a job can start"):
        api.submit("true", begin=datetime(1, 1, 1))  # was: "year 0 is out of range"
    with pytest.raises(TypeError, match="params must be a dict of lists"):
        api.sweep("echo {x}", ["x"])  # type: ignore[arg-type]  # was an AttributeError
    assert api.submit("true", gpus=0, hold=True).id == before.id + 1  # nothing queued between
    timed = api.submit("true", gpus=0, hold=True, timeout=timedelta(minutes=5))
    assert timed.info()["timeout"] == 300  # was: "not JSON serializable"


def test_task_sweep_return_values_are_the_metrics(api: gpuherd.Herd, tmp_path: Path) -> None:
    import tasks_mod  # its tasks connect by themselves (GPUHERD_HOME), as a user's would

    results = tmp_path / "scores"
    sweep = tasks_mod.score.sweep(results_dir=results, x=[1, 2, 3], y=[10], name="scores")
    assert (sweep.submission["new"], len(sweep.ids)) == (3, 3)
    assert sweep.wait(timeout=30)
    rows = sweep.results(sort="-score")
    with pytest.raises(InvalidValue, match=r"^cannot sort by 'nope': use a metric \(score"):
        sweep.results(sort="nope")  # the daemon's 422: a value refused (was a bare HerdError)
    assert [r["metrics"]["score"] for r in rows] == [30, 20, 10]
    assert {r["metrics"]["run_dir"] for r in rows} == {r["run_dir"] for r in rows}
    assert all(r["metrics"]["gpu"] in "0123" for r in rows)
    status = Herd(Path(os.environ["GPUHERD_HOME"])).json("sweep", "status", "scores")
    assert [r["metrics"]["score"] for r in status["rows"]] == [10, 20, 30]
    again = tasks_mod.score.sweep(results_dir=results, x=[1, 2, 3, 4], y=[10], name="scores")
    assert (again.submission["new"], again.submission["skipped_done"]) == (1, 3)
    assert again.wait(timeout=30)

    one = tasks_mod.score.submit(x=7, y=6)
    assert one.wait(timeout=20) == "succeeded" and one.result()["score"] == 42

    failed = tasks_mod.boom.submit(x=1)
    assert failed.wait(timeout=20) == "failed"
    assert "ValueError: boom 1" in failed.logs("stderr")
    with pytest.raises(HerdError, match="boom\\(\\) takes no parameter 'z'"):
        tasks_mod.boom.submit(z=1)  # refused at submit, no longer a failed job later


def test_a_task_in_a_scripts_main_runs_without_its_main_block(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    script = tmp_path / "experiment.py"
    script.write_text(textwrap.dedent(MAIN_SCRIPT))
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["params"], r["metrics"]["square"]) for r in rows] == [({"n": 2}, 4), ({"n": 3}, 9)]
    assert (tmp_path / "main.log").read_text() == "main\n"  # once: the workers skipped it
    loads = (tmp_path / "imported.log").read_text().split()
    assert sorted(loads) == ["__main__", "__mp_main__", "__mp_main__"]  # as multiprocessing's


def test_gpu_task_scheduler_config_and_class(api: gpuherd.Herd, tmp_path: Path) -> None:
    herd = api
    import tasks_mod

    config = {**GTS_CONFIG, "scheduler_config": {"result_root_folder": str(tmp_path / "gts")}}
    sweep = gpuherd.sweep_from_config(config, task=tasks_mod.MyGPUTask, herd=herd)
    assert (sweep.name, sweep.submission["points"], sweep.submission["new"]) == ("MyGPUTask", 4, 4)
    assert sweep.wait(timeout=30)
    rows = sweep.results()
    assert [r["params"] for r in rows] == GTS_POINTS
    for row in rows:
        seen = json.loads((Path(row["run_dir"]) / "seen.json").read_text())
        assert seen == {"config": row["params"], "work_dir": row["run_dir"], "env": "set"}


def test_what_a_sweep_warns_of_reaches_python_as_a_warning(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    import tasks_mod

    first = tmp_path / "first"
    api.sweep("echo {x}", {"x": [1]}, name="moved", results_dir=first, dry_run=False).wait(30)
    # A dry run moves nothing: it said "from now on they are in", as if done.
    with pytest.warns(gpuherd.SweepWarning) as warned:
        api.sweep("echo {x}", {"x": [1]}, name="moved", results_dir=tmp_path / "b", dry_run=True)
    assert [str(w.message) for w in warned] == [
        f"sweep 'moved' keeps its results in {first}; submitted, from then on they would be in "
        f"{tmp_path / 'b'} (use another name= to keep both)"
    ]
    assert [s["results_dir"] for s in api.sweeps() if s["name"] == "moved"] == [str(first)]
    with pytest.warns(gpuherd.SweepWarning, match=f"kept its results in {first}"):
        api.sweep("echo {x}", {"x": [1]}, name="moved", results_dir=tmp_path / "second")
    mixed = {
        **GTS_CONFIG,
        "scheduler_config": {"result_root_folder": str(tmp_path / "gts"), "gpu": [["0", "1"], "2"]},
    }
    with pytest.warns(gpuherd.SweepWarning, match="mixes entries of 1 and 2 GPUs"):
        gpuherd.sweep_from_config(
            mixed, task=tasks_mod.MyGPUTask, herd=api, name="mixed", dry_run=True
        )


def test_sweep_from_python_mirrors_the_cli(api: gpuherd.Herd, tmp_path: Path) -> None:
    herd = api
    dry = herd.sweep("echo {x} {y}", {"x": [1, "a b"]}, fixed={"y": 0}, dry_run=True)
    assert dry.commands == ["echo 1 0", "echo 'a b' 0"] and dry.ids == []
    (tmp_path / "s.yaml").write_text("command: echo {a}\ngrid:\n  a: [1, 2, 3]\ngpus: 0\n")
    from_file = herd.sweep(tmp_path / "s.yaml", samples=2, seed=4, results_dir=tmp_path / "r")
    assert (from_file.name, from_file.submission["new"]) == ("s", 2)
    assert from_file.wait(timeout=30)
    assert [s["name"] for s in herd.sweeps()][-1] == "s"
    with pytest.raises(HerdError, match="JSON values"):
        herd.sweep("echo {x}", {"x": [object()]})
    with pytest.raises(HerdError, match="top level"):
        gpuherd.task(lambda: None)


def test_submit_takes_dependencies_as_handles(api: gpuherd.Herd) -> None:
    first = api.submit("exit 4", gpus=0, hold=True)  # held: it cannot fail before the others
    ok = api.submit("true", gpus=0, after=[first])
    anyway = api.submit("true", gpus=0, after_any=[first])
    api.client.post("/jobs/release", {"ids": [first.id]})
    assert (ok.info()["after"], anyway.info()["after_any"]) == ([first.id], [first.id])
    assert (ok.wait(timeout=30), anyway.wait(timeout=30)) == ("cancelled", "succeeded")


def test_sweep_results_give_metrics_back_as_the_job_wrote_them(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    (tmp_path / "m.py").write_text(
        "import json, sys\n"
        "metrics = {'loss': float(sys.argv[1]), 'shape': [2, 3], 'ok': True}\n"
        "json.dump(metrics, open(sys.argv[2] + '/metrics.json', 'w'))\n"
    )
    params = {"v": ["nan", "inf", "-inf", "0.5"]}
    template = f"python3 {tmp_path / 'm.py'} {{v}} {{run_dir}}"
    sweep = api.sweep(template, params, name="finite", results_dir=tmp_path / "r", gpus=0)
    assert sweep.wait(timeout=30)
    losses = {r["params"]["v"]: r["metrics"]["loss"] for r in sweep.results()}
    assert math.isnan(losses["nan"]) and isinstance(losses["nan"], float)
    assert (losses["inf"], losses["-inf"], losses["0.5"]) == (math.inf, -math.inf, 0.5)
    row = sweep.results()[0]["metrics"]
    assert (row["shape"], row["ok"]) == ([2, 3], True)
    again = api.sweep(
        template, params, name="finite", results_dir=tmp_path / "r", gpus=0, force=True
    )
    assert repr(again) == (
        "<gpuherd.Sweep finite: 0 new, 0 failed rerun, 4 done rerun (force), 0 done skipped,"
        " 0 already queued or running skipped>"
    )
    assert again.wait(timeout=30)
    first = api.sweep(template, {"v": [1]}, name="plain", results_dir=tmp_path / "p", gpus=0)
    assert "rerun" in repr(first) and "done rerun" not in repr(first)

"""What a QA pass of Python tasks found, against a real daemon (4 fake GPUs): a script that
parses its arguments at its top level failed in every job; dict keys that JSON makes text
reached the function changed; a function of a module made at run time was accepted, and its
job failed; a parameter nested 100,000 deep raised a bare RecursionError. Every wait has a
timeout.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import api_daemon
from gpuherd.pyapi import JobFailed, connect
from gpuherd.pyapi_types import WrongType, WrongValue

TASKS_MODULE = """
import gpuherd


@gpuherd.task(gpus=0, retries=0)
def lookup(table, key=None):
    return repr(table)  # (the keys as the function got them: 1 or '1')


@gpuherd.task(gpus=0, retries=0)
def depth(value):
    levels = 0
    while isinstance(value, list):
        value, levels = (value[0] if value else None), levels + 1
    return levels
"""

KEYS = "(parameters travel as JSON, whose keys are text): use str keys"
TOO_DEEP = (
    "nested more than 100 levels deep (lists and dicts inside each other, or one inside "
    "itself), more than a task's parameter may be (parameters travel as JSON): pass a "
    "flatter value, or write it to a file and pass its path"
)
EXIT_ADVICE = (
    "its top level runs again in every job of its tasks; put what may exit under "
    '`if __name__ == "__main__":`'
)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[gpuherd.Herd]:
    with api_daemon(tmp_path_factory.mktemp("loading"), "loading_keys_mod", TASKS_MODULE):
        yield connect()


def run_script(folder: Path, text: str, *args: str) -> list[str]:
    """`python script.py ARGS` in `folder` (GPUHERD_HOME the module's daemon's): its stdout's
    words, after it exited 0."""
    script = folder / "script.py"
    script.write_text(textwrap.dedent(text))
    done = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=folder,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def next_id(api: gpuherd.Herd) -> int:
    """The id a witness job gets: one more than the last id seen if nothing was queued."""
    witness = api.submit("true", gpus=0)
    assert witness.wait(timeout=20) == "succeeded"
    return witness.id


# ---- 1. a script that parses its arguments at its top level -----------------------------------

PARSING_SCRIPT = """
    import argparse
    import sys

    import gpuherd

    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()


    @gpuherd.task(gpus=0, retries=0)
    def train(x):
        return {"value": x * args.lr, "argv": sys.argv, "files": len(args.files)}


    if __name__ == "__main__":
        job = train.submit(x=2)
        sweep = train.sweep(x=[1, 3], results_dir="points")
        print(job.id, sweep.wait(timeout=60), *(job.id for job in sweep.jobs()))
"""


def test_a_script_parsing_its_arguments_at_its_top_level_gets_them_in_its_jobs(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    # Before, every job failed: `worker.py: error: unrecognized arguments: /.../script.py:train
    # --params {"x": 2}`, the worker's own arguments given to the script's parser.
    job_id, waited, *points = run_script(tmp_path, PARSING_SCRIPT, "--lr", "0.5")
    assert waited == "True"
    argv = [str((tmp_path / "script.py").resolve()), "--lr", "0.5"]  # (as spawn's child's)
    job = api.job(int(job_id))
    assert job.result(timeout=30) == {"value": 1.0, "argv": argv, "files": 0}
    assert """ --script-args '["--lr", "0.5"]' """ in job.info()["command"]
    results = [api.job(int(point)).result(timeout=30)["value"] for point in points]
    assert sorted(results) == [0.5, 1.5]
    # Run without arguments, its jobs' command lines are as they were (no --script-args).
    job_id, waited, *_ = run_script(tmp_path, PARSING_SCRIPT)
    job = api.job(int(job_id))
    assert job.result(timeout=30) == {"value": 2.0, "argv": argv[:1], "files": 0}
    assert "--script-args" not in job.info()["command"]


def test_a_long_command_line_is_kept_once_in_a_file_for_all_its_jobs(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    files = [f"data/{{n}}-{n:05d}.png" for n in range(2000)]  # (braces: a sweep's template)
    job_id, waited, *points = run_script(tmp_path, PARSING_SCRIPT, *files)
    assert waited == "True"
    kept = list((api.client.home / "task-params").glob("script-args-*.json"))
    assert len(kept) == 1  # one file for the job and the sweep's points (not 3 copies)
    assert json.loads(kept[0].read_text()) == files
    assert stat.S_IMODE(kept[0].stat().st_mode) == 0o600
    for each in (job_id, *points):
        job = api.job(int(each))
        assert f" --script-args-file {kept[0]}" in job.info()["command"]
        assert job.result(timeout=30)["files"] == 2000


@pytest.mark.parametrize(
    ("edit", "exited", "written"),
    [
        (
            'parser.add_argument("--data", required=True)',
            "sys.exit(2), after writing 'script.py: error: the following arguments are "
            "required: --data'",
            "usage: script.py [-h] --lr LR --data DATA\n"
            "script.py: error: the following arguments are required: --data\n",
        ),
        ('sys.exit("no data here")', "sys.exit('no data here')", ""),
    ],
    ids=["argparse", "sys.exit"],
)
def test_a_script_that_exits_as_its_job_loads_it_fails_the_job_with_one_line(
    api: gpuherd.Herd, tmp_path: Path, edit: str, exited: str, written: str
) -> None:
    script = tmp_path / "script.py"
    text = """
        import argparse
        import sys

        import gpuherd

        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, required=True)
        # (edited here)
        args = parser.parse_args()


        @gpuherd.task(gpus=0, retries=0, hold=True)
        def train(x):
            return x * args.lr


        if __name__ == "__main__":
            print(train.submit(x=2).id)
    """
    [job_id] = run_script(tmp_path, text, "--lr", "0.5")
    # The script changed before its held job ran: the job loads it as it is then.
    script.write_text(script.read_text().replace("# (edited here)", edit))
    job = api.job(int(job_id))
    job.release()
    assert job.wait(timeout=30) == "failed"
    argv = [str(script.resolve()), "--lr", "0.5"]
    said = (
        f"gpuherd worker: {script.resolve()} exited ({exited}) as the job loaded it with "
        f"sys.argv {argv!r} (the arguments it was submitted with) to find train: {EXIT_ADVICE}"
    )
    with pytest.raises(JobFailed) as failed:
        job.result()
    assert str(failed.value) == f"job {job.id} (train) failed (exit 2): {said}"
    assert job.logs("stderr") == f"{written}{said}\n"  # (argparse's own words above it)


GTS_SCRIPT = """
    import argparse
    import os

    import gpuherd

    parser = argparse.ArgumentParser()
    parser.add_argument("--tag")
    args = parser.parse_args()


    class Trainer:
        def required_env(self):
            return {"LOADING_FLAG": "on"}

        def main(self):
            return {"tag": args.tag, "flag": os.environ["LOADING_FLAG"], "a": self._config["a"]}


    if __name__ == "__main__":
        config = {"scheduler_config": {"gpu": ["0"]}, "test_config": {"a": [1, 2]}}
        sweep = gpuherd.sweep_from_config(config, Trainer)
        print(sweep.wait(timeout=60), *(job.id for job in sweep.jobs()))
"""


def test_a_task_started_again_for_its_required_env_keeps_the_scripts_arguments(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    # required_env() starts the worker again with the variables set: with the worker's own
    # arguments (not the script's, which sys.argv holds by then).
    waited, *points = run_script(tmp_path, GTS_SCRIPT, "--tag", "hello")
    assert waited == "True"
    results = sorted((api.job(int(p)).result(timeout=30) for p in points), key=str)
    assert results == [{"tag": "hello", "flag": "on", "a": a} for a in (1, 2)]


# ---- 2. dict keys that JSON would make text ---------------------------------------------------


def test_dict_keys_that_json_would_make_text_are_refused_at_submit(api: gpuherd.Herd) -> None:
    import loading_keys_mod as mod

    before = next_id(api)
    # Before, the function got {'1': 'b'}: 1 made text, and "a" dropped in the collision.
    with pytest.raises(WrongType) as refused:
        mod.lookup.submit(table={1: "a", "1": "b"}, key=1)
    assert str(refused.value) == f"table: key 1 (int) would reach lookup as '1' {KEYS}"
    with pytest.raises(WrongType) as refused:
        mod.lookup.submit(table={"x": [{True: 1}]})
    said = f"table['x'][0]: key True (bool) would reach lookup as 'true' {KEYS}"
    assert str(refused.value) == said
    with pytest.raises(WrongType) as refused:
        mod.lookup.sweep(table=[{"a": 1}, {None: 2}], results_dir="keys")
    said = f"table[1]: key None (NoneType) would reach lookup as 'null' {KEYS}"
    assert str(refused.value) == said
    with pytest.raises(WrongType) as refused:
        mod.lookup.sweep(key=[1, 2], fixed={"table": {1.5: "x"}}, results_dir="keys")
    said = f"fixed['table']: key 1.5 (float) would reach lookup as '1.5' {KEYS}"
    assert str(refused.value) == said
    with pytest.raises(WrongType) as refused:  # (json.dumps refused it, in its own words)
        mod.lookup.submit(table={(1, 2): "pair"})
    assert str(refused.value) == f"table: key (1, 2) (tuple) cannot reach lookup {KEYS}"
    assert next_id(api) == before + 1  # nothing was queued
    assert mod.lookup.submit(table={"1": "b"}).result(timeout=30) == "{'1': 'b'}"


def test_a_gpu_task_scheduler_configs_keys_are_checked_too(api: gpuherd.Herd) -> None:
    import loading_keys_mod as mod

    config = {"scheduler_config": {"gpu": ["0"]}, "test_config": {"table": [{7: "x"}]}}
    with pytest.raises(WrongType) as refused:
        gpuherd.sweep_from_config(config, mod.lookup, dry_run=True)
    assert str(refused.value) == f"table[0]: key 7 (int) would reach the task as '7' {KEYS}"


# ---- 3. a function of a module made at run time -----------------------------------------------

MADE_AT_RUN_TIME = """
import gpuherd

FACTOR = 2


def twice(x):
    return x * FACTOR


@gpuherd.task(gpus=0, retries=0)
def cellfn(x):
    return twice(x)
"""


def test_a_task_of_a_module_made_at_run_time_is_pickled_and_runs(api: gpuherd.Herd) -> None:
    import cloudpickle  # type: ignore[import-untyped]

    # Before, each job failed: `cannot import 'cellmod' ...; run the sweep from the folder the
    # module is importable from` (for a submit, no sweep).
    namespace = {"__name__": "loading_cellmod"}
    exec(MADE_AT_RUN_TIME, namespace)
    job = namespace["cellfn"].submit(x=21)
    assert job.result(timeout=30) == 42
    assert " -m gpuherd.worker --function-file " in job.info()["command"]
    sweep = namespace["cellfn"].sweep(x=[1, 2], results_dir="cell")
    assert sweep.wait(timeout=60)
    assert sorted(row["metrics"]["result"] for row in sweep.results()) == [2, 4]
    # A types.ModuleType, and one registered in sys.modules (cloudpickle took it for a module
    # the job could import, and pickled the function by its name).
    unregistered = types.ModuleType("loading_dyn")
    exec(MADE_AT_RUN_TIME, unregistered.__dict__)
    assert unregistered.cellfn.submit(x=3).result(timeout=30) == 6
    registered = sys.modules["loading_dyn2"] = types.ModuleType("loading_dyn2")
    try:
        exec(MADE_AT_RUN_TIME, registered.__dict__)
        assert registered.cellfn.submit(x=4).result(timeout=30) == 8
    finally:
        del sys.modules["loading_dyn2"]
    assert "loading_dyn2" not in cloudpickle.list_registry_pickle_by_value()  # (as it was)


def test_a_module_the_job_cannot_import_is_said_for_a_submit_and_for_a_sweep(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    # Before, a submit's job said "run the sweep from the folder ...", as a sweep's point does.
    for point, what in (("", "submit the task"), (f" --run-dir {tmp_path}", "run the sweep")):
        job = api.submit(
            f"{sys.executable} -m gpuherd.worker loading_missing:f --params '{{}}'{point}",
            gpus=0,
            cwd=tmp_path,
        )
        assert job.wait(timeout=30) == "failed"
        assert job.logs("stderr") == (
            f"gpuherd worker: cannot import 'loading_missing' from {tmp_path}: No module named "
            f"'loading_missing'; {what} from the folder the module is importable from\n"
        )


# ---- 4. a parameter nested too deep -------------------------------------------------------------


def nested(levels: int) -> list[object]:
    value: list[object] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_a_parameter_nested_too_deep_is_refused_in_one_line(api: gpuherd.Herd) -> None:
    import loading_keys_mod as mod

    before = next_id(api)
    # Before, a RecursionError's traceback, from numpy's conversion of the values.
    for levels in (100_000, 101):
        with pytest.raises(WrongValue) as refused:
            mod.depth.submit(value=nested(levels))
        assert str(refused.value) == f"value: {TOO_DEEP}"
    with pytest.raises(WrongValue) as refused:
        mod.depth.sweep(value=[nested(100_000)], results_dir="deep")
    assert str(refused.value) == f"value: {TOO_DEEP}"
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(WrongValue):
        mod.depth.submit(value=looped)
    assert next_id(api) == before + 1  # nothing was queued
    assert mod.depth.submit(value=nested(100)).result(timeout=30) == 100

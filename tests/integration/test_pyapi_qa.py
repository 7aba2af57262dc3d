"""The Python API as a researcher uses it, against a real daemon (4 fake GPUs): what a QA
pass of sweeps and the Python API found wrong. Every wait has a timeout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import gpuherd
from conftest import Herd, api_daemon
from gpuherd.core.sweep_names import default_sweep_name
from gpuherd.errors import DaemonError, HerdError, InvalidValue, NotFound
from gpuherd.pyapi import connect
from gpuherd.pyapi_types import WrongType
from gpuherd.tasks import TaskArgumentError

TASKS_MODULE = """
import json, os
import gpuherd


@gpuherd.task(gpus=0, retries=0)
def logs_only(run_dir):
    with open(os.path.join(run_dir, "metrics.json"), "w") as f:
        json.dump({"loss": 0.5}, f)


@gpuherd.task(gpus=0, retries=0)
def scaled(lr, factor, run_dir):
    return lr * factor


class Scales:
    @classmethod
    def double(cls, x):
        return 2 * x

    def triple(self, x):
        return 3 * x
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


# ---- what a new user tries next, walking docs/python.md --------------------------------------


def test_a_tasks_run_dir_cannot_be_passed_in_a_call(api: gpuherd.Herd) -> None:
    # `logs_only.submit(run_dir="/data/out")` was queued, and the function was given the
    # job's folder instead, without a word.
    import pyapi_qa_mod

    with pytest.raises(TaskArgumentError) as refused:
        pyapi_qa_mod.logs_only.submit(run_dir="/data/out")
    assert str(refused.value).startswith("logs_only() is given run_dir by gpuherd")
    assert "out_dir=" in str(refused.value)
    with pytest.raises(TaskArgumentError, match=r"^logs_only\(\) is given run_dir"):
        pyapi_qa_mod.logs_only.sweep(fixed={"run_dir": "/data/out"}, dry_run=True)


def test_a_tasks_parameters_given_by_position_are_refused_saying_how(api: gpuherd.Herd) -> None:
    # submit(0.1) said Python's "Task.submit() takes 1 positional argument but 2 were
    # given"; sweep([0.1, 0.01]) took the list as its results folder, named "[0.1, 0.01]".
    import pyapi_qa_mod

    with pytest.raises(TaskArgumentError) as refused:
        pyapi_qa_mod.scaled.submit(0.1, 2)
    assert str(refused.value) == (
        "scaled.submit() takes scaled's parameters by name, not by position (0.1, 2): "
        "scaled.submit(lr=..., factor=...)"
    )
    with pytest.raises(TaskArgumentError, match=r"^scaled.sweep\(\) takes scaled's param"):
        pyapi_qa_mod.scaled.sweep([0.1, 0.01], dry_run=True)
    assert pyapi_qa_mod.scaled.submit(lr=0.5, factor=4).result(timeout=30) == 2.0


def test_a_job_handle_of_an_id_as_text_waits_and_answers(api: gpuherd.Herd) -> None:
    # herd.job("7") (an id read from `gpuherd submit -q`) raised KeyError: '7' from result()
    # and wait(): the wait's answer is keyed by numbers.
    job = api.submit('echo \'{"acc": 1}\' > "$GPUHERD_JOB_DIR/metrics.json"', gpus=0)
    by_text = api.job(str(job.id))
    assert by_text.id == job.id
    assert by_text.wait(timeout=30) == "succeeded"
    assert by_text.result(timeout=30) == {"acc": 1}
    with pytest.raises(ValueError, match=r"^a job id is a whole number from 1 up .*got 'last'$"):
        api.job("last")


def test_killing_a_job_that_does_not_exist_raises_not_found(api: gpuherd.Herd) -> None:
    # It answered the text "no job 99999", as if it had done something; every other method
    # of the handle raises NotFound.
    with pytest.raises(NotFound, match=r"^no job 99999"):
        api.job(99999).kill()
    job = api.submit("true", gpus=0)
    assert job.wait(timeout=30) == "succeeded"
    assert job.kill() == "already ended (succeeded)"  # an answer, as `gpuherd kill` exits 0


def test_opening_a_sweep_that_does_not_exist_raises_not_found_at_once(api: gpuherd.Herd) -> None:
    # It answered a handle, which failed only when used; the words are the daemon's (and the
    # CLI's `sweep status`), also for a name the daemon would not route ('a/b').
    for name in ("nope", "a/b", ""):
        with pytest.raises(NotFound) as missing:
            api.get_sweep(name)
        assert str(missing.value) == f"no sweep named {name!r}: `gpuherd sweep ls` lists the sweeps"
    with pytest.raises(TypeError, match=r"^a sweep's name is text .*, got 7$"):
        api.get_sweep(7)  # type: ignore[arg-type]
    api.sweep("true {x}", {"x": [1]}, name="there", gpus=0).wait(timeout=30)
    assert api.get_sweep("there").name == "there"


def test_a_logs_lines_or_attempt_below_one_is_refused_in_the_apis_words(
    api: gpuherd.Herd,
) -> None:
    # They came back in the HTTP API's wording (`invalid request: query.lines: Input should be
    # greater than or equal to 1`), and attempt=0 answered the latest attempt's log.
    job = api.submit("echo one; echo two", gpus=0)
    assert job.wait(timeout=30) == "succeeded"
    refused = {
        "lines": (-1, "lines is a whole number from 0 up, got -1"),  # (0: none, tail -n 0)
        "attempt": (0, "attempt is a whole number from 1 up (None: the latest), got 0"),
    }
    for name, (value, message) in refused.items():
        with pytest.raises(InvalidValue) as caught:
            job.logs(**{name: value})
        assert str(caught.value) == message
    with pytest.raises(InvalidValue, match=r"^lines is a whole number from 0 up, got -2$"):
        job.follow(lines=-2)  # at the call, not at its first next()
    with pytest.raises(InvalidValue, match=r"^lines is a whole number from 0 up, got '5'$"):
        job.logs(lines="5")  # type: ignore[arg-type]
    assert (job.logs(lines=1), job.logs(attempt=1)) == ("two\n", "one\ntwo\n")
    assert "".join(job.follow(lines=1)) == "two\n"


def test_a_wait_timeout_that_is_not_a_number_is_refused_in_one_line(
    api: gpuherd.Herd, tmp_path: Path
) -> None:
    # result(timeout="5") raised Python's "unsupported operand type(s) for +: 'float' and 'str'".
    job = api.submit("true", gpus=0)
    said = r"^timeout is a number of seconds \(None waits as long as it takes\), got '5'$"
    with pytest.raises(TypeError, match=said):
        job.result(timeout="5")  # type: ignore[arg-type]
    sweep = api.sweep("echo {x}", {"x": [1]}, name="timed", results_dir=tmp_path, gpus=0)
    with pytest.raises(TypeError, match=said):
        sweep.wait(timeout="5")  # type: ignore[arg-type]
    assert job.wait(timeout=30) == "succeeded" and sweep.wait(timeout=30)


def test_files_and_folders_of_the_wrong_kind_are_refused_in_one_line(api: gpuherd.Herd) -> None:
    # error=b"x" raised json's "Object of type bytes is not JSON serializable" from deep
    # inside, and cwd=3 pathlib's "expected str, bytes or os.PathLike object, not int".
    before = api.client.get("/jobs", all=True)["jobs"]
    for option, value, said in (
        ("error", b"x.log", r"^error is a file name \(text or a Path\), got b'x.log' \(bytes\)$"),
        ("output", 3, r"^output is a file name \(text or a Path\), got 3 \(int\)$"),
        ("cwd", 3, r"^cwd is a folder \(text or a Path\), got 3 \(int\)$"),
    ):
        with pytest.raises(WrongType, match=said):
            api.submit("true", gpus=0, **{option: value})
    job = api.submit("true", gpus=0, hold=True)
    with pytest.raises(
        WrongType, match=r"^output is a file name \(text or a Path\), got 3 \(int\)$"
    ):
        job.edit(output=3)
    assert len(api.client.get("/jobs", all=True)["jobs"]) == len(before) + 1  # the held one


def test_a_herds_wait_takes_job_handles_as_after_does(api: gpuherd.Herd) -> None:
    # herd.wait([a, b]) raised "'<' not supported between instances of 'Job' and 'Job'", and
    # herd.wait([a]) the daemon's "query.ids.0: Input should be a valid integer".
    done, failed = api.submit("true", gpus=0), api.submit("exit 2", gpus=0)
    assert api.wait([done, failed], timeout=30) == {done.id: "succeeded", failed.id: "failed"}
    assert api.wait([done], timeout=30) == {done.id: "succeeded"}
    assert api.wait([str(done.id), failed.id], timeout=30) == {
        done.id: "succeeded",
        failed.id: "failed",
    }
    with pytest.raises(TypeError, match=r"^wait\(\) takes a list of jobs or ids \(herd.wait"):
        api.wait(done)  # type: ignore[arg-type]


def test_a_method_of_an_object_is_refused_as_a_task_at_once(api: gpuherd.Herd) -> None:
    # gpuherd.task()(Scales().triple) was taken, and its job failed: "cannot call
    # Scales.triple() with ['x']: missing a required argument: 'self'".
    import pyapi_qa_mod

    with pytest.raises(HerdError) as refused:
        gpuherd.task(gpus=0)(pyapi_qa_mod.Scales().triple)
    assert str(refused.value) == (
        "Scales.triple is a method of an object, which a job cannot find again (the job would "
        "call Scales.triple without it): make it a top-level function or a staticmethod"
    )
    double = gpuherd.task(gpus=0, retries=0)(pyapi_qa_mod.Scales.double)  # found by its class
    assert double.submit(x=4).result(timeout=30) == 8


def test_a_tasks_unknown_option_is_refused_when_the_decorator_is_applied(
    api: gpuherd.Herd,
) -> None:
    # It was kept, and refused only at the task's first submit() or sweep(). (`api` puts
    # pyapi_qa_mod on the path.)
    import pyapi_qa_mod

    with pytest.raises(TypeError) as refused:
        gpuherd.task(priorty=1)
    assert str(refused.value).startswith(
        "unknown option 'priorty' (did you mean 'priority'?); options: after, after_any, "
        "after_fail, begin, cwd, env, error, exclusive, gpus, grace, herd,"
    )
    with pytest.raises(TypeError, match=r"^unknown option 'xyzzy'; options: after, "):
        gpuherd.task(pyapi_qa_mod.scaled, xyzzy=1)  # applied to a task: its options too
    named = gpuherd.task(name="n", cwd=".", herd=None, hold=True)(pyapi_qa_mod.scaled)
    assert named.options["name"] == "n"  # a task's own options, besides submit's, are taken


def test_a_tasks_options_given_by_position_say_to_name_them() -> None:
    # @gpuherd.task(2) said "2 cannot run as a task: define it at the top level of a module".
    with pytest.raises(TypeError) as refused:
        gpuherd.task(2)
    assert str(refused.value) == "gpuherd.task() takes its options by name: @gpuherd.task(gpus=2)"


def test_a_commands_words_are_text_or_paths(api: gpuherd.Herd, tmp_path: Path) -> None:
    # ["echo", None] ran `echo ''`; ["echo", "--lr", 0.1] raised Python's "expected string or
    # bytes-like object, got 'float'"; a Path, "'PosixPath' object is not iterable".
    with pytest.raises(TypeError) as refused:
        api.submit(["echo", "--lr", 0.1], gpus=0)  # type: ignore[list-item]
    assert str(refused.value) == (
        "the command's words are text (or paths): 0.1 in ['echo', '--lr', 0.1] is not; give '0.1'"
    )
    with pytest.raises(TypeError, match=r"^the command's words are text \(or paths\): None in"):
        api.submit(["echo", None], gpus=0)  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"^the command is text \('python train.py --lr 0.1'\)"):
        api.submit(5, gpus=0)  # type: ignore[arg-type]
    script = tmp_path / "a script.sh"
    script.write_text("echo ran $1\n")
    script.chmod(0o755)
    alone, listed = api.submit(script, gpus=0), api.submit([script, "well"], gpus=0)
    assert api.wait([alone, listed], timeout=30) == {alone.id: "succeeded", listed.id: "succeeded"}
    assert (alone.logs(), listed.logs()) == ("ran\n", "ran well\n")

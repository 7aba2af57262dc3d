"""`edit` as `submit` is, for the CLI and the Python API alike: a refusal names its jobs, said
once for the jobs refused alike (as every verb on many jobs groups its answers); a warning is
said once for the jobs it is about, and edit warns of what submit warns of (a
CUDA_VISIBLE_DEVICES gpuherd replaces, a script not there); a bad value raises the
InvalidValue `submit()` raises; `max_log_size=0` is refused as `--max-log-size 0` is (it
removed the cap without a word); no job ids is nothing to edit, exit 0, as `kill`'s."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from conftest import Herd
from gpuherd.core.idspec import format_ids
from gpuherd.errors import Conflict, HerdError, InvalidValue
from gpuherd.pyapi import connect

CPU_ONLY = {  # (the job's gpus 0 is its own: `drop one of them` named an option not typed)
    "--mem": (
        ["--mem", "2GiB"],
        "CPU-only (gpus 0), and a CPU-only job gets no GPU: mem (--mem) needs gpus (--gpus) in "
        "the same edit; host memory is ram (--ram)",
    ),
    "--exclusive": (
        ["--exclusive"],
        "CPU-only (gpus 0), and a CPU-only job gets no GPU: exclusive (--exclusive) needs gpus "
        "(--gpus) in the same edit",
    ),
    "--only-gpus": (
        ["--only-gpus", "1"],
        "CPU-only (gpus 0), and a CPU-only job gets no GPU: only_gpus (--only-gpus) needs gpus "
        "(--gpus) in the same edit",
    ),
}


def held(herd: Herd, count: int, *options: str) -> list[int]:
    """`count` held jobs submitted together (their ids follow each other)."""
    return herd.submit_lines(["true"] * count, "--hold", *options)


@pytest.mark.parametrize("option", CPU_ONLY)
def test_a_refusal_of_several_cpu_only_jobs_names_them_once(
    shared_daemon: Herd, option: str
) -> None:
    herd = shared_daemon
    jobs = held(herd, 3, "--gpus", "0")
    given, said = CPU_ONLY[option]
    refused = herd.cli("edit", format_ids(jobs), *given, check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == f"gpuherd: error: jobs {format_ids(jobs)} are {said}\n"
    one = herd.cli("edit", str(jobs[0]), *given, check=False)
    assert one.stderr == f"gpuherd: error: job {jobs[0]} is {said}\n"  # named alone, too
    asked = [herd.job(job) for job in jobs]  # unchanged
    assert [(j["mem"], j["exclusive"], j["only_gpus"]) for j in asked] == [(None, False, [])] * 3


def test_a_retry_delay_on_jobs_never_retried_is_warned_of_once(shared_daemon: Herd) -> None:
    herd = shared_daemon
    jobs = held(herd, 3, "--gpus", "0")
    ids = format_ids(jobs)
    edited = herd.cli("edit", ids, "--retry-delay", "30s")
    assert edited.stdout == f"jobs {ids}: edited (retry_delay none -> 30s)\n"
    assert edited.stderr == (
        f"gpuherd: warning: jobs {ids} are never retried (--retries 0), so their --retry-delay "
        f"30s does nothing: give --retries N with it (while they wait: gpuherd edit {ids} "
        "--retries 2)\n"
    )
    assert herd.cli("edit", ids, "--retries", "2").stderr == ""  # no longer idle


def test_edit_warns_of_a_cuda_visible_devices_it_replaces_as_submit_does(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    jobs = held(herd, 2)  # (one GPU each, any)
    ids = format_ids(jobs)
    by_env = herd.cli("edit", ids, "--env", "CUDA_VISIBLE_DEVICES=1")
    assert by_env.stderr == (
        f"gpuherd: warning: jobs {jobs[0]}, {jobs[1]}: --env CUDA_VISIBLE_DEVICES=1 is "
        "replaced: the job sees the GPUs gpuherd places it on; --only-gpus 1 keeps the job on "
        "those GPUs\n"
    )
    by_command = herd.cli("edit", str(jobs[0]), "--command", "CUDA_VISIBLE_DEVICES=2 true")
    assert by_command.stderr.startswith(
        f"gpuherd: warning: job {jobs[0]}: the command sets CUDA_VISIBLE_DEVICES=2, so the job "
        "would not run on the GPUs gpuherd places it on"
    ), by_command.stderr
    assert by_command.stdout == f"job {jobs[0]}: edited (command)\n"
    # With --only-gpus the job stays where it was meant to: no word, as submit says none.
    assert herd.cli("edit", ids, "--only-gpus", "1").stderr == ""


def test_edit_warns_of_a_script_not_there_after_command_or_cwd(
    shared_daemon: Herd, tmp_path: Path
) -> None:
    herd = shared_daemon
    (tmp_path / "train.py").write_text("pass\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    [job] = herd.submit_lines(["python3 train.py"], "--hold", "--gpus", "0", "--cwd", str(tmp_path))
    missing = "does not exist in {} (the job's working directory): the job will fail unless"
    moved = herd.cli("edit", str(job), "--cwd", str(elsewhere))
    assert moved.stderr.startswith(
        f"gpuherd: warning: job {job}: train.py {missing.format(elsewhere)}"
    ), moved.stderr
    typo = herd.cli("edit", str(job), "--command", "python3 trian.py")
    assert typo.stderr.startswith(
        f"gpuherd: warning: job {job}: trian.py {missing.format(elsewhere)}"
    ), typo.stderr
    assert herd.cli("edit", str(job), "--cwd", str(tmp_path), "--command", "python3 train.py")
    # The Python API warns as its submit() does.
    api = connect(herd.home, start=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api.job(job).edit(command="python3 nosuch.py")
    assert [str(w.message) for w in caught] == [
        f"job {job}: nosuch.py {missing.format(tmp_path)} it is made before it starts; check "
        "the path or pass cwd="
    ]


@pytest.mark.parametrize(
    "change",
    [{"timeout": 0}, {"retries": -1}, {"mem": 0}, {"grace": 0}],
    ids=lambda change: next(iter(change)),
)
def test_a_bad_value_raises_invalid_value_from_edit_as_from_submit(
    shared_daemon: Herd, change: dict[str, Any]
) -> None:
    api = connect(shared_daemon.home, start=False)
    with pytest.raises(InvalidValue):
        api.submit("true", gpus=1, hold=True, **change)
    job = api.submit("true", gpus=1, hold=True)
    with pytest.raises(InvalidValue) as edited:
        job.edit(**change)
    assert isinstance(edited.value, HerdError)  # (`except HerdError` catches it as before)
    assert str(edited.value).startswith(f"job {job.id}: ")


def test_an_edit_of_an_ended_job_raises_conflict(shared_daemon: Herd) -> None:
    api = connect(shared_daemon.home, start=False)
    job = api.submit("true", gpus=0, hold=True)
    job.kill()
    with pytest.raises(Conflict, match=f"job {job.id} already ended"):
        job.edit(name="x")


def test_python_max_log_size_zero_is_refused_as_the_cli_refuses_it(shared_daemon: Herd) -> None:
    herd = shared_daemon
    assert "must be greater than zero" in herd.usage_error(
        "submit", "--max-log-size", "0", "--", "true"
    )
    api = connect(herd.home, start=False)
    said = "max_log_size=0 is no size: give one, e.g. max_log_size='10GiB', or max_log_size='none'"
    with pytest.raises(InvalidValue, match=said):
        api.submit("true", gpus=0, hold=True, max_log_size=0)
    job = api.submit("true", gpus=0, hold=True, max_log_size="2MiB")
    with pytest.raises(InvalidValue, match=said):
        job.edit(max_log_size=0)
    assert herd.job(job.id)["max_log_size"] == 2 * 1024 * 1024  # the cap stays
    assert job.edit(max_log_size="none") == "edited (max_log_size 2 MiB -> none)"


def test_edit_given_no_job_ids_does_nothing_as_kill_does(shared_daemon: Herd) -> None:
    herd = shared_daemon
    for options in ([], ["--name", "x"]):  # `edit $(gpuherd ls -q --state queued) --name x`
        done = herd.cli("edit", *options)
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout == "no job ids given: nothing to edit (e.g. gpuherd edit 3-7)\n"

"""`edit --gpus 0` of a job that keeps --exclusive, --only-gpus or --mem says what the job has
and the edit that unsets it, every field at once: it said `exclusive (--exclusive) with gpus 0
(--gpus 0): ... drop one of them` of an option not on the command line, and the next field only
at the next try (three tries for a job with all three). A CPU-only job given --mem says it needs
--gpus too (`drop one of them` named its gpus 0, which the user did not type). Those refusals
are the daemon's, job by job, exit 1 as each of its refusals of what a job has; --gpus 0 with
one of them on the command line is a mistake of the command line alone: exit 2, as submit's."""

from __future__ import annotations

import pytest

from conftest import Herd
from gpuherd.core.idspec import format_ids
from gpuherd.errors import InvalidValue
from gpuherd.pyapi import connect

ALL_THREE = ("--mem", "5GiB", "--only-gpus", "1", "--exclusive")


def asks(herd: Herd, job: int) -> tuple[int, int | None, bool, list[int]]:
    found = herd.job(job)
    return found["gpus_requested"], found["mem"], found["exclusive"], found["only_gpus"]


def test_gpus_0_names_every_field_the_job_keeps_and_the_edit_that_unsets_it(
    shared_daemon: Herd,
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", *ALL_THREE, "--", "true")
    before = asks(herd, job)
    refused = herd.cli("edit", str(job), "--gpus", "0", check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        f"gpuherd: error: job {job} has exclusive (--exclusive), only_gpus (--only-gpus) and "
        "mem (--mem), and a CPU-only job, gpus 0 (--gpus 0), gets no GPU: add --no-exclusive "
        "--clear only_gpus --clear mem to the edit (exclusive false, only_gpus and mem cleared)\n"
    )
    # What an edit clears is no longer named: what is left, still all at once.
    refused = herd.cli("edit", str(job), "--gpus", "0", "--clear", "mem", check=False)
    assert refused.stderr == (
        f"gpuherd: error: job {job} has exclusive (--exclusive) and only_gpus (--only-gpus), "
        "and a CPU-only job, gpus 0 (--gpus 0), gets no GPU: add --no-exclusive --clear "
        "only_gpus to the edit (exclusive false, only_gpus cleared)\n"
    )
    assert asks(herd, job) == before  # refused: nothing changed
    said = ("--gpus", "0", "--no-exclusive", "--clear", "only_gpus", "--clear", "mem")
    edited = herd.cli("edit", str(job), *said)  # the edit the first refusal named
    assert edited.stdout.startswith(f"job {job}: edited (gpus 1 -> 0, ")
    assert asks(herd, job) == (0, None, False, [])


def test_jobs_that_keep_the_same_fields_share_one_line(shared_daemon: Herd) -> None:
    herd = shared_daemon
    jobs = herd.submit_lines(["true"] * 3, "--hold", "--exclusive")
    refused = herd.cli("edit", format_ids(jobs), "--gpus", "0", check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        f"gpuherd: error: jobs {format_ids(jobs)} have exclusive (--exclusive), and a CPU-only "
        "job, gpus 0 (--gpus 0), gets no GPU: add --no-exclusive to the edit (exclusive "
        "false)\n"
    )


def test_a_cpu_only_job_given_what_needs_a_gpu_is_told_to_give_gpus(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--gpus", "0", "--", "true")
    refused = herd.cli("edit", str(job), "--mem", "2GiB", "--exclusive", check=False)
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        f"gpuherd: error: job {job} is CPU-only (gpus 0), and a CPU-only job gets no GPU: "
        "exclusive (--exclusive) and mem (--mem) need gpus (--gpus) in the same edit; host "
        "memory is ram (--ram)\n"
    )
    assert herd.cli("edit", str(job), "--mem", "2GiB", "--exclusive", "--gpus", "1").stdout
    assert asks(herd, job) == (1, 2 << 30, True, [])


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--mem", "2GiB"], "--mem with --gpus 0: a CPU-only job gets no GPU memory"),
        (["--exclusive"], "--exclusive with --gpus 0: a CPU-only job gets no GPU to itself"),
        (["--only-gpus", "1"], "--only-gpus with --gpus 0: a CPU-only job gets no GPU"),
    ],
)
def test_gpus_0_with_a_gpu_option_on_the_command_line_is_exit_2_as_for_submit(
    shared_daemon: Herd, given: list[str], said: str
) -> None:
    herd = shared_daemon
    job = herd.submit("--hold", "--", "true")
    line = herd.usage_error("edit", str(job), "--gpus", "0", *given)  # (it was exit 1)
    assert line.startswith(f"gpuherd: error: {said}; drop one of them"), line
    assert said in herd.usage_error("submit", "--gpus", "0", *given, "--", "true")
    assert asks(herd, job) == (1, None, False, [])


def test_the_python_api_is_told_the_same(shared_daemon: Herd) -> None:
    herd = shared_daemon
    job = connect(herd.home, start=False).job(herd.submit("--hold", *ALL_THREE, "--", "true"))
    with pytest.raises(InvalidValue) as refused:
        job.edit(gpus=0, exclusive=True)  # (given again: to leave out, where mem is kept)
    assert str(refused.value) == (
        f"job {job.id} has only_gpus (--only-gpus) and mem (--mem), and a CPU-only job, gpus 0 "
        "(--gpus 0), gets no GPU: add --clear only_gpus --clear mem to the edit (only_gpus and "
        "mem cleared), and leave exclusive (--exclusive) out of it"
    )
    assert job.edit(gpus=0, exclusive=False, clear=["only_gpus", "mem"]).startswith("edited")

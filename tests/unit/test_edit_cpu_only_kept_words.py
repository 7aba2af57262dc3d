"""core/edit.cpu_only_kept: which edits leaving a job CPU-only with what needs a GPU it refuses
in an edit's words (the job's own fields, and the edit that unsets them), and which it leaves
to check_spec (both sides given by the edit, as on a submission's command line)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuherd.core.edit import cpu_only_kept
from gpuherd.core.model import JobSpec

GIB = 1 << 30
CPU_ONLY = JobSpec(command="true", cwd="/", gpus=0)


def test_every_field_kept_is_named_with_the_option_that_unsets_it() -> None:
    spec = replace(CPU_ONLY, exclusive=True, only_gpus=(1,), mem=5 * GIB)
    assert cpu_only_kept(7, spec, {"gpus"}) == (
        "job 7 has exclusive (--exclusive), only_gpus (--only-gpus) and mem (--mem), and a "
        "CPU-only job, gpus 0 (--gpus 0), gets no GPU: add --no-exclusive --clear only_gpus "
        "--clear mem to the edit (exclusive false, only_gpus and mem cleared)"
    )
    assert cpu_only_kept(7, replace(CPU_ONLY, mem=GIB), {"gpus", "name"}) == (
        "job 7 has mem (--mem), and a CPU-only job, gpus 0 (--gpus 0), gets no GPU: add "
        "--clear mem to the edit (mem cleared)"
    )


def test_a_field_the_edit_gives_too_is_to_be_left_out() -> None:
    spec = replace(CPU_ONLY, exclusive=True, mem=GIB)
    assert cpu_only_kept(7, spec, {"gpus", "exclusive"}) == (
        "job 7 has mem (--mem), and a CPU-only job, gpus 0 (--gpus 0), gets no GPU: add "
        "--clear mem to the edit (mem cleared), and leave exclusive (--exclusive) out of it"
    )


def test_a_cpu_only_job_given_what_needs_a_gpu_needs_gpus_given_too() -> None:
    assert cpu_only_kept(7, replace(CPU_ONLY, only_gpus=(0,)), {"only_gpus"}) == (
        "job 7 is CPU-only (gpus 0), and a CPU-only job gets no GPU: only_gpus (--only-gpus) "
        "needs gpus (--gpus) in the same edit"
    )


@pytest.mark.parametrize(
    ("spec", "given"),
    [
        (replace(CPU_ONLY, mem=GIB), {"gpus", "mem"}),  # both given: check_spec's words
        (replace(CPU_ONLY, gpus=1, mem=GIB, exclusive=True), {"mem"}),  # a GPU job: fine
        (CPU_ONLY, {"gpus"}),  # nothing that needs a GPU
        (replace(CPU_ONLY, exclusive=False, mem=None), {"gpus", "mem", "exclusive"}),  # unset
    ],
)
def test_nothing_for_check_spec_to_say_otherwise_or_nothing_wrong(
    spec: JobSpec, given: set[str]
) -> None:
    assert cpu_only_kept(7, spec, given) is None

"""`--gpus 0,1` on `submit`, `sweep` or `edit` (GPU indices, as `daemon start --gpus` takes
them, where a count is asked) is refused naming `--only-gpus`, which chooses the GPUs a job
runs on (docs/gpus.md, "Placement rules"): the refusal said only to give a count."""

from __future__ import annotations

import pytest

from conftest import Herd


@pytest.mark.parametrize(
    ("command", "flag"), [("submit", "-g"), ("sweep", "--gpus"), ("edit", "--gpus")]
)
def test_gpu_indices_given_to_gpus_are_refused_naming_only_gpus(
    herd: Herd, command: str, flag: str
) -> None:
    said = herd.usage_error(command, "--gpus", "0,2-3", "x")
    assert said == (
        f"gpuherd: error: --gpus takes a whole number of GPUs, not '0,2-3': e.g. {flag} 2; "
        f"to choose the GPUs it runs on: --only-gpus 0,2-3 (see gpuherd {command} --help)\n"
    )


def test_a_count_per_job_of_run_is_not_told_of_only_gpus(herd: Herd) -> None:
    said = herd.usage_error("run", "--gpus-per-job", "0,1", "x")
    assert "--only-gpus" not in said  # `run` has none: its --gpus names the GPUs

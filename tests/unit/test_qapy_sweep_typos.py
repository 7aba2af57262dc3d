"""A task's sweep given a misspelt sweep option (`result_dir=`) names the option it is closest
to, as herd.sweep does: it said only that the function takes no such parameter. Refused before
anything is sent: no daemon is asked."""

from __future__ import annotations

import pytest

import gpuherd
from gpuherd.tasks import TaskArgumentError


@gpuherd.task(gpus=0)
def train(lr: float, seed: int = 0) -> float:
    return lr


@pytest.mark.parametrize(
    ("typo", "meant"),
    [("result_dir", "results_dir"), ("samplse", "samples"), ("dry_rn", "dry_run")],
)
def test_a_misspelt_sweep_option_is_named(typo: str, meant: str) -> None:
    with pytest.raises(TaskArgumentError) as refused:
        train.sweep(lr=[0.1, 0.2], **{typo: "x"})
    assert str(refused.value) == (
        f"train() takes no parameter {typo!r}; did you mean {meant}? {meant} is the sweep's "
        f"own option: train.sweep(..., {meant}=...)"
    )


def test_a_parameter_still_comes_first() -> None:
    with pytest.raises(TaskArgumentError, match=r"'seeds' \(did you mean 'seed'\?\)"):
        train.sweep(lr=[0.1], seeds=[1, 2])
    with pytest.raises(TaskArgumentError, match="'result_dir'; add it to the signature"):
        train.submit(lr=0.1, result_dir="x")  # (a submit has no sweep options)

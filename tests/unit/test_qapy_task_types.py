"""A user's `mypy --strict` over a script of tasks: `@gpuherd.task(...)` keeps the function's
types (it returned Any: "Untyped decorator makes function untyped", and no typo was caught)."""

from __future__ import annotations

from pathlib import Path

import pytest

from user_mypy import mypy_strict

SCRIPT = """
import gpuherd


@gpuherd.task(gpus=0)
def train(lr: float, bs: int = 32, run_dir: str = "") -> dict[str, float]:
    return {"acc": lr * bs}


@gpuherd.task
def square(n: int) -> int:
    return n * n


def main() -> None:
    job: gpuherd.Job = train.submit(lr=0.1)
    sweep: gpuherd.Sweep = train.sweep(lr=[0.1, 0.01], results_dir="r")
    bigger = gpuherd.task(gpus=2, retries=3)(train)
    acc: dict[str, float] = bigger(0.1, 2)
    n: int = square(3)
    print(job.result(timeout=60), sweep.wait(), acc, n, train.fn, train.options)
    train.sumbit(lr=0.1)
    square("three")
"""


def test_a_users_strict_mypy_sees_tasks_typed_as_their_functions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    errors = mypy_strict(tmp_path, monkeypatch, SCRIPT)
    assert len(errors) == 2, errors
    assert 'has no attribute "sumbit"; maybe "submit"?' in errors[0]
    assert 'Argument 1 to "__call__" of "Task" has incompatible type "str"' in errors[1]

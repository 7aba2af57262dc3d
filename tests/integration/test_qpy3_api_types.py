"""A user's `mypy --strict` takes `gpuherd.ListedJob` (a listing's handle, whose snapshot is
never None) and `herd.wait(sweep)`: the first was only `gpuherd.pyapi.ListedJob`, and wait
was typed for a list alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from user_mypy import mypy_strict

SCRIPT = """
import gpuherd


def exit_code(job: gpuherd.ListedJob) -> int:
    return int(job.snapshot["exit_code"])


def main() -> None:
    herd = gpuherd.connect()
    failed = [exit_code(job) for job in herd.jobs(state="failed")]
    sweep = herd.sweep("python train.py --lr {lr}", {"lr": [0.1, 0.01]})
    states: dict[int, str] = herd.wait(sweep, timeout=60)
    print(failed, states)
"""


def test_listed_job_and_waiting_for_a_sweep_pass_a_users_strict_mypy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert mypy_strict(tmp_path, monkeypatch, SCRIPT) == []

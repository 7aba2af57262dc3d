"""A notebook's task that submits another notebook task from inside its job (`other.submit()`
in the function): the inner one was unpickled in the job, whose `__main__` is gpuherd's
worker, so it was looked for there by name and failed (`gpuherd.worker has no 'inner'`).
It is pickled again, as it was at the first submit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from test_notebook_tasks import run

from conftest import Herd, started_once


@pytest.fixture(scope="module")
def herd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Herd]:
    with started_once(tmp_path_factory, "--fake-gpus", "2") as started:
        yield started


def test_a_notebook_task_submits_another_from_its_job(herd: Herd, tmp_path: Path) -> None:
    answer = run(
        herd,
        tmp_path,
        """
        OFFSET = 100

        @gpuherd.task(gpus=0)
        def inner(v):
            return v * 2 + OFFSET

        @gpuherd.task(gpus=0)
        def outer(v):
            return {"inner": inner.submit(v=v).result(timeout=60),
                    "sweep": inner.sweep(v=[1, 2]).wait(timeout=60)}

        print(json.dumps(outer.submit(v=4).result(timeout=90)))
        """,
    )
    assert answer == {"inner": 108, "sweep": True}

"""A daemon start beside a running job whose row in herd.db cannot be read (set aside:
engine_damaged.py) kills no actor of that job, and still kills the other leftover actors.
Before, any job set aside made it kill none: a leftover actor held its GPUs in Ray for good."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import need, wait_for

need("ray", "ray")

from test_ray_lookup import FakeActor, FakeRay, executor


def test_the_actors_of_a_job_set_aside_are_spared_and_the_other_leftovers_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeRay([1, 2, 12])  # no attempt of these runs here: all three left over
    actors = {job: FakeActor() for job in (1, 2, 12)}
    fake.answer(dict(actors))
    ex = executor(tmp_path, fake, monkeypatch)
    ex.end_leftovers("", spared={1})  # (job 12's actor is not job 1's)
    wait_for(lambda: len(fake.killed) == 2, 10, "the two leftover actors to be killed")
    assert sorted(map(id, fake.killed)) == sorted([id(actors[2]), id(actors[12])])

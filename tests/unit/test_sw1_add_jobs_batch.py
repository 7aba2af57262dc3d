"""Store.add_jobs inserts a batch in one statement per table, giving the ids itself: the ids
AUTOINCREMENT would give (never one a removed job had, never below what number_jobs_after
set), each its job's position; the dependencies and submit events of each job with it; a big
batch's shared values bound once (store_batch.py), stored as one job at a time stores them."""

from __future__ import annotations

from pathlib import Path

from gpuherd.core.model import JobSpec
from gpuherd.store import NewJob, Store
from gpuherd.store_batch import BIG_BATCH


def spec(command: str = "true", **kw: object) -> JobSpec:
    return JobSpec(command=command, cwd="/tmp", env={"A": "1"}, **kw)  # type: ignore[arg-type]


def positions(store: Store, ids: list[int]) -> list[float]:
    return [
        store._db.execute("SELECT position FROM jobs WHERE id = ?", (i,)).fetchone()[0] for i in ids
    ]


def test_ids_never_reuse_a_removed_jobs_and_follow_number_jobs_after(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    first = store.add_jobs([NewJob(spec()) for _ in range(3)], now=1.0)
    assert first == [1, 2, 3]
    store.delete_jobs([2, 3])  # the newest removed: their ids are not given again
    assert store.add_jobs([NewJob(spec())], now=2.0) == [4]
    assert store.number_jobs_after(40)  # a job folder job_40 on disk
    batch = store.add_jobs([NewJob(spec()), NewJob(spec(), held=True)], now=3.0)
    assert batch == [41, 42]
    assert positions(store, [1, 4, *batch]) == [1, 4, 41, 42]
    store.close()


def test_a_batch_stores_each_jobs_state_dependencies_and_submit_event(tmp_path: Path) -> None:
    store = Store(tmp_path / "herd.db")
    [dep] = store.add_jobs([NewJob(spec("dep"))], now=1.0)
    jobs = [
        NewJob(spec("waits", after=(dep,)), priority=3),
        NewJob(spec("held"), held=True),
        NewJob(spec("later", after_fail=(dep,)), release_at=99.0),
    ]
    ids = store.add_jobs(jobs, now=5.0)
    stored = [store.get_job(i) for i in ids]
    assert [j.spec.command for j in stored if j] == ["waits", "held", "later"]
    assert [j.state.value for j in stored if j] == ["queued", "held", "held"]
    assert [j.spec.after for j in stored if j] == [(dep,), (), ()]
    assert [j.spec.after_fail for j in stored if j] == [(), (), (dep,)]
    assert [j.priority for j in stored if j] == [3, 0, 0]
    deps = store._db.execute("SELECT job, dep, kind FROM deps ORDER BY job").fetchall()
    assert deps == [(ids[0], dep, "after"), (ids[2], dep, "after_fail")]
    events = [(e.job_id, e.event, e.to_state, e.at) for i in ids for e in store.events(i)]
    assert events == [
        (ids[0], "submit", "queued", 5.0),
        (ids[1], "submit", "held", 5.0),
        (ids[2], "submit", "held", 5.0),
    ]
    store.close()


def test_a_big_batch_stores_the_rows_a_small_one_stores(tmp_path: Path) -> None:
    """A big batch binds the values its jobs share once (store_batch.py): what it stores is
    what a batch of one job at a time stores, the shared columns and the differing ones."""
    jobs = [
        NewJob(
            spec(
                f"train {n}",
                name=f"sweep/x={n}",
                folder=f"/r/x={n}",
                sweep="sweep",
                timeout=60.0 if n % 2 else None,  # differs: bound row by row
                gpus=1,
                retries=2,
            ),
            priority=n % 3,
            held=n % 5 == 0,
        )
        for n in range(BIG_BATCH + 7)
    ]
    big, small = Store(tmp_path / "big.db"), Store(tmp_path / "small.db")
    assert big.add_jobs(jobs, now=4.0) == small.add_jobs(jobs[:1], now=4.0) + [
        i for n in range(1, len(jobs)) for i in small.add_jobs(jobs[n : n + 1], now=4.0)
    ]
    stored = [s._db.execute("SELECT * FROM jobs ORDER BY id").fetchall() for s in (big, small)]
    assert stored[0] == stored[1] and len(stored[0]) == len(jobs)
    read = big.get_jobs([1, 2, len(jobs)])
    assert [read[i].spec for i in (1, 2, len(jobs))] == [jobs[0].spec, jobs[1].spec, jobs[-1].spec]
    big.close()
    small.close()

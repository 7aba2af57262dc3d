"""SLOTS of `gpuherd gpus` (and the dashboard's) tells jobs with --mem sharing a GPU by
memory (`3 sharing`) from more jobs than its slots, its slots lowered below the jobs running
there (`3/1 over`), which it said `3 sharing` too (the daemon end to end:
tests/integration/test_gpus_slots_lowered_over.py)."""

from __future__ import annotations

from gpuherd.core.gpu_slots import slot_use


def test_slot_use_tells_sharing_by_memory_from_over_the_slots() -> None:
    def gpu(slots: int, runs: int, mem_runs: int, **more: object) -> dict[str, object]:
        jobs = list(range(1, runs + 1))
        each = [{"job": job} for job in jobs]
        return {"slots": slots, "jobs": jobs, "runs": each, "mem_runs": mem_runs, **more}

    assert slot_use(gpu(1, 3, 3)).text() == "3 sharing"
    assert slot_use(gpu(1, 3, 0)).text() == "3/1 over"
    assert slot_use(gpu(1, 2, 1)).text() == "2/1 over"  # a --mem job never joins a plain one
    # Two or more slots cap every job, --mem ones too: more than that is over.
    assert slot_use(gpu(2, 3, 3, max_jobs=2)).text() == "3/2 over"
    assert slot_use(gpu(2, 2, 0, max_jobs=2)).text() == "2/2"
    assert slot_use(gpu(1, 1, 0)).text() == "1/1"
    use = slot_use(gpu(1, 2, 0))
    assert use.over_note() == ("2 jobs on 1 slot, so nothing new starts there until they all end")
    assert slot_use(gpu(2, 5, 0, max_jobs=2)).over_note().endswith("until 4 of them end")
    assert slot_use(gpu(4, 4, 0, max_jobs=3)).over_note().endswith("until 2 of them end")
    assert slot_use(gpu(2, 3, 0, max_jobs=1)).over_note().endswith("until they all end")
    # One job's two runs (a held run beside its next attempt) are said as runs.
    two_runs = {"slots": 1, "jobs": [7], "runs": [{"job": 7}, {"job": 7}], "mem_runs": 0}
    assert slot_use(two_runs).over_note().startswith("2 runs of 1 job on 1 slot, so")
    # An older daemon sends no `mem_runs`: beyond one slot, as it said, sharing.
    older = {"slots": 1, "jobs": [7, 8], "runs": [{"job": 7}, {"job": 8}]}
    assert slot_use(older).text() == "2 sharing"

"""What `sweep status` reads of a big sweep: each point's params.json only for the rows it
answers (and the rows with metrics, which the metric columns compare with their parameters),
not all of them for `--limit 1`; and no waiting job whole while none waits with other job
options than the sweep's latest submission gave (sweep_waiting.py: a grouped query). 40,000
queued points took 2 s for `--limit 1`, mostly those reads. A sweep made by a real daemon,
its table then built in this process on its herd.db (the daemon stopped), reads counted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, NoReturn

import pytest

from conftest import Herd, one_gpu_engine, serving
from gpuherd import sweep_table
from gpuherd.executors.local import LocalExecutor
from gpuherd.store import Store
from gpuherd.sweep_checks import waiting_with_other_options_now
from gpuherd.sweeps import Sweeps

POINTS = 30


def held_sweep(herd: Herd, work: Path) -> Path:
    """Sweep `s` of POINTS held points (x=0..29), two of them with a metrics.json (one that
    echoes the point's x); the daemon stopped. Its results folder."""
    work.mkdir()
    herd.start("--fake-gpus", "2")
    xs = [str(x) for x in range(POINTS)]
    herd.cli("sweep", "true {x}", "-p", "x", *xs, "--name", "s", "--hold", cwd=work)
    herd.cli("daemon", "stop")
    results = work / "results" / "s"
    for x in (3, 7):
        (results / f"x={x}" / "metrics.json").write_text(json.dumps({"acc": x / 10, "x": x}))
    return results


def test_a_limited_table_reads_the_params_of_the_rows_it_shows(
    herd: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = held_sweep(herd, tmp_path / "work")
    store = Store(herd.home / "herd.db")
    read: list[str] = []
    recorded = sweep_table._recorded

    def counted(run_dir: str) -> dict[str, Any]:
        read.append(Path(run_dir).name)
        return recorded(run_dir)

    monkeypatch.setattr(sweep_table, "_recorded", counted)
    top = sweep_table.table(store, "s", limit=1)
    # The row shown, and the two with metrics (is their x a metric or the parameter again?).
    assert sorted(read) == ["x=0", "x=3", "x=7"]  # was: all 30
    read.clear()
    whole = sweep_table.table(store, "s")
    assert len(read) == POINTS
    assert top["rows"] == whole["rows"][:1]
    assert top["rows"][0]["params"] == {"x": 0} and top["rows"][0]["other_command"] is None
    assert top["counts"] == whole["counts"] == {"held": POINTS}
    assert top["metric_keys"] == whole["metric_keys"] == ["acc"]  # (x echoes the parameter)
    assert top["matched"] == POINTS and "_params_unread" not in str(whole)
    # A sort may go by a parameter: every row's params read first.
    read.clear()
    by_x = sweep_table.table(store, "s", sort="-x", limit=2)
    assert [row["folder"] for row in by_x["rows"]] == ["x=29", "x=28"]
    assert len(read) == POINTS
    assert (results / "x=3" / "metrics.json").exists()  # (nothing changed in the folders)


def test_sweep_status_reads_no_waiting_job_whole_unless_one_has_other_options(
    herd: Herd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held_sweep(herd, tmp_path / "work")
    store = Store(herd.home / "herd.db")
    whole = store.sweep_jobs

    def refused(name: str) -> NoReturn:
        raise AssertionError(f"sweep {name}'s {POINTS} jobs read whole")

    async def main() -> None:
        engine = one_gpu_engine(herd.home, store, LocalExecutor())
        async with serving(engine, herd.home) as service:
            sweeps = Sweeps(service)
            monkeypatch.setattr(store, "sweep_jobs", refused)
            assert sweeps.table("s", limit=1)["warnings"] == []  # was: every job read whole
            # One waiting point asks for 2 GPUs now: the warning, as sweep_checks words it.
            with store.transaction():
                store._db.execute("UPDATE jobs SET gpus = 2 WHERE id = (SELECT MAX(id) FROM jobs)")
            monkeypatch.setattr(store, "sweep_jobs", whole)
            warnings = sweeps.table("s", limit=1)["warnings"]
            row = store.get_sweep("s")
            assert row is not None
            submission = sweep_table.submission_of(row)
            assert warnings == waiting_with_other_options_now(store, "s", submission)
            assert len(warnings) == 1 and warnings[0].startswith("1 point waiting to run"), warnings
            assert "--gpus 2 -> 1" in warnings[0], warnings

    asyncio.run(main())

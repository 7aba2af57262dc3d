"""Every column of a `jobs` row holding a value of another kind than gpuherd writes there
(SQLite keeps text in a whole-number column as it is: a hand edit) makes the row damaged, a
StoreError naming the job and the column, as a row that does not parse is: such a value went
through to placement, whose every pass failed (store_row_types.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuherd.core.model import JobSpec
from gpuherd.errors import StoreError
from gpuherd.store import NewJob, Store
from gpuherd.store_row_types import KINDS, NUMBER, TEXT, WHOLE
from gpuherd.store_rows import JOB_COLUMNS

WRONG: dict[str, tuple[tuple[object, str], ...]] = {
    # (a value of another kind, as said in the line)
    WHOLE: (("high", "'high'"), (1.5, "1.5"), (b"\x01", "b'\\x01'")),
    NUMBER: (("soon", "'soon'"), (b"\x01", "b'\\x01'")),
    TEXT: ((b"echo", "b'echo'"),),
}


@pytest.fixture
def stored(tmp_path: Path) -> Iterator[tuple[Store, int, sqlite3.Connection]]:
    store = Store(tmp_path / "herd.db")
    spec = JobSpec(command="true", cwd="/tmp", env={}, name="n", mem=1, timeout=5.0)
    (job,) = store.add_jobs([NewJob(spec)], now=1.0)
    other = sqlite3.connect(tmp_path / "herd.db", isolation_level=None)  # as `sqlite3` would
    yield store, job, other
    other.close()
    store.close()


def said(store: Store, job: int) -> str:
    with pytest.raises(StoreError) as caught:
        store.get_job(job)
    return str(caught.value)


def test_a_value_of_another_kind_in_any_column_is_a_damaged_row(
    stored: tuple[Store, int, sqlite3.Connection],
) -> None:
    store, job, other = stored
    columns = [name.strip() for name in JOB_COLUMNS.split(",")]
    assert set(columns) == set(KINDS)  # (every column read has its kind)
    # (NULL where the schema refuses it cannot be written by hand either)
    not_null = {row[1] for row in other.execute("PRAGMA table_info(jobs)") if row[3]}
    for column in columns[1:]:  # (the id: SQLite takes whole numbers alone)
        kind, types = KINDS[column]
        (kept,) = other.execute(f"SELECT {column} FROM jobs WHERE id = ?", (job,)).fetchone()
        wrong = WRONG[kind] + (((None, "NULL"),) if type(None) not in types else ())
        for value, shown in wrong:
            if value is None and column in not_null:
                continue
            other.execute(f"UPDATE jobs SET {column} = ? WHERE id = ?", (value, job))
            line = said(store, job)
            assert line.startswith(
                f"job {job}'s row in herd.db holds a value gpuherd never writes"
                f" ({column}: {shown}, not {kind}): herd.db was changed by another program;"
            ), line
        other.execute(f"UPDATE jobs SET {column} = ? WHERE id = ?", (kept, job))
        assert store.get_job(job) is not None  # set back: reads again


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("after", '["a"]', """after: '["a"]', not a list of whole numbers"""),
        ("after_any", "[1.5]", "after_any: '[1.5]', not a list of whole numbers"),
        ("after_fail", "[null]", "after_fail: '[null]', not a list of whole numbers"),
        ("only_gpus", '{"0": 1}', """only_gpus: '{"0": 1}', not a list of whole numbers"""),
        ("assigned", "[true]", "assigned: '[true]', not a list of whole numbers"),
        ("assigned", "7", "assigned: '7', not a list of whole numbers"),
        ("env_overrides", "[]", "env_overrides: '[]', not an object of texts"),
        ("env_overrides", '{"A": 1}', """env_overrides: '{"A": 1}', not an object of texts"""),
    ],
)
def test_json_text_holding_another_kind_is_a_damaged_row(
    stored: tuple[Store, int, sqlite3.Connection], column: str, value: str, why: str
) -> None:
    store, job, other = stored
    other.execute(f"UPDATE jobs SET {column} = ? WHERE id = ?", (value, job))
    assert f"never writes ({why}): herd.db was changed" in said(store, job)


def test_a_stop_without_its_time_is_a_damaged_row(
    stored: tuple[Store, int, sqlite3.Connection],
) -> None:
    store, job, other = stored
    other.execute("UPDATE jobs SET stop_reason = 'killed', stop_at = NULL WHERE id = ?", (job,))
    assert f"(stop_at: NULL, not {NUMBER} (stop_reason is 'killed'))" in said(store, job)
    other.execute("UPDATE jobs SET stop_at = 3.0 WHERE id = ?", (job,))
    found = store.get_job(job)
    assert found is not None and found.stop is not None and found.stop.at == 3.0

"""A new database gets its schema in one go (store_schema_fresh.py): the same tables, columns,
defaults, keys and indexes as one brought up by every migration, as an older gpuherd's is."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from gpuherd.store import Store
from gpuherd.store_schema import MIGRATIONS, SCHEMA_VERSION
from gpuherd.store_schema_fresh import FRESH_VERSION


def _migrated(path: Path, upto: int) -> sqlite3.Connection:
    """A database brought from nothing to `upto` by the migrations alone, as releases did."""
    db = sqlite3.connect(path, isolation_level=None)
    for step in MIGRATIONS[:upto]:
        for statement in step.split(";"):
            if statement.strip():
                db.execute(statement)
    db.execute(f"PRAGMA user_version = {upto}")
    return db


def _schema(db: sqlite3.Connection) -> dict[str, Any]:
    """Everything SQLite knows of each table and index, layout of the SQL text aside, and
    each table's rows: a migration that inserts some (a setting's default in meta, say) must
    be followed by the fresh schema too, once FRESH_VERSION is brought past it."""
    shape: dict[str, Any] = {}
    for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master"):
        text = re.sub(r"\s*([(),])\s*", r"\1", " ".join((sql or "").replace('"', "").split()))
        if kind == "table":
            info = [
                db.execute(f"PRAGMA {pragma}({name})").fetchall()
                for pragma in ("table_xinfo", "foreign_key_list", "index_list")
            ]
            info.append(sorted(db.execute(f"SELECT * FROM {name}").fetchall(), key=repr))
        else:
            info = [db.execute(f"PRAGMA index_xinfo({name})").fetchall()]
        shape[f"{kind} {name}"] = (text, info)
    return shape


def test_a_new_database_has_the_schema_the_migrations_make(tmp_path: Path) -> None:
    store = Store(tmp_path / "new.db", scratch=True)
    store.close()
    fresh = sqlite3.connect(tmp_path / "new.db")
    migrated = _migrated(tmp_path / "old.db", SCHEMA_VERSION)
    assert fresh.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert _schema(fresh) == _schema(migrated)


def test_the_fresh_schema_is_its_version_of_the_migrations(tmp_path: Path) -> None:
    """What store_schema_fresh.py holds is FRESH_VERSION's schema, whatever came after it
    (the migrations that follow apply to it as to an older database)."""
    from gpuherd.store_schema_fresh import FRESH_SCHEMA

    fresh = sqlite3.connect(tmp_path / "fresh.db", isolation_level=None)
    for statement in FRESH_SCHEMA.split(";"):
        if statement.strip():
            fresh.execute(statement)
    migrated = _migrated(tmp_path / "old.db", FRESH_VERSION)
    made = "\n".join(
        f"{sql};" for (sql,) in migrated.execute("SELECT sql FROM sqlite_master WHERE sql")
    )
    assert _schema(fresh) == _schema(migrated), f"the migrations make:\n{made}"


def test_an_older_database_is_migrated_as_before(tmp_path: Path) -> None:
    """A database at a version below FRESH_VERSION takes the migrations, not the fresh schema."""
    older = _migrated(tmp_path / "herd.db", 2)
    older.close()
    Store(tmp_path / "herd.db").close()
    upgraded = sqlite3.connect(tmp_path / "herd.db")
    assert upgraded.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert _schema(upgraded) == _schema(_migrated(tmp_path / "all.db", SCHEMA_VERSION))

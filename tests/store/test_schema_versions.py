"""Schema migrations are versioned, on both backends: a start migrates up to the
version this code knows (once, however often it starts), a database migrated by
a newer Troupe is refused with the typed store fault, and a SQLite database from
before versions (SSH environments in their own table) is carried over."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import psycopg
import pytest

from actors.store import db, postgres
from actors.store.health import StoreCannotOpen
from actors.store.rows import EnvironmentRow
from actors.store.store import open_store


def _version(tmp_path: Path, store_setting: str) -> int:
    if store_setting:
        with psycopg.connect(store_setting) as connection:
            row = connection.execute("SELECT version FROM troupe.schema_version").fetchall()
    else:
        with contextlib.closing(sqlite3.connect(tmp_path / "troupe.db")) as connection:
            row = connection.execute("SELECT version FROM schema_version").fetchall()
    assert len(row) == 1, row
    return int(row[0][0])


def _set_version(tmp_path: Path, store_setting: str, version: int) -> None:
    if store_setting:
        with psycopg.connect(store_setting) as connection:
            connection.execute("UPDATE troupe.schema_version SET version=%s", (version,))
    else:
        with contextlib.closing(sqlite3.connect(tmp_path / "troupe.db")) as connection:
            connection.execute("UPDATE schema_version SET version=?", (version,))
            connection.commit()


def _newest(store_setting: str) -> int:
    return len(postgres.MIGRATIONS) if store_setting else len(db.MIGRATIONS)


async def test_a_start_migrates_once_to_the_newest_version(
    tmp_path: Path, store_setting: str
) -> None:
    for _ in range(2):
        async with open_store(tmp_path, store_setting):
            pass
        assert _version(tmp_path, store_setting) == _newest(store_setting)


async def test_a_newer_schema_is_refused_with_the_typed_fault(
    tmp_path: Path, store_setting: str
) -> None:
    async with open_store(tmp_path, store_setting):
        pass
    _set_version(tmp_path, store_setting, _newest(store_setting) + 1)
    with pytest.raises(StoreCannotOpen, match="newer Troupe"):
        async with open_store(tmp_path, store_setting):
            pass


async def test_a_sqlite_store_from_before_versions_is_carried_over(tmp_path: Path) -> None:
    with contextlib.closing(sqlite3.connect(tmp_path / "troupe.db")) as old:
        old.executescript(db.SCHEMA)  # the tables as they were, no schema_version
        old.execute("INSERT INTO ssh_environments VALUES ('b', x'7b7d')")
        old.execute("INSERT INTO ssh_environments VALUES ('a', x'5b5d')")
        old.commit()
    async with open_store(tmp_path) as store:
        assert await store.environments() == [
            EnvironmentRow("b", "ssh", b"{}"),
            EnvironmentRow("a", "ssh", b"[]"),
        ]
    assert _version(tmp_path, "") == len(db.MIGRATIONS)
    with contextlib.closing(sqlite3.connect(tmp_path / "troupe.db")) as migrated:
        tables = {row[0] for row in migrated.execute("SELECT name FROM sqlite_master")}
    assert "ssh_environments" not in tables and "environments" in tables

"""A held SQLite read connection (``sqlite_dialect.ReadConnections``) reads the catalog file at the table's path,
as a connection per read does: a table dropped and created again at the same path is the new table for an
open handle too (the held connection kept reading the deleted file's inode: the old table's rows, schema and
count, or an error for its removed data files, and never the handle's own later commits)."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest

import fieldshift as fs
from fieldshift.errors import TableError
from fieldshift.table.catalog.sqlite_dialect import ReadConnections, SqliteDialect

OLD = pa.schema([("v", pa.string())])
NEW = pa.schema([("v", pa.string()), ("n", pa.int64())])


def _dialect(t: fs.Table) -> SqliteDialect:
    dialect = t.catalog.dialect
    assert isinstance(dialect, SqliteDialect)
    return dialect


def test_a_table_recreated_at_the_same_path_reads_alike_with_held_and_per_read_connections(tmp_path: Path) -> None:
    root = tmp_path / "t"
    fs.Table.create(root, OLD).append(pa.table({"v": ["old"]}))
    held, per_read = fs.Table.open(root), fs.Table.open(root)
    _dialect(per_read).hold_reads = False
    for t in (held, per_read):
        assert t.to_arrow().column("v").to_pylist() == ["old"]  # the held handle now holds a connection
    shutil.rmtree(root)
    fs.Table.create(root, NEW).append(pa.table({"v": ["new1", "new2"], "n": [1, 2]}))
    expected = fs.Table.open(root).to_arrow()
    for t in (per_read, held):
        assert t.scan().count() == 2
        assert t.schema.to_arrow().names == ["v", "n"]
        assert t.to_arrow().equals(expected)
    held.append(pa.table({"v": ["mine"], "n": [3]}))  # commits go to the file at the path
    assert held.to_arrow().column("v").to_pylist() == ["new1", "new2", "mine"]  # ... and its reads see them
    assert per_read.to_arrow().equals(held.to_arrow())


def test_a_read_inside_a_read_after_close_and_a_replaced_file_opens_the_new_file(tmp_path: Path) -> None:
    """``close()`` during a read leaves that read's connection open until it ends (out of the held list); a nested
    read after the file at the path was replaced opens the new file and leaves the outer read's alone."""
    path = tmp_path / "c.db"
    for name, value in ((path, 1), (tmp_path / "other.db", 2)):
        raw = sqlite3.connect(name)
        raw.execute("CREATE TABLE t (x)")
        raw.execute("INSERT INTO t VALUES (?)", (value,))
        raw.commit()
        raw.close()
    reads = ReadConnections(path)
    with reads.use() as outer:
        assert outer.execute("SELECT x FROM t").fetchall() == [(1,)]
        reads.close()  # the outer read's connection: closed when it ends
        os.replace(tmp_path / "other.db", path)
        with reads.use() as inner:
            assert inner.execute("SELECT x FROM t").fetchall() == [(2,)]
        assert outer.execute("SELECT x FROM t").fetchall() == [(1,)]  # still its own file, still open
    assert reads.get().execute("SELECT x FROM t").fetchall() == [(2,)]
    reads.close()
    assert reads.count == 0


def test_a_deleted_table_under_an_open_handle_is_a_table_error_and_no_empty_catalog_appears(tmp_path: Path) -> None:
    """Held or per read, a handle whose table directory (or only its catalog file) was deleted says so, and never
    makes an empty SQLite file at the catalog's path (``sqlite3.connect`` creates a missing file)."""
    for gone in ("directory", "catalog file"):
        root = tmp_path / gone.replace(" ", "_")
        fs.Table.create(root, OLD).append(pa.table({"v": ["x"]}))
        held, per_read = fs.Table.open(root), fs.Table.open(root)
        _dialect(per_read).hold_reads = False
        for t in (held, per_read):
            assert t.scan().count() == 1
        catalog = _dialect(held).path
        if gone == "directory":
            shutil.rmtree(root)
        else:
            for p in catalog.parent.glob(catalog.name + "*"):
                os.remove(p)
        for t in (held, per_read):
            with pytest.raises(TableError, match="is gone"):
                t.scan().count()
            with pytest.raises(TableError, match="is gone"):
                t.append(pa.table({"v": ["y"]}))
        assert not catalog.exists()

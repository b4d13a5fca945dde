"""The catalog rows of data files (``fs_data_file``, one per file with its begin/end snapshots) and their
column statistics (``fs_file_column_stats``).

Planning a filtered scan of a table with thousands of files reads the file list (``live_files``, with a
keyed table's deletion vectors in the same statement), prunes partitions, and only then loads the
statistics of the files left (``file_stats``), or one column's bounds of every file at once (``column_bounds``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fieldshift.errors import CommitConflictError
from fieldshift.gc_pause import paused_gc
from fieldshift.table.catalog.dialect import Connection
from fieldshift.table.catalog.specs import decode_partition, decode_partitions, encode_partition
from fieldshift.table.catalog.sql import dump_value, load_value
from fieldshift.table.records import DataFile

__all__ = ["Stats", "all_data_files", "column_bounds", "data_files", "data_paths", "end_all_files", "end_files",
           "file_stats", "files_added", "insert_files", "live_files", "live_schema_ids", "publish_file_rows",
           "remove_unreferenced", "schema_counts", "snapshot_schema_counts"]

_CHUNK = 500  # ids per IN (...) list, well under SQLite's parameter limit
_COLUMNS = ("f.file_id, f.path, f.schema_id, f.record_count, f.file_size, f.content, "
            "COALESCE(f.sequence, f.begin_snapshot), f.bucket, f.spec_id, f.partition_values")
_LIVE = "f.table_id = ? AND f.begin_snapshot <= ? AND (f.end_snapshot IS NULL OR f.end_snapshot > ?)"

Stats = dict[int, tuple[int, int, Any, Any]]
"""field id -> (value count, null count, min, max) of one file."""


# -- writes ---------------------------------------------------------------------------------------
def insert_files(conn: Connection, table_id: int, snapshot_id: int, files: Sequence[DataFile]) -> None:
    """The rows of files added in ``snapshot_id``: the file and its column statistics."""
    for f in files:
        file_id = conn.insert_id(
            "INSERT INTO fs_data_file (table_id, path, schema_id, record_count, file_size, "
            "begin_snapshot, content, sequence, bucket, spec_id, partition_values) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (table_id, f.path, f.schema_id, f.record_count, f.file_size, snapshot_id, f.content, f.sequence,
             f.bucket, f.spec_id, encode_partition(f.partition)), "file_id")
        conn.executemany(
            "INSERT INTO fs_file_column_stats VALUES (?, ?, ?, ?, ?, ?)",
            [(file_id, cid, vc, nc, dump_value(lo), dump_value(hi)) for cid, (vc, nc, lo, hi) in f.stats.items()])


def end_files(conn: Connection, table_id: int, file_ids: Sequence[int], snapshot_id: int) -> None:
    """End ``file_ids`` in ``snapshot_id``; a file another commit already ended is a conflict."""
    for fid in file_ids:
        cur = conn.execute("UPDATE fs_data_file SET end_snapshot = ? WHERE table_id = ? AND file_id = ? "
                           "AND end_snapshot IS NULL", (snapshot_id, table_id, fid))
        if cur.rowcount != 1:
            raise CommitConflictError(f"data file {fid} was removed by a concurrent commit (a compaction or "
                                      "an overwrite); reload the table and retry")


def end_all_files(conn: Connection, table_id: int, snapshot_id: int) -> None:
    """End every live file in ``snapshot_id`` (an overwrite)."""
    conn.execute("UPDATE fs_data_file SET end_snapshot = ? WHERE table_id = ? AND end_snapshot IS NULL",
                 (snapshot_id, table_id))


def remove_unreferenced(conn: Connection, table_id: int) -> list[tuple[int, str]]:
    """Delete the rows (and statistics) of ended files no kept snapshot references; their (id, path)."""
    gone = [(int(r[0]), r[1]) for r in conn.execute(
        "SELECT file_id, path FROM fs_data_file f WHERE table_id = ? AND end_snapshot IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM fs_snapshot s WHERE s.table_id = f.table_id "
        "AND s.snapshot_id >= f.begin_snapshot AND s.snapshot_id < f.end_snapshot)", (table_id,)).fetchall()]
    conn.executemany("DELETE FROM fs_file_column_stats WHERE file_id = ?", [(fid,) for fid, _ in gone])
    conn.executemany("DELETE FROM fs_data_file WHERE file_id = ?", [(fid,) for fid, _ in gone])
    return gone


# -- reads ----------------------------------------------------------------------------------------
def live_files(conn: Connection, table_id: int, snapshot_id: int, with_vectors: bool
               ) -> tuple[list[DataFile], dict[int, tuple[int, str]]]:
    """The files live at ``snapshot_id`` (by file id, no statistics) and, ``with_vectors``, file id ->
    (cardinality, encoded positions) of the deletion vector each has at the snapshot: one statement."""
    order = " ORDER BY f.file_id"
    if with_vectors:
        rows = conn.execute(
            f"SELECT {_COLUMNS}, v.cardinality, v.positions FROM fs_data_file f LEFT JOIN fs_deletion_vector v "
            "ON v.table_id = f.table_id AND v.file_id = f.file_id AND v.begin_snapshot >= f.begin_snapshot "
            f"AND v.begin_snapshot <= ? AND (v.end_snapshot IS NULL OR v.end_snapshot > ?) WHERE {_LIVE}{order}",
            (snapshot_id, snapshot_id, table_id, snapshot_id, snapshot_id)).fetchall()
    else:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM fs_data_file f WHERE {_LIVE}{order}",
                            (table_id, snapshot_id, snapshot_id)).fetchall()
    with paused_gc():  # 100,000 files are 100,000 objects, none in a cycle (gc_pause)
        partitions = decode_partitions([r[9] for r in rows])
        files = [DataFile(r[1], r[2], r[3], r[4], {}, r[0], r[5], r[6], r[7], r[8], p)
                 for r, p in zip(rows, partitions, strict=True)]
    vectors = {int(r[0]): (int(r[10]), r[11]) for r in rows if r[10] is not None} if with_vectors else {}
    return files, vectors


def data_files(conn: Connection, table_id: int, snapshot_id: int, with_stats: bool) -> list[DataFile]:
    """The files live at ``snapshot_id``, by file id; ``with_stats``: with their column statistics."""
    rows = conn.execute(f"SELECT {_COLUMNS} FROM fs_data_file f WHERE {_LIVE} ORDER BY f.file_id",
                        (table_id, snapshot_id, snapshot_id)).fetchall()
    stats: dict[int, Stats] = {}
    if with_stats and rows:
        for fid, cid, vc, nc, lo, hi in conn.execute(
                "SELECT s.file_id, column_id, value_count, null_count, min_value, max_value "
                "FROM fs_file_column_stats s JOIN fs_data_file f ON f.file_id = s.file_id "
                "WHERE f.table_id = ?", (table_id,)):
            stats.setdefault(fid, {})[cid] = (vc, nc, load_value(lo), load_value(hi))
    with paused_gc():
        return [DataFile(r[1], r[2], r[3], r[4], stats.get(r[0], {}), r[0], r[5], r[6], r[7], r[8],
                         decode_partition(r[9])) for r in rows]


def file_stats(conn: Connection, file_ids: Sequence[int]) -> dict[int, Stats]:
    """file id -> its statistics, for the given files only."""
    stats: dict[int, Stats] = {}
    ids = list(file_ids)
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        for fid, cid, vc, nc, lo, hi in conn.execute(
                "SELECT file_id, column_id, value_count, null_count, min_value, max_value FROM "
                f"fs_file_column_stats WHERE file_id IN ({', '.join('?' * len(chunk))})", chunk):
            stats.setdefault(fid, {})[cid] = (vc, nc, load_value(lo), load_value(hi))
    return stats


def column_bounds(conn: Connection, table_id: int, snapshot_id: int, field_id: int) -> list[Any]:
    """(file id, value count, null count, min text, max text) of one column of every file live at the
    snapshot: ``prune_vector`` parses them as arrays."""
    return conn.execute(
        "SELECT s.file_id, s.value_count, s.null_count, s.min_value, s.max_value FROM fs_data_file f "
        "JOIN fs_file_column_stats s ON s.file_id = f.file_id AND s.column_id = ? WHERE " + _LIVE,
        (field_id, table_id, snapshot_id, snapshot_id)).fetchall()


def all_data_files(conn: Connection, table_id: int) -> list[tuple[str, int]]:
    """(path, schema id) of every data file any snapshot references (delete files hold only key columns)."""
    return [(r[0], int(r[1])) for r in conn.execute(
        "SELECT path, schema_id FROM fs_data_file WHERE table_id = ? AND content = 'data' ORDER BY file_id",
        (table_id,))]


def data_paths(conn: Connection, table_id: int) -> set[str]:
    """Every data and delete file any kept snapshot references."""
    return {r[0] for r in conn.execute("SELECT path FROM fs_data_file WHERE table_id = ?", (table_id,))}


def files_added(conn: Connection, table_id: int, first: int, last: int) -> list[tuple[int, DataFile]]:
    """(snapshot id, file) of every data file (not delete file) snapshots ``first..last`` added, in order."""
    rows = conn.execute(
        "SELECT begin_snapshot, file_id, path, schema_id, record_count, file_size, content, "
        "COALESCE(sequence, begin_snapshot), bucket, spec_id, partition_values FROM fs_data_file "
        "WHERE table_id = ? AND begin_snapshot BETWEEN ? AND ? AND content = 'data' "
        "ORDER BY begin_snapshot, file_id", (table_id, first, last)).fetchall()
    return [(int(r[0]), DataFile(r[2], int(r[3]), int(r[4]), int(r[5]), {}, int(r[1]), r[6], r[7], r[8], r[9],
                                 decode_partition(r[10]))) for r in rows]


def publish_file_rows(conn: Connection, table_id: int) -> list[Any]:
    """(file id, path, schema id, record count, size, begin, end, spec id, partition values JSON, content,
    bucket) of every file any kept snapshot references, by id: what publishing to Iceberg reads."""
    return conn.execute(
        "SELECT file_id, path, schema_id, record_count, file_size, begin_snapshot, end_snapshot, spec_id, "
        "partition_values, content, bucket FROM fs_data_file WHERE table_id = ? ORDER BY file_id",
        (table_id,)).fetchall()


def live_schema_ids(conn: Connection, table_id: int) -> set[int]:
    """The schema ids of the data files live at the head."""
    return {int(r[0]) for r in conn.execute(
        "SELECT DISTINCT schema_id FROM fs_data_file WHERE table_id = ? AND end_snapshot IS NULL AND "
        "content = 'data'", (table_id,))}


def schema_counts(conn: Connection, table_id: int) -> list[tuple[int, int]]:
    """(schema id, files) of every file any kept snapshot references."""
    return [(int(sid), int(n)) for sid, n in conn.execute(
        "SELECT schema_id, COUNT(*) FROM fs_data_file WHERE table_id = ? GROUP BY schema_id", (table_id,))]


def snapshot_schema_counts(conn: Connection, table_id: int) -> list[tuple[int, int, int]]:
    """(file schema id, snapshot schema id, files) over every kept snapshot: what time travel reads as what."""
    return [(int(f), int(s), int(n)) for f, s, n in conn.execute(
        "SELECT f.schema_id, s.schema_id, COUNT(DISTINCT f.file_id) FROM fs_data_file f "
        "JOIN fs_snapshot s ON s.table_id = f.table_id AND s.snapshot_id >= f.begin_snapshot "
        "AND (f.end_snapshot IS NULL OR s.snapshot_id < f.end_snapshot) WHERE f.table_id = ? "
        "GROUP BY f.schema_id, s.schema_id", (table_id,))]

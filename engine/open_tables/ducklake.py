"""A DuckLake table (specification 1.0) as a read source: its catalog's rows turned into the facts a scan
needs (``source.py``), read-only.

What is read: snapshots and the table's schema versions (``ducklake_schema_versions``); columns with
their ids, defaults and nesting; the data files live at a snapshot with their column statistics,
partition values and name mappings (files added without field ids); Parquet delete files (also DuckDB's
partial ones, whose rows record the deleting snapshot) and deletion vectors; inlined inserts and deletes.
Files merged from several snapshots (``ducklake_merge_adjacent_files``) keep each row's snapshot in a
column; an older snapshot reads only its own rows of them. What is refused, by name: encrypted files, Hive
partition columns kept only in paths, a newer specification, types without a fieldshift counterpart.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from fieldshift.errors import (
    CatalogFormatError,
    InvalidNameError,
    SnapshotNotFoundError,
    UnsupportedFormatFeatureError,
)
from fieldshift.gc_pause import paused_gc
from fieldshift.open_tables.ducklake_db import MetadataDB, open_metadata
from fieldshift.open_tables.ducklake_inlined import inlined_table
from fieldshift.open_tables.ducklake_schema import ColumnRow, schema_at, type_at
from fieldshift.open_tables.ducklake_types import decode_text
from fieldshift.open_tables.source import (
    ColumnStats,
    DataFileEntry,
    DeleteFile,
    InlinedRows,
    PartitionValue,
    SnapshotContent,
    SourceSnapshot,
)
from fieldshift.open_tables.store_files import StoreFiles
from fieldshift.schema.model import Schema
from fieldshift.schema.name_mapping import MappedField, NameMapping
from fieldshift.schema.policy import RULES, CastPolicy

__all__ = ["SPEC_VERSIONS", "DuckLakeSource"]

SPEC_VERSIONS = ("0.1", "0.2", "0.3", "0.4", "1.0")
ROW_SNAPSHOT_COLUMN = "_ducklake_internal_snapshot_id"  # a merged file's per-row snapshot
_LIVE = "begin_snapshot <= ? AND (end_snapshot IS NULL OR end_snapshot > ?)"
_TABLE_CHANGE = re.compile(r"([a-z_]+):(\d+)")
_TRANSFORMS = {"identity": "identity", "year": "year", "month": "month", "day": "day", "hour": "hour"}

# DuckLake's promotions are lossless widenings; its writer also stores some types in another Parquet type
# (128-bit integers as DOUBLE, seconds as microseconds), which DuckDB casts back on read: checked casts.
DUCKLAKE_POLICY = CastPolicy("ducklake", frozenset(RULES) - {"number_to_string", "date_to_string"})


class DuckLakeSource:
    """One table of a DuckLake catalog. ``source`` is the catalog database (DuckDB or SQLite file, or a
    ``postgresql://`` URI); ``name`` is ``schema.table`` (``table`` alone means schema ``main``);
    ``data_path`` replaces the catalog's own data path (the files were moved, or are read elsewhere);
    ``storage_options`` open the data files on an object store (``store_files``; default: the environment)."""

    format = "ducklake"
    writer = "DuckDB with the ducklake extension"
    policy = DUCKLAKE_POLICY

    def __init__(self, source: str | Path, name: str, *, data_path: str | Path | None = None,
                 storage_options: Mapping[str, str] | None = None) -> None:
        self.file_opener = StoreFiles(storage_options, f"DuckLake table {name}")
        self.db: MetadataDB = open_metadata(source)
        self.where = self.db.where
        settings = self._settings()
        version = settings.get("version", "")
        if version and version not in SPEC_VERSIONS:
            raise UnsupportedFormatFeatureError(f"DuckLake catalog {self.where} is of specification {version}; "
                                                f"fieldshift reads {', '.join(SPEC_VERSIONS)}")
        self.data_path = _directory(str(data_path) if data_path is not None else settings.get("data_path", ""),
                                    Path(str(source)).parent if "://" not in str(source) else None)
        self.name = name
        self._find_table(name)
        self._columns = [ColumnRow(*r) for r in self.db.rows(
            "SELECT column_id, begin_snapshot, end_snapshot, column_order, column_name, column_type, initial_default,"
            " default_value, parent_column, default_value_type FROM ducklake_column WHERE table_id = ?",
            (self.table_id,))]
        self._snapshots: tuple[SourceSnapshot, ...] | None = None
        self._schemas: dict[int, Schema] = {}
        self._versions = self._schema_versions()
        self._has_partitions: bool | None = None
        self._types: dict[int, dict[int, pa.DataType]] = {}
        self._inlined_versions: list[tuple[str, int, int]] | None = None

    # -- the catalog ----------------------------------------------------------------------------
    def _settings(self) -> dict[str, str]:
        if "ducklake_metadata" not in self.db.tables():
            raise CatalogFormatError(f"{self.where} holds no DuckLake catalog (it has no ducklake_metadata table)")
        rows = self.db.rows("SELECT key, value FROM ducklake_metadata WHERE scope IS NULL")
        return dict(rows)

    def _find_table(self, name: str) -> None:
        schema_name, _, table_name = name.rpartition(".")
        schema_name = schema_name or "main"
        latest = self.db.rows("SELECT max(snapshot_id) FROM ducklake_snapshot")[0][0]
        found = self.db.rows(
            "SELECT t.table_id, t.begin_snapshot, t.end_snapshot, t.path, t.path_is_relative, s.path, "
            "s.path_is_relative FROM ducklake_table t JOIN ducklake_schema s ON t.schema_id = s.schema_id "
            "WHERE s.schema_name = ? AND t.table_name = ? AND t.end_snapshot IS NULL AND s.end_snapshot IS NULL",
            (schema_name, table_name))
        if not found:
            known = [f"{s}.{t}" for s, t in self.db.rows(
                "SELECT s.schema_name, t.table_name FROM ducklake_table t JOIN ducklake_schema s "
                "ON t.schema_id = s.schema_id WHERE t.end_snapshot IS NULL AND s.end_snapshot IS NULL")]
            raise InvalidNameError(f"DuckLake catalog {self.where} has no table {name!r} at its latest snapshot "
                                   f"{latest}; its tables are {', '.join(sorted(known)) or 'none'}")
        table_id, begin, _end, tpath, trel, spath, srel = found[0]
        self.table_id, self.begin_snapshot = int(table_id), int(begin)
        schema_dir = _join(self.data_path, spath or "", srel)
        self.table_path = _join(schema_dir, tpath or "", trel)

    def _schema_versions(self) -> list[tuple[int, int]]:
        """(begin snapshot, schema version) of each version of this table's schema, oldest first."""
        if "ducklake_schema_versions" in self.db.tables():
            rows = self.db.rows("SELECT begin_snapshot, schema_version FROM ducklake_schema_versions "
                                "WHERE table_id = ? ORDER BY begin_snapshot", (self.table_id,))
            if rows:
                return [(int(b), int(v)) for b, v in rows]
        begins = sorted({r.begin_snapshot for r in self._columns} | {r.end_snapshot for r in self._columns
                                                                     if r.end_snapshot is not None})
        out = []
        for b in begins:
            (v,), = self.db.rows("SELECT schema_version FROM ducklake_snapshot WHERE snapshot_id <= ? "
                                 "ORDER BY snapshot_id DESC LIMIT 1", (b,))
            out.append((b, int(v)))
        return out

    # -- the read-source interface ------------------------------------------------------------
    def snapshots(self) -> tuple[SourceSnapshot, ...]:
        """The snapshots in which this table changed (created, written, deleted from, altered), oldest first."""
        if self._snapshots is None:
            changes = "ducklake_snapshot_changes" in self.db.tables()
            rows = self.db.rows(
                "SELECT s.snapshot_id, s.snapshot_time, " + ("c.changes_made" if changes else "NULL") +
                " FROM ducklake_snapshot s " +
                ("LEFT JOIN ducklake_snapshot_changes c ON c.snapshot_id = s.snapshot_id " if changes else "") +
                "WHERE s.snapshot_id >= ? ORDER BY s.snapshot_id", (self.begin_snapshot,))
            out = []
            for sid, when, made in rows:
                sid = int(sid)
                if changes and sid != self.begin_snapshot and not self._touches(made):
                    continue
                out.append(SourceSnapshot(sid, _utc(when), self.schema_id_at(sid), made))
            self._snapshots = tuple(out)
        return self._snapshots

    def _touches(self, made: str | None) -> bool:
        if made is None:
            return True
        return any(int(n) == self.table_id and "schema" not in kind and "view" not in kind
                   for kind, n in _TABLE_CHANGE.findall(made))

    def schema_id_at(self, snapshot_id: int) -> int:
        sid = self._versions[0][1] if self._versions else 0
        for begin, version in self._versions:
            if begin <= snapshot_id:
                sid = version
        return sid

    def schemas(self) -> Mapping[int, Schema]:
        for begin, version in self._versions:
            self._schema(version, begin)
        return dict(sorted(self._schemas.items()))

    def _schema(self, schema_id: int, snapshot_id: int) -> Schema:
        if schema_id not in self._schemas:
            self._schemas[schema_id] = schema_at(self._columns, snapshot_id, schema_id, self.name)
        return self._schemas[schema_id]

    def schema_at_snapshot(self, snapshot_id: int) -> Schema:
        sid = self.schema_id_at(snapshot_id)
        begin = max((b for b, v in self._versions if v == sid and b <= snapshot_id), default=snapshot_id)
        return self._schema(sid, begin)

    def content(self, snapshot_id: int) -> SnapshotContent:
        snap = next((s for s in self.snapshots() if s.snapshot_id == snapshot_id), None)
        if snap is None:
            found = self.db.rows("SELECT snapshot_time FROM ducklake_snapshot WHERE snapshot_id = ?", (snapshot_id,))
            if not found or snapshot_id < self.begin_snapshot:
                known = [s.snapshot_id for s in self.snapshots()]
                raise SnapshotNotFoundError(f"DuckLake table {self.name} has no snapshot {snapshot_id} (the catalog "
                                            f"has no such snapshot, or it was expired); the table changed at {known}")
            snap = SourceSnapshot(snapshot_id, _utc(found[0][0]), self.schema_id_at(snapshot_id))
        schema = self.schema_at_snapshot(snapshot_id)
        with paused_gc():  # thousands of small, cycle-free values per snapshot (gc_pause)
            files = self._files(snapshot_id)
        return SnapshotContent(snap, schema, files, self._inlined(snapshot_id))

    # -- files ----------------------------------------------------------------------------------
    def _files(self, s: int) -> tuple[DataFileEntry, ...]:
        rows = self.db.rows(
            "SELECT data_file_id, path, path_is_relative, file_format, record_count, file_size_bytes, row_id_start, "
            "partition_id, encryption_key, mapping_id, partial_max, begin_snapshot FROM ducklake_data_file "
            f"WHERE table_id = ? AND {_LIVE} ORDER BY file_order, data_file_id", (self.table_id, s, s))
        if not rows:
            return ()
        deletes = self._delete_files(s)
        inline = self._inlined_deletes(s)
        # a filtered scan loads its columns' statistics, and decodes those of the files it tests
        stats = _LazyStats(lambda column_id: self._stats(s, column_id), self._column_stats)
        partitions = self._partition_values(s) if self._partitioned() else {}
        mappings = self._mappings({r[9] for r in rows if r[9] is not None})
        out = []
        for (fid, path, rel, fmt, count, size, row_start, _part, key, mapping, partial_max, begin) in rows:
            full = _join(self.table_path, path, rel)
            if key:
                raise UnsupportedFormatFeatureError(f"DuckLake data file {full} is encrypted; fieldshift does not read "
                                                    "encrypted DuckLake files")
            partial = partial_max is not None and int(partial_max) > s  # merged rows of later snapshots
            positions = inline.get(int(fid))
            out.append(DataFileEntry(
                full, int(count), file_format=(fmt or "parquet").lower(), name_mapping=mappings.get(mapping),
                partition=partitions.get(int(fid), ()), stats=_FileStats(stats, int(fid)),
                delete_files=tuple(deletes.get(int(fid), ())), positions=positions, first_row_id=row_start,
                file_size=size, file_id=int(fid), sequence_number=int(begin),
                snapshot_column=ROW_SNAPSHOT_COLUMN if partial else None, up_to_snapshot=s if partial else None))
        return tuple(out)

    def _delete_files(self, s: int) -> dict[int, list[DeleteFile]]:
        rows = self.db.rows(
            "SELECT d.data_file_id, d.path, d.path_is_relative, d.format, d.delete_count, d.encryption_key, "
            "d.partial_max, f.path, f.path_is_relative FROM ducklake_delete_file d JOIN ducklake_data_file f "
            "ON f.data_file_id = d.data_file_id WHERE d.table_id = ? AND d.begin_snapshot <= ? AND "
            "(d.end_snapshot IS NULL OR d.end_snapshot > ?)", (self.table_id, s, s))
        out: dict[int, list[DeleteFile]] = {}
        for fid, path, rel, fmt, count, key, _partial, data_path, data_rel in rows:
            full = _join(self.table_path, path, rel)
            if key:
                raise UnsupportedFormatFeatureError(f"DuckLake delete file {full} is encrypted; fieldshift does not "
                                                    "read encrypted DuckLake files")
            kind = (fmt or "parquet").lower()
            if kind not in ("parquet", "puffin"):
                raise UnsupportedFormatFeatureError(f"DuckLake delete file {full} has format {fmt!r}; fieldshift "
                                                    "reads parquet position deletes and puffin deletion vectors")
            # up_to_snapshot: a partial delete file records which snapshot deleted each row
            out.setdefault(int(fid), []).append(DeleteFile(full, kind, count, up_to_snapshot=s))
            del data_path, data_rel  # DuckLake's delete files belong to one data file each
        return out

    def _inlined_deletes(self, s: int) -> dict[int, np.ndarray]:
        name = f"ducklake_inlined_delete_{self.table_id}"
        if name not in self.db.tables():
            return {}
        rows = self.db.rows(f"SELECT file_id, row_id FROM {name} WHERE begin_snapshot <= ?", (s,))
        grouped: dict[int, list[int]] = {}
        for fid, pos in rows:
            grouped.setdefault(int(fid), []).append(int(pos))
        return {fid: np.unique(np.asarray(p, np.int64)) for fid, p in grouped.items()}

    def _stats(self, s: int, column_id: int | None) -> dict[int, dict[int, tuple[Any, ...]]]:
        """file id -> field id -> the catalog's statistics row of the files live at ``s`` (of one column, or
        all); ``_column_stats`` decodes a row when a file's statistics are asked for (pruning asks only for
        the files its partition test kept)."""
        one = "" if column_id is None else " AND c.column_id = ?"
        rows = self.db.rows(
            "SELECT c.data_file_id, c.column_id, c.value_count, c.null_count, c.min_value, c.max_value, "
            "c.contains_nan, f.begin_snapshot FROM ducklake_file_column_stats c JOIN ducklake_data_file f "
            "ON f.data_file_id = c.data_file_id WHERE c.table_id = ? AND f.table_id = ? AND f.begin_snapshot <= ? "
            "AND (f.end_snapshot IS NULL OR f.end_snapshot > ?)" + one,
            (self.table_id, self.table_id, s, s, *(() if column_id is None else (column_id,))))
        out: dict[int, dict[int, tuple[Any, ...]]] = {}
        for row in rows:
            out.setdefault(int(row[0]), {})[int(row[1])] = row
        return out

    def _column_stats(self, row: tuple[Any, ...]) -> ColumnStats:
        """One statistics row of ``_stats`` decoded with the column's type when its file was written."""
        _fid, cid, values, nulls, lo, hi, nan, begin = row
        t = self._types_at(int(begin)).get(int(cid))  # the types when the file was written: its stats' types
        lower = upper = None
        if t is not None:
            try:
                lower, upper = decode_text(lo, t, hex_blob=True), decode_text(hi, t, hex_blob=True)
            except (ValueError, ArithmeticError, UnsupportedFormatFeatureError):
                lower = upper = None
        return ColumnStats(None if values is None else int(values), None if nulls is None else int(nulls), lower,
                           upper, None if nan is None else bool(nan), t)

    def _types_at(self, snapshot_id: int) -> dict[int, pa.DataType]:
        if snapshot_id not in self._types:
            self._types[snapshot_id] = type_at(self._columns, snapshot_id, self.name)
        return self._types[snapshot_id]

    def _partitioned(self) -> bool:
        """Whether the table ever had a partition spec (no file of an unpartitioned one has values)."""
        if self._has_partitions is None:
            self._has_partitions = "ducklake_partition_info" in self.db.tables() and bool(self.db.rows(
                "SELECT 1 FROM ducklake_partition_info WHERE table_id = ? LIMIT 1", (self.table_id,)))
        return self._has_partitions

    def _partition_values(self, s: int) -> dict[int, tuple[PartitionValue, ...]]:
        if "ducklake_file_partition_value" not in self.db.tables():
            return {}
        rows = self.db.rows(
            "SELECT v.data_file_id, v.partition_key_index, v.partition_value, p.column_id, p.transform, "
            "f.begin_snapshot FROM ducklake_file_partition_value v JOIN ducklake_data_file f ON "
            "f.data_file_id = v.data_file_id JOIN ducklake_partition_column p ON p.partition_id = f.partition_id "
            "AND p.partition_key_index = v.partition_key_index WHERE v.table_id = ? AND f.begin_snapshot <= ? AND "
            "(f.end_snapshot IS NULL OR f.end_snapshot > ?) ORDER BY v.data_file_id, v.partition_key_index",
            (self.table_id, s, s))
        out: dict[int, list[PartitionValue]] = {}
        values: dict[tuple[Any, ...], PartitionValue] = {}  # files share few distinct values: decode each once
        for fid, _index, value, cid, transform, begin in rows:
            name = _transform(transform)
            t = self._types_at(int(begin)).get(int(cid)) if name == "identity" else pa.int64()
            key = (value, int(cid), name, t)
            if key not in values:
                typed = None if value is None or t is None else decode_text(value, t, hex_blob=False)
                values[key] = PartitionValue(int(cid), name, typed)
            out.setdefault(int(fid), []).append(values[key])
        return {k: tuple(v) for k, v in out.items()}

    def _mappings(self, ids: set[Any]) -> dict[Any, NameMapping]:
        out = {}
        for mid in sorted(ids):
            rows = self.db.rows("SELECT column_id, source_name, target_field_id, parent_column, is_partition FROM "
                                "ducklake_name_mapping WHERE mapping_id = ?", (mid,))
            if any(r[4] for r in rows):
                raise UnsupportedFormatFeatureError(
                    f"DuckLake table {self.name}: name mapping {mid} takes columns from Hive partition paths, which "
                    "fieldshift does not read yet")
            kids: dict[Any, list[tuple[Any, ...]]] = {}
            for r in rows:
                kids.setdefault(r[3], []).append(r)

            out[mid] = NameMapping(_mapped(kids, None))
        return out

    # -- inlined rows ---------------------------------------------------------------------------
    def _inlined(self, s: int) -> tuple[InlinedRows, ...]:
        """Inlined rows live at ``s``: one query counts them in every inlined table of the table, and only
        tables holding some are read."""
        tables = self._inlined_tables()
        if not tables:
            return ()
        live = "begin_snapshot <= ? AND (end_snapshot IS NULL OR end_snapshot > ?)"
        counts = self.db.rows(" UNION ALL ".join(f"SELECT {i}, count(*) FROM {name} WHERE {live}"
                                                 for i, (name, _, _) in enumerate(tables)), (s, s) * len(tables))
        out = []
        for i, n in sorted(counts):
            if n:
                name, version, first = tables[i]
                schema = schema_at(self._columns, first, version, self.name)
                out.append(InlinedRows(version, inlined_table(self.db, name, schema, s), name))
        return tuple(out)

    def _inlined_tables(self) -> list[tuple[str, int, int]]:
        """(name, schema version, first snapshot of that version) of this table's inlined data tables."""
        if self._inlined_versions is None:
            self._inlined_versions = []
            if "ducklake_inlined_data_tables" in self.db.tables():
                firsts = dict(self.db.rows("SELECT schema_version, min(snapshot_id) FROM ducklake_snapshot "
                                           "GROUP BY schema_version"))
                for name, version in self.db.rows("SELECT table_name, schema_version FROM "
                                                  "ducklake_inlined_data_tables WHERE table_id = ? ORDER BY "
                                                  "schema_version", (self.table_id,)):
                    if name in self.db.tables() and re.fullmatch(r"\w+", name):
                        self._inlined_versions.append((name, int(version), int(firsts.get(version, 0))))
        return self._inlined_versions

    def open_file(self, path: str) -> Any:
        """A data or delete file, with the ``storage_options`` given."""
        return self.file_opener.open(path)

    def close(self) -> None:
        self.db.close()


class _LazyStats:
    """A snapshot's column statistics, read from the catalog per column on first use (an unfiltered scan
    reads none, a filtered one only its filter's columns) and decoded per file on first use."""

    def __init__(self, load: Callable[[int | None], dict[int, dict[int, tuple[Any, ...]]]],
                 decode: Callable[[tuple[Any, ...]], ColumnStats]) -> None:
        self._load, self._decode = load, decode
        self._columns: dict[int, dict[int, tuple[Any, ...]]] = {}  # field id -> file id -> catalog row
        self._all: dict[int, dict[int, tuple[Any, ...]]] | None = None
        self._decoded: dict[tuple[int, int], ColumnStats] = {}  # (file id, field id) -> statistics

    def _stats(self, file_id: int, field_id: int, row: tuple[Any, ...]) -> ColumnStats:
        key = (file_id, field_id)
        if key not in self._decoded:
            self._decoded[key] = self._decode(row)
        return self._decoded[key]

    def of(self, file_id: int, field_id: int) -> ColumnStats | None:
        if field_id not in self._columns:
            by_file = self._load(field_id)
            self._columns[field_id] = {fid: rows[field_id] for fid, rows in by_file.items()}
        row = self._columns[field_id].get(file_id)
        return None if row is None else self._stats(file_id, field_id, row)

    def every(self, file_id: int) -> dict[int, ColumnStats]:
        if self._all is None:
            self._all = self._load(None)
        return {cid: self._stats(file_id, cid, row) for cid, row in self._all.get(file_id, {}).items()}


class _FileStats(Mapping[int, ColumnStats]):
    """One file's statistics by field id, from the snapshot's lazily loaded ones."""

    def __init__(self, shared: _LazyStats, file_id: int) -> None:
        self._shared, self._file_id = shared, file_id

    def __getitem__(self, field_id: int) -> ColumnStats:
        found = self._shared.of(self._file_id, field_id)
        if found is None:
            raise KeyError(field_id)
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self._shared.every(self._file_id))

    def __len__(self) -> int:
        return len(self._shared.every(self._file_id))


def _mapped(kids: dict[Any, list[tuple[Any, ...]]], parent: Any) -> tuple[MappedField, ...]:
    """The name-mapping entries under ``parent`` (rows: mapping entry id, source name, field id, parent, ...)."""
    return tuple(MappedField(int(t), (n,), _mapped(kids, c)) for c, n, t, _p, _h in kids.get(parent, []))


def _transform(text: str) -> str:
    t = (text or "identity").strip().lower()
    if t in _TRANSFORMS:
        return _TRANSFORMS[t]
    m = re.fullmatch(r"bucket\s*\(\s*(\d+)\s*\)", t)
    if m:
        return f"bucket[{m.group(1)}]"
    return t


def _utc(value: Any) -> dt.datetime:
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.strip().replace(" ", "T", 1))
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def _directory(path: str, base: Path | None) -> str:
    """The catalog's data path as a directory ending in '/'; a relative one is taken from the catalog file's
    directory (DuckDB takes it from its working directory, which a reader elsewhere cannot know)."""
    if not path:
        return ""
    if "://" not in path and not Path(path).is_absolute() and base is not None:
        path = str((base / path).resolve())
    return path if path.endswith("/") else path + "/"


def _join(base: str, path: str, relative: Any) -> str:
    if relative is None or (bool(relative) and not (isinstance(relative, str) and relative.lower() == "false")):
        return base + path if path else base
    return path

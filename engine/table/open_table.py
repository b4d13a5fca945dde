"""``fs.open_table``: a read-only view of a table another format wrote, with the read API of ``Table``.

The view holds a read source (``fieldshift.open_tables``) and scans it with ``OpenScan``; it never
writes. Every write a ``Table`` has raises ReadOnlyTableError naming the tool that writes the format, so
a script written for fieldshift tables fails at the write with what to do, not with an AttributeError.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import pyarrow as pa

from fieldshift.errors import (
    InvalidOptionError,
    PartitionSpecError,
    ReadOnlyTableError,
    SnapshotNotFoundError,
    UnsupportedFormatFeatureError,
)
from fieldshift.open_tables.source import ReadSource, SnapshotContent, SnapshotId, SourceSnapshot
from fieldshift.schema.model import Schema
from fieldshift.table.partitions.partitioning import PartitionField, PartitionSpec
from fieldshift.table.partitions.transforms import parse_transform
from fieldshift.table.scan.open_explain import OpenExplanation, explain_scan
from fieldshift.table.scan.open_scan import BATCH_SIZE, OpenScan, group_filter
from fieldshift.table.scan.time_travel import snapshot_at

__all__ = ["FORMATS", "OpenTable", "detect_format", "open_table"]

FORMATS = ("ducklake", "iceberg", "hudi", "delta", "paimon")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_WRITES = ("append", "overwrite", "upsert", "delete", "update_schema", "alter", "evolve", "compact",
           "expire_snapshots", "vacuum", "set_policy", "update_spec", "set_properties", "capture", "merge")


class OpenTable:
    """A table of another format, read-only: ``schema``, ``schemas()``, ``history()``, ``scan()``."""

    def __init__(self, source: ReadSource) -> None:
        self.source = source
        self.name = source.name
        self.format = source.format

    def __repr__(self) -> str:
        return f"OpenTable({self.format}, {self.name!r})"

    def __enter__(self) -> OpenTable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the format's metadata connection (a DuckDB catalog file stays locked while it is open)."""
        closer = getattr(self.source, "close", None)
        if closer is not None:
            closer()

    # -- metadata -------------------------------------------------------------------------------
    def history(self) -> list[SourceSnapshot]:
        """The snapshots in which this table changed, oldest first."""
        return list(self.source.snapshots())

    @property
    def current_snapshot(self) -> SourceSnapshot:
        """The latest snapshot in which the table changed."""
        snaps = self.source.snapshots()
        if not snaps:
            raise SnapshotNotFoundError(f"{self.format} table {self.name} has no snapshot")
        return snaps[-1]

    @property
    def schema(self) -> Schema:
        """The schema at the latest snapshot (a table with no snapshot yet: its current schema)."""
        current = getattr(self.source, "current_schema_id", None)
        if current is not None and not self.source.snapshots():
            return self.schemas()[current]
        return self.schemas()[self.current_snapshot.schema_id]

    def schemas(self) -> dict[int, Schema]:
        """Every schema version of the table by id."""
        return dict(self.source.schemas())

    def specs(self) -> list[PartitionSpec]:
        """Every partition spec the table has had, oldest first (files keep the spec they were written with);
        empty for a format whose source records none. A transform fieldshift does not know is refused here
        (scans still read such tables: an unknown transform only prunes nothing)."""
        getter = getattr(self.source, "specs", None)
        if getter is None:
            return []
        out = []
        for spec in getter():
            fields = []
            for f in spec.fields:
                try:
                    transform = parse_transform(f.transform)
                except PartitionSpecError:
                    raise UnsupportedFormatFeatureError(
                        f"{self.format} table {self.name}, partition spec {spec.spec_id}: field {f.name!r} uses "
                        f"transform {f.transform!r}, which fieldshift does not know") from None
                fields.append(PartitionField(f.source_id, f.field_id, transform, f.name))
            out.append(PartitionSpec(spec.spec_id, tuple(fields)))
        return out

    # -- reads ----------------------------------------------------------------------------------
    def resolve(self, snapshot_id: SnapshotId | None = None, as_of: dt.datetime | str | None = None) -> SnapshotId:
        """The snapshot a read at ``snapshot_id`` or ``as_of`` (the latest snapshot at or before that time;
        a naive time is UTC) sees; the latest one when both are None. An id is taken in the kind the format
        uses (Hudi's instants are text: ``20240418173551906`` given as an int reads as that text); a format
        that names snapshots (Paimon's tags) takes a name that is not a number as one."""
        if snapshot_id is not None and as_of is not None:
            raise InvalidOptionError("give snapshot_id or as_of, not both")
        resolve_name = getattr(self.source, "resolve_name", None)  # a format with named snapshots (Paimon's tags)
        if resolve_name is not None and isinstance(snapshot_id, str) and not snapshot_id.strip().isdigit():
            return resolve_name(snapshot_id.strip())
        snaps = self.source.snapshots()
        if not snaps:
            raise SnapshotNotFoundError(f"{self.format} table {self.name} has no snapshot")
        if snapshot_id is not None:
            # the source's content() refuses an id it does not have (ids need not be ordered)
            return _id_like(snapshot_id, snaps[0].snapshot_id)
        if as_of is None:
            return snaps[-1].snapshot_id
        return snapshot_at(snaps, as_of, lambda s: s.timestamp, f"{self.format} table {self.name}").snapshot_id

    def scan(self, columns: Sequence[str] | None = None, filter: Any = None, snapshot_id: SnapshotId | None = None,
             as_of: dt.datetime | str | None = None, batch_size: int = BATCH_SIZE) -> OpenScan:
        """A lazy read: ``.to_arrow()``, ``.to_batches()``, ``.count()``; ``filter`` takes what ``Table.scan`` does."""
        current = getattr(self.source, "current_schema_id", None)
        if snapshot_id is None and as_of is None and current is not None and not self.source.snapshots():
            schema = self.schemas()[current]  # created, never written: no rows (as the format's own readers say)
            empty = SnapshotContent(SourceSnapshot(-1, _EPOCH, current, None), schema, ())
            return OpenScan(self.source, empty, columns, filter, batch_size)
        sid = self.resolve(snapshot_id, as_of)
        keep = None
        if filter is not None and getattr(self.source, "prunes_groups", False):
            keep = group_filter(filter, self.source.schema(self.source.schema_id_at(sid)), self.source)
        content = self.source.content(sid) if keep is None else self.source.content(sid, keep=keep)
        return OpenScan(self.source, content, columns, filter, batch_size)

    def explain(self, columns: Sequence[str] | None = None, filter: Any = None,
                snapshot_id: SnapshotId | None = None, as_of: dt.datetime | str | None = None) -> OpenExplanation:
        """What ``scan()`` with these arguments reads, without reading rows: the snapshot and schema, the
        files kept and pruned, their deletes, and each file layout's evolution plan (``str()`` renders it)."""
        scan = self.scan(columns, filter, snapshot_id, as_of)
        return explain_scan(scan, None if filter is None else str(filter))

    def to_arrow(self, **scan: Any) -> pa.Table:
        """``scan(**scan).to_arrow()``: the table (at a snapshot, of some columns, filtered) as one Arrow table."""
        return self.scan(**scan).to_arrow()

    # -- writes are refused ---------------------------------------------------------------------
    def _read_only(self, what: str) -> NoReturn:
        raise ReadOnlyTableError(f"{what}() on {self.format} table {self.name}: fieldshift reads {self.format} tables "
                                 f"and does not write them; write with {self.source.writer}")

    def __getattr__(self, name: str) -> Any:
        if name in _WRITES:
            return lambda *a, **k: self._read_only(name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _id_like(value: Any, example: SnapshotId) -> SnapshotId:
    """``value`` as a snapshot id of the kind the source uses (``example``): an int, or a string."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"snapshot_id must be {'a string' if isinstance(example, str) else 'an int'}, not {value!r}")
    if isinstance(example, str):
        return str(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            raise TypeError(f"snapshot_id must be an int, not {value!r}") from None
    return value


def open_table(source: str | Path | None = None, format: str | None = None, name: str | None = None, *,
               catalog: dict[str, Any] | None = None, **options: Any) -> OpenTable:
    """Open a table another format wrote, read-only.

    ``format="ducklake"``: ``source`` is the catalog database (a DuckDB or SQLite file, or a
    ``postgresql://`` URI), ``name`` is ``schema.table`` (or ``table`` in schema ``main``), and
    ``data_path=`` overrides the catalog's data path; ``storage_options=`` open its data files on an object
    store (delta-rs' and hudi-rs' key names: ``aws_access_key_id``, ``aws_secret_access_key``,
    ``aws_session_token``, ``aws_region``, ``aws_endpoint_url``, ``aws_allow_http``; default: the
    environment's credentials).

    ``format="iceberg"`` (needs PyIceberg: the ``iceberg`` extra): ``source`` is a ``metadata.json`` file or
    a table directory whose ``metadata/version-hint.text`` names the current one; or no source and
    ``catalog={...}`` (PyIceberg catalog properties, e.g. ``{"type": "sql", "uri": "sqlite:///c.db"}``) with
    ``name="namespace.table"``. ``properties=`` go to PyIceberg's FileIO (object-store credentials).

    ``format="hudi"`` (needs the ``hudi`` package: the ``hudi`` extra): ``source`` is the table's base path
    (the directory holding ``.hoodie/``); ``name`` only labels it in messages; ``storage_options=`` go to
    hudi-rs (object-store credentials) and to fieldshift's own reads of the base files.

    ``format="delta"``: ``source`` is the table's directory (a local path or a URI pyarrow.fs opens);
    ``name`` only labels it in messages; ``storage_options=`` as for DuckLake, for its log and files.

    ``format="paimon"`` (reads manifests with fastavro: the ``paimon`` extra): ``source`` is a filesystem
    warehouse (a path or URI) and ``name`` is ``database.table``, or ``source`` is the table directory itself.

    ``format=None`` detects the format where the source says it: a DuckLake catalog file or URI, a path
    ending in ``.metadata.json`` or a directory with ``metadata/version-hint.text`` (Iceberg), ``catalog=``
    (Iceberg), a directory with ``.hoodie/`` (Hudi), a directory with ``_delta_log`` (Delta), a directory with
    numbered ``schema/`` files (a Paimon table directory; a warehouse needs ``format="paimon"``).
    """
    if format is None:
        format = "iceberg" if catalog is not None and source is None else _detect(source)
    key = str(format).strip().lower()
    if key not in FORMATS:
        raise InvalidOptionError(f"format {format!r} is not one fieldshift opens; use one of {', '.join(FORMATS)}")
    if key == "hudi":
        unknown = set(options) - {"storage_options"}
        if unknown:
            raise InvalidOptionError(f"unknown option(s) {sorted(unknown)} for a Hudi table; it takes storage_options=")
        from fieldshift.open_tables.hudi import HudiSource

        return OpenTable(HudiSource(source, name, storage_options=options.get("storage_options")))
    if key == "iceberg":
        unknown = set(options) - {"properties"}
        if unknown:
            raise InvalidOptionError(f"unknown option(s) {sorted(unknown)} for an Iceberg table; it takes catalog= "
                                     "and properties=")
        if catalog is not None and not isinstance(catalog, dict):
            raise InvalidOptionError(f"catalog= takes PyIceberg catalog properties as a dict, not {catalog!r}")
        from fieldshift.open_tables.iceberg import IcebergSource

        return OpenTable(IcebergSource(source, name, catalog=catalog, properties=options.get("properties")))
    if catalog is not None:
        raise InvalidOptionError("catalog= is for Iceberg tables; a DuckLake catalog, a Delta table or a Paimon "
                                 "warehouse is the source itself")
    if key == "delta":
        unknown = set(options) - {"storage_options"}
        if unknown:
            raise InvalidOptionError(f"unknown option(s) {sorted(unknown)} for a Delta table; it takes "
                                     "storage_options=")
        if source is None:
            raise InvalidOptionError("give the Delta table's directory (a path or a URI)")
        from fieldshift.open_tables.delta import DeltaSource

        return OpenTable(DeltaSource(source, name, storage_options=options.get("storage_options")))
    if key == "paimon":
        if options:
            raise InvalidOptionError(f"unknown option(s) {sorted(options)} for a Paimon table; it takes a warehouse "
                                     "and name='database.table'")
        if source is None:
            raise InvalidOptionError("give the Paimon warehouse (with name='database.table') or the table directory")
        from fieldshift.open_tables.paimon import PaimonSource

        return OpenTable(PaimonSource(source, name))
    if source is None:
        raise InvalidOptionError("give the DuckLake catalog: a DuckDB or SQLite file, or a postgresql:// URI")
    if not name:
        raise InvalidOptionError("name the table: name='schema.table' (DuckLake)")
    unknown = set(options) - {"data_path", "storage_options"}
    if unknown:
        raise InvalidOptionError(f"unknown option(s) {sorted(unknown)} for a DuckLake table; it takes data_path= "
                                 "and storage_options=")
    from fieldshift.open_tables.ducklake import DuckLakeSource

    return OpenTable(DuckLakeSource(source, name, data_path=options.get("data_path"),
                                    storage_options=options.get("storage_options")))


def detect_format(source: str | Path) -> str | None:
    """The format ``open_table`` would detect at ``source``, or None (nothing it knows, or unreadable)."""
    try:
        return _detect(source)
    except (InvalidOptionError, OSError):
        return None


def _detect(source: str | Path | None) -> str:
    if source is None:
        raise InvalidOptionError("give a source (a DuckLake catalog, an Iceberg metadata.json or table directory, a "
                                 "Hudi base path, a Delta or Paimon table directory) or catalog={...} for an "
                                 "Iceberg catalog")
    text = str(source)
    if text.startswith(("ducklake:", "postgresql://", "postgres://")):
        return "ducklake"
    from fieldshift.open_tables.delta import is_delta_table
    from fieldshift.open_tables.iceberg import is_iceberg_location

    if is_delta_table(text):  # first: a Delta table may also carry Iceberg metadata (UniForm)
        return "delta"
    if is_iceberg_location(text):
        return "iceberg"
    from fieldshift.open_tables.hudi import is_hudi_location

    if is_hudi_location(text):
        return "hudi"
    from fieldshift.open_tables.paimon import is_paimon_table

    if is_paimon_table(text):
        return "paimon"
    path = Path(text)
    if path.is_file():
        with open(path, "rb") as f:
            head = f.read(16)
        if head.startswith(b"SQLite format 3") or head[8:12] == b"DUCK":
            return "ducklake"
    raise InvalidOptionError(f"cannot tell the format of {text!r}; pass format= (one of {', '.join(FORMATS)})")

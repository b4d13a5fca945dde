"""`Table`: the embedded default store — a SQLite catalog plus immutable Parquet files tagged with schema ids."""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from fieldshift.errors import CommitConflictError, SchemaEvolutionError, TableError
from fieldshift.policy import CastPolicy
from fieldshift.schema import Schema
from fieldshift.schema_update import SchemaUpdate
from fieldshift.table.catalog import DataFile, Snapshot, SqliteCatalog, open_catalog
from fieldshift.table.files import TMP_SUFFIX, write_data_file, write_side_file
from fieldshift.table.on_write import prepare_append
from fieldshift.table.scan import Scan

__all__ = ["AppendResult", "Table", "readable_under"]

CATALOG_FILE = "fieldshift.db"
MAX_FILE_ROWS = 1_048_576
COMMIT_RETRIES = 8


@dataclass(frozen=True)
class AppendResult:
    """What one append did."""

    rows_written: int
    rows_quarantined: int
    schema_id: int
    schema_evolved: bool
    snapshot_id: int
    changes: tuple[str, ...] = ()


def _as_table(data: Any) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if hasattr(data, "__arrow_c_stream__"):
        return pa.RecordBatchReader.from_stream(data).read_all()
    if isinstance(data, (list, dict)):
        return pa.Table.from_pylist(data) if isinstance(data, list) else pa.Table.from_pydict(data)
    raise TypeError(f"append() takes Arrow data (Table, RecordBatch, reader, or __arrow_c_stream__), "
                    f"a list of dicts or a dict of lists; got {type(data).__name__}")


def readable_under(write_schema: Schema) -> Any:
    """A commit-time check: rows written with ``write_schema`` still read under the head's schema.

    Used when another writer committed first and the head schema moved on (appends replay on top).
    """
    def check(head_schema: Schema) -> None:
        from fieldshift.planner import cached_plan

        try:
            cached_plan(write_schema, head_schema)
        except SchemaEvolutionError as e:
            raise CommitConflictError(
                f"the schema changed concurrently and the new rows no longer fit: {e}") from None
    return check


class Table:
    """A fieldshift table: schema history forever, each data file tagged with its schema id."""

    def __init__(self, catalog: SqliteCatalog, table_id: int, name: str, location: Path,
                 properties: dict[str, str]) -> None:
        self.catalog = catalog
        self.table_id = table_id
        self.name = name
        self.location = location
        self.properties = properties

    # -- creating and opening -------------------------------------------------------------------
    @classmethod
    def create(cls, location: str | os.PathLike[str], schema: Schema | pa.Schema, *,
               identifier_fields: Sequence[str] = (), properties: dict[str, str] | None = None,
               catalog: str | None = None, name: str | None = None) -> Table:
        """Create a table at ``location`` (its own SQLite catalog unless ``catalog`` names a shared one)."""
        loc = Path(location).resolve()
        if isinstance(schema, pa.Schema):
            schema = Schema.from_arrow(schema, assign_ids=True)
        if identifier_fields:
            schema = Schema(schema.fields, schema_id=schema.schema_id,
                            identifier_field_ids=[schema.find(p).id for p in identifier_fields],
                            highest_field_id=schema.highest_field_id, doc=schema.doc)
        cat = open_catalog(catalog) if catalog else SqliteCatalog(loc / CATALOG_FILE)
        if catalog is None and cat.path.exists():
            raise TableError(f"a table already exists at {loc}; open it with Table.open()")
        loc.mkdir(parents=True, exist_ok=True)
        cat.initialize()
        name = name or str(loc)
        table_id = cat.create_table(name, str(loc), schema, dict(properties or {}))
        return cls(cat, table_id, name, loc, dict(properties or {}))

    @classmethod
    def open(cls, location: str | os.PathLike[str], *, catalog: str | None = None,
             name: str | None = None) -> Table:
        loc = Path(location).resolve()
        cat = open_catalog(catalog) if catalog else SqliteCatalog(loc / CATALOG_FILE)
        if not cat.path.exists():
            raise TableError(f"no fieldshift table at {loc} (no {cat.path.name}); create it with Table.create()")
        cat.check_version()
        table_id, stored_location, properties = cat.table_id(name or str(loc))
        return cls(cat, table_id, name or str(loc), Path(stored_location), properties)

    # -- schema and history ---------------------------------------------------------------------
    @property
    def schema(self) -> Schema:
        head = self.catalog.head(self.table_id)
        return self.schemas_by_id()[head.schema_id]

    def schemas(self) -> list[Schema]:
        return list(self.schemas_by_id().values())

    def schemas_by_id(self) -> dict[int, Schema]:
        return self.catalog.schemas(self.table_id)

    def history(self) -> list[Snapshot]:
        return self.catalog.snapshots(self.table_id)

    @property
    def current_snapshot(self) -> Snapshot:
        return self.catalog.head(self.table_id)

    def update_schema(self, *, policy: CastPolicy | None = None) -> SchemaUpdate:
        """A schema builder; ``.commit()`` records the new version atomically."""
        head = self.catalog.head(self.table_id)
        base = self.schemas_by_id()[head.schema_id]

        def commit(new: Schema) -> Schema:
            self.catalog.commit(self.table_id, head.snapshot_id, operation="schema", schema=new,
                                summary={"changes": builder.changes})
            return new

        builder = SchemaUpdate(base, policy=policy, on_apply=commit)
        return builder

    # -- writing --------------------------------------------------------------------------------
    def append(self, data: Any, *, evolve: bool = True, on_incompatible: str = "fail",
               policy: CastPolicy | None = None) -> AppendResult:
        """Append rows all-or-nothing, evolving the table schema on write (see ``on_write``)."""
        return self._write(_as_table(data), evolve, on_incompatible, policy, replace_all=False)

    def overwrite(self, data: Any, *, evolve: bool = True, on_incompatible: str = "fail",
                  policy: CastPolicy | None = None) -> AppendResult:
        """Replace the table's rows with ``data`` in one snapshot (old snapshots still read the old rows)."""
        return self._write(_as_table(data), evolve, on_incompatible, policy, replace_all=True)

    def _write(self, incoming: pa.Table, evolve: bool, on_incompatible: str, policy: CastPolicy | None,
               replace_all: bool) -> AppendResult:
        for attempt in range(COMMIT_RETRIES):
            head = self.catalog.head(self.table_id)
            base = self.schemas_by_id()[head.schema_id]
            prepared = prepare_append(incoming, base, evolve=evolve, on_incompatible=on_incompatible,
                                      policy=policy)
            written: list[str] = []
            try:
                files = self._write_files(prepared.schema, prepared.data, written)
                quarantine = []
                if prepared.quarantined is not None and prepared.quarantined.num_rows:
                    path = write_side_file(self.location, "quarantine", prepared.quarantined)
                    written.append(path)
                    quarantine.append((path, prepared.quarantined.num_rows))
                snap = self.catalog.commit(
                    self.table_id, head.snapshot_id,
                    operation="overwrite" if replace_all else "append",
                    schema=prepared.schema if prepared.evolved else None,
                    write_schema_id=prepared.schema.schema_id, add_files=files, quarantine=quarantine,
                    replace_all=replace_all, compatible=readable_under(prepared.schema),
                    summary={"rows": prepared.data.num_rows,
                             "quarantined": 0 if not quarantine else quarantine[0][1],
                             "changes": list(prepared.changes)},
                )
            except CommitConflictError:
                self._remove(written)
                if attempt == COMMIT_RETRIES - 1:
                    raise
                time.sleep(0.01 * (attempt + 1))
                continue
            except BaseException:
                self._remove(written)
                raise
            return AppendResult(prepared.data.num_rows, sum(n for _, n in quarantine),
                                prepared.schema.schema_id, prepared.evolved, snap.snapshot_id, prepared.changes)
        raise AssertionError("unreachable")

    def _write_files(self, schema: Schema, data: pa.Table, written: list[str]) -> list[DataFile]:
        files = []
        for start in range(0, data.num_rows, MAX_FILE_ROWS):
            f = write_data_file(self.location, schema, data.slice(start, MAX_FILE_ROWS))
            written.append(f.path)
            files.append(f)
        return files

    def _remove(self, paths: Iterable[str]) -> None:
        for p in paths:
            try:
                (self.location / p).unlink()
            except FileNotFoundError:
                pass

    # -- reading --------------------------------------------------------------------------------
    def scan(self, columns: Sequence[str] | None = None, filter: Any = None,
             snapshot_id: int | None = None, schema_id: int | None = None,
             policy: CastPolicy | None = None) -> Scan:
        return Scan(self, columns, filter, snapshot_id, schema_id, policy)

    def to_arrow(self) -> pa.Table:
        return self.scan().to_arrow()

    def quarantine(self) -> pa.Table:
        """Every quarantined row with its reason, source schema and time (source types vary by batch)."""
        parts = [pq.read_table(self.location / p) for p in self.catalog.quarantine_files(self.table_id)]
        if not parts:
            return pa.table({"_fieldshift_reason": pa.array([], pa.string())})
        return pa.concat_tables(parts, promote_options="permissive")

    def vacuum(self, older_than: dt.timedelta = dt.timedelta(hours=1)) -> list[str]:
        """Delete files no commit references (left by crashed writers); returns their paths.

        Files younger than ``older_than`` are kept: a writer in another process may be about to
        commit them.
        """
        keep = self.catalog.all_paths(self.table_id)
        cutoff = time.time() - older_than.total_seconds()
        removed = []
        for folder in ("data", "quarantine"):
            for path in sorted((self.location / folder).glob("*")):
                rel = f"{folder}/{path.name}"
                is_tmp = path.name.endswith(TMP_SUFFIX)
                if (is_tmp or rel not in keep) and path.stat().st_mtime <= cutoff:
                    path.unlink()
                    removed.append(rel)
        return removed

    def __repr__(self) -> str:
        return f"Table({str(self.location)!r}, schema_id={self.schema.schema_id})"

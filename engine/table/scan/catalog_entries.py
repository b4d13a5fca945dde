"""A snapshot's data files as read-source entries, each built the first time a scan needs it.

A scan of a 100,000-file snapshot keeps a handful of files; building a ``DataFileEntry`` for every file (its
path, partition values, deleted positions) before pruning would cost more than the pruning. So the catalog
source hands the scan this sequence: the columns pruning needs as arrays (file ids, schema ids, record
counts, and where each file's column bounds sit), entries made on demand and kept, with the sequence, in the
snapshot's cached file list (``file_cache``), so later scans of the snapshot reuse them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

from fieldshift.open_tables.source import DataFileEntry, EqualityDeletes, PartitionValue
from fieldshift.table.files.file_cache import Bounds
from fieldshift.table.records import DataFile

__all__ = ["CatalogEntries", "PartitionColumns", "Parts"]

Parts = tuple[tuple[tuple[int, str], ...], tuple[object, ...]]
"""A file's partition values apart: their layout ((source id, transform) each) and the values."""

_I64 = (-(1 << 63), (1 << 63) - 1)


@dataclass(frozen=True)
class PartitionColumns:
    """The files of one partition layout, their partition values as columns: ``positions`` (in the sequence),
    and per layout field the values as int64 with a mask of those that are plain integers (the rest, e.g.
    nulls, strings or values beyond int64, are left to the per-file test)."""

    layout: tuple[tuple[int, str], ...]
    positions: np.ndarray
    ints: tuple[np.ndarray, ...]
    is_int: tuple[np.ndarray, ...]


class CatalogEntries(Sequence[DataFileEntry]):
    """The data files of one snapshot, in scan order, as entries built lazily (``make(i)``) and kept."""

    def __init__(self, data: Sequence[DataFile], make: Callable[[int, tuple[PartitionValue, ...]], DataFileEntry],
                 partition: Callable[[int], tuple[PartitionValue, ...]], listed_at: np.ndarray,
                 column: Callable[[int], Bounds], equality_files: tuple[EqualityDeletes, ...] = (),
                 ids: np.ndarray | None = None, parts: Callable[[int], Parts | None] | None = None) -> None:
        """``data``: the catalog's data files in entry order; ``listed_at``: each one's position in the snapshot's
        file list, which the arrays ``column(field_id)`` gives are aligned with."""
        self.data = tuple(data)
        n = len(self.data)
        self.ids = ids if ids is not None else \
            np.fromiter((-1 if f.file_id is None else f.file_id for f in self.data), np.int64, count=n)
        self.schema_ids = np.fromiter((f.schema_id for f in self.data), np.int64, count=n)
        self.distinct_schema_ids: list[int] = np.unique(self.schema_ids).tolist()  # kept: every scan plans these
        self.listed_at = listed_at
        self.column = column  # one column's statistics of every listed file (loaded once per snapshot)
        self.equality_files = equality_files  # every entry's equality deletes, known without building entries
        self._make, self._partition = make, partition
        self._partitions: list[tuple[PartitionValue, ...] | None] = [None] * n
        self._parts: list[Parts | None] = [None] * n
        self._layouts: dict[tuple[tuple[int, str], ...], tuple[tuple[int, str], ...]] = {}
        self._parts_of = parts  # the source's quick way to them (None for a file: derived from the entry's)
        self._built: list[DataFileEntry | None] = [None] * n
        self._lock = threading.Lock()
        self._where: dict[int, int] | None = None
        self._columns: list[PartitionColumns] | None = None

    def __len__(self) -> int:
        return len(self.data)

    @overload
    def __getitem__(self, i: int) -> DataFileEntry: ...

    @overload
    def __getitem__(self, i: slice) -> list[DataFileEntry]: ...

    def __getitem__(self, i: int | slice) -> DataFileEntry | list[DataFileEntry]:
        if isinstance(i, slice):
            return self.select(range(*i.indices(len(self.data))))
        built = self._built[i]
        if built is None:
            with self._lock:
                built = self._built[i]
                if built is None:
                    built = self._built[i] = self._make(i, self.partition_at(i))
        return built

    def partition_parts(self, i: int) -> Parts:
        """The ``i``-th file's partition values apart: their layout ((source id, transform) each, one shared
        object per distinct layout, so a scan compiles its test once per layout) and the values."""
        found = self._parts[i]
        if found is None and self._parts_of is not None:
            found = self._parts[i] = self._parts_of(i)
        if found is None:
            values = self.partition_at(i)
            layout = tuple((pv.source_id, pv.transform) for pv in values)
            found = self._parts[i] = (self._layouts.setdefault(layout, layout), tuple(pv.value for pv in values))
        return found

    def partition_columns(self) -> list[PartitionColumns]:
        """Every file's partition values as columns, one group per layout (made once: the sequence is kept with
        the snapshot's file list, so later scans test partition values with a few numpy comparisons)."""
        found = self._columns
        if found is None:
            positions: dict[tuple[tuple[int, str], ...], list[int]] = {}
            rows: dict[tuple[tuple[int, str], ...], list[tuple[object, ...]]] = {}
            for i in range(len(self.data)):
                layout, values = self.partition_parts(i)
                positions.setdefault(layout, []).append(i)
                rows.setdefault(layout, []).append(values)
            found = [self._columns_of(layout, np.array(at, np.int64), rows[layout]) for layout, at in positions.items()]
            self._columns = found
        return found

    @staticmethod
    def _columns_of(layout: tuple[tuple[int, str], ...], at: np.ndarray,
                    rows: list[tuple[object, ...]]) -> PartitionColumns:
        ints, is_int = [], []
        for j in range(len(layout)):
            plain = [type(r[j]) is int and _I64[0] <= r[j] <= _I64[1] for r in rows]  # type: ignore[operator]
            is_int.append(np.array(plain, dtype=bool))
            ints.append(np.fromiter((r[j] if ok else 0 for r, ok in zip(rows, plain, strict=True)), np.int64,
                                    count=len(rows)))
        return PartitionColumns(layout, at, tuple(ints), tuple(is_int))

    def partition_at(self, i: int) -> tuple[PartitionValue, ...]:
        """The partition values of the ``i``-th file (what partition pruning needs, without the whole entry)."""
        found = self._partitions[i]
        if found is None:
            found = self._partitions[i] = self._partition(i)
        return found

    def __iter__(self) -> Iterator[DataFileEntry]:
        for i in range(len(self.data)):
            yield self[i]

    def entry_of(self, file_id: int) -> DataFileEntry | None:
        """The entry of the data file ``file_id`` (None: no data file of this snapshot)."""
        if self._where is None:
            self._where = {int(fid): i for i, fid in enumerate(self.ids.tolist())}
        at = self._where.get(file_id)
        return None if at is None else self[at]

    def select(self, positions: Sequence[int] | np.ndarray) -> list[DataFileEntry]:
        """The entries at ``positions`` (built now where not yet)."""
        return [self[int(i)] for i in positions]

"""Which of a snapshot's delete files apply to which data file: the Iceberg spec's "Scan Planning" rules.

- A deletion vector applies to the data file it references when the data file's data sequence number is
  at most the vector's; a data file with a vector ignores position delete files (the vector replaced them).
- A position delete file applies to data files of its partition (spec and values) with a data sequence
  number at most its own; its rows name the data file, so only that file's rows are taken. One that
  names a single data file (``referenced_data_file``, or equal ``file_path`` bounds) is matched by path.
- An equality delete file applies to data files with a data sequence number strictly below its own, in
  its partition, or in every partition when its spec is unpartitioned (a global delete).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from fieldshift.errors import UnsupportedFormatFeatureError
from fieldshift.open_tables.iceberg_manifests import (
    CONTENT_DATA,
    CONTENT_EQUALITY_DELETES,
    CONTENT_POSITION_DELETES,
    ManifestRow,
)
from fieldshift.open_tables.source import DeleteFile, EqualityDeletes

__all__ = ["FILE_PATH_ID", "DeleteIndex"]

FILE_PATH_ID = 2147483546  # the reserved field id of a position delete file's file_path column


def _key(row: ManifestRow) -> tuple[object, ...]:
    return (row.spec_id, *row.partition)


def _referenced(row: ManifestRow) -> str | None:
    """The one data file a position delete file deletes from, when its manifest says so: the v3
    ``referenced_data_file``, or equal lower and upper ``file_path`` bounds (what Iceberg writers record)."""
    if row.referenced_data_file is not None:
        return row.referenced_data_file
    lo = (row.lower_bounds or {}).get(FILE_PATH_ID)
    hi = (row.upper_bounds or {}).get(FILE_PATH_ID)
    if lo is not None and lo == hi:
        try:
            return bytes(lo).decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


@dataclass
class _BySequence:
    """Delete files sorted by data sequence number, for "at least" / "above" lookups."""

    seqs: list[int] = field(default_factory=list)
    rows: list[ManifestRow] = field(default_factory=list)

    def add(self, row: ManifestRow) -> None:
        i = bisect.bisect_right(self.seqs, row.sequence_number)
        self.seqs.insert(i, row.sequence_number)
        self.rows.insert(i, row)

    def from_sequence(self, seq: int, strictly_after: bool) -> list[ManifestRow]:
        i = bisect.bisect_right(self.seqs, seq) if strictly_after else bisect.bisect_left(self.seqs, seq)
        return self.rows[i:]


class DeleteIndex:
    """The delete files of one snapshot, indexed to answer "which apply to this data file" quickly.

    ``unpartitioned(spec_id)`` says whether a spec has no (non-void) fields; ``resolve(path)`` turns a path
    as the manifest writes it into one fieldshift opens."""

    def __init__(self, rows: Iterable[ManifestRow], unpartitioned: Callable[[int], bool],
                 resolve: Callable[[str], str]) -> None:
        self._resolve = resolve
        self._vectors: dict[str, list[ManifestRow]] = {}
        self._positions_by_file: dict[str, _BySequence] = {}
        self._positions_by_partition: dict[tuple[object, ...], _BySequence] = {}
        self._equality_global = _BySequence()
        self._equality_by_partition: dict[tuple[object, ...], _BySequence] = {}
        self.empty = True
        for row in rows:
            if row.content == CONTENT_DATA:
                continue
            self.empty = False
            if row.content == CONTENT_POSITION_DELETES:
                if row.file_format == "puffin":
                    if row.referenced_data_file is None or row.content_offset is None or row.content_size is None:
                        raise UnsupportedFormatFeatureError(
                            f"deletion vector {row.path} has no referenced_data_file/content_offset/"
                            "content_size_in_bytes in its manifest; fieldshift cannot tell which rows it deletes")
                    self._vectors.setdefault(row.referenced_data_file, []).append(row)
                elif row.file_format != "parquet":
                    raise UnsupportedFormatFeatureError(
                        f"position delete file {row.path} is {row.file_format.upper()}; fieldshift reads Parquet "
                        "position deletes and Puffin deletion vectors")
                elif (target := _referenced(row)) is not None:
                    self._positions_by_file.setdefault(target, _BySequence()).add(row)
                else:
                    self._positions_by_partition.setdefault(_key(row), _BySequence()).add(row)
            elif row.content == CONTENT_EQUALITY_DELETES:
                if row.file_format != "parquet":
                    raise UnsupportedFormatFeatureError(
                        f"equality delete file {row.path} is {row.file_format.upper()}; fieldshift reads Parquet "
                        "equality deletes")
                if not row.equality_ids:
                    raise UnsupportedFormatFeatureError(
                        f"equality delete file {row.path} names no equality_ids; its rows cannot be matched")
                target = self._equality_global if unpartitioned(row.spec_id) else \
                    self._equality_by_partition.setdefault(_key(row), _BySequence())
                target.add(row)
            else:
                raise UnsupportedFormatFeatureError(f"manifest entry {row.path} has content {row.content}, which "
                                                    "is none of data (0), position deletes (1), equality deletes (2)")

    def position_deletes(self, data: ManifestRow) -> tuple[DeleteFile, ...]:
        """The deletion vector of ``data``, else the position delete files that may name it (a vector or a
        delete file that names one data file is matched by that path alone)."""
        vectors = [v for v in self._vectors.get(data.path, ()) if v.sequence_number >= data.sequence_number]
        if vectors:
            return tuple(DeleteFile(self._resolve(v.path), "puffin", v.record_count, data_file_path=data.path,
                                    offset=v.content_offset, length=v.content_size) for v in vectors)
        found = []
        for group in (self._positions_by_file.get(data.path), self._positions_by_partition.get(_key(data))):
            if group is None:
                continue
            for row in group.from_sequence(data.sequence_number, strictly_after=False):
                found.append(DeleteFile(self._resolve(row.path), "parquet", row.record_count,
                                        data_file_path=data.path))
        return tuple(found)

    def equality_deletes(self, data: ManifestRow) -> tuple[EqualityDeletes, ...]:
        """The equality delete files newer than ``data`` in its partition, and the global ones."""
        rows = self._equality_global.from_sequence(data.sequence_number, strictly_after=True)
        local = self._equality_by_partition.get(_key(data))
        if local is not None:
            rows = rows + local.from_sequence(data.sequence_number, strictly_after=True)
        return tuple(EqualityDeletes(self._resolve(r.path), tuple(r.equality_ids or ()), r.sequence_number,
                                     r.record_count, r.file_format) for r in rows)

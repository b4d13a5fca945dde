"""Helpers for tests that compare a scan fast path with its switch off: a data file's path on disk, and the
error a broken table gives with each setting of a pipeline switch."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

import fieldshift as fs
from fieldshift.errors import DataFileError
from fieldshift.table.records import DataFile

__all__ = ["data_path", "errors_by_switch"]


def data_path(table: fs.Table, f: DataFile) -> Path:
    """Where ``f`` lies (a catalog path is relative to the table's location unless absolute)."""
    path = Path(f.path)
    return path if path.is_absolute() else Path(table.location) / path


def errors_by_switch(table: fs.Table, switch: str, values: Sequence[object]) -> list[str]:
    """The ``DataFileError`` message of a whole scan of ``table`` with its pipeline's ``switch`` set to each of
    ``values`` in turn (the scan must fail every time)."""
    messages = []
    for value in values:
        scan = table.scan()
        setattr(scan.pipeline(), switch, value)
        with pytest.raises(DataFileError) as e:
            scan.to_arrow()
        messages.append(str(e.value))
    return messages

"""Reading landing-directory files, each with its own schema: JSON and CSV inferred by pyarrow (every
integer as int64), Parquet and Avro with the exact types they carry (Avro through fastavro)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pyarrow as pa

from fieldshift.errors import DataFileError, InvalidOptionError
from fieldshift.options import check_option

__all__ = ["EXTENSIONS", "INFERRED", "CaptureFormat", "SourceFile", "fit_inferred", "format_of", "list_source_files",
           "read_source_file"]

CaptureFormat = Literal["json", "csv", "parquet", "avro"]
"""The formats a capture reads (newline-delimited JSON)."""
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "json": (".json", ".jsonl", ".ndjson"), "csv": (".csv",), "parquet": (".parquet",), "avro": (".avro",)}

INFERRED = ("json", "csv")
"""Formats whose types pyarrow guesses (every integer int64, every fraction double)."""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file seen in the landing directory: absolute path, size and modification time when listed."""

    path: Path
    size: int
    mtime_ns: int


def list_source_files(folder: Path, fmt: CaptureFormat | None) -> list[SourceFile]:
    """The format's files (any format's, if None) directly in ``folder``, oldest first; names starting
    with '.' or '_' are skipped (files being written, markers such as _SUCCESS), so land files by
    renaming them in."""
    if fmt is not None:
        check_option("format", fmt, CaptureFormat)
    suffixes = EXTENSIONS[fmt] if fmt is not None else tuple(x for xs in EXTENSIONS.values() for x in xs)
    if not folder.is_dir():
        raise DataFileError(f"landing directory {folder} does not exist (or is not a directory)")
    found = []
    with os.scandir(folder) as entries:
        for e in entries:
            if e.name.startswith((".", "_")) or not e.name.lower().endswith(suffixes) or not e.is_file():
                continue
            st = e.stat()
            found.append(SourceFile(Path(e.path).resolve(), st.st_size, st.st_mtime_ns))
    return sorted(found, key=lambda f: (f.mtime_ns, f.path.name))


def read_source_file(path: Path, fmt: CaptureFormat) -> list[pa.Table]:
    """One file as Arrow tables in its own schema: one table, or for JSON whose records disagree on a
    column's type (pyarrow infers one type per column), one per kind of record. An unreadable file
    raises DataFileError naming it."""
    try:
        if fmt == "json":
            import pyarrow.json as pj

            try:
                return [pj.read_json(path)]
            except pa.ArrowInvalid:
                return _json_by_record_kind(path)
        if fmt == "csv":
            import pyarrow.csv as pc

            return [pc.read_csv(path)]
        if fmt == "parquet":
            import pyarrow.parquet as pq

            data = pq.read_table(path)
            return [data.cast(_plain(data.schema))]
        if fmt == "avro":
            return [_read_avro(path)]
    except (OSError, pa.ArrowInvalid, ValueError, TypeError) as e:
        raise DataFileError(f"cannot read {fmt} file {path}: {e}; move it out of the landing directory "
                            "(or fix it) and capture again") from None
    raise InvalidOptionError(f"format must be one of {sorted(EXTENSIONS)}, got {fmt!r}")


def _json_by_record_kind(path: Path) -> list[pa.Table]:
    """Newline-delimited JSON whose records give a column different types: cut into runs of consecutive
    records of one (name, JSON type) signature, each run inferred by pyarrow on its own. Runs, not one
    group per signature: the tables keep the file's record order, so of an upsert's rows of one key the
    last line wins."""
    import json

    import pyarrow.json as pj

    runs: list[tuple[tuple[tuple[str, str], ...], list[str]]] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError(f"a line holds {type(record).__name__}, not a JSON object")
                key = tuple(sorted((k, _json_kind(v)) for k, v in record.items()))
                if not runs or runs[-1][0] != key:
                    runs.append((key, []))
                runs[-1][1].append(line if line.endswith("\n") else line + "\n")
    return [pj.read_json(pa.BufferReader("".join(lines).encode())) for _, lines in runs]


def _json_kind(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_json_kind(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[" + ",".join(sorted({_json_kind(v) for v in value})) + "]"
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    return "number" if isinstance(value, int | float) else type(value).__name__


def _read_avro(path: Path) -> pa.Table:
    try:
        import fastavro
    except ImportError:
        raise DataFileError(f"reading the Avro file {path} needs fastavro: pip install 'fieldshift[avro]'") from None

    from fieldshift.avro_read import schema_from_avro

    with open(path, "rb") as fh:
        reader = fastavro.reader(fh)
        schema = _plain(schema_from_avro(reader.writer_schema, assign_ids=True).to_arrow())
        return pa.Table.from_pylist(list(reader), schema=schema)


def _plain(schema: pa.Schema) -> pa.Schema:
    """The file's columns by name only: ids another writer gave them mean nothing to this table."""
    def clean(t: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(t):
            return pa.struct([pa.field(f.name, clean(f.type), f.nullable) for f in t])
        if pa.types.is_large_list(t):
            return pa.large_list(pa.field(t.value_field.name, clean(t.value_type), t.value_field.nullable))
        if pa.types.is_list(t):
            return pa.list_(pa.field(t.value_field.name, clean(t.value_type), t.value_field.nullable))
        if pa.types.is_map(t):
            return pa.map_(t.key_type, pa.field(t.item_field.name, clean(t.item_type), t.item_field.nullable))
        return t

    return pa.schema([pa.field(f.name, clean(f.type), f.nullable) for f in schema])


def format_of(path: Path) -> CaptureFormat:
    """A file's format by its extension (list_source_files lists only known ones)."""
    suffix = path.suffix.lower()
    for fmt, extensions in EXTENSIONS.items():
        if suffix in extensions:
            return fmt  # type: ignore[return-value]
    raise InvalidOptionError(f"{path.name}: no capture format reads {suffix!r} files; pass format=")


def fit_inferred(data: pa.Table, table_types: dict[str, pa.DataType]) -> pa.Table:
    """Guessed top-level number columns in the table's narrower number type where every value fits
    exactly, so JSON's int64 does not widen an int column whose values are small; a column whose
    values do not fit keeps its guessed type and widens the table, as it should."""
    import pyarrow.compute as pc

    for i, f in enumerate(data.schema):
        target = table_types.get(f.name)
        if target is None or target == f.type or not (pa.types.is_integer(f.type) or pa.types.is_floating(f.type)):
            continue
        if not (pa.types.is_integer(target) or pa.types.is_floating(target)):
            continue
        try:
            cast = pc.cast(data.column(i), target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        if pa.types.is_floating(f.type) and pa.types.is_integer(target):
            continue  # 1.5 -> 1 is refused by a safe cast, but 1.0 -> 1 loses that it was a fraction
        data = data.set_column(i, pa.field(f.name, target, f.nullable), cast)
    return data

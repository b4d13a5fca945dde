"""Reading landing-directory and input files, each with its own schema: Parquet and Avro with the exact
types they carry (Avro through fastavro), JSON and CSV with types pyarrow infers, except where the
target table or the caller says what a column is.

How CSV and JSON types are decided, column by column (top-level columns):

1. a type the caller pins (``types={"zip": "string"}``, on the command line ``--type zip=string``);
2. else, when the target table holds the column as text (string) — or, for CSV, as binary — the text
   exactly as written: ``"007"`` stays ``"007"`` and ``"02134"`` and ``"2134"`` stay two keys;
3. else pyarrow's inference: CSV columns are null, int64, double, bool, date32, timestamp or string (the
   first that fits every value); JSON numbers are int64 or double, strings stay strings unless every
   value looks like a timestamp, objects are structs, arrays lists. Guessed numbers are then fitted to
   the table's narrower number type where every value fits.

Which CSV texts read as null: by default, in columns read as anything but text, an empty field and
pyarrow's list ``DEFAULT_NULL_VALUES`` (``NA``, ``N/A``, ``n/a``, ``NULL``, ``null``, ``NaN``, ``nan``,
``#N/A``, ...); in text columns none (an empty field is ``""``). ``null_values=[...]`` (``--null-values``)
replaces that list and applies it to every unquoted field, text columns too (a quoted field is a value:
``null_values=[""]`` reads an empty field as null and ``""`` as the empty string, so a CSV that
``fieldshift read --format csv`` wrote reads back exactly); ``null_values=[]`` reads no text as null.
JSON has its own ``null``.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from fieldshift.errors import DataFileError, InvalidOptionError
from fieldshift.options import check_option
from fieldshift.schema.type_names import parse_primitive, primitive_name

__all__ = ["DEFAULT_NULL_VALUES", "EXTENSIONS", "INFERRED", "CaptureFormat", "SourceFile", "fit_inferred",
           "fit_to_table", "format_of", "list_source_files", "pinned_types", "read_file", "read_source_file"]

CaptureFormat = Literal["json", "csv", "parquet", "avro"]
"""The formats a capture reads (newline-delimited JSON)."""
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "json": (".json", ".jsonl", ".ndjson"), "csv": (".csv",), "parquet": (".parquet",), "avro": (".avro",)}

INFERRED = ("json", "csv")
"""Formats whose types pyarrow guesses (every integer int64, every fraction double)."""

DEFAULT_NULL_VALUES: tuple[str, ...] = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "N/A", "NA", "NULL",
    "NaN", "n/a", "nan", "null")
"""The CSV texts that read as null by default, in columns read as anything but text (pyarrow's list)."""

_CAPTURE_ADVICE = "move it out of the landing directory (or fix it) and capture again"


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


def read_source_file(path: Path, fmt: CaptureFormat, *, like: Mapping[str, pa.DataType] | None = None,
                     types: Mapping[str, pa.DataType] | None = None, null_values: Sequence[str] | None = None,
                     advice: str = _CAPTURE_ADVICE) -> list[pa.Table]:
    """One file as Arrow tables in its own schema: one table, or for JSON whose records disagree on a
    column's type (pyarrow infers one type per column), one per kind of record. ``like`` holds the
    target table's top-level types (text columns are read as text), ``types`` the caller's pinned types
    and ``null_values`` the CSV texts that read as null (see the module's docstring); both apply to CSV
    and JSON only. An unreadable file raises DataFileError naming it (and ``advice``)."""
    like, types = like or {}, types or {}
    try:
        if fmt == "json":
            text = {n for n, t in like.items() if _is_string(t) and n not in types}
            text |= {n for n, t in types.items() if _is_string(t)}
            return [_cast_pinned(t, types, path) for t in _read_json(path, text)]
        if fmt == "csv":
            return [_read_csv(path, like, types, null_values)]
        if fmt == "parquet":
            import pyarrow.parquet as pq

            data = pq.read_table(path)
            return [data.cast(_plain(data.schema))]
        if fmt == "avro":
            return [_read_avro(path)]
    except (OSError, pa.ArrowInvalid, ValueError, TypeError) as e:
        raise DataFileError(f"cannot read {fmt} file {path}: {_located(e, path, fmt)}; {advice}") from None
    raise InvalidOptionError(f"format must be one of {sorted(EXTENSIONS)}, got {fmt!r}")


def _is_string(t: pa.DataType) -> bool:
    return isinstance(t, pa.DataType) and (pa.types.is_string(t) or pa.types.is_large_string(t)
                                           or pa.types.is_string_view(t))


def _is_binary(t: pa.DataType) -> bool:
    return isinstance(t, pa.DataType) and (pa.types.is_binary(t) or pa.types.is_large_binary(t)
                                           or pa.types.is_binary_view(t))


def _read_csv(path: Path, like: Mapping[str, pa.DataType], types: Mapping[str, pa.DataType],
              null_values: Sequence[str] | None) -> pa.Table:
    """CSV with the table's text columns as text and the pinned types (pyarrow converts as it reads)."""
    import pyarrow.csv as pacsv

    column_types: dict[str, pa.DataType] = {}
    for name, t in like.items():
        if _is_string(t):
            column_types[name] = pa.string()
        elif _is_binary(t):
            column_types[name] = pa.binary()
    column_types.update(types)
    if null_values is None:
        nulls: dict[str, Any] = {"null_values": list(DEFAULT_NULL_VALUES), "strings_can_be_null": False}
    else:
        nulls = {"null_values": list(null_values), "strings_can_be_null": True, "quoted_strings_can_be_null": False}
    return pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=column_types, **nulls))


def _located(error: Exception, path: Path, fmt: str) -> str:
    """pyarrow's message, with the CSV column it counts from 0 (``In CSV column #2``) named."""
    import re

    text = str(error)
    found = re.search(r"In CSV column #(\d+)", text) if fmt == "csv" else None
    if found is None:
        return text
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            header = next(csv.reader(fh))
        name = header[int(found.group(1))]
    except (OSError, StopIteration, IndexError, UnicodeDecodeError, csv.Error):
        return text
    return f"column {name!r}: {text}"


def _read_json(path: Path, text: set[str]) -> list[pa.Table]:
    import pyarrow.json as pj

    try:
        data = pj.read_json(path)
    except pa.ArrowInvalid:
        return _json_by_record_kind(path, text)
    return [_json_text_kept(data, lambda: pj.read_json(path, parse_options=_text_schema(data, text)), text)]


def _text_schema(data: pa.Table, text: set[str]) -> Any:
    import pyarrow.json as pj

    schema = pa.schema([(f.name, pa.string()) for f in data.schema if f.name in text and pa.types.is_timestamp(f.type)])
    return pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")


def _json_text_kept(data: pa.Table, read_as_text: Any, text: set[str]) -> pa.Table:
    """``data``, read again with the text columns as strings where pyarrow made timestamps of them (its
    JSON reader turns strings that all look like timestamps into timestamps); the file's column order."""
    if not any(n in text and pa.types.is_timestamp(data.schema.field(n).type) for n in data.column_names):
        return data
    return read_as_text().select(data.column_names)


def _cast_pinned(data: pa.Table, types: Mapping[str, pa.DataType], path: Path) -> pa.Table:
    """JSON values in the pinned types (JSON's own types decide what pyarrow reads: a number pinned as
    string is cast to its text, a string pinned as a date parsed)."""
    import pyarrow.compute as pc

    for name, target in types.items():
        i = data.schema.get_field_index(name)
        if i < 0 or data.schema.field(i).type == target:
            continue
        try:
            column = pc.cast(data.column(i), target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise ValueError(f"column {name!r} ({data.schema.field(i).type}) does not read as the pinned type "
                             f"{primitive_name(target)}: {e}") from None
        data = data.set_column(i, pa.field(name, target), column)
    return data


def pinned_types(types: Mapping[str, pa.DataType | str] | None) -> dict[str, pa.DataType]:
    """``types=`` as Arrow types: each value an Arrow type or a type name (``string``, ``bigint``,
    ``decimal(10,2)``, ``date``, ...); a name that is no primitive type raises InvalidOptionError."""
    pinned: dict[str, pa.DataType] = {}
    for name, t in (types or {}).items():
        if isinstance(t, str):
            try:
                t = parse_primitive(t)
            except ValueError as e:
                raise InvalidOptionError(f"the type pinned for column {name!r}: {e}") from None
        if not isinstance(t, pa.DataType) or pa.types.is_nested(t):
            raise InvalidOptionError(f"the type pinned for column {name!r} must be a primitive type (a name such as "
                                     f"'string' or 'decimal(10,2)', or an Arrow type), got {t!r}")
        pinned[name] = t
    return pinned


def _json_by_record_kind(path: Path, text: set[str]) -> list[pa.Table]:
    """Newline-delimited JSON whose records give a column different types: cut into runs of consecutive
    records of one (name, JSON type) signature, each run inferred by pyarrow on its own (``text``
    columns holding strings kept as text). Runs, not one group per signature: the tables keep the
    file's record order, so of an upsert's rows of one key the last line wins."""
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
    tables = []
    for _, lines in runs:
        body = "".join(lines).encode()
        data = pj.read_json(pa.BufferReader(body))
        tables.append(_json_text_kept(
            data, lambda b=body, d=data: pj.read_json(pa.BufferReader(b), parse_options=_text_schema(d, text)), text))
    return tables


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

    from fieldshift.schema.formats.avro import schema_from_avro

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


def fit_inferred(data: pa.Table, table_types: Mapping[str, pa.DataType], pinned: Collection[str] = ()) -> pa.Table:
    """Guessed top-level number columns in the table's narrower number type where every value fits
    exactly, so JSON's int64 does not widen an int column whose values are small; a column whose
    values do not fit keeps its guessed type and widens the table, as it should. ``pinned`` columns
    (the caller's ``types=``) keep the type they were read in."""
    import pyarrow.compute as pc

    for i, f in enumerate(data.schema):
        target = None if f.name in pinned else table_types.get(f.name)
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


def _fitted_type(guessed: pa.DataType, target: pa.DataType) -> pa.DataType:
    """``guessed`` with each leaf the table also has replaced by the table's type (names kept)."""
    T = pa.types
    if T.is_struct(guessed) and T.is_struct(target):
        by_name = {target.field(i).name: target.field(i) for i in range(target.num_fields)}
        children = []
        for i in range(guessed.num_fields):
            g = guessed.field(i)
            t = by_name.get(g.name)
            children.append(g.with_type(_fitted_type(g.type, t.type)) if t is not None else g)
        return pa.struct(children)
    if T.is_list(guessed) and (T.is_list(target) or T.is_large_list(target)):
        return pa.list_(guessed.value_field.with_type(_fitted_type(guessed.value_type, target.value_type)))
    if T.is_nested(guessed) or T.is_nested(target):
        return guessed
    return target


def fit_to_table(data: pa.Table, schema: pa.Schema, pinned: Collection[str] = ()) -> pa.Table:
    """Guessed types (every integer int64) in the table's types, at any depth, wherever every value
    converts exactly; otherwise a CSV of small numbers would widen an ``int`` column to ``long``. A
    column whose values do not fit keeps its guessed type, so on-write evolution still widens or
    quarantines it as it should; ``pinned`` columns keep the type they were read in."""
    import pyarrow.compute as pc

    columns = []
    for name, column in zip(data.column_names, data.columns, strict=True):
        i = schema.get_field_index(name) if name not in pinned else -1
        target = _fitted_type(column.type, schema.field(i).type) if i >= 0 else column.type
        if target != column.type:
            try:
                column = pc.cast(column, target, safe=True)
            except (pa.ArrowException, NotImplementedError):
                pass
        columns.append(column)
    return pa.table(columns, names=data.column_names)


def read_file(path: str | os.PathLike[str], format: CaptureFormat | None = None, *, like: Any = None,
              types: Mapping[str, pa.DataType | str] | None = None,
              null_values: Sequence[str] | None = None) -> pa.Table:
    """Read a CSV, JSON (one object per line), Parquet or Avro file the way ``fieldshift append`` does,
    ready for ``table.append`` / ``table.upsert``.

    ``like`` (a Table, a fieldshift Schema or an Arrow schema: the target) decides the types of CSV and
    JSON columns the table already has: text columns are read as text exactly as written, guessed
    numbers take the table's narrower types where every value fits. ``types`` pins columns
    (``{"zip": "string", "amount": "decimal(10,2)"}``) and ``null_values`` lists the CSV texts read as
    null; see ``fieldshift.table.streams.capture_read`` for every rule. Both apply to CSV and JSON only (JSON has
    no null texts): with a Parquet or Avro file they raise InvalidOptionError.
    """
    source = Path(path)
    fmt = format or format_of(source)
    check_option("format", fmt, CaptureFormat)
    pinned = pinned_types(types)
    if fmt not in INFERRED and (pinned or null_values is not None):
        raise InvalidOptionError(f"types= and null_values= apply to CSV and JSON files; {source.name} is {fmt}, "
                                 "which carries its own types")
    if fmt == "json" and null_values is not None:
        raise InvalidOptionError(f"null_values= applies to CSV files; JSON ({source.name}) writes null itself")
    target = _arrow_schema(like)
    tables = read_source_file(source, fmt, like={f.name: f.type for f in target} if target is not None else None,
                              types=pinned, null_values=null_values, advice="fix it and try again")
    if len(tables) == 1:
        data = tables[0]
    else:
        try:
            data = pa.concat_tables(tables, promote_options="permissive")
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            raise DataFileError(f"the records of {source} give a column different JSON types ({e}); pin the "
                                "column's type (types=, --type COL=TYPE), or capture the file "
                                "(fieldshift capture), which reads each kind of record on its own") from None
    if fmt in INFERRED and target is not None:
        data = fit_to_table(data, target, pinned)
    return data


def _arrow_schema(like: Any) -> pa.Schema | None:
    if like is None or isinstance(like, pa.Schema):
        return like
    schema = getattr(like, "schema", like)  # a Table: its current schema
    return schema.to_arrow() if hasattr(schema, "to_arrow") else schema

"""Spark's own Parquet scans for the files ``fieldshift.spark.read`` reads natively, as few as is exact.

Each schema id's scan requests the read columns under the names *its files* use (with their
``parquet.field.id``), so the answer is the same whether ``spark.sql.parquet.fieldId.read.enabled``
is on or off when the DataFrame runs; a projection renames them into the read schema.

Schema ids whose requests differ only in top-level names (a column renamed between versions) share
one scan: the scan requests every name the column had (``name`` and ``full_name``), by name only,
and the projection takes ``coalesce(full_name, name)``. That is exact because each file holds the
column under exactly one of those names and no file has another column under any of them (checked
against every file schema of the scan, dropped columns included); columns with several names must
be present in all of the scan's files, so no default is involved. Nested renames keep a scan each.
One scan instead of one per rename saves Spark a relation, a file index and tasks.

Files without field ids (``by_name``: another format's files that its name mapping resolves) are
requested without ``parquet.field.id`` at any depth, so Spark matches them by name even with field-id
reads on (it refuses a request with ids on a file without any); they never share a scan with files
read by id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fieldshift.schema.field import Field
from fieldshift.schema.model import Schema
from fieldshift.schema.partner_visitor import PartnerVisitor, visit_level

__all__ = ["NativeScan", "native_frame", "native_scans"]

_GLOB = str.maketrans({c: "\\" + c for c in "*?[]{}\\"})
_ID_KEY = "parquet.field.id"


@dataclass
class NativeScan:
    """One Spark Parquet scan: per read column the names its files use, the request, the paths."""

    schema_ids: list[int]
    names: list[list[str]]  # per read column: every name it has in this scan's files (read order)
    request: list[Any]  # per read column: the StructField requested under names[i][0] (one scan id)
    paths: list[str] = field(default_factory=list)
    by_name: bool = False  # requested without field ids

    @property
    def merged(self) -> bool:
        return any(len(n) > 1 for n in self.names)


def hadoop_path(path: Path) -> str:
    """A local path Spark will not expand as a glob."""
    return str(path).translate(_GLOB)


def native_scans(location: Path, files: Sequence[Any], schemas: dict[int, Schema], read_schema: Schema,
                 spark_read: Any) -> list[NativeScan]:
    """The scans for ``files`` (all natively readable), schema ids merged where that stays exact."""
    by_sid: dict[int, NativeScan] = {}
    for f in files:
        if f.schema_id not in by_sid:
            request = visit_level(_Request(), read_schema.fields, schemas[f.schema_id].fields, spark_read)
            by_name = bool(getattr(f, "by_name", False))
            if by_name:
                request = [_no_ids(r) for r in request]
            by_sid[f.schema_id] = NativeScan([f.schema_id], [[r.name] for r in request], request, by_name=by_name)
        by_sid[f.schema_id].paths.append(hadoop_path(location / f.path))
    scans: list[NativeScan] = []
    for one in sorted(by_sid.values(), key=lambda s: -len(s.paths)):
        target = next((s for s in scans if _mergeable(s, one, schemas, read_schema)), None)
        if target is None:
            scans.append(one)
        else:
            _merge(target, one)
    return scans


def _mergeable(into: NativeScan, other: NativeScan, schemas: dict[int, Schema], read_schema: Schema) -> bool:
    if into.by_name != other.by_name:
        return False
    sids = into.schema_ids + other.schema_ids
    owner: dict[str, int] = {}  # requested name (lower case) -> read column index
    for i, rf in enumerate(read_schema.fields):
        if into.request[i].dataType != other.request[i].dataType:
            return False  # nested names differ: a scan of its own
        names = _union(into.names[i], other.names[i])
        if len(names) > 1 and not all(_top_level_ids(schemas[s]).get(rf.id) for s in sids):
            return False  # missing from some file: its default would mask the other name
        for name in names:
            if owner.setdefault(name.lower(), i) != i:
                return False  # one name for two columns
            for s in sids:
                held = _names_to_ids(schemas[s]).get(name.lower())
                if held is not None and held != rf.id:
                    return False  # a file has another column under this name
    return True


def _merge(into: NativeScan, other: NativeScan) -> None:
    into.schema_ids += other.schema_ids
    into.names = [_union(a, b) for a, b in zip(into.names, other.names, strict=True)]
    into.paths += other.paths


def _union(a: list[str], b: list[str]) -> list[str]:
    return a + [n for n in b if n not in a]


def _top_level_ids(schema: Schema) -> dict[int, str]:
    return {f.id: f.name for f in schema.fields}


def _names_to_ids(schema: Schema) -> dict[str, int]:
    return {f.name.lower(): f.id for f in schema.fields}


def native_frame(spark: Any, spark_schema: Any, scan: NativeScan) -> Any:
    """The scan's DataFrame in the read schema (renamed, and coalesced where a column has two names)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st

    fields = []
    for req, names in zip(scan.request, scan.names, strict=True):
        if len(names) == 1:
            fields.append(req)
        else:  # by name only: no id (two names, one id) and no default (present in every file)
            fields += [st.StructField(n, req.dataType, True, _without_id(req.metadata)) for n in names]
    requested = st.StructType(fields)
    df = spark.read.schema(requested).parquet(*scan.paths)
    if requested == spark_schema:
        return df
    if not scan.merged and not scan.by_name and all(r.dataType == w.dataType for r, w
                                                    in zip(fields, spark_schema.fields, strict=True)):
        return df.toDF(*spark_schema.names)  # top-level renames only: one call, metadata kept
    columns = []
    for req, want, names in zip(scan.request, spark_schema.fields, scan.names, strict=True):
        if len(names) == 1 and req == want:  # the read name, type and metadata: as it is
            columns.append(F.col(_quote(req.name)))
            continue
        cols = [F.col(_quote(n)) for n in names]
        col = cols[0] if len(cols) == 1 else F.coalesce(*cols)
        if req.dataType != want.dataType:
            col = col.cast(want.dataType)  # a struct/array/map cast is positional: it only renames
        columns.append(col.alias(want.name, metadata=want.metadata))
    return df.select(*columns)


def _without_id(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k not in (_ID_KEY, "EXISTS_DEFAULT", "CURRENT_DEFAULT")}


def _no_ids(sf: Any) -> Any:
    """A requested StructField without field ids, at any depth."""
    from pyspark.sql import types as st

    def strip(t: Any) -> Any:
        if isinstance(t, st.StructType):
            return st.StructType([_no_ids(x) for x in t.fields])
        if isinstance(t, st.ArrayType):
            return st.ArrayType(strip(t.elementType), t.containsNull)
        if isinstance(t, st.MapType):
            return st.MapType(strip(t.keyType), strip(t.valueType), t.valueContainsNull)
        return t

    return st.StructField(sf.name, strip(sf.dataType), sf.nullable,
                          {k: v for k, v in sf.metadata.items() if k != _ID_KEY})  # defaults kept


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class _Request(PartnerVisitor[Any, Any]):
    """The read schema in Spark form (the context: a StructField, or the type of a list element or
    map entry) under the names the file uses, at every struct depth; read fields the file lacks keep
    their read names (PyIceberg's walk: on without a partner)."""

    descend_missing = True
    wraps_fields = True

    def __init__(self) -> None:
        from pyspark.sql import types as st

        self.st = st

    def field_contexts(self, ctx: Any, read_fields: tuple[Field, ...]) -> Any:
        return _spark_type(ctx).fields

    def element_context(self, ctx: Any, rf: Field) -> Any:
        return _spark_type(ctx).elementType

    def key_context(self, ctx: Any, rf: Field) -> Any:
        return _spark_type(ctx).keyType

    def value_context(self, ctx: Any, rf: Field) -> Any:
        return _spark_type(ctx).valueType

    def field(self, rf: Field, ff: Field | None, ctx: Any, result: Any) -> Any:
        if isinstance(ctx, self.st.StructField):
            return self.st.StructField(ff.name if ff is not None else rf.name, result, ctx.nullable, ctx.metadata)
        return result

    def primitive(self, rf: Field, ff: Field | None, index: int, ctx: Any) -> Any:
        return _spark_type(ctx)

    def struct(self, rf: Field, ff: Field | None, index: int, ctx: Any, children: list[Any]) -> Any:
        return self.st.StructType(children)

    def list(self, rf: Field, ff: Field | None, index: int, ctx: Any, element: Any) -> Any:
        return self.st.ArrayType(element, _spark_type(ctx).containsNull)

    def map(self, rf: Field, ff: Field | None, index: int, ctx: Any, key: Any, value: Any) -> Any:
        return self.st.MapType(key, value, _spark_type(ctx).valueContainsNull)


def _spark_type(ctx: Any) -> Any:
    """The Spark type of a context: a StructField's type, or the type itself."""
    return getattr(ctx, "dataType", ctx)

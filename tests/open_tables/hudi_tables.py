"""Hand-written Hudi tables (table version 6, copy-on-write) for tests no peer here can write.

No Hudi writer runs on these machines (Hudi writes through Spark or Flink on a JVM), yet schema evolution
needs tables whose commits changed the schema between writes. ``HudiTableWriter`` lays such a table out
as Hudi 0.14 does: ``.hoodie/hoodie.properties``, one ``<instant>.commit`` JSON per commit (its write
statistics and ``extraMetadata.schema``, plus ``latestSchema`` and ``.hoodie/.schema/<instant>.schemacommit``
when the table keeps Hudi's internal schema), and base files ``<file id>_<token>_<instant>.parquet`` with
Hudi's meta columns first. hudi-rs reads them like the tables Hudi wrote.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["SAMPLES", "HudiTableWriter", "avro_record", "internal_record", "unzip_sample"]

SAMPLES = Path(__file__).parents[1] / "conformance" / "data" / "hudi"  # hudi-rs' sample tables (see NOTICE there)

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")


def avro_record(name: str, fields: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """A writer's Avro record schema with nullable fields (``("score", "long")``)."""
    return {"type": "record", "name": f"{name}_record", "namespace": f"hoodie.{name}",
            "fields": [{"name": n, "type": ["null", t], "default": None} for n, t in fields]}


def internal_record(version: int, fields: Sequence[tuple[int, str, str]]) -> dict[str, Any]:
    """Hudi's internal schema JSON (``SerDeHelper``): meta columns with ids 0-4, then ``(id, name, type)``."""
    all_fields = [{"id": i, "name": m, "optional": True, "type": "string"} for i, m in enumerate(META)]
    all_fields += [{"id": i, "name": n, "optional": True, "type": t} for i, n, t in fields]
    return {"max_column_id": max(f["id"] for f in all_fields), "version-id": version, "type": "record",
            "fields": all_fields}


class HudiTableWriter:
    """Writes one Hudi table at ``path``: call ``commit`` once per instant, oldest first."""

    def __init__(self, path: Path, name: str, *, partition_field: str | None = None, hive_style: bool = True,
                 properties: dict[str, str] | None = None) -> None:
        self.path, self.name, self.partition_field, self.hive_style = Path(path), name, partition_field, hive_style
        hoodie = self.path / ".hoodie"
        (hoodie / "archived").mkdir(parents=True)
        props = {
            "hoodie.table.name": name,
            "hoodie.table.type": "COPY_ON_WRITE",
            "hoodie.table.version": "6",
            "hoodie.timeline.layout.version": "1",
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.recordkey.fields": "id",
            "hoodie.table.base.file.format": "PARQUET",
            "hoodie.datasource.write.hive_style_partitioning": "true" if hive_style else "false",
            "hoodie.table.keygenerator.class": "org.apache.hudi.keygen." +
            ("SimpleKeyGenerator" if partition_field else "NonpartitionedKeyGenerator"),
        }
        if partition_field:
            props["hoodie.table.partition.fields"] = partition_field
        props.update(properties or {})
        (hoodie / "hoodie.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.history: list[dict[str, Any]] = []  # internal schema versions, newest first

    def commit(self, instant: str, schema: dict[str, Any], files: dict[str, pa.Table], *,
               internal: dict[str, Any] | None = None, operation: str = "UPSERT",
               file_ids: dict[str, str] | None = None) -> list[str]:
        """Write ``files`` (partition path -> rows in the writer's schema; a new file group each, or the
        group ``file_ids[partition]`` names) as one commit at ``instant``. Returns the base files' paths."""
        stats: dict[str, list[dict[str, Any]]] = {}
        written = []
        for partition, rows in files.items():
            file_id = (file_ids or {}).get(partition) or f"fg-{instant}-{len(written)}"
            file_name = f"{file_id}_0-1-0_{instant}.parquet"
            rel = f"{partition}/{file_name}" if partition else file_name
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if partition and not (target.parent / ".hoodie_partition_metadata").exists():
                (target.parent / ".hoodie_partition_metadata").write_text(
                    f"#partition metadata\ncommitTime={instant}\npartitionDepth={partition.count('/') + 1}\n")
            n = rows.num_rows
            meta = {
                "_hoodie_commit_time": [instant] * n,
                "_hoodie_commit_seqno": [f"{instant}_0_{i}" for i in range(n)],
                "_hoodie_record_key": [str(v) for v in rows.column("id").to_pylist()],
                "_hoodie_partition_path": [partition] * n,
                "_hoodie_file_name": [file_name] * n,
            }
            table = pa.table({**{k: pa.array(v, pa.string()) for k, v in meta.items()},
                              **{c: rows.column(c) for c in rows.column_names}})
            pq.write_table(table, target)
            size = target.stat().st_size
            stats.setdefault(partition, []).append({
                "fileId": file_id, "path": rel, "prevCommit": "null", "numWrites": n, "numDeletes": 0,
                "numUpdateWrites": 0, "numInserts": n, "totalWriteBytes": size, "totalWriteErrors": 0,
                "partitionPath": partition, "fileSizeInBytes": size})
            written.append(str(target))
        extra = {"schema": json.dumps(schema)}
        if internal is not None:
            extra["latestSchema"] = json.dumps(internal)
            self.history.insert(0, internal)
            folder = self.path / ".hoodie" / ".schema"
            folder.mkdir(exist_ok=True)
            (folder / f"{instant}.schemacommit").write_text(json.dumps({"schemas": self.history}))
        hoodie = self.path / ".hoodie"
        (hoodie / f"{instant}.commit.requested").write_text("")
        (hoodie / f"{instant}.inflight").write_text("")
        (hoodie / f"{instant}.commit").write_text(json.dumps({
            "partitionToWriteStats": stats, "compacted": False, "extraMetadata": extra,
            "operationType": operation}))
        return written


def unzip_sample(name: str, into: Path) -> Path:
    """Unzip hudi-rs' sample table ``name`` (``sample_table_cow_v6_nonpartitioned``) into ``into``; returns
    the table's base path. The ``__MACOSX`` entries some zips carry are left out."""
    with zipfile.ZipFile(SAMPLES / f"{name}.zip") as z:
        members = [m for m in z.namelist() if not m.startswith("__MACOSX")]
        z.extractall(into, members)
    found = sorted({p.parent for p in into.glob("*/.hoodie")})
    assert len(found) == 1, f"{name}.zip holds {len(found)} tables"
    return found[0]

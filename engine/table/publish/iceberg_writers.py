"""PyIceberg's manifest and manifest-list writers as publishing uses them: data and delete manifests of
format v2 or v3, manifest lists of v2 or v3 (v3 assigns data manifests their ``first_row_id``).

PyIceberg 0.12 writes v1 and v2 only; v3 reuses its v2 writers with its own v3 Avro schemas (never a
hand-written encoder). What a writer derives from a table schema and spec (the entry schema with the
partition type, the Avro record writer, the manifest's key-value metadata) is made once per process and
shared: a catch-up after a one-row commit writes one small manifest and one list, and deriving those
cost more than writing them (PyIceberg rebuilds them for every file)."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from fieldshift.table.publish.iceberg_v3 import as_v3_manifest, manifest_first_row_id

__all__ = ["manifest_list_writer", "manifest_writer"]

_MADE: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}


def _made(key: tuple[Any, ...], keep: tuple[Any, ...], make: Any) -> Any:
    """``make()`` once per key; ``key`` names objects by id, and ``keep`` holds them so the ids stay theirs."""
    found = _MADE.get(key)
    if found is None:
        if len(_MADE) > 1024:
            _MADE.clear()
        found = _MADE[key] = (keep, make())
    return found[1]


@cache
def _classes() -> tuple[type, type, type]:
    """The writer classes (PyIceberg is imported only when a table is published)."""
    from pyiceberg.avro.file import SYNC_SIZE, AvroOutputFile
    from pyiceberg.avro.resolver import resolve_writer
    from pyiceberg.manifest import (
        MANIFEST_LIST_FILE_SCHEMAS,
        ManifestContent,
        ManifestFile,
        ManifestListWriterV2,
        ManifestWriterV2,
    )

    class SharedAvroOutputFile(AvroOutputFile):  # type: ignore[type-arg]
        """PyIceberg's Avro container writer, its record writer for the two schemas made once (the base
        constructor's only work besides keeping its arguments and drawing the sync marker)."""

        def __init__(self, output: Any, file_schema: Any, name: str, metadata: dict[str, str]) -> None:
            self.output_file, self.file_schema, self.schema_name, self.metadata = output, file_schema, name, metadata
            self.sync_bytes = os.urandom(SYNC_SIZE)
            self.writer = _made(("writer", id(file_schema)), (file_schema,),
                                lambda: resolve_writer(record_schema=file_schema, file_schema=file_schema))

    class ManifestWriter(ManifestWriterV2):
        def __init__(self, version: int, deletes: bool, *args: Any) -> None:
            super().__init__(*args)
            self._version, self._deletes = version, deletes

        @property
        def version(self) -> Any:
            return self._version

        def content(self) -> ManifestContent:
            return ManifestContent.DELETES if self._deletes else ManifestContent.DATA

        @property
        def _meta(self) -> dict[str, str]:
            content = "deletes" if self._deletes else "data"
            return _made(("meta", id(self._spec), id(self._schema), self._version, content),
                         (self._spec, self._schema),
                         lambda: {**ManifestWriterV2._meta.fget(self), "content": content})  # type: ignore[attr-defined]

        def _with_partition(self, format_version: Any) -> Any:
            return _made(("entry", id(self._spec), id(self._schema), format_version), (self._spec, self._schema),
                         lambda: ManifestWriterV2._with_partition(self, format_version))

        def new_writer(self) -> Any:
            return SharedAvroOutputFile(self._output_file, self._with_partition(self._version), "manifest_entry",
                                        self._meta)

        def to_manifest_file(self) -> Any:
            made = super().to_manifest_file()
            return as_v3_manifest(made) if self._version == 3 else made

    class ListWriter(ManifestListWriterV2):
        def __init__(self, version: int, first_row_id: int, *args: Any) -> None:
            super().__init__(*args)
            self._format_version = version
            if version == 3:
                self._meta = {**self._meta, "format-version": "3", "first-row-id": str(first_row_id)}
            self.next_row_id = first_row_id

        def __enter__(self) -> ListWriter:
            self._writer = SharedAvroOutputFile(self._output_file, MANIFEST_LIST_FILE_SCHEMAS[self._format_version],
                                                "manifest_file", self._meta)
            self._writer.__enter__()
            return self

        def prepare_manifest(self, manifest_file: ManifestFile) -> ManifestFile:
            prepared = super().prepare_manifest(manifest_file)
            if self._format_version != 3:
                return prepared
            prepared = as_v3_manifest(prepared)
            if prepared.content == ManifestContent.DATA and manifest_first_row_id(prepared) is None:
                prepared = as_v3_manifest(prepared, self.next_row_id)
                self.next_row_id += prepared.added_rows_count + prepared.existing_rows_count
            return prepared

    return SharedAvroOutputFile, ManifestWriter, ListWriter


def manifest_writer(version: int, spec: Any, schema: Any, output: Any, snapshot_id: int, deletes: bool = False
                    ) -> Any:
    """A manifest writer of ``version`` (2 or 3) for data or delete files (v3 entries: records made with
    ``DataFile.from_args(_table_format_version=3, ...)``). Pass the same ``spec`` and ``schema`` objects for
    the same table spec and schema: what is derived from them is kept by identity."""
    return _classes()[1](version, deletes, spec, schema, output, snapshot_id, "null")


def manifest_list_writer(version: int, output: Any, snapshot_id: int, parent: int | None, sequence_number: int,
                         first_row_id: int = 0) -> Any:
    """A manifest-list writer of ``version`` (2 or 3); v3 assigns each data manifest without one a
    ``first_row_id`` from a running id starting at ``first_row_id`` (``next_row_id`` after the writes)."""
    return _classes()[2](version, first_row_id, output, snapshot_id, parent, sequence_number, "null")

"""Publishing builds PyIceberg's Avro container writer without its constructor (the record writer is made once
per schema): the attributes it sets must be exactly those PyIceberg's own constructor sets, or an upgrade of
PyIceberg that adds one would write manifests through a half-built writer."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("pyiceberg")


def test_the_shared_avro_writer_sets_what_pyiceberg_s_constructor_sets() -> None:
    from pyiceberg.avro.file import AvroOutputFile
    from pyiceberg.manifest import MANIFEST_LIST_FILE_SCHEMAS

    from fieldshift.table.publish.iceberg_writers import _classes

    shared_class = _classes()[0]
    schema = MANIFEST_LIST_FILE_SCHEMAS[2]
    base = AvroOutputFile(io.BytesIO(), schema, "manifest_file", metadata={"a": "b"})
    shared = shared_class(io.BytesIO(), schema, "manifest_file", {"a": "b"})
    assert set(vars(shared)) == set(vars(base))
    assert {k: v for k, v in vars(shared).items() if k not in ("sync_bytes", "writer", "output_file")} == \
        {k: v for k, v in vars(base).items() if k not in ("sync_bytes", "writer", "output_file")}
    assert type(shared.writer) is type(base.writer) and len(shared.sync_bytes) == len(base.sync_bytes)

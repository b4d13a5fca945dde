"""Structured Streaming for the ``fieldshift`` data source: the sink and the source, mixed in.

They are loaded on first use, so a batch read or write does not import the streaming modules.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import StructType

__all__ = ["StreamingMixin"]


class StreamingMixin:
    """``streamWriter`` (spark/stream_sink.py) and ``streamReader`` (spark/stream_source.py)."""

    options: Any

    def streamWriter(self, schema: StructType, overwrite: bool) -> Any:
        from fieldshift.spark.stream_sink import FieldshiftStreamWriter

        return FieldshiftStreamWriter(self.options, schema, overwrite)

    def streamReader(self, schema: StructType) -> Any:
        from fieldshift.spark.stream_source import FieldshiftStreamReader

        return FieldshiftStreamReader(self.options, schema, self._spec().read_schema)  # type: ignore[attr-defined]

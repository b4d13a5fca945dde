"""One table at one snapshot as an immutable value: what every scan, write and maintenance step reads.

An operation loads it once (``SqliteCatalog.load_metadata``) and hands it down, instead of passing a
``Table`` whose properties each go back to the catalog: the schema, policy, partition spec and key
it works with then all come from the same moment. Snapshots are records of the catalog; the full
snapshot list is not part of the value (a long history would cost every operation), the catalog
lists it on demand.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from fieldshift.schema.model import Schema
from fieldshift.schema.policy import CastPolicy
from fieldshift.table.files.write_layout import WriteLayout, write_layout
from fieldshift.table.keyed.keys import KeySpec, key_spec
from fieldshift.table.partitions.partitioning import PartitionSpec
from fieldshift.table.records import Snapshot

__all__ = ["MetadataCache", "TableMetadata"]


@dataclass(frozen=True, slots=True)
class TableMetadata:
    """A table as of ``snapshot``: its schemas by id, partition specs, policy and properties.

    ``head`` is the newest snapshot when the value was loaded; ``snapshot`` is the one an operation works
    on (the head, or an older one for time travel: ``at``). Never mutated; a commit makes a new one.
    """

    table_id: int
    name: str
    location: str
    properties: Mapping[str, str]
    policy: CastPolicy
    schemas: Mapping[int, Schema]
    spec_history: tuple[tuple[PartitionSpec, int], ...]
    """(spec, snapshot that last made it current) of every spec, oldest first: the last is current."""
    head: Snapshot
    snapshot: Snapshot

    @property
    def schema(self) -> Schema:
        """The schema of ``snapshot`` (the current schema at the head)."""
        return self.schemas[self.snapshot.schema_id]

    @property
    def current_schema(self) -> Schema:
        """The head's schema: what new rows are written in."""
        return self.schemas[self.head.schema_id]

    @property
    def spec(self) -> PartitionSpec:
        """The current partition spec (new files are written with it)."""
        return self.spec_history[-1][0]

    @property
    def specs(self) -> list[PartitionSpec]:
        """Every partition spec, in the order they were last made current."""
        return [s for s, _ in self.spec_history]

    @property
    def keys(self) -> KeySpec | None:
        """The primary key of a keyed table as the head's schema names it (None: unkeyed)."""
        return key_spec(dict(self.properties), self.current_schema)

    @property
    def layout(self) -> WriteLayout:
        """How new data files are laid out (rows per file and row group, codec): the table's properties."""
        return write_layout(self.properties)

    def keys_in(self, schema: Schema) -> KeySpec | None:
        """The primary key as ``schema`` names it (a scan into an older schema version)."""
        return key_spec(dict(self.properties), schema)

    def at(self, snapshot: Snapshot) -> TableMetadata:
        """The same table as of another snapshot (time travel; schemas and specs are kept forever)."""
        return replace(self, snapshot=snapshot)


class MetadataCache:
    """The metadata last loaded per table, reused while one statement shows nothing changed.

    A table changes only by a commit (a new head snapshot) or a property set outside any snapshot, so the
    head row and the properties text are the freshness check. Schemas and specs are only ever added, so
    a ``layout`` (the table's creation time, its highest schema id, the latest snapshot that made a spec
    current) that is unchanged lets a new head reuse the parsed schemas and specs; they are reloaded otherwise.
    """

    LIMIT = 256

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[Any, ...], tuple[tuple[Any, ...], tuple[Any, ...], TableMetadata]] = \
            OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], fresh: tuple[Any, ...]) -> TableMetadata | None:
        """The cached value for ``key`` when it was loaded at ``fresh`` (head id, time, properties)."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is None or hit[0] != fresh:
                return None
            self._entries.move_to_end(key)
            return hit[2]

    def get_layout(self, key: tuple[Any, ...], layout: tuple[Any, ...]) -> TableMetadata | None:
        """The cached value for ``key`` when its schemas and specs were loaded at ``layout`` (its head may be old)."""
        with self._lock:
            hit = self._entries.get(key)
            return None if hit is None or not hit[1] or hit[1] != layout else hit[2]

    def layout(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        """The layout the cached value for ``key`` was loaded at (empty when there is none)."""
        with self._lock:
            hit = self._entries.get(key)
            return () if hit is None else hit[1]

    def put(self, key: tuple[Any, ...], fresh: tuple[Any, ...], metadata: TableMetadata,
            layout: tuple[Any, ...] = ()) -> None:
        with self._lock:
            self._entries[key] = (fresh, layout, metadata)
            self._entries.move_to_end(key)
            while len(self._entries) > self.LIMIT:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every table (tests compare a cold load with a warm one)."""
        with self._lock:
            self._entries.clear()

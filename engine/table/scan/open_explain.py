"""What a scan of another format's table will read, without reading any rows: ``OpenTable.explain()``.

The counterpart of ``fieldshift explain`` for fieldshift's own tables: the snapshot and schema read,
which live files the filter keeps and which it prunes (by partition values or statistics), the deletes
each kept file carries, rows outside files (inlined, or merged by the format's own reader), and the
evolution plan of every distinct file layout (one footer read per kept file; files whose plans read
alike share one entry, as the CLI groups files by written schema).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fieldshift.open_tables.source import DataFileEntry, SourceSnapshot
from fieldshift.schema.model import Schema
from fieldshift.table.scan.open_scan import OpenScan

__all__ = ["FileNote", "OpenExplanation", "explain_scan"]


@dataclass(frozen=True, slots=True)
class FileNote:
    """One kept data file: its rows, deletes it carries and the plan that evolves it (its first line is
    the headline: identity, rename only, or how many columns it evolves)."""

    path: str
    record_count: int
    position_delete_files: int
    deleted_positions_inline: int
    equality_delete_files: int
    plan: str


@dataclass(frozen=True, slots=True)
class OpenExplanation:
    """What ``OpenTable.scan(...)`` with the same arguments reads."""

    format: str
    table: str
    snapshot: SourceSnapshot
    schema: Schema
    columns: tuple[str, ...]
    filter: str | None
    kept: tuple[FileNote, ...]
    pruned: tuple[str, ...]
    inlined_rows: int
    reader_rows: tuple[str, ...]
    merge: str
    notes: tuple[str, ...] = field(default=())

    def plans(self) -> dict[str, list[FileNote]]:
        """Kept files grouped by their plan text (one entry per distinct layout)."""
        out: dict[str, list[FileNote]] = {}
        for f in self.kept:
            out.setdefault(f.plan, []).append(f)
        return out

    def __str__(self) -> str:
        snap = self.snapshot
        lines = [f"{self.format} table {self.table} @ snapshot {snap.snapshot_id} "
                 f"({snap.timestamp.isoformat()}), schema {self.schema.schema_id}",
                 f"columns: {', '.join(self.columns)}",
                 f"filter: {self.filter or 'none'}",
                 f"files: {len(self.kept)} kept, {len(self.pruned)} pruned "
                 f"({sum(f.record_count for f in self.kept):,} row(s) in kept files)"]
        deletes = [f for f in self.kept if f.position_delete_files or f.deleted_positions_inline
                   or f.equality_delete_files]
        if deletes:
            lines.append(f"deletes: {len(deletes)} kept file(s) carry deletes "
                         f"({sum(f.position_delete_files for f in self.kept)} position delete file(s), "
                         f"{sum(f.deleted_positions_inline for f in self.kept)} position(s) in metadata, "
                         f"{sum(f.equality_delete_files for f in self.kept)} equality delete file(s))")
        if self.merge != "none":
            lines.append(f"merge: rows are versions by key ({self.merge}); each merge group is merged on read")
        if self.inlined_rows:
            lines.append(f"inlined rows: {self.inlined_rows:,} (kept in the catalog, evolved like a file)")
        if self.reader_rows:
            lines.append(f"rows of the format's own reader: {len(self.reader_rows)} slice(s), evolved by name")
        lines.extend(self.notes)
        for text, files in self.plans().items():
            head, *rest = text.splitlines()
            lines.append(f"{len(files)} file(s), {sum(f.record_count for f in files):,} row(s): {head}")
            lines.extend("  " + line for line in rest)
        for path in self.pruned:
            lines.append(f"pruned: {path}")
        return "\n".join(lines)


def explain_scan(scan: OpenScan, filter_text: str | None = None) -> OpenExplanation:
    """Explain ``scan``: planning reads each kept file's footer, never its rows."""
    content = scan.content
    kept = scan.files()
    kept_paths = {f.path for f in kept}
    pruned = tuple(f.path for f in content.files if f.path not in kept_paths)
    notes = [_note(scan, f) for f in kept]
    readers = tuple(r.label for r in scan.reader_rows())
    merge = "none" if scan.merge.kind == "none" else \
        f"{scan.merge.kind} on {', '.join(scan.key_names) or '-'}"
    return OpenExplanation(scan.source.format, scan.source.name, content.snapshot, scan.full_schema,
                           tuple(scan.columns), filter_text, tuple(notes), pruned,
                           sum(r.rows.num_rows for r in content.inlined), readers, merge)


def _note(scan: OpenScan, f: DataFileEntry) -> FileNote:
    inline = 0 if f.positions is None else len(f.positions)
    return FileNote(f.path, f.record_count, len(f.delete_files), inline, len(scan.equality_deletes(f)),
                    scan.file_plan(f).explain())

"""The embedded table store: SQLite catalog, Parquet files with field ids, evolved scans."""

from fieldshift.table.catalog.sqlite import DataFile, Snapshot, SqliteCatalog
from fieldshift.table.scan.table_scan import Predicate, Scan
from fieldshift.table.table import AppendResult, Table

__all__ = ["AppendResult", "DataFile", "Predicate", "Scan", "Snapshot", "SqliteCatalog", "Table"]

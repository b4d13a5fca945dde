"""Driving pypaimon (the Paimon peer) from the conformance tests: plans of steps run by ``paimon_peer.py``
inside ``.venv-paimon`` (``make test-conformance`` creates it; ``FIELDSHIFT_PAIMON_PYTHON`` names another
interpreter with pypaimon). Data crosses as Parquet files in a scratch directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["PYPAIMON_VERSION", "PaimonPeer", "paimon_python"]

PYPAIMON_VERSION = "2.1.0"
_REPO = Path(__file__).resolve().parents[2]
_SCRIPT = Path(__file__).with_name("paimon_peer.py")


def paimon_python() -> str:
    """The interpreter that has pypaimon: ``$FIELDSHIFT_PAIMON_PYTHON`` or the repository's ``.venv-paimon``."""
    found = os.environ.get("FIELDSHIFT_PAIMON_PYTHON") or str(_REPO / ".venv-paimon" / "bin" / "python")
    if not Path(found).exists():
        raise RuntimeError(f"no Python with pypaimon at {found}: run `make test-conformance` (it creates .venv-paimon "
                           f"with pypaimon=={PYPAIMON_VERSION}) or set FIELDSHIFT_PAIMON_PYTHON")
    return found


class PaimonPeer:
    """Steps for one warehouse, queued and run together (one subprocess per ``run``)."""

    def __init__(self, warehouse: Path, scratch: Path) -> None:
        self.warehouse, self.scratch = warehouse, scratch
        scratch.mkdir(parents=True, exist_ok=True)
        self.steps: list[dict[str, Any]] = []
        self._n = 0

    def _file(self, suffix: str) -> Path:
        self._n += 1
        return self.scratch / f"step-{self._n}{suffix}"

    def create(self, table: str, schema: pa.Schema, *, primary_keys: list[str] | None = None,
               partition_keys: list[str] | None = None, options: dict[str, str] | None = None) -> PaimonPeer:
        path = self._file(".parquet")
        pq.write_table(schema.empty_table(), path)
        self.steps.append({"op": "create", "table": table, "schema_from": str(path), "primary_keys": primary_keys,
                           "partition_keys": partition_keys, "options": options or {}})
        return self

    def write(self, table: str, rows: pa.Table | list[dict[str, Any]], schema: pa.Schema | None = None) -> PaimonPeer:
        data = rows if isinstance(rows, pa.Table) else pa.Table.from_pylist(rows, schema=schema)
        path = self._file(".parquet")
        pq.write_table(data, path)
        self.steps.append({"op": "write", "table": table, "data": str(path)})
        return self

    def alter(self, table: str, *changes: list[str]) -> PaimonPeer:
        self.steps.append({"op": "alter", "table": table, "changes": [list(c) for c in changes]})
        return self

    def delete_rows(self, table: str, row_ids: list[int]) -> PaimonPeer:
        self.steps.append({"op": "delete_rows", "table": table, "row_ids": list(row_ids)})
        return self

    def tag(self, table: str, name: str, snapshot: int | None = None) -> PaimonPeer:
        self.steps.append({"op": "tag", "table": table, "name": name, "snapshot": snapshot})
        return self

    def branch(self, table: str, name: str, tag: str | None = None) -> PaimonPeer:
        self.steps.append({"op": "branch", "table": table, "name": name, "tag": tag})
        return self

    def read_tag(self, table: str, tag: str) -> pa.Table:
        """pypaimon's rows of ``table`` at tag ``tag``."""
        out = self._file(".parquet")
        self.steps.append({"op": "read", "table": table, "snapshot": None, "tag": tag, "out": str(out)})
        self.run()
        return pq.read_table(out)

    def run(self) -> None:
        plan = self._file(".json")
        plan.write_text(json.dumps({"warehouse": str(self.warehouse), "steps": self.steps}))
        self.steps = []
        done = subprocess.run([paimon_python(), str(_SCRIPT), str(plan)], capture_output=True, text=True, timeout=600,
                              env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        if done.returncode:
            sys.stderr.write(done.stderr)
            raise RuntimeError(f"pypaimon failed on {plan}: {done.stderr.strip().splitlines()[-1:]}")

    def read(self, table: str, snapshots: list[int | None]) -> dict[int | None, pa.Table]:
        """pypaimon's rows of ``table`` at each snapshot id (None: the latest)."""
        outs = {}
        for s in snapshots:
            out = self._file(".parquet")
            self.steps.append({"op": "read", "table": table, "snapshot": s, "out": str(out)})
            outs[s] = out
        self.run()
        return {s: pq.read_table(p) for s, p in outs.items()}

"""The demo's stream scenario: Onehouse's Stream Capture, as a stream of landing files, killed and restarted.

Parquet files whose ``col1`` is Int, then Long, then String land in a directory. ``fieldshift capture``
runs as a real subprocess and is SIGKILLed mid-way, then restarted: the table widens col1 to Long,
quarantines the String records (with their file names) or, configured to fail, stops at the first
String file, and holds every record exactly once. With Spark, the captured table is streamed through
the ``fieldshift`` streaming source into a second table by the streaming sink, twice: still once each.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import fieldshift as fs

__all__ = ["stream_capture"]

FILES_PER_KIND = 8
RECORDS = 5


def _land(folder: Path) -> dict[str, list[str]]:
    """Int, then Long, then String files for col1; returns the record keys of each kind."""
    folder.mkdir(parents=True, exist_ok=True)
    keys: dict[str, list[str]] = {"int": [], "long": [], "string": []}
    n = 0
    for kind, make in (("int", lambda i: pa.array([i] * RECORDS, pa.int32())),
                       ("long", lambda i: pa.array([2**40 + i] * RECORDS, pa.int64())),
                       ("string", lambda i: pa.array([f"v{i}"] * RECORDS, pa.string()))):
        for i in range(FILES_PER_KIND):
            names = [f"{kind}-{i}-{j}" for j in range(RECORDS)]
            keys[kind] += names
            tmp = folder / f".{n:03}.parquet"
            pq.write_table(pa.table({"key": names, "col1": make(i)}), tmp)
            os.utime(tmp, ns=(n * 10**9, n * 10**9))  # arrival order
            os.replace(tmp, folder / f"{n:03}-{kind}.parquet")
            n += 1
    return keys


def _killed_capture(d: Any, landing: Path, table: Path) -> int:
    """Start `fieldshift capture --watch` as a subprocess and SIGKILL it after a few commits."""
    cmd = [sys.executable, "-m", "fieldshift.cli", "capture", str(landing), str(table), "--quarantine", "--watch",
           "--files-per-commit", "1", "--idle-timeout", "5"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "NO_COLOR": "1"})
    assert proc.stderr is not None
    commits = 0
    while commits < 6 and proc.stderr.readline().startswith("captured"):
        commits += 1
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return commits


def stream_capture(d: Any) -> None:
    d.scenario("Onehouse Stream Capture as a stream: Int → Long → String files, killed and restarted",
               "onehouse-schema-evolution")
    landing = d.root / "landing"
    keys = _land(landing)
    d.step(f"{3 * FILES_PER_KIND} Parquet files land: col1 Int, then Long, then String ({RECORDS} records each)")
    location = d.root / "captured"
    d.step("`fieldshift capture landing captured --quarantine --watch` starts … and is killed (SIGKILL)")
    commits = _killed_capture(d, landing, location)
    t = fs.Table.open(location)
    d.check(f"killed after {commits} commits, the table holds whole files only",
            t.to_arrow().num_rows % RECORDS == 0 and t.to_arrow().num_rows < len(keys["int"]) * 3)
    d.step("restarted: `fieldshift.capture(landing, captured, on_incompatible='quarantine')`")
    fs.capture(landing, location, on_incompatible="quarantine")
    t = fs.Table.open(location)
    got = t.to_arrow()
    d.check("col1 widened Int → Long", t.schema.find("col1").type == pa.int64())
    written = got.column("key").to_pylist()
    d.check("every Int and Long record is in the table exactly once",
            sorted(written) == sorted(keys["int"] + keys["long"]))
    q = t.quarantine()
    reasons = q.column("_fieldshift_reason").to_pylist()
    d.check("every String record is quarantined once, with its file name",
            q.num_rows == len(keys["string"]) and all(r.startswith("[") and "string.parquet]" in r for r in reasons))
    d.show(q.slice(0, 3).select(["_fieldshift_reason", "_fieldshift_row"]), "quarantine (first rows)")

    d.step("the same landing files, configured to fail: capture stops at the first String file")
    failing = d.root / "captured_fail"
    try:
        fs.capture(landing, failing, on_incompatible="fail", files_per_commit=4)
        d.check("a String file fails the capture", False)
    except fs.CaptureFileError as e:
        d.console.print(f"  [dim]{str(e)[:160]}…[/dim]")
        rows = fs.Table.open(failing).to_arrow().column("key").to_pylist()
        d.check("a String file fails the capture; the Int and Long records are in, once",
                sorted(rows) == sorted(keys["int"] + keys["long"]))
    if d.spark is not None:
        _spark_stream(d, t)


def _spark_stream(d: Any, source: fs.Table) -> None:
    d.step("Spark: readStream.format('fieldshift') → writeStream.format('fieldshift'), availableNow, run twice")
    sink, checkpoint = d.root / "streamed", d.root / "streamed_checkpoint"
    for _ in range(2):
        q = (d.spark.readStream.format("fieldshift").option("startingSnapshotId", "0").option("maxFilesPerTrigger", "4")
             .load(str(source.location)).writeStream.format("fieldshift")
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start(str(sink)))
        q.awaitTermination()
    streamed = fs.Table.open(sink).to_arrow().column("key").to_pylist()
    d.check("the streamed copy holds every captured record exactly once (the restart added nothing)",
            sorted(streamed) == sorted(source.to_arrow().column("key").to_pylist()))

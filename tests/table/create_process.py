"""Creates a table in a separate process and SIGKILLs itself at the Nth line the table store runs.

Run as ``create_process.py LOCATION N [--catalog PATH]``; N = 0 never kills and prints how many
lines the create ran, so the crash test can kill at points spread over the whole create.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pyarrow as pa

import fieldshift as fs
import fieldshift.table as table_store

STORE = str(Path(table_store.__file__).parent)
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("location")
    ap.add_argument("kill_at", type=int)
    ap.add_argument("--catalog")
    args = ap.parse_args()
    lines = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines
        if event == "line":
            lines += 1
            if lines == args.kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(STORE) else None

    name = Path(args.location).name if args.catalog else None
    sys.settrace(calls)
    fs.Table.create(args.location, SCHEMA, catalog=args.catalog, name=name)
    sys.settrace(None)
    print(lines, flush=True)


if __name__ == "__main__":
    main()

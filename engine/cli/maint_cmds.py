"""``fieldshift vacuum`` and ``fieldshift warmup``: housekeeping a table or an install may need."""

from __future__ import annotations

from typing import Annotated

import typer

from fieldshift.cli.console import cli_errors, open_table, out_console, progress

__all__ = ["vacuum", "warmup"]


@cli_errors
def vacuum(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    older_than: Annotated[float, typer.Option(
        "--older-than", min=0, help="Keep unreferenced files younger than this many seconds (a writer in "
        "another process may be about to commit them).")] = 3600.0,
) -> None:
    """Delete data and quarantine files no commit references (left by killed writers)."""
    from rich.text import Text

    table = open_table(location)
    with progress("vacuuming", None, unit="files") as advance:
        removed = table.vacuum(older_than=older_than)
        advance(len(removed))
    console = out_console()
    console.print(Text(f"removed {len(removed)} unreferenced file(s) from {table.location}", style="bold"))
    for path in removed:
        console.print(Text("  " + path))


@cli_errors
def warmup() -> None:
    """Compile every numba kernel now (into numba's on-disk cache), so no later first call waits for it."""
    from rich.text import Text

    from fieldshift.kernels.warm import warm_up

    with progress("compiling kernels", None, unit="kernels") as advance:
        seconds = warm_up(on_kernel=lambda name: advance(1))
    out_console().print(Text(f"kernels ready in {seconds:.1f} s", style="bold"))

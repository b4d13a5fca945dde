"""``fieldshift policy LOCATION [NAME]``: show or change the table's evolution policy."""

from __future__ import annotations

from typing import Annotated

import typer

from fieldshift.cli.catalog_opt import OMITTED
from fieldshift.cli.console import cli_errors, open_table, out_console, parse_policy
from fieldshift.schema.policy_names import POLICY_NAMES

__all__ = ["policy"]


@cli_errors
def policy(
    location: Annotated[str, typer.Argument(help="Table directory.")],
    name: Annotated[str | None, typer.Argument(
        help="The new policy: " + ", ".join(POLICY_NAMES) + ". Leave out to show the current one.")] = None,
) -> None:
    """Show or change the table's policy: which type changes appends and ALTERs may make, and how reads cast.

    A change is committed as a snapshot of its own, and only if every data file of every snapshot
    stays readable under the new policy.
    """
    from rich.text import Text

    if location == OMITTED and name is not None and name not in POLICY_NAMES:
        location, name = name, None  # `--catalog C --table T policy LOCATION`: the LOCATION, not a policy
    table = open_table(location)
    console = out_console()
    if name is None:
        console.print(table.policy.option_name)
        return
    new = parse_policy(name)
    old = table.policy
    if new == old:
        console.print(Text(f"the policy already is {old.option_name}; nothing was committed", style="bold"))
        return
    snap = table.set_policy(new)
    console.print(Text(f"policy {old.option_name} -> {new.option_name} (snapshot {snap.snapshot_id})", style="bold"))

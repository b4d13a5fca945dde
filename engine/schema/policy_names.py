"""The cast-policy preset names, kept apart from the policies themselves (which need pyarrow) so the
command line can print them in its help without importing Arrow."""

from __future__ import annotations

__all__ = ["POLICY_NAMES"]

POLICY_NAMES: tuple[str, ...] = (
    "lossless", "iceberg", "hudi", "onehouse", "onehouse-widen-to-string", "explicit", "explicit-null",
)
"""The preset names :meth:`~fieldshift.schema.policy.CastPolicy.from_name` accepts (for help texts and error
messages)."""

"""The public path of cast policies, ``fieldshift.policy``: they live in :mod:`fieldshift.schema.policy`."""

from fieldshift.schema.policy import (
    POLICY_NAMES,
    RULES,
    CastKind,
    CastPolicy,
)

__all__ = [
    "POLICY_NAMES",
    "RULES",
    "CastKind",
    "CastPolicy",
]

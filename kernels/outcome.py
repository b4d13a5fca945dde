"""What a value-touching kernel returns: the output and, for checked casts, which rows failed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

__all__ = ["CAST_ERRORS", "CastOutcome"]

CAST_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError)
"""What a safe Arrow cast raises when values do not fit the target: kernels catch these to find the rows."""


@dataclass(frozen=True, slots=True)
class CastOutcome:
    """``values`` holds null where a non-null input failed; ``failed`` marks those rows (or is None)."""

    values: pa.Array
    failed: np.ndarray | None = None

    @property
    def failure_count(self) -> int:
        """How many rows failed the cast."""
        return 0 if self.failed is None else int(self.failed.sum())

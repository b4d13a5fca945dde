"""Numba loop for checked integer narrowing: values, failure mask and count in one pass.

Imported only together with numba (``kernels.checked`` loads it once numba is ready).
"""

from __future__ import annotations

from numba import njit

from fieldshift.kernels._nb_util import is_valid

__all__ = ["narrow_ints"]


@njit(cache=True, nogil=True)
def narrow_ints(src, lo, hi, valid, voff, has_nulls, out, failed):
    """``out[i] = src[i]`` where ``lo <= src[i] <= hi``, else 0 and ``failed[i]`` (null rows never fail).

    The main loop has no branch, so it vectorises; nulls are looked at only when some value failed."""
    bad = 0
    for i in range(len(src)):
        x = src[i]
        ok = (x >= lo) & (x <= hi)
        out[i] = x if ok else x - x  # x - x: zero of x's own type (a literal 0 would unify uint64 with float)
        failed[i] = not ok
        bad += not ok
    if has_nulls and bad:
        for i in range(len(src)):
            if failed[i] and not is_valid(valid, voff + i):
                failed[i] = False
                bad -= 1
    return bad

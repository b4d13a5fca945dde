"""Numba's first call: Arrow answers while the kernels compile in the background, with the same results."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Runs in a fresh process with an empty numba cache: the first calls must come back before numba
# has compiled anything, and give exactly what the compiled kernels give afterwards.
_SCRIPT = r"""
import pickle, sys
import pyarrow as pa
import fieldshift as fs
import fieldshift.kernels as K
from fieldshift.kernels import warm

ints = ["12", "-7", "0x1F", "x", None, "99999999999999999999", " 3", ""]
cases = [
    (K.string_to_int, ints, pa.int64()), (K.string_to_int, ints, pa.int8()), (K.string_to_int, ints, pa.uint16()),
    (K.string_to_date32, ["2024-01-02", "2024-02-30", None, "x", "0001-01-01"], pa.date32()),
    (K.string_to_timestamp, ["2024-01-02T03:04:05", "2024-01-02 03:04:05.123456", "bad", None,
                             "2024-01-02T03:04:05Z"], pa.timestamp("us")),
    (K.string_to_float, ["1.5", "x", None, "1e400", "-0", "nan"], pa.float32()),
    (K.string_to_int, ["7"] * 999 + ["x"], pa.int32()),  # one bad row: found by a few casts
    (K.string_to_int, ["x", "7"] * 500, pa.int32()),  # too many to bisect within budget: numba answers
]
arrays = []
for fn, values, target in cases:
    for text in (pa.string(), pa.large_string()):
        arrays.append((fn, pa.array(values, text), target))
ints_in = pa.array([None, *range(-3000, 3000)], pa.int64())

def results():
    out = [(o.values.to_pylist(), None if o.failed is None else o.failed.tolist())
           for o in (fn(a, t) for fn, a, t in arrays)]
    return out + [(K.int_to_string(ints_in, pa.string()).values.to_pylist(), None)]

first = results()
waited = not warm._done.is_set()  # still compiling: the calls above did not wait for numba
fs.warm_up()
after = results()
diff = [i for i, (a, b) in enumerate(zip(first, after)) if repr(a) != repr(b)]  # repr: nan equals nan
sys.stdout.buffer.write(pickle.dumps((waited, diff, [(first[i], after[i]) for i in diff], len(first))))
"""


def test_first_calls_answer_through_arrow_while_numba_compiles(tmp_path: Path) -> None:
    """The Arrow route (first calls) against the numba route (after ``warm_up``) on the same arrays."""
    import pickle

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"), "FIELDSHIFT_NUMBA_BACKGROUND": "1"}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    did_not_wait, diff, pairs, n = pickle.loads(done.stdout)
    assert not diff and n == 17, pairs
    assert did_not_wait
    assert list((tmp_path / "numba-cache").rglob("*.nbi")), "numba's cache holds the compiled kernels"
    # the command a Docker build or an executor's start-up runs (here it loads what warm_up compiled)
    command = subprocess.run([sys.executable, "-m", "fieldshift.cli", "warmup"], env=env, capture_output=True,
                             text=True, timeout=600)
    assert command.returncode == 0 and "kernels ready" in command.stdout, command.stderr


def test_background_route_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from fieldshift.kernels.warm import numba_ready

    monkeypatch.setenv("FIELDSHIFT_NUMBA_BACKGROUND", "0")
    assert numba_ready()  # first calls compile and wait, as before


def test_bounded_checked_cast_equals_checked_cast_or_gives_up() -> None:
    import pyarrow as pa

    from fieldshift.kernels.casts import bounded_checked_cast, checked_cast

    for bad_every in (1, 2, 7, 100, 5000):
        values = pa.array([("x" if i % bad_every == 0 else str(i)) for i in range(1, 2001)] + [None])
        full = checked_cast(values, pa.int16())
        roomy = bounded_checked_cast(values, pa.int16(), 100_000)
        assert roomy is not None and roomy.values.equals(full.values)
        assert (roomy.failed is None) == (full.failed is None)
        assert full.failed is None or (roomy.failed == full.failed).all()
        tight = bounded_checked_cast(values, pa.int16(), 40)
        bad = 0 if full.failed is None else int(full.failed.sum())
        assert (tight is None) == (bad > 2), (bad_every, bad)  # a couple of bad rows fit 40 casts
        assert tight is None or tight.values.equals(full.values)

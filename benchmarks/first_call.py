"""First-call latency of each numba kernel in a fresh numba cache (``python benchmarks/first_call.py``).

Each kernel runs in its own new process with ``NUMBA_CACHE_DIR`` pointing at an empty directory,
so the time is what a user pays on the first call after installing; a second process with the same
(now warm) cache shows what later processes pay.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

__all__ = ["CASES", "main", "measure"]

# (name, setup expression giving `values`, kernel call)
CASES = {
    "int_to_string": ("pa.array(range(5000), pa.int64())", "K.int_to_string(values, pa.string())"),
    "string_to_int": ("pa.array([str(i) for i in range(5000)])", "K.string_to_int(values, pa.int64())"),
    "string_to_date32": ("pa.array(['2024-01-02'] * 5000)", "K.string_to_date32(values, pa.date32())"),
    "string_to_timestamp": ("pa.array(['2024-01-02T03:04:05'] * 5000)",
                            "K.string_to_timestamp(values, pa.timestamp('us'))"),
    "string_to_float": ("pa.array(['1.5', 'x'] * 2500)", "K.string_to_float(values, pa.float64())"),
    "string_to_decimal": ("pa.array(['1.25'] * 5000)", "K.string_to_decimal(values, pa.decimal128(10, 2))"),
}

_SNIPPET = """
import time, pyarrow as pa
import fieldshift.kernels as K
values = {setup}
t0 = time.perf_counter(); {call}; first = time.perf_counter() - t0
t0 = time.perf_counter(); {call}; second = time.perf_counter() - t0
print(first, second)
"""


def measure(name: str, cache_dir: str, extra_env: dict[str, str] | None = None) -> tuple[float, float]:
    """(first call, second call) seconds of kernel ``name`` in a new process using ``cache_dir``."""
    setup, call = CASES[name]
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, **(extra_env or {})}
    out = subprocess.run([sys.executable, "-c", _SNIPPET.format(setup=setup, call=call)], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def main() -> None:
    results = {}
    for name in CASES:
        with tempfile.TemporaryDirectory() as cache:
            cold = measure(name, cache)
            warm = measure(name, cache)
        results[name] = {"fresh_cache_first_call_s": round(cold[0], 3), "warm_cache_first_call_s": round(warm[0], 3)}
        print(f"{name:22s} fresh cache {cold[0]:6.2f} s   warm cache {warm[0]:6.3f} s", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()

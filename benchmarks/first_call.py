"""First-call latency of each numba kernel in a fresh numba cache (``python benchmarks/first_call.py``).

Each kernel runs in its own new process with ``NUMBA_CACHE_DIR`` pointing at an empty directory,
so the time is what a user pays on the first call after installing; a second process with the same
(now warm) cache shows what later processes pay. Both are measured with the background route off
(``FIELDSHIFT_NUMBA_BACKGROUND=0``: the first call compiles and waits, as before ``kernels.warm``)
and on (the default: Arrow answers while numba compiles), plus ``fs.warm_up()`` of everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["CASES", "main", "markdown", "measure", "warm_up_seconds"]

# (name, setup expression giving `values`, kernel call): 5,000 rows, the text ones with one bad value
CASES = {
    "int_to_string": ("pa.array(range(5000), pa.int64())", "K.int_to_string(values, pa.string())"),
    "string_to_int": ("pa.array([str(i) for i in range(4999)] + ['x'])", "K.string_to_int(values, pa.int64())"),
    "string_to_date32": ("pa.array(['2024-01-02'] * 4999 + ['x'])", "K.string_to_date32(values, pa.date32())"),
    "string_to_timestamp": ("pa.array(['2024-01-02T03:04:05'] * 4999 + ['x'])",
                            "K.string_to_timestamp(values, pa.timestamp('us'))"),
    "string_to_float": ("pa.array(['1.5'] * 4999 + ['x'])", "K.string_to_float(values, pa.float64())"),
    "string_to_decimal": ("pa.array(['1.25'] * 4999 + ['x'])", "K.string_to_decimal(values, pa.decimal128(10, 2))"),
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


_WARM_UP = "import time, fieldshift as fs; t0 = time.perf_counter(); fs.warm_up(); print(time.perf_counter() - t0)"


def warm_up_seconds(cache_dir: str) -> float:
    """Seconds ``fs.warm_up()`` takes in a new process using ``cache_dir``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    return float(subprocess.run([sys.executable, "-c", _WARM_UP], env=env, capture_output=True, text=True,
                                check=True).stdout)


def main() -> None:
    results: dict[str, dict[str, float]] = {}
    for name in CASES:
        row = {}
        for mode, flag in (("compile_and_wait", "0"), ("arrow_meanwhile", "1")):
            with tempfile.TemporaryDirectory() as cache:
                cold = measure(name, cache, {"FIELDSHIFT_NUMBA_BACKGROUND": flag})
                warm = measure(name, cache, {"FIELDSHIFT_NUMBA_BACKGROUND": flag})
            row[f"{mode}_fresh_cache_s"] = round(cold[0], 3)
            row[f"{mode}_warm_cache_s"] = round(warm[0], 3)
        results[name] = row
        print(name, row, flush=True)
    with tempfile.TemporaryDirectory() as cache:
        results["warm_up"] = {"fresh_cache_s": round(warm_up_seconds(cache), 2),
                              "warm_cache_s": round(warm_up_seconds(cache), 2)}
    print(results["warm_up"])
    print(json.dumps(results))
    (Path(__file__).parent / "first_call.md").write_text(markdown(results))


def markdown(results: dict[str, dict[str, float]]) -> str:
    """The section ``report.py`` appends to ``benchmarks/README.md``."""
    load = os.getloadavg()[0]
    lines = ["## Numba's first call (`python benchmarks/first_call.py`)", "",
             "Seconds of each kernel's first call on 5,000 rows (one bad value among the texts) in a new",
             "process, with an empty numba cache",
             "(a fresh install) and with the cache the first process left. *compile and wait* is the behaviour",
             "before `kernels.warm` (`FIELDSHIFT_NUMBA_BACKGROUND=0`); *Arrow meanwhile* is the default: Arrow",
             "answers while a background thread compiles. The decimal kernel always waits (Arrow alone wraps",
             f"some out-of-range decimal text). 1-minute load average at the end: {load:.1f} on "
             f"{os.cpu_count()} cores.", "",
             "| kernel | compile and wait, fresh cache | Arrow meanwhile, fresh cache | compile and wait, warm cache "
             "| Arrow meanwhile, warm cache |", "|---|---|---|---|---|"]
    for name in CASES:
        r = results[name]
        cells = [r[f"{mode}_{cache}_cache_s"] for cache in ("fresh", "warm")
                 for mode in ("compile_and_wait", "arrow_meanwhile")]
        lines.append(f"| `{name}` | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    w = results["warm_up"]
    lines += ["", f"`fs.warm_up()` / `fieldshift warmup` (every kernel, every signature it compiles): "
              f"{w['fresh_cache_s']:.1f} s with an empty cache, {w['warm_cache_s']:.1f} s loading from the cache.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

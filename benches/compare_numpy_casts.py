#!/usr/bin/env python3
"""Cast throughput of typejoin's kernels next to NumPy + ml_dtypes, in the same run.

Runs `cargo bench --bench cast` (1e7 random bit patterns, output preallocated) and times
`np.copyto(out, src, casting="unsafe")` on the same sizes, then prints the ratios.
Skips (exit 0) when numpy or ml_dtypes is missing.

Usage: python3 benches/compare_numpy_casts.py   (from the crate root)
"""
import subprocess
import sys
import time

from common import divan_medians

try:
    import ml_dtypes
    import numpy as np
except ImportError as e:  # pragma: no cover
    if __name__ != "__main__":
        raise
    print(f"skipped: {e}")
    sys.exit(0)

N = 10_000_000
CASES = [
    ("f32_to_bf16", np.uint32, np.float32, ml_dtypes.bfloat16),
    ("f32_to_f16", np.uint32, np.float32, np.float16),
    ("f32_to_float8_e4m3fn", np.uint32, np.float32, ml_dtypes.float8_e4m3fn),
    ("bf16_to_f32", np.uint16, ml_dtypes.bfloat16, np.float32),
    ("float8_e5m2_to_f16", np.uint8, ml_dtypes.float8_e5m2, np.float16),
]


def numpy_median(bits, src, dst, runs=10):
    rng = np.random.default_rng(1)
    x = rng.integers(0, np.iinfo(bits).max, size=N, dtype=bits, endpoint=True).view(src)
    out = np.empty(N, dtype=dst)
    with np.errstate(all="ignore"):
        np.copyto(out, x, casting="unsafe")  # warm-up
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            np.copyto(out, x, casting="unsafe")
            times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def main():
    ours = divan_medians(subprocess.run(["cargo", "bench", "--bench", "cast"],
                                        capture_output=True, text=True, check=True).stdout)
    print(f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, n = {N:.0e}")
    print(f"{'cast':<22} {'NumPy+ml_dtypes':>16} {'typejoin':>10} {'speed-up':>9}")
    for name, bits, src, dst in CASES:
        theirs = numpy_median(bits, src, dst)
        mine = ours[name]
        print(f"{name:<22} {theirs * 1e3:>13.1f} ms {mine * 1e3:>7.1f} ms {theirs / mine:>8.1f}x")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Speed of the Python package's reference kernels, in one run (a benchmark, not a test).

1. `typejoin.reference.add` at n = 1e7 against `typejoin bench` for the same pair (the cost of
   the Python layer: converting operands in and the result out);
2. per-call overhead at n = 1e3 against NumPy's `np.add`;
3. bfloat16, float16 and float8 pairs against NumPy + ml_dtypes.

Best of --runs, each side in turn, --rounds rounds. Needs the package installed
(`pip install ./python`) and a release build of the CLI for 1 (`cargo build --release`).
Usage: python3 benches/compare_python.py [--rounds R] [--runs K]   (from the crate root)
"""
import argparse
import json
import subprocess
import time

import ml_dtypes
import numpy as np

import typejoin.reference as ref


def best(f, runs):
    f()
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return min(ts)


def normal(name, n, rng):
    d = np.dtype(getattr(ml_dtypes, name, name))
    return rng.standard_normal(n).astype(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    n = 10_000_000
    print(f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}")
    print("1. reference.add vs typejoin bench, n = 1e7, ns per element (ratio: Python ÷ CLI)")
    for lhs, rhs in [("float32", "float32"), ("int8", "float32"), ("bfloat16", "bfloat16")]:
        a, b = normal(lhs, n, rng), normal(rhs, n, rng)
        t_py = t_cli = float("inf")
        for _ in range(args.rounds):
            t_py = min(t_py, best(lambda: ref.add(a, b), args.runs))
            m = json.loads(subprocess.run(
                ["target/release/typejoin", "bench", "--op", "add", "--lhs", lhs, "--rhs", rhs,
                 "-n", str(n), "--runs", str(args.runs)],
                check=True, capture_output=True, text=True).stdout)
            t_cli = min(t_cli, m["ns_per_element_best"] * n / 1e9)
        print(f"   {lhs} + {rhs}: {t_py / n * 1e9:.3f} vs {t_cli / n * 1e9:.3f} "
              f"({t_py / t_cli:.2f}x)")
    print("2. per-call overhead, n = 1e3 float32 + float32, µs per call")
    a, b = normal("float32", 1000, rng), normal("float32", 1000, rng)
    t_ref = t_np = float("inf")
    for _ in range(args.rounds):
        t_ref = min(t_ref, best(lambda: ref.add(a, b), 2000))
        t_np = min(t_np, best(lambda: np.add(a, b), 2000))
    print(f"   reference.add {t_ref * 1e6:.2f}, np.add {t_np * 1e6:.2f}, "
          f"difference {(t_ref - t_np) * 1e6:.2f}")
    print("3. small floats vs NumPy + ml_dtypes, n = 1e7 (ratio: NumPy ÷ typejoin)")
    for name in ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"]:
        a, b = normal(name, n, rng), normal(name, n, rng)
        t_ref = t_np = float("inf")
        for _ in range(args.rounds):
            t_ref = min(t_ref, best(lambda: ref.add(a, b), args.runs))
            t_np = min(t_np, best(lambda: np.add(a, b), max(2, args.runs // 3)))
        print(f"   {name} + {name}: {t_np * 1e3:.1f} ms vs {t_ref * 1e3:.2f} ms "
              f"({t_np / t_ref:.1f}x)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Speed of the Python package's reference kernels, in one run (a benchmark, not a test).

1. `typejoin.reference.add` at n = 1e7 against `typejoin bench` for the same pair, with the
   same threads (the cost of the Python layer), both into `out=` (what `bench` does: a
   preallocated result) and into a new result (which adds the new array's page faults: read
   them against NumPy's own new-result cost, printed beside);
2. per-call overhead at n = 1e3 against NumPy's `np.add`;
3. bfloat16, float16 and float8 pairs against NumPy + ml_dtypes, new results and `out=`.

Best of --runs, each side in turn, --rounds rounds. OpenBLAS's idle threads are kept off the
cores (NumPy's add does not use them). Needs the package installed (`pip install ./python`)
and a release build of the CLI for 1 (`cargo build --release`).
Usage: python3 benches/compare_python.py [--rounds R] [--runs K]   (from the crate root)
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import typejoin.reference as ref  # noqa: E402


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
    threads = os.cpu_count()
    print(f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, {threads} threads")
    print("1. reference.add vs typejoin bench, n = 1e7, ns per element "
          "(ratio: Python ÷ CLI; np.add's new result vs its out= beside)")
    for lhs, rhs in [("float32", "float32"), ("int8", "float32"), ("bfloat16", "bfloat16")]:
        a, b = normal(lhs, n, rng), normal(rhs, n, rng)
        out = ref.add(a, b)
        t_new = t_out = t_cli = t_np_new = t_np_out = float("inf")
        for _ in range(args.rounds):
            t_out = min(t_out, best(lambda: ref.add(a, b, out=out), args.runs))
            t_new = min(t_new, best(lambda: ref.add(a, b), args.runs))
            m = json.loads(subprocess.run(
                ["target/release/typejoin", "bench", "--op", "add", "--lhs", lhs, "--rhs", rhs,
                 "-n", str(n), "--runs", str(args.runs), "--threads", str(threads)],
                check=True, capture_output=True, text=True).stdout)
            t_cli = min(t_cli, m["ns_per_element_best"] * n / 1e9)
            if lhs == "float32" == rhs:
                t_np_new = min(t_np_new, best(lambda: np.add(a, b), args.runs))
                t_np_out = min(t_np_out, best(lambda: np.add(a, b, out=out), args.runs))
        ns = 1e9 / n
        line = (f"   {lhs} + {rhs}: out= {t_out * ns:.3f}, new {t_new * ns:.3f}, bench "
                f"{t_cli * ns:.3f} (out= {t_out / t_cli:.2f}x, new {t_new / t_cli:.2f}x)")
        if t_np_new < float("inf"):
            line += f"; np.add out= {t_np_out * ns:.3f}, new {t_np_new * ns:.3f}"
        print(line)
    print("2. per-call overhead, n = 1e3 float32 + float32, µs per call")
    a, b = normal("float32", 1000, rng), normal("float32", 1000, rng)
    t_ref = t_np = float("inf")
    for _ in range(args.rounds):
        t_ref = min(t_ref, best(lambda: ref.add(a, b), 2000))
        t_np = min(t_np, best(lambda: np.add(a, b), 2000))
    print(f"   reference.add {t_ref * 1e6:.2f}, np.add {t_np * 1e6:.2f}, "
          f"difference {(t_ref - t_np) * 1e6:.2f}")
    print("3. small floats vs NumPy + ml_dtypes, n = 1e7, ms (ratio: NumPy ÷ typejoin)")
    for name in ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"]:
        a, b = normal(name, n, rng), normal(name, n, rng)
        out = np.add(a, b)
        t_new = t_out = t_np = t_np_out = float("inf")
        for _ in range(args.rounds):
            t_new = min(t_new, best(lambda: ref.add(a, b), args.runs))
            t_out = min(t_out, best(lambda: ref.add(a, b, out=out), args.runs))
            t_np = min(t_np, best(lambda: np.add(a, b), max(2, args.runs // 3)))
            t_np_out = min(t_np_out, best(lambda: np.add(a, b, out=out), max(2, args.runs // 3)))
        print(f"   {name} + {name}: new {t_np * 1e3:.1f} vs {t_new * 1e3:.2f} "
              f"({t_np / t_new:.1f}x); out= {t_np_out * 1e3:.1f} vs {t_out * 1e3:.2f} "
              f"({t_np_out / t_out:.1f}x)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Elementwise kernel throughput of typejoin next to NumPy (+ ml_dtypes) and JAX, in one run.

For each pair of issue 5, runs `typejoin bench` (release build; one thread unless --threads,
output preallocated, best of several runs; both sides get the same kind of values: --data
normal, the default, draws floats from N(0, 1) and integers over their range, --data bits
random bit patterns) and times NumPy's
`np.add(a, b, out=out, dtype=result)` on the same sizes (and `jax.jit(jnp.add)` when JAX is
installed). Also measures this machine's single-core copy bandwidth (`np.copyto` of 256 MB) to
give each pair its memory-bandwidth bound: bytes moved ÷ copy bandwidth.

The machine is shared and noisy, so each pair is measured in --rounds rounds (default 3), the
three sides one after another in each round, and every side keeps its best time: a burst of
load from elsewhere costs each side the same number of chances.
Skips (exit 0) when numpy or ml_dtypes is missing.

Usage: python3 benches/compare_numpy_kernels.py [--threads T] [-n N] [--rounds R] [--casts]
(from the crate root)
"""
import argparse
import json
import os
import subprocess
import sys

from common import CASTS, PAIRS, best  # the kernel cases live in common.py

try:
    import ml_dtypes
    import numpy as np
except ImportError as e:  # pragma: no cover
    if __name__ != "__main__":
        raise
    print(f"skipped: {e}")
    sys.exit(0)

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = None


def dt(name):
    return np.dtype(getattr(ml_dtypes, name, name))


def random(name, n, rng, data):
    d = dt(name)
    if data == "normal" and name.startswith(("float", "bfloat", "complex")):
        v = rng.standard_normal(n)
        if name.startswith("complex"):
            v = v + 1j * rng.standard_normal(n)
        return v.astype(d)
    unit = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[d.itemsize]
    count = n * (2 if d.itemsize == 16 else 1)
    raw = rng.integers(0, np.iinfo(unit).max, size=count, dtype=unit, endpoint=True)
    return raw.view(d)


def second(name, n, rng, data):
    """The second operand: an array of dtype `name`, or the scalar `typejoin bench --rhs`
    takes for `name` (`f*` 1.5, `i*` 3, `c*` 1.5-0.5j, `b*` True; `dtype@0d` a zero-dim
    array of 1.5, or 3 for an integer dtype)."""
    python = {"f*": 1.5, "i*": 3, "c*": 1.5 - 0.5j, "b*": True}
    if name in python:
        return python[name]
    if name.endswith("@0d"):
        d = dt(name[:-3])
        return np.asarray(3 if d.kind in "iub" else 1.5, dtype=d)
    return random(name, n, rng, data)


def copy_bandwidth():
    src = np.ones(32 * 1024 * 1024, dtype=np.float64)  # 256 MB
    dst = np.empty_like(src)
    t = best(lambda: np.copyto(dst, src), 5)
    return 2 * src.nbytes / t / 1e9


def measure(pairs, n, threads=1, runs=10, rounds=3, data="normal", bw=None, quiet=False,
            with_jax=True):
    """One row per (op, lhs, rhs): NumPy, JAX (None when absent, not promoted or not asked
    for), typejoin and the bandwidth bound, in seconds, each side its best over `rounds`.

    With one thread the process is pinned to one CPU while it measures: XLA's CPU backend
    spreads a large elementwise op over every core it may use (bfloat16 + bfloat16 at 1e7 ran
    in half the time on two cores), and its threads, created at its first op, inherit the
    pin. typejoin's bench runs with `--threads 1` on the same CPU."""
    if threads == 1 and hasattr(os, "sched_setaffinity"):
        cpus = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cpus)})
        try:
            return _measure(pairs, n, threads, runs, rounds, data, bw, quiet, with_jax)
        finally:
            os.sched_setaffinity(0, cpus)
    return _measure(pairs, n, threads, runs, rounds, data, bw, quiet, with_jax)


def _measure(pairs, n, threads, runs, rounds, data, bw, quiet, with_jax):
    bw = bw or copy_bandwidth()
    rng = np.random.default_rng(1)
    rows = []
    for op, lhs, rhs in pairs:
        cmd = ["target/release/typejoin", "bench", "--op", op, "--lhs", lhs, "-n", str(n),
               "--threads", str(threads), "--runs", str(runs), "--data", data]
        cmd += ["--to", rhs] if op == "astype" else ["--rhs", rhs]
        a = random(lhs, n, rng, data)
        b = None if op == "astype" else second(rhs, n, rng, data)
        t_ours = t_np = t_jax = float("inf")
        for _ in range(rounds):
            ours = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                             text=True).stdout)
            out_name = ours["out"]
            t_ours = min(t_ours, ours["ns_per_element_best"] * n / 1e9)
            with np.errstate(all="ignore"):
                out = np.empty(n, dtype=dt(out_name))
                if op == "astype":
                    t_np = min(t_np, best(lambda: np.copyto(out, a, casting="unsafe"), runs))
                    moved = n * (a.itemsize + out.itemsize)
                else:
                    t_np = min(t_np, best(lambda: np.add(a, b, out=out, dtype=dt(out_name),
                                                         casting="unsafe"), runs))
                    moved = n * (a.itemsize + out.itemsize) + np.asarray(b).nbytes
            if with_jax and jax is not None and op == "add" and t_jax is not None:
                try:
                    # A Python scalar stays one (weak) for the jitted function.
                    ja, jb = jnp.asarray(a), jnp.asarray(b) if hasattr(b, "dtype") else b
                    f = jax.jit(jnp.add)
                    t_jax = min(t_jax, best(lambda: f(ja, jb).block_until_ready(), runs))
                except Exception:  # a pair JAX does not promote
                    t_jax = None
        if t_jax == float("inf"):
            t_jax = None
        bound = moved / (bw * 1e9)
        rows.append({"op": op, "lhs": lhs, "rhs": rhs, "pair": f"{op} {lhs} {rhs}",
                     "out": out_name, "n": n, "numpy_s": t_np, "jax_s": t_jax,
                     "typejoin_s": t_ours, "bound_s": bound})
        if not quiet:
            r = rows[-1]
            jax_s = f"{t_jax * 1e3:8.2f}" if t_jax else "       -"
            print(f"{r['pair']:34} {out_name:14} {t_np * 1e3:8.2f}m {jax_s}m "
                  f"{t_ours * 1e3:8.2f}m {t_np / t_ours:7.1f}x "
                  f"{bound * 1e3:7.2f}m {t_ours / bound:7.2f}x", flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("-n", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--casts", action="store_true", help="also time CASTS")
    ap.add_argument("--data", choices=["normal", "bits"], default="normal")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], check=True)
    bw = copy_bandwidth()
    print(f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, "
          f"jax {jax.__version__ if jax else 'not installed'}, n = {args.n:.0e}, "
          f"threads {args.threads}, data {args.data}, copy bandwidth {bw:.1f} GB/s")
    print(f"{'pair':34} {'out':14} {'NumPy':>9} {'JAX':>9} {'typejoin':>9} "
          f"{'vs NumPy':>8} {'bound':>8} {'of bound':>8}")
    rows = measure(PAIRS + (CASTS if args.casts else []), args.n, args.threads, args.runs,
                   args.rounds, args.data, bw)
    json.dump(rows, open("target/compare_numpy_kernels.json", "w"), indent=1)


if __name__ == "__main__":
    main()

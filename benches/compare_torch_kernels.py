#!/usr/bin/env python3
"""typejoin's kernels under the torch policy next to the jax policy and PyTorch (CPU), in one run.

For each pair of issue 17 (float32, bfloat16 and float16 arrays with themselves, an int8
array with a Python int, an int32 array with a zero-dim float32 tensor) and each op, times
`typejoin bench --policy torch` and `--policy jax` (release build, output preallocated,
normally distributed floats and full-range integers, best of --runs) and PyTorch's own
`torch.<op>(a, b, out=out)` on the same sizes with `torch.set_num_threads(T)`, for one and two
threads. Ratios are PyTorch ÷ typejoin (above 1: typejoin is faster) and jax policy ÷ torch
policy (about 1: the torch policy's conventions cost nothing).

The machine is shared and noisy: each row is measured in --rounds rounds, the three sides one
after another in each round, every side keeping its best time.
Skips (exit 0) when torch is missing.

Usage: python3 benches/compare_torch_kernels.py [-n N] [--rounds R] [--runs K]
(from the crate root)
"""
import argparse
import json
import subprocess
import sys

from common import best

try:
    import torch
except ImportError as e:  # pragma: no cover
    if __name__ == "__main__":
        print(f"skipped: {e}")
        sys.exit(0)
    torch = None

# (typejoin lhs, typejoin rhs, label): `i*` is a Python int (3), `float32@0d` a zero-dim
# tensor (1.5).
PAIRS = [
    ("float32", "float32", "f32 + f32"),
    ("bfloat16", "bfloat16", "bf16 + bf16"),
    ("float16", "float16", "f16 + f16"),
    ("int8", "i*", "int8 + Python int"),
    ("int32", "float32@0d", "i32 + f32@0d"),
]
OPS = ["add", "multiply"]
TORCH_DTYPES = {} if torch is None else {
    "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16,
    "int8": torch.int8, "int32": torch.int32}


def operand(name, n, gen):
    if name == "i*":
        return 3
    if name.endswith("@0d"):
        return torch.tensor(1.5, dtype=TORCH_DTYPES[name[:-3]])
    d = TORCH_DTYPES[name]
    if d.is_floating_point:
        return torch.randn(n, generator=gen, dtype=torch.float64).to(d)
    info = torch.iinfo(d)
    return torch.randint(info.min, info.max + 1, (n,), generator=gen, dtype=d)


def ours(policy, op, lhs, rhs, n, threads, runs):
    cmd = ["target/release/typejoin", "bench", "--policy", policy, "--op", op, "--lhs", lhs,
           "--rhs", rhs, "-n", str(n), "--threads", str(threads), "--runs", str(runs)]
    m = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return m["ns_per_element_best"] * n / 1e9, m["out"]


def measure(n, threads_list=(1, 2), runs=10, rounds=3, quiet=False):
    """One row per (threads, pair, op): PyTorch, typejoin's torch policy and jax policy."""
    gen = torch.Generator().manual_seed(1)
    rows = []
    for threads in threads_list:
        torch.set_num_threads(threads)
        for lhs, rhs, label in PAIRS:
            a, b = operand(lhs, n, gen), operand(rhs, n, gen)
            for op in OPS:
                f = getattr(torch, "mul" if op == "multiply" else op)
                out = f(a, b)
                t_torch = t_pol = t_jax = float("inf")
                for _ in range(rounds):
                    t, name = ours("torch", op, lhs, rhs, n, threads, runs)
                    t_pol = min(t_pol, t)
                    t_jax = min(t_jax, ours("jax", op, lhs, rhs, n, threads, runs)[0])
                    t_torch = min(t_torch, best(lambda: f(a, b, out=out), runs))
                assert str(out.dtype) == f"torch.{name}", (out.dtype, name)
                r = {"pair": label, "op": op, "threads": threads, "out": name,
                     "torch_ms": t_torch * 1e3, "typejoin_torch_ms": t_pol * 1e3,
                     "typejoin_jax_ms": t_jax * 1e3, "torch_over_typejoin": t_torch / t_pol,
                     "jax_policy_over_torch_policy": t_jax / t_pol}
                rows.append(r)
                if not quiet:
                    print(f"{label:20} {op:9} {threads:3} {name:9} {r['torch_ms']:7.2f}m "
                          f"{r['typejoin_torch_ms']:7.2f}m {r['typejoin_jax_ms']:7.2f}m "
                          f"{r['torch_over_typejoin']:7.2f}x "
                          f"{r['jax_policy_over_torch_policy']:12.2f}x", flush=True)
    return rows


def markdown(n=10_000_000, rounds=3, runs=10):
    """The docs table (scripts/bench): ratios measured in one run."""
    rows = measure(n, runs=runs, rounds=rounds, quiet=True)
    lines = [f"torch {torch.__version__}, n = {n:.0e}, normally distributed floats, full-range "
             "integers, output preallocated; PyTorch's own `torch.<op>(a, b, out=out)`.", "",
             "| pair | op | threads | result | PyTorch ÷ typejoin | jax policy ÷ torch policy |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['pair']} | {r['op']} | {r['threads']} | {r['out']} | "
                     f"{r['torch_over_typejoin']:.2f} | {r['jax_policy_over_torch_policy']:.2f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], check=True)
    print(f"torch {torch.__version__}, n = {args.n:.0e}")
    print(f"{'pair':20} {'op':9} {'thr':>3} {'out':9} {'torch':>8} {'tj torch':>8} "
          f"{'tj jax':>8} {'torch/tj':>8} {'jax/torch pol':>13}")
    rows = measure(args.n, args.threads, args.runs, args.rounds)
    json.dump(rows, open("target/compare_torch_kernels.json", "w"), indent=1)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The kernel cases of `scripts/bench` (common.PAIRS + common.CASTS) timed with two typejoin
binaries in the same run, alternating, best of each: a refactor of the kernels (or a change
of what the binary links) shows what it does to their speed before it lands.

    python3 benches/compare_binaries.py OLD_BIN NEW_BIN [--sizes 1e3,1e5,1e7] [--threads 1,2]

Prints a Markdown table: nanoseconds per element of each binary and OLD ÷ NEW (above 1: the
new binary is faster). Needs only the binaries (`typejoin bench` makes its own inputs); no
NumPy. The machine is shared and noisy: read a ratio within a few per cent of 1 as equal, and
rerun the rows that are not.
"""
import argparse
import json
import subprocess
import sys

from common import CASTS, PAIRS, runs_for, table

# src/kernels/ops/mod.rs: arrays at least this long run their chunks on the rayon pool.
PARALLEL_MIN = 1 << 17


def per_element(binary, op, lhs, rhs, n, threads, runs):
    """`typejoin bench`'s best nanoseconds per element of one case."""
    cmd = [binary, "bench", "--op", op, "--lhs", lhs, "-n", str(n), "--threads", str(threads),
           "--runs", str(runs)]
    cmd += ["--to", rhs] if op == "astype" else ["--rhs", rhs]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["ns_per_element_best"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--sizes", default="1e3,1e5,1e7")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3, help="alternations of the two binaries")
    ap.add_argument("--only", action="append", default=[],
                    help="time only the kernels whose name contains this (repeatable)")
    args = ap.parse_args()
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    rows, ratios = [], []
    for op, lhs, rhs in PAIRS + CASTS:
        name = f"{op} {lhs} → {rhs}" if op == "astype" else f"{op} {lhs}, {rhs}"
        if args.only and not any(s in name for s in args.only):
            continue
        for n in sizes:
            for t in threads:
                if t > 1 and n < PARALLEL_MIN:
                    continue  # both would run on one thread
                runs = runs_for(n)
                old = new = float("inf")
                for _ in range(args.rounds):
                    old = min(old, per_element(args.old, op, lhs, rhs, n, t, runs))
                    new = min(new, per_element(args.new, op, lhs, rhs, n, t, runs))
                ratios.append(old / new)
                rows.append([name, f"{n:.0e}", str(t), f"{old:.3f}", f"{new:.3f}",
                             f"{old / new:.2f}"])
                print(f"{rows[-1]}", file=sys.stderr, flush=True)
    print(table(["kernel", "n", "threads", "old ns/element", "new ns/element", "old ÷ new"],
                rows))
    ratios.sort()
    print(f"\n{len(ratios)} cases; old ÷ new: lowest {ratios[0]:.2f}, median "
          f"{ratios[len(ratios) // 2]:.2f}, highest {ratios[-1]:.2f}")


if __name__ == "__main__":
    main()

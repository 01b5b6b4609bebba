#!/usr/bin/env python3
"""Per-call speed of the Python package's promotion API against the functions it mirrors, in
one run (a benchmark, not a test): `Table.result_type` against `np.result_type` (and
`jnp.result_type` when installed; `torch.result_type` on tensors and a Python number), `join`
against `np.promote_types`
(and `jnp.promote_types`, `torch.promote_types`), on dtype arguments, each side in turn, best
of --runs rounds of --number calls. Ratios above 1 mean typejoin is faster.
Usage: python3 benches/compare_promotion_calls.py [--runs K] [--number N]
"""
import argparse
import importlib.util
import timeit

import numpy as np

import typejoin


def per_call(f, number, runs):
    """The best time of one call of `f` over `runs` rounds of `number` calls, in ns."""
    return min(timeit.repeat(f, number=number, repeat=runs)) / number * 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--number", type=int, default=20000)
    a = ap.parse_args()
    pairs = [(np.dtype("int8"), np.dtype("uint8")), (np.dtype("int16"), np.dtype("float16")),
             (np.dtype("uint64"), np.dtype("int64"))]
    numpy = typejoin.policy("numpy")
    rows = []
    for x, y in pairs:
        # Each lambda binds its own pair (a closure would read the loop's last one).
        rows.append(("numpy", f"result_type({x}, {y})",
                     lambda x=x, y=y: numpy.result_type(x, y),
                     lambda x=x, y=y: np.result_type(x, y)))
        rows.append(("numpy", f"join({x}, {y})", lambda x=x, y=y: numpy.join(x, y),
                     lambda x=x, y=y: np.promote_types(x, y)))
    if importlib.util.find_spec("jax"):
        import jax.numpy as jnp

        jax = typejoin.policy("jax")
        x, y = jnp.dtype("int8"), jnp.dtype("uint8")
        rows.append(("jax", "result_type(int8, uint8)", lambda x=x, y=y: jax.result_type(x, y),
                     lambda x=x, y=y: jnp.result_type(x, y)))
        rows.append(("jax", "join(int8, uint8)", lambda x=x, y=y: jax.join(x, y),
                     lambda x=x, y=y: jnp.promote_types(x, y)))
    if importlib.util.find_spec("torch"):
        import torch

        tp = typejoin.policy("torch")
        x, y = torch.int8, torch.uint8
        rows.append(("torch", "join(int8, uint8)", lambda x=x, y=y: tp.join(x, y),
                     lambda x=x, y=y: torch.promote_types(x, y)))
        # torch.result_type takes tensors and numbers, not dtypes.
        ta, tb = torch.zeros(3, dtype=torch.int8), torch.zeros(3, dtype=torch.uint8)
        rows.append(("torch", "result_type(int8[3], uint8[3])", lambda: tp.result_type(ta, tb),
                     lambda: torch.result_type(ta, tb)))
        rows.append(("torch", "result_type(int8[3], 2.5)", lambda: tp.result_type(ta, 2.5),
                     lambda: torch.result_type(ta, 2.5)))
    print("| policy | call | typejoin (ns) | library (ns) | ratio |")
    print("|---|---|---|---|---|")
    for policy, call, ours, theirs in rows:
        ours(), theirs()  # warm: typejoin keeps its answers for dtype operands
        o = per_call(ours, a.number, a.runs)
        t = per_call(theirs, a.number, a.runs)
        print(f"| {policy} | `{call}` | {o:.0f} | {t:.0f} | {t / o:.2f} |")


if __name__ == "__main__":
    main()

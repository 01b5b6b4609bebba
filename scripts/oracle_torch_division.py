#!/usr/bin/env python3
"""Measures PyTorch's float `remainder` and `floor_divide` where its loops compute them
otherwise than `divmod` (the `[kernels] float_floor_divide = "vectors"` convention,
docs/kernels.md), live, and writes tests/data/kernels/torch_division_cases.jsonl and
_expected.jsonl. Usage, from the repository root, with torch installed:

    scripts/oracle_torch_division.py [SEED]

Cases, per float dtype (float16, bfloat16, float32, float64) and op: rows of 1 to 70
elements (PyTorch's vector loop runs 64-byte vectors of each row, its scalar loop the tail),
broadcast rows and columns, divisors of one element (a zero-dim tensor, a `(1,)` tensor, a
Python float: float16 and bfloat16 floor division then computes in float32) and Python-float
dividends; elements drawn from the edge values of oracle_torch.py (±0, ±inf, NaN, subnormals,
the largest finite) and pairs whose quotient overflows (Sleef's `fmod` is NaN there), mixed
with random values over the dtype's range. NaN results are written as the dtype's positive
quiet NaN.
"""
import math
import os
import random
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_torch as ot  # noqa: E402 (after the path; needs torch)
from oracle_common import write_cases  # noqa: E402

torch = ot.torch
torch.set_num_threads(1)
warnings.simplefilter("ignore")
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 20261205)
ot.rng.seed(rng.random())

FLOATS = ["float16", "bfloat16", "float32", "float64"]
LENGTHS = [1, 2, 7, 8, 9, 12, 15, 16, 17, 20, 31, 32, 33, 40, 47, 64, 65, 70]
SHAPES = [([2, 20], [20]), ([40, 2], [40, 1]), ([3, 17], [3, 1]), ([2, 40], [1, 40]),
          ([5], [1]), ([33], [1]), ([4, 16], [1])]


def element(name):
    """An edge value, a value of a quotient that overflows, or a random one."""
    info = torch.finfo(ot.T[name])
    r = rng.random()
    if r < 0.35:
        return rng.choice(ot.values(name))
    if r < 0.6:  # large over tiny: the quotient overflows
        big = info.max / rng.choice([1, 3, 1e3, 1e6])
        tiny = info.tiny * rng.choice([1, 0.25, 3, 1e3, 1e6])
        return rng.choice([big, -big, tiny, -tiny])
    e = rng.uniform(math.log2(info.tiny), math.log2(info.max) - 1)
    return rng.choice([1, -1]) * 2 ** e


def array(name, shape):
    n = math.prod(shape)
    return ot.tensor(name, [element(name) for _ in range(n)], shape)


def main():
    for name in FLOATS:
        for op in ("remainder", "floor_divide"):
            f = getattr(torch, op)
            for n in LENGTHS:
                for _ in range(3):
                    a, b = array(name, [n]), array(name, [n])
                    ot.emit(op, [a, b], lambda: f(a, b))
            for sa, sb in SHAPES:
                for _ in range(3):
                    a, b = array(name, sa), array(name, sb)
                    ot.emit(op, [a, b], lambda: f(a, b))
            for n in (1, 20, 40, 65):
                for _ in range(3):
                    a = array(name, [n])
                    zero_dim = array(name, [])
                    ot.emit(op, [a, zero_dim], lambda: f(a, zero_dim))
                    py = float(element("float32" if name != "float64" else "float64"))
                    ot.emit(op, [a, py], lambda: f(a, py))
                    # A Python number first through the operator, as a user writes it.
                    first = (lambda: py % a) if op == "remainder" else (lambda: py // a)
                    ot.emit(op, [py, a], first)
    write_cases("torch_division", ot.cases, ot.expected)
    print(f"torch_division: {len(ot.cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Measures the order in which NumPy's `np.sum` adds float and complex arrays (the
`[kernels] sum_order = "numpy"` convention, docs/kernels.md), live, and writes
tests/data/kernels/numpy_sums_cases.jsonl and _expected.jsonl. Usage, from the repository
root, in an environment with NumPy and ml_dtypes:

    scripts/oracle_numpy_sums.py [SEED] [CASES]

Each case sums one random C-contiguous array of float16, bfloat16, float32, float64,
complex64, complex128, float8_e4m3fn or float8_e5m2, whole or along an axis, over shapes where
NumPy's order changes: fewer than 8 elements, up to 128 (8 accumulators), more (split in
two), the same lines behind dimensions of size 1, and axes whose rows are added one after
another. The values are random magnitudes (10^-3 to 10^3, a few ±0, ±inf, NaN, subnormals and
each dtype's largest values), so that the order shows in the last place; how many sums an
exact summation rounded once would get wrong is printed.
"""
import math
import os
import random
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")
rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 20261129)
CASES = int(sys.argv[2]) if len(sys.argv) > 2 else 1500

import fuzz_adapter_numpy as lib  # noqa: E402
from oracle_common import write_cases  # noqa: E402
from oracle_kernels_extra import dt  # noqa: E402

DTYPES = lib.FLOATS + lib.COMPLEX + ["float8_e4m3fn", "float8_e5m2"]
SHAPES = [(1,), (3,), (7,), (8,), (9,), (16,), (20,), (33,), (40,), (64,), (127,), (128,),
          (129,), (200,), (300,), (1000,), (2, 3), (3, 5), (2, 20), (5, 40), (3, 130),
          (129, 2), (4, 3, 5), (2, 40, 1), (40, 1), (300, 1), (1, 40), (3, 1, 70), (1, 1, 9)]


def value(name):
    r = rng.random()
    if r < 0.03:
        return rng.choice([0.0, -0.0, math.inf, -math.inf, math.nan])
    if r < 0.06:
        import ml_dtypes

        info = ml_dtypes.finfo(dt(name if name not in lib.COMPLEX else
                                  "float32" if name == "complex64" else "float64"))
        return rng.choice([float(info.max), -float(info.max), float(info.smallest_normal) / 3])
    return rng.uniform(-10, 10) * 10.0 ** rng.randint(-3, 3)


def exact(x, axis):
    """The sum of each line taken exactly (math.fsum) and rounded once into the dtype."""
    def one(v):
        if x.dtype.kind == "c":
            return complex(math.fsum(c.real for c in v), math.fsum(c.imag for c in v))
        return math.fsum(float(e) for e in v)
    wide = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
    try:
        r = np.apply_along_axis(one, 0, wide.reshape(-1, 1)) if axis is None else \
            np.apply_along_axis(one, axis, wide)
    except (OverflowError, ValueError):
        return None  # an infinite or NaN element: fsum raises
    return np.asarray(r).astype(x.dtype)


def main():
    cases, expected, order = [], [], 0
    while len(cases) < CASES:
        name, shape = rng.choice(DTYPES), rng.choice(SHAPES)
        n = math.prod(shape)
        if name in lib.COMPLEX:
            vals = [complex(value(name), value(name)) for _ in range(n)]
        else:
            vals = [value(name) for _ in range(n)]
        x = lib.tensor(name, vals, shape)
        axis = rng.choice([None, None] + list(range(len(shape))))
        cid = len(cases)
        case = {"id": cid, "op": "sum", "args": [lib.arg_json(x)]}
        if axis is not None:
            case["axis"] = axis
        cases.append(case)
        with np.errstate(all="ignore"):
            r = np.asarray(np.sum(x, axis=axis))
        expected.append({"id": cid, "dtype": lib.name_of(r.dtype), "shape": list(r.shape),
                         "bits": lib.bits_of(r)})
        e = exact(x, axis)
        if e is not None and lib.bits_of(e.reshape(r.shape)) != lib.bits_of(r):
            order += 1
    write_cases("numpy_sums", cases, expected)
    print(f"{len(cases)} cases; {order} sums of finite elements differ from the exact sum "
          f"rounded once (NumPy {np.__version__})", file=sys.stderr)


main()

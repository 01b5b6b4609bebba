#!/usr/bin/env python3
"""Measures `jnp.multiply` of complex64 and complex128 operands live on jax (x64, CPU) over
random pairs of broadcastable shapes, and writes
tests/data/kernels/jax_complex_multiply_cases.jsonl and _expected.jsonl (the `[kernels]
complex_multiply = "xla"` convention, docs/kernels.md). XLA fuses one of the imaginary part's
two products, and which one depends on the shapes: it computes `x · y` as `y · x` when `y` is
constant along the result's innermost dimension longer than one and `x` is not, or when `y` is
complex64 converted to a complex128 product and has the result's shape exactly (and `x` is not
constant along that dimension). Operands: complex64 or complex128 alike, or complex128 with
complex64 on either side. Shapes have up
to four dimensions of 1, 2, 3 or 5; a tenth of the operands are Python complex numbers. Parts are
drawn as a user's program draws them: a fifth from ±0, ±inf, NaN, ±1, subnormals, the largest
finite values, 2, 0.5 and 65504; the rest spread over 10^-45..10^45 or uniform in [-100, 100].
Prints how many results differ from those of the operands swapped (the cases that tell the two
fusions apart). Usage, from the repository root:

    scripts/oracle_jax_complex_multiply.py [SEED] [N]
"""
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

from oracle_common import random_parts  # noqa: E402
from fuzz_adapter_numpy import arg_json, bits_of  # noqa: E402

warnings.filterwarnings("ignore")
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 5
n = int(sys.argv[2]) if len(sys.argv) > 2 else 300
rng = np.random.default_rng(seed)
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-310, -1e-310, 1e-40, 1e308, -1e308,
         3.4e38, 2.0, 0.5, 65504.0, 2.2250738585072014e-308, 1.1754944e-38]


def parts(k, ft):
    return random_parts(rng, k, ft, EDGES)


def operand(shape, ct, ft):
    if rng.random() < 0.1:
        re, im = parts(2, np.float64)
        return complex(re, im)
    k = int(np.prod(shape, dtype=int))
    a = np.empty(k, ct)
    a.real, a.imag = parts(k, ft), parts(k, ft)
    return a.reshape(shape)


def shapes():
    out = [int(rng.choice([1, 2, 3, 5])) for _ in range(rng.integers(0, 5))]

    def sub():
        k = int(rng.integers(0, len(out) + 1))
        return tuple(d if rng.random() < 0.6 else 1 for d in out[len(out) - k:])

    return sub(), sub()


C64, C128 = (np.complex64, np.float32), (np.complex128, np.float64)
cases, expected, tell = [], [], 0
for i in range(n):
    # One dtype, or complex128 with complex64 (converted to the complex128 product) either side.
    (cx, fx), (cy, fy) = [(C64, C64), (C128, C128), (C128, C64), (C64, C128)][i % 4]
    sx, sy = shapes()
    x, y = operand(sx, cx, fx), operand(sy, cy, fy)
    if not isinstance(x, np.ndarray) and not isinstance(y, np.ndarray):
        y = np.full(sy, y, cy)
    got = np.asarray(jnp.multiply(x, y))
    swapped = np.asarray(jnp.multiply(y, x))
    tell += bits_of(got) != bits_of(swapped)
    cases.append({"id": i, "op": "multiply", "args": [arg_json(x), arg_json(y)]})
    expected.append({"id": i, "dtype": got.dtype.name, "shape": list(got.shape),
                     "bits": bits_of(got)})
for suffix, rows in [("cases", cases), ("expected", expected)]:
    path = f"tests/data/kernels/jax_complex_multiply_{suffix}.jsonl"
    with open(path + ".tmp", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    os.replace(path + ".tmp", path)
print(f"jax {jax.__version__}: {len(cases)} cases written, {tell} differ from the operands swapped")

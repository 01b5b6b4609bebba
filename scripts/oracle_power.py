#!/usr/bin/env python3
"""Measures NumPy's real float `power` where the exponent is one element (the `[kernels]`
convention `power_exponent`, docs/lattices/conventions.md) and writes
tests/data/kernels/numpy_power_cases.jsonl and _expected.jsonl.

Cases: `np.power(base, exponent)` for every pair of base and exponent shapes below (an exponent
of one element, zero-dim, `(1,)` or `(1, 1)`, a Python float, or a full array), for dtype
pairs whose loop is float64, float32 (also reached from float16, bfloat16, float8 and int8
operands), float16 or bfloat16, and exponents −1, −0.0, 0, 0.5, 1, 2 (NumPy's fast path),
−0.5 and 3 (`pow`); bases are edge values (±0, ±inf, NaN, subnormals, negatives) and random
ones. NumPy's AVX-512 dispatch is disabled (`NPY_DISABLE_CPU_FEATURES`, before NumPy is
imported): with it NumPy computes `pow` by Intel's SVML, which typejoin does not port, and
these cases are about which elements reach `pow` at all. Usage, from the repository root, with
NumPy 2.4 and ml_dtypes 0.6:

    scripts/oracle_power.py [SEED]
"""
import math
import os
import random
import sys
import warnings

os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402

import fuzz_adapter_numpy as lib  # noqa: E402
from oracle_common import answer, write_cases  # noqa: E402

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 11
rng = random.Random(seed)

PAIRS = [("float64", "float64"), ("float32", "float32"), ("float16", "float32"),
         ("bfloat16", "float32"), ("float32", "float8_e4m3fn"), ("int8", "float32"),
         ("float64", "float32"), ("float16", "float16"), ("bfloat16", "bfloat16")]
# (base shape, exponent shape); None: a Python float exponent.
SHAPES = [((5,), ()), ((5,), (1,)), ((1,), (1,)), ((1,), ()), ((), ()), ((), (1,)),
          ((1, 1), (1,)), ((1,), (1, 1)), ((3, 5), (1, 1)), ((2, 1), (1, 1)), ((3, 1), (3, 1)),
          ((20,), (1,)), ((6,), (6,)), ((4, 1), (1, 5)), ((40, 2), (40, 1)), ((5,), None),
          ((1,), None), ((), None)]
EXPONENTS = [-1.0, -0.0, 0.0, 0.5, 1.0, 2.0, -0.5, 3.0]
BASES = [-0.0, 0.0, -math.inf, math.inf, math.nan, -1.0, -4.0, 3.0, 7.0, 0.1, 1e-40, -1e-40,
         65504.0, 1e300]


def array(name, shape, values):
    n = math.prod(shape)
    vals = [values[k % len(values)] for k in range(n)]
    return lib.tensor(name, vals, shape)


cases, expected = [], []
python_float_done = set()  # a Python float exponent: once per base dtype
for base_t, exp_t in PAIRS:
    for base_shape, exp_shape in SHAPES:
        for e in EXPONENTS:
            bases = BASES[:] + [rng.uniform(-50, 50) for _ in range(4)]
            rng.shuffle(bases)
            x = array(base_t, base_shape, bases)
            if exp_shape is None:
                if (base_t, base_shape, e) in python_float_done:
                    continue
                python_float_done.add((base_t, base_shape, e))
                y = e
            else:
                y = array(exp_t, exp_shape, [e])
            want = answer(lib, lib.name_of, lambda: lib.call(np.power, x, y))
            cid = len(cases)
            cases.append({"id": cid, "op": "power", "args": [lib.arg_json(x), lib.arg_json(y)]})
            expected.append({"id": cid} | want)

write_cases("numpy_power", cases, expected)
print(f"numpy {np.__version__} (NPY_DISABLE_CPU_FEATURES="
      f"{os.environ['NPY_DISABLE_CPU_FEATURES']!r}): {len(cases)} cases")

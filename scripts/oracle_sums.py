#!/usr/bin/env python3
"""Measures the order in which NumPy's `np.sum`, PyTorch's `torch.sum`, TensorFlow's
`tf.reduce_sum` (on one thread, as scripts/oracle_tensorflow.py sets it) or `jax.numpy.sum`
(jax_enable_x64, CPU) adds float and
complex arrays (the `[kernels] sum_order` convention, docs/kernels.md), live, and writes
tests/data/kernels/<LIB>_sums_cases.jsonl and _expected.jsonl. Usage, from the repository
root, in an environment with the library (and ml_dtypes):

    scripts/oracle_sums.py numpy|torch|tensorflow|jax [SEED] [CASES]

Each case sums one random C-contiguous array (tensor) of float16, bfloat16, float32, float64,
complex64 or complex128 (NumPy: also float8_e4m3fn and float8_e5m2), whole or along an axis,
over shapes where the libraries' orders change: fewer than 8 elements, up to 128 (NumPy's 8
accumulators; PyTorch's vectors), more (NumPy splits in two; PyTorch's chunks of 16 rows), the
same lines behind dimensions of size 1, and axes whose rows are added one after another or 4
columns at once; for TensorFlow also lines across Eigen's changes (4 packet accumulators from
32 float32 elements, the split in two past 1,024 packets, 200 for float16) and axes of 16 rows
or more (Eigen's 4 accumulators by row); for JAX lines across XLA's 32-element windows. The values are random magnitudes (10^-3 to 10^3, a few ±0, ±inf, NaN, subnormals and
each dtype's largest values), so that the order shows in the last place.
"""
import math
import os
import random
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")
LIB = sys.argv[1] if len(sys.argv) > 1 else ""
if LIB not in ("numpy", "torch", "tensorflow", "jax"):
    sys.exit("usage: scripts/oracle_sums.py numpy|torch|tensorflow|jax [SEED] [CASES]")
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261129)
CASES = int(sys.argv[3]) if len(sys.argv) > 3 else 1500

from oracle_common import write_cases  # noqa: E402
from oracle_kernels_extra import dt  # noqa: E402

if LIB == "numpy":
    import fuzz_adapter_numpy as lib  # noqa: E402

    DTYPES = lib.FLOATS + lib.COMPLEX + ["float8_e4m3fn", "float8_e5m2"]
    version = np.__version__

    def sum_of(x, axis):
        return np.sum(x, axis=axis)
elif LIB == "jax":
    import fuzz_adapter_jax as lib  # noqa: E402
    import jax.numpy as jnp  # noqa: E402

    DTYPES = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
    version = lib.version

    def sum_of(x, axis):
        return jnp.sum(x, axis=axis)
elif LIB == "tensorflow":
    import oracle_tensorflow as lib  # noqa: E402
    import tensorflow as tf  # noqa: E402

    DTYPES = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
    version = tf.__version__
    lib.name_of = lambda dtype: dtype.name

    def sum_of(x, axis):
        lib.before_call()
        return tf.reduce_sum(x, axis=axis)
else:
    import oracle_torch as lib  # noqa: E402
    import torch  # noqa: E402

    DTYPES = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
    version = f"{torch.__version__}, {torch.backends.cpu.get_cpu_capability()}"

    def sum_of(x, axis):
        return torch.sum(x) if axis is None else torch.sum(x, dim=axis)
SHAPES = [(1,), (3,), (7,), (8,), (9,), (16,), (20,), (33,), (40,), (64,), (127,), (128,),
          (129,), (200,), (300,), (1000,), (2, 3), (3, 5), (2, 20), (5, 40), (3, 130),
          (129, 2), (4, 3, 5), (2, 40, 1), (40, 1), (300, 1), (1, 40), (3, 1, 70), (1, 1, 9)]
if LIB == "jax":
    SHAPES += [(32,), (63,), (64,), (65,), (96,), (97,), (1025,), (3000,), (33, 3), (2, 33, 2),
               (1, 1), (0, 3)]
if LIB == "tensorflow":
    SHAPES += [(24,), (31,), (32,), (63,), (65,), (1601,), (1700,), (4100,), (8193,), (9000,),
               (16, 3), (16, 9), (17, 8), (20, 16), (33, 5), (3, 16, 8), (2, 18, 12), (5, 1),
               (0, 3), (1,), (1, 1)]


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


def main():
    cases, expected = [], []
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
            r = sum_of(x, axis)
        expected.append({"id": cid, "dtype": lib.name_of(r.dtype), "shape": list(r.shape),
                         "bits": lib.bits_of(r)})
    write_cases(f"{LIB}_sums", cases, expected)
    print(f"{len(cases)} cases ({LIB} {version}); the Rust test counts how many the exact sum "
          "would get wrong", file=sys.stderr)


main()

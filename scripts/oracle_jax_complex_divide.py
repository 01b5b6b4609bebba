#!/usr/bin/env python3
"""Measures `jnp.divide` of complex64 and complex128 arrays live on jax (x64, CPU) and writes
tests/data/kernels/jax_complex_divide_cases.jsonl and _expected.jsonl: one case per complex
dtype, N random quotients each (the `[kernels] complex_divide = "xla"` convention,
docs/kernels.md). Parts are drawn as a user's program draws them: a fifth each from ±0, ±inf,
NaN, ±1, subnormals, the largest finite values, 2, 0.5 and 65504; from values spread over
10^-45..10^45; and from uniform ones in [-100, 100]. NaN results are written as the dtype's
positive quiet NaN. Usage, from the repository root:

    scripts/oracle_jax_complex_divide.py [SEED] [N]
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
from fuzz_adapter_numpy import bits_of  # noqa: E402

warnings.filterwarnings("ignore")
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 4
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
rng = np.random.default_rng(seed)
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-310, -1e-310, 1e-40, 1e308, -1e308,
         3.4e38, 2.0, 0.5, 65504.0]


def parts(k, ft):
    return random_parts(rng, k, ft, EDGES)


cases, expected = [], []
for ct, ft in [(np.complex64, np.float32), (np.complex128, np.float64)]:
    a, b = np.empty(n, ct), np.empty(n, ct)
    a.real, a.imag, b.real, b.imag = (parts(n, ft) for _ in range(4))
    got = np.asarray(jnp.divide(jnp.asarray(a), jnp.asarray(b)))
    i = len(cases)
    arg = lambda x: {"dtype": ct.__name__, "shape": [n], "bits": bits_of(x)}  # noqa: E731
    cases.append({"id": i, "op": "true_divide", "args": [arg(a), arg(b)]})
    expected.append({"id": i, **arg(got)})
for suffix, rows in [("cases", cases), ("expected", expected)]:
    path = f"tests/data/kernels/jax_complex_divide_{suffix}.jsonl"
    with open(path + ".tmp", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    os.replace(path + ".tmp", path)
print(f"jax {jax.__version__}: {len(cases)} cases of {n} quotients written")

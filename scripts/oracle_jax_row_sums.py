#!/usr/bin/env python3
"""Measures how XLA's CPU code sums a whole two-dimensional array (the row lanes of the
`[kernels]` convention `sum_order = "xla"`, docs/lattices/conventions.md) and writes
tests/data/kernels/jax_row_sums_cases.jsonl and _expected.jsonl: `jnp.sum(x)` of random
float32, float64, complex64 and complex128 arrays of 2 to 32 rows of 2 to 20 elements (values of
random sign and magnitudes over eight decades, so the order of the additions shows in the last
place). Usage, from the repository root, with jax 0.10 on the CPU:

    scripts/oracle_jax_row_sums.py [SEED] [N] [STEM]

(N arrays per shape and dtype, default 2; STEM names the files, default jax_row_sums.) XLA
compiles the loops for the machine it runs on, and the order of the rows' additions depends on
its CPU (`sum_order = "xla-avx512"` or `"xla-avx2"`): jax_row_sums was measured on a CPU with
AVX-512, jax_row_sums_avx2 (`... 9 2 jax_row_sums_avx2`) on an AMD EPYC of family 23 (AVX2).
"""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402

import fuzz_adapter_jax as lib  # noqa: E402
from oracle_common import answer, write_cases  # noqa: E402

seed = int(sys.argv[1]) if len(sys.argv) > 1 else 8
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2
stem = sys.argv[3] if len(sys.argv) > 3 else "jax_row_sums"
rng = np.random.default_rng(seed)

ROWS = [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 28, 32]
COLS = [2, 3, 4, 5, 6, 7, 8, 9, 12, 20]
cases, expected = [], []
for name in ["float32", "float64", "complex64", "complex128"]:
    for r in ROWS:
        for c in COLS:
            for _ in range(n):
                x = rng.standard_normal((r, c)) * 10.0 ** rng.integers(-4, 4, (r, c))
                if name.startswith("complex"):
                    x = x + 1j * rng.standard_normal((r, c)) * 10.0 ** rng.integers(-4, 4, (r, c))
                a = lib.jnp.asarray(x.astype(name))
                want = answer(lib, lib.name_of, lambda: lib.jnp.sum(a))
                cid = len(cases)
                cases.append({"id": cid, "op": "sum", "args": [lib.arg_json(a)]})
                expected.append({"id": cid} | want)
write_cases(stem, cases, expected)
print(f"jax {lib.version}: {len(cases)} cases")

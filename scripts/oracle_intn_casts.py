#!/usr/bin/env python3
"""Measures how ml_dtypes (with NumPy) converts floats to its sub-byte integers, live, and writes
tests/data/kernels/intn_casts_cases.jsonl and _expected.jsonl (the `[kernels] intn_conversion`
convention, docs/kernels.md). Usage, from the repository root, in an environment with NumPy and
ml_dtypes:

    scripts/oracle_intn_casts.py [SEED]

Each case is `astype` of one float dtype to int1, int2, int4, uint1, uint2 or uint4: every
pattern of the float8, float6 and float4 formats; of bfloat16 and float16 1,024 random patterns
and 1,024 values spread over 10⁰..10¹¹, of float32 and float64 512 of each, all with the 19
values where the conversions part (±0.5, ±1, ±7.9, ±8, ±16, 300, ±2³¹ and the floats beside it,
2³² + 3, ±inf, NaN). A cast ml_dtypes does not register (float8_e8m0fnu to every sub-byte
integer, float6_e2m3fn to int4 and uint4) is written as its error kind.
"""
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_common import write_cases  # noqa: E402
from oracle_kernels_extra import NBITS, UNIT, bits_of, dt  # noqa: E402

rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 20261129)
SMALL = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
         "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
         "float4_e2m1fn"]
WIDE = {"bfloat16": 1024, "float16": 1024, "float32": 512, "float64": 512}
TARGETS = ["int1", "int2", "int4", "uint1", "uint2", "uint4"]
EDGES = [0.5, -0.5, 1.0, -1.0, 7.9, -7.9, 8.0, -8.0, 16.0, -16.0, 300.0, 2.0 ** 31, -(2.0 ** 31),
         2.0 ** 31 - 128, -(2.0 ** 31) - 256, 2.0 ** 32 + 3, np.inf, -np.inf, np.nan]


def sources():
    for name in SMALL:
        w = NBITS.get(name, 8)
        yield name, np.arange(2 ** w, dtype=np.uint8).view(dt(name))
    for name, n in WIDE.items():
        d = dt(name)
        unit = UNIT[d.itemsize]
        random = rng.integers(0, np.iinfo(unit).max, n, dtype=unit, endpoint=True).view(d)
        # Magnitudes spread over the integers' scales, where truncation and wrapping show.
        spread = (rng.standard_normal(n) * 10.0 ** rng.uniform(0, 11, n)).astype(d)
        yield name, np.concatenate([np.array(EDGES).astype(d), random, spread])


cases, expected = [], []
for name, a in sources():
    for target in TARGETS:
        cid = len(cases)
        cases.append({"id": cid, "op": "astype",
                      "args": [{"dtype": name, "shape": [a.size], "bits": bits_of(a)}],
                      "dtype": target})
        try:
            r = a.astype(dt(target))
        except TypeError as e:
            expected.append({"id": cid, "kind": "unsupported", "error": str(e)})
            continue
        expected.append({"id": cid, "dtype": target, "shape": [a.size],
                         "bits": [int(b) & ((1 << NBITS.get(target, 1)) - 1)
                                  for b in bits_of(r)]})
write_cases("intn_casts", cases, expected)
print(f"{len(cases)} cases, ml_dtypes {ml_dtypes.__version__}, NumPy {np.__version__}",
      file=sys.stderr)

#!/usr/bin/env python3
"""Measures how NumPy (with ml_dtypes), PyTorch or TensorFlow `astype` a float or complex array
to an integer of 8 to 64 bits where the value is past the integer's range, infinite or NaN
(the `[kernels] int_conversion` convention, docs/kernels.md), live, and writes
tests/data/kernels/float_int_casts_<LIB>_cases.jsonl and _expected.jsonl. Usage, from the
repository root, in an environment with the library:

    scripts/oracle_float_int_casts.py numpy|torch|tensorflow [SEED]

One case per (float or complex dtype, integer dtype) pair: an array of 128 values, the edges
where the C casts part (NaN, ±inf, ±0.7, −1, ±300.5, ±1e10, 1e20, 1e300, 2^k and the values
beside it for k in 7, 8, 15, 16, 31, 32, 63, 64) and 64 random magnitudes from 2^-2 to 2^70,
rounded into the source dtype (a complex one's real part; its imaginary part is 1). Each
element's expected answer is the library's scalar loop, the element cast alone as a
one-element array: the vector loops of NumPy (uint32 from float32/float64/bfloat16), PyTorch
(uint32) and TensorFlow (every integer narrower than 64 bits) answer otherwise for some values,
by the element's place, and how many elements of the whole-array casts differ is printed.
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
if LIB not in ("numpy", "torch", "tensorflow"):
    sys.exit("usage: scripts/oracle_float_int_casts.py numpy|torch|tensorflow [SEED]")
rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261129)

from oracle_common import write_cases  # noqa: E402

if LIB == "numpy":
    import fuzz_adapter_numpy as lib  # noqa: E402
    from oracle_kernels_extra import dt  # noqa: E402

    SOURCES = lib.FLOATS + lib.COMPLEX + ["float8_e4m3fn", "float8_e5m2"]

    def astype(x, to):
        return x.astype(dt(to))

    def one(x, i):
        return x[i:i + 1]
elif LIB == "torch":
    import oracle_torch as lib  # noqa: E402

    lib.use_catalogue()
    SOURCES = [s for s in lib.FLOATS + lib.COMPLEX if s not in ("complex32", "bcomplex32")]

    def astype(x, to):
        return x.to(lib.T[to])

    def one(x, i):
        return x[i:i + 1]
else:
    import oracle_tensorflow as lib  # noqa: E402

    SOURCES = lib.FLOATS + lib.COMPLEX

    def astype(x, to):
        return lib.tf.cast(x, lib.T[to])

    def one(x, i):
        return x[i:i + 1]


def edges():
    vs = [math.nan, math.inf, -math.inf, 0.7, -0.7, -1.0, 300.5, -300.5, 1e10, -1e10, 1e20,
          1e300]
    for k in (7, 8, 15, 16, 31, 32, 63, 64):
        for sign in (1.0, -1.0):
            vs += [sign * 2.0 ** k + d for d in (-1.0, -0.5, 0.0, 1.0)]
    return vs


def values():
    vs = edges()
    return vs + [rng.choice((1.0, -1.0)) * 2.0 ** rng.uniform(-2, 70)
                 for _ in range(128 - len(vs))]


def main():
    cases, expected, place = [], [], 0
    for src in SOURCES:
        for to in lib.INTS:
            vals = values()
            if src in lib.COMPLEX:
                vals = [complex(v, 1.0) for v in vals]
            x = lib.tensor(src, vals, (len(vals),))
            cid = len(cases)
            cases.append({"id": cid, "op": "astype", "args": [lib.arg_json(x)], "dtype": to})
            try:
                whole = lib.bits_of(astype(x, to))
            except Exception as e:  # noqa: BLE001
                expected.append({"id": cid, "kind": lib.error_kind(e)})
                continue
            alone = [lib.bits_of(astype(one(x, i), to))[0] for i in range(len(vals))]
            place += sum(a != b for a, b in zip(whole, alone))
            expected.append({"id": cid, "dtype": to, "shape": [len(vals)], "bits": alone})
    write_cases(f"float_int_casts_{LIB}", cases, expected)
    print(f"{len(cases)} cases; {place} elements of the whole-array casts differ from the "
          f"scalar loop ({LIB} {lib.version if hasattr(lib, 'version') else ''})",
          file=sys.stderr)


main()

#!/usr/bin/env python3
"""Measures how JAX 0.10 (XLA on the CPU, x64) or TensorFlow 2.21 (CPU, NumPy behaviour) treat
subnormal numbers, the `[kernels] subnormals = "flush"` convention, and writes
tests/data/kernels/subnormals_<LIB>_cases.jsonl and _expected.jsonl. Usage, from the repository
root, in an environment with the library:

    scripts/oracle_subnormals.py jax|tensorflow [SEED]

Cases: random arrays of 1–24 elements drawn mostly from each float dtype's subnormals, the
values next to its smallest normal and products that underflow (bfloat16, float16, float32,
float64 and complex64/complex128 parts), under `add`, `subtract`, `multiply`, `maximum`,
`minimum` and the comparisons (same dtype or two real float dtypes), `astype` between the
float and complex dtypes and to bool, `where` and `clip` by zero-dim bounds, each called
as a user calls it (the fuzzer's adapters: `jnp.add`, `tf.add`, `tnp.less`, ...). Left out,
each for a reason the convention does not model: complex `maximum`/`minimum` (JAX chooses an
operand by a select, unflushed, and does not propagate NaN), complex `multiply` (its partial
products flush in the library), a complex array with a real one (XLA folds `x - 0` of the real
operand's zero imaginary part), `true_divide` (XLA divides bfloat16 as a product by the
reciprocal), `floor_divide`/`remainder` (each library's formula, with the sign of zeros its
own) and `sum` (the library's order of summation, and a one-element sum is its element,
unflushed); and under TensorFlow `maximum`/`minimum`/`clip` of bfloat16 (Eigen's loop over
the elements past its vector packets compares with DAZ but keeps the chosen operand's bits:
`tf.maximum(bfloat16 2^-128, -1)` is 2^-128 in a 17th element) and complex → bool (the real part
only).
"""
import json
import os
import random
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")
LIB = sys.argv[1] if len(sys.argv) > 1 else ""
if LIB not in ("jax", "tensorflow"):
    sys.exit("usage: scripts/oracle_subnormals.py jax|tensorflow [SEED]")
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261128
rng = random.Random(SEED)

from oracle_common import write_cases  # noqa: E402

if LIB == "jax":
    import fuzz_adapter_jax as lib  # noqa: E402

    import jax.numpy as jnp  # noqa: E402

    def astype(x, to):
        return x.astype(to)

    def where(c, x, y):
        return jnp.where(c, x, y)

    BINARY = lib.BINARY
else:
    import oracle_tensorflow as lib  # noqa: E402

    tf = lib.tf

    def astype(x, to):
        return tf.cast(x, lib.T[to])

    def where(c, x, y):
        return lib.tnp.where(c, x, y)

    BINARY = lib.BINARY

from oracle_kernels_extra import dt  # noqa: E402

name_of = getattr(lib, "name_of", lambda d: d.name)

REALS = ["bfloat16", "float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
PART = {"complex64": "float32", "complex128": "float64"}
OPS = ["add", "subtract", "multiply", "maximum", "minimum", "less", "equal", "greater_equal"]


def pool(name):
    """Values of a real float dtype around its subnormal range."""
    info = np.finfo(dt(name)) if name != "bfloat16" else None
    tiny = 2.0 ** -126 if name in ("bfloat16", "float32") else (
        2.0 ** -14 if name == "float16" else 2.0 ** -1022)
    sub = float(info.smallest_subnormal) if info is not None else 2.0 ** -133
    return [0.0, -0.0, sub, -sub, tiny / 2, -tiny / 3, tiny, -tiny, tiny * 0.75, tiny * 1.5,
            0.5, -1.0, 3.0, 2.0 ** 60, -(2.0 ** 60), float("inf"), float("nan"),
            rng.uniform(-1, 1) * tiny, rng.uniform(1, 2) * tiny]


def array(name, n):
    if name in COMPLEX:
        p = pool(PART[name])
        vals = [complex(rng.choice(p), rng.choice(p)) for _ in range(n)]
    else:
        p = pool(name)
        vals = [rng.choice(p) for _ in range(n)]
    return lib.tensor(name, vals, (n,))


cases, expected = [], []


def emit(op, args, call, **extra):
    try:
        r = call()
    except Exception as e:  # noqa: BLE001
        want = {"kind": lib.error_kind(e)}
    else:
        want = {"dtype": name_of(r.dtype), "shape": list(r.shape), "bits": lib.bits_of(r)}
    cid = len(cases)
    cases.append({"id": cid, "op": op, "args": [lib.arg_json(a) for a in args]} | extra)
    expected.append({"id": cid} | want)


def main():
    for _ in range(300):
        op = rng.choice(OPS)
        if rng.random() < 0.25 and op in ("add", "subtract", "equal"):
            a = b = rng.choice(COMPLEX)
        else:
            a, b = rng.choice(REALS), rng.choice(REALS)
        if LIB == "tensorflow" and op in ("maximum", "minimum") and "bfloat16" in (a, b):
            continue
        n = rng.randint(1, 24)
        x, y = array(a, n), array(b, n)
        emit(op, [x, y], lambda: BINARY[op](x, y))
    for src in REALS + COMPLEX:
        for to in REALS + COMPLEX + ["bool"]:
            if src in COMPLEX and to not in COMPLEX + ["bool"]:
                continue
            if LIB == "tensorflow" and src in COMPLEX and to == "bool":
                continue  # TensorFlow tests the real part only (docs/kernels.md)
            x = array(src, 16)
            emit("astype", [x], lambda: astype(x, to), dtype=to)
    for _ in range(40):
        a, b = rng.choice(REALS), rng.choice(REALS)
        n = rng.randint(1, 16)
        c, x, y = array(rng.choice(REALS), n), array(a, n), array(b, n)
        emit("where", [c, x, y], lambda: where(c, x, y))
    for _ in range(40):
        name = rng.choice(REALS[1:] if LIB == "tensorflow" else REALS)
        x = array(name, rng.randint(1, 16))
        lo, hi = array(name, 1).reshape(()), array(name, 1).reshape(())
        if LIB == "tensorflow":
            emit("clip", [x, lo, hi], lambda: tf.clip_by_value(x, lo, hi))
        else:
            emit("clip", [x, lo, hi], lambda: lib.clip(x, lo, hi))
    write_cases(f"subnormals_{LIB}", cases, expected)
    print(f"{len(cases)} cases")


main()

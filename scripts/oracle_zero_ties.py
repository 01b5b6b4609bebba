#!/usr/bin/env python3
"""Measures which zero `maximum`, `minimum` and `clip` give on a tie of zeros (+0 against −0,
or complex values equal but for a zero's sign) in one library, live, and writes
tests/data/kernels/zero_ties_<LIB>_cases.jsonl and _expected.jsonl (the `[kernels] zero_ties`
convention, docs/kernels.md). Usage, from the repository root, in an environment that has the
library (and ml_dtypes):

    scripts/oracle_zero_ties.py numpy|jax|torch|tensorflow [SEED]

Cases are drawn as a user's program draws them: arrays of 0 to 40 elements, zero-dim arrays,
broadcasting shapes and Python floats, elements mostly ±0 among ±1, ±inf, NaN and the
smallest subnormal (not for JAX and TensorFlow, whose CPU kernels flush subnormals to zero,
which typejoin does not model); same-dtype pairs and float pairs of two widths. NumPy's cases run under
the `jax` policy with `zero_ties = "operand"` (no shipped policy computes NumPy's float16),
so they keep to operands whose result dtype NumPy and JAX agree on (NumPy with ml_dtypes
makes a Python float beside bfloat16 or a float8 array float32; JAX keeps the array's type). PyTorch's depend on the
machine: its CPU loops run 64-byte vectors on AVX-512 (this machine's; 32-byte on AVX2),
which typejoin's `vectors` models. JAX's
complex cases hold no NaN: its complex maximum and minimum give the second operand wherever
the comparison fails, NaN or not (typejoin, as NumPy, propagates the NaN). TensorFlow's Python floats are ±1 only: it caches the
tensor a Python number converts to by value, so after `tf.maximum(-0.0, t)` a later `0.0` in
the same process is −0.0 too (and the other way round). NaN results are written as the dtype's positive quiet NaN.
"""
import os
import sys
import warnings

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_common import scalar_json, write_cases  # noqa: E402
from oracle_kernels_extra import bits_of, canonical, canonical_c, dt  # noqa: E402

LIB = sys.argv[1] if len(sys.argv) > 1 else ""
if LIB not in ("numpy", "jax", "torch", "tensorflow"):
    sys.exit("usage: scripts/oracle_zero_ties.py numpy|jax|torch|tensorflow [SEED]")
rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 20261127)
warnings.simplefilter("ignore")

REAL = ["float16", "bfloat16", "float32", "float64"]
FLOAT8 = ["float8_e4m3fn", "float8_e5m2"]
COMPLEX = ["complex64", "complex128"]
SHAPES = [[], [1], [3], [5], [7], [2, 3], [3, 5], [8], [12], [20], [40], [2, 20]]
PAIRS = [([4, 1], [1, 5]), ([12, 1], [1, 3]), ([3, 5], [5]), ([5], [3, 5]), ([], [20]),
         ([20], []), ([2, 20], [20]), ([3, 4], [3, 1])]
WIDER = [("float16", "float32"), ("bfloat16", "float32"), ("float32", "float64"),
         ("float16", "float64")]

if LIB == "numpy":
    xp = np
    DTYPES = REAL + FLOAT8 + COMPLEX
    clip = np.clip
elif LIB == "jax":
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as xp
    DTYPES = REAL + FLOAT8 + COMPLEX
    clip = xp.clip
elif LIB == "torch":
    import torch as xp
    DTYPES = REAL
    clip = xp.clamp
else:
    import tensorflow as tf
    import tensorflow.experimental.numpy as tnp
    tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="all")
    xp = tf
    DTYPES = REAL
    clip = tf.clip_by_value


def to_lib(a):
    """A NumPy array (of an ml_dtypes type too) as the library's array."""
    if LIB == "numpy":
        return a
    if LIB == "jax":
        return xp.asarray(a)
    if LIB == "torch":
        name = a.dtype.name
        t = xp.from_numpy(np.array(a.astype(np.float64)))
        return t.to(getattr(xp, name))
    return tf.cast(tf.constant(a.astype(np.float64)), getattr(tf, a.dtype.name))


def to_numpy(r):
    """The library's result as a NumPy array of the same dtype."""
    if LIB == "torch":
        if r.dtype == xp.bfloat16:
            return r.contiguous().view(xp.int16).numpy().view(dt("bfloat16"))
        return r.numpy()
    if LIB == "tensorflow":
        if r.dtype == tf.bfloat16:
            return tf.bitcast(r, tf.uint16).numpy().view(dt("bfloat16"))
        return r.numpy()
    return np.asarray(r)


SPECIAL = [1.0, -1.0, np.inf, -np.inf, np.nan, 0.5]


def values(name, shape):
    """Elements, mostly ±0, of `name` (NaN where a format has no infinity)."""
    n = int(np.prod(shape))
    tiny = 5e-324 if "complex" in name else float(ml_dtypes.finfo(dt(name)).smallest_subnormal)
    pick = []
    for _ in range(n):
        u = rng.random()
        if u < 0.7:
            pick.append(-0.0 if rng.random() < 0.5 else 0.0)
        elif u < 0.8 and LIB in ("numpy", "torch"):
            pick.append(tiny * (1 if rng.random() < 0.5 else -1))
        else:
            pick.append(SPECIAL[rng.integers(len(SPECIAL))])
    a = np.array(pick, dtype=np.float64).reshape(shape)
    if "complex" in name:
        im = np.where(rng.random(shape) < 0.7, np.where(rng.random(shape) < 0.5, -0.0, 0.0), 1.0)
        a = a + 1j * im
    return np.asarray(a).astype(dt(name))


def arr_json(a):
    return {"dtype": a.dtype.name, "shape": list(a.shape), "bits": bits_of(a)}


cases, expected = [], []


def emit(op, operands):
    """One case: the library's answer to op(*operands), or nothing where it raises."""
    arrays = [x for x in operands if isinstance(x, np.ndarray)]
    if LIB == "jax" and any(x.dtype.kind == "c" and np.isnan(x).any() for x in arrays):
        return  # JAX's complex maximum/minimum do not propagate NaN (a class of its own)
    args = [operand_json(x) for x in operands]
    try:
        r = to_numpy((clip if op == "clip" else getattr(xp, op))(
            *[to_lib(x) if isinstance(x, np.ndarray) else x for x in operands]))
    except Exception:  # noqa: BLE001 (an op the library refuses is not a tie)
        return
    r = np.asarray(r)
    if LIB == "numpy" and r.dtype != arrays[0].dtype:
        return  # NumPy with ml_dtypes promotes a Python float beside bfloat16 or float8 to float32
    flat = r.reshape(-1)
    r = (canonical_c(flat) if r.dtype.kind == "c" else canonical(flat)).reshape(r.shape)
    cid = len(cases)
    cases.append({"id": cid, "op": op, "args": args})
    expected.append({"id": cid, "dtype": r.dtype.name, "shape": list(r.shape), "bits": bits_of(r)})


def operand_json(x):
    return arr_json(x) if isinstance(x, np.ndarray) else scalar_json(x)


def python_float():
    if LIB == "tensorflow":
        return [1.0, -1.0][rng.integers(2)]
    return [0.0, -0.0, 1.0, -1.0][rng.integers(4)]


def main():
    for name in DTYPES:
        real = "complex" not in name
        for _ in range(6):
            for shape in SHAPES:
                for op in ("maximum", "minimum"):
                    emit(op, [values(name, shape), values(name, shape)])
            for sa, sb in PAIRS:
                op = ("maximum", "minimum")[rng.integers(2)]
                emit(op, [values(name, sa), values(name, sb)])
            if real:
                for shape in SHAPES:
                    op = ("maximum", "minimum")[rng.integers(2)]
                    s = python_float()
                    emit(op, [values(name, shape), s])
                    emit(op, [s, values(name, shape)])
                    lo, hi = sorted([python_float(), python_float()])
                    emit("clip", [values(name, shape), lo, hi])
                    emit("clip", [values(name, shape), values(name, shape), values(name, shape)])
    if LIB != "numpy":  # NumPy's mixed pairs promote unlike the jax policy
        for a, b in WIDER:
            if a not in DTYPES or b not in DTYPES:
                continue
            for shape in SHAPES:
                for op in ("maximum", "minimum"):
                    emit(op, [values(a, shape), values(b, shape)])
                    emit(op, [values(b, shape), values(a, shape)])
    write_cases(f"zero_ties_{LIB}", cases, expected)
    print(f"{len(cases)} cases", file=sys.stderr)


main()

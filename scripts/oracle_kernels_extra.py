#!/usr/bin/env python3
"""Measures NumPy + ml_dtypes on kernel cases the shared oracle does not cover and writes
tests/data/kernels/extra_cases.jsonl and extra_expected.jsonl (the conformance runner's format).

Only cases whose result dtype is the same in NumPy and in the shipped JAX policy are written
(same-dtype operands, unary ops, comparisons, astype, integer sums), and only values NumPy
computes IEEE-correctly: power on small integer-valued operands (exact results), sums of
integers or of integer-valued floats (exact in any order). NaN results are written as the
positive quiet NaN of their dtype (docs/contracts.md). Run from the repository root.
"""
import json
import sys
import warnings

import numpy as np

try:
    import ml_dtypes
except ImportError:
    sys.exit("needs ml_dtypes (pip install ml_dtypes)")

warnings.simplefilter("ignore")
rng = np.random.default_rng(20261122)

FLOATS = ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
          "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4",
          "float8_e4m3", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
        "int4", "uint4", "int2", "uint2"]
NBITS = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
         "float6_e2m3fn": 6, "float6_e3m2fn": 6}
UNIT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def dt(name):
    return np.dtype(getattr(ml_dtypes, name, name))


def nbits(name):
    return NBITS.get(name, dt(name).itemsize * 8)


def bits_of(a):
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        half = UNIT[a.dtype.itemsize // 2]
        re = np.ascontiguousarray(a.real).view(half).reshape(-1).tolist()
        im = np.ascontiguousarray(a.imag).view(half).reshape(-1).tolist()
        return [[int(x), int(y)] for x, y in zip(re, im)]
    return a.view(UNIT[a.dtype.itemsize]).reshape(-1).astype(np.uint64).tolist()


def from_bits(name, bits, shape):
    d = dt(name)
    return np.array(bits, dtype=UNIT[d.itemsize]).view(d).reshape(shape)


def canonical(a):
    """NaN elements as the dtype's positive quiet NaN."""
    if a.dtype.kind in "iub" or a.dtype.name.startswith(("int", "uint")):
        return a
    nan = np.array([np.nan], dtype=np.float32).astype(a.dtype)
    out = a.copy()
    mask = np.isnan(a.astype(np.float32))
    out[mask] = nan[0]
    return out


def patterns(name, n):
    w = nbits(name)
    if w <= 8:
        every = np.arange(2 ** w, dtype=np.uint64)
        return rng.choice(every, n).tolist()
    return rng.integers(0, 2 ** w, n, dtype=np.uint64).tolist()


cases, expected = [], []


def emit(op, args, result=None, error=None, **extra):
    cid = len(cases)
    case = {"id": cid, "op": op, "args": args} | extra
    cases.append(case)
    if error is not None:
        expected.append({"id": cid, "error": error[1], "kind": error[0]})
    else:
        expected.append({"id": cid, "dtype": result.dtype.name,
                         "shape": list(result.shape), "bits": bits_of(result)})


def arr(name, bits, shape):
    return {"dtype": name, "shape": list(shape), "bits": [int(b) for b in bits]}


def binary(op, name, n=64):
    a_bits, b_bits = patterns(name, n), patterns(name, n)
    a, b = from_bits(name, a_bits, (n,)), from_bits(name, b_bits, (n,))
    try:
        r = getattr(np, op)(a, b)
    except TypeError:
        return
    if r.dtype not in (a.dtype, np.dtype(bool)):
        return  # NumPy computes it in another dtype (ml_dtypes' int4 ufuncs go through int8)
    emit(op, [arr(name, a_bits, (n,)), arr(name, b_bits, (n,))], canonical(r))


def main():
    for name in FLOATS:
        for op in ["floor_divide", "maximum", "minimum", "equal", "not_equal", "less",
                   "less_equal", "greater", "greater_equal"]:
            binary(op, name)
        for op in ["negative", "absolute"]:
            bits = patterns(name, 64)
            a = from_bits(name, bits, (64,))
            emit(op, [arr(name, bits, (64,))], canonical(getattr(np, op)(a)))
        # power on small integer values: exact results (or exact overflow)
        base = np.array(rng.integers(-4, 5, 32), dtype=np.float64).astype(dt(name))
        expo = np.array(rng.integers(0, 5, 32), dtype=np.float64).astype(dt(name))
        emit("power", [arr(name, bits_of(base), (32,)), arr(name, bits_of(expo), (32,))],
             canonical(np.power(base, expo)))
    for name in INTS:
        for op in ["add", "subtract", "multiply", "floor_divide", "maximum", "minimum",
                   "equal", "less", "greater_equal", "bitwise_and", "bitwise_or",
                   "bitwise_xor"]:
            binary(op, name)
        for op in ["negative", "absolute"]:
            bits = patterns(name, 64)
            a = from_bits(name, bits, (64,))
            try:
                r = getattr(np, op)(a)
            except TypeError:
                continue
            if r.dtype == a.dtype:
                emit(op, [arr(name, bits, (64,))], r)
        base = np.array(rng.integers(0, 6, 32)).astype(dt(name))
        expo = np.array(rng.integers(0, 4, 32)).astype(dt(name))
        args = [arr(name, bits_of(base), (32,)), arr(name, bits_of(expo), (32,))]
        try:
            r = np.power(base, expo)
            if r.dtype == base.dtype:
                emit("power", args, r)
        except ValueError:
            emit("power", args, error=("input", "negative integer power"))
    # bool
    for op in ["add", "multiply", "maximum", "minimum", "bitwise_xor", "equal", "less"]:
        a, b = rng.integers(0, 2, 16), rng.integers(0, 2, 16)
        r = getattr(np, op)(a.astype(bool), b.astype(bool))
        emit(op, [arr("bool", a, (16,)), arr("bool", b, (16,))], r)
    # broadcasting: [3, 1] with [4] and [2, 3, 4] with [3, 1]
    for name in ["float32", "int16", "bfloat16"]:
        for sa, sb in [((3, 1), (4,)), ((2, 3, 4), (3, 1))]:
            na, nb = int(np.prod(sa)), int(np.prod(sb))
            a_bits, b_bits = patterns(name, na), patterns(name, nb)
            a, b = from_bits(name, a_bits, sa), from_bits(name, b_bits, sb)
            emit("add", [arr(name, a_bits, sa), arr(name, b_bits, sb)], canonical(a + b))
    emit("add", [arr("int8", [1, 2, 3], (3,)), arr("int8", [1, 2], (2,))],
         error=("input", "shapes [3] and [2] do not broadcast"))
    # complex64
    for op in ["add", "subtract", "multiply", "true_divide", "equal", "maximum"]:
        re = rng.standard_normal((2, 16)).astype(np.float32)
        im = rng.standard_normal((2, 16)).astype(np.float32)
        a = (re[0] + 1j * im[0]).astype(np.complex64)
        b = (re[1] + 1j * im[1]).astype(np.complex64)
        r = canonical_c(getattr(np, op)(a, b))
        emit(op, [{"dtype": "complex64", "shape": [16], "bits": bits_of(a)},
                  {"dtype": "complex64", "shape": [16], "bits": bits_of(b)}], r)
    # astype between kinds
    for src, dst in [("float32", "int8"), ("float32", "float8_e4m3fn"), ("int32", "float16"),
                     ("bfloat16", "float6_e2m3fn"), ("uint8", "int4"), ("float64", "bfloat16")]:
        bits = patterns(src, 64)
        a = from_bits(src, bits, (64,))
        if dst.startswith(("int", "uint")) and src.startswith("float"):
            # only values NumPy defines (finite, in range after truncation)
            f = a.astype(np.float64)
            info = ml_dtypes.iinfo(dt(dst)) if dst in NBITS else np.iinfo(dt(dst))
            ok = np.isfinite(f) & (np.trunc(f) >= info.min) & (np.trunc(f) <= info.max)
            bits = [b for b, k in zip(bits, ok) if k][:32]
            a = from_bits(src, bits, (len(bits),))
        emit("astype", [arr(src, bits, (len(bits),))], a.astype(dt(dst)), dtype=dst)
    # sums: integers (wrapping in the accumulator) and integer-valued floats (exact)
    for name, lo, hi in [("int8", -128, 128), ("int16", -2000, 2000), ("bool", 0, 2),
                         ("float16", -8, 9), ("float32", -1000, 1000), ("bfloat16", -8, 9)]:
        vals = rng.integers(lo, hi, (4, 8))
        a = vals.astype(dt(name))
        for axis in [None, 0, 1]:
            r = np.sum(a, axis=axis)
            r = np.asarray(r)
            case_axis = {} if axis is None else {"axis": axis}
            emit("sum", [arr(name, bits_of(a), (4, 8))], r, **case_axis)
    # remainder (Python's sign rule; 0 for an integer zero divisor), drawn last so that the
    # cases above stay as they were
    for name in FLOATS + INTS:
        binary("remainder", name)
    # clip(x, lo, hi): the n-ary result dtype (the same in NumPy and the JAX policy here:
    # same-dtype arrays, and arrays with Python-scalar bounds that fit), NaNs propagated
    for name in FLOATS + INTS + ["bool"]:
        if name == "bool":
            xb, lb, hb = (rng.integers(0, 2, 32).tolist() for _ in range(3))
        else:
            xb, lb, hb = patterns(name, 32), patterns(name, 32), patterns(name, 32)
        x, lo, hi = (from_bits(name, b, (32,)) for b in (xb, lb, hb))
        r = np.clip(x, lo, hi)
        if r.dtype != x.dtype:
            continue  # ml_dtypes has no clip loop: NumPy computes it in float32
        emit("clip", [arr(name, xb, (32,)), arr(name, lb, (32,)), arr(name, hb, (32,))],
             canonical(r))
    for name, lo, hi in [("int8", -3, 100), ("uint8", 10, 200), ("float32", -0.5, 2.5),
                         ("float16", -1.5, 1.5), ("float64", 0.0, 3.0)]:
        xb = patterns(name, 32)
        x = from_bits(name, xb, (32,))
        kind = "int" if isinstance(lo, int) else "float"
        r = np.clip(x, lo, hi)
        if r.dtype != x.dtype:
            continue
        emit("clip", [arr(name, xb, (32,)), {"scalar": kind, "value": lo},
                      {"scalar": kind, "value": hi}],
             canonical(r))
    # broadcasting: x of shape (4, 1), lo of shape (3,), hi a scalar array
    xb, lb, hb = patterns("int16", 4), patterns("int16", 3), patterns("int16", 1)
    x, lo, hi = (from_bits("int16", xb, (4, 1)), from_bits("int16", lb, (3,)),
                 from_bits("int16", hb, ()))
    emit("clip", [arr("int16", xb, (4, 1)), arr("int16", lb, (3,)), arr("int16", hb, ())],
         canonical(np.clip(x, lo, hi)))
    # where(cond, x, y): the join of the two values; conditions of any dtype (nonzero is
    # true, NaN too), arrays and Python scalars, broadcasting
    for name in FLOATS + INTS + ["bool"]:
        if name == "bool":
            xb, yb = (rng.integers(0, 2, 16).tolist() for _ in range(2))
        else:
            xb, yb = patterns(name, 16), patterns(name, 16)
        cb = rng.integers(0, 2, 16).tolist()
        x, y = from_bits(name, xb, (16,)), from_bits(name, yb, (16,))
        r = np.where(np.array(cb, dtype=bool), x, y)
        emit("where", [arr("bool", cb, (16,)), arr(name, xb, (16,)), arr(name, yb, (16,))], r)
    for cname in ["float32", "int8", "float16"]:
        cb = patterns(cname, 16)
        c = from_bits(cname, cb, (16,))
        xb, yb = patterns("int16", 16), patterns("int16", 16)
        x, y = from_bits("int16", xb, (16,)), from_bits("int16", yb, (16,))
        emit("where", [arr(cname, cb, (16,)), arr("int16", xb, (16,)), arr("int16", yb, (16,))],
             np.where(c, x, y))
    fz = np.array([0.0, -0.0, np.nan, 1.0], dtype=np.float32)
    yb = patterns("uint8", 4)
    emit("where", [arr("float32", bits_of(fz), (4,)), {"scalar": "int", "value": 7},
                   arr("uint8", yb, (4,))],
         np.where(fz, np.uint8(7), from_bits("uint8", yb, (4,))))
    for name, value, kind in [("float32", 2.5, "float"), ("int32", -3, "int"),
                              ("bfloat16", 0.1, "float"), ("float64", 1e300, "float")]:
        xb = patterns(name, 8)
        x = from_bits(name, xb, (8,))
        cb = rng.integers(0, 2, 8).tolist()
        emit("where", [arr("bool", cb, (8,)), arr(name, xb, (8,)),
                       {"scalar": kind, "value": value}],
             canonical(np.where(np.array(cb, dtype=bool), x, np.array(value, dtype=x.dtype))))
    xb, yb = patterns("float32", 4), patterns("float32", 3)
    x, y = from_bits("float32", xb, (4, 1)), from_bits("float32", yb, (3,))
    emit("where", [{"scalar": "bool", "value": False}, arr("float32", xb, (4, 1)),
                   arr("float32", yb, (3,))],
         np.where(False, x, y))
    cb = rng.integers(0, 2, 2).tolist()
    emit("where", [arr("bool", cb, (2, 1, 1)), arr("float32", xb, (4, 1)),
                   arr("float32", yb, (3,))],
         np.where(np.array(cb, dtype=bool).reshape(2, 1, 1), x, y))
    # NumPy checks a negative integer exponent as it computes: an empty result raises nothing
    for name in ["int8", "int32"]:
        empty = np.zeros(0, dtype=dt(name))
        emit("power", [arr(name, [], (0,)), arr(name, bits_of(np.array([-1], dtype=dt(name))),
                                                (1,))],
             np.power(empty, np.array([-1], dtype=dt(name))))
        emit("power", [arr(name, [], (0,)), {"scalar": "int", "value": -1}], np.power(empty, -1))
    with open("tests/data/kernels/extra_cases.jsonl", "w") as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
    with open("tests/data/kernels/extra_expected.jsonl", "w") as f:
        for e in expected:
            f.write(json.dumps(e) + "\n")
    print(f"{len(cases)} cases")


def canonical_c(z):
    z = np.asarray(z)
    if z.dtype.kind != "c":
        return z
    re, im = z.real.copy(), z.imag.copy()
    re[np.isnan(re)] = np.nan
    im[np.isnan(im)] = np.nan
    out = np.empty(z.shape, dtype=z.dtype)
    out.real = re
    out.imag = im
    return out


if __name__ == "__main__":
    main()

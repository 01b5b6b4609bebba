#!/usr/bin/env python3
"""Measures JAX 0.10 and writes tests/data/kernels/jax_cases.jsonl (the same cases for every
mode) and jax_<mode>_expected.jsonl for one of the three JAX policies: `x64` (the `jax` policy:
jax_enable_x64=True), `x32` (`jax-x32`: JAX's default, x64 off) or `strict` (`jax-strict`:
jax_numpy_dtype_promotion='strict', x64 on). Usage: scripts/oracle_jax.py MODE.

Without x64, JAX converts every 64-bit input to its 32-bit type before it promotes anything
(`jnp.asarray`: int64 and uint64 wrap, float64 and complex128 round to nearest), so
`uint64 + int8` is int32, not float32, and `float64.astype(float16)` rounds twice, through
float32. The policy declares it as `[canonical]`. Result dtypes and errors are JAX's, measured
live; values follow the jax policies' contract (docs/kernels.md): the canonicalised operands
converted to the result dtype with one correct rounding and computed in it by NumPy/ml_dtypes
(IEEE, no flush-to-zero), NaN as the dtype's positive quiet NaN, maximum/minimum giving the
second operand on ±0 ties. Run from the repository root.
"""
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_common import scalar_json  # noqa: E402
from oracle_kernels_extra import bits_of, canonical, canonical_c, dt  # noqa: E402

try:
    import jax
except ImportError:
    sys.exit("needs jax (pip install jax)")
MODE = sys.argv[1] if len(sys.argv) > 1 else ""
if MODE not in ("x64", "x32", "strict"):
    sys.exit("usage: scripts/oracle_jax.py x64|x32|strict")
jax.config.update("jax_enable_x64", MODE != "x32")
jax.config.update("jax_numpy_dtype_promotion", "strict" if MODE == "strict" else "standard")
import jax.numpy as jnp  # noqa: E402

warnings.simplefilter("ignore")
rng = np.random.default_rng(20261126)

DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
# What JAX without x64 converts each input to before anything else (the policy's [canonical]).
CANONICAL = {"int64": "int32", "uint64": "uint32", "float64": "float32",
             "complex128": "complex64"} if MODE == "x32" else {}
BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "less",
          "floor_divide", "remainder"]
COMPARISONS = {"less"}
N = 16


def values(name):
    """N values of `name`: the edges the canonicalisation changes first, then random ones."""
    d = dt(name)
    if name == "bool":
        return rng.integers(0, 2, N).astype(bool)
    if d.kind in "iu":
        info = np.iinfo(d)
        edges = [0, 1, info.max, info.min]
        if d.itemsize == 8:
            edges += [2 ** 31, 2 ** 32 + 5, 2 ** 33 - 1] + ([-(2 ** 40) - 7, -(2 ** 31) - 1]
                                                             if d.kind == "i" else [2 ** 63 + 5])
        else:
            edges += [info.max - 1, 2, -1 if d.kind == "i" else 3]
        rest = rng.integers(int(info.min), int(info.max), N - len(edges), dtype=d,
                            endpoint=True)
        return np.concatenate([np.array(edges, dtype=d), rest])
    if d.kind == "c":
        part = np.float64 if d.itemsize == 16 else np.float32
        re = values("float64" if part is np.float64 else "float32")
        im = rng.permutation(re)
        out = np.empty(N, dtype=d)
        out.real, out.imag = re.astype(part), im.astype(part)
        return out
    edges = [0.0, -0.0, 1.0, -1.5, 0.1, np.inf, -np.inf, np.nan]
    if name == "float64":
        edges += [1e300, -1e-50, 1e-40, 16777217.0]
    rest = rng.normal(size=N - len(edges)) * 10.0 ** rng.integers(-3, 4, N - len(edges))
    return np.array(edges + list(rest)).astype(d)


def arr_json(name, a):
    return {"dtype": name, "shape": list(a.shape), "bits": bits_of(a)}


def as_jax(name, a):
    """What JAX makes of the array: its canonical dtype, converted as jnp.asarray does."""
    return a.astype(dt(CANONICAL.get(name, name)))


def correctly_rounded(a, to):
    """`a` (already canonical) in dtype `to` with one rounding; 32-bit ints through float64
    are exact, so NumPy's casts round once here."""
    to = dt(to)
    if a.dtype.kind == "c" and to.kind != "c":
        a = a.real
    if to.kind not in "iub" and a.dtype.kind in "iu" and to.itemsize <= 2:
        return a.astype(np.float64).astype(np.float32).astype(to) if a.dtype.itemsize < 4 \
            else np.array([np.float32(_round24(int(v))) for v in a]).astype(to)
    return a.astype(to)


def _round24(v):
    """An int rounded to odd at 24 bits: a float32 that rounds once more correctly."""
    m = abs(v)
    if m.bit_length() <= 24:
        return float(v)
    sh = m.bit_length() - 24
    t = m >> sh
    if m & ((1 << sh) - 1):
        t |= 1
    return float((t << sh) * (1 if v >= 0 else -1))


def reference(op, x, y, result, compute):
    """The contract's answer for canonical operands x, y."""
    xc, yc = correctly_rounded(x, compute), correctly_rounded(y, compute)
    with np.errstate(all="ignore"):
        r = getattr(np, op)(xc, yc)
    r = np.asarray(r).astype(dt(result))
    if op in ("maximum", "minimum") and r.dtype.kind in "fV":
        fx, fy = xc.astype(np.float64), yc.astype(np.float64)
        tie = (fx == 0) & (fy == 0)
        r = np.where(tie, yc, r).astype(dt(result))
    return nan_canonical(r)


def nan_canonical(r):
    """NaN elements as the dtype's positive quiet NaN (a 0-d result too)."""
    flat = r.reshape(-1)
    return (canonical_c(flat) if flat.dtype.kind == "c" else canonical(flat)).reshape(r.shape)


cases, expected = [], []


def emit(op, args, result=None, error=None, **extra):
    cid = len(cases)
    cases.append({"id": cid, "op": op, "args": args} | extra)
    if error is not None:
        expected.append({"id": cid, "error": error[1], "kind": error[0]})
    else:
        expected.append({"id": cid, "dtype": str(result.dtype), "shape": list(result.shape),
                         "bits": bits_of(result)})


def jax_result(op, *operands):
    """JAX's result dtype, or the runner's error kind for JAX's exception."""
    try:
        return str(getattr(jnp, op)(*operands).dtype), None
    except OverflowError as e:
        return None, ("overflow", str(e).splitlines()[0])
    except Exception as e:  # noqa: BLE001 (JAX's promotion errors are several classes)
        if "promotion" in type(e).__name__.lower() or "promot" in str(e):
            return None, ("promotion", str(e).splitlines()[0])
        return None, ("skip", str(e))


def main():
    data = {name: values(name) for name in DTYPES}
    for a in DTYPES:
        for b in DTYPES:
            x, y = as_jax(a, data[a]), as_jax(b, data[b])
            for op in BINARY:
                if op in ("floor_divide", "remainder") and "complex" in a + b:
                    continue
                dtype, error = jax_result(op, jnp.asarray(data[a]), jnp.asarray(data[b]))
                args = [arr_json(a, data[a]), arr_json(b, data[b])]
                if error:
                    if error[0] != "skip":
                        emit(op, args, error=error)
                    continue
                compute = str(jnp.result_type(x.dtype, y.dtype)) if op in COMPARISONS \
                    else dtype
                emit(op, args, reference(op, x, y, dtype, compute))
    scalars = [True, 0, 7, -129, 300, 2 ** 31 - 1, 2 ** 31, -(2 ** 31) - 1, 0.5, -2.25,
               1e10, 1e300, float("nan"), 1 + 2j]
    for a in DTYPES:
        x = as_jax(a, data[a])
        for s in scalars:
            for op in ["add", "multiply", "true_divide", "maximum"]:
                for first in (False, True):
                    operands = [s, jnp.asarray(data[a])] if first else [jnp.asarray(data[a]), s]
                    dtype, error = jax_result(op, *operands)
                    args = [scalar_json(s), arr_json(a, data[a])] if first \
                        else [arr_json(a, data[a]), scalar_json(s)]
                    if error:
                        if error[0] != "skip":
                            emit(op, args, error=error)
                        continue
                    if isinstance(s, int) and not isinstance(s, bool) and \
                            dt(dtype).kind in "iu" and not \
                            np.iinfo(dt(dtype)).min <= s <= np.iinfo(dt(dtype)).max:
                        # JAX wraps it silently; the contract is NumPy 2's OverflowError.
                        emit(op, args, error=("overflow", f"{s} out of bounds for {dtype}"))
                        continue
                    sv = np.array([s])
                    sv = sv.astype(np.float64) if isinstance(s, float) else sv
                    if isinstance(s, int) and not isinstance(s, bool):
                        sv = np.array([s], dtype=np.int64)
                    pair = (np.broadcast_to(sv, x.shape), x) if first else \
                        (x, np.broadcast_to(sv, x.shape))
                    emit(op, args, reference(op, *pair, dtype, dtype))
    # sum, astype and where read their 64-bit inputs as JAX does too.
    for a in DTYPES:
        v = data[a]
        if dt(a).kind == "f" or a in ("bfloat16", "float16"):
            v = np.round(v.astype(np.float64) * 0 + rng.integers(-50, 50, N)).astype(dt(a))
        dtype, error = jax_result("sum", jnp.asarray(v))
        if not error:
            with np.errstate(all="ignore"):
                total = as_jax(a, v).astype(dt(dtype)).sum(dtype=dt(dtype))
            emit("sum", [arr_json(a, v)], nan_canonical(np.asarray(total, dtype=dt(dtype))))
        for to in ["float64", "int64", "float16", "int8", "complex128"]:
            if dt(a).kind == "c" and dt(to).kind != "c":
                continue
            got = jnp.asarray(data[a]).astype(dt(to))
            r = as_jax(a, data[a])
            with np.errstate(all="ignore"):
                if r.dtype.kind in "fcV" and dt(to).kind in "iu":
                    continue  # out-of-range float → int is saturating in JAX, UB in NumPy
                r = r.astype(got.dtype)
            emit("astype", [arr_json(a, data[a])], nan_canonical(r), dtype=to)
    cond = np.array([2 ** 32, 1, 0, -(2 ** 40)], dtype=np.int64)
    xs, ys = np.arange(4, dtype=np.int8), -np.arange(4, dtype=np.int8)
    r = np.where(as_jax("int64", cond).astype(bool), xs, ys)
    emit("where", [arr_json("int64", cond), arr_json("int8", xs), arr_json("int8", ys)], r)
    with open("tests/data/kernels/jax_cases.jsonl", "w") as f:
        f.writelines(json.dumps(c) + "\n" for c in cases)
    with open(f"tests/data/kernels/jax_{MODE}_expected.jsonl", "w") as f:
        f.writelines(json.dumps(e) + "\n" for e in expected)
    print(f"{len(cases)} cases, {sum('kind' in e for e in expected)} errors")


if __name__ == "__main__":
    main()

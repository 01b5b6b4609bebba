#!/usr/bin/env python3
"""Measures TensorFlow (2.21, CPU, `dtype_conversion_mode="all"`) on conformance cases for
`typejoin run --policy tensorflow` and writes tests/data/kernels/tensorflow_cases.jsonl and
tensorflow_expected.jsonl (the runner's line format).

Ops as a TensorFlow user calls them with NumPy behaviour on
(`tnp.experimental_enable_numpy_behavior(dtype_conversion_mode="all")`): `tf.add`,
`tf.subtract`, `tf.multiply`, `tf.math.truediv` (`/`), `tf.math.floordiv` (`//`),
`tf.math.floormod` (`%`), `tf.pow`, `tf.maximum`, `tf.minimum`, `tf.equal`, `tf.not_equal`,
`tf.negative`, `tf.abs`, `tf.reduce_sum`, `tf.clip_by_value`, `tf.cast` (the Python operators
`*`, `+` on a bool tensor are logical and/or, not the promoted op); operands are tensors (dimensioned and zero-dim: TensorFlow has no zero-dim
category) and Python int, float and complex scalars on either side. Answers are TensorFlow's
dtype, shape and bits, or the error kind its exception maps to.

The ordering comparisons, `not_equal` and the bitwise ops are `tnp.less` … `tnp.bitwise_xor`:
TensorFlow's own (`tf.less`, `tf.not_equal`, `tf.bitwise.bitwise_and`) want one dtype and raise
on two, where NumPy behaviour's promote as the policy does.

`where` is `tnp.where` (`tf.where` wants one dtype too).

floor_divide of floats is `floor(a / b)`, the quotient rounded first (the policy's
`float_floor_divide = "floor-of-quotient"`: 1.0 // 0.1 is 10, NumPy's 9). `negative`,
`absolute` and `power` have no kernel for unsigned integers (the policy's `kinds =
["signed", ...]`).

Every call starts from cleared eager caches (`before_call`), as in a fresh process.

Left out, each a documented gap (docs/kernels.md, "TensorFlow"): complex
true_divide (Eigen's quotient differs from Smith's in the last place); maximum/minimum on a
tie of zeros (TensorFlow returns the first operand, NumPy the second); Python bool scalars (TensorFlow refuses
`int8 + True`) and bool tensors with a Python float (`bool * 2.5` is bool); subnormal inputs and results (TensorFlow's CPU kernels flush them
to zero, typejoin computes IEEE values); float -> integer casts out of range, and float64 ->
bfloat16/float16 casts, which TensorFlow rounds twice (through float32); power on floats except
integer-valued results, and sums of floats except integer values (exact in any order).
NaN results are written as the positive quiet NaN of their dtype (typejoin's canonical NaN).

With `--safe`, the same cases in `dtype_conversion_mode="safe"` (a lossy pair raises:
`promotion`) for `typejoin run --policy tensorflow-safe`, written to
tests/data/kernels/tensorflow_safe_cases.jsonl and tensorflow_safe_expected.jsonl.

Run from the repository root with TensorFlow installed: python3 scripts/oracle_tensorflow.py
[--safe]
"""
import math
import os
import random
import sys
import warnings

from oracle_common import scalar_json, write_cases

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
try:
    import numpy as np
    import tensorflow as tf
    import tensorflow.experimental.numpy as tnp
    from tensorflow.python.eager import context
except ImportError:
    sys.exit("needs tensorflow (pip install tensorflow-cpu==2.21.0)")

warnings.simplefilter("ignore")
# The dtype conversion mode is chosen once, before any op runs (TensorFlow warns that it must
# be): `--safe` on the command line (this script's or scripts/fuzz_libraries.py's) measures
# `dtype_conversion_mode="safe"` for `--policy tensorflow-safe`.
MODE = "safe" if "--safe" in sys.argv[1:] else "all"
POLICY = "tensorflow-safe" if MODE == "safe" else "tensorflow"
tnp.experimental_enable_numpy_behavior(dtype_conversion_mode=MODE)
tf.config.threading.set_intra_op_parallelism_threads(1)
rng = random.Random(20261126)

UINTS = ["uint8", "uint16", "uint32", "uint64"]
SINTS = ["int8", "int16", "int32", "int64"]
INTS = UINTS + SINTS
FLOATS = ["bfloat16", "float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX
T = {n: getattr(tf, n) for n in ALL}
UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
CANON_NAN = {"float16": 0x7E00, "bfloat16": 0x7FC0, "float32": 0x7FC00000,
             "float64": 0x7FF8000000000000}
PART = {"complex64": "float32", "complex128": "float64"}
TINY = {"bfloat16": 2.0 ** -126, "float16": 2.0 ** -14, "float32": 2.0 ** -126,
        "float64": 2.0 ** -1022}


def real_bits(a, name):
    """Storage bits of a real NumPy array of dtype `name`, NaNs canonical."""
    flat = np.ascontiguousarray(a).reshape(-1)
    if name == "bool":
        return [int(v) for v in flat]
    width = flat.dtype.itemsize * 8
    out = [int(v) for v in flat.view(UNSIGNED[width])]
    if name in CANON_NAN:
        nan = np.isnan(flat.astype(np.float64))
        out = [CANON_NAN[name] if n else b for b, n in zip(out, nan)]
    return out


def bits_of(t):
    name = t.dtype.name
    a = t.numpy()
    if name in PART:
        return [[x, y] for x, y in zip(real_bits(np.real(a), PART[name]),
                                        real_bits(np.imag(a), PART[name]))]
    return real_bits(a, name)


def values(name):
    """Edge values of a dtype (no subnormals: TensorFlow flushes them)."""
    if name == "bool":
        return [False, True]
    if name in INTS:
        info = np.iinfo(name)
        base = [0, 1, 2, 3, 7, 100, int(info.max), int(info.max) - 1, int(info.min),
                int(info.min) + 1]
        if info.min < 0:
            base += [-1, -2, -7, -100]
        return base + [rng.randint(int(info.min), int(info.max)) for _ in range(6)]
    if name in FLOATS:
        big = float(tf.as_dtype(name).max)
        base = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 7.0, 0.1, -1e-3, big, -big,
                math.inf, -math.inf, math.nan, 100.0, 1e-2]
        return base + [rng.uniform(-50, 50) for _ in range(4)]
    re = values("float32")
    return [complex(a, b) for a, b in zip(re, reversed(re))]


def tensor(name, vals, shape):
    """A strong tensor (built from NumPy: a Python int list would be checked against int32)."""
    a = np.array(vals, dtype=T[name].as_numpy_dtype).reshape(shape)
    return tf.constant(a)


def arg_json(x):
    if isinstance(x, tf.Tensor):
        return {"dtype": x.dtype.name, "shape": x.shape.as_list(), "bits": bits_of(x)}
    return scalar_json(x)


def error_kind(e):
    m = str(e)
    if isinstance(e, SystemError):  # a conversion that raised inside TensorFlow's C code
        e = e.__context__
    if isinstance(e, OverflowError) or "too large to convert" in m:
        return "overflow"
    if "implicit dtype promotion" in m:
        return "promotion"  # dtype_conversion_mode="safe" refuses a lossy pair
    if "division by zero" in m:
        return "zero-division"
    if "negative integer powers" in m or "are incompatible" in m:
        return "input"  # the second: clip_by_value's bounds broadcast `t` to another shape
    return "unsupported"


def plain(x):
    """Python values of an operand, as float64/complex128 NumPy (for the subnormal filter)."""
    if hasattr(x, "numpy"):  # a tensor, strong or weak (a result)
        a = x.numpy()
        if x.dtype.is_complex:
            return a.astype(np.complex128)
        return a.astype(np.float64)
    return np.array(complex(x) if isinstance(x, complex) else float(x))


EXACT = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
         "true_divide": np.true_divide, "floor_divide": np.true_divide}  # its quotient


def flushed(op, args, r):
    """True where TensorFlow's flush-to-zero may have changed the answer: the exact result of
    a float op (float64) is a subnormal of the result dtype."""
    name = r.dtype.name
    part = PART.get(name, name)
    if part not in TINY or op not in EXACT:
        return False
    with np.errstate(all="ignore"):
        exact = EXACT[op](*[plain(a) for a in args])
    parts = [np.real(exact), np.imag(exact)] if np.iscomplexobj(exact) else [exact]
    return any(bool(((p != 0) & (np.abs(p) < TINY[part])).any()) for p in parts)


def before_call():
    """Clears TensorFlow's eager caches, so each call answers as in a fresh process. A
    conversion that raises inside TensorFlow's C code (a SystemError: `uint64 + -1`) leaves its
    cache of scalar tensors inconsistent: later calls then answer from a stale entry (a Python
    0.0 after -0.0 reads as -0.0) or abort the process."""
    context.context()._clear_caches()


cases, expected = [], []


def emit(op, args, call, **extra):
    before_call()
    try:
        r = call()
    except (tf.errors.OpError, TypeError, OverflowError, ValueError, SystemError) as e:
        r = e
        before_call()
    if not isinstance(r, Exception) and flushed(op, args, r):
        return
    cid = len(cases)
    cases.append({"id": cid, "op": op, "args": [arg_json(a) for a in args]} | extra)
    if isinstance(r, Exception):
        expected.append({"id": cid, "kind": error_kind(r)})
    else:
        expected.append({"id": cid, "dtype": r.dtype.name, "shape": r.shape.as_list(),
                         "bits": bits_of(r)})


BINARY = {
    "add": tf.add,
    "subtract": tf.subtract,
    "multiply": tf.multiply,
    "true_divide": tf.math.truediv,
    "floor_divide": tf.math.floordiv,
    "remainder": tf.math.floormod,
    "maximum": tf.maximum,
    "minimum": tf.minimum,
    "equal": tf.equal,
    # TensorFlow's own comparisons and bitwise ops want one dtype; NumPy behaviour's promote
    "not_equal": tnp.not_equal,
    "less": tnp.less,
    "less_equal": tnp.less_equal,
    "greater": tnp.greater,
    "greater_equal": tnp.greater_equal,
    "bitwise_and": tnp.bitwise_and,
    "bitwise_or": tnp.bitwise_or,
    "bitwise_xor": tnp.bitwise_xor,
}

SCALARS = {
    "int": [0, 1, -1, 3, 127, 128, 255, 300, -129, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 40,
            -(2 ** 31) - 1],
    "float": [0.0, 0.5, 1.1, 2.5, 65520.0, 1e300, math.inf, -math.inf, math.nan,
              1.0 + 2 ** -11 + 2 ** -30],
    "complex": [complex(1, 2), complex(math.nan, 0), complex(math.inf, 1), complex(0.5, -0.0)],
}


def pick(name, n):
    v = values(name)
    return [rng.choice(v) for _ in range(n)]


def skipped(op, a, b):
    """Pairs left out (module docstring)."""
    tensors = [x for x in (a, b) if isinstance(x, tf.Tensor)]
    for t, s in ((a, b), (b, a)):
        if isinstance(t, tf.Tensor) and t.dtype == tf.bool and isinstance(s, (float, complex)):
            return True  # bool * 2.5 is bool
    if op == "multiply" and any(x.dtype.is_complex for x in tensors) and any(
            not np.isfinite(plain(x)).all() for x in (a, b)):
        return True  # Eigen's complex product of infinities and NaNs differs from NumPy's
    if op == "true_divide" and any(isinstance(x, complex) or x.dtype.is_complex
                                   for x in (a, b) if not isinstance(x, (int, float))):
        return True  # Eigen's complex quotient differs from Smith's in the last place
    if op in ("maximum", "minimum"):
        if not isinstance(a, tf.Tensor):
            return True  # a Python scalar first is the same op, measured the other way
        with np.errstate(all="ignore"):
            x, y = np.broadcast_arrays(plain(a), plain(b))
        if bool(((x == 0) & (y == 0)).any()):
            return True  # TensorFlow returns the first operand on a tie of zeros
    return False


def binary_case(op, a, b):
    if not skipped(op, a, b):
        emit(op, [a, b], lambda: BINARY[op](a, b))


def main():
    n = 12
    for op in BINARY:
        for x in ALL:
            for y in ALL:
                binary_case(op, tensor(x, pick(x, n), (n,)), tensor(y, pick(y, n), (n,)))
            for y in rng.sample(ALL, 3):
                binary_case(op, tensor(x, pick(x, n), (n,)), tensor(y, pick(y, 1), ()))
                binary_case(op, tensor(y, pick(y, 1), ()), tensor(x, pick(x, n), (n,)))
            for kind, vals in SCALARS.items():
                for s in rng.sample(vals, min(4, len(vals))):
                    binary_case(op, tensor(x, pick(x, n), (n,)), s)
                    binary_case(op, s, tensor(x, pick(x, n), (n,)))
    # Python ints: parsed as int32 (OverflowError outside), then wrapped into the result
    for s in [300, -129, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 40]:
        for x in ["int8", "uint8", "int64", "uint64", "float16", "float32"]:
            if x == "uint64" and s < 0:
                continue  # measured below, with its own draws (the earlier cases kept theirs)
            a = tensor(x, pick(x, 4), (4,))
            emit("add", [a, s], lambda: tf.add(a, s))
            emit("multiply", [s, a], lambda: tf.multiply(s, a))
    # integer division and remainder by zero raise; INT_MIN // -1 wraps
    for x in INTS:
        a = tensor(x, pick(x, n), (n,))
        zero = tensor(x, [0] * n, (n,))
        for op in ["floor_divide", "remainder"]:
            emit(op, [a, zero], lambda: BINARY[op](a, zero))
            emit(op, [a, 0], lambda: BINARY[op](a, 0))
        if x in SINTS:
            lo = tensor(x, [int(np.iinfo(x).min)] * 2, (2,))
            m1 = tensor(x, [-1, -1], (2,))
            emit("floor_divide", [lo, m1], lambda: tf.math.floordiv(lo, m1))
            emit("remainder", [lo, m1], lambda: tf.math.floormod(lo, m1))
    # float remainder and floor_divide signs; floor_divide's rounded quotient (1.0 // 0.1)
    for y in FLOATS:
        a = tensor(y, [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 0.0, -0.0, -1.0, 1.0], (10,))
        b = tensor(y, [-math.inf, math.inf, 1.0, 1.0, -3.0, 3.0, -2.0, 2.0, math.inf, -math.inf],
                   (10,))
        emit("remainder", [a, b], lambda: tf.math.floormod(a, b))
        emit("floor_divide", [a, b], lambda: tf.math.floordiv(a, b))
        c = tensor(y, [1.0, -1.0, 2.0, 7.0, 0.3, 1.0, -5.0, 1e4], (8,))
        d = tensor(y, [0.1, 0.1, 0.2, 0.7, 0.1, 0.0, 0.0, 0.3], (8,))
        emit("floor_divide", [c, d], lambda: tf.math.floordiv(c, d))
        emit("floor_divide", [c, 0.1], lambda: tf.math.floordiv(c, 0.1))
    # true_divide of integers: float32 up to 16 bits, float64 from 32
    for x in INTS:
        for y in INTS:
            a, b = tensor(x, pick(x, n), (n,)), tensor(y, [v or 1 for v in pick(y, n)], (n,))
            emit("true_divide", [a, b], lambda: tf.math.truediv(a, b))
        a = tensor(x, pick(x, n), (n,))
        emit("true_divide", [a, 3], lambda: tf.math.truediv(a, 3))
    # power on small integer values (exact results) and the negative-exponent error; of
    # unsigned integers it has no kernel (InvalidArgumentError: `unsupported`)
    for x in SINTS + FLOATS + UINTS:
        low = 0 if x in UINTS else -4
        a = tensor(x, [rng.randint(low, 4) for _ in range(n)], (n,))
        b = tensor(x, [rng.randint(0, 4) for _ in range(n)], (n,))
        emit("power", [a, b], lambda: tf.pow(a, b))
        emit("power", [a, 2], lambda: tf.pow(a, 2))
    neg = tensor("int8", [2, 3], (2,))
    emit("power", [neg, -1], lambda: tf.pow(neg, -1))
    # unary ops (of unsigned integers TensorFlow has no kernel: `unsupported`)
    for x in ["bool"] + INTS + FLOATS + COMPLEX:
        a = tensor(x, pick(x, 16), (16,))
        emit("negative", [a], lambda: tf.negative(a))
        emit("absolute", [a], lambda: tf.abs(a))
    # clip: tensors, zero-dim and Python bounds, lower <= upper
    for x in ALL:
        for kind in ["tensor", "zero-dim", "scalar"]:
            a = tensor(x, pick(x, n), (n,))
            if kind == "scalar":
                lo, hi = rng.choice([(0, 100), (-1.5, 2.5), (-3, 0.5)])
            else:
                y = x if kind == "tensor" else rng.choice(INTS + FLOATS)
                shape = (n,) if kind == "tensor" else ()
                m = n if kind == "tensor" else 1
                p, q = pick(y, m), pick(y, m)
                if y not in COMPLEX:  # complex bounds: unordered, and refused anyway
                    p, q = [min(u, v) for u, v in zip(p, q)], [max(u, v) for u, v in zip(p, q)]
                lo, hi = tensor(y, p, shape), tensor(y, q, shape)
            if kind != "scalar" and any(isinstance(v, float) and math.isnan(v) for v in p + q):
                continue  # min/max of a NaN pair does not order the bounds
            with np.errstate(all="ignore"):
                zero = [np.asarray(plain(v) == 0) for v in (a, lo, hi)]
            floats = any(isinstance(v, float) or isinstance(v, tf.Tensor) and v.dtype.is_floating
                         for v in (a, lo, hi))
            if floats and zero[0].any() and (zero[1].any() or zero[2].any()):
                continue  # a tie of zeros: TensorFlow keeps the operand, NumPy the bound
            emit("clip", [a, lo, hi], lambda: tf.clip_by_value(a, lo, hi))
    # where (NumPy behaviour's `tnp.where`: `tf.where` wants one dtype): the values' join
    for x in ALL:
        for y in rng.sample(ALL, 5):
            cond = tensor("bool", pick("bool", n), (n,))
            a, b = tensor(x, pick(x, n), (n,)), tensor(y, pick(y, n), (n,))
            emit("where", [cond, a, b], lambda: tnp.where(cond, a, b))
            b0 = tensor(y, pick(y, 1), ())
            emit("where", [cond, a, b0], lambda: tnp.where(cond, a, b0))
        for s in [2.5, 3, 300, -1, 2 ** 40, 1j]:
            if x == "uint64" and isinstance(s, int) and s < 0:
                continue  # measured below, with its own draws (the earlier cases kept theirs)
            cond = tensor("bool", pick("bool", n), (n,))
            a = tensor(x, pick(x, n), (n,))
            emit("where", [cond, a, s], lambda: tnp.where(cond, a, s))
    # sums: integers wrap in their own dtype, integer-valued floats (exact)
    for x in INTS + FLOATS + COMPLEX:
        vals = [float(rng.randint(-8, 8)) for _ in range(24)] if x in FLOATS else pick(x, 24)
        if x in COMPLEX:
            vals = [complex(rng.randint(-8, 8), rng.randint(-8, 8)) for _ in range(24)]
        a = tensor(x, vals, (4, 6))
        emit("sum", [a], lambda: tf.reduce_sum(a))
        for axis in [0, 1]:
            emit("sum", [a], lambda: tf.reduce_sum(a, axis=axis), axis=axis)
    emit("sum", [tensor("bool", [True, False], (2,))],
         lambda: tf.reduce_sum(tensor("bool", [True, False], (2,))))
    # astype between every pair
    for x in ALL:
        for y in ALL:
            vals = pick(x, n)
            if x in FLOATS + COMPLEX and y in INTS:
                info = np.iinfo(y)

                def ok(v):
                    r = v.real if isinstance(v, complex) else v
                    return math.isfinite(r) and info.min <= math.trunc(r) <= info.max

                t = tensor(x, [v for v in values(x) if ok(v)][:n], (-1,))
                back = tf.math.real(t) if t.dtype.is_complex else t
                keep = [i for i, v in enumerate(back.numpy().astype(np.float64).tolist())
                        if math.isfinite(v) and info.min <= math.trunc(v) <= info.max]
                t = tf.gather(t, keep)
            elif x in ("float64", "complex128") and y in ("bfloat16", "float16"):
                continue  # TensorFlow rounds through float32 (twice)
            elif x in COMPLEX and y == "bool":
                continue  # TensorFlow tests the real part only
            else:
                t = tensor(x, vals, (n,))
            emit("astype", [t], lambda: tf.cast(t, T[y]), dtype=y)
    # clip with crossed bounds (a lower above the upper): `clip_by_value` is
    # `maximum(minimum(x, hi), lo)`, so the lower wins (NumPy's order gives the upper), each
    # step promoting its own pair (`clip(uint32, 0.5, -3)`: -3 wraps into uint32 with x)
    for x in INTS + FLOATS:
        for kind in ["tensor", "zero-dim", "scalar"]:
            a = tensor(x, pick(x, n), (n,))
            if kind == "scalar":
                lo, hi = rng.choice([(100, 0), (2.5, -1.5), (0.5, -3), (7, 7)])
            else:
                shape = (n,) if kind == "tensor" else ()
                m = n if kind == "tensor" else 1
                p, q = pick(x, m), pick(x, m)
                if any(isinstance(v, float) and math.isnan(v) for v in p + q):
                    continue  # a NaN bound: every element NaN either way, covered above
                p, q = [max(u, v) for u, v in zip(p, q)], [min(u, v) for u, v in zip(p, q)]
                lo, hi = tensor(x, p, shape), tensor(x, q, shape)
            with np.errstate(all="ignore"):
                zero = [np.asarray(plain(v) == 0) for v in (a, lo, hi)]
            a0, lo0, hi0 = (bool(z.any()) for z in zero)
            if x in FLOATS and (a0 and (lo0 or hi0) or lo0 and hi0):
                continue  # a tie of zeros (above; here the bounds' zeros can meet too)
            emit("clip", [a, lo, hi], lambda: tf.clip_by_value(a, lo, hi))
    # clip keeps `t`'s shape: bounds that broadcast it to another are a ValueError
    for x in ["int32", "float32"]:
        a0, a = tensor(x, pick(x, 1), ()), tensor(x, pick(x, n), (n,))
        lo, hi = tensor(x, [0] * n, (n,)), tensor(x, [100] * n, (n,))
        emit("clip", [a0, lo, hi], lambda: tf.clip_by_value(a0, lo, hi))
        emit("clip", [a0, 0, hi], lambda: tf.clip_by_value(a0, 0, hi))
        emit("clip", [a, tensor(x, [0] * 2 * n, (2, n)), 100],
             lambda: tf.clip_by_value(a, tensor(x, [0] * 2 * n, (2, n)), 100))
        emit("clip", [a, tensor(x, [0], ()), hi], lambda: tf.clip_by_value(a, tensor(x, [0], ()), hi))
    # integer division checks its divisors as it computes: an empty result raises nothing
    for x in ["int8", "uint8", "int64"]:
        e = tensor(x, [], (0,))
        for op in ["floor_divide", "remainder"]:
            for d in [0, tensor(x, [0], ()), tensor(x, [0], (1,))]:
                emit(op, [e, d], lambda: BINARY[op](e, d))
    # a negative Python int beside uint64 raises OverflowError (either side, every op),
    # beside uint8 to uint32 it wraps; bool / bool and tnp's bitwise ops on two Python numbers
    for x in ["uint64", "uint32"]:
        for s in [-1, -129, -(2 ** 31)]:
            a = tensor(x, pick(x, 4), (4,))
            emit("add", [a, s], lambda: tf.add(a, s))
            emit("multiply", [s, a], lambda: tf.multiply(s, a))
            emit("true_divide", [a, s], lambda: tf.math.truediv(a, s))
            emit("less", [s, a], lambda: tnp.less(s, a))
            cond = tensor("bool", pick("bool", 4), (4,))
            emit("where", [cond, a, s], lambda: tnp.where(cond, a, s))
    for p, q in [(True, 3), (3, True), (6, 3), (-1, 2 ** 31 - 1), (True, False)]:
        for op in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
            emit(op, [p, q], lambda: BINARY[op](p, q))
    for shape in [(4,), ()]:
        m = 4 if shape else 1
        a, b = tensor("bool", pick("bool", m), shape), tensor("bool", pick("bool", m), shape)
        emit("true_divide", [a, b], lambda: tf.math.truediv(a, b))
        c = tensor("int8", pick("int8", m), shape)
        emit("true_divide", [a, c], lambda: tf.math.truediv(a, c))
    stem = POLICY.replace("-", "_")
    write_cases(stem, cases, expected)
    print(f"{len(cases)} cases from tensorflow {tf.__version__} (dtype_conversion_mode={MODE!r})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Measures PyTorch (2.15, CPU) on conformance cases for `typejoin run --policy torch` and writes
tests/data/kernels/torch_cases.jsonl and torch_expected.jsonl (the runner's line format).

Every op of the runner, every pairing of operand categories PyTorch distinguishes (dimensioned
tensor, zero-dim tensor, Python scalar), edge values (NaN, ±inf, −0.0, subnormals, integer
min/max, overflowing Python ints, division by zero). The op is called as a PyTorch user calls
it: `torch.add(a, b)` etc. for tensors and a Python scalar second; a Python scalar first goes
through the Python operator (`2.5 - t` is `rsub`, `2.5 * t` is `t * 2.5`, `2.5 / t` is
`t.reciprocal() * 2.5`). Answers are torch's
dtype, shape and bits, or the error kind its exception maps to.

Left out, each a documented gap of the reference kernels (docs/kernels.md, "PyTorch"):
complex32 and bcomplex32 results (measured on their own by scripts/oracle_torch_complex32.py); float →
integer casts of NaN, ±inf and values out of range (undefined in C; PyTorch's answer depends on
the vector path); power and sums only on values whose results are exact (PyTorch's powf and
pairwise float sums round differently, typejoin rounds the exact value once), and integer
powers with a negative tensor exponent (PyTorch computes them, NumPy and typejoin refuse);
complex multiply/divide on exactly representable parts; float64 remainder by a subnormal
(SLEEF's vectorised fmod answers NaN for some); float16/bfloat16 floor_divide of two
tensors (PyTorch's loops round every step to 16 bits: bfloat16 65536 // 86 is 764, 760
for a one-element tensor and correctly rounded) — both measured by
scripts/oracle_torch_division.py and modelled (`float_floor_divide = "vectors"`); maximum/minimum with a zero-dim first
operand (PyTorch returns it on ±0 ties); clamp with a zero operand and a zero bound (which
zero it keeps depends on the element's place in the vector loop). NaN results are written as
the positive quiet NaN of their dtype (typejoin's canonical NaN; PyTorch on x86 often gives
the negative one).

Run from the repository root with torch installed: python3 scripts/oracle_torch.py
"""
import math
import random
import sys
import warnings

from oracle_common import scalar_json, write_cases

try:
    import torch
except ImportError:
    sys.exit("needs torch (pip install torch==2.15.0)")

warnings.simplefilter("ignore")
torch.set_num_threads(1)
rng = random.Random(20261124)

INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX
T = {n: getattr(torch, n) for n in ALL}
BITS = {torch.uint8: torch.uint8, torch.int8: torch.uint8, torch.bool: torch.uint8,
        torch.int16: torch.int16, torch.float16: torch.int16, torch.bfloat16: torch.int16,
        torch.int32: torch.int32, torch.float32: torch.int32,
        torch.int64: torch.int64, torch.float64: torch.int64}
# Results of the catalogue's wider unsigned types are read even without --catalogue: the
# fuzzer met a uint64 result (seed 200004) with only the lattice's dtypes drawn.
for _n, _view in (("uint16", torch.int16), ("uint32", torch.int32), ("uint64", torch.int64)):
    if hasattr(torch, _n):
        BITS[getattr(torch, _n)] = _view
WIDTH = {torch.uint8: 8, torch.int16: 16, torch.int32: 32, torch.int64: 64}
CANON_NAN = {"float16": 0x7E00, "bfloat16": 0x7FC0, "float32": 0x7FC00000,
             "float64": 0x7FF8000000000000}


# PyTorch's catalogue beyond its lattice that the kernels run (the `torch` policy's extension,
# observed/torch_categories.json): drawn by scripts/fuzz_libraries.py torch --catalogue.
CATALOGUE_INTS = ["uint16", "uint32", "uint64"]
CATALOGUE_FLOAT8 = ["float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                    "float8_e8m0fnu"]
# complex32 and bcomplex32: in the lattice, but few CPU kernels (add, sub, mul, eq, ne, where,
# neg, abs, casts; bcomplex32 casts and eq).
CATALOGUE_COMPLEX = ["complex32", "bcomplex32"]


def use_catalogue():
    """Adds CATALOGUE_INTS, CATALOGUE_FLOAT8 and CATALOGUE_COMPLEX to the dtypes drawn and
    read."""
    INTS.extend(CATALOGUE_INTS)
    FLOATS.extend(CATALOGUE_FLOAT8)
    COMPLEX.extend(CATALOGUE_COMPLEX)
    ALL.extend(CATALOGUE_INTS + CATALOGUE_FLOAT8 + CATALOGUE_COMPLEX)
    for n in CATALOGUE_INTS + CATALOGUE_FLOAT8 + CATALOGUE_COMPLEX:
        T[n] = getattr(torch, n)
    for n, view in (("uint16", torch.int16), ("uint32", torch.int32), ("uint64", torch.int64)):
        BITS[T[n]] = view
    for n in CATALOGUE_FLOAT8:
        BITS[T[n]] = torch.uint8
    # Each float8's positive quiet NaN (the runner's canonical NaN).
    CANON_NAN.update({"float8_e4m3fn": 0x7F, "float8_e4m3fnuz": 0x80, "float8_e5m2": 0x7E,
                      "float8_e5m2fnuz": 0x80, "float8_e8m0fnu": 0xFF})


def name_of(dtype):
    return str(dtype).removeprefix("torch.")


def real_bits(t):
    """Storage bits of a real tensor, NaNs canonical."""
    name = name_of(t.dtype)
    u = BITS[t.dtype]
    raw = t.contiguous().reshape(-1).view(u).tolist()
    mask = (1 << WIDTH[u]) - 1
    out = [int(b) & mask for b in raw]
    if name in CANON_NAN:
        nan = torch.isnan(t.reshape(-1)).tolist()
        out = [CANON_NAN[name] if n else b for b, n in zip(out, nan)]
    return out


def bits_of(t):
    if t.dtype.is_complex:
        parts = torch.view_as_real(t.contiguous())
        re, im = real_bits(parts[..., 0]), real_bits(parts[..., 1])
        return [[a, b] for a, b in zip(re, im)]
    return real_bits(t)


def values(name):
    """Edge values of a dtype, as a Python list for torch.tensor."""
    if name == "bool":
        return [False, True]
    if name in INTS:
        info = torch.iinfo(T[name])
        base = [0, 1, 2, 3, 7, 100, info.max, info.max - 1, info.min, info.min + 1]
        if info.min < 0:
            base += [-1, -2, -7, -100]
        return base + [rng.randint(info.min, info.max) for _ in range(6)]
    if name in CATALOGUE_FLOAT8:
        info = torch.finfo(T[name])
        base = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 7.0, 0.1, info.max, -info.max,
                info.tiny, info.tiny / 4, math.inf, -math.inf, math.nan, 100.0]
        return base + [rng.uniform(-50, 50) for _ in range(4)]
    if name in FLOATS:
        info = torch.finfo(T[name])
        base = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 7.0, 0.1, -1e-3, info.max, -info.max,
                info.tiny, info.tiny / 4, -info.smallest_normal / 2, math.inf, -math.inf,
                math.nan, 100.0, 65504.0, 1e-5]
        return base + [rng.uniform(-50, 50) for _ in range(4)]
    re = values("float32")
    return [complex(a, b) for a, b in zip(re, reversed(re))]


def tensor(name, vals, shape):
    t = torch.tensor(vals, dtype=T[name])
    return t.reshape(shape)


def arg_json(x):
    if isinstance(x, torch.Tensor):
        return {"dtype": name_of(x.dtype), "shape": list(x.shape), "bits": bits_of(x)}
    return scalar_json(x)


cases, expected = [], []


def error_kind(e):
    m = str(e)
    if (isinstance(e, OverflowError) or "overflow" in m.lower() or "out of bounds" in m
            or "outside the representable range" in m):
        return "overflow"
    if "ZeroDivisionError" in m:
        return "zero-division"
    if "negative integer powers" in m:
        return "input"
    if "Promotion" in m or "result type" in m:
        return "promotion"
    return "unsupported"


def emit(op, args, call, **extra):
    try:
        r = call()
    except (RuntimeError, TypeError, OverflowError, NotImplementedError) as e:
        r = e
    cid = len(cases)
    cases.append({"id": cid, "op": op, "args": [arg_json(a) for a in args]} | extra)
    if isinstance(r, Exception):
        expected.append({"id": cid, "kind": error_kind(r)})
    else:
        expected.append({"id": cid, "dtype": name_of(r.dtype), "shape": list(r.shape),
                         "bits": bits_of(r)})


BINARY = {
    "add": (torch.add, lambda a, b: a + b),
    "subtract": (torch.sub, lambda a, b: a - b),
    "multiply": (torch.mul, lambda a, b: a * b),
    "true_divide": (torch.true_divide, lambda a, b: a / b),
    "floor_divide": (torch.floor_divide, lambda a, b: a // b),
    "remainder": (torch.remainder, lambda a, b: a % b),
    "maximum": (torch.maximum, None),
    "minimum": (torch.minimum, None),
    "equal": (torch.eq, lambda a, b: a == b),
    "not_equal": (torch.ne, lambda a, b: a != b),
    "less": (torch.lt, lambda a, b: a < b),
    "less_equal": (torch.le, lambda a, b: a <= b),
    "greater": (torch.gt, lambda a, b: a > b),
    "greater_equal": (torch.ge, lambda a, b: a >= b),
    "bitwise_and": (torch.bitwise_and, lambda a, b: a & b),
    "bitwise_or": (torch.bitwise_or, lambda a, b: a | b),
    "bitwise_xor": (torch.bitwise_xor, lambda a, b: a ^ b),
}

SCALARS = {
    "bool": [True, False],
    "int": [0, 1, -1, 3, 127, 128, 255, 300, -129, 2 ** 31, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1,
            -(2 ** 63), 2 ** 64, -(2 ** 63) - 1],
    "float": [0.0, -0.0, 0.5, 1.1, 2.5, 65520.0, 1e300, math.inf, -math.inf, math.nan,
              2.0 ** -25, 3.3961775292304600e38, 1.0 + 2 ** -11 + 2 ** -30],
    "complex": [complex(1, 2), complex(math.nan, 0), complex(math.inf, 1), complex(0.5, -0.0)],
}


def pick(name, n):
    v = values(name)
    return [rng.choice(v) for _ in range(n)]


def skipped(op, a, b):
    """Cases left out of the committed data (module docstring)."""
    def dt(x):
        return x.dtype if isinstance(x, torch.Tensor) else None
    reduced = (torch.float16, torch.bfloat16)
    cplx = [x for x in (a, b) if isinstance(x, complex) or
            isinstance(x, torch.Tensor) and x.dtype.is_complex and x.dim() == 0]
    if cplx and any(dt(x) in reduced for x in (a, b)):
        return True  # complex32 / bcomplex32: scripts/oracle_torch_complex32.py
    if op == "remainder" and dt(b) == torch.float64 and bool(
            ((b != 0) & (b.abs() < torch.finfo(torch.float64).tiny)).any()):
        return True  # SLEEF's vectorised fmod gives NaN for some subnormal divisors
    if op == "floor_divide" and dt(a) in reduced and isinstance(b, torch.Tensor) and b.dim():
        return True  # PyTorch's vector loop rounds each step of a 16-bit floor_divide
    if op in ("maximum", "minimum") and isinstance(a, torch.Tensor) and a.dim() == 0:
        return True  # PyTorch returns the zero-dim first operand on ±0 ties
    if op in ("multiply", "true_divide") and any(
            isinstance(x, torch.Tensor) and x.dtype.is_complex or isinstance(x, complex)
            for x in (a, b)):
        return True  # complex products on exact parts only (below)
    return False


def zero_tie(a, lo, hi):
    """Whether `clamp(a, lo, hi)` meets a zero of `a` with a zero bound: which zero PyTorch
    returns depends on the element's place (vector loop or tail: 12 float64 elements give the
    bound's zero for 8 and `a`'s for 4)."""
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        return False
    zero = a == 0
    for bound in (lo, hi):
        if bool((zero & (torch.as_tensor(bound) == 0)).any()):
            return True
    return False


def binary_case(op, a, b):
    fn, operator = BINARY[op]
    if skipped(op, a, b):
        return
    if not isinstance(a, torch.Tensor):
        if operator is None:
            return  # torch.maximum(2.5, t) is a TypeError
        emit(op, [a, b], lambda: operator(a, b))
    elif not isinstance(b, torch.Tensor) and op in ("maximum", "minimum"):
        return
    else:
        emit(op, [a, b], lambda: fn(a, b))


def main():
    n = 12
    # tensors × tensors, every dtype pair, dimensioned and zero-dim
    for op in BINARY:
        for x in ALL:
            for y in ALL:
                a = tensor(x, pick(x, n), (n,))
                b = tensor(y, pick(y, n), (n,))
                binary_case(op, a, b)
        for x in ALL:
            for y in rng.sample(ALL, 4):
                # zero-dim second and first
                a = tensor(x, pick(x, n), (n,))
                b0 = tensor(y, pick(y, 1), ())
                binary_case(op, a, b0)
                a0 = tensor(y, pick(y, 1), ())
                binary_case(op, a0, tensor(x, pick(x, n), (n,)))
    # tensors × Python scalars, scalars on either side
    for op in BINARY:
        for x in ALL:
            for kind, vals in SCALARS.items():
                for s in rng.sample(vals, min(3, len(vals))):
                    a = tensor(x, pick(x, n), (n,))
                    binary_case(op, a, s)
                    binary_case(op, s, a)
    # the measured rules of the issue, explicitly
    i8 = tensor("int8", [1, 2, -3, 127, -128], (5,))
    for s in [300, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 64, -(2 ** 63), -(2 ** 63) - 1]:
        emit("add", [i8, s], lambda: torch.add(i8, s))
        emit("multiply", [i8, s], lambda: torch.mul(i8, s))
    for y in ["float16", "bfloat16", "float32", "float64"]:
        emit("add", [tensor(y, [1.0, -2.0], (2,)), 2 ** 63],
             lambda: torch.add(tensor(y, [1.0, -2.0], (2,)), 2 ** 63))
    u8 = tensor("uint8", [0, 100, 155, 156, 200, 255], (6,))
    for op in ["less", "greater_equal", "equal", "add"]:
        z = tensor("int64", [-100], ())
        emit(op, [u8, z], lambda: BINARY[op][0](u8, z))
    for x in INTS:
        a = tensor(x, pick(x, n), (n,))
        zero = tensor(x, [0] * n, (n,))
        for op in ["floor_divide", "remainder"]:
            emit(op, [a, zero], lambda: BINARY[op][0](a, zero))
            emit(op, [a, 0], lambda: BINARY[op][0](a, 0))
        lo = tensor(x, [torch.iinfo(T[x]).min] * 2, (2,))
        m1 = tensor(x, [1, 1], (2,)) if x == "uint8" else tensor(x, [-1, -1], (2,))
        emit("floor_divide", [lo, m1], lambda: torch.floor_divide(lo, m1))
        emit("remainder", [lo, m1], lambda: torch.remainder(lo, m1))
    for y in ["float16", "bfloat16"]:
        info = torch.finfo(T[y])
        for op in ["multiply", "true_divide", "floor_divide", "add", "subtract", "remainder"]:
            for s in [65520.0, 0.1, 1.0 + 2 ** -11 + 2 ** -30, 2.0 ** -25, 3.0e38, 7, info.max]:
                a = tensor(y, [0.5, 1.0, -16.0, 2.0 ** -10, 3.0, info.max], (6,))
                emit(op, [a, s], lambda: BINARY[op][0](a, s))
                for z in ["float32", "float64", "int64"]:
                    if z == "int64" and (s != int(s) or abs(s) >= 2 ** 63):
                        continue
                    sz = tensor(z, [int(s) if z == "int64" else s], ())
                    emit(op, [a, sz], lambda: BINARY[op][0](a, sz))
                    emit(op, [sz, a], lambda: BINARY[op][0](sz, a))
    # a Python scalar over a tensor: `s / t` is `t.reciprocal() * s` (two roundings), with the
    # product's dtype and errors (`2**63 / bool` is float32)
    for x in ["bool"] + INTS + FLOATS:
        for shape in [(n,), ()]:
            for kind in ["bool", "int", "float"]:
                for s in SCALARS[kind]:
                    t = tensor(x, pick(x, n if shape else 1), shape)
                    emit("true_divide", [s, t], lambda: s / t)
    for x in ["float32", "float64"]:
        t = tensor(x, [7.0, 3.0, 10.0, 0.1, -49.0, 1e-300 if x == "float64" else 1e-38], (6,))
        emit("true_divide", [3.0, t], lambda: 3.0 / t)
    # float remainder signs
    for y in FLOATS:
        a = tensor(y, [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 0.0, -0.0], (8,))
        b = tensor(y, [-math.inf, math.inf, 1.0, 1.0, -3.0, 3.0, -2.0, 2.0], (8,))
        emit("remainder", [a, b], lambda: torch.remainder(a, b))
        emit("floor_divide", [a, b], lambda: torch.floor_divide(a, b))
    # complex products and quotients on exactly representable parts
    for x in COMPLEX:
        for y in COMPLEX + ["float32", "int8"]:
            re = [complex(rng.randint(-8, 8), rng.randint(-8, 8)) for _ in range(n)]
            a = tensor(x, re, (n,))
            bv = [rng.choice([1, 2, 4, -2, 0.5]) for _ in range(n)]
            b = tensor(y, bv if y in ("float32", "int8") else [complex(v, 0) for v in bv], (n,))
            emit("multiply", [a, b], lambda: torch.mul(a, b))
            emit("true_divide", [a, b], lambda: torch.true_divide(a, b))
    # power on small integer values (exact results) and the negative-exponent error
    for x in INTS + FLOATS:
        lo = -4 if x not in ("uint8",) else 0
        a = tensor(x, [rng.randint(lo, 4) for _ in range(n)], (n,))
        b = tensor(x, [rng.randint(0, 4) for _ in range(n)], (n,))
        emit("power", [a, b], lambda: torch.pow(a, b))
        emit("power", [a, 2], lambda: torch.pow(a, 2))
    neg = tensor("int8", [2, 3], (2,))
    emit("power", [neg, -1], lambda: torch.pow(neg, -1))
    # unary ops
    for x in ALL:
        a = tensor(x, pick(x, 16), (16,))
        emit("negative", [a], lambda: torch.neg(a))
        emit("absolute", [a], lambda: torch.abs(a))
    # clip: tensors, zero-dim and Python bounds
    for x in ALL:
        for lo_kind in ["tensor", "zero-dim", "scalar"]:
            a = tensor(x, pick(x, n), (n,))
            if lo_kind == "tensor":
                lo, hi = tensor(x, pick(x, n), (n,)), tensor(x, pick(x, n), (n,))
            elif lo_kind == "zero-dim":
                y = rng.choice(INTS + FLOATS)
                lo, hi = tensor(y, pick(y, 1), ()), tensor(y, pick(y, 1), ())
            else:
                lo, hi = rng.choice([(0, 100), (-1.5, 2.5), (-3, 0.5)])
            if zero_tie(a, lo, hi):
                continue  # ±0 ties: PyTorch's vector loop and its tail keep different zeros
            emit("clip", [a, lo, hi], lambda: torch.clamp(a, lo, hi))
    # where: the result dtype of the two values, categories included
    for x in ALL:
        for y in rng.sample(ALL, 5):
            cond = tensor("bool", pick("bool", n), (n,))
            a, b = tensor(x, pick(x, n), (n,)), tensor(y, pick(y, n), (n,))
            emit("where", [cond, a, b], lambda: torch.where(cond, a, b))
            b0 = tensor(y, pick(y, 1), ())
            if x in ("float16", "bfloat16") and y in COMPLEX:
                continue  # complex32 / bcomplex32
            emit("where", [cond, a, b0], lambda: torch.where(cond, a, b0))
        for s in [2.5, 3, True]:
            cond = tensor("bool", pick("bool", n), (n,))
            a = tensor(x, pick(x, n), (n,))
            emit("where", [cond, a, s], lambda: torch.where(cond, a, s))
    # sums: integers wrap in int64, bool counts, integer-valued floats (exact)
    for x in ["bool"] + INTS + FLOATS:
        if x in FLOATS:
            vals = [float(rng.randint(-8, 8)) for _ in range(24)]
        else:
            vals = pick(x, 24)
        a = tensor(x, vals, (4, 6))
        emit("sum", [a], lambda: torch.sum(a))
        for axis in [0, 1]:
            emit("sum", [a], lambda: torch.sum(a, dim=axis), axis=axis)
    # astype between every pair (floats to integers only where C defines it)
    for x in ALL:
        for y in ALL:
            vals = pick(x, n)
            if x in FLOATS + COMPLEX and y in INTS:
                info = torch.iinfo(T[y])

                def ok(v):
                    r = v.real if isinstance(v, complex) else v
                    return math.isfinite(r) and info.min <= math.trunc(r) <= info.max

                vals = [v for v in values(x) if ok(v)][:n]
                # every value must survive the rounding into x as well
                t = tensor(x, vals, (len(vals),))
                back = t.real if t.dtype.is_complex else t
                keep = [i for i, v in enumerate(back.tolist())
                        if math.isfinite(v) and info.min <= math.trunc(v) <= info.max]
                t = t[keep]
            else:
                t = tensor(x, vals, (n,))
            emit("astype", [t], lambda: t.to(T[y]), dtype=y)
    # n-ary ops' scalars: a Python int must fit an integer result (arithmetic wraps it, clamp
    # and where raise); Python floats and zero-dim float64 bounds reach float16/bfloat16
    # through float32 (1 + 2**-11 + 2**-40 is a tie in float16 after float32, above it before)
    v = 1 + 2 ** -11 + 2 ** -40
    for x in ["int8", "uint8", "int16", "int64", "bool"]:
        for s in [300, -1, 2 ** 63, 2 ** 64, 127]:
            a = tensor(x, pick(x, n), (n,))
            emit("clip", [a, s, s], lambda: torch.clamp(a, s, s))
            cond = tensor("bool", pick("bool", n), (n,))
            emit("where", [cond, a, s], lambda: torch.where(cond, a, s))
    for x in ["float16", "bfloat16"]:
        a = tensor(x, [0.0, 2.0, -1.0, math.nan], (4,))
        for lo in [v, -v, 1e300, tensor("float64", [v], ())]:
            emit("clip", [a, lo, math.inf], lambda: torch.clamp(a, lo, math.inf))
            emit("clip", [a, -math.inf, lo], lambda: torch.clamp(a, -math.inf, lo))
            cond = tensor("bool", [True, False, True, False], (4,))
            emit("where", [cond, a, lo], lambda: torch.where(cond, a, lo))
    # Python numbers past a float dtype's finite range: clamp raises from any value greater
    # than the largest finite one (65505.0 into float16, though it rounds to 65504); where
    # raises into float32 and complex64 (also a where of two Python numbers, whose result is
    # float32) and rounds to ±inf in float16 and bfloat16
    fmax = torch.finfo(torch.float32).max
    past = [1e300, -1e300, fmax * (1 + 2 ** -40), -fmax * (1 + 2 ** -40), fmax, 70000.0,
            65505.0, math.inf]
    for x in ["float16", "bfloat16", "float32", "float64", "complex64", "int8", "bool"]:
        for s in past + [complex(1e39, 0), complex(0, -1e39), complex(math.inf, 1e300)]:
            if isinstance(s, complex) and x in ("float16", "bfloat16"):
                continue  # complex32 / bcomplex32
            cond = tensor("bool", [True, False, True], (3,))
            a = tensor(x, pick(x, 3), (3,))
            emit("where", [cond, a, s], lambda: torch.where(cond, a, s))
            emit("where", [cond, s, a], lambda: torch.where(cond, s, a))
    cond = tensor("bool", [True, False], (2,))
    for s, r in [(1e300, True), (1e300, 2.5), (2, -1e300), (fmax, 1), (1e39, complex(1, 1))]:
        emit("where", [cond, s, r], lambda: torch.where(cond, s, r))
    for x in ["float16", "bfloat16", "float32"]:
        a = tensor(x, [0.0, 2.0, -1.0, 1000.0], (4,))
        for b in [65504.0, 65505.0, 65519.0, -65505.0, 70000, 3.39e38, fmax, fmax * (1 + 2 ** -40),
                  1e300]:
            emit("clip", [a, -math.inf, b], lambda: torch.clamp(a, -math.inf, b))
            emit("clip", [a, b, math.inf], lambda: torch.clamp(a, b, math.inf))
    # a Python int from 2**63 on is a uint64, which PyTorch promotes only with a float: where
    # of two Python numbers raises with an int, bool or complex (two such ints: below)
    big = 2 ** 63
    cond = tensor("bool", [True, False], (2,))
    for s, r in [(big, 1.5), (big, 300), (big, True), (big, 1j), (300, big), (2.5, big),
                 (False, big), (-1, big), (big + 5, 0.5)]:
        emit("where", [cond, s, r], lambda: torch.where(cond, s, r))
    for x in ["complex64", "float32", "int64", "bool"]:
        for zero_dim in [False, True]:
            a = tensor(x, pick(x, 1 if zero_dim else 2), () if zero_dim else (2,))
            emit("where", [cond, a, big], lambda: torch.where(cond, a, big))
            emit("where", [cond, big, a], lambda: torch.where(cond, big, a))
    # clamp takes both bounds as Python numbers or both as tensors: a mix is a TypeError, but
    # a zero-dim tensor passes as a number (left out: it then counts as a Python number, not
    # by its own dtype and category)
    for x in ["int8", "float32", "bfloat16"]:
        a = tensor(x, [0, 1, 5], (3,))
        u = tensor(x, [2, 3, 4], (3,))
        for lo, hi in [(0, u), (u, 4), (False, u), (u, 2.5)]:
            emit("clip", [a, lo, hi], lambda: torch.clamp(a, lo, hi))
    # integer division checks its divisors as it computes: an empty result raises nothing
    for x in ["int8", "uint8", "int64"]:
        e = tensor(x, [], (0,))
        for op in ["floor_divide", "remainder"]:
            for d in [0, False, tensor(x, [0], ()), tensor(x, [0], (1,))]:
                emit(op, [e, d], lambda: BINARY[op][0](e, d))
            z = tensor(x, [0, 0], (2, 1))
            emit(op, [z, tensor(x, [], (0,))], lambda: BINARY[op][0](z, tensor(x, [], (0,))))
    # two Python ints from 2**63 on are two uint64s: where's result is uint64 (found by
    # scripts/fuzz_libraries.py torch --seed 200105); beside a smaller int or a bool it raises
    for s, r in [(big, 2 ** 64 - 1), (2 ** 64 - 1, big), (big, big), (2 ** 64 - 1, 2 ** 63 - 1),
                 (big, False)]:
        emit("where", [cond, s, r], lambda: torch.where(cond, s, r))
    write_cases("torch", cases, expected)
    print(f"{len(cases)} cases from torch {torch.__version__}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Measures how a library narrows into float16 and bfloat16 (the `[kernels]` convention
`narrowing`, docs/lattices/conventions.md) and writes tests/data/kernels/narrowing_<lib>_cases
.jsonl and _expected.jsonl. The values are drawn where rounding twice and rounding once part:
next to the midpoint of two neighbouring float16 (bfloat16) values, by less than float32's half
ulp or by more, or on it; integers of int32, int64, uint32 and uint64 next to a bfloat16
midpoint above 2^24 (where float32 rounds them). Cases: `astype` of float64, complex128 and the
32- and 64-bit integers to float16 and bfloat16; `add`, `subtract`, `multiply` and `maximum`
(PyTorch: `true_divide`) of a float16 (bfloat16) array and such a Python float; `add` of a bfloat16 array and a Python int
or an integer array; `where` and `clip` with such a Python float; and a zero-dim float64 beside
a float16 array. Usage, from the repository root, in an environment with the library:

    scripts/oracle_narrowing.py torch|tensorflow|jax [SEED] [N]

(N arrays per pair, default 6, of 24 elements.)
"""
import os
import random
import struct
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")

name = sys.argv[1] if len(sys.argv) > 1 else ""
if name not in ("torch", "tensorflow", "jax"):
    sys.exit(__doc__)
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 7
n = int(sys.argv[3]) if len(sys.argv) > 3 else 6
rng = random.Random(seed)

from oracle_common import answer, write_cases  # noqa: E402

if name == "torch":
    import oracle_torch as lib  # noqa: E402

    torch = lib.torch
    astype = lambda x, d: x.to(lib.T[d])  # noqa: E731
    BINARY = {op: fn for op, (fn, _) in lib.BINARY.items()}
    where, clip = torch.where, torch.clamp
    name_of, version = lib.name_of, torch.__version__
    WIDE = ["float64", "complex128", "int32", "int64"]
elif name == "tensorflow":
    import oracle_tensorflow as lib  # noqa: E402

    tf = lib.tf
    astype = lambda x, d: tf.cast(x, lib.T[d])  # noqa: E731
    BINARY, where, clip = lib.BINARY, lib.tnp.where, tf.clip_by_value
    name_of, version = (lambda d: d.name), tf.__version__
    WIDE = ["float64", "complex128", "int32", "int64", "uint32", "uint64"]
else:
    import fuzz_adapter_jax as lib  # noqa: E402

    astype = lambda x, d: x.astype(lib.dt(d))  # noqa: E731
    BINARY, where, clip = lib.BINARY, lib.jnp.where, lib.clip
    name_of, version = lib.name_of, lib.version
    WIDE = ["float64", "complex128", "int32", "int64", "uint32", "uint64"]


def f16(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def bf16(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def near_midpoint(to):
    """A float64 next to the midpoint of two neighbouring normal values of `to`."""
    if to == "float16":
        b = rng.randrange(0x0400, 0x7BFF)
        lo, hi = f16(b), f16(b + 1)
    else:
        b = rng.randrange(0x0080, 0x7F7F)
        lo, hi = bf16(b), bf16(b + 1)
    mid = (lo + hi) / 2  # exact in float64
    k = rng.choice([None] + list(range(9, 60)))
    v = mid if k is None else mid + rng.choice([-1, 1]) * mid * 2.0 ** -k
    return rng.choice([v, -v])


def int_near_midpoint(dtype):
    """An integer of `dtype` next to a bfloat16 midpoint above 2^24."""
    bits = int(dtype.lstrip("uint"))
    signed = not dtype.startswith("u")
    top = bits - 1 if signed else bits
    e = rng.randrange(25, top)
    m = rng.randrange(128, 256)  # bfloat16's 8-bit significand
    ulp = 1 << (e - 7)
    v = m * ulp + ulp // 2 + rng.choice([0, 1, -1, 2, -2, rng.randrange(-ulp // 2, ulp // 2)])
    v = min(v, (1 << top) - 1)
    return -v if signed and rng.random() < 0.3 else v


def values(dtype, to, k):
    if dtype in ("float64", "complex128"):
        re = [near_midpoint(to) for _ in range(k)]
        if dtype == "float64":
            return re
        return [complex(r, near_midpoint(to)) for r in re]
    return [int_near_midpoint(dtype) for _ in range(k)]




cases, expected = [], []


def emit(op, xs, call, **extra):
    cid = len(cases)
    cases.append({"id": cid, "op": op, "args": [lib.arg_json(x) for x in xs]} | extra)
    expected.append({"id": cid} | answer(lib, name_of, call))


K = 24
for to in ("float16", "bfloat16"):
    for src in WIDE:
        if to == "float16" and src.startswith(("int", "uint")):
            continue  # every integer float32 rounds is past float16's range
        for _ in range(n):
            x = lib.tensor(src, values(src, to, K), (K,))
            emit("astype", [x], lambda x=x: astype(x, to), dtype=to)
    for _ in range(n):
        a = lib.tensor(to, [rng.choice([0.0, 1.0, -2.5, 0.5]) for _ in range(8)], (8,))
        # torch.maximum takes tensors only: a torch user divides instead.
        for op in ("add", "subtract", "multiply", "true_divide" if name == "torch" else "maximum"):
            v = near_midpoint(to)
            emit(op, [a, v], lambda a=a, v=v, op=op: BINARY[op](a, v))
        v = near_midpoint(to)
        cond = lib.tensor("bool", [rng.random() < 0.5 for _ in range(8)], (8,))
        emit("where", [cond, a, v], lambda c=cond, a=a, v=v: where(c, a, v))
        big = lib.tensor(to, [300.0] * 8, (8,))
        emit("clip", [big, -v, v], lambda b=big, v=v: clip(b, -v, v))
        z = lib.tensor("float64", [near_midpoint(to)], ())
        emit("add", [a, z], lambda a=a, z=z: BINARY["add"](a, z))
for src in ("int32", "int64"):
    b = lib.tensor("bfloat16", [0.0] * 8, (8,))
    for _ in range(n):
        i = int_near_midpoint(src if src == "int32" else "int64")
        emit("add", [b, i], lambda b=b, i=i: BINARY["add"](b, i))
        x = lib.tensor(src, values(src, "bfloat16", 8), (8,))
        emit("add", [b, x], lambda b=b, x=x: BINARY["add"](b, x))

write_cases(f"narrowing_{name}", cases, expected)
print(f"{name} {version}: {len(cases)} narrowing cases written")

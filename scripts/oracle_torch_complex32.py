#!/usr/bin/env python3
"""Measures PyTorch (2.15, CPU) on complex32 and bcomplex32, the lattice's two dtypes with few
CPU kernels, and writes tests/data/kernels/torch_complex32_cases.jsonl and
torch_complex32_expected.jsonl (the runner's line format; `typejoin run --policy torch`).

Every op of the runner with a complex32 or bcomplex32 operand or result (a twelve-element
tensor, a zero-dim one, a Python number; float16/bfloat16 with a Python complex),
every cast to and from them, `negative`, `absolute`, `where` and `sum`: PyTorch has add, sub,
mul, eq, ne, where, neg, abs and casts for complex32 and casts and eq for bcomplex32, and raises
("not implemented for 'ComplexHalf'") for the rest, which the answers record as `unsupported`.
Values are the edge values of scripts/oracle_torch.py (NaN, ±inf, ±0, subnormals, 65504)
rounded into the 16-bit parts. Left out, as there: complex true_divide (PyTorch's own formula),
float → integer casts of values C leaves undefined.

Run from the repository root with torch installed: python3 scripts/oracle_torch_complex32.py
"""
import math
import random

import oracle_torch as o

torch = o.torch
o.rng.seed(20261128)
o.use_catalogue()
rng = random.Random(20261128)
HALF = ["complex32", "bcomplex32"]
n = 12


def some(name, k=n, shape=None):
    return o.tensor(name, o.pick(name, k), shape if shape is not None else (k,))


def main():
    # binary ops: a half complex with every dtype, dimensioned, zero-dim and Python numbers
    for op in o.BINARY:
        if op == "true_divide":
            continue  # complex division: PyTorch's own formula (module docstring)
        fn, operator = o.BINARY[op]
        for x in HALF:
            for y in o.ALL:
                for a, b in [(some(x), some(y)), (some(x), some(y, 1, ())),
                             (some(y, 1, ()), some(x)), (some(y), some(x))]:
                    o.emit(op, [a, b], lambda: fn(a, b))
            if operator is None:
                continue
            for kind, vals in o.SCALARS.items():
                for s in rng.sample(vals, min(3, len(vals))):
                    a = some(x)
                    o.emit(op, [a, s], lambda: fn(a, s))
                    o.emit(op, [s, a], lambda: operator(s, a))
        # a float16/bfloat16 tensor with a Python complex is complex32/bcomplex32
        if operator is not None:
            for y in ["float16", "bfloat16"]:
                for s in o.SCALARS["complex"] + [complex(1 + 2 ** -12, -3.3e38)]:
                    a = some(y)
                    o.emit(op, [a, s], lambda: fn(a, s))
    # casts both ways (to an integer only from values C defines)
    for x in HALF:
        for y in o.ALL:
            t = some(y)
            o.emit("astype", [t], lambda: t.to(o.T[x]), dtype=x)
            src = some(x)
            if y in o.INTS:
                parts = torch.view_as_real(src.to(torch.complex64))[..., 0]
                ok = torch.isfinite(parts) & (parts.trunc() >= torch.iinfo(o.T[y]).min) & (
                    parts.trunc() <= torch.iinfo(o.T[y]).max)
                src = src[ok]
            o.emit("astype", [src], lambda: src.to(o.T[y]), dtype=y)
    # unary, where, sum
    for x in HALF:
        for shape in [(16,), (), (3, 4), (40,)]:
            k = math.prod(shape)
            a = some(x, k, shape)
            o.emit("negative", [a], lambda: torch.neg(a))
            o.emit("absolute", [a], lambda: torch.abs(a))
        a2 = o.tensor(x, [[1 + 2j, 3], [0.5j, -1]], (2, 2))
        o.emit("sum", [a2], lambda: torch.sum(a2))
        for y in o.ALL:
            cond = o.tensor("bool", o.pick("bool", n), (n,))
            a, b = some(x), some(y)
            o.emit("where", [cond, a, b], lambda: torch.where(cond, a, b))
            b0 = some(y, 1, ())
            o.emit("where", [cond, a, b0], lambda: torch.where(cond, a, b0))
        for s in [2.5, 3, True, 1j, complex(70000, 1)]:
            cond = o.tensor("bool", o.pick("bool", n), (n,))
            a = some(x)
            o.emit("where", [cond, a, s], lambda: torch.where(cond, a, s))
        lo, hi = some(x), some(x)
        a = some(x)
        o.emit("clip", [a, lo, hi], lambda: torch.clamp(a, lo, hi))
    o.write_cases("torch_complex32", o.cases, o.expected)
    print(f"{len(o.cases)} cases from torch {torch.__version__}")


if __name__ == "__main__":
    main()

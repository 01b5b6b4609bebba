#!/usr/bin/env python3
"""Measures PyTorch's (2.15, CPU) conversions into its float8 dtypes and its ops on them, and
writes

- tests/data/kernels/torch_float8_digests.json: for each of float8_e4m3fn, float8_e4m3fnuz,
  float8_e5m2, float8_e5m2fnuz and float8_e8m0fnu, the SHA-256 of the codes torch gives the
  float32 patterns `(h << 16) | l` for every h and l in LOWS (393,216 patterns: every sign,
  exponent and float8 mantissa with the rounding bits below them clear, just set and full),
  and, with --exhaustive, of all 2³² float32 patterns (`numeric::c10`'s tests recompute them);
- tests/data/kernels/torch_float8_cases.jsonl and torch_float8_expected.jsonl (the runner's
  line format; `typejoin run --policy torch`): every op of the runner with a float8 operand
  or result (a twelve-element tensor, a zero-dim one, a Python number), every cast to and
  from the float8 dtypes, `negative`, `absolute`, `where` and `clip`, and `multiply` by a
  second operand of one element (torch's CPU scalar path, which has no float8 kernel), and
  `clamp` of every dtype with Python complex bounds (a float tensor keeps its dtype). PyTorch
  has mul, eq, ne, abs (not e8m0fnu), where and casts for them and raises for the rest
  (`unsupported`).

Values are scripts/oracle_torch.py's edge values with NEAR, the values about each float8
format's largest finite value, its rounding midpoints and float64 values that float32
rounds onto a midpoint (PyTorch converts through float32: `float8_e5m2(1.125 + 2⁻⁴⁰)` is 1.0).
Left out, as there: float → integer casts of values C leaves undefined.

The script checks first that a large tensor converts as single elements do (torch's copy
kernel has no vector path of its own for float8: both are c10's functions).

Run from the repository root with torch installed:
python3 scripts/oracle_torch_float8.py [--exhaustive]
"""
import hashlib
import json
import math
import random
import sys

import numpy as np

import oracle_torch as o

torch = o.torch
o.rng.seed(20261128)
o.use_catalogue()
rng = random.Random(20261128)
F8 = o.CATALOGUE_FLOAT8
LOWS = [0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF]
NEAR = [448.0, 449.0, 464.0, 465.0, 479.0, 480.0, 500.0, -464.5, 57344.0, 61439.0, 61440.0,
        65535.0, 65536.0, 240.0, 247.0, 248.0, 249.0, 256.0, -300.0, 0.75, 3.0, -3.0,
        2.0 ** -127, 2.0 ** -130, 1e-40, -1e-45, 1.125 + 2.0 ** -40, 1.0625 + 2.0 ** -40,
        -(1.125 + 2.0 ** -40), 1.5 * 2.0 ** 100, 2.0 ** 127 * 1.75]
n = 12


def codes(bits, dtype):
    """torch's codes of the float32 patterns `bits` (a uint32 NumPy array) in `dtype`."""
    f = torch.from_numpy(bits.view(np.int32)).view(torch.float32)
    return f.to(dtype).view(torch.uint8).numpy()


def digests(exhaustive):
    h = np.arange(1 << 16, dtype=np.uint32) << 16
    sweep = (h[:, None] | np.array(LOWS, dtype=np.uint32)[None, :]).reshape(-1)
    out = {"lows": LOWS, "sweep": {}, "every_float32": {}}
    for name in F8:
        d = o.T[name]
        out["sweep"][name] = hashlib.sha256(codes(sweep, d).tobytes()).hexdigest()
        # a large tensor converts as its elements one by one
        sample = sweep[rng.sample(range(len(sweep)), 2000)]
        whole = codes(sample, d)
        single = np.array([codes(sample[i:i + 1], d)[0] for i in range(len(sample))])
        assert (whole == single).all(), f"{name}: a vector path converts otherwise"
        if exhaustive:
            sha = hashlib.sha256()
            step = 1 << 26
            for start in range(0, 1 << 32, step):
                sha.update(codes(np.arange(start, start + step, dtype=np.uint32), d).tobytes())
            out["every_float32"][name] = sha.hexdigest()
    return out


def some(name, k=n, shape=None):
    return o.tensor(name, o.pick(name, k), shape if shape is not None else (k,))


def near(name, k=n):
    """`k` values of NEAR and the edge values, as a tensor of `name`."""
    if name == "bool" or name in o.INTS:
        return some(name, k)
    vals = [rng.choice(NEAR) if rng.random() < 0.6 else v for v in o.pick(name, k)]
    if name in o.COMPLEX:
        vals = [complex(v, rng.choice(NEAR)) if isinstance(v, float) else v for v in vals]
    return o.tensor(name, vals, (k,))


def cases():
    for op in o.BINARY:
        fn, operator = o.BINARY[op]
        for x in F8:
            for y in o.ALL:
                for a, b in [(near(x), near(y)), (near(x), some(y, 1, ())),
                             (some(y, 1, ()), near(x)), (near(y), near(x))]:
                    o.emit(op, [a, b], lambda: fn(a, b))
            # the same dtype on both sides, values about the range (mul's overflow)
            a, b = near(x), near(x)
            o.emit(op, [a, b], lambda: fn(a, b))
            if operator is None:
                continue
            for kind, vals in o.SCALARS.items():
                for s in rng.sample(vals, min(3, len(vals))):
                    a = near(x)
                    o.emit(op, [a, s], lambda: fn(a, s))
                    o.emit(op, [s, a], lambda: operator(s, a))
    for x in F8:
        for y in o.ALL:
            t = near(y)
            o.emit("astype", [t], lambda: t.to(o.T[x]), dtype=x)
            src = near(x)
            if y in o.INTS:
                v = src.to(torch.float64)
                ok = torch.isfinite(v) & (v.trunc() >= torch.iinfo(o.T[y]).min) & (
                    v.trunc() <= torch.iinfo(o.T[y]).max)
                src = src[ok]
            o.emit("astype", [src], lambda: src.to(o.T[y]), dtype=y)
    for x in F8:
        for shape in [(16,), (), (3, 4)]:
            a = o.tensor(x, [rng.choice(NEAR + o.values(x)) for _ in range(math.prod(shape))],
                         shape)
            o.emit("negative", [a], lambda: torch.neg(a))
            o.emit("absolute", [a], lambda: torch.abs(a))
        for y in o.ALL:
            cond = o.tensor("bool", o.pick("bool", n), (n,))
            a, b = near(x), near(y)
            o.emit("where", [cond, a, b], lambda: torch.where(cond, a, b))
            o.emit("where", [cond, b, a], lambda: torch.where(cond, b, a))
            b0 = some(y, 1, ())
            o.emit("where", [cond, a, b0], lambda: torch.where(cond, a, b0))
        for s in NEAR + [2.5, 3, -7, True, 1j, 1e300, math.inf, -math.inf, math.nan]:
            cond = o.tensor("bool", o.pick("bool", n), (n,))
            a = near(x)
            o.emit("where", [cond, a, s], lambda: torch.where(cond, a, s))
        lo, hi, a = near(x), near(x), near(x)
        o.emit("clip", [a, lo, hi], lambda: torch.clamp(a, lo, hi))
    # multiply by a second operand of one element: torch's CPU scalar path, which has no float8
    for x in F8:
        for y in [x, "bool", "int8", "uint8", "int64"]:
            for sa, sb in [((12,), (1,)), ((1,), (12,)), ((1,), (1,)), ((3, 4), (1, 1)),
                           ((3, 1), (1, 4)), ((1, 1), (3, 4))]:
                a = o.tensor(x, [rng.choice(NEAR) for _ in range(math.prod(sa))], sa)
                b = o.tensor(y, o.pick(y, math.prod(sb)), sb)
                o.emit("multiply", [a, b], lambda: torch.mul(a, b))
    # clamp with Python complex bounds: a float tensor keeps its dtype and converts them checked
    bounds = [complex(1.5, 0), complex(1, 2), complex(math.nan, 0), complex(0, math.nan),
              complex(-2.5, -0.0), 3, 2.5]
    for x in o.ALL:
        for _ in range(4):
            lo, hi = rng.choice(bounds), rng.choice(bounds)
            a = near(x)
            o.emit("clip", [a, lo, hi], lambda: torch.clamp(a, lo, hi))


def main():
    exhaustive = "--exhaustive" in sys.argv[1:]
    data = digests(exhaustive)
    data["torch"] = torch.__version__
    if not exhaustive:
        try:
            with open("tests/data/kernels/torch_float8_digests.json") as f:
                data["every_float32"] = json.load(f).get("every_float32", {})
        except FileNotFoundError:
            pass
    with open("tests/data/kernels/torch_float8_digests.json", "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    cases()
    o.write_cases("torch_float8", o.cases, o.expected)
    print(f"{len(o.cases)} cases from torch {torch.__version__}")


if __name__ == "__main__":
    main()

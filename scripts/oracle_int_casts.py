#!/usr/bin/env python3
"""Measures NumPy + ml_dtypes casts to integer and bool destinations and writes
tests/data/oracle/int_casts.json, which tests/it/casts.rs holds typejoin to.

For every source of at most 16 bits (every bit pattern) and the float32/float64/int64 samples
of tests/data/oracle/casts, and every destination among bool and the integers: the SHA-256 of
NumPy's output storage units, with the elements NumPy leaves undefined (a float that is NaN,
infinite, or whose truncation falls outside the destination's range: the C cast is undefined
behaviour there, and its result depends on the source type and the platform) set to 0, and how
many elements are defined. Run from the repository root: python3 scripts/oracle_int_casts.py
"""
import hashlib
import json
import sys
import warnings

import numpy as np

try:
    import ml_dtypes
except ImportError:
    sys.exit("needs ml_dtypes (pip install ml_dtypes)")

warnings.simplefilter("ignore")

SMALL = ["bool", "int8", "uint8", "int16", "uint16", "int4", "uint4", "int2", "uint2",
         "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
         "float8_e5m2fnuz", "float8_e4m3b11fnuz", "float8_e3m4", "float8_e4m3",
         "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
DST = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
       "int4", "uint4", "int2", "uint2"]
NBITS = {"bool": 1, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4, "float4_e2m1fn": 4,
         "float6_e2m3fn": 6, "float6_e3m2fn": 6}


def dtype(name):
    return np.dtype(getattr(ml_dtypes, name, name))


def patterns(name):
    dt = dtype(name)
    n = NBITS.get(name, dt.itemsize * 8)
    storage = {1: np.uint8, 2: np.uint16}[dt.itemsize]
    raw = np.arange(2 ** n, dtype=storage)
    if name in ("int2", "int4"):  # sign-extended patterns are not ml_dtypes' storage
        raw = raw.astype(np.uint8)
    return raw.view(dt) if name != "bool" else raw.astype(bool)


def samples(name):
    raw = np.fromfile(f"tests/data/oracle/casts/sample_{name}.bin", dtype=np.uint8)
    return raw.view(np.dtype(name))


def record(src_name, x, dst):
    dt = dtype(dst)
    try:
        y = x.astype(dt)
    except TypeError:  # ml_dtypes has no cast between some sub-byte types
        return None
    defined = np.ones(x.shape, dtype=bool)
    is_float = src_name not in ("bool", "int2", "int4", "uint2", "uint4") and \
        np.dtype(x.dtype).kind not in "iub"
    if dst != "bool" and is_float:
        f = x.astype(np.float64)
        t = np.trunc(f)
        info = ml_dtypes.iinfo(dt) if dst in ("int2", "int4", "uint2", "uint4") else np.iinfo(dt)
        with np.errstate(invalid="ignore"):
            defined = np.isfinite(f) & (t >= float(info.min)) & (t <= float(info.max))
        # float64 rounds the largest bounds of 64-bit types up: 2^63 and 2^64 are outside.
        if dst in ("int64", "uint64"):
            defined &= t < float(2 ** (63 if dst == "int64" else 64))
    bits = y.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]).copy()
    bits[~defined] = 0
    return {"src": src_name, "dst": dst, "n": int(x.size), "n_defined": int(defined.sum()),
            "sha256": hashlib.sha256(bits.tobytes()).hexdigest()}


def main():
    out = {"versions": {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__},
           "conventions": "sha256 of the destination storage units; elements whose float source "
                          "is NaN, infinite or truncates outside the destination range set to 0",
           "pairs": []}
    for s in SMALL:
        x = patterns(s)
        for d in DST:
            if d == s:
                continue
            r = record(s, x, d)
            if r is not None:
                out["pairs"].append(r)
    for s in ["float32", "float64", "int64"]:
        x = samples(s)
        for d in DST:
            out["pairs"].append(record(s, x, d) | {"input": f"casts/sample_{s}.bin"})
    with open("tests/data/oracle/int_casts.json", "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"{len(out['pairs'])} pairs")


if __name__ == "__main__":
    main()

"""The NumPy side of scripts/fuzz_libraries.py: NumPy 2 with ml_dtypes, as the `numpy` policy
(generated from observed/numpy_result_type.json) models it. The interface oracle_torch.py and
oracle_tensorflow.py give the fuzzer: the dtypes, edge values, arrays, the runner's JSON of an
operand, a result's bits (NaNs as the dtype's positive quiet NaN, the runner's canonical NaN)
and the error kind of an exception. A Python number is passed as users pass it, weak under
NEP 50 (`np.add(x, 2.5)`); a zero-dim array is an array. The edge values here are also the JAX
adapter's (scripts/fuzz_adapter_jax.py)."""
import math
import random

import numpy as np

from oracle_common import scalar_json
from oracle_kernels_extra import bits_of as _bits, canonical, canonical_c, dt

rng = random.Random(0)

INTS = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
# The ml_dtypes types NumPy users compute with beside bfloat16 (ml_dtypes 0.6).
SMALL = ["float8_e4m3fn", "float8_e5m2", "int4", "uint4"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX + SMALL
Array = np.ndarray
version = f"{np.__version__}"

BINARY = {op: getattr(np, op) for op in [
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
    "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "bitwise_and", "bitwise_or", "bitwise_xor"]}

SCALARS = {
    "bool": [True, False],
    "int": [0, 1, -1, 3, 127, 128, 255, 300, -129, 2 ** 31, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1,
            -(2 ** 63)],
    "float": [0.0, -0.0, 0.5, 1.1, 2.5, 65520.0, 1e300, math.inf, -math.inf, math.nan,
              2.0 ** -25, 3.3961775292304600e38, 1.0 + 2 ** -11 + 2 ** -30, 5e-324],
    "complex": [complex(1, 2), complex(math.nan, 0), complex(math.inf, 1), complex(0.5, -0.0)],
}


def name_of(dtype):
    return np.dtype(dtype).name


def values(name):
    """Edge values of a dtype (Python numbers), then random ones."""
    if name == "bool":
        return [False, True]
    d = dt(name)
    if name in INTS or name in ("int4", "uint4"):
        import ml_dtypes

        info = ml_dtypes.iinfo(d) if name in ("int4", "uint4") else np.iinfo(d)
        lo, hi = int(info.min), int(info.max)
        base = [0, 1, 2, 3, 7, 100, hi, hi - 1, lo, lo + 1]
        if lo < 0:
            base += [-1, -2, -7, -100]
        base = [v for v in base if lo <= v <= hi]
        return base + [rng.randint(lo, hi) for _ in range(6)]
    if name in FLOATS or name in SMALL:
        import ml_dtypes

        info = ml_dtypes.finfo(d)
        big, tiny = float(info.max), float(info.smallest_normal)
        base = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, 7.0, 0.1, -1e-3, big, -big, tiny,
                tiny / 4, -tiny / 2, math.inf, -math.inf, math.nan, 100.0, 65504.0, 1e-5]
        return base + [rng.uniform(-50, 50) for _ in range(4)]
    re = values("float32" if name == "complex64" else "float64")
    return [complex(a, b) for a, b in zip(re, reversed(re))]


def pick(name, n):
    v = values(name)
    return [rng.choice(v) for _ in range(n)]


def tensor(name, vals, shape):
    with np.errstate(all="ignore"):
        a = np.array(vals).astype(dt(name)) if name != "bool" else np.array(vals, dtype=bool)
    return a.reshape(shape)


def bits_of(r):
    flat = np.asarray(r).reshape(-1)
    if flat.dtype.kind == "c":
        return _bits(canonical_c(flat))
    return _bits(canonical(flat))


def arg_json(x):
    if isinstance(x, np.ndarray):
        return {"dtype": name_of(x.dtype), "shape": list(x.shape), "bits": bits_of(x)}
    return scalar_json(x)


def error_kind(e):
    m = str(e)
    if isinstance(e, OverflowError) or "out of bounds" in m:
        return "overflow"
    if type(e).__name__ == "DTypePromotionError":
        return "promotion"
    if isinstance(e, ValueError):
        return "input"
    return "unsupported"


def call(fn, *xs):
    """A NumPy call as a user's program makes it, warnings (overflow, invalid) silenced."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(*xs))


def clip(x, lo, hi):
    return call(np.clip, x, lo, hi)

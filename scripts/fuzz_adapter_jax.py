"""The JAX side of scripts/fuzz_libraries.py: jax.numpy (0.10, CPU) with jax_enable_x64, as the
`jax` policy models it. The same interface as oracle_torch.py and oracle_tensorflow.py give the
fuzzer: the dtypes, edge values, arrays, the runner's JSON of an operand, a result's bits (NaNs
as the dtype's positive quiet NaN, the runner's canonical NaN) and the error kind of an
exception. A Python number is passed as users pass it, weak (`jnp.add(x, 2.5)`)."""
import math
import random

import numpy as np

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

from oracle_common import scalar_json  # noqa: E402
from oracle_kernels_extra import bits_of as _bits, canonical, canonical_c, dt  # noqa: E402

rng = random.Random(0)

INTS = ["uint8", "int8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX
Array = jax.Array
version = jax.__version__

BINARY = {op: getattr(jnp, op) for op in [
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "maximum",
    "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "bitwise_and", "bitwise_or", "bitwise_xor"]}

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
    if name in INTS:
        info = np.iinfo(d)
        base = [0, 1, 2, 3, 7, 100, int(info.max), int(info.max) - 1, int(info.min),
                int(info.min) + 1]
        if info.min < 0:
            base += [-1, -2, -7, -100]
        return base + [rng.randint(int(info.min), int(info.max)) for _ in range(6)]
    if name in FLOATS:
        info = np.finfo(d) if name != "bfloat16" else None
        big = float(info.max) if info is not None else 3.3895313892515355e38
        tiny = float(info.tiny) if info is not None else 1.1754943508222875e-38
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
    return jnp.asarray(a.reshape(shape))


def bits_of(r):
    flat = np.asarray(r).reshape(-1)
    if flat.dtype.kind == "c":
        return _bits(canonical_c(flat))
    return _bits(canonical(flat))


def arg_json(x):
    if isinstance(x, jax.Array):
        return {"dtype": name_of(x.dtype), "shape": list(x.shape), "bits": bits_of(x)}
    return scalar_json(x)


def error_kind(e):
    m = str(e)
    if isinstance(e, OverflowError) or "out of bounds" in m or "overflow" in m.lower():
        return "overflow"
    if "promot" in type(e).__name__.lower() or "promot" in m.lower():
        return "promotion"
    return "unsupported"


def clip(x, lo, hi):
    return jnp.clip(x, min=lo, max=hi)

"""The JAX side of scripts/fuzz_libraries.py: jax.numpy (0.10, CPU) with jax_enable_x64, as the
`jax` policy models it. The same interface as oracle_torch.py and oracle_tensorflow.py give the
fuzzer: the dtypes, edge values, arrays, the runner's JSON of an operand, a result's bits (NaNs
as the dtype's positive quiet NaN, the runner's canonical NaN) and the error kind of an
exception. A Python number is passed as users pass it, weak (`jnp.add(x, 2.5)`)."""
import numpy as np

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402

from oracle_common import scalar_json  # noqa: E402
from oracle_kernels_extra import dt  # noqa: E402

# The edge values and their random stream are the NumPy adapter's (the fuzzer seeds `rng`).
from fuzz_adapter_numpy import (  # noqa: E402,F401
    COMPLEX, FLOATS, INTS, SCALARS, bits_of, pick, rng, values)

ALL = ["bool"] + INTS + FLOATS + COMPLEX
Array = jax.Array
version = jax.__version__

BINARY = {op: getattr(jnp, op) for op in [
    "add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "maximum",
    "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "bitwise_and", "bitwise_or", "bitwise_xor"]}


def name_of(dtype):
    return np.dtype(dtype).name


def tensor(name, vals, shape):
    with np.errstate(all="ignore"):
        a = np.array(vals).astype(dt(name)) if name != "bool" else np.array(vals, dtype=bool)
    return jnp.asarray(a.reshape(shape))


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

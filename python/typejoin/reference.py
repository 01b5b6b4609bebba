"""The reference kernels on NumPy arrays: bit-exact with ``typejoin run``.

    >>> import numpy as np, ml_dtypes, typejoin.reference as ref
    >>> ref.add(np.array([1, 2], np.int8), 300, policy="torch")   # PyTorch wraps the int
    array([45, 46], dtype=int8)

Every op takes NumPy arrays (ml_dtypes dtypes for bfloat16, float8, int4, …) and Python
scalars (weak operands); a 0-d array is a zero-dim operand. The result dtype is the policy's
(``policy=`` names a shipped policy: ``"jax"``, ``"numpy"``-like ``"array-api"``, ``"torch"``,
…), the values those of the library the policy describes. ``out=`` takes a C-contiguous
array of the result's dtype and shape. The GIL is released while a kernel computes. A kernel
that refuses its operands raises :class:`typejoin.KernelError` with ``.kind`` (promotion,
overflow, unsupported, zero-division, input).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _native

__all__ = ["call", "dtype_of"]

_ML_DTYPES = None


def dtype_of(name: str) -> np.dtype:
    """The NumPy dtype of a typejoin dtype name (ml_dtypes for the formats NumPy lacks)."""
    global _ML_DTYPES
    try:
        return np.dtype(name)
    except TypeError:
        if _ML_DTYPES is None:
            import ml_dtypes

            _ML_DTYPES = ml_dtypes
        return np.dtype(getattr(_ML_DTYPES, name))


_NAMES: dict = {}


def _operand(x: Any) -> tuple:
    if isinstance(x, bool):
        return ("bool", x)
    if isinstance(x, int):
        return ("int", x)
    if isinstance(x, float):
        return ("float", x)
    if isinstance(x, complex):
        return ("complex", (x.real, x.imag))
    if type(x) is not np.ndarray or not x.flags.c_contiguous:
        # (not ascontiguousarray, which would make a 0-d array 1-d)
        x = np.array(x, order="C", copy=True)
    d = x.dtype
    name = _NAMES.get(d)
    if name is None:
        name = _NAMES[d] = d.name
    # The native side reads the data pointer from the ndarray itself (NumPy's ABI) while the
    # tuple keeps the array alive.
    return ("array", name, x.shape, x, x.nbytes)


def call(op: str, *args: Any, policy: str = "jax", out: Optional[np.ndarray] = None,
         dtype: Any = None, axis: Optional[int] = None) -> np.ndarray:
    """Runs the kernel ``op`` (a name of the op catalogue) on ``args``."""
    specs = [_operand(a) for a in args]
    to = None if dtype is None else (dtype if isinstance(dtype, str) else np.dtype(dtype).name)
    if out is not None:
        if not (out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("out= must be a writeable C-contiguous array")
        name, shape, _ = _native.run(policy, op, specs, to, axis,
                                     (out.__array_interface__["data"][0], out.nbytes))
        if out.dtype != dtype_of(name) or tuple(out.shape) != tuple(shape):
            raise ValueError(f"out= is {out.dtype} {out.shape}, the result {name} {tuple(shape)}")
        return out
    name, shape, data = _native.run(policy, op, specs, to, axis, None)
    return np.frombuffer(data, dtype=dtype_of(name)).reshape(shape)


def _binary(op: str):
    def f(x: Any, y: Any, *, policy: str = "jax", out: Optional[np.ndarray] = None):
        return call(op, x, y, policy=policy, out=out)

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"``{op}(x, y)`` under ``policy`` (the runner's op ``{op}``)."
    return f


def _unary(op: str):
    def f(x: Any, *, policy: str = "jax", out: Optional[np.ndarray] = None):
        return call(op, x, policy=policy, out=out)

    f.__name__ = f.__qualname__ = op
    f.__doc__ = f"``{op}(x)`` under ``policy``."
    return f


def astype(x: Any, dtype: Any, *, policy: str = "jax", out: Optional[np.ndarray] = None):
    """``x`` converted to ``dtype``: NumPy's/ml_dtypes' conversion, correctly rounded."""
    return call("astype", x, policy=policy, out=out, dtype=dtype)


def clip(x: Any, lo: Any, hi: Any, *, policy: str = "jax", out: Optional[np.ndarray] = None):
    """``clip(x, lo, hi)``: the result dtype is the n-ary join of all three operands."""
    return call("clip", x, lo, hi, policy=policy, out=out)


def where(cond: Any, x: Any, y: Any, *, policy: str = "jax",
          out: Optional[np.ndarray] = None):
    """``where(cond, x, y)``: the result dtype is the join of ``x`` and ``y``."""
    return call("where", cond, x, y, policy=policy, out=out)


def sum(x: Any, axis: Optional[int] = None, *, policy: str = "jax",  # noqa: A001
        out: Optional[np.ndarray] = None):
    """The sum of ``x`` (or along ``axis``) in the policy's accumulator dtype."""
    return call("sum", x, policy=policy, out=out, axis=axis)


for _name, _arity in _native.kernel_ops():
    if _arity == "binary":
        globals()[_name] = _binary(_name)
        __all__.append(_name)
    elif _arity == "unary":
        globals()[_name] = _unary(_name)
        __all__.append(_name)
__all__ += ["astype", "clip", "where", "sum"]

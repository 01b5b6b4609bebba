"""The reference kernels on NumPy arrays: bit-exact with ``typejoin run``.

    >>> import numpy as np, ml_dtypes, typejoin.reference as ref
    >>> ref.add(np.array([1, 2], np.int8), 300, policy="torch")   # PyTorch wraps the int
    array([45, 46], dtype=int8)

    >>> ref.add(np.array([1], np.int32), np.array([1.5], np.float32))   # NumPy's float64
    array([2.5])

Every op takes NumPy arrays (ml_dtypes dtypes for bfloat16, float8, int4, …) and Python
scalars (weak operands); a 0-d array is a zero-dim operand. JAX arrays, PyTorch tensors and
TensorFlow tensors are read as their libraries read them: a zero-dim weakly typed JAX array
(``jnp.array(1.0)``) or TensorFlow ``WeakTensor`` is a weak Python number, a zero-dim PyTorch
tensor a zero-dim operand; results are NumPy arrays. The result dtype is the policy's
(``policy=`` names a generated policy: ``"numpy"``, the default, is NumPy 2 with ml_dtypes as
measured, not a lattice (docs/policy-kinds.md); ``"jax"``, ``"array-api"``, ``"torch"``, …),
the values those of the library the policy describes. ``policy=`` also takes a
:class:`typejoin.Policy` or :class:`typejoin.Table` (``typejoin.policy("jax")``, or one of your
own: ``Policy.from_toml(text)``) or a policy file's path: a policy that was never generated is
built into kernel tables on its first call, as ``typejoin codegen`` would generate it, and
refused (:class:`typejoin.PolicyError`) where codegen refuses it (its laws fail; a measured
table without ``kernels``). ``out=`` takes a C-contiguous
array of the result's shape, of its dtype or one the library casts it to (NumPy's
``same_kind``, PyTorch's ``canCast``): the result is computed, then converted into it. The GIL is released while a kernel computes. A kernel
that refuses its operands raises :class:`typejoin.KernelError` with ``.kind`` (promotion,
overflow, unsupported, zero-division, input).
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

from . import _is_weak, _native, _numpy_name
from ._native import KernelError

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


def _contiguous(x: Any) -> np.ndarray:
    """``x`` as a C-contiguous, aligned ndarray in native byte order (a copy): lists, NumPy
    scalars, strided views, subclasses and other byte orders reach the kernels through it."""
    # (not ascontiguousarray, which would make a 0-d array 1-d)
    a = np.array(x, order="C", copy=True)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def _torch_array(t: Any) -> np.ndarray:
    """A PyTorch tensor's values as a NumPy array of the same dtype: ``Tensor.numpy()``, or a
    view of its bits for the dtypes NumPy has no type of (bfloat16, the float8 formats:
    ml_dtypes')."""
    t = t.detach().cpu().resolve_conj().resolve_neg()
    try:
        return t.numpy()
    except TypeError:
        import torch

        name = str(t.dtype).removeprefix("torch.")
        bits = {1: torch.uint8, 2: torch.int16}.get(t.element_size())
        if bits is None:
            raise
        return t.contiguous().view(bits).numpy().view(dtype_of(name))


def _operand(x: Any) -> Any:
    """An operand that is neither a NumPy array nor a Python number, as the kernels read it.
    A zero-dim weakly typed array of JAX (``jnp.array(1.0)``, ``weak_type``) or TensorFlow (a
    ``WeakTensor``) is the Python number it stands for (a weak operand); a PyTorch tensor is
    its NumPy array (a zero-dim tensor a zero-dim operand); anything else (a JAX or
    TensorFlow array, a list, a NumPy scalar) goes through ``np.array``. A weak array with
    dimensions is read as an array of its dtype."""
    root = type(x).__module__.partition(".")[0]
    if root in ("jax", "jaxlib", "tensorflow", "torch"):
        if _is_weak(x):
            name = x.dtype.name if root == "tensorflow" else None
            if name in ("int64", "float64"):
                # TensorFlow's weak int64 and float64 are neither a Python number (a weak
                # int32, float32) nor a tensor of their dtype: no kernel operand is either.
                raise TypeError(
                    f"a TensorFlow WeakTensor of {name} has no operand form in the reference "
                    "kernels (a Python number is a weak int32 or float32); pass a Python "
                    "number or a tf.constant")
            if len(x.shape) == 0:
                return np.asarray(x).item()
        if root == "torch":
            return _contiguous(_torch_array(x))
        if root == "tensorflow":
            x = x.numpy()  # np.array() of a bfloat16 tensor fails; .numpy() is ml_dtypes'
    return _contiguous(x)


def _policy_arg(policy: Any) -> Any:
    """What the native call takes for ``policy=``: a generated policy's name (a shipped
    :class:`typejoin.Policy` or :class:`typejoin.Table` is its name), the parsed policy of any
    other ``Policy`` or ``Table`` (built into kernel tables on its first call, its laws
    checked), or of a file path (``.toml``, or a measured table with ``kernels``), read once
    while the file is unchanged."""
    if isinstance(policy, str) and policy in _GENERATED:
        return policy
    name = getattr(policy, "_shipped", None)
    if name is not None:
        return name
    native = getattr(policy, "_native", None)
    if native is not None:
        return native
    if isinstance(policy, (str, os.PathLike)):
        path = os.fspath(policy)
        if os.path.isfile(path):
            key = (os.path.abspath(path), os.stat(path).st_mtime_ns)
            found = _FILES.get(key)
            if found is None:
                from . import load

                found = _FILES[key] = load(path)._native
            return found
        if isinstance(policy, str):
            return policy  # the native call names the generated policies
    raise TypeError(
        f"policy={policy!r}: pass a generated policy's name ({', '.join(sorted(_GENERATED))}), "
        "a typejoin.Policy or Table, or the path of a policy file")


# The generated policies' names, and the files read as policy= (by path and modification time).
_GENERATED = frozenset(_native.generated_policies())
_FILES: dict = {}


def _native_call(op: str, args: tuple, policy: Any, out: Optional[np.ndarray] = None,
                 dtype: Optional[str] = None, axis: Optional[int] = None) -> np.ndarray:
    if type(policy) is not str or policy not in _GENERATED:
        policy = _policy_arg(policy)
    try:
        return _native.call(op, args, policy, out, dtype, axis)
    except KernelError as e:
        if out is None or not str(e).startswith("out= is "):
            raise
    return _cast_into(op, args, policy, out, dtype, axis)


# PyTorch's `canCast` (c10/core/ScalarType.h): no complex to a real dtype, no float to an
# integer (or bool), no non-bool to bool; everything else casts.
_TORCH_POLICIES = ("torch", "torch-float64")


def _can_cast(policy: str, src: np.dtype, dst: np.dtype) -> bool:
    """Whether the library of ``policy`` writes a result of ``src`` into an ``out=`` of
    ``dst``: PyTorch's ``canCast`` for the torch policies, NumPy's ``same_kind`` otherwise
    (the ufuncs' default ``casting=``; JAX and TensorFlow have no ``out=``)."""
    if (policy if isinstance(policy, str) else policy.name) in _TORCH_POLICIES:
        kind = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}
        s, d = kind.get(src.kind, 2), kind.get(dst.kind, 2)
        return not ((s == 3 and d < 3) or (s == 2 and d < 2) or (s > 0 and d == 0))
    return bool(np.can_cast(src, dst, casting="same_kind"))


def _cast_into(op: str, args: tuple, policy: str, out: np.ndarray, dtype: Optional[str],
               axis: Optional[int]) -> np.ndarray:
    """``op`` computed in its own result dtype, then cast into ``out`` by the library's rule
    (typejoin's bit-exact conversion), as ``np.add(a, b, out=o)`` does for an ``o`` of another
    dtype; a cast the rule refuses raises ``TypeError``, as NumPy's ufuncs do."""
    r = _native.call(op, args, policy, None, dtype, axis)
    if r.shape != out.shape:
        raise ValueError(f"out= has shape {out.shape}, the result {r.shape}")
    if not _can_cast(policy, r.dtype, out.dtype):
        torch = (policy if isinstance(policy, str) else policy.name) in _TORCH_POLICIES
        rule = "canCast" if torch else "'same_kind'"
        raise TypeError(f"Cannot cast {op}'s output from {r.dtype} to {out.dtype} with casting "
                        f"rule {rule}")
    return _native.call("astype", (r,), policy, out, out.dtype.name, None)


def call(op: str, *args: Any, policy: Any = "numpy", out: Optional[np.ndarray] = None,
         dtype: Any = None, axis: Optional[int] = None) -> np.ndarray:
    """Runs the kernel ``op`` (a name of the op catalogue) on ``args``.

    Array operands are read in place (no copy) when they are C-contiguous, aligned and in
    native byte order, copied once otherwise; the result is a new NumPy array, or ``out``
    written in place (an ``out`` sharing memory with an operand is computed aside, then copied
    in). Do not write an operand from another thread during a call (as with NumPy's ufuncs).
    """
    to = None if dtype is None else (_numpy_name(dtype) if isinstance(dtype, str)
                                     else np.dtype(dtype).name)
    return _native_call(op, args, policy, out, to, axis)


def clip(x: Any, lo: Any = None, hi: Any = None, *, policy: Any = "numpy",
         out: Optional[np.ndarray] = None):
    """``clip(x, lo, hi)``: the result dtype is the n-ary join of all three operands. A
    ``None`` bound bounds nothing, as in ``np.clip``: ``clip(x, None, hi)`` is
    ``minimum(x, hi)`` (the join of ``x`` and ``hi`` only), ``clip(x, lo, None)``
    ``maximum(x, lo)``, and with neither ``x`` as it is (``astype`` to its own dtype)."""
    if lo is None and hi is None:
        a = x if isinstance(x, np.ndarray) else _operand(x)
        return call("astype", a, policy=policy, out=out, dtype=a.dtype)
    if lo is None:
        return _native_call("minimum", (x, hi), policy, out)
    if hi is None:
        return _native_call("maximum", (x, lo), policy, out)
    return _native_call("clip", (x, lo, hi), policy, out)


def sum(x: Any, axis: Optional[int] = None, *, dtype: Any = None,  # noqa: A001
        keepdims: bool = False, policy: Any = "numpy", out: Optional[np.ndarray] = None):
    """The sum of ``x`` (``axis=None``: every element), or along ``axis`` (negative counts
    from the end), in the policy's accumulator dtype, as ``np.sum`` takes its arguments.
    ``dtype=`` sums ``x`` converted to ``dtype`` and gives a result of that dtype (integers
    wrap into it; NumPy's buffered cast sums arrays of more than 8,192 elements chunk by
    chunk, which is not modelled); ``keepdims=True`` keeps the summed dimensions, of size 1."""
    if not isinstance(x, np.ndarray):
        x = _operand(x)
    ndim = x.ndim
    if axis is not None and -ndim <= axis < 0:
        axis += ndim
    simple = dtype is None and not keepdims
    if dtype is not None:
        x = astype(x, dtype, policy=policy)
    r = call("sum", x, policy=policy, out=out if simple else None, axis=axis)
    if simple:
        return r
    if r.dtype != x.dtype and dtype is not None:
        r = astype(r, x.dtype, policy=policy)
    if keepdims:
        r = r.reshape([1] * ndim if axis is None else
                      [1 if k == axis else d for k, d in enumerate(x.shape)])
    if out is None:
        return r
    if out.dtype != r.dtype or out.shape != r.shape:
        raise ValueError(f"out= must be an array of the result's dtype and shape: {r.dtype} "
                         f"{r.shape}, not {out.dtype} {out.shape}")
    out[...] = r
    return out


# The unary and binary ops and `where(cond, x, y)`: native functions (`add(x, y, *,
# policy="numpy", out=None)`) that run a generated policy without a Python frame (casting into
# an `out=` of another dtype the policy's rule allows) and hand any other `policy=`, or an
# `out=` the rule refuses, to `_native_call`.
for _name, _arity in _native.kernel_ops():
    if _arity in ("binary", "unary", "select"):
        globals()[_name] = _native.kernel(_name)
        __all__.append(_name)
# `astype(x, dtype, *, policy="numpy", out=None)`: native as the ops are (`dtype` as
# `np.dtype` reads it, typejoin's names besides).
astype = _native.kernel("astype")
__all__ += ["astype", "clip", "sum"]

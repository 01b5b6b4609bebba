"""A pytest helper for array libraries: gate your ``result_type`` against a declared policy.

    def test_promotion_matches_jax_policy():
        import jax, jax.numpy as jnp, typejoin
        jax.config.update("jax_enable_x64", True)   # the `jax` policy is JAX with x64
        typejoin.testing.assert_promotion_matches(jnp.result_type, typejoin.policy("jax"))

By default every dtype of the policy this environment can make is tried, and the Python
scalars of its weak types (``i*``, ``f*``, ``c*``; ``b*`` where the policy has it) beside them.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Iterable, List, Optional, Sequence, Union

from . import Policy, Table, _library_dtype_name, operand_name, policy as _shipped

__all__ = ["assert_promotion_matches", "mismatches"]


def _normalise(result: Any) -> Optional[str]:
    """The dtype name of what a library returned: a dtype, or an array's dtype (a weak-typed
    JAX array's too: a result is materialised, as ``result_type`` returns it)."""
    if result is None:
        return None
    dtype = getattr(result, "dtype", None)
    if dtype is not None and not isinstance(result, type):
        return _library_dtype_name(dtype)
    return operand_name(result)


def _operand(name: str) -> Any:
    """What a library's result-type function is called with for ``name``: a NumPy dtype (an
    ml_dtypes one where NumPy has none), a Python scalar for a weak type, a zero-dim NumPy
    array for a zero-dim category (``int8@0d``). Other categories raise ``TypeError``."""
    weak = {"b*": True, "i*": 1, "f*": 1.0, "c*": 1j}
    if name in weak:
        return weak[name]
    from .reference import dtype_of

    base, _, category = name.partition("@")
    if category == "0d":
        import numpy as np

        return np.zeros((), dtype_of(base))
    if category:
        raise TypeError(f"no default operand for the category node {name!r}; pass operand=")
    return dtype_of(name)


def mismatches(fn: Callable[..., Any], policy: Union[Policy, Table, str],
               dtypes: Optional[Sequence[str]] = None, max_operands: int = 3,
               operand: Callable[[str], Any] = _operand) -> List[tuple]:
    """Every operand tuple (pairs, then triples up to ``max_operands``, as combinations with
    repetition) where ``fn(*operands)`` differs from ``policy.result_type``: a list of
    ``(names, library, policy)``; ``None`` stands for "raises". By default the operands are
    every dtype of the policy that ``operand`` can make, its weak types as Python scalars and
    its zero-dim categories as zero-dim arrays."""
    if isinstance(policy, str):
        policy = _shipped(policy)
    if dtypes is None:
        dtypes = []
        weak = [n for n in policy.nodes if n in ("b*", "i*", "f*", "c*")]
        categories = [n for n in policy.nodes if "@" in n]
        for n in policy.dtypes + weak + categories:
            try:
                operand(n)
            except (TypeError, AttributeError, ImportError):
                continue  # a dtype this environment cannot make
            dtypes.append(n)
    found = []
    for k in range(2, max_operands + 1):
        for names in itertools.combinations_with_replacement(list(dtypes), k):
            try:
                got = _normalise(fn(*[operand(n) for n in names]))
            except Exception:  # the library raised: that is its answer
                got = None
            try:
                want = policy.result_type(*[operand(n) if "@" in n else n for n in names],
                                          _raise=False)
            except ValueError:
                want = None
            if got != want:
                found.append((names, got, want))
    return found


def assert_promotion_matches(fn: Callable[..., Any], policy: Union[Policy, Table, str],
                             dtypes: Optional[Iterable[str]] = None, max_operands: int = 3,
                             operand: Callable[[str], Any] = _operand) -> None:
    """Calls ``fn`` (``np.result_type``, ``jnp.result_type``, an adapter around
    ``torch.result_type``) on every pair and triple of ``dtypes`` (default: every dtype of
    ``policy`` this environment can make) and raises ``AssertionError`` listing each cell where
    the library and the policy differ. ``operand(name)`` makes what ``fn`` is called with
    (default: NumPy/ml_dtypes dtypes, Python scalars for ``i*``/``f*``/``c*``/``b*``)."""
    name = policy if isinstance(policy, str) else policy.name
    found = mismatches(fn, policy, None if dtypes is None else list(dtypes), max_operands,
                       operand)
    if not found:
        return
    shown = "\n".join(
        f"  {' ∨ '.join(names)}: library {got or 'raises'}, policy {want or 'raises'}"
        for names, got, want in found[:50]
    )
    more = f"\n  … and {len(found) - 50} more" if len(found) > 50 else ""
    raise AssertionError(
        f"{getattr(fn, '__name__', fn)} differs from {name} in {len(found)} cell(s):\n"
        f"{shown}{more}"
    )

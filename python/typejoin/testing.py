"""A pytest helper for array libraries: gate your ``result_type`` against a declared policy.

    def test_promotion_matches_jax_policy():
        import jax.numpy as jnp, typejoin, typejoin.testing
        typejoin.testing.assert_promotion_matches(jnp.result_type, typejoin.policy("jax"))
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
    ml_dtypes one where NumPy has none), a Python scalar for a weak type."""
    weak = {"b*": True, "i*": 1, "f*": 1.0, "c*": 1j}
    if name in weak:
        return weak[name]
    from .reference import dtype_of

    return dtype_of(name)


def mismatches(fn: Callable[..., Any], policy: Union[Policy, Table, str],
               dtypes: Optional[Sequence[str]] = None, max_operands: int = 3,
               operand: Callable[[str], Any] = _operand) -> List[tuple]:
    """Every operand tuple (pairs, then triples up to ``max_operands``, as combinations with
    repetition) where ``fn(*operands)`` differs from ``policy.result_type``: a list of
    ``(names, library, policy)``; ``None`` stands for "raises"."""
    if isinstance(policy, str):
        policy = _shipped(policy)
    if dtypes is None:
        dtypes = []
        for n in policy.dtypes:
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
                want = policy.result_type(*names, _raise=False)
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

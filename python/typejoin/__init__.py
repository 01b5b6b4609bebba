"""typejoin: dtype promotion policies as verified data.

    >>> import typejoin
    >>> jax = typejoin.policy("jax")
    >>> jax.result_type("int8", "uint8")
    'int16'
    >>> jax.check().ok
    True

Policies (``.toml``) and observed tables (``.json``, or measured live with
:meth:`Table.from_library`) share one interface: :meth:`check`, :meth:`join`,
:meth:`result_type`, :meth:`table`, :meth:`diff`, :meth:`to_dot`, :meth:`to_svg`. Policies
add :meth:`Policy.safety` and :meth:`Policy.suggest`. The reference kernels are in
:mod:`typejoin.reference`, the pytest helper in :mod:`typejoin.testing`; both load on first
use after ``import typejoin``, as NumPy's submodules do. Dtype names are NumPy's wherever
NumPy has them: ``"i8"`` is int64, ``"<f4"`` float32, as ``np.dtype`` reads them.
"""

from __future__ import annotations

import html
import importlib
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

from . import _native
from ._native import KernelError, PolicyError

__all__ = [
    "Policy", "Table", "Report", "Violation", "Diff", "PolicyError", "KernelError",
    "PromotionError", "load", "policy", "policies", "libraries", "operand_name", "synth",
]
__version__ = "0.1.0"

_SUBMODULES = ("reference", "testing", "measure")


def __getattr__(name: str) -> Any:
    """``typejoin.reference``, ``typejoin.testing`` and ``typejoin.measure`` after ``import
    typejoin`` alone: each is imported on first use (PEP 562), as NumPy's and SciPy's are."""
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_SUBMODULES))


class PromotionError(TypeError):
    """The operands have no promotion under the policy: what :meth:`Policy.result_type` and
    :meth:`Policy.join` raise. Raised for a NumPy policy it is also NumPy's
    ``DTypePromotionError``, for a JAX policy (with JAX imported) ``jax.dtypes.
    TypePromotionError``, so that code written against the library catches it."""


_PROMOTION_ERRORS: Dict[str, type] = {}


def _promotion_error(policy_name: str) -> type:
    """The :class:`PromotionError` raised for ``policy_name``: a subclass that is also its
    library's own error where that library is imported (NumPy always is)."""
    library = policy_name.partition("_")[0].partition("-")[0]
    if library == "jax" and "jax" not in sys.modules:
        return PromotionError
    cached = _PROMOTION_ERRORS.get(library)
    if cached is not None:
        return cached
    base: Optional[type] = None
    if library == "numpy":
        import numpy as np

        base = np.exceptions.DTypePromotionError
    elif library == "jax":
        base = getattr(getattr(sys.modules["jax"], "dtypes", None), "TypePromotionError", None)
    error = PromotionError
    if base is not None:
        error = type(f"PromotionError[{library}]", (PromotionError, base),
                     {"__doc__": PromotionError.__doc__, "__module__": __name__})
    _PROMOTION_ERRORS[library] = error
    return error


@dataclass(frozen=True)
class Violation:
    """One witness of a violated law: ``law`` (e.g. ``"associativity"``), the ``dtypes`` it
    involves, the two sides that differ (``left``, ``right``) and a one-line ``detail``."""

    law: str
    dtypes: Tuple[str, ...]
    left: Optional[str]
    right: Optional[str]
    detail: str


class Report:
    """The laws and lints of one policy or table. ``ok`` is true when every law holds and no
    lint is denied; ``violations`` lists the witnesses; ``str()`` is ``typejoin check``'s
    report, ``_repr_html_`` a table for notebooks; ``json`` the ``check --format json`` entry."""

    def __init__(self, doc: Dict[str, Any], text: str):
        self.json = doc
        self.text = text
        self.ok: bool = doc["ok"]
        self.name: str = doc["name"]
        self.laws: List[Dict[str, Any]] = doc["laws"]
        self.lints: List[Dict[str, Any]] = doc["lints"]
        self.violations: List[Violation] = [
            Violation(v["law"], tuple(v["dtypes"]), v["left"], v["right"], v["detail"])
            for v in doc["violations"]
        ]

    def __bool__(self) -> bool:
        """True when nothing is wrong (``ok``), as for :class:`Diff`."""
        return self.ok

    def __str__(self) -> str:
        return self.text

    @property
    def violation_count(self) -> int:
        """How many cells or tuples violate a law, over every law (``violations`` shows a few
        witnesses of each)."""
        return sum(law["count"] for law in self.laws if law["status"] == "violated")

    def __repr__(self) -> str:
        if self.ok:
            state = "ok"
        else:
            laws = sum(law["status"] == "violated" for law in self.laws)
            state = f"{laws} law(s) violated by {self.violation_count} case(s)"
        return f"<Report {self.name}: {state}>"

    def _repr_html_(self) -> str:
        mark = "✓" if self.ok else "✗"
        rows = "".join(
            f"<tr><td>{html.escape(law['law'])}</td><td>{html.escape(str(law['status']))}</td>"
            f"<td>{law['count']}</td></tr>"
            for law in self.laws
        )
        witnesses = "".join(
            f"<li><b>{html.escape(v.law)}</b>: {html.escape(v.detail)}</li>"
            for v in self.violations
        )
        return (
            f"<div><p>{mark} <b>{html.escape(self.name)}</b></p>"
            f"<table><tr><th>law</th><th>status</th><th>count</th></tr>{rows}</table>"
            + (f"<ul>{witnesses}</ul>" if witnesses else "")
            + "</div>"
        )


class Diff:
    """Where two policies or tables disagree: ``same``, ``str()`` the text of ``typejoin
    diff``, ``json`` its JSON document (``cells``: its ``entries``, one per differing cell).
    ``bool(diff)`` is true when nothing differs, as ``bool(report)`` is when nothing is
    wrong."""

    def __init__(self, same: bool, text: str, doc: Dict[str, Any]):
        self.same = same
        self.text = text
        self.json = doc
        self.cells: List[Dict[str, Any]] = doc.get("entries", [])

    def __bool__(self) -> bool:
        return self.same

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<Diff: {'same' if self.same else f'{len(self.cells)} cell(s) differ'}>"


_WEAK = {"i": "i*", "u": "i*", "f": "f*", "c": "c*"}


def _kind(name: str) -> str:
    """The kind letter of a dtype name: ``b``, ``i``, ``u``, ``f`` or ``c``."""
    if name == "bool":
        return "b"
    if name.startswith("uint"):
        return "u"
    if name.startswith("int"):
        return "i"
    return "c" if name.startswith("complex") else "f"


def _library_dtype_name(d: Any) -> str:
    """A dtype object's name as typejoin spells it, from NumPy, ml_dtypes, JAX, PyTorch
    (``torch.float32``) or TensorFlow (``tf.float32``), without importing any of them."""
    name = getattr(d, "name", None)
    if isinstance(name, str):
        return name  # NumPy, ml_dtypes, JAX (NumPy dtypes) and TensorFlow's DType
    return str(d).replace("torch.", "")  # torch.dtype has no name; str() is torch.float32


def _is_weak(x: Any) -> bool:
    """Whether a library array is weakly typed: a JAX array's ``weak_type``, a TensorFlow
    ``WeakTensor`` (``EagerWeakTensor`` subclasses it)."""
    return getattr(x, "weak_type", False) is True or any(
        c.__name__ == "WeakTensor" for c in type(x).__mro__)


# Whether operands of a type may key result_type's memo: hashable, equal only to operands of
# the same meaning, and their result a function of them: names, types, NumPy and torch
# dtypes. Not values: `True == 1 == 1.0` and `np.int8(1) == np.uint8(1)` would share a key;
# never an array (unhashable, or hashed by identity while its shape can change).
_CACHEABLE: Dict[type, bool] = {str: True, type: True, bool: False, int: False, float: False,
                                complex: False}
_MEMO_SIZE = 4096


def _memo_kind(t: type) -> int:
    """How result_type's native memo keys an operand of type ``t`` (``_native.ResultTypeMemo``):
    0 never (Python ints, whose value can decide: PyTorch reads one from 2**63 on as uint64;
    JAX and TensorFlow arrays, which may be weak; subclasses), 1 by identity (``_cacheable``:
    names, types, NumPy and PyTorch dtypes), 2 by type alone (Python bools, floats and complex
    numbers: their kind decides), 3 by its ``dtype``'s identity and whether it is zero-dim
    (NumPy and PyTorch arrays, whose answer is a function of those)."""
    if _cacheable(t):
        return 1
    if t in (bool, float, complex):
        return 2
    module, name = t.__module__.split(".")[0], t.__name__
    if (module, name) in (("numpy", "ndarray"), ("torch", "Tensor")):
        return 3
    return 0


def _cacheable(t: type) -> bool:
    known = _CACHEABLE.get(t)
    if known is None:
        module = t.__module__.split(".")[0]
        np = sys.modules.get("numpy")
        known = bool(
            (np is not None and issubclass(t, np.dtype))
            or (module == "torch" and t.__name__ == "dtype")
        )
        _CACHEABLE[t] = known
    return known


_LIBRARIES = ("numpy", "jax", "torch", "tensorflow")


def _library_of(like: Any) -> str:
    """The library ``like`` names: its name, its module, or one of its objects (an array, a
    dtype: the library its type comes from; ``jaxlib`` is JAX's)."""
    if isinstance(like, str):
        name = like
    else:
        module = like.__name__ if isinstance(like, type(sys)) else type(like).__module__
        name = module.split(".")[0]
        name = {"jaxlib": "jax", "ml_dtypes": "numpy"}.get(name, name)
    if name not in _LIBRARIES:
        raise ValueError(
            f"like={like!r}: name a library ({', '.join(_LIBRARIES)}), its module or one of "
            "its arrays"
        )
    return name


def library_dtype(name: str, like: Any) -> Any:
    """The dtype object library ``like`` (a name, a module or one of its objects) has for the
    canonical dtype ``name``: ``np.dtype`` (ml_dtypes' types included), JAX's, a
    ``torch.dtype`` or a ``tf.DType``. Raises ``TypeError`` when the library has none."""
    lib = _library_of(like)
    try:
        if lib in ("numpy", "jax"):
            import numpy as np

            if lib == "jax":
                import jax.numpy as jnp

                return jnp.dtype(name)
            try:
                return np.dtype(name)
            except TypeError:
                import ml_dtypes

                return np.dtype(getattr(ml_dtypes, name))
        if lib == "torch":
            import torch

            d = getattr(torch, name)
            if not isinstance(d, torch.dtype):
                raise AttributeError(name)
            return d
        import tensorflow as tf

        return tf.as_dtype(name)
    except (AttributeError, TypeError, ValueError) as e:
        raise TypeError(f"{lib} has no dtype `{name}`") from e


def operand_name(x: Any, ruleset: Optional["_Ruleset"] = None) -> str:
    """The typejoin operand name of ``x``, read as its library reads it: a name is kept; a
    Python ``bool``/``int``/``float``/``complex``, value or type, is the weak
    ``b*``/``i*``/``f*``/``c*`` (``bool`` where the policy has no ``b*``); a NumPy (or
    ml_dtypes) dtype, scalar type or array is its dtype; an array of another library
    (JAX, PyTorch, TensorFlow: anything with ``dtype`` and ``shape``) is its dtype, or the weak
    type of its kind when the library marks it weak (a JAX array's ``weak_type``, a
    TensorFlow ``WeakTensor``; TensorFlow's weak int64 and float64 are ``int64@weak`` and
    ``float64@weak`` where ``ruleset`` has them); a zero-dim array is ``dtype@0d`` where ``ruleset`` has that
    category; a PyTorch or TensorFlow dtype is its name. No library is imported that the
    caller did not pass (NumPy aside)."""
    if isinstance(x, str):
        if ruleset is not None and x in ruleset._node_set:
            return x
        return _numpy_name(x)
    python_bool = "bool" if ruleset is None else ruleset._python_bool
    if isinstance(x, bool) or x is bool:
        return python_bool
    if isinstance(x, int) or x is int:
        return "i*"
    if isinstance(x, float) or x is float:
        return "f*"
    if isinstance(x, complex) or x is complex:
        return "c*"
    import numpy as np

    if isinstance(x, np.generic):
        return x.dtype.name
    dtype, shape = getattr(x, "dtype", None), getattr(x, "shape", None)
    if dtype is not None and shape is not None and not isinstance(x, type):
        name = _library_dtype_name(dtype)
        if _is_weak(x) and _kind(name) != "b":
            # TensorFlow's weak int64 and float64 tensors are nodes of their own
            # (`int64@weak`); its weak int32 is a Python int's `i*`, as JAX's every weak int.
            if ruleset is not None and f"{name}@weak" in ruleset._node_set:
                return f"{name}@weak"
            return _WEAK[_kind(name)]
        if len(shape) == 0 and ruleset is not None and f"{name}@0d" in ruleset._node_set:
            return f"{name}@0d"
        return name
    if type(x).__module__.split(".")[0] in ("torch", "tensorflow"):
        return _library_dtype_name(x)  # torch.dtype, tf.DType
    try:
        return np.dtype(x).name
    except TypeError:
        pass
    return _library_dtype_name(x)


_NUMPY_NAMES: Dict[str, str] = {}


def _numpy_name(x: str) -> str:
    """A dtype string as NumPy reads it (``"i8"`` is int64, ``"<f4"`` float32, ``"float"``
    float64; ml_dtypes' names once it is imported); a string NumPy does not read (a weak type
    ``i*``, a category node, ``complex32``) is kept for the policy to resolve."""
    name = _NUMPY_NAMES.get(x)
    if name is None:
        name = x
        if "*" not in x and "@" not in x:
            import numpy as np

            try:
                name = np.dtype(x).name
            except TypeError:
                pass
        _NUMPY_NAMES[x] = name
    return name


def _is_value(x: Any) -> bool:
    """Whether ``x`` is a value (a Python or NumPy scalar, an array of any library), not a
    dtype, a type or a name."""
    if isinstance(x, (str, type)):
        return False
    if isinstance(x, (bool, int, float, complex)):
        return True
    return getattr(x, "shape", None) is not None and getattr(x, "dtype", None) is not None


class _Ruleset:
    """What policies and tables share."""

    def __init__(self, native: "_native.Loaded", path: str):
        self._native = native
        self.path = path
        self._shipped: Optional[str] = None
        self._node_set = frozenset(native.nodes)
        # result_type's answers for dtype-like operands, by the operands (`_cacheable`).
        self._memo: Dict[tuple, str] = {}
        # join's, by the operands' identity, in native code: `policy.join` is the memo's
        # vectorcall entry (`JoinMemo.entry`, an instance attribute before the class's `join`),
        # one C call on a hit.
        self._join_memo = _native.JoinMemo(self._join_slow)
        self.join = self._join_memo.entry()
        # result_type's, by the operands' identity, type or dtype (`_memo_kind`), in native
        # code: `policy.result_type` is the memo's vectorcall entry (`ResultTypeMemo.entry`:
        # a kept answer without the tuple a method's `*operands` makes).
        self._rt_memo = _native.ResultTypeMemo(self._result_type_slow, _memo_kind)
        self.result_type = self._rt_memo.entry()
        try:  # a Python bool is the weak `b*` where the policy names one (an alias, maybe)
            native.result_type(["b*"])
            self._python_bool = "b*"
        except ValueError:
            self._python_bool = "bool"

    @property
    def name(self) -> str:
        """The policy's or table's name."""
        return self._native.name

    @property
    def nodes(self) -> List[str]:
        """Every node in table order: dtypes, weak types (``i*``), category nodes
        (``int8@0d``)."""
        return list(self._native.nodes)

    @property
    def dtypes(self) -> List[str]:
        """The concrete dtypes (nodes that are neither weak types nor category nodes)."""
        return [n for n in self._native.nodes if "*" not in n and "@" not in n]

    def check(self, witnesses: int = 3) -> Report:
        """The lattice laws (exhaustive engine) and the policy's lints."""
        doc, text = self._native.check(witnesses)
        return Report(json.loads(doc), text)

    def join(self, a: Any, b: Any, *, like: Any = None) -> Any:
        """The dtype ``a`` and ``b`` promote to (as the library returns it); raises
        :class:`PromotionError` when they do not promote (:meth:`join_or_none` returns
        ``None`` instead). ``like=`` as in :meth:`result_type`."""
        # Not reached through an instance (`__init__` puts the native memo's `join` there);
        # kept for `Policy.join(p, a, b)` and for the documentation.
        return self._join_memo.join(a, b, like=like)

    def _join_slow(self, a: Any, b: Any, like: Any) -> Tuple[Any, bool]:
        """A miss of the join memo: the answer, and whether the memo may keep it (dtype-like
        operands, no ``like=``)."""
        keep = like is None and _cacheable(type(a)) and _cacheable(type(b))
        return self.result_type(a, b, like=like), keep

    def join_or_none(self, a: Any, b: Any, *, like: Any = None) -> Any:
        """As :meth:`join`, but ``None`` where the operands do not promote."""
        return self.result_type(a, b, like=like, _raise=False)

    def result_type(self, *operands: Any, like: Any = None, _raise: bool = True) -> Any:
        """The dtype the operands promote to, as the library returns it (a weak result is
        materialised: JAX's ``f*`` is ``float64`` under x64). Operands may be dtype names,
        NumPy/ml_dtypes dtypes, arrays (a 0-d array is a zero-dim operand where the policy
        has that category), or Python scalars (weak). Raises :class:`PromotionError` (a
        ``TypeError``; for NumPy and JAX policies also the library's own error) when there is
        no result (the library raises).

        The result is the dtype's name; with ``like=`` it is that library's dtype object:
        ``like="numpy"`` (or ``numpy``, or any NumPy array or dtype) gives ``np.dtype``
        (ml_dtypes' for bfloat16 and the float8s), ``"jax"`` JAX's (``jnp.dtype``),
        ``"torch"`` a ``torch.dtype``, ``"tensorflow"`` a ``tf.DType``.

        >>> import numpy as np, typejoin
        >>> typejoin.policy("numpy").result_type("int8", "uint8", like=np)
        dtype('int16')
        """
        # Not reached through an instance (`__init__` puts the native memo's `result_type`
        # there); kept for `Policy.result_type(p, ...)` and for the documentation.
        return self._rt_memo.result_type(*operands, like=like, _raise=_raise)

    def _result_type_slow(self, operands: Tuple[Any, ...], like: Any,
                          _raise: bool) -> Tuple[Any, bool]:
        """A miss of the result_type memo: the answer, and whether the memo may keep it (an
        answer without ``like=``; the memo keys only operands ``_memo_kind`` allows)."""
        memo = self._memo
        known = _CACHEABLE
        for o in operands:
            if not known.get(type(o)):
                break
        else:
            dtype = memo.get(operands)
            if dtype is not None:
                return (dtype, True) if like is None else (library_dtype(dtype, like), False)
        key = operands
        cacheable = all([_cacheable(type(o)) for o in operands])
        names, values = self._operands(operands)
        node, dtype, error = self._native.result_type(names, values)
        if cacheable and dtype is not None:
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            memo[key] = dtype
        if dtype is None and _raise:
            raise _promotion_error(self._native.name)(f"{' ∨ '.join(names)}: {error}")
        if dtype is None or like is None:
            return dtype, dtype is not None
        return library_dtype(dtype, like), False

    def result_node(self, *operands: Any) -> Optional[str]:
        """The node of the result (``f*``, ``int8@0d``), not materialised."""
        node, _, _ = self._native.result_type(*self._operands(operands))
        return node

    def _operands(self, operands: Any) -> Tuple[List[str], List[bool]]:
        """Each operand's name, and whether it was passed as a value (an array or a scalar)
        rather than a dtype: NumPy's ``np.result_type`` promotes dtype arguments first, and
        reads a Python *type* (``int``) as its dtype (int64), not as a weak scalar."""
        numpy_rule = self._native.nary_rule == "numpy"
        names, values = [], []
        for o in operands:
            if numpy_rule and isinstance(o, type) and o in (bool, int, float, complex):
                import numpy as np

                names.append(np.dtype(o).name)
            else:
                names.append(operand_name(o, self))
            values.append(_is_value(o))
        return names, values

    def table(self, materialise: bool = False) -> Dict[str, Dict[str, Optional[str]]]:
        """Every cell: ``table()[a][b]`` is the join node of ``a`` and ``b`` (``None``: no
        join); ``materialise=True`` gives dtypes as the library returns them."""
        names, rows = self._native.table(materialise)
        return {a: dict(zip(names, row)) for a, row in zip(names, rows)}

    def diff(self, other: "_Ruleset", materialise: bool = True) -> Diff:
        """Where ``self`` and ``other`` disagree (``typejoin diff``)."""
        same, text, doc = self._native.diff(other._native, materialise)
        return Diff(same, text, json.loads(doc))

    def to_dot(self) -> str:
        """The Hasse diagram as Graphviz DOT text."""
        return self._native.dot()

    def to_svg(self) -> str:
        """The Hasse diagram as SVG (needs Graphviz's ``dot`` on PATH)."""
        return _native.render(self.to_dot(), "svg").decode()

    def _repr_svg_(self) -> Optional[str]:
        try:
            return self.to_svg()
        except RuntimeError:
            return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}: {len(self.nodes)} nodes>"


    def repair(self, partial: bool = False, keep: Iterable[Tuple[Any, Any]] = (),
               lossy_cost: int = 1, timeout_ms: int = 120_000) -> Dict[str, Any]:
        """The fewest join changes that make this join table a lattice (a partial one with
        ``partial``), proved minimal (``typejoin repair --format json``): ``cost``,
        ``optimality``, ``changes`` (each ``a``, ``b``, ``from``, ``to``, ``forced``,
        ``safety``), plus ``"table"`` (the repaired :class:`Table`) and ``"policy"`` (the
        repaired :class:`Policy`; ``None`` when the table names dtypes outside the catalogue). ``keep`` pins pairs; ``lossy_cost`` weighs a change that
        loses values (docs/repair.md)."""
        pairs = [(operand_name(a, self), operand_name(b, self)) for a, b in keep]
        doc, _, table, policy = self._native.repair(partial, pairs, lossy_cost, timeout_ms)
        out = json.loads(doc)
        out["table"] = Table.from_json(table, f"{self.name}-repaired.json")
        out["policy"] = (None if policy is None
                         else _load_text(f"{self.name}-repaired.toml", policy))
        return out

class Policy(_Ruleset):
    """A promotion policy: a DAG of dtypes (``lattices/*.toml``, docs/file-formats.md)."""

    @classmethod
    def from_toml(cls, text: str, path: str = "<string>.toml") -> "Policy":
        """A policy from TOML text; errors raise :class:`PolicyError` located in ``path``."""
        loaded = _load_text(path, text)
        if not isinstance(loaded, Policy):
            raise PolicyError(f"{path}: not a policy (a table?)")
        return loaded

    def safety(self) -> Dict[str, Any]:
        """What every edge and join does to values (``typejoin safety --format json``)."""
        doc, _ = self._native.safety()
        return json.loads(doc)

    def suggest(self, name: str, format_of: Optional[str] = None, max_degree: int = 2,
                top: int = 5) -> Dict[str, Any]:
        """Where a new dtype ``name`` can go (``typejoin suggest --format json``);
        ``format_of`` declares its format when the name is not in the catalogue (e.g.
        ``"exponent_bits=4,mantissa_bits=3,bias=7"``: the fields of a ``[formats]`` table,
        docs/file-formats.md)."""
        doc, _ = self._native.suggest(name, format_of, max_degree, top)
        return json.loads(doc)


class Table(_Ruleset):
    """A library's measured promotion table (``observed/*.json``)."""

    @classmethod
    def from_json(cls, text: str, path: str = "<string>.json") -> "Table":
        """A table from observed-table JSON (docs/file-formats.md)."""
        loaded = _load_text(path, text)
        if not isinstance(loaded, Table):
            raise PolicyError(f"{path}: not an observed table")
        return loaded

    @classmethod
    def from_library(cls, name: str) -> "Table":
        """Measures the installed library ``name`` in this process: ``"numpy"`` (with
        ml_dtypes when installed), ``"jax"`` (x64), ``"torch"``, ``"torch-categories"``,
        ``"tensorflow-all"``, ``"tensorflow-safe"``, ``"array_api_strict"``, ``"tinygrad"``
        (as ``scripts/dump_table.py`` does). Raises ``ImportError`` when it is not
        installed."""
        from . import measure

        doc = measure.dump(name.replace("_", "-"))
        return cls.from_json(json.dumps(doc), f"live/{doc['name']}-{doc.get('version', '')}.json")


def _load_text(path: str, text: str) -> Union[Policy, Table]:
    native = _native.parse(path, text)
    return (Policy if native.kind == "policy" else Table)(native, path)


def load(path: Union[str, "os.PathLike[str]"]) -> Union[Policy, Table]:
    """A policy (``.toml``) or observed table (``.json``) from a file."""
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return _load_text(path, text)


_SHIPPED = {name: (path, text) for name, path, text in _native.shipped()}


def synth(requirements: Union[str, "os.PathLike[str]"], timeout_ms: int = 120_000) -> Dict[str, Any]:
    """A lattice from a requirements file (a path, or the file's text), or the smallest set of
    its requirements that conflict (``typejoin synth --format json``): ``found``, and either
    ``edges``, ``lossy``, ``relations`` and ``"policy"`` (a :class:`Policy`), or ``conflict``
    (each ``line`` and ``requirement``). docs/repair.md."""
    text, path = str(requirements), "<string>.toml"
    if "\n" not in text and os.path.exists(text):
        path = text
        with open(text, encoding="utf-8") as f:
            text = f.read()
    doc, _, policy = _native.synth(path, text, timeout_ms)
    out = json.loads(doc)
    if policy is not None:
        out["policy"] = _load_text(f"{out['name']}.toml", policy)
    return out


def policies() -> List[str]:
    """The names of the shipped lattice policies (``"jax"``, ``"jax-x32"``, ``"array-api"``,
    …): the verified ones. :func:`libraries` lists the library tables."""
    return sorted(n for n, (path, _) in _SHIPPED.items() if path.endswith(".toml"))


def libraries() -> List[str]:
    """The names of the shipped library tables (``"numpy"``, ``"tensorflow-safe"``): a
    library's measured promotion with its own n-ary rule and kernels, not a lattice
    (docs/policy-kinds.md)."""
    return sorted(n for n, (path, _) in _SHIPPED.items() if path.endswith(".json"))


def policy(name: str) -> Union[Policy, Table]:
    """A shipped policy by name (embedded in the package): a lattice :class:`Policy`, or for
    a library table the :class:`Table` of its measured promotion: ``"numpy"`` is NumPy's
    ``np.result_type`` with its own n-ary rule, ``"tensorflow-safe"`` TensorFlow's
    ``dtype_conversion_mode="safe"``."""
    if name not in _SHIPPED:
        raise KeyError(f"no shipped policy {name!r}; the policies are "
                       f"{', '.join(policies() + libraries())}")
    path, text = _SHIPPED[name]
    loaded: Union[Policy, Table] = (Table.from_json(text, path) if path.endswith(".json")
                                    else Policy.from_toml(text, path))
    loaded._shipped = name  # the generated policy the reference kernels run for it
    return loaded

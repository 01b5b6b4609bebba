"""Measuring a live library's binary promotion table in this process, as an observed table.

``dump(name)`` returns the observed-table document (docs/file-formats.md) of the installed library
``name``; :meth:`typejoin.Table.from_library` parses it, ``scripts/dump_table.py`` writes it.

LIBRARY is one of:
  numpy             np.add on 1-element arrays (NEP 50), with every ml_dtypes type when
                    ml_dtypes is installed;
  jax               jnp.add with jax_enable_x64, standard promotion, every dtype jax.numpy
                    knows; a weakly typed result is written as i*/f*/c*;
  torch             torch.result_type on 1-element tensors (PyTorch's category rules);
  array-api-strict  xp.add on 1-element arrays of array_api_strict (the standard's
                    reference implementation);
  (and torch-categories, tensorflow, tinygrad: see DUMPS).

Each table has the Python scalars `0`, `0.0` and `0j` as the weak types i*, f*, c*
(`result["i*"]["i*"]` is what the library makes of two Python ints). `null` means the call
raised; `errors["a|b"]` names the exception. Keys are in dtype order, so a re-run with the
same versions gives the same document. This module imports no part of typejoin.
"""

import contextlib
import json
import os
import platform
import sys
import warnings

# tinygrad picks its device when imported (even by `installed`): its pure-Python device needs
# no accelerator, and the dtypes it computes are the same on every device.
os.environ.setdefault("DEV", "PYTHON")

WEAK = [("i*", 0), ("f*", 0.0), ("c*", 0j)]

# Canonical typejoin names of the dtypes a library may have, in table order.
ORDER = [
    "bool",
    "uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64",
    "int1", "int2", "int4", "int8", "int16", "int32", "int64",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu",
    "bfloat16", "float16", "float32", "float64",
    "complex32", "bcomplex32", "complex64", "complex128",
]

# PyTorch's catalogue beyond ORDER, in its table order: sub-byte integers of every width, the
# packed float4, and the opaque bit and quantized types.
TORCH_ORDER = [
    "bool",
    "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7",
    "uint8", "uint16", "uint32", "uint64",
    "int1", "int2", "int3", "int4", "int5", "int6", "int7",
    "int8", "int16", "int32", "int64",
    "float4_e2m1fn_x2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "bfloat16", "float16", "float32", "float64",
    "complex32", "bcomplex32", "complex64", "complex128",
    "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
    "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
]

# The dtypes PyTorch's n-ary rule forms a lattice over (docs/categories.md); the triples are
# measured over these in both tensor categories.
TORCH_CORE = [
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64",
    "complex32", "bcomplex32", "complex64", "complex128",
]


def pairs(operands, combine):
    """`combine(a, b)` over every ordered pair of operand names: the `result` rows (null
    where it raised) and the `errors` (the exception's name by `a|b`)."""
    result, errors = {}, {}
    for a in operands:
        row = {}
        for b in operands:
            try:
                row[b] = combine(a, b)
            except Exception as e:  # the library refused the pair: that is the datum
                row[b] = None
                errors[f"{a}|{b}"] = type(e).__name__
        result[a] = row
    return result, errors


def table(library, version, mode, notes, names, combine):
    """Runs `combine(a, b)` over every ordered pair of operand names (dtypes and weak
    scalars); it returns a result name or raises."""
    operands = names + [w for w, _ in WEAK]
    result, errors = pairs(operands, combine)
    return {
        "name": library.replace(".", "_").replace("-", "_"),
        "library": library,
        "version": version,
        "versions": {"python": platform.python_version(), library: version},
        "mode": mode,
        "dtypes": operands,
        "result": result,
        "errors": errors,
        "notes": notes,
    }


def scalar(name):
    return dict(WEAK)[name]


def dump_numpy():
    import numpy as np

    dtypes, version_note = numpy_dtypes()
    version = np.__version__
    names = list(dtypes)
    by_dtype = {d: n for n, d in dtypes.items()}

    def operand(n):
        return scalar(n) if n.endswith("*") else np.zeros(1, dtype=dtypes[n])

    def combine(a, b):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = np.add(operand(a), operand(b))
        return by_dtype.get(out.dtype, out.dtype.name)

    return table(
        "numpy", version, "np.add (NEP 50)",
        [
            "result[a][b] = np.add(A, B).dtype with A = np.zeros(1, dtype=a) or the Python "
            "scalar 0/0.0/0j for i*/f*/c*; null = np.add raised.",
            f"NEP 50 weak-scalar semantics; {version_note}.",
        ],
        names, combine,
    )


def numpy_dtypes():
    """NumPy's dtypes by typejoin name: the builtin numeric ones and, when ml_dtypes is
    installed, each of its types; and a note naming the ml_dtypes version."""
    import numpy as np

    dtypes = {n: np.dtype(n) for n in ["bool", "uint8", "uint16", "uint32", "uint64",
                                       "int8", "int16", "int32", "int64",
                                       "float16", "float32", "float64",
                                       "complex64", "complex128"]}
    try:
        import ml_dtypes

        for n in ORDER:
            if n not in dtypes and hasattr(ml_dtypes, n):
                dtypes[n] = np.dtype(getattr(ml_dtypes, n))
        note = f"ml_dtypes {ml_dtypes.__version__}"
    except ImportError:
        note = "without ml_dtypes"
    return {n: dtypes[n] for n in ORDER if n in dtypes}, note


# NumPy's Python scalars as np.result_type reads them (NEP 50): a Python bool is a bool
# array, an int, float or complex a weak scalar of its abstract DType.
NUMPY_SCALARS = [("b*", False), ("i*", 0), ("f*", 0.0), ("c*", 0j)]


def numpy_class(name, dtype):
    """The DType class NumPy's n-ary promotion (`PyArray_PromoteDTypeSequence`) sees for an
    operand: a builtin legacy DType (type number below NPY_NTYPES_LEGACY, with its kind), a
    user DType registered by ml_dtypes (type number from NPY_USERDEF = 256, in registration
    order), or the abstract DType of a Python int, float or complex."""
    if name in ("i*", "f*", "c*"):
        return {"python": {"i*": "int", "f*": "float", "c*": "complex"}[name]}
    if name == "b*":
        name, dtype = "bool", __import__("numpy").dtype(bool)
    if dtype.num < 256:
        return {"builtin": dtype.num, "kind": dtype.kind}
    return {"user": dtype.num}


# The binary ufuncs of the op catalogue (src/numeric/op.rs), in its order.
NUMPY_BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder",
                "power", "maximum", "minimum", "equal", "not_equal", "less", "less_equal",
                "greater", "greater_equal", "bitwise_and", "bitwise_or", "bitwise_xor"]

# The reference kernels' conventions where NumPy's answer is not the default
# (docs/lattices/conventions.md), as measured on NumPy 2.4.6: zero_ties by
# scripts/oracle_zero_ties.py (float16 maximum/minimum keep the first of two zeros, and clip
# with two zero-dim bounds); python_int_comparison by scripts/fuzz_libraries.py numpy
# (`np.less(uint8, -1)` is False, `np.equal(int8, 300)` False, no OverflowError);
# intn_conversion by converting every float8/float16/bfloat16 pattern to ml_dtypes' int1–uint4
# (`np.float32(300).astype(uint4)` is 12, `float8_e5m2(inf)` 15); clip_bounds by
# scripts/fuzz_libraries.py numpy (`np.clip(uint8, -2**63, 2**64 - 1)` leaves every element);
# int_conversion by scripts/oracle_float_int_casts.py numpy (`np.float64(300.5).astype(uint8)` is 44,
# NaN to uint64 is 2**63); where_scalars by scripts/fuzz_libraries.py numpy (`np.where(c, 300,
# int8)` is 44, `np.where(c, 2**64 - 1, 255)` int64 -1); sum_order by
# scripts/oracle_sums.py numpy (np.sum's pairwise order, bit for bit); power_exponent by
# scripts/fuzz_libraries.py numpy --seed 200104 (`np.power(float64[33], float8_e4m3fn@0d 0.5)`
# is sqrt's: -0.0 stays -0.0) and the shape and dtype pairs in docs/kernels.md.
NUMPY_CONVENTIONS = {"zero_ties": "operand", "python_int_comparison": "exact",
                     "intn_conversion": "wrap", "clip_bounds": "drop", "int_conversion": "x86",
                     "where_scalars": "wrap", "sum_order": "numpy", "power_exponent": "numpy"}


def numpy_kernels(dtypes, result):
    """What NumPy's ufuncs compute each catalogue op in, where that is not the pair's
    np.result_type: `ufunc.resolve_dtypes` of the operands (a Python scalar as its abstract
    type), checked against the dtype a call on one-element arrays returns. ml_dtypes' types
    reach NumPy's loops by their registered casts (`np.add(uint1, float4_e2m1fn)` is a uint1
    loop, `np.add(bfloat16, 1.0)` a float32 one), true_divide computes integers in float64,
    and NumPy 2 compares int64 with uint64 exactly (a mixed loop, written as its two input
    dtypes). null: the ufunc has no loop (it raises UFuncNoLoopError; an unlisted pair without
    a result raises DTypePromotionError). And the dtype np.sum accumulates in."""
    import numpy as np

    scalars = dict(NUMPY_SCALARS)
    types = {"b*": np.dtype(bool), "i*": int, "f*": float, "c*": complex}
    by_dtype = {d: n for n, d in dtypes.items()}
    names = list(dtypes) + list(scalars)

    def value(n):
        return scalars[n] if n in scalars else np.zeros(1, dtypes[n])

    def name(d):
        return by_dtype.get(d, d.name)

    loops = {}
    for op in NUMPY_BINARY:
        f = getattr(np, op)
        cells = {}
        for a in names:
            for b in names:
                promotion = False
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        out = np.asarray(f(value(a), value(b))).dtype
                    except Exception as e:  # no loop (or no promotion): that is the datum
                        out = None
                        promotion = isinstance(e, np.exceptions.DTypePromotionError)
                    try:
                        loop = f.resolve_dtypes((types.get(a) or dtypes[a],
                                                 types.get(b) or dtypes[b], None))
                    except Exception:
                        loop = None
                if (out is None) != (loop is None) or (loop is not None and loop[2] != out):
                    raise AssertionError(f"np.{op}({a}, {b}): resolve_dtypes {loop}, call {out}")
                if loop is None:
                    computes = None
                elif loop[0] == np.dtype(object):
                    # Two Python ints compare in the object loop, as Python ints: the kernels
                    # compare them in the pair's dtype (int64), the same within its range.
                    computes = result[a].get(b)
                elif loop[0] != loop[1]:
                    computes = [name(loop[0]), name(loop[1])]
                else:
                    computes = name(loop[0])
                if computes != result[a].get(b) or (computes is None and not promotion):
                    # Unlisted, a pair without a result raises a promotion error; null, the
                    # ufunc has no loop for it (UFuncNoLoopError).
                    cells.setdefault(a, {})[b] = computes
        loops[op] = cells
    # The casts `astype` refuses (ml_dtypes registers no cast between some of its types:
    # float8_e8m0fnu to the other float8s, uint4 to int4).
    refused = {}
    for a, d in dtypes.items():
        for b, e in dtypes.items():
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    np.zeros(1, d).astype(e)
            except TypeError:
                refused.setdefault(a, {})[b] = None
    loops["astype"] = refused
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = {n: name(np.sum(np.zeros(1, d)).dtype) for n, d in dtypes.items()}
    return {"conventions": NUMPY_CONVENTIONS, "loops": loops, "sum": acc,
            "search": numpy_loop_search(dtypes, names, types, name)}


def numpy_loop_search(dtypes, names, types, name):
    """The legacy loop search NumPy's `clip` runs where an operand's DType is user-defined
    (ml_dtypes' types): `PyUFunc_SimpleUniformOperationTypeResolver` then calls
    `linear_search_type_resolver`, which takes the first loop of `ufunc.types` every operand
    casts to safely (`np.clip(bfloat16, bfloat16, bfloat16)` computes in float32). The loops are
    the table's dtypes in `ufunc.types` order, the safe casts `np.can_cast(a, loop, "safe")`,
    and those of a Python number NumPy's `can_cast_pyscalar_scalar_to` (an int to every
    integer, float and complex loop, a float to the float and complex ones, a complex to the
    complex ones). The rule is checked against `ufunc.resolve_dtypes` on every triple of
    operands: a loop of a dtype the table lacks (longdouble) is never the first that fits."""
    import itertools

    import numpy as np

    ufunc = np._core.umath.clip
    order = [name(np.dtype(t[0])) for t in ufunc.types]
    loops = [n for n in dict.fromkeys(order) if n in dtypes]

    def casts(a, loop):
        to = dtypes[loop]
        if a in dtypes or a == "b*":
            return bool(np.can_cast(dtypes.get(a, np.dtype(bool)), to, "safe"))
        return to.kind == "c" or (to.kind == "f" and a != "c*") or (to.kind in "iu" and a == "i*")

    safe = {a: [loop for loop in loops if casts(a, loop)] for a in names}
    user = {n for n, d in dtypes.items() if d.num >= 256}
    for t in itertools.product(names, repeat=3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got = ufunc.resolve_dtypes(tuple(types.get(a) or dtypes[a] for a in t) + (None,))
                got = {name(d) for d in got}
            except np._core._exceptions._UFuncNoLoopError:
                got = set()
            except np.exceptions.DTypePromotionError:
                got = None
        if not user.intersection(t):
            continue
        first = next((loop for loop in loops if all(loop in safe[a] for a in t)), None)
        if got != ({first} if first else set()):
            raise AssertionError(f"np.clip{t}: resolve_dtypes {got}, loop search {first}")
    return {"ops": {"clip": loops}, "safe": safe}


def dump_numpy_result_type():
    """np.result_type over NumPy's dtypes and Python scalars: pairs, every triple, and the
    DType classes of NumPy's own n-ary rule (docs/policy-kinds.md)."""
    import itertools

    import numpy as np

    dtypes, note = numpy_dtypes()
    names = list(dtypes)
    scalars = dict(NUMPY_SCALARS)
    operands = names + list(scalars)
    by_dtype = {d: n for n, d in dtypes.items()}

    def arg(n):
        return scalars[n] if n in scalars else dtypes[n]

    def call(ops):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = np.result_type(*[arg(o) for o in ops])
        return by_dtype.get(out, out.name)

    result, errors = pairs(operands, lambda a, b: call([a, b]))
    triples = {}
    for t in itertools.product(operands, repeat=3):
        try:
            triples["|".join(t)] = call(t)
        except Exception as e:  # the library refused the operands: that is the datum
            triples["|".join(t)] = None
            if type(e).__name__ != "DTypePromotionError":
                errors["|".join(t)] = type(e).__name__
    return {
        "name": "numpy_result_type",
        "library": "numpy",
        "version": np.__version__,
        "versions": {"python": platform.python_version(), "numpy": np.__version__},
        "mode": "np.result_type (NEP 50)",
        "dtypes": operands,
        "result": result,
        "errors": errors,
        "triples": triples,
        "nary": {
            "rule": "numpy",
            "classes": {n: numpy_class(n, dtypes.get(n)) for n in operands},
        },
        "kernels": numpy_kernels(dtypes, result),
        "notes": [
            "result[a][b] = np.result_type(A, B) and triples[a|b|c] = np.result_type(A, B, C) "
            "with A the dtype object np.dtype(a) (ml_dtypes' type for its names) or the Python "
            "scalar False/0/0.0/0j for b*/i*/f*/c*; null = it raised (errors names the "
            "exception of a pair, and of a triple when it is not DTypePromotionError).",
            "nary.classes: each operand's DType class as NumPy's n-ary rule sees it "
            "(np.dtype(a).num and .kind; a Python int, float or complex is its abstract DType, "
            "a Python bool the bool DType).",
            "kernels.loops[op][a][b]: the dtype np.<op> computes A and B in (ufunc.resolve_dtypes, "
            "checked against a call on one-element arrays) where it is not result[a][b]; null: "
            "no loop; a list: a mixed loop's two input dtypes; the object loop NumPy compares two Python "
            "ints in is written as their pair's dtype. kernels.loops.astype[a][b]: null where "
            "a.astype(b) raises TypeError (no cast registered). kernels.sum[a]: np.sum's dtype. "
            "kernels.search: the legacy loop search of the ops it lists (np.clip), which "
            "NumPy runs where an operand's DType is user-defined (nary.classes `user`): the "
            "first of the op's loops, in ufunc.types order, that every operand casts to "
            "safely (safe[a]: np.can_cast(a, loop, 'safe'); a Python int every integer, "
            "float and complex loop, a float every float and complex one, a complex every "
            "complex one), checked against ufunc.resolve_dtypes on every triple. "
            "kernels.conventions: the reference kernels' [kernels] conventions NumPy answers "
            "differently from the default (docs/lattices/conventions.md).",
            f"NEP 50 weak-scalar semantics; {note}.",
        ],
    }


@contextlib.contextmanager
def _jax_config():
    """JAX's global configuration as the measurement needs it (x64, standard promotion),
    restored afterwards whatever happens."""
    import jax

    keys = ("jax_enable_x64", "jax_numpy_dtype_promotion")
    saved = {k: getattr(jax.config, k) for k in keys}
    try:
        jax.config.update("jax_enable_x64", True)
        jax.config.update("jax_numpy_dtype_promotion", "standard")
        yield
    finally:
        for k, v in saved.items():
            jax.config.update(k, v)


def dump_jax():
    with _jax_config():
        return _dump_jax()


def _dump_jax():
    import jax

    import jax.numpy as jnp
    import numpy as np

    dtypes = {}
    for n in ORDER:
        d = getattr(jnp, n, None)
        if d is None:
            continue
        try:
            dtypes[n] = np.dtype(d)
        except TypeError:
            continue
    names = [n for n in ORDER if n in dtypes]
    by_dtype = {d: n for n, d in dtypes.items()}

    def operand(n):
        if n.endswith("*"):
            return scalar(n)
        return jax.ShapeDtypeStruct((), dtypes[n])

    def combine(a, b):
        # eval_shape decides the promotion without compiling: scalars are closed over.
        xs = [operand(a), operand(b)]
        arrays = [x for x in xs if not isinstance(x, (int, float, complex))]

        def f(*args):
            it = iter(args)
            return jnp.add(*[next(it) if not isinstance(x, (int, float, complex)) else x
                             for x in xs])

        out = jax.eval_shape(f, *arrays)
        name = by_dtype.get(np.dtype(out.dtype), str(out.dtype))
        if getattr(out, "weak_type", False):
            kind = np.dtype(out.dtype).kind
            return {"b": "bool", "i": "i*", "u": "i*", "f": "f*", "c": "c*"}.get(kind, name)
        return name

    return table(
        "jax.numpy", jax.__version__, "standard, jax_enable_x64=True",
        [
            "result[a][b] = jax.eval_shape(jnp.add, A, B) with A a scalar of dtype a or the "
            "Python scalar 0/0.0/0j for i*/f*/c*; a weakly typed result is written i*/f*/c*.",
            "null = jnp.add raised (TypePromotionError unless errors says otherwise).",
        ],
        names, combine,
    )


def dump_torch():
    import torch

    dtypes = {}
    for n in ORDER:
        d = getattr(torch, n, None)
        if isinstance(d, torch.dtype):
            dtypes[n] = d
    names = [n for n in ORDER if n in dtypes]
    by_dtype = {d: n for n, d in dtypes.items()}

    def operand(n):
        if n.endswith("*"):
            return scalar(n)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "ComplexHalf support is experimental"
            return torch.zeros(1, dtype=dtypes[n])

    def combine(a, b):
        out = torch.result_type(operand(a), operand(b))
        return by_dtype.get(out, str(out).removeprefix("torch."))

    return table(
        "torch", torch.__version__, "torch.result_type",
        [
            "result[a][b] = torch.result_type(A, B) with A = torch.zeros(1, dtype=a) or the "
            "Python scalar 0/0.0/0j for i*/f*/c*; null = it raised.",
            "Dimensioned tensors: zero-dim tensors follow PyTorch's separate category rules.",
        ],
        names, combine,
    )


def dump_torch_categories_float64():
    """dump_torch_categories after torch.set_default_dtype(torch.float64)."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        doc = dump_torch_categories()
    finally:
        torch.set_default_dtype(previous)
    doc["name"] = "torch_categories_float64"
    doc["mode"] = "torch.result_type by operand category, default dtype float64"
    doc["notes"].append("Measured after torch.set_default_dtype(torch.float64).")
    return doc


def torch_dtypes():
    """Every dtype of TORCH_ORDER the installed torch has and can make a tensor of, by
    typejoin name, in table order."""
    import torch

    dtypes = {}
    for n in TORCH_ORDER:
        d = getattr(torch, n, None)
        if isinstance(d, torch.dtype):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.empty(1, dtype=d)
            except Exception:
                continue
            dtypes[n] = d
    return dtypes


# The torch ops of the kernels' catalogue, each as PyTorch's own function.
TORCH_BINARY = {
    "add": "add", "subtract": "sub", "multiply": "mul", "true_divide": "true_divide",
    "floor_divide": "floor_divide", "remainder": "remainder", "power": "pow",
    "maximum": "maximum", "minimum": "minimum", "equal": "eq", "not_equal": "ne",
    "less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
}
COMPARISONS = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}

# The dtypes of PyTorch's catalogue beyond TORCH_CORE that the reference kernels have an array
# type of: the wide unsigned integers and the float8 formats (torch's sub-byte integers
# cannot be filled, its float4 is packed, its bits and quantized types are opaque).
TORCH_EXTENSION = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e4m3fnuz",
                   "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]
# The lattice's dtypes whose CPU kernels are few (torch 2.15 has add, sub, mul, eq, ne, where,
# neg, abs and casts for complex32, casts and eq for bcomplex32): their loops are measured
# like the extension's, though the lattice has their pairs.
TORCH_SPARSE = ["complex32", "bcomplex32"]


def torch_kernels(dtypes, result, lattice):
    """What PyTorch 2.15's CPU kernels do with the catalogue beyond its lattice (`extends`:
    the lattice policy whose rules the other cells follow): for every op and every pair of
    operands with at least one of TORCH_EXTENSION's dtypes, or whose result is one of them or
    of TORCH_SPARSE's (a two-element tensor, a zero-dim one, or a Python number as a user
    writes it, through the operator when it comes first),
    null where PyTorch raises although the pair promotes ("\"mul_cpu\" not implemented for
    'Float8_e4m3fn'", `uint16 + uint16`), the result dtype where it is not what the lattice's
    rules give (the promoted dtype; true_divide of integers the default float); `negative`,
    `absolute` and `clip` (`torch.clamp(t, t, t)`) by dtype, and `sum`'s accumulator (null:
    no kernel)."""
    import operator

    import torch

    ext = [n for n in TORCH_EXTENSION if n in dtypes]
    sparse = [n for n in TORCH_SPARSE if n in dtypes]
    measured = set(ext + sparse)
    scalars = {"b*": True, "i*": 1, "f*": 1.5, "c*": 1j}
    default = str(torch.get_default_dtype()).removeprefix("torch.")
    by_dtype = {d: n for n, d in dtypes.items()}
    integral = set(n for n, d in dtypes.items() if not d.is_floating_point and not d.is_complex)

    def value(n):
        if n in scalars:
            return scalars[n]
        base, _, cat = n.partition("@")
        # Two elements: PyTorch's mul of a float8 by a one-element tensor takes its CPU
        # scalar path, which has no float8 kernel (docs/policy-kinds.md).
        shape = () if cat == "0d" else (2,)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return torch.ones(shape, dtype=dtypes[base])
            except Exception:  # no fill kernel (bcomplex32): an empty tensor still promotes
                return torch.empty(shape, dtype=dtypes[base])

    def name(d):
        return by_dtype.get(d, str(d).removeprefix("torch."))

    def base(n):
        return n.partition("@")[0]

    def call(f, *args):
        """The result dtype's name; None where the op raises for want of a kernel; "promotion"
        where it raises because the operands do not promote."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return name(f(*args).dtype)
            except Exception as e:  # no kernel for the dtype: that is the datum
                m = str(e)
                return "promotion" if "Promotion" in m or "result type" in m else None

    operators = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
                 "true_divide": operator.truediv, "floor_divide": operator.floordiv,
                 "remainder": operator.mod, "power": operator.pow, "equal": operator.eq,
                 "not_equal": operator.ne, "less": operator.lt, "less_equal": operator.le,
                 "greater": operator.gt, "greater_equal": operator.ge,
                 "bitwise_and": operator.and_, "bitwise_or": operator.or_,
                 "bitwise_xor": operator.xor}
    names = [n for n in result if n in scalars or base(n) in TORCH_CORE or base(n) in ext]
    loops = {}
    for op, fn in TORCH_BINARY.items():
        f = getattr(torch, fn)
        cells = {}
        for a in names:
            for b in names:
                joined = result[a].get(b)
                if not {base(a), base(b), base(joined or "")} & measured:
                    continue
                if op not in operators and (a in scalars or b in scalars):
                    continue  # torch.maximum takes no Python number
                out = call(operators[op] if a in scalars else f, value(a), value(b))
                if joined is None:
                    # No promotion: the op raises, as a promotion error or for want of a
                    # kernel (`torch.minimum` of a complex and a uint16 is a TypeError).
                    if out != "promotion":
                        cells.setdefault(a, {})[b] = out
                    continue
                if out == "promotion":
                    out = None
                if op in COMPARISONS:
                    rule = "bool"
                elif op == "true_divide" and joined in integral:
                    rule = default
                else:
                    rule = joined
                if out != rule:
                    # A comparison computes in the promoted dtype: only its refusal is data.
                    cells.setdefault(a, {})[b] = None if op in COMPARISONS else out
        loops[op] = cells
    unary = {"negative": torch.neg, "absolute": torch.abs,
             "clip": lambda t: torch.clamp(t, t, t)}
    for op, f in unary.items():
        cells = {}
        for n in ext + sparse:
            out = call(f, value(n))
            out = None if out == "promotion" else out
            # The absolute value of a complex dtype is its parts' real dtype.
            own = name(dtypes[n].to_real()) if op == "absolute" else n
            if out != own:
                cells[n] = out
        loops[op] = cells
    acc = {n: call(torch.sum, value(n)) for n in ext + sparse}
    acc = {n: None if a == "promotion" else a for n, a in acc.items()}
    return {"extends": lattice, "dtypes": [x for n in ext for x in (n, f"{n}@0d")],
            "loops": loops, "sum": acc}


def dump_torch_categories():
    """Every torch dtype as a dimensioned tensor (`int8`) and a zero-dim tensor (`int8@0d`),
    with the Python scalars False, 0, 0.0, 0j (`b*`, `i*`, `f*`, `c*`): torch.result_type of
    every pair, and the n-ary result of every triple of tensor operands over TORCH_CORE."""
    import itertools

    import torch

    dtypes = torch_dtypes()
    names = list(dtypes)
    by_dtype = {d: n for n, d in dtypes.items()}
    scalars = [("b*", False), ("i*", 0), ("f*", 0.0), ("c*", 0j)]
    operands = [x for n in names for x in (n, f"{n}@0d")] + [w for w, _ in scalars]

    def operand(n, device="cpu"):
        if n.endswith("*"):
            return dict(scalars)[n]
        base, _, cat = n.partition("@")
        shape = () if cat == "0d" else (2,)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.empty(shape, dtype=dtypes[base], device=device)

    def name(d):
        return by_dtype.get(d, str(d).removeprefix("torch."))

    result, errors = pairs(operands, lambda a, b: name(torch.result_type(operand(a), operand(b))))

    # The n-ary result: addcmul's TensorIterator computes one common dtype over its three
    # tensor operands (on the meta device, so no kernel runs and no dtype is refused for
    # lack of one); it is not a fold of binary result_type. No ternary op takes a Python
    # number as a tensor operand, so triples with a scalar are PyTorch's own Python rule,
    # torch._prims_common.elementwise_dtypes (what torch.compile uses), which equals addcmul
    # on every tensor triple here and result_type on every pair with a tensor.
    from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

    core = [x for n in TORCH_CORE if n in dtypes for x in (n, f"{n}@0d")]
    core += [w for w, _ in scalars]
    triples = {}
    for a, b, c in itertools.product(core, repeat=3):
        key = f"{a}|{b}|{c}"
        args = [operand(x, "meta") for x in (a, b, c)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if any(x.endswith("*") for x in (a, b, c)):
                    out = elementwise_dtypes(
                        *args, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)[1]
                else:
                    out = torch.addcmul(*args).dtype
            triples[key] = name(out)
        except Exception as e:
            triples[key] = None
            errors[key] = type(e).__name__
    version = torch.__version__.split("+")[0]
    return {
        "name": "torch_categories",
        "library": "torch",
        "version": version,
        "versions": {"python": platform.python_version(), "torch": version},
        "mode": "torch.result_type by operand category, default dtype float32",
        "materialised": True,
        "dtypes": operands,
        "result": result,
        "triples": triples,
        "errors": errors,
        "kernels": torch_kernels(dtypes, result, "torch" if str(torch.get_default_dtype()) == "torch.float32" else "torch-float64"),
        "nary": {
            "rule": "torch",
            "floating": [n for n in names if dtypes[n].is_floating_point],
            "complex": [n for n in names if dtypes[n].is_complex],
        },
        "notes": [
            "result[a][b] = torch.result_type(A, B): A = torch.empty(2, dtype=a) for `a`, "
            "torch.empty((), dtype=a) for `a@0d`, the Python scalar False/0/0.0/0j for "
            "b*/i*/f*/c*; each cell is the dtype PyTorch returns (materialised); null = it raised.",
            "triples[a|b|c] = torch.addcmul(A, B, C).dtype on the meta device, over the "
            "dtypes the categories form a lattice on, in both tensor categories; with a Python "
            "scalar among them, torch._prims_common.elementwise_dtypes(A, B, C) (DEFAULT).",
            "nary: PyTorch's own n-ary rule, at::native::result_type by operand category "
            "(docs/policy-kinds.md); floating and complex are the dtypes whose torch.dtype "
            "is_floating_point and is_complex.",
        ],
    }


# The reference kernels' conventions for TensorFlow 2.21's CPU kernels, as lattices/
# tensorflow.toml declares them (measured: scripts/oracle_tensorflow.py, docs/kernels.md
# "TensorFlow"): the dtype conversion mode changes which pairs promote, not how a kernel
# computes.
TENSORFLOW_CONVENTIONS = {
    "python_int": "cast", "reduced_float_scalars": "via-float32",
    "integer_division_by_zero": "raise", "remainder_zero_sign": "dividend",
    "float_floor_divide": "floor-of-quotient", "clip_composition": "pairwise",
    "zero_ties": "packets", "subnormals": "flush", "complex_power": "cpow",
    "complex_divide": "eigen", "int_conversion": "x86-eigen", "complex_to_bool": "real-part",
    "complex_multiply": "eigen", "sum_order": "eigen", "narrowing": "via-float32",
}

# TensorFlow's ops as a user calls them with NumPy behaviour on (scripts/oracle_tensorflow.py):
# its own comparisons and bitwise ops want one dtype, NumPy behaviour's (`tnp`) promote.
TENSORFLOW_BINARY = {
    "add": "add", "subtract": "subtract", "multiply": "multiply", "true_divide": "math.truediv",
    "floor_divide": "math.floordiv", "remainder": "math.floormod", "power": "pow",
    "maximum": "maximum", "minimum": "minimum", "equal": "equal",
    "not_equal": "tnp.not_equal", "less": "tnp.less", "less_equal": "tnp.less_equal",
    "greater": "tnp.greater", "greater_equal": "tnp.greater_equal",
    "bitwise_and": "tnp.bitwise_and", "bitwise_or": "tnp.bitwise_or",
    "bitwise_xor": "tnp.bitwise_xor",
}


def tensorflow_kernels(tf, tnp, strong, result, weak):
    """What TensorFlow's CPU kernels compute each op in, in the dtype conversion mode already
    enabled, where that is not the pair's `result_type`: every op on every pair of a strong
    two-element tensor (ones) and a tensor or a Python scalar 1, 1.0, 1j (`i*`, `f*`, `c*`),
    the scalar on either side, and on two scalars where the op computes elsewhere than their
    join's dtype (`tnp.bitwise_and(1, 1)` is int64). null where the op raises for want of a kernel (`tf.add` of two
    bools, `tf.pow` of unsigned integers); else the dtype of the result where it is not the
    promoted one: integer true_divide computes in float32 or float64, `tnp`'s bitwise ops
    promote by NumPy's rules where the mode refuses the pair (`uint8 & int8` is int16), and a
    result that TensorFlow keeps weak (`uint8 + 1j` is a weak complex128) is named by its
    dtype. Unlisted, a pair the mode refuses raises its promotion error. A comparison computes
    in the promoted dtype: only its refusal is data. `negative`,
    `absolute`, `clip` (`tf.clip_by_value(t, t, t)`) by dtype: null where there is no kernel;
    and the dtype `tf.reduce_sum` accumulates each dtype in. `weak`: the dtype each weak
    node is (measured by the caller), which the table's `"weak"` records."""
    scalars = {"i*": 1, "f*": 1.0, "c*": 1j}

    def value(n):
        return scalars[n] if n in scalars else tf.ones((2,), dtype=getattr(tf, n))

    def fn(path):
        mod, _, attr = path.rpartition(".")
        root = {"": tf, "math": tf.math, "tnp": tnp}[mod]
        return getattr(root, attr)

    def call(f, *args):
        """The result's dtype name; "promotion" where the mode refuses the pair; None where
        TensorFlow has no kernel for it."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return f(*args).dtype.name
            except Exception as e:  # no kernel for the pair: that is the datum
                return "promotion" if "implicit dtype promotion" in str(e) else None

    names = strong + list(scalars)
    loops = {}
    for op, path in TENSORFLOW_BINARY.items():
        f = fn(path)
        cells = {}
        for a in names:
            for b in names:
                joined = result[a].get(b)
                out = call(f, value(a), value(b))
                if a in scalars and b in scalars:
                    # Two Python numbers: a cell only where the op computes elsewhere than the
                    # join's dtype (`tnp.bitwise_and(1, 1)` is int64, the join int32).
                    # A comparison's cell is only a refusal (null), as below.
                    if op in COMPARISONS:
                        if out is None:
                            cells.setdefault(a, {})[b] = None
                    elif out != "promotion" and out != weak.get(joined, joined):
                        cells.setdefault(a, {})[b] = out
                    continue
                if out == "promotion":
                    if joined is not None:
                        raise AssertionError(f"{op}({a}, {b}): promotion error, result {joined}")
                    continue  # unlisted: the pair has no result, a promotion error
                if op in COMPARISONS:
                    if out is not None and joined is None:
                        raise AssertionError(f"{op}({a}, {b}) compares without a result type")
                    if out is None:
                        cells.setdefault(a, {})[b] = None
                    elif joined in weak:
                        cells.setdefault(a, {})[b] = weak[joined]
                elif out != joined or joined is None:
                    # Another dtype (true_divide of integers; tnp's bitwise ops promote by
                    # NumPy's rules, `uint8 & int8` is int16 although the mode refuses the
                    # pair), a weak result by its dtype, or null: no kernel.
                    cells.setdefault(a, {})[b] = out
        loops[op] = cells
    unary = {"negative": tf.negative, "absolute": tf.abs,
             "clip": lambda t: tf.clip_by_value(t, t, t)}
    for op, f in unary.items():
        loops[op] = {n: None for n in strong if call(f, value(n)) is None}
    acc = {n: call(tf.reduce_sum, value(n)) for n in strong}
    return {"conventions": TENSORFLOW_CONVENTIONS, "loops": loops, "sum": acc, "weak": weak}


def dump_tensorflow(mode):
    """TensorFlow's flexible dtypes (`tnp.experimental_enable_numpy_behavior(
    dtype_conversion_mode=mode)`), by `flexible_dtypes.result_type`: every dtype as a tensor, the
    Python scalars 0, 0.0, 0j (weak int32, float32, complex128: `i*`, `f*`, `c*`), and the weak
    int64 and float64 tensors (`int64@weak`, `float64@weak`); pairs and every triple. A weak
    result is a node too: weak int32 is `i*`, weak int64 `int64@weak`."""
    import itertools

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    import tensorflow.experimental.numpy as tnp
    from tensorflow.python.framework import flexible_dtypes, weak_tensor

    with _tensorflow_config():
        tnp.experimental_enable_numpy_behavior(dtype_conversion_mode=mode)
        return _dump_tensorflow(mode, tf, tnp, flexible_dtypes, weak_tensor, itertools)


@contextlib.contextmanager
def _tensorflow_config():
    """What `tnp.experimental_enable_numpy_behavior` changes in TensorFlow's process-wide
    state (the dtype conversion mode, NumPy-style slicing, the preference for float32, the
    NumPy methods it adds to `tf.Tensor`), restored afterwards whatever happens."""
    from tensorflow.python.framework import ops, tensor
    from tensorflow.python.ops.numpy_ops import np_dtypes

    mode, slicing = ops._dtype_conversion_mode, ops._numpy_style_slicing
    prefer = np_dtypes.is_prefer_float32()
    methods = dict(vars(tensor.Tensor))
    try:
        yield
    finally:
        ops._dtype_conversion_mode, ops._numpy_style_slicing = mode, slicing
        np_dtypes.set_prefer_float32(prefer)
        for name in set(vars(tensor.Tensor)) - set(methods):
            delattr(tensor.Tensor, name)
        for name, value in methods.items():
            if vars(tensor.Tensor).get(name) is not value:
                setattr(tensor.Tensor, name, value)


def _dump_tensorflow(mode, tf, tnp, flexible_dtypes, weak_tensor, itertools):
    strong = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
              "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
    weak_names = {"int32": "i*", "float32": "f*", "complex128": "c*",
                  "int64": "int64@weak", "float64": "float64@weak"}
    scalars = {"i*": 0, "f*": 0.0, "c*": 0j}
    operands = strong + ["i*", "f*", "c*", "int64@weak", "float64@weak"]

    def operand(n):
        if n in scalars:
            return scalars[n]
        base, _, cat = n.partition("@")
        t = tf.zeros((), dtype=getattr(tf, base))
        return weak_tensor.WeakTensor.from_tensor(t) if cat == "weak" else t

    def name(result):
        dtype, weak = result
        return weak_names[dtype.name] if weak else dtype.name

    made = {n: operand(n) for n in operands}
    # The dtype each weak operand alone is (a Python int is a weak int32).
    weak_dtypes = {n: flexible_dtypes.result_type(made[n])[0].name for n in weak_names.values()}
    result, errors = pairs(
        operands, lambda a, b: name(flexible_dtypes.result_type(made[a], made[b])))
    triples = {}
    for a, b, c in itertools.product(operands, repeat=3):
        key = f"{a}|{b}|{c}"
        try:
            triples[key] = name(flexible_dtypes.result_type(made[a], made[b], made[c]))
        except Exception as e:
            triples[key] = None
            errors[key] = type(e).__name__
    return {
        "name": f"tensorflow_{mode}",
        "library": "tensorflow",
        "version": tf.__version__,
        "versions": {"python": platform.python_version(), "tensorflow": tf.__version__},
        "mode": f"flexible dtypes, dtype_conversion_mode={mode!r}",
        "dtypes": operands,
        "result": result,
        "triples": triples,
        "errors": errors,
        **({"kernels": {"policy": f"tensorflow-{mode}",
                        **tensorflow_kernels(tf, tnp, strong, result, weak_dtypes)}}
           if mode == "safe" else {}),
        "notes": [
            "result[a][b] = flexible_dtypes.result_type(A, B) after "
            f"tnp.experimental_enable_numpy_behavior(dtype_conversion_mode={mode!r}): A = "
            "tf.zeros((), a), the Python scalar 0/0.0/0j for i*/f*/c*, or a WeakTensor for "
            "int64@weak/float64@weak; null = it raised.",
            "A weak result is its node: weak int32 is i* (a Python int is a weak int32), weak "
            "float32 f*, weak complex128 c*.",
            "triples[a|b|c] = flexible_dtypes.result_type(A, B, C).",
        ],
    }


def dump_tinygrad():
    """tinygrad: `(A + B).dtype` on 1-element tensors (lazy: nothing runs), the Python scalars
    0 and 0.0 as tinygrad's weak `i*`/`f*` (a result that stays weak is written so); two scalars
    by `least_upper_dtype` of the weak dtypes."""
    import tinygrad
    from tinygrad import Tensor, dtypes
    from tinygrad.dtype import least_upper_dtype

    names = {
        "bool": dtypes.bool, "uint8": dtypes.uint8, "uint16": dtypes.uint16,
        "uint32": dtypes.uint32, "uint64": dtypes.uint64, "int8": dtypes.int8,
        "int16": dtypes.int16, "int32": dtypes.int32, "int64": dtypes.int64,
        "float8_e4m3fn": dtypes.fp8e4m3, "float8_e4m3fnuz": dtypes.fp8e4m3fnuz,
        "float8_e5m2": dtypes.fp8e5m2, "float8_e5m2fnuz": dtypes.fp8e5m2fnuz,
        "bfloat16": dtypes.bfloat16, "float16": dtypes.float16, "float32": dtypes.float32,
        "float64": dtypes.float64,
    }
    weak = {"i*": (0, dtypes.weakint), "f*": (0.0, dtypes.weakfloat)}
    by_dtype = {d: n for n, d in names.items()}
    by_dtype[dtypes.weakint] = "i*"
    by_dtype[dtypes.weakfloat] = "f*"
    order = [n for n in ORDER if n in names]

    def combine(a, b):
        if a in weak and b in weak:
            out = least_upper_dtype(weak[a][1], weak[b][1])
        else:
            x = weak[a][0] if a in weak else Tensor([0], dtype=names[a])
            y = weak[b][0] if b in weak else Tensor([0], dtype=names[b])
            out = (x + y).dtype
        return by_dtype.get(out, str(out))

    operands = order + list(weak)
    result, errors = pairs(operands, combine)
    version = getattr(tinygrad, "__version__", None)
    if version is None:
        from importlib.metadata import version as v

        version = v("tinygrad")
    return {
        "name": "tinygrad",
        "library": "tinygrad",
        "version": version,
        "versions": {"python": platform.python_version(), "tinygrad": version},
        "mode": "(A + B).dtype",
        "dtypes": operands,
        "result": result,
        "errors": errors,
        "notes": [
            "result[a][b] = (A + B).dtype with A = Tensor([0], dtype=a) or the Python scalar "
            "0/0.0 for i*/f*; a result that stays weak (dtypes.weakint/weakfloat) is i*/f*; two "
            "scalars: least_upper_dtype(weakint/weakfloat); null = it raised.",
            "fp8e4m3 is float8_e4m3fn, fp8e5m2 float8_e5m2 (and their fnuz variants).",
        ],
    }


def dump_array_api_strict():
    import array_api_strict as xp

    dtypes = {n: getattr(xp, n) for n in ORDER if hasattr(xp, n)}
    names = [n for n in ORDER if n in dtypes]

    def operand(n):
        return scalar(n) if n.endswith("*") else xp.zeros(1, dtype=dtypes[n])

    def combine(a, b):
        out = xp.result_type(operand(a), operand(b))
        for n, d in dtypes.items():
            if out == d:
                return n
        return str(out)

    return table(
        "array-api-strict", xp.__version__, "xp.result_type",
        [
            "result[a][b] = xp.result_type(A, B) with A = xp.zeros(1, dtype=a) or the Python "
            "scalar 0/0.0/0j for i*/f*/c*; null = it raised (two Python scalars are not "
            "an array operation, and a Python float only promotes with floating arrays).",
        ],
        names, combine,
    )


DUMPS = {
    "numpy": ("numpy", dump_numpy),
    "numpy-result-type": ("numpy", dump_numpy_result_type),
    "jax": ("jax", dump_jax),
    "torch": ("torch", dump_torch),
    "torch-categories": ("torch", dump_torch_categories),
    "torch-categories-float64": ("torch", dump_torch_categories_float64),
    "tinygrad": ("tinygrad", dump_tinygrad),
    "tensorflow-all": ("tensorflow", lambda: dump_tensorflow("all")),
    "tensorflow-safe": ("tensorflow", lambda: dump_tensorflow("safe")),
    "array-api-strict": ("array_api_strict", dump_array_api_strict),
}


def installed(module):
    try:
        __import__(module)
        return True
    except ImportError:
        return False


def dump(name):
    """The observed-table document of the installed library ``name`` (a key of ``DUMPS``);
    ``ImportError`` when it is not installed, ``KeyError`` for an unknown name."""
    if name not in DUMPS:
        raise KeyError(f"unknown library {name!r}; measurable: {', '.join(DUMPS)}")
    module, fn = DUMPS[name]
    if not installed(module):
        raise ImportError(f"`{module}` is not installed (pip install {name})")
    return fn()

"""The policy engine from Python: every shipped policy and observed table round trips."""

import json
import pathlib
import shutil

import numpy as np
import pytest

import typejoin

ROOT = pathlib.Path(__file__).resolve().parents[2]
OBSERVED = sorted((ROOT / "observed").glob("*.json"))


def test_policies_lists_the_shipped_ones():
    assert typejoin.policies() == [
        "array-api", "jax", "jax-strict", "jax-x32", "python", "tensorflow", "torch",
        "torch-float64",
    ]
    assert typejoin.libraries() == ["numpy", "tensorflow-safe"]
    with pytest.raises(KeyError, match="no shipped policy 'numpi'"):
        typejoin.policy("numpi")


def test_tensorflow_safe_runs_as_measured():
    # TensorFlow 2.21, dtype_conversion_mode="safe" (observed/tensorflow_safe.json): a lossy
    # pair raises, the kernels compute as TensorFlow does.
    safe = typejoin.policy("tensorflow-safe")
    assert isinstance(safe, typejoin.Table) and safe.name == "tensorflow_safe"
    assert safe.join("int8", "int16") == "int16"
    assert safe.join_or_none("uint8", "int8") is None
    with pytest.raises(typejoin.PromotionError):
        safe.join("uint8", "int8")
    assert not safe.check().ok  # not a lattice
    ref = typejoin.reference
    with pytest.raises(typejoin.KernelError) as e:
        ref.add(np.zeros(2, np.uint8), np.zeros(2, np.int8), policy="tensorflow-safe")
    assert e.value.kind == "promotion"
    # A Python int is a weak int32 cast to the join (`int8 + 300` adds 44), integers divide in
    # float32 up to 16 bits.
    out = ref.add(np.array([1, 2], np.int8), 300, policy="tensorflow-safe")
    assert out.dtype == np.int8 and out.tolist() == [45, 46]
    q = ref.true_divide(np.array([3], np.uint8), np.array([2], np.uint8), policy="tensorflow-safe")
    assert q.dtype == np.float32 and q.tolist() == [1.5]


def test_numpy_runs_its_own_nary_rule_as_np_result_type():
    # Measured on NumPy 2.4.6 + ml_dtypes 0.6.0 (observed/numpy_result_type.json); the test
    # runs without NumPy's answers, only its types as operands.
    np = pytest.importorskip("numpy")
    numpy = typejoin.policy("numpy")
    assert isinstance(numpy, typejoin.Table) and numpy.name == "numpy_result_type"
    assert numpy.result_type(np.uint8, np.int8, np.float16) == "float16"  # the fold: float32
    assert numpy.result_type(0, 0, np.int16) == "int16"
    assert numpy.result_type(np.int32, np.float32) == "float64"
    # A Python type is a dtype to NumPy (np.result_type(int, np.int8) is int64), a Python
    # value a weak scalar.
    assert numpy.result_type(int, np.int8) == "int64"
    assert numpy.result_type(1, np.int8) == "int8"
    with pytest.raises(TypeError, match="no common dtype of int64 and bfloat16"):
        numpy.result_type(False, "bfloat16", 0)
    # dtype arguments go first, arrays keep their place.
    assert numpy.result_type("uint1", 0, np.bool_) == "int64"
    ml = pytest.importorskip("ml_dtypes")
    u1, b = np.zeros(1, ml.uint1), np.zeros(1, np.bool_)
    assert numpy.result_type(u1, 0, b) == "uint8"
    assert numpy.result_type(np.dtype(ml.uint1), 0, np.dtype(np.bool_)) == "int64"
    report = numpy.check()
    assert not report.ok  # NumPy is not a lattice, and typejoin says so


@pytest.mark.parametrize("name", typejoin.policies())
def test_every_shipped_policy_round_trips(name):
    p = typejoin.policy(name)
    assert isinstance(p, typejoin.Policy)
    report = p.check()
    assert report.ok and not report.violations, str(report)
    assert "all laws hold" in str(report)
    table = p.table()
    assert list(table) == p.nodes
    for a in p.dtypes[:6]:
        for b in p.dtypes[:6]:
            assert table[a][b] == p.result_node(a, b)
    # the same file from disk gives the same table
    from_disk = typejoin.load(ROOT / "lattices" / f"{name}.toml")
    assert from_disk.table() == table
    assert from_disk.diff(p)
    assert p.to_dot().startswith("digraph")


@pytest.mark.parametrize("path", OBSERVED, ids=lambda p: p.name)
def test_every_observed_table_round_trips(path):
    t = typejoin.load(path)
    assert isinstance(t, typejoin.Table)
    report = t.check()
    # the same verdict as the CLI's JSON entry carries, and a failing table shows a witness
    assert report.ok == report.json["ok"]
    violated = [law["law"] for law in report.laws if law["status"] == "violated"]
    assert {v.law for v in report.violations} == set(violated)
    assert t.table(materialise=True).keys() == t.table().keys()


def test_joins_and_result_types_take_what_users_have():
    import ml_dtypes

    jax = typejoin.policy("jax")
    assert jax.join("int8", "uint8") == "int16"
    assert jax.join(np.int8, np.float16) == "float16"
    assert jax.join_or_none("float8_e4m3fn", "float32") is None
    assert jax.result_type(np.dtype("int8"), 1.0) == "float64"  # weak f* under x64
    assert jax.result_type(np.zeros(3, ml_dtypes.bfloat16), 2) == "bfloat16"
    # NumPy's typecodes and dtype strings mean what they mean in NumPy
    assert jax.result_type("i1", "u1", "f2") == "float16"
    assert jax.result_type("i8", "<u2") == "int64"
    assert typejoin.policy("numpy").result_type("u2", "f") == "float32"
    with pytest.raises(typejoin.PromotionError, match="no common upper bound") as e:
        jax.result_type("float8_e4m3fn", "float32")
    assert isinstance(e.value, TypeError)
    with pytest.raises(typejoin.PromotionError, match="no common upper bound"):
        jax.join("float8_e4m3fn", "float32")
    with pytest.raises(ValueError, match="did you mean `float32`"):
        jax.result_type("flaot32", "int8")
    torch = typejoin.policy("torch")
    x = np.zeros(3, np.int8)
    assert torch.result_type(x, np.array(1.0)) == "float64"  # x * tensor(1., float64)
    assert torch.result_type(x, np.array(1, np.int64)) == "int8"  # a zero-dim int64
    assert torch.result_type(x, 1.0) == "float32"
    assert torch.result_type(x, 2 ** 62) == "int8"
    assert torch.result_node(x, np.array(1, np.int64)) == "int8"


def test_operands_are_read_as_their_library_reads_them():
    # Python types are weak, as jax.numpy reads them (measured with jax 0.10.2, x64):
    # jnp.result_type(np.int8, int) is int8, (np.float16, float) float16, (np.int8, float)
    # float64, (np.uint8, complex) complex128, (np.int8, bool) int8.
    jax = typejoin.policy("jax")
    assert jax.result_type(np.int8, int) == "int8"
    assert jax.result_type(np.float16, float) == "float16"
    assert jax.result_type(np.int8, float) == "float64"
    assert jax.result_type(np.uint8, complex) == "complex128"
    assert jax.result_type(np.int8, bool) == "int8"

    # Any library's array by its `dtype` and `shape`, weak where it says so (a JAX array's
    # `weak_type`), a zero-dim one in its category: these stand-ins carry just the attributes
    # JAX's and PyTorch's arrays carry, and no library is imported to read them.
    class Array:
        def __init__(self, dtype, shape, weak_type=False):
            self.dtype, self.shape, self.weak_type = dtype, shape, weak_type

    assert jax.result_type(Array(np.dtype("float64"), (), True), np.float16) == "float16"
    assert jax.result_type(Array(np.dtype("int64"), (3,), True), np.int8) == "int8"
    assert jax.result_type(Array(np.dtype("float64"), (), False), np.float16) == "float64"

    class TorchDtype:  # torch.dtype: no `name`, str() is "torch.<name>"
        __module__ = "torch"

        def __init__(self, name):
            self.text = f"torch.{name}"

        def __str__(self):
            return self.text

    torch = typejoin.policy("torch")
    int8 = TorchDtype("int8")
    assert typejoin.operand_name(int8) == "int8"
    assert torch.result_type(Array(int8, (3,)), Array(TorchDtype("int64"), ())) == "int8"
    assert torch.result_type(Array(int8, (3,)), Array(TorchDtype("int64"), (1,))) == "int64"
    assert torch.result_type(Array(TorchDtype("float16"), (3,)), 1j) == "complex32"


def test_weak_tensors_and_library_arrays_reach_the_kernels_as_their_libraries_read_them():
    # Stand-ins carrying what typejoin reads (the libraries need not be installed): a
    # TensorFlow WeakTensor of int64 is its own node, of int32 a Python int's `i*`; a zero-dim
    # weakly typed array is the Python number it stands for in the kernels.
    class WeakTensor:
        pass

    class EagerWeakTensor(WeakTensor):
        __module__ = "tensorflow.python.framework.weak_tensor"

        def __init__(self, value, dtype):
            self.value, self.dtype, self.shape = np.array(value, dtype), np.dtype(dtype), ()

        def __array__(self, dtype=None, copy=None):
            return self.value

    class JaxArray:
        __module__ = "jaxlib._jax"

        def __init__(self, value, dtype, weak_type):
            self.value = np.array(value, dtype)
            self.dtype, self.shape, self.weak_type = self.value.dtype, self.value.shape, weak_type

        def __array__(self, dtype=None, copy=None):
            return self.value

    tf = typejoin.policy("tensorflow")
    assert typejoin.operand_name(EagerWeakTensor(1, np.int64), tf) == "int64@weak"
    assert typejoin.operand_name(EagerWeakTensor(1, np.int32), tf) == "i*"
    assert tf.result_type(EagerWeakTensor(1, np.int64), np.uint64) == "uint64"
    assert tf.result_type(EagerWeakTensor(1.0, np.float64), "int8") == "float64"
    ref = typejoin.reference
    x = np.array([1, 2], np.int8)
    # jnp.add(int8 array, jnp.array(300)) adds 300 as a weak int: overflow under NumPy 2's rule
    weak = JaxArray(3, np.int64, True)
    assert ref.add(x, weak, policy="jax").dtype == np.int8
    assert ref.add(x, JaxArray(3, np.int64, False), policy="jax").dtype == np.int64
    assert ref.add(x, JaxArray([3, 4], np.int64, True), policy="jax").dtype == np.int64
    f = ref.add(np.array([1.5], np.float16), JaxArray(0.25, np.float64, True), policy="jax")
    assert f.dtype == np.float16 and f.tolist() == [1.75]
    assert ref.add(x, EagerWeakTensor(300, np.int32), policy="tensorflow").tolist() == [45, 46]


def test_live_library_operands():
    jax_lib = pytest.importorskip("jax")
    jax_lib.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    jax = typejoin.policy("jax")
    for a, b in [(jnp.array(1.0), np.float16), (jnp.array(1), np.int8),
                 (jnp.array(1.0), jnp.array(2)), (jnp.array(1.0), jnp.array(1.0, jnp.float32)),
                 (jnp.zeros(3, jnp.bfloat16), 2.0), (np.int8, int)]:
        assert jax.result_type(a, b) == str(jnp.result_type(a, b)), (a, b)


def test_numpy_measured_live_shows_the_associativity_witness():
    t = typejoin.Table.from_library("numpy")
    assert t.table()["int8"]["uint8"] == "int16"
    report = t.check()
    assert not report.ok
    assoc = [v for v in report.violations if v.law == "associativity"]
    assert assoc, str(report)
    seen = {frozenset(v.dtypes) for v in typejoin.Table.from_library("numpy").check(
        witnesses=1000).violations if v.law == "associativity"}
    assert frozenset({"int8", "uint8", "float16"}) in seen
    html = report._repr_html_()
    assert "associativity" in html and "<table>" in html


def test_diff_names_the_cells():
    jax, strict = typejoin.policy("jax"), typejoin.policy("jax-strict")
    d = jax.diff(strict)
    assert not d and not d.same  # bool(): true when nothing differs
    # jax-strict leaves undefined what jax promotes: 233 joins, none changed
    assert d.json["counts"]["by_change"] == {"only-a": 233}
    assert len(d.cells) == 233, d.text
    assert "jax" in str(d)
    assert jax.diff(typejoin.policy("jax"))


def test_safety_and_suggest():
    jax = typejoin.policy("jax")
    s = jax.safety()
    assert s["policy"] == "jax"
    assert any(c["class"] == "precision-loss" for c in s["conversions"])
    placed = jax.suggest("float8_e4m3b11fnuz")
    assert placed["dtype"] == "float8_e4m3b11fnuz"
    assert placed["placements"]
    mine = jax.suggest("myfloat8", format_of="exponent_bits=4,mantissa_bits=3,bias=7")
    assert mine["dtype"] == "myfloat8" and mine["placements"]
    with pytest.raises(ValueError, match="format_of"):
        jax.suggest("myfloat8", format_of="float:e4m3")
    assert not hasattr(typejoin.load(OBSERVED[0]), "safety")  # a table has no formats


def test_errors_are_located_policy_errors():
    bad = (ROOT / "tests" / "data" / "bad" / "kernels-conventions.toml").read_text()
    with pytest.raises(typejoin.PolicyError) as e:
        typejoin.Policy.from_toml(bad, "mine.toml")
    err = e.value
    # the CLI's snapshot of the same file: tests/it/snapshots/*kernels-conventions*
    assert (err.path, err.line, err.column) == ("mine.toml", 10, 18)
    assert "mine.toml:10:18" in str(err)
    assert err.messages == [
        "unknown kind `integers`",
        "unknown kind `floats`",
        "unknown [kernels] key `python_ints`",
        "unknown value `nan` for `integer_division_by_zero`",
    ]
    with pytest.raises(typejoin.PolicyError) as e:
        typejoin.Table.from_json('{"name": 3}', "t.json")
    assert e.value.path == "t.json"
    assert isinstance(e.value, ValueError)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_svg_for_notebooks():
    svg = typejoin.policy("jax")._repr_svg_()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_submodules_load_after_import_typejoin_alone():
    import subprocess
    import sys

    code = ("import typejoin, numpy as np; "
            "print(typejoin.reference.add(np.array([1], np.int8), 1).dtype, "
            "typejoin.testing.mismatches.__name__, 'reference' in dir(typejoin))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["int8", "mismatches", "True"]
    with pytest.raises(AttributeError, match="has no attribute 'referance'"):
        typejoin.referance


def test_no_promotion_is_the_librarys_own_error():
    # NumPy's: code written against np.result_type catches typejoin's error
    numpy = typejoin.policy("numpy")
    with pytest.raises(np.exceptions.DTypePromotionError, match="uint2"):
        numpy.join("uint2", "int4")  # ml_dtypes' sub-byte integers do not promote
    safe = typejoin.policy("tensorflow-safe")
    with pytest.raises(typejoin.PromotionError) as e:
        safe.result_type(np.uint8, np.int8)
    assert type(e.value) is typejoin.PromotionError and isinstance(e.value, TypeError)


def test_report_counts_what_it_says():
    report = typejoin.policy("numpy").check(witnesses=1)
    violated = [law for law in report.laws if law["status"] == "violated"]
    assert report.violation_count == sum(law["count"] for law in violated)
    assert report.violation_count > len(report.violations)
    assert repr(report) == (f"<Report numpy_result_type: {len(violated)} law(s) violated by "
                            f"{report.violation_count} case(s)>")
    assert not report and typejoin.policy("jax").check()


def test_from_library_restores_jax_configuration():
    jax = pytest.importorskip("jax")
    before = (jax.config.jax_enable_x64, jax.config.jax_numpy_dtype_promotion)
    typejoin.Table.from_library("jax")
    assert (jax.config.jax_enable_x64, jax.config.jax_numpy_dtype_promotion) == before


def test_from_library_restores_tensorflow_configuration():
    tf = pytest.importorskip("tensorflow")
    from tensorflow.python.framework import ops

    before = (ops.get_dtype_conversion_mode(), hasattr(tf.Tensor, "reshape"))
    typejoin.Table.from_library("tensorflow-safe")
    assert (ops.get_dtype_conversion_mode(), hasattr(tf.Tensor, "reshape")) == before


def test_repair_gives_the_cli_s_changes_and_a_table_that_is_a_lattice():
    # TensorFlow's "safe" table: 25 pairs change (proved minimal by 25 cores), as
    # `typejoin repair observed/tensorflow_safe.json --partial` says (tests/it/repair.rs).
    table = typejoin.load(ROOT / "observed" / "tensorflow_safe.json")
    r = table.repair(partial=True)
    assert (r["cost"], r["optimality"], r["cores"]) == (25, "proved", 25)
    first = r["changes"][0]
    assert (first["a"], first["b"], first["from"], first["to"]) == (
        "uint8", "int8", [None, None], "int8")
    assert bool(r["table"].check()) and bool(r["policy"].check())
    # Keeping uint8 ∨ int8 raising costs 8 more changes (the CLI's --keep uint8,int8).
    kept = table.repair(partial=True, keep=[("uint8", "int8")])
    assert kept["table"].join_or_none("uint8", "int8") is None
    assert (kept["cost"], kept["optimality"]) == (33, "proved")
    with pytest.raises(ValueError, match="not a dtype"):
        table.repair(keep=[("int8", "int61")])


def test_synth_rederives_a_study_and_names_numpys_conflict():
    r = typejoin.synth(ROOT / "requirements" / "no-precision-loss.toml")
    assert r["found"] and (r["lossy"], r["relations"]) == (0, 66)
    study = typejoin.load(ROOT / "lattices" / "studies" / "no-precision-loss.toml")
    assert bool(r["policy"].diff(study))
    c = typejoin.synth(ROOT / "requirements" / "numpy-triple.toml")
    assert not c["found"]
    assert [x["line"] for x in c["conflict"]] == [10, 11, 12, 13]


def test_like_returns_the_librarys_dtype_objects():
    """``like=`` (issue 42, item 3): the library's own dtype object, named by the library, its
    module or one of its objects; ml_dtypes' types for NumPy; a clear error otherwise."""
    import ml_dtypes

    numpy = typejoin.policy("numpy")
    assert numpy.result_type("int8", "uint8", like=np) == np.dtype("int16")
    assert numpy.result_type(np.int8, 3.0, like="numpy") == np.dtype("float64")
    assert numpy.join("bfloat16", "bfloat16", like=np.zeros(1)) == np.dtype(ml_dtypes.bfloat16)
    assert numpy.join_or_none("float8_e4m3fn", "float8_e5m2", like=np) is None
    assert type(numpy.join("int8", "int16", like=np.dtype("int8"))) is type(np.dtype("int16"))
    with pytest.raises(ValueError, match="like=.*name a library"):
        numpy.result_type("int8", like="pandas")
    # The names alone, without like=.
    assert numpy.result_type("int8", "uint8") == "int16"


def test_kept_answers_never_mix_operands_that_compare_equal():
    """The answers kept for dtype-like operands (issue 42, item 2) are keyed so that operands
    which compare equal but promote differently never share one: Python scalars and NumPy
    scalars are computed every time (`True == 1 == 1.0`, `np.int8(1) == np.uint8(1)`)."""
    jax = typejoin.policy("jax")
    d8 = np.dtype("int8")
    for _ in range(2):  # the second round reads what the first kept
        assert jax.result_type(d8, "uint8") == "int16"
        assert jax.join(d8, "uint8") == "int16"
        assert jax.result_type(d8, True) == "int8"
        assert jax.result_type(d8, 1) == "int8"
        assert jax.result_type(d8, 1.0) == "float64"
        assert jax.result_type(np.int8(1), np.uint8(1)) == "int16"
        assert jax.result_type(np.uint8(1), np.uint8(1)) == "uint8"


def test_join_memo_keeps_dtype_operands_only_and_lets_its_policy_go():
    """`policy.join` is a native memo keyed by the operands' identity (issue 42, item 2): a
    repeated call with dtype-like operands answers from it; values, `like=` and operands with
    no join are computed every time; and a policy nobody holds is collected, memo and all."""
    import gc
    import weakref

    p = typejoin.Policy.from_toml((ROOT / "lattices" / "jax.toml").read_text(), "jax.toml")
    d8, u8 = np.dtype("int8"), np.dtype("uint8")
    assert p.join(d8, u8) == "int16" and len(p._join_memo) == 1
    assert p.join(d8, u8) == "int16" and len(p._join_memo) == 1  # the kept answer
    assert p.join(u8, d8) == "int16" and len(p._join_memo) == 2  # another pair
    assert p.join(d8, 1) == "int8" and p.join(d8, True) == "int8"
    assert p.join(np.int8(1), u8) == "int16"
    assert len(p._join_memo) == 2  # values are never kept
    assert p.join(d8, u8, like=np) == np.dtype("int16")
    assert p.join(d8, u8) == "int16"  # like= neither read nor overwrote the kept name
    assert typejoin.Policy.join(p, d8, u8) == "int16"  # the class's method, the same memo
    with pytest.raises(typejoin.PromotionError):
        p.join("float8_e4m3fn", "bfloat16")
    with pytest.raises(typejoin.PromotionError):  # an error is not kept either
        p.join("float8_e4m3fn", "bfloat16")
    gone = weakref.ref(p)
    del p
    gc.collect()
    assert gone() is None


def test_value_operands_are_kept_by_type_dtype_and_category():
    """result_type keeps its answer (natively: `_native.ResultTypeMemo`) for NumPy arrays and
    Python bools, floats and complex numbers by their type, dtype and zero-dim-ness (the answer
    is a function of those): a kept answer equals the one computed afresh, for every pair of a
    grid of dtypes and categories under the NumPy, PyTorch and JAX policies; a failed promotion
    is never kept; a Python int, whose value can decide (PyTorch reads one from 2**63 on as
    uint64), is never kept."""
    names = ["bool", "int8", "uint8", "int64", "uint64", "float16", "float32", "float64",
             "complex64"]
    operands = [np.zeros(2, n) for n in names] + [np.zeros((), n) for n in names]
    operands += [True, 2.5, 1j]
    for policy in ("numpy", "torch", "jax"):
        p = typejoin.policy(policy)
        for x in operands:
            for y in operands:
                try:
                    fresh = p._native.result_type(*p._operands((x, y)))[1]
                except ValueError:  # a dtype the policy does not name (PyTorch's uint64)
                    continue
                for _ in range(2):  # a miss, then a hit
                    assert p.result_type(x, y, _raise=False) == fresh, (policy, x, y)
        assert len(p._rt_memo) > 0
    torch = typejoin.policy("torch")
    before = len(torch._rt_memo)
    for v in (1, 2 ** 62):
        torch.result_type(np.zeros(2, "float32"), v)
    assert len(torch._rt_memo) == before


def test_tensor_operands_kept_through_their_getters_answer_as_torch_does():
    """A `torch.Tensor`'s `ndim` and `dtype` are read by calling the type's getters directly
    (`_native.ResultTypeMemo`, the look-up skipped): over a grid of dtypes, zero-dim and not,
    every pair's kept answer (a miss, then a hit) is `torch.result_type`'s."""
    torch = pytest.importorskip("torch")
    names = ["bool", "int8", "uint8", "int16", "int64", "float16", "bfloat16", "float32",
             "float64", "complex64"]
    tensors = [torch.zeros(2, dtype=getattr(torch, n)) for n in names]
    tensors += [torch.zeros((), dtype=getattr(torch, n)) for n in names]
    p = typejoin.policy("torch")
    for x in tensors:
        for y in tensors:
            want = str(torch.result_type(x, y)).removeprefix("torch.")
            for _ in range(2):
                assert p.result_type(x, y) == want, (x.dtype, x.ndim, y.dtype, y.ndim)

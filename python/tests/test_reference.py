"""The reference kernels on NumPy arrays answer every committed case as `typejoin run` does."""

import json
import multiprocessing
import os
import sys
import pathlib

import numpy as np
import pytest

import typejoin
import typejoin.reference as ref

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "kernels"
# Sets measured from the libraries whose values the policy computes (the data computed with
# NumPy for JAX's dtypes runs under the IEEE-value contract, which only the Rust tests build).
SETS = [
    ("torch_cases.jsonl", "torch_expected.jsonl", "torch"),
    ("tensorflow_cases.jsonl", "tensorflow_expected.jsonl", "tensorflow"),
    ("subnormals_jax_cases.jsonl", "subnormals_jax_expected.jsonl", "jax"),
    ("zero_ties_jax_cases.jsonl", "zero_ties_jax_expected.jsonl", "jax"),
    ("subnormals_tensorflow_cases.jsonl", "subnormals_tensorflow_expected.jsonl", "tensorflow"),
]
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def to_array(arg):
    d = ref.dtype_of(arg["dtype"])
    bits = arg["bits"]
    if d.kind == "c":
        half = UNSIGNED[d.itemsize // 2]
        raw = np.array([p for pair in bits for p in pair], dtype=half)
    else:
        raw = np.array(bits, dtype=UNSIGNED[d.itemsize])
    return raw.view(d).reshape(arg["shape"])


def number(v):
    return float(v) if isinstance(v, str) else v


def to_arg(arg):
    if "scalar" not in arg:
        return to_array(arg)
    kind, v = arg["scalar"], arg["value"]
    if kind == "bool":
        return bool(v)
    if kind == "int":
        return int(v)
    if kind == "float":
        return float(number(v))
    return complex(number(v[0]), number(v[1]))


def bits_of(a):
    if a.dtype.kind == "c":
        half = UNSIGNED[a.dtype.itemsize // 2]
        return [list(map(int, p)) for p in a.reshape(-1).view(half).reshape(-1, 2)]
    return [int(b) for b in a.reshape(-1).view(UNSIGNED[a.dtype.itemsize])]


def load(cases, expected):
    c = [json.loads(l) for l in open(DATA / cases)]
    e = [json.loads(l) for l in open(DATA / expected)]
    return list(zip(c, e))


@pytest.mark.parametrize("cases,expected,policy", SETS)
def test_every_case_is_bit_exact(cases, expected, policy):
    check_cases(load(cases, expected), policy)


# The sets of lattice policies no measured table extends: their files alone are the policy.
@pytest.mark.parametrize("cases,expected,policy", [s for s in SETS if s[2] != "torch"])
def test_a_policy_file_or_object_runs_as_its_generated_policy(cases, expected, policy, tmp_path):
    path = ROOT / "lattices" / f"{policy}.toml"
    text = path.read_text(encoding="utf-8")
    # Not shipped: a copy elsewhere, and an object parsed from text, both built at run time.
    copy = tmp_path / "mine.toml"
    copy.write_text(text, encoding="utf-8")
    pairs = load(cases, expected)
    check_cases(pairs, str(copy))
    check_cases(pairs, typejoin.Policy.from_toml(text, "mine.toml"))


def check_cases(pairs, policy):
    values = errors = 0
    for case, want in pairs:
        args = [to_arg(a) for a in case["args"]]
        try:
            got = ref.call(case["op"], *args, policy=policy, dtype=case.get("dtype"),
                           axis=case.get("axis"))
        except typejoin.KernelError as e:
            assert "kind" in want, f"case {case['id']}: {e}"
            assert e.kind == want["kind"], f"case {case['id']}: {e}"
            errors += 1
            continue
        assert "bits" in want, f"case {case['id']}: expected {want}, got {got.dtype}"
        assert (got.dtype.name, list(got.shape)) == (want["dtype"], want["shape"]), case["id"]
        assert bits_of(got) == want["bits"], f"case {case['id']}"
        values += 1
    assert values > 0 and errors == sum("kind" in w for _, w in pairs)


def test_out_and_scalars():
    x = np.array([1, 2, 127], np.int8)
    out = np.empty(3, np.int8)
    r = ref.add(x, 300, policy="torch", out=out)
    assert r is out and out.tolist() == [45, 46, -85]
    # An out= of another dtype is written through the library's cast (issue 42, item 6).
    wide = np.empty(3, np.int16)
    assert ref.add(x, 1, policy="torch", out=wide) is wide and wide.tolist() == [2, 3, -128]
    with pytest.raises(ValueError, match="out= has shape"):
        ref.add(x, 1, policy="torch", out=np.empty(4, np.int16))
    # JAX converts a Python int that fits int64 to the computation dtype (300 wraps to 44).
    assert ref.add(x, 300, policy="jax").tolist() == [45, 46, -85]
    with pytest.raises(typejoin.KernelError) as e:
        ref.add(x, 2**63, policy="jax")
    assert e.value.kind == "overflow"
    r = ref.multiply(np.array([0.5], np.float16), 65520.0, policy="torch")
    assert r.dtype == np.float16 and r.tolist() == [32768.0]
    assert ref.multiply(np.array([0.5], np.float16), 65520.0, policy="jax").tolist() == [
        float("inf")]
    r = ref.add(np.ones((2, 3), np.float32), np.arange(3, dtype=np.int8))
    assert r.shape == (2, 3) and r.dtype == np.float32 and r.flags.writeable
    # strided views, ndarray subclasses and lists are copied to contiguous arrays first
    assert ref.add(np.arange(10.0)[::2], 1.0).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0]
    assert ref.add(np.ma.masked_array([1.0, 2.0]), 1.0).tolist() == [2.0, 3.0]
    assert ref.add([1, 2, 3], 1).tolist() == [2, 3, 4]
    assert ref.add(np.arange(6, dtype=np.int16).reshape(2, 3).T, 1).tolist() == [
        [1, 4], [2, 5], [3, 6]]


def test_bfloat16_and_float8_follow_ml_dtypes():
    import ml_dtypes

    rng = np.random.default_rng(0)
    for name in ["bfloat16", "float8_e4m3fn", "float8_e5m2"]:
        d = np.dtype(getattr(ml_dtypes, name))
        a = rng.standard_normal(1000).astype(d)
        b = rng.standard_normal(1000).astype(d)
        got = ref.add(a, b)
        want = (a.astype(np.float32) + b.astype(np.float32)).astype(d)
        assert got.dtype == d
        assert np.array_equal(got.view(np.uint8 if d.itemsize == 1 else np.uint16),
                              want.view(np.uint8 if d.itemsize == 1 else np.uint16))
    x = np.array([1.0, 2.5, -3.0], np.float64)
    got = ref.astype(x, ml_dtypes.bfloat16)
    assert got.dtype.name == "bfloat16" and got.tolist() == [1.0, 2.5, -3.0]
    assert ref.sum(np.arange(6, dtype=np.int8).reshape(2, 3), axis=0).tolist() == [3, 5, 7]
    assert ref.clip(np.array([1, 5, 9], np.int8), 2, 6).tolist() == [2, 5, 6]
    assert ref.where(np.array([True, False]), np.array([1, 2], np.int8), 7).tolist() == [1, 7]


def test_operands_are_read_in_place_and_results_written_in_place():
    import ml_dtypes

    rng = np.random.default_rng(3)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    # Large enough that the kernel runs without the GIL (the allocation takes it back).
    for n in [0, 5, 1 << 15, 100_003]:
        a = rng.standard_normal(n).astype(bf16)
        b = rng.standard_normal(n).astype(bf16)
        a0, b0 = a.copy(), b.copy()
        want = (a.astype(np.float32) + b.astype(np.float32)).astype(bf16).view(np.uint16)
        got = ref.add(a, b)
        assert got.dtype == bf16 and got.shape == (n,) and got.flags.owndata
        assert np.array_equal(got.view(np.uint16), want)
        out = np.full(n, 7, np.uint16).view(bf16)
        assert ref.add(a, b, out=out) is out
        assert np.array_equal(out.view(np.uint16), want)
        # the operands were only read
        assert np.array_equal(a.view(np.uint16), a0.view(np.uint16))
        assert np.array_equal(b.view(np.uint16), b0.view(np.uint16))
        # out= that is an operand (in place) or overlaps one: computed aside, then copied
        assert ref.add(a, b, out=a) is a
        assert np.array_equal(a.view(np.uint16), want)
    x = np.arange(0, 100, 10, dtype=np.int32)
    ref.add(x[:-1], 1, out=x[1:])  # out overlaps the operand shifted by one element
    # (written in place element by element it would read its own results: 0, 1, 2, 3, …)
    assert x.tolist() == [0, 1, 11, 21, 31, 41, 51, 61, 71, 81]


def test_other_byte_orders_and_unaligned_operands_are_copied_first():
    big = np.array([1.5, -2.0, 3.25], dtype=">f4")
    assert ref.add(big, 1.0).dtype == np.float32
    assert ref.add(big, 1.0).tolist() == [2.5, -1.0, 4.25]
    raw = np.zeros(4 * 3 + 1, np.uint8)
    unaligned = raw[1:].view(np.float32)  # 1 byte off a float32 boundary
    unaligned[:] = [1.0, 2.0, 3.0]
    assert not unaligned.flags.aligned
    assert ref.multiply(unaligned, 2.0).tolist() == [2.0, 4.0, 6.0]
    assert ref.add(np.float32(1.5), 1.0).shape == ()  # a NumPy scalar is a zero-dim array
    with pytest.raises(ValueError, match="out= must be"):
        ref.add(np.ones(4, np.float32), 1.0, out=np.empty(8, np.float32)[::2])
    with pytest.raises(ValueError, match="out= must be"):
        ref.add(np.ones(3, np.float32), 1.0, out=np.empty(3, ">f4"))
    with pytest.raises(ValueError, match="no typejoin dtype"):
        ref.add(np.array(["a"]), 1)


def test_the_default_policy_is_numpy_as_measured():
    # NumPy 2.4.6: int32 + float32 is float64 (the jax policy: float32); bfloat16 + a Python
    # float computes in float32 (ml_dtypes' loop); int64 < uint64 compares exactly; an int8
    # array against 300 compares by value.
    r = ref.add(np.array([1], np.int32), np.array([1.5], np.float32))
    assert r.dtype == np.float64 and r.tolist() == [2.5]
    assert ref.add(np.array([1], np.int32), np.array([1.5], np.float32), policy="jax").dtype == np.float32
    import ml_dtypes

    r = ref.add(np.array([1.0], ml_dtypes.bfloat16), 1.1)
    assert r.dtype == np.float32 and r.tolist() == [np.float32(2.1)]
    big = np.array([2 ** 63 - 1], np.int64)
    assert ref.less(big, np.array([2 ** 63], np.uint64)).tolist() == [True]
    assert ref.equal(big, np.array([2 ** 63 - 1], np.uint64)).tolist() == [True]
    assert ref.less(np.array([1], np.uint8), -1).tolist() == [False]
    assert ref.equal(np.array([44], np.int8), 300).tolist() == [False]


def test_numpy_scalars_are_strong_operands_as_in_numpy():
    """`np.float64` and `np.complex128` subclass Python's float and complex, but NumPy reads
    them as strong scalars (NEP 50): they promote as their dtype, not as a Python number. Only
    an exact Python bool, int, float or complex is weak."""
    f32, f16 = np.ones(2, np.float32), np.ones(2, np.float16)
    for x, y in [(f32, np.float64(1.5)), (f16, np.complex128(1j)), (f32, np.int64(3)),
                 (np.ones(2, np.int8), np.uint8(200)), (f32, 1.5), (f16, 1j),
                 (np.ones(2, np.int8), True)]:
        r, want = ref.add(x, y), np.add(x, y)
        assert r.dtype == want.dtype and r.tolist() == want.tolist(), (x.dtype, type(y))


def test_kernels_take_numpys_arguments():
    x = np.array([1, 5, 9], np.int8)
    # a None bound bounds nothing, as np.clip: the other bound alone promotes
    assert ref.clip(x, None, 3).tolist() == [1, 3, 3] and ref.clip(x, None, 3).dtype == np.int8
    assert ref.clip(x, 2, None).tolist() == [2, 5, 9]
    assert ref.clip(x, None, 3.5).dtype == np.float64  # np.clip(int8, None, 3.5)
    assert ref.clip(x).tolist() == [1, 5, 9] and ref.clip(x).dtype == np.int8
    m = np.arange(6, dtype=np.int8).reshape(2, 3)
    assert ref.sum(m, axis=-1).tolist() == [3, 12]
    kept = ref.sum(m, axis=1, keepdims=True)
    assert kept.shape == (2, 1) and kept.dtype == np.int64
    assert ref.sum(m, keepdims=True).shape == (1, 1)
    # dtype=: the sum of the elements converted, in that dtype (int8 wraps: 100 * 3 is 44)
    big = np.full(3, 100, np.int16)
    assert ref.sum(big, dtype=np.int8).dtype == np.int8
    assert int(ref.sum(big, dtype=np.int8)) == int(np.sum(big, dtype=np.int8)) == 44
    f = np.array([0.1, 0.2, 0.3], np.float32)
    assert ref.sum(f, dtype="float64").tobytes() == np.sum(f, dtype=np.float64).tobytes()
    out = np.zeros((2, 1), np.int64)
    assert ref.sum(m, axis=1, keepdims=True, out=out) is out and out.tolist() == [[3], [12]]


def test_policy_objects_run_their_generated_kernels():
    x = np.array([1, 2], np.int8)
    assert ref.add(x, 300, policy=typejoin.policy("torch")).tolist() == [45, 46]
    numpy = typejoin.policy("numpy")
    assert ref.sum(np.array([0.1] * 10, np.float32), policy=numpy).tobytes() == \
        np.sum(np.array([0.1] * 10, np.float32)).tobytes()


MINE = """
name = "mine"
dtypes = ["bool", "int8", "uint8", "int16", "bfloat16", "float32"]

[promotes]
bool = ["int8", "uint8"]
int8 = ["int16"]
uint8 = ["int16"]
int16 = ["bfloat16"]
bfloat16 = ["float32"]
"""


def test_a_policy_of_ones_own_runs_in_the_kernels(tmp_path):
    import ml_dtypes

    mine = typejoin.Policy.from_toml(MINE, "mine.toml")
    i8, u8 = np.array([100, -3], np.int8), np.array([200, 7], np.uint8)
    r = ref.add(i8, u8, policy=mine)
    assert r.dtype == np.int16 and r.tolist() == [300, 4]
    # int16 + bfloat16 is bfloat16 here (NumPy: float32): 300 + 0.5 rounds to 300.
    b = ref.add(np.array([300, -7], np.int16), np.array([0.5, 0.25], ml_dtypes.bfloat16),
                policy=mine)
    assert b.dtype == ml_dtypes.bfloat16 and b.astype(np.float32).tolist() == [300.0, -6.75]
    path = tmp_path / "mine.toml"
    path.write_text(MINE, encoding="utf-8")
    assert ref.add(i8, u8, policy=path).tolist() == [300, 4]
    assert ref.add(i8, u8, policy=str(path)).dtype == np.int16
    with pytest.raises(typejoin.KernelError, match="the mine policy has no dtype float64"):
        ref.add(i8, np.array([1.0]), policy=mine)
    # A policy whose laws fail never runs: it is not a lattice.
    # (int8 and uint8 have two least upper bounds, int16 and bfloat16)
    broken = MINE.replace('int8 = ["int16"]\nuint8 = ["int16"]\nint16 = ["bfloat16"]',
                          'int8 = ["int16", "bfloat16"]\nuint8 = ["int16", "bfloat16"]\n'
                          'int16 = ["float32"]')
    assert broken != MINE
    with pytest.raises(typejoin.PolicyError, match="laws do not hold"):
        ref.add(i8, u8, policy=typejoin.Policy.from_toml(broken, "broken.toml"))
    with pytest.raises(TypeError, match="a typejoin.Policy or Table, or the path"):
        ref.add(i8, u8, policy=3)


def test_numpy_sums_add_in_numpys_order():
    rng = np.random.default_rng(7)
    for dtype in (np.float16, np.float32, np.float64, np.complex64):
        for shape, axis in [((1000,), None), ((3, 130), 1), ((129, 2), 0), ((300, 1), 0)]:
            x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 3, shape)).astype(dtype)
            assert ref.sum(x, axis).tobytes() == np.sum(x, axis).tobytes(), (dtype, shape, axis)
    # Lines long enough to be summed on two threads (from 2^17 elements), and integer sums
    # (wrapping in the accumulator: int64 for int8, uint64 for uint64).
    for dtype in (np.float32, np.float64):
        x = (rng.standard_normal(300_001) * 10.0 ** rng.integers(-3, 3, 300_001)).astype(dtype)
        assert ref.sum(x).tobytes() == np.sum(x).tobytes(), dtype
    for dtype in (np.int8, np.uint8, np.int32, np.uint64, np.int64, np.bool_):
        x = rng.integers(0, 256, (4, 1001), dtype=np.uint64) * np.uint64(2**56 + 12345)
        x = x.astype(dtype)
        for axis in (None, 0, 1):
            got, want = ref.sum(x, axis), np.sum(x, axis)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (dtype, axis)


@pytest.mark.parametrize("n", [0, 1, 1000, 100_000])
def test_unary_ops_are_numpys_in_every_lane(n):
    """negative and absolute as NumPy computes them, through the native lane (a C-contiguous
    ndarray, with or without an out= of the result's dtype), an out= of another dtype (cast by
    same_kind), a 0-d array and a strided view (the general path)."""
    rng = np.random.default_rng(n)
    for dtype in ("int8", "uint8", "int16", "uint32", "int64", "float32", "float64"):
        info = np.iinfo(dtype) if dtype[0] in "iu" else None
        x = (rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype) if info else
             (rng.standard_normal(n) * 1e3).astype(dtype))
        if n:
            x[0] = info.min if info else -0.0
        for op in ("negative", "absolute"):
            want, ours = getattr(np, op), getattr(ref, op)
            assert ours(x).tobytes() == want(x).tobytes(), (op, dtype)
            out = np.empty_like(x)
            assert ours(x, out=out) is out and out.tobytes() == want(x).tobytes(), (op, dtype)
            wide = np.empty(n, np.float64 if info is None else np.int64 if dtype != "uint32"
                            else np.uint64)
            assert ours(x, out=wide).tobytes() == want(x, out=np.empty_like(wide)).tobytes()
            assert ours(x[::2]).tobytes() == want(x[::2]).tobytes(), (op, dtype)
            if n:
                zero_dim = np.array(x[-1])
                got = ours(zero_dim)
                assert got.shape == () and got.dtype == x.dtype
                assert got.tobytes() == want(zero_dim).tobytes()


@pytest.mark.parametrize("dtype", ["bool", "int4", "uint2"])
def test_a_racing_write_of_an_invalid_pattern_never_panics(dtype):
    """Another thread writes 0xff (a pattern no bool, int4 or uint2 has) into an operand while
    the kernel runs without the GIL: the kernel reads the copy it checked, so it answers (the
    values are whatever it copied) or refuses a copy that caught the invalid pattern, never
    raises a PanicException (a BaseException, which `except ValueError` would not catch;
    issue 43, item 4)."""
    import threading

    import ml_dtypes

    np_dtype = np.dtype(bool) if dtype == "bool" else np.dtype(getattr(ml_dtypes, dtype))
    a = np.zeros(1 << 20, dtype=np_dtype)
    raw = a.view(np.uint8)
    stop = threading.Event()

    def scribble():
        while not stop.is_set():
            raw[::97] = 0xFF
            raw[::97] = 0

    t = threading.Thread(target=scribble)
    t.start()
    try:
        for _ in range(20):
            try:
                r = ref.add(a, a, policy="numpy")
            except ValueError as e:
                assert "does not fit" in str(e), e
            else:
                assert r.shape == a.shape
    finally:
        stop.set()
        t.join()


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is Linux's")
def test_a_kernel_past_the_address_space_raises_memory_error():
    """`reference.sum` over 2**31 bools in a 4 GiB address space (issue 43, item 4): it used
    to abort the interpreter on a 16 GiB allocation; now the step that cannot be allocated
    raises MemoryError, as NumPy does, and the process goes on."""
    import subprocess

    code = (
        "import resource, numpy as np, typejoin.reference as ref\n"
        "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
        "a = np.zeros(1 << 31, dtype=bool)\n"
        "try:\n"
        "    ref.sum(a, policy='numpy')\n"
        "except MemoryError as e:\n"
        "    print('MemoryError', e)\n"
        "print('alive')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("MemoryError "), r.stdout
    assert lines[-1] == "alive"


def test_out_of_another_dtype_casts_by_the_librarys_rule():
    """``out=`` of another dtype (issue 42, item 6): the result computed in its own dtype,
    then cast into ``out`` as NumPy's ufuncs cast (``same_kind``; measured: np.add(int8 [127],
    int8 [1], out=float64) is -128.0) or PyTorch's ``canCast`` allows; a cast the rule refuses
    raises TypeError, as NumPy does."""
    a, b = np.array([127], np.int8), np.array([1], np.int8)
    o = np.empty(1, np.float64)
    assert ref.add(a, b, out=o) is o and o.tolist() == [-128.0]
    expected = np.empty(1, np.float64)
    np.add(a, b, out=expected)
    assert o.tobytes() == expected.tobytes()
    f32 = np.empty(1, np.float32)
    ref.multiply(np.array([1e20]), np.array([1e20]), out=f32)
    assert f32.tolist() == [float("inf")]
    with pytest.raises(TypeError, match="Cannot cast add's output from float64 to int64"):
        ref.add(np.array([1.5]), 1, out=np.empty(1, np.int64))
    with np.errstate(all="ignore"), pytest.raises(TypeError):
        np.add(np.array([1.5]), 1, out=np.empty(1, np.int64))
    # PyTorch's canCast: an int result into bool is refused, into float allowed.
    with pytest.raises(TypeError, match="canCast"):
        ref.add(a, b, policy="torch", out=np.empty(1, bool))
    o = np.empty(1, np.float32)
    assert ref.add(a, b, policy="torch", out=o).tolist() == [-128.0]
    # The unary ops too.
    o = np.empty(2, np.float64)
    assert ref.negative(np.array([1, -2], np.int8), out=o).tolist() == [-1.0, 2.0]


@pytest.mark.parametrize("n", [1, 1000, 100_000])
def test_out_of_another_dtype_is_written_as_numpy_writes_it(n):
    """The native path of an ``out=`` of another dtype (computed in the result's dtype, cast
    into ``out``; the fast lane's operands and a scalar) against NumPy's ufuncs, byte for byte,
    on random operands; a refused cast raises as NumPy does."""
    rng = np.random.default_rng(n)

    def operand(d):
        d = np.dtype(d)
        if d.kind == "f":
            return (rng.standard_normal(n) * 1e3).astype(d)
        info = np.iinfo(d)
        return rng.integers(info.min, info.max, n, endpoint=True, dtype=d)

    cases = [("add", "int8", "int8", "int16"), ("add", "float32", "float32", "float64"),
             ("multiply", "int16", "int16", "float32"), ("less", "int32", "int32", "int32"),
             ("subtract", "float64", "float64", "float32"), ("maximum", "uint8", "int8", "int64"),
             ("add", "int32", "float32", "float32"), ("equal", "float32", "float32", "uint8"),
             ("add", "int64", "int64", "int8"), ("true_divide", "int16", "int16", "float16"),
             ("add", "float16", "float16", "float32"), ("multiply", "float16", "float16", "float64")]
    for op, l, r, o in cases:
        a, b = operand(l), operand(r)
        want, got = np.empty(n, o), np.empty(n, o)
        with np.errstate(all="ignore"):
            getattr(np, op)(a, b, out=want)
        assert getattr(ref, op)(a, b, out=got) is got
        assert got.tobytes() == want.tobytes(), (op, l, r, o)
        with np.errstate(all="ignore"):
            getattr(np, op)(a, 3, out=want)
        getattr(ref, op)(a, 3, out=got)
        assert got.tobytes() == want.tobytes(), (op, l, "scalar", o)
    with pytest.raises(TypeError, match="Cannot cast"):
        ref.add(operand("float32"), operand("float32"), out=np.empty(n, np.int32))


def test_astype_reads_dtype_as_numpy_does():
    """``astype`` is native (a ``builtin_function_or_method``, as the ops are) and reads its
    ``dtype`` as ``np.dtype`` does (``"i8"`` is int64, ``"u2"`` uint16, ``"e"`` float16,
    ``">f4"`` a native float32), typejoin's names besides (``"int4"``); its keywords and errors
    are a Python function's."""
    import ml_dtypes

    x = np.array([-3.7, 0.5, 2.5, 300.0])
    assert type(ref.astype).__name__ == "builtin_function_or_method"
    for d, want in [("i8", np.int64), ("u2", np.uint16), ("f4", np.float32), ("<f4", np.float32),
                    (">f4", np.float32), ("e", np.float16), ("?", np.bool_), ("float", np.float64),
                    (int, np.int64), (np.int16, np.int16), (np.dtype(">i4"), np.int32),
                    (ml_dtypes.bfloat16, ml_dtypes.bfloat16), ("bfloat16", ml_dtypes.bfloat16),
                    ("int4", ml_dtypes.int4)]:
        got = ref.astype(x, d)
        assert got.dtype == np.dtype(want), d
        if want is not ml_dtypes.int4:
            with np.errstate(all="ignore"):
                assert got.tobytes() == x.astype(want).tobytes(), d
    assert ref.astype(x=x, dtype="i1").tolist() == [-3, 0, 2, 44]
    assert ref.astype(x, dtype="i1", policy="torch").dtype == np.int8
    assert ref.astype(x, "int8", policy=typejoin.policy("numpy")).tolist() == [-3, 0, 2, 44]
    o = np.empty(4, np.int16)
    assert ref.astype(x, "i1", out=o) is o and o.tolist() == [-3, 0, 2, 44]
    with pytest.raises(TypeError, match="Cannot cast"):
        ref.astype(x, "i1", out=np.empty(4, bool))
    with pytest.raises(TypeError, match="required"):
        ref.astype(x)
    with pytest.raises(TypeError, match="2 positional"):
        ref.astype(x, "i1", "numpy")
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtyp'"):
        ref.astype(x, dtyp="i1")
    with pytest.raises(TypeError, match="multiple values for argument 'dtype'"):
        ref.astype(x, "i1", dtype="i2")
    with pytest.raises(ValueError, match="unknown dtype"):
        ref.astype(x, "nope")


@pytest.mark.parametrize("n", [256, 100_000])
def test_astype_from_bool_reads_every_byte_as_numpy_does(n):
    """A bool array's bytes are read in place by ``astype`` to an integer or float32/float64:
    a byte other than 0 and 1 (``np.frombuffer(..., bool)``) is true, as NumPy reads it, where
    the other ops refuse such a pattern (``view``'s check); to other dtypes the check stays."""
    raw = np.frombuffer(bytes(range(256)) * (n // 256 + 1), np.uint8)[:n]
    b = raw.view(np.bool_)
    for t in ["int8", "uint8", "int16", "uint32", "int64", "float32", "float64"]:
        want = b.astype(t)
        assert ref.astype(b, t).tobytes() == want.tobytes(), t
        o = np.empty(n, t)
        assert ref.astype(b, t, out=o) is o and o.tobytes() == want.tobytes(), t
    same = raw.copy().view(np.bool_)
    assert ref.astype(same, "int8", out=same.view(np.int8)).tobytes() == b.astype("i1").tobytes()
    with pytest.raises(ValueError, match="does not fit bool"):
        ref.astype(b, "float16")
    valid = (raw % 2).view(np.bool_)
    assert ref.astype(valid, "float16").tobytes() == valid.astype(np.float16).tobytes()


@pytest.mark.parametrize("n", [1000, 100_000])
@pytest.mark.parametrize("src", ["float32", "float64"])
def test_astype_float_to_int_is_numpys_cast(src, n):
    """``astype`` from float32 or float64 to every NumPy integer (one pass into the result,
    float32 into 32 bits without float64) gives NumPy's patterns, in-range values and the C
    casts' answers past the range, NaN and ±inf alike, at a size under the vector threshold
    and one over it. Past uint32's range NumPy's own answer depends on where an element lies
    (a vector loop splits at 2^31), so uint32 gets in-range values only."""
    rng = np.random.default_rng(n)
    edges = [0.0, -0.0, 0.5, -0.5, 0.99, -1.0, 127.5, 128.0, -128.5, -129.0, 255.9, 256.0,
             32767.5, 32768.0, -32769.0, 65535.5, 65536.0, 2.0**31 - 128, 2.0**31, -2.0**31,
             -2.0**31 - 256, 2.0**32, 2.0**53, 2.0**63, -2.0**63, 2.0**64, 1e30, -1e30,
             np.inf, -np.inf, np.nan]
    scale = rng.choice([1.0, 1e3, 1e6, 1e12, 1e20], n)
    x = np.concatenate([edges, rng.standard_normal(n) * scale])[:n].astype(src)
    with np.errstate(invalid="ignore"):
        for t in ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]:
            v = x[(x >= 0) & (x < 2.0**32)] if t == "uint32" else x
            want = v.astype(t)
            assert ref.astype(v, t).tobytes() == want.tobytes(), (src, t)
            o = np.empty(v.size, t)
            assert ref.astype(v, t, out=o) is o and o.tobytes() == want.tobytes(), (src, t)


@pytest.mark.parametrize("cases,expected,policy", SETS)
def test_the_op_functions_answer_every_case_as_call_does(cases, expected, policy):
    """``ref.add`` and the other unary and binary ops are native functions (no Python frame,
    the binary plans kept per dtype pair): every committed case of theirs, run twice (the
    second time through the kept plan) and under a ``Policy`` object (the Python fallback),
    gives ``call``'s answer bit for bit, or its error."""
    arity = dict(typejoin._native.kernel_ops())
    obj = typejoin.policy(policy)
    ran = 0
    for case, want in load(cases, expected):
        if arity.get(case["op"]) not in ("unary", "binary") or case.get("dtype"):
            continue
        f = getattr(ref, case["op"])
        args = [to_arg(a) for a in case["args"]]
        for how in (policy, policy, obj):
            try:
                got = f(*args, policy=how)
            except typejoin.KernelError as e:
                assert e.kind == want.get("kind"), f"case {case['id']}: {e}"
                continue
            assert (got.dtype.name, list(got.shape)) == (want["dtype"], want["shape"]), case["id"]
            assert bits_of(got) == want["bits"], f"case {case['id']}"
        ran += 1
    assert ran > 100


def test_two_arrays_of_one_shape_answer_as_call_does():
    """``ref.add(x, y)`` (and ``out=``) on two C-contiguous NumPy arrays of one shape under the
    default policy reads them straight from their structs (the binding's fast lane): for every
    binary op, random dtype pairs of NumPy's own types (bool and int4 left to the general path
    by the lane itself), random bit patterns and shapes of one to three dimensions, the answer
    is ``call``'s bit for bit, or the same error; so is one written into ``out=``."""
    rng = np.random.default_rng(20261205)
    arity = dict(typejoin._native.kernel_ops())
    binary = sorted(op for op, a in arity.items() if a == "binary")
    names = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
             "float16", "float32", "float64", "complex64", "complex128", "bfloat16", "int4"]
    ran = 0
    for _ in range(400):
        op = binary[rng.integers(len(binary))]
        shape = [(7,), (1,), (2, 3), (3, 1, 2), (40,)][rng.integers(5)]
        x, y = (random_array(rng, names[rng.integers(len(names))], shape) for _ in range(2))
        f = getattr(ref, op)
        try:
            want = ref.call(op, x, y)
        except typejoin.KernelError as e:
            with pytest.raises(typejoin.KernelError) as got:
                f(x, y)
            assert got.value.kind == e.kind, (op, x.dtype, y.dtype)
            continue
        got = f(x, y)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (op, x.dtype, y.dtype)
        assert got.tobytes() == want.tobytes(), (op, x.dtype, y.dtype)
        out = np.empty_like(want)
        assert f(x, y, out=out) is out
        assert out.tobytes() == want.tobytes(), (op, x.dtype, y.dtype)
        ran += 1
    assert ran > 200


def random_array(rng, name, shape):
    """An array of ``name`` holding random valid bit patterns."""
    d = ref.dtype_of(name)
    n = int(np.prod(shape))
    if name == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if name == "int4":
        return np.array(rng.integers(-8, 8, n)).astype(d).reshape(shape)
    raw = rng.integers(0, 256, n * d.itemsize, dtype=np.uint8)
    return raw.view(d).reshape(shape).copy()


def test_the_op_functions_take_their_arguments_as_python_functions_do():
    x, y = np.array([1.5, -2.0], np.float32), np.array([0.5, 4.0], np.float32)
    assert ref.add.__name__ == "add"
    assert str(__import__("inspect").signature(ref.add)) == "(x, y, *, policy='numpy', out=None)"
    assert ref.negative.__text_signature__ == "(x, *, policy='numpy', out=None)"
    assert ref.add(x, y=y).tolist() == [2.0, 2.0]
    assert ref.add(x=x, y=y, policy="jax", out=None).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match=r"add\(\) takes 2 positional argument\(s\) but 3"):
        ref.add(x, y, y)
    with pytest.raises(TypeError, match="missing required argument: 'y'"):
        ref.add(x)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        ref.add(x, x=y)
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        ref.add(x, y, where=True)
    with pytest.raises(typejoin.PolicyError):
        ref.add(x, y, policy="no-such-policy")
    # One function per op, whoever asks.
    assert typejoin._native.kernel("add") is ref.add
    with pytest.raises(ValueError, match="only unary and binary ops, astype and where"):
        typejoin._native.kernel("sum")
    # `where` is such a function too, of three operands (never the two-array lane).
    c = np.array([True, False])
    assert typejoin._native.kernel("where") is ref.where
    assert ref.where.__text_signature__ == "(cond, x, y, *, policy='numpy', out=None)"
    assert ref.where(c, x, y=y).tolist() == [1.5, 4.0]
    assert ref.where(cond=c, x=1, y=y, policy="jax").tolist() == [1.0, 4.0]
    o = np.empty(2, np.float32)
    with pytest.raises(TypeError, match="missing required argument: 'y'"):
        ref.where(c, x, out=o)
    with pytest.raises(TypeError, match=r"where\(\) takes 3 positional argument\(s\) but 4"):
        ref.where(c, x, y, y)
    assert ref.where(c, x, y, out=o) is o and o.tolist() == [1.5, 4.0]
    # A kept plan is the dtype pair's, whatever the values: int8 overflows, then wraps again.
    a = np.array([100], np.int8)
    assert ref.add(a, a).tolist() == [-56] and ref.add(a, a + 1).tolist() == [-55]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_runs_the_kernels_its_parent_split_across_threads():
    # 100,000 float32 elements (1.2 MB) run on this thread and the helper thread; a child
    # forked afterwards has no helper, and must neither hang nor lose a piece.
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(100_000, np.float32), rng.standard_normal(100_000, np.float32)
    np.testing.assert_array_equal(ref.maximum(a, b), np.maximum(a, b))
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_maximum_in_child, (a, b)).get(timeout=60)
    np.testing.assert_array_equal(got, np.maximum(a, b))


def _maximum_in_child(a, b):
    return [ref.maximum(a, b) for _ in range(50)][-1]


def _handler_name(a):
    from numpy._core.multiarray import get_handler_name  # NumPy 2; numpy.core before
    return get_handler_name(a)


def test_new_results_of_l2_sizes_are_placed_arrays_numpy_owns():
    """A binary pass's new result of 1 KiB up to 4 MiB comes from typejoin's NumPy memory
    handler, starting at the page offset of the input the other lies ahead of (``placed``): an
    array that owns its data, as NumPy's own results are, which NumPy resizes and frees
    through that handler; the one-array lane's (``negative``, ``astype``) start on a line
    start. Other sizes, and the general path (a call on a dtype the fast lane has not met yet),
    take NumPy's handler."""
    page = 4096
    buf = np.zeros(3 * page * 12 + page, np.uint8)
    base = -buf.ctypes.data % page

    def at(offset, n):
        v = buf[base + offset:][:4 * n].view(np.float32)
        v[:] = np.arange(n, dtype=np.float32) * 0.5
        return v

    n = 10_000  # 40,000 bytes
    a, b = at(1040, n), at(page * 12 + 1040 + 400, n)  # b 400 bytes ahead of a in the page
    ref.add(a, b)  # the fast lane reads a dtype the general path has met
    for x, y, behind in [(a, b, a), (b, a, a)]:
        r = ref.add(x, y)
        np.testing.assert_array_equal(r, np.add(x, y))
        assert _handler_name(r) == "typejoin"
        assert r.flags.owndata and r.base is None
        assert r.flags.c_contiguous and r.flags.aligned and r.flags.writeable
        assert r.ctypes.data % page == behind.ctypes.data % page
    # b 3,000 bytes ahead of a is a 1,096 bytes behind b: the result starts where b does.
    c = at(page * 24 + 1040 + 3000, n)
    assert ref.multiply(a, c).ctypes.data % page == c.ctypes.data % page
    # A freed block serves the next result of its size (the thread's kept blocks).
    first = ref.add(a, b).ctypes.data
    assert ref.add(a, b).ctypes.data == first
    # resize (the handler's realloc) keeps the data; NumPy frees the array through it.
    r = ref.add(a, b)
    want = np.add(a, b)
    r.resize(2 * n, refcheck=False)
    np.testing.assert_array_equal(r[:n], want)
    assert r[n:].tolist() == [0.0] * n
    r.resize(n // 2, refcheck=False)
    np.testing.assert_array_equal(r, want[:n // 2])
    del r
    # Too small or too large to be placed, and the ops that are not one pass: NumPy's handler.
    for x, y in [(a[:200], b[:200]), (np.ones(1_100_000, np.float32),) * 2,
                 (a.astype(np.int8), b)]:
        assert _handler_name(ref.add(x, y)) == "default_allocator"
    # The one-array lane's results start on a line start: at the line of the operand's page
    # offset where the element sizes agree, else on a page start.
    ref.negative(a)
    r = ref.negative(a)
    np.testing.assert_array_equal(r, np.negative(a))
    assert _handler_name(r) == "typejoin" and r.ctypes.data % page == 1040 // 64 * 64
    r = ref.astype(a, "float64")
    np.testing.assert_array_equal(r, a.astype(np.float64))
    assert _handler_name(r) == "typejoin" and r.ctypes.data % page == 0

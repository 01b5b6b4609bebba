#!/usr/bin/env python3
"""A differential fuzzer: seeded random cases, drawn as a user's program draws them, run in
process against a live library and through `typejoin run`, the differences grouped by class
with the smallest reproducer of each. Usage, from the repository root, in an environment that
has the library (build the binary first: cargo build --release):

    scripts/fuzz_libraries.py torch|tensorflow|jax|numpy [--seed S] [--cases N] [--bin PATH]
                              [--record STEM] [--catalogue] [--safe] [--focus D1,D2]

Cases: every binary op of the runner, `clip`, `where` (a bool array condition), `sum` (whole,
or along a random axis) and `astype` (to each of the library's dtypes), every dtype pairing of the library's kernel
dtypes, operands dimensioned (shapes of 1 to 40 elements, broadcasting), zero-dim or Python
numbers (edge values: ±0, ±inf, NaN, subnormals, integer limits, Python ints past 64 bits);
the op called as a user calls it (scripts/oracle_torch.py and oracle_tensorflow.py: `torch.add(a,
b)`, a Python number first through the operator; `tf.add`, `tnp.less`, `tf.clip_by_value`
under NumPy behaviour; `jnp.add(a, b)`, `jnp.clip(x, min=lo, max=hi)` with x64 on the CPU,
scripts/fuzz_adapter_jax.py; `np.add(a, b)`, `np.clip(x, lo, hi)` with ml_dtypes' types,
scripts/fuzz_adapter_numpy.py). A case differs when the result dtype, a value or the raising
differs; a value that is a NaN on both sides (of another sign or payload) is the class
`NaN payload`.

Each class is (op, what differs, operand signature, result dtype). For PyTorch a differing
value of a binary op, and for NumPy, PyTorch and TensorFlow a differing `astype` value, is
classified by place: the differing element is run again alone (a one-element array: the
library's scalar loop) and at the head of a 64-element block (its vector loop); the class is
`place-dependent` when those two answers differ, as with ±0 ties where a vector loop keeps the
other operand, or a float past uint32's range that a vector loop converts by a split at 2^31.

For NumPy a differing value is also classified by CPU: the same seed's cases are answered again
in a child process with NumPy's AVX-512 dispatch targets disabled (`NPY_DISABLE_CPU_FEATURES`,
e.g. `X86_V4 AVX512_ICL AVX512_SPR` in NumPy 2.4); the class is `cpu-dependent` when the
library's answer there is typejoin's, as with `power`, which NumPy computes by Intel's SVML on
AVX-512 machines and by libm's `pow` elsewhere.

`--record STEM` writes the cases and the library's answers to tests/data/kernels/
STEM_cases.jsonl and STEM_expected.jsonl (the runner's line format), for a test to replay
without the library.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
warnings.simplefilter("ignore")

parser = argparse.ArgumentParser()
parser.add_argument("library", choices=["torch", "tensorflow", "jax", "numpy"])
parser.add_argument("--seed", type=int, default=None)
parser.add_argument("--cases", type=int, default=2000)
parser.add_argument("--bin", default="target/release/typejoin")
parser.add_argument("--record", default=None)
parser.add_argument("--show", type=int, default=40, help="classes printed")
parser.add_argument("--dump", default=None,
                    help="write every differing case, whole, with both answers (JSON lines)")
parser.add_argument("--catalogue", action="store_true",
                    help="torch: draw its catalogue beyond the lattice too (uint16-64, float8)")
parser.add_argument("--focus", default=None,
                    help="comma-separated dtypes: each case's first operand is one of them")
parser.add_argument("--answers", default=None,
                    help="only write the library's answers (JSON lines) to this file and exit "
                         "(the CPU classification's child process)")
parser.add_argument("--safe", action="store_true",
                    help="tensorflow: dtype_conversion_mode=\"safe\", run as --policy tensorflow-safe")
args = parser.parse_args()
if args.safe and args.library != "tensorflow":
    parser.error("--safe is TensorFlow's dtype_conversion_mode")
seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)

import oracle_common  # noqa: E402
from oracle_common import write_cases  # noqa: E402

if args.library == "torch":
    import oracle_torch as lib  # noqa: E402 (after the path; needs torch)

    torch = lib.torch
    torch.set_num_threads(1)
    if args.catalogue:
        lib.use_catalogue()
    Tensor, name_of, clip_fn = torch.Tensor, lib.name_of, torch.clamp
    dims = lambda t: t.dim()  # noqa: E731
    version = torch.__version__
elif args.library == "numpy":
    import fuzz_adapter_numpy as lib  # noqa: E402 (needs numpy and ml_dtypes)

    Tensor, clip_fn, name_of, version = lib.Array, lib.clip, lib.name_of, lib.version
    dims = lambda t: t.ndim  # noqa: E731
elif args.library == "jax":
    import fuzz_adapter_jax as lib  # noqa: E402 (needs jax)

    Tensor, clip_fn, name_of, version = lib.Array, lib.clip, lib.name_of, lib.version
    dims = lambda t: t.ndim  # noqa: E731
else:
    import oracle_tensorflow as lib  # noqa: E402 (needs tensorflow)

    tf = lib.tf
    Tensor, clip_fn = tf.Tensor, tf.clip_by_value
    name_of = lambda d: d.name  # noqa: E731
    dims = lambda t: t.shape.rank  # noqa: E731
    version = tf.__version__
# `where`, `sum` and `astype` as a user calls each (a zero-dim result of `np.sum` as an array).
if args.library == "torch":
    where_fn, astype_fn = torch.where, lambda x, d: x.to(lib.T[d])
    sum_fn = lambda x, axis=None: torch.sum(x) if axis is None else torch.sum(x, dim=axis)  # noqa: E731
elif args.library == "tensorflow":
    where_fn, astype_fn = lib.tnp.where, lambda x, d: tf.cast(x, lib.T[d])
    sum_fn = lambda x, axis=None: tf.reduce_sum(x, axis=axis)  # noqa: E731
else:
    xp = lib.jnp if args.library == "jax" else __import__("numpy")
    where_fn, astype_fn = xp.where, lambda x, d: x.astype(lib.dt(d))
    sum_fn = lambda x, axis=None: xp.asarray(xp.sum(x, axis=axis))  # noqa: E731
rng = random.Random(seed)
FOCUS = args.focus.split(",") if args.focus else []
if any(n not in lib.ALL for n in FOCUS):
    parser.error(f"--focus names dtypes of {', '.join(lib.ALL)}")
lib.rng.seed(seed)

# Besides the edge values, the numbers users write most as exponents and factors (`x ** 2`,
# `x ** -0.5`), which some libraries compute by kernels of their own.
SCALARS = {kind: list(vals) + {"int": [2, -2], "float": [2.0, -0.5]}.get(kind, [])
           for kind, vals in lib.SCALARS.items()}

SHAPES = [(1,), (3,), (5,), (8,), (12,), (16,), (20,), (33,), (40,), (2, 3), (3, 5), (2, 20)]
PAIRS = [((4, 1), (1, 5)), ((3, 5), (5,)), ((5,), (3, 5)), ((2, 20), (20,)), ((40, 2), (40, 1))]


def operand(name, shape):
    """A tensor of `name`, or a Python number of its kind when `shape` is None."""
    if shape is None:
        kind = ("bool" if name == "bool" else "int" if name in lib.INTS
                else "complex" if name in lib.COMPLEX else "float")
        return rng.choice(SCALARS.get(kind, [True, False]))
    n = 1
    for d in shape:
        n *= d
    return lib.tensor(name, lib.pick(name, n), shape)


def draw():
    """One random case: (op, operands, call, the case's other keys)."""
    op = rng.choice(list(lib.BINARY) + ["clip", "where", "sum", "astype"])
    if op in ("sum", "astype"):
        name = rng.choice(FOCUS or lib.ALL)
        x = operand(name, rng.choice(SHAPES))
        if op == "astype":
            to = rng.choice(lib.ALL)
            return op, [x], lambda: astype_fn(x, to), {"dtype": to}
        rank = dims(x)
        axis = rng.choice([None, None] + list(range(rank)))
        extra = {} if axis is None else {"axis": axis}
        return op, [x], lambda: sum_fn(x, axis), extra
    names = [rng.choice(lib.ALL) for _ in range(3 if op in ("clip", "where") else 2)]
    if op == "where":
        names[0] = "bool"  # the condition
    if FOCUS:
        names[0] = rng.choice(FOCUS)
        if op != "clip":  # clip's focused operand is the clipped one
            rng.shuffle(names)
    form = rng.random()
    if form < 0.5:
        shape = rng.choice(SHAPES)
        shapes = [shape] * len(names)
    elif form < 0.65:
        a, b = rng.choice(PAIRS)
        shapes = [a, b, b][:len(names)]
    elif form < 0.8:
        shapes = [rng.choice(SHAPES)] + [()] * (len(names) - 1)
    else:
        shapes = [rng.choice(SHAPES)] + [None] * (len(names) - 1)
        if rng.random() < 0.3 and op not in ("clip", "where"):
            shapes.reverse()  # a Python number first
    if op == "where" and shapes[0] is None:
        shapes[0] = shapes[1] if shapes[1] is not None else rng.choice(SHAPES)  # a bool array
    xs = [operand(n, s) for n, s in zip(names, shapes)]
    if op == "clip":
        return op, xs, lambda: clip_fn(*xs), {}
    if op == "where":
        return op, xs, lambda: where_fn(*xs), {}
    if args.library == "numpy":
        fn = lib.BINARY[op]
        return op, xs, lambda: lib.call(fn, *xs), {}
    if args.library in ("tensorflow", "jax"):
        fn = lib.BINARY[op]
        return op, xs, lambda: fn(*xs), {}
    if op in ("maximum", "minimum") and None in shapes:
        return None  # torch.maximum takes tensors only: a user has no such call
    fn, operator = lib.BINARY[op]
    if not isinstance(xs[0], Tensor):
        return op, xs, lambda: operator(*xs), {}
    return op, xs, lambda: fn(*xs), {}


def answer(call):
    return oracle_common.answer(lib, name_of, call)


def signature(xs):
    def one(x):
        if isinstance(x, Tensor):
            return name_of(x.dtype) + ("@0d" if dims(x) == 0 else "")
        return type(x).__name__
    return ", ".join(one(x) for x in xs)


def element_and_block(x, index):
    """Element `index` of array `x` (flattened) as a one-element array, and 64 copies of it."""
    if args.library == "torch":
        e = x.reshape(-1)[index].reshape(1)
        return e, e.repeat(64)
    if args.library == "tensorflow":
        e = tf.reshape(x, [-1])[index:index + 1]
        return e, tf.tile(e, [64])
    import numpy as np

    e = np.ascontiguousarray(x).reshape(-1)[index:index + 1]
    return e, np.repeat(e, 64)


def place(op, xs, index, extra):
    """'place-dependent' when the differing element alone and at a 64-element block's head
    answer differently in the library: a binary op in PyTorch, `astype` in NumPy, PyTorch and
    TensorFlow (their vector loops convert floats past an integer's range otherwise)."""
    if op == "astype" and args.library != "jax":
        one, block = element_and_block(xs[0], index)
        alone = answer(lambda: astype_fn(one, extra["dtype"]))
        head = answer(lambda: astype_fn(block, extra["dtype"]))
        if "bits" in alone and "bits" in head and alone["bits"][0] != head["bits"][0]:
            return "place-dependent"
        return ""
    if op not in lib.BINARY or args.library != "torch":
        return ""
    shape = torch.broadcast_shapes(*[x.shape for x in xs if isinstance(x, torch.Tensor)])
    elems = []
    for x in xs:
        if isinstance(x, torch.Tensor) and x.dim() > 0:
            elems.append(x.broadcast_to(shape).reshape(-1)[index].reshape(1))
        else:
            elems.append(x)
    fn, operator = lib.BINARY[op]
    call = fn if isinstance(elems[0], torch.Tensor) else operator
    if call is None:
        return ""
    alone = answer(lambda: call(*elems))
    block = [e.repeat(64) if isinstance(e, torch.Tensor) and e.dim() == 1 else e for e in elems]
    head = answer(lambda: call(*block))
    if "bits" in alone and "bits" in head and alone["bits"][0] != head["bits"][0]:
        return "place-dependent"
    return ""


def cause(op, xs, index, got):
    """JAX (XLA on the CPU): why a value differs at `index`, where the cause is one of XLA's
    known ones: a subnormal operand element or result flushed to zero, or a complex
    maximum/minimum of a NaN (which XLA does not propagate); else ''."""
    if args.library != "jax" or op in ("sum", "astype"):
        return ""
    import numpy as np

    arrays = [np.asarray(x) for x in xs if isinstance(x, Tensor)]
    shape = np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else ()

    def subnormal(v):
        v = np.asarray(v)
        parts = [v.real, v.imag] if v.dtype.kind == "c" else [v]
        out = False
        for p in parts:
            if p.dtype.kind != "f" and p.dtype.name != "bfloat16":
                continue
            f = p.astype(np.float64)
            tiny = {"float16": 2.0 ** -14, "bfloat16": 2.0 ** -126, "float32": 2.0 ** -126,
                    "float64": 2.0 ** -1022}.get(p.dtype.name, 0.0)
            out |= bool(f != 0 and abs(f) < tiny)
        return out

    elems = []
    for x in xs:
        if isinstance(x, Tensor):
            elems.append(np.broadcast_to(np.asarray(x), shape).reshape(-1)[index])
        elif isinstance(x, float):
            elems.append(np.float64(x))
    if any(subnormal(e) for e in elems):
        return "flushed subnormal operand"
    dtype = lib.dt(got["dtype"])
    b = got["bits"][index]
    unit = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
    if dtype.kind == "c":
        half = unit[dtype.itemsize // 2]
        val = np.array(b, dtype=half).view(np.float32 if dtype.itemsize == 8 else np.float64)
        if subnormal(val[0]) or subnormal(val[1]):
            return "flushed subnormal result"
    elif dtype.kind == "f" or dtype.name == "bfloat16":
        if subnormal(np.array([b], dtype=unit[dtype.itemsize]).view(dtype)[0]):
            return "flushed subnormal result"
    if op in ("maximum", "minimum") and dtype.kind == "c":
        if any(np.isnan(np.asarray(e).astype(np.complex128)) for e in elems):
            return "complex NaN not propagated"
    return ""


def avx512_targets():
    """NumPy's dispatch targets that need AVX-512 (`X86_V4`, `AVX512_*`): disabled in the
    child that answers the cases as a machine without AVX-512 would."""
    from numpy._core._multiarray_umath import __cpu_dispatch__

    return [t for t in __cpu_dispatch__ if "AVX512" in t or t == "X86_V4"]


def portable_answers():
    """The library's answers to this seed's cases with AVX-512 dispatch disabled (NumPy),
    computed by the same script in a child process, which draws the same cases."""
    targets = avx512_targets()
    if not targets:
        return None
    import tempfile

    with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as f:
        env = dict(os.environ, NPY_DISABLE_CPU_FEATURES=" ".join(targets))
        subprocess.run([sys.executable, os.path.abspath(__file__), args.library, "--seed",
                        str(seed), "--cases", str(args.cases), "--answers", f.name]
                       + (["--focus", args.focus] if args.focus else []),
                       env=env, check=True)
        return [json.loads(line) for line in f]


def nan_only(want, got):
    """Whether every element that differs is a NaN on both sides (a NaN's sign or payload: the
    library's answers are canonical NaNs, the runner keeps what a cast produces)."""
    import ml_dtypes  # noqa: F401 (its dtypes by name)
    import numpy as np

    name = want["dtype"]
    if name == "bool" or "int" in name:
        return False
    complex_ = name.startswith(("complex", "bcomplex"))
    part = {"complex64": "float32", "complex128": "float64", "complex32": "float16",
            "bcomplex32": "bfloat16"}.get(name, name)
    d = np.dtype(getattr(ml_dtypes, part, None) or part)
    unit = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[d.itemsize]

    def nan(bits):
        v = np.array(bits if complex_ else [bits], dtype=unit).view(d).astype(np.float64)
        return bool(np.isnan(v).any())

    return all(nan(a) and nan(b) for a, b in zip(want["bits"], got["bits"]) if a != b)


def main():
    cases, expected, calls = [], [], []
    while len(cases) < args.cases:
        drawn = draw()
        if drawn is None:
            continue
        op, xs, call, extra = drawn
        want = answer(call)
        cid = len(cases)
        cases.append({"id": cid, "op": op, "args": [lib.arg_json(x) for x in xs]} | extra)
        expected.append({"id": cid} | want)
        calls.append((op, xs, extra))
    if args.answers:
        with open(args.answers, "w") as f:
            f.writelines(json.dumps(e) + "\n" for e in expected)
        return
    lines = "".join(json.dumps(c) + "\n" for c in cases)
    policy = getattr(lib, "POLICY", args.library)  # tensorflow --safe: tensorflow-safe
    out = subprocess.run([args.bin, "run", "--policy", policy, "-"], input=lines,
                         capture_output=True, text=True, check=False).stdout.splitlines()
    classes = {}
    dump = open(args.dump, "w") if args.dump else None
    portable = None  # answered on first need (NumPy)
    for case, want, got, (op, xs, extra) in zip(cases, expected, out, calls):
        got = json.loads(got)
        if "kind" in want or "kind" in got:
            if want.get("kind") == got.get("kind"):
                continue
            what = (f"library {want['kind']}, typejoin {got.get('kind', 'answers')}"
                    if "kind" in want else f"typejoin {got['kind']}, library answers")
            index = None
        elif want["dtype"] != got["dtype"] or want["shape"] != got["shape"]:
            what, index = f"dtype: library {want['dtype']}, typejoin {got['dtype']}", None
        elif want["bits"] != got["bits"]:
            index = next(i for i, (a, b) in enumerate(zip(want["bits"], got["bits"])) if a != b)
            if nan_only(want, got):
                what = "NaN payload"
            else:
                what = "value " + (place(op, xs, index, extra) or cause(op, xs, index, got))
                if what == "value " and args.library == "numpy":
                    if portable is None:
                        portable = portable_answers() or []
                    there = portable[case["id"]] if portable else None
                    if there is not None and there.get("bits") == got["bits"]:
                        what = "value cpu-dependent"
        else:
            continue
        key = (op, what.strip(), signature(xs), want.get("dtype", ""))
        if dump:
            dump.write(json.dumps({"class": list(key), "index": index, "case": case,
                                   "library": want, "typejoin": got}) + "\n")
        size = len(json.dumps(case))
        best = classes.get(key)
        if best is None:
            classes[key] = [1, size, case, want, got]
        else:
            best[0] += 1
            if size < best[1]:
                best[1:] = [size, case, want, got]
    if dump:
        dump.close()
    differing = sum(c[0] for c in classes.values())
    by_what = {}
    for key, c in classes.items():
        by_what[key[1]] = by_what.get(key[1], 0) + c[0]
    print(f"{policy} ({args.library} {version}), seed {seed}: {len(cases)} cases, {differing} differ, "
          f"{len(classes)} classes")
    for what, n in sorted(by_what.items(), key=lambda kv: -kv[1]):
        print(f"{n:6}  {what}")
    for key, (n, _, case, want, got) in sorted(classes.items(), key=lambda kv: -kv[1][0])[
            :args.show]:
        print(f"{n:6}  {key[0]}({key[2]}) -> {key[3] or '-'}: {key[1]}")
        print(f"        {json.dumps(case)[:400]}")
        print(f"        library  {json.dumps(want)[:300]}")
        print(f"        typejoin {json.dumps(got)[:300]}")
    if args.record:
        write_cases(args.record, cases, expected)


main()

#!/usr/bin/env python3
"""Checks that the Python API reads each library's own operands as the library does: random
pairs of a library's objects (arrays or tensors of every dtype of its policy, dimensioned and
zero-dim, weakly typed ones, its dtype objects, Python numbers), the library's own answer
against typejoin's, through `typejoin.policy(P).result_type(a, b)` (the result dtype) and
`typejoin.reference.add(a, b, policy=P)` (the dtype and the values). Usage, from the repository
root with the typejoin package and the library installed:

    scripts/oracle_python_operands.py jax|torch|tensorflow [--safe] [--seed S] [--cases N]

- jax (x64 on): `jnp.add(a, b)`; operands `jnp.array`s, `jnp.array(1.0)` (weak), Python
  numbers, dtype objects (`jnp.result_type` only) — policy `jax`;
- torch: `torch.add(a, b)` (a Python number first: `a + b`); tensors of shape (3,) and (),
  `torch.dtype`s (`torch.promote_types` only) — policy `torch`;
- tensorflow (NumPy behaviour, `dtype_conversion_mode="all"`, or `"safe"` with `--safe`):
  `tf.add(a, b)`; tensors, `WeakTensor`s, Python numbers, `tf.DType`s
  (`flexible_dtypes.result_type` only) — policy `tensorflow` or `tensorflow-safe`.

Values are small integers and halves, so that every library computes them exactly: a
difference is one of reading, not of arithmetic. Prints the number of cases, how many differ,
and the first differences.
"""
import argparse
import os
import random
import sys
import warnings

import numpy as np

import typejoin
import typejoin.reference as ref

p = argparse.ArgumentParser()
p.add_argument("library", choices=["jax", "torch", "tensorflow"])
p.add_argument("--safe", action="store_true")
p.add_argument("--seed", type=int, default=None)
p.add_argument("--cases", type=int, default=2000)
p.add_argument("--show", type=int, default=12, help="differences printed")
args = p.parse_args()
seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2 ** 32)
rng = random.Random(seed)
warnings.simplefilter("ignore")

NUMBERS = [0, 1, -2, 3, True, False, 0.5, -1.5, 2.0, 1j, 1 + 0.5j]
FIXED = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128"]


def values(name, n):
    if name == "bool":
        return [rng.random() < 0.5 for _ in range(n)]
    if name.startswith("uint"):
        return [rng.randint(0, 5) for _ in range(n)]
    if name.startswith("int"):
        return [rng.randint(-5, 5) for _ in range(n)]
    if name.startswith("complex"):
        return [complex(rng.randint(-4, 4) / 2, rng.randint(-4, 4) / 2) for _ in range(n)]
    return [rng.randint(-8, 8) / 2 for _ in range(n)]


if args.library == "jax":
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    POLICY, DTYPES = "jax", FIXED + ["uint16", "uint32", "uint64"]

    def array(name, shape):
        n = int(np.prod(shape))
        return jnp.asarray(np.array(values(name, n), dtype=ref.dtype_of(name)).reshape(shape))

    def weak():
        return jnp.asarray(rng.choice([1, -2, 0.5, 2.0, 1j]))  # a Python number: weak

    def dtype(name):
        return jnp.dtype(ref.dtype_of(name))

    def library_add(a, b):
        return jnp.add(a, b)

    def library_result_type(a, b):
        return jnp.result_type(a, b).name

    def numpy_of(r):
        return np.asarray(r)
elif args.library == "torch":
    import torch

    torch.set_num_threads(1)
    POLICY, DTYPES = "torch", FIXED

    def array(name, shape):
        n = int(np.prod(shape))
        a = np.array(values(name, n), dtype=np.float64 if name == "bfloat16"
                     else ref.dtype_of(name)).reshape(shape)
        return torch.tensor(a, dtype=getattr(torch, name))

    weak = None

    def dtype(name):
        return getattr(torch, name)

    def library_add(a, b):
        return torch.add(a, b) if isinstance(a, torch.Tensor) else a + b

    def library_result_type(a, b):
        if isinstance(a, torch.dtype) and isinstance(b, torch.dtype):
            return str(torch.promote_types(a, b)).removeprefix("torch.")
        if isinstance(a, torch.dtype) or isinstance(b, torch.dtype):
            raise LookupError  # torch has no mixed dtype/tensor result_type
        return str(torch.result_type(a, b)).removeprefix("torch.")

    def numpy_of(r):
        return ref._torch_array(r)
else:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    import tensorflow.experimental.numpy as tnp
    from tensorflow.python.framework import flexible_dtypes, weak_tensor

    mode = "safe" if args.safe else "all"
    tnp.experimental_enable_numpy_behavior(dtype_conversion_mode=mode)
    POLICY = "tensorflow-safe" if args.safe else "tensorflow"
    DTYPES = FIXED + ["uint16", "uint32", "uint64"]

    def array(name, shape):
        n = int(np.prod(shape))
        return tf.constant(np.array(values(name, n), dtype=ref.dtype_of(name)).reshape(shape))

    def weak():
        # mostly a Python number's weak int32, float32, complex128; now and then a weak int64
        # or float64, which typejoin reads in result_type and refuses in the kernels
        name = rng.choice(["int32", "float32", "complex128"] * 3 + ["int64", "float64"])
        return weak_tensor.WeakTensor.from_tensor(array(name, ()))

    def dtype(name):
        return getattr(tf, name)

    def library_add(a, b):
        return tf.add(a, b)

    def library_result_type(a, b):
        d, _ = flexible_dtypes.result_type(a, b)
        return d.name

    def numpy_of(r):
        return np.asarray(r.numpy())  # np.asarray of a bfloat16 tensor fails


def operand(with_dtypes):
    r = rng.random()
    if r < 0.15:
        return rng.choice(NUMBERS)
    if r < 0.25 and weak is not None:
        return weak()
    if r < 0.35 and with_dtypes:
        return dtype(rng.choice(DTYPES))
    return array(rng.choice(DTYPES), rng.choice([(3,), ()]))


def same_values(x, y):
    if x.shape != y.shape:
        return False
    if x.dtype.kind in "biu":
        return x.tolist() == y.tolist()
    return np.array_equal(x.astype(np.complex128), y.astype(np.complex128), equal_nan=True)


def describe(x):
    if isinstance(x, (bool, int, float, complex)):
        return repr(x)
    if not hasattr(x, "shape"):
        return f"dtype {x}"
    w = " weak" if typejoin._is_weak(x) else ""
    return f"{type(x).__name__}{w} {typejoin.operand_name(x, policy)}{list(x.shape)}"


def signature(x):
    """An operand's class: Python number, weak array, dtype, array."""
    if isinstance(x, (bool, int, float, complex)):
        return type(x).__name__
    if not hasattr(x, "shape"):
        return "dtype"
    return ("weak " if typejoin._is_weak(x) else "") + typejoin.operand_name(x, policy)


policy = typejoin.policy(POLICY)
differ, shown, cases, classes, refused = 0, 0, 0, {}, 0
while cases < args.cases:
    with_dtypes = rng.random() < 0.3
    a, b = operand(with_dtypes), operand(with_dtypes)
    if all(isinstance(x, (bool, int, float, complex)) for x in (a, b)):
        continue
    is_dtype = [not hasattr(x, "shape") and not isinstance(x, (bool, int, float, complex))
                for x in (a, b)]
    try:
        want = library_result_type(a, b)
    except LookupError:
        continue
    except Exception:  # noqa: BLE001 (each library raises its own classes)
        want = None
    got = policy.join(a, b)
    problems = []
    if got != want:
        problems.append(f"result_type: library {want}, typejoin {got}")
    if not any(is_dtype):
        try:
            lib = numpy_of(library_add(a, b))
        except Exception as e:  # noqa: BLE001
            lib = e
        try:
            mine = ref.add(a, b, policy=POLICY)
        except Exception as e:  # noqa: BLE001
            mine = e
        if isinstance(mine, TypeError) and "no operand form" in str(mine):
            refused += 1  # TensorFlow's weak int64/float64: refused by design
        elif isinstance(lib, Exception) != isinstance(mine, Exception):
            problems.append(f"add: library {lib!r:.80}, typejoin {mine!r:.80}")
        elif not isinstance(lib, Exception):
            if lib.dtype != mine.dtype or not same_values(lib, mine):
                problems.append(f"add: library {lib.dtype} {lib.tolist()}, typejoin "
                                f"{mine.dtype} {mine.tolist()}")
    cases += 1
    if problems:
        differ += 1
        what = "; ".join(q.split(":")[0] + (" error" if "Error" in q else "") for q in problems)
        key = f"{what}: {signature(a)}, {signature(b)}"
        classes[key] = classes.get(key, 0) + 1
        if shown < args.show:
            shown += 1
            print(f"{describe(a)}, {describe(b)}: {'; '.join(problems)}")
print(f"{args.library} ({POLICY}), seed {seed}: {cases} cases, {differ} differ"
      + (f", {refused} refused by typejoin (a weak int64/float64 tensor)" if refused else ""))
for key, n in sorted(classes.items(), key=lambda kv: -kv[1]):
    print(f"{n:6}  {key}")
sys.exit(1 if differ else 0)

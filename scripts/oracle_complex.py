#!/usr/bin/env python3
"""Measures complex `power`, `true_divide` or `multiply` live on NumPy (`np.power`, `np.true_divide`),
PyTorch (`torch.pow`, `torch.true_divide`) or TensorFlow (`tf.pow`, `tf.math.truediv`) and
writes tests/data/kernels/<lib>_complex_<op>_cases.jsonl and _expected.jsonl (the `[kernels]`
conventions `complex_power` and `complex_divide`, docs/kernels.md). Per complex dtype
(complex64, complex128): N random pairs of arrays (N odd, so a library's vector loop leaves a
tail); N bases over random integers in [-120, 120] (an array of the same complex dtype, zero
imaginary parts: NumPy's power multiplies below 100); N bases with each Python number users
write (0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, -7, 100, True, 1j, 2+0j, which PyTorch's power
dispatches to kernels of its own; a call the library refuses is left out); and short pairs of
1, 2, 3, 5 and 6 elements. `multiply` takes pairs of every length from 1 to 40 and of 47, 64,
65, 100 and N elements instead (where a library's loops split a row into vectors, a scalar
tail and pairs within it: `complex_multiply`), then arrays of 2 to 17, 21, 29 and 47 elements
by a one-element array (broadcast with stride zero). Parts are drawn as a user's program draws them: a third from ±0, ±inf, NaN, ±1, subnormals, the largest
values, 2, 0.5; a third spread over 10^-40..10^40; a third uniform in [-10, 10]. NaN results
are written as the dtype's positive quiet NaN. Usage, from the repository root:

    scripts/oracle_complex.py numpy|torch|tensorflow power|true_divide|multiply [SEED] [N]
"""
import json
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle_common import random_parts, scalar_json  # noqa: E402

warnings.filterwarnings("ignore")
lib = sys.argv[1] if len(sys.argv) > 1 else ""
op = sys.argv[2] if len(sys.argv) > 2 else ""
if lib not in ("numpy", "torch", "tensorflow") or op not in ("power", "true_divide", "multiply"):
    sys.exit(__doc__)
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 5
n = int(sys.argv[4]) if len(sys.argv) > 4 else 401
rng = np.random.default_rng(seed)
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-310, -1e-310, 1e-40, 1e308, -1e308,
         3.4e38, 2.0, 0.5]
EXPONENTS = [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, -7, 100, True, 1j, 2 + 0j]


def parts(k, ft):
    return random_parts(rng, k, ft, EDGES, kinds=3, decades=40, uniform=10.0)


def bits(x, ut):
    """[[re, im], ...] of a complex array, NaN parts as the positive quiet NaN."""
    re, im = np.ascontiguousarray(x.real), np.ascontiguousarray(x.imag)
    nan = {np.uint32: 0x7FC00000, np.uint64: 0x7FF8000000000000}[ut]
    r = np.where(np.isnan(re), nan, re.view(ut))
    i = np.where(np.isnan(im), nan, im.view(ut))
    return [[int(p), int(q)] for p, q in zip(r, i)]


if lib == "numpy":
    version = np.__version__

    def call(a, b):
        with np.errstate(all="ignore"):
            return getattr(np, op)(a, b)
elif lib == "torch":
    import torch

    torch.set_num_threads(1)
    version = torch.__version__

    def call(a, b):
        b = torch.from_numpy(b) if isinstance(b, np.ndarray) else b
        return getattr(torch, {"power": "pow"}.get(op, op))(torch.from_numpy(a), b).numpy()
else:
    import tensorflow as tf

    version = tf.__version__

    def call(a, b):
        fn = {"power": tf.pow, "true_divide": tf.math.truediv, "multiply": tf.multiply}[op]
        return fn(tf.constant(a), tf.constant(b) if isinstance(b, np.ndarray) else b).numpy()

cases, expected = [], []
for ct, ft, ut in [(np.complex64, np.float32, np.uint32), (np.complex128, np.float64, np.uint64)]:
    def arg(x):
        if isinstance(x, np.ndarray):
            return {"dtype": ct.__name__, "shape": [len(x)], "bits": bits(x, ut)}
        return scalar_json(x)

    def base(k=n):
        a = np.empty(k, ct)
        a.real, a.imag = parts(k, ft), parts(k, ft)
        return a

    k = np.empty(n, ct)
    k.real, k.imag = rng.integers(-120, 121, n).astype(ft), 0
    pairs = [(base(), base()), (base(), k)] + [(base(), e) for e in EXPONENTS]
    pairs += [(base(m), base(m)) for m in (1, 2, 3, 5, 6)]
    if op == "multiply":
        pairs = [(base(m), base(m)) for m in [*range(1, 41), 47, 64, 65, 100, n]]
        # a one-element factor, broadcast with stride zero (PyTorch's tail goes otherwise)
        pairs += [(base(m), base(1)) for m in [*range(2, 18), 21, 29, 47]]
    for x, y in pairs:
        try:
            r = call(x, y)
        except Exception:  # noqa: BLE001 (TensorFlow refuses a Python bool beside complex64)
            continue
        assert r.dtype == ct, (r.dtype, y)
        i = len(cases)
        cases.append({"id": i, "op": op, "args": [arg(x), arg(y)]})
        expected.append({"id": i, **arg(r)})
for suffix, rows in [("cases", cases), ("expected", expected)]:
    path = f"tests/data/kernels/{lib}_complex_{op}_{suffix}.jsonl"
    with open(path + ".tmp", "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    os.replace(path + ".tmp", path)
print(f"{lib} {version}: {len(cases)} {op} cases written")

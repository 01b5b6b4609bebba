"""What the oracle scripts (scripts/oracle_*.py) share: the conformance runner's JSON for
Python scalars, and writing a case set with its expected answers (docs/kernels.md)."""
import json
import math


def num(f):
    """A float as the runner reads it: "nan", "inf", "-inf" as strings."""
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def random_parts(rng, k, ft, edges, kinds=5, decades=45, uniform=100.0):
    """`k` random real parts of dtype `ft`, drawn as a user's program draws them: one in `kinds`
    from `edges`, one spread over 10^-decades..10^decades, the rest uniform in ±uniform."""
    import numpy as np

    kind = rng.integers(0, kinds, k)
    spread = rng.standard_normal(k) * 10.0 ** rng.integers(-decades, decades, k)
    v = np.where(kind == 0, rng.choice(edges, k),
                 np.where(kind == 1, spread, rng.uniform(-uniform, uniform, k)))
    with np.errstate(all="ignore"):
        return v.astype(ft)


def scalar_json(x):
    """A Python bool, int, float or complex as a runner scalar (an int beyond 64 bits as a
    string, which keeps its digits)."""
    if isinstance(x, bool):
        return {"scalar": "bool", "value": x}
    if isinstance(x, int):
        return {"scalar": "int", "value": x if -(2 ** 63) <= x < 2 ** 64 else str(x)}
    if isinstance(x, float):
        return {"scalar": "float", "value": num(x)}
    return {"scalar": "complex", "value": [num(x.real), num(x.imag)]}


def write_cases(stem, cases, expected):
    """tests/data/kernels/<stem>_cases.jsonl and <stem>_expected.jsonl, one JSON line each."""
    for suffix, rows in (("cases", cases), ("expected", expected)):
        with open(f"tests/data/kernels/{stem}_{suffix}.jsonl", "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


def answer(lib, name_of, call):
    """The runner's answer line (without its id) for `call()` on a library's adapter `lib`: the
    result's dtype, shape and bits, or the kind of the error it raised. A library's adapter may
    clear state a call leaves behind (`before_call`: TensorFlow's eager caches)."""
    before = getattr(lib, "before_call", lambda: None)
    before()
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 (each library raises its own classes)
        before()
        return {"kind": lib.error_kind(e)}
    return {"dtype": name_of(r.dtype), "shape": list(r.shape), "bits": lib.bits_of(r)}

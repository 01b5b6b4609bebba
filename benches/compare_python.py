#!/usr/bin/env python3
"""Speed of the Python package's reference kernels, in one run (a benchmark, not a test).

1. `typejoin.reference.add` at n = 1e7 against `typejoin bench` for the same pair, with the
   same threads (the cost of the Python layer), both into `out=` (what `bench` does: a
   preallocated result) and into a new result (which adds the new array's page faults: read
   them against NumPy's own new-result cost, printed beside);
2. per-call overhead at n = 1e3 against NumPy's `np.add`;
3. bfloat16, float16 and float8 pairs against NumPy + ml_dtypes, new results and `out=`;
4. `np.add` ÷ `reference.add` (float32 + float32) at n = 1e3 … 1e6, new results and `out=`,
   over random placements of the arrays in memory (`--sizes` runs this part alone);
5. the NumPy ufunc ÷ `reference.<op>` for arithmetic, max/min, comparisons and bitwise ops on
   integer and float dtypes, and mixed pairs, at n = 1e3, 1e5 and 1e6, new results and `out=`, over
   random placements (`--ops` runs this part alone);
6. casts: the ufunc into an `out=` of another dtype (`np.add(a, b, out=o)`, cast by NumPy's
   `same_kind` rule) ÷ `reference.<op>(a, b, out=o)`, and `astype`: `a.astype(d)` and
   `np.copyto(o, a, casting="unsafe")` ÷ `reference.astype(a, d)` and `(…, out=o)`, at n = 1e3,
   1e5 and 1e6 over random placements (`--casts` runs this part alone);
7. the other ops: `negative` and `absolute` (new and `out=`), `sum` (of the whole array and
   along an axis), `clip` with two scalar bounds and `where`, against `np.negative`,
   `np.absolute`, `np.sum`, `np.clip` and `np.where`, at n = 1e3, 1e5 and 1e6 over random
   placements (`--others` runs this part alone).

Best of --runs, each side in turn, --rounds rounds. OpenBLAS's idle threads are kept off the
cores (NumPy's add does not use them). Needs the package installed (`pip install ./python`)
and a release build of the CLI for 1 (`cargo build --release`).
Usage: python3 benches/compare_python.py [--rounds R] [--runs K] [--sizes] [--ops] [--casts]
       [--others]
(from the crate root)
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import timeit  # noqa: E402

from common import best  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import typejoin.reference as ref  # noqa: E402


def normal(name, n, rng):
    d = np.dtype(getattr(ml_dtypes, name, name))
    return rng.standard_normal(n).astype(d)


def measure(rounds=3, runs=10):
    """The three comparisons, in seconds: {"layer": [...], "overhead": {...}, "small": [...]}."""
    rng = np.random.default_rng(1)
    n = 10_000_000
    threads = os.cpu_count()
    layer = []
    for lhs, rhs in [("float32", "float32"), ("int8", "float32"), ("bfloat16", "bfloat16")]:
        a, b = normal(lhs, n, rng), normal(rhs, n, rng)
        out = ref.add(a, b)
        t_new = t_out = t_cli = t_np_new = t_np_out = float("inf")
        for _ in range(rounds):
            t_out = min(t_out, best(lambda: ref.add(a, b, out=out), runs))
            t_new = min(t_new, best(lambda: ref.add(a, b), runs))
            m = json.loads(subprocess.run(
                ["target/release/typejoin", "bench", "--op", "add", "--lhs", lhs, "--rhs", rhs,
                 "-n", str(n), "--runs", str(runs), "--threads", str(threads)],
                check=True, capture_output=True, text=True).stdout)
            t_cli = min(t_cli, m["ns_per_element_best"] * n / 1e9)
            if lhs == "float32" == rhs:
                t_np_new = min(t_np_new, best(lambda: np.add(a, b), runs))
                t_np_out = min(t_np_out, best(lambda: np.add(a, b, out=out), runs))
        layer.append({"pair": f"{lhs} + {rhs}", "out": t_out, "new": t_new, "cli": t_cli,
                      "np_out": t_np_out if t_np_out < float("inf") else None,
                      "np_new": t_np_new if t_np_new < float("inf") else None})
    a, b = normal("float32", 1000, rng), normal("float32", 1000, rng)
    t_ref = t_np = float("inf")
    for _ in range(rounds):
        t_ref = min(t_ref, best(lambda: ref.add(a, b), 2000))
        t_np = min(t_np, best(lambda: np.add(a, b), 2000))
    small = []
    for name in ["bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"]:
        a, b = normal(name, n, rng), normal(name, n, rng)
        out = np.add(a, b)
        t_new = t_out = t_np_new = t_np_out = float("inf")
        for _ in range(rounds):
            t_new = min(t_new, best(lambda: ref.add(a, b), runs))
            t_out = min(t_out, best(lambda: ref.add(a, b, out=out), runs))
            t_np_new = min(t_np_new, best(lambda: np.add(a, b), max(2, runs // 3)))
            t_np_out = min(t_np_out, best(lambda: np.add(a, b, out=out), max(2, runs // 3)))
        small.append({"pair": f"{name} + {name}", "new": t_new, "out": t_out,
                      "np_new": t_np_new, "np_out": t_np_out})
    return {"threads": threads, "layer": layer, "overhead": {"ref": t_ref, "np": t_np},
            "small": small}


PAGE = 4096


def placed(n, rng, dtypes=("float32", "float32", "float32")):
    """Two operands of n random values and an output for them (float32 unless `dtypes` says
    otherwise), each at its own random 16-byte offset into a page (as glibc's malloc places a
    block: 16-byte aligned, and from one call to the next at any offset), in one buffer that the
    views keep alive. Floats are normal, integers uniform over [-100, 100) (unsigned [0, 200))."""
    dts = [np.dtype(d) for d in dtypes]
    stride = -(-(max(d.itemsize for d in dts) * n + PAGE) // PAGE) * PAGE
    buf = np.empty(3 * stride + PAGE, np.uint8)
    base = -buf.ctypes.data % PAGE
    offsets = rng.integers(0, PAGE // 16, 3) * 16
    a, b, out = (buf[base + k * stride + o:][:d.itemsize * n].view(d)
                 for k, (o, d) in enumerate(zip(offsets, dts)))
    for v in (a, b):
        if v.dtype.kind == "f":
            v[:] = rng.standard_normal(n)
        else:
            v[:] = rng.integers(0 if v.dtype.kind == "u" else -100, 100, n)
    return a, b, out


def sizes(rounds=15, placements=8):
    """`np.add` ÷ `reference.add` on float32 arrays at n = 1e3 … 1e6, new results and `out=`.

    Both loops' speed depends on where the arrays lie: a 64-byte vector that straddles two
    cache lines costs two, and a load 4 KiB apart from a pending store waits for it (NumPy's
    AVX2 loop measured 13.5–28 µs at 1e5 as the three arrays moved, typejoin's 13–16 µs). So
    each size draws `placements` random placements (`placed`), times each side the best of
    `rounds` alternating rounds on each, and returns {n: (new, out=)}, each a tuple of the
    geometric mean, least and greatest ratio over the placements, and {n: (t_ref, t_np)} at the
    median placement of the new results (ratios above 1: typejoin is faster)."""
    rng = np.random.default_rng(2)
    ratios, times = {}, {}
    for n in (1_000, 10_000, 100_000, 1_000_000):
        number = max(20, 2_000_000 // n)
        per = []
        for _ in range(placements):
            a, b, out = placed(n, rng)
            sides = {"ref": lambda: ref.add(a, b), "np": lambda: np.add(a, b),
                     "ref_out": lambda: ref.add(a, b, out=out),
                     "np_out": lambda: np.add(a, b, out=out)}
            t = {k: float("inf") for k in sides}
            for _ in range(rounds):
                for k, f in sides.items():
                    t[k] = min(t[k], timeit.timeit(f, number=number) / number)
            per.append((t["np"] / t["ref"], t["np_out"] / t["ref_out"], t["ref"], t["np"]))

        def summary(rs):
            return (float(np.exp(np.mean(np.log(rs)))), min(rs), max(rs))

        ratios[n] = (summary([p[0] for p in per]), summary([p[1] for p in per]))
        mid = sorted(per)[len(per) // 2]
        times[n] = (mid[2], mid[3])
    return ratios, times


def sizes_table(rounds=15, placements=8):
    ratios, times = sizes(rounds, placements)
    lines = [f"Geometric mean over {placements} random placements of the three arrays "
             "(least–greatest):", "",
             "| n | new result | `out=` | median placement, new result |", "|---|---|---|---|"]
    for n, (new, out) in ratios.items():
        t_ref, t_np = times[n]
        lines.append(f"| 1e{len(str(n)) - 1} | {new[0]:.2f} ({new[1]:.2f}–{new[2]:.2f}) "
                     f"| {out[0]:.2f} ({out[1]:.2f}–{out[2]:.2f}) "
                     f"| {t_ref * 1e6:.2f} µs against {t_np * 1e6:.2f} µs |")
    return "\n".join(lines)


# The ops part 5 times: (op, [dtypes of two operands of one dtype], [mixed pairs]).
OPS = [
    ("add", ["int8", "uint8", "int32", "int64", "float32", "float64"],
     [("int8", "float32"), ("uint8", "int8"), ("int32", "float64")]),
    ("subtract", ["int8", "int32", "float32", "float64"], []),
    ("multiply", ["int8", "uint8", "int32", "int64", "float32", "float64"],
     [("int8", "float32")]),
    ("true_divide", ["float32", "float64"], [("int32", "float64")]),
    ("maximum", ["int8", "uint8", "int32", "int64", "float32", "float64"], []),
    ("minimum", ["int8", "int32", "float32", "float64"], []),
    ("less", ["int8", "uint8", "int32", "int64", "float32", "float64"], [("int8", "float32")]),
    ("equal", ["int8", "int32", "int64", "float32", "float64"], []),
    ("bitwise_and", ["int8", "uint8", "int32", "int64"], []),
]


def ops_ratios(rounds=5, placements=3, sizes=(1_000, 100_000, 1_000_000)):
    """The NumPy ufunc ÷ `reference.<op>` for each case of `OPS` at each size: yields
    (n, op, lhs, rhs, new, out), `new` and `out` each the geometric mean, least and greatest
    ratio over `placements` random placements (`placed`), each the best of `rounds` alternating
    rounds (above 1: typejoin is faster)."""
    rng = np.random.default_rng(5)

    def summary(rs):
        return (float(np.exp(np.mean(np.log(rs)))), min(rs), max(rs))

    for n in sizes:
        number = max(20, 2_000_000 // n)
        for op, same, mixed in OPS:
            f, g = getattr(np, op), getattr(ref, op)
            for lhs, rhs in [(d, d) for d in same] + mixed:
                res = np.result_type(np.dtype(lhs), np.dtype(rhs))
                res = np.dtype(bool) if op in ("less", "equal") else res
                per = []
                for _ in range(placements):
                    a, b, out = placed(n, rng, (lhs, rhs, res))
                    sides = {"ref": lambda: g(a, b), "np": lambda: f(a, b),
                             "ref_out": lambda: g(a, b, out=out),
                             "np_out": lambda: f(a, b, out=out)}
                    t = {k: float("inf") for k in sides}
                    for _ in range(rounds):
                        for k, h in sides.items():
                            t[k] = min(t[k], timeit.timeit(h, number=number) / number)
                    per.append((t["np"] / t["ref"], t["np_out"] / t["ref_out"]))
                yield (n, op, lhs, rhs, summary([p[0] for p in per]),
                       summary([p[1] for p in per]))


def ratios_table(title, columns, rows):
    """A Markdown table of ratios: `title`, then one row per (n, *columns, new, out) of `rows`,
    `new` and `out` each a (geometric mean, least, greatest) or None (a dash)."""
    cell = lambda r: "—" if r is None else f"{r[0]:.2f} ({r[1]:.2f}–{r[2]:.2f})"  # noqa: E731
    lines = [title, "", "| n | " + " | ".join(columns) + " | new result | `out=` |",
             "|---|" + "---|" * len(columns) + "---|---|"]
    for n, *what, new, out in rows:
        lines.append(f"| 1e{len(str(n)) - 1} | " + " | ".join(what)
                     + f" | {cell(new)} | {cell(out)} |")
    return "\n".join(lines)


def ops_table(rounds=5, placements=3):
    rows = ((n, op, lhs if lhs == rhs else f"{lhs}, {rhs}", new, out)
            for n, op, lhs, rhs, new, out in ops_ratios(rounds, placements))
    return ratios_table(f"The NumPy ufunc ÷ `reference.<op>`: geometric mean over {placements} "
                        "random placements of the three arrays (least–greatest); above 1, "
                        "typejoin is faster.", ["op", "operands"], rows)


# Part 6: ufuncs into an `out=` of another dtype (op, lhs, rhs, out) …
CAST_OUTS = [
    ("add", "int8", "int8", "int16"), ("add", "float32", "float32", "float64"),
    ("multiply", "int16", "int16", "int64"), ("less", "int32", "int32", "int32"),
    ("add", "float16", "float16", "float32"), ("subtract", "float64", "float64", "float32"),
]
# … and `astype` (from, to).
ASTYPES = [
    ("bool", "int8"), ("bool", "float32"), ("int8", "int16"), ("int32", "float64"),
    ("float64", "float32"), ("float32", "float16"), ("float16", "float32"), ("int64", "int32"),
    ("float64", "int64"), ("float32", "uint8"), ("float64", "int8"), ("float32", "int16"),
]


def summary(rs):
    """The geometric mean, least and greatest of ratios."""
    return (float(np.exp(np.mean(np.log(rs)))), min(rs), max(rs))


def timed(sides, number, rounds):
    """Seconds per call of each side, the best of `rounds` rounds taken in turn."""
    t = {k: float("inf") for k in sides}
    for _ in range(rounds):
        for k, h in sides.items():
            t[k] = min(t[k], timeit.timeit(h, number=number) / number)
    return t


def casts_ratios(rounds=5, placements=3, sizes=(1_000, 100_000, 1_000_000)):
    """Part 6: yields (n, what, case, new, out), `new` and `out` each the geometric mean,
    least and greatest ratio (NumPy ÷ typejoin) over `placements` random placements, each the
    best of `rounds` alternating rounds; `new` is None for a ufunc into `out=`."""
    rng = np.random.default_rng(6)

    for n in sizes:
        number = max(20, 2_000_000 // n)
        for op, lhs, rhs, to in CAST_OUTS:
            f, g = getattr(np, op), getattr(ref, op)
            per = []
            for _ in range(placements):
                a, b, out = placed(n, rng, (lhs, rhs, to))
                t = timed({"ref": lambda: g(a, b, out=out), "np": lambda: f(a, b, out=out)},
                          number, rounds)
                per.append(t["np"] / t["ref"])
            yield n, "out=", f"{op}({lhs}, {rhs}) → {to}", None, summary(per)
        for src, to in ASTYPES:
            per = []
            for _ in range(placements):
                a, _, out = placed(n, rng, ("float64" if src == "bool" else src, src, to))
                if src == "bool":
                    a = a < 0
                t = timed({"ref": lambda: ref.astype(a, to), "np": lambda: a.astype(to),
                           "ref_out": lambda: ref.astype(a, to, out=out),
                           "np_out": lambda: np.copyto(out, a, casting="unsafe")}, number, rounds)
                per.append((t["np"] / t["ref"], t["np_out"] / t["ref_out"]))
            yield (n, "astype", f"{src} → {to}", summary([p[0] for p in per]),
                   summary([p[1] for p in per]))


def casts_table(rounds=5, placements=3):
    return ratios_table(f"Casts: NumPy ÷ typejoin, geometric mean over {placements} random "
                        "placements (least–greatest); above 1, typejoin is faster. `out=`: the "
                        "ufunc into an array of another dtype; astype: `a.astype(d)` (new) and "
                        "`np.copyto(o, a, casting=\"unsafe\")` (`out=`) against "
                        "`reference.astype`.", ["call", "case"], casts_ratios(rounds, placements))


OTHERS_DTYPES = ["int8", "int32", "float32", "float64"]


def others_ratios(rounds=5, placements=3, sizes=(1_000, 100_000, 1_000_000)):
    """Part 7: yields (n, op, dtype, new, out), each the geometric mean, least and greatest
    ratio (NumPy ÷ typejoin) over `placements` random placements, each the best of `rounds`
    alternating rounds; `out` is None where the call has no `out=` measured."""
    rng = np.random.default_rng(7)

    for n in sizes:
        number = max(20, 2_000_000 // n)
        for dtype in OTHERS_DTYPES:
            per = {}
            for _ in range(placements):
                a, b, out = placed(n, rng, (dtype, dtype, dtype))
                cond = a > b
                rows = a.reshape(-1, 10)
                cases = {
                    "negative": (lambda: np.negative(a), lambda: ref.negative(a),
                                 lambda: np.negative(a, out=out),
                                 lambda: ref.negative(a, out=out)),
                    "absolute": (lambda: np.absolute(a), lambda: ref.absolute(a),
                                 lambda: np.absolute(a, out=out),
                                 lambda: ref.absolute(a, out=out)),
                    "sum": (lambda: np.sum(a), lambda: ref.sum(a), None, None),
                    "sum(axis=1) of [n/10, 10]": (lambda: np.sum(rows, 1),
                                                  lambda: ref.sum(rows, 1), None, None),
                    "clip(x, -1, 2)": (lambda: np.clip(a, -1, 2), lambda: ref.clip(a, -1, 2),
                                       lambda: np.clip(a, -1, 2, out=out),
                                       lambda: ref.clip(a, -1, 2, out=out)),
                    "where(c, x, y)": (lambda: np.where(cond, a, b),
                                       lambda: ref.where(cond, a, b), None, None),
                }
                for op, (f, g, f_out, g_out) in cases.items():
                    sides = {"np": f, "ref": g}
                    if f_out is not None:
                        sides.update(np_out=f_out, ref_out=g_out)
                    t = timed(sides, number, rounds)
                    per.setdefault(op, []).append(
                        (t["np"] / t["ref"],
                         t["np_out"] / t["ref_out"] if f_out is not None else None))
            for op, rs in per.items():
                outs = [r[1] for r in rs]
                yield (n, op, dtype, summary([r[0] for r in rs]),
                       None if outs[0] is None else summary(outs))


def others_table(rounds=5, placements=3):
    return ratios_table(f"Other ops: NumPy ÷ typejoin, geometric mean over {placements} random "
                        "placements (least–greatest); above 1, typejoin is faster.",
                        ["op", "dtype"], others_ratios(rounds, placements))


def markdown(rounds=3, runs=10):
    """The docs tables (scripts/bench)."""
    m = measure(rounds, runs)
    ns = 1e9 / 10_000_000
    lines = [f"numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}, n = 1e7, "
             f"{m['threads']} threads, ns per element.", "",
             "| `reference.add` | into `out=` | new result | `typejoin bench` (same threads) "
             "| out= ÷ bench | new ÷ bench | `np.add` out= / new |",
             "|---|---|---|---|---|---|---|"]
    for r in m["layer"]:
        np_cell = (f"{r['np_out'] * ns:.3f} / {r['np_new'] * ns:.3f}" if r["np_out"] else "—")
        lines.append(f"| {r['pair']} | {r['out'] * ns:.3f} | {r['new'] * ns:.3f} | "
                     f"{r['cli'] * ns:.3f} | {r['out'] / r['cli']:.2f} | "
                     f"{r['new'] / r['cli']:.2f} | {np_cell} |")
    o = m["overhead"]
    lines += ["", f"Per call at n = 1e3 (float32 + float32): `reference.add` "
              f"{o['ref'] * 1e6:.2f} µs, `np.add` {o['np'] * 1e6:.2f} µs, "
              f"difference {(o['ref'] - o['np']) * 1e6:.2f} µs.", "",
              "| small floats, n = 1e7 | NumPy + ml_dtypes, new | typejoin, new | ratio "
              "| NumPy + ml_dtypes, out= | typejoin, out= | ratio |",
              "|---|---|---|---|---|---|---|"]
    for r in m["small"]:
        lines.append(f"| {r['pair']} | {r['np_new'] * 1e3:.1f} ms | {r['new'] * 1e3:.2f} ms | "
                     f"{r['np_new'] / r['new']:.1f}× | {r['np_out'] * 1e3:.1f} ms | "
                     f"{r['out'] * 1e3:.2f} ms | {r['np_out'] / r['out']:.1f}× |")
    lines += ["", "`np.add` ÷ `reference.add`, float32 + float32 (above 1: typejoin is faster):",
              "", sizes_table(), "", ops_table(), "", casts_table(), "", others_table()]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sizes", action="store_true", help="only np.add ÷ reference.add by size")
    ap.add_argument("--ops", action="store_true",
                    help="only the NumPy ufunc ÷ reference.<op> by op, dtypes and size")
    ap.add_argument("--placements", type=int, default=None,
                    help="random placements of the arrays per case (--sizes: 8, --ops: 3)")
    ap.add_argument("--casts", action="store_true",
                    help="only casts: ufuncs into an out= of another dtype, and astype")
    ap.add_argument("--others", action="store_true",
                    help="only negative, absolute, sum, clip and where")
    args = ap.parse_args()
    if args.others:
        print(others_table(placements=args.placements or 3))
    elif args.casts:
        print(casts_table(placements=args.placements or 3))
    elif args.sizes:
        print(sizes_table(placements=args.placements or 8))
    elif args.ops:
        print(ops_table(placements=args.placements or 3))
    else:
        print(markdown(args.rounds, args.runs))


if __name__ == "__main__":
    main()

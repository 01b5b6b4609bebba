#!/usr/bin/env python3
"""Measure np.result_type on random argument lists, for tests/it/nary_rule.rs.

    scripts/oracle_numpy_result_type.py [--seed S] [--cases N] > tests/data/numpy/result_type_cases.jsonl

Each case is 1 to 6 arguments drawn from NumPy's dtypes (ml_dtypes' included) and the Python
scalars False, 0, 0.0, 0j, each dtype passed either as a dtype object (np.result_type moves
those first) or as an array of that dtype (kept in place), as users' code mixes them. A line:
{"args": [["dtype", "int8"], ["value", "uint1"], ["value", "i*"]], "result": "int64"}, the
result null where NumPy raised. The first line records the versions.
"""

import argparse
import importlib.util
import json
import os
import platform
import random
import sys
import warnings

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "typejoin_measure", os.path.join(_here, "..", "python", "typejoin", "measure.py"))
measure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(measure)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=40)
    p.add_argument("--cases", type=int, default=20000)
    args = p.parse_args()
    import numpy as np

    dtypes, note = measure.numpy_dtypes()
    scalars = dict(measure.NUMPY_SCALARS)
    names = list(dtypes) + list(scalars)
    by_dtype = {d: n for n, d in dtypes.items()}
    rng = random.Random(args.seed)
    print(json.dumps({"versions": {"python": platform.python_version(),
                                   "numpy": np.__version__, "note": note},
                      "seed": args.seed}))
    for _ in range(args.cases):
        case = []
        for _ in range(rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5, 6])):
            n = rng.choice(names)
            if n in scalars:
                case.append(["value", n])
            else:
                case.append([rng.choice(["dtype", "value"]), n])
        objs = [scalars[n] if n in scalars else
                (dtypes[n] if kind == "dtype" else np.zeros(rng.choice([(), (1,), (2,)]),
                                                             dtypes[n]))
                for kind, n in case]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = np.result_type(*objs)
            result = by_dtype.get(out, out.name)
        except Exception as e:
            if type(e).__name__ != "DTypePromotionError":
                print(f"unexpected {type(e).__name__}: {e}", file=sys.stderr)
            result = None
        print(json.dumps({"args": case, "result": result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

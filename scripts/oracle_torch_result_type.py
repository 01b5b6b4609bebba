#!/usr/bin/env python3
"""Measure PyTorch's n-ary result type over its whole dtype catalogue, for tests/it/nary_rule.rs.

    scripts/oracle_torch_result_type.py [--seed S] [--cases N] > tests/data/torch/result_type_cases.jsonl

Each case is three tensor operands drawn from the torch dtypes (observed/torch_categories.json's
47; four in five from the 14 of the lattice core, uint16-64 and the float8 types), each a dimensioned tensor (`int8`) or a zero-dim one (`int8@0d`); the answer is
torch.addcmul(A, B, C).dtype on the meta device, whose TensorIterator computes one common dtype
over the three with at::native::result_type (no kernel runs, so no dtype is refused for lack of
one). A line: {"operands": ["uint16", "float32@0d", "uint8"], "result": "float32"}, null where
torch raised. The first line records the version and seed.
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
    p.add_argument("--cases", type=int, default=30000)
    args = p.parse_args()
    import torch

    dtypes = measure.torch_dtypes()
    by_dtype = {d: n for n, d in dtypes.items()}
    operands = [x for n in dtypes for x in (n, f"{n}@0d")]
    # Most operands come from the dtypes users compute with (the lattice core, the wide
    # unsigned integers, the float8 types); the rest from the whole catalogue, where most
    # pairs raise.
    common = [x for x in operands if x.partition("@")[0] in measure.TORCH_CORE
              or x.startswith(("uint16", "uint32", "uint64", "float8"))]
    rng = random.Random(args.seed)
    version = torch.__version__.split("+")[0]
    print(json.dumps({"versions": {"python": platform.python_version(), "torch": version},
                      "seed": args.seed}))

    def tensor(n):
        base, _, cat = n.partition("@")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return torch.empty(() if cat == "0d" else (2,), dtype=dtypes[base])

    written, errors = 0, {}
    while written < args.cases:
        case = [rng.choice(common if rng.random() < 0.8 else operands) for _ in range(3)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = torch.addcmul(*[tensor(x) for x in case]).dtype
            result = by_dtype.get(out, str(out).removeprefix("torch."))
        except NotImplementedError:  # no quantized kernel: says nothing of the dtype
            continue
        except (RuntimeError, TypeError) as e:
            msg = str(e)
            # A quantized kernel's failure after the promotion ("empty_strided not supported
            # on quantized tensors", an assertion in ATen/quantized) is not a promotion error;
            # "promoteTypes with quantized numbers is not handled yet" is.
            if "not implemented for" in msg or (
                    "promoteTypes" not in msg and "quantized" in msg):
                continue
            result = None
            errors[str(e).split(",")[0][:60]] = errors.get(str(e).split(",")[0][:60], 0) + 1
        print(json.dumps({"operands": case, "result": result}))
        written += 1
    print(json.dumps(errors, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

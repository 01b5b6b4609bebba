#!/usr/bin/env python3
"""Measures which of TensorFlow 2.21's ops take a Python bool beside a tensor of each dtype
(NumPy behaviour, dtype_conversion_mode="all"), live, and writes
tests/data/kernels/tensorflow_python_bool_cases.jsonl and _expected.jsonl (the `[ops.X]
python_bool_refused_with` declarations of lattices/tensorflow.toml). Usage, from the repository
root, in an environment with TensorFlow:

    scripts/oracle_tensorflow_python_bool.py

Every binary op as the fuzzer calls it (`tf.add` … `tf.equal`, `tnp.less` …; the bool first or
second), `tf.pow`, and `tf.clip_by_value` with a bool bound, over a two-element tensor and a
zero-dim one of every dtype, with True and False: the answer's bits, or the error's kind.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_tensorflow as lib  # noqa: E402
from oracle_common import write_cases  # noqa: E402

tf = lib.tf
CALLS = dict(lib.BINARY, power=tf.pow)


def main():
    cases, expected = [], []

    def emit(op, args, call):
        try:
            r = call()
        except Exception as e:  # noqa: BLE001
            want = {"kind": lib.error_kind(e)}
        else:
            want = {"dtype": r.dtype.name, "shape": r.shape.as_list(), "bits": lib.bits_of(r)}
        cid = len(cases)
        cases.append({"id": cid, "op": op, "args": [lib.arg_json(a) for a in args]})
        expected.append({"id": cid} | want)

    for name in lib.ALL:
        vals = lib.values(name)
        for x in (lib.tensor(name, vals[:2], (2,)), lib.tensor(name, vals[-1:], ())):
            for b in (True, False):
                for op, fn in CALLS.items():
                    emit(op, [x, b], lambda: fn(x, b))
                    emit(op, [b, x], lambda: fn(b, x))
                emit("clip", [x, b, 1], lambda: tf.clip_by_value(x, b, 1))
    write_cases("tensorflow_python_bool", cases, expected)
    print(f"{len(cases)} cases, TensorFlow {tf.__version__}", file=sys.stderr)


main()

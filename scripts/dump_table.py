#!/usr/bin/env python3
"""Measure a live library's binary promotion table and write it as an observed table.

    scripts/dump_table.py numpy -o observed/numpy.json
    typejoin check observed/numpy.json        # the int8/uint8/float16 counterexample
    typejoin diff lattices/jax.toml observed/numpy.json

The measuring is the Python package's (`python/typejoin/measure.py`, also
`typejoin.Table.from_library(name)`); this script is a thin caller that needs neither the
package installed nor its native module. LIBRARY is a key of `measure.DUMPS` (numpy, jax,
torch, torch-categories, tensorflow, tinygrad, array-api-strict) or `all`.
"""

import argparse
import importlib.util
import json
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "typejoin_measure", os.path.join(_here, "..", "python", "typejoin", "measure.py"))
measure = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(measure)


def write(doc, path):
    text = json.dumps(doc, indent=1, ensure_ascii=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    print(f"wrote {path}: {doc['library']} {doc['version']}, {len(doc['dtypes'])} dtypes",
          file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("library", choices=[*measure.DUMPS, "all"])
    p.add_argument("-o", "--output", help="file (or directory for `all`); - for stdout")
    args = p.parse_args()
    if args.library == "all":
        out = args.output or "observed"
        os.makedirs(out, exist_ok=True)
        found = False
        for name, (module, dump) in measure.DUMPS.items():
            if measure.installed(module):
                found = True
                write(dump(), os.path.join(out, f"live_{name.replace('-', '_')}.json"))
            else:
                print(f"skipped {name}: `{module}` is not installed", file=sys.stderr)
        return 0 if found else 2
    module, dump = measure.DUMPS[args.library]
    if not measure.installed(module):
        print(f"error: `{module}` is not installed (pip install {args.library})",
              file=sys.stderr)
        return 2
    write(dump(), args.output or "-")
    return 0


if __name__ == "__main__":
    sys.exit(main())

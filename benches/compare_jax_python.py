#!/usr/bin/env python3
"""Times JAX's own lattice algorithm (pure Python, as in jax/_src/dtypes.py:
_make_lattice_upper_bounds + _least_upper_bound over every pair) on the same lattices as
`cargo bench --bench check`, in the same run, and prints the ratios.

Usage: python3 benches/compare_jax_python.py   (from the crate root; needs cargo, no jax)
"""
import subprocess
import sys
import tomllib

from common import divan_medians, median_of


def upper_bounds(lattice):
    # jax._src.dtypes._make_lattice_upper_bounds, verbatim in structure.
    ub = {node: {node} for node in lattice}
    for n in lattice:
        while True:
            new = set().union(*(lattice[b] for b in ub[n]))
            if n in new:
                raise ValueError(f"cycle detected in type promotion lattice for node {n}")
            if new.issubset(ub[n]):
                break
            ub[n] |= new
    return ub


def join_table(lattice):
    ub = upper_bounds(lattice)
    nodes = list(lattice)
    out = {}
    for a in nodes:
        for b in nodes:
            n = {a, b}
            cub = set.intersection(*(ub[x] for x in n))
            out[a, b] = (cub & n) or {c for c in cub if cub.issubset(ub[c])}
    return out


def grid(rows, cols):
    lat = {}
    for r in range(rows):
        for c in range(cols):
            i = r * cols + c
            succ = []
            if r + 1 < rows:
                succ.append(f"t{i + cols}")
            if c + 1 < cols:
                succ.append(f"t{i + 1}")
            lat[f"t{i}"] = succ
    return lat


def main():
    with open("lattices/jax.toml", "rb") as f:
        spec = tomllib.load(f)
    jax = {d: list(spec["promotes"].get(d, [])) for d in spec["dtypes"]}
    cases = [("jax_35_nodes", jax), ("grid_lattice/100", grid(10, 10)),
             ("grid_lattice/300", grid(15, 20)), ("grid_lattice/1000", grid(25, 40))]
    py = {name: median_of(lambda lat=lat: join_table(lat)) for name, lat in cases}
    bench = divan_medians(subprocess.run(
        ["cargo", "bench", "--bench", "check"], capture_output=True, text=True, check=True
    ).stdout)
    print(f"{'lattice':<14} {'JAX algorithm (Python)':>24} {'typejoin check':>16} {'ratio':>8}")
    for name, _ in cases:
        ours = bench.get(name)
        if ours is None:
            print(f"{name}: no divan figure found", file=sys.stderr)
            continue
        print(f"{name:<14} {py[name] * 1e3:>21.2f} ms {ours * 1e3:>13.3f} ms {py[name] / ours:>7.0f}x")
    print("(typejoin: closure + every join + every law; Python: upper bounds + every pair's LUB only)")


if __name__ == "__main__":
    main()

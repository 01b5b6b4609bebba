"""Helpers shared by the comparison scripts and `scripts/bench`: timing, divan's tables,
whole-process measurements, Markdown tables."""
import os
import re
import subprocess
import time

# The kernel cases `scripts/bench` times (next to NumPy, JAX) and `compare_binaries.py`
# times across two builds: (op, lhs, rhs or `astype`'s destination).
PAIRS = [
    ("add", "float32", "float32"), ("add", "int8", "float32"), ("add", "uint8", "int8"),
    ("add", "int32", "float32"), ("add", "float32", "float64"), ("add", "int64", "float64"),
    ("add", "bfloat16", "float16"), ("add", "bfloat16", "bfloat16"),
    ("add", "float8_e4m3fn", "float8_e4m3fn"), ("astype", "float8_e4m3fn", "float32"),
    ("add", "float16", "float16"), ("add", "complex64", "float32"),
    # A scalar against an array: a Python float and int (weak), a zero-dim bfloat16 array.
    ("add", "float32", "f*"), ("add", "int8", "i*"), ("add", "bfloat16", "bfloat16@0d"),
]
# Casts beyond issue 5's list (--casts): integer ↔ float, float32 ↔ float64, and float64 →
# float16 (NumPy's own cast; one correct rounding from 64-bit lanes here).
CASTS = [
    ("astype", "uint8", "float32"), ("astype", "int32", "float64"),
    ("astype", "float32", "int32"), ("astype", "float64", "int64"),
    ("astype", "float32", "float64"), ("astype", "float64", "float32"),
    ("astype", "float64", "float16"),
]

UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def runs_for(n):
    """Timed runs of a kernel call on `n` elements, 5 to 200: more where a call is short (at
    1e6-1e7 elements the kernels run at the cache's bandwidth, and a few runs leave a ratio to
    the machine's noise)."""
    return max(5, min(200, 10 ** 9 // (n * 10)))


def best(f, runs):
    """The fastest of `runs` calls of `f`, after one warm-up call (seconds)."""
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def median_of(f, budget=2.0, max_runs=50):
    """The median of as many calls of `f` as fit in `budget` seconds (at least one)."""
    times, start = [], time.perf_counter()
    while len(times) < max_runs and (not times or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def divan_medians(text):
    """Every bench's median in seconds from divan's table output, keyed by its path below
    the binary: `jax_35_nodes`, `grid_lattice/100`, `z3_jax_35/associativity`."""
    out, parents = {}, []
    for line in text.splitlines():
        m = re.match(r"^((?:│  |   )*)[├╰]─ (\S+)(.*)$", line)
        if not m:
            continue
        depth = len(m.group(1)) // 3
        parents[depth:] = [m.group(2)]
        cells = m.group(3).split("│")
        if len(cells) < 3:
            continue
        median = cells[2].split()
        if len(median) == 2 and median[1] in UNITS:
            out["/".join(parents)] = float(median[0]) * UNITS[median[1]]
    return out


def run_process(cmd, memory=True):
    """Runs `cmd` to completion, output discarded: (wall s, CPU s, peak resident MB, exit code).

    CPU comes from the child's own resource usage (`os.wait4`), every thread counted. Peak
    memory comes from GNU time (`/usr/bin/time -f %M`) when it is installed and `memory` is
    set, else it is None: Linux carries a process's peak over into what it `exec`s, so a child
    that Python spawned reports at least Python's own peak (measured: 160 MB for a 20 MB check
    after JAX was imported), while GNU time's child is forked from a small process. GNU time
    adds its own process to the wall time (about 2.5 ms: 5.5 ms for a 2.9 ms check), which
    `whole_process` leaves out of short commands.
    """
    import tempfile
    gnu_time = memory and os.path.exists("/usr/bin/time")
    with tempfile.NamedTemporaryFile("r") as out:
        full = ["/usr/bin/time", "-f", "%M", "-o", out.name, *cmd] if gnu_time else cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        # GNU time exits with its child's code, and notes a non-zero one on its first line.
        lines = out.read().split()
        mem = float(lines[-1]) / 1024 if gnu_time and lines else None
    return wall, ru.ru_utime + ru.ru_stime, mem, p.returncode


def whole_process(cmd, runs):
    """The median run of `cmd` by wall time over `runs` runs: (wall s, CPU s, peak MB, code).

    Runs under GNU time for the peak memory; a command of under 0.1 s is then timed again,
    `runs` times, spawned directly (GNU time's own process would be most of its wall time)."""
    results = sorted((run_process(cmd) for _ in range(runs)), key=lambda r: r[0])
    wall, cpu, mem, code = results[len(results) // 2]
    if wall < 0.1:
        direct = sorted((run_process(cmd, memory=False) for _ in range(runs)),
                        key=lambda r: r[0])
        wall, cpu, _, code = direct[len(direct) // 2]
    return wall, cpu, mem, code


def table(headers, rows):
    """A Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def seconds(t):
    """A duration as people read it: µs, ms or s with three significant figures."""
    if t is None:
        return "—"
    if t < 1e-3:
        return f"{t * 1e6:.3g} µs"
    if t < 1:
        return f"{t * 1e3:.3g} ms"
    return f"{t:.3g} s"

"""The `typejoin` command ships in the wheel (issue 42, item 9): `python -m typejoin` and the
console script run the binary's command line, with its output and exit codes."""

import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run(*argv, script=False):
    if script:
        exe = shutil.which("typejoin", path=os.path.dirname(sys.executable))
        assert exe is not None, "the wheel installs a `typejoin` script beside python"
        cmd = [exe, *argv]
    else:
        cmd = [sys.executable, "-m", "typejoin", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)


def test_python_m_typejoin_checks_a_policy():
    r = run("--color", "never", "check", "lattices/jax.toml")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("✓ lattices/jax.toml — lattice `jax`: 35 dtypes"), r.stdout


def test_the_console_script_runs_the_same_command_line():
    ok = run("--color", "never", "check", "lattices/jax.toml", script=True)
    assert ok.returncode == 0, ok.stderr
    # A table that is not a lattice: exit 1; a file that cannot be read: exit 2; usage: 2.
    assert run("check", "observed/numpy.json", script=True).returncode == 1
    bad = run("--color", "never", "check", "nowhere.toml", script=True)
    assert bad.returncode == 2 and "nowhere.toml" in bad.stderr
    usage = run("frobnicate", script=True)
    assert usage.returncode == 2 and "frobnicate" in usage.stderr
    # --version and --help print to stdout and exit 0, as the binary's do.
    version = run("--version", script=True)
    assert version.returncode == 0 and version.stdout.startswith("typejoin ")

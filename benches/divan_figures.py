"""Reads median times out of divan's table output (shared by the comparison scripts)."""
import re

UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def divan_median(text, name):
    """The median of bench `name` in seconds, or None when the table has no such row."""
    m = re.search(rf"{re.escape(name)}\s+\S+ \S+\s+│\s+\S+ \S+\s+│\s+(\S+) (\S+)", text)
    if not m:
        return None
    return float(m.group(1)) * UNITS[m.group(2)]

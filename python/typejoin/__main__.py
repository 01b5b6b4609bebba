"""``python -m typejoin`` and the wheel's ``typejoin`` command: the command line of the
``typejoin`` binary (docs/contracts.md), compiled into the package's native module."""

import signal
import sys

from ._native import cli_main


def main() -> int:
    # Die quietly when stdout is a closed pipe (`typejoin table ... | head`), as the binary and
    # other Unix tools do, instead of failing on the write.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.stdout.flush()
    return cli_main(["typejoin", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())

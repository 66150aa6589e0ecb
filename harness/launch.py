"""The ``harness`` command's entry point: harness.cli's ``main``, after one head start.

A batch on a LocalCluster (``harness parity|swing --batch PATH`` without ``--scheduler``)
forks its Dask workers from a forkserver preloaded with the task's modules and the engines
(harness/sweep/executor.py ``start_forkserver``). Started here, before the command imports
the harness (~0.4 s) and probes the engines (~0.7 s), the server's own imports (~1.3 s)
run beside them, and the workers are up that much sooner: a fixed cost of every batch
(measured on 154 models: first result 2.2-2.5 s → about 1.6 s after process start). The
arguments are only peeked at; harness.cli parses and checks them as always, and
harness.api starts the server itself when this did not (a spelling argparse accepts but
this does not recognise, or a call from Python).
"""
from __future__ import annotations

import sys


def _value(argv: list, name: str):
    """The value of ``name X`` or ``name=X`` in ``argv`` (the last one), else None."""
    found = None
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            found = argv[i + 1]
        elif a.startswith(name + "="):
            found = a[len(name) + 1:]
    return found


def head_start(argv: list) -> bool:
    """Start a batch's worker forkserver if ``argv`` (without the program name) is a
    parity or swing batch on a LocalCluster; True if it was started."""
    if not argv or argv[0] not in ("parity", "swing") or "-h" in argv or "--help" in argv:
        return False
    if _value(argv, "--batch") is None or _value(argv, "--scheduler") is not None:
        return False
    # imported here, before the command's own imports: the forkserver's head start
    from harness.model import registry
    from harness.sweep.executor import engine_preload, start_forkserver

    registry.command_process()  # the server's environment is the command's
    swing = argv[0] == "swing"
    engines = "" if swing and "--no-replay" in argv else _value(argv, "--engines")
    extra = ("harness.api", "harness.swing.run") if swing else ("harness.api",)
    return start_forkserver(engine_preload(engines, extra))


def main() -> int:
    head_start(sys.argv[1:])
    # imported after the head start, so the forkserver starts before the command's imports
    from harness.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())

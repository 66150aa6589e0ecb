"""Targets for processes the tests start from a forkserver (importable by module name)."""
from __future__ import annotations

import sys


def send_imported(conn, names) -> None:
    """Send which of ``names`` this process had imported when it started."""
    conn.send(sorted(n for n in names if n in sys.modules))
    conn.close()

"""Child process of harness/capture/c3d.py: parse one C3D file with ezc3d, write the
result to stdout. Runs apart from the harness because ezc3d (a C++ parser) can crash the
process on a damaged header (measured: 5 of 120 byte-flipped copies of the bundled
capture segfault it); the parent turns any crash into a one-line BadInput.

Output on stdout: one JSON line (labels, rate, units, first frame, screen axes), then the
bytes of an .npz holding ``points`` (4, M, F) float64 in the file's units.
"""
from __future__ import annotations

import io
import json
import sys

import numpy as np


def _value(group, key, default=None):
    try:
        return group[key]["value"]
    except (KeyError, TypeError):
        return default


def main(path: str) -> int:
    import ezc3d  # imported here so a parent never loads the C++ module itself

    try:
        c = ezc3d.c3d(path)
    except Exception as e:  # ezc3d raises OSError/RuntimeError for unreadable files
        sys.stdout.write(json.dumps({"error": " ".join(str(e).split())}) + "\n")
        return 0
    point = c["parameters"].get("POINT", {})
    labels = [str(x) for x in (_value(point, "LABELS") or [])]
    units = [str(x) for x in (_value(point, "UNITS") or [])]
    rate = _value(point, "RATE")
    pts = np.asarray(c["data"]["points"], dtype=np.float64)
    meta = {
        "labels": labels,
        "units": units[0].strip() if units else "",
        "rate": [float(x) for x in np.ravel(rate)] if rate is not None else [],
        "header_rate": float(c["header"]["points"]["frame_rate"]),
        "first_frame": int(c["header"]["points"]["first_frame"]),
        "x_screen": [str(x) for x in (_value(point, "X_SCREEN") or [])],
        "y_screen": [str(x) for x in (_value(point, "Y_SCREEN") or [])],
        "shape": list(pts.shape),
    }
    buf = io.BytesIO()
    np.savez(buf, points=pts)
    sys.stdout.write(json.dumps(meta) + "\n")
    sys.stdout.flush()
    sys.stdout.buffer.write(buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

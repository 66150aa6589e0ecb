"""Read a C3D file into plain arrays. Dimensions: F frames, M point labels; positions in
the file's own units and axes (ingest.py converts to metres, Z-up).

The parse runs in a child process (``_c3d_child.py``) with a memory cap: ezc3d is a C++
parser that segfaults on some damaged headers and allocates whatever a header claims, so
a bad file must not take the harness (or the machine) with it. Any failure of the child
— a crash, an error it reports, a timeout, malformed output — becomes one ``BadInput``
naming the file. Nothing from the file is evaluated; arrays come back as a plain .npz
read with ``allow_pickle=False``.
"""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.core.errors import BadInput

_CHILD = Path(__file__).with_name("_c3d_child.py")
_MEMORY_CAP_BYTES = 4 * 1024**3   # a 654-frame, 38-marker capture needs < 100 MB
_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class RawC3D:
    """What the file holds. points (F, M, 3) in ``units``; NaN where a marker is missing."""
    path: str
    labels: tuple
    points: np.ndarray
    rate_hz: float
    units: str
    first_frame: int
    x_screen: str
    y_screen: str


def _limit_memory():  # runs in the child before exec
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_CAP_BYTES, _MEMORY_CAP_BYTES))


def read_c3d(path) -> RawC3D:
    """Parse ``path``; raises BadInput("<path>: ...") for anything that is not a readable
    C3D file with 3D point data."""
    where = str(path)
    p = Path(path)
    if not p.is_file():
        raise BadInput(where, "no such file")
    with open(p, "rb") as fh:
        head = fh.read(512)
    # C3D header: byte 0 = first parameter block (1-based), byte 1 = 0x50 key.
    if len(head) < 512 or head[1] != 0x50:
        raise BadInput(where, "not a C3D file (no 0x50 key in the 512-byte header)")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    try:
        proc = subprocess.run([sys.executable, str(_CHILD), str(p.resolve())],
                              capture_output=True, timeout=_TIMEOUT_S, env=env,
                              preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        raise BadInput(where, f"C3D parser did not finish in {_TIMEOUT_S:.0f} s")
    if proc.returncode != 0:
        rc = proc.returncode
        why = (f"killed by signal {signal.Signals(-rc).name}" if rc < 0 and
               -rc in signal.valid_signals() else f"exit code {rc}")
        raise BadInput(where, f"damaged C3D file: the parser (ezc3d) crashed ({why})")
    out = proc.stdout
    nl = out.find(b"\n")
    try:
        meta = json.loads(out[:nl].decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise BadInput(where, "damaged C3D file: the parser returned no readable header")
    if "error" in meta:
        raise BadInput(where, f"not a readable C3D file ({meta['error'][:200]})")
    try:
        with np.load(io.BytesIO(out[nl + 1:]), allow_pickle=False) as z:
            pts = np.array(z["points"], dtype=np.float64)
    except Exception as e:
        raise BadInput(where, f"damaged C3D file: point data unreadable ({type(e).__name__})")
    labels = meta.get("labels", [])
    if pts.ndim != 3 or pts.shape[0] < 3 or pts.shape[1] == 0 or pts.shape[2] == 0:
        raise BadInput(where, f"no 3D point data in the file (points shape {list(pts.shape)})")
    if len(labels) != pts.shape[1]:
        raise BadInput(where, f"{len(labels)} point labels for {pts.shape[1]} points")
    rate = meta.get("rate") or [meta.get("header_rate", 0.0)]
    rate_hz = float(rate[0]) if rate else 0.0
    if not np.isfinite(rate_hz) or rate_hz <= 0 or rate_hz > 1e6:
        raise BadInput(where, f"point frame rate {rate_hz!r} Hz is not a positive finite rate")
    return RawC3D(path=where, labels=tuple(labels),
                  points=np.ascontiguousarray(np.moveaxis(pts[:3], (0, 1, 2), (2, 1, 0))),
                  rate_hz=rate_hz, units=str(meta.get("units", "")),
                  first_frame=int(meta.get("first_frame", 0)),
                  x_screen=(meta.get("x_screen") or [""])[0],
                  y_screen=(meta.get("y_screen") or [""])[0])

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
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.core.errors import BadInput, printable
from harness.core.strict import MAX_C3D_BYTES, open_regular

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


def _declared_frames(head: bytes, param_head: bytes) -> tuple:
    """(frames, bytes per frame, first data byte) the 512-byte C3D header declares. Words
    (16 bit, the byte order of the processor named in the parameter section's 4th byte:
    84 Intel, 85 DEC, 86 MIPS): 2 points, 3 analog values per frame, 4–5 first and last
    frame, 7–8 scale (float; negative: values stored as 4-byte floats, else 2-byte ints),
    9 first block of the data."""
    proc = param_head[3] if len(param_head) >= 4 else 84
    e = ">" if proc == 86 else "<"
    points, analog, first, last = struct.unpack(e + "4H", head[2:10])
    sign = {84: head[15], 85: head[13], 86: head[12]}.get(proc, head[15]) & 0x80
    start = (struct.unpack(e + "H", head[16:18])[0] - 1) * 512
    per_frame = (4 * points + analog) * (4 if sign else 2)
    return max(last - first + 1, 0), per_frame, start


def _check_complete(where, head: bytes, param_head: bytes, size: int) -> None:
    """BadInput if the file is shorter than the frames its header declares (a truncated
    copy must not pass for a shorter capture)."""
    frames, per_frame, start = _declared_frames(head, param_head)
    need = start + frames * per_frame
    if per_frame > 0 and start >= 0 and size < need:
        held = max(size - start, 0) // per_frame
        raise BadInput(where, f"truncated: its header declares {frames} frames "
                              f"({need} bytes), the file has {size} bytes ({held} complete "
                              f"frames, {need - size} bytes missing)")


def _limit_memory():  # runs in the child before exec
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_CAP_BYTES, _MEMORY_CAP_BYTES))


def read_c3d(path: str | os.PathLike[str]) -> RawC3D:
    """Parse ``path``; raises BadInput("<path>: ...") for anything that is not a readable
    C3D file with 3D point data."""
    where = str(path)
    p = Path(path)
    if not os.path.lexists(p):
        raise BadInput(where, "no such file")
    with open_regular(p, "a C3D file", MAX_C3D_BYTES) as fh:
        size = os.fstat(fh.fileno()).st_size
        head = fh.read(512)
        # C3D header: byte 0 = first parameter block (1-based), byte 1 = 0x50 key.
        if len(head) < 512 or head[1] != 0x50:
            raise BadInput(where, "not a C3D file (no 0x50 key in the 512-byte header)")
        fh.seek(max(head[0] - 1, 0) * 512)
        param_head = fh.read(4)
    _check_complete(where, head, param_head, size)
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
    declared = _declared_frames(head, param_head)[0]
    if pts.shape[2] < declared:
        raise BadInput(where, f"holds {pts.shape[2]} of the {declared} frames its header "
                              "declares")
    # labels are text from the file: control characters (ANSI escapes) never reach a
    # terminal or a report raw
    labels = [printable(str(x)) for x in labels]
    return RawC3D(path=where, labels=tuple(labels),
                  points=np.ascontiguousarray(np.moveaxis(pts[:3], (0, 1, 2), (2, 1, 0))),
                  rate_hz=rate_hz, units=str(meta.get("units", "")),
                  first_frame=int(meta.get("first_frame", 0)),
                  x_screen=(meta.get("x_screen") or [""])[0],
                  y_screen=(meta.get("y_screen") or [""])[0])

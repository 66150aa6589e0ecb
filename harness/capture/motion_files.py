"""OpenSim's motion-data files, read engine-blind: marker trajectories (.trc, or a C3D's
points: ``read_markers``), motion and
storage tables (.mot, .sto) and ExternalLoads (.xml) with the forces table they name.

Dimensions: F frames (rows), K markers, C columns. Units: s; marker positions in m (a .trc
in mm is scaled); a table's columns as the file holds them (``in_degrees`` says whether its
rotations are in degrees). Every problem is a BadInput naming the file.

ExternalLoads (OpenSim's format): an ``<ExternalLoads>`` with a ``<datafile>`` (a .mot or
.sto, relative to the .xml's folder) and per ``<ExternalForce>``: ``applied_to_body``,
``force_expressed_in_body``, ``point_expressed_in_body``, ``force_identifier`` (its three
columns are the identifier followed by x, y, z), ``point_identifier``, ``torque_identifier``
(either may be empty: no point means the body's origin, no torque none). OpenSim spline
each column of the data through every sample (a natural cubic for four samples or more,
piecewise linear for two or three, a constant for one: ``ExternalForce``) and evaluates
it at the kinematics' times; ``AppliedLoads.at`` does the same.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from harness.capture.c3d import read_c3d
from harness.core.errors import BadInput
from harness.core.strict import read_regular

MAX_DATA_BYTES = 64 * 1024 * 1024


def _text(path: str, what: str) -> str:
    raw = read_regular(path, what, MAX_DATA_BYTES)
    if not raw.strip():
        raise BadInput(path, "file is empty")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BadInput(path, f"not a UTF-8 text file (invalid byte at offset {e.start})"
                       ) from None


@dataclass(frozen=True)
class Markers:
    """t (F,) s; labels (K,); xyz (F, K, 3) m, NaN where a marker is not seen."""
    t: NDArray[np.float64]
    labels: tuple[str, ...]
    xyz: NDArray[np.float64]
    rate_hz: float


def _trc_header(keys_line: str, values_line: str) -> dict[str, str]:
    """{name: value} of a .trc's second and third lines. Fields are tab-separated; some
    writers pad them with empty fields (``100.0<tab><tab>100.0``) or spaces: when the
    non-empty names and values are as many, they pair in order (OpenSim's reader drops
    the empty fields), else field by field."""
    keys, vals = keys_line.split("\t"), values_line.split("\t")
    k2, v2 = [k.strip() for k in keys if k.strip()], [v.strip() for v in vals if v.strip()]
    if len(k2) == len(v2):
        return dict(zip(k2, v2))
    return {k.strip(): v.strip() for k, v in zip(keys, vals)}


def read_trc(path: str) -> Markers:
    """The .trc at ``path`` (OpenSim's PathFileType 4 layout: a header row of names and
    values, a row of marker labels, a row of X1 Y1 Z1 …, then Frame#, Time, 3 values per
    marker; empty fields are unseen markers)."""
    lines = _text(path, "a .trc marker file").splitlines()
    if len(lines) < 6 or not lines[0].startswith("PathFileType"):
        raise BadInput(path, "not a .trc marker file (no PathFileType header line)")
    head = _trc_header(lines[1], lines[2])
    units = head.get("Units", "mm")
    scale = {"mm": 1e-3, "m": 1.0, "cm": 1e-2}.get(units)
    if scale is None:
        raise BadInput(path, f"unknown marker units {units!r} (mm, cm or m)")
    names = lines[3].split("\t")
    if len(names) < 3 or names[0].strip() != "Frame#" or names[1].strip() != "Time":
        raise BadInput(path, "line 4 does not start with Frame# and Time")
    labels = tuple(n.strip() for n in names[2::3] if n.strip())
    if len(set(labels)) != len(labels):
        raise BadInput(path, "a marker label appears twice")
    rows = []
    for i, line in enumerate(lines[5:], start=6):
        if not line.strip():
            continue
        f = line.split("\t")
        try:
            vals_ = [float(x) if x.strip() else np.nan for x in f[1:2 + 3 * len(labels)]]
        except ValueError:
            raise BadInput(path, f"line {i}: a field is not a number") from None
        vals_ += [np.nan] * (1 + 3 * len(labels) - len(vals_))
        rows.append(vals_)
    if not rows:
        raise BadInput(path, "no frames")
    a = np.array(rows, dtype=float)
    t = a[:, 0]
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise BadInput(path, "the Time column is not finite and increasing")
    xyz = a[:, 1:].reshape(len(t), len(labels), 3) * scale
    rate = float(head.get("DataRate", 0) or 0) or float(1.0 / np.median(np.diff(t)))
    return Markers(t, labels, xyz, rate)


_C3D_UNITS = {"mm": 1e-3, "m": 1.0}


def read_markers(path: str) -> Markers:
    """The marker trajectories of a .c3d (``read_c3d_markers``) or, any other name, a .trc
    (``read_trc``)."""
    return read_c3d_markers(path) if path.lower().endswith(".c3d") else read_trc(path)


def read_c3d_markers(path: str) -> Markers:
    """The 3D points of the C3D at ``path`` (harness/capture/c3d.py: ezc3d in a child
    process) as markers: POINT:UNITS mm or m → m, every point label a marker (labels
    repeated are refused), NaN where a point is missing, frame i at t = i / rate s (the
    first frame at 0, as ``harness swing`` reads a capture). The file's axes are kept as
    they are: no up axis is inferred or turned (docs/track.md)."""
    raw = read_c3d(path)
    unit = raw.units.strip().lower()
    if unit not in _C3D_UNITS:
        raise BadInput(path, f"POINT:UNITS {raw.units!r} is neither 'mm' nor 'm'")
    if len(set(raw.labels)) != len(raw.labels):
        dup = sorted({lab for lab in raw.labels if raw.labels.count(lab) > 1})
        raise BadInput(path, f"duplicate point labels: {', '.join(map(repr, dup))}")
    X = raw.points * _C3D_UNITS[unit]
    X = np.where(np.isfinite(X).all(axis=2, keepdims=True), X, np.nan)
    if not np.isfinite(X).any():
        raise BadInput(path, "no valid marker sample in the file")
    t = np.arange(X.shape[0]) / raw.rate_hz
    return Markers(t, tuple(raw.labels), X, raw.rate_hz)


def trc_text(markers: Markers, name: str) -> str:
    """``markers`` as a .trc (PathFileType 4) in metres, every number with 17 significant
    digits (read back bit for bit), a missing sample left blank."""
    k = len(markers.labels)
    r = f"{markers.rate_hz:.17g}"
    out = [f"PathFileType\t4\t(X/Y/Z)\t{name}",
           "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\t"
           "OrigDataStartFrame\tOrigNumFrames",
           f"{r}\t{r}\t{len(markers.t)}\t{k}\tm\t{r}\t1\t{len(markers.t)}",
           "\t".join(["Frame#", "Time"] + [x for lab in markers.labels for x in (lab, "", "")]),
           "\t".join(["", ""] + [f"{a}{i + 1}" for i in range(k) for a in "XYZ"]), ""]
    for i, ti in enumerate(markers.t):
        cells = [str(i + 1), f"{ti:.17g}"]
        for p in markers.xyz[i]:
            cells += [f"{x:.17g}" for x in p] if np.all(np.isfinite(p)) else [""] * 3
        out.append("\t".join(cells))
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Table:
    """t (F,) s; columns (C,) names (time excluded); data (F, C); in_degrees."""
    t: NDArray[np.float64]
    columns: tuple[str, ...]
    data: NDArray[np.float64]
    in_degrees: bool

    def column(self, name: str, path: str) -> NDArray[np.float64]:
        """(F,) of column ``name``; BadInput(path) if the table has none."""
        if name not in self.columns:
            raise BadInput(path, f"no column {name!r}")
        return self.data[:, self.columns.index(name)]


def read_table(path: str) -> Table:
    """A .mot or .sto (a header ending in ``endheader``, a row of column names whose first
    is time, then rows of numbers)."""
    lines = _text(path, "a .mot/.sto table").splitlines()
    try:
        end = next(i for i, s in enumerate(lines) if s.strip().lower() == "endheader")
    except StopIteration:
        raise BadInput(path, "not a .mot/.sto table (no endheader line)") from None
    head = "\n".join(lines[:end]).replace(" ", "").lower()
    names = lines[end + 1].split() if end + 1 < len(lines) else []
    if not names or names[0].lower() != "time":
        raise BadInput(path, "the first column after endheader is not time")
    try:
        rows = [[float(x) for x in s.split()] for s in lines[end + 2:] if s.strip()]
    except ValueError:
        raise BadInput(path, "a field after the column names is not a number") from None
    if not rows or any(len(r) != len(names) for r in rows):
        raise BadInput(path, f"no rows, or a row without {len(names)} numbers")
    a = np.array(rows, dtype=float)
    if np.any(np.diff(a[:, 0]) <= 0):
        raise BadInput(path, "the time column is not increasing")
    return Table(a[:, 0], tuple(names[1:]), a[:, 1:], "indegrees=yes" in head)


@dataclass(frozen=True)
class ExternalForce:
    """One ``<ExternalForce>``: names of the bodies and of the columns (empty: none)."""
    name: str
    body: str
    force_in: str
    point_in: str
    force_id: str
    point_id: str
    torque_id: str


def read_external_loads(path: str) -> tuple[list[ExternalForce], str, Table]:
    """(forces, the data file's path, its table) of the ExternalLoads .xml at ``path``.
    BadInput(path, problem) for a malformed file or a force whose columns the data file
    lacks."""
    text = _text(path, "an ExternalLoads .xml file")
    if "<!DOCTYPE" in text.upper() or "<!ENTITY" in text.upper():
        raise BadInput(path, "contains a DTD or entity declaration (rejected)")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise BadInput(path, f"not well-formed XML ({e})") from None
    el = root.find(".//ExternalLoads")
    if el is None:
        raise BadInput(path, "no <ExternalLoads> element")

    def get(e: ET.Element, tag: str) -> str:
        x = e.find(tag)
        return (x.text or "").strip() if x is not None else ""

    forces = []
    for f in el.iter("ExternalForce"):
        if get(f, "isDisabled").lower() == "true" or get(f, "appliesForce").lower() == "false":
            continue
        forces.append(ExternalForce(f.get("name", "?"), get(f, "applied_to_body"),
                                    get(f, "force_expressed_in_body") or "ground",
                                    get(f, "point_expressed_in_body") or "ground",
                                    get(f, "force_identifier"), get(f, "point_identifier"),
                                    get(f, "torque_identifier")))
    datafile = get(el, "datafile")
    if not datafile:
        raise BadInput(path, "<ExternalLoads> names no <datafile>")
    data_path = os.path.join(os.path.dirname(os.path.abspath(path)), datafile)
    if not os.path.exists(data_path):
        raise BadInput(path, f"its datafile {datafile} does not exist ({data_path})")
    table = read_table(data_path)
    for f in forces:
        if not f.body:
            raise BadInput(path, f"ExternalForce {f.name} names no applied_to_body")
        if not f.force_id:
            raise BadInput(path, f"ExternalForce {f.name} has no force_identifier")
        for ident in (f.force_id, f.point_id, f.torque_id):
            for ax in ("x", "y", "z") if ident else ():
                if ident + ax not in table.columns:
                    raise BadInput(path, f"ExternalForce {f.name}: column {ident + ax} is not "
                                   f"in {datafile}")
    return forces, data_path, table


def spline_columns(t: NDArray[np.float64], Y: NDArray[np.float64],
                   at: NDArray[np.float64]) -> NDArray[np.float64]:
    """Y (N, c) sampled at t (N,) s, evaluated at ``at`` (M,) s as OpenSim's ExternalForce
    does: a natural cubic spline through every sample (N ≥ 4), piecewise linear (N = 2, 3),
    a constant (N = 1); (M, c)."""
    if len(t) == 1:
        return np.repeat(Y[:1], len(at), axis=0)
    if len(t) < 4:
        return np.stack([np.interp(at, t, y) for y in Y.T], axis=1)
    from scipy.interpolate import CubicSpline  # heavy: imported on use

    out: NDArray[np.float64] = CubicSpline(t, Y, axis=0, bc_type="natural")(at)
    return out


def table_text(name: str, t: NDArray[np.float64], columns: Sequence[str],
               data: NDArray[np.float64], in_degrees: bool) -> str:
    """A .mot/.sto table (OpenSim's layout) of data (F, C) at t (F,) s, every number with
    17 significant digits (read back bit for bit)."""
    head = [name, "version=1", f"nRows={len(t)}", f"nColumns={len(columns) + 1}",
            f"inDegrees={'yes' if in_degrees else 'no'}", "endheader",
            "\t".join(["time", *columns])]
    rows = ["\t".join(f"{x:.17g}" for x in (ti, *row)) for ti, row in zip(t, data)]
    return "\n".join(head + rows) + "\n"

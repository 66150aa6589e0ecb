"""Capture ingestion: a C3D file → a validated marker capture in harness conventions.

Dimensions: F frames, M markers. Output positions X (F, M, 3) in metres, world axes Z-up
(the harness convention, gravity −9.81 z), time t (F,) in seconds from the first frame.
NaN marks a missing sample.

Steps, each reported in ``Capture.report()``:
1. read (harness/capture/c3d.py; a damaged file is one BadInput line, never a crash);
2. units: POINT:UNITS 'mm' → × 1e-3, 'm' → × 1; anything else is refused;
3. axes: the file's up axis ('+y' for the bundled capture) is rotated onto +z by a proper
   rotation with integer entries; ``up='auto'`` infers it from the marker set's
   head-above-toes markers and refuses an ambiguous answer;
4. required labels of the marker set present, else BadInput naming the missing ones;
5. gap report per marker: missing fraction, number of gaps, longest gap [s];
6. rejection of physically impossible markers: a speed between two valid samples above
   ``capture/max_marker_speed`` rejects the whole marker (reported with the speed and the
   frame);
7. optional zero-phase low-pass filter (Butterworth, order 4 as filtfilt ⇒ effective 8,
   stated cut-off [Hz]) on each gap-free segment; segments too short to filter are kept
   raw and counted.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from harness.capture.c3d import read_c3d
from harness.capture.markerset import DRIVER_SWING, MarkerSet
from harness.core.errors import BadInput
from harness.core.strict import holds_warnings
from harness.core.tolerances import lookup

# Proper rotations (det +1, integer entries) taking each signed file axis onto +z.
_TO_Z_UP = {
    "+z": np.eye(3),
    "-z": np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, -1]]),
    "+y": np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]),    # R_x(+90°): (x, y, z) → (x, −z, y)
    "-y": np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]),    # R_x(−90°)
    "+x": np.array([[0.0, 0, -1], [0, 1, 0], [1, 0, 0]]),    # R_y(−90°)
    "-x": np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]]),    # R_y(+90°)
}
UP_CHOICES = ("auto",) + tuple(_TO_Z_UP)
_UNITS = {"mm": 1e-3, "m": 1.0}
FILTER_ORDER = 4


@dataclass
class MarkerGaps:
    missing_fraction: float
    n_gaps: int
    longest_gap_s: float


@dataclass
class Capture:
    """A validated capture. X (F, M, 3) m, Z-up; t (F,) s; labels (M,) in file order."""
    source: str
    sha256: str
    rate_hz: float
    t: np.ndarray
    labels: tuple
    X: np.ndarray
    markerset: MarkerSet
    units_in_file: str
    up_axis: str
    up_source: str              # "option" or "inferred (…)"
    R_file_to_world: np.ndarray
    gaps: dict = field(default_factory=dict)        # label -> MarkerGaps
    rejected: dict = field(default_factory=dict)    # label -> reason
    filter: dict | None = None

    @property
    def n_frames(self) -> int:
        return self.X.shape[0]

    def index(self, label: str) -> int:
        return self.labels.index(label)

    def marker(self, label: str) -> np.ndarray:
        """(F, 3) m of one marker; raises BadInput for a rejected or unknown label."""
        if label in self.rejected:
            raise BadInput(self.source, f"marker {label!r} was rejected: {self.rejected[label]}")
        if label not in self.labels:
            raise BadInput(self.source, f"no marker {label!r} in the capture")
        return self.X[:, self.index(label)]

    def usable(self, labels: Iterable[str]) -> list[str]:
        """The ``labels`` that are in the capture and not rejected, in their order."""
        return [l for l in labels if l in self.labels and l not in self.rejected]

    def report(self) -> dict:
        """JSON-ready summary of everything ingestion did."""
        return {
            "source": self.source, "sha256": self.sha256, "frames": self.n_frames,
            "rate_hz": self.rate_hz, "duration_s": self.n_frames / self.rate_hz,
            "units_in_file": self.units_in_file, "up_axis_in_file": self.up_axis,
            "up_axis_source": self.up_source, "markerset": self.markerset.name,
            "R_file_to_world": self.R_file_to_world.tolist(),
            "gaps": {k: vars(g) for k, g in self.gaps.items()},
            "rejected": dict(self.rejected), "filter": self.filter,
            "unassigned": [l for l in self.labels if l not in self.markerset.tracked
                           and l not in self.rejected],
        }


def _segments(valid: np.ndarray):
    """[(start, stop)] of runs of True in a (F,) mask."""
    d = np.diff(np.r_[0, valid.astype(np.int8), 0])
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1)))


def gap_report(x: np.ndarray, rate_hz: float) -> MarkerGaps:
    """x (F, 3) m one marker's samples (NaN where unseen) at ``rate_hz`` [Hz]: its
    MarkerGaps (unseen fraction, gap count, longest gap [s])."""
    valid = np.isfinite(x).all(axis=1)
    gaps = _segments(~valid)
    # A gap open at either end of the recording is still a gap of that marker.
    longest = max((b - a for a, b in gaps), default=0)
    return MarkerGaps(float(1.0 - valid.mean()), len(gaps), float(longest) / rate_hz)


def impossible_motion(x: np.ndarray, rate_hz: float,
                      vmax: float) -> tuple[float, int] | None:
    """(speed m/s, frame) of the fastest step between consecutive valid samples if it
    exceeds vmax, else None. x (F, 3) m."""
    idx = np.flatnonzero(np.isfinite(x).all(axis=1))
    if idx.size < 2:
        return None
    speed = np.linalg.norm(np.diff(x[idx], axis=0), axis=1) / (np.diff(idx) / rate_hz)
    k = int(np.argmax(speed))
    return (float(speed[k]), int(idx[k + 1])) if speed[k] > vmax else None


def lowpass(X: np.ndarray, rate_hz: float, cutoff_hz: float,
            where: str) -> tuple[np.ndarray, int]:
    """Zero-phase Butterworth low-pass of every gap-free segment. X (F, M, 3) m.
    Returns (filtered X, number of segments too short to filter)."""
    from scipy.signal import butter, filtfilt

    nyq = 0.5 * rate_hz
    if not (np.isfinite(cutoff_hz) and 0 < cutoff_hz < nyq):
        raise BadInput(where, f"filter cut-off {cutoff_hz!r} Hz must lie in (0, {nyq:g}) Hz "
                              f"(Nyquist of {rate_hz:g} Hz)")
    b, a = butter(FILTER_ORDER, cutoff_hz / nyq)
    padlen = 3 * max(len(a), len(b))
    Y = X.copy()
    short = 0
    for m in range(X.shape[1]):
        valid = np.isfinite(X[:, m]).all(axis=1)
        for s, e in _segments(valid):
            if e - s <= padlen:
                short += 1
                continue
            Y[s:e, m] = filtfilt(b, a, X[s:e, m], axis=0)
    return Y, short


def _infer_up(where, X, labels, ms: MarkerSet):
    def mean_of(names: Sequence[str]) -> NDArray[np.float64]:
        idx = [labels.index(n) for n in names]
        return np.nanmean(X[:, idx].reshape(-1, 3), axis=0)

    d = mean_of(ms.up_top) - mean_of(ms.up_bottom)
    if not np.isfinite(d).all() or np.linalg.norm(d) == 0:
        raise BadInput(where, "cannot infer the up axis (head/toe markers never seen); pass --up")
    k = int(np.argmax(np.abs(d)))
    align = abs(d[k]) / np.linalg.norm(d)
    need = lookup("capture", "up_axis_alignment").atol
    if align < need:
        raise BadInput(where, f"cannot infer the up axis: head-minus-toes direction lies "
                              f"{np.degrees(np.arccos(align)):.0f}° from the nearest axis; "
                              "pass --up")
    axis = ("+" if d[k] > 0 else "-") + "xyz"[k]
    return axis, (f"inferred ({'+'.join(ms.up_top)} above {'+'.join(ms.up_bottom)}, "
                  f"{align:.3f} aligned)")


@holds_warnings
def ingest(path: str | os.PathLike[str], markerset: MarkerSet = DRIVER_SWING, up: str = "auto",
           cutoff_hz: float | None = None) -> Capture:
    """Read and validate a capture. Raises BadInput naming the file on any problem (alone:
    numpy's warnings on the way are dropped with it)."""
    where = str(path)
    if up not in UP_CHOICES:
        raise BadInput("--up", f"{up!r} is not one of {', '.join(UP_CHOICES)}")
    raw = read_c3d(path)
    unit = raw.units.strip().lower()
    if unit not in _UNITS:
        raise BadInput(where, f"POINT:UNITS {raw.units!r} is neither 'mm' nor 'm'")
    missing = [l for l in markerset.required if l not in raw.labels]
    if missing:
        raise BadInput(where, f"lacks needed markers of marker set {markerset.name}: "
                              f"{', '.join(missing)}")
    if len(set(raw.labels)) != len(raw.labels):
        dup = sorted({l for l in raw.labels if raw.labels.count(l) > 1})
        raise BadInput(where, f"duplicate point labels: {', '.join(map(repr, dup))}")
    X = raw.points * _UNITS[unit]
    X = np.where(np.isfinite(X).all(axis=2, keepdims=True), X, np.nan)
    finite = X[np.isfinite(X)]
    if finite.size == 0:
        raise BadInput(where, "no valid marker sample in the file")
    if np.abs(finite).max() > 1e4:
        raise BadInput(where, f"marker coordinates up to {np.abs(finite).max():.3g} m: not a "
                              f"capture volume (units {raw.units!r} wrong?)")
    labels = list(raw.labels)
    vmax = lookup("capture", "max_marker_speed").atol
    rejected = {}
    for m, l in enumerate(labels):
        hit = impossible_motion(X[:, m], raw.rate_hz, vmax)
        if hit:
            rejected[l] = (f"moves at {hit[0]:.0f} m/s into frame {hit[1]} (limit {vmax:g} m/s "
                           f"between valid samples): a jumping marker, rejected whole")
    bad_required = [l for l in markerset.required if l in rejected]
    if bad_required:
        raise BadInput(where, f"needed markers rejected as impossible: "
                              f"{'; '.join(f'{l} {rejected[l]}' for l in bad_required)}")
    if up == "auto":
        axis, source = _infer_up(where, X, labels, markerset)
    else:
        axis, source = up, "option"
    R = _TO_Z_UP[axis]
    X = X @ R.T
    gaps = {l: gap_report(X[:, m], raw.rate_hz) for m, l in enumerate(labels)}
    filt = None
    if cutoff_hz is not None:
        X, short = lowpass(X, raw.rate_hz, float(cutoff_hz), "--cutoff")
        filt = {"kind": "butterworth low-pass, zero-phase (filtfilt)", "order": FILTER_ORDER,
                "cutoff_hz": float(cutoff_hz), "segments_left_raw": short}
    sha = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    t = np.arange(X.shape[0]) / raw.rate_hz
    return Capture(source=where, sha256=sha, rate_hz=raw.rate_hz, t=t, labels=tuple(labels),
                   X=X, markerset=markerset, units_in_file=raw.units, up_axis=axis,
                   up_source=source, R_file_to_world=R, gaps=gaps, rejected=rejected,
                   filter=filt)

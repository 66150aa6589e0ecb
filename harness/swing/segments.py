"""The segmented replay of a swing fit: the replay knots tiled into segments, each no
longer than the predictability horizon of the whole-window replay and each started from
the fitted state at its start (as in multiple shooting), so that the engines' open-loop
replay is scored over the whole fitted window, the ball impact included.

Dimension legend: R replay knots (the impact's time repeated: left, then right limit);
K tracked markers; F frames; nq, nv canonical. Units: s, m, rad.

The segment holding the impact starts before it and integrates through it: the
candidate's event applies the fit's reset map M(v⁺ − v⁻) = JᵀΛ with the fitted Λ
(harness/model/integrators.py impulse_reset, each engine's own M and J), as the
whole-window replay does. A boundary therefore never falls on the impact's two knots.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.stages.replay import segments as tiling

BUNDLE = "replay_segments"  # the segments' evidence bundle, DIR/replay_segments/
# the engine-blind tiling (harness/stages/replay/segments.py), under the names the swing uses
boundaries, tile, candidate = tiling.boundaries, tiling.tile, tiling.candidate
case_name, record_counts, degree_of = tiling.case_name, tiling.record_counts, tiling.degree_of


def _at_frames(t: NDArray[np.float64], P: NDArray[np.float64],
               tf: NDArray[np.float64]) -> NDArray[np.float64]:
    """P (n, K, 3) on knots t (n,) [s] linearly interpolated at times tf (F,) [s] inside
    [t[0], t[-1]] (an impact's repeated knot: the interval on its side)."""
    k = np.clip(np.searchsorted(t, tf, side="right") - 1, 0, t.size - 2)
    span = t[k + 1] - t[k]
    w = np.where(span > 0, (tf - t[k]) / np.where(span > 0, span, 1.0), 0.0)
    return P[k] * (1 - w)[:, None, None] + P[k + 1] * w[:, None, None]


def _rmse(P: NDArray[np.float64], Y: NDArray[np.float64]) -> float:
    """RMS [m] of |P − Y| over the markers seen (Y NaN: unseen); NaN when none is."""
    d = np.linalg.norm(P - Y, axis=2)
    return float(np.sqrt(np.nanmean(d ** 2))) if np.isfinite(d).any() else float("nan")


def compare(t: NDArray[np.float64], a: int, b: int, fitted: NDArray[np.float64],
            engines: Mapping[str, NDArray[np.float64]], t_frames: NDArray[np.float64],
            Y: NDArray[np.float64]) -> dict:
    """One segment's figures: per engine its replayed markers ((b − a + 1, K, 3) m at
    knots a … b) against the fitted ones (``fitted`` (R, K, 3) m) at every knot (RMS,
    max) and against the measured markers Y (F, K, 3) m at the frame times t_frames (F,)
    [s] inside the segment (RMSE, the engine's markers interpolated linearly between
    knots); the fit's own RMSE there, interpolated the same way."""
    ts, fs = t[a:b + 1], fitted[a:b + 1]
    inside = (t_frames >= ts[0]) & (t_frames <= ts[-1])
    tf, Yf = t_frames[inside], Y[inside]
    out: dict[str, Any] = {"frames": int(inside.sum()),
                           "fit_markers_rmse_m": _rmse(_at_frames(ts, fs, tf), Yf),
                           "engines": {}}
    for e, P in engines.items():
        d = np.linalg.norm(P - fs, axis=2)
        out["engines"][e] = {"fit_rms_m": float(np.sqrt(np.mean(d ** 2))),
                             "fit_max_m": float(d.max()),
                             "markers_rmse_m": _rmse(_at_frames(ts, P, tf), Yf)}
    return out


def passed(seg: Mapping[str, Any], engines: Sequence[str], horizon_s: float) -> bool:
    """Whether segment ``seg`` (an entry of fit.json's ``replay.segments.list``), no
    longer than ``horizon_s`` [s], was compared in every one of ``engines`` and passed
    there: each engine's replayed markers within the segment's limit of the fit's (RMS,
    ``limit_m``), and every one of its replay records (at least one) passed."""
    rec = seg.get("records") or {}
    got = seg.get("engines") or {}
    return (bool(engines) and all(e in got for e in engines)
            and seg["t_s"][1] - seg["t_s"][0] <= horizon_s
            and all(got[e]["fit_rms_m"] <= seg["limit_m"] for e in engines)
            and rec.get("total", 0) > 0 and rec.get("passed") == rec.get("total"))


def compared(seg: Mapping[str, Any], engines: Sequence[str]) -> bool:
    """Whether every one of ``engines`` replayed segment ``seg`` and it holds records."""
    return (bool(engines) and all(e in (seg.get("engines") or {}) for e in engines)
            and (seg.get("records") or {}).get("total", 0) > 0)


def scored_window(section: Mapping[str, Any] | None) -> list[float] | None:
    """[start, end] [s] of the segments compared in every engine, from the first one on
    while they follow each other without a gap (None: none compared)."""
    segs = (section or {}).get("list") or []
    eng = (section or {}).get("engines") or []
    end = None
    for s in segs:
        if not compared(s, eng) or (end is not None and s["t_s"][0] != end[1]):
            break
        end = [segs[0]["t_s"][0], s["t_s"][1]]
    return end


def through_impact(section: Mapping[str, Any] | None) -> bool:
    """True only when the segment holding the impact exists, was compared in every
    engine of the segmented replay and passed there (``passed``)."""
    segs = (section or {}).get("list") or []
    eng = (section or {}).get("engines") or []
    hold = [s for s in segs if s.get("holds_impact")]
    return bool(hold) and all(passed(s, eng, section["horizon_s"]) for s in hold)



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

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.model.candidate import Candidate, lobatto_degree

BUNDLE = "replay_segments"  # the segments' evidence bundle, DIR/replay_segments/


def boundaries(t: NDArray[np.float64], degree: int | None) -> list[int]:
    """Knot indices where a segment may start or end on the replay knots t (R,) [s]:
    the first and last knot, and inside each phase every ``degree``-th knot from the
    phase's start (a lobatto group's end; every knot when ``degree`` is None), never the
    impact's two knots (so the impact lies inside a segment)."""
    R = t.size
    cuts = [k for k in range(R - 1) if t[k] == t[k + 1]]
    step = degree or 1
    starts = [0] + [k + 1 for k in cuts]
    ends = list(cuts) + [R - 1]
    out = set()
    for a, b in zip(starts, ends):
        out.update(range(a, b + 1, step))
    out -= {k for c in cuts for k in (c, c + 1)}
    out |= {0, R - 1}
    return sorted(out)


def tile(t: NDArray[np.float64], degree: int | None, horizon_s: float) -> list[tuple[int, int]]:
    """[(a, b)] knot ranges tiling the replay knots t (R,) [s]: consecutive (each starts
    where the previous ends), from knot 0 to R − 1, each the longest one from
    ``boundaries`` whose duration t[b] − t[a] is at most ``horizon_s`` [s] (one
    boundary step when even that is longer; ``check`` reports it)."""
    ok = boundaries(t, degree)
    out, a = [], 0
    while a < t.size - 1:
        later = [b for b in ok if b > a]
        within = [b for b in later if t[b] - t[a] <= horizon_s]
        b = within[-1] if within else later[0]
        out.append((a, b))
        a = b
    return out


def candidate(cand: Candidate, a: int, b: int, Q: NDArray[np.float64],
              V: NDArray[np.float64]) -> Candidate:
    """The candidate's knots a … b started from the fitted state (Q[a] (nq,), V[a] (nv,))
    [rad | m, rad/s | m/s], with the events inside it; its provenance names the knots."""
    t = cand.t[a:b + 1]
    events = tuple(e for e in cand.events if t[0] < e.t < t[-1])
    prov = dict(cand.provenance, segment={"of": cand.path, "knots": [a, b],
                                          "t_s": [float(t[0]), float(t[-1])],
                                          "start": "the fitted state at knot a"})
    return dataclasses.replace(cand, q0=np.array(Q[a], float), v0=np.array(V[a], float),
                               t=t.copy(), tau=cand.tau[a:b + 1].copy(), events=events,
                               provenance=prov)


def case_name(i: int, n: int, t: NDArray[np.float64], a: int, b: int) -> str:
    """The segment's case name in the bundle: its number and window, e.g.
    ``seg3of8_t1.2350-1.2763s``."""
    return f"seg{i + 1}of{n}_t{t[a]:.4f}-{t[b]:.4f}s"


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


def record_counts(records: Sequence[Any], case: str) -> dict:
    """{passed, total, failed: [ids]} of the replay records of case ``case`` (ids start
    with ``case/``; not_provided rows are not counted)."""
    mine = [r for r in records if r.id.startswith(case + "/") and r.status != "not_provided"]
    return {"passed": sum(r.status == "passed" for r in mine), "total": len(mine),
            "not_passed": [f"{r.id}: {r.status}" for r in mine if r.status != "passed"]}


def degree_of(cand: Candidate) -> int | None:
    """The candidate's lobatto group size (its degree), None for other interpolations."""
    return lobatto_degree(cand.interpolation)

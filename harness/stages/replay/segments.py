"""Segmented replay, engine-blind: a candidate's knots tiled into segments no longer than
a predictability horizon, each started from a given state at its first knot (as in
multiple shooting) and replayed as its own case; the case names that carry each segment's
window, and the count of a case's records. Used by the swing's segmented replay through
the impact (harness/swing/segments.py) and by `harness track`'s replay of a tracked motion
(harness/track/replay.py).

Dimension legend: R knots (an event's time repeated: left, then right limit); nq, nv
canonical. Units: s, m, rad.

A boundary never falls on an event's two knots, so the segment holding an event starts
before it and integrates through it (the candidate's impulse reset).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.model.candidate import Candidate, lobatto_degree


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

def record_counts(records: Sequence[Any], case: str) -> dict:
    """{passed, total, failed: [ids]} of the replay records of case ``case`` (ids start
    with ``case/``; not_provided rows are not counted)."""
    mine = [r for r in records if r.id.startswith(case + "/") and r.status != "not_provided"]
    return {"passed": sum(r.status == "passed" for r in mine), "total": len(mine),
            "not_passed": [f"{r.id}: {r.status}" for r in mine if r.status != "passed"]}

def degree_of(cand: Candidate) -> int | None:
    """The candidate's lobatto group size (its degree), None for other interpolations."""
    return lobatto_degree(cand.interpolation)


"""Contact consistency of the fitted swing, interval by interval: is the fitted motion with
its fitted contact forces a possible standing on a flat floor?

Dimensions: N fitted frames, N − 1 frame intervals (the knot intervals of the checks:
interval i runs from frame i to frame i + 1); nc contact points (ground.frames(), left foot
first); S kinematic samples per interval (its two frames and S − 2 points between them on
the fitted spline). Positions m, speeds m/s, forces N (the report shows mm, mm/s, N).

Per interval and per contact point:

* **penetration** [m]: the largest depth of the point below the floor over the interval's
  samples (every point, in stick or not: a lifted heel must not go through the floor
  either);
* **slip speed in stick** [m/s]: the largest horizontal speed of the point over the
  samples, for a point in stick at both ends of the interval (NaN otherwise);
* **negative normal force** [N]: max(−f_z, 0) over the two frames (a floor can only push);
* **friction-cone ratio** [–]: |f_t| / (μ f_z) over the two frames: above 1 is outside the
  Coulomb cone; 0 for a point without force, inf for a tangential force with f_z ≤ 0.

Per interval and per foot:

* **centre of pressure outside the support polygon** [m]: the foot's centre of pressure on
  the floor plane (where the foot's contact forces have no horizontal moment: what a force
  plate reports) against the convex hull of the foot's contact points in stick at that
  frame, projected on the floor; 0 inside, else the distance to the hull; the larger of
  the two frames; NaN where the foot carries no vertical load at either frame.

The contact schedule is **assumed** (no force plate): these are consistency checks of the
fit, never measurements, and they are reported, not scored.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from harness.core.tolerances import lookup

if TYPE_CHECKING:
    from harness.fit.trajectory import FitProblem, TrajectoryFitResult
    from harness.model.protocol import EngineAdapter

# (key, what, unit shown, scale SI → shown, tolerance quantity)
QUANTITIES = (
    ("penetration", "penetration below the floor", "mm", 1e3, "contact_penetration"),
    ("slip_speed", "slip speed while in stick", "mm/s", 1e3, "contact_slip_speed"),
    ("negative_normal_force", "negative normal force", "N", 1.0,
     "contact_negative_normal_force"),
    ("friction_ratio", "tangential / (μ · normal) force", "–", 1.0, "contact_friction_ratio"),
    ("cop_outside", "centre of pressure outside the foot's support polygon", "mm", 1e3,
     "contact_cop_outside"),
)
FEET = ("l", "r")
FOOT_NAMES = ("left foot", "right foot")


def threshold(key: str) -> float:
    """The quantity's threshold in SI units (harness/core/tolerances.py)."""
    (q,) = [q for k, _, _, _, q in QUANTITIES if k == key]
    return lookup("swing", q).atol


def convex_hull(xy: NDArray[np.float64]) -> np.ndarray:
    """(h, 2) the convex hull of points xy (n, 2) counter-clockwise (Andrew's monotone
    chain): h = n for n ≤ 2 distinct points (a point or a segment), collinear points
    dropped."""
    pts = sorted({(float(x), float(y)) for x, y in np.asarray(xy, float)})
    if len(pts) <= 2:
        return np.array(pts, float).reshape(-1, 2)

    def cross(o: NDArray[np.float64], a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.array(lower[:-1] + upper[:-1], float)


def _segment_distance(p, a, b) -> float:
    d = b - a
    L2 = float(d @ d)
    s = 0.0 if L2 == 0.0 else min(max(float((p - a) @ d) / L2, 0.0), 1.0)
    return float(np.linalg.norm(p - (a + s * d)))


def outside_distance(p: NDArray[np.float64], hull: NDArray[np.float64]) -> float:
    """Distance [m] of the point p (2,) outside the convex polygon ``hull`` (h, 2),
    counter-clockwise (convex_hull): 0 inside or on it; a hull of one point or two is
    that point or segment."""
    p, hull = np.asarray(p, float), np.asarray(hull, float)
    h = len(hull)
    if h == 0:
        return float("nan")
    if h == 1:
        return float(np.linalg.norm(p - hull[0]))
    if h == 2:
        return _segment_distance(p, hull[0], hull[1])
    edges = np.roll(hull, -1, axis=0) - hull
    rel = p - hull
    if np.all(edges[:, 0] * rel[:, 1] - edges[:, 1] * rel[:, 0] >= 0.0):
        return 0.0
    return min(_segment_distance(p, hull[k], hull[(k + 1) % h]) for k in range(h))


def centre_of_pressure(P: NDArray[np.float64], f: NDArray[np.float64],
                       floor: float) -> NDArray[np.float64] | None:
    """(2,) m the centre of pressure on the floor plane z = floor of forces f (n, 3) N
    applied at points P (n, 3) m: the point about which their horizontal moments vanish,
    x = Σ(x_i f_zi − (z_i − floor) f_xi) / Σ f_zi, y likewise; None when Σ f_z ≤ 0 (no
    vertical load: no centre of pressure)."""
    P, f = np.asarray(P, float), np.asarray(f, float)
    fz = float(f[:, 2].sum())
    if not fz > 0.0:
        return None
    dz = P[:, 2] - floor
    return np.array([(P[:, 0] @ f[:, 2] - dz @ f[:, 0]) / fz,
                     (P[:, 1] @ f[:, 2] - dz @ f[:, 1]) / fz])


def per_interval(P: NDArray[np.float64], V: NDArray[np.float64], stick: NDArray[np.bool_],
                 forces: NDArray[np.float64], floor: float, mu: float,
                 foot_of: Sequence[str]) -> dict:
    """The per-interval checks (module docstring) from the contact points' positions P
    (N − 1, S, nc, 3) m and velocities V (N − 1, S, nc, 3) m/s at each interval's S
    samples (first and last: its two frames), the stick schedule (N, nc) bool, the
    contact forces (N, nc, 3) N at the frames, the floor height [m], μ and ``foot_of``
    (nc,) the foot ("l" | "r") of each point. Returns {penetration, slip_speed,
    negative_normal_force, friction_ratio: (N − 1, nc); cop_outside: (N − 1, 2) in
    FEET order; cop (N, 2, 2) m the centre of pressure per frame and foot (NaN: no
    load)} in SI units."""
    P, V, forces = np.asarray(P, float), np.asarray(V, float), np.asarray(forces, float)
    stick = np.asarray(stick, bool)
    N, nc = stick.shape
    pen = np.maximum(floor - P[..., 2], 0.0).max(axis=1)
    both = stick[:-1] & stick[1:]
    slip = np.where(both, np.linalg.norm(V[..., :2], axis=-1).max(axis=1), np.nan)
    fz = forces[:, :, 2]
    ft = np.linalg.norm(forces[:, :, :2], axis=2)
    neg = np.maximum(-fz, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ft == 0.0, 0.0, np.where(fz > 0.0, ft / (mu * fz), np.inf))
    # positions at the frames: the first sample of each interval, and the last one's end
    Pf = np.concatenate([P[:, 0], P[-1:, -1]], axis=0)                   # (N, nc, 3)
    cop = np.full((N, len(FEET), 2), np.nan)
    out = np.full((N, len(FEET)), np.nan)
    foot_of = np.asarray(foot_of)
    for j, side in enumerate(FEET):
        idx = np.flatnonzero(foot_of == side)
        for k in range(N):
            c = centre_of_pressure(Pf[k, idx], forces[k, idx], floor)
            if c is None:
                continue
            cop[k, j] = c
            on = idx[stick[k, idx]]
            out[k, j] = outside_distance(c, convex_hull(Pf[k, on, :2])) if on.size \
                else float("inf")   # a load on a foot with no point on the floor
    with np.errstate(invalid="ignore"):
        cop_out = np.fmax(out[:-1], out[1:])
    return {"penetration": pen, "slip_speed": slip,
            "negative_normal_force": np.maximum(neg[:-1], neg[1:]),
            "friction_ratio": np.maximum(ratio[:-1], ratio[1:]),
            "cop_outside": cop_out, "cop": cop}


def evaluate(adapter: EngineAdapter, prob: FitProblem, fr: TrajectoryFitResult,
             samples: int = 5) -> dict:
    """per_interval() of a fit with ground contact: the contact points' kinematics on the
    fitted spline at ``samples`` points per frame interval (its ends included), the
    fitted forces fr.forces at the frames; adds t (N,) s the frame times and t_mid
    (N − 1,) s the interval midpoints."""
    c = prob.contact
    t = np.asarray(prob.t, float)
    s = np.linspace(0.0, 1.0, samples)
    x = (t[:-1, None] + (t[1:] - t[:-1])[:, None] * s[None, :]).ravel()
    q, v, _ = prob.evaluate(fr.C, x)
    names = list(c.frames)
    P = np.stack([adapter.frame_poses(qi, names)[:, :3] for qi in q])
    V = np.stack([adapter.frame_jacobians(qi, names)[:, :3, :] @ vi for qi, vi in zip(q, v)])
    shape = (t.size - 1, samples, len(names), 3)
    out = per_interval(P.reshape(shape), V.reshape(shape), c.stick, fr.forces,
                       float(c.anchors[0, 2]), c.mu, [n.split("_")[0] for n in names])
    out["t"] = t
    out["t_mid"] = 0.5 * (t[:-1] + t[1:])
    return out


def summarise(per: dict, frames: Sequence[int] | NDArray[np.int_]) -> dict:
    """per_interval()'s arrays ``per`` ((N − 1, nc) per quantity) and ``frames`` (N,) the
    fitted frames' indices → fit.json's ``ground.consistency``: per quantity its threshold,
    the worst value
    (where and when; no place when it is 0 everywhere), the intervals exceeding it
    (counts, and each interval's worst point), in the shown units (QUANTITIES), and the
    per-interval worst over the points (or feet) for the chart."""
    t = np.asarray(per["t"], float)
    n_int = t.size - 1
    out = {"label": "assumed", "intervals": int(n_int),
           "what": "consistency checks of the fit under the assumed contact schedule (no "
                   "force plate): reported, not scored as measured data",
           "quantities": {}}
    for key, what, unit, scale, _ in QUANTITIES:
        a = np.asarray(per[key], float)                         # (N − 1, nc | 2)
        names = list(FOOT_NAMES) if key == "cop_outside" else list(frames)
        thr = threshold(key)
        exceed = a > thr                                        # NaN compares False
        with np.errstate(invalid="ignore"):
            worst_i = np.where(np.isnan(a).all(axis=1), np.nan,
                               np.nanmax(np.where(np.isnan(a), -np.inf, a), axis=1))
        rows = []
        for i in np.flatnonzero(exceed.any(axis=1)):
            j = int(np.nanargmax(np.where(np.isnan(a[i]), -np.inf, a[i])))
            rows.append({"interval": int(i), "t0_s": float(t[i]), "t1_s": float(t[i + 1]),
                         "where": names[j], "value": float(scale * a[i, j]),
                         "points_exceeding": [names[k] for k in np.flatnonzero(exceed[i])]})
        finite = ~np.isnan(a)
        if finite.any() and not np.nanmax(a) > 0:
            # zero everywhere: no worst point or interval to name
            worst = {"value": 0.0, "where": None, "interval": None, "t0_s": None,
                     "t1_s": None}
        elif finite.any():
            flat = np.where(finite, a, -np.inf)
            i, j = np.unravel_index(int(np.argmax(flat)), a.shape)
            worst = {"value": float(scale * a[i, j]), "where": names[j],
                     "interval": int(i), "t0_s": float(t[i]), "t1_s": float(t[i + 1])}
        else:
            worst = {"value": None, "where": None, "interval": None, "t0_s": None,
                     "t1_s": None}
        out["quantities"][key] = {
            "what": what, "unit": unit, "threshold": float(scale * thr),
            "worst": worst, "intervals_exceeding": int(exceed.any(axis=1).sum()),
            "intervals_evaluated": int(finite.any(axis=1).sum()),
            "exceeding": rows,
            "per_interval_worst": [None if np.isnan(w) else float(scale * w)
                                   for w in worst_i]}
    return out


def headline(cons: dict) -> dict:
    """The new keys of fit.json's ``summary``: the worst value of each per-interval check
    and how many intervals exceed its threshold (None without ground contact)."""
    if not cons:
        return {}
    q = cons["quantities"]
    names = {"penetration": "penetration_mm", "slip_speed": "slip_speed_in_stick_mm_s",
             "negative_normal_force": "negative_normal_force_N",
             "friction_ratio": "friction_cone_ratio",
             "cop_outside": "cop_outside_support_mm"}
    out = {"contact_intervals": cons["intervals"]}
    for k, n in names.items():
        out[f"contact_interval_worst_{n}"] = q[k]["worst"]["value"]
        out[f"contact_intervals_exceeding_{k}"] = q[k]["intervals_exceeding"]
    return out

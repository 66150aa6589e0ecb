"""Ground contact of the swing fit: the feet's contact points on a flat floor, their
forces, the pelvis residual wrench left over, and the figures fit.json reports.

Dimensions: N fitted frames, nc = 6 contact points (heel, first and fifth metatarsal
heads of each foot: fixtures.golfers.contact_points), nv coordinates of the golfer.
Positions m (reported in mm), speeds m/s (reported in mm/s), forces N, moments N·m.

The contact mode schedule is **assumed** (no force plate). "planted": every point in stick
over the whole fitted window, the first schedule for a golf downswing. "lift" (the
default): a point sticks while its IK height stays within the lift height of the floor,
because the capture shows the heels leave the floor inside the window (the trail heel
rises 60 mm towards impact). It is carried as ``assumed`` in fit.json, the candidate's
provenance and the report, never scored as a measurement.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fixtures.golfers import CONTACT_POINTS, contact_frame
from harness.fit import trajectory as tf

if TYPE_CHECKING:
    from harness.model.protocol import EngineAdapter

# ``settings`` below: a SwingSettings (harness/swing/pipeline.py), typed Any because the
# pipeline imports this module: importing it back, even for its types, is an import cycle.

GRAVITY = 9.81
CONTACT_LABEL = "assumed"
SCHEDULE_WHAT = ("assumed, no force plate: each contact point (heel, first and fifth "
                 "metatarsal heads of both feet) sticks to the floor while its IK height "
                 "stays within the lift height of it (SwingSettings.contact_schedule "
                 "'lift'; 'planted': every point over the whole window)")
PELVIS = ("pelvis_tx", "pelvis_ty", "pelvis_tz", "pelvis_rz", "pelvis_rx", "pelvis_ry")


def frames() -> tuple:
    """The nc contact frames, left foot first."""
    return tuple(contact_frame(side, p) for side in "lr" for p in CONTACT_POINTS)


def schedule(P: NDArray[np.float64], floor: float, settings: Any) -> np.ndarray:
    """stick (N, nc) bool from the contact points' IK positions P (N, nc, 3) m: with
    ``settings.contact_schedule`` "planted" every point sticks at every frame; with
    "lift" (the default) a point is in flight while its IK height is above
    ``settings.lift_height_m`` over the floor, and each flight run grows into the
    neighbouring frames whose height (a centred running median over
    ``settings.touch_window`` frames: equal to the height on a monotone rise, robust to
    a marker's blip) is still ``settings.touch_height_m`` above the point's standing
    height, the lower quartile of its heights below the lift height (hysteresis: the lift height
    finds a heel that has left the floor, the touch height dates when it left and when it
    came back, so a rising heel is not held to the floor for the frames it takes to
    reach the lift height). Runs of either mode shorter than
    ``settings.min_run_frames`` frames are then merged into their neighbours."""
    from scipy.ndimage import median_filter

    N, nc = P.shape[:2]
    if settings.contact_schedule == "planted":
        return np.ones((N, nc), bool)
    z = P[:, :, 2] - floor
    stick = z <= settings.lift_height_m
    # the touch height counts from each point's own standing height (the lower quartile of its
    # heights below the lift height): a point whose IK stands a few mm off the floor
    # plane (marker placement, shoe, soft tissue) is not released by that offset
    rest = np.array([np.percentile(z[stick[:, c], c], 25) if stick[:, c].any() else 0.0
                     for c in range(nc)])
    above = median_filter(z, size=(max(1, settings.touch_window), 1),
                          mode="nearest") > rest + settings.touch_height_m
    for c in range(nc):
        flight = ~stick[:, c]
        for i in range(1, N):                   # grow each flight run forwards ...
            flight[i] |= flight[i - 1] and above[i, c]
        for i in range(N - 2, -1, -1):          # ... and backwards
            flight[i] |= flight[i + 1] and above[i, c]
        col = ~flight
        edges = np.flatnonzero(np.diff(col.astype(int))) + 1
        runs = np.split(np.arange(N), edges)
        for k, r in enumerate(runs):
            if len(r) < settings.min_run_frames and len(runs) > 1:
                col[r] = not col[r[0]]
        stick[:, c] = col
    return stick


def schedule_what(stick: NDArray[np.bool_], t0: float, h: float) -> str:
    """stick (N, nc) bool at frames t0 + i·h [s]: one sentence describing the schedule,
    per point the stick intervals [s]."""
    names = frames()
    parts = []
    for c, n in enumerate(names):
        col = stick[:, c]
        if col.all():
            parts.append(f"{n} stick throughout")
            continue
        edges = np.flatnonzero(np.diff(col.astype(int))) + 1
        iv = [(r[0], r[-1]) for r in np.split(np.arange(col.size), edges) if col[r[0]]]
        parts.append(f"{n} stick " + (", ".join(f"{t0 + a * h:.3f}–{t0 + b * h:.3f} s"
                                                for a, b in iv) or "never"))
    return "; ".join(parts)


def contact_model(adapter: EngineAdapter, Q: NDArray[np.float64], floor: float, n_frames: int,
                  settings: Any) -> tf.GroundContact:
    """Q (N, nv) [rad | m] the IK over the window → the fit's GroundContact: the assumed
    schedule (``schedule``) from the contact
    points' IK positions over the window (Q (N, nv)); anchors at each point's mean
    horizontal IK position over its stick frames, at the floor height [m]; the pelvis's
    six coordinates as the residuals."""
    fr = frames()
    P = np.stack([adapter.frame_poses(q, list(fr))[:, :3] for q in Q])      # (N, nc, 3)
    stick = schedule(P, floor, settings)
    w = np.where(stick.any(axis=0), stick, True)[:, :, None]
    anchors = (P * w).sum(axis=0) / w.sum(axis=0)
    anchors[:, 2] = floor
    rd = tuple(adapter.layout.slot(n).iv for n in PELVIS)
    s = settings
    scale = np.array([s.residual_force_scale_n] * 3 + [s.residual_moment_scale_nm] * 3)
    mass = total_mass(adapter)
    return tf.GroundContact(frames=fr, anchors=anchors, stick=stick,
                            residual_dofs=rd, residual_scale=scale, w_residual=s.w_residual,
                            mu=s.mu, sigma_contact=s.sigma_contact_m,
                            sigma_slip=s.sigma_slip_m, w_force=s.w_force,
                            force_scale=mass * GRAVITY)


def total_mass(adapter: EngineAdapter) -> float:
    """Total mass [kg] of the model's bodies."""
    return float(sum(b.mass for b in adapter.model.spec.bodies))


def pelvis_wrench(adapter: EngineAdapter, Q: NDArray[np.float64],
                  act: NDArray[np.float64]) -> tuple:
    """(force (N, 3) N, moment (N, 3) N·m) at the pelvis origin, world axes: the wrench W
    whose generalized force on the pelvis's six coordinates is the residual,
    τ_p = J_pᵀ W with J_p the pelvis body's Jacobian columns of those coordinates
    (translations first: the force is the translations' generalized forces; the moment
    maps the Euler-axis moments through the axes' matrix)."""
    rd = [adapter.layout.slot(n).iv for n in PELVIS]
    F, M = np.empty((len(Q), 3)), np.empty((len(Q), 3))
    for i, q in enumerate(Q):
        J = adapter.frame_jacobians(q, ["pelvis"])[0][:, rd]                # (6, 6)
        W = np.linalg.solve(J.T, act[i, rd])
        F[i], M[i] = W[:3], W[3:]
    return F, M


def _kinematics(adapter, prob, fr):
    """(positions (N, nc, 3) m, velocities (N, nc, 3) m/s) of the contact points."""
    fr_names = list(prob.contact.frames)
    P = np.stack([adapter.frame_poses(q, fr_names)[:, :3] for q in fr.q])
    V = np.stack([adapter.frame_jacobians(q, fr_names)[:, :3, :] @ v
                  for q, v in zip(fr.q, fr.v)])
    return P, V


def evaluate(adapter: EngineAdapter, prob: tf.FitProblem,
             fr: tf.TrajectoryFitResult) -> dict:
    """fit.json's ``ground`` figures of a fit with contact: the residual wrench (peak and
    RMS), the contact forces' feasibility (min normal force, largest tangential/normal
    ratio against μ), penetration and slip of the stick points, per-foot peak vertical
    force in body weights."""
    c = prob.contact
    F, M = pelvis_wrench(adapter, fr.q, fr.act)
    fn = np.linalg.norm(F, axis=1)
    mn = np.linalg.norm(M, axis=1)
    P, V = _kinematics(adapter, prob, fr)
    floor = float(c.anchors[0, 2])
    pen = np.maximum(floor - P[:, :, 2], 0.0)
    slip = np.linalg.norm(V[:, :, :2], axis=2)
    st = c.stick
    f = fr.forces
    normal = f[:, :, 2]
    tang = np.linalg.norm(f[:, :, :2], axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(normal > 1e-9, tang / normal, 0.0)
    bw = total_mass(adapter) * GRAVITY
    feet = {side: f[:, [k for k, n in enumerate(c.frames) if n.startswith(side + "_")]]
            .sum(axis=1) for side in "lr"}
    raw = fr.forces_unprojected
    return {
        "contact_label": CONTACT_LABEL, "schedule": SCHEDULE_WHAT,
        "schedule_intervals": schedule_what(c.stick, float(prob.t[0]), prob.h),
        "stick_fraction": float(c.stick.mean()),
        "frames": list(c.frames), "anchors_m": c.anchors.tolist(),
        "mu": c.mu, "friction_model": "four-sided pyramid inscribed in the Coulomb cone",
        "sigma_contact_m": c.sigma_contact, "w_residual": c.w_residual,
        "body_weight_N": bw,
        "residual": {"force_peak_N": float(fn.max()),
                     "force_rms_N": float(np.sqrt(np.mean(fn ** 2))),
                     "moment_peak_Nm": float(mn.max()),
                     "moment_rms_Nm": float(np.sqrt(np.mean(mn ** 2))),
                     "what": "the pelvis's six residual generalized forces as a wrench at "
                             "the pelvis origin (world axes)"},
        "min_normal_force_N": float(normal[st].min()) if st.any() else 0.0,
        "max_friction_ratio": float(ratio[st].max()) if st.any() else 0.0,
        "max_penetration_mm": float(1e3 * pen.max()),
        "max_slip_speed_mm_s": float(1e3 * slip[st].max()) if st.any() else 0.0,
        "max_stick_drift_mm": float(1e3 * np.linalg.norm(fr.contact_residual, axis=2)[st].max())
        if st.any() else 0.0,
        "foot_vertical_peak_bw": {side: float(v[:, 2].max() / bw) for side, v in feet.items()},
        "projection_change_N": float(np.abs(raw - f).max()) if raw is not None else 0.0,
        "solver": "sparse Levenberg–Marquardt over the spline and the pyramid coefficients "
                  "(negative ones penalised), then per frame the constrained QP "
                  "min ‖W(ID − Gβ)‖² + w‖β‖², β ≥ 0 (scipy nnls) on the fitted motion",
    }


def arrays(adapter: EngineAdapter, prob: tf.FitProblem,
           fr: tf.TrajectoryFitResult) -> dict:
    """The report's arrays: t (N,) s, per-foot force (N, 3) N, residual force and moment
    (N, 3) N | N·m, body weight N."""
    c = prob.contact
    F, M = pelvis_wrench(adapter, fr.q, fr.act)
    feet = {side: fr.forces[:, [k for k, n in enumerate(c.frames) if n.startswith(side + "_")]]
            .sum(axis=1) for side in "lr"}
    return {"t": fr.t, "foot_force": feet, "residual_force": F, "residual_moment": M,
            "body_weight_N": total_mass(adapter) * GRAVITY}


def tradeoff(prob: tf.FitProblem, fr: tf.TrajectoryFitResult, settings: Any,
             say: Callable[[str], None] = print) -> list:
    """Refits warm-started from ``fr`` with the residual weight set to each of
    ``settings.tradeoff_weights`` (``tradeoff_iter`` iterations each): [{w_residual,
    marker_rmse_mm, marker_max_mm, residual_force_peak_N, residual_moment_peak_Nm,
    iterations}], the fitted weight included."""
    import dataclasses

    rows = [fit_figures(prob, fr, prob.contact.w_residual)]
    for w in settings.tradeoff_weights:
        p = dataclasses.replace(prob, contact=dataclasses.replace(prob.contact, w_residual=w))
        r = tf.fit(p, fr.q, max_iter=settings.tradeoff_iter, tol=settings.tol, C0=fr.C)
        rows.append(fit_figures(p, r, w))
        say(f"  trade-off w_residual {w:g}: marker RMSE {rows[-1]['marker_rmse_mm']:.1f} mm, "
            f"residual {rows[-1]['residual_force_peak_N']:.0f} N / "
            f"{rows[-1]['residual_moment_peak_Nm']:.0f} N·m")
    return sorted(rows, key=lambda r: r["w_residual"])


def fit_figures(prob: tf.FitProblem, r: tf.TrajectoryFitResult, w: float) -> dict:
    """Marker RMSE and max [mm], the pelvis residual's peak force [N] and moment [N·m]
    and the iterations of the contact fit ``r`` of ``prob``, with its residual weight w."""
    F, M = pelvis_wrench(prob.adapter, r.q, r.act)
    e = np.linalg.norm(r.marker_residual, axis=2)
    return {"w_residual": float(w), "marker_rmse_mm": 1e3 * r.marker_rmse(),
            "marker_max_mm": float(1e3 * np.nanmax(e)),
            "residual_force_peak_N": float(np.linalg.norm(F, axis=1).max()),
            "residual_moment_peak_Nm": float(np.linalg.norm(M, axis=1).max()),
            "iterations": r.iterations}


def headline(info: dict | None, fit_wall_s: float, fr: tf.TrajectoryFitResult) -> dict:
    """fit.json's ``summary``: the headline figures (markers over the whole fitted
    window, tracked markers) of the fit ``fr``, from fit.json's ``ground`` section
    ``info`` (None without contact) and ``fit_wall_s`` [s] the calibration, IK and fit's
    wall time."""
    e = np.linalg.norm(fr.marker_residual, axis=2)
    g = info or {}
    res = g.get("residual", {})
    wall = fit_wall_s
    return {"marker_rmse_mm": 1e3 * fr.marker_rmse(),
            "marker_max_mm": float(1e3 * np.nanmax(e)),
            "residual_force_peak_N": res.get("force_peak_N"),
            "residual_force_rms_N": res.get("force_rms_N"),
            "residual_moment_peak_Nm": res.get("moment_peak_Nm"),
            "residual_moment_rms_Nm": res.get("moment_rms_Nm"),
            "foot_contact_label": g.get("contact_label", "none: feet not in contact"),
            "min_normal_force_N": g.get("min_normal_force_N"),
            "max_penetration_mm": g.get("max_penetration_mm"),
            "max_slip_speed_mm_s": g.get("max_slip_speed_mm_s"),
            "fit_wall_s": wall}


def candidate_solver_fields(info: dict[str, Any] | None) -> dict:
    """Scalar fields for the candidate's provenance.solver (none without contact)."""
    if not info:
        return {}
    r = info["residual"]
    return {"foot_contact_label": CONTACT_LABEL, "friction_mu": info["mu"],
            "residual_force_peak_N": r["force_peak_N"],
            "residual_moment_peak_Nm": r["moment_peak_Nm"]}


def candidate_note(info: dict[str, Any] | None) -> str:
    """The sentence the candidate's provenance notes add about the ground contact."""
    if not info:
        return "; no ground contact (the pelvis's generalized forces stand for the legs)"
    return (f"; ground contact schedule {CONTACT_LABEL} ({info['schedule_intervals']}); the "
            "contact "
            "forces are folded into the generalized forces tau (J_c^T lambda), not applied "
            "as external forces")

"""A whole-body swing with known torques and foot forces, and what the swing fit recovers
of them from noisy markers.

Dimensions: N frames t_i = t0 + i·h [s] of a finished swing's fitted window; nv
coordinates of its golfer (revolute and prismatic, nq == nv); nc = 6 foot contact points
(heel, first and fifth metatarsal heads of each foot); K tracked markers. Positions m,
angles rad, forces N, torques N·m, body weight BW = m_total·g [N].

The truth (``whole_body_truth``):
- motion: the fitted B-spline of a finished ``harness swing`` folder (a real swing's
  motion: q, q̇, q̈ exact at the frames), up to the ball impact when the fit has one
  (its pre-impact phase: the window from the top − 50 ms to the last frame before
  contact), or with ``through_impact`` over the whole window, an impulse Λ applied
  exactly at the source's impact time (``_through_impact``): the source's fitted Λ, or
  with ``restitution`` e the collision law's (harness/fit/collision.py) at the source's
  pre-contact state: the club's face and loft, the club head on its own (its mass from
  the source's club, decoupled from the shaft during contact) striking a ball at rest
  with restitution e, the body then taking −P by the reset map and going on after it
  under the source's generalized forces, continuous through the contact
  (``_continued_forces``);
- which contact points stand on the floor: that fit's assumed schedule;
- foot forces: a rule of their own, not the fit's. At each frame the floor must supply
  the wrench the pelvis's six coordinates need, g_p = ID(q, q̇, q̈)_pelvis = Σ_c
  J_c,pelvisᵀ f_c. Of the forces that do so inside the friction pyramid (f_c = E β_c,
  β_c ≥ 0), the truth takes the nearest to a weight-shift prior: the vertical force
  g_tz split between the feet with the lead (left) foot's share moving linearly from
  ``lead_share[0]`` at the window's start to ``lead_share[1]`` at its end (a golfer's
  weight moves to the lead foot in the downswing), shared equally by the points of a
  foot, no horizontal force. Solved per frame by non-negative least squares with the
  six equations weighted 10⁴ above the prior; what the equations leave over is the
  truth's own pelvis residual, reported (≈ 1e-3 N);
- joint torques: τ = ID(q, q̇, q̈) − Σ_c J_cᵀ f_c;
- markers: the model's marker frames at q plus white noise of σ (2 mm by default), seeded.

The recovery (``recover``) runs the swing fit's own steps on those markers: IK tracking
over the window, the assumed contact schedule and anchors from the IK (the "lift" rule
with its touch height),
and the dynamic fit with the same settings as the source fit, then compares the fitted
forces and torques with the truth. The fit regularises the contact forces towards small
pyramid coefficients and the joint torques towards small effort: how two planted feet
share the load is not seen by markers, so the split between the feet is the prior's
choice and the total ground reaction force (set by the body's momentum) is what the
markers determine. Both are reported.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from harness.capture import events as cap_events
from harness.capture import ik
from harness.capture.markerset import DRIVER_SWING
from harness.core.errors import BadInput
from harness.core.strict import read_json
from harness.fit import collision as col
from harness.fit import trajectory as tf
from harness.model import registry
from harness.model.osim_export import read_swing
from harness.model.prepared import PreparedModel
from harness.swing import ground
from harness.swing.pipeline import (
    SwingSettings,
    ball_law,
    fit_problem,
    fit_through_impact,
    head_marker_indices,
    impact_event,
    marker_scale,
    ring_gain_at,
    turf_directions,
)
from harness.swing.scaling import GRIP_PAIRS

if TYPE_CHECKING:
    from harness.model.protocol import EngineAdapter
    from harness.swing.pipeline import SwingSettings

LEAD = "l"    # the lead foot of a right-handed golfer


@dataclass
class WholeBodyTruth:
    t: np.ndarray          # (N,) s
    q: np.ndarray          # (N, nv) rad | m
    v: np.ndarray          # (N, nv)
    vdot: np.ndarray       # (N, nv)
    forces: np.ndarray     # (N, nc, 3) N, world axes, on the contact frames
    tau: np.ndarray        # (N, nv) N·m | N: joint torques; pelvis rows the leftover residual
    markers: np.ndarray    # (N, K, 3) m, noisy
    clean: np.ndarray      # (N, K, 3) m
    labels: tuple
    frames: tuple          # contact frames
    stick: np.ndarray      # (N, nc) bool, the schedule the truth's forces respect
    floor_z_m: float
    body_weight_N: float
    lead_share: np.ndarray  # (N,) prior share of the vertical force on the lead foot
    residual_peak_N: float  # largest |pelvis translation residual| the truth leaves
    top_index: int          # frame index of the top of the backswing (scored from there)
    sigma_m: float
    seed: int
    # through the ball impact (``through_impact``): the event time [s], the impulse Λ (3,)
    # [N·s] world axes on the club at ``impact_frame``; None without
    impact_time_s: float | None = None
    impulse_Ns: np.ndarray | None = None
    impact_frame: str | None = None
    # a truth whose impulse is the collision law's (``restitution``): the law's outcome
    # (its ball speed [m/s], e, the head's effective mass [kg]); None for the source's
    # impulse. Through the impact: the source's club and its loft [deg] (None: the
    # club's typical loft)
    collision: col.Collision | None = None
    club: str = "driver"
    loft_deg: float | None = None
    # the turf's impulse on the club head after the ball (3,) [N·s] world axes, applied
    # with the ball's at the impact (``turf``); None without turf contact
    turf_impulse_Ns: np.ndarray | None = None
    # the club head's ringing on the shaft after the impulse (trajectory.HeadRing: its
    # frequency [Hz], damping ratio, gain κ (3, 3) [1/kg]) in the truth's club-head
    # markers; None: the head's loss handed on within the frame (a rigid club)
    ring: dict | None = None


def source(swing_dir: str | os.PathLike[str], doc: dict | None = None
           ) -> tuple[EngineAdapter, SwingSettings, dict[str, Any], dict[str, Any]]:
    """(adapter of the fit's engine, the swing's settings, fit.json, trajectory arrays) of
    a finished ``harness swing`` output folder (``doc``: its fit.json document, given by a
    run in progress that writes the file last); BadInput naming the file and the
    problem."""
    d = Path(swing_dir)
    data = read_swing(d, doc)         # checks the folder, fit.json and trajectory.npz
    doc = read_json(d / "fit" / "fit.json") if doc is None else doc
    if not doc.get("ground"):
        raise BadInput(str(d / "fit" / "fit.json"), "the swing was fitted without ground "
                                                     "contact: no feet to give forces to")
    fields = {f.name for f in dataclasses.fields(SwingSettings)}
    s = SwingSettings(**{k: tuple(v) if isinstance(v, list) else v
                         for k, v in doc["settings"].items() if k in fields})
    with np.load(d / "fit" / "trajectory.npz", allow_pickle=False) as z:
        arr = {k: z[k] for k in z.files}
    urdf = (d / "fit" / "golfer.urdf").read_text()
    pm = PreparedModel(data["spec"], str(d / "fit" / "golfer.urdf"),
                       hashlib.sha256(urdf.encode()).hexdigest())
    adapter = registry.adapter_class(registry.preferred("fit"))(pm)
    return adapter, s, doc, arr


def _splines(arr, post: bool = False) -> tuple:
    """The fitted B-spline of a swing's trajectory arrays (its post-impact phase with
    ``post``) and its first two derivatives: callables of t [s] giving (…, nv)."""
    from scipy.interpolate import BSpline

    tail = "_post" if post else ""
    b = BSpline(arr["spline_knots" + tail], arr["spline_coefficients" + tail],
                int(arr["spline_degree"]))
    return b, b.derivative(1), b.derivative(2)


def _spline(arr, t, post: bool = False):
    return tuple(f(t) for f in _splines(arr, post))


@dataclass(frozen=True)
class TruthLaw:
    """The collision law a truth's impulse follows: the club's face (loft, friction), the
    restitution e, the club head's mass [kg] (the face's inverse mass I/m_head), the frame
    up the shaft the face normal tilts toward, the ball's mass [kg]."""

    face: col.ClubFace
    restitution: float
    head_kg: float
    shaft_frame: str
    ball_kg: float = col.BALL_MASS_KG


TRUTH_SUBSTEPS = 20          # RK4 steps per frame interval of the post-contact integration
TRUTH_RESTITUTION_QUANTILE = 0.25   # where in the club's restitution prior a truth's e sits


def truth_restitution(doc: dict) -> float:
    """Dimensionless: the restitution e of a law-governed truth from the swing fit.json
    ``doc``: its club's prior range at ``TRUTH_RESTITUTION_QUANTILE`` (the lower quartile,
    so the fit's prior, centred on the range's mean, does not sit on the truth)."""
    lo, hi = col.club_face(str(doc["fit"]["impact"]["club"])).restitution_range
    return float(lo + TRUTH_RESTITUTION_QUANTILE * (hi - lo))


def _through_impact(adapter, arr, t, tau_s: float = 0.005, law: TruthLaw | None = None,
                    turf: tuple | None = None):
    """(q, q̇, q̈) (N, nv) at the frames t [s] through the ball impact, and (t_e [s], Λ (3,)
    [N·s], frame, the law's outcome or None): the pre-impact spline up to t_e; after it
    the post-impact spline plus a correction that starts the motion at v⁺ = v⁻ + M⁻¹JᵀΛ,
    the exact reset in the adapter's dynamics, δ = v⁺ − S_post'(t_e) (s = t − t_e):
    - with the source fit's impulse, δ·s·exp(−s/τ) (τ = ``tau_s``): the fit held the reset
      as a penalty, so its own v⁺ is off by the violation, a small δ; the correction
      vanishes at t_e and dies out within a few τ;
    - with ``law``, the collision law's impulse at the pre-contact state (q(t_e), v⁻),
      the motion after it not the source's but integrated from (q(t_e), v⁺) under the
      source's generalized forces, continued through the contact (``_continued_forces``),
      as the fit holds them continuous; ``turf`` (N, F) [N·s] adds a turf impulse on the
      club head at the same instant (within the ball's frame interval), N up and F
      against the head's horizontal path (pipeline.turf_directions), returned as the
      fifth element (3,) [N·s] (None without)."""
    t_e = float(arr["impact_time_s"])
    L = np.asarray(arr["impulse_Ns"], float)
    frame = str(arr["impact_frame_name"])
    pre = t <= t_e
    q, v, vd = (np.empty((t.size, adapter.nv)) for _ in range(3))
    q[pre], v[pre], vd[pre] = _spline(arr, t[pre])
    qe, vm, _ = (x[0] for x in _spline(arr, np.array([t_e])))
    J = adapter.frame_jacobian(qe, frame)[:3]
    outcome = None
    if law is not None:
        ends = adapter.frame_poses(qe, [frame, law.shaft_frame])[:, :3]
        n = col.face_normal(J @ vm, ends[1] - ends[0], law.face.loft_rad)
        outcome = col.collide(col.point_inverse_mass(law.head_kg), J @ vm, n,
                              law.restitution, law.face.friction, law.ball_kg)
        L = -outcome.impulse_on_ball
    turf_L = None
    if turf is not None:
        up, along = turf_directions(J @ vm)
        turf_L = float(turf[0]) * up - float(turf[1]) * along
        L = L + turf_L
    vp = vm + np.linalg.solve(adapter.mass_matrix(qe), J.T @ L)
    d = vp - _spline(arr, np.array([t_e]), post=True)[1][0]
    sp = t[~pre] - t_e
    qa, va, aa = _spline(arr, t[~pre], post=True)
    if law is not None:
        q[~pre], v[~pre], vd[~pre] = _continued_forces(adapter, arr, t_e, vp, t[~pre])
        return q, v, vd, (t_e, L, frame, outcome), turf_L
    e = np.exp(-sp / tau_s)[:, None]
    q[~pre] = qa + d * (sp[:, None] * e)
    v[~pre] = va + d * (e * (1.0 - sp[:, None] / tau_s))
    vd[~pre] = aa + d * (e * (sp[:, None] / tau_s ** 2 - 2.0 / tau_s))
    return q, v, vd, (t_e, L, frame, outcome), turf_L


def _continued_forces(adapter, arr, t_e: float, vp, ts):
    """(q, q̇, q̈) (n, nv) at the post-contact times ``ts`` [s] of the law truth: the motion
    integrated (classical RK4, ``TRUTH_SUBSTEPS`` steps per frame interval) from
    (q(t_e), v⁺) under the generalized forces g(t) = g_s(t) + Δg, every coordinate driven
    (the pelvis's six are the floor's, shared out afterwards as at any frame): g_s(t) the
    inverse dynamics of the source's post-impact spline, Δg the source's own small jump at
    t_e, so g is continuous with the forces before contact. The truth's golfer does not
    answer the impact within the window (32 ms after contact on the bundled driver,
    about as long as the arm's fastest stretch reflexes take): its forces go on as before,
    and the motion is what they give after the law's impulse. Measured on the bundled
    driver's quick fit: the trail forearm's pronation leaves the source's by up to 1.1 rad
    by the window's end; the largest change of a generalized force across the contact
    frame, 9.9 (N·m or N), is that between frames before it (up to 9.8)."""
    h = float(arr["t"][1] - arr["t"][0])
    qe, vm, am = (x[0] for x in _spline(arr, np.array([t_e])))
    qa0, va0, aa0 = (x[0] for x in _spline(arr, np.array([t_e]), post=True))
    jump = adapter.inverse_dynamics(qe, vm, am) - adapter.inverse_dynamics(qe, va0, aa0)
    post = _splines(arr, post=True)   # built once: the integration evaluates it ~1000 times

    def acc(tt, x, y):
        g = adapter.inverse_dynamics(*(f(tt) for f in post)) + jump
        return adapter.forward_dynamics(x, y, g)

    def f(tt, z):
        return np.r_[z[nv:], acc(tt, z[:nv], z[nv:])]

    nv = adapter.nv
    out = np.empty((3, len(ts), nv))
    z, tt = np.r_[qe, np.asarray(vp, float)], t_e
    for i, target in enumerate(ts):
        n = max(1, int(np.ceil((target - tt) * TRUTH_SUBSTEPS / h)))
        dt = (target - tt) / n
        for _ in range(n):
            k1 = f(tt, z)
            k2 = f(tt + 0.5 * dt, z + 0.5 * dt * k1)
            k3 = f(tt + 0.5 * dt, z + 0.5 * dt * k2)
            k4 = f(tt + dt, z + dt * k3)
            z, tt = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4), tt + dt
        out[:, i] = z[:nv], z[nv:], acc(tt, z[:nv], z[nv:])
    return out[0], out[1], out[2]


def whole_body_truth(adapter: EngineAdapter, doc: dict, arr: dict, sigma_m: float = 0.002,
                     seed: int = 0, lead_share: tuple[float, float] = (0.5, 0.8),
                     w_equation: float = 1e4,
                     through_impact: bool = False,
                     restitution: float | None = None,
                     turf: tuple | None = None,
                     ring: tuple | None = None) -> WholeBodyTruth:
    """The truth of the module docstring from a swing folder's ``source`` (adapter,
    fit.json, trajectory arrays). ``w_equation``: weight of the six pelvis equations
    against the prior in the per-frame non-negative least squares. ``through_impact``
    (a two-phase source fit): the whole window with the source's impulse as the truth's,
    or with ``restitution`` e (dimensionless, 0–1) the collision law's impulse with e
    (``_through_impact``), ``turf`` (N, F) [N·s] a turf impulse on the club head with the
    ball's (up, against the head's path), ``ring`` (f [Hz], ζ) the club head ringing on
    a shaft of that frequency and damping after the impulse, in the club-head markers
    (``_ring``); otherwise the pre-impact phase."""
    from scipy.optimize import nnls  # on use: scipy.optimize adds ~90 ms to every command's start
    t = np.asarray(arr["t"], float)
    impact: tuple = (None, None, None, None)
    club, loft, turf_L = "driver", None, None
    if "impact_time_s" in arr and through_impact:
        law = None
        club, loft = str(doc["fit"]["impact"]["club"]), doc["settings"].get("loft_deg")
        if restitution is not None:
            law = TruthLaw(col.club_face(club, loft), float(restitution),
                           float(doc["model"]["club"]["masses_kg"][1]),
                           str(doc["settings"]["shaft_frame"]),
                           float(doc["settings"].get("ball_mass_kg", col.BALL_MASS_KG)))
        q, v, vd, impact, turf_L = _through_impact(adapter, arr, t, law=law, turf=turf)
    else:
        if "impact_time_s" in arr:     # a two-phase fit: the truth is its pre-impact phase
            t = t[t < float(arr["impact_time_s"])]
        q, v, vd = _spline(arr, t)
    frames = tuple(str(x) for x in arr["contact_frames"])
    stick = np.asarray(arr["contact_stick"], bool)[:len(t)]
    labels = tuple(str(x) for x in arr["labels"])
    N, nc = stick.shape
    E = tf.pyramid_edges(float(doc["ground"]["mu"]))                       # (3, 4)
    rd = [adapter.layout.slot(n).iv for n in ground.PELVIS]
    tz = adapter.layout.slot("pelvis_tz").iv
    bw = ground.total_mass(adapter) * ground.GRAVITY
    share = np.linspace(lead_share[0], lead_share[1], N)
    lead = np.array([f.startswith(LEAD + "_") for f in frames])
    F = np.zeros((N, nc, 3))
    tau = np.empty((N, adapter.nv))
    for i in range(N):
        g = adapter.inverse_dynamics(q[i], v[i], vd[i])
        J = adapter.frame_jacobians(q[i], list(frames))[:, :3, :]         # (nc, 3, nv)
        on = np.flatnonzero(stick[i])
        if on.size:
            fz = g[tz]
            n_lead, n_trail = int(lead[on].sum()), int((~lead[on]).sum())
            s_lead = share[i] if n_trail else 1.0
            s_lead = s_lead if n_lead else 0.0
            prior = np.zeros((on.size, 3))
            for k, c in enumerate(on):
                prior[k, 2] = fz * (s_lead / n_lead if lead[c] else (1 - s_lead) / n_trail)
            A = np.hstack([J[c][:, rd].T @ E for c in on])                 # (6, 4·n)
            top = np.sqrt(w_equation) * A
            bottom = np.kron(np.eye(on.size), E)                           # (3n, 4n)
            beta, _ = nnls(np.vstack([top, bottom]),
                           np.r_[np.sqrt(w_equation) * g[rd], prior.ravel()],
                           maxiter=50 * 4 * on.size)
            F[i, on] = (E @ beta.reshape(on.size, 4).T).T
        tau[i] = g - np.einsum("cjv,cj->v", J, F[i])
    clean = np.stack([adapter.frame_poses(x, list(labels))[:, :3] for x in q])
    ring_info = None
    if ring is not None and impact[0] is not None:
        ring_info, off = _ring(adapter, doc, arr, t, impact, labels, ring)
        clean = clean + off
    noise = np.random.default_rng(seed).normal(scale=sigma_m, size=clean.shape)
    trans = [adapter.layout.slot(n).iv for n in ("pelvis_tx", "pelvis_ty", "pelvis_tz")]
    return WholeBodyTruth(t, q, v, vd, F, tau, clean + noise, clean, labels, frames, stick,
                          float(doc["ground"]["floor_z_m"]), bw, share,
                          float(np.abs(tau[:, trans]).max()),
                          int(doc["window"]["top_frame"]) - int(doc["window"]["first_frame"]),
                          sigma_m, seed, *impact, club, loft, turf_L, ring_info)


def _ring(adapter, doc: dict, arr: dict, t, impact: tuple, labels: tuple,
          ring: tuple) -> tuple:
    """(the ring's figures, the offsets (N, K, 3) m) of a truth whose club head rings on
    its shaft after the impulse: δ(t) = g(t − t_e) κ Λ in the club-head markers
    (trajectory.HeadRing at f = ``ring[0]`` Hz, ζ = ``ring[1]``), κ the head's extra
    velocity per unit impulse across the shaft (collision.ring_gain) at q(t_e) (the
    source's spline there, as the fit takes its own): the source's head mass and shaft
    frame, Λ (3,) [N·s] the truth's whole impulse."""
    t_e, L, frame = impact[0], np.asarray(impact[1], float), impact[2]
    kappa = ring_gain_at(adapter, _spline(arr, np.array([t_e]))[0][0], frame,
                         str(doc["settings"]["shaft_frame"]),
                         float(doc["model"]["club"]["masses_kg"][1]))
    rg = tf.HeadRing(head_marker_indices(labels, DRIVER_SWING.club_head), kappa,
                     2.0 * np.pi * float(ring[0]), float(ring[1]))
    off = rg.offsets(t - t_e, L, len(labels))
    return {"frequency_hz": float(ring[0]), "damping_ratio": float(ring[1]),
            "gain_per_kg": kappa.tolist(), "head_velocity_mps": (kappa @ L).tolist()}, off


def rms_bw(a: NDArray[np.float64], b: NDArray[np.float64], bw: float) -> float:
    """RMS over frames of |a − b| (N, 3) N, as a fraction of body weight."""
    return float(np.sqrt(np.mean(np.sum((a - b) ** 2, axis=1))) / bw)


def _grf(fit_forces, truth: WholeBodyTruth, rows) -> dict:
    """Ground reaction force errors over the frames ``rows``: total and per foot, RMS
    over frames as a fraction of body weight."""
    bw = truth.body_weight_N
    out = {"total": rms_bw(fit_forces[rows].sum(axis=1), truth.forces[rows].sum(axis=1),
                            bw)}
    for side in "lr":
        idx = [k for k, n in enumerate(truth.frames) if n.startswith(side + "_")]
        out[side] = rms_bw(fit_forces[rows][:, idx].sum(axis=1),
                            truth.forces[rows][:, idx].sum(axis=1), bw)
    return out


def _impulse_error(adapter, truth: WholeBodyTruth, prob, fr) -> dict:
    """``recover``'s ``impulse``: the fitted Λ [N·s] against the truth's, as a vector, in
    magnitude and in the directions the club head moves in under an impulse (mobility
    [1/kg] at least a tenth of the largest), with the event times [s]."""
    Lt, Lf = np.asarray(truth.impulse_Ns, float), np.asarray(fr.impulse, float)
    qe = prob.Be0 @ fr.C                   # the fitted configuration at the impact
    J = adapter.frame_jacobian(qe, truth.impact_frame)[:3]
    w, U = np.linalg.eigh(J @ np.linalg.solve(adapter.mass_matrix(qe), J.T))
    # the directions in which an impulse moves the club head: those whose mobility
    # (eigenvalue of J M⁻¹ Jᵀ) is at least a tenth of the largest (across the shaft);
    # along the shaft an impulse moves the whole arm chain and the head barely
    P = U[:, w >= 0.1 * w[-1]]
    return {"truth_Ns": Lt.tolist(), "fit_Ns": Lf.tolist(),
            "error_rel": float(np.linalg.norm(Lf - Lt) / np.linalg.norm(Lt)),
            "magnitude_error_rel": float(abs(np.linalg.norm(Lf) - np.linalg.norm(Lt))
                                         / np.linalg.norm(Lt)),
            "resolved_dims": int(P.shape[1]),
            "resolved_error_rel": float(np.linalg.norm(P.T @ (Lf - Lt))
                                        / np.linalg.norm(P.T @ Lt)),
            "resolved_share": float(np.linalg.norm(P.T @ Lt) / np.linalg.norm(Lt)),
            "mobility": w[::-1].tolist(),
            # Λ and its error along each eigenvector, the most mobile first [N·s]
            "truth_by_direction_Ns": (U[:, ::-1].T @ Lt).tolist(),
            "error_by_direction_Ns": (U[:, ::-1].T @ (Lf - Lt)).tolist(),
            "t_e_fit_s": float(fr.impact["t_e_s"]),
            "t_e_truth_s": float(truth.impact_time_s)}


def _ball_error(truth: WholeBodyTruth, prob, fr, settings: SwingSettings) -> dict | None:
    """``recover``'s ``ball`` for a truth under the collision law (None otherwise): the
    ball speed [m/s] the law predicts from the fit (``pipeline.ball_law``: the fitted
    pre-contact state, e the club prior's mean) against the truth's, and the restitution
    the fitted impulse implies, with its standard error, against the truth's e."""
    c = truth.collision
    if c is None:
        return None
    law = ball_law(fr, prob, dataclasses.replace(settings, club=truth.club,
                                                 loft_deg=truth.loft_deg))
    e, se = law["restitution_implied_by_fit"], law["restitution_implied_by_fit_se"]
    return {"speed_truth_mps": c.ball_speed_mps, "speed_fit_mps": law["ball_speed_mps"],
            "speed_error_rel": abs(law["ball_speed_mps"] - c.ball_speed_mps)
            / c.ball_speed_mps,
            "restitution_truth": c.restitution, "restitution_prior_mean": law["restitution"],
            "restitution_implied_by_fit": e, "restitution_implied_by_fit_se": se,
            "restitution_error_in_se": abs(e - c.restitution) / se if se else None,
            # e from the refit without the law's prior (the markers alone) and its SE
            "restitution_markers_alone": law["restitution_markers_alone"],
            "restitution_markers_alone_se": law["restitution_markers_alone_se"],
            "effective_mass_at_face_kg": law["effective_mass_at_face_kg"],
            "residual_impulse_magnitude_Ns": law["residual_impulse_magnitude_Ns"],
            # the prior Λ was held to and the law's impulse at the fit's own state [N·s]
            "impulse_prior_mean_Ns": [float(x) for x in prob.impact.impulse_prior_mean],
            "impulse_prior_sigma_Ns": float(prob.impact.sigma_impulse),
            "impulse_law_at_fit_Ns": law["impulse_law_Ns"],
            # the turf's impulse [N·s], the truth's and the fit's (None without turf)
            "turf_truth_Ns": None if truth.turf_impulse_Ns is None
            else [float(x) for x in truth.turf_impulse_Ns],
            "turf_fit_Ns": law["turf_impulse_Ns"],
            # inf: the truth has a turf impulse and the fit none
            "turf_error_Ns": None if truth.turf_impulse_Ns is None
            else float("inf") if law["turf_impulse_Ns"] is None
            else float(np.linalg.norm(np.asarray(law["turf_impulse_Ns"])
                                      - truth.turf_impulse_Ns))}


def recover(adapter: EngineAdapter, truth: WholeBodyTruth, settings: SwingSettings,
            stick: NDArray[np.bool_] | None = None) -> dict:
    """Fit ``truth.markers`` (N, K, 3) m with the swing fit's steps and ``settings`` (a
    SwingSettings); ``stick`` (N, nc) bool replaces the schedule derived from the IK (to
    measure the schedule's share of the error: pass ``truth.stick``). Returns the
    figures: ``grf_rms_bw`` the ground reaction force error, RMS over frames as a
    fraction of body weight, total and per foot, from the top of the backswing to impact
    and over the whole window; the fit's and the truth's mean vertical force per foot
    [BW]; the joint-torque RMS error top → impact [N·m] (all joints, and per joint);
    the marker RMSE [mm]; the pelvis residual of the fit [N]; the share of point-frames
    whose contact mode agrees with the truth's; the wall time [s]. A truth through the
    impact is fitted through it (the event time measured from its noisy club-head
    markers, as for a capture): ``impulse`` compares the fitted Λ with the truth's
    (relative error of the vector and of its magnitude, and in the directions the club
    head moves in under an impulse: the eigenvectors of J M⁻¹ Jᵀ at the fitted impact
    whose eigenvalue (mobility [1/kg], listed) is at least a tenth of the largest, with
    their share of the truth's Λ); else None. A truth under the collision law adds
    ``ball`` (``_ball_error``: the ball speed and the restitution recovered)."""
    t0 = time.perf_counter()
    h = float(truth.t[1] - truth.t[0])
    impact_ev = None
    if truth.impulse_Ns is None:
        if hasattr(settings, "impact"):   # the truth ends before the ball: one phase
            settings = dataclasses.replace(settings, impact=False)
    else:  # the event time measured from the noisy club-head markers, as for a capture

        heads = [k for k, n in enumerate(truth.labels) if n in DRIVER_SWING.club_head]
        imp = cap_events.impact(truth.markers[:, heads], 1.0 / h)
        t_hat = float(truth.t[0]) + imp.t_s
        span = settings.impact_search_frames * h
        impact_ev = impact_event(settings, truth.impact_frame, t_hat, imp.sigma_s,
                                 (max(t_hat - span, float(truth.t[1])),
                                  min(t_hat + span, float(truth.t[-2]))))
    ikr = ik.track(adapter, list(truth.labels), truth.markers, truth.q[0], pairs=GRIP_PAIRS)
    settings = marker_scale(settings, ikr.overall_rmse(), say=lambda _: None)
    prob = fit_problem(adapter, truth.labels, truth.markers, ikr.q, float(truth.t[0]), h,
                       settings, truth.floor_z_m, impact=impact_ev)
    if stick is not None:
        prob.contact.stick = np.asarray(stick, bool).copy()
    if impact_ev is None:
        fr = tf.fit(prob, ikr.q, max_iter=settings.max_iter, tol=settings.tol)
    else:
        # the truth's head meets the ground after the ball where it has a turf impulse (a
        # capture's clearance against its address height, which the truth's window lacks)
        fr = fit_through_impact(prob, ikr.q, dataclasses.replace(
            settings, club=truth.club, loft_deg=truth.loft_deg),
            turf=truth.turf_impulse_Ns is not None,
            head_markers=head_marker_indices(truth.labels, DRIVER_SWING.club_head))
    wall = time.perf_counter() - t0
    fit_frames = tuple(prob.contact.frames)
    if fit_frames != truth.frames:
        raise BadInput("truth", f"contact frames differ: {fit_frames} vs {truth.frames}")
    bw = truth.body_weight_N
    feet = {}
    for side in "lr":
        idx = [k for k, n in enumerate(truth.frames) if n.startswith(side + "_")]
        feet[side] = (fr.forces[:, idx].sum(axis=1), truth.forces[:, idx].sum(axis=1))
    end = len(truth.t) if truth.impact_time_s is None else \
        int(np.searchsorted(truth.t, truth.impact_time_s, side="right"))
    down = np.arange(truth.top_index, end)     # the top to the last frame before impact
    joints = [j for j in adapter.joint_names if j not in ground.PELVIS]
    ji = [adapter.layout.slot(j).iv for j in joints]
    err = (fr.act[:, ji] - truth.tau[:, ji])[down]
    F_res, _ = ground.pelvis_wrench(adapter, fr.q, fr.act)
    impulse = _impulse_error(adapter, truth, prob, fr) if impact_ev is not None else None
    return {
        "impulse": impulse,
        "ball": _ball_error(truth, prob, fr, settings) if impact_ev is not None else None,
        "grf_rms_bw": {"top_to_impact": _grf(fr.forces, truth, down),
                       "whole_window": _grf(fr.forces, truth, np.arange(len(truth.t)))},
        "foot_vertical_mean_bw": {s: {"fit": float(a[:, 2].mean() / bw),
                                      "truth": float(b[:, 2].mean() / bw)}
                                  for s, (a, b) in feet.items()},
        "torque_rms_error_Nm": float(np.sqrt(np.mean(err ** 2))),
        "torque_rms_truth_Nm": float(np.sqrt(np.mean(truth.tau[down][:, ji] ** 2))),
        "torque_rms_error_by_joint_Nm": dict(zip(joints, np.sqrt(np.mean(err ** 2, axis=0))
                                                 .tolist())),
        "marker_rmse_mm": 1e3 * fr.marker_rmse(),
        "fit_residual_force_peak_N": float(np.linalg.norm(F_res, axis=1).max()),
        "truth_residual_peak_N": truth.residual_peak_N,
        "schedule_agreement": float(np.mean(prob.contact.stick == truth.stick)),
        "iterations": fr.iterations, "wall_s": wall,
        # the head's ringing the fit tried and the costs (None without the impact)
        "ring_profile": (fr.impact or {}).get("ring_profile"),
        "ring": (fr.impact or {}).get("ring"),
        "body_weight_N": bw, "sigma_m": truth.sigma_m, "seed": truth.seed,
    }

"""`harness swing CAPTURE.c3d --out DIR`: ingest → IK → dynamic fit → candidate → replay.

Dimensions: F capture frames (rate [Hz]); N fitted frames (top of backswing − pad …
``post_impact_s`` after ball contact, events.py, in two phases joined at the fitted
impact time; without ``SwingSettings.impact`` up to the last frame before contact);
nv coordinates of the fitted golfer (fixtures.golfers.golfer3d with legs and an actuated
pelvis, nq == nv); K tracked markers. Positions m, angles rad, torques N·m / forces N.

Steps, each a typed object passed to the next (harness/swing/steps.py), each reported in
DIR/fit/fit.json (``document``, written once by ``write_fit_json``) and DIR/index.html:
1. ingest (harness/capture/ingest.py) and swing events (harness/capture/events.py);
2. scale the golfer from the address frames (scaling.dims_from_capture) and
3. calibrate marker offsets by alternating IK and offset estimation over frames spread
   over the whole swing (scaling.calibrate), with the grip loop as an IK pair
   (``scale_golfer`` → ScaledGolfer);
4. IK over the fitted window (warm start; ``track_window`` → IKTrack), then the dynamic
   fit (``fit_motion``, harness/fit/trajectory.py: markers + effort + smoothness, joint
   torques as controls, grip closure as a residual);
5. what is measured on it (``measure_fit`` → SwingFit), scored by the checks table
   (harness/swing/checks.py): marker RMSE per marker and per phase, club-head speed at
   impact fitted vs measured, torque interpolation defects, grip closure, open-loop
   reintegration (whole window, and per segment of ``segment_frames`` frames re-anchored
   on the fit);
6. the candidate (DIR/fit/candidate.json + .npz, model DIR/fit/golfer.urdf) replayed in
   every engine by stage 5 in horizon mode (DIR/replay/, its own evidence bundle).

The tracked markers are the marker set's body and club markers, the knee, ankle and toe
markers included (the golfer has legs). With ``SwingSettings.ground`` (the default) each
foot's contact points (heel, first and fifth metatarsal heads, placed from the foot
markers at address) stick to the floor under an assumed schedule, their forces are
decision variables of the fit kept feasible (harness/swing/ground.py), and the pelvis's
six generalized forces are a residual, minimised and reported as a wrench. The candidate
carries the generalized forces ID(q, q̇, q̈) of the fitted motion: the contact forces
enter the engines' replay folded into them (J_cᵀλ in the legs' and the pelvis's
coordinates), not as external forces; the assumed schedule is recorded in the
candidate's provenance (its contact_schedule field is for contact replay, stage 4).
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from fixtures.export import to_urdf
from fixtures.golfers import CLUB_CHOICES, CLUB_MASSES_KG, CLUBS, SHAFT_COORDINATES, bend_point
from harness.capture import events as cap_events
from harness.capture import ik
from harness.capture.ingest import ingest
from harness.core.errors import BadInput
from harness.core.io import npz_bytes, write_bytes_atomic, write_json_atomic, write_text_atomic
from harness.core.strict import MAX_CLUB_MASS_KG
from harness.core.tolerances import lookup
from harness.fit import collision as col
from harness.fit import trajectory as tf
from harness.fit import trajectory_uncertainty
from harness.fit.schedules import mixture
from harness.model import registry
from harness.model.candidate import Marker, from_arrays, save
from harness.model.integrators import Method, rollout
from harness.model.prepared import PreparedModel
from harness.stages.replay.measures import window_length
from harness.swing import activation as swing_act
from harness.swing import consistency, ground, impact_time, poses, segments
from harness.swing.identifiability import scaled_parameters
from harness.swing.scaling import (
    GRIP_PAIRS,
    build,
    calibrate,
    contact_targets,
    dims_from_capture,
    floor_height,
    place_contacts,
)
from harness.swing.steps import (
    FittedSwing,
    GroundPlacement,
    IKTrack,
    Reintegration,
    ScaledGolfer,
    SwingFit,
)

if TYPE_CHECKING:
    from fixtures.golfers import GolferDims
    from harness.capture.events import SwingEvents
    from harness.capture.ingest import Capture
    from harness.core.conventions import Layout
    from harness.model.integrators import Method
    from harness.model.protocol import EngineAdapter


@dataclass(frozen=True)
class SwingSettings:
    """Everything that shapes the fit; written to fit.json."""
    pad_s: float = 0.05              # fitted window starts this long before the top
    calib_stride: int = 12           # calibration frames: every stride-th before the top,
    calib_stride_down: int = 2       # ... and every stride_down-th in the downswing
    calib_rounds: int = 16          # alternating IK / offset rounds (docs/swing/fit.md)
    calib_relax: float = 1.5         # over-relaxation of the offset updates (scaling.py)
    # marker error scale of the objective [m]; None: the IK's marker RMSE over the
    # window (marker_scale)
    sigma_marker_m: float | None = None
    sigma_closure_m: float = 0.001
    w_effort: float = 1e-3
    w_smooth: float = 1.0            # docs/swing/fit.md: the held-out study and the force truth
    torque_scale_nm: float = 50.0    # joints; the pelvis translations use 10× (N)
    knot_frames: int = 3
    control_degree: int = 16         # replay controls lobatto<P>: P + 1 knots per interval
    samples_per_frame: int = 16      # only for control_degree 0 (cubic samples)
    reint_rtol: float = 1e-12        # DOP853 rtol = atol of the reintegration and replay
    max_iter: int = 60
    tol: float = 1e-4
    segment_frames: int = 10
    body_mass_kg: float = 80.0
    # the golfer's joint limits held by the dynamic fit too (its spline coefficients kept
    # in each joint's range, so the motion stays inside between frames as well; the IK
    # holds them always). False releases them (--no-joint-limits): docs/swing/fit.md,
    # "Joint limits"
    joint_limits: bool = True
    # the club in the lead hand: "weld" or "hinge" (fixtures/golfers.py;
    # docs/swing/marker-maximum.md says what the hinge changes and why it is not yet the
    # default)
    grip: str = "weld"
    # the club's shaft: "rigid" or "flex", bending at one point (fixtures/golfers.py;
    # docs/swing/shaft.md). The marker offsets are calibrated on the rigid club either way,
    # so zero bend is the club as it stands at address
    shaft: str = "rigid"
    shaft_law_iter: int = 15         # each refit with one bend held to its nearest spring
    shaft_law_sigma_nm: float = 0.1  # N·m whitening of that spring's violation per frame
    # a refit with the upper body's joint actuators activation-driven (excitation →
    # activation → torque, harness/swing/activation.py), reported beside this fit
    activation: bool = False
    activation_iter: int = 15
    # ground contact (harness/swing/ground.py): the feet's contact points stick to the
    # floor (assumed schedule), their forces are decision variables kept feasible
    ground: bool = True
    mu: float = 0.8                  # Coulomb friction, rubber sole on turf or a mat
    sigma_contact_m: float = 0.002   # whitening of the stick condition p_c(q) = anchor
    sigma_slip_m: float = 0.02       # ... and of the no-slip condition ṗ_c = 0 [m/s]
    w_force: float = 1.0             # regularisation of the contact forces (body weight)
    w_residual: float = 1000.0       # weight of the pelvis residual (scaled by 25 N, 75 N·m)
    residual_force_scale_n: float = 25.0
    residual_moment_scale_nm: float = 75.0
    contact_schedule: str = "lift"   # "lift": a point sticks while near the floor in IK;
    lift_height_m: float = 0.015     # "planted": every point sticks throughout
    touch_height_m: float = 0.003    # "lift": a flight run extends while the point's
    touch_window: int = 5            # height (mean over this many frames) is above this
    min_run_frames: int = 3
    tradeoff_weights: tuple = (1.0, 10.0, 100.0, 10000.0)   # refits: trade-off table
    tradeoff_iter: int = 8
    # ball impact (a hybrid event, harness/fit/trajectory.py ImpactEvent): the window runs
    # to post_impact_s after the measured impact, in two phases joined by the reset map
    impact: bool = True
    post_impact_s: float = 0.03
    impact_frame: str = "club_head_centre"   # the model frame the ball's impulse acts at
    shaft_frame: str = "club_grip_r_point"   # a model frame up the shaft (the face normal)
    ball_mass_kg: float = 0.04593            # the Rules' maximum mass of a golf ball
    sigma_reset: float = 1e-2        # N·s | N·m·s: whitening of M(v⁺ − v⁻) − JᵀΛ (1e-3
    #                                  held it 10× tighter but left the quick fit far from
    #                                  converged in its 15 iterations)
    sigma_impulse_ns: float = 4.6    # N·s prior scale of Λ: 45.93 g at 100 m/s
    impact_search_frames: float = 2.0   # t_e searched within t̂ ± this many frames
    impact_refit_iter: int = 10
    club: str = "auto"               # auto | driver | iron: the smash-factor band and the
    #                                  club's masses (auto: from the club's measured length)
    club_masses_kg: tuple | None = None   # (whole club, head) kg of a weighed club; None:
    #                                  the club's typical ones (fixtures/golfers.py)
    loft_deg: float | None = None    # the face's loft [deg]; None: the club's typical one
    impulse_prior: str = "law"       # law | free: Λ's prior in the fit's refits. law:
    #                                  about the collision law's impulse at the fit's
    #                                  own pre-contact state (the first fit's for the
    #                                  profile, then re-centred; the impulse follows from
    #                                  the law), with the spread the restitution prior
    #                                  gives it, |P_c|·sd(e), or sigma_residual_ns; free:
    #                                  about zero with sigma_impulse_ns (the law only read
    #                                  after the fit)
    # with impulse_prior "law": the refit without the law's prior that reads what the
    # markers alone say of Λ and e (fit_through_impact, impact_time.prior_free_refit): runs
    # of 5 iterations (each stopped early only below a relative cost decrease of
    # markers_alone_tol) until one moves Λ by less than markers_alone_settle_sd of its
    # standard deviation, at most markers_alone_iter iterations; the quick settings keep
    # these. A relative cost decrease alone stopped it short: at 1e-4 the law truth's
    # seed 0 read e 0.823 where the settled refit reads 0.852 (the cost falls by about one
    # unit of 3200 along a whole SE of e); on the bundled driver 1.116 against 1.119 (full)
    # and 1.048 against 1.077 (quick; 1e-8 and 100 iterations)
    markers_alone_iter: int = 100
    markers_alone_tol: float = 1e-10
    markers_alone_settle_sd: float | None = 0.1
    sigma_residual_ns: float | None = None   # N·s: with impulse_prior "law", the prior's
    #                                  scale instead of |P_c|·sd(e): a prior on the
    #                                  residual impulse (harness/fit/collision.py CLUBS)
    # the club head ringing on the shaft after contact (trajectory.HeadRing): tried beside
    # none (the loss handed on within the frame) at the frequency the residuals hold and
    # about it, the lowest kept where it lies more than swing/ring_cost_margin below none's
    # (impact_time.ring_profile); its damping ratio, 0 ≤ ζ < 1.
    # False: not tried (docs/swing/impact.md, "The head's ringing on the shaft")
    ring: bool = True
    ring_zeta: float = 0.1
    # the relative cost decrease the ringing's refits stop below (at most
    # impact_refit_iter iterations each): far below the fit's own tol, so each refit runs
    # its iterations and their costs compare. At the fit's 1e-4 they stopped after 5-9
    # and scattered by about 3 (a truth's refit at the parabola's vertex came back 3.3
    # above its neighbours, and the frequency 45.2 Hz against the truth's 50; at 1e-7:
    # 48.7 Hz); on the bundled driver the fit's wall time rises from 46 s to 48 s
    ring_refit_tol: float = 1e-7


QUICK = SwingSettings(calib_stride=24, calib_stride_down=4, calib_rounds=6, knot_frames=3,
                      max_iter=15, tol=1e-3, tradeoff_weights=(), impact_refit_iter=6)


def _finite(x):
    """JSON-safe: NaN/inf → None."""
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if np.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def shaft_figures(layout: Layout, fr: tf.TrajectoryFitResult,
                  dims: GolferDims) -> dict | None:
    """The bent shaft's figures (None when the club is rigid): per bend coordinate, its
    range [rad], the club-head centre's deflection across the shaft [mm] (the head's
    distance below the bend point × the sine of the angle), the fitted bending moment's range [N·m]
    (the inverse dynamics' generalized force of the coordinate, what the engines get)
    and the elastic law it is closest to: the least squares over the frames of
    moment ≈ −k θ − c θ̇ + m₀ (k [N·m/rad], c [N·m·s/rad], m₀ [N·m]) with its R² (1: the
    moment is that spring and damper; near 0: it is not). The fit does not hold the
    moment to any law; these say how near one it came."""
    names = [n for n in SHAFT_COORDINATES if n in layout.joint_names]
    if not names:
        return None
    arm = dims.club - bend_point(dims)
    out = {"bend_point_below_grip_m": bend_point(dims), "head_below_bend_m": arm,
           "what": "moment ≈ −k θ − c θ̇ + m0, least squares over the frames; R² the "
                   "share of the fitted moment's variance the law explains"}
    for n in names:
        sl = layout.slot(n)
        th, om, m = fr.q[:, sl.iq], fr.v[:, sl.iv], fr.tau[:, sl.iv]
        A = np.c_[-th, -om, np.ones_like(th)]
        (k, c, m0), *_ = np.linalg.lstsq(A, m, rcond=None)
        var = float(np.var(m))
        r2 = 1.0 - float(np.var(m - A @ np.array([k, c, m0]))) / var if var > 0 else 1.0
        out[n] = {"angle_range_rad": [float(th.min()), float(th.max())],
                  "deflection_range_mm": [1e3 * arm * float(np.sin(th.min())),
                                          1e3 * arm * float(np.sin(th.max()))],
                  "moment_range_Nm": [float(m.min()), float(m.max())],
                  "stiffness_Nm_per_rad": float(k), "damping_Nms_per_rad": float(c),
                  "offset_Nm": float(m0), "r2": r2}
    return out


def shaft_law_refits(prob: tf.FitProblem, fr: tf.TrajectoryFitResult, Q0: NDArray[np.float64],
                     s: SwingSettings, figures: dict, layout: Layout,
                     in_down: NDArray[np.bool_], say: Callable[[str], None] = print) -> None:
    """Adds to each bend coordinate's ``figures`` (shaft_figures) ``held_to_law``: a
    refit of the problem ``prob`` warm-started from the fit ``fr`` (Q0 (N, nv) its start,
    at most ``s.shaft_law_iter`` iterations, the same event time) with that one
    coordinate's moment held to its nearest spring (trajectory.PassiveLaw, its violation
    whitened by ``s.shaft_law_sigma_nm``): the
    objective's total (dimensionless) against the fit's, the marker RMSE top → impact
    [m] (``in_down`` the frames' mask) and the law's own violation (RMS, N·m). A bend the
    markers can leave to a spring costs the objective almost nothing."""
    for n in SHAFT_COORDINATES:
        if n not in figures:
            continue
        f = figures[n]
        held = copy.copy(prob)
        held.passive = tf.PassiveLaw((layout.slot(n).iv,), f["stiffness_Nm_per_rad"],
                                     f["damping_Nms_per_rad"], f["offset_Nm"],
                                     sigma=s.shaft_law_sigma_nm)
        r = tf.fit(held, Q0, max_iter=s.shaft_law_iter, tol=s.tol, C0=fr.C,
                   impulse0=fr.impulse)
        viol = r.tau[:, layout.slot(n).iv] + held.passive.violation_part(r.q, r.v)[:, 0]
        f["held_to_law"] = {"objective": r.components["total"],
                            "objective_free": fr.components["total"],
                            "marker_rmse_top_to_impact_m": r.marker_rmse(in_down),
                            "marker_rmse_top_to_impact_free_m": fr.marker_rmse(in_down),
                            "law_violation_rms_Nm": float(np.sqrt(np.mean(viol ** 2))),
                            "iterations": r.iterations}
        say(f"shaft: {n} held to its nearest spring: objective "
            f"{r.components['total']:.1f} against {fr.components['total']:.1f} free, marker "
            f"RMSE {1e3 * r.marker_rmse(in_down):.1f} mm")


def carry_coordinates(Q: np.ndarray, old: Layout, new: Layout) -> np.ndarray:
    """(F, new.nq) [rad | m]: the coordinates Q (F, old.nq) of one layout (a
    harness.core.conventions Layout) carried onto another by joint name; joints the old
    layout lacks (the bent shaft's) at zero."""
    Q = np.atleast_2d(np.asarray(Q, float))
    out = np.zeros((len(Q), new.nq))
    for slot in old.slots:
        to = new.slot(slot.name)
        out[:, to.iq:to.iq + to.nq] = Q[:, slot.iq:slot.iq + slot.nq]
    return out


def address_frames(ev: SwingEvents) -> np.ndarray:
    """(n,) frame indices that scale the golfer: the ten before address up to the takeaway
    (``ev``: the swing events of harness/capture/events.py)."""
    return np.arange(max(0, ev.address_frame - 10), ev.takeaway_frame + 1)


def calibration_frames(ev: SwingEvents, s: SwingSettings) -> np.ndarray:
    """(n,) frame indices that calibrate the marker offsets: every ``calib_stride``-th before
    the top, every ``calib_stride_down``-th from the top to ball contact."""
    return np.unique(np.r_[np.arange(0, ev.top_frame, s.calib_stride),
                           np.arange(ev.top_frame, ev.impact_frame, s.calib_stride_down)])


def fit_capture(capture_path: str | os.PathLike[str], workdir: Path,
                settings: SwingSettings = SwingSettings(), up: str = "auto",
                cutoff_hz: float | None = None, say: Callable[[str], None] = print) -> FittedSwing:
    """Steps 1–5, each a typed object passed to the next (harness/swing/steps.py):
    ingest → events → ScaledGolfer → IKTrack → SwingFit; the candidate, golfer.urdf and
    trajectory.npz written to ``workdir``/fit (fit.json is written once, by the caller,
    from ``document``)."""
    s = settings
    t_start = time.perf_counter()
    cap = ingest(capture_path, up=up, cutoff_hz=cutoff_hz)
    ev = cap_events.detect(cap)
    say(f"capture: {cap.n_frames} frames at {cap.rate_hz:g} Hz; rejected "
        f"{', '.join(cap.rejected) or 'none'}; top {ev.top_s:.3f} s, impact {ev.impact_s:.4f} s")
    golfer = scale_golfer(cap, ev, s, say)
    track = track_window(cap, ev, golfer, s, say)
    s = marker_scale(s, track.rmse_m, say)
    prob, fr = fit_motion(cap, ev, golfer, track, s, say)
    fit = measure_fit(cap, ev, golfer, track, prob, fr, s, say)
    wall_s = time.perf_counter() - t_start
    return finish(cap, ev, golfer, track, fit, s, workdir, wall_s, say)


def marker_scale(s: SwingSettings, ik_rmse_m: float,
                 say: Callable[[str], None] = print) -> SwingSettings:
    """``s`` with its marker error scale [m] resolved: ``s.sigma_marker_m`` when given,
    else the IK's marker RMSE over the fitted window ``ik_rmse_m`` [m] (how far the best
    pose of each frame, every frame free, misses the markers: their noise, soft-tissue
    motion and what the model cannot follow), so the objective weighs the markers
    against its dynamics by the size of this capture's marker error."""
    if s.sigma_marker_m is not None:
        return s
    say(f"marker error scale: {1e3 * ik_rmse_m:.2f} mm (the IK's marker RMSE)")
    return dataclasses.replace(s, sigma_marker_m=float(ik_rmse_m))


def scale_golfer(cap: Capture, ev: SwingEvents, s: SwingSettings,
                 say: Callable[[str], None] = print) -> ScaledGolfer:
    """Step 2 and 3: the golfer scaled from the address frames, its club chosen, its
    marker offsets calibrated (scaling.calibrate) on the fit engine's adapter; with
    ``s.ground`` the feet's contact points placed, with a bent shaft the model rebuilt
    with the calibration's points where the rigid club put them."""
    addr = address_frames(ev)
    dims, measured = dims_from_capture(cap, addr, body_mass_kg=s.body_mass_kg)
    club = which_club(s.club, measured, s.club_masses_kg)
    dims = dims.for_club(club["club"], club["masses_kg"])
    say(f"club: {club['club']}, {club['how']}")
    frames = calibration_frames(ev, s)
    ref = registry.adapter_class(registry.preferred("fit"))  # exact derivatives, Jacobians
    t0 = time.perf_counter()
    model, adapter, res, history, labels = calibrate(ref, cap, frames, dims,
                                                     rounds=s.calib_rounds,
                                                     relax=s.calib_relax, grip=s.grip)
    placement, contacts = None, {}
    if s.ground:
        # contact points placed from the foot markers at address (scaling.contact_targets),
        # expressed in the feet of the calibrated address pose
        floor = floor_height(cap, addr)
        ka = int(np.argmin(np.abs(frames - ev.address_frame)))
        contacts = place_contacts(adapter, res.q[ka], contact_targets(cap, addr, floor))
        offsets = {f.name: (f.body, f.xyz) for f in model.spec.frames if f.name in labels}
        model = build(dims, offsets | contacts, name=model.name, grip=s.grip)
        adapter = ref(model)
        placement = GroundPlacement(floor, int(frames[ka]), contacts)
    calib_q = res.q
    if s.shaft != "rigid":
        # the bent shaft, its points below the bend on the head's body where the rigid
        # calibration put them (scaling.build), so zero bend is the calibrated club
        rigid = model.layout
        placed = {f.name: (f.body, f.xyz) for f in model.spec.frames
                  if f.name in labels or (placement and f.name in contacts)}
        model = build(dims, placed, name=model.name, grip=s.grip, shaft=s.shaft)
        adapter = ref(model)
        calib_q = carry_coordinates(res.q, rigid, model.layout)
    calib_s = time.perf_counter() - t0
    say(f"calibration: {len(frames)} frames, IK RMSE by round "
        f"{', '.join(f'{1e3 * h:.1f}' for _, h in history)} mm ({calib_s:.0f} s)")
    return ScaledGolfer(dims, measured, club, ref, model, adapter, labels, addr, frames,
                        calib_q, [h_ for _, h_ in history], calib_s, placement)


def track_window(cap: Capture, ev: SwingEvents, golfer: ScaledGolfer, s: SwingSettings,
                 say: Callable[[str], None] = print) -> IKTrack:
    """Step 4's IK: the fitted window (``s.pad_s`` before the top to ``s.post_impact_s``
    after contact, or to the last frame before contact without the impact), warm-started
    from the calibration pose nearest its first frame."""
    pad = int(round(s.pad_s * cap.rate_hz))
    first = max(0, ev.top_frame - pad)
    # with the impact: to post_impact_s after it, two phases joined by the reset map at
    # t_e; without: to the last frame before ball contact (events.impact_frame)
    last = asked = ev.impact_frame
    if s.impact:
        asked = ev.impact_frame + 1 + int(round(s.post_impact_s * cap.rate_hz))
        last = min(cap.n_frames - 1, asked)
    win = np.arange(first, last + 1)
    labels = golfer.labels
    Y = np.stack([cap.marker(l)[win] for l in labels], axis=1)
    k0 = int(np.argmin(np.abs(golfer.calibration_frames - first)))
    t0 = time.perf_counter()
    ikr = ik.track(golfer.adapter, labels, Y, golfer.calibration_q[k0], pairs=GRIP_PAIRS)
    ik_s = time.perf_counter() - t0
    say(f"IK over the window ({len(win)} frames): RMSE {1e3 * ikr.overall_rmse():.1f} mm "
        f"({ik_s:.0f} s)")
    return IKTrack(int(first), int(asked), win, Y, ikr.q, ikr.overall_rmse(), ik_s)


def fit_motion(cap: Capture, ev: SwingEvents, golfer: ScaledGolfer, track: IKTrack,
               s: SwingSettings, say: Callable[[str], None] = print) -> tuple:
    """Step 4's dynamic fit from the IK track: (FitProblem, its fit), through the ball
    impact with ``s.impact``."""
    h = 1.0 / cap.rate_hz
    first, last = track.first_frame, track.last_frame
    impact_ev = None
    if s.impact:
        span = s.impact_search_frames * h
        impact_ev = impact_event(s, s.impact_frame, ev.impact_s, ev.impact_sigma_s,
                                 (max(ev.impact_s - span, (first + 1) * h),
                                  min(ev.impact_s + span, (last - 1) * h)))
    prob = fit_problem(golfer.adapter, golfer.labels, track.y_m, track.q, first * h, h, s,
                       golfer.ground.floor_z_m if s.ground else None, impact=impact_ev)

    def progress(i: int, c: float) -> None:
        if i % 5 == 0:
            say(f"  fit iteration {i}: cost {c:.1f}")
    if s.impact:
        fr = fit_through_impact(prob, track.q, dataclasses.replace(s, club=golfer.club["club"]),
                                progress=progress, say=say,
                                turf=bool(turf_contact(ev.sole_clearance_m)),
                                head_markers=head_marker_indices(golfer.labels,
                                                                 cap.markerset.club_head))
    else:
        fr = tf.fit(prob, track.q, max_iter=s.max_iter, tol=s.tol, progress=progress)
    say(f"fit: {fr.iterations} iterations ({fr.message}), marker RMSE "
        f"{1e3 * fr.marker_rmse():.1f} mm ({fr.solve_time_s:.0f} s)")
    return prob, fr


def head_marker_indices(labels: Sequence[str], club_head: Sequence[str]) -> tuple:
    """The indices in ``labels`` of the marker set's club-head markers ``club_head``."""
    return tuple(k for k, n in enumerate(labels) if n in set(club_head))


def turf_contact(clearance_m: float) -> bool | None:
    """Whether the club head met the ground after the ball: its clearance through contact
    over its height at address [m] (capture/events.py ``sole_clearance_m``) more than
    ``swing/turf_clearance_m`` below zero; None when it was not measured (NaN)."""
    if not np.isfinite(clearance_m):
        return None
    return bool(clearance_m <= -lookup("swing", "turf_clearance_m").atol)


def turf_directions(face_velocity) -> NDArray[np.float64]:
    """(2, 3) orthonormal rows, world axes: the plane a turf impulse on the club head lies
    in: up (the floor's normal, +z) and the horizontal direction of the head's path
    ``face_velocity`` (3,) [m/s] just before contact (the sole's friction acts along it)."""
    up = np.array([0.0, 0.0, 1.0])
    along = np.array([face_velocity[0], face_velocity[1], 0.0])
    return np.vstack([up, along / max(float(np.linalg.norm(along)), 1e-300)])


def ring_gain_at(adapter, q: NDArray[np.float64], face_frame: str, shaft_frame: str,
                 m_head_kg: float) -> NDArray[np.float64]:
    """κ (3, 3) [1/kg] (collision.ring_gain) at the configuration q (nv,): the adapter's
    mass matrix and the face point's Jacobian there, a head of ``m_head_kg`` [kg], the
    shaft's axis from the face point ``face_frame`` to ``shaft_frame``."""
    J = adapter.frame_jacobians(q, [face_frame])[0, :3, :]
    ends = adapter.frame_poses(q, [face_frame, shaft_frame])[:, :3]
    return col.ring_gain(adapter.mass_matrix(q), J, m_head_kg, ends[1] - ends[0])


def head_ring(prob: tf.FitProblem, C: NDArray[np.float64], s: SwingSettings,
              markers: Sequence[int], f_hz: float) -> tf.HeadRing:
    """The head's ringing on the shaft at ``f_hz`` [Hz] (damping ``s.ring_zeta``) seen by
    the club-head markers ``markers`` (indices into the fit's labels), its gain κ
    (``ring_gain_at``, 1/kg) at the impact state q(t_e) of the coefficients C (M, nv):
    the head's mass ``head_mass_kg``, the shaft's axis from the face point to
    ``s.shaft_frame``. Other frequencies of it: ``HeadRing.at`` (κ is not recomputed)."""
    kappa = ring_gain_at(prob.adapter, prob.Be0 @ C, s.impact_frame, s.shaft_frame,
                         head_mass_kg(s))
    return tf.HeadRing(tuple(int(k) for k in markers), kappa, 2.0 * np.pi * float(f_hz),
                       float(s.ring_zeta))


def fit_through_impact(prob: tf.FitProblem, Q0: NDArray[np.float64], s: SwingSettings,
                       progress: Callable[[int, float], None] | None = None,
                       say: Callable[[str], None] | None = None,
                       turf: bool = False,
                       head_markers: Sequence[int] = ()) -> tf.TrajectoryFitResult:
    """The two-phase fit of ``prob`` (with its impact event) from Q0 (N, nv) [rad | m] with
    settings ``s`` (its club resolved, not "auto"): impact_time.fit_impact with Λ's prior
    as ``s.impulse_prior`` says: "law", about the collision law's impulse at the first
    fit's pre-contact state for the event-time profile, then re-centred on the chosen
    fit's own (impact_time._recentre), with the spread e's prior gives it, |P_c|·sd(e)
    [N·s] (or ``s.sigma_residual_ns``); "free", about zero with ``s.sigma_impulse_ns``.
    ``turf``: the club head met the ground after the ball (``turf_contact``); with the law
    held, the prior is loosened to ``s.sigma_impulse_ns`` in the plane of a turf impulse
    (``turf_directions``, at the same instant: within the frame interval of the ball), so
    the data decide the turf's part and the law's prior still holds the rest.
    ``head_markers`` (indices into the fit's labels, the club-head markers): with
    ``s.ring`` the head's ringing on the shaft is tried beside none
    (impact_time.ring_profile: the lowest ringing kept where it gains
    swing/ring_cost_margin over none)."""
    def law_prior(r: tf.TrajectoryFitResult) -> tuple:
        b = ball_law(r, prob, s)
        sigma = b["impulse_law_sd_Ns"] if s.sigma_residual_ns is None else s.sigma_residual_ns
        if turf:
            return (np.asarray(b["impulse_law_Ns"]), float(sigma),
                    turf_directions(b["face_velocity_mps"]), float(s.sigma_impulse_ns))
        return np.asarray(b["impulse_law_Ns"]), float(sigma)
    held = impulse_prior(s) == "law"
    def search(warm: tuple | None = None) -> tf.TrajectoryFitResult:
        return impact_time.fit_impact(prob, Q0, max_iter=s.max_iter, tol=s.tol,
                                      progress=progress, refit_iter=s.impact_refit_iter,
                                      say=say, prior=law_prior if held else None, warm=warm)
    fr = search()
    if s.ring and len(head_markers):
        base = head_ring(prob, fr.C, s, head_markers, 1.0)   # κ once, at the fit's q(t_e)
        fr = impact_time.ring_profile(prob, Q0, fr, base.at, s.impact_refit_iter,
                                      s.ring_refit_tol, say, again=search)
    if held:
        r, free = impact_time.prior_free_refit(prob, Q0, fr, s.sigma_impulse_ns,
                                               s.markers_alone_iter, s.markers_alone_tol,
                                               settle_sd=s.markers_alone_settle_sd)
        b = ball_law(r, free, s)
        fr.impact["markers_alone"] = {
            "impulse_Ns": [float(x) for x in r.impulse],
            "restitution": b["restitution_implied_by_fit"],
            "restitution_se": b["restitution_implied_by_fit_se"],
            "iterations": int(r.iterations), "converged": bool(r.converged),
            "wall_s": float(r.solve_time_s),
            "what": "the fit refitted at the same event time with Λ's prior the free "
                    "fit's weak one about zero (warm-started from the fit held to the "
                    "law, in runs of 5 iterations until Λ settles; converged: it "
                    "settled): what the markers alone say of the impulse and of e"}
    return fr


def _ground_step(golfer: ScaledGolfer, prob, fr, s: SwingSettings, say) -> tuple:
    """(fit.json's ``ground`` section, the per-interval contact checks), both None
    without ground contact."""
    if not s.ground:
        return None, None
    adapter = golfer.adapter
    info = golfer.ground.to_json() | ground.evaluate(adapter, prob, fr)
    per_interval = consistency.evaluate(adapter, prob, fr)
    info["consistency"] = consistency.summarise(per_interval, prob.contact.frames)
    info["tradeoff"] = ground.tradeoff(prob, fr, s, say) if s.tradeoff_weights else []
    say(f"ground: residual peak {info['residual']['force_peak_N']:.1f} N, "
        f"{info['residual']['moment_peak_Nm']:.1f} N·m; min normal force "
        f"{info['min_normal_force_N']:.1f} N; slip ≤ "
        f"{info['max_slip_speed_mm_s']:.1f} mm/s")
    return info, per_interval


def _identifiability(golfer: ScaledGolfer, track: IKTrack, fr, s: SwingSettings,
                     say) -> dict:
    """fit.json's ``identifiability``: the scaled lengths' standard errors (offsets
    fixed) at the fitted motion."""
    model = golfer.model
    t0 = time.perf_counter()
    ident = scaled_parameters(model, golfer.dims, golfer.engine_class, fr.q, track.y_m,
                              golfer.labels, tuple((a, b) for a, b, _ in GRIP_PAIRS),
                              s.sigma_marker_m, s.sigma_closure_m,
                              lambda d, o: build(d, o, name=model.name, grip=s.grip,
                                                 shaft=s.shaft))
    ident["wall_s"] = time.perf_counter() - t0
    say("identifiability of the scaled lengths (offsets fixed): " + ", ".join(
        f"{k} ± {1e3 * v:.1f} mm" if v is not None and np.isfinite(v) else f"{k} unresolved"
        for k, v in ident["lengths"]["lengths_se_m"].items()))
    return ident


def _motion_uncertainty(prob: tf.FitProblem, fr: tf.TrajectoryFitResult, adapter,
                        say: Callable[[str], None]) -> dict:
    """fit.json's ``identifiability.motion``: the standard errors of the fitted
    coordinates [rad | m] (RMS and largest over the frames) and of the impulse [N·s], by
    the Gauss–Newton covariance of the whitened residuals at the optimum
    (harness/fit/trajectory_uncertainty.py)."""
    names = list(adapter.joint_names)
    out = trajectory_uncertainty.summary(prob, fr, names if len(names) == adapter.nv
                                         else None)
    if out["computed"]:
        worst = max(out["coordinates"].items(), key=lambda kv: kv[1]["se_rms"])
        say(f"standard errors of the fitted motion: {out['coefficients']} coefficients, "
            f"largest RMS SE {worst[1]['se_rms']:.2g} ({worst[0]}), "
            f"{out['wall_s']:.1f} s")
    return out


def _reintegrate(adapter, prob, fr, labels, s: SwingSettings) -> tuple:
    """((q, v) (R, nv) the fitted spline at the replay knots, the Reintegration)."""
    qf, vf, _ = prob.evaluate(fr.C, fr.t_replay)
    t0 = time.perf_counter()
    method = reintegration_method(s)
    dev, diverged_at = _open_loop(adapter, fr, prob, labels, qf, method)
    seg = _segment_reintegration(adapter, fr, prob, labels, s.segment_frames, method, qf, vf)
    return (qf, vf), Reintegration(dev, diverged_at, seg, method, time.perf_counter() - t0)


def _masks(track: IKTrack, ev, n_labels: int, impact: bool) -> tuple:
    """(in_down, phases): the (N, K) masks of the top → impact frames and of each phase."""
    win, ones = track.frames, np.ones((1, n_labels), bool)
    in_down = ((win >= ev.top_frame) & (win <= ev.impact_frame))[:, None] & ones
    phases = {"before_top": (win < ev.top_frame)[:, None] & ones, "top_to_impact": in_down}
    if impact:
        phases["after_impact"] = (win > ev.impact_frame)[:, None] & ones
    return in_down, phases


def measure_fit(cap: Capture, ev: SwingEvents, golfer: ScaledGolfer, track: IKTrack,
                prob: tf.FitProblem, fr: tf.TrajectoryFitResult, s: SwingSettings,
                say: Callable[[str], None] = print) -> SwingFit:
    """Step 5: what is measured on the fit: ground contact, identifiability, the
    reintegration, the club-head speeds through impact and fit.json's ``fit`` section."""
    adapter, labels = golfer.adapter, golfer.labels
    act = fr.act if fr.act is not None else fr.tau
    ground_info, per_interval = _ground_step(golfer, prob, fr, s, say)
    ident = _identifiability(golfer, track, fr, s, say)
    ident["motion"] = _motion_uncertainty(prob, fr, adapter, say)
    in_down, phases = _masks(track, ev, len(labels), s.impact)
    (qf, vf), reint = _reintegrate(adapter, prob, fr, labels, s)
    h = 1.0 / cap.rate_hz
    ch = [labels.index(l) for l in cap.markerset.club_head if l in labels]
    mkf_frames = np.stack([adapter.frame_poses(q, labels)[:, :3] for q in fr.q])
    ring = tf.ring_offsets(prob, fr.impulse) if s.impact else None
    if ring is not None:       # the head's ringing on the shaft, as the fit sees it
        mkf_frames = mkf_frames + ring
    # the fitted club-head markers where the capture sees them, so that each interval's
    # fitted speed averages the same markers as the measured one (events.py)
    club_pts = np.where(np.isfinite(track.y_m[:, ch]).all(axis=2)[..., None],
                        mkf_frames[:, ch], np.nan)
    # one speed definition (events.py): the interval speed, the club-head markers' mean
    # displacement over one frame interval × rate, fitted and measured over the same
    # interval: the last before contact (impact_frame − 1,
    # impact_frame), and with the impact the first after it (impact_frame + 1, + 2)
    kf = ev.impact_frame - track.first_frame
    v_fit = float(cap_events.interval_speeds(club_pts, 1.0 / h)[kf])
    s_meas = cap_events.interval_speeds(cap_events.club_head_markers(cap), cap.rate_hz)
    impact_info = _impact_summary(fr, prob, ev, club_pts, kf, h,
                                  dataclasses.replace(s, club=golfer.club["club"])) \
        if s.impact else None
    figures = {"iterations": fr.iterations, "converged": fr.converged,
               "message": fr.message, "wall_s": fr.solve_time_s,
               "components": fr.components,
               "marker_rmse_m": fr.marker_rmse(),
               "marker_rmse_by_phase_m": {k: fr.marker_rmse(m) for k, m in phases.items()},
               "marker_max_by_phase_m": {k: fr.marker_max(m) for k, m in phases.items()},
               "marker_rmse_by_label_m": fr.marker_rmse_by_label(),
               "marker_rmse_top_to_impact_by_label_m": fr.marker_rmse_by_label(in_down),
               "closure_max_m": float(np.linalg.norm(fr.closure_residual, axis=2).max()) if
               fr.closure_residual.size else 0.0,
               "defects": fr.defects,
               "club_head_speed_at_impact_mps": {
                   "fitted": v_fit, "measured": float(s_meas[ev.impact_frame]),
                   "interval_frames": [int(ev.impact_frame - 1), int(ev.impact_frame)],
                   "measured_pre_impact": ev.clubhead_speed_pre_impact_mps,
                   "definition": "|p[k] − p[k−1]|·rate over the last frame interval "
                                 "before ball contact (events.py), of the mean of the "
                                 "club-head markers (fitted: the model's marker frames)"},
               "impact": impact_info,
               "torque_peak": dict(zip(adapter.joint_names,
                                       np.abs(act).max(axis=0).tolist())),
               "pelvis_residual_peak": _pelvis_residual(adapter, act),
               "joint_range": joint_range(adapter, fr.q, fr.t, s.joint_limits)}
    return SwingFit(prob, fr, act, qf, vf, in_down, phases, club_pts, s_meas, ground_info,
                    per_interval, ident, impact_info, reint, figures)


def finish(cap: Capture, ev: SwingEvents, golfer: ScaledGolfer, track: IKTrack,
           fit: SwingFit, s: SwingSettings, workdir: Path, wall_s: float,
           say: Callable[[str], None] = print) -> FittedSwing:
    """The optional refits (activation, the bent shaft's springs), the stick figures,
    the per-phase marker table, the headline; the candidate and trajectory.npz saved."""
    fr, prob, labels = fit.result, fit.problem, golfer.labels
    adapter = golfer.adapter
    kf = ev.impact_frame - track.first_frame
    act_json = act_series = None
    if s.activation:
        ch = [labels.index(l) for l in cap.markerset.club_head if l in labels]
        act_series, act_json = swing_act.compare(prob, fr, s, ch, kf, fit.in_down, say)
    event_poses = _event_poses(adapter, golfer.model.spec, cap, ev, golfer.calibration_frames,
                               golfer.calibration_q, fr.q, track.frames, labels,
                               golfer.address_frames, s.calib_stride)
    by_phase = _phase_rmse(adapter, cap, ev, golfer.calibration_frames, golfer.calibration_q,
                           fr, track.frames, labels)
    shaft = shaft_figures(adapter.model.layout, fr, golfer.dims)
    if shaft is not None:
        shaft_law_refits(prob, fr, track.q, s, shaft, adapter.model.layout, fit.in_down, say)
    walls = golfer.calibration_wall_s + track.wall_s + fit.figures["wall_s"]
    headline = ground.headline(fit.ground, walls, fr) \
        | consistency.headline((fit.ground or {}).get("consistency")) \
        | (impact_headline(fit.impact) if fit.impact else {})
    cpath, pm = _save_candidate(cap, golfer, track, fit, s, workdir)
    arrays = _arrays(golfer, track, fit, s, event_poses, act_series)
    _save_trajectory(workdir / "fit", golfer, track, fit, s)
    return FittedSwing(cap, ev, golfer, track, fit, s, headline, act_json, act_series, shaft,
                       event_poses, by_phase, cpath, pm, arrays, wall_s)


def _save_candidate(cap, golfer: ScaledGolfer, track: IKTrack, fit: SwingFit,
                    s: SwingSettings, workdir: Path) -> tuple:
    """(candidate path, PreparedModel of golfer.urdf): the candidate (initial state, the
    replay torques, the impact's event) and its model written to ``workdir``/fit."""
    fr, model, labels = fit.result, golfer.model, golfer.labels
    h = 1.0 / cap.rate_hz
    first, last = track.first_frame, track.last_frame
    fitdir = workdir / "fit"
    fitdir.mkdir(parents=True, exist_ok=True)
    urdf = to_urdf(model.spec)
    upath = write_text_atomic(fitdir / "golfer.urdf", urdf)
    sha = hashlib.sha256(urdf.encode()).hexdigest()
    pm = PreparedModel(model.spec, str(upath), sha)
    markers = [Marker(l, l, (0.0, 0.0, 0.0)) for l in labels]
    cand = from_arrays(pm, fit.q_replay[0], fit.v_replay[0], fr.t_replay, fr.tau_replay,
                       fr.interpolation, markers=markers, events=fr.events,
                       provenance={"producer": "harness swing (harness/fit/trajectory.py)",
                                   "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                   "solver": {"name": "B-spline inverse-dynamics collocation, "
                                              "sparse Levenberg-Marquardt",
                                              "iterations": fr.iterations, "tol": s.tol}
                                   | ground.candidate_solver_fields(fit.ground),
                                   "status": "converged" if fr.converged else "unconverged",
                                   "notes": f"fit of {cap.source} from {first * h:.4f} s to "
                                            f"{last * h:.4f} s"
                                            + (f"; two phases joined at the ball impact "
                                               f"at {fr.impact['t_e_s']:.5f} s by the "
                                               f"fitted impulse (the candidate's event)"
                                               if s.impact else "")
                                            + ground.candidate_note(fit.ground)})
    # the model is referenced relative to the candidate (the folder is moved into place)
    cand = dataclasses.replace(cand, model_ref=dict(cand.model_ref, path=upath.name))
    return save(cand, fitdir / "candidate.json"), pm


def _arrays(golfer: ScaledGolfer, track: IKTrack, fit: SwingFit, s: SwingSettings,
            event_poses: dict, act_series) -> dict:
    """The report's series (harness/swing/report.py), in memory only."""
    fr, adapter, labels = fit.result, golfer.adapter, golfer.labels
    arrays = {"t": fr.t, "q": fr.q, "tau": fit.act, "t_replay": fr.t_replay,
              "tau_replay": fr.tau_replay, "marker_residual": fr.marker_residual,
              "reint_dev": fit.reintegration.dev_m, "y": track.y_m}
    if s.ground:
        arrays["ground"] = ground.arrays(adapter, fit.problem, fr)
        arrays["ground"]["consistency"] = fit.per_interval
    arrays["poses"] = event_poses
    if s.activation:
        arrays["activation"] = act_series
    if s.impact:
        # interval speeds [m/s] over the window's frame intervals, at each interval's end
        win, h = track.frames, fit.impact["frame_interval_s"]
        arrays["impact"] = {"t": win[1:] * h, "measured": fit.speeds_measured_mps[win[1:]],
                            "fitted": np.asarray(
                                fit.impact["clubhead_speed_fitted_by_interval_mps"])}
    arrays["angles"] = fr.q[:, [adapter.layout.slot(n).iq for n in adapter.joint_names]]
    arrays["markers_replay"] = np.stack([adapter.frame_poses(x, labels)[:, :3]
                                         for x in fit.q_replay])
    return arrays


def _save_trajectory(fitdir: Path, golfer: ScaledGolfer, track: IKTrack, fit: SwingFit,
                     s: SwingSettings) -> None:
    """trajectory.npz: the fitted spline (each phase its own with the impact), q, v at the
    frames and the replay knots, the tracked markers, the contact forces and schedule."""
    fr, prob = fit.result, fit.problem
    if s.impact:
        # each phase its own clamped spline (scipy differentiates no repeated inner knot)
        spline = {"spline_coefficients": fr.C[:prob.M1], "spline_knots": prob.tk1,
                  "spline_coefficients_post": fr.C[prob.M1 - 1:],
                  "spline_knots_post": prob.tk2,
                  "impact_time_s": np.array(fr.impact["t_e_s"]),
                  "impulse_Ns": fr.impulse, "impact_frame_name": np.array(s.impact_frame)}
    else:
        spline = {"spline_coefficients": fr.C, "spline_knots": prob.tk}
    write_bytes_atomic(fitdir / "trajectory.npz", npz_bytes(spline | {
        "spline_degree": np.array(prob.degree), "t": fr.t, "q": fr.q, "v": fr.v,
        "t_replay": fr.t_replay, "q_replay": fit.q_replay, "v_replay": fit.v_replay,
        "labels": np.array(golfer.labels), "y": track.y_m}
        | ({"contact_frames": np.array(prob.contact.frames), "contact_forces": fr.forces,
            "contact_stick": prob.contact.stick}
           if s.ground else {})))


TRAJECTORY_WHAT = (
    "trajectory.npz: the fitted spline (scipy BSpline(knots, "
    "coefficients, degree), canonical coordinate order; with the impact the pre-impact "
    "phase, up to impact_time_s, and spline_knots_post, spline_coefficients_post the "
    "post-impact phase from it; impulse_Ns the impulse on the club at "
    "impact_frame_name) and its q, v at the frames and "
    "at the replay knots (t_replay repeats impact_time_s: the left, then the right "
    "limits); y the tracked markers (N, K, 3) m; contact_forces (N, nc, 3) "
    "N, world axes, on the contact_frames at the frames, and contact_stick (N, nc) "
    "the assumed schedule (True: stick), with ground contact")


def _window(cap, ev, track: IKTrack, fit: SwingFit, s: SwingSettings) -> dict:
    """fit.json's ``window``."""
    h = 1.0 / cap.rate_hz
    first, last, fr = track.first_frame, track.last_frame, fit.result
    return {"first_frame": int(first), "last_frame": int(last),
            "last_frame_asked": int(track.last_frame_asked),
            "t_start_s": float(first * h), "t_end_s": float(last * h),
            "top_frame": ev.top_frame, "impact_frame": ev.impact_frame,
            "phases": ([{"phase": "pre-impact", "t_start_s": float(first * h),
                         "t_end_s": fr.impact["t_e_s"]},
                        {"phase": "post-impact", "t_start_s": fr.impact["t_e_s"],
                         "t_end_s": float(last * h)}] if s.impact else
                       [{"phase": "pre-impact", "t_start_s": float(first * h),
                         "t_end_s": float(last * h)}]),
            "candidate_t_end_s": float(fr.t_replay[-1])}


def _reintegration_json(fit: SwingFit) -> dict:
    """fit.json's ``reintegration``."""
    fr, r = fit.result, fit.reintegration
    dev = r.dev_m
    rmse_down = fr.marker_rmse(fit.in_down)
    with np.errstate(invalid="ignore"):
        rms_t = np.sqrt(np.mean(dev ** 2, axis=1))
    horizon_i = np.flatnonzero(~(rms_t <= rmse_down))
    return {
        "what": f"open-loop {r.method.label} of the replay torques ({fr.interpolation}) "
                "from the fitted (q0, v0), markers compared with the fitted motion's",
        "method": r.method.settings(),
        "whole_window_rms_m": float(np.sqrt(np.mean(dev ** 2))) if r.diverged_at_s is None
        else float("inf"),
        "whole_window_max_m": float(np.nanmax(dev)),
        "diverged_at_s": r.diverged_at_s,
        "within_marker_rmse_until_s": float(fr.t_replay[horizon_i[0]] - fr.t_replay[0])
        if horizon_i.size else float(fr.t_replay[-1] - fr.t_replay[0]),
        "segments": r.segments, "wall_s": r.wall_s}


def scope_headline(fs: FittedSwing, replay: dict | None, replay_ok: bool | None) -> dict:
    """fit.json's ``summary`` keys that say what the fit and the replay cover: whether the
    fit converged (false when it stopped at its iteration limit), the largest excess of a
    fitted angle over its joint limit [rad, the revolute joints] and of a fitted
    translation over its limit [m, the prismatic ones] apart, the turf's impulse's
    magnitude [N·s] (None: the head did not meet the ground, no turf impulse was
    fitted), the replay window actually scored
    [start, end] [s] (None without a replay: the segments compared in every engine,
    harness/swing/segments.py scored_window; without segments the whole-window replay's,
    ending at the earliest of the engines' scored ends) and whether the replay covered
    the impact: true only when the segment holding it was compared in every engine and
    passed (segments.through_impact)."""
    fr, jr = fs.fit.result, fs.fit.figures["joint_range"]
    window = through = None
    seg = (replay or {}).get("segments")
    until = [float(d["scored_until_s"]) for d in ((replay or {}).get("energy_balance")
                                                  or {}).values() if "scored_until_s" in d]
    if seg is not None:
        window = segments.scored_window(seg)
    elif replay is not None and until:
        window = [float(fr.t_replay[0]), min(until)]
    if fs.fit.impact is not None:
        through = bool(replay_ok is not None and segments.through_impact(seg))
    return {"converged": bool(fr.converged),
            "joint_limit_excess_max_rad": float(jr["worst_rad"]["excess"]),
            "joint_limit_excess_max_m": float(jr["worst_m"]["excess"]),
            "turf_impulse_Ns": ((fs.fit.impact or {}).get("ball") or {}).get(
                "turf_impulse_magnitude_Ns"), "replay_window_s": window,
            "replay_through_impact": through}


def document(fs: FittedSwing, workdir: Path, replay: dict | None = None,
             study: dict | None = None, dimension: dict | None = None,
             replay_ok: bool | None = None) -> dict:
    """fit.json's document (the serialised form of the steps, NaN and inf as written by
    ``_finite`` only when saved): ``replay``, ``study`` and ``dimension`` the sections
    added when the candidate was replayed or those studies asked for; ``replay_ok``
    whether every scored record of the replay passed (None: not replayed)."""
    cap, ev, g, track, fit, s = fs.capture, fs.events, fs.golfer, fs.track, fs.fit, \
        fs.settings
    doc = {
        "capture": cap.report() | {"events": ev.to_json()},
        "settings": vars(s) if hasattr(s, "__dict__") else {},
        "model": {"name": g.model.name, "nq": g.adapter.nq, "nv": g.adapter.nv,
                  "dims": vars(g.dims), "measured_lengths": g.measured_lengths,
                  "club": g.club, "tracked_markers": list(g.labels),
                  "not_tracked": [l for l in cap.markerset.tracked if l not in g.labels]},
        "window": _window(cap, ev, track, fit, s),
        "calibration": {"frames": len(g.calibration_frames),
                        "rmse_by_round_m": g.rmse_by_round_m,
                        "wall_s": g.calibration_wall_s},
        "ik": {"rmse_m": track.rmse_m, "wall_s": track.wall_s},
        "fit": fit.figures | {
            "event_poses": [{k: e[k] for k in ("event", "frame", "t_s", "source", "what")}
                            for e in fs.event_poses["events"]],
            "marker_rmse_by_phase_and_label_m": fs.marker_rmse_by_phase_and_label_m},
        "ground": fit.ground,
        "summary": fs.headline | scope_headline(fs, replay, replay_ok),
        "identifiability": fit.identifiability,
        "reintegration": _reintegration_json(fit),
        "wall_s": fs.wall_s,
    }
    if fs.activation is not None:
        doc["activation"] = fs.activation
    if fs.shaft is not None:
        doc["shaft"] = fs.shaft
    # relative to the output folder: ``workdir`` is a temporary folder moved into place
    doc["candidate"] = fs.candidate_path.relative_to(workdir).as_posix()
    doc["trajectory"] = TRAJECTORY_WHAT
    for key, section in (("replay", replay), ("study", study), ("dimension", dimension)):
        if section is not None:
            doc[key] = section
    return doc


def write_fit_json(workdir: Path, doc: dict) -> Path:
    """The one writer of fit.json: ``doc`` (``document``) with NaN and inf as null,
    written atomically to ``workdir``/fit/fit.json."""
    return write_json_atomic(workdir / "fit" / "fit.json", _finite(doc))


def club_masses(given: str | Sequence[float] | None) -> tuple | None:
    """(whole club, head) [kg] from ``given``: None (the club's typical masses), a
    "TOTAL,HEAD" string or a pair of numbers; BadInput naming --club-masses unless both are
    finite, positive and the head lighter than the whole club."""
    if given is None:
        return None
    try:
        parts = given.split(",") if isinstance(given, str) else list(given)
        m = tuple(float(x) for x in parts)
    except (TypeError, ValueError):
        m = ()
    if len(m) != 2 or not all(np.isfinite(m)):
        raise BadInput("--club-masses", f"give two numbers TOTAL,HEAD in kg, got {given!r}")
    if not 0.0 < m[1] < m[0]:
        raise BadInput("--club-masses", f"the head's mass must be positive and less than the "
                       f"whole club's, got {m[0]:g} kg and {m[1]:g} kg")
    if m[0] > MAX_CLUB_MASS_KG:
        raise BadInput("--club-masses", f"a whole club of {m[0]:g} kg: at most "
                       f"{MAX_CLUB_MASS_KG:g} kg (golf clubs weigh 0.3–0.5 kg, weighted "
                       "training clubs up to about 1.5 kg; harness/core/strict.py)")
    return m


def which_club(given: str, measured: dict,
               masses: tuple[float, float] | None = None) -> dict:
    """The club of the capture: ``given`` ("driver" | "iron"), or with "auto" the one its
    measured length says (``measured["club"]["value_m"]`` [m] at least the table's
    swing/club_length_driver_min: a driver; else an iron). ``masses``: the weighed club's
    (whole, head) [kg] (``club_masses``), else the club's typical ones. Returns {"club",
    "how", "length_m", "masses_kg" (whole club, head)}."""
    L = float(measured["club"]["value_m"])
    if given == "auto":
        lim = lookup("swing", "club_length_driver_min").atol
        club = "driver" if L >= lim else "iron"
        how = (f"inferred: its measured length {L:.3f} m is "
               f"{'at least' if club == 'driver' else 'under'} {lim:g} m")
    elif given in CLUBS:
        club, how = given, "given (--club)"
    else:
        raise BadInput("--club", f"must be one of {', '.join(CLUB_CHOICES)}, got {given!r}")
    m = club_masses(masses)
    if m is not None:
        how += "; masses given (--club-masses)"
    return {"club": club, "how": how, "length_m": L,
            "masses_kg": list(CLUB_MASSES_KG[club] if m is None else m)}


def fit_problem(adapter: EngineAdapter, labels: Sequence[str], Y: NDArray[np.float64],
                Q_ik: NDArray[np.float64],
                t0: float, h: float, s: SwingSettings, floor_z: float | None,
                impact: tf.ImpactEvent | None = None) -> tf.FitProblem:
    """The dynamic fit's FitProblem for markers Y (N, K, 3) m at frames t0 + i·h [s]: the
    joints' torque scale ``s.torque_scale_nm`` (10× for the pelvis translations, N), the
    grip pair, with ``floor_z`` [m] (not None) the feet's ground contact whose assumed
    schedule and anchors come from the IK trajectory Q_ik (N, nv), and ``impact`` (a
    trajectory.ImpactEvent, or None) the ball impact joining two phases."""
    scale = np.full(adapter.nv, s.torque_scale_nm)
    for n in ("pelvis_tx", "pelvis_ty", "pelvis_tz"):
        scale[adapter.layout.slot(n).iv] = 10 * s.torque_scale_nm
    contact = None
    if floor_z is not None:
        contact = ground.contact_model(adapter, Q_ik, floor_z, len(Y), s)
    bounds = fit_bounds(adapter, s)
    return tf.FitProblem(adapter, tuple(labels), Y, h, s.sigma_marker_m, scale,
                         w_effort=s.w_effort, w_smooth=s.w_smooth,
                         pairs=tuple((a, b) for a, b, _ in GRIP_PAIRS),
                         sigma_closure=s.sigma_closure_m, t0=t0,
                         knot_frames=s.knot_frames, samples_per_frame=s.samples_per_frame,
                         control_degree=s.control_degree, contact=contact, impact=impact,
                         bounds=bounds)


def impact_event(s: SwingSettings, frame: str, t_hat: float, sigma_t: float,
                 t_bounds: tuple) -> tf.ImpactEvent:
    """The ball impact of a fit with settings ``s``: the impulse acts at model frame
    ``frame``; ``t_hat`` and ``sigma_t`` [s] the measured event time and its standard
    deviation, ``t_bounds`` (2,) [s] where t_e is searched."""
    return tf.ImpactEvent(frame, t_hat, t_hat, sigma_t, tuple(t_bounds),
                          sigma_reset=s.sigma_reset, sigma_impulse=s.sigma_impulse_ns)


DIVERGED_M = 1.0   # a reintegrated marker 1 m from the fitted one: stop, report the time


IMPULSE_PRIORS = ("law", "free")


def impulse_prior(s: SwingSettings) -> str:
    """``s.impulse_prior`` checked: "law" or "free"; BadInput otherwise."""
    if s.impulse_prior not in IMPULSE_PRIORS:
        raise BadInput("--impulse-prior", f"must be one of {', '.join(IMPULSE_PRIORS)}, "
                                          f"got {s.impulse_prior!r}")
    return s.impulse_prior


def head_mass_kg(s: SwingSettings) -> float:
    """kg: the club head's mass of the swing's club (``s.club`` resolved, not "auto"): the
    weighed club's (``s.club_masses_kg``) or the club's typical one."""
    return float((s.club_masses_kg or CLUB_MASSES_KG[s.club])[1])


def ball_law(fr: tf.TrajectoryFitResult, prob: tf.FitProblem, s: SwingSettings) -> dict:
    """The ball as a body under the collision law (harness/fit/collision.py) at the fitted
    impact: the club head decoupled from the shaft during contact (the face's inverse
    mass I/m_head (3, 3) 1/kg, m_head the club's head mass, ``head_mass_kg``), its
    velocity J v⁻ [m/s] from the fit's engine at q(t_e), the face normal from the club's
    loft (the club head's path tilted toward the shaft, ``s.shaft_frame``), e the club's
    prior mean. The law's impulse Λ_law = −P [N·s] on the club, the residual
    Λ_fit − Λ_law [N·s] (what the law cannot explain, never the ball's), the ball's
    velocity [m/s] and spin [rad/s], the energy change across the impact [J] (golfer +
    club from the fitted v⁻, v⁺ and M(q_e), plus the ball's; and the law's own, ≤ 0), the
    face's effective mass along n for the head alone and for the rigid golfer and club
    (W = J M⁻¹ Jᵀ) [kg], the restitution the fitted impulse implies (the face velocity
    change W Λ_fit the fit's reset makes, projected on the law's per unit (1 + e),
    g = −W P_c: e = gᵀWΛ_fit/|g|² − 1, where the markers resolve Λ, not along directions
    the head barely moves in) with its standard error from Λ's posterior covariance Σ
    (``impulse_cov``, (3, 3) N²·s²: √(gᵀWΣWg)/|g|², or None)."""
    a, C = prob.adapter, fr.C
    qe, vm, vp = prob.Be0 @ C, prob.Be1m @ C, prob.Be1p @ C
    M = a.mass_matrix(qe)
    J = a.frame_jacobians(qe, [s.impact_frame])[0, :3, :]
    ends = a.frame_poses(qe, [s.impact_frame, s.shaft_frame])[:, :3]
    face = col.club_face(s.club, s.loft_deg)
    n = col.face_normal(J @ vm, ends[1] - ends[0], face.loft_rad)
    W = col.inverse_mass_at(M, J)      # the rigid golfer and club's, the reset's, at the face
    m_head = head_mass_kg(s)
    law = col.collide(col.point_inverse_mass(m_head), J @ vm, n, face.restitution_mean,
                      face.friction, s.ball_mass_kg)
    L_fit = np.asarray(fr.impulse, float)
    L_law = -law.impulse_on_ball
    # the turf's part: the fitted Λ's excess over the law's in the plane the prior left
    # loose (fit_through_impact with turf), the rest the residual; none without turf
    U = np.asarray(prob.impact.impulse_prior_loose, float).reshape(-1, 3)
    P_turf = U.T @ U
    turf = P_turf @ (L_fit - L_law)
    L_ball = L_fit - turf               # the ball's part and the residual
    I_ball = col.BALL_INERTIA_FACTOR * s.ball_mass_kg * col.BALL_RADIUS_M ** 2
    ke_ball = 0.5 * s.ball_mass_kg * float(law.ball_velocity @ law.ball_velocity) \
        + 0.5 * I_ball * float(law.ball_spin @ law.ball_spin)
    T_pre = 0.5 * float(vm @ M @ vm)
    dT_body = 0.5 * float(vp @ M @ vp) - T_pre
    # the restitution the fitted impulse implies, read where the markers see it: in the
    # face's velocity change W Λ, against the law's per unit (1 + e), g = −W P_c
    g = -W @ law.compression
    gg = float(g @ g)
    cov = (fr.impact.get("laplace") or {}).get("impulse_cov")
    # with a turf impulse free in the plane of the head's path and the vertical, where
    # the ball's impulse lies too, the markers cannot part the two: e is not read
    readable = gg > 0 and not len(U)
    e_fit = float((g @ W @ L_fit) / gg - 1.0) if readable else float("nan")
    e_fit_se = (float(np.sqrt(max(float(g @ W @ np.asarray(cov) @ W @ g), 0.0))) / gg
                if cov is not None and readable else None)
    alone = fr.impact.get("markers_alone") or {}
    e_alone = float(alone.get("restitution", float("nan")))
    e_alone_se = alone.get("restitution_se")
    ball_speed = law.ball_speed_mps
    # ball speed = (1 + e)|P_c|/m exactly: e's prior sd carries over linearly, and so
    # into the law's impulse, |P_c|·sd(e)
    impulse_sd = float(np.linalg.norm(law.compression)) * face.restitution_sd
    speed_sd = impulse_sd / s.ball_mass_kg
    vb = law.ball_velocity / max(ball_speed, 1e-300)
    return {"club": face.name, "loft_rad": face.loft_rad,
            "restitution": law.restitution, "restitution_prior_range": list(
                face.restitution_range), "restitution_prior_sd": face.restitution_sd,
            "friction": face.friction, "face_normal": n.tolist(), "stuck": law.stuck,
            "effective_mass_at_face_kg": law.effective_mass_kg, "head_mass_kg": m_head,
            "effective_mass_rigid_body_kg": col.effective_mass(W, n),
            "closing_speed_mps": law.closing_speed_mps,
            "face_speed_mps": float(np.linalg.norm(J @ vm)),
            # the face point's speed just after contact [m/s] under the law's impulse, the
            # head's loss handed on at once to the rigid golfer and club (J v⁻ + W Λ_law)
            # or the head still on its own (J v⁻ + Λ_law/m_head)
            "face_speed_after_rigid_mps": float(np.linalg.norm(J @ vm + W @ L_law)),
            "face_speed_after_head_alone_mps": float(np.linalg.norm(J @ vm + L_law / m_head)),
            "face_velocity_mps": (J @ vm).tolist(),
            "impulse_law_Ns": L_law.tolist(), "impulse_law_sd_Ns": impulse_sd,
            "residual_impulse_Ns": (L_ball - L_law).tolist(),
            "residual_impulse_magnitude_Ns": float(np.linalg.norm(L_ball - L_law)),
            **_turf_figures(turf, U),
            "ball_velocity_mps": law.ball_velocity.tolist(), "ball_speed_mps": ball_speed,
            "ball_speed_sd_mps": speed_sd, "ball_spin_radps": law.ball_spin.tolist(),
            "launch_angle_from_path_rad": float(np.arctan2(
                np.linalg.norm(np.cross(vb, J @ vm)), float(vb @ (J @ vm)))),
            "kinetic_energy_pre_J": T_pre, "golfer_club_energy_change_J": dT_body,
            "ball_energy_J": ke_ball, "impact_energy_change_J": dT_body + ke_ball,
            "law_energy_change_J": law.energy_change_J,
            "energy_change_if_ball_took_fitted_impulse_J":
                dT_body + 0.5 * float(L_fit @ L_fit) / s.ball_mass_kg,
            "restitution_implied_by_fit": e_fit, "restitution_implied_by_fit_se": e_fit_se,
            # what the markers alone say of e: the refit at the same t_e with Λ's prior
            # the free fit's weak one about zero (fit_through_impact), and its SE
            "restitution_markers_alone": e_alone, "restitution_markers_alone_se": e_alone_se,
            "what": "the ball (45.93 g, at rest) under the collision law of "
                    "harness/fit/collision.py, struck by the club head on its own (decoupled "
                    "from the shaft during contact: the face's effective mass is the "
                    "head's; the reset map hands the head's lost momentum on to the body "
                    "after contact): Coulomb friction by maximum dissipation "
                    "(stick or slip), Poisson restitution e (the club's prior mean; its sd "
                    "carried linearly into the ball speed), face normal from the loft; the "
                    "impulse on the club is Λ_fit = Λ_law + residual, the residual what "
                    "the law cannot explain (never given to the ball); energy change: "
                    "golfer + club by M(q_e) from the fitted v⁻, v⁺, plus the ball's"}


def _turf_figures(turf, U) -> dict:
    """The turf's impulse on the club head (3,) [N·s] (``turf``, in the plane of the rows
    of ``U`` (2, 3), turf_directions' up and along the head's path, as the fit's prior
    left them loose; U empty: no turf modelled, every figure None), its magnitude, its
    upward part N [N·s] (the ground only pushes: N ≥ 0) and its part against the head's
    horizontal path F [N·s] (friction and the soil's cut only resist: F ≥ 0)."""
    if not len(U):
        return {"turf_impulse_Ns": None, "turf_impulse_magnitude_Ns": None,
                "turf_normal_Ns": None, "turf_against_path_Ns": None}
    up, along = U
    return {"turf_impulse_Ns": turf.tolist(),
            "turf_impulse_magnitude_Ns": float(np.linalg.norm(turf)),
            "turf_normal_Ns": float(up @ turf), "turf_against_path_Ns": float(-along @ turf)}


def _handed_on(law: dict, ev: SwingEvents) -> dict:
    """How far the club head had handed its loss at contact on to the golfer and club by
    the second frame interval after contact, read from the capture (dimensionless ratios
    of speed after contact to speed before): the measured club-head markers' (interval
    (f + 1, f + 2) over (f − 1, f)), the face point's under the law's impulse with the
    loss handed on at once to the rigid body, and with the head still on its own; the
    fraction (measured − head alone) / (rigid − head alone): 1 all handed on, 0 none.
    Reported, not scored (the markers' interval speeds also hold the swing's own change
    of speed over those frames)."""
    v0 = law["face_speed_mps"]
    rigid = law["face_speed_after_rigid_mps"] / v0
    alone = law["face_speed_after_head_alone_mps"] / v0
    meas = float(ev.clubhead_speed_post_impact_mps) / float(ev.clubhead_speed_pre_impact_mps)
    return {"ratio_measured": meas, "ratio_rigid": rigid, "ratio_head_alone": alone,
            "fraction": (meas - alone) / (rigid - alone) if rigid != alone else float("nan")}


def _impact_summary(fr, prob, ev, club, kf, h, s) -> dict:
    """The impact's figures: the event time t_e [s] against the measured t̂ ± σ, the
    impulse Λ [N·s] on the club (world axes), the ball under the collision law
    (``ball_law``: its speed [m/s], the residual impulse [N·s], the energy change [J]),
    the club-head speeds [m/s] through impact (fitted from the model's club-head marker
    frames at the frames, measured from the capture, both as the interval speed
    |p[k] − p[k−1]|·rate over the same intervals: (f − 1, f) before contact, (f + 1, f + 2)
    after it, f the last frame before contact) and the smash factor, the law's ball speed
    over the speed of the point that strikes the ball (the face point, |J v⁻| at t_e, as a
    launch monitor measures club speed at the face), with its standard error from e's
    prior, and the same ball speed over the club-head markers' fitted speed before
    contact; the reset map's violation and the velocity jump."""
    L = np.asarray(fr.impulse, float)
    law = ball_law(fr, prob, s)
    ball, v_face = law["ball_speed_mps"], law["face_speed_mps"]
    v_pre, v_post = cap_events.speeds_around(club, kf, 1.0 / h)
    # the fitted club-head speed over every frame interval of the window, for the report
    speeds = cap_events.interval_speeds(club, 1.0 / h)[1:]
    band = (lookup("swing", f"smash_factor_{s.club}_low").atol,
            lookup("swing", f"smash_factor_{s.club}_high").atol)
    marginal = dict(fr.impact.get("marginal") or {})
    if "points" in marginal:
        # |Λ_fit|/m_ball per point (what the ball would take if it took the whole fitted
        # impulse), its variance by the delta method (uᵀ Σ u / m², u = Λ/|Λ|), then the
        # mixture over the points
        b, var = [], []
        for pt in marginal["points"]:
            Li, cov = np.asarray(pt["impulse_Ns"]), np.asarray(pt["impulse_cov_Ns2"])
            u = Li / np.linalg.norm(Li)
            b.append(float(np.linalg.norm(Li)) / s.ball_mass_kg)
            var.append(float(u @ cov @ u) / s.ball_mass_kg ** 2)

        m_, v_ = mixture(np.array(b)[:, None], np.array(var)[:, None, None],
                         [pt["weight"] for pt in marginal["points"]])
        mb, sb = float(m_[0]), float(np.sqrt(max(float(v_[0, 0]), 0.0)))
        marginal.update(fitted_impulse_speed_mean_mps=mb, fitted_impulse_speed_sd_mps=sb,
                        fitted_impulse_smash_mean=mb / v_face,
                        fitted_impulse_smash_sd=sb / v_face)
    return {"t_e_s": float(fr.impact["t_e_s"]), "t_hat_s": float(ev.impact_s),
            "sigma_s": float(ev.impact_sigma_s), "frame_interval_s": h,
            "impact_frame": int(ev.impact_frame), "contact_point": s.impact_frame,
            "profile": fr.impact.get("profile", []), "marginal": marginal,
            "impulse_Ns": L.tolist(), "impulse_magnitude_Ns": float(np.linalg.norm(L)),
            # Λ's posterior covariance [N²·s²] of the returned fit (after the prior's
            # re-centring; the marginal's points are the profile's, before it)
            "impulse_cov_Ns2": _finite(np.asarray((fr.impact.get("laplace") or {}).get(
                "impulse_cov", np.full((3, 3), np.nan)), float).tolist()),
            "ball_mass_kg": s.ball_mass_kg, "ball_speed_mps": ball, "ball": law,
            "clubhead_speed_pre_impact_fitted_mps": v_pre,
            "clubhead_speed_pre_impact_measured_mps": float(ev.clubhead_speed_pre_impact_mps),
            "clubhead_speed_post_impact_fitted_mps": v_post,
            "clubhead_speed_post_impact_measured_mps":
                float(ev.clubhead_speed_post_impact_mps),
            "clubhead_speed_fitted_by_interval_mps": speeds.tolist(),
            "clubhead_speed_at_face_pre_impact_mps": v_face,
            "head_handed_on": _handed_on(law, ev),
            # the club head's clearance through contact over its height at address [m]
            # (capture/events.py); more than swing/turf_clearance_m below zero: turf after
            # the ball, not modelled
            "sole_clearance_m": float(ev.sole_clearance_m),
            # Λ's prior in the fit's refits, as the fit used it: about the law's impulse
            # at the returned fit's own pre-contact state ("law"; the re-centring rounds
            # after the profile, impact_time._recentre) or about zero ("free"), its
            # scale [N·s]
            "impulse_prior": {"kind": impulse_prior(s),
                              "mean_Ns": [float(x) for x in prob.impact.impulse_prior_mean],
                              "sigma_Ns": float(prob.impact.sigma_impulse),
                              # the directions left to the data (the turf's plane) and
                              # their scale [N·s]; empty without turf
                              "loose_directions": [list(u) for u in
                                                   prob.impact.impulse_prior_loose],
                              "sigma_loose_Ns": float(prob.impact.sigma_impulse_loose)
                              if prob.impact.impulse_prior_loose else None,
                              "recentred": fr.impact.get("prior_rounds", [])},
            # the refit without the law's prior at the same t_e (fit_through_impact): its
            # impulse [N·s], the e it implies and its SE, iterations, converged; None when
            # the impulse was free
            "markers_alone": fr.impact.get("markers_alone"),
            # the club head's ringing on the shaft after contact (impact_time.ring_profile):
            # the scan of the residuals (the frequency [Hz] they hold, ring_scan), every
            # frequency refitted [Hz] (None: none) with its cost, and the chosen one's
            # frequency, damping ratio, gain κ [1/kg] and the head's initial velocity κΛ
            # [m/s]; None where none was chosen
            "ring_scan": fr.impact.get("ring_scan"),
            "ring_profile": fr.impact.get("ring_profile", []),
            "ring": fr.impact.get("ring"),
            "smash_factor": ball / v_face if v_face > 0 else float("nan"),
            "smash_factor_se": law["ball_speed_sd_mps"] / v_face if v_face > 0
            else float("nan"),
            "smash_factor_over_marker_speed": ball / v_pre if v_pre > 0 else float("nan"),
            "smash_factor_if_ball_took_fitted_impulse":
                float(np.linalg.norm(L)) / s.ball_mass_kg / v_face if v_face > 0
                else float("nan"),
            "club": s.club, "smash_band": list(band),
            "reset_violation_max": fr.impact["reset_violation_max"],
            "reset_violation_rel": fr.impact["reset_violation_rel"],
            "velocity_jump_max": float(np.abs(fr.impact["velocity_jump"]).max()),
            "what": "impulse Λ on the club face at the club-head contact point (world "
                    "axes), identified by the fit with the reset M(q)(v⁺ − v⁻) = J(q)ᵀΛ as "
                    "a stiff penalty (its violation max |M Δv − JᵀΛ| and relative "
                    "‖·‖/‖JᵀΛ‖); the event time t_e a decision variable with the residual "
                    "(t̂ − t_e)/σ; Λ = Λ_law + residual (``ball``): the ball's speed is the "
                    "collision law's from the fitted pre-contact state, never |Λ|/m_ball; "
                    "smash factor that ball speed / fitted club-head speed before contact"}


def impact_headline(info: dict) -> dict:
    """fit.json's ``summary`` keys of the impact (units in the names)."""
    return {"impact_time_s": info["t_e_s"], "impact_time_sigma_s": info["sigma_s"],
            "clubhead_speed_pre_impact_measured_mps":
                info["clubhead_speed_pre_impact_measured_mps"],
            "clubhead_speed_pre_impact_fitted_mps":
                info["clubhead_speed_pre_impact_fitted_mps"],
            "clubhead_speed_post_impact_measured_mps":
                info["clubhead_speed_post_impact_measured_mps"],
            "clubhead_speed_post_impact_fitted_mps":
                info["clubhead_speed_post_impact_fitted_mps"],
            "ball_speed_mps": info["ball_speed_mps"], "smash_factor": info["smash_factor"],
            "smash_factor_se": info["smash_factor_se"],
            "impact_energy_change_J": info["ball"]["impact_energy_change_J"],
            "restitution": info["ball"]["restitution"],
            "effective_mass_at_face_kg": info["ball"]["effective_mass_at_face_kg"],
            "residual_impulse_Ns": info["ball"]["residual_impulse_magnitude_Ns"],
            "sole_clearance_m": info["sole_clearance_m"],
            # None when the clearance was not measured (no club-head marker seen both at
            # address and through contact), never a verdict the code did not compute
            "turf_contact": turf_contact(info["sole_clearance_m"])}


def _event_poses(adapter, spec, cap, ev, calib_frames, calib_q, fit_q, win, labels, addr,
                 near_frames: int) -> dict:
    """The stick figures' data (harness/swing/poses.py): for address, top, impact (the
    detected events) and the follow-through (not a detected event: the capture's last
    frame), the model's skeleton points [m] from the fitted motion inside the window, else
    from the calibration IK at its nearest frame when that is within ``near_frames``
    frames, else none (markers only); the measured markers (K, 3) m at the frame; the
    view axes from the address pose."""
    seg = poses.skeleton(spec)
    h = 1.0 / cap.rate_hz
    Y = np.stack([cap.marker(l) for l in labels], axis=1)                  # (F, K, 3)
    out = []
    for name, f, what in (
            ("address", ev.address_frame, "detected: the middle of the still interval "
             "before takeaway"),
            ("top", ev.top_frame, "detected: the slowest frame of the backswing's upper half"),
            ("impact", ev.impact_frame, "detected: the last frame before ball contact"),
            ("follow-through", cap.n_frames - 1, "not a detected event: the capture's last "
             "frame")):
        f = int(f)
        k = int(np.argmin(np.abs(np.asarray(calib_frames) - f)))
        if win[0] <= f <= win[-1]:
            src, pts = "fit", poses.points(adapter, fit_q[f - win[0]], seg)
        elif abs(int(calib_frames[k]) - f) <= near_frames:
            src = f"calibration IK at frame {int(calib_frames[k])} (outside the fitted window)"
            pts = poses.points(adapter, calib_q[k], seg)
        else:
            src, pts = "markers only (outside the fitted window and the calibration frames)", \
                None
        out.append({"event": name, "frame": f, "t_s": f * h, "source": src, "what": what,
                    "points": pts, "markers": Y[f]})
    a = out[0]["points"]
    ch = [labels.index(l) for l in cap.markerset.club_head if l in labels]
    club = np.nanmean(Y[out[0]["frame"], ch], axis=0) if ch else None
    if a is not None:
        ankles = a["l_foot"], a["r_foot"]
    else:
        ankles = tuple(np.nanmean(Y[out[0]["frame"], [labels.index(l) for l in m
                                                      if l in labels]], axis=0)
                       for m in (("LAnkleOut", "LToeIn", "LToeOut"),
                                 ("RAnkleOut", "RToeIn", "RToeOut")))
    view = poses.view_frame(*ankles, club, floor_height(cap, addr))
    return {"segments": seg, "events": out, "view": view, "labels": list(labels)}


def _phase_rmse(adapter, cap, ev, calib_frames, calib_q, fr, win, labels) -> dict:
    """{phase: {what, source, frames, by_label {label: RMSE m, NaN if unseen}}} for the
    report's marker table per phase: address → top from the calibration IK (the fit's
    window starts shortly before the top), then from the fit: the window's start → top,
    top → mid-downswing and mid-downswing → impact (mid: halfway in frames)."""
    out = {}
    cf = np.asarray(calib_frames)
    sel = np.flatnonzero((cf >= ev.address_frame) & (cf < ev.top_frame))
    if sel.size:
        M = np.stack([adapter.frame_poses(calib_q[k], list(labels))[:, :3] for k in sel])
        Y = np.stack([cap.marker(l)[cf[sel]] for l in labels], axis=1)
        e = np.linalg.norm(M - Y, axis=2)
        with np.errstate(invalid="ignore"):
            by = {l: float(np.sqrt(np.nanmean(e[:, i] ** 2))) if np.isfinite(e[:, i]).any()
                  else float("nan") for i, l in enumerate(labels)}
        out["address_to_top"] = {"what": "address → top", "source": "calibration IK",
                                 "frames": int(sel.size), "by_label": by}
    mid = (ev.top_frame + ev.impact_frame) // 2
    for key, what, lo, hi in (("start_to_top", "window start → top", win[0], ev.top_frame),
                              ("top_to_mid", "top → mid-downswing", ev.top_frame, mid),
                              ("mid_to_impact", "mid-downswing → impact", mid,
                               ev.impact_frame + 1)):
        m = (win >= lo) & (win < hi)
        if m.any():
            mask = m[:, None] & np.ones((1, len(labels)), bool)
            out[key] = {"what": what, "source": "fit", "frames": int(m.sum()),
                        "by_label": fr.marker_rmse_by_label(mask)}
    return out


def reintegration_method(settings: "SwingSettings") -> Method:
    """The open-loop integrator of the checks (and of the engines' replay)."""
    return Method("dop853", rtol=settings.reint_rtol, atol=settings.reint_rtol)


def engine_markers(replay_arrays: dict, case: str, fitted_markers: NDArray[np.float64]) -> dict:
    """{engine: (R, K, 3) m} each engine's replayed markers (stage-5 arrays
    ``replay/CASE/METHOD/ENGINE/markers``) shaped like the fitted ones."""
    out = {}
    for key, mk in replay_arrays.items():
        parts = key.split("/")
        if len(parts) == 5 and parts[0] == "replay" and parts[1] == case \
                and parts[4] == "markers" and mk.shape == fitted_markers.shape:
            out[parts[3]] = np.asarray(mk)
    return out


def engine_energy(replay_arrays: dict, case: str) -> dict:
    """{engine: {t (R,) s, E_rel (R,) J = E(t) − E(t0), applied (R,) J = ∫τᵀv dt,
    dissipated (R,) J = ∫vᵀDv dt, n_scored: knots of the window the stage-5 records score
    (the predictability window in horizon mode; all R otherwise)}} of each engine's
    replay (``replay/CASE/METHOD/ENGINE/energy`` and ``.../work``). The energy-balance
    record of an engine compares E_rel with applied − dissipated over the first
    n_scored knots and quotes both works at knot n_scored − 1."""
    t = replay_arrays.get(f"replay/{case}/t")
    out = {}
    for key, E in replay_arrays.items():
        parts = key.split("/")
        if t is None or len(parts) != 5 or parts[0] != "replay" or parts[1] != case \
                or parts[4] != "energy":
            continue
        W = np.asarray(replay_arrays[key[:-len("energy")] + "work"], float)
        E = np.asarray(E, float)
        out[parts[3]] = {"t": np.asarray(t, float), "E_rel": E - E[0], "applied": W[:, 0],
                         "dissipated": W[:, 1],
                         "n_scored": window_length(replay_arrays, case, parts[2], parts[3])}
    return out


def energy_summary(energy: dict) -> dict:
    """fit.json's per-engine energy figures from ``engine_energy``: the applied work at
    the end of the scored window (what the record quotes) and at the end of the replay,
    E − E0 there, and the largest balance residual |E − E0 − applied + dissipated| [J]
    over the whole replay."""
    out = {}
    for e, d in energy.items():
        n = d["n_scored"]
        res = np.abs(d["E_rel"] - d["applied"] + d["dissipated"])
        out[e] = {"scored_until_s": float(d["t"][n - 1]),
                  "applied_at_scored_end_J": float(d["applied"][n - 1]),
                  "applied_at_end_J": float(d["applied"][-1]),
                  "E_minus_E0_at_end_J": float(d["E_rel"][-1]),
                  "max_balance_residual_J": float(np.nanmax(res))}
    return out


def engine_grip_closure(replay_arrays: dict, case: str, frames: list,
                        pairs: Sequence[tuple[str, str]]) -> dict:
    """{engine: max |p_a − p_b| [m] over the replay} of each closure pair (frame_a,
    frame_b) in each engine's replayed frame poses (``replay/CASE/METHOD/ENGINE/frames``,
    (R, k, 12) in ``frames`` order)."""
    out = {}
    for key, P in replay_arrays.items():
        parts = key.split("/")
        if len(parts) == 5 and parts[0] == "replay" and parts[1] == case \
                and parts[4] == "frames":
            worst = 0.0
            for a, b in pairs:
                ia, ib = frames.index(a), frames.index(b)
                worst = max(worst, float(np.linalg.norm(P[:, ia, :3] - P[:, ib, :3],
                                                        axis=1).max()))
            out[parts[3]] = worst
    return out


def engine_replay_deviation(markers: dict, fitted_markers: NDArray[np.float64]) -> dict:
    """{engine: (RMS, max) [m]} of each engine's replayed markers (engine_markers)
    against the fitted motion's markers at the replay knots, over the whole window."""
    out = {}
    for e, mk in markers.items():
        d = np.linalg.norm(mk - fitted_markers, axis=2)
        out[e] = (float(np.sqrt(np.mean(d ** 2))), float(d.max()))
    return out


def joint_bounds(adapter: EngineAdapter) -> tuple:
    """(lower (nv,), upper (nv,)) [rad | m]: the model's joint limits per coordinate
    (±inf where a joint has none), the IK's (ik.limit_bounds); the golfer's joints have
    one dof each, so q and v share their indices."""
    idx, lo_l, hi_l = ik.limit_bounds(adapter.layout)
    lo, hi = np.full(adapter.nv, -np.inf), np.full(adapter.nv, np.inf)
    lo[idx], hi[idx] = lo_l, hi_l
    return lo, hi


def fit_bounds(adapter: EngineAdapter, s: SwingSettings) -> tuple | None:
    """The dynamic fit's box on the coordinates, (lower (nv,), upper (nv,)) [rad | m]: the
    model's joint limits (joint_bounds) when ``s.joint_limits`` holds them (the default),
    None when they are released."""
    return joint_bounds(adapter) if s.joint_limits else None


def joint_range(adapter: EngineAdapter, Q: NDArray[np.float64],
                t: NDArray[np.float64] | None = None, held: bool | None = None) -> dict:
    """The fitted angles Q (N, nq) [rad | m] at times t (N,) [s] against the model's joint
    limits (ik.limit_bounds): per joint that leaves its limits by more than
    swing/joint_range (round-off), {lower, upper, min, max (rad | m), excess (the largest
    distance outside, rad | m), frames (how many frames are outside by more than that),
    kind ("rad" for a revolute joint, "m" for a prismatic one), runs ([first, last] window
    frame indices of each run of frames outside) and runs_s (their times [s], with t)};
    the worst excess with its joint (0 and None when every frame is inside), and the worst
    of the revolute joints [rad] and of the prismatic ones [m] apart; ``held`` whether the
    fit held the limits (None: not said)."""
    tol = lookup("swing", "joint_range").atol
    idx, lo, hi = ik.limit_bounds(adapter.layout)
    slots = {s.iq: s for s in adapter.layout.slots}
    X = Q[:, idx]
    over = np.maximum(np.maximum(X - hi, lo - X), 0.0)                 # (N, n)
    out, worst, which = {}, 0.0, None
    by_kind: dict = {"rad": [0.0, None], "m": [0.0, None]}
    for c, k in enumerate(idx):
        e, kind = float(over[:, c].max()), "m" if slots[k].type == "prismatic" else "rad"
        if e > tol:
            runs = _runs(over[:, c] > tol)
            out[slots[k].name] = {
                "lower": float(lo[c]), "upper": float(hi[c]),
                "min": float(X[:, c].min()), "max": float(X[:, c].max()),
                "excess": e, "frames": int((over[:, c] > tol).sum()), "kind": kind,
                "runs": runs,
                "runs_s": None if t is None else [[float(t[a]), float(t[b])] for a, b in runs]}
        if e > worst:
            worst, which = e, slots[k].name
        if e > by_kind[kind][0]:
            by_kind[kind] = [e, slots[k].name]
    return {"worst_excess": worst, "worst_joint": which, "outside": out,
            "frames": int(len(Q)), "held": held,
            "worst_rad": {"excess": by_kind["rad"][0], "joint": by_kind["rad"][1]},
            "worst_m": {"excess": by_kind["m"][0], "joint": by_kind["m"][1]}}


def _runs(mask: NDArray[np.bool_]) -> list:
    """[[first, last], ...]: the runs of True in ``mask`` (N,) as inclusive index pairs."""
    d = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    return [[int(a), int(b) - 1] for a, b in zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1))]


def _pelvis_residual(adapter, tau) -> dict:
    """Peaks [N, N·m] of the generalized forces left on the pelvis's six actuated
    coordinates (with ground contact: after the contact forces; without: what the
    ground would supply through the legs)."""
    def col(n: str) -> NDArray[np.float64]:
        return tau[:, adapter.layout.slot(n).iv]
    F = np.stack([col(f"pelvis_t{a}") for a in "xyz"], axis=1)
    T = np.stack([col(f"pelvis_r{a}") for a in "zxy"], axis=1)
    return {"force_N": float(np.linalg.norm(F, axis=1).max()),
            "vertical_force_N": float(np.abs(F[:, 2]).max()),
            "moment_Nm": float(np.linalg.norm(T, axis=1).max()),
            "what": "peak |F| of pelvis_tx/ty/tz and |(pelvis_rz, rx, ry)| (joint-space "
                    "moments about the Euler axes) of the pelvis's residual generalized "
                    "forces; the wrench in world axes is ground.residual"}


def _chunk(prob) -> int:
    """Replay knots per chunk: one spline interval (lobatto) or one frame (cubic)."""
    return prob.control_degree or prob.samples_per_frame


def _open_loop(adapter, fr, prob, labels, qf, method):
    """Open-loop integration (``method``) of the replay torques over the whole window from
    the fitted initial state, chunk by chunk from the state reached (one rollout, split
    so that a divergence is caught early), stopped when the state is no longer finite or
    a marker is DIVERGED_M away. Returns (dev (R, K) m, NaN after a stop; time of the stop
    [s from the window start] or None)."""
    ctl = fr.controls()  # through the impact's reset when the fit has one
    step = _chunk(prob)
    tr = fr.t_replay
    R, K = tr.size, len(labels)
    dev = np.full((R, K), np.nan)
    q, v = fr.q[0].copy(), fr.v[0].copy()
    dev[0] = 0.0
    for a in range(0, R - 1, step):
        b = min(a + step, R - 1)
        try:
            r = rollout(adapter, q, v, ctl.sub(a, b), method)
        except (FloatingPointError, RuntimeError):
            return dev, float(tr[a] - tr[0])
        mr = np.stack([adapter.frame_poses(x, labels)[:, :3] for x in r.q])
        mf = np.stack([adapter.frame_poses(x, labels)[:, :3] for x in qf[a:b + 1]])
        dev[a:b + 1] = np.linalg.norm(mr - mf, axis=2)
        if np.nanmax(dev[a:b + 1]) > DIVERGED_M:
            return dev, float(tr[a] - tr[0])
        q, v = r.q[-1], r.v[-1]
    return dev, None


def _segment_reintegration(adapter, fr, prob, labels, n_frames: int, method, Q,
                           V) -> dict:
    """Reintegrate each window of about ``n_frames`` frames (whole chunks) from the fitted
    state at its start (Q, V (R, nv): the fitted spline at the replay knots, each side of
    the impact); the worst marker deviation per segment (m)."""
    ctl = fr.controls()
    per_frame = (fr.t_replay.size - 1) / max(prob.N - 1, 1)
    step = max(_chunk(prob), int(round(n_frames * per_frame / _chunk(prob))) * _chunk(prob))
    worst = []
    for a in range(0, len(fr.t_replay) - 1, step):
        b = min(a + step, len(fr.t_replay) - 1)
        q, v = Q[a:b + 1], V[a:b + 1]
        try:
            r = rollout(adapter, q[0], v[0], ctl.sub(a, b), method)
        except (FloatingPointError, RuntimeError):
            worst.append(float("inf"))
            continue
        mf = np.stack([adapter.frame_poses(x, labels)[:, :3] for x in q])
        mr = np.stack([adapter.frame_poses(x, labels)[:, :3] for x in r.q])
        worst.append(float(np.linalg.norm(mr - mf, axis=2).max()))
    return {"frames_per_segment": n_frames, "worst_marker_deviation_m": worst,
            "max_m": max(worst) if worst else 0.0}

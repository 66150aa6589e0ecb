"""The typed view of a swing's fit.json (harness/swing/pipeline.py ``document``): what the
checks (harness/swing/checks.py), the report and the batch survey read, by attribute
instead of by key path. fit.json stays the serialised form; ``SwingSummary.of(doc)``
reads the document (the one in memory, NaN and inf as computed, or a saved one, where
they are null: a null float reads as NaN, except the fields documented as None when
absent).

Units in the field names: m, mm, s, m/s, N, N·m, J, rad; ``_rel`` dimensionless.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from fixtures.golfers import SHAFT_COORDINATES


def _num(x) -> float:
    """A float, NaN for null."""
    return float("nan") if x is None else float(x)


def _opt(x) -> float | None:
    """A float, or None for null."""
    return None if x is None else float(x)


@dataclass(frozen=True)
class Window:
    """The fitted window: capture frames and times [s] (``last_frame_asked``: the frame
    the post-impact time asked for; an earlier summary without it: ``last_frame``)."""

    first_frame: int
    last_frame: int
    last_frame_asked: int
    t_start_s: float
    t_end_s: float
    top_frame: int
    impact_frame: int

    @classmethod
    def of(cls, d: dict) -> "Window":
        return cls(int(d["first_frame"]), int(d["last_frame"]),
                   int(d.get("last_frame_asked", d["last_frame"])), _num(d["t_start_s"]),
                   _num(d["t_end_s"]), int(d["top_frame"]), int(d["impact_frame"]))


@dataclass(frozen=True)
class MarkerGap:
    """A marker's gaps over the capture: the fraction of frames missing, how many gaps,
    the longest [s]."""

    missing_fraction: float
    n_gaps: int
    longest_gap_s: float


@dataclass(frozen=True)
class PhaseMarkers:
    """Marker RMSE over one phase of the swing: its words, its source (the fit or the
    calibration IK), how many frames, {label: RMSE [m], NaN where unseen}."""

    what: str
    source: str
    frames: int
    by_label: dict


@dataclass(frozen=True)
class JointExcess:
    """One joint outside its limits: ``lower``, ``upper`` its limits, ``min``, ``max`` the
    fitted range, ``excess`` the largest distance outside [rad | m], ``frames`` how many
    frames are outside, ``kind`` "rad" (revolute) or "m" (prismatic), ``runs`` the
    [first, last] window frame indices of each run of frames outside and ``runs_s`` their
    times [s] (empty, None in an earlier summary)."""

    lower: float
    upper: float
    min: float
    max: float
    excess: float
    frames: int
    kind: str = "rad"
    runs: list = dataclasses.field(default_factory=list)
    runs_s: list | None = None


@dataclass(frozen=True)
class JointRange:
    """The fitted angles against the joint limits (pipeline.joint_range): the worst
    excess [rad | m] with its joint (None when every frame is inside), the joints
    outside {name: JointExcess}, the window's ``frames``, whether the fit held the limits
    (None: an earlier summary)."""

    worst_excess: float
    worst_joint: str | None
    outside: dict
    frames: int
    held: bool | None = None

    @classmethod
    def of(cls, d: dict | None) -> "JointRange | None":
        if d is None:
            return None
        return cls(_num(d["worst_excess"]), d["worst_joint"],
                   {n: JointExcess(**e) for n, e in d["outside"].items()}, int(d["frames"]),
                   d.get("held"))


@dataclass(frozen=True)
class BallLaw:
    """The ball under the collision law (pipeline.ball_law): the club, restitution e
    used (its prior's sd), friction μ, whether the contact stuck, the face's effective
    mass [kg] (the head's alone, and the rigid body's for comparison), the law's impulse
    on the club and the residual Λ_fit − Λ_law [N·s] (3,)
    with its magnitude, the ball's speed [m/s] (its sd from e's prior), the energy
    changes [J]: the impact's (golfer + club + ball), the law's own (≤ 0) and the one if
    the ball took the whole fitted impulse; the restitution the fitted impulse implies
    (with its standard error from Λ's covariance, None without one)."""

    club: str
    restitution: float
    restitution_prior_sd: float
    friction: float
    stuck: bool
    effective_mass_at_face_kg: float
    impulse_law_Ns: tuple
    residual_impulse_Ns: tuple
    residual_impulse_magnitude_Ns: float
    ball_speed_mps: float
    ball_speed_sd_mps: float
    impact_energy_change_J: float
    law_energy_change_J: float
    energy_change_if_ball_took_fitted_impulse_J: float
    kinetic_energy_pre_J: float
    restitution_implied_by_fit: float
    restitution_implied_by_fit_se: float | None
    # the head's mass [kg] when the law took the head alone (decoupled from the shaft),
    # and the rigid golfer and club's effective mass at the face [kg]; None in a fit.json
    # written when the law took the rigid body
    head_mass_kg: float | None = None
    effective_mass_rigid_body_kg: float | None = None
    # the restitution the markers alone imply (the fit refitted at its t_e with the free
    # fit's weak prior in place of the law's, pipeline.fit_through_impact) and its SE;
    # NaN / None in an older fit.json or with the impulse free
    restitution_markers_alone: float = float("nan")
    restitution_markers_alone_se: float | None = None
    # the turf's impulse on the club head after the ball (3,) [N·s], its magnitude, its
    # upward part and its part against the head's path [N·s] (pipeline._turf_figures);
    # None when the head did not meet the ground (no turf impulse fitted)
    turf_impulse_Ns: tuple | None = None
    turf_impulse_magnitude_Ns: float | None = None
    turf_normal_Ns: float | None = None
    turf_against_path_Ns: float | None = None

    @classmethod
    def of(cls, d: dict | None) -> "BallLaw | None":
        if not d:
            return None
        kw: dict = {}
        for f in dataclasses.fields(cls):
            v = d.get(f.name)
            kw[f.name] = (v if f.name in ("club", "stuck") else
                          _opt(v) if f.name.startswith("turf_") and not isinstance(v, list)
                          else tuple(_num(x) for x in v) if f.name.endswith("impulse_Ns")
                          or f.name == "impulse_law_Ns" else
                          _opt(v) if f.name.endswith("_se") or f.name in (
                              "head_mass_kg", "effective_mass_rigid_body_kg") else _num(v))
        return cls(**kw)


@dataclass(frozen=True)
class ImpactFigures:
    """The ball impact (pipeline._impact_summary): fitted event time ``t_e_s`` against the
    measured ``t_hat_s`` ± ``sigma_s`` [s], the frame interval [s], the club-head speeds
    [m/s] before and after contact fitted and measured, the ball's speed [m/s], the
    impulse Λ (3,) and its magnitude [N·s], the smash factor (over the face point's speed
    [m/s]) with its club's band, the
    reset map's violation (absolute, relative)."""

    t_e_s: float
    t_hat_s: float
    sigma_s: float
    frame_interval_s: float
    clubhead_speed_pre_impact_fitted_mps: float
    clubhead_speed_pre_impact_measured_mps: float
    clubhead_speed_post_impact_fitted_mps: float
    clubhead_speed_post_impact_measured_mps: float
    ball_speed_mps: float
    impulse_Ns: tuple
    impulse_magnitude_Ns: float
    smash_factor: float
    smash_band: tuple
    club: str
    reset_violation_max: float
    reset_violation_rel: float
    ball_mass_kg: float = 0.04593
    marginal: "Marginal | None" = None
    ball: BallLaw | None = None
    smash_factor_se: float = float("nan")
    smash_factor_if_ball_took_fitted_impulse: float = float("nan")
    # the face point's speed just before contact [m/s] (the smash factor's denominator)
    # and the ball speed over the club-head markers' speed instead; NaN in a fit.json
    # written when the smash factor divided by the markers' speed
    clubhead_speed_at_face_pre_impact_mps: float = float("nan")
    smash_factor_over_marker_speed: float = float("nan")
    # Λ's prior in the fit's refits: {"kind": "law" | "free", "mean_Ns", "sigma_Ns",
    # "recentred": the re-centring rounds}; None in a fit.json written before it was
    # recorded ("recentred" absent before the re-centring)
    impulse_prior: dict | None = None
    # the club head's clearance through contact over its height at address [m]; NaN in
    # a fit.json written before it was measured
    sole_clearance_m: float = float("nan")
    # how far the head had handed its loss on by the second frame interval after contact
    # (pipeline._handed_on: the ratios and the fraction); None in an older fit.json
    head_handed_on: dict | None = None
    # the club head's ringing on the shaft after contact (pipeline._impact_summary): the
    # frequencies tried [{"hz" (None: none), "cost", ...}] and the chosen one's figures
    # (None: none chosen); empty / None in a fit.json written before it was tried
    ring_profile: list | None = None
    ring: dict | None = None

    @classmethod
    def of(cls, d: dict | None) -> "ImpactFigures | None":
        if not d:
            return None
        kw = {}
        for f in dataclasses.fields(cls):
            if f.name in ("impulse_prior", "head_handed_on", "ring_profile", "ring"):
                kw[f.name] = d.get(f.name)
                continue
            if f.name in ("marginal", "ball"):
                kw[f.name] = (Marginal if f.name == "marginal" else BallLaw).of(d.get(f.name))
                continue
            if f.name in ("smash_factor_se", "smash_factor_if_ball_took_fitted_impulse",
                          "clubhead_speed_at_face_pre_impact_mps",
                          "smash_factor_over_marker_speed", "sole_clearance_m"):
                kw[f.name] = _num(d.get(f.name))
                continue
            v = d[f.name]
            kw[f.name] = tuple(_num(x) for x in v) if f.name in ("impulse_Ns", "smash_band") \
                else v if f.name == "club" else _num(v)
        return cls(**kw)

    def speeds_mps(self, when: str) -> tuple:
        """(fitted, measured) club-head speed [m/s] ``when`` "pre" or "post" contact."""
        return (getattr(self, f"clubhead_speed_{when}_impact_fitted_mps"),
                getattr(self, f"clubhead_speed_{when}_impact_measured_mps"))


@dataclass(frozen=True)
class MarginalPoint:
    """One event time the impact's profile tried: ``t_e_s`` [s], its log likelihood
    (−cost), posterior weight, impulse Λ (3,) [N·s] and Laplace log evidence."""

    t_e_s: float
    log_likelihood: float
    weight: float
    impulse_Ns: tuple
    laplace_log_evidence: float


@dataclass(frozen=True)
class Marginal:
    """The impact marginalised over the profile's event times: the points, the marginal
    event time [s], and |Λ_fit|/m_ball [m/s] with its ratio to the club-head speed (what
    the ball would take if it took the whole fitted impulse, the law's ball speed aside)
    as mean and standard deviation; or ``unavailable`` (why there is none, the figures
    None)."""

    points: tuple
    unavailable: str | None
    t_e_mean_s: float | None
    t_e_sd_s: float | None
    fitted_impulse_speed_mean_mps: float | None
    fitted_impulse_speed_sd_mps: float | None
    fitted_impulse_smash_mean: float | None
    fitted_impulse_smash_sd: float | None

    @classmethod
    def of(cls, d: dict | None) -> "Marginal | None":
        if not d:
            return None
        pts = tuple(MarginalPoint(_num(p["t_e_s"]), _num(p["log_likelihood"]),
                                  _num(p["weight"]), tuple(p["impulse_Ns"]),
                                  _num(p["laplace_log_evidence"]))
                    for p in d.get("points") or ())
        return cls(pts, None if "points" in d else d.get("unavailable"),
                   *(_opt(d.get(k)) for k in ("t_e_mean_s", "t_e_sd_s",
                                              "fitted_impulse_speed_mean_mps",
                                              "fitted_impulse_speed_sd_mps",
                                              "fitted_impulse_smash_mean",
                                              "fitted_impulse_smash_sd")))


@dataclass(frozen=True)
class Reintegration:
    """The open-loop reintegration: whole-window RMS deviation [m] (inf once diverged),
    the divergence time [s] or None, how long it stays within the marker RMSE [s], the
    segment length [frames] and the worst segment deviation [m]."""

    whole_window_rms_m: float
    diverged_at_s: float | None
    within_marker_rmse_until_s: float
    frames_per_segment: int
    segments_max_m: float

    @classmethod
    def of(cls, d: dict) -> "Reintegration":
        rms = d["whole_window_rms_m"]
        return cls(math.inf if rms is None else float(rms), _opt(d["diverged_at_s"]),
                   _num(d["within_marker_rmse_until_s"]),
                   int(d["segments"]["frames_per_segment"]), _num(d["segments"]["max_m"]))


@dataclass(frozen=True)
class Headline:
    """fit.json's ``summary`` (the headline figures): marker RMSE and max over the window
    [mm]; with ground contact the pelvis residual's peak and RMS force [N] and moment
    [N·m], the contact's label, least normal force [N], deepest penetration [mm], fastest
    slip [mm/s] (None without contact); the fit's wall time [s]; whether the fit
    converged, the largest joint-limit excess of a revolute joint [rad] and of a prismatic
    one [m], the turf's impulse (None: not
    modelled), the replay window scored [s] and whether it covered the impact; with the
    impact its energy change [J], the smash factor's standard error, the restitution, the
    face's effective mass [kg] and the residual impulse's magnitude [N·s] (None
    without)."""

    marker_rmse_mm: float
    marker_max_mm: float
    residual_force_peak_N: float | None
    residual_force_rms_N: float | None
    residual_moment_peak_Nm: float | None
    residual_moment_rms_Nm: float | None
    foot_contact_label: str
    min_normal_force_N: float | None
    max_penetration_mm: float | None
    max_slip_speed_mm_s: float | None
    fit_wall_s: float
    converged: bool | None = None
    joint_limit_excess_max_rad: float | None = None
    joint_limit_excess_max_m: float | None = None
    turf_impulse_Ns: float | None = None
    replay_window_s: list | None = None
    replay_through_impact: bool | None = None
    impact_energy_change_J: float | None = None
    smash_factor_se: float | None = None
    restitution: float | None = None
    effective_mass_at_face_kg: float | None = None
    residual_impulse_Ns: float | None = None

    @classmethod
    def of(cls, d: dict) -> "Headline":
        return cls(**{f.name: d.get(f.name) for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class ContactCheck:
    """One per-interval contact check (harness/swing/consistency.py): what it measures,
    its unit ("–": none) and threshold; its worst value (None when no interval applies)
    with where and when [s] (where None: zero everywhere); how many intervals exceed it
    of how many evaluated."""

    what: str
    unit: str
    threshold: float
    worst_value: float | None
    worst_where: str | None
    worst_t0_s: float | None
    worst_t1_s: float | None
    intervals_exceeding: int
    intervals_evaluated: int
    exceeding: tuple = ()

    @classmethod
    def of(cls, q: dict) -> "ContactCheck":
        w = q["worst"]
        return cls(q["what"], q["unit"], float(q["threshold"]), _opt(w["value"]),
                   w["where"], _opt(w.get("t0_s")), _opt(w.get("t1_s")),
                   int(q["intervals_exceeding"]), int(q["intervals_evaluated"]),
                   tuple(Exceeding(int(r["interval"]), _num(r["t0_s"]), _num(r["t1_s"]),
                                   r["where"], _num(r["value"]),
                                   tuple(r["points_exceeding"]))
                         for r in q.get("exceeding") or ()))


@dataclass(frozen=True)
class Exceeding:
    """One frame interval over a contact check's threshold: its index, start and end
    [s], the point or foot worst at, the value (the check's unit) and every point over."""

    interval: int
    t0_s: float
    t1_s: float
    where: str
    value: float
    points_exceeding: tuple


@dataclass(frozen=True)
class TradeoffRow:
    """One refit of the ground trade-off: the residual weight, marker RMSE and max [mm],
    the pelvis residual's peak force [N] and moment [N·m], iterations."""

    w_residual: float
    marker_rmse_mm: float
    marker_max_mm: float
    residual_force_peak_N: float
    residual_moment_peak_Nm: float
    iterations: int


@dataclass(frozen=True)
class GroundFigures:
    """The feet's ground contact (fit.json's ``ground``): the schedule's label and
    description, friction μ and its model, the floor height [m], the least normal force
    [N], deepest penetration [mm] and fastest slip [mm/s], how the forces were solved,
    the trade-off refits, the contact points' anchors (P, 3) [m] and names, the
    per-interval ``contact_checks`` ((key, ContactCheck) per quantity) over
    ``intervals`` frame intervals (None when not evaluated)."""

    contact_label: str
    schedule: str
    mu: float
    friction_model: str
    floor_z_m: float
    min_normal_force_N: float
    max_penetration_mm: float
    max_slip_speed_mm_s: float
    solver: str
    tradeoff: tuple
    anchors_m: tuple
    frames: tuple
    contact_checks: tuple
    intervals: int | None

    @classmethod
    def of(cls, g: dict | None) -> "GroundFigures | None":
        if g is None:
            return None
        cons = g.get("consistency")
        return cls(g.get("contact_label", "assumed"), g.get("schedule", ""), g.get("mu", 0),
                   g.get("friction_model", ""), g.get("floor_z_m", 0.0),
                   g.get("min_normal_force_N", 0), g.get("max_penetration_mm", 0),
                   g.get("max_slip_speed_mm_s", 0), g.get("solver", ""),
                   tuple(TradeoffRow(**r) for r in g.get("tradeoff") or ()),
                   tuple(tuple(a) for a in g.get("anchors_m") or ()),
                   tuple(g.get("frames") or ()),
                   tuple((k, ContactCheck.of(q)) for k, q in cons["quantities"].items())
                   if cons else (), cons.get("intervals") if cons else None)


@dataclass(frozen=True)
class ShaftBend:
    """One bend coordinate of a flexible shaft (pipeline.shaft_figures): the head's
    deflection across the shaft [mm] and the bending moment's range [N·m], the nearest
    spring's stiffness [N·m/rad] and R²; ``held`` the refit held to that spring
    (objective, objective free, marker RMSE top → impact held and free [m]) or None."""

    name: str
    deflection_range_mm: tuple
    moment_range_Nm: tuple
    stiffness_Nm_per_rad: float
    r2: float
    held: tuple | None


@dataclass(frozen=True)
class ReplayFigures:
    """The engines' replay of the candidate: per engine the marker deviation (RMS, max)
    [m] against the fitted motion, the grip closure's largest gap [m], and the energy
    balance's (largest residual, E − E0 at the end) [J]; ``scored_s`` per engine the
    last knot time [s] of the window its replay records are scored over (the
    predictability window in horizon mode; empty in a fit.json written before it was
    recorded); ``segments`` fit.json's ``replay.segments`` as written (the segmented
    replay, harness/swing/segments.py; None in a fit.json written before it)."""

    deviation_m: dict
    grip_closure_max_m: dict
    energy_J: dict
    scored_until_s: dict = field(default_factory=dict)
    segments: dict | None = None

    @classmethod
    def of(cls, r: dict | None) -> "ReplayFigures | None":
        if r is None:
            return None
        return cls({e: (_num(d["rms"]), _num(d["max"]))
                    for e, d in r["engine_marker_deviation_m"].items()},
                   {e: _num(g) for e, g in (r.get("grip_closure_max_m") or {}).items()},
                   {e: (_num(d["max_balance_residual_J"]), _num(d["E_minus_E0_at_end_J"]))
                    for e, d in (r.get("energy_balance") or {}).items()},
                   {e: _num(d["scored_until_s"])
                    for e, d in (r.get("energy_balance") or {}).items()
                    if "scored_until_s" in d}, r.get("segments"))


@dataclass(frozen=True)
class FitFigures:
    """The dynamic fit: iterations, wall time [s], marker RMSE over the window and
    top → impact, marker max top → impact [m], the grip closure's largest gap [m], the
    torque interpolation defects (relative, worst joint), the club-head speed at impact
    fitted and measured [m/s], the pelvis residual's peaks [N, N, N·m] (force, vertical
    force, moment), the joint range, the impact (None without it), marker RMSE per label
    over the window and top → impact {label: m}, ``by_phase`` {phase: PhaseMarkers} (the
    calibration IK's address → top, then the fit's), the solver's ``message`` and the
    objective's ``components`` {name: value}."""

    iterations: int
    wall_s: float
    marker_rmse_m: float
    marker_rmse_top_to_impact_m: float
    marker_max_top_to_impact_m: float
    closure_max_m: float
    defects_max_rel: float
    defects_worst_joint: str
    club_head_speed_fitted_mps: float
    club_head_speed_measured_mps: float
    pelvis_residual_force_N: float
    pelvis_residual_vertical_force_N: float
    pelvis_residual_moment_Nm: float
    joint_range: JointRange | None
    impact: ImpactFigures | None
    marker_rmse_by_label_m: dict
    marker_rmse_top_to_impact_by_label_m: dict
    by_phase: dict = dataclasses.field(default_factory=dict)
    message: str = ""
    components: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, f: dict) -> "FitFigures":
        ch, pr = f["club_head_speed_at_impact_mps"], f["pelvis_residual_peak"]
        return cls(int(f["iterations"]), _num(f["wall_s"]), _num(f["marker_rmse_m"]),
                   _num(f["marker_rmse_by_phase_m"]["top_to_impact"]),
                   _num(f["marker_max_by_phase_m"]["top_to_impact"]),
                   _num(f["closure_max_m"]), _num(f["defects"]["max_rel"]),
                   f["defects"]["worst_joint"], _num(ch["fitted"]), _num(ch["measured"]),
                   _num(pr["force_N"]), _num(pr["vertical_force_N"]), _num(pr["moment_Nm"]),
                   JointRange.of(f.get("joint_range")), ImpactFigures.of(f.get("impact")),
                   dict(f["marker_rmse_by_label_m"]),
                   dict(f["marker_rmse_top_to_impact_by_label_m"]),
                   {k: PhaseMarkers(p["what"], p["source"], int(p["frames"]),
                                    {l: _num(v) for l, v in p["by_label"].items()})
                    for k, p in (f.get("marker_rmse_by_phase_and_label_m") or {}).items()},
                   f.get("message", ""), dict(f.get("components") or {}))


def _shaft(sh: dict | None, names) -> tuple:
    out = []
    for n in names:
        if sh and n in sh:
            d, h = sh[n], sh[n].get("held_to_law")
            out.append(ShaftBend(n, tuple(d["deflection_range_mm"]),
                                 tuple(d["moment_range_Nm"]),
                                 _num(d["stiffness_Nm_per_rad"]), _num(d["r2"]),
                                 (h["objective"], h["objective_free"],
                                  h["marker_rmse_top_to_impact_m"],
                                  h["marker_rmse_top_to_impact_free_m"]) if h else None))
    return tuple(out)


@dataclass(frozen=True)
class SwingEventTimes:
    """The capture's swing events (harness/capture/events.py): address, takeaway, top and
    ball contact [s] with contact's σ [s], the club-head speed over the frame interval
    before and after contact [m/s], and how contact was found."""

    address_s: float
    takeaway_s: float
    top_s: float
    impact_s: float
    impact_sigma_s: float
    clubhead_speed_pre_impact_mps: float
    clubhead_speed_post_impact_mps: float
    method: str


@dataclass(frozen=True)
class CaptureInfo:
    """The capture as read: its file and sha256, frames and rate [Hz], units and up axis
    in the file (and how the up axis was found), the low-pass filter (None: none), the
    swing events."""

    source: str
    sha256: str
    frames: int
    rate_hz: float
    units_in_file: str
    up_axis_in_file: str
    up_axis_source: str
    filter: object
    events: SwingEventTimes

    @classmethod
    def of(cls, c: dict) -> "CaptureInfo":
        ev = c["events"]
        return cls(c["source"], c["sha256"], c["frames"], c["rate_hz"], c["units_in_file"],
                   c["up_axis_in_file"], c["up_axis_source"], c.get("filter"),
                   SwingEventTimes(*(ev[f.name]
                                     for f in dataclasses.fields(SwingEventTimes))))


@dataclass(frozen=True)
class MeasuredLength:
    """A length measured at address [m] and how."""

    value_m: float
    how: str


@dataclass(frozen=True)
class ClubInfo:
    """The club: driver | iron, how it was chosen, its (whole club, head) masses [kg]."""

    club: str
    how: str
    masses_kg: tuple


@dataclass(frozen=True)
class ModelInfo:
    """The fitted golfer: its name and nv, the grip ("weld" | "hinge") and shaft
    ("rigid" | "flex"), the club (None in an earlier summary), the lengths measured at
    address {name: MeasuredLength}, the body mass [kg] (an input), the tracked markers
    and the marker set's markers not on the model."""

    name: str
    nv: int
    grip: str | None
    shaft: str | None
    club: ClubInfo | None
    measured_lengths: dict
    body_mass_kg: float
    tracked_markers: tuple
    not_tracked: tuple

    @classmethod
    def of(cls, m: dict, settings: dict) -> "ModelInfo":
        c = m.get("club")
        return cls(m["name"], m["nv"], settings.get("grip"), settings.get("shaft"),
                   ClubInfo(c["club"], c["how"], tuple(c["masses_kg"])) if c else None,
                   {k: MeasuredLength(v["value_m"], v["how"]) if isinstance(v, dict)
                    else MeasuredLength(*v) for k, v in m["measured_lengths"].items()},
                   m["dims"]["body_mass_kg"], tuple(m["tracked_markers"]),
                   tuple(m["not_tracked"]))


@dataclass(frozen=True)
class LengthErrors:
    """The scaled lengths' identifiability with one set of parameters free: values [m]
    and standard errors [m] by name (None: unresolved), how many directions are
    unresolved and their summaries."""

    lengths_value_m: dict
    lengths_se_m: dict
    unresolved_count: int
    unresolved_summary: tuple

    @classmethod
    def of(cls, d: dict) -> "LengthErrors":
        se = {k: None if v is None or not math.isfinite(v) else v
              for k, v in d["lengths_se_m"].items()}
        return cls(dict(d["lengths_value_m"]), se, d["unresolved_count"],
                   tuple(d["unresolved_summary"]))


@dataclass(frozen=True)
class Identifiability:
    """The scaled lengths' identifiability (harness/swing/identifiability.py): what it
    is, the marker and closure σ [m], the residuals and the motion's rank, with the
    offsets fixed (``lengths``) and free (``lengths_and_offsets``)."""

    what: str
    sigma_marker_m: float
    sigma_closure_m: float
    residuals: int
    motion_rank: int
    lengths: LengthErrors
    lengths_and_offsets: LengthErrors

    @classmethod
    def of(cls, d: dict) -> "Identifiability":
        return cls(d["what"], d["sigma_marker_m"], d["sigma_closure_m"], d["residuals"],
                   d["motion_rank"], LengthErrors.of(d["lengths"]),
                   LengthErrors.of(d["lengths_and_offsets"]))


@dataclass(frozen=True)
class SwingSummary:
    """A swing's fit.json, typed: the window, the fit, the reintegration, the headline,
    the calibration's and the IK's wall times [s] and the IK's RMSE [m], the club and how
    it was chosen, the settings' post-impact time [s], the body mass [kg], the whole
    run's wall time [s]; ``ground`` the feet's contact (None without it), the shaft's
    bends (empty when rigid), ``replay`` the engines' ReplayFigures (None when not
    replayed); the capture's ``rejected`` markers {label: why}, ``gaps`` {label:
    MarkerGap} and swing ``events_s`` {address | takeaway | top | impact: time [s]};
    ``study``, ``dimension``, ``activation`` their own modules' sections (None when not
    run); the page's header: ``capture``, ``model``, the calibration's IK RMSE by round
    [m], the ``identifiability`` of the scaled lengths."""

    window: Window
    fit: FitFigures
    reintegration: Reintegration
    headline: Headline
    calibration_wall_s: float
    ik_wall_s: float
    ik_rmse_m: float
    club: str
    club_how: str
    post_impact_s: float
    body_mass_kg: float
    wall_s: float
    ground: GroundFigures | None
    shaft: tuple
    replay: ReplayFigures | None
    rejected: dict
    gaps: dict
    events_s: dict
    study: dict | None
    dimension: dict | None
    activation: dict | None
    capture: CaptureInfo | None = None
    model: ModelInfo | None = None
    calibration_rmse_by_round_m: tuple = ()
    identifiability: Identifiability | None = None

    @property
    def fit_wall_s(self) -> float:
        """Calibration + IK + fit wall time [s]."""
        return self.calibration_wall_s + self.ik_wall_s + self.fit.wall_s

    @classmethod
    def of(cls, doc: dict) -> "SwingSummary":
        club = (doc.get("model") or {}).get("club") or {}
        cap = doc["capture"]
        ev = cap.get("events") or {}
        return cls(
            Window.of(doc["window"]), FitFigures.of(doc["fit"]),
            Reintegration.of(doc["reintegration"]), Headline.of(doc["summary"] or {}),
            _num(doc["calibration"]["wall_s"]), _num(doc["ik"]["wall_s"]),
            _num(doc["ik"]["rmse_m"]), club.get("club"),
            club.get("how", "the --club option"),
            _num((doc.get("settings") or {}).get("post_impact_s")),
            _num(doc["model"]["dims"]["body_mass_kg"]), _num(doc.get("wall_s")),
            GroundFigures.of(doc.get("ground")),
            _shaft(doc.get("shaft"), SHAFT_COORDINATES), ReplayFigures.of(doc.get("replay")),
            dict(cap["rejected"]),
            {k: MarkerGap(_num(g["missing_fraction"]), int(g["n_gaps"]),
                          _num(g["longest_gap_s"])) for k, g in cap["gaps"].items()},
            {n: float(ev[f"{n}_s"]) for n in ("address", "takeaway", "top", "impact")
             if ev.get(f"{n}_s") is not None},
            doc.get("study"), doc.get("dimension"), doc.get("activation"),
            CaptureInfo.of(cap), ModelInfo.of(doc["model"], doc.get("settings") or {}),
            tuple(doc["calibration"]["rmse_by_round_m"]),
            Identifiability.of(doc["identifiability"]))

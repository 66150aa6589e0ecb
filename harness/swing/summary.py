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
from dataclasses import dataclass


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
class JointExcess:
    """One joint outside its limits: ``lower``, ``upper`` its limits, ``min``, ``max`` the
    fitted range, ``excess`` the largest distance outside [rad | m], ``frames`` how many
    frames are outside."""

    lower: float
    upper: float
    min: float
    max: float
    excess: float
    frames: int


@dataclass(frozen=True)
class JointRange:
    """The fitted angles against the joint limits (pipeline.joint_range): the worst
    excess [rad | m] with its joint (None when every frame is inside), the joints
    outside {name: JointExcess}, the window's ``frames``."""

    worst_excess: float
    worst_joint: str | None
    outside: dict
    frames: int

    @classmethod
    def of(cls, d: dict | None) -> "JointRange | None":
        if d is None:
            return None
        return cls(_num(d["worst_excess"]), d["worst_joint"],
                   {n: JointExcess(**e) for n, e in d["outside"].items()}, int(d["frames"]))


@dataclass(frozen=True)
class ImpactFigures:
    """The ball impact (pipeline._impact_summary): fitted event time ``t_e_s`` against the
    measured ``t_hat_s`` ± ``sigma_s`` [s], the frame interval [s], the club-head speeds
    [m/s] before and after contact fitted and measured, the ball's speed [m/s], the
    impulse Λ (3,) and its magnitude [N·s], the smash factor with its club's band, the
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

    @classmethod
    def of(cls, d: dict | None) -> "ImpactFigures | None":
        if not d:
            return None
        kw = {}
        for f in dataclasses.fields(cls):
            v = d[f.name]
            kw[f.name] = tuple(_num(x) for x in v) if f.name in ("impulse_Ns", "smash_band") \
                else v if f.name == "club" else _num(v)
        return cls(**kw)

    def speeds_mps(self, when: str) -> tuple:
        """(fitted, measured) club-head speed [m/s] ``when`` "pre" or "post" contact."""
        return (getattr(self, f"clubhead_speed_{when}_impact_fitted_mps"),
                getattr(self, f"clubhead_speed_{when}_impact_measured_mps"))


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
    slip [mm/s] (None without contact); the fit's wall time [s]."""

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

    @classmethod
    def of(cls, q: dict) -> "ContactCheck":
        w = q["worst"]
        return cls(q["what"], q["unit"], float(q["threshold"]), _opt(w["value"]),
                   w["where"], _opt(w.get("t0_s")), _opt(w.get("t1_s")),
                   int(q["intervals_exceeding"]), int(q["intervals_evaluated"]))


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
    balance's (largest residual, E − E0 at the end) [J]."""

    deviation_m: dict
    grip_closure_max_m: dict
    energy_J: dict

    @classmethod
    def of(cls, r: dict | None) -> "ReplayFigures | None":
        if r is None:
            return None
        return cls({e: (_num(d["rms"]), _num(d["max"]))
                    for e, d in r["engine_marker_deviation_m"].items()},
                   {e: _num(g) for e, g in (r.get("grip_closure_max_m") or {}).items()},
                   {e: (_num(d["max_balance_residual_J"]), _num(d["E_minus_E0_at_end_J"]))
                    for e, d in (r.get("energy_balance") or {}).items()})


@dataclass(frozen=True)
class FitFigures:
    """The dynamic fit: iterations, wall time [s], marker RMSE over the window and
    top → impact, marker max top → impact [m], the grip closure's largest gap [m], the
    torque interpolation defects (relative, worst joint), the club-head speed at impact
    fitted and measured [m/s], the pelvis residual's peaks [N, N, N·m] (force, vertical
    force, moment), the joint range, the impact (None without it), marker RMSE per label
    over the window and top → impact {label: m}."""

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
                   dict(f["marker_rmse_top_to_impact_by_label_m"]))


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
class SwingSummary:
    """A swing's fit.json, typed: the window, the fit, the reintegration, the headline,
    the calibration's and the IK's wall times [s] and the IK's RMSE [m], the club and how
    it was chosen, the settings' post-impact time [s], the body mass [kg], the whole
    run's wall time [s]; ``ground`` whether the feet were in contact with their
    ``contact_checks`` (ContactCheck per quantity), the shaft's bends (empty when rigid),
    ``replay`` the engines' ReplayFigures (None when not replayed), the capture's rejected
    markers; ``study``, ``dimension``, ``activation`` their own modules' sections (None
    when not run)."""

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
    ground: bool
    contact_checks: tuple
    shaft: tuple
    replay: ReplayFigures | None
    rejected: tuple
    study: dict | None
    dimension: dict | None
    activation: dict | None

    @property
    def fit_wall_s(self) -> float:
        """Calibration + IK + fit wall time [s]."""
        return self.calibration_wall_s + self.ik_wall_s + self.fit.wall_s

    @classmethod
    def of(cls, doc: dict) -> "SwingSummary":
        from fixtures.golfers import SHAFT_COORDINATES

        club = (doc.get("model") or {}).get("club") or {}
        cons = (doc.get("ground") or {}).get("consistency")
        return cls(
            Window.of(doc["window"]), FitFigures.of(doc["fit"]),
            Reintegration.of(doc["reintegration"]), Headline.of(doc["summary"] or {}),
            _num(doc["calibration"]["wall_s"]), _num(doc["ik"]["wall_s"]),
            _num(doc["ik"]["rmse_m"]), club.get("club"),
            club.get("how", "the --club option"),
            _num((doc.get("settings") or {}).get("post_impact_s")),
            _num(doc["model"]["dims"]["body_mass_kg"]), _num(doc.get("wall_s")),
            doc.get("ground") is not None,
            tuple((k, ContactCheck.of(q)) for k, q in cons["quantities"].items())
            if cons else (),
            _shaft(doc.get("shaft"), SHAFT_COORDINATES), ReplayFigures.of(doc.get("replay")),
            tuple(doc["capture"]["rejected"]), doc.get("study"), doc.get("dimension"),
            doc.get("activation"))

"""The swing's checks as one table: each check declared once (its words, its threshold's
key in the tolerance table's ``swing`` group, how it is measured on the typed fit.json,
harness/swing/summary.py), evaluated by one loop (``assess``) into the Assessment.

A row is {name, value, target, ok}: ok True or False when a threshold scores it, None
for a figure reported without one. Units: lengths m (written in mm), speeds m/s, times s,
forces N, moments N·m, energies J, angles rad.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from harness.core.tolerances import lookup
from harness.swing import activation, dimension, segments, study
from harness.swing.pipeline import DIVERGED_M, turf_contact
from harness.swing.summary import SwingSummary

REPORTED = "reported, no threshold"


@dataclass(frozen=True)
class Facts:
    """What the checks read: the typed fit.json ``summary`` and, when the candidate was
    replayed, the replay stage's records (``replay_records``, those of stage "replay")
    and whether every scored record of the replay passed (``replay_ok``)."""

    summary: SwingSummary
    replayed: bool = False
    replay_records: tuple = ()
    replay_ok: bool = True


@dataclass(frozen=True)
class Check:
    """One check of the table. ``name``: its words (a function of the facts and the item
    when they name something measured); ``threshold``: (key, "atol" | "rtol") in the
    tolerance table's ``swing`` group, or None (reported); ``applies``: whether the
    facts hold it; ``each``: the items it is evaluated over (one row each; default one
    row); ``measure(facts, item)`` → the measured figure; ``value(facts, item, x)`` →
    its words; ``target(limit, facts, item)`` → the target's words; ``passes(x, limit, facts)``
    → ok (None: reported)."""

    name: str | Callable
    threshold: tuple | None
    measure: Callable
    value: Callable
    target: Callable = lambda lim, f, item: REPORTED
    passes: Callable = lambda x, lim, f: None
    applies: Callable = lambda f: True
    each: Callable = lambda f: (None,)


def _limit(threshold) -> float | None:
    if threshold is None:
        return None
    key, which = threshold
    return getattr(lookup("swing", key), which)


@dataclass(frozen=True)
class Assessment:
    """The swing's verdict: ``rows`` [{name, value, target, ok}], one per check of CHECKS
    that applies, per item, in the table's order; ``exit_code`` 0 if no row fails."""

    rows: tuple

    @property
    def exit_code(self) -> int:
        return exit_code(self.rows)


def assess(facts: Facts) -> Assessment:
    """The Assessment of ``facts``: CHECKS evaluated in one loop."""
    rows = []
    for c in CHECKS:
        if not c.applies(facts):
            continue
        lim = _limit(c.threshold)
        for item in c.each(facts):
            x = c.measure(facts, item)
            rows.append({"name": c.name(facts, item) if callable(c.name) else c.name,
                         "value": c.value(facts, item, x),
                         "target": c.target(lim, facts, item),
                         "ok": c.passes(x, lim, facts)})
    return Assessment(tuple(rows))


def exit_code(rows: Iterable[Mapping[str, Any]]) -> int:
    """0 if no row fails, else 1."""
    return 0 if all(r["ok"] is not False for r in rows) else 1


# ----- the words and measures of the checks that need more than one line ----------------
def scored_window_words(s: SwingSummary) -> str:
    """" (scored up to t = … s …)": the last knot time [s] of the window the replay records
    are scored over (each engine's; the predictability window in horizon mode, else the
    whole replay), or "" when
    the fit.json does not record it."""
    until = s.replay.scored_until_s if s.replay is not None else {}
    if not until:
        return ""
    lo, hi = min(until.values()), max(until.values())
    if lo == hi:
        return f" (scored up to t = {lo:.4f} s, the window its records are scored over)"
    return (f" (scored up to t = {lo:.4f}–{hi:.4f} s, each engine's scored window: "
            + ", ".join(f"{e} {t:.4f} s" for e, t in until.items()) + ")")


def _rmse_down(f: Facts) -> float:
    return f.summary.fit.marker_rmse_top_to_impact_m


def _reintegration_words(f: Facts, _, x) -> str:
    r = f.summary.reintegration
    head = (f"diverged (a marker {DIVERGED_M:g} m off) at {r.diverged_at_s:.3f} s; "
            if r.diverged_at_s is not None else
            f"RMS {1e3 * r.whole_window_rms_m:.3g} mm; ")
    return (head + f"within the marker RMSE for the first {r.within_marker_rmse_until_s:.3f} "
            f"s; per {r.frames_per_segment}-frame segment worst "
            f"{1e3 * r.segments_max_m:.3g} mm")


def _joint_range_words(f: Facts, _, jr) -> str:
    if jr is None:
        return "not computed (an earlier summary)"
    how = {True: "held by the fit", False: "released (--no-joint-limits)",
           None: "not said whether held"}[jr.held]
    parts = [f"{n} {d.min:+.2f} … {d.max:+.2f} (limits {d.lower:+.2f} … {d.upper:+.2f}; "
             f"{d.excess:.3g} {d.kind} outside at {d.frames} of {jr.frames} frames"
             f"{_runs_words(d)})"
             for n, d in sorted(jr.outside.items(), key=lambda kv: -kv[1].excess)]
    unit = jr.outside[jr.worst_joint].kind if jr.worst_joint in jr.outside else "rad"
    return (f"limits {how}; worst {jr.worst_excess:.3f} {unit} outside ({jr.worst_joint}): "
            + "; ".join(parts)) if parts else \
        f"limits {how}; every joint inside its limits at every frame " \
        f"(worst {jr.worst_excess:.1e})"


def _runs_words(d) -> str:
    """": window frames a–b (t … s), …" of a JointExcess, or "" in an earlier summary."""
    if not d.runs:
        return ""
    ts = d.runs_s or [None] * len(d.runs)
    return ": window frames " + ", ".join(
        f"{a}–{b}" + ("" if t is None else f" ({t[0]:.3f}–{t[1]:.3f} s)")
        for (a, b), t in zip(d.runs, ts))


def _speed_rel(f: Facts, when) -> tuple:
    fit_, meas = f.summary.fit.impact.speeds_mps(when)
    d = abs(fit_ - meas) / meas if meas and np.isfinite(fit_) else float("nan")
    return fit_, meas, d


def _window_words(f: Facts, _, past) -> str:
    w = f.summary.window
    end = f"the capture ends at frame {w.last_frame}; " if w.last_frame < w.last_frame_asked \
        else ""
    return f"{past:.1f} ms past the measured contact ({end}{1e3 * f.summary.post_impact_s:g} " \
           "ms asked)"


def _contact_words(f: Facts, item, q) -> str:
    u = "" if q.unit == "–" else f" {q.unit}"
    n = f"{q.intervals_exceeding} of {q.intervals_evaluated} intervals exceed"
    if q.worst_value is None:
        return "not evaluated (no interval applies)"
    if q.worst_where is None:
        return f"0{u} in every interval; {n}"
    return (f"worst {q.worst_value:.3g}{u} ({q.worst_where}, {q.worst_t0_s:.3f}–"
            f"{q.worst_t1_s:.3f} s); {n}")


def _contact_target(lim, f: Facts, item) -> str:
    q = item[1]
    u = "" if q.unit == "–" else f" {q.unit}"
    return f"≤ {q.threshold:g}{u} per interval; reported, not scored (an assumed schedule " \
           "is not data)"


def _shaft_words(f: Facts, _, bends) -> str:
    parts = []
    for b in bends:
        held = b.held
        parts.append(f"{b.name}: head {b.deflection_range_mm[0]:+.0f} … "
                     f"{b.deflection_range_mm[1]:+.0f} mm, moment "
                     f"{b.moment_range_Nm[0]:+.1f} … {b.moment_range_Nm[1]:+.1f} "
                     f"N·m, nearest spring k {b.stiffness_Nm_per_rad:.0f} N·m/rad, "
                     f"R² {b.r2:.2f}"
                     + (f"; held to it: objective {held[0]:.1f} against "
                        f"{held[1]:.1f}, marker RMSE top → impact "
                        f"{1e3 * held[2]:.1f} against {1e3 * held[3]:.1f} mm"
                        if held else ""))
    return "; ".join(parts)


def _peak_rms(unit: str) -> Callable:
    """The words of a (peak, RMS) pair in ``unit``."""
    return lambda f, _, x: f"{x[0]:.1f} {unit} (RMS {x[1]:.1f} {unit})"


def _peak_within(unit: str) -> Callable:
    """The target's words of a peak's threshold in ``unit``."""
    return lambda lim, f, _: f"peak ≤ {lim:g} {unit}"


def _peak_passes(x, lim, f) -> bool:
    return x[0] <= lim


def _section_row(check: Callable[[Any], dict[str, Any]], section: str) -> Check:
    """A check whose row the study's own module writes (its ``check`` of fit.json's
    ``section``)."""
    def row(f: Facts, _: object) -> Any:
        return check(getattr(f.summary, section))
    return Check(lambda f, r: row(f, r)["name"], None, row, lambda f, _, r: r["value"],
                 target=lambda lim, f, _: row(f, None)["target"],
                 passes=lambda r, lim, f: r["ok"],
                 applies=lambda f: getattr(f.summary, section) is not None)


def _has_ground(f: Facts) -> bool:
    return f.summary.ground is not None


def _impact(f: Facts) -> bool:
    return f.summary.fit.impact is not None


def _ball(f: Facts) -> bool:
    return f.summary.fit.impact is not None and f.summary.fit.impact.ball is not None


def _turf(f: Facts) -> bool:
    """Whether the fit holds a turf impulse after the ball."""
    return _ball(f) and f.summary.fit.impact.ball.turf_impulse_Ns is not None


def _smash_words(f: Facts, _, sf) -> str:
    im = f.summary.fit.impact
    if im.ball is None:
        return f"{sf:.3f} (ball {im.ball_speed_mps:.1f} m/s from |Λ|)"
    b = im.ball
    face = im.clubhead_speed_at_face_pre_impact_mps
    over = ("" if face != face else
            f" from the face at {face:.1f} m/s; {im.smash_factor_over_marker_speed:.3f} over "
            f"the club-head markers' speed")
    return (f"{sf:.3f} ± {im.smash_factor_se:.3f} (ball {im.ball_speed_mps:.1f} m/s by the "
            f"law{over}; e = {b.restitution:.3f} ± {b.restitution_prior_sd:.3f}, face effective "
            f"mass {b.effective_mass_at_face_kg:.3f} kg"
            f"{' (the head alone)' if b.head_mass_kg is not None else ''}; the whole fitted "
            f"|Λ| on the ball "
            f"would give {im.smash_factor_if_ball_took_fitted_impulse:.3f})")


def prior_words(prior: dict | None) -> str:
    """Λ's prior in the fit's refits, in words ("" when fit.json does not record it)."""
    if not prior:
        return ""
    if prior["kind"] == "law":
        rounds = prior.get("recentred")
        n = sum(1 for r in rounds or [] if r["refitted"])
        where = "at the first fit" if not rounds else (
            f"at the fit's own pre-contact state (re-centred from the first fit's in "
            f"{n} refit{'' if n == 1 else 's'}, last move {rounds[-1]['shift_Ns']:.4f} N·s)")
        loose = (f"; in the turf's plane (the vertical and the head's path) only within "
                 f"{prior['sigma_loose_Ns']:g} N·s" if prior.get("loose_directions") else "")
        return (f" (Λ held to the law's impulse {where}, within "
                f"{prior['sigma_Ns']:.3f} N·s: the spread e's prior gives it{loose})")
    return f" (Λ free: a prior about zero, {prior['sigma_Ns']:g} N·s)"


def alone_words(b) -> str:
    """The restitution the markers alone imply (a BallLaw's), in words; "" when the
    fit.json does not record it."""
    if not np.isfinite(b.restitution_markers_alone):
        return ""
    se = b.restitution_markers_alone_se
    both = ", the ball's and the turf's impulse together" if b.turf_impulse_Ns is not None \
        else ""
    return (f" (the markers alone, without the law's prior{both}: "
            f"{b.restitution_markers_alone:.2f}"
            + (f" ± {se:.2f}" if se is not None else "") + ")")


def implied_words(b) -> str:
    """The restitution the fitted impulse implies (a BallLaw's), in words: its value ± SE,
    or why it is not read (a turf impulse in the plane the ball's lies in)."""
    if b.turf_impulse_Ns is not None:
        return ("not read: the turf's impulse, free in the plane of the head's path and the "
                "vertical where the ball's lies too, cannot be told from the ball's by the "
                f"markers, so e is the prior's ({b.restitution:.3f} ± "
                f"{b.restitution_prior_sd:.3f})" + alone_words(b))
    return (f"{b.restitution_implied_by_fit:.2f}"
            + (f" ± {b.restitution_implied_by_fit_se:.2f}"
               if b.restitution_implied_by_fit_se is not None else "") + alone_words(b))


def _energy_words(f: Facts, _, b) -> str:
    return (f"{b.impact_energy_change_J:+.2f} J of {b.kinetic_energy_pre_J:.0f} J before "
            f"contact (the law's own {b.law_energy_change_J:+.2f} J; with the whole fitted Λ "
            f"on the ball it would be {b.energy_change_if_ball_took_fitted_impulse_J:+.2f} J)")


def _through_words(f: Facts, _, through) -> str:
    w, t_e = f.summary.headline.replay_window_s, f.summary.fit.impact.t_e_s
    seg = f.summary.replay.segments if f.summary.replay is not None else None
    hold = [s for s in (seg or {}).get("list", []) if s.get("holds_impact")]
    if through:
        s = hold[0]
        return (f"yes: segment {s['index'] + 1} of {len(seg['list'])}, t = "
                f"{s['t_s'][0]:.4f}–{s['t_s'][1]:.4f} s, holds the impact at {t_e:.4f} s "
                f"and passed in every engine; scored {w[0]:.4f}–{w[1]:.4f} s")
    if not hold:
        return ("no: no segment of the replay holds the impact"
                + (f" (scored {w[0]:.4f}–{w[1]:.4f} s)" if w else ""))
    return (f"no: the segment t = {hold[0]['t_s'][0]:.4f}–{hold[0]['t_s'][1]:.4f} s holds "
            f"the impact at {t_e:.4f} s but was not compared in every engine or did not "
            "pass")


def _segment_list(f: Facts) -> list:
    seg = f.summary.replay.segments if f.summary.replay is not None else None
    return list((seg or {}).get("list", []))


def _segment_name(f: Facts, s: dict) -> str:
    n = len(_segment_list(f))
    return (f"segmented replay {s['index'] + 1} of {n}, scored over t = {s['t_s'][0]:.4f}–"
            f"{s['t_s'][1]:.4f} s" + (" (holds the ball contact)" if s["holds_impact"]
                                       else "")
            + ": every engine from the fitted state at its start, against the fit's markers "
              "and the measured ones")


def _segment_words(f: Facts, s: dict, _x) -> str:
    eng = s["engines"]
    if not eng:
        return "no engine replayed it"
    worst = max(eng, key=lambda e: eng[e]["fit_rms_m"])
    m = [d["markers_rmse_m"] for d in eng.values()
         if d["markers_rmse_m"] is not None and np.isfinite(d["markers_rmse_m"])]
    r = s["records"]
    fit = s["fit_markers_rmse_m"]
    seen = (f"marker RMSE {1e3 * min(m):.2f}–{1e3 * max(m):.2f} mm in the engines (the fit "
            f"{1e3 * fit:.2f} mm) over {s['frames']} frames" if m and fit is not None
            else "no measured marker inside it")
    return (f"worst engine {worst}: RMS {1e3 * eng[worst]['fit_rms_m']:.3g} mm (max "
            f"{1e3 * eng[worst]['fit_max_m']:.3g} mm) from the fit's markers; {seen}; "
            f"{r['passed']} of {r['total']} replay rows pass")


def _replayed(f: Facts) -> bool:
    return f.replayed


# ----- the table ----------------------------------------------------------------------
CHECKS = (
    Check("marker RMSE, top → impact (tracked markers)", ("marker_rmse", "atol"),
          lambda f, _: _rmse_down(f), lambda f, _, x: f"{1e3 * x:.1f} mm",
          target=lambda lim, f, _: f"≤ {1e3 * lim:.0f} mm",
          passes=lambda x, lim, f: x <= lim),
    Check("marker max, top → impact (tracked markers)", ("marker_max", "atol"),
          lambda f, _: f.summary.fit.marker_max_top_to_impact_m,
          lambda f, _, x: f"{1e3 * x:.1f} mm",
          target=lambda lim, f, _: f"≤ {1e3 * lim:.0f} mm",
          passes=lambda x, lim, f: x <= lim),
    Check("torque interpolation defects (relative)", ("defects", "rtol"),
          lambda f, _: f.summary.fit.defects_max_rel,
          lambda f, _, x: f"{x:.2e} ({f.summary.fit.defects_worst_joint})",
          target=lambda lim, f, _: f"≤ {lim:g}", passes=lambda x, lim, f: x <= lim),
    Check("open-loop reintegration within the marker RMSE", None,
          lambda f, _: f.summary.reintegration.whole_window_rms_m, _reintegration_words,
          target=lambda lim, f, _: f"≤ {1e3 * _rmse_down(f):.1f} mm over the window",
          passes=lambda x, lim, f: x <= _rmse_down(f)),
    Check("fit wall time (calibration + IK + fit)", ("fit_wall_s", "atol"),
          lambda f, _: f.summary.fit_wall_s, lambda f, _, x: f"{x:.0f} s",
          target=lambda lim, f, _: f"≤ {lim:.0f} s", passes=lambda x, lim, f: x <= lim),
    Check("fitted joint angles within the model's joint limits", ("joint_range", "atol"),
          lambda f, _: f.summary.fit.joint_range, _joint_range_words,
          target=lambda lim, f, _: f"≤ {lim:g} rad outside",
          passes=lambda jr, lim, f: None if jr is None else jr.worst_excess <= lim),
    Check("club-head speed at impact, fitted vs measured", None,
          lambda f, _: (f.summary.fit.club_head_speed_fitted_mps,
                        f.summary.fit.club_head_speed_measured_mps),
          lambda f, _, x: f"{x[0]:.1f} vs {x[1]:.1f} m/s"),
    # the ball impact (none without it)
    Check("impact time, fitted against the measured club-head velocity discontinuity",
          ("impact_time_frames", "atol"),
          lambda f, _: abs(f.summary.fit.impact.t_e_s - f.summary.fit.impact.t_hat_s)
          / f.summary.fit.impact.frame_interval_s,
          lambda f, _, dt: (f"{f.summary.fit.impact.t_e_s:.5f} s vs "
                            f"{f.summary.fit.impact.t_hat_s:.5f} ± "
                            f"{f.summary.fit.impact.sigma_s:.5f} s ({dt:.2f} frame "
                            "intervals apart)"),
          target=lambda lim, f, _: f"within {lim:g} frame interval",
          passes=lambda dt, lim, f: bool(dt <= lim), applies=_impact),
    Check(lambda f, when: f"club-head speed {'before' if when == 'pre' else 'after'} ball "
                          "contact, fitted vs measured (one frame interval)",
          ("clubhead_speed_through_impact", "atol"), _speed_rel,
          lambda f, _, x: f"{x[0]:.1f} vs {x[1]:.1f} m/s ({100 * x[2]:.1f} %)",
          target=lambda lim, f, _: f"within {100 * lim:g} %",
          passes=lambda x, lim, f: bool(x[2] <= lim), applies=_impact,
          each=lambda f: ("pre", "post")),
    Check(lambda f, _: (f"smash factor (the collision law's ball speed / the fitted speed "
                        f"of the face point that strikes it, just before contact; "
                        f"{f.summary.fit.impact.club}, "
                        f"{f.summary.club_how})"), None,
          lambda f, _: f.summary.fit.impact.smash_factor, _smash_words,
          target=lambda lim, f, _: (f"{f.summary.fit.impact.smash_band[0]:g}–"
                                 f"{f.summary.fit.impact.smash_band[1]:g} "
                                 f"({f.summary.fit.impact.club})"),
          passes=lambda sf, lim, f: bool(f.summary.fit.impact.smash_band[0] <= sf
                                         <= f.summary.fit.impact.smash_band[1]),
          applies=_impact),
    Check("energy change across the impact (golfer + club by the fitted velocity jump, "
          "plus the ball by the collision law)", ("impact_energy_created", "rtol"),
          lambda f, _: f.summary.fit.impact.ball, _energy_words,
          target=lambda lim, f, _: (f"≤ 0 (round-off: {lim:g} of the kinetic energy before "
                                    "contact); energy created fails"),
          passes=lambda b, lim, f: bool(b.impact_energy_change_J
                                        <= lim * b.kinetic_energy_pre_J),
          applies=_ball),
    Check("turf after the ball: the club head through contact against the height it rested "
          "at during address (below it, the head met the ground, and the turf's impulse must "
          "be fitted as its own, not the ball's)",
          ("turf_clearance_m", "atol"),
          lambda f, _: f.summary.fit.impact.sole_clearance_m,
          lambda f, _, c: (f"{1e3 * c:+.1f} mm (the club-head markers' least height over the "
                           "contact frame and the two after it, each against its address "
                           "height)" + ("" if not turf_contact(c)
                                        else "; the head met the ground after the ball: "
                                        "its impulse fitted as the turf's (next row)"
                                        if _turf(f) else "; the head met the ground after "
                                        "the ball: its deceleration is not the ball's, and "
                                        "this fit has no turf impulse to give it to")),
          target=lambda lim, f, _: f"> −{1e3 * lim:g} mm, or a turf impulse fitted",
          passes=lambda c, lim, f: bool(c > -lim or _turf(f)),
          applies=lambda f: _impact(f) and np.isfinite(
              f.summary.fit.impact.sole_clearance_m)),
    Check("turf's impulse on the club head after the ball: the impulse in the plane of the "
          "vertical and the head's path beyond the ball's law (the turf's, and any of the "
          "head's loss the rigid club over-reads); it must push up and against the path "
          "(the ground only pushes; friction and the soil only resist)", None,
          lambda f, _: f.summary.fit.impact.ball,
          lambda f, _, b: (f"{b.turf_normal_Ns:+.3f} N·s up, {b.turf_against_path_Ns:+.3f} "
                           f"N·s against the path, |·| {b.turf_impulse_magnitude_Ns:.3f} N·s "
                           "(fitted with the ball's at the same instant, in the plane the "
                           "law's prior leaves free)"),
          target=lambda lim, f, _: "both ≥ 0 N·s",
          passes=lambda b, lim, f: bool(b.turf_normal_Ns >= 0.0
                                        and b.turf_against_path_Ns >= 0.0),
          applies=lambda f: _turf(f)),
    Check("residual impulse on the club: the fitted Λ less the collision law's and any turf's "
          "(what they do not explain; never given to the ball)", None,
          lambda f, _: f.summary.fit.impact.ball,
          lambda f, _, b: ("(" + ", ".join(f"{x:+.3f}" for x in b.residual_impulse_Ns)
                           + f") N·s, |·| {b.residual_impulse_magnitude_Ns:.3f} N·s of "
                             f"|Λ| {f.summary.fit.impact.impulse_magnitude_Ns:.3f} N·s"
                           + prior_words(f.summary.fit.impact.impulse_prior)
                           + "; the e the fitted Λ would imply: " + implied_words(b)),
          applies=_ball),
    Check("fitted window after ball contact", None,
          lambda f, _: 1e3 * (f.summary.window.t_end_s - f.summary.fit.impact.t_hat_s),
          _window_words, applies=_impact),
    Check("impulse on the club face and the reset map's violation", None,
          lambda f, _: f.summary.fit.impact,
          lambda f, _, im: ("Λ = (" + ", ".join(f"{x:+.3f}" for x in im.impulse_Ns)
                            + f") N·s; max |M(v⁺ − v⁻) − JᵀΛ| {im.reset_violation_max:.1e}, "
                              f"relative {im.reset_violation_rel:.1e}"),
          applies=_impact),
    # the feet: without ground contact the pelvis wrench stands for the legs
    Check("feet: no ground contact; the pelvis residual wrench stands for the legs", None,
          lambda f, _: f.summary.fit,
          lambda f, _, x: (f"peak |F| {x.pelvis_residual_force_N:.0f} N (vertical "
                           f"{x.pelvis_residual_vertical_force_N:.0f} N), |M| "
                           f"{x.pelvis_residual_moment_Nm:.0f} N·m"),
          applies=lambda f: f.summary.ground is None),
    Check("pelvis residual force with the feet on the ground (peak, RMS)",
          ("residual_force_peak", "atol"),
          lambda f, _: (f.summary.headline.residual_force_peak_N,
                        f.summary.headline.residual_force_rms_N),
          _peak_rms("N"), target=_peak_within("N"), passes=_peak_passes, applies=_has_ground),
    Check("pelvis residual moment with the feet on the ground (peak, RMS)",
          ("residual_moment_peak", "atol"),
          lambda f, _: (f.summary.headline.residual_moment_peak_Nm,
                        f.summary.headline.residual_moment_rms_Nm),
          _peak_rms("N·m"), target=_peak_within("N·m"), passes=_peak_passes,
          applies=_has_ground),
    Check(lambda f, _: (f"foot contact ({f.summary.headline.foot_contact_label} schedule, no "
                        "force plate): min normal force, max penetration, max slip speed"),
          None, lambda f, _: f.summary.headline,
          lambda f, _, h: (f"{h.min_normal_force_N:.1f} N; {h.max_penetration_mm:.1f} mm; "
                           f"{h.max_slip_speed_mm_s:.1f} mm/s"),
          target=lambda lim, f, _: "reported, no threshold (an assumed schedule is not scored)",
          applies=_has_ground),
    # one row per per-interval contact check (harness/swing/consistency.py): under the
    # assumed schedule these are consistency checks of the fit, never scored
    Check(lambda f, kq: ("contact consistency per interval (assumed schedule, no force "
                         f"plate): {kq[1].what}"), None,
          lambda f, kq: kq[1], _contact_words, target=_contact_target,
          applies=_has_ground, each=lambda f: f.summary.ground.contact_checks),
    Check("marker RMSE and max over the whole fitted window", None,
          lambda f, _: f.summary.headline,
          lambda f, _, h: f"{h.marker_rmse_mm:.1f} mm, max {h.marker_max_mm:.1f} mm",
          target=lambda lim, f, _: "reported (OpenSim practice: RMS < 20 mm, max < 40 mm)",
          applies=_has_ground),
    # the bent shaft (none with a rigid club)
    Check("the bent shaft (its bending moment is fitted, not held to a law): deflection of "
          "the club head across the shaft, moment, the spring −kθ − cθ̇ + m0 nearest the "
          "moment, and a refit with the moment held to that spring", None,
          lambda f, _: f.summary.shaft, _shaft_words, applies=lambda f: bool(f.summary.shaft)),
    _section_row(study.check, "study"),
    _section_row(dimension.check, "dimension"),
    _section_row(activation.check, "activation"),
    # the engines' replay of the candidate
    Check("each engine's open-loop replay within the marker RMSE over the whole window",
          None, lambda f, _: f.summary.replay.deviation_m,
          lambda f, _, dev: "; ".join(f"{e} RMS {1e3 * rms:.3g} mm (max {1e3 * mx:.3g} mm)"
                                      for e, (rms, mx) in dev.items()) or "no engine replayed",
          target=lambda lim, f, _: f"RMS ≤ {1e3 * _rmse_down(f):.1f} mm",
          passes=lambda dev, lim, f: bool(dev) and all(rms <= _rmse_down(f)
                                                       for rms, _ in dev.values()),
          applies=_replayed),
    Check("grip closure (right hand on the club) in each engine's replay; kinematic in the "
          "fit, no constraint force", None, lambda f, _: f.summary.replay.grip_closure_max_m,
          lambda f, _, grip: "; ".join(f"{e} {1e3 * g:.1f} mm" for e, g in grip.items())
          + f" (fit {1e3 * f.summary.fit.closure_max_m:.1f} mm)", applies=_replayed),
    Check("replay records of every engine pair pass (the whole-window replay scored over "
          "its predictability window, each segment over its whole window)", None,
          lambda f, _: f.replay_records,
          lambda f, _, rec: (f"{sum(r.status == 'passed' for r in rec)} of {len(rec)} "
                             "replay rows pass" + scored_window_words(f.summary)),
          target=lambda lim, f, _: "all", passes=lambda rec, lim, f: f.replay_ok,
          applies=_replayed),
    Check(_segment_name, None, lambda f, s: s, _segment_words,
          target=lambda lim, f, s: f"RMS ≤ {1e3 * s['limit_m']:.1f} mm from the fit in "
                                   "every engine, every replay row passes",
          passes=lambda s, lim, f: segments.passed(
              s, f.summary.replay.segments["engines"], f.summary.replay.segments["horizon_s"]),
          applies=_replayed, each=_segment_list),
    Check("replay through the impact: the segment holding the ball contact compared in "
          "every engine and passed", None,
          lambda f, _: f.summary.headline.replay_through_impact, _through_words,
          target=lambda lim, f, _: "reported, no threshold (what the replay rows cover)",
          applies=lambda f: f.replayed and _impact(f)),
    Check("energy balance of each engine's replay over the whole window: E − E0 against "
          "the applied work (the replay records score it over the predictability window)",
          None, lambda f, _: f.summary.replay.energy_J,
          lambda f, _, eb: "; ".join(f"{e} residual ≤ {res:.1e} J, E − E0 at the end "
                                     f"{de:+.4g} J" for e, (res, de) in eb.items())
          or "no engine replayed", applies=_replayed),
)

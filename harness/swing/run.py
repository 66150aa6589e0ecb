"""A swing run end to end: the fit (harness/swing/pipeline.py), the replay of its
candidate in every engine (a callback from the composition root), the checks against the
tolerance table, and the output folder written atomically.

Units: positions m (reported in mm), speeds m/s, forces N, moments N·m, times s.
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fixtures.golfers import CLUB_CHOICES, GRIPS, SHAFT_COORDINATES, SHAFTS
from harness.core import figures
from harness.core.errors import BadInput
from harness.core.io import (
    OutputKind,
    claims_output,
    put_file,
    swap_in,
    temp_folder,
    write_json_atomic,
)
from harness.core.strict import read_json
from harness.core.tolerances import lookup
from harness.evidence import bundle as evidence
from harness.model import candidate
from harness.stages.replay.cases import NAME as REPLAY
from harness.swing import pipeline
from harness.swing import report as swing_report

# fit/fit.json: the swing summary (harness/swing/pipeline.py fit_capture), "replay" added
# when the candidate was replayed in the engines, "study" with --study (harness/swing/study.py),
# "dimension" with --dimension (harness/swing/dimension.py), "activation" with --activation
# (harness/swing/activation.py)
SUMMARY_KEYS = {"capture", "settings", "model", "window", "calibration", "ik", "fit",
                "identifiability", "reintegration", "wall_s", "candidate", "trajectory",
                "ground", "summary"}


_OPTIONAL_KEYS = {"replay", "study", "dimension", "activation", "shaft"}


def recognise_summary(path: Path) -> None:
    """BadInput unless ``path`` is a swing's fit.json as this harness writes it (the
    summary's fields, no others: an unknown field such as a ``schema_version`` this
    harness never wrote is refused, and named)."""
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise BadInput(str(path), "not a swing summary (not a JSON object)")
    missing = sorted(SUMMARY_KEYS - set(doc))
    unknown = sorted(set(doc) - SUMMARY_KEYS - _OPTIONAL_KEYS)
    if missing or unknown:
        version = f"schema_version {doc['schema_version']!r}, which this harness does not " \
                  "write; " if "schema_version" in doc else ""
        raise BadInput(str(path), f"not a swing summary this harness reads ({version}"
                                  f"unknown fields {unknown}, missing {missing})")



# what a swing output folder may hold (the output-folder rule, harness/core/io.py)
FIT = OutputKind("a swing fit", "fit.json", recognise_summary,
                 frozenset({"fit.json", "golfer.urdf", "candidate.json", "candidate.npz",
                            "trajectory.npz"}))
OUTPUT = OutputKind("a swing output folder", "fit/fit.json", recognise_summary,
                    frozenset({"index.html", "plotly.min.js"}),
                    {"fit": FIT, "replay": evidence.OUTPUT})


@dataclass
class SwingOutcome:
    """``path``: the output folder; ``checks``: [{name, value, target, ok}] with ok None for
    a figure reported without a threshold; ``summary``: fit.json's document."""

    path: Path
    checks: list
    summary: dict

    @property
    def exit_code(self) -> int:
        return 0 if all(c["ok"] is not False for c in self.checks) else 1

    @property
    def report(self) -> Path:
        return self.path / "index.html"


def _ground_checks(summary: dict) -> list:
    """The residual wrench against its thresholds and the contact's consistency
    (reported) from fit.json's ``summary``; without ground contact the pelvis wrench
    stands for the legs (reported)."""
    h = summary["summary"]
    if summary.get("ground") is None:
        pr = summary["fit"]["pelvis_residual_peak"]
        return [{"name": "feet: no ground contact; the pelvis residual wrench stands for "
                         "the legs",
                 "value": f"peak |F| {pr['force_N']:.0f} N (vertical "
                          f"{pr['vertical_force_N']:.0f} N), |M| {pr['moment_Nm']:.0f} N·m",
                 "target": "reported, no threshold", "ok": None}]
    tf_ = lookup("swing", "residual_force_peak").atol
    tm_ = lookup("swing", "residual_moment_peak").atol
    return [
        {"name": "pelvis residual force with the feet on the ground (peak, RMS)",
         "value": f"{h['residual_force_peak_N']:.1f} N (RMS {h['residual_force_rms_N']:.1f} N)",
         "target": f"peak ≤ {tf_:g} N", "ok": h["residual_force_peak_N"] <= tf_},
        {"name": "pelvis residual moment with the feet on the ground (peak, RMS)",
         "value": f"{h['residual_moment_peak_Nm']:.1f} N·m "
                  f"(RMS {h['residual_moment_rms_Nm']:.1f} N·m)",
         "target": f"peak ≤ {tm_:g} N·m", "ok": h["residual_moment_peak_Nm"] <= tm_},
        {"name": f"foot contact ({h['foot_contact_label']} schedule, no force plate): "
                 "min normal force, max penetration, max slip speed",
         "value": f"{h['min_normal_force_N']:.1f} N; {h['max_penetration_mm']:.1f} mm; "
                  f"{h['max_slip_speed_mm_s']:.1f} mm/s",
         "target": "reported, no threshold (an assumed schedule is not scored)", "ok": None},
    ] + _consistency_checks(summary) + [
        {"name": "marker RMSE and max over the whole fitted window",
         "value": f"{h['marker_rmse_mm']:.1f} mm, max {h['marker_max_mm']:.1f} mm",
         "target": "reported (OpenSim practice: RMS < 20 mm, max < 40 mm)", "ok": None},
    ]


def joint_range_check(jr) -> dict:
    """The check row of the fitted angles against the golfer's joint limits."""
    tol = lookup("swing", "joint_range").atol
    if jr is None:
        return {"name": "fitted joint angles within the model's joint limits",
                "value": "not computed (an earlier summary)", "target": f"≤ {tol:g} rad "
                "outside", "ok": None}
    parts = [f"{n} {d['min']:+.2f} … {d['max']:+.2f} (limits {d['lower']:+.2f} … "
             f"{d['upper']:+.2f}; {d['frames']} of {jr['frames']} frames outside)"
             for n, d in sorted(jr["outside"].items(), key=lambda kv: -kv[1]["excess"])]
    value = (f"worst {jr['worst_excess']:.3f} rad outside ({jr['worst_joint']}): "
             + "; ".join(parts)) if parts else \
        f"every joint inside its limits at every frame (worst {jr['worst_excess']:.1e} rad)"
    return {"name": "fitted joint angles within the model's joint limits",
            "value": value, "target": f"≤ {tol:g} rad outside",
            "ok": jr["worst_excess"] <= tol}


def shaft_checks(summary: dict) -> list:
    """The bent shaft's reported row (none with a rigid club): per bend coordinate, the
    head's deflection across the shaft, how near the fitted bending moment came to an
    elastic law (pipeline.shaft_figures) and what holding it to that law costs
    (pipeline.shaft_law_refits)."""
    sh = summary.get("shaft")
    if not sh:
        return []
    parts = []
    for n in SHAFT_COORDINATES:
        if n in sh:
            d = sh[n]
            held = d.get("held_to_law")
            parts.append(f"{n}: head {d['deflection_range_mm'][0]:+.0f} … "
                         f"{d['deflection_range_mm'][1]:+.0f} mm, moment "
                         f"{d['moment_range_Nm'][0]:+.1f} … {d['moment_range_Nm'][1]:+.1f} "
                         f"N·m, nearest spring k {d['stiffness_Nm_per_rad']:.0f} N·m/rad, "
                         f"R² {d['r2']:.2f}"
                         + (f"; held to it: objective {held['objective']:.1f} against "
                            f"{held['objective_free']:.1f}, marker RMSE top → impact "
                            f"{1e3 * held['marker_rmse_top_to_impact_m']:.1f} against "
                            f"{1e3 * held['marker_rmse_top_to_impact_free_m']:.1f} mm"
                            if held else ""))
    return [{"name": "the bent shaft (its bending moment is fitted, not held to a law): "
                     "deflection of the club head across the shaft, moment, the spring "
                     "−kθ − cθ̇ + m0 nearest the moment, and a refit with the moment held "
                     "to that spring",
             "value": "; ".join(parts), "target": "reported, no threshold", "ok": None}]


def impact_checks(summary: dict) -> list:
    """The ball impact's scored checks from fit.json (none without the impact): the
    fitted impact time within ``swing/impact_time_frames`` frame intervals of the
    measured velocity discontinuity, the fitted club-head speeds before and after contact
    within ``swing/clubhead_speed_through_impact`` of the measured ones, the smash factor
    inside its club's band; and the identified impulse with the reset's violation
    (reported)."""
    im = summary["fit"].get("impact")
    if not im:
        return []
    frames = lookup("swing", "impact_time_frames").atol
    rel = lookup("swing", "clubhead_speed_through_impact").atol
    dt = abs(im["t_e_s"] - im["t_hat_s"]) / im["frame_interval_s"]
    rows = [{"name": "impact time, fitted against the measured club-head velocity "
                     "discontinuity",
             "value": f"{im['t_e_s']:.5f} s vs {im['t_hat_s']:.5f} ± {im['sigma_s']:.5f} s "
                      f"({dt:.2f} frame intervals apart)",
             "target": f"within {frames:g} frame interval", "ok": bool(dt <= frames)}]
    for when in ("pre", "post"):
        f_ = im[f"clubhead_speed_{when}_impact_fitted_mps"]
        m_ = im[f"clubhead_speed_{when}_impact_measured_mps"]
        d = abs(f_ - m_) / m_ if m_ and np.isfinite(f_) else float("nan")
        rows.append({"name": f"club-head speed {'before' if when == 'pre' else 'after'} "
                             "ball contact, fitted vs measured (one frame interval)",
                     "value": f"{f_:.1f} vs {m_:.1f} m/s ({100 * d:.1f} %)",
                     "target": f"within {100 * rel:g} %", "ok": bool(d <= rel)})
    lo, hi = im["smash_band"]
    sf = im["smash_factor"]
    how = (summary.get("model", {}).get("club") or {}).get("how", "the --club option")
    rows.append({"name": f"smash factor (ball speed / fitted club-head speed before "
                         f"contact; {im['club']}, {how})",
                 "value": f"{sf:.3f} (ball {im['ball_speed_mps']:.1f} m/s from |Λ| "
                          f"{im['impulse_magnitude_Ns']:.3f} N·s)",
                 "target": f"{lo:g}–{hi:g} ({im['club']})", "ok": bool(lo <= sf <= hi)})
    w = summary["window"]
    post = float(summary.get("settings", {}).get("post_impact_s", float("nan")))
    past = 1e3 * (w["t_end_s"] - im["t_hat_s"])
    end = (f"the capture ends at frame {w['last_frame']}; "
           if w["last_frame"] < w.get("last_frame_asked", w["last_frame"]) else "")
    rows.append({"name": "fitted window after ball contact",
                 "value": f"{past:.1f} ms past the measured contact ({end}{1e3 * post:g} ms "
                          f"asked)",
                 "target": "reported, no threshold", "ok": None})
    rows.append({"name": "impulse on the club face and the reset map's violation",
                 "value": "Λ = (" + ", ".join(f"{x:+.3f}" for x in im["impulse_Ns"])
                          + f") N·s; max |M(v⁺ − v⁻) − JᵀΛ| {im['reset_violation_max']:.1e}, "
                            f"relative {im['reset_violation_rel']:.1e}",
                 "target": "reported, no threshold", "ok": None})
    return rows


def _consistency_checks(summary: dict) -> list:
    """One reported row per per-interval contact check (harness/swing/consistency.py):
    its worst value and how many frame intervals exceed its threshold. Under the assumed
    schedule these are consistency checks of the fit, never scored (ok None)."""
    cons = (summary.get("ground") or {}).get("consistency")
    if not cons:
        return []
    rows = []
    for key, q in cons["quantities"].items():
        w, unit = q["worst"], q["unit"]
        u = "" if unit == "–" else f" {unit}"
        n = f"{q['intervals_exceeding']} of {q['intervals_evaluated']} intervals exceed"
        if w["value"] is None:
            value = "not evaluated (no interval applies)"
        elif w["where"] is None:
            value = f"0{u} in every interval; {n}"
        else:
            value = (f"worst {w['value']:.3g}{u} ({w['where']}, {w['t0_s']:.3f}–"
                     f"{w['t1_s']:.3f} s); {n}")
        rows.append({"name": f"contact consistency per interval (assumed schedule, no force "
                             f"plate): {q['what']}",
                     "value": value,
                     "target": f"≤ {q['threshold']:g}{u} per interval; reported, not scored "
                               "(an assumed schedule is not data)",
                     "ok": None})
    return rows


@claims_output(OUTPUT)  # the --out rule checked and the folder locked before anything runs
def swing(capture_path, *, out, quick: bool = False, up: str = "auto",
          cutoff_hz: float | None = None, club: str = "auto", replay_fn=None,
          progress=None, study: bool = False, dimension: bool = False,
          joint_limits: bool = False, activation: bool = False,
          grip: str = "weld", shaft: str = "rigid", club_masses=None) -> SwingOutcome:
    """ingest → IK → fit → candidate → replay in every engine (``replay_fn(candidate,
    method, folder)`` → (case name, outcome), supplied by the composition root; None: stop
    after the fit) → ``out``/index.html. ``study``: the knot density, smoothness
    and effort weights chosen on a synthetic truth (harness/swing/study.py); ``dimension``: the
    wrists' deviation kept or locked, chosen on held-out frames
    (harness/swing/dimension.py); each adds a report section. ``joint_limits``: the
    dynamic fit holds the golfer's joint limits (the IK always does). ``activation``: a
    refit with the upper body's actuators activation-driven, reported beside the fit
    (harness/swing/activation.py; a report section). ``grip``: the club welded ("weld")
    or hinged ("hinge") in the lead hand; ``shaft``: rigid or bending at one point ("flex")
    (fixtures/golfers.py); ``club_masses``: a weighed club's (whole, head) [kg], as
    "TOTAL,HEAD" or a pair (default: the club's typical masses). exit_code 0 if every
    swing check is met and the replay's records pass, 1 otherwise; BadInput for bad
    input."""
    say = progress or (lambda msg: None)
    if club not in CLUB_CHOICES:
        raise BadInput("--club", f"must be one of {', '.join(CLUB_CHOICES)}, got {club!r}")
    if grip not in GRIPS:
        raise BadInput("--grip", f"must be one of {', '.join(GRIPS)}, got {grip!r}")
    if shaft not in SHAFTS:
        raise BadInput("--shaft", f"must be one of {', '.join(SHAFTS)}, got {shaft!r}")
    masses = pipeline.club_masses(club_masses)
    import dataclasses

    settings = dataclasses.replace(pipeline.QUICK if quick else pipeline.SwingSettings(),
                                   club=club, joint_limits=joint_limits, grip=grip,
                                   shaft=shaft, club_masses_kg=masses,
                                   activation=activation)
    tmp = temp_folder(out)  # beside out; those of killed runs are removed first
    try:
        summary, cpath, model, arrays, joints = pipeline.fit_capture(
            capture_path, tmp, settings, up=up, cutoff_hz=cutoff_hz, say=say)
        replay_records = []
        ok_replay = True
        if replay_fn is not None:
            cand = candidate.load(cpath)
            case_name, result = replay_fn(cand, pipeline.reintegration_method(settings),
                                          tmp / "replay")
            replay_records = [r for r in result.records if r.stage == REPLAY]
            ok_replay = all(r.status == "passed" for r in result.records
                            if r.status not in ("not_provided",))
            arrays["engine_markers"] = pipeline.engine_markers(result.arrays, case_name,
                                                               arrays["markers_replay"])
            arrays["energy"] = pipeline.engine_energy(result.arrays, case_name)
            engine_dev = pipeline.engine_replay_deviation(arrays["engine_markers"],
                                                          arrays["markers_replay"])
            grip = pipeline.engine_grip_closure(
                result.arrays, case_name, list(cand.model.frames),
                [(a, b) for a, b, _ in pipeline.GRIP_PAIRS])
            summary["replay"] = {"method": pipeline.reintegration_method(settings).settings(),
                                 "grip_closure_max_m": grip,
                                 "engine_marker_deviation_m": {
                                     e: {"rms": r_, "max": m_}
                                     for e, (r_, m_) in engine_dev.items()},
                                 "energy_balance": pipeline.energy_summary(arrays["energy"])}
            write_json_atomic(tmp / "fit" / "fit.json", pipeline._finite(summary))
        if study:
            from harness.swing import study as swing_study

            say("study: the knot density, smoothness and effort weights on a synthetic "
                "truth from this fit")
            summary["study"] = swing_study.run_study(tmp, settings, say=say)
            write_json_atomic(tmp / "fit" / "fit.json", pipeline._finite(summary))
        if dimension:
            from harness.swing import dimension as swing_dim

            say(f"dimension: the golfer with and without the {swing_dim.STEP[0]}, on "
                "held-out frames")
            summary["dimension"] = swing_dim.plain(swing_dim.run_dimension(tmp, say=say))
            write_json_atomic(tmp / "fit" / "fit.json", pipeline._finite(summary))
        f = summary["fit"]
        rmse = f["marker_rmse_by_phase_m"]["top_to_impact"]
        fit_wall_s = summary["calibration"]["wall_s"] + summary["ik"]["wall_s"] + f["wall_s"]
        checks = [
            {"name": "marker RMSE, top → impact (tracked markers)",
             "value": f"{1e3 * rmse:.1f} mm",
             "target": f"≤ {1e3 * lookup('swing', 'marker_rmse').atol:.0f} mm",
             "ok": rmse <= lookup("swing", "marker_rmse").atol},
            {"name": "marker max, top → impact (tracked markers)",
             "value": f"{1e3 * f['marker_max_by_phase_m']['top_to_impact']:.1f} mm",
             "target": f"≤ {1e3 * lookup('swing', 'marker_max').atol:.0f} mm",
             "ok": f["marker_max_by_phase_m"]["top_to_impact"]
             <= lookup("swing", "marker_max").atol},
            {"name": "torque interpolation defects (relative)",
             "value": f"{f['defects']['max_rel']:.2e} ({f['defects']['worst_joint']})",
             "target": f"≤ {lookup('swing', 'defects').rtol:g}",
             "ok": f["defects"]["max_rel"] <= lookup("swing", "defects").rtol},
            {"name": "open-loop reintegration within the marker RMSE",
             "value": (f"diverged (a marker {pipeline.DIVERGED_M:g} m off) at "
                       f"{summary['reintegration']['diverged_at_s']:.3f} s; "
                       if summary["reintegration"]["diverged_at_s"] is not None else
                       f"RMS {1e3 * summary['reintegration']['whole_window_rms_m']:.3g} mm; ")
                      + f"within the marker RMSE for the first "
                      f"{summary['reintegration']['within_marker_rmse_until_s']:.3f} s; "
                      f"per {summary['reintegration']['segments']['frames_per_segment']}-frame "
                      f"segment worst {1e3 * summary['reintegration']['segments']['max_m']:.3g} mm",
             "target": f"≤ {1e3 * rmse:.1f} mm over the window",
             "ok": summary["reintegration"]["whole_window_rms_m"] <= rmse},
            {"name": "fit wall time (calibration + IK + fit)",
             "value": f"{fit_wall_s:.0f} s",
             "target": f"≤ {lookup('swing', 'fit_wall_s').atol:.0f} s",
             "ok": fit_wall_s <= lookup("swing", "fit_wall_s").atol},
            joint_range_check(f.get("joint_range")),
            {"name": "club-head speed at impact, fitted vs measured",
             "value": f"{f['club_head_speed_at_impact_mps']['fitted']:.1f} vs "
                      f"{f['club_head_speed_at_impact_mps']['measured']:.1f} m/s",
             "target": "reported, no threshold", "ok": None},
        ] + impact_checks(summary) + _ground_checks(summary) + shaft_checks(summary)
        if study:
            checks.append(swing_study.check(summary["study"]))
        if dimension:
            checks.append(swing_dim.check(summary["dimension"]))
        if activation:
            from harness.swing import activation as swing_act

            checks.append(swing_act.check(summary["activation"]))
        if replay_fn is not None:
            dev = summary["replay"]["engine_marker_deviation_m"]
            checks.append({"name": "each engine's open-loop replay within the marker RMSE "
                                   "over the whole window",
                           "value": "; ".join(f"{e} RMS {1e3 * d['rms']:.3g} mm (max "
                                              f"{1e3 * d['max']:.3g} mm)"
                                              for e, d in dev.items())
                           or "no engine replayed",
                           "target": f"RMS ≤ {1e3 * rmse:.1f} mm",
                           "ok": bool(dev) and all(d["rms"] <= rmse for d in dev.values())})
            fit_closure = summary["fit"]["closure_max_m"]
            checks.append({"name": "grip closure (right hand on the club) in each engine's "
                                   "replay; kinematic in the fit, no constraint force",
                           "value": "; ".join(f"{e} {1e3 * g:.1f} mm" for e, g in grip.items())
                           + f" (fit {1e3 * fit_closure:.1f} mm)",
                           "target": "reported, no threshold", "ok": None})
            checks.append({"name": "replay records of every engine pair pass",
                           "value": f"{sum(r.status == 'passed' for r in replay_records)} of "
                                    f"{len(replay_records)} replay rows pass",
                           "target": "all", "ok": ok_replay})
            eb = summary["replay"]["energy_balance"]
            checks.append({"name": "energy balance of each engine's replay over the whole "
                                   "window: E − E0 against the applied work (the replay "
                                   "records score it over the predictability window)",
                           "value": "; ".join(f"{e} residual ≤ {d['max_balance_residual_J']:.1e}"
                                              f" J, E − E0 at the end "
                                              f"{d['E_minus_E0_at_end_J']:+.4g} J"
                                              for e, d in eb.items()) or "no engine replayed",
                           "target": "reported, no threshold", "ok": None})
        html = swing_report.render(pipeline._finite(summary), arrays, joints, checks,
                                   replay_records, title=f"Swing fit: {capture_path}")
        (tmp / "index.html").write_text(html)
        put_file(tmp / figures.ASSET, figures.plotly_asset())
        swap_in(tmp, out, OUTPUT)  # the rule checked again, then one atomic exchange
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return SwingOutcome(out, checks, summary)

"""HTML report of a swing run (Jinja2, autoescaped; interactive plotly charts drawn from
JSON descriptions, harness/core/figures.py, with plotly.min.js beside the page).

Units on the page: marker distances in mm everywhere (tables and charts), positions in
space (the stick figures) in m, times in s, joint angles in deg, joint torques in N·m
(and N·m/kg per body mass on a tied right axis), the pelvis's translational residual
forces in N (their own chart: never on an axis shared with torques), centres of pressure
in mm, energies and work in J. Every coordinate of the model has its angle and its
torque drawn (small multiples per body region). A value that does not exist (a marker
never seen in the fitted window) reads "—" with the reason, never "nan".
"""
from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from markupsafe import Markup
from numpy.typing import NDArray

from harness.core import figures as F
from harness.core.records import unit_of
from harness.core.tolerances import lookup
from harness.core.version import __version__
from harness.evidence.bundle import git_commit
from harness.model import registry
from harness.report import banner
from harness.report.render import ENV
from harness.swing import activation as swing_act
from harness.swing import consistency as cc
from harness.swing import dimension as swing_dim
from harness.swing import poses, segments
from harness.swing import study as swing_study
from harness.swing.checks import exit_code, implied_words, prior_words
from harness.swing.pipeline import turf_contact
from harness.swing.summary import SwingSummary

# joint groups of the torque charts: (title, name test, unit); the pelvis's translations
# are forces (N), every other coordinate a rotation (N·m)
GROUPS = (("pelvis translations (residual force)",
           lambda n: n.startswith("pelvis_t"), "N"),
          ("pelvis rotations (residual moment about the Euler axes)",
           lambda n: n.startswith("pelvis_r"), "N·m"),
          ("left leg", lambda n: n.startswith(("l_hip", "l_knee", "l_ankle")), "N·m"),
          ("right leg", lambda n: n.startswith(("r_hip", "r_knee", "r_ankle")), "N·m"),
          ("trunk and neck", lambda n: n.startswith(("lumbar", "neck", "thorax", "spine")),
           "N·m"),
          ("left shoulder (clavicle and shoulder joint)",
           lambda n: n.startswith(("l_clavicle", "l_shoulder")), "N·m"),
          ("right shoulder (clavicle and shoulder joint)",
           lambda n: n.startswith(("r_clavicle", "r_shoulder")), "N·m"),
          ("left elbow, forearm and wrist", lambda n: n.startswith("l_"), "N·m"),
          ("right elbow, forearm and wrist", lambda n: n.startswith("r_"), "N·m"))


def joint_groups(joint_names: Sequence[str]) -> list:
    """[(title, unit, [joint indices])] covering every joint exactly once (a joint no
    group claims goes to "other joints", N·m)."""
    taken, out = set(), []
    for title, test, unit in GROUPS:
        idx = [j for j, n in enumerate(joint_names) if j not in taken and test(n)]
        taken.update(idx)
        if idx:
            out.append((title, unit, idx))
    rest = [j for j in range(len(joint_names)) if j not in taken]
    if rest:
        out.append(("other joints", "N·m", rest))
    return out


def provenance(replay_records: Iterable[Mapping[str, Any]] = ()) -> dict:
    """The run's provenance for the report: harness version, git commit, command line and
    the version of every engine the replay records name."""
    names = sorted({n for r in replay_records for n in (r.engine_a, r.engine_b)
                    if n in registry.ENGINES})
    return {"harness_version": __version__, "git_commit": git_commit(),
            "command_line": ["harness", *sys.argv[1:]],
            "engines": {n: registry.probe(n).version for n in names}}


def _mm(x):
    """x [m] → "12.3" mm text, or None when there is no finite value."""
    if x is None or not math.isfinite(x):
        return None
    return f"{1000 * x:.1f}"


def marker_rows(s: SwingSummary) -> list:
    """[(label, whole-window RMSE text, top→impact text)] in mm; a marker without a
    sample reads "—" with the reason."""
    rows = []
    for k, v in s.fit.marker_rmse_by_label_m.items():
        g = s.gaps.get(k)
        miss = (f"; missing for {100 * g.missing_fraction:.1f} % of the capture, "
                f"longest gap {1000 * g.longest_gap_s:.0f} ms" if g else "")
        whole = _mm(v) or f"— (not seen in the fitted window{miss})"
        down_v = s.fit.marker_rmse_top_to_impact_by_label_m.get(k)
        down = _mm(down_v) or (f"— (not seen between top and impact{miss})"
                               if _mm(v) else "— (not seen in the fitted window)")
        rows.append((k, whole, down))
    return rows


def _rms_mm(d):
    """RMS over the last axis of distances d [m] → mm (NaN kept: a gap)."""
    with np.errstate(invalid="ignore"):
        return 1000 * np.sqrt(np.mean(np.asarray(d, float) ** 2, axis=1))


def figures_html(summary: SwingSummary, arrays: dict, joint_names: Sequence[str]) -> list:
    """[(section title, HTML of its chart grid)] of the swing page."""
    t, tau = np.asarray(arrays["t"]), np.asarray(arrays["tau"])
    out = []
    if arrays.get("poses"):
        out.append(stick_section(arrays["poses"]))
    if arrays.get("angles") is not None:
        out.append(angle_section(summary, t, np.asarray(arrays["angles"], float),
                                 list(joint_names)))
    mass = summary.body_mass_kg
    charts = []
    for title, unit, idx in joint_groups(list(joint_names)):
        what = "force" if unit == "N" else "torque"
        fig = F.Figure(title, "t", "s", f"fitted joint {what}", unit, legend="below",
                       height=330 + 20 * ((len(idx) + 1) // 2),
                       y2=(f"{what} per body mass", f"{unit}/kg", 1.0 / mass))
        for c, j in enumerate(idx):
            fig.line(t, tau[:, j], joint_names[j], color_=F.color(c))
        mark_events(fig, summary, t)
        charts.append(fig)
    out.append((TORQUE_TITLE, f"<p class='note'>Left axis: N·m (N for the pelvis's "
                f"translations); right axis: the same per body mass ({mass:g} kg), "
                "N·m/kg (N/kg). The value axes are fixed so that the two stay tied; "
                "time zooms.</p>" + F.grid(charts, 420)))
    if arrays.get("ground"):
        out.append(ground_section(summary, arrays["ground"],
                                  arrays.get("poses", {}).get("view")))
        if arrays["ground"].get("consistency") is not None:
            out.append(consistency_section(summary, arrays["ground"]["consistency"]))
    if arrays.get("impact") is not None and summary.fit.impact is not None:
        out.append(impact_section(summary, arrays["impact"]))
    if summary.study:
        out.append(swing_study.section(summary.study))
    if summary.dimension:
        out.append(swing_dim.section(summary.dimension))
    if summary.activation:
        out.append(swing_act.section(summary.activation, arrays.get("activation")))
    e = np.linalg.norm(np.asarray(arrays["marker_residual"], float), axis=2)
    fig = F.Figure("marker error of the fit over time", "t", "s", "marker error", "mm",
                   legend="below")
    with warnings.catch_warnings():  # a frame where no marker is seen: a gap
        warnings.simplefilter("ignore", RuntimeWarning)
        fig.line(t, 1000 * np.sqrt(np.nanmean(e ** 2, axis=1)), "RMS over the markers")
        fig.line(t, 1000 * np.nanmax(e, axis=1), "worst marker", dash="dash")
    tr = np.asarray(arrays["t_replay"])
    rein = F.Figure("open-loop reintegration − fitted markers", "t", "s",
                    "RMS over the markers", "mm", ylog=True, legend="below")
    rein.line(tr, _rms_mm(arrays["reint_dev"]), "reintegrated (DOP853) − fitted")
    charts = [fig, rein]
    em = arrays.get("engine_markers") or {}
    if em:
        ref = np.asarray(arrays["markers_replay"], float)
        eng = F.Figure("each engine's open-loop replay − fitted markers", "t", "s",
                       "RMS over the markers", "mm", ylog=True, legend="below")
        for c, (name, mk) in enumerate(em.items()):
            eng.line(tr, _rms_mm(np.linalg.norm(np.asarray(mk) - ref, axis=2)), name,
                     color_=F.color(c), dash=None if c % 2 == 0 else "dash")
        charts.append(eng)
    out.append(("Marker errors (fit, reintegration, engine replays)", F.grid(charts, 420)))
    en = arrays.get("energy") or {}
    if en:
        name, d = next(iter(en.items()))
        spread = max((float(np.max(np.abs(o["E_rel"] - d["E_rel"]))) for o in en.values()
                      if o["E_rel"].shape == d["E_rel"].shape), default=0.0)
        fig = F.Figure(f"energy of the replay ({name}; every engine within {spread:.0e} J)",
                       "t", "s", "energy", "J", legend="below", height=340)
        fig.line(d["t"], d["E_rel"], "E(t) − E(t0)", color_=F.color(0))
        fig.line(d["t"], d["applied"], "applied work ∫τᵀv dt", color_=F.color(1),
                 dash="dash")
        if np.any(np.asarray(d["dissipated"]) != 0):
            fig.line(d["t"], -np.asarray(d["dissipated"]), "−∫vᵀDv dt (dissipated)",
                     color_=F.color(2), dash="dot")
        n = d["n_scored"]
        fig.vline(d["t"][n - 1], f"scored window ends: {d['applied'][n - 1]:.4g} J")
        res = F.Figure("energy balance residual per engine (largest so far)", "t", "s",
                       "max |E − E0 − ∫τᵀv dt + ∫vᵀDv dt|", "J", ylog=True,
                       legend="below", height=340)
        order = F.engine_order(registry.engine_names(), en)
        for e, o in en.items():
            r = np.abs(o["E_rel"] - o["applied"] + o["dissipated"])
            res.line(o["t"], np.fmax.accumulate(r), e, color_=F.engine_style(e, order)[0])
        out.append(("Energy balance of the engines' replays", F.grid([fig, res], 420)))
    return out


TORQUE_TITLE = ("Joint torques and pelvis residual forces (fitted, every joint; the contact "
                "forces' share taken out)")
PHASES = ("address_to_top", "start_to_top", "top_to_mid", "mid_to_impact")
VIEWS = (("face-on", 0, "along the target line"), ("down-the-line", 1, "towards the ball"))


def stick_section(P: dict) -> tuple:
    """(title, HTML): the golfer at address, top, impact and follow-through
    (pipeline._event_poses), each seen face-on and down-the-line (poses.py's view axes),
    in m with equal aspect: the model's skeleton where a model pose covers the frame
    (the fit, else the calibration IK), the measured markers always."""
    from markupsafe import escape


    view = P["view"]
    charts, notes = [], []
    for e in P["events"]:
        mk = poses.project(view, np.asarray(e["markers"], float))
        seg = None
        if e["points"] is not None:
            pts = {k: poses.project(view, np.asarray(v, float)) for k, v in e["points"].items()}
            seg = [(pts[a], pts[b]) for a, b in P["segments"]]
        notes.append(f"<li><b>{escape(e['event'])}</b>: frame {e['frame']}, t = "
                     f"{e['t_s']:.3f} s ({escape(e['what'])}); pose from "
                     f"{escape(e['source'])}</li>")
        for vname, ax, xlabel in VIEWS:
            fig = F.Figure(f"stick figure, {vname}: {e['event']} ({e['t_s']:.3f} s)",
                           xlabel, "m", "height", "m", legend="below", height=420,
                           equal_aspect=True)
            if seg is not None:
                xs, ys = [], []
                for a, b in seg:
                    xs += [a[ax], b[ax], None]
                    ys += [a[2], b[2], None]
                fig.line(xs, ys, "model (" + ("fit" if e["source"] == "fit" else
                                              "calibration IK" if e["source"].startswith(
                                                  "calibration") else e["source"]) + ")",
                         color_="#1f77b4", width=2.4)
            fig.points(mk[:, ax], mk[:, 2], "measured markers", color_="#d62728", size=5,
                       hover=list(P["labels"]))
            fig.line([-1.0, 1.0], [0.0, 0.0], "floor", color_="#888", dash="dot", width=1)
            charts.append(fig)
    note = ("<p class='note'>The golfer at the swing events, seen face-on (the target line "
            "left to right, lead foot on the right of the origin) and down-the-line (towards "
            "the ball to the right), in m with one metre as long on both axes. "
            f"{escape(view['what'])}. A pose outside the fitted window comes from the "
            "calibration IK when one of its frames is near, else only the measured markers "
            "are drawn.</p><ul class='note'>" + "".join(notes) + "</ul>")
    return ("Stick figures at the swing events", note + F.grid(charts, 300))


def angle_section(summary: SwingSummary, t: NDArray[np.float64], angles: NDArray[np.float64],
                  joint_names: Sequence[str]) -> tuple:
    """(title, HTML): every coordinate of the fitted motion against time in small
    multiples per joint group (joint_groups): rotations in deg, the pelvis's
    translations as its displacement since the window start in mm; events marked."""
    charts = []
    for title, unit, idx in joint_groups(joint_names):
        trans = unit == "N"
        fig = F.Figure(title.replace(" (residual force)", " (displacement since the window "
                                     "start)").replace(
            " (residual moment about the Euler axes)", " (Euler angles)"), "t", "s",
            "displacement" if trans else "joint angle",
            "mm" if trans else "deg", legend="below",
            height=330 + 20 * ((len(idx) + 1) // 2))
        for c, j in enumerate(idx):
            y = 1e3 * (angles[:, j] - angles[0, j]) if trans else np.degrees(angles[:, j])
            fig.line(t, y, joint_names[j], color_=F.color(c))
        mark_events(fig, summary, t)
        charts.append(fig)
    return ("Joint angles (fitted, every coordinate)", F.grid(charts, 420))


def phase_table(summary: SwingSummary) -> str:
    """HTML: marker RMSE [mm] per marker (rows) and phase (columns), each cell shaded by
    its value (darker: larger, one scale for the table); "—" where the marker is not seen
    in that phase. Address → top comes from the calibration IK, the rest from the fit."""
    from markupsafe import escape

    ph = summary.fit.by_phase
    ph = {k: ph[k] for k in PHASES if k in ph}       # swing order (fit.json sorts keys)
    if not ph:
        return ""
    labels = list(next(iter(ph.values())).by_label)
    vals = [v for p in ph.values() for v in p.by_label.values()
            if v is not None and math.isfinite(v)]
    top = max(vals) if vals else 1.0
    head = "".join(f"<th>{escape(p.what)}<br><span class='note'>{escape(p.source)}, "
                   f"{p.frames} frames</span></th>" for p in ph.values())
    rows = []
    for l in labels:
        cells = []
        for p in ph.values():
            v = p.by_label.get(l)
            if v is None or not math.isfinite(v):
                cells.append("<td class='note'>—</td>")
                continue
            a = min(1.0, v / top)
            fg = "#fff" if a > 0.55 else "#222"
            cells.append(f"<td style='background:rgba(178,24,43,{0.85 * a:.2f});color:{fg}'>"
                         f"{1e3 * v:.1f}</td>")
        rows.append(f"<tr><td>{escape(l)}</td>" + "".join(cells) + "</tr>")
    return ("<table id='marker-phase-rmse'><caption class='note'>marker RMSE per marker and "
            "phase [mm] (shading: darker is larger, up to "
            f"{1e3 * top:.1f} mm)</caption><tr><th>marker</th>" + head + "</tr>"
            + "".join(rows) + "</table>")


def ground_section(summary: SwingSummary, g: dict, view: dict | None = None) -> tuple:
    """(title, HTML): the ground reaction force of each foot in % body weight and the
    pelvis residual wrench with its thresholds against time, the contact settings and
    the trade-off of residual against marker RMSE over the residual weight."""
    from markupsafe import escape


    t, bw = np.asarray(g["t"]), float(g["body_weight_N"])
    gi = summary.ground
    label = gi.contact_label
    charts = []
    for side, name in (("l", "left (lead) foot"), ("r", "right (trail) foot")):
        f = np.asarray(g["foot_force"][side], float)
        fig = F.Figure(f"ground reaction force, {name} ({label} contact)", "t", "s",
                       "force", "% body weight", legend="below", height=340)
        for c, ax in enumerate("xyz"):
            fig.line(t, 100 * f[:, c] / bw, f"F{ax} ({'vertical' if ax == 'z' else 'horizontal'})",
                     color_=F.color(c))
        fig.hline(100.0, f"body weight {bw:.0f} N (100 %)", color_="#555", dash="dot")
        mark_events(fig, summary, t)
        charts.append(fig)
    cop = (g.get("consistency") or {}).get("cop")
    if cop is not None and view is not None:
        charts += cop_charts(summary, t, np.asarray(cop, float), view)
    tf_ = lookup("swing", "residual_force_peak").atol
    tm_ = lookup("swing", "residual_moment_peak").atol
    Fr, Mr = np.asarray(g["residual_force"], float), np.asarray(g["residual_moment"], float)
    fig = F.Figure("pelvis residual force", "t", "s", "force", "N", legend="below", height=340)
    for c, ax in enumerate("xyz"):
        fig.line(t, Fr[:, c], f"F{ax}", color_=F.color(c))
    fig.line(t, np.linalg.norm(Fr, axis=1), "|F|", color_="#333", dash="dash")
    fig.hline(tf_, f"peak threshold {tf_:g} N")
    charts.append(fig)
    fig = F.Figure("pelvis residual moment", "t", "s", "moment", "N·m", legend="below",
                   height=340)
    for c, ax in enumerate("xyz"):
        fig.line(t, Mr[:, c], f"M{ax}", color_=F.color(c))
    fig.line(t, np.linalg.norm(Mr, axis=1), "|M|", color_="#333", dash="dash")
    fig.hline(tm_, f"peak threshold {tm_:g} N·m")
    charts.append(fig)
    rows = "".join(
        f"<tr><td>{r.w_residual:g}</td><td>{r.marker_rmse_mm:.1f}</td>"
        f"<td>{r.marker_max_mm:.1f}</td><td>{r.residual_force_peak_N:.1f}</td>"
        f"<td>{r.residual_moment_peak_Nm:.1f}</td><td>{r.iterations}</td></tr>"
        for r in gi.tradeoff)
    table = ("<table id='ground-tradeoff'><tr><th>residual weight</th><th>marker RMSE "
             "[mm]</th><th>marker max [mm]</th><th>residual force peak [N]</th><th>residual "
             "moment peak [N·m]</th><th>iterations</th></tr>" + rows + "</table>") if rows \
        else "<p class='note'>trade-off over the residual weight: not run (quick fit)</p>"
    note = (f"<p class='note'>Contact mode schedule: <b>{escape(label)}</b> — "
            f"{escape(gi.schedule)}. Friction μ = {gi.mu:g} "
            f"({escape(gi.friction_model)}); floor z = "
            f"{1e3 * gi.floor_z_m:.1f} mm; body weight {bw:.0f} N. Min normal "
            f"force {gi.min_normal_force_N:.1f} N, max penetration "
            f"{gi.max_penetration_mm:.1f} mm, max slip speed "
            f"{gi.max_slip_speed_mm_s:.1f} mm/s. Forces: "
            f"{escape(gi.solver)}.</p>")
    return ("Ground contact: foot forces and the pelvis residual",
            note + F.grid(charts, 420) + table)


SHORT = {"penetration": "depth", "slip_speed": "horizontal speed",
         "negative_normal_force": "−f_z where f_z < 0", "friction_ratio": "|f_t| / (μ f_z)",
         "cop_outside": "distance outside"}


IMPACT_TITLE = "Ball impact (a hybrid event of the fit: two phases joined by the reset map)"


def impact_window(t: NDArray[np.float64], t_hat: float, t_e: float,
                  sigma: float) -> tuple[float, float]:
    """(start, end) [s] of the impact chart's first view: centred between the measured
    and the fitted impact times, wide enough for both, 4 σ of the measured one and eight
    frame intervals each side (t [s] the chart's frame times)."""
    dt = float(np.median(np.diff(t))) if t.size > 1 else 1e-3
    mid = 0.5 * (t_hat + t_e)
    half = max(8 * dt, 4 * sigma, 2 * abs(t_e - t_hat))
    return mid - half, mid + half


def zoom_on_impact(fig: F.Figure, sp: dict, t_hat: float, t_e: float, sigma: float) -> None:
    """Open the impact chart on the contact (impact_window), its speed axis fitted to the
    speeds inside that window (double-click shows the whole swing)."""
    t = np.asarray(sp["t"], float)
    lo, hi = impact_window(t, t_hat, t_e, sigma)
    inside = (t >= lo) & (t <= hi)
    ys = np.concatenate([np.asarray(sp[k], float)[inside] for k in ("measured", "fitted")])
    ys = ys[np.isfinite(ys)]
    fig.xaxis["range"] = [F.tidy(lo), F.tidy(hi)]
    if ys.size:
        pad = 0.08 * (float(ys.max() - ys.min()) or max(abs(float(ys.max())), 1.0))
        fig.yaxis["range"] = [F.tidy(float(ys.min()) - pad), F.tidy(float(ys.max()) + pad)]


def impact_section(summary: SwingSummary, sp: dict) -> tuple:
    """(title, HTML): the club-head speed [m/s] measured and fitted over each frame
    interval (the interval speed of the mean of the club-head markers, plotted at the
    interval's end) against time [s] through the impact, with the measured impact time
    and the fitted one marked; the identified impulse Λ [N·s], the ball speed [m/s] and
    the smash factor, and the reset map's violation."""
    from markupsafe import escape

    im = summary.fit.impact
    fig = F.Figure("club-head speed through impact, measured vs fitted", "t", "s",
                   "club-head speed", "m/s", legend="below")
    fig.line(sp["t"], sp["measured"], "measured (capture), over each frame interval",
             color_=F.color(0))
    fig.line(sp["t"], sp["fitted"], "fitted (model's club-head marker frames), the same",
             color_=F.color(1), dash="dash")
    early = im.t_e_s >= im.t_hat_s  # labels on the outer sides: they never overlap
    fig.vline(im.t_hat_s, "impact measured", color_="#999",
              side="left" if early else "right")
    fig.vline(im.t_e_s, "impact fitted", color_="#d62728",
              side="right" if early else "left")
    zoom_on_impact(fig, sp, im.t_hat_s, im.t_e_s, im.sigma_s)
    L = ", ".join(f"{x:+.3f}" for x in im.impulse_Ns)
    (pre_f, pre_m), (post_f, post_m) = im.speeds_mps("pre"), im.speeds_mps("post")
    rows = [("impact time, fitted (measured ± σ)",
             f"{im.t_e_s:.5f} s ({im.t_hat_s:.5f} ± {im.sigma_s:.5f} s)"),
            ("impulse Λ on the club face (world x, y, z)", f"({L}) N·s"),
            ("|Λ|", f"{im.impulse_magnitude_Ns:.3f} N·s"),
            *_ball_rows(im),
            ("club-head speed before contact, fitted / measured",
             f"{pre_f:.1f} / {pre_m:.1f} m/s"),
            ("club-head speed after contact, fitted / measured",
             f"{post_f:.1f} / {post_m:.1f} m/s"),
            *_handed_on_rows(im),
            *_ring_rows(im),
            ("smash factor: ball speed / the face point's speed before contact (band for "
             "the " + im.club + ")",
             f"{im.smash_factor:.3f} ± {im.smash_factor_se:.3f} "
             f"({im.smash_band[0]:g}–{im.smash_band[1]:g})"
             + ("" if im.clubhead_speed_at_face_pre_impact_mps
                != im.clubhead_speed_at_face_pre_impact_mps else
                f"; the face point at {im.clubhead_speed_at_face_pre_impact_mps:.1f} m/s, "
                f"over the club-head markers' speed {im.smash_factor_over_marker_speed:.3f}")),
            ("reset map violation max |M(v⁺ − v⁻) − JᵀΛ| (relative)",
             f"{im.reset_violation_max:.1e} ({im.reset_violation_rel:.1e})")]
    table = ("<table id='impact'>" + "".join(
        f"<tr><td>{escape(a)}</td><td>{escape(b)}</td></tr>" for a, b in rows) + "</table>")
    table += _marginal_table(im.marginal)
    note = ("<p class='note'>The candidate handed to the engines holds both phases and "
            "the impact as an event: each engine replays the pre-impact phase, applies the "
            "fitted impulse Λ at the club head through its own mass matrix and Jacobian "
            "(M(v⁺ − v⁻) = JᵀΛ), then replays the post-impact phase. The ground forces "
            "enter every phase as known generalized forces, as in the fit.</p>")
    return (IMPACT_TITLE, table + note + F.grid([fig], 420))


def _handed_on_rows(im) -> list:
    """[(words, value)]: how far the head had handed its loss on to the golfer and club by
    the second frame interval after contact (empty for a fit.json without it)."""
    h = im.head_handed_on
    if not h:
        return []
    f = h["fraction"]
    # outside 0-1 the measured ratio lies beyond both models': the fraction then says
    # which side, not how much was handed on
    beyond = ("" if not np.isfinite(f) or 0.0 <= f <= 1.0 else
              "; the measured speed after contact is above even the rigid body's, so the "
              "fraction is past 100 %: the markers' interval speeds hold the swing's own "
              "change of speed too" if f > 1.0 else
              "; the measured speed after contact is below even the head alone's, so the "
              "fraction is below 0 %: the markers' interval speeds hold the swing's own "
              "change of speed too")
    return [("the head's loss handed on by the second frame interval after contact "
             "(speed after / before: measured; handed on at once; the head alone)",
             f"{100 * f:.0f} % ({h['ratio_measured']:.3f}; "
             f"{h['ratio_rigid']:.3f}; {h['ratio_head_alone']:.3f}){beyond}; reported")]


def _ring_rows(im) -> list:
    """[(words, value)]: the club head's ringing on the shaft the fit tried after contact
    and what it chose, or that it was not tried (empty for a fit.json written before)."""
    prof = im.ring_profile
    words = ("the head ringing on the shaft after contact (the fit's cost against none, "
             "per frequency tried)")
    if prof is None:
        return []
    if not prof:
        return [(words, "not tried (--no-ring): the head's loss handed on within the frame "
                        "interval")]
    base = next((p["cost"] for p in prof if p["hz"] is None), None)
    tried = [p for p in prof if p["hz"] is not None]
    rg = im.ring
    chosen = ("none chosen: the head's loss handed on within the frame interval"
              if rg is None else
              f"{rg['frequency_hz']:.1f} Hz, damping ratio {rg['damping_ratio']:g}, the head's "
              f"extra speed at its start {np.linalg.norm(rg['head_velocity_mps']):.2f} m/s")
    if base is None:
        hz = ", ".join(f"{p['hz']:.1f} Hz" for p in tried)
        return [(words, f"{chosen} (tried: {hz})")]
    costs = ", ".join(f"{p['hz']:.1f} Hz {p['cost'] - base:+.1f}" for p in tried)
    margin = lookup("swing", "ring_cost_margin").atol
    return [(words, f"{chosen} (cost over none's {base:.1f}: {costs}; a ringing is chosen "
                    f"more than {margin:g} below none)")]


def _ball_rows(im) -> list:
    """[(words, value)]: the ball under the collision law (its speed, restitution,
    effective mass, the residual impulse, the energy change), or the ball speed |Λ|/m
    of a fit.json written before the law."""
    b = im.ball
    if b is None:
        return [("ball speed |Λ| / m_ball", f"{im.ball_speed_mps:.1f} m/s")]
    R = ", ".join(f"{x:+.3f}" for x in b.residual_impulse_Ns)
    return [("ball speed by the collision law (e ± its prior's sd)",
             f"{b.ball_speed_mps:.1f} ± {b.ball_speed_sd_mps:.1f} m/s (e = "
             f"{b.restitution:.3f} ± {b.restitution_prior_sd:.3f}, μ = {b.friction:g}, "
             f"{'stick' if b.stuck else 'slip'}, m_ball {1e3 * im.ball_mass_kg:.2f} g)"),
            ("effective mass of the face along its normal",
             f"{b.effective_mass_at_face_kg:.3f} kg" + (
                 f" (the head alone, decoupled from the shaft during contact; the rigid "
                 f"golfer and club {b.effective_mass_rigid_body_kg:.3f} kg)"
                 if b.head_mass_kg is not None and b.effective_mass_rigid_body_kg is not None
                 else "")),
            ("turf's impulse on the club head after the ball: in the plane of the vertical "
             "and the head's path, beyond the ball's law (the turf's, and any of the head's "
             "loss the rigid club over-reads; not the ball's)",
             _no_turf_words(im.sole_clearance_m) if b.turf_impulse_Ns is None
             else "(" + ", ".join(f"{x:+.3f}" for x in b.turf_impulse_Ns)
             + f") N·s, |·| {b.turf_impulse_magnitude_Ns:.3f} N·s: {b.turf_normal_Ns:+.3f} "
             f"N·s up, {b.turf_against_path_Ns:+.3f} N·s against the head's path"),
            ("residual impulse on the club, Λ − Λ_law − turf (not the ball's)",
             f"({R}) N·s, |·| {b.residual_impulse_magnitude_Ns:.3f} N·s"
             + prior_words(im.impulse_prior)),
            ("restitution the fitted Λ would imply along the normal", implied_words(b)),
            ("energy change across the impact: golfer + club + ball (the law's own)",
             f"{b.impact_energy_change_J:+.2f} J ({b.law_energy_change_J:+.2f} J); "
             f"{b.energy_change_if_ball_took_fitted_impulse_J:+.2f} J if the ball took "
             "the whole fitted Λ")]


def _no_turf_words(clearance_m: float) -> str:
    """Why the fit holds no turf impulse, from the club head's clearance through contact
    over its address height [m] (NaN: not measured)."""
    met = turf_contact(clearance_m)
    if met is None:
        return "none fitted (the head's height through contact was not measured)"
    if not met:
        return f"none: the head stayed {1e3 * clearance_m:+.1f} mm from its address height"
    return (f"none fitted, though the head came {1e3 * -clearance_m:.1f} mm below its address "
            "height (see the checks)")


def _marginal_table(mg) -> str:
    """HTML: the impact time marginalised over the profile's event times (their Laplace
    evidence and posterior weight, the impulse magnitude at each [N·s]), then the
    marginal event time [s], ball speed [m/s] and smash factor as mean ± standard
    deviation; or why there is none."""
    from markupsafe import escape

    if mg is None:
        return ""
    if mg.unavailable is not None:
        return f"<p class='note'>No marginal over the impact time: {escape(mg.unavailable)}.</p>"
    rows = "".join(
        f"<tr><td>{p.t_e_s:.5f}</td><td>{p.log_likelihood:.1f}</td>"
        f"<td>{p.weight:.3f}</td><td>{float(np.linalg.norm(p.impulse_Ns)):.3f}</td>"
        f"<td>{p.laplace_log_evidence:.1f}</td></tr>"
        for p in sorted(mg.points, key=lambda p: p.t_e_s))
    head = ("<p><b>The impact time marginalised</b> over the event times the fit tried "
            "(profile likelihood of each, posterior weights under a uniform prior; Laplace's "
            "evidence is listed but not used, because the spline's knots move with t_e and "
            "its determinant compares bases, not event times): t_e = "
            f"{mg.t_e_mean_s:.5f} s ± {1e3 * mg.t_e_sd_s:.3f} ms; the whole fitted impulse "
            f"over the ball's mass, |Λ|/m_ball, {mg.fitted_impulse_speed_mean_mps:.1f} ± "
            f"{mg.fitted_impulse_speed_sd_mps:.1f} m/s, over the club-head speed "
            f"{mg.fitted_impulse_smash_mean:.3f} ± {mg.fitted_impulse_smash_sd:.3f} (not "
            "the ball's: the ball takes the collision law's impulse, the rest is the "
            "residual). The noise "
            "is the one the fit assumes (σ of the markers in the settings); with a marker "
            "RMSE above it these spreads are lower bounds.</p>")
    return (head + "<table id='impact-marginal'><tr><th>t_e [s]</th><th>log likelihood "
            "(−cost)</th><th>weight</th><th>|Λ| [N·s]</th><th>Laplace log evidence (not "
            "used)</th></tr>" + rows + "</table>")


def _u(unit: str) -> str:
    """" unit" after a number, nothing for a dimensionless one."""
    return "" if unit == F.DIMENSIONLESS else f" {unit}"


def events_in(summary: SwingSummary, t: NDArray[np.float64]) -> list:
    """[(name, time [s])] of the capture's swing events (address, takeaway, top, impact)
    inside [t[0], t[-1]] widened by one sample step (ball contact follows the fitted
    window's last frame within one frame interval)."""
    ev = summary.events_s
    t = np.asarray(t, float)
    # ball contact lies inside the frame interval after the window's last frame
    m = float(t[1] - t[0]) if t.size > 1 else 0.0
    out = []
    for name in ("address", "takeaway", "top", "impact"):
        x = ev.get(name)
        if x is not None and t.size and t[0] - m <= x <= t[-1] + m:
            out.append((name, float(x)))
    return out


def mark_events(fig: dict[str, Any], summary: SwingSummary, t: NDArray[np.float64]) -> None:
    """t (N,) s the chart's times: the swing events inside its range as labelled vertical
    lines."""
    for name, x in events_in(summary, t):
        fig.vline(x, name, color_="#999")


CONSISTENCY_TITLE = ("Contact consistency per interval (assumed contact schedule: checks "
                     "of the fit, not measurements)")


def consistency_section(summary: SwingSummary, per: dict) -> tuple:
    """(title, HTML): each per-interval contact check (harness/swing/consistency.py)
    against time [s] (interval midpoints), one line per contact point (per foot for the
    centre of pressure) in the check's unit with its threshold, then the counts and the
    table of the intervals that exceed a threshold."""
    from markupsafe import escape


    q = dict(summary.ground.contact_checks)
    tm = np.asarray(per["t_mid"], float)
    frames = summary.ground.frames
    charts = []
    for key, what, unit, scale, _ in cc.QUANTITIES:
        a = scale * np.asarray(per[key], float)
        names = cc.FOOT_NAMES if key == "cop_outside" else frames
        fig = F.Figure(what, "t (interval midpoint)", "s", SHORT[key], unit,
                       legend="below", height=340)
        mark_events(fig, summary, tm)
        for c in range(a.shape[1]):
            fig.line(tm, a[:, c], names[c], color_=F.color(c), markers=True, width=1.2)
        thr = scale * cc.threshold(key)
        fig.hline(thr, f"threshold {thr:g}{_u(unit)}")
        charts.append(fig)
    head = "".join(
        f"<tr><td>{escape(v.what)}</td><td>{v.threshold:g}{escape(_u(v.unit))}</td>"
        f"<td>{'—' if v.worst_value is None else format(v.worst_value, '.4g')}"
        f"</td><td>{escape(v.worst_where or '—')}</td>"
        f"<td class='{'bad' if v.intervals_exceeding else 'ok'}'>"
        f"{v.intervals_exceeding}</td><td>{v.intervals_evaluated}</td></tr>"
        for v in q.values())
    counts = ("<table id='contact-consistency'><tr><th>check (per frame interval)</th>"
              "<th>threshold</th><th>worst</th><th>where</th><th>intervals exceeding</th>"
              "<th>intervals evaluated</th></tr>" + head + "</table>")
    rows = sorted(((r.t0_s, k, r) for k, v in q.items() for r in v.exceeding),
                  key=lambda x: (x[0], x[1]))
    body = "".join(
        f"<tr><td>{r.interval}</td><td>{r.t0_s:.4f}–{r.t1_s:.4f}</td>"
        f"<td>{escape(q[k].what)}</td><td>{escape(r.where)}</td>"
        f"<td>{r.value:.4g}{escape(_u(q[k].unit))}</td>"
        f"<td>{q[k].threshold:g}{escape(_u(q[k].unit))}</td>"
        f"<td>{escape(', '.join(r.points_exceeding))}</td></tr>" for _, k, r in rows)
    table = ("<table id='contact-exceeding'><caption class='note'>intervals exceeding a "
             f"threshold ({len(rows)} rows: one per interval and check)</caption><tr>"
             "<th>interval</th><th>t [s]</th><th>check</th><th>worst at</th><th>value</th>"
             "<th>threshold</th><th>points exceeding</th></tr>" + body + "</table>") \
        if rows else ("<p class='note' id='contact-exceeding'>No interval exceeds a "
                      "threshold.</p>")
    note = ("<p class='note'><b>The contact schedule is assumed</b> (no force plate): these "
            "are consistency checks of the fitted motion and its fitted contact forces, "
            "interval by interval over the "
            f"{len(tm) if summary.ground.intervals is None else summary.ground.intervals} "
            "frame intervals, never scored as measured "
            "data. Penetration and slip are taken over five points of each interval on the "
            "fitted spline (its ends included), slip only for a point in stick at both ends; "
            "the forces at the interval's two frames. The centre of pressure of a foot is "
            "where its contact forces have no horizontal moment on the floor plane (what a "
            "force plate reports); its support polygon is the convex hull of its contact "
            "points in stick at that frame. Thresholds: the tolerance table "
            "(swing/contact_*), each with its reason.</p>")
    return (CONSISTENCY_TITLE, note + counts + F.grid(charts, 420) + table)


def cop_charts(summary: SwingSummary, t: NDArray[np.float64], cop: NDArray[np.float64],
               view: dict) -> list:
    """Each foot's centre of pressure (cop (N, 2 feet, 2) m, world x y; NaN: no load) in
    the view axes [mm]: its path seen from above over the foot's contact points, equal
    aspect, and its two components against time with the events marked."""
    anchors = np.asarray(summary.ground.anchors_m or np.zeros((0, 3)), float)
    frames = summary.ground.frames
    floor = float(view["origin_m"][2])
    xyz = np.concatenate([cop, np.full(cop.shape[:2] + (1,), floor)], axis=2)
    V = 1e3 * poses.project(view, xyz)                                 # (N, 2, 3) mm
    top = F.Figure("centre of pressure per foot, seen from above", "along the target line",
                   "mm", "towards the ball", "mm", legend="below", height=420,
                   equal_aspect=True)
    tf_ = F.Figure("centre of pressure per foot against time", "t", "s",
                   "position in the view axes", "mm", legend="below", height=420)
    for j, side in enumerate(cc.FEET):
        name = cc.FOOT_NAMES[j]
        idx = [k for k, n in enumerate(frames) if n.startswith(side + "_")]
        if idx:
            loop = idx + idx[:1]
            A = 1e3 * poses.project(view, anchors[loop])
            top.line(A[:, 0], A[:, 1], f"{name}: contact points (anchors)",
                     color_=F.color(j), dash="dot", width=1, markers=True)
        top.line(V[:, j, 0], V[:, j, 1], f"{name}: centre of pressure", color_=F.color(j),
                 width=2, hover=[f"t = {x:.4f} s" for x in t])
        tf_.line(t, V[:, j, 0], f"{name}: along the target line", color_=F.color(j))
        tf_.line(t, V[:, j, 1], f"{name}: towards the ball", color_=F.color(j), dash="dash")
    mark_events(tf_, summary, t)
    return [top, tf_]


def replay_rows(replay_records: Iterable[Mapping[str, Any]], energy: dict,
                segment_cases: frozenset = frozenset()) -> list:
    """[{id, status, max_abs (with unit), reason, note}] of the replay records; an energy
    record of the whole-window replay (not one of ``segment_cases``) has a note saying at
    which instant its quoted work applies (the end of the window it is scored over) and
    what the whole replay reaches (the energy chart shows both)."""
    rows = []
    for r in replay_records:
        unit = unit_of(r.stage, r.quantity)
        txt = "" if r.max_abs is None else f"{r.max_abs:.3e}" + (f" {unit}" if unit else "")
        note = ""
        d = energy.get(r.engine_a) if r.quantity == "energy_balance" and \
            r.id.split("/")[0] not in segment_cases else None
        if d is not None:
            n = d["n_scored"]
            note = (f"the applied work quoted is ∫τᵀv dt at t = {d['t'][n - 1]:.4f} s, the "
                    f"last knot of the predictability window this record is scored over "
                    f"({n} of {len(d['t'])} knots): {d['applied'][n - 1]:.4g} J on the chart; "
                    f"at the end of the replay, t = {d['t'][-1]:.4f} s, E − E0 = "
                    f"{d['E_rel'][-1]:+.4g} J and the applied work {d['applied'][-1]:+.4g} J")
        rows.append({"id": r.id, "status": r.status, "max_abs": txt, "reason": r.reason,
                     "note": note})
    return rows


def _seen(x: float | None) -> bool:
    """Whether a marker RMSE [m] was measured (None or NaN: no frame inside the segment
    sees a marker)."""
    return x is not None and math.isfinite(x)


def segment_rows(f: SwingSummary) -> dict | None:
    """The report's segmented replay (None when there is none): ``answer`` in words (how
    many segments passed in every engine, the impact's segment, the span scored) and
    ``rows`` one per segment {window, impact, worst (engine, RMS mm, max mm from the fit),
    markers (engine: RMSE mm against the measured markers), fit_mm, frames, records,
    ok}."""
    seg = f.replay.segments if f.replay is not None else None
    if not seg:
        return None
    eng = seg["engines"]
    rows = []
    for s in seg["list"]:
        d = s["engines"]
        w = max(d, key=lambda e: d[e]["fit_rms_m"]) if d else None
        rows.append({"n": s["index"] + 1, "window": f"{s['t_s'][0]:.4f}–{s['t_s'][1]:.4f}",
                     "impact": s["holds_impact"], "case": s["case"],
                     "worst": (w, 1e3 * d[w]["fit_rms_m"], 1e3 * d[w]["fit_max_m"])
                     if w else None,
                     "markers": {e: 1e3 * x["markers_rmse_m"] for e, x in d.items()
                                 if _seen(x["markers_rmse_m"])},
                     "fit_mm": 1e3 * s["fit_markers_rmse_m"]
                     if _seen(s["fit_markers_rmse_m"]) else None, "frames": s["frames"],
                     "records": f"{s['records']['passed']} of {s['records']['total']}",
                     "limit_mm": 1e3 * s["limit_m"],
                     "ok": segments.passed(s, eng, seg["horizon_s"])})
    good = sum(r["ok"] for r in rows)
    hold = [r for r in rows if r["impact"]]
    win = segments.scored_window(seg)
    answer = (f"{good} of {len(rows)} segments pass in every engine ({', '.join(eng)})"
              + (f"; the segment through the impact, t = {hold[0]['window']} s, "
                 + ("passed" if hold[0]["ok"] else "did NOT pass") if hold else "")
              + (f"; scored over t = {win[0]:.4f}–{win[1]:.4f} s" if win else
                 "; no segment compared in every engine")
              + f". Each segment is at most the predictability horizon "
                f"{1e3 * seg['horizon_s']:.1f} ms and starts from the fitted state.")
    return {"answer": answer, "rows": rows, "engines": eng,
            "horizon_ms": 1e3 * seg["horizon_s"], "bundle": seg["bundle"]}


def scope_words(f: SwingSummary, arrays: dict) -> str:
    """What the swing's checks were scored over, in words: the capture (frames, rate), the
    fitted window [s] and, when replayed, the span of each engine's replay and the last
    knot time [s] its records are scored over (``arrays["energy"]``, as the records)."""
    c, w = f.capture, f.window
    s = (f"capture {c.source}, {c.frames} frames at {c.rate_hz:g} Hz; fit window "
         f"t = {w.t_start_s:.4f}–{w.t_end_s:.4f} s (impact {c.events.impact_s:.4f} s)")
    energy = arrays.get("energy") or {}
    if not energy:
        return s + "; no replay"
    spans = {e: (float(d["t"][0]), float(d["t"][-1]), float(d["t"][d["n_scored"] - 1]))
             for e, d in energy.items()}
    t0 = min(v[0] for v in spans.values())
    t1 = max(v[1] for v in spans.values())
    ends = sorted({v[2] for v in spans.values()})
    scored = f"{ends[0]:.4f} s" if len(ends) == 1 else \
        ", ".join(f"{e} {v[2]:.4f} s" for e, v in spans.items())
    s += (f"; replay in {len(spans)} engine(s) run over t = {t0:.4f}–{t1:.4f} s, its "
          f"records scored up to t = {scored}"
          + (" (the predictability window)" if ends[0] < t1 else " (the whole replay)"))
    seg = f.replay.segments if f.replay is not None else None
    win = segments.scored_window(seg) if seg else None
    if seg:
        s += (f"; segmented replay ({len(seg['list'])} segments from fitted states) scored "
              + (f"over t = {win[0]:.4f}–{win[1]:.4f} s" if win else "over no segment"))
    return s


def render(summary: dict, arrays: dict, joint_names: Sequence[str], checks: list,
           replay_records: Sequence[Mapping[str, Any]] = (), title: str = "Swing fit",
           prov: dict | None = None, figures: SwingSummary | None = None) -> str:
    """``summary``: fit.json's document (NaN already None); ``figures``: its typed view
    (harness/swing/summary.py; read from ``summary`` when None), which the page and its
    sections read; ``prov``: provenance() of the run (computed here when
    None)."""
    f = SwingSummary.of(summary) if figures is None else figures
    plots = [(t_, Markup(h)) for t_, h in figures_html(f, arrays, joint_names)]
    rejected = f.rejected
    gaps = [(k, g) for k, g in f.gaps.items() if g.missing_fraction > 0 and k not in rejected]
    prov = prov or provenance(replay_records)
    head = banner.for_swing(checks, exit_code(checks), scope_words(f, arrays), prov)
    cases = frozenset(x["case"] for x in ((f.replay.segments or {}) if f.replay else {})
                      .get("list", []))
    rows = replay_rows(replay_records, arrays.get("energy") or {}, cases)
    return ENV.get_template("swing.html.j2").render(banner=head,
        title=title, s=f, plots=plots, checks=checks,
        phase_table=Markup(phase_table(f)),
        replay=[r for r in rows if r["id"].split("/")[0] not in cases],
        seg_records=[r for r in rows if r["id"].split("/")[0] in cases],
        seg=segment_rows(f),
        prov=prov, marker_rows=marker_rows(f),
        gaps=gaps, rejected=rejected, css=Markup(F.CSS), scripts=Markup(F.scripts("file")))

"""The swing fit with activation-driven joint actuators, and what switching to them
changes.

Dimensions: N frames at h [s]; n_a driven joints; torques and strengths τ_max N·m;
activation a and excitation e dimensionless (signed: a joint actuator pulls both ways,
torque a·τ_max, |e| ≤ 1); forces N and body weights BW; markers mm; speeds m/s.

The torque-driven fit lets a joint torque rise as fast and as high as the markers ask.
A muscle cannot: its force follows its excitation through first-order activation
dynamics (harness/fit/activation.py; τ_act 10 ms, τ_deact 40 ms) and is capped by its
strength. With ``--activation`` the swing is fitted a second time, warm-started from the
torque-driven fit at the same impact time, its upper-body joints driven so
(trajectory.ActivationDrive): a = τ/τ_max, each frame interval's excitation from a at
its ends, the excitation's square in the objective where the torque's was, and
|e| ≤ 1 as a stiff penalty. The legs stay torque-driven: their generalized forces share
the load with the foot forces, which are unknowns per frame with no rate to filter, so
their activation is only reported, computed from the fitted torques after the fact.

Strengths (``STRENGTH_NM``) are round values at or above the peak isometric joint
torques reported for healthy adult men (docs/swing/activation.md):
the bound marks what no muscle of an ordinary strong adult could do, not this golfer's
measured strength, which the capture does not hold.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fixtures.golfers import SHAFT_COORDINATES
from harness.capture.events import speeds_around
from harness.core import figures as F
from harness.core.errors import BadInput
from harness.fit import trajectory as tf
from harness.fit.activation import ActivationModel, signed_excitation
from harness.swing import ground
from harness.swing.ground import GRAVITY, total_mass

# ``settings`` below: a SwingSettings (harness/swing/pipeline.py), typed Any because the
# pipeline imports this module: importing it back, even for its types, is an import cycle.

# (joint-name fragment, τ_max N·m), first match wins (docs/swing/activation.md gives the reasons)
STRENGTH_NM = (("lumbar_", 250.0), ("neck_", 60.0), ("clavicle_", 150.0),
               ("shoulder_", 150.0), ("elbow", 100.0), ("forearm_", 20.0),
               ("wrist_", 40.0), ("grip", 20.0), ("hip_", 300.0), ("knee_rotation", 40.0),
               ("knee", 250.0), ("ankle_inversion", 60.0), ("ankle_flexion", 200.0))


def strength(joint: str) -> float:
    """τ_max [N·m] of a golfer joint (``STRENGTH_NM``); BadInput for a joint it lacks."""
    for frag, t in STRENGTH_NM:
        if frag in joint:
            return t
    raise BadInput("activation", f"no strength for the joint {joint!r}")


def split_joints(prob: tf.FitProblem, q: NDArray[np.float64]) -> tuple:
    """(driven, legs): velocity indices of the joints that can be activation-driven (no
    contact point moves with them at the coordinates q (nv,), so no contact force enters
    their generalized force; not the pelvis, and not a bent shaft's coordinates, which no
    muscle drives) and of the other joints (the legs)."""
    a = prob.adapter
    undriven = {a.layout.slot(n).iv for n in a.joint_names
                if n.startswith("pelvis_") or n in SHAFT_COORDINATES}
    coupled = set()
    if prob.contact is not None:
        undriven |= set(prob.contact.residual_dofs)
        J = a.frame_jacobians(np.asarray(q, float), list(prob.contact.frames))
        coupled = set(np.flatnonzero(np.abs(J).sum(axis=(0, 1)) > 0).tolist())
    joints = [a.layout.slot(n).iv for n in a.joint_names]
    driven = tuple(sorted(j for j in joints if j not in undriven and j not in coupled))
    legs = tuple(sorted(j for j in joints if j not in undriven and j in coupled))
    return driven, legs


def drive(prob: tf.FitProblem, driven: Sequence[int]) -> tf.ActivationDrive:
    """The ActivationDrive of the joints ``driven`` (velocity indices, the first of
    ``split_joints``) with the strengths of ``STRENGTH_NM``."""
    a = prob.adapter
    name = {a.layout.slot(n).iv: n for n in a.joint_names}
    return tf.ActivationDrive(driven, np.array([strength(name[j]) for j in driven]),
                              ActivationModel())


def _excitation(act, dofs, tau_max, h, model) -> np.ndarray:
    """(N − 1, len(dofs)) [–]: the excitation of each frame interval that drives the
    torques act (N, nv) [N·m] of ``dofs`` through activation a = τ/τ_max."""
    a = np.asarray(act, float)[:, list(dofs)] / tau_max
    return signed_excitation(a[:-1], a[1:], h, model)[0]


def _figures(prob, r, ch, kf, in_down, joints, tau_max, model, ball_mass_kg) -> dict:
    """Markers mm, pelvis residual N and N·m (ground.fit_figures), club-head speeds m/s
    (events.speeds_around), impulse N·s, smash factor, excitations (N − 1, n) [–] and
    peak torques (n,) N·m of one fit ``r``: what switching the actuators may change."""
    out = ground.fit_figures(prob, r, prob.contact.w_residual)
    out.pop("w_residual")
    out |= {"marker_rmse_top_to_impact_mm": 1e3 * r.marker_rmse(in_down),
            "marker_max_top_to_impact_mm": 1e3 * r.marker_max(in_down),
            "wall_s": float(r.solve_time_s), "components": dict(r.components),
            "ground_force_N": r.forces.sum(axis=1)}             # (N, 3), not written
    club = np.stack([prob.adapter.frame_poses(q, [prob.labels[k] for k in ch])[:, :3]
                     .mean(axis=0) for q in r.q])
    pre, post = speeds_around(club, kf, 1.0 / prob.h)
    out["clubhead_speed_pre_impact_fitted_mps"] = pre
    if r.impulse is not None and np.isfinite(post):
        out["clubhead_speed_post_impact_fitted_mps"] = post
        out["impulse_magnitude_Ns"] = float(np.linalg.norm(r.impulse))
        out["smash_factor"] = out["impulse_magnitude_Ns"] / ball_mass_kg / pre
    out["excitation"] = _excitation(r.act, joints, tau_max, prob.h, model)  # not written
    out["torque_peak_Nm"] = np.abs(r.act[:, list(joints)]).max(axis=0)
    return out


def compare(prob: tf.FitProblem, fr: tf.TrajectoryFitResult, settings: Any,
            ch: Sequence[int], kf: int, in_down: NDArray[np.bool_],
            say: Callable[[str], None] | None = None) -> tuple:
    """(series, summary) over the N frames and K markers of ``prob``: the activation-driven
    refit of the swing (module docstring) beside the
    torque-driven fit ``fr`` of ``prob`` (at its impact time): ``ch`` the indices of the
    club-head markers among the labels, ``kf`` the last frame before ball contact (window
    index), ``in_down`` (N, K) bool the top → impact mask. Returns (series, summary):
    series the excitations (N − 1, n) of both fits at the interval midpoints t_s [s] for
    the report's charts; summary a plain dict: the joints, their strengths and per-joint
    peaks (torque N·m, activation, excitation, intervals with |e| > 1) of both fits, the
    headline figures of both, the change of the ground reaction force between them (RMS
    over frames, BW)."""
    say = say or (lambda msg: None)
    a = prob.adapter
    if prob.contact is None:
        raise BadInput("--activation", "compares fits with the feet on the ground; this "
                                       "fit has no ground contact")
    model = ActivationModel()
    driven, legs = split_joints(prob, fr.q[0])
    drv = drive(prob, driven)
    joints = tuple(drv.dofs) + legs
    name = {a.layout.slot(n).iv: n for n in a.joint_names}
    tmax = np.array([strength(name[j]) for j in joints])
    p = dataclasses.replace(prob, activation=drv)
    t0 = time.perf_counter()
    fa = tf.fit(p, fr.q, max_iter=settings.activation_iter, tol=settings.tol, C0=fr.C,
                impulse0=fr.impulse)
    wall = time.perf_counter() - t0
    say(f"activation: {len(drv.dofs)} upper-body joints activation-driven, "
        f"{fa.iterations} iterations ({wall:.0f} s), marker RMSE "
        f"{1e3 * fr.marker_rmse():.1f} → {1e3 * fa.marker_rmse():.1f} mm")
    fits = {}
    for key, r in (("torque", fr), ("activation", fa)):
        fits[key] = _figures(prob, r, ch, kf, in_down, joints, tmax, model,
                             settings.ball_mass_kg)
    nd = len(drv.dofs)
    per_joint = []
    for k, j in enumerate(joints):
        row = {"joint": name[j], "driven": k < nd, "tau_max_Nm": float(tmax[k])}
        for key, f in fits.items():
            e = f["excitation"][:, k]
            row[key] = {"torque_peak_Nm": float(f["torque_peak_Nm"][k]),
                        "activation_peak": float(f["torque_peak_Nm"][k] / tmax[k]),
                        "excitation_peak": float(np.abs(e).max()),
                        "intervals_beyond_one": int((np.abs(e) > 1.0).sum())}
        per_joint.append(row)
    series = {"t_s": 0.5 * (prob.t[:-1] + prob.t[1:]),
              "joints": [name[j] for j in joints], "driven": nd,
              "torque": fits["torque"]["excitation"],
              "activation": fits["activation"]["excitation"]}
    for f in fits.values():
        e = f.pop("excitation")
        f.pop("torque_peak_Nm")
        for part, sl in (("driven", slice(0, nd)), ("legs", slice(nd, None))):
            f[f"excitation_peak_{part}"] = float(np.abs(e[:, sl]).max()) if e[:, sl].size \
                else None
            f[f"intervals_beyond_one_{part}"] = int((np.abs(e[:, sl]) > 1.0).sum())
        f["intervals"] = int(e.shape[0])
    d = fits["activation"].pop("ground_force_N") - fits["torque"].pop("ground_force_N")
    grf = float(np.sqrt(np.mean(np.sum(d ** 2, axis=1))) / (total_mass(a) * GRAVITY))
    return series, {"what": "the swing refitted with its upper-body joints activation-driven "
                    "(excitation → activation → torque a·τ_max; |e| ≤ 1), warm-started "
                    "from the torque-driven fit at its impact time; the legs' activation "
                    "computed from their fitted torques",
            "model": {"tau_act_s": model.tau_act, "tau_deact_s": model.tau_deact,
                      "w_bound": drv.w_bound, "frame_interval_s": prob.h},
            "iterations_budget": settings.activation_iter,
            "joints": per_joint, "fits": fits,
            "ground_force_change_rms_bw": grf,
            "wall_s": wall}


def check(r: dict) -> dict:
    """The swing check row of the comparison (reported: the activation-driven refit
    informs, it does not replace the fit)."""
    t, a = r["fits"]["torque"], r["fits"]["activation"]
    n = t["intervals"] * sum(j["driven"] for j in r["joints"])
    value = (f"excitation beyond ±1 in {t['intervals_beyond_one_driven']} of {n} "
             f"upper-body joint-intervals torque-driven (peak |e| "
             f"{t['excitation_peak_driven']:.3f}), {a['intervals_beyond_one_driven']} "
             f"activation-driven (peak {a['excitation_peak_driven']:.3f}); marker RMSE top "
             f"→ impact {t['marker_rmse_top_to_impact_mm']:.1f} → "
             f"{a['marker_rmse_top_to_impact_mm']:.1f} mm")
    return {"name": "the upper body activation-driven (the --activation option)",
            "value": value, "target": "reported, no threshold", "ok": None}


CHART_JOINTS = 4       # the upper-body joints charted: those with the largest excitation


def _charts(series) -> str:
    """The excitation over time of the driven joints with the largest torque-driven
    excitation, both fits, with the bound ±1."""
    nd = series["driven"]
    e_t, e_a = np.asarray(series["torque"]), np.asarray(series["activation"])
    peak = np.abs(e_t[:, :nd]).max(axis=0)
    figs = []
    for k in np.argsort(-peak)[:CHART_JOINTS]:
        fig = F.Figure(f"{series['joints'][k]}: excitation", "t", "s", "excitation",
                       F.DIMENSIONLESS, legend="below")
        fig.line(series["t_s"], e_t[:, k], "torque-driven fit (implied)", color_=F.color(0))
        fig.line(series["t_s"], e_a[:, k], "activation-driven fit", color_=F.color(1),
                 dash="dash")
        fig.hline(1.0, "bounds e = ±1", color_="#555", dash="dot")
        fig.hline(-1.0, "bound e = −1", color_="#555", dash="dot", legend=False)
        figs.append(fig)
    return ("<p>The upper-body joints with the largest excitation, each frame interval's "
            "value at its midpoint; the bound ±1 dotted grey.</p>" + F.grid(figs, 420))


def section(r: dict, series: dict[str, Any] | None = None) -> tuple:
    """(title, HTML): the answer, the headline figures of both fits, one row per joint,
    and with ``series`` (``compare``'s) charts of the largest excitations."""
    from markupsafe import escape

    t, a = r["fits"]["torque"], r["fits"]["activation"]
    nd = sum(j["driven"] for j in r["joints"])
    n = t["intervals"] * nd
    m = r["model"]

    def num(x: float | None, fmt: str) -> str:
        return "—" if x is None else format(x, fmt)

    rows = [("marker RMSE, top → impact", "mm", "marker_rmse_top_to_impact_mm", ".1f"),
            ("marker RMSE, whole window", "mm", "marker_rmse_mm", ".1f"),
            ("marker max, top → impact", "mm", "marker_max_top_to_impact_mm", ".1f"),
            ("pelvis residual force, peak", "N", "residual_force_peak_N", ".1f"),
            ("pelvis residual moment, peak", "N·m", "residual_moment_peak_Nm", ".1f"),
            ("club-head speed before impact (fitted)", "m/s",
             "clubhead_speed_pre_impact_fitted_mps", ".1f"),
            ("club-head speed after impact (fitted)", "m/s",
             "clubhead_speed_post_impact_fitted_mps", ".1f"),
            ("impulse on the club, magnitude", "N·s", "impulse_magnitude_Ns", ".3f"),
            ("smash factor", "–", "smash_factor", ".2f"),
            ("upper body: peak |excitation|", "–", "excitation_peak_driven", ".3f"),
            ("upper body: joint-intervals with |e| > 1", f"of {n}",
             "intervals_beyond_one_driven", "d"),
            ("legs (torque-driven in both): peak |excitation| implied", "–",
             "excitation_peak_legs", ".3f"),
            ("legs: joint-intervals with |e| > 1 implied",
             f"of {t['intervals'] * (len(r['joints']) - nd)}", "intervals_beyond_one_legs",
             "d"),
            ("iterations", "", "iterations", "d")]
    head = "".join(f"<tr><td>{escape(lbl)}</td><td>{num(t.get(k), f)}</td>"
                   f"<td>{num(a.get(k), f)}</td><td>{escape(u)}</td></tr>"
                   for lbl, u, k, f in rows)
    if r.get("ground_force_change_rms_bw") is not None:
        head += (f"<tr><td>ground reaction force, change between the fits (RMS over "
                 f"frames)</td><td colspan='2'>{r['ground_force_change_rms_bw']:.3f}</td>"
                 f"<td>BW</td></tr>")
    body = []
    for j in r["joints"]:
        cells = "".join(
            f"<td>{j[k]['torque_peak_Nm']:.1f}</td><td>{j[k]['activation_peak']:.2f}</td>"
            f"<td{' class=over' if j[k]['excitation_peak'] > 1 else ''}>"
            f"{j[k]['excitation_peak']:.2f}</td><td>{j[k]['intervals_beyond_one']}</td>"
            for k in ("torque", "activation"))
        body.append(f"<tr><td>{escape(j['joint'])}</td><td>"
                    f"{'activation' if j['driven'] else 'torque (legs)'}</td>"
                    f"<td>{j['tau_max_Nm']:g}</td>{cells}</tr>")
    over = sorted((j for j in r["joints"] if j["driven"]
                   and j["torque"]["excitation_peak"] > 1.0),
                  key=lambda j: -j["torque"]["excitation_peak"])
    where = "; ".join(f"{escape(j['joint'])} {j['torque']['excitation_peak']:.3f} in "
                      f"{j['torque']['intervals_beyond_one']} interval"
                      f"{'s' if j['torque']['intervals_beyond_one'] != 1 else ''}"
                      for j in over)
    dg = r.get("ground_force_change_rms_bw")
    answer = (
        f"<p><b>Torque-driven, the fit asks the upper body for excitations beyond ±1 in "
        f"{t['intervals_beyond_one_driven']} of {n} joint-intervals (peak |e| "
        f"{t['excitation_peak_driven']:.3f}): torques that rise faster, or higher, than "
        f"first-order activation ({1e3 * m['tau_act_s']:g} ms up, "
        f"{1e3 * m['tau_deact_s']:g} ms down) with the strengths below allows. "
        f"Activation-driven, the largest excitation is {a['excitation_peak_driven']:.3f} "
        f"({a['intervals_beyond_one_driven']} joint-intervals beyond ±1), the marker RMSE "
        f"from the top to impact goes from {t['marker_rmse_top_to_impact_mm']:.2f} to "
        f"{a['marker_rmse_top_to_impact_mm']:.2f} mm"
        + (f" and the ground reaction force changes by {dg:.4f} body weights (RMS)"
           if dg is not None else "") + ".</b></p>"
        + (f"<p>Beyond ±1 torque-driven (peak |e|, intervals): {where}.</p>" if over else "")
        + f"<p>The refit starts from the torque-driven fit, at the same impact time, with at "
        f"most {r['iterations_budget']} iterations; the excitation of each frame interval "
        f"({1e3 * m['frame_interval_s']:.2f} ms) follows from the activation a = τ/τ_max "
        f"at its ends; |e| ≤ 1 is a stiff penalty (weight {m['w_bound']:g}): it trims an "
        f"excess rather than forbidding it, so an interval can stay just beyond 1. The "
        f"{len(r['joints']) - nd} leg joints stay torque-driven: "
        f"the foot forces enter their generalized forces and are unknowns per frame, so "
        f"their excitation is computed from the fitted torques after the fact. Strengths "
        f"τ_max are round values at or above healthy adult men's peak isometric joint "
        f"torques, not this golfer's.</p>")
    table1 = ("<table id='activation'><tr><th>quantity</th><th>torque-driven</th>"
              "<th>activation-driven</th><th>unit</th></tr>" + head + "</table>")
    table2 = ("<details><summary>Per joint: peak torque, activation and excitation in "
              "both fits</summary><table id='activation-joints'><tr><th rowspan='2'>joint"
              "</th><th rowspan='2'>actuator</th><th rowspan='2'>τ_max [N·m]</th>"
              "<th colspan='4'>torque-driven fit</th><th colspan='4'>activation-driven "
              "fit</th></tr><tr>" + "<th>peak |τ| [N·m]</th><th>peak |a| [–]</th>"
              "<th>peak |e| [–]</th><th>intervals |e| &gt; 1</th>" * 2 + "</tr>"
              + "".join(body) + "</table></details>")
    charts = _charts(series) if series is not None else ""
    return ("Activation-driven actuators: what they change",
            answer + table1 + table2 + charts)

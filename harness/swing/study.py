"""The knot density, the smoothness and the effort weights chosen from the capture's own
motion.

Dimensions: S settings of the grid, each (knot_frames [frames per spline knot], w_smooth
[–], w_effort [–]); forces N and fractions of body weight BW; torques N·m; markers mm;
impulse N·s.

Markers alone cannot choose these settings: a held-out marker study preferred a
smoothness weight whose fit of a known truth went astray (docs/swing/fit.md). So the choice
is made where the answer is known and the motion is this capture's: the synthetic truth
of harness/swing/groundtruth.py built from the fit just made (its motion, its assumed
contact schedule, foot forces by a rule of their own, through the ball impact with the
fit's impulse applied exactly when the fit has one, 2 mm of marker noise), recovered by
the swing fit's own steps with each setting of the grid. The settings whose recovery of
the total ground reaction force from the top to impact (RMS over frames, body weights) is
within swing/study_tie of the best are as good as it; of those the simplest (fewest
knots, then the largest smoothness weight, then the largest effort weight) is the
choice. The joint torques', the marker and, through the impact, the impulse's errors are
reported beside it. One noise seed:
the spread between seeds was 0.002-0.006 BW at one setting (bench/swing_truth.txt), far
below the differences between settings that decide.
"""
from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.swing import groundtruth as gt

if TYPE_CHECKING:
    from harness.swing.pipeline import SwingSettings

# (knot_frames, w_smooth, w_effort): the knot density around the default at the default
# weights, then each weight ten times lower and higher around it at the default density
# (a cross, not the full grid: seven recoveries)
GRID = ((2, 1.0, 1e-3), (3, 1.0, 1e-3), (4, 1.0, 1e-3), (3, 0.1, 1e-3), (3, 10.0, 1e-3),
        (3, 1.0, 1e-4), (3, 1.0, 1e-2))


def _key(r) -> tuple:
    """(knot_frames, w_smooth, w_effort) of a row or a choice."""
    return (r["knot_frames"], r["w_smooth"], r["w_effort"])


def _label(r) -> str:
    return (f"knots every {r['knot_frames']} frames, w_smooth {r['w_smooth']:g}, "
            f"w_effort {r['w_effort']:g}")


def run_study(folder: str | os.PathLike[str], settings: SwingSettings,
              grid: Sequence[tuple[float, ...]] = GRID, seed: int = 0,
              through_impact: bool = True, say: Callable[[str], None] | None = None,
              doc: dict | None = None) -> dict:
    """The study of the module docstring on the finished (or just fitted) swing folder
    ``folder`` (``doc``: its fit.json document when the file is not yet written), each
    recovery with ``settings`` (a SwingSettings) but the grid's knot_frames, w_smooth and
    w_effort (a grid entry of two numbers keeps the
    settings' w_effort). Returns {"rows": one per setting, "chosen", "used", "what",
    "seed", "truth"}; a row whose fit failed holds its error and is never chosen."""
    say = say or (lambda msg: None)
    adapter, _, doc, arr = gt.source(folder, doc)
    through = through_impact and "impact_time_s" in arr
    tr = gt.whole_body_truth(adapter, doc, arr, seed=seed, through_impact=through,
                             restitution=gt.truth_restitution(doc)
                             if through and settings.impulse_prior == "law" else None)
    rows = []
    for entry in grid:
        kf, ws = entry[0], entry[1]
        we = float(entry[2]) if len(entry) > 2 else float(settings.w_effort)
        t0 = time.perf_counter()
        s = dataclasses.replace(settings, knot_frames=int(kf), w_smooth=float(ws),
                                w_effort=we)
        head = {"knot_frames": int(kf), "w_smooth": float(ws), "w_effort": we}
        try:
            r = gt.recover(adapter, tr, s)
        except (FloatingPointError, np.linalg.LinAlgError, BadInput) as err:
            rows.append(head | {"error": f"{type(err).__name__}: {err}"})
            say(f"study: {_label(head)}: failed ({err})")
            continue
        im = r["impulse"] or {}
        row = head | {
               "grf_top_to_impact_bw": r["grf_rms_bw"]["top_to_impact"]["total"],
               "grf_whole_window_bw": r["grf_rms_bw"]["whole_window"]["total"],
               "torque_rms_error_Nm": r["torque_rms_error_Nm"],
               "marker_rmse_mm": r["marker_rmse_mm"],
               "impulse_magnitude_error": im.get("magnitude_error_rel"),
               "impulse_resolved_error": im.get("resolved_error_rel"),
               "iterations": r["iterations"], "wall_s": time.perf_counter() - t0}
        rows.append(row)
        say(f"study: {_label(head)}: ground force {row['grf_top_to_impact_bw']:.3f} BW, "
            f"marker RMSE {row['marker_rmse_mm']:.1f} mm ({row['wall_s']:.0f} s)")
    ok = [r for r in rows if "error" not in r and np.isfinite(r["grf_top_to_impact_bw"])]
    best, as_good = None, []
    if ok:
        low = min(r["grf_top_to_impact_bw"] for r in ok)
        as_good = [r for r in ok
                   if r["grf_top_to_impact_bw"] <= low + lookup("swing", "study_tie").atol]
        best = max(as_good, key=_key)
    return {"what": "a synthetic truth from this fit (its motion, schedule, foot forces by "
                    "a weight-shift rule, the impulse when through the impact, 2 mm marker "
                    "noise) recovered with each setting; chosen: the least ground reaction "
                    "force error top → impact (RMS over frames, body weights)",
            "seed": seed, "through_impact": tr.impulse_Ns is not None,
            "truth_restitution": None if tr.collision is None else tr.collision.restitution,
            "truth": {"frames": len(tr.t), "body_weight_N": tr.body_weight_N,
                      "torque_rms_top_to_impact_Nm": float(np.sqrt(np.mean(
                          tr.tau[tr.top_index:] ** 2)))},
            "rows": rows,
            "chosen": None if best is None else dict(zip(("knot_frames", "w_smooth",
                                                          "w_effort"), _key(best))),
            "as_good": [dict(zip(("knot_frames", "w_smooth", "w_effort"), _key(r)))
                        for r in as_good],
            "used": {"knot_frames": settings.knot_frames, "w_smooth": settings.w_smooth,
                     "w_effort": settings.w_effort}}


def check(study: dict) -> dict:
    """The swing check row of a study: the chosen setting against the one the run used
    (reported: the study informs the default, it does not refit the capture)."""
    c, u = study["chosen"], study["used"]
    if c is None:
        value = "every recovery failed: no choice"
    else:
        row = next(r for r in study["rows"] if "error" not in r and _key(r) == _key(c))
        others = [a for a in study["as_good"] if _key(a) != _key(c)]
        value = (f"{_label(c)} (ground force {row['grf_top_to_impact_bw']:.3f} BW"
                 + "".join(f"; as good: {_label(a)}" for a in others)
                 + f"); this run used {_label(u)}"
                 + (" (the same)" if _key(c) == _key(u) else ""))
    return {"name": "knot density, smoothness and effort weights chosen on a synthetic "
                    "truth from this capture's motion (the --study option)",
            "value": value, "target": "reported, no threshold", "ok": None}


def section(study: dict) -> tuple:
    """(title, HTML): the study's table, one row per setting, the chosen one marked."""
    from markupsafe import escape

    def cell(x: float | None, fmt: str) -> str:
        return "—" if x is None else format(x, fmt)

    c = study["chosen"]
    body = []
    for r in study["rows"]:
        mark = c is not None and _key(r) == _key(c)
        lead = (f"<td>{r['knot_frames']}</td><td>{r['w_smooth']:g}</td>"
                f"<td>{r['w_effort']:g}</td>")
        if "error" in r:
            body.append(f"<tr>{lead}<td colspan='7'>failed: {escape(r['error'])}</td></tr>")
            continue
        imp = (cell(None if r["impulse_magnitude_error"] is None
                    else 100 * r["impulse_magnitude_error"], ".1f"),
               cell(None if r["impulse_resolved_error"] is None
                    else 100 * r["impulse_resolved_error"], ".1f"))
        body.append(f"<tr{' class=chosen' if mark else ''}>{lead}"
                    f"<td>{r['grf_top_to_impact_bw']:.3f}{' (chosen)' if mark else ''}</td>"
                    f"<td>{r['grf_whole_window_bw']:.3f}</td>"
                    f"<td>{r['torque_rms_error_Nm']:.1f}</td><td>{r['marker_rmse_mm']:.2f}</td>"
                    f"<td>{imp[0]}</td><td>{imp[1]}</td><td>{r['iterations']}</td></tr>")
    u = study["used"]
    head = ("<p>A synthetic truth built from this fit (its motion, its assumed contact "
            "schedule, foot forces by a weight-shift rule of their own"
            + ("" if not study["through_impact"] else
               ", the fitted impulse applied exactly at the impact"
               if study.get("truth_restitution") is None else
               ", the collision law's impulse at the impact with e = "
               f"{study['truth_restitution']:g} (the club prior's lower quartile, not its "
               "mean)") + f", 2 mm marker noise, seed {study['seed']}) is recovered by the "
            "swing fit's own steps with each setting; of the settings whose ground reaction "
            "force error from the top to impact is within "
            f"{lookup('swing', 'study_tie').atol:g} body weights of the least, the simplest "
            "(fewest knots, then the largest smoothness weight, then the largest effort "
            "weight) is the choice. Markers alone cannot make it: a held-out marker study "
            "preferred a smoothness weight whose fit of a known truth went astray. This run "
            f"used {escape(_label(u))}; the study does not refit the capture.</p>")
    table = ("<table id='study'><tr><th>knot every [frames]</th><th>w_smooth</th>"
             "<th>w_effort</th>"
             "<th>ground force error top → impact [BW]</th><th>whole window [BW]</th>"
             "<th>joint torque error [N·m RMS]</th><th>marker RMSE [mm]</th>"
             "<th>|Λ| error [%]</th><th>Λ error across the shaft [%]</th>"
             "<th>iterations</th></tr>" + "".join(body) + "</table>")
    return ("Settings chosen from this capture's motion (synthetic truth)", head + table)

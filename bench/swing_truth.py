"""Whole-body synthetic ground truth of the swing fit, over seeds and settings
(harness/swing/groundtruth.py; docs/swing/marker-maximum.md "Synthetic ground truth").

A finished swing folder (default: a fresh ``harness swing data/swing/driver.c3d --quick
--no-replay`` into a temporary folder) gives the truth's motion; each seed draws new 2 mm
marker noise (``--noise-mm``), the swing fit recovers the forces (``--set`` changes a
setting of it), and the table lists the ground reaction force error (RMS over frames,
fraction of body weight) top → impact and over the whole window, total and per foot,
the joint-torque RMS error, the marker RMSE and the contact schedule's agreement with the
truth's. With ``--truth-schedule`` the fit is also run
with the truth's own schedule, which separates the schedule's share of the error. With
``--through-impact`` the truth runs through the ball impact with the source fit's
impulse (applied exactly) and the fit goes through it: the impulse errors are listed;
with ``--restitution E`` too, the truth's impulse is the collision law's with restitution
E (the club head on its own striking the ball), and the ball speed and the restitution
the fit recovers are listed against the truth's; ``--turf N,F`` [N·s] adds a turf impulse
on the club head with the ball's (N up, F against the head's path), and the fit, told the
head met the ground, recovers it; ``--ring F,Z`` makes the truth's club head ring on its
shaft at F Hz with damping ratio Z after the impulse, and ``--no-fit-ring`` keeps the
recovering fit from trying a ringing.
The run's table goes into ``--out`` after its first line (the record of runs, newest
first); what the run was is written above it by hand as "# Run N: ...".

Run: .venv/bin/python bench/swing_truth.py [--swing-dir DIR] [--seeds 0,1,2]
     [--settings quick|full] [--truth-schedule]
     [--through-impact [--restitution E [--turf N,F] [--ring F,Z]]]
     [--no-fit-ring] [--impulse-prior law|free]
     [--no-joint-limits]
     [--w-smooth 0.03,1] [--noise-mm 2] [--set NAME=VALUE ...]
     [--out bench/swing_truth.txt]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from harness.core.tolerances import lookup  # noqa: E402
from harness.swing import groundtruth as gt  # noqa: E402
from harness.swing.pipeline import SwingSettings  # noqa: E402

RECORD_HEADER = "# Runs of bench/swing_truth.py on this 2-core machine, newest first."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--swing-dir", default=None)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--settings", choices=("quick", "full"), default="full")
    ap.add_argument("--truth-schedule", action="store_true")
    ap.add_argument("--through-impact", action="store_true",
                    help="the truth runs through the ball impact with the source's impulse; "
                         "the fit goes through it and the impulse errors are listed")
    ap.add_argument("--restitution", type=float, default=None,
                    help="with --through-impact: the truth's impulse is the collision law's "
                         "with this restitution e (0-1) instead of the source's")
    ap.add_argument("--turf", default=None,
                    help="N,F [N·s]: with --restitution, a turf impulse on the club head "
                         "after the ball, N up and F against the head's path")
    ap.add_argument("--ring", default=None,
                    help="F,Z: with --through-impact, the truth's club head rings on its "
                         "shaft at F Hz, damping ratio Z, after the impulse")
    ap.add_argument("--no-fit-ring", action="store_true",
                    help="the recovering fit does not try the head's ringing")
    ap.add_argument("--impulse-prior", choices=("law", "free"), default=None,
                    help="the recovering fit's impulse prior (default: the settings' own, "
                         "law)")
    ap.add_argument("--joint-limits", action=argparse.BooleanOptionalAction, default=True,
                    help="the recovering fit holds the golfer's joint limits (default; "
                         "--no-joint-limits releases them: build the source with "
                         "--no-joint-limits too)")
    ap.add_argument("--noise-mm", type=float, default=2.0,
                    help="the truth's marker noise, standard deviation [mm] (at least 0.001: the "
                         "impact detection needs some)")
    ap.add_argument("--w-smooth", default=None,
                    help="comma-separated smoothness weights to recover with (default: the "
                         "settings' own)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a SwingSettings field of the recovering fit (a number), e.g. "
                         "sigma_closure_m=0.01; repeatable")
    ap.add_argument("--out", default=str(ROOT / "bench" / "swing_truth.txt"),
                    help="the record of runs, newest first: this run goes in after its "
                         "first line (a new file is started)")
    args = ap.parse_args()
    lines = []

    def say(s):
        print(s, flush=True)
        lines.append(s)

    swing_dir = args.swing_dir
    if swing_dir is None:
        swing_dir = Path(tempfile.mkdtemp()) / "swing"
        subprocess.run([str(ROOT / ".venv" / "bin" / "harness"), "swing",
                        str(ROOT / "data" / "swing" / "driver.c3d"), "--quick", "--no-replay",
                        "--out", str(swing_dir), "--quiet"], check=False)
    adapter, source_settings, doc, arr = gt.source(swing_dir)
    settings = source_settings if args.settings == "quick" else SwingSettings()
    settings = dataclasses.replace(settings, joint_limits=args.joint_limits)
    if args.impulse_prior is not None:
        settings = dataclasses.replace(settings, impulse_prior=args.impulse_prior)
    if args.no_fit_ring:
        settings = dataclasses.replace(settings, ring=False)
    fields = {f.name for f in dataclasses.fields(settings)}
    for item in args.set:
        name, _, value = item.partition("=")
        kind = type(getattr(settings, name, None))
        kind = float if name == "sigma_marker_m" else kind   # None: the IK's marker RMSE
        if name not in fields or kind not in (int, float):
            ap.error(f"--set {item}: not NAME=VALUE with NAME a numeric SwingSettings field")
        try:
            settings = dataclasses.replace(settings, **{name: kind(value)})
        except ValueError:
            ap.error(f"--set {item}: {value!r} is not a {kind.__name__}")
    weights = ([float(w) for w in args.w_smooth.split(",")] if args.w_smooth
               else [settings.w_smooth])
    limit = lookup("swing", "grf_truth").atol
    law_words = ("" if args.restitution is None else
                 f"; the truth through the impact under the collision law, e {args.restitution:g}"
                 + ("" if args.turf is None else f", a turf impulse N,F {args.turf} N·s")
                 + ("" if args.ring is None else f", the head ringing on its shaft (F Hz, "
                                                 f"ζ) {args.ring}"))
    turf = None if args.turf is None else tuple(float(x) for x in args.turf.split(","))
    ring = None if args.ring is None else tuple(float(x) for x in args.ring.split(","))
    say(f"# bench/swing_truth.py: truth from {swing_dir} (its fitted motion, its assumed "
        f"schedule, foot forces by the weight-shift rule), {args.noise_mm:g} mm marker noise, "
        f"recovered "
        f"with the {args.settings} settings (w_smooth {', '.join(map(str, weights))}"
        f"{'; joint limits held' if settings.joint_limits else '; joint limits released'}"
        f"; impulse prior {settings.impulse_prior}"
        f"{''.join('; ' + x for x in args.set)}"
        f"{'; marker scale the IK RMSE' if settings.sigma_marker_m is None else ''}"
        f"{'' if settings.ring else '; no ringing tried'}"
        f"{law_words}); "
        f"GRF error RMS over frames / body weight "
        f"(threshold {limit:g}); load average {os.getloadavg()[0]:.1f}")
    say(f"{'w_smooth':>8s} {'seed':>4s} {'schedule':>9s} {'GRF top→impact: total':>22s} "
        f"{'lead':>6s} {'trail':>6s} {'whole: total':>12s} {'torque RMS err':>15s} "
        f"{'marker RMSE':>12s} {'agreement':>9s} {'wall s':>7s}")
    for seed in (int(s) for s in args.seeds.split(",")):
        tr = gt.whole_body_truth(adapter, doc, arr, seed=seed,
                                 sigma_m=max(1e-3 * args.noise_mm, 1e-6),
                                 through_impact=args.through_impact,
                                 restitution=args.restitution, turf=turf, ring=ring)
        for ws, which in [(ws, which) for ws in weights for which in
                          (("derived", "truth") if args.truth_schedule else ("derived",))]:
            t0 = time.perf_counter()
            r = gt.recover(adapter, tr, dataclasses.replace(settings, w_smooth=ws),
                           stick=tr.stick if which == "truth" else None)
            d, w = r["grf_rms_bw"]["top_to_impact"], r["grf_rms_bw"]["whole_window"]
            say(f"{ws:8g} {seed:4d} {which:>9s} {d['total']:22.3f} {d['l']:6.3f} {d['r']:6.3f} "
                f"{w['total']:12.3f} {r['torque_rms_error_Nm']:9.1f} N·m "
                f"{r['marker_rmse_mm']:9.2f} mm {r['schedule_agreement']:9.3f} "
                f"{time.perf_counter() - t0:7.0f}")
            if r["impulse"]:
                im = r["impulse"]
                say(f"{'':8s} impulse: truth {np.round(im['truth_Ns'], 3)} N·s, fit "
                    f"{np.round(im['fit_Ns'], 3)} N·s; error {100 * im['error_rel']:.1f} % "
                    f"(vector), {100 * im['magnitude_error_rel']:.1f} % (|Λ|), "
                    f"{100 * im['resolved_error_rel']:.1f} % in the {im['resolved_dims']} "
                    f"directions the club head moves in ({100 * im['resolved_share']:.0f} % "
                    f"of Λ; mobility {np.round(im['mobility'], 3)} 1/kg); t_e fit "
                    f"{im['t_e_fit_s']:.5f} s, truth {im['t_e_truth_s']:.5f} s; along "
                    f"those directions, the most mobile first: truth "
                    f"{np.round(im['truth_by_direction_Ns'], 3)} N·s, error "
                    f"{np.round(im['error_by_direction_Ns'], 3)} N·s")
            if r.get("ball"):
                b = r["ball"]
                say(f"{'':8s} ball: speed truth {b['speed_truth_mps']:.2f} m/s, by the law "
                    f"from the fit {b['speed_fit_mps']:.2f} m/s ({100 * b['speed_error_rel']:.2f} "
                    f"% off); e truth {b['restitution_truth']:.3f}, implied by the fitted Λ "
                    + (f"{b['restitution_implied_by_fit']:.3f} ± "
                       f"{b['restitution_implied_by_fit_se']:.3f} "
                       f"({b['restitution_error_in_se']:.2f} SE off)"
                       if b["restitution_implied_by_fit_se"] is not None else
                       "not read (a turf impulse in the ball's plane)")
                    + (f", by the markers alone {b['restitution_markers_alone']:.3f} ± "
                       f"{b['restitution_markers_alone_se']:.3f}"
                       if b.get("restitution_markers_alone_se") is not None else "")
                    + "; residual impulse "
                    f"{b['residual_impulse_magnitude_Ns']:.3f} N·s; face effective mass "
                    f"{b['effective_mass_at_face_kg']:.3f} kg"
                    + ("" if b.get("turf_truth_Ns") is None else
                       f"; turf impulse truth {np.round(b['turf_truth_Ns'], 3)} N·s, fit "
                       f"{np.round(b['turf_fit_Ns'], 3)} N·s, |error| "
                       f"{b['turf_error_Ns']:.3f} N·s"))
            if r.get("ring_profile"):
                say(f"{'':8s} ringing: truth "
                    f"{'none' if tr.ring is None else format(tr.ring['frequency_hz'], 'g') + ' Hz'}"
                    f"; the fit's costs " + ", ".join(
                        f"{'none' if p['hz'] is None else format(p['hz'], '.1f') + ' Hz'} "
                        f"{p['cost']:.1f}" for p in r["ring_profile"]))
    say(f"truth: joint torque RMS top → impact {r['torque_rms_truth_Nm']:.1f} N·m; the "
        f"truth's own pelvis residual ≤ {tr.residual_peak_N:.2f} N; mean vertical force "
        f"per foot (fit, truth, last seed) "
        + ", ".join(f"{s}: {v['fit']:.2f} / {v['truth']:.2f} BW"
                    for s, v in r["foot_vertical_mean_bw"].items()))
    out = Path(args.out)
    old = out.read_text().splitlines() if out.exists() else [RECORD_HEADER]
    out.write_text("\n".join(old[:1] + lines + [""] + old[1:]) + "\n")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()

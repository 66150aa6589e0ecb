"""`harness track` on the whole of OpenSim's gait2392 walking trial (subject01 walk1,
data/opensim_models/gait2392_walk1), beside OpenSim's own tools and against the standard
pipeline's stored results.

Dimensions: F frames (the IK setup's window t = 0.5–2.5 s: 121 frames at 60 Hz), n = 23
OpenSim coordinates. Units: deg (rotational coordinates), mm (pelvis translations and
markers), N and N·m (generalized forces), s (wall times: time.perf_counter; OpenSim runs in
the same process).

1. The command itself (``api.track``), its summary figures and OpenSim's live tools';
   again with ``--lowpass-hz 6``.
2. Our IK against the pipeline's stored IK result (OutputReference/subject01_walk1_ik.mot,
   from an older OpenSim with the setup's IKCoordinateTasks that hold the subtalar and toe
   angles at their defaults; the command has no coordinate tasks on either side), and the
   stored solution's marker RMSE scored by the same function as ours.
3. Our ID on the stored IK result against OpenSim's InverseDynamicsTool on the same, no
   filter (the command's comparison, on the pipeline's kinematics, t = 0.4–1.6 s as the ID
   setup); and, informational only, the stored ID result (InverseDynamicsOutput.sto: the
   setup's 6 Hz low-pass filter on its own coordinates file, which is not copied) against
   ours.

Run: ``.venv/bin/python bench/track_gait2392.py [--out /tmp/track_bench]`` (writes
bench/track_gait2392.txt beside this file with --write).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import api  # noqa: E402
from harness.capture.ik import Held  # noqa: E402
from harness.capture.motion_files import (  # noqa: E402
    read_external_loads,
    read_table,
    read_trc,
    table_text,
)
from harness.model import registry  # noqa: E402
from harness.model.osim_import import load_osim_with_notes  # noqa: E402
from harness.model.prepared import PreparedModel  # noqa: E402
from harness.track import dynamics  # noqa: E402
from harness.track.run import Coordinates, _rel, ik_weights, marker_errors  # noqa: E402

DATA = ROOT / "data" / "opensim_models" / "gait2392_walk1"
MODEL, TRC = DATA / "subject01_simbody.osim", DATA / "subject01_walk1.trc"
LOADS, SETUP = DATA / "subject01_walk1_grf.xml", DATA / "subject01_Setup_IK.xml"


def reference_q(coords, adapter, held, lo, hi):
    """(t, Q canonical, X OpenSim units) of the stored IK result in [lo, hi] s."""
    ref = read_table(str(DATA / "subject01_walk1_ik.mot"))
    keep = (ref.t >= lo - 1e-9) & (ref.t <= hi + 1e-9)
    X = np.stack([ref.column(n, "ik.mot") for n in coords.names], axis=1)[keep]
    X[:, coords.rotational] = np.radians(X[:, coords.rotational])
    return ref.t[keep], coords.to_canonical(X, coords.names, adapter.nq, held), X


def replay_lines(s, say):
    """The replay's figures of a summary: horizon, segments, per engine and segment the
    largest deviation from the tracked q [rad | m] (worst coordinate), the largest
    engine-pair difference, the records not passed."""
    r = s["replay"]
    if r is None:
        say(f"  replay: not run ({s['not_run'].get('engines_replayed')})")
        return
    say(f"  replay in {', '.join(r['engines'])}: horizon {r['horizon_s']:.4f} s, "
        f"{len(r['segments'])} segments, scored t = {s['replay_window_s']} s, bound "
        f"{r['bound_rad_or_m']:g} rad | m; passed every segment: "
        f"{', '.join(s['engines_replayed']) or 'none'}")
    for g in r["segments"]:
        devs = "; ".join(f"{e} {d['q_dev_max']:.2e} ({d['worst_coordinate']})"
                         for e, d in g["engines"].items())
        pair = max((d["max_abs"] for d in g["pairs"].values() if d["max_abs"] is not None),
                   default=float("nan"))
        say(f"    {g['case']}: max |q − q_tracked| {devs}; largest engine-pair difference "
            f"{pair:.1e}; records {g['records']['passed']}/{g['records']['total']} passed"
            + (f" (not: {', '.join(g['records']['not_passed'])})"
               if g["records"]["not_passed"] else ""))


def _reduction(say, s, label):
    r = s["residual_reduction"]
    say(f"  {label}: residual force mean {s['residual_force_mean_before_N']:.1f} → "
        f"{s['residual_force_mean_N']:.3f} N (peak {s['residual_force_peak_before_N']:.1f} → "
        f"{s['residual_force_peak_N']:.3f}); moment mean {s['residual_moment_mean_before_Nm']:.1f}"
        f" → {s['residual_moment_mean_Nm']:.3f} N·m (peak {s['residual_moment_peak_before_Nm']:.1f}"
        f" → {s['residual_moment_peak_Nm']:.3f}); marker RMSE {s['marker_rmse_mm']:.2f} → "
        f"{r['marker_rmse_mm']:.2f} mm; wall {r['wall_s']:.1f} s")
    say(f"    mass change {r['mass_change_kg']:+.3f} kg (scale {r['mass_scale']:.5f} of "
        f"{r['mass_total_before_kg']:.2f} kg), {len(r['costs']) - 1} iterations; "
        f"{r['com_body']} mass centre shift "
        + " ".join(f"{1000 * x:+.1f}" for x in r["com_shift_m"]) + " mm; mean moments "
        + " ".join(f"{x:+.2f}" for x in r["mean_moments_before_com_Nm"]) + " → "
        + " ".join(f"{x:+.2f}" for x in r["mean_moments_after_com_Nm"]) + " N·m")
    say("    signed mean residuals after: " + ", ".join(
        f"{k} {v:+.4f}" for k, v in r["residual_signed_mean"].items()))
    say(f"    ranges: {r['values_at_a_range_bound']} value(s) of the reduced kinematics on a "
        f"bound; frames outside a range: {r['outside_range_before']['frames']} before "
        f"({r['outside_range_before']['coordinates'] or 'none'}), "
        f"{r['outside_range']['frames']} after")
    verdict = {True: "met", False: "NOT met", None: "not run"}
    say("    " + "; ".join(f"{c['name']}: {c['value']:.4g} ({c['target']}) {verdict[c['ok']]}"
                          for c in s["checks"] if "reduction" in c["name"]))


def adjusted_models(say, work):
    """The adjusted models as OpenSim reads them (the tools engine's motion_model_masses):
    ours (adjusted.osim of each run) and RRA's (subject01_simbody_adjusted.osim), total
    mass and torso mass centre against the input model's."""
    tools = registry.adapter_class(registry.providing("motion_model_masses")[0])
    base = tools.motion_model_masses(str(MODEL))
    c0 = np.array(base["bodies"]["torso"]["com_m"])
    say(f"  adjusted models as OpenSim reads them (the input: {base['total_mass_kg']:.3f} kg):")
    for label, path in (("ours, unfiltered", work / "walk1" / "adjusted.osim"),
                        ("ours, 6 Hz", work / "walk1_6hz" / "adjusted.osim"),
                        ("RRA's", DATA / "subject01_simbody_adjusted.osim")):
        m = tools.motion_model_masses(str(path))
        c1 = np.array(m["bodies"]["torso"]["com_m"])
        say(f"    {label}: total mass {m['total_mass_kg']:.3f} kg "
            f"({m['total_mass_kg'] - base['total_mass_kg']:+.3f}); torso mass-centre shift "
            + " ".join(f"{1000 * x:+.1f}" for x in c1 - c0) + " mm"
            + (" (RRA recommends a mass change, it does not apply it)" if "RRA" in label
               else ""))


def rra_section(say, s, f6, work):
    """Our reduction beside OpenSim's RRA (the pipeline's stored results, t = 0.5–2.0 s)."""
    say("Residual reduction (RRA-like), whole trial:")
    _reduction(say, s, "unfiltered IK")
    _reduction(say, f6, "--lowpass-hz 6 (RRA's own cut-off)")
    avg = (DATA / "subject01_walk1_RRA_avgResiduals.txt").read_text().split("\n")
    say("  OpenSim's RRA (stored, t = 0.5–2.0 s), its averages (signed means): "
        + ", ".join(x.replace(" average =", "").strip() for x in avg if "average" in x))
    act = read_table(str(DATA / "subject01_walk1_RRA_Actuation_force.sto"))
    Fr = np.stack([act.column(c, "RRA") for c in ("FX", "FY", "FZ")], 1)
    Mr = np.stack([act.column(c, "RRA") for c in ("MX", "MY", "MZ")], 1)
    nf, nm = np.linalg.norm(Fr, axis=1), np.linalg.norm(Mr, axis=1)
    say(f"    its residual actuators' mean norm: force {np.mean(nf):.2f} N (peak "
        f"{np.max(nf):.2f}), moment {np.mean(nm):.2f} N·m (peak {np.max(nm):.2f})")
    spec, _ = load_osim_with_notes(str(MODEL), ranges_as_limits=True)
    adapter = registry.adapter_class("pinocchio")(PreparedModel(spec, "bench_rra"))
    held = Held.of(adapter.layout, spec.couplings)
    coords = Coordinates(adapter, spec, {})
    mk = read_trc(str(TRC))
    w = ik_weights(str(SETUP))
    labels = [m for m in mk.labels if m in w]
    rows_t = np.flatnonzero((mk.t >= 0.5 - 1e-9) & (mk.t <= 1.999 + 1e-9))
    Y = mk.xyz[rows_t][:, [mk.labels.index(m) for m in labels]]
    rra_q = read_table(str(DATA / "subject01_walk1_RRA_Kinematics_q.mot"))  # degrees (header)
    X = np.stack([np.interp(mk.t[rows_t], rra_q.t, rra_q.column(n, "RRA"))
                  for n in coords.names], 1)
    X[:, coords.rotational] = np.radians(X[:, coords.rotational])
    r_rra, m_rra = marker_errors(adapter, labels, coords.to_canonical(
        X, coords.names, adapter.nq, held), Y)
    say(f"    the marker RMSE of RRA's kinematics (scored as ours, t = 0.5–2.0 s at the "
        f".trc frames): {1000 * r_rra:.2f} mm, largest {1000 * m_rra:.2f} mm")
    adjusted_models(say, work)
    rra = read_table(str(DATA / "subject01_walk1_RRA_Kinematics_q.mot"))  # degrees (header)
    ik = read_table(str(DATA / "subject01_walk1_ik.mot"))
    for label, run in (("unfiltered", "walk1"), ("6 Hz", "walk1_6hz")):
        ours_q = read_table(str(work / run / "rra_q.sto"))
        ours_ik = read_table(str(work / run / "ik.mot"))
        keep = ours_q.t <= rra.t[-1] + 1e-9
        tt = ours_q.t[keep]
        rows = []
        for n in ours_q.columns:
            rot = n not in ("pelvis_tx", "pelvis_ty", "pelvis_tz")
            f = (lambda x: np.degrees(x)) if rot else (lambda x: 1000 * x)
            g = (lambda x: x) if rot else (lambda x: 1000 * x)
            d_ours = f(ours_q.column(n, "rra_q")[keep]) - g(ours_ik.column(n, "ik")[keep])
            d_rra = g(np.interp(tt, rra.t, rra.column(n, "RRA"))
                      - np.interp(tt, ik.t, ik.column(n, "ik")))
            rows.append(f"{n} {np.sqrt(np.mean(d_ours ** 2)):.2f}/{np.max(np.abs(d_ours)):.2f}"
                        f" vs {np.sqrt(np.mean(d_rra ** 2)):.2f}/{np.max(np.abs(d_rra)):.2f}")
        say(f"  kinematic change from the IK, RMS/max [deg | mm], ours ({label}, rra_q − ik.mot)"
            f" vs RRA's (RRA_Kinematics_q − the stored IK), t = {tt[0]:.3f}–{tt[-1]:.3f} s:")
        say("    " + "; ".join(rows))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--write", action="store_true", help="write bench/track_gait2392.txt")
    args = ap.parse_args(argv)
    lines = []

    def say(s=""):
        print(s)
        lines.append(s)

    work = Path(args.out or tempfile.mkdtemp(prefix="track_bench_"))
    w0 = time.perf_counter()
    o = api.track(MODEL, TRC, out=work / "walk1", loads_path=LOADS, start=0.5, end=2.5)
    wall = time.perf_counter() - w0
    s = o.summary
    osim = s["reference_tool"]
    say(f"harness track, gait2392 subject01 walk1, t = {s['t_start_s']}–{s['t_end_s']} s, "
        f"{s['frames']} frames, {s['markers_tracked']} markers (weights of the IK setup), "
        f"engine {s['engine']}; exit code {o.exit_code}; command wall {wall:.1f} s")
    say(f"  marker RMSE: ours {s['marker_rmse_mm']:.3f} mm, OpenSim's IK "
        f"{osim['marker_rmse_mm']:.3f} mm (its own report {osim['marker_rmse_mm_own_report']:.3f});"
        f" largest: ours {s['marker_max_mm']:.2f} mm, OpenSim's {osim['marker_max_mm']:.2f} mm")
    say(f"  IK against OpenSim's live IK: worst coordinate RMS {s['ik_vs_opensim_rms_deg']:.3f}"
        f" deg (target ≤ 2), pelvis translations "
        + ", ".join(f"{k} {v:.3f} mm" for k, v in osim["ik_rms_mm"].items()))
    say("    per coordinate [deg]: " + ", ".join(f"{k} {v:.2f}" for k, v in
                                                 osim["ik_rms_deg"].items()))
    say(f"  ID against OpenSim's InverseDynamicsTool (same q, same derivative scheme, same "
        f"loads): {s['id_vs_opensim_rel']:.2e} relative (target ≤ 1e-6)")
    say(f"  residuals before the reduction (pelvis generalized forces): force mean "
        f"{s['residual_force_mean_before_N']:.1f} N, peak {s['residual_force_peak_before_N']:.1f}"
        f" N; moment mean {s['residual_moment_mean_before_Nm']:.1f} N·m, peak "
        f"{s['residual_moment_peak_before_Nm']:.1f} N·m")
    say(f"  wall: our IK + ID {s['fit_wall_s']:.2f} s; OpenSim's IK tool {osim['ik_wall_s']:.2f}"
        f" s, ID tool {osim['id_wall_s']:.2f} s")
    replay_lines(s, say)

    f6 = api.track(MODEL, TRC, out=work / "walk1_6hz", loads_path=LOADS, start=0.5, end=2.5,
                   lowpass_hz=6.0).summary
    say(f"  with --lowpass-hz 6 (the pipeline's ID cut-off, both sides fed the filtered q): "
        f"ID against OpenSim's {f6['id_vs_opensim_rel']:.2e} relative; residual force mean "
        f"{f6['residual_force_mean_before_N']:.1f} N, peak "
        f"{f6['residual_force_peak_before_N']:.1f} N; moment mean "
        f"{f6['residual_moment_mean_before_Nm']:.1f} N·m, peak "
        f"{f6['residual_moment_peak_before_Nm']:.1f} N·m (before the reduction)")
    replay_lines(f6, say)
    tw = api.track(MODEL, TRC, out=work / "walk1_test_window", loads_path=LOADS, start=0.5,
                   end=0.8, lowpass_hz=6.0)
    say(f"  the tests' window t = 0.5–0.8 s with --lowpass-hz 6: exit code {tw.exit_code}")
    replay_lines(tw.summary, say)

    say()
    rra_section(say, s, f6, work)

    spec, notes = load_osim_with_notes(str(MODEL), ranges_as_limits=True)
    adapter = registry.adapter_class("pinocchio")(PreparedModel(spec, "bench_track"))
    held = Held.of(adapter.layout, spec.couplings)
    coords = Coordinates(adapter, spec, {})
    ours = read_table(str(work / "walk1" / "ik.mot"))
    t_ref, Q_ref, X_ref = reference_q(coords, adapter, held, 0.5, 2.5)
    say()
    say(f"Against the pipeline's stored IK result (OutputReference, {len(t_ref)} frames):")
    if len(t_ref) != len(ours.t) or np.max(np.abs(t_ref - ours.t)) > 1e-6:
        say(f"  frames differ: stored t = {t_ref[0]}–{t_ref[-1]}, ours {ours.t[0]}–{ours.t[-1]}")
    else:
        rms = {}
        for k, n in enumerate(coords.names):
            d = ours.column(n, "ik.mot") - (np.degrees(X_ref[:, k]) if coords.rotational[k]
                                            else X_ref[:, k])
            rms[n] = float(np.sqrt(np.mean(d ** 2))) * (1 if coords.rotational[k] else 1000)
        rot = {n: v for n, v in rms.items() if coords.rotational[coords.names.index(n)]}
        worst = max(rot, key=rot.get)
        say(f"  worst rotational RMS {rot[worst]:.2f} deg ({worst}); median "
            f"{np.median(list(rot.values())):.2f} deg")
        say("    per coordinate [deg | mm]: " + ", ".join(f"{k} {v:.2f}" for k, v in
                                                         rms.items()))
        mk = read_trc(str(TRC))
        w = ik_weights(str(SETUP))
        labels = [m for m in mk.labels if m in w]
        rows = np.flatnonzero((mk.t >= 0.5 - 1e-9) & (mk.t <= 2.5 + 1e-9))
        Y = mk.xyz[rows][:, [mk.labels.index(m) for m in labels]]
        r, m = marker_errors(adapter, labels, Q_ref, Y)
        say(f"  the stored solution's marker RMSE {1000 * r:.3f} mm, largest {1000 * m:.2f} mm "
            f"(ours {s['marker_rmse_mm']:.3f} mm, {s['marker_max_mm']:.2f} mm)")

    say()
    t_id, Q_id, _ = reference_q(coords, adapter, held, 0.4, 1.6)
    tools = registry.adapter_class(registry.providing("motion_id_tool")[0])
    tmp = Path(tempfile.mkdtemp(prefix="track_bench_id_"))
    q_file = tmp / "q.sto"
    q_file.write_text(table_text("q", t_id, coords.names, coords.to_osim(Q_id), False))
    d = tools.motion_id_tool(str(MODEL), str(q_file), str(LOADS), float(t_id[0]),
                                       float(t_id[-1]), str(tmp))
    forces, _, table = read_external_loads(str(LOADS))
    tau = dynamics.inverse_dynamics(adapter, held, t_id, Q_id,
                                    dynamics.AppliedLoads.at(forces, table, t_id))[:, coords.iv]
    cols = [f"{n}_{'moment' if r else 'force'}" for n, r in zip(coords.names, coords.rotational)]
    theirs = d["tau"][:, [d["labels"].index(c) for c in cols]]
    say(f"ID on the stored IK result, t = {t_id[0]:.3f}–{t_id[-1]:.3f} s ({len(t_id)} frames), "
        f"ours against OpenSim's InverseDynamicsTool (no filter either side): "
        f"{_rel(tau, theirs):.2e} relative")
    stored = read_table(str(DATA / "InverseDynamicsOutput.sto"))
    at = np.array([np.argmin(np.abs(stored.t - x)) for x in t_id])
    ref = np.stack([stored.column(c, "InverseDynamicsOutput.sto") for c in cols], axis=1)[at]
    say(f"  informational: the stored ID result (the pipeline's ID setup: a 6 Hz low-pass "
        f"filter, and its own coordinates file starting at t = {stored.t[0]:.4f} s, not the "
        f"stored IK result used here) against ours, nearest rows: {_rel(tau, ref):.2e} "
        "relative")
    if args.write:
        (ROOT / "bench" / "track_gait2392.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`harness swing` end to end on the bundled capture (quick settings), and its bad input."""
from __future__ import annotations

import json
import os
import stat

from conftest import ROOT, run_cli

from harness.core.tolerances import lookup

CAPTURE = ROOT / "data" / "swing" / "driver.c3d"


def test_swing_quick_on_the_bundled_capture(quick_swing):
    tmp_path, out, p = quick_swing
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr
    # swapped in whole, honouring the umask (not a temporary folder's 0700), nothing beside
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
    assert [x.name for x in tmp_path.iterdir()] == ["swing"]
    fit = json.loads((out / "fit" / "fit.json").read_text())
    # checks recomputed here from the stored numbers, not read from the report's verdicts
    rmse = fit["fit"]["marker_rmse_by_phase_m"]["top_to_impact"]
    assert rmse <= lookup("swing", "marker_rmse").atol
    speed = fit["fit"]["club_head_speed_at_impact_mps"]
    assert abs(speed["fitted"] - speed["measured"]) < \
        lookup("swing", "impact_speed_fit").atol * speed["measured"]
    assert fit["capture"]["rejected"].keys() == {"Marker_0:0:0"}
    html = (out / "index.html").read_text()
    assert 'id="swing-summary"' in html and "replay/index.html" in html
    assert (out / "replay" / "manifest.json").is_file()
    assert p.returncode == (0 if "NOT met" not in p.stdout else 1)
    # the candidate is a valid replay input on its own
    from harness.model import candidate

    cand = candidate.load(out / "fit" / "candidate.json")
    assert cand.tau.shape[1] == 42          # with the legs (hips, knees, ankles)
    _independent_consistency(cand, out / "fit", fit)
    _ground_consistency(cand, out / "fit", fit)


SUMMARY = {"marker_rmse_mm", "marker_max_mm", "residual_force_peak_N", "residual_force_rms_N",
           "residual_moment_peak_Nm", "residual_moment_rms_Nm", "foot_contact_label",
           "min_normal_force_N", "max_penetration_mm", "max_slip_speed_mm_s", "fit_wall_s"}


def _ground_consistency(cand, fitdir, fit):
    """Drake recomputes the pelvis residual from the files: its inverse dynamics of the
    fitted spline at the frames minus the stored contact forces through its own contact
    Jacobians, as a wrench at the pelvis; the peaks must be fit.json's and within the
    thresholds; the stored forces must be feasible (normal ≥ 0, inside the cone)."""
    import numpy as np
    from scipy.interpolate import BSpline

    from harness.model import registry

    s = fit["summary"]
    assert set(s) >= SUMMARY and s["foot_contact_label"] == "assumed"
    z = np.load(fitdir / "trajectory.npz")
    S = BSpline(z["spline_knots"], z["spline_coefficients"], int(z["spline_degree"]))
    drake = registry.adapter_class("drake")(cand.model)
    frames = [str(x) for x in z["contact_frames"]]
    f = z["contact_forces"]
    mu = fit["ground"]["mu"]
    assert (f[:, :, 2] >= 0).all() and s["min_normal_force_N"] >= 0
    assert (np.linalg.norm(f[:, :, :2], axis=2) <= mu * f[:, :, 2] + 1e-9).all()
    pelvis = [drake.layout.slot(n).iv for n in ("pelvis_tx", "pelvis_ty", "pelvis_tz",
                                                 "pelvis_rz", "pelvis_rx", "pelvis_ry")]
    Fp, Mp = [], []
    for x, fi in zip(z["t"], f):
        q, v, a = S(x), S.derivative(1)(x), S.derivative(2)(x)
        Jc = drake.frame_jacobians(q, frames)[:, :3, :]
        tau = drake.inverse_dynamics(q, v, a) - np.einsum("cki,ck->i", Jc, fi)
        Jp = drake.frame_jacobians(q, ["pelvis"])[0][:, pelvis]
        W = np.linalg.solve(Jp.T, tau[pelvis])
        Fp.append(np.linalg.norm(W[:3]))
        Mp.append(np.linalg.norm(W[3:]))
    assert np.isclose(max(Fp), s["residual_force_peak_N"], rtol=1e-6, atol=1e-6)
    assert np.isclose(max(Mp), s["residual_moment_peak_Nm"], rtol=1e-6, atol=1e-6)
    assert max(Fp) <= lookup("swing", "residual_force_peak").atol
    assert max(Mp) <= lookup("swing", "residual_moment_peak").atol


def _independent_consistency(cand, fitdir, fit):
    """The fit is Pinocchio's; Drake recomputes its dynamic consistency from the files:
    (1) the candidate's controls against Drake's inverse dynamics of the fitted spline
    between replay knots (the defects), (2) Drake's open-loop DOP853 reintegration of the
    candidate over the whole window against the fitted motion, marker by marker."""
    import numpy as np
    from scipy.interpolate import BSpline

    from harness.model import registry
    from harness.model.integrators import Method, rollout

    z = np.load(fitdir / "trajectory.npz")
    S = BSpline(z["spline_knots"], z["spline_coefficients"], int(z["spline_degree"]))
    S1, S2 = S.derivative(1), S.derivative(2)
    drake = registry.adapter_class("drake")(cand.model)
    tr = z["t_replay"]
    assert np.array_equal(tr, cand.t)
    ctl = cand.controls()
    mid = 0.5 * (tr[1:] + tr[:-1])[::5]
    tau_id = np.stack([drake.inverse_dynamics(S(x), S1(x), S2(x)) for x in mid])
    tau_c = np.stack([ctl(float(x)) for x in mid])
    peak = np.maximum(np.abs(tau_id).max(axis=0), 0.05)
    assert (np.abs(tau_c - tau_id) / peak).max() <= lookup("swing", "defects").rtol
    r = rollout(drake, cand.q0, cand.v0, ctl, Method("dop853", rtol=1e-12, atol=1e-12))
    labels = [str(x) for x in z["labels"]]
    mr = np.stack([drake.frame_poses(q, labels)[:, :3] for q in r.q])
    mf = np.stack([drake.frame_poses(q, labels)[:, :3] for q in z["q_replay"]])
    rms = float(np.sqrt(np.mean(np.sum((mr - mf) ** 2, axis=2))))
    assert rms <= fit["fit"]["marker_rmse_by_phase_m"]["top_to_impact"], rms


def test_swing_bad_input(tmp_path):
    bad = tmp_path / "bad.c3d"
    bad.write_bytes(CAPTURE.read_bytes()[:600])
    p = run_cli("swing", bad, "--out", tmp_path / "o")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and str(bad) in p.stderr
    assert not (tmp_path / "o").exists()
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    p = run_cli("swing", CAPTURE, "--out", other)
    assert p.returncode == 2 and "refusing" in p.stderr
    assert (other / "keep.txt").read_text() == "mine"

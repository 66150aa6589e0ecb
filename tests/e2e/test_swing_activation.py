"""The swing's activation-driven refit (harness/swing/activation.py) on the shared quick
swing: the driven joints are exactly those no contact point moves with (MuJoCo); the
torque-driven fit's excitations are what MuJoCo's inverse dynamics of the fitted spline
and a root finder on the signed activation rate give; the report states both fits."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.tolerances import lookup


@pytest.fixture(scope="module")
def swing(quick_swing):
    from harness.model import registry
    from harness.swing import groundtruth as gt

    _, out, p = quick_swing
    assert (out / "fit" / "fit.json").is_file(), p.stderr
    full, _, doc, arr = gt.source(out)
    return out, doc, arr, registry.adapter_class("mujoco")(full.model)


def test_the_driven_joints_move_no_contact_point(swing):
    """Every activation-driven joint leaves all contact points in place when it turns (its
    generalized force takes no contact force); every leg joint moves one."""
    _, doc, arr, mj = swing
    rows = doc["activation"]["joints"]
    frames = [str(x) for x in arr["contact_frames"]]
    q0 = arr["q"][0]
    p0 = mj.frame_poses(q0, frames)[:, :3]
    still = lookup("kinematics", "frame_pose").atol
    assert sum(r["driven"] for r in rows) >= 20 and sum(not r["driven"] for r in rows) >= 10
    for r in rows:
        q = q0.copy()
        q[mj.layout.slot(r["joint"]).iq] += 0.1
        moved = np.abs(mj.frame_poses(q, frames)[:, :3] - p0).max()
        assert (moved <= still) == r["driven"], (r["joint"], moved)
    assert not any(r["joint"].startswith("pelvis_") for r in rows)


def test_torque_driven_excitations_are_mujocos(swing):
    """Per driven joint, the torque-driven fit's peak |torque|, peak |excitation| and count
    of intervals beyond ±1, recomputed from the fitted spline (scipy) with MuJoCo's
    inverse dynamics, a = τ/τ_max and the midpoint excitation found by brentq on the
    signed rate."""
    from scipy.interpolate import BSpline
    from scipy.optimize import brentq

    from harness.fit.activation import ActivationModel, signed_rate

    _, doc, arr, mj = swing
    r = doc["activation"]
    t = arr["t"]
    t_e = float(arr["impact_time_s"])
    deg = int(arr["spline_degree"])
    X = []
    for post, sel in ((False, t <= t_e), (True, t > t_e)):
        tail = "_post" if post else ""
        b = BSpline(arr["spline_knots" + tail], arr["spline_coefficients" + tail], deg)
        X.append([f(t[sel]) for f in (b, b.derivative(1), b.derivative(2))])
    q, v, vd = (np.vstack([X[0][k], X[1][k]]) for k in range(3))
    tau = np.stack([mj.inverse_dynamics(*x) for x in zip(q, v, vd)])
    h = float(r["model"]["frame_interval_s"])
    assert h == pytest.approx(float(t[1] - t[0]), rel=1e-12)
    model = ActivationModel(tau_act=r["model"]["tau_act_s"], tau_deact=r["model"]["tau_deact_s"])
    tol = lookup("swing", "activation_recompute")
    for row in (x for x in r["joints"] if x["driven"]):
        a = tau[:, mj.layout.slot(row["joint"]).iv] / row["tau_max_Nm"]
        e = np.array([brentq(lambda x, ab=0.5 * (a[i] + a[i + 1]),
                             ad=(a[i + 1] - a[i]) / h: float(signed_rate(x, ab, model)) - ad,
                             -20.0, 20.0, xtol=1e-14, rtol=1e-15)
                      for i in range(len(a) - 1)])
        got = row["torque"]
        peak = float(np.abs(a).max()) * row["tau_max_Nm"]
        assert abs(got["torque_peak_Nm"] - peak) <= tol.rtol * peak, row["joint"]
        assert abs(got["excitation_peak"] - np.abs(e).max()) <= tol.rtol * np.abs(e).max()
        assert got["intervals_beyond_one"] == int((np.abs(e) > 1.0).sum()), row["joint"]


def test_the_report_states_both_fits(swing, quick_swing):
    """The section's table quotes fit.json's figures of both fits; the command prints the
    comparison's check row as reported, never as met or NOT met."""
    out, doc, _, _ = swing
    r = doc["activation"]
    html = (out / "index.html").read_text()
    sec = html[html.index("id='activation'"):]
    sec = sec[:sec.index("</table>")]
    for f in (r["fits"]["torque"], r["fits"]["activation"]):
        for key in ("marker_rmse_top_to_impact_mm", "residual_force_peak_N"):
            assert f"<td>{f[key]:.1f}</td>" in sec, key
        assert f"<td>{f['excitation_peak_driven']:.3f}</td>" in sec
        assert f"<td>{f['intervals_beyond_one_driven']}</td>" in sec
    # the charts of the largest excitations, both fits against the bound
    after = html[html.index("id='activation'"):]
    assert "excitation [\\u2013]" in after or "excitation [–]" in after
    line = [x for x in quick_swing[2].stdout.splitlines() if "activation-driven" in x]
    assert len(line) == 1 and line[0].lstrip().startswith("reported"), line

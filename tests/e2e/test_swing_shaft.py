"""The swing fit with the club's shaft bending at one point (``harness swing --shaft flex``)
on the bundled capture, quick settings, the club on the grip hinge: the bend the fit finds
follows the bend the markers show, which no rigid club can, and the bent shaft's figures
in fit.json are what Drake recomputes from the run's files."""
from __future__ import annotations

import json

import numpy as np
import pytest

from harness.core.tolerances import lookup
from tests.conftest import ROOT, run_cli, tol_kw

CAPTURE = ROOT / "data" / "swing" / "driver.c3d"
WEIGHED = (0.32, 0.205)     # kg, whole club and head: a weighed driver (--club-masses)


@pytest.fixture(scope="module")
def bent_swing(tmp_path_factory):
    out = tmp_path_factory.mktemp("bent") / "swing"
    p = run_cli("swing", CAPTURE, "--quick", "--grip", "hinge", "--shaft", "flex",
                f"--club-masses={WEIGHED[0]},{WEIGHED[1]}", "--no-replay", "--out", out,
                timeout=1200)
    assert p.returncode in (0, 1), p.stderr
    fit = json.loads((out / "fit" / "fit.json").read_text())
    return out, fit


def _distances(fit, fitdir):
    """The club head's distance from the shaft markers' line [m] per frame from the top to
    the last frame before contact: measured (trajectory.npz's markers) and fitted (Drake's
    marker frames of the fitted q)."""
    from harness.capture.events import across_shaft
    from harness.capture.markerset import DRIVER_SWING
    from harness.model import candidate, registry

    z = np.load(fitdir / "trajectory.npz")
    labels = [str(x) for x in z["labels"]]
    head = [labels.index(l) for l in DRIVER_SWING.club_head]
    shaft = [labels.index(l) for l in DRIVER_SWING.shaft]
    drake = registry.adapter_class("drake")(candidate.load(fitdir / "candidate.json").model)
    P = np.stack([drake.frame_poses(q, labels)[:, :3] for q in z["q"]])
    w = fit["window"]
    down = slice(w["top_frame"] - w["first_frame"], w["impact_frame"] - w["first_frame"] + 1)
    y = z["y"][down]
    return (across_shaft(y[:, head].mean(axis=1), y[:, shaft]),
            across_shaft(P[down][:, head].mean(axis=1), P[down][:, shaft]))


def test_the_bend_follows_the_markers(bent_swing, quick_swing):
    """The head's distance from the shaft markers' line changes by about 12 cm from the
    top to contact in the capture. A rigid club holds it fixed (checked on the default
    quick swing, whose club is rigid), so the best it can do leaves the measured
    distances' standard deviation; the bent shaft's fit must leave less than that, RMS,
    over the frames whose head and shaft markers the capture sees. Its two coordinates
    are in the model, and the report's header and checks say the shaft bends."""
    out, fit = bent_swing
    meas, fitted = _distances(fit, out / "fit")
    seen = np.isfinite(meas)          # a frame without its head markers has no measure
    assert np.isfinite(fitted).all() and seen.sum() >= 2
    assert fit["model"]["nv"] == 47 and set(fit["shaft"]) >= {"club_flex_x", "club_flex_y"}
    page = (out / "index.html").read_text()
    assert "its shaft bending at one point, --shaft flex" in page and "the bent shaft" in page
    rigid_meas, rigid = _distances(json.loads(
        (quick_swing[1] / "fit" / "fit.json").read_text()), quick_swing[1] / "fit")
    tol = lookup("kinematics", "frame_pose")
    assert np.ptp(rigid) <= tol.atol + tol.rtol * np.abs(rigid).max()
    np.testing.assert_array_equal(rigid_meas, meas)
    misfit = float(np.sqrt(np.mean((fitted[seen] - meas[seen]) ** 2)))
    assert misfit < float(np.std(meas[seen])), (misfit, float(np.std(meas[seen])))


def test_the_shaft_figures_are_drakes(bent_swing):
    """fit.json's bend ranges, deflections, moments and nearest spring, recomputed from
    trajectory.npz: the angles and rates of the fitted spline at the frames (SciPy), the
    moments by Drake's inverse dynamics of that spline (each phase its own), and the same
    least squares. The refit with each moment held to its spring holds it closer than the
    free fit did."""
    from types import SimpleNamespace

    from scipy.interpolate import BSpline

    from fixtures.golfers import GolferDims
    from harness.model import candidate, registry
    from harness.swing.pipeline import shaft_figures

    out, fit = bent_swing
    z = np.load(out / "fit" / "trajectory.npz")
    deg = int(z["spline_degree"])
    pre = BSpline(z["spline_knots"], z["spline_coefficients"], deg)
    post = BSpline(z["spline_knots_post"], z["spline_coefficients_post"], deg)
    t_e = float(z["impact_time_s"])
    model = candidate.load(out / "fit" / "candidate.json").model
    drake = registry.adapter_class("drake")(model)
    q, v, tau = [], [], []
    for x in z["t"]:
        S = pre if x < t_e else post
        q.append(S(x))
        v.append(S.derivative(1)(x))
        tau.append(drake.inverse_dynamics(q[-1], v[-1], S.derivative(2)(x)))
    q, v, tau = map(np.asarray, (q, v, tau))
    np.testing.assert_allclose(q, z["q"], **tol_kw("swing", "spline_samples"))
    dims = GolferDims(**fit["model"]["dims"])
    again = shaft_figures(model.layout, SimpleNamespace(q=q, v=v, act=None, tau=tau), dims)
    t = lookup("swing", "shaft_law_other_engine")
    for n in ("club_flex_x", "club_flex_y"):
        a, b = fit["shaft"][n], again[n]
        for key in ("angle_range_rad", "deflection_range_mm", "moment_range_Nm"):
            np.testing.assert_allclose(a[key], b[key], rtol=t.rtol, atol=t.atol, err_msg=key)
        for key in ("stiffness_Nm_per_rad", "damping_Nms_per_rad", "offset_Nm", "r2"):
            assert a[key] == pytest.approx(b[key], rel=t.rtol, abs=t.atol), (n, key)
        # the refit that holds the moment to that spring holds it closer than the free
        # fit came: its violation RMS below the free moment's residual from the law
        m = tau[:, model.layout.slot(n).iv]
        free = float(np.sqrt(max(1.0 - b["r2"], 0.0)) * np.std(m))
        assert a["held_to_law"]["law_violation_rms_Nm"] < free, (n, free)



def test_a_weighed_clubs_masses_reach_the_fitted_model(bent_swing):
    """The run was given the club's masses (--club-masses): fit.json's model says so, and
    the fitted golfer's whole-body mass in MuJoCo exceeds that of the same golfer built
    with the typical driver's masses by the difference of the two clubs' totals."""
    from fixtures.golfers import CLUB_MASSES_KG, GolferDims, golfer3d
    from harness.model import candidate, registry
    from harness.model.prepared import PreparedModel

    out, fit = bent_swing
    club = fit["model"]["club"]
    assert club["masses_kg"] == list(WEIGHED) and "--club-masses" in club["how"]
    dims = fit["model"]["dims"]
    assert (dims["club_mass_kg"], dims["club_head_mass_kg"]) == WEIGHED

    def total(model):
        a = registry.adapter_class("mujoco")(model)
        return float(a.mass_matrix(np.zeros(a.nq))[a.layout.slot("pelvis_tx").iv,
                                                  a.layout.slot("pelvis_tx").iv])

    typical = GolferDims(**dims).for_club("driver")
    spec = golfer3d(typical, root="actuated", grip="hinge", shaft="flex")
    fitted = total(candidate.load(out / "fit" / "candidate.json").model)
    tol = lookup("dynamics", "mass_matrix")
    assert fitted - total(PreparedModel(spec.validate(), "test:typical")) == pytest.approx(
        WEIGHED[0] - CLUB_MASSES_KG["driver"][0], abs=tol.atol + tol.rtol * fitted)
    assert f"{WEIGHED[0]:g} kg with a {WEIGHED[1]:g} kg head" in \
        (out / "index.html").read_text()

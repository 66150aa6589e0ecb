"""The swing's model-dimension comparison (harness/swing/dimension.py) on the shared quick
swing: a locked coordinate is the full golfer at that angle in another engine; the
held-out scores are what another engine and the Gaussian formula give for the fitted
coordinates; every frame is held out once; the wrists' deviation, which moves the club
markers, is kept; the report section marks one choice."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.tolerances import lookup


def _full_q(full, cand, q, angles):
    """The full golfer's coordinates (nv,) from a candidate's, the locked ones at
    ``angles`` {joint: rad}."""
    x = np.zeros(full.nv)
    for k, n in enumerate(cand):
        x[full.layout.slot(n).iv] = q[k]
    for n, a in angles.items():
        x[full.layout.slot(n).iv] = a
    return x


def test_a_locked_joint_is_the_full_golfer_at_that_angle(quick_swing):
    """locked_spec's model (the fit's engine) places every marker and contact point where
    MuJoCo's full golfer does with the locked coordinates at the same angles."""
    from harness.model import registry
    from harness.swing import dimension as dim
    from harness.swing import groundtruth as gt

    _, out, p = quick_swing
    assert (out / "fit" / "fit.json").is_file(), p.stderr
    full, _, _, arr = gt.source(out)
    mj = registry.adapter_class("mujoco")(full.model)
    joints = dim.STEP[1]
    angles = {joints[0]: 0.31, joints[1]: -0.27}
    locked = dim._adapter(dim.locked_spec(full.model.spec, angles), "test")
    assert locked.nv == full.nv - 2 and registry.preferred("fit") != "mujoco"
    names = [str(x) for x in arr["labels"]] + [str(x) for x in arr["contact_frames"]]
    tol = lookup("kinematics", "frame_pose")
    for i in (0, len(arr["q"]) // 2, len(arr["q"]) - 1):
        q = np.delete(arr["q"][i], [full.layout.slot(j).iv for j in joints])
        a = locked.frame_poses(q, names)
        b = mj.frame_poses(_full_q(full, locked.joint_names, q, angles), names)
        assert np.abs(a - b).max() <= tol.atol + tol.rtol * np.abs(b).max()


@pytest.fixture(scope="module")
def compared(quick_swing):
    from harness.swing import dimension as dim

    _, out, _ = quick_swing
    return out, dim.run_dimension(out, folds=2, absorption=False)


def test_heldout_scores_are_the_gaussian_likelihood_of_the_fitted_markers(compared):
    """Each candidate's held-out log-likelihood, recomputed from its fitted coordinates
    with MuJoCo's full golfer (the locked coordinates at 0) and log N(y; p, σ²I) written
    out, over the markers seen at every frame; the held-out RMSE likewise."""
    from harness.model import registry
    from harness.swing import dimension as dim
    from harness.swing import groundtruth as gt

    out, r = compared
    full, s, _, arr = gt.source(out)
    mj = registry.adapter_class("mujoco")(full.model)
    labels = [str(x) for x in arr["labels"]]
    Y = np.asarray(arr["y"], float)
    sig = s.sigma_marker_m
    tol = lookup("swing", "dimension_loglik")
    rows = {row["name"]: row for row in r["candidates"]}
    joints = dim.STEP[1]
    for name, qh in zip(r["names"], r["qhat"]):
        angles = {} if name == "with" else dict.fromkeys(joints, 0.0)
        order = full.joint_names if name == "with" else \
            [j for j in full.joint_names if j not in joints]
        assert qh.shape == (len(Y), len(order)) and np.isfinite(qh).all()
        P = np.stack([mj.frame_poses(_full_q(full, order, q, angles), labels)[:, :3]
                      for q in qh])
        r2 = np.sum((P - Y) ** 2, axis=2)
        seen = np.isfinite(r2)
        ll = np.sum(-1.5 * np.log(2 * np.pi * sig ** 2) - r2[seen] / (2 * sig ** 2))
        assert rows[name]["heldout_loglik"] == pytest.approx(ll, rel=tol.rtol)
        rmse = 1e3 * np.sqrt(np.mean(r2[seen]))
        assert rows[name]["heldout_rmse_mm"] == pytest.approx(rmse, rel=tol.rtol)
    # every frame held out once: per-frame scores exist for all frames of each candidate
    assert r["ll"].shape == (2, len(Y)) and (r["ll"] != 0).all()


def test_the_wrist_deviation_is_kept_and_the_section_marks_it(compared):
    """The club markers need the wrists' deviation: 'with' has the larger held-out score by
    more than dimension/gain_z standard errors, on the markers the coordinates move (the
    club's), and is chosen; the report section marks one choice."""
    from harness.swing import dimension as dim

    _, r = compared
    z = lookup("dimension", "gain_z").atol
    rows = {row["name"]: row for row in r["candidates"]}
    assert r["choice"] == r["selected"] == "with"
    assert rows["without"]["below_selected"]["z"] >= z
    assert rows["with"]["heldout_rmse_mm"] < rows["without"]["heldout_rmse_mm"]
    assert r["contact_separation"]["gain_on_moved"]["z"] >= z
    # the club is welded to the lead hand, distal to the lead wrist's deviation; the
    # trail hand carries no marker: the moved markers are the club's, as the marker set
    # names them
    from harness.capture.markerset import DRIVER_SWING

    assert set(r["contact_separation"]["moved_markers"]) == \
        set(DRIVER_SWING.club_head + DRIVER_SWING.shaft)
    title, html = dim.section(dim.plain(r))
    assert "id='dimension'" in html and html.count("(chosen)") == 1
    assert dim.check(dim.plain(r))["ok"] is None

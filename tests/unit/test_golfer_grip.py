"""The golfer with the club on a hinge in the lead hand's grip (``golfer3d(grip="hinge")``):
every engine builds the same model as Pinocchio, the hinge at zero is the welded golfer,
and on the bundled capture the hinge is what the lead wrist marker needs."""
from __future__ import annotations

import numpy as np
import pytest

from fixtures.golfers import golfer3d
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.prepared import PreparedModel
from tests.conftest import assert_builds_alike, assert_close

ENGINES = ("mujoco", "crocoddyl", "drake", "opensim")


@pytest.fixture(scope="module")
def hinged():
    return PreparedModel(golfer3d(grip="hinge", name="golfer3d_hinge").validate(),
                         "test:golfer3d_hinge")


@pytest.mark.parametrize("engine", ENGINES)
def test_every_engine_builds_the_hinged_golfer_as_pinocchio_does(hinged, engine):
    """Frame poses (Crocoddyl has no kinematics of its own: not provided there, as in
    stage 1), the mass matrix and forward dynamics at random states against
    Pinocchio's."""
    other = registry.adapter_class(engine)(hinged)
    pin = registry.adapter_class("pinocchio")(hinged)
    assert_builds_alike(other, pin, hinged, 7, engine, kinematics=engine != "crocoddyl")


def test_the_hinge_at_zero_is_the_welded_golfer(hinged):
    """With l_grip = 0 every frame sits where the welded golfer (MuJoCo) puts it, and the
    hinged golfer's mass matrix without the hinge's row and column is the welded one's."""
    welded = PreparedModel(golfer3d().validate(), "test:golfer3d")
    a = registry.adapter_class("drake")(hinged)
    b = registry.adapter_class("mujoco")(welded)
    assert a.nv == b.nv + 1
    k = hinged.layout.slot("l_grip").iv
    rng = np.random.default_rng(11)
    for _ in range(3):
        qb = welded.layout.random_q(rng)
        qa = np.insert(qb, hinged.layout.slot("l_grip").iq, 0.0)
        assert_close(a.frame_poses(qa, welded.frames), b.frame_poses(qb, welded.frames),
                     "kinematics", "frame_pose", "hinge at zero")
        Ma = np.delete(np.delete(a.mass_matrix(qa), k, 0), k, 1)
        assert_close(Ma, b.mass_matrix(qb), "dynamics", "mass_matrix", "hinge at zero")


def test_the_hinge_brings_the_lead_wrist_marker_within_the_maximum():
    """On the bundled capture, the quick calibration and the IK over the fitted window
    (the swing's own steps) with the club welded and hinged: the hinge lowers the lead
    wrist marker's largest error from the top to impact, and brings it within the swing's
    marker maximum, which the welded club misses."""
    from harness.capture import events as cap_events
    from harness.capture import ik
    from harness.capture.ingest import ingest
    from harness.swing import scaling
    from harness.swing.pipeline import QUICK, address_frames, calibration_frames

    cap = ingest("data/swing/driver.c3d")
    ev = cap_events.detect(cap)
    dims, _ = scaling.dims_from_capture(cap, address_frames(ev),
                                        body_mass_kg=QUICK.body_mass_kg)
    frames = calibration_frames(ev, QUICK)
    ref = registry.adapter_class(registry.preferred("fit"))
    win = np.arange(ev.top_frame, ev.impact_frame + 1)
    worst = {}
    for grip in ("weld", "hinge"):
        _, adapter, res, _, labels = scaling.calibrate(
            ref, cap, frames, dims, rounds=QUICK.calib_rounds, relax=QUICK.calib_relax,
            grip=grip)
        Y = np.stack([cap.marker(l)[win] for l in labels], axis=1)
        k0 = int(np.argmin(np.abs(frames - win[0])))
        r = ik.track(adapter, labels, Y, res.q[k0], pairs=scaling.GRIP_PAIRS)
        worst[grip] = float(np.nanmax(np.linalg.norm(r.residual, axis=2)[
            :, labels.index("LWristTop")]))
    limit = lookup("swing", "marker_max").atol
    assert worst["hinge"] <= limit < worst["weld"], worst

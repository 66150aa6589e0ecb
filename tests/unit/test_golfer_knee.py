"""The golfer's knee: with the pelvis placed and a foot planted (its three contact points
held), the leg keeps a motion that carries the thigh's knee marker round the hip–ankle
line — the tibia's axial rotation. A hinge knee left the six leg coordinates fixed by the
foot's six. Checked with Pinocchio's Jacobians and Drake's frame positions (finite
differences along the free direction)."""
from __future__ import annotations

import numpy as np
from conftest import adapter

from fixtures.golfers import contact_frame
from harness.core.conventions import canonical_integrate
from harness.core.tolerances import lookup


def test_planted_leg_keeps_a_motion_that_moves_the_knee_marker():
    pin, drake = adapter("pinocchio", "golfer3d"), adapter("drake", "golfer3d")
    lay = pin.layout
    q = lay.neutral()
    for name, val in (("l_hip_y", -0.4), ("l_knee", 0.5), ("l_ankle_flexion", -0.1)):
        q[lay.slot(name).iq] = val
    leg = [s.iv for s in lay.slots if s.name.startswith(("l_hip", "l_knee", "l_ankle"))]
    feet = [contact_frame("l", p) for p in ("heel", "mt1", "mt5")]
    Jc = pin.frame_jacobians(q, feet)[:, :3, :].reshape(-1, pin.nv)[:, leg]
    _, sv, Vt = np.linalg.svd(Jc)
    rank = int(np.sum(sv > 1e-9 * sv[0]))
    assert len(leg) - rank == 1                     # one motion of the planted leg
    n = Vt[-1]
    Jk = pin.frame_jacobians(q, ["LKneeOut"])[0, :3, :][:, leg]
    assert np.linalg.norm(Jk @ n) > 0.01           # it moves the knee marker (m/rad)
    # Drake's positions along it: the knee marker moves at that rate, the foot does not
    # (second order only)
    eps = 1e-6
    dq = np.zeros(pin.nv)
    dq[leg] = eps * n
    qp, qm = canonical_integrate(lay, q, dq), canonical_integrate(lay, q, -dq)
    fd_knee = (drake.frame_poses(qp, ["LKneeOut"])[0, :3]
               - drake.frame_poses(qm, ["LKneeOut"])[0, :3]) / (2 * eps)
    fd_feet = (drake.frame_poses(qp, feet)[:, :3] - drake.frame_poses(qm, feet)[:, :3]) / (2 * eps)
    tol = lookup("swing", "jacobian/finite_difference").rtol
    assert np.abs(fd_knee - Jk @ n).max() <= tol * np.abs(Jk @ n).max()
    assert np.abs(fd_feet).max() <= tol * np.abs(Jk @ n).max()

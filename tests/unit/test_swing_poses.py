"""The swing report's stick figures (harness/swing/poses.py): the skeleton covers the
golfer's chain with segments of the joint offsets' lengths, and the view axes are the
target line and its horizontal perpendicular on the ball's side, for known inputs."""
from __future__ import annotations

import numpy as np
import pytest

from fixtures.golfers import GolferDims
from harness.core.tolerances import lookup
from harness.model import registry
from harness.swing import poses
from harness.swing.scaling import build

GEOMETRY = lookup("swing", "stick_figure_geometry").atol


def test_skeleton_segments_have_the_joint_offsets_lengths():
    model = build(GolferDims(), root="actuated")
    pin = registry.adapter_class("pinocchio")(model)
    seg = poses.skeleton(model.spec)
    q = pin.layout.neutral()
    P = poses.points(pin, q, seg)
    offsets = {(j.parent, j.child): float(np.linalg.norm(j.xyz)) for j in model.spec.joints}
    n = 0
    for a, b in seg:
        if (a, b) in offsets:
            n += 1
            assert np.linalg.norm(np.subtract(P[a], P[b])) == pytest.approx(offsets[(a, b)],
                                                                              abs=GEOMETRY)
    # every joint with an offset is one segment: hips, knees, ankles, spine, neck,
    # clavicles, shoulders, elbows, wrists and the club on the hand
    assert n == sum(1 for j in model.spec.joints if any(j.xyz))
    names = {x for s in seg for x in s}
    assert {"HeadTop", "club_head_centre", "l_heel_contact", "r_mt5_contact"} <= names


def test_view_axes_from_the_ankles_and_the_club_head():
    # lead (left) ankle at +y, trail at −y: the target line is +y; the club head at +x:
    # towards the ball is +x (z × along = −x, flipped onto the club's side)
    def near(x):
        return pytest.approx(x, abs=GEOMETRY)
    v = poses.view_frame([1.0, 0.2, 0.1], [1.0, -0.2, 0.12], [1.6, 0.0, 0.05], floor=0.01)
    assert v["along"] == near([0, 1, 0]) and v["towards"] == near([1, 0, 0])
    assert v["origin_m"] == near([1.0, 0.0, 0.01])
    assert poses.project(v, [1.3, 0.5, 1.01]) == near([0.5, 0.3, 1.0])
    # the club on the other side flips only the towards axis
    w = poses.view_frame([1.0, 0.2, 0.1], [1.0, -0.2, 0.1], [0.4, 0.0, 0.05], floor=0.0)
    assert w["along"] == near([0, 1, 0]) and w["towards"] == near([-1, 0, 0])

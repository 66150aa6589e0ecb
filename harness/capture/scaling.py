"""Scale the 3D golfer (fixtures/golfers.py) to a capture and calibrate its markers.

Lengths [m] are measured at address (the still interval before takeaway, where the golfer
is static) as distances between marker means; body mass is not identifiable from
kinematics and stays an input (``GolferDims.body_mass_kg``, 80 kg unless given).
"""
from __future__ import annotations

import numpy as np

from fixtures.golfers import GolferDims, golfer3d, marker_offsets
from harness.capture import ik
from harness.core.conventions import matrix_to_quat_wxyz, quat_wxyz_to_xyzw
from harness.core.errors import BadInput
from harness.model.prepared import PreparedModel


def _mean(capture, frames, *labels):
    pts = [capture.marker(l)[frames] for l in labels if l in capture.usable([l])]
    if not pts:
        raise BadInput(capture.source, f"none of {', '.join(labels)} usable for scaling")
    P = np.concatenate(pts, axis=0)
    m = np.nanmean(P, axis=0)
    if not np.isfinite(m).all():
        raise BadInput(capture.source, f"{', '.join(labels)} never seen at address")
    return m


def dims_from_capture(capture, frames, body_mass_kg: float = 80.0):
    """(GolferDims, {length name: (value m, how measured)}) from the frames (indices)."""
    f = frames
    waist = _mean(capture, f, "WaistLeft", "WaistRight", "WaistLBack", "WaistRBack")
    l_sh = _mean(capture, f, "LShoulderTop", "LShoulderBack")
    r_sh = _mean(capture, f, "RShoulderTop", "RShoulderBack")
    sh = 0.5 * (l_sh + r_sh)
    head_top = _mean(capture, f, "HeadTop")
    l_el, r_el = _mean(capture, f, "LElbowOut"), _mean(capture, f, "RElbowOut")
    l_wr, r_wr = _mean(capture, f, "LWristTop"), _mean(capture, f, "RWristTop")
    ch = _mean(capture, f, *capture.markerset.club_head)
    hands = 0.5 * (l_wr + r_wr)
    measured = {
        "trunk": (float(np.linalg.norm(sh - waist)) - GolferDims.pelvis_to_lumbar,
                  "|shoulder-marker mean − waist-marker mean| − pelvis_to_lumbar"),
        "head": (float(np.linalg.norm(head_top - sh)) - GolferDims.neck,
                 "|HeadTop − shoulder mean| − neck"),
        "shoulder_half_width": (0.5 * float(np.linalg.norm(l_sh - r_sh)),
                                "½ |left − right shoulder markers|"),
        "upper_arm": (0.5 * float(np.linalg.norm(l_sh - l_el) + np.linalg.norm(r_sh - r_el)),
                      "mean |shoulder − elbow marker| of both sides"),
        "forearm": (0.5 * float(np.linalg.norm(l_el - l_wr) + np.linalg.norm(r_el - r_wr)),
                    "mean |elbow − wrist marker| of both sides"),
        "club": (float(np.linalg.norm(ch - hands)) - GolferDims.hand,
                 "|club-head markers − wrist markers| − hand"),
    }
    for k, (v, how) in measured.items():
        if not (np.isfinite(v) and 0.02 < v < 2.0):
            raise BadInput(capture.source, f"scaling: {k} measured {v:.3f} m ({how}) is not "
                                           f"a human/club length")
    dims = GolferDims(body_mass_kg=body_mass_kg).scaled(**{k: v for k, (v, _) in measured.items()})
    return dims, {k: {"value_m": v, "how": how} for k, (v, how) in measured.items()}


def pelvis_pose(capture, frame: int):
    """(p_WP (3,), quat xyzw (4,)) of the pelvis from the waist markers at one frame:
    origin at their mean, y to the left (left minus right), z up (world z made
    orthogonal), x = y × z (forward)."""
    def at(*labels):
        P = np.stack([capture.marker(l)[frame] for l in labels])
        return np.nanmean(P, axis=0)

    left, right = at("WaistLeft", "WaistLBack"), at("WaistRight", "WaistRBack")
    origin = at("WaistLeft", "WaistRight", "WaistLBack", "WaistRBack")
    y = left - right
    y /= np.linalg.norm(y)
    z = np.array([0.0, 0.0, 1.0]) - y[2] * y
    z /= np.linalg.norm(z)
    x = np.cross(y, z)
    R = np.stack([x, y, z], axis=1)
    return origin, quat_wxyz_to_xyzw(matrix_to_quat_wxyz(R))


def build(dims, offsets=None, name="golfer3d_fit", root="actuated") -> PreparedModel:
    spec = golfer3d(dims, name=name, offsets=offsets, root=root).validate()
    return PreparedModel(spec, f"fit:{name}")


def root_coordinates(layout, p, quat_xyzw) -> np.ndarray:
    """q at neutral with the pelvis placed at (p, quat): the free root's 7 numbers, or the
    actuated root's pelvis_tx/ty/tz and the angles of R = Rz(rz)·Rx(rx)·Ry(ry)."""
    from harness.core.conventions import quat_xyzw_to_matrix

    q = layout.neutral()
    free = layout.free_slot()
    if free is not None:
        q[free.iq:free.iq + 3], q[free.iq + 3:free.iq + 7] = p, quat_xyzw
        return q
    R = quat_xyzw_to_matrix(quat_xyzw)
    vals = {"pelvis_tx": p[0], "pelvis_ty": p[1], "pelvis_tz": p[2],
            "pelvis_rx": float(np.arcsin(np.clip(R[2, 1], -1.0, 1.0))),
            "pelvis_ry": float(np.arctan2(-R[2, 0], R[2, 2])),
            "pelvis_rz": float(np.arctan2(-R[0, 1], R[1, 1]))}
    for name, val in vals.items():
        q[layout.slot(name).iq] = val
    return q


GRIP_PAIRS = (("grip_r_point", "club_grip_r_point", 100.0),)  # weight: 10× a marker's σ⁻¹


def calibrate(adapter_cls, capture, frames, dims, rounds: int = 4, labels=None,
              pairs=GRIP_PAIRS, root="actuated"):
    """Alternate IK on ``frames`` and marker-offset estimation. Returns (PreparedModel,
    adapter, IKResult of the last round, history [(round, rmse m)])."""
    bodies = {l: b for l, (b, _) in marker_offsets(dims).items()}
    labels = [l for l in (labels or bodies) if l in capture.usable([l])]
    Y = np.stack([capture.marker(l)[frames] for l in labels], axis=1)
    offsets = None
    history = []
    model = build(dims, root=root)
    adapter = adapter_cls(model)
    p, quat = pelvis_pose(capture, int(frames[0]))
    q0 = root_coordinates(adapter.layout, p, quat)
    res = None
    for k in range(rounds + 1):
        res = ik.track(adapter, labels, Y, q0, pairs=pairs)
        history.append((k, res.overall_rmse()))
        if k == rounds:
            break
        offsets = ik.estimate_offsets(adapter, bodies, labels, Y, res.q)
        model = build(dims, offsets, root=root)
        adapter = adapter_cls(model)
        q0 = res.q[0]
    return model, adapter, res, history, labels

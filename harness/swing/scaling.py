"""Scale the 3D golfer (fixtures/golfers.py) to a capture and calibrate its markers.

Lengths [m] are measured at address (the still interval before takeaway, where the golfer
is static) as distances between marker means; body mass is not identifiable from
kinematics and stays an input (``GolferDims.body_mass_kg``, 80 kg unless given).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fixtures.golfers import GRIP_LOOP, GolferDims, contact_frame, golfer3d, marker_offsets
from harness.capture import ik
from harness.core.conventions import matrix_to_quat_wxyz, quat_wxyz_to_xyzw, quat_xyzw_to_matrix
from harness.core.errors import BadInput
from harness.model.prepared import PreparedModel

if TYPE_CHECKING:
    from harness.capture.ingest import Capture
    from harness.core.conventions import Layout
    from harness.model.protocol import EngineAdapter


def _mean(capture, frames, *labels):
    pts = [capture.marker(l)[frames] for l in labels if l in capture.usable([l])]
    if not pts:
        raise BadInput(capture.source, f"none of {', '.join(labels)} usable for scaling")
    P = np.concatenate(pts, axis=0)
    if not np.isfinite(P).all(axis=1).any():
        raise BadInput(capture.source, f"{', '.join(labels)} never seen at address")
    m = np.nanmean(P, axis=0)
    return m


def dims_from_capture(capture: Capture, frames: Sequence[int] | NDArray[np.int_],
                      body_mass_kg: float = 80.0) -> tuple[GolferDims, dict[str, Any]]:
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
    measured.update(_leg_lengths(capture, f))
    for k, (v, how) in measured.items():
        if k.startswith("hip_"):
            continue
        if not (np.isfinite(v) and 0.02 < v < 2.0):
            raise BadInput(capture.source, f"scaling: {k} measured {v:.3f} m ({how}) is not "
                                           f"a human/club length")
    dims = GolferDims(body_mass_kg=body_mass_kg).scaled(**{k: v for k, (v, _) in measured.items()})
    return dims, {k: {"value_m": v, "how": how} for k, (v, how) in measured.items()}


TOE_MARKER_HEIGHT_M = 0.035   # toe marker above the ground at address (settings table)
HEEL_BEHIND_ANKLE_M = 0.05    # heel contact behind the ankle marker along the foot axis
HEEL_MEDIAL_M = 0.025         # ... and this far medial of it (AnkleOut is lateral)


def _leg_lengths(capture, f) -> dict:
    """Leg lengths {name: (value m, how)} at address; the hip centre by Harrington's
    regression on the pelvis markers (pelvis width PW between the front markers, depth PD
    from their mean to the back markers' mean), expressed in the pelvis frame of
    ``pelvis_pose``."""
    front = _mean(capture, f, "WaistLeft", "WaistRight")
    back = _mean(capture, f, "WaistLBack", "WaistRBack")
    pw = float(np.linalg.norm(_mean(capture, f, "WaistLeft") - _mean(capture, f, "WaistRight")))
    pd = float(np.linalg.norm(front - back))
    origin = _mean(capture, f, "WaistLeft", "WaistRight", "WaistLBack", "WaistRBack")
    R = _pelvis_axes(capture, f)
    front_local = R.T @ (front - origin)
    hip = front_local + np.array([-0.24 * pd - 0.0099, 0.0, -0.30 * pw - 0.0109])
    hip_hw = 0.33 * pw + 0.0073
    floor = floor_height(capture, f)
    hips, knees, ankles, feet = [], [], [], []
    for key, s in (("L", 1.0), ("R", -1.0)):
        hc = origin + R @ (hip + np.array([0.0, s * hip_hw, 0.0]))
        kn, an = _mean(capture, f, f"{key}KneeOut"), _mean(capture, f, f"{key}AnkleOut")
        toe = _mean(capture, f, f"{key}ToeIn", f"{key}ToeOut")
        hips.append(float(np.linalg.norm(kn - hc)))
        knees.append(float(np.linalg.norm(an - kn)))
        ankles.append(float(an[2] - floor))
        feet.append(float(np.linalg.norm((toe - an)[:2])))
    return {
        "hip_x": (float(hip[0]), "Harrington: front-marker mean − 0.24 PD − 9.9 mm"),
        "hip_half_width": (hip_hw, "Harrington: 0.33 PW + 7.3 mm"),
        "hip_z": (float(hip[2]), "Harrington: front-marker mean − 0.30 PW − 10.9 mm"),
        "thigh": (float(np.mean(hips)), "mean |hip centre − KneeOut| of both sides"),
        "shank": (float(np.mean(knees)), "mean |KneeOut − AnkleOut| of both sides"),
        "ankle_height": (float(np.mean(ankles)), "mean AnkleOut height above the floor"),
        "foot": (float(np.mean(feet)) + HEEL_BEHIND_ANKLE_M + 0.07,
                 "mean horizontal |toe-marker mean − AnkleOut| + heel behind the ankle "
                 f"({1e3 * HEEL_BEHIND_ANKLE_M:.0f} mm) + toes beyond the markers (70 mm)"),
    }


def floor_height(capture: Capture, frames: Sequence[int] | NDArray[np.int_]) -> float:
    """Ground plane height z [m]: the median over the address frames of the four toe
    markers' heights minus TOE_MARKER_HEIGHT_M (a toe marker on the shoe's toe box over
    the metatarsal heads: sole about 25 mm plus the marker's radius), the feet being flat
    and still at address. Not measurable from markers alone (no force plate, no sole
    marker): the one assumed length of the ground model."""
    z = np.concatenate([capture.marker(l)[frames, 2] for l in
                        ("LToeIn", "LToeOut", "RToeIn", "RToeOut")])
    z = z[np.isfinite(z)]
    if not z.size:
        raise BadInput(capture.source, "no toe marker seen at address: cannot place the floor")
    return float(np.median(z)) - TOE_MARKER_HEIGHT_M


def contact_targets(capture: Capture, frames: Sequence[int] | NDArray[np.int_],
                    floor: float) -> dict:
    """{contact frame: world point (3,) m} at address from the foot markers: the first
    and fifth metatarsal heads under ToeIn and ToeOut, the heel HEEL_BEHIND_ANKLE_M
    behind AnkleOut along the foot's horizontal axis (toe-marker mean → AnkleOut) and
    HEEL_MEDIAL_M medial; all on the floor (z = ``floor``)."""
    out = {}
    for key, side in (("L", "l"), ("R", "r")):
        t_in, t_out = _mean(capture, frames, f"{key}ToeIn"), _mean(capture, frames, f"{key}ToeOut")
        an = _mean(capture, frames, f"{key}AnkleOut")
        axis = an - 0.5 * (t_in + t_out)
        axis[2] = 0.0
        axis /= np.linalg.norm(axis)
        medial = t_in - t_out
        medial[2] = 0.0
        medial -= (medial @ axis) * axis
        medial /= np.linalg.norm(medial)
        heel = an + HEEL_BEHIND_ANKLE_M * axis + HEEL_MEDIAL_M * medial
        for name, p in (("mt1", t_in), ("mt5", t_out), ("heel", heel)):
            out[contact_frame(side, name)] = np.array([p[0], p[1], floor])
    return out


def place_contacts(adapter: EngineAdapter, q: NDArray[np.float64], targets: dict) -> dict:
    """{contact frame: (foot body, xyz (3,) m)}: the world targets expressed in the foot
    frames of the pose q (an address pose from IK)."""
    out = {}
    for name, p in targets.items():
        body = f"{name[0]}_foot"
        pose = adapter.frame_poses(q, [body])[0]
        R = pose[3:].reshape(3, 3)
        out[name] = (body, tuple(float(x) for x in R.T @ (p - pose[:3])))
    return out


def _pelvis_axes(capture, frames) -> np.ndarray:
    """R_WP (3, 3) of the pelvis from the waist-marker means over ``frames`` (as
    ``pelvis_pose``)."""
    left = _mean(capture, frames, "WaistLeft", "WaistLBack")
    right = _mean(capture, frames, "WaistRight", "WaistRBack")
    y = left - right
    y /= np.linalg.norm(y)
    z = np.array([0.0, 0.0, 1.0]) - y[2] * y
    z /= np.linalg.norm(z)
    return np.stack([np.cross(y, z), y, z], axis=1)


def pelvis_pose(capture: Capture, frame: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(p_WP (3,), quat xyzw (4,)) of the pelvis from the waist markers at one frame:
    origin at their mean, y to the left (left minus right), z up (world z made
    orthogonal), x = y × z (forward)."""
    def at(*labels: str) -> NDArray[np.float64]:
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


def build(dims: GolferDims, offsets: dict | None = None, name: str = "golfer3d_fit",
          root: str = "actuated", grip: str = "weld", shaft: str = "rigid") -> PreparedModel:
    """The golfer (fixtures/golfers.py golfer3d) with ``offsets`` {label: (body, xyz)}
    as its marker frames; a rigid club's offsets below the bend point move to the bent
    shaft's head with ``shaft="flex"``."""
    spec = golfer3d(dims, name=name, offsets=offsets, root=root, grip=grip,
                    shaft=shaft).validate()
    return PreparedModel(spec, f"fit:{name}")


def root_coordinates(layout: Layout, p: NDArray[np.float64],
                     quat_xyzw: NDArray[np.float64]) -> np.ndarray:
    """(nq,) [rad | m] q at neutral with the pelvis placed at (p (3,) m, quat (4,) xyzw):
    the free root's 7 numbers, or the
    actuated root's pelvis_tx/ty/tz and the angles of R = Rz(rz)·Rx(rx)·Ry(ry)."""
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


GRIP_PAIRS = ((*GRIP_LOOP, 100.0),)  # weight: 10× a marker's σ⁻¹


def calibrate(adapter_cls: type, capture: Capture, frames: Sequence[int] | NDArray[np.int_],
              dims: GolferDims, rounds: int = 4, labels: Sequence[str] | None = None,
              pairs: Sequence[tuple[str, str, float]] = GRIP_PAIRS, root: str = "actuated",
              relax: float = 1.0, grip: str = "weld"
              ) -> tuple[PreparedModel, EngineAdapter, ik.IKResult, list, list[str]]:
    """Alternate IK on ``frames`` (frame indices) of the capture's markers (F, K, 3) m and
    marker-offset estimation. Returns (PreparedModel,
    adapter, IKResult of the last round, history [(round, rmse m)]). ``relax`` ω
    over-relaxes the offset updates, o ← o + ω (ô − o) with ô the least-squares offsets
    of the round's poses: the alternation is a linear contraction near its fixed point
    whose slow modes (a marker trading against the joint it sits near) shrink by
    1 − ω (1 − λ) per round, so 1 < ω < 2 speeds them up and still damps the fast
    ones. ``grip``: the club welded or hinged in the lead hand (fixtures/golfers.py)."""
    bodies = {l: b for l, (b, _) in marker_offsets(dims).items()}
    labels = [l for l in (labels or bodies) if l in capture.usable([l])]
    Y = np.stack([capture.marker(l)[frames] for l in labels], axis=1)
    offsets = None
    history = []
    model = build(dims, root=root, grip=grip)
    adapter = adapter_cls(model)
    p, quat = pelvis_pose(capture, int(frames[0]))
    q0 = root_coordinates(adapter.layout, p, quat)
    res = None
    for k in range(rounds + 1):
        res = ik.track(adapter, labels, Y, q0, pairs=pairs)
        history.append((k, res.overall_rmse()))
        if k == rounds:
            break
        est = ik.estimate_offsets(adapter, bodies, labels, Y, res.q)
        if relax != 1.0 and offsets is not None:
            est = {l: (b, tuple(np.asarray(offsets[l][1]) + relax * (np.asarray(x)
                                                                    - offsets[l][1])))
                   for l, (b, x) in est.items()}
        offsets = est
        model = build(dims, offsets, root=root, grip=grip)
        adapter = adapter_cls(model)
        q0 = res.q[0]
    return model, adapter, res, history, labels

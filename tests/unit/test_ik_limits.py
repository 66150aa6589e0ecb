"""The marker IK's analytic Jacobians against finite differences, and its recovery of a
known pose with coordinates at their limits, on real models: OpenSim's gait2392 subject
(its knee's coupled coordinates held) and the harness's 3-D golfer (a free root)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import adapter

from fixtures.golfers import GolferDims, marker_offsets
from harness.capture import ik
from harness.core.conventions import canonical_integrate
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.osim_import import load_osim_with_notes
from harness.model.prepared import PreparedModel

MODEL = Path(__file__).resolve().parents[2] / "data" / "opensim_models" / \
    "gait2392_walk1" / "subject01_simbody.osim"
_cache: dict[str, tuple] = {}


def _gait(engine: str):
    """(adapter, spec, held, marker labels) of the gait2392 subject, ranges as limits."""
    if engine not in _cache:
        spec, _ = load_osim_with_notes(str(MODEL), ranges_as_limits=True)
        a = registry.adapter_class(engine)(PreparedModel(spec, "test_ik_limits"))
        labels = [f.name for f in spec.frames]
        _cache[engine] = (a, spec, ik.Held.of(a.layout, spec.couplings), labels)
    return _cache[engine]


def _inside(a, rng, margin=0.05):
    """A random q (nq,) with every bounded coordinate inside its limits by ``margin``."""
    q = canonical_integrate(a.layout, a.layout.neutral(), 0.3 * rng.uniform(-1, 1, a.nv))
    for s in a.layout.slots:
        if s.lower is not None:
            q[s.iq] = rng.uniform(s.lower + margin, s.upper - margin)
    return q


def _fd_check(a, held, labels, q):
    """The IK's marker Jacobian (rows 0–2 of the adapter's J_WF, through the couplings'
    S(q) where held) against central differences of the marker positions along q ⊕ h e_i
    (followers re-held): max error relative to max |J|."""
    if held is not None:
        q = held.hold(q.copy())
    J = a.frame_jacobians(q, labels)[:, :3, :].reshape(-1, a.nv)
    if held is not None:
        J = J @ held.S(q, a.nv)
    h, fd = 1e-6, np.zeros_like(J)
    for i in range(a.nv):
        if held is not None and i in held.ivf:
            continue                               # a follower: no column of its own
        e = np.zeros(a.nv)
        e[i] = h
        pp, pm = (canonical_integrate(a.layout, q, s * e) for s in (1, -1))
        if held is not None:
            pp, pm = held.hold(pp), held.hold(pm)
        fd[:, i] = (a.frame_poses(pp, labels)[:, :3] - a.frame_poses(pm, labels)[:, :3]
                    ).reshape(-1) / (2 * h)
    return np.abs(J - fd).max(), np.abs(J).max()


def test_marker_jacobians_match_finite_differences():
    tol = lookup("conformance", "finite_difference")
    rng = np.random.default_rng(11)
    a, _, held, labels = _gait("pinocchio")
    assert len(labels) >= 30 and len(held.couplings) == 4
    golfer = adapter("pinocchio", "golfer3d")
    glabels = list(marker_offsets(GolferDims()))
    for model, hd, lab in ((a, held, labels), (golfer, None, glabels)):
        for _ in range(2):
            err, size = _fd_check(model, hd, lab, _inside(model, rng))
            assert err <= tol.atol + tol.rtol * size, (model.model.spec.name, err, size)


def test_ik_recovers_a_pose_with_coordinates_at_their_limits():
    """Markers placed by MuJoCo at a known pose of gait2392 whose knees, a hip adduction,
    an ankle and a hip rotation sit at their limits; Pinocchio's IK from a pose 0.15
    rad away in every coordinate (every limited coordinate held, the knee couplings held)
    finds it to round-off and never leaves the limits."""
    pin, spec, held, labels = _gait("pinocchio")
    muj = _gait("mujoco")[0]
    rng = np.random.default_rng(5)
    q_true = _inside(pin, rng, 0.1)
    at = {"knee_angle_r": "lower", "knee_angle_l": "upper", "hip_adduction_r": "upper",
          "ankle_angle_l": "lower", "hip_rotation_l": "upper"}
    for n, side in at.items():
        s = pin.layout.slot(n)
        q_true[s.iq] = getattr(s, side)
    q_true = held.hold(q_true)
    Y = muj.frame_poses(q_true, labels)[None, :, :3]
    q0 = canonical_integrate(pin.layout, q_true, 0.15 * rng.choice([-1.0, 1.0], pin.nv))
    for n, side in at.items():                 # the start 0.15 rad inside those limits
        s = pin.layout.slot(n)
        q0[s.iq] = getattr(s, side) + (0.15 if side == "lower" else -0.15)
    res = ik.track(pin, labels, Y, q0, couplings=spec.couplings)
    q = res.q[0]
    bq, lo, hi = ik.limit_bounds(pin.layout)
    assert np.all(q[bq] >= lo) and np.all(q[bq] <= hi)
    # no marker sits on the toes: the mtp angles keep their start values
    toes = [pin.layout.slot(n).iq for n in ("mtp_angle_r", "mtp_angle_l")]
    assert np.array_equal(q[toes], q0[toes])
    d = np.abs(q - q_true)
    d[toes] = 0.0
    assert d.max() <= lookup("track", "ik_truth_recovery").atol, \
        [(s.name, d[s.iq]) for s in pin.layout.slots if d[s.iq] > 1e-9]
    assert np.nanmax(np.abs(res.residual)) <= lookup("capture", "ik_recovery").atol

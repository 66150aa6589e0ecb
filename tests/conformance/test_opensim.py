"""The OpenSim adapter's own pieces (the rest of the conformance suite runs on it like on
every engine): the .osim written by ``build_model`` read back by OpenSim and compared with
Pinocchio, the body-fixed X-Y-Z angles against OpenSim's own Rotation (gimbal lock
included), and the native Manager rollout against the harness's RK4 over Pinocchio."""
from __future__ import annotations

import numpy as np
import opensim as osim
import pytest

from harness.core.conventions import rpy_to_matrix
from harness.core.errors import NotProvided
from harness.core.records import measure
from harness.core.tolerances import lookup
from harness.model.integrators import Method, rollout
from harness.model.prepared import prepare_fixture
from harness.stages.replay.synth import synthesize
from tests.conftest import adapter, assert_builds_alike, assert_close


def _np33(R):
    return np.array([[R.get(i, j) for j in range(3)] for i in range(3)])


def test_body_fixed_angles_rebuild_the_rotation_in_opensim():
    """xyz_body_fixed(R) handed to OpenSim's Rotation.setRotationToBodyFixedXYZ gives R
    back to round-off, also exactly at and next to the lock b = ±π/2 (a hinge about x)."""
    from engines.opensim import xyz_body_fixed

    rng = np.random.default_rng(5)
    Rs = [rpy_to_matrix(rng.uniform(-np.pi, np.pi, 3)) for _ in range(200)]
    ex = np.array([[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [1.0, 0.0, 0.0]])  # z → x
    Rs += [ex, ex.T]
    for d in (0.0, 1e-12, 1e-8, 1e-4):
        for sgn in (1.0, -1.0):
            Rs.append(rpy_to_matrix([0.3, 0.0, 0.0]) @ rpy_to_matrix([0.0, sgn * (np.pi / 2 - d),
                                                                      0.0]))
    worst = 0.0
    for R in Rs:
        rot = osim.Rotation()
        rot.setRotationToBodyFixedXYZ(osim.Vec3(*xyz_body_fixed(R)))
        worst = max(worst, np.abs(_np33(rot) - R).max())
    assert worst < 1e-15 * 10, worst


@pytest.mark.parametrize("fixture", ["chain7", "four_bar"])
def test_exported_osim_reloads_with_pinocchio_poses_and_mass_matrix(fixture, tmp_path):
    """printToXML of build_model(spec), read back by opensim.Model(path): every body and
    named frame at the neutral pose, and M (no armature: OpenSim has none) equal
    Pinocchio's to round-off; joint and body names are the spec's."""
    from engines.opensim import build_model

    model = prepare_fixture(fixture)
    spec = model.spec
    path = tmp_path / f"{fixture}.osim"
    assert build_model(spec).printToXML(str(path))
    m = osim.Model(str(path))
    s = m.initSystem()
    joints = {j.getName() for j in m.getJointSet()}
    assert {j.name for j in spec.joints} <= joints
    pin = adapter("pinocchio", fixture)
    q = model.layout.neutral()
    if spec.q_init:  # the loop's default pose (coordinates' default values)
        q = np.asarray(spec.q_init, dtype=float)
        for j, x in zip(spec.moving_joints(), q):
            m.getCoordinateSet().get(j.name).setValue(s, float(x), False)
    m.realizePosition(s)
    poses = pin.frame_poses(q, model.frames)
    paths = {}
    for c in m.getFrameList():  # iterated to the end (OpenSim's iterator is a generator)
        paths[c.getName()] = c.getAbsolutePathString()
    for name, ref in zip(model.frames, poses):
        if name == "ground" and spec.root == "ground":
            F = m.getGround()
        elif m.getBodySet().contains(name):
            F = m.getBodySet().get(name)
        else:
            F = osim.Frame.safeDownCast(m.getComponent(paths[name]))
        X = F.getTransformInGround(s)
        got = np.concatenate([[X.p().get(i) for i in range(3)], _np33(X.R()).reshape(-1)])
        assert_close(got, ref, "kinematics", "frame_pose", f"{fixture} {name}")
    M = osim.Matrix()
    m.getMatterSubsystem().calcM(s, M)
    u_of = []
    for j in spec.moving_joints():
        probe = osim.State(s)
        probe.setU(osim.Vector(s.getNU(), 0.0))
        m.getCoordinateSet().get(j.name).setSpeedValue(probe, 1.0)
        u_of.append(int(np.flatnonzero(probe.getU().to_numpy())[0]))
    Mo = M.to_numpy()[np.ix_(u_of, u_of)]
    ref = pin.mass_matrix(q) - np.diag(model.layout.armature)
    assert_close(Mo, ref, "dynamics", "mass_matrix", f"{fixture} M")


@pytest.mark.parametrize("fixture,law,interp", [("chain7", "pd", "linear"),
                                                ("free_body", "zero", "zoh")])
def test_native_rollout_matches_harness_rk4(fixture, law, interp):
    """OpenSim's Manager (armature rotors and damping springs on chain7, the body-frame
    wrench on free_body's root) against the harness's RK4 (dt 1e-3) over Pinocchio:
    within replay/native (1e-6 + 1e-6·|x|)."""
    model = prepare_fixture(fixture)
    cand = synthesize(model, law, duration=0.3, grid_dt=0.01, interpolation=interp, seed=0,
                      created="test")
    ctr = cand.controls()
    a = adapter("opensim", fixture)
    Q, V = a.native_rollout(cand.q0, cand.v0, cand.t, lambda k, t: ctr.segment(k)(t))
    ref = rollout(adapter("pinocchio", fixture), cand.q0, cand.v0, ctr, Method("rk4", dt=1e-3),
                  model.layout.damping)
    X = np.hstack([Q, V])
    R = ref.x if hasattr(ref, "x") else ref[0]
    _, _, _, ok = measure(X[None], R[None], lookup("replay", "native"))
    assert ok, np.abs(X - R).max()
    # the same rollout with the armature rotors left out misses (it can fail)
    assert np.abs(X - R).max() > 0 and (fixture != "chain7" or _without_rotors_misses(cand, R))


def _without_rotors_misses(cand, R) -> bool:
    a = adapter("opensim", "chain7").ablated({"armature": 0.0})
    ctr = cand.controls()
    Q, V = a.native_rollout(cand.q0, cand.v0, cand.t, lambda k, t: ctr.segment(k)(t))
    return not measure(np.hstack([Q, V])[None], R[None], lookup("replay", "native"))[3]


def test_native_rollout_refuses_ball_joints():
    a = adapter("opensim", "humanoid_ball_fixed")
    q, v = a.neutral(), np.zeros(a.nv)
    with pytest.raises(NotProvided):
        a.native_rollout(q, v, np.array([0.0, 0.01]), lambda k, t: np.zeros(a.nv))


def test_native_contact_ball_falls_freely_then_lands():
    """OpenSim's own contact on the declared ball scene: free fall z(t) = z0 − ½ g t²
    before contact (to the integrator's accuracy), first touch within one sample of
    √(2h/g), and the ball stopped by the plane (it does not sink through)."""
    from fixtures.contact_catalog import scene

    a = adapter("opensim", "ball")
    sc = scene("ball")
    r, h, g = sc.geometry[0].radius, 0.2, -a.model.spec.gravity[2]
    q0 = np.array([0.0, 0.0, r + h, 0.0, 0.0, 0.0, 1.0])
    out = a.native_contact(sc, q0, np.zeros(6), 0.5, lambda t: np.zeros(3))
    T, z = out["t"], out["q"][:, 2]
    free = T < 0.9 * np.sqrt(2 * h / g)
    assert np.abs(z[free] - (q0[2] - 0.5 * g * T[free] ** 2)).max() < 1e-6
    k = int(np.argmax(z - r < 0))
    assert k > 0 and abs(T[k] - np.sqrt(2 * h / g)) <= 2e-3, T[k]
    assert z.min() > r - 0.02 and abs(z[-1] - r) < 0.02, (z.min(), z[-1])
    assert out["statement"].startswith("OpenSim SmoothSphereHalfSpaceForce")


def test_as_is_files_are_not_provided_and_left_out_of_the_diagnosis(tmp_path):
    """OpenSim reads neither URDF nor MJCF: an as-is run records its load as not_provided
    (not an error), and the as-is diagnosis leaves it out with a note instead of listing
    it as an engine that failed to load the file."""
    from harness.model.as_is import load_as_is
    from harness.stages import runner
    from harness.stages.diagnosis import ablation

    path = tmp_path / "double_pendulum.urdf"
    path.write_text(prepare_fixture("double_pendulum").urdf)
    model = load_as_is(str(path))
    res = runner.run([model], ["pinocchio", "opensim"], ["model_identity"], samples=2, seed=0)
    load = [r for r in res.records if r.quantity == "load"]
    assert [(r.engine_a, r.status) for r in load] == [("opensim", "not_provided")]
    assert "neither URDF nor MJCF" in load[0].reason
    assert all(r.status == "passed" for r in res.records if r.quantity != "load")
    diag = ablation.run([model], ["pinocchio", "drake", "opensim"], samples=2, seed=0)
    s = diag.summaries[0]
    assert s["failed"] == [] and set(s["engines"]) == {"pinocchio", "drake"}
    assert any(n.startswith("opensim is not part of the as-is diagnosis")
               for n in s["notes"]), s["notes"]


def _erd_urdf(rel):
    from pathlib import Path

    import example_robot_data

    root = Path(example_robot_data.getModelPath("panda_description/urdf/panda.urdf"))
    return str(root / rel)


@pytest.mark.parametrize("rel,floating", [
    ("asr_twodof_description/urdf/TwoDofs.urdf", True),   # a body named "ground"
    ("iris_description/robots/iris.urdf", False),         # names with a "/"
])
def test_names_opensim_refuses_are_renamed_inside_the_model_only(rel, floating):
    """A URDF as shipped whose names OpenSim refuses (a body called ``ground`` on a
    floating base, link and joint names with a slash): the model renames them
    (osim_names), the adapter answers under the spec's names, and its frame poses, mass
    matrix and forward dynamics at random states equal Pinocchio's; its readback names
    the spec's bodies and joints."""
    from engines.opensim import build_model, osim_names
    from harness import api
    from harness.model import registry

    model = api.load_models(urdf=[_erd_urdf(rel)], floating=floating)[0]
    renamed = osim_names(model.spec)
    assert renamed and all(not any(ch in v for ch in " /\\*+") for v in renamed.values())
    m = build_model(model.spec)
    assert {b.getName() for b in m.getBodySet()} >= set(renamed.get(b.name, b.name)
                                                        for b in model.spec.bodies
                                                        if b.name != "ground" or floating)
    osm = registry.adapter_class("opensim")(model)
    pin = registry.adapter_class("pinocchio")(model)
    assert_builds_alike(osm, pin, model, 3, rel)
    rb = osm.readback()
    assert set(rb["bodies"]) <= {b.name for b in model.spec.bodies}
    assert {j["body"] for j in rb["joints"].values()} <= {b.name for b in model.spec.bodies}

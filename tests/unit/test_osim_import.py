""".osim import (engines/opensim_osim.py osim_to_spec, harness/model/osim_import.py):
the canonical model read from tests/data/osim_user_model.osim moves exactly as OpenSim
moves the file's model (body and marker poses at random coordinates, every joint type
included), and what is set aside or refused says so in one line naming the file."""
from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import numpy as np
import opensim as osim
import pytest

from engines.opensim_osim import osim_to_spec
from harness.core.conventions import Layout, matrix_to_quat_wxyz, quat_wxyz_to_xyzw
from harness.core.coupling_function import evaluate
from harness.core.errors import BadInput
from harness.core.spec import Coupling
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.prepared import PreparedModel
from harness.track.osim_notes import defaults, scales
from tests.conftest import ROOT

DATA = ROOT / "tests" / "data"
MODEL = DATA / "osim_user_model.osim"


def _np(T):
    out = np.eye(4)
    for i in range(3):
        out[i, 3] = T.p().get(i)
        for j in range(3):
            out[i, j] = T.R().get(i, j)
    return out


def test_committed_model_is_what_the_generator_writes(tmp_path):
    out = tmp_path / "m.osim"
    p = subprocess.run([sys.executable, str(DATA / "make_osim_user_model.py"), str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == MODEL.read_bytes()


def _canonical_q(m, s, lay: Layout) -> np.ndarray:
    """The user model's canonical q at OpenSim's realized state ``s``: the free root from
    the pelvis's pose, the ball joint from its joint frames, every other coordinate by
    name (slopes ±1: |s| q = q)."""
    q = lay.neutral().copy()
    X = _np(m.getBodySet().get("pelvis").getTransformInGround(s))
    q[0:3] = X[:3, 3]
    q[3:7] = quat_wxyz_to_xyzw(matrix_to_quat_wxyz(X[:3, :3]))
    for c in m.getCoordinateSet():
        if c.getName() in lay.joint_names:
            q[lay.slot(c.getName()).iq] = c.getValue(s)
    lumbar = m.getJointSet().get("lumbar")
    R_FM = _np(lumbar.getChildFrame().findTransformBetween(s, lumbar.getParentFrame()))
    R_BM = _np(lumbar.getChildFrame().findTransformInBaseFrame())
    R = R_BM[:3, :3] @ R_FM[:3, :3] @ R_BM[:3, :3].T
    sl = lay.slot("lumbar")
    q[sl.iq:sl.iq + 4] = quat_wxyz_to_xyzw(matrix_to_quat_wxyz(R))
    return q


def test_user_model_moves_as_opensim_moves_it():
    """Random values on every coordinate (free root, ball, pins, slider, custom axes);
    the canonical q built from OpenSim's own joint transforms; body and marker poses in
    the world from the engine the fitter prefers against OpenSim's."""
    spec, notes = osim_to_spec(str(MODEL))
    spec = spec.validate()
    assert spec.floating and "FreeJoint pelvis_free: the model is imported as floating" in notes
    types = {j.name: j.type for j in spec.joints}
    assert types["hip"] == "revolute" and types["knee_slide"] == "prismatic"
    assert types["lumbar"] == "ball" and types["neck"] == "fixed"
    assert [types[c] for c in ("sh_elev", "sh_flex", "sh_add", "sh_rot")] == \
        ["prismatic", "revolute", "revolute", "revolute"]
    m = osim.Model(str(MODEL))
    s = m.initSystem()
    rng = np.random.default_rng(3)
    adapter = registry.adapter_class(registry.preferred("fit"))(PreparedModel(spec, "osim"))
    lay = Layout.from_spec(spec)
    names = [b.getName() for b in m.getBodySet()] + [k.getName() for k in m.getMarkerSet()]
    tol = lookup("import", "osim_pose")
    for _ in range(4):
        for c in m.getCoordinateSet():
            c.setValue(s, float(rng.uniform(-0.9, 0.9)), False)
        m.realizePosition(s)
        q = _canonical_q(m, s, lay)
        P = adapter.frame_poses(q, names)
        for k, n in enumerate(names):
            if n in {b.getName() for b in m.getBodySet()}:
                Xo = _np(m.getBodySet().get(n).getTransformInGround(s))
                got = np.r_[Xo[:3, 3], Xo[:3, :3].reshape(-1)]
            else:
                p = m.getMarkerSet().get(n).getLocationInGround(s)
                got = np.r_[[p.get(i) for i in range(3)], P[k, 3:]]
            assert np.abs(P[k] - got).max() <= tol.atol, n


# ----- set aside and refused --------------------------------------------------------------
def _variant(tmp_path, edit) -> str:
    m = osim.Model(str(MODEL))
    edit(m)
    m.finalizeConnections()
    path = tmp_path / "variant.osim"
    m.printToXML(str(path))
    return str(path)


def _refused(path, *words):
    with pytest.raises(BadInput) as e:
        osim_to_spec(path)
    text = str(e.value)
    assert text.startswith(path) and "\n" not in text
    for w in words:
        assert w in text, text


def test_muscles_and_wrap_objects_are_set_aside(tmp_path):
    def edit(m):
        mus = osim.Thelen2003Muscle("biceps", 200.0, 0.1, 0.2, 0.0)
        mus.addNewPathPoint("origin", m.getBodySet().get("torso"), osim.Vec3(0, 0.4, 0.1))
        mus.addNewPathPoint("insertion", m.getBodySet().get("arm"), osim.Vec3(0, -0.2, 0))
        m.addForce(mus)
        cyl = osim.WrapCylinder()
        cyl.setName("elbow_wrap")
        cyl.set_radius(0.03)
        cyl.set_length(0.1)
        m.updBodySet().get("arm").addWrapObject(cyl)
    path = _variant(tmp_path, edit)
    spec, notes = osim_to_spec(path)
    base, _ = osim_to_spec(str(MODEL))
    assert spec.bodies == base.bodies and spec.joints == base.joints
    assert any("1 muscle(s) set aside (biceps)" in n for n in notes)
    assert any("1 wrap object(s) set aside" in n for n in notes)


def test_locked_coordinate_becomes_a_weld_and_defaults_are_noted(tmp_path):
    def edit(m):
        m.updCoordinateSet().get("hip").setDefaultLocked(True)
        m.updCoordinateSet().get("hip").setDefaultValue(0.3)
        m.updCoordinateSet().get("wrist").setDefaultValue(0.2)
    path = _variant(tmp_path, edit)
    spec, notes = osim_to_spec(path)
    assert "hip" not in {j.name for j in spec.moving_joints()}
    assert any("coordinate hip is locked" in n for n in notes)
    assert any("coordinate wrist: default_value 0.2" in n for n in notes)
    # the weld holds the thigh where OpenSim's locked hip holds it
    m = osim.Model(path)
    s = m.initSystem()
    for c in m.getCoordinateSet():
        if c.getName() != "hip" and not c.getLocked(s):
            c.setValue(s, 0.0, False)
    m.realizePosition(s)
    X_o = _np(m.getBodySet().get("thigh").getTransformInGround(s))
    spec = spec.validate()
    ad = registry.adapter_class(registry.preferred("fit"))(PreparedModel(spec, "v"))
    pose = ad.frame_pose(Layout.from_spec(spec).neutral(), "thigh")
    assert np.abs(pose - np.r_[X_o[:3, 3], X_o[:3, :3].reshape(-1)]).max() <= \
        lookup("import", "osim_pose").atol


def _custom(m, k, fn, coords):
    cj = osim.CustomJoint.safeDownCast(m.updJointSet().get("shoulder"))
    ta = cj.upd_SpatialTransform().updTransformAxis(k)
    names = osim.ArrayStr()
    for c in coords:
        names.append(c)
    ta.setCoordinateNames(names)
    ta.set_function(fn)


def _moves_as_opensim(path, seed: int = 5) -> None:
    """Random values on every OpenSim coordinate; the canonical q (``_canonical_q``), each
    coupled joint at its coupling's value (harness/core/coupling_function.py for the
    non-linear ones); every body's pose from the fitter's engine against OpenSim's."""
    spec, _ = osim_to_spec(path)
    spec = spec.validate()
    m = osim.Model(path)
    s = m.initSystem()
    lay = Layout.from_spec(spec)
    ad = registry.adapter_class(registry.preferred("fit"))(PreparedModel(spec, "osim"))
    names = [b.getName() for b in m.getBodySet()]
    rng = np.random.default_rng(seed)
    for _ in range(3):
        for c in m.getCoordinateSet():
            c.setValue(s, float(rng.uniform(-0.9, 0.9)), False)
        m.realizePosition(s)
        q = _canonical_q(m, s, lay)
        for k in spec.couplings:
            x = q[lay.slot(k.leader).iq]
            q[lay.slot(k.follower).iq] = (evaluate(k.function, x)[0] if k.function
                                          else k.multiplier * x + k.offset)
        P = ad.frame_poses(q, names)
        for i, n in enumerate(names):
            Xo = _np(m.getBodySet().get(n).getTransformInGround(s))
            assert np.abs(P[i] - np.r_[Xo[:3, 3], Xo[:3, :3].reshape(-1)]).max() <= \
                lookup("import", "osim_pose").atol, n


def test_a_coupled_custom_axis_is_a_joint_held_by_a_coupling(tmp_path):
    """translation1 (a constant in the committed model) made a LinearFunction of sh_flex,
    which already turns the shoulder: a prismatic joint of its own, coupled linearly."""
    path = _variant(tmp_path, lambda m: _custom(m, 3, osim.LinearFunction(0.01, 0.02),
                                                ["sh_flex"]))
    spec, notes = osim_to_spec(path)
    types = {j.name: j.type for j in spec.joints}
    assert types["shoulder_translation1"] == "prismatic"
    assert spec.couplings == (Coupling("shoulder_translation1", "sh_flex", 0.01, 0.0),)
    assert any(n.startswith("joint shoulder_translation1: coupled: ") for n in notes)
    _moves_as_opensim(path)


def test_a_scaled_axis_and_a_default_pose_are_noted_with_every_digit(tmp_path):
    """sh_flex's axis a LinearFunction of slope 1.2345678901234567 (written into the file
    with every digit: OpenSim's own writer keeps 6) and its default value
    0.123456789012345: the import's notes give both back exactly (`harness track`
    converts coordinates with the noted factor)."""
    slope, default = 1.2345678901234567, 0.123456789012345

    def edit(m):
        _custom(m, 0, osim.LinearFunction(1.5, 0.0), ["sh_flex"])
        m.updCoordinateSet().get("sh_flex").setDefaultValue(default)

    path = _variant(tmp_path, edit)
    text = open(path, encoding="utf-8").read()
    assert text.count("<coefficients> 1.5 0</coefficients>") == 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace("<coefficients> 1.5 0</coefficients>",
                             f"<coefficients> {slope!r} 0</coefficients>"))
    _, notes = osim_to_spec(path)
    assert scales(notes)["sh_flex"] == slope
    assert defaults(notes)["sh_flex"] == default


def test_a_non_linear_custom_axis_is_a_joint_held_by_a_spline(tmp_path):
    """translation3 a SimmSpline of sh_flex, inside a MultiplierFunction (scale 2): the
    coupling's spline has the file's knots, its values doubled and shifted to 0 at the
    leader's 0 (the joint's placement holds that value)."""
    fn = osim.SimmSpline()
    knots = ((-1.0, 0.0), (-0.3, 0.02), (0.0, 0.01), (0.4, 0.03), (1.0, 0.05))
    for x, y in knots:
        fn.addPoint(x, y)
    doubled = osim.MultiplierFunction(fn, 2.0)
    fn.thisown = False  # the MultiplierFunction owns its function
    path = _variant(tmp_path, lambda m: _custom(m, 5, doubled, ["sh_flex"]))
    spec, _ = osim_to_spec(path)
    (k,) = spec.couplings
    assert (k.follower, k.leader, k.function[0]) == ("shoulder_translation3", "sh_flex",
                                                     "spline")
    assert k.function[1] == tuple(x for x, _ in knots)
    np.testing.assert_allclose(k.function[2], [2 * y - 0.02 for _, y in knots],
                               rtol=0, atol=lookup("import", "osim_roundtrip").atol)
    _moves_as_opensim(path)


def test_gimbal_and_universal_joints_move_as_opensim_moves_them(tmp_path):
    def edit(m):
        hand = m.getBodySet().get("hand")
        for i, cls in enumerate((osim.GimbalJoint, osim.UniversalJoint)):
            b = osim.Body(f"extra{i}", 1.0, osim.Vec3(0.01, 0.1, 0.02),
                          osim.Inertia(0.01, 0.012, 0.011))
            m.addBody(b)
            m.addJoint(cls(f"joint{i}", hand, osim.Vec3(0.1, 0.02 * i, 0.03),
                           osim.Vec3(0.2, -0.1, 0.3), b, osim.Vec3(0.0, 0.05, 0.0),
                           osim.Vec3(0.1, 0.0, -0.2)))
    path = _variant(tmp_path, edit)
    spec, _ = osim_to_spec(path)
    moving = {j.name for j in spec.moving_joints()}
    assert {"joint0_coord_0", "joint0_coord_1", "joint0_coord_2", "joint1_coord_0",
            "joint1_coord_1"} <= moving
    _moves_as_opensim(path)


def test_unsupported_joint_force_and_constraint_are_refused(tmp_path):
    def planar(m):
        b = osim.Body("extra", 1.0, osim.Vec3(0), osim.Inertia(0.01, 0.01, 0.01))
        m.addBody(b)
        m.addJoint(osim.PlanarJoint("planar", m.getBodySet().get("hand"), osim.Vec3(0),
                                    osim.Vec3(0), b, osim.Vec3(0), osim.Vec3(0)))
    _refused(_variant(tmp_path, planar), "PlanarJoint planar", "not supported")

    def spring(m):  # a spring between two points is no joint spring
        f = osim.PointToPointSpring(m.getGround(), osim.Vec3(0), m.getBodySet().get("hand"),
                                    osim.Vec3(0), 10.0, 0.1)
        f.setName("p2p_spring")
        m.addForce(f)
    _refused(_variant(tmp_path, spring), "force p2p_spring", "PointToPointSpring")

    def two_springs(m):
        for i in range(2):
            f = osim.SpringGeneralizedForce("hip")
            f.setName(f"hip_spring{i}")
            f.setStiffness(10.0)
            m.addForce(f)
    _refused(_variant(tmp_path, two_springs), "coordinate hip", "one joint spring")


def test_a_coordinate_spring_is_the_joint_spring(tmp_path):
    """SpringGeneralizedForce stiffness k and rest length on a revolute coordinate: the
    joint's spring −k (q − q_ref), its viscosity the joint's damping."""
    def spring(m):
        f = osim.SpringGeneralizedForce("hip")
        f.setName("hip_spring")
        f.setStiffness(10.0)
        f.setRestLength(0.25)
        f.setViscosity(0.5)
        m.addForce(f)
    spec, _ = osim_to_spec(str(_variant(tmp_path, spring)))
    hip = next(j for j in spec.joints if j.name == "hip")
    assert (hip.stiffness, hip.spring_ref, hip.damping) == (10.0, 0.25, 0.5)

    def weld(m):
        c = osim.WeldConstraint("pin_hand", m.getBodySet().get("hand"), osim.Transform(),
                                m.getGround(), osim.Transform())
        m.addConstraint(c)
    _refused(_variant(tmp_path, weld), "constraint pin_hand", "WeldConstraint")


def test_file_checks_name_the_file(tmp_path):
    from harness.model.osim_import import load_osim_with_notes

    bad = tmp_path / "robot.osim"
    bad.write_text("<robot name='r'/>")
    with pytest.raises(BadInput, match="not an OpenSim model file"):
        load_osim_with_notes(str(bad))
    empty = tmp_path / "empty.osim"
    empty.write_text("")
    with pytest.raises(BadInput, match="empty"):
        load_osim_with_notes(str(empty))
    broken = tmp_path / "broken.osim"
    broken.write_text("<OpenSimDocument Version=\"40600\"><Model name=\"m\"><BodySet>")
    with pytest.raises(BadInput) as e:
        osim_to_spec(str(broken))
    assert str(e.value).startswith(str(broken)) and "OpenSim cannot load it" in str(e.value)


def test_a_coordinate_coupler_constraint_is_a_coupling(tmp_path):
    """An enforced CoordinateCouplerConstraint wrist = s · f(hip) (scale factor s = 2): a
    coupling between the two joints, linear or a spline, whose value is OpenSim's own
    s · f (the file's constraint, read back by OpenSim) at any hip angle."""
    spline = osim.SimmSpline()
    for x, y in ((-1.0, -0.2), (-0.2, 0.05), (0.3, 0.1), (1.0, 0.4)):
        spline.addPoint(x, y)
    tol = lookup("import", "osim_coupling_function")
    for fn in (osim.LinearFunction(0.5, 0.1), spline):
        def edit(m, fn=fn):
            cc = osim.CoordinateCouplerConstraint()
            cc.setName("wrist_follows_hip")
            names = osim.ArrayStr()
            names.append("hip")
            cc.setIndependentCoordinateNames(names)
            cc.setDependentCoordinateName("wrist")
            cc.setFunction(fn)
            osim.PropertyHelper.setValueDouble(2.0, cc.updPropertyByName("scale_factor"))
            m.addConstraint(cc)
        path = _variant(tmp_path, edit)
        spec, notes = osim_to_spec(path)
        (k,) = spec.couplings
        assert (k.follower, k.leader) == ("wrist", "hip")
        assert any(n.startswith("joint wrist: coupled: ") for n in notes)
        m = osim.Model(path)
        m.initSystem()
        cc = osim.CoordinateCouplerConstraint.safeDownCast(
            m.getConstraintSet().get("wrist_follows_hip"))
        for x in (-1.4, -0.7, 0.1, 0.6, 1.2):
            want = 2.0 * cc.getFunction().calcValue(osim.Vector(1, x))
            got = evaluate(k.function, x)[0] if k.function else k.multiplier * x + k.offset
            assert abs(got - want) <= max(tol.atol, tol.rtol * abs(want)), (x, got, want)


def test_a_point_constraint_is_a_point_loop_between_its_two_points(tmp_path):
    """An enforced PointConstraint between the hand and the thigh: a ``point`` loop
    between two frames added at its points (an existing marker at one point is reused),
    placed where OpenSim places the constraint's stations, at random coordinates."""
    def edit(m):
        hand, thigh = m.getBodySet().get("hand"), m.getBodySet().get("thigh")
        mk = m.getMarkerSet().get(0)
        m.addConstraint(osim.PointConstraint(hand, osim.Vec3(0.03, -0.08, 0.01), thigh,
                                             osim.Vec3(-0.02, 0.1, 0.04)))
        m.getConstraintSet().get(0).setName("pc")
        parent = mk.getParentFrame()
        X = _np(parent.findTransformInBaseFrame())
        p = X[:3, :3] @ np.array([mk.get_location().get(i) for i in range(3)]) + X[:3, 3]
        m.addConstraint(osim.PointConstraint(
            m.getBodySet().get(parent.findBaseFrame().getName()), osim.Vec3(*p), hand,
            osim.Vec3(0.0, 0.0, 0.0)))
        m.getConstraintSet().get(1).setName("at_marker")
    path = _variant(tmp_path, edit)
    spec, notes = osim_to_spec(path)
    m = osim.Model(path)
    s = m.initSystem()
    marker = m.getMarkerSet().get(0).getName()
    assert [(c.name, c.kind, c.frame_a, c.frame_b) for c in spec.constraints] == [
        ("pc", "point", "pc_point_1", "pc_point_2"),
        ("at_marker", "point", marker, "at_marker_point_2")]
    assert any(n.startswith("constraint pc (PointConstraint): a point loop") for n in notes)
    tree = replace(spec, constraints=()).validate()  # floating: no loop; posed as a tree
    adapter = registry.adapter_class(registry.preferred("fit"))(PreparedModel(tree, "pc"))
    lay = Layout.from_spec(tree)
    rng = np.random.default_rng(5)
    pc = osim.PointConstraint.safeDownCast(m.getConstraintSet().get("pc"))
    ends = [(pc.getSocket(k).getConnecteeAsObject(), loc) for k, loc in
            (("body_1", pc.get_location_body_1()), ("body_2", pc.get_location_body_2()))]
    for _ in range(3):
        for c in m.getCoordinateSet():
            c.setValue(s, float(rng.uniform(-0.9, 0.9)), False)
        m.realizePosition(s)
        P = adapter.frame_poses(_canonical_q(m, s, lay), ["pc_point_1", "pc_point_2"])
        for k, (frame, loc) in enumerate(ends):
            g = osim.PhysicalFrame.safeDownCast(frame).findStationLocationInGround(s, loc)
            got = np.array([g.get(i) for i in range(3)])
            assert np.abs(P[k, :3] - got).max() <= lookup("import", "osim_pose").atol


@pytest.mark.parametrize("reader", ["scale_setup", "marker_set", "ik_weights",
                                    "ik_coordinate_tasks", "ik_coordinate_values",
                                    "contact_label", "osim"])
def test_every_opensim_xml_reader_refuses_a_malformed_file_in_one_line(tmp_path, reader):
    """Each OpenSim XML file `harness track` reads (a ScaleTool setup, a marker set, an IK
    setup, ExternalLoads, a model) cut off mid-element: BadInput naming the file, on one
    line, "not well-formed XML", never ElementTree's ParseError."""
    from conftest import assert_bad_input

    from harness.track import osim_scale, run, scale_setup

    path = tmp_path / "cut.xml"
    path.write_text('<?xml version="1.0" encoding="UTF-8" ?>\n<OpenSimDocument Version="40000">'
                    "<InverseKinematicsTool><IKTaskSet><objects><IKMarkerTask name='a'>")
    load = {"scale_setup": scale_setup.read_setup,
            "marker_set": osim_scale.marker_set_file,
            "ik_weights": run.ik_weights,
            "ik_coordinate_tasks": run.ik_coordinate_tasks,
            "ik_coordinate_values": lambda p: run.ik_coordinate_values(p, ["a"]),
            "contact_label": run.contact_label,
            "osim": osim_scale.load}[reader]
    assert_bad_input(load, str(path), "not well-formed XML")

""".osim import (engines/opensim_osim.py osim_to_spec, harness/model/osim_import.py):
the canonical model read from tests/data/osim_user_model.osim moves exactly as OpenSim
moves the file's model (body and marker poses at random coordinates, every joint type
included), and what is set aside or refused says so in one line naming the file."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import opensim as osim
import pytest

from engines.opensim_osim import osim_to_spec
from harness.core.conventions import Layout, matrix_to_quat_wxyz, quat_wxyz_to_xyzw
from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.prepared import PreparedModel
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
        q = lay.neutral().copy()
        X = _np(m.getBodySet().get("pelvis").getTransformInGround(s))
        q[0:3] = X[:3, 3]
        q[3:7] = quat_wxyz_to_xyzw(matrix_to_quat_wxyz(X[:3, :3]))
        for c in m.getCoordinateSet():
            if c.getName() in lay.joint_names:
                q[lay.slot(c.getName()).iq] = c.getValue(s)  # slope ±1: |s| q = q
        lumbar = m.getJointSet().get("lumbar")
        R_FM = _np(lumbar.getChildFrame().findTransformBetween(s, lumbar.getParentFrame()))
        R_BM = _np(lumbar.getChildFrame().findTransformInBaseFrame())
        R = R_BM[:3, :3] @ R_FM[:3, :3] @ R_BM[:3, :3].T
        sl = lay.slot("lumbar")
        q[sl.iq:sl.iq + 4] = quat_wxyz_to_xyzw(matrix_to_quat_wxyz(R))
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


def test_coupled_custom_joint_is_refused(tmp_path):
    # translation1 (a constant in the committed model) made to follow sh_flex too
    path = _variant(tmp_path, lambda m: _custom(m, 3, osim.LinearFunction(0.01, 0.0),
                                                ["sh_flex"]))
    _refused(path, "CustomJoint shoulder", "sh_flex", "coupled")


def test_non_linear_custom_axis_is_refused(tmp_path):
    fn = osim.SimmSpline()
    for x, y in ((-1.0, 0.0), (0.0, 0.01), (1.0, 0.05)):
        fn.addPoint(x, y)
    path = _variant(tmp_path, lambda m: _custom(m, 5, fn, ["sh_flex"]))
    _refused(path, "CustomJoint shoulder", "translation3", "SimmSpline")


def test_unsupported_joint_force_and_constraint_are_refused(tmp_path):
    def gimbal(m):
        b = osim.Body("extra", 1.0, osim.Vec3(0), osim.Inertia(0.01, 0.01, 0.01))
        m.addBody(b)
        m.addJoint(osim.GimbalJoint("gimbal", m.getBodySet().get("hand"), osim.Vec3(0),
                                    osim.Vec3(0), b, osim.Vec3(0), osim.Vec3(0)))
    _refused(_variant(tmp_path, gimbal), "GimbalJoint gimbal", "not supported")

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

"""MJCF import (harness/model/mjcf_import.py, compiled by engines/mujoco_mjcf.py): the
catalog round trip through to_mjcf, a hand-written MJCF checked against its declared
physics, four-engine parity of the imported models, and every rejected construct.

Tolerances: engine parity uses the tolerance table (tests/conftest.assert_close); the
import comparisons below look theirs up in the same table (group "import").
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from engines.pinocchio import PinocchioAdapter
from fixtures import catalog
from fixtures.export import to_mjcf
from harness import api
from harness.core.conventions import (
    matrix_to_quat_wxyz,
    quat_wxyz_to_xyzw,
    quat_xyzw_to_matrix,
    rpy_to_matrix,
)
from harness.core.errors import BadInput
from harness.core.spec import WORLD_BODY
from harness.core.tolerances import lookup
from harness.model.mjcf_import import load_mjcf, load_mjcf_with_notes
from harness.model.prepared import PreparedModel
from tests.conftest import assert_bad_input, assert_close, tol_kw
from tests.unit.test_urdf_import import _four_engine_parity

# MuJoCo stores inertias as principal moments + a quaternion (an eigen-decomposition) and
# poses as quaternions: reading them back costs a few ulps of the largest entry.
GROUP_INERTIA = tol_kw("import", "group_inertia_mjcf")  # [kg, m, kg·m²]
POSE = tol_kw("import", "mjcf_pose")  # positions [m], rotation entries, axes


def _write(tmp_path, text, name="model.xml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def _rx(a):
    return rpy_to_matrix((a, 0.0, 0.0))


def _ry(a):
    return rpy_to_matrix((0.0, a, 0.0))


def _rz(a):
    return rpy_to_matrix((0.0, 0.0, a))


# ----- catalog round trip -------------------------------------------------------------------
@pytest.mark.parametrize("name", catalog.names())
def test_catalog_round_trip(tmp_path, name):
    spec = catalog.get(name)
    path = _write(tmp_path, to_mjcf(spec), f"{name}.xml")
    back, notes = load_mjcf_with_notes(path, floating=spec.floating)
    assert notes == [] and back.source == path and back.name == spec.name
    assert back.floating == spec.floating and back.gravity == spec.gravity
    assert [b.name for b in back.bodies] == [b.name for b in spec.bodies]
    assert sorted(f.name for f in back.frames) == sorted(f.name for f in spec.frames)
    joints = {j.name: j for j in back.joints}
    for j in spec.joints:
        k = joints[j.name]
        # MJCF has one hinge kind: a continuous joint comes back as an unbounded revolute
        want_type = "revolute" if j.type == "continuous" else j.type
        assert (k.type, k.parent, k.child, k.lower, k.upper, k.damping, k.armature) == \
               (want_type, j.parent, j.child, j.lower, j.upper, j.damping, j.armature)
        np.testing.assert_allclose(k.xyz, j.xyz, **POSE)
        np.testing.assert_allclose(rpy_to_matrix(k.rpy), rpy_to_matrix(j.rpy), **POSE)
        if j.type != "fixed":  # a weld has no axis (importers fill in their default)
            np.testing.assert_allclose(k.axis, j.axis, **POSE)
    want = PreparedModel(spec, "fixture").declared_group_inertias()
    have = PreparedModel(back, path).declared_group_inertias()
    assert want.keys() == have.keys()
    for jn in want:
        np.testing.assert_allclose(have[jn], want[jn], **GROUP_INERTIA, err_msg=jn)
    _four_engine_parity(PreparedModel(back, path))


# ----- a hand-written MJCF: degrees, intrinsic euler, quats, inertia from a geom ------------
HAND = """<mujoco model="hand written">
  <compiler angle="degree"/>
  <option gravity="0.5 0 -9.7"/>
  <worldbody>
    <site name="world_marker" pos="0.1 0 0"/>
    <body name="base" pos="0 0 1" euler="0 0 90">
      <inertial pos="0 0 0.05" mass="3" diaginertia="0.03 0.04 0.05"/>
      <body name="arm" pos="0.1 0 0" quat="0.9 0.1 0.2 0.3">
        <joint name="shoulder" type="hinge" axis="0 1 1" range="-90 45" damping="0.2"
               armature="0.01"/>
        <inertial pos="0.2 0.01 0" quat="0.8 0.0 0.6 0.0" mass="1.5"
                  diaginertia="0.01 0.02 0.025"/>
        <site name="tip" pos="0.4 0 0" euler="10 20 30"/>
        <body name="hand" pos="0.4 0 0">
          <joint name="wrist" type="slide" axis="1 0 0"/>
          <geom type="box" size="0.05 0.04 0.03" density="1000"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="shoulder"/></actuator>
</mujoco>
"""


def _quat(w, x, y, z):
    q = np.array([w, x, y, z], dtype=float)
    return quat_xyzw_to_matrix(quat_wxyz_to_xyzw(q / np.linalg.norm(q)))


def test_hand_written_mjcf_matches_its_declared_physics(tmp_path):
    path = _write(tmp_path, HAND)
    spec, notes = load_mjcf_with_notes(path)
    assert spec.name == "hand_written" and spec.gravity == (0.5, 0.0, -9.7)
    assert [b.name for b in spec.bodies] == [WORLD_BODY, "base", "arm", "hand"]
    assert any("actuator" in n for n in notes) and any(WORLD_BODY in n for n in notes)
    j = {j.name: j for j in spec.joints}
    weld = spec.parent_joint("base")
    assert (weld.type, weld.parent) == ("fixed", WORLD_BODY)
    np.testing.assert_allclose(weld.xyz, (0, 0, 1), **POSE)
    np.testing.assert_allclose(rpy_to_matrix(weld.rpy), _rz(np.pi / 2), **POSE)
    sh = j["shoulder"]
    assert sh.type == "revolute"
    np.testing.assert_allclose((sh.lower, sh.upper), (-np.pi / 2, np.pi / 4),
                               **tol_kw("import", "mjcf_limits"))
    np.testing.assert_allclose(sh.axis, (0, 2 ** -0.5, 2 ** -0.5), **POSE)
    assert (sh.damping, sh.armature) == (0.2, 0.01)
    np.testing.assert_allclose(rpy_to_matrix(sh.rpy), _quat(0.9, 0.1, 0.2, 0.3), **POSE)
    wr = j["wrist"]
    assert (wr.type, wr.lower, wr.upper) == ("prismatic", None, None)
    # inertia from its quat-rotated principal moments, in the body frame
    R = _quat(0.8, 0.0, 0.6, 0.0)
    arm = spec.body("arm")
    inertia = tol_kw("import", "mjcf_inertia")  # [kg·m²]
    np.testing.assert_allclose(arm.inertia_matrix, R @ np.diag([0.01, 0.02, 0.025]) @ R.T,
                               **inertia)
    assert arm.mass == 1.5 and arm.com == (0.2, 0.01, 0.0)
    # the box geom's inertia (MuJoCo's inertiafromgeom), density 1000
    hand = spec.body("hand")
    a, b, c = 0.05, 0.04, 0.03
    m = 1000 * 8 * a * b * c
    mass_tol = lookup("import", "mjcf_geom_mass")
    assert hand.mass == pytest.approx(m, rel=mass_tol.rtol, abs=mass_tol.atol)
    np.testing.assert_allclose(hand.inertia_matrix,
                               np.diag([m / 3 * (b * b + c * c), m / 3 * (a * a + c * c),
                                        m / 3 * (a * a + b * b)]), **inertia)
    # sites: intrinsic xyz euler (MuJoCo's default eulerseq) = Rx Ry Rz; the world site
    # goes to the world body the importer keeps
    f = {f.name: f for f in spec.frames}
    d = np.deg2rad
    np.testing.assert_allclose(rpy_to_matrix(f["tip"].rpy), _rx(d(10)) @ _ry(d(20)) @ _rz(d(30)),
                               **POSE)
    assert f["tip"].body == "arm" and f["world_marker"].body == WORLD_BODY
    _four_engine_parity(PreparedModel(spec, path))


def test_hand_written_mjcf_floating(tmp_path):
    spec, notes = load_mjcf_with_notes(_write(tmp_path, HAND), floating=True)
    assert spec.floating and spec.root == "base"
    assert "world_marker" not in [f.name for f in spec.frames]
    assert any("pose in worldbody is dropped" in n for n in notes)
    _four_engine_parity(PreparedModel(spec, "hand-floating"))


def test_free_joint_makes_the_model_floating(tmp_path):
    text = ('<mujoco><worldbody><body name="b" pos="0 0 2"><freejoint name="free"/>'
            '<inertial pos="0.1 0 0" mass="2" diaginertia="0.1 0.2 0.25"/>'
            '<body name="c" pos="0.3 0 0"><joint name="j" axis="0 0 1" damping="0.1"/>'
            '<inertial pos="0.1 0.02 0" mass="1" diaginertia="0.01 0.02 0.025"/>'
            '</body></body></worldbody></mujoco>')
    spec, notes = load_mjcf_with_notes(_write(tmp_path, text))
    assert spec.floating and spec.root == "b" and [j.name for j in spec.moving_joints()] == ["j"]
    assert any("free" in n for n in notes)
    _four_engine_parity(PreparedModel(spec, "free"))


def test_hinge_on_the_root_hangs_from_world_body(tmp_path):
    text = ('<mujoco><worldbody><body name="b" pos="0 0 1"><joint name="j" axis="0 1 0"/>'
            '<inertial pos="0 0.1 -0.3" mass="1" diaginertia="0.01 0.02 0.025"/>'
            '</body></worldbody></mujoco>')
    path = _write(tmp_path, text)
    spec = load_mjcf(path)
    assert spec.root == WORLD_BODY and spec.parent_joint("b").type == "revolute"
    _four_engine_parity(PreparedModel(spec, path))
    with pytest.raises(BadInput, match="cannot also be floating"):
        load_mjcf(path, floating=True)


# ----- what an MJCF may not contain -----------------------------------------------------------
def _one(inner_b: str = '<joint name="j"/>', extra: str = "", world: str = "") -> str:
    return ('<mujoco><worldbody>' + world +
            '<body name="a"><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
            f'<body name="b" pos="0 0 -1">{inner_b}'
            '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></body>'
            f'</worldbody>{extra}</mujoco>')


BAD = {
    # a ball joint is imported (tests/unit/test_ball_joint.py); its frictionloss is not
    "ball_frictionloss": (_one('<joint name="j" type="ball" frictionloss="1"/>'),
                          "frictionloss is not supported"),
    # several joints in one body and joints away from the body origin are imported
    # (tests/unit/test_multi_joint_body.py)
    "free_below_root": (_one('<freejoint/>'), "free joint can only be used on top level"),
    # a hinge or slide spring is imported (test_joint_spring_is_imported); on a ball not
    "ball_stiffness": (_one('<joint name="j" type="ball" stiffness="3"/>'),
                       "stiffness on a ball joint"),
    "frictionloss": (_one('<joint name="j" frictionloss="0.1"/>'), "frictionloss"),
    # a tendon without stiffness/damping/armature is set aside, a connect/weld becomes a
    # loop constraint (tests/unit/test_mjcf_equality.py); these are refused
    "tendon": (_one('<joint name="j"/><site name="s"/>',
                    '<tendon><fixed name="t" damping="1"><joint joint="j" coef="1"/></fixed>'
                    '</tendon>'), "tendon t: damping is not supported"),
    "equality": (_one('<joint name="j"/>', '<equality><joint joint1="j"/></equality>'),
                 "without joint2 holds joint1 at a constant"),
    # several trees at worldbody are imported (test_forest_at_worldbody), but not two free
    # ones: a floating model has one free root
    "two_free_trees": (_one(world='<body name="o1"><freejoint/><inertial pos="0 0 0" '
                                  'mass="1" diaginertia="1 1 1"/></body><body name="o2">'
                                  '<freejoint/><inertial pos="0 0 0" mass="1" '
                                  'diaginertia="1 1 1"/></body>', inner_b=""),
                       "2 body trees at worldbody move (o1, o2)"),
    "equality_on_set_aside_tree": (
        _one(world='<body name="o1"><freejoint/><inertial pos="0 0 0" mass="1" '
                   'diaginertia="1 1 1"/></body>', inner_b='<joint name="j"/>',
             extra='<equality><connect body1="b" body2="o1" anchor="0 0 0"/></equality>'),
        "body o1 is in a body tree set aside"),
    "unnamed_body": ('<mujoco><worldbody><body><inertial pos="0 0 0" mass="1" '
                     'diaginertia="1 1 1"/></body></worldbody></mujoco>', "has no name"),
    "unnamed_joint": (_one('<joint/>'), "has no name"),
    "mocap": ('<mujoco><worldbody><body name="m" mocap="true"/></worldbody></mujoco>', "mocap"),
    "gravcomp": (_one('<joint name="j"/>').replace('<body name="b"', '<body name="b" gravcomp="1"'),
                 "gravcomp"),
    "fluid": (_one().replace("<worldbody>", '<option density="1.2"/><worldbody>'), "fluid"),
    "bad_name": (_one('<joint name=" j"/>'), "' j'"),
    "world_body_name": (_one('<joint name="j"/>').replace('name="b"', f'name="{WORLD_BODY}"')
                        .replace('<body name="a">', '<body name="a" pos="0 0 1">'),
                        "already exists"),
    "malformed": ("<mujoco><worldbody>", "MuJoCo cannot compile it"),
    "missing_mesh": ('<mujoco><asset><mesh name="m" file="/nonexistent/x.stl"/></asset>'
                     '<worldbody><body name="a"><geom type="mesh" mesh="m"/></body>'
                     '</worldbody></mujoco>', "MuJoCo cannot compile it"),
    "no_bodies": ("<mujoco/>", "no bodies"),
    "empty": ("", "empty"),
    "doctype": ('<!DOCTYPE m [<!ENTITY e "x">]><mujoco/>', "DOCTYPE"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_mjcf_names_the_file_and_the_problem(tmp_path, case):
    text, expected = BAD[case]
    path = _write(tmp_path, text, f"{case}.xml")
    assert_bad_input(load_mjcf, path, expected)


def test_missing_mjcf_file(tmp_path):
    path = str(tmp_path / "nope.xml")
    with pytest.raises(BadInput, match="file not found"):
        load_mjcf(path)


def test_matrix_to_quat_helper_round_trips():
    """The conversions the MJCF reader relies on (quat → matrix → rpy → matrix)."""
    from harness.core.conventions import matrix_to_rpy

    rot = tol_kw("import", "rotation_roundtrip")
    for q in ([0.9, 0.1, 0.2, 0.3], [0.0, 1.0, 0.0, 0.0], [0.5, -0.5, 0.5, 0.5]):
        R = _quat(*q)
        np.testing.assert_allclose(rpy_to_matrix(matrix_to_rpy(R)), R, **rot)
        np.testing.assert_allclose(_quat(*matrix_to_quat_wxyz(R)), R, **rot)


SITE_NAMED_LIKE_BODY = """<mujoco model="site_same_name">
  <compiler angle="radian" inertiafromgeom="false"/>
  <worldbody>
    <body name="base">
      <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <body name="arm" pos="0 0 -0.1">
        <joint name="shoulder" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.2" mass="1.5" diaginertia="0.02 0.03 0.01"/>
        <site name="arm" pos="0 0 -0.4"/>
        <site name="arm__site" pos="0 0 -0.3"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_site_named_like_its_body_is_a_frame_of_its_own(tmp_path):
    """MJCF keeps site and body names apart: a site ``arm`` on body ``arm`` is the frame
    ``arm__site_2`` here (``arm__site`` is another site's name), both sites are compared,
    at the analytic poses p = (0, 0, -0.1) + Ry(q) (0, 0, -d) [m]."""
    path = _write(tmp_path, SITE_NAMED_LIKE_BODY)
    spec, notes = load_mjcf_with_notes(path)
    frames = {f.name: f for f in spec.frames}
    assert set(frames) == {"arm__site_2", "arm__site"}
    assert frames["arm__site_2"].body == "arm"
    assert any("site arm shares its name with a body" in n and "arm__site_2" in n
               for n in notes)
    model = PreparedModel(spec, path)
    pin = PinocchioAdapter(model)
    for q in (0.0, 0.7, -2.1):
        for frame, d in (("arm__site_2", 0.4), ("arm__site", 0.3), ("arm", 0.0)):
            want = np.r_[-d * np.sin(q), 0.0, -0.1 - d * np.cos(q), _ry(q).reshape(-1)]
            assert_close(pin.frame_pose(np.array([q]), frame), want, "kinematics",
                         "frame_pose", frame)
    _four_engine_parity(model)


FOREST = """<mujoco model="forest">
  <compiler angle="radian" inertiafromgeom="false"/>
  <worldbody>
    <site name="target" pos="0.5 0 0.2"/>
    <body name="base" pos="0 0 0.5">
      <inertial pos="0 0 0" mass="2" diaginertia="0.02 0.02 0.02"/>
      <body name="link" pos="0 0 -0.1">
        <joint name="j1" type="hinge" axis="1 0 0" damping="0.1"/>
        <inertial pos="0 0.02 -0.2" mass="1.5" diaginertia="0.02 0.03 0.01"/>
        <site name="tip" pos="0 0 -0.4"/>
      </body>
    </body>
    <body name="table" pos="1 0 0.4" euler="0 0 0.3">
      <inertial pos="0 0 0" mass="20" diaginertia="1 1 1"/>
      <site name="table_top" pos="0 0 0.02"/>
      <body name="leg" pos="0.4 0.4 -0.2">
        <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      </body>
    </body>
    <body name="ball" pos="1 0 0.6">
      <freejoint name="ball_free"/>
      <inertial pos="0 0 0" mass="0.2" diaginertia="0.001 0.001 0.001"/>
      <site name="ball_centre"/>
    </body>
    <body name="arm2" pos="0 1 0.5">
      <joint name="k1" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -0.2" mass="1" diaginertia="0.01 0.01 0.002"/>
    </body>
  </worldbody>
</mujoco>"""


def _tree_alone(keep: str) -> str:
    """FOREST with only the body tree whose root is ``keep``."""
    text = FOREST.replace('<site name="target" pos="0.5 0 0.2"/>', "")
    for root in ("base", "table", "ball", "arm2"):
        if root != keep:
            text = re.sub(rf'\n    <body name="{root}".*?\n    </body>', "", text, flags=re.S)
    return text


def test_forest_at_worldbody(tmp_path):
    """A robot, a second arm, a static table and a free ball under <worldbody>: the two
    arms and the table hang from world_, the ball is set aside with a note, its site
    dropped; M and h of the forest are the block-diagonal assembly of each arm imported
    alone (the table never moves), and the five engines agree on the forest."""
    spec, notes = load_mjcf_with_notes(_write(tmp_path, FOREST))
    assert spec.root == WORLD_BODY and not spec.floating
    assert [b.name for b in spec.bodies] == [WORLD_BODY, "base", "link", "table", "leg",
                                             "arm2"]
    assert [j.name for j in spec.moving_joints()] == ["j1", "k1"]
    assert sorted((f.name, f.body) for f in spec.frames) == [
        ("table_top", "table"), ("target", WORLD_BODY), ("tip", "link")]
    assert any("set aside (ball)" in n for n in notes)
    assert any("site ball_centre" in n and "dropped" in n for n in notes)
    model = PreparedModel(spec, "forest")
    pin = PinocchioAdapter(model)
    alone = [PinocchioAdapter(PreparedModel(load_mjcf(_write(tmp_path, _tree_alone(r),
                                                             f"{r}.xml")), r))
             for r in ("base", "arm2")]
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, v = rng.uniform(-2, 2, 2), rng.normal(size=2)
        M = np.zeros((2, 2))
        h = np.zeros(2)
        for i, a in enumerate(alone):
            M[i, i] = a.mass_matrix(q[i:i + 1])[0, 0]
            h[i] = a.bias_forces(q[i:i + 1], v[i:i + 1])[0]
        assert_close(pin.mass_matrix(q), M, "dynamics", "mass_matrix", "forest")
        assert_close(pin.bias_forces(q, v), h, "dynamics", "bias_forces", "forest")
    _four_engine_parity(model)


def test_forest_with_one_free_tree_is_the_floating_model(tmp_path):
    """A free robot beside a static floor: the robot is the floating model, the floor set
    aside with a note (a floating model has no world body)."""
    text = ('<mujoco><worldbody><body name="floor" pos="0 0 -0.1"><inertial pos="0 0 0" '
            'mass="100" diaginertia="1 1 1"/></body><body name="torso" pos="0 0 1">'
            '<freejoint name="root"/><inertial pos="0 0 0" mass="5" diaginertia="0.1 0.1 '
            '0.05"/><body name="leg" pos="0 0 -0.2"><joint name="hip" axis="0 1 0"/>'
            '<inertial pos="0 0 -0.2" mass="2" diaginertia="0.03 0.03 0.005"/></body></body>'
            '</worldbody></mujoco>')
    spec, notes = load_mjcf_with_notes(_write(tmp_path, text))
    assert spec.floating and [b.name for b in spec.bodies] == ["torso", "leg"]
    assert any("set aside (floor)" in n for n in notes)
    _four_engine_parity(PreparedModel(spec, "free forest"))


def test_forest_closed_by_an_equality_between_two_trees(tmp_path):
    """Two hinged arms in separate trees joined by a connect equality (a loop through
    world_), a free ball beside them, and a keyframe whose qpos starts with the ball's 7
    numbers: q_init is the keyframe without them (the file's -0.4 0.9 0.2), and stages
    0–3 pass in every engine."""
    text = """<mujoco model="forest_eq"><worldbody>
      <body name="ball" pos="1 0 0.6"><freejoint/>
        <inertial pos="0 0 0" mass="0.2" diaginertia="0.001 0.001 0.001"/></body>
      <body name="a1"><joint name="h1" axis="0 1 0"/>
        <inertial pos="0.25 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
        <body name="a2" pos="0.5 0 0"><joint name="h2" axis="0 1 0"/>
          <inertial pos="0.25 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
          <site name="tip" pos="0.5 0 0"/></body></body>
      <body name="b1" pos="1 0 0"><joint name="h3" axis="0 1 0"/>
        <inertial pos="0 0 0.25" mass="1" diaginertia="0.01 0.01 0.01"/>
        <site name="top" pos="0 0 0.5"/></body>
    </worldbody>
    <equality><connect site1="tip" site2="top"/></equality>
    <keyframe><key name="k" qpos="1 0 0.6 1 0 0 0 -0.4 0.9 0.2"/></keyframe></mujoco>"""
    path = _write(tmp_path, text)
    spec = load_mjcf(path)
    assert spec.q_init == (-0.4, 0.9, 0.2)
    assert [b.name for b in spec.bodies] == [WORLD_BODY, "a1", "a2", "b1"]
    out = api.parity(mjcf=[path], out=tmp_path / "b", samples=3, seed=1)
    bad = [(r.id, r.reason) for r in out.records
           if r.status not in ("passed", "not_provided", "informational")]
    assert not bad and out.exit_code == 0, bad
    assert any(r.stage == "constrained" and r.status == "passed" for r in out.records)

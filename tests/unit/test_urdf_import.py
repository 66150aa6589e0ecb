"""URDF import (fixtures/urdf_import.py): the catalog round trip, real robots from
example-robot-data through all four engines, the preparation rules, and bad inputs.

Tolerances: engine parity uses the tolerance table (tests/conftest.assert_close); the
round-trip constants below are local for now (the lead moves them into the table).
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from engines.crocoddyl import CrocoddylAdapter
from engines.drake import DrakeAdapter
from engines.mujoco import MujocoAdapter
from engines.pinocchio import PinocchioAdapter
from fixtures import catalog
from fixtures.export import FRAME_JOINT_SUFFIX, to_urdf
from harness.core.conventions import rpy_to_matrix
from harness.core.errors import BadInput, NotProvided
from harness.core.records import measure
from harness.core.spec import WORLD_BODY
from harness.core.tolerances import lookup
from harness.model.prepared import PreparedModel
from harness.model.urdf_import import load_urdf, load_urdf_with_notes
from tests.conftest import assert_bad_input, assert_close, tol_kw

# Round trip through our own URDF export: numbers are written with repr, so they must
# come back to the last bit or within a few ulps (rotation of inertias, axis norm).
ROUNDTRIP = tol_kw("import", "roundtrip")          # body/joint fields [SI]
GROUP_INERTIA = tol_kw("import", "group_inertia_urdf")  # [kg, m, kg·m²]


def _write(tmp_path, text, name="robot.urdf", mode="w"):
    p = tmp_path / name
    if mode == "wb":
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return str(p)


def _robots_dir() -> str:
    import example_robot_data

    return os.path.normpath(example_robot_data.getModelPath("panda_description/urdf/panda.urdf"))


def _erd(rel: str) -> str:
    return os.path.join(_robots_dir(), rel)


# ----- 1. catalog round trip --------------------------------------------------------------
@pytest.mark.parametrize("name", catalog.names())
def test_catalog_round_trip(tmp_path, name):
    spec = catalog.get(name)
    path = _write(tmp_path, to_urdf(spec), f"{name}.urdf")
    back, notes = load_urdf_with_notes(path, floating=spec.floating)
    assert notes == []
    assert back.source == path and back.name == spec.name
    assert back.floating == spec.floating
    got = {b.name: b for b in back.bodies}
    # bodies: same names and inertial parameters; named frames come back as massless
    # bodies on fixed joints ``<frame>__frame`` at the same pose
    assert [b.name for b in back.bodies] == ([b.name for b in spec.bodies]
                                             + [f.name for f in spec.frames])
    for b in spec.bodies:
        c = got[b.name]
        assert abs(c.mass - b.mass) <= ROUNDTRIP["atol"] + ROUNDTRIP["rtol"] * b.mass
        np.testing.assert_allclose(c.com, b.com, **ROUNDTRIP)
        np.testing.assert_allclose(c.inertia, b.inertia, **ROUNDTRIP)
    joints = {j.name: j for j in back.joints}
    for j in spec.joints:
        k = joints[j.name]
        assert (k.type, k.parent, k.child, k.lower, k.upper, k.damping) == \
               (j.type, j.parent, j.child, j.lower, j.upper, j.damping)
        # a weld has no axis (importers fill in their default)
        for field in ("xyz", "rpy") + (("axis",) if j.type != "fixed" else ()):
            np.testing.assert_allclose(getattr(k, field), getattr(j, field), **ROUNDTRIP)
        assert k.armature == 0.0  # URDF has no armature
    for f in spec.frames:
        assert got[f.name].mass == 0.0 and not any(got[f.name].inertia)
        k = joints[f.name + FRAME_JOINT_SUFFIX]
        assert (k.type, k.parent, k.child) == ("fixed", f.body, f.name)
        np.testing.assert_allclose(k.xyz, f.xyz, **ROUNDTRIP)
        np.testing.assert_allclose(k.rpy, f.rpy, **ROUNDTRIP)
    want = PreparedModel(spec, "fixture").declared_group_inertias()
    have = PreparedModel(back, path).declared_group_inertias()
    assert want.keys() == have.keys()
    for jn in want:
        np.testing.assert_allclose(have[jn], want[jn], **GROUP_INERTIA, err_msg=jn)


# ----- 2. real robots through all four engines ---------------------------------------------
def _four_engine_parity(model: PreparedModel, seed: int = 0):
    """M, h, forward and inverse dynamics of MuJoCo, Drake and Crocoddyl against
    Pinocchio at one random state (and frame poses for the engines that provide them)."""
    ref = PinocchioAdapter(model)
    rng = np.random.default_rng(seed)
    q, v = ref.random_state(rng)
    tau, vdot = rng.normal(size=ref.nv), rng.normal(size=ref.nv)
    want = {"mass_matrix": ref.mass_matrix(q), "bias_forces": ref.bias_forces(q, v),
            "forward_dynamics": ref.forward_dynamics(q, v, tau),
            "inverse_dynamics": ref.inverse_dynamics(q, v, vdot)}
    poses = {f: ref.frame_pose(q, f) for f in model.frames}
    for cls in (MujocoAdapter, DrakeAdapter, CrocoddylAdapter):
        eng = cls(model)
        assert (eng.nq, eng.nv) == (ref.nq, ref.nv)
        calls = {"mass_matrix": lambda: eng.mass_matrix(q),
                 "bias_forces": lambda: eng.bias_forces(q, v),
                 "forward_dynamics": lambda: eng.forward_dynamics(q, v, tau),
                 "inverse_dynamics": lambda: eng.inverse_dynamics(q, v, vdot)}
        for quantity, call in calls.items():
            if quantity not in eng.provides:
                with pytest.raises(NotProvided):
                    call()
                continue
            assert_close(call(), want[quantity], "dynamics", quantity,
                         f"{model.name} {eng.name} vs pinocchio")
        if "frame_pose" in eng.provides:
            for f, X in poses.items():
                assert_close(eng.frame_pose(q, f), X, "kinematics", "frame_pose",
                             f"{model.name} {eng.name} frame {f}")


ROBOTS = [
    ("panda_description/urdf/panda.urdf", False),       # mimic finger, damping
    ("ur_description/urdf/ur5_robot.urdf", False),      # link world + fixed joint
    ("solo_description/robots/solo12.urdf", True),      # floating quadruped
    ("kinova_description/robots/kinova.urdf", False),   # continuous joints (nq != nv)
    ("double_pendulum_description/urdf/double_pendulum_continuous.urdf", True),
]


@pytest.mark.parametrize("rel,floating", ROBOTS,
                         ids=[f"{r.split('/')[-1]}-{'floating' if f else 'fixed'}"
                              for r, f in ROBOTS])
def test_example_robot_four_engine_parity(rel, floating):
    path = _erd(rel)
    spec = load_urdf(path, floating=floating)
    assert spec.source == path and spec.floating == floating
    _four_engine_parity(PreparedModel(spec, path))


def test_panda_preparation_is_as_documented():
    spec, notes = load_urdf_with_notes(_erd("panda_description/urdf/panda.urdf"))
    j = {j.name: j for j in spec.joints}
    # mimic → a moving joint coupled to its leader (stage 3)
    assert j["panda_finger_joint2"].type == "prismatic"
    assert [(c.follower, c.leader, c.multiplier, c.offset) for c in spec.couplings] == \
        [("panda_finger_joint2", "panda_finger_joint1", 1.0, 0.0)]
    assert any(n.startswith("joint panda_finger_joint2: coupled:") for n in notes)
    assert j["panda_joint1"].damping > 0 and j["panda_joint1"].lower is not None
    assert spec.root == "panda_link0" and not spec.floating
    assert [s.name for s in PreparedModel(spec, "x").layout.slots] == \
           [f"panda_joint{k}" for k in range(1, 8)] + ["panda_finger_joint1",
                                                       "panda_finger_joint2"]


def test_ur5_world_link_is_removed():
    spec, notes = load_urdf_with_notes(_erd("ur_description/urdf/ur5_robot.urdf"))
    assert spec.root == "base_link" and "world" not in [b.name for b in spec.bodies]
    assert "world_joint" not in [j.name for j in spec.joints]
    assert any("world" in n for n in notes)


def test_continuous_joints_have_two_coordinates():
    spec = load_urdf(_erd("kinova_description/robots/kinova.urdf"))
    lay = PreparedModel(spec, "x").layout
    assert sum(s.type == "continuous" for s in lay.slots) == 3
    assert (lay.nq, lay.nv) == (9, 6)


# ----- preparation rules on small synthetic files --------------------------------------------
def _urdf(links: str, joints: str = "", name="t") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{links}\n{joints}\n</robot>\n'


def _link(name, mass=1.0, xyz="0 0 0", rpy="0 0 0", I="0.01 0 0 0.02 0 0.025"):
    ixx, ixy, ixz, iyy, iyz, izz = I.split()
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/>'
            f'<mass value="{mass}"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" '
            f'iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial>'
            '<visual><geometry><mesh filename="package://nowhere/x.dae"/></geometry></visual>'
            '<collision><geometry><box size="1 1 1"/></geometry></collision></link>')


def _joint(name, parent, child, jtype="revolute", extra='<limit lower="-1" upper="1"/>',
           xyz="0 0 0.1", rpy="0 0 0", axis="0 1 0"):
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}" rpy="{rpy}"/>{ax}{extra}</joint>')


def test_inertial_rpy_rotates_the_inertia_into_the_link_frame(tmp_path):
    rpy = (0.3, -0.4, 1.1)
    I = np.array([[0.01, 0.001, -0.002], [0.001, 0.02, 0.0005], [-0.002, 0.0005, 0.025]])
    text = _urdf(_link("a") + _link("b", 2.0, "0.1 0.2 0.3", " ".join(map(repr, rpy)),
                                    f"{I[0,0]} {I[0,1]} {I[0,2]} {I[1,1]} {I[1,2]} {I[2,2]}"),
                 _joint("j", "a", "b"))
    spec = load_urdf(_write(tmp_path, text))
    R = rpy_to_matrix(rpy)
    np.testing.assert_allclose(spec.body("b").inertia_matrix, R @ I @ R.T,
                               **tol_kw("import", "rotated_inertia"))
    assert spec.body("b").com == (0.1, 0.2, 0.3)
    _four_engine_parity(PreparedModel(spec, "synthetic"))


def test_axis_default_and_normalisation(tmp_path):
    text = _urdf(_link("a") + _link("b") + _link("c"),
                 _joint("j1", "a", "b", axis=None) + _joint("j2", "b", "c", axis="0 3 4"))
    spec = load_urdf(_write(tmp_path, text))
    j = {j.name: j for j in spec.joints}
    assert j["j1"].axis == (1.0, 0.0, 0.0)
    np.testing.assert_allclose(j["j2"].axis, (0.0, 0.6, 0.8), **tol_kw("import", "axis"))


def test_limits_and_joint_types(tmp_path):
    text = _urdf(_link("a") + _link("b") + _link("c") + _link("d") + _link("e"),
                 _joint("rev_zero", "a", "b", extra='<limit effort="1" velocity="1"/>')
                 + _joint("rev_inverted", "b", "c", extra='<limit lower="1" upper="-1"/>')
                 + _joint("cont", "c", "d", "continuous", extra='<limit lower="-1" upper="1"/>'
                          '<dynamics damping="0.3" friction="0.7"/>')
                 + _joint("slide", "d", "e", "prismatic",
                          extra='<limit lower="-0.1" upper="0.2"/><safety_controller/>'))
    spec, notes = load_urdf_with_notes(_write(tmp_path, text))
    j = {j.name: j for j in spec.joints}
    assert (j["rev_zero"].lower, j["rev_zero"].upper) == (None, None)
    assert (j["rev_inverted"].lower, j["rev_inverted"].upper) == (None, None)
    assert j["cont"].type == "continuous" and j["cont"].lower is None
    assert j["cont"].damping == 0.3
    assert (j["slide"].type, j["slide"].lower, j["slide"].upper) == ("prismatic", -0.1, 0.2)
    assert any("rev_zero" in n and "unbounded" in n for n in notes)
    assert any("rev_inverted" in n for n in notes)
    assert any("cont" in n and "friction" in n for n in notes)
    _four_engine_parity(PreparedModel(spec, "synthetic"))


def test_massless_links_without_inertial_are_fine_on_fixed_joints(tmp_path):
    text = _urdf(_link("a") + _link("b") + '<link name="tool"/>',
                 _joint("j", "a", "b") + _joint("tool_joint", "b", "tool", "fixed", ""))
    spec = load_urdf(_write(tmp_path, text))
    assert spec.body("tool").mass == 0.0 and not any(spec.body("tool").inertia)
    _four_engine_parity(PreparedModel(spec, "synthetic"))


def test_world_link_rules(tmp_path):
    # coms off the joint axes, so that no compared vector is zero by structure
    links = _link("a", xyz="0.02 0.03 0.1") + _link("b", xyz="0.05 -0.02 0.1")
    # identity weld: world removed
    spec = load_urdf(_write(tmp_path, _urdf('<link name="world"/>' + links,
                                            _joint("w", "world", "a", "fixed", "", xyz="0 0 0")
                                            + _joint("j", "a", "b")), "w1.urdf"))
    assert spec.root == "a" and not spec.floating
    # offset weld: world kept as the massless root world_ (fixed base), dropped if floating
    text = _urdf('<link name="world"/>' + links,
                 _joint("w", "world", "a", "fixed", "", xyz="0 0 1", rpy="0.5 0 0")
                 + _joint("j", "a", "b"))
    p = _write(tmp_path, text, "w2.urdf")
    spec = load_urdf(p)
    assert spec.root == WORLD_BODY and spec.body(WORLD_BODY).mass == 0.0
    assert spec.parent_joint("a").xyz == (0.0, 0.0, 1.0)
    _four_engine_parity(PreparedModel(spec, p))
    spec, notes = load_urdf_with_notes(p, floating=True)
    assert spec.root == "a" and spec.floating and any("dropped" in n for n in notes)
    # floating joint to world: the model floats
    spec, notes = load_urdf_with_notes(
        _write(tmp_path, _urdf('<link name="world"/>' + links,
                               _joint("w", "world", "a", "floating", "")
                               + _joint("j", "a", "b")), "w3.urdf"))
    assert spec.floating and spec.root == "a" and any("floating" in n for n in notes)
    # revolute joint to world: world_ root carrying it; cannot also float
    p = _write(tmp_path, _urdf('<link name="world"/>' + links,
                               _joint("w", "world", "a") + _joint("j", "a", "b")), "w4.urdf")
    spec = load_urdf(p)
    assert spec.root == WORLD_BODY and spec.parent_joint("a").type == "revolute"
    _four_engine_parity(PreparedModel(spec, p))
    with pytest.raises(BadInput, match="cannot also be floating"):
        load_urdf(p, floating=True)
    # world with two children
    with pytest.raises(BadInput, match="more than one child"):
        load_urdf(_write(tmp_path, _urdf('<link name="world"/>' + links,
                                         _joint("w1", "world", "a", "fixed", "")
                                         + _joint("w2", "world", "b", "fixed", "")), "w5.urdf"))


def test_mimic_joint_is_coupled(tmp_path):
    text = _urdf(_link("a") + _link("b") + _link("c"),
                 _joint("j", "a", "b") + _joint("m", "b", "c", xyz="0 0 0.2", rpy="0.1 0 0",
                                                extra='<limit lower="-1" upper="1"/>'
                                                      '<mimic joint="j" multiplier="2"/>'
                                                      '<dynamics damping="1"/>'))
    spec, notes = load_urdf_with_notes(_write(tmp_path, text))
    m = spec.parent_joint("c")
    assert (m.type, m.xyz, m.rpy, m.damping) == ("revolute", (0.0, 0.0, 0.2), (0.1, 0.0, 0.0),
                                                 1.0)
    assert [(c.follower, c.leader, c.multiplier, c.offset) for c in spec.couplings] == \
        [("m", "j", 2.0, 0.0)]
    assert any(n.startswith("joint m: coupled: m = 2·j + 0") for n in notes)


def test_mimic_of_a_continuous_joint_is_frozen_at_zero(tmp_path):
    text = _urdf(_link("a") + _link("b") + _link("c"),
                 _joint("j", "a", "b", "continuous")
                 + _joint("m", "b", "c", xyz="0 0 0.2", rpy="0.1 0 0",
                          extra='<limit lower="-1" upper="1"/><mimic joint="j" multiplier="2"/>'
                                '<dynamics damping="1"/>'))
    spec, notes = load_urdf_with_notes(_write(tmp_path, text))
    m = spec.parent_joint("c")
    assert (m.type, m.xyz, m.rpy, m.damping) == ("fixed", (0.0, 0.0, 0.2), (0.1, 0.0, 0.0), 0.0)
    assert spec.couplings == ()
    assert any(n.startswith("joint m: frozen: mimic of j") and "j is continuous" in n
               for n in notes)


def test_mimic_naming_no_joint_is_refused(tmp_path):
    text = _urdf(_link("a") + _link("b") + _link("c"),
                 _joint("j", "a", "b") + _joint("m", "b", "c",
                                                extra='<limit lower="-1" upper="1"/>'
                                                      '<mimic joint="nope"/>'))
    path = _write(tmp_path, text)
    assert_bad_input(load_urdf, path, "<mimic joint='nope'> names no joint")


def test_document_order_is_kept(tmp_path):
    text = _urdf(_link("z") + _link("b") + _link("a") + _link("m"),
                 _joint("jm", "z", "m") + _joint("ja", "z", "a") + _joint("jb", "a", "b"))
    spec = load_urdf(_write(tmp_path, text))
    assert [b.name for b in spec.bodies] == ["z", "b", "a", "m"]
    assert [j.name for j in spec.joints] == ["jm", "ja", "jb"]
    assert [j.name for j in spec.moving_joints()] == ["jm", "ja", "jb"]


def test_robot_name_is_sanitised_but_link_names_are_not(tmp_path):
    spec = load_urdf(_write(tmp_path, _urdf(_link("a"), name="my robot/v2")), floating=True)
    assert spec.name == "my_robot_v2"
    # any text is a valid name (namespaces, unicode, even markup: reports escape it) ...
    for name in ("ns/link", "ns link", "<b>é</b>"):
        from xml.sax.saxutils import escape
        spec = load_urdf(_write(tmp_path, _urdf(_link(escape(name))), "ok.urdf"), floating=True)
        assert spec.bodies[0].name == name
    # ... except control characters and surrounding whitespace
    with pytest.raises(BadInput, match="not allowed"):
        load_urdf(_write(tmp_path, _urdf(_link(" padded")), "n.urdf"))


# ----- 3. bad inputs -------------------------------------------------------------------------
GOOD = _urdf(_link("a") + _link("b"), _joint("j", "a", "b"))

BAD_TEXTS = {
    "empty": ("", "empty"),
    "whitespace": ("  \n\t", "empty"),
    "truncated": (GOOD[: len(GOOD) // 2], "malformed XML at line"),
    "not_xml": ("this is not a robot", "malformed XML at line 1"),
    "not_robot": ("<mujoco/>", "expected <robot>"),
    "doctype": ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><robot name="x">'
                '<link name="&a;"/></robot>', "DOCTYPE"),
    "no_links": ('<robot name="x"/>', "no <link>"),
    "xacro": ('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">'
              '<xacro:macro name="m"><link name="a"/></xacro:macro></robot>', "xacro"),
    "planar": (_urdf(_link("a") + _link("b"), _joint("j", "a", "b", "planar")),
               "planar joints are not supported"),
    "unknown_type": (_urdf(_link("a") + _link("b"), _joint("j", "a", "b", "screw")),
                     "unknown joint type 'screw'"),
    "ball": (_urdf(_link("a") + _link("b"), _joint("j", "a", "b", "spherical")),
             "joint j: a ball joint is not URDF"),
    "floating_inside": (_urdf(_link("a") + _link("b"), _joint("j", "a", "b", "floating", "")),
                        "floating joints are only supported"),
    "unknown_link": (_urdf(_link("a") + _link("b"), _joint("j", "a", "ghost")),
                     "child link 'ghost' is not a <link>"),
    "two_parents": (_urdf(_link("a") + _link("b") + _link("c"),
                          _joint("j1", "a", "c") + _joint("j2", "b", "c")), "two parents"),
    "cycle": (_urdf(_link("a") + _link("b") + _link("c"),
                    _joint("j1", "a", "b") + _joint("j2", "b", "c") + _joint("j3", "c", "b")),
              "two parents"),
    "pure_cycle": (_urdf(_link("a") + _link("b"),
                         _joint("j1", "a", "b") + _joint("j2", "b", "a")), "cycle"),
    "two_roots": (_urdf(_link("a") + _link("b")), "more than one root"),
    "self_parent": (_urdf(_link("a"), _joint("j", "a", "a")), "its own parent"),
    "nan_mass": (_urdf(_link("a", "nan") + _link("b"), _joint("j", "a", "b")),
                 "not a finite decimal"),
    "inf_origin": (_urdf(_link("a") + _link("b"), _joint("j", "a", "b", xyz="0 inf 0")),
                   "not a finite decimal"),
    "overflow": (_urdf(_link("a", "1e999") + _link("b"), _joint("j", "a", "b")), "not finite"),
    "negative_mass": (_urdf(_link("a", "-1") + _link("b"), _joint("j", "a", "b")),
                      "mass is negative"),
    "not_psd": (_urdf(_link("a") + _link("b", I="0.01 0 0 -0.02 0 0.025"),
                      _joint("j", "a", "b")), "positive semi-definite"),
    "triangle": (_urdf(_link("a") + _link("b", I="0.01 0 0 0.01 0 0.05"),
                       _joint("j", "a", "b")), "triangle inequality"),
    "massless_with_inertia": (_urdf(_link("a") + _link("b", 0, I="0.01 0 0 0.01 0 0.01"),
                                    _joint("j", "a", "b")), "mass is 0 but the inertia"),
    "massless_moving": (_urdf(_link("a") + '<link name="b"/>', _joint("j", "a", "b")),
                        "moves only massless bodies"),
    "zero_axis": (_urdf(_link("a") + _link("b"), _joint("j", "a", "b", axis="0 0 0")),
                  "axis is zero"),
    "short_axis": (_urdf(_link("a") + _link("b"), _joint("j", "a", "b", axis="0 1")),
                   "expected 3 numbers"),
    "no_limit": (_urdf(_link("a") + _link("b"), _joint("j", "a", "b", extra="")),
                 "needs a <limit>"),
    "no_mass": (_urdf('<link name="a"><inertial><inertia ixx="1" ixy="0" ixz="0" iyy="1" '
                      'iyz="0" izz="1"/></inertial></link>'), "<mass value"),
    "bad_number": (_urdf(_link("a", "1_000") + _link("b"), _joint("j", "a", "b")),
                   "not a finite decimal"),
    "bad_name": (_urdf(_link("a") + _link("b"), _joint("j k ", "a", "b")),
                 "joint name 'j k '"),
    "duplicate_link": (_urdf(_link("a") + _link("a")), "duplicate link"),
    "duplicate_joint": (_urdf(_link("a") + _link("b") + _link("c"),
                              _joint("j", "a", "b") + _joint("j", "b", "c")), "duplicate joint"),
    "reserved_name": (_urdf(_link("a") + _link("b"), _joint("root_joint", "a", "b")),
                      "reserved"),
    "negative_damping": (_urdf(_link("a") + _link("b"),
                               _joint("j", "a", "b", extra='<limit lower="-1" upper="1"/>'
                                                           '<dynamics damping="-1"/>')),
                         "damping is negative"),
    "world_has_mass": (_urdf(_link("world") + _link("a"), _joint("w", "world", "a", "fixed", "")),
                       "world cannot have mass"),
}


@pytest.mark.parametrize("case", sorted(BAD_TEXTS))
def test_bad_input_names_the_file_and_the_problem(tmp_path, case):
    text, expected = BAD_TEXTS[case]
    path = _write(tmp_path, text, f"{case}.urdf")
    assert_bad_input(load_urdf, path, expected)


def test_missing_file_directory_and_random_bytes(tmp_path):
    missing = str(tmp_path / "nope.urdf")
    with pytest.raises(BadInput, match="file not found") as e:
        load_urdf(missing)
    assert e.value.where == missing
    with pytest.raises(BadInput, match="is a directory"):
        load_urdf(str(tmp_path))
    noise = _write(tmp_path, np.random.default_rng(0).bytes(4096), "noise.urdf", "wb")
    with pytest.raises(BadInput) as e:
        load_urdf(noise)
    assert e.value.where == noise and ("UTF-8" in e.value.problem or "XML" in e.value.problem)
    ascii_noise = _write(tmp_path, b"\x01\x02 <robot> garbage & <<", "noise2.urdf", "wb")
    with pytest.raises(BadInput, match="malformed XML at line 1"):
        load_urdf(ascii_noise)


def test_floating_massless_root_that_moves_no_mass_is_refused(tmp_path):
    """A massless floating root whose one hinge can follow it: M is singular in that
    direction, refused in one line; with two non-parallel hinges the root is pinned by its
    children, M is regular and the engines agree."""
    one = _urdf('<link name="r"/>' + _link("a", xyz="0 0 -0.2"),
                _joint("j", "r", "a", xyz="0.1 0 0"))
    with pytest.raises(BadInput, match=r"floating root r can move in 1 of its 6 directions"):
        load_urdf(_write(tmp_path, one, "one.urdf"), floating=True)
    two = _urdf('<link name="r"/>' + _link("a", xyz="0 0 -0.2") + _link("b", xyz="0 0 -0.2"),
                _joint("ja", "r", "a", xyz="0.1 0 0")
                + _joint("jb", "r", "b", xyz="-0.1 0 0", axis="1 0 0"))
    p = _write(tmp_path, two, "two.urdf")
    model = PreparedModel(load_urdf(p, floating=True), p)
    pin, drake = PinocchioAdapter(model), DrakeAdapter(model)  # MuJoCo refuses massless bodies
    q, v = pin.random_state(np.random.default_rng(0))
    M = pin.mass_matrix(q)
    assert np.linalg.eigvalsh(M).min() > 1e-6 * np.linalg.eigvalsh(M).max()
    tau = np.ones(pin.nv)
    assert measure(drake.forward_dynamics(q, v, tau)[None], pin.forward_dynamics(q, v, tau)[None],
                   lookup("dynamics", "forward_dynamics"))[3]


def test_round_off_of_a_physical_inertia_is_kept_and_beyond_it_refused(tmp_path):
    """A tensor that misses the physical set by its printed digits (a zero moment at
    −2.5e-22 kg·m², a thin rod's I₁ + I₂ = I₃ a part in 1e12 short) loads as written; the
    same tensors ten times beyond the table's margin are refused with their reason."""
    m = lookup("import", "inertia_physical")
    izz = 0.02  # I₁ = I₂ = 0.01: a rod's I₁ + I₂ = I₃
    inside = {"zero_moment": f"{-m.atol / 4e9!r} 0 0 0.01 0 0.01",   # −2.5e-22
              "rod": f"0.01 0 0 0.01 0 {izz * (1 + m.rtol / 10)!r}"}
    beyond = {"zero_moment": (f"{-m.atol * 10!r} 0 0 0.01 0 0.01", "positive semi-definite"),
              "rod": (f"0.01 0 0 0.01 0 {izz * (1 + m.rtol * 10)!r}", "triangle inequality")}
    for case, inertia in inside.items():
        path = _write(tmp_path, _urdf(_link("a") + _link("b", I=inertia),
                                      _joint("j", "a", "b")), f"in_{case}.urdf")
        spec = load_urdf(path)
        got = next(b for b in spec.bodies if b.name == "b").inertia
        ixx, _, _, iyy, _, izz_written = (float(x) for x in inertia.split())
        assert np.reshape(got, (3, 3)).diagonal().tolist() == [ixx, iyy, izz_written], case
    for case, (inertia, reason) in beyond.items():
        path = _write(tmp_path, _urdf(_link("a") + _link("b", I=inertia),
                                      _joint("j", "a", "b")), f"out_{case}.urdf")
        assert_bad_input(load_urdf, path, reason)

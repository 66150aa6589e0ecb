"""Several joints in one body (MJCF) and the chains of massless bodies that stand for them.

* the chain's poses against MuJoCo's own closed form X_PB(q) = X_PB(0) Π Trans(p_k)
  R_k(q_k) Trans(−p_k) (hinge, ball) / Trans(a_k q_k) (slide), computed here with numpy;
* the user's MJCF humanoid (tests/data/humanoid_mjcf.xml: classes, defaults, degrees,
  several hinges per body with ``pos``, ball joints, a free root) in MuJoCo as the user
  wrote it against the canonical model in Pinocchio: body poses, M and h;
* ``harness parity --mjcf`` on it: every record passes in all four engines;
* the exporter writes each chain back as ONE MuJoCo body with several joints; the MuJoCo
  adapter places the folded massless bodies (and a frame on one) like Pinocchio does,
  Jacobians and drifts included (the hand fixture);
* refusals: a free joint below the root, a derived name that is taken.

Units: m, rad, kg, kg·m²; tolerances from the table (tests/conftest.tol_kw)."""
from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest
from conftest import ROOT, adapter, assert_bad_input, assert_close

from fixtures import catalog
from fixtures.export import to_mjcf, to_urdf
from harness import api
from harness.core.conventions import (
    Layout,
    quat_wxyz_to_xyzw,
    quat_xyzw_to_matrix,
)
from harness.core.errors import ModelRejected
from harness.model.mjcf_import import load_mjcf, load_mjcf_with_notes
from harness.model.prepared import PreparedModel
from harness.model.registry import adapter_class
from harness.model.urdf_import import load_urdf
from tests.unit.test_urdf_import import _four_engine_parity

HUMANOID = ROOT / "tests" / "data" / "humanoid_mjcf.xml"


def _write(tmp_path, text, name="model.xml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def _X(R=np.eye(3), p=(0.0, 0.0, 0.0)):
    X = np.eye(4)
    X[:3, :3], X[:3, 3] = R, p
    return X


def _axis_angle(a, th):
    a = np.asarray(a, dtype=float) / np.linalg.norm(a)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K


def _pose12(X):
    return np.concatenate([X[:3, 3], X[:3, :3].reshape(-1)])


def _mj_qpos(m, lay, q):
    """MuJoCo qpos of the user's model from canonical q, joint by joint by name (free
    root: p, quat w x y z; ball: w x y z)."""
    qpos = m.qpos0.copy()
    for s in lay.slots:
        if s.type == "free":
            jid = next(j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE)
            a = m.jnt_qposadr[jid]
            qpos[a:a + 3] = q[0:3]
            qpos[a + 3:a + 7] = [q[6], q[3], q[4], q[5]]
            continue
        a = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, s.name)]
        if s.type == "ball":
            qpos[a:a + 4] = [q[s.iq + 3], q[s.iq], q[s.iq + 1], q[s.iq + 2]]
        else:
            qpos[a] = q[s.iq]
    return qpos


# ----- the chain against MuJoCo's closed form ----------------------------------------------
ONE_BODY = """<mujoco model="one body">
  <compiler angle="degree"/>
  <worldbody>
    <body name="base" pos="0 0 1">
      <inertial pos="0 0 0" mass="2" diaginertia="0.02 0.03 0.04"/>
      <body name="b" pos="0.1 -0.2 0.3" euler="20 -10 35">
        <joint name="h1" pos="0.05 0.02 -0.1" axis="1 1 0"/>
        <joint name="s1" type="slide" pos="0.3 0 0" axis="0 0.6 0.8"/>
        <joint name="h2" pos="-0.04 0.07 0.02" axis="0 0 1" range="-60 60"/>
        <joint name="bj" type="ball" pos="0.01 -0.03 0.05"/>
        <inertial pos="0.02 0.1 -0.2" mass="1.5" fullinertia="0.03 0.02 0.025 0.001 -0.002 0.0015"/>
        <site name="tip" pos="0.1 0.2 -0.4" euler="10 0 -20"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_chain_is_mujocos_multi_joint_body_in_closed_form(tmp_path):
    """Body b carries a hinge, a slide, a hinge and a ball joint, each anchored away from
    its origin: its canonical chain (b__h1, b__s1, b__h2, b__bj massless, then a weld
    b__fixed) puts b where MuJoCo's joint sequence does, at random q, in Pinocchio."""
    path = _write(tmp_path, ONE_BODY)
    spec = load_mjcf(path)
    assert [b.name for b in spec.bodies] == ["world_", "base", "b", "b__h1", "b__s1", "b__h2",
                                             "b__bj"]
    chain = [(j.name, j.type, j.parent, j.child) for j in spec.joints if j.child != "base"]
    assert chain == [("h1", "revolute", "base", "b__h1"), ("s1", "prismatic", "b__h1", "b__s1"),
                     ("h2", "revolute", "b__s1", "b__h2"), ("bj", "ball", "b__h2", "b__bj"),
                     ("b__fixed", "fixed", "b__bj", "b")]
    model = PreparedModel(spec, path)
    pin = adapter_class("pinocchio")(model)
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    # closed form: the compiled body pose and joint anchors/axes of b (in b's frame)
    bid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "b")
    R0 = quat_xyzw_to_matrix(quat_wxyz_to_xyzw(m.body_quat[bid]))
    X_WP = _X(p=(0.0, 0.0, 1.0))
    X0 = X_WP @ _X(R0, m.body_pos[bid])
    rng = np.random.default_rng(3)
    for _ in range(4):
        q = model.layout.random_q(rng)
        X = X0.copy()
        for k in range(4):
            jid = m.body_jntadr[bid] + k
            p, a = m.jnt_pos[jid], m.jnt_axis[jid]
            s = model.layout.slot(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, jid))
            if s.type == "prismatic":
                step = _X(p=a * q[s.iq])
            else:
                R = (quat_xyzw_to_matrix(q[s.iq:s.iq + 4]) if s.type == "ball"
                     else _axis_angle(a, q[s.iq]))
                step = _X(p=p) @ _X(R) @ _X(p=-p)
            X = X @ step
            # the chain body after joint k sits at its anchor with b's orientation
            want_k = X @ _X(p=p)
            assert_close(pin.frame_pose(q, f"b__{s.name}"), _pose12(want_k), "kinematics",
                         "frame_pose", f"b__{s.name}")
        assert_close(pin.frame_pose(q, "b"), _pose12(X), "kinematics", "frame_pose", "b")
        # and MuJoCo on the user's file agrees (its own multi-joint body)
        d.qpos[:] = _mj_qpos(m, model.layout, q)
        mujoco.mj_kinematics(m, d)
        mj = np.concatenate([d.xpos[bid], d.xmat[bid]])
        assert_close(pin.frame_pose(q, "b"), mj, "kinematics", "frame_pose", "b vs MuJoCo")
        sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "tip")
        assert_close(pin.frame_pose(q, "tip"), np.concatenate([d.site_xpos[sid],
                                                               d.site_xmat[sid]]),
                     "kinematics", "frame_pose", "tip vs MuJoCo")


# ----- the humanoid as its user wrote it --------------------------------------------------
def test_humanoid_import_names_the_chains():
    spec, notes = load_mjcf_with_notes(str(HUMANOID))
    assert spec.floating and spec.name == "humanoid"
    chains = spec.joint_chains()
    # three hip hinges at the body origin: two massless bodies, the thigh is the third's
    assert chains["thigh_right__hip_x_right"] == ("thigh_right", ("hip_z_right", "hip_y_right"))
    assert spec.parent_joint("thigh_right").name == "hip_y_right"
    # two abdomen hinges anchored 6.5 cm above the body origin: a weld to the body
    weld = spec.parent_joint("waist_lower")
    assert (weld.name, weld.type, weld.parent, weld.xyz) == \
        ("waist_lower__fixed", "fixed", "waist_lower__abdomen_y", (0.0, 0.0, -0.065))
    assert spec.parent_joint("head__neck").type == "ball"
    assert any("tendon" in n for n in notes) and any("actuator" in n for n in notes)
    lay = Layout.from_spec(spec)  # free root + 22 joints (3 of them ball joints)
    assert (len(lay.slots), lay.nq, lay.nv) == (23, 38, 34)


def _fixed_variant(tmp_path):
    text = HUMANOID.read_text(encoding="utf-8")
    return _write(tmp_path, text.replace('<freejoint name="root"/>', ""), "fixed.xml")


def test_humanoid_canonical_model_is_the_users_mujoco_model(tmp_path):
    """MuJoCo on the user's own file (constraints off) against Pinocchio on the canonical
    model: every body's pose (floating), and M, h at random states with the root welded
    (MuJoCo's dofs are then the canonical ones: hinge angles, ball ω in the child frame)."""
    for path, floating in ((str(HUMANOID), True), (_fixed_variant(tmp_path), False)):
        spec = load_mjcf(path)
        assert spec.floating == floating
        model = PreparedModel(spec, path)
        pin = adapter_class("pinocchio")(model)
        m = mujoco.MjModel.from_xml_path(path)
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
        d = mujoco.MjData(m)
        rng = np.random.default_rng(5)
        for _ in range(3):
            q, v = pin.random_state(rng)
            d.qpos[:] = _mj_qpos(m, model.layout, q)
            mujoco.mj_kinematics(m, d)
            for b in range(1, m.nbody):
                name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
                assert_close(pin.frame_pose(q, name), np.concatenate([d.xpos[b], d.xmat[b]]),
                             "kinematics", "frame_pose", name)
            if floating:
                continue
            d.qvel[:] = v
            mujoco.mj_forward(m, d)
            M = np.zeros((m.nv, m.nv))
            mujoco.mj_fullM(m, d, M)
            assert_close(pin.mass_matrix(q), M, "dynamics", "mass_matrix", "humanoid")
            assert_close(pin.bias_forces(q, v), d.qfrc_bias, "dynamics", "bias_forces",
                         "humanoid")


def test_parity_on_the_humanoid_passes_in_every_engine(tmp_path):
    out = api.parity(mjcf=[str(HUMANOID)], out=tmp_path / "b", samples=4, seed=1)
    bad = [r.id for r in out.records if r.status not in ("passed", "not_provided")]
    assert not bad, bad
    engines = {r.engine_a for r in out.records} | {r.engine_b for r in out.records}
    assert {"mujoco", "pinocchio", "crocoddyl", "drake"} <= engines
    rel = [r.max_rel for r in out.records if r.status == "passed" and r.max_rel is not None
           and r.stage in ("model_identity", "kinematics", "dynamics")]
    assert rel and max(rel) <= 1e-10
    assert out.exit_code == 0


def test_exporter_writes_one_mujoco_body_per_chain():
    spec = load_mjcf(str(HUMANOID))
    root = ET.fromstring(re.sub(r"<!--.*?-->", "", to_mjcf(spec), flags=re.S))
    bodies = {b.get("name"): b for b in root.iter("body")}
    assert not [n for n in bodies if "__" in n]  # no massless body reaches MuJoCo
    assert [j.get("name") for j in bodies["thigh_right"].findall("joint")] == \
        ["hip_x_right", "hip_z_right", "hip_y_right"]
    ab = bodies["waist_lower"].findall("joint")
    assert [j.get("name") for j in ab] == ["abdomen_z", "abdomen_y"]
    np.testing.assert_allclose([float(x) for x in ab[0].get("pos").split()], [0, 0, 0.065])
    # and it round-trips: the exported file imports to the same chain structure
    m = mujoco.MjModel.from_xml_string(to_mjcf(spec))
    assert m.nbody == len(spec.bodies) - len(spec.joint_chains()) + 1


# ----- the hand fixture: folded bodies and a frame on one, engine against engine --------
FOLDED = ("wrist_link", "index_knuckle", "thumb_cmc_link", "wrist_marker")


@pytest.mark.parametrize("engine", ("mujoco", "drake"))
def test_folded_frames_match_pinocchio(engine):
    """Poses, Jacobians and (fixed base) drifts of the massless links MuJoCo folds into the
    body below them, and of a frame on one, against Pinocchio, which holds them as links."""
    a, ref = adapter(engine, "hand"), adapter("pinocchio", "hand")
    rng = np.random.default_rng(2)
    lay = a.layout
    for _ in range(3):
        q, v = lay.random_q(rng), rng.normal(size=lay.nv)
        assert_close(a.frame_poses(q, list(FOLDED)), ref.frame_poses(q, list(FOLDED)),
                     "kinematics", "frame_pose", engine)
        assert_close(a.frame_jacobians(q, list(FOLDED)), ref.frame_jacobians(q, list(FOLDED)),
                     "kinematics", "frame_jacobian", engine)
        if hasattr(a, "frame_jacobian_drift") and hasattr(ref, "frame_jacobian_drift"):
            J, acc = a.frame_jacobian_drift(q, v, list(FOLDED) + ["index_tip"])
            Jr, accr = ref.frame_jacobian_drift(q, v, list(FOLDED) + ["index_tip"])
            assert_close(J, Jr, "kinematics", "frame_jacobian", f"{engine} drift J")
            assert_close(acc, accr, "constrained", "constraint_drift", f"{engine} drift")


def test_hand_folds_into_mujoco_bodies_and_passes_stages_0_to_2(tmp_path):
    spec = catalog.get("hand")
    m = mujoco.MjModel.from_xml_string(to_mjcf(spec))
    index = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "index_proximal")
    assert m.body_jntnum[index] == 2 and mujoco.mj_name2id(
        m, mujoco.mjtObj.mjOBJ_BODY, "index_knuckle") < 0
    out = api.parity(fixtures=["hand"], out=tmp_path / "b", samples=4, seed=2)
    bad = [r.id for r in out.records if r.status not in ("passed", "not_provided")]
    assert not bad and out.exit_code == 0, bad
    # stage 0 read MuJoCo's model back joint by joint: one row per canonical joint
    n = len(Layout.from_spec(spec).slots)
    rows = [r for r in out.records if r.quantity == "joint_placement" and r.engine_a == "mujoco"]
    assert rows and all(r.n_samples == n and r.status == "passed" for r in rows)


# ----- refusals ---------------------------------------------------------------------------
def _body(inner: str, name="b") -> str:
    return ('<mujoco><worldbody><body name="a"><inertial pos="0 0 0" mass="1" '
            f'diaginertia="1 1 1"/><body name="{name}" pos="0 0 -1">{inner}'
            '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body>'
            '<body name="b__j1"><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
            '</body></body></worldbody></mujoco>')


@pytest.mark.parametrize("case,text,expected", [
    ("free_below_root", _body('<joint name="j1"/>').replace(
        '<body name="b__j1">', '<body name="c"><freejoint name="fj"/>'),
     "free joint can only be used on top level Element name 'c'"),
    ("name_taken", _body('<joint name="j1"/><joint name="j2" axis="1 0 0"/>'),
     "duplicate body/frame name(s): b__j1"),
])
def test_refusals_name_the_element_and_the_file(tmp_path, case, text, expected):
    path = _write(tmp_path, text, f"{case}.xml")
    assert_bad_input(load_mjcf, path, expected)


def test_the_export_states_what_it_folded():
    """The exporter says in the file how many bodies it folded; a spec without chains is
    written exactly as before (the golden exports are unchanged: test_golden_exports)."""
    text = to_mjcf(catalog.get("hand"))
    assert "6 massless body(ies) folded" in text and "1 frame(s) on them" in text
    assert "folded" not in to_mjcf(catalog.get("humanoid_ball"))


def test_a_urdf_with_massless_links_between_joints_reaches_mujoco(tmp_path):
    """A URDF writes several joints of one body through massless links (and frames as
    massless links welded to them): MuJoCo gets them folded, and all four engines agree."""
    spec = catalog.get("hand")
    spec = dataclasses.replace(spec, joints=tuple(
        dataclasses.replace(j, type="revolute", axis=(0.0, 1.0, 0.0), lower=-1.0, upper=1.0)
        if j.type == "ball" else j for j in spec.joints))  # URDF has no ball joint
    path = _write(tmp_path, to_urdf(spec), "hand.urdf")
    back = load_urdf(path)
    assert "wrist_marker" in back.joint_chains()  # a frame link on a folded link
    out = api.parity(urdf=[path], out=tmp_path / "b", samples=3, seed=4)
    bad = [r.id for r in out.records if r.status not in ("passed", "not_provided")]
    assert not bad and out.exit_code == 0, bad


PLANAR_ROOT = """<mujoco model="planar_root">
  <compiler angle="radian" inertiafromgeom="false"/>
  <worldbody>
    <body name="torso" pos="0 0 1.25">
      <joint name="rootz" type="slide" axis="0 0 1"/>
      <joint name="rootx" type="slide" axis="1 0 0"/>
      <joint name="rooty" type="hinge" axis="0 1 0" damping="0.3"/>
      <inertial pos="0.02 0 0.05" mass="3.5" diaginertia="0.1 0.12 0.05"/>
      <body name="thigh" pos="0 0 -0.2">
        <joint name="hip" type="hinge" axis="0 -1 0"/>
        <inertial pos="0 0 -0.2" mass="2" diaginertia="0.03 0.03 0.005"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


HINGES_AWAY = """<mujoco model="hinges_away">
  <compiler angle="radian" inertiafromgeom="false"/>
  <worldbody>
    <body name="link" pos="0 0 1">
      <joint name="j1" type="hinge" axis="1 0 0" pos="0 0 0.1"/>
      <joint name="j2" type="hinge" axis="0 1 0" pos="0 0.05 0"/>
      <joint name="j3" type="hinge" axis="0 0 1" pos="0.02 0 0"/>
      <inertial pos="0 0.02 -0.2" mass="1.5" diaginertia="0.02 0.03 0.01"/>
    </body>
  </worldbody>
</mujoco>"""


def _opensim_is_mujoco_on_the_file(path, total_mass):
    """OpenSim on the canonical model against MuJoCo on the user's own file (constraints
    off; the dofs are the canonical ones): M, h and v̇ at random states, and the group
    inertias' masses add up to the file's (the lent point masses given back)."""
    osim = adapter_class("opensim")(PreparedModel(load_mjcf(path), path))
    m = mujoco.MjModel.from_xml_path(path)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, tau = (rng.uniform(-1, 1, m.nq), rng.normal(size=m.nv),
                     rng.normal(size=m.nv))
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q, v, tau
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        assert_close(osim.mass_matrix(q), M, "dynamics", "mass_matrix", path)
        assert_close(osim.bias_forces(q, v), d.qfrc_bias, "dynamics", "bias_forces", path)
        assert_close(osim.forward_dynamics(q, v, tau), d.qacc, "dynamics",
                     "forward_dynamics", path)
    total = sum(float(g[0]) for g in osim.group_inertias().values())
    assert_close(total, total_mass, "model_identity", "total_mass", "lent mass given back")


def test_opensim_holds_chains_of_massless_bodies_in_a_row(tmp_path):
    """OpenSim's tree builder needs a massive body right after each massless one; chains of
    joints in one MJCF body put massless bodies in a row. Each exact point-mass loan
    (mass_loans) makes OpenSim load: slide z, slide x, hinge y (a planar root: the body
    between the slides has no exact loan, its child gets one from the torso, its hinge at
    its origin) and three hinges away from the body origin on a root hung from the world
    (loans at a child joint's origin). OpenSim's M, h, v̇ equal MuJoCo's on the user's own
    file. Three slides in a row (no exact loan) are one CustomJoint (engines/opensim.py
    ``merged_slides``); two parallel slides in a run cannot be, and are refused naming
    the user's joints, not the harness's bodies."""
    _opensim_is_mujoco_on_the_file(_write(tmp_path, PLANAR_ROOT), 5.5)
    _opensim_is_mujoco_on_the_file(_write(tmp_path, HINGES_AWAY, "away.xml"), 1.5)
    xyz = PLANAR_ROOT.replace('<joint name="rooty" type="hinge" axis="0 1 0" damping="0.3"/>',
                              '<joint name="rooty" type="slide" axis="0 1 0"/>'
                              '<joint name="roll" type="hinge" axis="1 0 0"/>')
    _opensim_is_mujoco_on_the_file(_write(tmp_path, xyz, "xyz.xml"), 5.5)  # one CustomJoint
    zzx = PLANAR_ROOT.replace('<joint name="rootx" type="slide" axis="1 0 0"/>',
                              '<joint name="rootz2" type="slide" axis="0 0 1"/>'
                              '<joint name="rootx" type="slide" axis="1 0 0"/>')
    spec = load_mjcf(_write(tmp_path, zzx, "zzx.xml"))
    with pytest.raises(ModelRejected) as e:  # two parallel slides: no CustomJoint holds them
        adapter_class("opensim")(PreparedModel(spec, "zzx"))
    assert "joints rootz (prismatic), rootz2 (prismatic)" in str(e.value)
    assert "__" not in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["hip_chain", "hip_branch"])
def test_massless_hip_bodies_reach_mujoco_with_the_same_dynamics(name):
    """A hip written as massless links between revolute joints: a chain (yaw, roll, pitch
    through two massless links into the thigh: folded into one MuJoCo body) and a massless
    waist carrying two legs (cannot fold: it borrows point masses on the axes it shares
    with the pelvis and a leg, harness/core/mass_loans.py). MuJoCo loads both; M, h, v̇, τ
    and frame poses of every engine equal Pinocchio's, and MuJoCo's group inertias are the
    declared ones (the lent masses given back)."""
    path = str(ROOT / "tests" / "data" / f"{name}.urdf")
    model = PreparedModel(load_urdf(path), path)
    _four_engine_parity(model)
    mj = adapter_class("mujoco")(model)
    declared = model.declared_group_inertias()
    for joint, got in mj.group_inertias().items():
        assert_close(got, declared[joint], "model_identity", "group_inertia", joint)
    if name == "hip_branch":
        assert "massless moving bodies waist: point masses lent" in to_mjcf(model.spec)

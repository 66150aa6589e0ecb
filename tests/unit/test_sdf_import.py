"""SDF input (harness/model/sdf_import.py, ``harness parity --sdf``).

* a planar four-bar written in SDF 1.6 (link poses in the model frame, a joint frame away
  from its child link, an axis in the parent model frame, rotated inertial frames, the
  loop closed by a ball joint): its links at q = 0 where the file puts them (numbers read
  from the file here, not from the importer), the loop closed at q_init, and stages 0–3
  in all four engines;
* example-robot-data's cassie (cassie_v2.sdf): 4 ball joints close the leg linkages as
  point constraints; stages 0–3 pass (the nearly dependent right plantar row released);
* every unsupported element is refused in one line naming it and the file.

Units: m, rad, kg, kg·m²; tolerances from the table."""
from __future__ import annotations

from pathlib import Path

import example_robot_data
import numpy as np
import pytest
from conftest import assert_bad_input, assert_close, run_cli

from harness import api
from harness.core.conventions import rpy_to_matrix
from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.model.prepared import PreparedModel
from harness.model.registry import adapter_class
from harness.model.sdf_import import load_sdf, load_sdf_with_notes

CASSIE = Path(example_robot_data.getModelPath("cassie_description/robots/cassie_v2.sdf")) \
    / "cassie_description" / "robots"


def _n(x):
    return " ".join(repr(float(v)) for v in x)


def _four_bar() -> tuple:
    """(SDF text, {link: (xyz, rpy)} in the model frame). Pivots A (0, 0, 0) and
    D (0.4, 0, 0), crank tip B (0.05, 0, 0.2), coupler–rocker pin C (0.35, 0, 0.25)."""
    poses = {"base": ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
             "crank": ((0.0, 0.0, 0.0), (0.0, 0.2, 0.0)),
             "coupler": ((0.2, 0.0, 0.225), (0.0, -0.5, 0.0)),
             "rocker": ((0.4, 0.0, 0.0), (0.3, 0.0, 0.0))}
    B, C = np.array([0.05, 0.0, 0.2]), np.array([0.35, 0.0, 0.25])
    Rc = rpy_to_matrix(poses["coupler"][1])
    B_c = Rc.T @ (B - np.array(poses["coupler"][0]))  # joint frames in the child (coupler)
    C_c = Rc.T @ (C - np.array(poses["coupler"][0]))

    def link(name, mass, com, rpy_i):
        xyz, rpy = poses[name]
        return (f"<link name='{name}'><pose>{_n(xyz)} {_n(rpy)}</pose>"
                f"<inertial><pose>{_n(com)} {_n(rpy_i)}</pose><mass>{mass}</mass><inertia>"
                "<ixx>0.004</ixx><iyy>0.005</iyy><izz>0.003</izz><ixy>0.0002</ixy>"
                "<ixz>-0.0001</ixz><iyz>0.0003</iyz></inertia></inertial>"
                f"<visual name='v'><geometry><box><size>1 1 1</size></box></geometry></visual>"
                "</link>")

    text = ("<?xml version='1.0'?><sdf version='1.6'><model name='sdf four bar'>"
            + link("base", 2.0, (0.2, 0.0, -0.05), (0.0, 0.0, 0.0))
            + link("crank", 0.4, (0.0, 0.0, 0.1), (0.1, 0.0, 0.3))
            + link("coupler", 0.6, (0.01, 0.0, 0.02), (0.0, 0.4, 0.0))
            + link("rocker", 0.5, (0.0, 0.02, 0.12), (0.2, 0.1, 0.0))
            + "<joint name='crank_j' type='revolute'><parent>base</parent><child>crank</child>"
              "<axis><xyz>0 1 0</xyz><limit><lower>-3</lower><upper>3</upper></limit>"
              "<dynamics><damping>0.05</damping></dynamics></axis></joint>"
            + f"<joint name='coupler_j' type='revolute'><pose>{_n(B_c)} 0 0 0</pose>"
              "<parent>crank</parent><child>coupler</child><axis><xyz>0 1 0</xyz></axis>"
              "</joint>"
            + "<joint name='rocker_j' type='revolute'><parent>base</parent><child>rocker</child>"
              "<axis><xyz>0 1 0</xyz><use_parent_model_frame>true</use_parent_model_frame>"
              "</axis></joint>"
            + f"<joint name='tip' type='ball'><pose>{_n(C_c)} 0 0 0</pose><parent>rocker</parent>"
              "<child>coupler</child></joint>"
            + "<plugin name='p' filename='libnothing.so'/></model></sdf>")
    return text, poses


def _write(tmp_path, text, name="model.sdf"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_four_bar_links_sit_where_the_file_puts_them(tmp_path):
    text, poses = _four_bar()
    path = _write(tmp_path, text)
    spec, notes = load_sdf_with_notes(path)
    assert spec.name == "sdf_four_bar" and not spec.floating
    assert [(c.name, c.kind) for c in spec.constraints] == [("tip", "point")]
    # the joint frame away from its child link: a massless body and a weld
    assert spec.parent_joint("coupler").name == "coupler__fixed"
    assert spec.parent_joint("coupler__coupler_j").name == "coupler_j"
    assert any("<plugin>" in n and "<visual>" in n for n in notes)
    pin = adapter_class("pinocchio")(PreparedModel(spec, path))
    q0 = np.asarray(spec.q_init)
    for name, (xyz, rpy) in poses.items():
        want = np.concatenate([xyz, rpy_to_matrix(rpy).reshape(-1)])
        assert_close(pin.frame_pose(q0, name), want, "kinematics", "frame_pose", name)
    # the rocker's axis was given in the model frame: it is the model's y
    rocker = spec.parent_joint("rocker")
    np.testing.assert_allclose(rpy_to_matrix(rocker.rpy) @ rocker.axis, [0, 1, 0],
                               atol=1e-15)
    a, b = pin.frame_poses(q0, ["tip__child", "tip__parent"])
    assert_close(a[:3], b[:3], "kinematics", "frame_pose", "the loop closes at q_init")


def test_four_bar_stages_0_to_3_pass_in_every_engine(tmp_path):
    path = _write(tmp_path, _four_bar()[0])
    out = api.parity(sdf=[path], out=tmp_path / "b", samples=4, seed=3)
    bad = [(r.id, r.reason) for r in out.records
           if r.status not in ("passed", "not_provided", "informational")]
    assert not bad, bad
    stages = {r.stage for r in out.records if r.status == "passed"}
    assert {"model_identity", "kinematics", "dynamics", "constrained"} <= stages
    assert out.exit_code == 0


@pytest.mark.parametrize("drop", [False, True])
def test_cassie_goes_through_its_loop_constraints(tmp_path, drop):
    """cassie_v2: its four ball joints close the leg linkages (point constraints, stage
    3); its joint springs (knee-shin 1500, tarsus-heel-spring 1250 N·m/rad) are part of
    the model, set aside only when asked for; the damping of the two loop-closing
    pitch-rod joints is set aside with a note either way."""
    path = str(CASSIE / "cassie_v2.sdf")
    spec, notes = load_sdf_with_notes(path, drop_springs=drop)
    assert sorted(c.name for c in spec.constraints) == [
        "left-pitch-rod-joint", "left-plantar-foot-joint", "right-pitch-rod-joint",
        "right-plantar-foot-joint"]
    springs = {j.name: (j.stiffness, j.spring_ref) for j in spec.joints if j.stiffness}
    if drop:
        assert not springs and any("spring_stiffness" in n for n in notes)
    else:
        assert springs == {f"{s}-{j}": (k, 0.0) for s in ("left", "right") for j, k in (
            ("knee-shin-joint", 1500.0), ("tarsus-spring-joint", 1250.0))}
        assert not any("spring_stiffness" in n for n in notes)
    assert sum("loop-closing joint set aside" in n for n in notes) == 2
    out = api.parity(sdf=[path], drop_springs=drop, out=tmp_path / "b", samples=4, seed=0)
    # stages 0-2, every engine pair of stage 3 and every declared check pass, the right
    # plantar loop's nearly dependent row included (released, with its own check)
    pairs = [r for r in out.records if r.engine_a != "declared" and r.engine_b
             and r.status != "informational"]
    bad = [(r.id, r.reason) for r in out.records
           if r.status not in ("passed", "not_provided", "informational")]
    assert pairs and not bad, bad
    assert out.exit_code == 0
    assert {r.quantity for r in pairs if r.stage == "constrained"} >= {
        "constraint_jacobian", "constraint_drift", "constrained_vdot",
        "constraint_multipliers"}
    declared = {r.quantity for r in out.records if r.engine_a == "declared"
                and r.status == "passed"}
    assert {"constraint_velocity", "constraint_acceleration", "released_acceleration",
            "rollout_projection"} <= declared
    notes = [r.reason for r in out.records if r.quantity == "dependent_rows"]
    assert notes and all("right-plantar-foot-joint" in n and "nearly but not exactly "
                         "dependent" in n for n in notes)


@pytest.mark.parametrize("name,expected", [
    ("cassie.sdf", "joint left-roll-joint: type 'gearbox' is not supported"),
    ("cassie_simple.sdf", "joint static: a prismatic joint to the world is not supported"),
])
def test_cassie_variants_refused_in_one_line(name, expected):
    assert_bad_input(load_sdf, str(CASSIE / name), expected)


def _model(inner: str, version="1.6") -> str:
    return (f"<sdf version='{version}'><model name='m'><link name='a'><inertial><mass>1"
            "</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>"
            "<link name='b'><pose>0 0 -1 0 0 0</pose><inertial><mass>1</mass><inertia>"
            "<ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial></link>"
            f"{inner}</model></sdf>")


_J = "<joint name='j' type='revolute'><parent>a</parent><child>b</child>{}</joint>"
BAD = {
    "universal": (_model(_J.replace("revolute", "universal").format("")),
                  "joint j: type 'universal' is not supported"),
    "friction": (_model(_J.format("<axis><xyz>1 0 0</xyz><dynamics><friction>1</friction>"
                                  "</dynamics></axis>")), "joint j: friction is not supported"),
    "axis2": (_model(_J.format("<axis2><xyz>1 0 0</xyz></axis2>")),
              "joint j: <axis2> is not supported"),
    "frame": (_model(_J.format("") + "<frame name='f'/>"), "<model><frame> is not supported"),
    "relative_to": (_model(_J.format("<pose relative_to='a'>0 0 0 0 0 0</pose>")),
                    "joint j: <pose relative_to/frame=...> is not supported"),
    "version": (_model(_J.format(""), "1.9"), "SDF version 1.9"),
    # nested models are flattened (test_nested_models_are_flattened_like_drakes_own_parser)
    "include": (_model(_J.format("") + "<include><uri>model://x</uri></include>"),
                "<model><include> is not supported (an included model's file is not read"),
    "revolute_loop": (_model(_J.format("") + _J.replace("'j'", "'k'").format("")
                             .replace("<parent>a</parent><child>b</child>",
                                      "<parent>b</parent><child>a</child>")),
                      "no tree"),
    "unknown_link": (_model(_J.format("").replace("<child>b</child>", "<child>c</child>")),
                     "joint j: unknown child link 'c'"),
    "static": (_model(_J.format("") + "<static>true</static>"),
               "<model>: <static>true</static> is not supported"),
    "no_gravity": (_model(_J.format("")).replace("<link name='b'>",
                                                 "<link name='b'><gravity>0</gravity>"),
                   "link b: <gravity>0</gravity> is not supported"),
    "not_sdf": ("<robot name='r'/>", "root element is <robot>, not <sdf>"),
    "malformed": ("<sdf version='1.6'><model>", "not well-formed XML"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_unsupported_sdf_refused_in_one_line(tmp_path, case):
    text, expected = BAD[case]
    assert_bad_input(load_sdf, _write(tmp_path, text, f"{case}.sdf"), expected)


def _seven_r(kind: str) -> str:
    """A spatial loop of seven hinges: l0 → l1 → … → l6 by r1..r6 (tilted axes, links at
    generic points), closed by ``close`` (l0 → l6, ``kind``) away from l6's origin."""
    pts = [(0.0, 0.0, 0.0), (0.2, 0.05, 0.1), (0.35, 0.2, 0.05), (0.3, 0.4, -0.1),
           (0.1, 0.45, -0.2), (-0.1, 0.3, -0.15), (-0.15, 0.1, 0.0)]
    axes = [(0, 0, 1), (1, 0.2, 0), (0, 1, 0.3), (0.4, 0, 1), (1, 1, 0), (0.2, 1, 1)]
    links = "".join(
        f"<link name='l{i}'><pose>{_n(p)} 0 0 0</pose><inertial><pose>0.03 -0.02 0.05 0 0 0"
        f"</pose><mass>{1.0 + 0.2 * i}</mass><inertia><ixx>0.01</ixx><iyy>0.012</iyy><izz>"
        "0.008</izz><ixy>0.001</ixy><ixz>0</ixz><iyz>0.0005</iyz></inertia></inertial></link>"
        for i, p in enumerate(pts))
    joints = "".join(
        f"<joint name='r{i + 1}' type='revolute'><parent>l{i}</parent><child>l{i + 1}</child>"
        f"<axis><xyz>{_n(a)}</xyz></axis></joint>" for i, a in enumerate(axes))
    axis = "<axis><xyz>0.3 -0.5 1</xyz></axis>" if kind != "ball" else ""
    return ("<?xml version='1.0'?><sdf version='1.6'><model name='seven_r'>" + links + joints
            + f"<joint name='close' type='{kind}'><pose>0.1 -0.1 0.05 0 0 0</pose><parent>l0"
              f"</parent><child>l6</child>{axis}</joint></model></sdf>")


def test_a_revolute_loop_closure_is_two_points_on_its_axis(tmp_path):
    """A hinge closing a loop holds 5 conditions (its origins coincide, its axes align);
    the canonical constraints have no hinge kind, so it becomes two point constraints, at
    the joint origin and 1 m along its axis: 6 rows of rank 5 (a ball closure: rank 3)
    on a spatial 7-hinge loop at its file configuration, both points closed at q_init, and
    stages 0–3 pass in every engine (the one dependent row found exactly dependent)."""
    rank = {}
    for kind in ("revolute", "ball"):
        spec, notes = load_sdf_with_notes(_write(tmp_path, _seven_r(kind), f"{kind}.sdf"))
        pin = adapter_class("pinocchio")(PreparedModel(spec, kind))
        q0 = np.asarray(spec.q_init)
        J = np.vstack([pin.frame_jacobian(q0, c.frame_a)[:3]
                       - pin.frame_jacobian(q0, c.frame_b)[:3] for c in spec.constraints])
        sv = np.linalg.svd(J, compute_uv=False)
        rank[kind] = int(np.sum(sv > lookup("constrained", "rank").rtol * sv[0]))
        for c in spec.constraints:
            a, b = pin.frame_poses(q0, [c.frame_a, c.frame_b])
            assert_close(a[:3], b[:3], "kinematics", "frame_pose", f"{c.name} at q_init")
    assert [(c.name, c.kind) for c in spec.constraints] == [("close", "point")]
    assert rank == {"revolute": 5, "ball": 3}
    path = _write(tmp_path, _seven_r("revolute"), "seven_r.sdf")
    spec, notes = load_sdf_with_notes(path)
    assert [(c.name, c.kind) for c in spec.constraints] == [("close", "point"),
                                                           ("close__axis", "point")]
    assert any("close (revolute)" in n and "two points" in n for n in notes)
    out = api.parity(sdf=[path], out=tmp_path / "b", samples=3, seed=2)
    bad = [(r.id, r.reason) for r in out.records
           if r.status not in ("passed", "not_provided", "informational")]
    assert not bad and out.exit_code == 0, bad
    dep = [r.reason for r in out.records if r.quantity == "dependent_rows"]
    assert dep and all("close__axis" in d and "exactly dependent" in d for d in dep)


def test_a_prismatic_loop_closure_is_refused(tmp_path):
    text = _model(_J.format("") + "<link name='c'><pose>0 0 -2 0 0 0</pose><inertial><mass>1"
                  "</mass><inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz></inertia></inertial>"
                  "</link>" + _J.replace("'j'", "'k'").replace("<child>b</child>",
                                                               "<child>c</child>").format("")
                  + _J.replace("'j'", "'l'").replace("<parent>a</parent>", "<parent>c</parent>")
                  .replace("revolute", "prismatic").format(""))
    assert_bad_input(load_sdf, _write(tmp_path, text), "joint l closes a kinematic loop but "
                                                       "is prismatic")


def test_drop_springs_needs_an_sdf():
    with pytest.raises(BadInput, match="--drop-springs"):
        api.load_models(fixtures=["pendulum"], drop_springs=True)


def test_cli_sdf_spring_on_a_ball_joint_refused_in_one_line_exit_2(tmp_path):
    text = _model(_J.replace("revolute", "ball").format(
        "<axis><xyz>1 0 0</xyz><dynamics><spring_stiffness>3</spring_stiffness></dynamics>"
        "</axis>"))
    path = _write(tmp_path, text)
    r = run_cli("parity", "--sdf", path, "--out", tmp_path / "b", "--quiet")
    assert r.returncode == 2 and not (tmp_path / "b").exists()
    line = r.stderr.strip().splitlines()[-1]
    assert path in line and "spring_stiffness on a ball joint" in line


def _drake_tree(text: str, root: str):
    """Drake's own SDF parser on a loop-free SDF (its root welded to the world)."""
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant

    plant = MultibodyPlant(0.0)
    Parser(plant).AddModelsFromString(text, "sdf")
    if "spring_stiffness" in text:  # Drake's parser makes RevoluteSprings of them
        from pydrake.multibody.tree import ForceElementIndex, RevoluteSpring

        assert any(isinstance(plant.get_force_element(ForceElementIndex(i)), RevoluteSpring)
                   for i in range(plant.num_force_elements()))
    plant.WeldFrames(plant.world_frame(), plant.GetFrameByName(root))
    plant.Finalize()
    return plant, plant.CreateDefaultContext()


def _without_closures(text: str, names) -> str:
    for n in names:
        i = text.index(f"<joint name='{n}'") if f"<joint name='{n}'" in text else \
            text.index(f'<joint name="{n}"')
        text = text[:i] + text[text.index("</joint>", i) + len("</joint>"):]
    return text


@pytest.mark.parametrize("case", ["four_bar", "cassie"])
def test_drakes_own_sdf_parser_agrees_on_the_tree(tmp_path, case):
    """Drake parses SDF natively (it refuses loops): on the tree (loop-closing joints
    removed) its link poses relative to the root and its M at random q equal the
    canonical model's in Pinocchio — an independent reading of SDF's pose, axis
    (use_parent_model_frame) and inertial-frame conventions."""
    if case == "four_bar":
        text, root, closures = _four_bar()[0], "base", ["tip"]
    else:
        text = (CASSIE / "cassie_v2.sdf").read_text(encoding="utf-8")
        root = "pelvis"
        closures = ["left-pitch-rod-joint", "right-pitch-rod-joint",
                    "left-plantar-foot-joint", "right-plantar-foot-joint"]
    tree = _without_closures(text, closures)
    spec = load_sdf(_write(tmp_path, tree))
    assert not spec.constraints
    pin = adapter_class("pinocchio")(PreparedModel(spec, "tree"))
    plant, ctx = _drake_tree(tree, root)
    lay = pin.layout
    order = [plant.GetJointByName(n).velocity_start() for n in lay.joint_names]
    rng = np.random.default_rng(8)
    for _ in range(3):
        q = lay.random_q(rng)
        for n in lay.joint_names:
            plant.GetJointByName(n).set_angle(ctx, q[lay.slot(n).iq])
        assert_close(pin.mass_matrix(q), plant.CalcMassMatrix(ctx)[np.ix_(order, order)],
                     "dynamics", "mass_matrix", f"{case} M vs Drake's SDF parser")
        # h at v = 0 (gravity and cassie's joint springs, which Drake's parser reads from
        # <spring_stiffness>/<spring_reference> as RevoluteSprings; the Pinocchio adapter
        # applies the canonical −k (q − q_ref) itself)
        from pydrake.multibody.tree import MultibodyForces

        forces = MultibodyForces(plant)
        plant.CalcForceElementsContribution(ctx, forces)
        h_dk = plant.CalcInverseDynamics(ctx, np.zeros(plant.num_velocities()), forces)
        assert_close(pin.bias_forces(q, np.zeros(lay.nv)), h_dk[order], "dynamics",
                     "bias_forces", f"{case} h(q, 0) vs Drake's SDF parser")
        P = pin.frame_pose(q, root)
        X_WR = np.eye(4)
        X_WR[:3, :3], X_WR[:3, 3] = P[3:].reshape(3, 3), P[:3]
        bodies = plant.GetBodyIndices(plant.GetBodyByName(root).model_instance())
        assert len(bodies) == len([b for b in spec.bodies if "__" not in b.name
                                   and b.name != "world_"])
        for body in bodies:
            name = plant.get_body(body).name()
            F = pin.frame_pose(q, name)
            X = np.eye(4)
            X[:3, :3], X[:3, 3] = F[3:].reshape(3, 3), F[:3]
            rel = np.linalg.solve(X_WR, X)
            want = plant.get_body(body).EvalPoseInWorld(ctx).GetAsMatrix4()
            assert_close(np.concatenate([rel[:3, 3], rel[:3, :3].ravel()]),
                         np.concatenate([want[:3, 3], want[:3, :3].ravel()]),
                         "kinematics", "frame_pose", f"{case} {name}")


NESTED = """<?xml version='1.0'?><sdf version='1.6'><model name='robot_with_gripper'>
  <link name='base'><inertial><mass>3</mass><inertia><ixx>0.05</ixx><iyy>0.04</iyy>
    <izz>0.03</izz></inertia></inertial></link>
  <link name='arm'><pose>0 0 0.3 0 0 0</pose><inertial><pose>0 0 0.15 0 0 0</pose>
    <mass>1.5</mass><inertia><ixx>0.02</ixx><iyy>0.02</iyy><izz>0.004</izz></inertia>
    </inertial></link>
  <joint name='shoulder' type='revolute'><parent>base</parent><child>arm</child>
    <axis><xyz>0 1 0</xyz></axis></joint>
  <model name='gripper'><pose>0 0 0.6 0 0.3 0.2</pose>
    <link name='palm'><inertial><pose>0.01 0 0.02 0 0 0</pose><mass>0.5</mass><inertia>
      <ixx>0.002</ixx><iyy>0.003</iyy><izz>0.001</izz></inertia></inertial></link>
    <link name='finger'><pose>0.02 0 0.08 0.1 0 0</pose><inertial><pose>0 0 0.02 0 0 0
      </pose><mass>0.1</mass><inertia><ixx>0.0001</ixx><iyy>0.0001</iyy><izz>0.00002</izz>
      </inertia></inertial></link>
    <joint name='finger_joint' type='revolute'><parent>palm</parent><child>finger</child>
      <axis><xyz>1 0 0</xyz><use_parent_model_frame>true</use_parent_model_frame></axis>
    </joint>
  </model>
  <joint name='wrist' type='revolute'><parent>arm</parent><child>gripper::palm</child>
    <axis><xyz>0 0 1</xyz></axis></joint>
</model></sdf>"""


def test_nested_models_are_flattened_like_drakes_own_parser(tmp_path):
    """A gripper model nested in an arm model (SDF 1.6: its pose composed with its links',
    its joint's axis in its own model frame, the outer joint naming gripper::palm): the
    links are ``gripper::palm`` and ``gripper::finger``; link poses, M and h(q, 0) equal
    Drake's own SDF parser's (nested models as model instances) at random q, and stages
    0–2 pass in every engine."""
    path = _write(tmp_path, NESTED)
    spec = load_sdf(path)
    assert [b.name for b in spec.bodies] == ["base", "arm", "gripper::palm", "gripper::finger"]
    pin = adapter_class("pinocchio")(PreparedModel(spec, path))
    plant, ctx = _drake_tree(NESTED, "base")

    def dk(name):  # the element's own name, unique in this file (Drake scopes by instance)
        return name.rpartition("::")[2]

    assert plant.HasModelInstanceNamed("robot_with_gripper::gripper")
    lay = pin.layout
    joints = [plant.GetJointByName(dk(n)) for n in lay.joint_names]
    order = [j.velocity_start() for j in joints]
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = lay.random_q(rng)
        for n, j in zip(lay.joint_names, joints):
            j.set_angle(ctx, q[lay.slot(n).iq])
        assert_close(pin.mass_matrix(q), plant.CalcMassMatrix(ctx)[np.ix_(order, order)],
                     "dynamics", "mass_matrix", "nested M vs Drake's SDF parser")
        h_dk = -plant.CalcGravityGeneralizedForces(ctx)
        assert_close(pin.bias_forces(q, np.zeros(lay.nv)), h_dk[order], "dynamics",
                     "bias_forces", "nested h(q, 0) vs Drake's SDF parser")
        for b in spec.bodies:
            want = plant.GetBodyByName(dk(b.name)).EvalPoseInWorld(ctx).GetAsMatrix4()
            assert_close(pin.frame_pose(q, b.name),
                         np.concatenate([want[:3, 3], want[:3, :3].ravel()]),
                         "kinematics", "frame_pose", b.name)
    out = api.parity(sdf=[path], out=tmp_path / "b", samples=3, seed=2)
    bad = [(r.id, r.reason) for r in out.records
           if r.status not in ("passed", "not_provided", "informational")]
    assert not bad and out.exit_code == 0, bad

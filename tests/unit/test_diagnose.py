"""Diagnosis of engine disagreements (harness/stages/diagnosis/) on real engines.

Each known cause of the catalogue is injected alone into a small arm (a user's file
loaded as-is, or one engine given its own file, as users do) and must be detected, named
with the engines and elements it concerns, and credited with ≥ 99 % of every difference
it creates by its ablation; a model with no injected cause must show none. Stage 0's
read-back must name the first differing element of a corrupted model.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from fixtures import catalog
from fixtures.export import to_mjcf, to_urdf
from harness.core import known
from harness.core.spec import Body, FixtureSpec, Joint
from harness.core.tolerances import lookup
from harness.model.as_is import load_as_is
from harness.model.prepared import prepare_fixture
from harness.stages import runner
from harness.stages.diagnosis import ablation as diag_ablation
from harness.stages.diagnosis import causes as diag_causes
from harness.stages.diagnosis import summary as diag_summary
from tests.conftest import ENGINES, EditedMjcfModel, assert_known

# the engines with a URDF/MJCF reader of their own: an as-is diagnosis runs on them only
# (OpenSim's adapter raises NotProvided for an as-is file and is left out, with a note)
ENGINES = [e for e in ENGINES if e != "opensim"]
_I = catalog._inertia
EXPLAINS = 1 - lookup("diagnosis", "explained_share").atol
# engines that, loaded as-is, hold joint damping without applying it (known disagreement)
NO_DAMPING = set(known.entry("as_is_damping_not_applied").engines)


def arm(damping=0.0, armature=0.0, rotated=True, base_mass=0.0, extra=(), floating=False):
    """3-dof arm with full inertias, tilted joint frames, x/y axes and ±3 rad limits."""
    r2, r3 = ((0.1, -0.2, 0.3), (0.0, 0.2, 0.0)) if rotated else ((0, 0, 0), (0, 0, 0))
    base = Body("base", base_mass, (0.0, 0.0, 0.05), _I(4) if base_mass else (0.0,) * 9)
    bodies = [base, Body("l1", 1.2, (0.02, 0.01, -0.2), _I(0)),
              Body("l2", 0.9, (-0.01, 0.02, -0.15), _I(1)),
              Body("l3", 0.6, (0.0, -0.01, -0.1), _I(2))]
    joints = [Joint("j1", "revolute", "base", "l1", (0, 0, 0), (0, 0, 0), (0, 1, 0), -3.0, 3.0,
                    damping, armature),
              Joint("j2", "revolute", "l1", "l2", (0, 0, -0.4), r2, (0, 1, 0), -3.0, 3.0,
                    damping, armature),
              Joint("j3", "revolute", "l2", "l3", (0.05, 0, -0.3), r3, (1, 0, 0), -3.0, 3.0,
                    damping, armature)]
    for b, j in extra:
        bodies.append(b)
        joints.append(j)
    return FixtureSpec("arm", tuple(bodies), tuple(joints), floating=floating)


def _write(tmp, name, text):
    p = tmp / name
    p.write_text(text)
    return str(p)


def _drop_j2(spec):
    return dataclasses.replace(spec, joints=tuple(
        dataclasses.replace(j, type="fixed", lower=None, upper=None) if j.name == "j2" else j
        for j in spec.joints))


def _wrong_merge(spec, body, child, xyz):
    """``child`` (welded to ``body`` by a rotated fixed joint at ``xyz``) merged into
    ``body`` the wrong way: the fixed joint's rotation dropped (the child's com at xyz + c,
    its inertia unrotated). Written independently of harness/stages/diagnosis/."""
    b, c = spec.body(body), spec.body(child)
    p = np.array(xyz)
    m = b.mass + c.mass
    com = (b.mass * np.array(b.com) + c.mass * (p + np.array(c.com))) / m

    def about(I, mass, x):
        d = x - com
        return I + mass * (d @ d * np.eye(3) - np.outer(d, d))

    I = about(b.inertia_matrix, b.mass, np.array(b.com)) + about(c.inertia_matrix, c.mass,
                                                                 p + np.array(c.com))
    bodies = tuple(Body(body, m, tuple(com), tuple(I.ravel())) if x.name == body else x
                   for x in spec.bodies if x.name != child)
    return dataclasses.replace(spec, bodies=bodies,
                               joints=tuple(j for j in spec.joints if j.child != child))


def _mujoco_roundtrip_xml(urdf_text):
    """The MJCF MuJoCo writes for a URDF (MjSpec.to_xml, ~6 significant digits), as a user
    converting a URDF for MuJoCo gets it."""
    import mujoco

    block = ('<mujoco><compiler fusestatic="false" discardvisual="true" '
             'inertiafromgeom="false" balanceinertia="false"/></mujoco>')
    text = urdf_text.replace('<robot name="arm">', f'<robot name="arm">{block}')
    return mujoco.MjSpec.from_string(text).to_xml()


HAND = (Body("hand", 0.7, (0.03, -0.02, 0.05), _I(3)),
        Joint("hand_joint", "fixed", "l3", "hand", (0, 0, -0.2), (0.4, -0.3, 0.9)))
SENSOR = (Body("sensor", 0.0),
          Joint("sensor_mount", "fixed", "l2", "sensor", (0.05, 0, -0.1), (0, 0, 0.5)))


def build(cause, tmp):
    """(model path, load_as_is kwargs, run kwargs) with exactly ``cause`` injected."""
    if cause == "none":
        return _write(tmp, "clean.urdf", to_urdf(arm())), {}, {}
    if cause == "damping":
        return _write(tmp, "damped.urdf", to_urdf(arm(damping=0.05))), {}, {}
    if cause == "armature":  # URDF cannot carry armature: an MJCF (no Euler angles, see
        # test_a_difference_outside_the_catalogue_is_named_and_left_unexplained)
        return _write(tmp, "armature.xml", to_mjcf(arm(armature=0.02, rotated=False,
                                                       base_mass=2.0))), {}, {}
    if cause == "friction":
        text = to_urdf(arm()).replace('friction="0"', 'friction="0.4"')
        return _write(tmp, "friction.urdf", text), {}, {}
    if cause == "limits":
        return _write(tmp, "limits.urdf", to_urdf(arm())), {}, {"beyond_limits": 0.3}
    if cause == "couplings":
        text = to_urdf(arm()).replace('<joint name="j3" type="revolute">',
                                      '<joint name="j3" type="revolute"><mimic joint="j2"/>')
        return _write(tmp, "mimic.urdf", text), {}, {}
    if cause == "fused":
        spec = arm(extra=[HAND])
        path = _write(tmp, "hand.urdf", to_urdf(spec))
        wrong = _write(tmp, "hand_mujoco.xml", to_mjcf(_wrong_merge(spec, "l3", "hand",
                                                                     (0, 0, -0.2))))
        return path, {"engine_files": {"mujoco": wrong}}, {}
    if cause == "geometry":
        text = to_urdf(arm(extra=[SENSOR])).replace(
            '<link name="sensor">', '<link name="sensor"><collision><geometry>'
            '<box size="0.05 0.04 0.03"/></geometry></collision>')
        return _write(tmp, "sensor.urdf", text), {}, {}
    if cause == "dropped":
        spec = arm()
        other = _write(tmp, "no_j2.xml", to_mjcf(_drop_j2(spec)))
        return _write(tmp, "arm.urdf", to_urdf(spec)), {"engine_files": {"mujoco": other}}, {}
    if cause == "conventions":
        return (_write(tmp, "free.urdf", to_urdf(catalog.get("free_body"))),
                {"floating": True}, {})
    if cause == "precision":
        text = to_urdf(arm())
        other = _write(tmp, "arm_mujoco.xml", _mujoco_roundtrip_xml(text))
        return _write(tmp, "arm.urdf", text), {"engine_files": {"mujoco": other}}, {}
    if cause == "nonphysical":  # l2's inertia violates the triangle inequality (0.01 + 0.01
        # < 0.05); MuJoCo would refuse the URDF, so it reads the user's repaired MJCF
        from harness.model.urdf_import import load_urdf

        text = re.sub(r'(<link name="l2">.*?<inertia )[^/]*/>',
                      r'\1ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.05"/>',
                      to_urdf(arm()), count=1, flags=re.S)
        path = _write(tmp, "bad_l2.urdf", text)
        mj = _write(tmp, "bad_l2_repaired.xml", to_mjcf(load_urdf(path, repair_inertia=True)))
        return path, {"repair_inertia": True, "engine_files": {"mujoco": mj}}, {}
    raise KeyError(cause)


INJECTED = {  # cause -> (engines the read-back must name, elements it must name)
    "damping": ({"mujoco", "drake", "pinocchio", "crocoddyl"}, {"j1", "j2", "j3"}),
    "armature": ({"mujoco", "pinocchio", "crocoddyl", "drake"}, {"j1", "j2", "j3"}),
    "friction": ({"mujoco", "pinocchio", "crocoddyl", "drake"}, {"j1", "j2", "j3"}),
    "limits": (set(ENGINES), {"j1", "j2", "j3"}),
    "couplings": (set(ENGINES), {"j3"}),
    "fused": ({"mujoco"}, {"l3", "hand"}),
    "geometry": ({"mujoco"}, {"l2", "sensor"}),
    "dropped": ({"mujoco"}, {"j2"}),
    "conventions": (set(ENGINES), {"root_joint"}),
    "precision": ({"mujoco"}, {"l1", "l2", "l3"}),
    "nonphysical": (set(ENGINES), {"l2"}),
}
_cache: dict = {}


def diagnosis(cause, tmp_path_factory):
    if cause not in _cache:
        tmp = tmp_path_factory.mktemp(cause)
        path, load_kw, run_kw = build(cause, tmp)
        model = load_as_is(path, **load_kw)
        res = diag_ablation.run([model], ENGINES, samples=6, seed=3, **run_kw)
        _cache[cause] = (res, res.summaries[0])
    return _cache[cause]


def test_every_catalogue_cause_has_an_injection():
    assert set(INJECTED) == set(diag_causes.CATALOGUE) - {"other"}


@pytest.mark.parametrize("cause", sorted(INJECTED))
def test_injected_cause_is_detected_named_and_explains_the_difference(cause,
                                                                      tmp_path_factory):
    res, s = diagnosis(cause, tmp_path_factory)
    assert not s["failed"], s["failed"]
    assert [f["cause"] for f in s["findings"]] == [cause], \
        "\n".join(diag_summary.format_summary(s))
    f = s["findings"][0]
    engines, elements = INJECTED[cause]
    assert set(f["engines"]) == engines and elements <= set(f["elements"]), f
    assert f["verdict"] == "explains"
    assert f["effects"], "the cause must change a compared quantity"
    assert all(e["share"] is not None and e["share"] >= EXPLAINS for e in f["effects"]), \
        f["effects"]
    assert not s["unexplained"], s["unexplained"]
    if cause != "conventions":  # every as-is difference is credited to the cause
        assert s["differences"] > 0 and len(f["effects"]) == s["differences"]
    else:  # the harness converts: as-is the engines agree; unconverted they do not
        assert s["differences"] == 0
        assert {e["quantity"] for e in f["effects"]} == {"mass_matrix", "forward_dynamics"}


def test_a_model_with_no_injected_cause_shows_none(tmp_path_factory):
    res, s = diagnosis("none", tmp_path_factory)
    assert s["findings"] == [] and s["differences"] == 0 and not s["unexplained"]
    assert set(s["engines"]) == set(ENGINES)
    asis = [r for r in res.records if r.id.endswith("/as-is")]
    assert len(asis) == 4 * 6 and all(r.status == "passed" for r in asis)  # 4 quantities
    # of 6 engine pairs (Crocoddyl's h included)


def test_the_shares_are_recomputed_from_records_only(tmp_path_factory):
    res, s = diagnosis("damping", tmp_path_factory)
    by = {r.id: r for r in res.records}
    for e in s["findings"][0]["effects"]:
        a, b = e["pair"].split("~")
        r0 = by[f"arm/diagnosis/{e['quantity']}/{a}~{b}/as-is"]
        r1 = by[f"arm/diagnosis/{e['quantity']}/{a}~{b}/without:damping"]
        assert r0.status == "failed" and r1.status == "passed"
        assert e["share"] == 1 - r1.max_abs / r0.max_abs
        for key0, key1, engine in ((r0.key_a, r1.key_a, a), (r0.key_b, r1.key_b, b)):
            same = np.array_equal(res.arrays[key0], res.arrays[key1])
            # ablated only where damping was applied: not in the engines that, as-is, hold
            # damping without applying it (a known disagreement)
            assert same == (engine in NO_DAMPING), (engine, e)


def test_damping_evidence_says_who_holds_it_and_who_applies_it(tmp_path_factory):
    _, s = diagnosis("damping", tmp_path_factory)
    text = s["findings"][0]["evidence"]
    assert "0.05 N·m·s/rad" in text and "applied by mujoco, drake" in text
    assert "not by pinocchio, crocoddyl" in text and "hold it" in text


def test_limits_inside_the_limits_are_a_note_not_a_cause(tmp_path_factory):
    _, s = diagnosis("none", tmp_path_factory)
    assert any("act as constraints in mujoco" in n and "inside the limits" in n
               for n in s["notes"])


def test_a_difference_outside_the_catalogue_is_named_and_left_unexplained(tmp_path):
    """Pinocchio's MJCF parser reads extrinsic Euler angles (eulerseq="XYZ") in another
    order: the tilted joint frames differ. Not in the catalogue: named, not explained."""
    spec = dataclasses.replace(arm(base_mass=2.0), name="tilted_arm")
    path = _write(tmp_path, "tilted.xml", to_mjcf(spec))
    res = diag_ablation.run([load_as_is(path)], ENGINES, samples=4)
    s = res.summaries[0]
    # the failing rows are exactly the known disagreement's (pairs across the two parsers)
    assert_known(res.records)
    side = set(known.entry("pinocchio_mjcf_euler_sequence").engines)
    other = [f for f in s["findings"] if f["cause"] == "other"]
    assert other and set(other[0]["engines"]) == side
    assert "l2" in other[0]["elements"] and "j2" in other[0]["elements"]
    assert s["unexplained"] and {u["pair"].split("~")[0] for u in s["unexplained"]} | \
        {u["pair"].split("~")[1] for u in s["unexplained"]} >= side


@pytest.mark.parametrize("edit,quantity,element", [
    (('mass="1.8"', 'mass="1.818"'), "body_inertia", "link3"),
    (('name="j7" type="hinge" axis="0 0 1"', 'name="j7" type="hinge" axis="0 0 -1"'),
     "joint_axis", "j7"),
    (('name="j2" type="hinge" axis="0 1 0" range="-1.8 1.8" damping="0.4"',
      'name="j2" type="hinge" axis="0 1 0" range="-1.8 1.8" damping="0.5"'),
     "joint_damping", "j2"),
    (('range="-3 0.1"', 'range="-3 0.2"'), "joint_limits", "j4"),
])
def test_stage0_readback_names_the_first_differing_element(edit, quantity, element):
    good = prepare_fixture("chain7")
    if edit[0] not in good.mjcf:
        pytest.fail(f"chain7's MJCF no longer contains {edit[0]!r}: update the test")
    bad = EditedMjcfModel(good.spec, "fixture:chain7 (edited)", edit=edit)
    res = runner.run([bad], ["mujoco", "pinocchio", "drake"], stages=["0"], samples=2)
    failed = {r.quantity for r in res.records if r.status == "failed"
              and r.engine_b == "mujoco" and r.engine_a == "declared"}
    assert quantity in failed
    firsts = {(r.quantity, r.engine_a, r.engine_b): label
              for r, label in diag_summary.first_differing(res.records, res.arrays)}
    assert firsts[(quantity, "declared", "mujoco")] == element
    assert not any(r.status == "failed" for r in res.records
                   if "mujoco" not in (r.engine_a, r.engine_b))


def test_readback_of_every_engine_matches_the_declared_catalog():
    """Parity mode: every read-back quantity passes against the declared model (this is
    what lets stage 0 fail on a real difference and on nothing else)."""
    from harness.stages.identity import JOINT_FIELDS

    res = runner.run([prepare_fixture(f) for f in ("chain7", "tree_floating")], ENGINES,
                     stages=["0"], samples=1)
    qs = {"body_inertia", *JOINT_FIELDS}
    rows = [r for r in res.records if r.quantity in qs]
    assert {r.quantity for r in rows} == qs
    assert rows and all(r.status == "passed" for r in rows), \
        [(r.id, r.max_rel, r.worst_label) for r in rows if r.status != "passed"]


TWO_HINGES = ('<mujoco model="two_hinges"><worldbody><body name="a">'
              '<joint name="j1" axis="0 1 0"/><inertial pos="0 0 -0.3" mass="1" '
              'diaginertia="0.01 0.02 0.03"/><body name="b" pos="0 0 -0.6">'
              '<joint name="j2" axis="1 0 0"/><inertial pos="0 0 -0.2" mass="0.8" '
              'diaginertia="0.01 0.02 0.03"/></body></body></worldbody></mujoco>')


def test_as_is_mjcf_whose_world_carries_a_joint_loads_in_every_engine(tmp_path):
    """The harness keeps the file's world as its root world_; as-is, each engine has its own
    world under its own name: no engine is asked for world_, every row is scored."""
    model = load_as_is(_write(tmp_path, "two.xml", TWO_HINGES))
    assert model.spec.root == "world_" and "world_" not in model.frames
    res = diag_ablation.run([model], ENGINES, samples=3)
    assert not [r.id for r in res.records if r.status in ("error", "not_scored")]
    assert_known(res.records)


def test_drake_ball_joint_velocities_are_named_angular_velocities():
    from engines.drake import DrakeAdapter
    rb = DrakeAdapter(prepare_fixture("humanoid_ball")).readback()
    balls = [j for j in rb["joints"].values() if j["native_q"] == "roll pitch yaw"]
    assert balls and all(j["native_v"].startswith("ω_FM") for j in balls)

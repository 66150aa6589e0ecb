"""MJCF ``<equality>`` connect and weld become stage-3 loop constraints; tendons without
stiffness, damping or armature are set aside with a note; joint couplings and the rest
are refused in one line naming the element. Units: m, rad.

Independent checks: the imported frames' constraint residual g is 0 at the file's
qpos0 (Pinocchio's kinematics, not MuJoCo's), and on states that Pinocchio puts on the
constraint manifold MuJoCo's *own* equality residual (``efc_pos`` of the user's file,
constraints enabled) is 0 too — so the imported loop is MuJoCo's loop."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_bad_input, tol_kw

from fixtures import catalog
from fixtures.export import to_mjcf
from harness.model import registry
from harness.model.mjcf_import import load_mjcf, load_mjcf_with_notes
from harness.model.prepared import PreparedModel
from harness.stages.constrained import constraints as C

FOUR_BAR = """<mujoco model="four bar user">
  <compiler angle="degree"/>
  <default><joint type="hinge" axis="0 1 0" damping="0.05"/></default>
  <worldbody>
    <body name="ground">
      <body name="crank">
        <joint name="crank_joint"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.02" mass="0.5"/>
        <body name="coupler" pos="0 0 0.2">
          <joint name="coupler_joint"/>
          <geom type="capsule" fromto="0 0 0 0.45 0 0.05" size="0.02" mass="0.8"/>
        </body>
      </body>
      <body name="rocker" pos="0.45 0 0">
        <joint name="rocker_joint"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.25" size="0.02" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <connect name="close" body1="coupler" body2="rocker" anchor="0.45 0 0.05"/>
  </equality>
  <tendon><fixed name="t"><joint joint="crank_joint" coef="1"/></fixed></tendon>
</mujoco>
"""

WELD = """<mujoco model="weld user">
  <default><joint type="hinge" axis="0 1 0"/></default>
  <worldbody>
    <body name="ground">
      <body name="l1"><joint name="a1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0.3" size="0.02" mass="1"/>
        <body name="l2" pos="0.3 0 0.3"><joint name="a2" axis="1 0 0.2"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 -0.1" size="0.02" mass="1"/>
          <body name="l3" pos="0.1 0 0"><joint name="a3" axis="0 0 1"/>
            <geom type="sphere" size="0.03" mass="0.2"/></body></body>
      </body>
      <body name="r1" pos="0.8 0 0"><joint name="b1"/>
        <geom type="capsule" fromto="0 0 0 -0.2 0 0.3" size="0.02" mass="1"/>
        <body name="r2" pos="-0.2 0 0.3" euler="0.1 0.4 0.2"><joint name="b2" axis="1 0.3 0"/>
          <geom type="capsule" fromto="0 0 0 -0.1 0 -0.1" size="0.02" mass="1"/>
          <body name="r3"><joint name="b3" axis="0 0 1"/>
            <geom type="sphere" size="0.03" mass="0.2"/>
            <body name="r4" pos="0 0.05 0"><joint name="b4" axis="0 1 0"/>
              <geom type="sphere" size="0.03" mass="0.2"/></body></body></body>
      </body>
    </body>
  </worldbody>
  <equality><weld name="grip" body1="l3" body2="r4" anchor="-0.1 0.02 -0.1"
    torquescale="0.5"/></equality>
</mujoco>
"""


def _write(tmp_path, text, name):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _mujoco_equality_residual(path, q):
    """MuJoCo's own equality residual (efc_pos of the equality rows) of the user's file at
    canonical q (hinges only here: qpos = q)."""
    import mujoco

    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    d.qpos[:] = q
    mujoco.mj_forward(m, d)
    rows = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    assert rows.any()
    return d.efc_pos[rows]


@pytest.mark.parametrize("text,kind,rows", [(FOUR_BAR, "point", 3), (WELD, "weld", 6)])
def test_body_equality_becomes_a_loop_constraint(tmp_path, text, kind, rows):
    path = _write(tmp_path, text, "m.xml")
    spec = load_mjcf(path)
    (c,) = spec.constraints
    assert (c.kind, c.nrows) == (kind, rows)
    assert len(spec.q_init) == sum(1 for j in spec.joints if j.type != "fixed")
    pin = registry.adapter_class("pinocchio")(PreparedModel(spec, path))
    frames = C.constraint_frames(spec)
    exact = tol_kw("constrained", "manifold")
    g0 = C.residual(spec, dict(zip(frames, pin.frame_poses(np.asarray(spec.q_init), frames))))
    np.testing.assert_allclose(g0, 0.0, **exact)
    rng = np.random.default_rng(4)
    for _ in range(3):  # states on the manifold by Pinocchio; MuJoCo's own residual there
        q = C.solve_manifold(spec, pin, pin.integrate(np.asarray(spec.q_init),
                                                      rng.normal(scale=0.1, size=pin.nv), 1.0))
        assert np.abs(q - np.asarray(spec.q_init)).max() > 1e-2  # it moved
        np.testing.assert_allclose(_mujoco_equality_residual(path, q), 0.0, **exact)


def test_equality_statements_in_the_notes(tmp_path):
    _, notes = load_mjcf_with_notes(_write(tmp_path, FOUR_BAR, "f.xml"))
    assert any(n.startswith("1 tendon(s) set aside (t)") for n in notes)
    _, notes = load_mjcf_with_notes(_write(tmp_path, WELD, "w.xml"))
    assert any("torquescale 0.5" in n for n in notes)


@pytest.mark.parametrize("name", ["four_bar", "grip_loop"])
def test_catalog_loops_round_trip_through_mjcf(tmp_path, name):
    """The catalog's loop fixtures exported to MJCF (site connect/weld, keyframe q_init)
    come back with the same constraints and q_init."""
    spec = catalog.get(name)
    back, notes = load_mjcf_with_notes(_write(tmp_path, to_mjcf(spec), f"{name}.xml"))
    assert [(c.name, c.kind, c.frame_a, c.frame_b) for c in back.constraints] == \
           [(c.name, c.kind, c.frame_a, c.frame_b) for c in spec.constraints]
    np.testing.assert_allclose(back.q_init, spec.q_init, **tol_kw("import", "roundtrip"))
    assert any("keyframe q_init" in n for n in notes)


def test_hand_written_four_bar_passes_stage_3_in_every_engine(tmp_path):
    from harness import api

    path = _write(tmp_path, FOUR_BAR, "four_bar.xml")
    out = api.parity(mjcf=path, out=str(tmp_path / "p"), stages=["0", "1", "2", "3"],
                     samples=3)
    bad = [r for r in out.records if r.status in ("failed", "error", "not_scored")]
    assert not bad, [(r.id, r.reason) for r in bad]
    assert any(r.stage == "constrained" and r.status == "passed" and "~" in r.id
               and r.quantity == "constrained_vdot" for r in out.records)


REFUSED = {
    # a non-linear polycoef is a polynomial coupling (tests/conformance/test_mjcf_polycoef.py)
    "tendon_equality": ('<equality><tendon name="te" tendon1="t"/></equality>',
                        "equality te is a tendon coupling: not supported"),
    "tendon_stiffness": ('<tendon><fixed name="s" stiffness="3"><joint joint="crank_joint" '
                         'coef="1"/></fixed></tendon>', "tendon s: stiffness is not supported"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_unsupported_equalities_and_tendons_refused_in_one_line(tmp_path, case):
    extra, expected = REFUSED[case]
    text = FOUR_BAR.replace("</mujoco>", extra + "\n</mujoco>")
    if case == "tendon_stiffness":
        text = text.replace('<tendon><fixed name="t"><joint joint="crank_joint" coef="1"/>'
                            '</fixed></tendon>', "")
    assert_bad_input(load_mjcf, _write(tmp_path, text, f"{case}.xml"), expected)


def test_equality_on_a_floating_model_refused(tmp_path):
    free = '<body name="ground"><freejoint/><geom type="sphere" size="0.1" mass="2"/>'
    path = _write(tmp_path, FOUR_BAR.replace('<body name="ground">', free), "fl.xml")
    assert_bad_input(load_mjcf, path, "equality close: loop constraints are supported on "
                                      "fixed-base models only")

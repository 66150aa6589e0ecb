"""MyoSuite's legs (data/mjcf_models/myo_legs): each knee a knee angle with four axes
and the patella's three following it through quartic polycoefs (14 joint equalities).

* `harness parity --mjcf` passes every stage in every engine, the 14 couplings compared in
  stage 3 through every engine's KKT, the muscles and their tendons set aside with a note;
* on the states stage 3 puts on the harness's manifold, MuJoCo's own equality rows of the
  file as written (efc_pos, efc_J) are zero and equal the harness's rows;
* reduced through both knees' couplings (S from MuJoCo's efc_J, Ṡv_r from the file's
  polycoef), every engine's M, h and v̇ equal MuJoCo's own of the file. The states hold
  the root at the identity orientation and at rest, where MuJoCo's free-joint velocity
  (world linear, body angular) and the canonical one (body linear and angular) coincide.
"""
from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest

from harness.model import registry
from harness.model.mjcf_import import load_mjcf_with_notes
from harness.model.prepared import PreparedModel
from harness.stages.constrained import constraints as C
from harness.stages.constrained import stage as S
from tests.conftest import ENGINES, ROOT, assert_close, run_cli
from tests.support.mujoco_native import NativeMjcf, assert_reduced_like_mujoco

LEGS = ROOT / "data" / "mjcf_models" / "myo_legs" / "myo_sim" / "leg" / "myolegs.xml"
MODEL = "MyoSuite_s_MyoLeg_Model"


def test_parity_passes_every_stage_in_every_engine(tmp_path):
    out = tmp_path / "p"
    proc = run_cli("parity", "--mjcf", LEGS, "--out", out, "--samples", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith(f"{MODEL}: couplings: "))
    assert line.count("= polynomial(degree 4)(knee_angle_") == 14, line
    assert "through the KKT of 5 engines" in line and "0 stage-3 rows failed" in line, line
    rows = json.loads((out / "records.json").read_text())
    assert not [r["id"] for r in rows if r["status"] in ("failed", "error", "not_scored")]
    stages = {r["id"].split("/")[1] for r in rows if r["status"] == "passed"}
    assert stages == {"model_identity", "kinematics", "dynamics", "constrained"}
    notes = json.loads((out / "manifest.json").read_text())["fixtures"][0]["notes"]
    assert any(n.startswith("80 tendon(s) set aside") for n in notes)
    assert any(n.startswith("80 actuator(s) ignored") for n in notes)


@pytest.fixture(scope="module")
def model():
    spec, _ = load_mjcf_with_notes(str(LEGS))
    return PreparedModel(spec, str(LEGS))


def test_mujocos_own_equality_holds_on_the_harness_manifold(model):
    spec = model.spec
    ref = registry.adapter_class("pinocchio")(model)
    Q, _, _ = S.sample_states(spec, ref, 3, np.random.default_rng(4))
    m = mujoco.MjModel.from_xml_path(str(LEGS))
    d = mujoco.MjData(m)
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
    hinge_slide = [j for j in range(m.njnt) if m.jnt_type[j] in (2, 3)]
    iv = [model.layout.slot(names[j]).iv for j in hinge_slide]
    assert len(spec.couplings) == m.neq == 14
    for k, q in enumerate(Q):
        d.qpos[:] = m.qpos0
        for j in hinge_slide:  # canonical q = qpos − ref
            d.qpos[m.jnt_qposadr[j]] += q[model.layout.slot(names[j]).iq]
        mujoco.mj_forward(m, d)
        eq = np.flatnonzero(d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        eq = eq[np.argsort(d.efc_id[eq])]
        J_mj = d.efc_J.reshape(d.nefc, m.nv)[eq][:, [m.jnt_dofadr[j] for j in hinge_slide]]
        J, _ = C.coupling_jacobian_drift(spec, q, np.zeros(model.layout.nv))
        assert_close(d.efc_pos[eq], np.zeros(14), "import", "mjcf_coupling_rows",
                     f"state {k} MuJoCo's g")
        assert_close(J[:, iv], J_mj, "import", "mjcf_coupling_rows", f"state {k} J")


@pytest.fixture(scope="module")
def native():
    return NativeMjcf(LEGS)


@pytest.fixture(scope="module")
def knees(native, model):
    """Two states on MuJoCo's manifold: (qpos, v, τ, S, Ṡv_r) in MuJoCo's order and the
    canonical (q, iv): iv the canonical v index of each MuJoCo dof."""
    m, lay = native.m, model.layout
    rng = np.random.default_rng(8)
    iv = np.zeros(m.nv, dtype=int)
    iv[:6] = np.arange(6)  # the free root first in both, (linear, angular)
    out = []
    for _ in range(2):
        qpos = m.qpos0.copy()
        qpos[3:7] = (1.0, 0.0, 0.0, 0.0)
        for j in range(1, m.njnt):
            a = m.jnt_qposadr[j]
            knee = native.names[j] in ("knee_angle_r", "knee_angle_l")
            qpos[a] += rng.uniform(0.1, 1.8) if knee else rng.uniform(-0.4, 0.4)
        v_r = rng.normal(size=len(native.free))
        v_r[:6] = 0.0  # the root at rest
        qpos, v, Smap, sdot = native.close(qpos, v_r)
        q = lay.neutral()
        q[0:3] = qpos[0:3]
        for j in range(1, m.njnt):
            slot = lay.slot(native.names[j])
            q[slot.iq] = qpos[m.jnt_qposadr[j]] - m.qpos0[m.jnt_qposadr[j]]
            iv[m.jnt_dofadr[j]] = slot.iv
        out.append((qpos, v, rng.normal(size=m.nv), Smap, sdot, q, iv.copy()))
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_reduced_knees_match_mujocos_own(engine, native, model, knees):
    ad = registry.adapter_class(engine)(model)
    for k, (qpos, v, tau, Smap, sdot, q, iv) in enumerate(knees):
        vc = np.zeros(model.layout.nv)
        vc[iv] = v
        assert_reduced_like_mujoco(ad, native, q, vc, iv, qpos, v, tau, Smap, sdot,
                                   f"{engine} state {k}")

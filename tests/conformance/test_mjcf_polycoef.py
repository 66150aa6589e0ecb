"""MJCF joint equalities with a non-linear polycoef, against MuJoCo's own equality.

tests/data/polycoef_knee.xml couples a tibial slide and the patella's slide and hinge to
the knee angle through quadratic polycoefs, every joint drawn at a non-zero ``ref``.
MuJoCo's relation is y − y0 = Σ a_k (x − x0)^k (y joint1, x joint2, y0 and x0 their
refs). The import keeps each follower as a joint of its own in canonical coordinates
qpos − ref, held by a polynomial coupling (stage 3's row). Here MuJoCo loads the file as
written, and its own equality rows (efc_pos, efc_J) and its own M and h are the reference:

* the harness's coupling rows g and J equal MuJoCo's equality rows at arbitrary states
  (off the manifold: the reference offsets show), and so does MuJoCo's equality in the
  MJCF the harness writes for its parity model;
* reduced through the couplings (v = S v_r, SᵀMS, Sᵀ(h + M Ṡv_r), S from MuJoCo's efc_J,
  Ṡv_r from the file's polycoef read from MuJoCo's eq_data — not the harness's code),
  every engine's M, h and v̇ equal MuJoCo's own;
* every engine's stage-3 KKT v̇ equals S v̇_r + Ṡv_r of MuJoCo's reduced dynamics;
* `harness parity` passes every stage in every engine, and a joint equality the harness
  cannot hold is refused in one line (exit 2).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from fixtures.export import to_mjcf
from harness.model import registry
from harness.model.mjcf_import import load_mjcf_with_notes
from harness.model.prepared import PreparedModel
from harness.stages.constrained import constraints as C
from harness.stages.constrained import stage as S
from tests.conftest import ENGINES, ROOT, assert_close, run_cli
from tests.support.mujoco_native import NativeMjcf, assert_reduced_like_mujoco

KNEE = ROOT / "tests" / "data" / "polycoef_knee.xml"


@pytest.fixture(scope="module")
def native():
    return NativeMjcf(KNEE)


@pytest.fixture(scope="module")
def model():
    spec, _ = load_mjcf_with_notes(str(KNEE))
    return PreparedModel(spec, str(KNEE))


def _index(native: NativeMjcf, model: PreparedModel) -> tuple[np.ndarray, np.ndarray]:
    """(iq, iv): the canonical q and v index of each MuJoCo joint (all 1-dof here)."""
    slots = [model.layout.slot(n) for n in native.names]
    return np.array([s.iq for s in slots]), np.array([s.iv for s in slots])


@pytest.fixture(scope="module")
def states(native, model):
    """Four states on MuJoCo's manifold: (qpos, v, τ, S (nv, n_r), Ṡv_r (nv,)) in MuJoCo's
    dof order, the followers at the file's polynomial of the leader (from MuJoCo's
    eq_data, evaluated here with numpy), S from MuJoCo's own efc_J."""
    rng = np.random.default_rng(5)
    m = native.m
    out = []
    for _ in range(4):
        qpos, v, Smap, sdot = native.close(m.qpos0 + rng.uniform(-0.8, 0.8, m.nq),
                                           rng.normal(size=len(native.free)))
        out.append((qpos, v, rng.normal(size=m.nv), Smap, sdot))
    return out


def test_coupling_rows_are_mujocos_equality(native, model):
    """g and J of the harness's coupling rows at canonical q = qpos − ref equal MuJoCo's
    efc_pos and efc_J at qpos, off the manifold; MuJoCo's equality in the MJCF the harness
    writes (ref 0, the polycoef of the canonical coupling) gives the same rows."""
    assert all(c.function and c.function[0] == "polynomial" for c in model.spec.couplings)
    assert [(c.follower, c.leader) for c in model.spec.couplings] == [
        (native.names[native.m.dof_jntid[f]], "knee") for f, *_ in native.eqs]
    written = NativeMjcf(xml=to_mjcf(model.spec))
    iq, iv = _index(native, model)
    rng = np.random.default_rng(9)
    for k in range(3):
        qpos = native.m.qpos0 + rng.uniform(-0.8, 0.8, native.m.nq)
        g_mj, J_mj = native.rows(qpos)
        q = model.layout.neutral()
        q[iq] = qpos - native.m.qpos0
        g = C.coupling_residual(model.spec, q)
        J, _ = C.coupling_jacobian_drift(model.spec, q, np.zeros(model.layout.nv))
        assert np.abs(g_mj).min() > 1e-3  # off the manifold: the offsets matter
        assert_close(g, g_mj, "import", "mjcf_coupling_rows", f"state {k} g")
        assert_close(J[:, iv], J_mj, "import", "mjcf_coupling_rows", f"state {k} J")
        qw = np.zeros(written.m.nq)
        qw[[written.names.index(n) for n in native.names]] = q[iq]
        g_w, J_w = written.rows(qw)
        assert_close(g_w, g_mj, "import", "mjcf_coupling_rows", f"state {k} written g")
        assert_close(J_w[:, [written.names.index(n) for n in native.names]], J_mj, "import",
                     "mjcf_coupling_rows", f"state {k} written J")


def test_ref_shifts_range_and_springref(native, model):
    """A joint's canonical range and spring reference are MuJoCo's less its ref (the
    canonical coordinate is qpos − ref)."""
    m = native.m
    for j, name in enumerate(native.names):
        joint = next(x for x in model.spec.joints if x.name == name)
        ref = m.qpos0[m.jnt_qposadr[j]]
        assert ref != 0.0
        if m.jnt_limited[j]:
            assert (joint.lower, joint.upper) == tuple(float(r - ref) for r in m.jnt_range[j])
        if m.jnt_stiffness[j]:
            assert joint.spring_ref == float(m.qpos_spring[m.jnt_qposadr[j]] - ref)


@pytest.mark.parametrize("engine", ENGINES)
def test_reduced_dynamics_match_mujocos_own(engine, native, model, states):
    """SᵀMS, Sᵀ(h + M Ṡv_r) and v̇_r of every engine's canonical model equal MuJoCo's own
    (the file as written, at qpos), S and Ṡv_r from MuJoCo's equality."""
    ad = registry.adapter_class(engine)(model)
    iq, iv = _index(native, model)
    for k, (qpos, v, tau, Smap, sdot) in enumerate(states):
        q, vc = model.layout.neutral(), np.zeros(model.layout.nv)
        q[iq], vc[iv] = qpos - native.m.qpos0, v
        assert_reduced_like_mujoco(ad, native, q, vc, iv, qpos, v, tau, Smap, sdot,
                                   f"{engine} state {k}")


@pytest.mark.parametrize("engine", ENGINES)
def test_kkt_through_the_polynomial_matches_mujocos_reduced(engine, native, model, states):
    """Every engine's stage-3 KKT v̇ (its own M and h, the harness's polynomial rows) is
    S v̇_r + Ṡv_r of MuJoCo's own reduced dynamics."""
    ad = registry.adapter_class(engine)(model)
    iq, iv = _index(native, model)
    Q = np.zeros((len(states), model.layout.nq))
    V = np.zeros((len(states), model.layout.nv))
    TAU = np.zeros_like(V)
    want = []
    for k, (qpos, v, tau, Smap, sdot) in enumerate(states):
        Q[k], V[k, iv], TAU[k, iv] = model.layout.neutral(), v, tau
        Q[k, iq] = qpos - native.m.qpos0
        M_o, h_o = native.terms(qpos, v)
        vr = np.linalg.solve(Smap.T @ M_o @ Smap, Smap.T @ (tau - h_o - M_o @ sdot))
        want.append(Smap @ vr + sdot)
    got = S.engine_terms(model.spec, model.layout, ad, Q, V, TAU)["vdot"][:, iv]
    for k in range(len(states)):
        assert_close(got[k], want[k], "constrained", "constrained_vdot",
                     f"{engine} KKT vs MuJoCo's reduced, state {k}")


def test_parity_passes_and_holds_the_polynomial_natively(tmp_path):
    """Stages 0–3 in every engine: no row fails; the command line names the polynomial
    couplings; OpenSim's CoordinateCouplerConstraint (PolynomialFunction) and Pinocchio's
    KKT pass against their own engine, MuJoCo's equality is shown (soft law)."""
    out = tmp_path / "p"
    proc = run_cli("parity", "--mjcf", KNEE, "--out", out, "--samples", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("polycoef_knee: couplings: knee_tx = polynomial(degree 2)(knee); pat_ty = "
            "polynomial(degree 2)(knee); pat_rot = polynomial(degree 2)(knee) (compared in "
            "stage 3 through the KKT of 5 engines") in proc.stdout, proc.stdout
    rows = {r["id"]: r for r in json.loads((out / "records.json").read_text())}
    assert not [i for i, r in rows.items() if r["status"] in ("failed", "error")]
    assert {i.split("/")[1] for i in rows} >= {"kinematics", "dynamics", "constrained"}
    base = "polycoef_knee/constrained/native_vdot/"
    for who in ("pinocchio:forwardDynamics", "opensim:realizeAcceleration"):
        assert rows[base + who]["status"] == "passed"
    assert rows[base + "mujoco:equality"]["status"] == "informational"


def test_a_joint_equality_without_joint2_is_refused_in_one_line(tmp_path):
    """`<equality><joint joint1>` alone holds joint1 at a constant: the harness does not
    hold it; parity exits 2 with one line naming the file and the element."""
    text = KNEE.read_text().replace('joint2="knee" polycoef="0.05 0.6 -0.25 0 0"',
                                    'polycoef="0.05 0 0 0 0"')
    path = tmp_path / "no_joint2.xml"
    path.write_text(text)
    proc = run_cli("parity", "--mjcf", path, "--out", tmp_path / "o")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "equality pat_rot_of_knee" in err[0] \
        and "without joint2" in err[0], proc.stderr
    assert not (tmp_path / "o").exists()

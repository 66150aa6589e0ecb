"""MuJoCo's own model of an MJCF file with joint equalities, for the tests that hold the
harness's polynomial couplings against it (tests/conformance/test_mjcf_polycoef.py,
tests/e2e/test_myo_legs.py). Units as MuJoCo compiles them: m, kg, kg·m², rad; MuJoCo's
qpos and dof order."""
from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np


class NativeMjcf:
    """MuJoCo's model of ``path`` (or of the MJCF text ``xml``): joint names, its joint
    equalities, its equality rows, M and h."""

    def __init__(self, path: Path | None = None, xml: str | None = None) -> None:
        self.m = (mujoco.MjModel.from_xml_path(str(path)) if xml is None
                  else mujoco.MjModel.from_xml_string(xml))
        self.d = mujoco.MjData(self.m)
        m = self.m
        self.names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
        # (follower dof, leader dof, y0, x0, polycoef a0..a4) of each joint equality
        self.eqs = []
        for e in range(m.neq):
            f, lead = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
            self.eqs.append((int(m.jnt_dofadr[f]), int(m.jnt_dofadr[lead]),
                             float(m.qpos0[m.jnt_qposadr[f]]), float(m.qpos0[m.jnt_qposadr[lead]]),
                             np.array(m.eq_data[e][:5], dtype=float)))
        self.followers = {f for f, *_ in self.eqs}
        self.free = [i for i in range(m.nv) if i not in self.followers]

    def qadr(self, dof: int) -> int:
        """The qpos address of a hinge's or slide's dof."""
        return int(self.m.jnt_qposadr[self.m.dof_jntid[dof]])

    def rows(self, qpos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(g (neq,), J (neq, nv)): MuJoCo's own equality rows (efc_pos, efc_J) at qpos."""
        m, d = self.m, self.d
        d.qpos[:], d.qvel[:] = qpos, 0.0
        mujoco.mj_forward(m, d)
        eq = np.flatnonzero(d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
        eq = eq[np.argsort(d.efc_id[eq])]
        if d.efc_J.size == d.nefc * m.nv:
            J = d.efc_J.reshape(d.nefc, m.nv)
        else:  # sparse Jacobian: densify MuJoCo's own rows
            J = np.zeros((d.nefc, m.nv))
            mujoco.mju_sparse2dense(J, d.efc_J, d.efc_J_rownnz, d.efc_J_rowadr, d.efc_J_colind)
        return np.array(d.efc_pos[eq]), np.array(J[eq])

    def terms(self, qpos: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M (nv, nv), h (nv,)): mj_fullM and qfrc_bias − qfrc_passive (springs; the
        models compared here have their damping read the same way by every engine, so v
        enters h only through the bias)."""
        m, d = self.m, self.d
        d.qpos[:], d.qvel[:] = qpos, v
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        damping = m.dof_damping * v
        return M, np.array(d.qfrc_bias - d.qfrc_passive - damping)

    def close(self, qpos: np.ndarray, v_r: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(qpos, v (nv,), S (nv, n_r), Ṡv_r (nv,)) on MuJoCo's manifold: each follower at
        y0 + Σ a_k (x − x0)^k of its leader (numpy on MuJoCo's eq_data), S's follower
        entries from MuJoCo's own efc_J, Ṡv_r = f''(x − x0) v_leader² (numpy)."""
        qpos = qpos.copy()
        for f, lead, y0, x0, a in self.eqs:  # a leader is no follower here
            qpos[self.qadr(f)] = y0 + np.polynomial.polynomial.polyval(
                qpos[self.qadr(lead)] - x0, a)
        g, J = self.rows(qpos)
        assert np.abs(g).max() < 1e-14, g  # on MuJoCo's own manifold
        Smap = np.zeros((self.m.nv, len(self.free)))
        Smap[self.free, np.arange(len(self.free))] = 1.0
        sdot = np.zeros(self.m.nv)
        v = Smap @ v_r
        for row, (f, lead, _, x0, a) in zip(J, self.eqs, strict=True):
            Smap[f, self.free.index(lead)] = -row[lead] / row[f]
            x = qpos[self.qadr(lead)] - x0
            sdot[f] = np.polynomial.polynomial.polyval(
                x, np.polynomial.polynomial.polyder(a, 2)) * v[lead] ** 2
        return qpos, Smap @ v_r, Smap, sdot


def assert_reduced_like_mujoco(ad, native: NativeMjcf, q, vc, iv, qpos, v, tau, Smap, sdot,
                               what: str) -> None:
    """Adapter ``ad``'s M, h (rows and columns ``iv`` of its dofs, at its q, vc) and v̇,
    reduced through the couplings (SᵀMS, Sᵀ(h + M Ṡv), Sᵀτ), against the same reduction of
    MuJoCo's own model at (qpos, v): the table's ``import/mjcf_reduced_dynamics``."""
    from tests.conftest import assert_close  # the suite's comparison with the table's entry

    M_o, h_o = native.terms(qpos, v)
    M = ad.mass_matrix(q)[np.ix_(iv, iv)]
    h = ad.bias_forces(q, vc)[iv]
    Mr, Mr_o = Smap.T @ M @ Smap, Smap.T @ M_o @ Smap
    hr, hr_o = Smap.T @ (h + M @ sdot), Smap.T @ (h_o + M_o @ sdot)
    tr = Smap.T @ tau
    assert_close(Mr, Mr_o, "import", "mjcf_reduced_dynamics", f"{what} M")
    assert_close(hr, hr_o, "import", "mjcf_reduced_dynamics", f"{what} h")
    assert_close(np.linalg.solve(Mr, tr - hr), np.linalg.solve(Mr_o, tr - hr_o), "import",
                 "mjcf_reduced_dynamics", f"{what} v̇")

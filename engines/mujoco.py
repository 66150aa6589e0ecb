"""MuJoCo adapter (mujoco 4.0.0).

Dimension legend: nq, nv canonical; MuJoCo's own qpos has a free joint [p, quat wxyz]
and a 1-number hinge for continuous joints, qvel a free joint [v_W (world), ω_B (body)].

Loads the harness's own full-precision MJCF (fixtures/export.py: fullinertia, compiler
flags that stop MuJoCo from altering the model). Settings for parity (ENGINE_NOTES.md):
constraints disabled (``mjDSBL_CONSTRAINT``: limits would act as soft constraints);
damping and armature come from the MJCF joints and are applied by MuJoCo itself
(``qfrc_passive`` = −D v; armature in ``qM``).

Free-root conversion (T orthogonal, v_o = T v, T = diag(R_WB, I)):
M = Tᵀ M_o T, h = Tᵀ h_o + M c, v̇ = Tᵀ v̇_o − c, τ_o = T τ, J = J_o T, c = [ω_B × v_B, 0].
"""
from __future__ import annotations

import numpy as np

from harness.conventions import (combine_inertias, quat_wxyz_to_xyzw, quat_xyzw_to_matrix,
                                 quat_xyzw_to_wxyz, root_convective_term, se3_left_jacobian,
                                 spatial_inertia_world)
from harness.errors import EngineUnavailable
from harness.model import PreparedModel
from harness.protocol import AdapterBase

try:
    import mujoco
except Exception as e:  # pragma: no cover - reported by the registry
    mujoco = None
    _IMPORT_ERROR = e


class MujocoAdapter(AdapterBase):
    name = "mujoco"

    def __init__(self, model: PreparedModel):
        if mujoco is None:
            raise EngineUnavailable("mujoco", _IMPORT_ERROR)
        super().__init__(model)
        self.version = mujoco.__version__
        try:
            m = mujoco.MjModel.from_xml_string(model.mjcf)
        except ValueError as e:
            raise EngineUnavailable("mujoco", f"MJCF rejected: {e}") from None
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
        self._m, self._d = m, mujoco.MjData(m)
        lay = self.layout
        # per canonical slot: (kind, mujoco qpos adr, mujoco dof adr)
        self._slots = []
        for s in lay.slots:
            jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, s.name)
            if jid < 0:
                raise EngineUnavailable("mujoco", f"joint {s.name} missing after compiling")
            self._slots.append((s, int(m.jnt_qposadr[jid]), int(m.jnt_dofadr[jid])))
        if m.nv != lay.nv:
            raise EngineUnavailable("mujoco", f"compiled nv {m.nv}, expected {lay.nv}")
        self._simple = all(s.type in ("revolute", "prismatic") for s, _, _ in self._slots)
        self._qmap = np.array([qa for s, qa, _ in self._slots], dtype=np.intp)
        self._vmap = np.empty(lay.nv, dtype=np.intp)  # v_mj[vmap] = v_can (before T)
        for s, _, da in self._slots:
            self._vmap[s.iv:s.iv + s.nv] = np.arange(da, da + s.nv)
        self._vinv = np.argsort(self._vmap)
        self._identity = self._simple and bool(np.all(self._qmap == np.arange(lay.nq)) and
                                               np.all(self._vmap == np.arange(lay.nv)))
        self._free = lay.free_slot()
        self._M = np.zeros((m.nv, m.nv))
        self._jacp = np.zeros((3, m.nv))
        self._jacr = np.zeros((3, m.nv))
        self.provides = {
            "group_inertias": "body_mass, xipos, ximat, body_inertia of each joint's body "
                              "and its jointless descendants (compiled model)",
            "frame_pose": "mj_kinematics → xpos/xmat (bodies), site_xpos/site_xmat (frames)",
            "frame_jacobian": "mj_jacBody / mj_jacSite",
            "mass_matrix": "mj_fullM after mj_forward",
            "bias_forces": "qfrc_bias after mj_forward",
            "forward_dynamics": "mj_forward, qfrc_applied = τ (passive damping by MuJoCo)",
            "inverse_dynamics": "mj_inverse → qfrc_inverse",
            "integrate": "mj_integratePos",
        }

    # ----- conversions ---------------------------------------------------------------
    def _T(self, q):
        """R_WB of the free root (or None)."""
        if self._free is None:
            return None
        return quat_xyzw_to_matrix(q[3:7])

    def _set_qpos(self, q):
        d = self._d
        if self._identity:
            d.qpos[:] = q
            return
        for s, qa, _ in self._slots:
            if s.type == "free":
                d.qpos[qa:qa + 3] = q[s.iq:s.iq + 3]
                d.qpos[qa + 3:qa + 7] = quat_xyzw_to_wxyz(q[s.iq + 3:s.iq + 7])
            elif s.type == "continuous":
                d.qpos[qa] = np.arctan2(q[s.iq + 1], q[s.iq])
            else:
                d.qpos[qa] = q[s.iq]

    def _get_q(self, qpos):
        q = np.empty(self.nq)
        for s, qa, _ in self._slots:
            if s.type == "free":
                q[s.iq:s.iq + 3] = qpos[qa:qa + 3]
                q[s.iq + 3:s.iq + 7] = quat_wxyz_to_xyzw(qpos[qa + 3:qa + 7])
            elif s.type == "continuous":
                q[s.iq:s.iq + 2] = np.cos(qpos[qa]), np.sin(qpos[qa])
            else:
                q[s.iq] = qpos[qa]
        return q

    def _to_mj_v(self, x, R):
        """Canonical generalized vector (velocity or force) → MuJoCo dof order, T applied."""
        out = np.empty(self.nv)
        out[self._vmap] = x
        if R is not None:
            a = self._vmap[0]
            out[a:a + 3] = R @ x[0:3]
        return out

    def _from_mj_v(self, x, R):
        """MuJoCo dof vector → canonical (Tᵀ applied)."""
        out = x[self._vmap]
        if R is not None:
            out[0:3] = R.T @ out[0:3]
        return out

    def _from_mj_cols(self, J, R):
        """Columns in MuJoCo dof order → canonical: J_can = J_o T."""
        out = J[:, self._vmap]
        if R is not None:
            out[:, 0:3] = out[:, 0:3] @ R
        return out

    # ----- protocol --------------------------------------------------------------------
    def neutral(self):
        return self._get_q(self._m.qpos0)

    def group_inertias(self):
        m, d = self._m, self._d
        d.qpos[:] = m.qpos0
        mujoco.mj_kinematics(m, d)
        out = {}
        for s, _, _ in self._slots:
            body = int(m.jnt_bodyid[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, s.name)])
            members, stack = [], [body]
            while stack:
                b = stack.pop()
                members.append(b)
                stack.extend(c for c in range(m.nbody) if m.body_parentid[c] == b and c != b
                             and m.body_jntnum[c] == 0)
            items = []
            for b in members:
                Ri = d.ximat[b].reshape(3, 3)
                items.append((float(m.body_mass[b]), d.xipos[b].copy(),
                              Ri @ np.diag(m.body_inertia[b]) @ Ri.T))
            out[s.name] = spatial_inertia_world(*combine_inertias(items))
        return out

    def _frame(self, frame):
        m = self._m
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, frame)
        if b >= 0:
            return "body", b
        sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, frame)
        if sid >= 0:
            return "site", sid
        raise KeyError(f"mujoco: no body or site {frame}")

    def frame_pose(self, q, frame):
        kind, i = self._frame(frame)
        self._set_qpos(q)
        mujoco.mj_kinematics(self._m, self._d)
        d = self._d
        if kind == "body":
            return np.concatenate([d.xpos[i], d.xmat[i]])
        return np.concatenate([d.site_xpos[i], d.site_xmat[i]])

    def frame_jacobian(self, q, frame):
        kind, i = self._frame(frame)
        m, d = self._m, self._d
        self._set_qpos(q)
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        if kind == "body":
            mujoco.mj_jacBody(m, d, self._jacp, self._jacr, i)
        else:
            mujoco.mj_jacSite(m, d, self._jacp, self._jacr, i)
        return self._from_mj_cols(np.vstack([self._jacp, self._jacr]), self._T(q))

    def _forward(self, q, v, qfrc=None):
        m, d = self._m, self._d
        self._set_qpos(q)
        R = self._T(q)
        d.qvel[:] = v if self._identity else self._to_mj_v(v, R)
        d.qfrc_applied[:] = 0.0 if qfrc is None else qfrc
        mujoco.mj_forward(m, d)
        return R

    def _mass_canonical(self, R):
        mujoco.mj_fullM(self._m, self._d, self._M)
        M = self._M[np.ix_(self._vmap, self._vmap)]
        if R is not None:
            M[:, 0:3] = M[:, 0:3] @ R
            M[0:3, :] = R.T @ M[0:3, :]
        return M

    def mass_matrix(self, q):
        return self._mass_canonical(self._forward(q, np.zeros(self.nv)))

    def bias_forces(self, q, v):
        R = self._forward(q, v)
        h = self._from_mj_v(self._d.qfrc_bias, R)
        if R is not None:
            h += self._mass_canonical(R)[:, 0:6] @ root_convective_term(v[0:6])
        return h

    def forward_dynamics(self, q, v, tau):
        if self._identity:
            d = self._d
            d.qpos[:] = q
            d.qvel[:] = v
            d.qfrc_applied[:] = tau
            mujoco.mj_forward(self._m, d)
            return d.qacc.copy()
        R = self._T(q)
        self._forward(q, v, self._to_mj_v(tau, R))
        a = self._from_mj_v(self._d.qacc, R)
        if R is not None:
            a[0:6] -= root_convective_term(v[0:6])
        return a

    def inverse_dynamics(self, q, v, vdot):
        m, d = self._m, self._d
        self._set_qpos(q)
        R = self._T(q)
        if R is not None:
            vdot = vdot.copy()
            vdot[0:6] = vdot[0:6] + root_convective_term(v[0:6])
        d.qvel[:] = v if self._identity else self._to_mj_v(v, R)
        d.qacc[:] = vdot if self._identity else self._to_mj_v(vdot, R)
        mujoco.mj_inverse(m, d)
        return d.qfrc_inverse.copy() if self._identity else self._from_mj_v(d.qfrc_inverse, R)

    def integrate(self, q, v, dt):
        m = self._m
        self._set_qpos(q)
        qpos = self._d.qpos.copy()
        R = self._T(q)
        qvel = self._to_mj_v(np.asarray(v, dtype=float), R)
        if R is not None:
            # canonical free-joint step is the SE(3) exponential of the body twist: give
            # MuJoCo the world velocity whose straight-line step lands on it.
            a = self._vmap[0]
            qvel[a:a + 3] = R @ se3_left_jacobian(v[3:6] * dt) @ v[0:3]
        mujoco.mj_integratePos(m, qpos, qvel, dt)
        return self._get_q(qpos)

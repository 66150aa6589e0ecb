"""Crocoddyl adapter (crocoddyl 3.2.1, built against pin 4.0.0 — see ENGINE_NOTES.md).

Dimension legend: nq, nv canonical; x = [q, v] (nq + nv); u = τ (nv, ActuationModelFull).

Rows come from Crocoddyl's own models, never from calling Pinocchio directly:

* forward dynamics: ``DifferentialActionModelFreeFwdDynamics.calc`` → ``data.xout``
  with u = τ − D v (Crocoddyl applies no joint damping; the canonical damping law is
  applied to its input, D read from the Pinocchio model Crocoddyl's state holds);
* inverse dynamics: ``DifferentialActionModelFreeInvDynamics.calc`` with u = v̇ →
  ``data.multibody.actuation.tau`` (+ D v);
* mass matrix: the inverse of ``Fu = ∂v̇/∂u = M⁻¹`` from the forward model's ``calcDiff``;
* model identity: the inertias of ``StateMultibody.pinocchio`` (the model Crocoddyl
  computes with);
* integrate: ``StateMultibody.integrate``.

Crocoddyl has no API of its own for frame poses, frame Jacobians or the bias vector h;
those raise NotProvided.
"""
from __future__ import annotations

import numpy as np

from harness.conventions import spatial_inertia_world
from harness.errors import EngineUnavailable, NotProvided
from harness.model import PreparedModel
from harness.protocol import AdapterBase

try:
    import crocoddyl
    import pinocchio as pin
except Exception as e:  # pragma: no cover - reported by the registry
    crocoddyl = None
    _IMPORT_ERROR = e


class CrocoddylAdapter(AdapterBase):
    name = "crocoddyl"

    def __init__(self, model: PreparedModel):
        if crocoddyl is None:
            raise EngineUnavailable("crocoddyl", _IMPORT_ERROR)
        super().__init__(model)
        from engines.pinocchio import build_pinocchio_model

        self.version = crocoddyl.__version__
        pm, qidx, vidx = build_pinocchio_model(model)
        self._state = crocoddyl.StateMultibody(pm)
        act = crocoddyl.ActuationModelFull(self._state)
        self._fwd = crocoddyl.DifferentialActionModelFreeFwdDynamics(
            self._state, act, crocoddyl.CostModelSum(self._state, self.nv))
        self._fwd_data = self._fwd.createData()
        self._inv = crocoddyl.DifferentialActionModelFreeInvDynamics(
            self._state, act, crocoddyl.CostModelSum(self._state, self.nv))
        self._inv_data = self._inv.createData()
        self._identity = bool(np.all(qidx == np.arange(self.nq)) and
                              np.all(vidx == np.arange(self.nv)))
        self._qidx, self._vidx = qidx, vidx
        self._qinv, self._vinv = np.argsort(qidx), np.argsort(vidx)
        self._x = np.zeros(self.nq + self.nv)
        self._D = np.asarray(self._state.pinocchio.damping, dtype=float)[vidx]
        self._damped = bool(np.any(self._D))
        self.provides = {
            "group_inertias": "StateMultibody.pinocchio.inertias (the model Crocoddyl uses)",
            "mass_matrix": "inverse of Fu (= M⁻¹) from DifferentialActionModelFreeFwdDynamics"
                           ".calcDiff",
            "forward_dynamics": "DifferentialActionModelFreeFwdDynamics.calc, u = τ − D v",
            "inverse_dynamics": "DifferentialActionModelFreeInvDynamics.calc, u = v̇; "
                                "data.multibody.actuation.tau + D v",
            "integrate": "StateMultibody.integrate",
        }

    def _v(self, v):
        return v if self._identity else v[self._vinv]

    def _set_x(self, q, v):
        x = self._x
        if self._identity:
            x[:self.nq] = q
            x[self.nq:] = v
        else:
            x[:self.nq] = q[self._qinv]
            x[self.nq:] = v[self._vinv]
        return x

    def neutral(self):
        return np.array(self._state.zero()[:self.nq])[self._qidx]

    def group_inertias(self):
        m = self._state.pinocchio
        d = m.createData()
        pin.forwardKinematics(m, d, np.array(self._state.zero()[:self.nq]))
        out = {}
        for s in self.layout.slots:
            jid = m.getJointId(s.name)
            oMi, I = d.oMi[jid], m.inertias[jid]
            R = oMi.rotation
            out[s.name] = spatial_inertia_world(I.mass, oMi.act(I.lever), R @ I.inertia @ R.T)
        return out

    def frame_pose(self, q, frame):
        raise NotProvided(self.name, "frame pose", "Crocoddyl has no kinematics API of its "
                          "own (its residuals call Pinocchio)")

    def frame_jacobian(self, q, frame):
        raise NotProvided(self.name, "frame Jacobian", "Crocoddyl has no kinematics API of "
                          "its own (its residuals call Pinocchio)")

    def bias_forces(self, q, v):
        raise NotProvided(self.name, "bias forces", "Crocoddyl exposes no h(q, v)")

    def mass_matrix(self, q):
        x = self._set_x(q, np.zeros(self.nv))
        u = np.zeros(self.nv)
        self._fwd.calc(self._fwd_data, x, u)
        self._fwd.calcDiff(self._fwd_data, x, u)
        Minv = np.array(self._fwd_data.Fu)
        if not self._identity:
            Minv = Minv[np.ix_(self._vidx, self._vidx)]
        M = np.linalg.inv(Minv)
        return 0.5 * (M + M.T)

    def forward_dynamics(self, q, v, tau):
        if self._damped:
            tau = tau - self._D * v
        if self._identity:
            self._fwd.calc(self._fwd_data, np.concatenate((q, v)), tau)
            return self._fwd_data.xout.copy()
        self._fwd.calc(self._fwd_data, self._set_x(q, v), tau[self._vinv])
        return self._fwd_data.xout[self._vidx]

    def inverse_dynamics(self, q, v, vdot):
        x = self._set_x(q, v)
        self._inv.calc(self._inv_data, x, vdot if self._identity else vdot[self._vinv])
        tau = np.array(self._inv_data.multibody.actuation.tau)
        if not self._identity:
            tau = tau[self._vidx]
        return tau + self._D * v if self._damped else tau

    def integrate(self, q, v, dt):
        x = self._set_x(q, np.zeros(self.nv)).copy()
        dx = np.zeros(2 * self.nv)
        dx[:self.nv] = (v if self._identity else v[self._vinv]) * dt
        qn = np.asarray(self._state.integrate(x, dx))[:self.nq]
        return np.array(qn if self._identity else qn[self._qidx])

"""Pinocchio adapter (pin 4.0.0).

Dimension legend: nq, nv canonical (= Pinocchio's own layout up to joint order: free
flyer [p, quat xyzw] / [v_B, ω_B], continuous joints (cos, sin)).

Loads the prepared URDF with ``buildModelFromXML`` (adding ``JointModelFreeFlyer`` named
``root_joint`` for a floating model). Settings for parity (ENGINE_NOTES.md):
gravity from the spec; ``model.armature`` set from the spec (URDF cannot carry it);
``pin.aba`` and ``pin.rnea`` ignore ``model.damping``, so the adapter applies the
canonical −D·v with D read back from ``model.damping`` (which the URDF parser filled).
"""
from __future__ import annotations

import numpy as np

from harness.conventions import spatial_inertia_world
from harness.errors import EngineUnavailable, ModelRejected
from harness.model import PreparedModel
from harness.protocol import AdapterBase

try:
    import pinocchio as pin
except Exception as e:  # pragma: no cover - reported by the registry
    pin = None
    _IMPORT_ERROR = e


def build_pinocchio_model(model: PreparedModel):
    """(pin.Model, index maps) for a prepared model; shared with the Crocoddyl adapter,
    whose state wraps exactly this Pinocchio model."""
    if pin is None:
        raise EngineUnavailable("pinocchio", _IMPORT_ERROR)
    if model.spec.floating:
        pm = pin.buildModelFromXML(model.urdf, pin.JointModelFreeFlyer())
    else:
        pm = pin.buildModelFromXML(model.urdf)
    pm.gravity = pin.Motion(np.array(model.spec.gravity, dtype=float), np.zeros(3))
    lay = model.layout
    qidx = np.empty(lay.nq, dtype=np.intp)  # q_pin[qidx] = q_canonical
    vidx = np.empty(lay.nv, dtype=np.intp)
    armature = np.array(pm.armature)
    for s in lay.slots:
        if not pm.existJointName(s.name):
            raise ModelRejected("pinocchio", f"joint {s.name} missing after parsing")
        jm = pm.joints[pm.getJointId(s.name)]
        if (jm.nq, jm.nv) != (s.nq, s.nv):
            raise ModelRejected("pinocchio", f"joint {s.name} has nq/nv {jm.nq}/{jm.nv}")
        qidx[s.iq:s.iq + s.nq] = np.arange(jm.idx_q, jm.idx_q + s.nq)
        vidx[s.iv:s.iv + s.nv] = np.arange(jm.idx_v, jm.idx_v + s.nv)
        if s.type != "free":
            armature[jm.idx_v] = s.armature
    if pm.nq != lay.nq or pm.nv != lay.nv:
        raise ModelRejected("pinocchio", f"parsed nq/nv {pm.nq}/{pm.nv}, expected "
                                             f"{lay.nq}/{lay.nv}")
    pm.armature = armature
    return pm, qidx, vidx


class PinocchioAdapter(AdapterBase):
    name = "pinocchio"

    def __init__(self, model: PreparedModel):
        super().__init__(model)
        self.version = pin.__version__
        self._m, qidx, vidx = build_pinocchio_model(model)
        self._d = self._m.createData()
        self._identity = bool(np.all(qidx == np.arange(self.nq)) and
                              np.all(vidx == np.arange(self.nv)))
        self._qidx, self._vidx = qidx, vidx
        self._qinv = np.argsort(qidx)  # q_can = q_pin[_qinv]
        self._vinv = np.argsort(vidx)
        self._D = np.asarray(self._m.damping, dtype=float)[vidx]  # canonical order
        self._damped = bool(np.any(self._D))
        self._frame_ids = {}
        self.provides = {
            "group_inertias": "model.inertias after buildModelFromXML (fixed links merged)",
            "frame_pose": "framesForwardKinematics → data.oMf",
            "frame_jacobian": "computeFrameJacobian(LOCAL_WORLD_ALIGNED)",
            "mass_matrix": "crba (symmetrised)",
            "bias_forces": "nonLinearEffects",
            "forward_dynamics": "aba(q, v, τ − D v), D = model.damping",
            "inverse_dynamics": "rnea(q, v, v̇) + D v",
            "integrate": "pin.integrate",
        }

    # ----- conversions ---------------------------------------------------------------
    def _q(self, q):
        return q if self._identity else q[self._qinv]

    def _v(self, v):
        return v if self._identity else v[self._vinv]

    def _out_v(self, x):
        return x if self._identity else x[self._vidx]

    def _fid(self, frame: str) -> int:
        fid = self._frame_ids.get(frame)
        if fid is None:
            # BODY frames only: a link and a joint may share a name (so100, z1)
            if not self._m.existFrame(frame, pin.BODY):
                raise KeyError(f"pinocchio: no body frame {frame}")
            fid = self._frame_ids[frame] = self._m.getFrameId(frame, pin.BODY)
        return fid

    # ----- protocol --------------------------------------------------------------------
    def neutral(self):
        return np.array(pin.neutral(self._m))[self._qidx]

    def group_inertias(self):
        m, d = self._m, self._d
        pin.forwardKinematics(m, d, pin.neutral(m))
        out = {}
        for s in self.layout.slots:
            jid = m.getJointId(s.name)
            oMi, I = d.oMi[jid], m.inertias[jid]
            R = oMi.rotation
            out[s.name] = spatial_inertia_world(I.mass, oMi.act(I.lever),
                                                R @ I.inertia @ R.T)
        return out

    def frame_pose(self, q, frame):
        pin.framesForwardKinematics(self._m, self._d, self._q(q))
        X = self._d.oMf[self._fid(frame)]
        return np.concatenate([X.translation, X.rotation.reshape(-1)])

    def frame_jacobian(self, q, frame):
        J = pin.computeFrameJacobian(self._m, self._d, self._q(q), self._fid(frame),
                                     pin.LOCAL_WORLD_ALIGNED).reshape(6, self.nv)  # eigenpy
        # returns a 6x1 Jacobian as a flat array
        return np.array(J if self._identity else J[:, self._vidx])

    def mass_matrix(self, q):
        M = pin.crba(self._m, self._d, self._q(q)).reshape(self.nv, self.nv)
        M = np.triu(M) + np.triu(M, 1).T
        return M if self._identity else M[np.ix_(self._vidx, self._vidx)]

    def bias_forces(self, q, v):
        return self._out_v(pin.nonLinearEffects(self._m, self._d, self._q(q), self._v(v)))

    def forward_dynamics(self, q, v, tau):
        if self._damped:
            tau = tau - self._D * v
        return self._out_v(pin.aba(self._m, self._d, self._q(q), self._v(v), self._v(tau)))

    def inverse_dynamics(self, q, v, vdot):
        tau = self._out_v(pin.rnea(self._m, self._d, self._q(q), self._v(v), self._v(vdot)))
        return tau + self._D * v if self._damped else tau

    def integrate(self, q, v, dt):
        qn = pin.integrate(self._m, self._q(q), self._v(np.asarray(v) * dt))
        return np.array(qn if self._identity else qn[self._qidx])

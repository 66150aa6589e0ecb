"""Drake adapter (drake 1.51.1, ``pydrake.multibody``).

Dimension legend: nq, nv canonical; Drake's own q has the floating root as
[quat wxyz, p], its v as [ω_W, v_W] (angular first, world frame), continuous joints as
one angle.

Loads the prepared URDF into ``MultibodyPlant(0.0)`` (continuous time). Settings for
parity (ENGINE_NOTES.md): fixed base → ``WeldFrames(world, root)``; floating →
an explicit ``QuaternionFloatingJoint`` named ``root_joint``; gravity from the spec;
URDF ``damping`` parsed by Drake and applied by Drake (it is part of the plant's
dynamics); armature as the rotor inertia of a ``JointActuator`` with gear ratio 1
(reflected inertia = rotor inertia × gear²). ``CalcBiasTerm`` excludes gravity, so
h = CalcBiasTerm − CalcGravityGeneralizedForces.

Free-root conversion: with the root's Drake dofs permuted to [v_W, ω_W], v_o = T v with
T = diag(R_WB, R_WB); a_o = T (a + c), h_o = T (h − M c), τ_o = T τ, J = J_o T.
"""
from __future__ import annotations

import numpy as np

from harness.conventions import (quat_xyzw_to_matrix, root_convective_term, se3_left_jacobian,
                                 spatial_inertia_world)
from harness.errors import EngineUnavailable, ModelRejected
from harness.model import PreparedModel
from harness.protocol import AdapterBase

try:
    import pydrake
    from pydrake.common.eigen_geometry import AngleAxis, Quaternion
    from pydrake.multibody.parsing import Parser
    from pydrake.multibody.plant import MultibodyPlant
    from pydrake.multibody.tree import (JacobianWrtVariable, MultibodyForces,
                                        QuaternionFloatingJoint)
except Exception as e:  # pragma: no cover - reported by the registry
    pydrake = None
    _IMPORT_ERROR = e


def drake_version() -> str:
    from importlib.metadata import version

    return version("drake")


class DrakeAdapter(AdapterBase):
    name = "drake"

    def __init__(self, model: PreparedModel):
        if pydrake is None:
            raise EngineUnavailable("drake", _IMPORT_ERROR)
        super().__init__(model)
        self.version = drake_version()
        plant = MultibodyPlant(0.0)
        try:
            Parser(plant).AddModelsFromString(model.urdf, "urdf")
        except RuntimeError as e:
            raise ModelRejected("drake", f"URDF rejected: {e}") from None
        root = plant.GetBodyByName(model.spec.root)
        if model.spec.floating:
            plant.AddJoint(QuaternionFloatingJoint("root_joint", plant.world_frame(),
                                                   root.body_frame()))
        else:
            plant.WeldFrames(plant.world_frame(), root.body_frame())
        lay = self.layout
        for s in lay.slots:
            if s.type != "free" and s.armature > 0:
                act = plant.AddJointActuator(f"{s.name}__armature", plant.GetJointByName(s.name))
                act.set_default_rotor_inertia(s.armature)
                act.set_default_gear_ratio(1.0)
        plant.mutable_gravity_field().set_gravity_vector(np.array(model.spec.gravity))
        plant.Finalize()
        self._plant, self._ctx = plant, plant.CreateDefaultContext()
        if plant.num_velocities() != lay.nv:
            raise ModelRejected("drake", f"plant nv {plant.num_velocities()}, expected "
                                             f"{lay.nv}")
        self._slots = []
        self._vmap = np.empty(lay.nv, dtype=np.intp)
        for s in lay.slots:
            j = plant.GetJointByName(s.name)
            qa, va = j.position_start(), j.velocity_start()
            self._slots.append((s, qa, va))
            if s.type == "free":  # canonical [v_B, ω_B] ↔ Drake [ω, v]: lin first after map
                self._vmap[0:3] = np.arange(va + 3, va + 6)
                self._vmap[3:6] = np.arange(va, va + 3)
            else:
                self._vmap[s.iv] = va
        self._free = lay.free_slot()
        self._simple = all(s.type in ("revolute", "prismatic") for s in lay.slots)
        self._qmap = np.array([qa for _, qa, _ in self._slots], dtype=np.intp)
        self._identity = self._simple and bool(np.all(self._qmap == np.arange(lay.nq)) and
                                               np.all(self._vmap == np.arange(lay.nv)))
        simple = [(s.iq, qa) for s, qa, _ in self._slots if s.type in ("revolute", "prismatic")]
        cont = [(s.iq, qa) for s, qa, _ in self._slots if s.type == "continuous"]
        self._sq_can, self._sq_dk = (np.array(x, dtype=np.intp) for x in zip(*simple)) \
            if simple else (np.zeros(0, np.intp), np.zeros(0, np.intp))
        self._cq_can, self._cq_dk = (np.array(x, dtype=np.intp) for x in zip(*cont)) \
            if cont else (np.zeros(0, np.intp), np.zeros(0, np.intp))
        self._free_qa = self._slots[0][1] if self._free is not None else None
        self._tau_port = plant.get_applied_generalized_force_input_port()
        self._tau_port.FixValue(self._ctx, np.zeros(lay.nv))
        self._acc_port = plant.get_generalized_acceleration_output_port()
        self._forces = MultibodyForces(plant)
        self.provides = {
            "group_inertias": "CalcSpatialInertia over GetBodiesWeldedTo(child body)",
            "frame_pose": "EvalBodyPoseInWorld",
            "frame_jacobian": "CalcJacobianSpatialVelocity(kV)",
            "mass_matrix": "CalcMassMatrix (reflected rotor inertia included)",
            "bias_forces": "CalcBiasTerm − CalcGravityGeneralizedForces",
            "forward_dynamics": "generalized acceleration output port, τ on the applied "
                                "generalized force input port (damping by Drake)",
            "inverse_dynamics": "CalcInverseDynamics with CalcForceElementsContribution",
            "integrate": "Drake Quaternion/AngleAxis composition (Drake has no q ⊕ v)",
        }

    # ----- conversions ---------------------------------------------------------------
    def _R(self, q):
        return None if self._free is None else quat_xyzw_to_matrix(q[3:7])

    def _drake_q(self, q):
        if self._identity:
            return q
        out = np.empty(self._plant.num_positions())
        if self._sq_can.size:
            out[self._sq_dk] = q[self._sq_can]
        if self._cq_can.size:
            out[self._cq_dk] = np.arctan2(q[self._cq_can + 1], q[self._cq_can])
        if self._free_qa is not None:
            a = self._free_qa
            out[a] = q[6]
            out[a + 1:a + 4] = q[3:6]
            out[a + 4:a + 7] = q[0:3]
        return out

    def _canonical_q(self, qd):
        q = np.empty(self.nq)
        if self._sq_can.size:
            q[self._sq_can] = qd[self._sq_dk]
        if self._cq_can.size:
            th = qd[self._cq_dk]
            q[self._cq_can], q[self._cq_can + 1] = np.cos(th), np.sin(th)
        if self._free_qa is not None:
            a = self._free_qa
            q[0:3] = qd[a + 4:a + 7]
            q[3:6] = qd[a + 1:a + 4]
            q[6] = qd[a]
        return q

    def _to_dk(self, x, R):
        out = np.empty(self.nv)
        out[self._vmap] = x
        if R is not None:
            out[self._vmap[0:3]] = R @ x[0:3]
            out[self._vmap[3:6]] = R @ x[3:6]
        return out

    def _from_dk(self, y, R):
        x = y[self._vmap]
        if R is not None:
            x[0:3] = R.T @ x[0:3]
            x[3:6] = R.T @ x[3:6]
        return x

    def _set(self, q, v=None):
        plant, ctx = self._plant, self._ctx
        plant.SetPositions(ctx, self._drake_q(q))
        R = self._R(q)
        if v is not None:
            plant.SetVelocities(ctx, v if self._identity else self._to_dk(v, R))
        return R

    def _mass_canonical(self, R):
        M = self._plant.CalcMassMatrix(self._ctx)[np.ix_(self._vmap, self._vmap)]
        if R is not None:
            for blk in (slice(0, 3), slice(3, 6)):
                M[:, blk] = M[:, blk] @ R
                M[blk, :] = R.T @ M[blk, :]
        return M

    # ----- protocol --------------------------------------------------------------------
    def neutral(self):
        return self._canonical_q(self._plant.GetDefaultPositions())

    def group_inertias(self):
        plant, ctx = self._plant, self._plant.CreateDefaultContext()
        out = {}
        for s, _, _ in self._slots:
            child = plant.GetJointByName(s.name).child_body()
            bodies = [b.index() for b in plant.GetBodiesWeldedTo(child)]
            Mw = plant.CalcSpatialInertia(ctx, plant.world_frame(), bodies)
            com = Mw.get_com()
            I = Mw.Shift(com).CalcRotationalInertia().CopyToFullMatrix3()
            out[s.name] = spatial_inertia_world(Mw.get_mass(), com, I)
        return out

    def _body(self, frame):
        if not self._plant.HasBodyNamed(frame):
            raise KeyError(f"drake: no body {frame}")
        return self._plant.GetBodyByName(frame)

    def frame_pose(self, q, frame):
        body = self._body(frame)
        self._set(q)
        X = self._plant.EvalBodyPoseInWorld(self._ctx, body)
        return np.concatenate([X.translation(), X.rotation().matrix().reshape(-1)])

    def frame_jacobian(self, q, frame):
        body = self._body(frame)
        R = self._set(q)
        plant = self._plant
        J = plant.CalcJacobianSpatialVelocity(self._ctx, JacobianWrtVariable.kV,
                                              body.body_frame(), np.zeros(3),
                                              plant.world_frame(), plant.world_frame())
        J = np.vstack([J[3:6], J[0:3]])[:, self._vmap]
        if R is not None:
            J[:, 0:3] = J[:, 0:3] @ R
            J[:, 3:6] = J[:, 3:6] @ R
        return J

    def mass_matrix(self, q):
        return self._mass_canonical(self._set(q, np.zeros(self.nv)))

    def bias_forces(self, q, v):
        R = self._set(q, v)
        plant, ctx = self._plant, self._ctx
        h = self._from_dk(plant.CalcBiasTerm(ctx) - plant.CalcGravityGeneralizedForces(ctx), R)
        if R is not None:
            h += self._mass_canonical(R)[:, 0:6] @ root_convective_term(v[0:6])
        return h

    def forward_dynamics(self, q, v, tau):
        R = self._set(q, v)
        self._tau_port.FixValue(self._ctx, tau if self._identity else self._to_dk(tau, R))
        a = self._acc_port.Eval(self._ctx)
        if self._identity:
            return np.array(a)
        a = self._from_dk(a, R)
        if R is not None:
            a[0:6] -= root_convective_term(v[0:6])
        return a

    def inverse_dynamics(self, q, v, vdot):
        R = self._set(q, v)
        plant, ctx = self._plant, self._ctx
        if R is not None:
            vdot = vdot.copy()
            vdot[0:6] += root_convective_term(v[0:6])
        plant.CalcForceElementsContribution(ctx, self._forces)
        tau = plant.CalcInverseDynamics(ctx, vdot if self._identity else self._to_dk(vdot, R),
                                        self._forces)
        return np.array(tau) if self._identity else self._from_dk(tau, R)

    def integrate(self, q, v, dt):
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        out = q.copy()
        for s in self.layout.slots:
            vs = v[s.iv:s.iv + s.nv] * dt
            if s.type == "free":
                x, y, z, w = q[s.iq + 3:s.iq + 7]
                quat = Quaternion(w, x, y, z)
                phi = vs[3:6]
                th = float(np.linalg.norm(phi))
                dq = AngleAxis(th, phi / th).quaternion() if th > 0 else Quaternion()
                new = quat.multiply(dq)
                out[s.iq:s.iq + 3] = q[s.iq:s.iq + 3] + quat.rotation() @ (
                    se3_left_jacobian(phi) @ vs[0:3])
                out[s.iq + 3:s.iq + 7] = new.x(), new.y(), new.z(), new.w()
            elif s.type == "continuous":
                c, sn = q[s.iq], q[s.iq + 1]
                th = np.arctan2(sn, c) + vs[0]
                out[s.iq:s.iq + 2] = np.cos(th), np.sin(th)
            else:
                out[s.iq] = q[s.iq] + vs[0]
        return out

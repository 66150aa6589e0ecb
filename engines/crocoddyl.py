"""Crocoddyl adapter (crocoddyl 3.2.1, built against pin 4.0.0).

Dimension legend: nq, nv canonical; x = [q, v] (nq + nv); u = τ (nv, ActuationModelFull).

Rows come from Crocoddyl's own models, never from calling Pinocchio directly:

* forward dynamics: ``DifferentialActionModelFreeFwdDynamics.calc`` → ``data.xout``
  with u = τ − D v (Crocoddyl applies no joint damping; the canonical damping law is
  applied to its input, D read from the Pinocchio model Crocoddyl's state holds);
* inverse dynamics: ``DifferentialActionModelFreeInvDynamics.calc`` with u = v̇ →
  ``data.multibody.actuation.tau`` (+ D v);
* mass matrix: ``data.pinocchio.M`` of the forward model after its state-only
  ``calc(data, x)`` (computeAllTerms; no inversion);
* bias forces: ``data.pinocchio.nle`` after the same state-only calc;
* model identity: the inertias of ``StateMultibody.pinocchio`` (the model Crocoddyl
  computes with);
* integrate: ``StateMultibody.integrate``.

Crocoddyl has no API of its own for frame poses or frame Jacobians; those raise
NotProvided.

* contact-point kinematics (stage ``contact``, harness/model/contact_law.py):
  ``contact_frame_kinematics`` — frame origins p_WF from ``ResidualModelFrameTranslation``
  (reference 0: r = p_WF) and J_WF from ``ResidualModelFrameVelocity`` in
  LOCAL_WORLD_ALIGNED (∂r/∂v = J_WF), both as costs of a
  ``DifferentialActionModelFreeFwdDynamics`` evaluated by its own calc + calcDiff.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engines.pinocchio import (
    build_pinocchio_model,
    pinocchio_as_is_joints,
    pinocchio_readback,
    pinocchio_set_inertials,
)
from harness.core.conventions import spatial_inertia_world
from harness.core.errors import NotProvided
from harness.model.binding import Binding
from harness.model.prepared import PreparedModel
from harness.model.protocol import AdapterBase, as_is_source

BINDING = Binding("crocoddyl")
with BINDING:
    import crocoddyl
    import pinocchio as pin


class CrocoddylAdapter(AdapterBase):
    name = "crocoddyl"

    def __init__(self, model: PreparedModel):
        BINDING.require()
        super().__init__(model)
        self.version = crocoddyl.__version__
        pm, qidx, vidx = build_pinocchio_model(model, self.name)
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
        # joint springs: Crocoddyl (like Pinocchio) has none; the adapter applies
        # −K (q − q_ref) on u, as for damping (harness/core/conventions.py spring_force)
        self._K = self.layout.stiffness
        self._sprung = self.layout.has_springs
        self._as_is = as_is_source(model, self.name)
        if self._as_is:
            self._damped = False  # Crocoddyl's default: no joint damping
        self.provides = {
            "group_inertias": "StateMultibody.pinocchio.inertias (the model Crocoddyl uses)",
            "mass_matrix": "DifferentialActionModelFreeFwdDynamics.calc(data, x) (state "
                           "only: computeAllTerms) → data.pinocchio.M, no inversion",
            "forward_dynamics": "DifferentialActionModelFreeFwdDynamics.calc, u = τ − D v "
                                "− K (q − q_ref) (joint springs applied by the adapter)",
            "bias_forces": "DifferentialActionModelFreeFwdDynamics.calc(data, x) (state "
                           "only: computeAllTerms) → data.pinocchio.nle, + K (q − q_ref)",
            "inverse_dynamics": "DifferentialActionModelFreeInvDynamics.calc, u = v̇; "
                                "data.multibody.actuation.tau + D v + K (q − q_ref)",
            "integrate": "StateMultibody.integrate",
            "contact_frame_kinematics": "p_WF = ResidualModelFrameTranslation.r (ref 0), "
                                        "J_WF = ∂r/∂v of ResidualModelFrameVelocity "
                                        "(LOCAL_WORLD_ALIGNED), costs of "
                                        "DifferentialActionModelFreeFwdDynamics calc + "
                                        "calcDiff",
            "native_sticking_acceleration": "DifferentialActionModelContactFwdDynamics + "
                                            "ContactModel3D (LOCAL_WORLD_ALIGNED, gains 0) "
                                            "at a frame added at the contact point",
        }
        self.derivatives_method = "analytical"  # stages/derivatives.py
        self.provides.update({  # dynamics derivatives
            "forward_dynamics_derivatives": "DifferentialActionModelFreeFwdDynamics.calcDiff "
                                            "(Fx, Fu; analytical), u = τ − D v",
            "inverse_dynamics_derivatives": "DifferentialActionModelFreeInvDynamics.calcDiff "
                                            "(RNEA derivatives in its multibody data) + D",
        })
        self.provides.update({
            "frame_jacobian_drift": "ContactModel6D / ContactModel3D (LOCAL_WORLD_ALIGNED) "
                                    "data Jc, a0 after "
                                    "DifferentialActionModelContactFwdDynamics.calc",
            "native_constrained": "DifferentialActionModelContactFwdDynamics (ContactModel1D "
                                  "per row / ContactModel6D per weld, world-fixed targets), "
                                  "inv_damping 0",
        })
        # cached contact-model DAMs: frame tuples (contact_frame_kinematics), ("frame", f)
        # (frame_jacobian_drift), ("native", rows) (native_constrained)
        self._contact_dams = {}

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

    # ----- read-back, as-is mode, ablations (diagnosis: harness/stages/diagnosis/) -----
    @classmethod
    def as_is_joints(cls, model: PreparedModel) -> list:
        """Moving joints of the Pinocchio model Crocoddyl's state would wrap (as-is)."""
        return pinocchio_as_is_joints(model, cls.name)

    def readback(self) -> dict:
        """The model Crocoddyl computes with: its StateMultibody's pin.Model (Crocoddyl has
        no model of its own), read back like Pinocchio's; damping counts as applied only
        when this adapter applies it (Crocoddyl's free dynamics apply none)."""
        rb = pinocchio_readback(self._state.pinocchio, self.layout, self._qidx,
                                self._damped, self.name,
                                "StateMultibody.pinocchio (the pin.Model Crocoddyl's "
                                "action models compute with); joint springs as the adapter "
                                "applies them",
                                ["Crocoddyl holds no model of its own: this is its "
                                 "StateMultibody's pin.Model"])
        for sl in self.layout.slots:  # no spring in Crocoddyl: what the adapter applies
            rb["joints"][sl.name].update(stiffness_applied=sl.stiffness,
                                         spring_ref=sl.spring_ref)
        return rb

    def ablated(self, changes: dict) -> CrocoddylAdapter:
        """A new adapter with ``damping=0`` (no −D v on u), ``armature=0`` (the state's
        pin.Model armature) or ``inertials={body: (m, com_W, I_W) at neutral}`` (the
        state's pin.Model, engines/pinocchio.py pinocchio_set_inertials); friction, limits,
        couplings are not applied by Crocoddyl."""
        unknown = set(changes) - {"damping", "armature", "friction", "limits", "couplings",
                                  "inertials"}
        if unknown:
            raise ValueError(f"crocoddyl: cannot ablate {sorted(unknown)}")
        new = type(self)(self.model)
        if "damping" in changes:
            new._damped = False
        if "armature" in changes:
            new._state.pinocchio.armature = np.zeros(new._state.nv)
        if changes.get("inertials"):
            pinocchio_set_inertials(new._state.pinocchio, new.layout, new._qidx,
                                    changes["inertials"])
        return new

    def naive_dynamics(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """None: Crocoddyl takes x = [q, v] in Pinocchio's coordinates (the canonical ones),
        so there is nothing to hand over unconverted beyond what Pinocchio shows."""
        return None

    def neutral(self) -> NDArray[np.float64]:
        """q (nq,) [m, rad] at rest: EngineAdapter.neutral (harness/model/protocol.py)."""
        return np.array(self._state.zero()[:self.nq])[self._qidx]

    def group_inertias(self) -> dict[str, NDArray[np.float64]]:
        """{joint: (10,) [kg, m, kg·m²]} at neutral: EngineAdapter.group_inertias
        (harness/model/protocol.py)."""
        m = self._state.pinocchio
        if getattr(self, "_kin_data", None) is None:  # createData is O(n²) (0.5 s at n 200)
            self._kin_data = m.createData()
        d = self._kin_data
        pin.forwardKinematics(m, d, np.array(self._state.zero()[:self.nq]))
        oMis, inertias = list(d.oMi), list(m.inertias)  # one conversion, not one per joint
        out = {}
        for s in self.layout.slots:
            jid = m.getJointId(s.name)
            oMi, I = oMis[jid], inertias[jid]
            R = oMi.rotation
            out[s.name] = spatial_inertia_world(I.mass, oMi.act(I.lever), R @ I.inertia @ R.T)
        return out

    def frame_pose(self, q: NDArray[np.float64], frame: str) -> NDArray[np.float64]:
        """(12,) [m; R_WF row-major] pose of ``frame`` at q (nq,): EngineAdapter.frame_pose
        (harness/model/protocol.py)."""
        raise NotProvided(self.name, "frame pose", "Crocoddyl has no kinematics API of its "
                          "own (its residuals call Pinocchio)")

    def frame_jacobian(self, q: NDArray[np.float64], frame: str) -> NDArray[np.float64]:
        """J_WF (6, nv) of ``frame`` at q (nq,): EngineAdapter.frame_jacobian
        (harness/model/protocol.py)."""
        raise NotProvided(self.name, "frame Jacobian", "Crocoddyl has no kinematics API of "
                          "its own (its residuals call Pinocchio)")

    # ----- contact-point kinematics (stage contact, harness/model/contact_law.py) -----------------
    def contact_frame_kinematics(
            self, q: NDArray[np.float64], frames: Sequence[str]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(p_WF (k, 3) [m], J_WF (k, 6, nv) [linear; angular], world axes) of k frame
        origins, from Crocoddyl's frame residuals evaluated inside its free forward-dynamics
        model (calc + calcDiff at x = [q, 0], u = 0; neither residual depends on v or u)."""
        frames = tuple(frames)
        cache = self._contact_dams
        if frames not in cache:
            st, pm = self._state, self._state.pinocchio
            costs = crocoddyl.CostModelSum(st, self.nv)
            for i, f in enumerate(frames):
                if not pm.existFrame(f, pin.BODY):
                    raise KeyError(f"crocoddyl: no body frame {f}")
                fid = pm.getFrameId(f, pin.BODY)
                costs.addCost(f"p{i}", crocoddyl.CostModelResidual(
                    st, crocoddyl.ResidualModelFrameTranslation(st, fid, np.zeros(3),
                                                                self.nv)), 1.0)
                costs.addCost(f"v{i}", crocoddyl.CostModelResidual(
                    st, crocoddyl.ResidualModelFrameVelocity(
                        st, fid, pin.Motion.Zero(), pin.LOCAL_WORLD_ALIGNED, self.nv)), 1.0)
            dam = crocoddyl.DifferentialActionModelFreeFwdDynamics(
                st, crocoddyl.ActuationModelFull(st), costs)
            cache[frames] = (dam, dam.createData(), costs)
        dam, data, _ = cache[frames]
        x = self._set_x(np.asarray(q, dtype=float), np.zeros(self.nv)).copy()
        u = np.zeros(self.nv)
        dam.calc(data, x, u)
        dam.calcDiff(data, x, u)
        p = np.empty((len(frames), 3))
        J = np.empty((len(frames), 6, self.nv))
        for i in range(len(frames)):
            p[i] = data.costs.costs[f"p{i}"].residual.r
            Jv = np.asarray(data.costs.costs[f"v{i}"].residual.Rx)[:, self.nv:]
            J[i] = Jv if self._identity else Jv[:, self._vidx]
        return p, J

    # ----- native contact (harness/stages/contact/native.py) --------------------------------------
    def native_contact_statement(self, settings: dict | None = None) -> tuple:
        """(settings, one-line statement of the contact law): HasNativeContact
        (harness/model/protocol.py)."""
        return {}, ("Crocoddyl DifferentialActionModelContactFwdDynamics with one "
                    "ContactModel3D (LOCAL_WORLD_ALIGNED, Baumgarte gains 0, inverse damping "
                    "0) at a frame added at the material contact point: an exact bilateral "
                    "sticking contact, no unilateral or friction-cone condition")

    def native_sticking_acceleration(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64],
            frame: str, offset_W: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
        """(v̇ (nv,), None) with the material point p_WF + offset_W (3,) [m] of frame's
        body held fixed, from Crocoddyl's contact forward dynamics on a copy of its
        state's model with a frame added at that point (R_WF from
        ResidualModelFrameRotation, reference identity: r = log3(R_WF))."""
        pm = pin.Model(self._state.pinocchio)
        if not pm.existFrame(frame, pin.BODY):
            raise KeyError(f"crocoddyl: no body frame {frame}")
        fid = pm.getFrameId(frame, pin.BODY)
        st0 = self._state
        rot = crocoddyl.CostModelSum(st0, self.nv)
        rot.addCost("R", crocoddyl.CostModelResidual(st0, crocoddyl.ResidualModelFrameRotation(
            st0, fid, np.eye(3), self.nv)), 1.0)
        dam0 = crocoddyl.DifferentialActionModelFreeFwdDynamics(
            st0, crocoddyl.ActuationModelFull(st0), rot)
        d0 = dam0.createData()
        x = self._set_x(np.asarray(q, dtype=float), np.asarray(v, dtype=float)).copy()
        dam0.calc(d0, x, np.zeros(self.nv))
        R_WF = pin.exp3(np.asarray(d0.costs.costs["R"].residual.r))
        fr = pm.frames[fid]
        placement = fr.placement * pin.SE3(np.eye(3), R_WF.T @ np.asarray(offset_W, dtype=float))
        cid = pm.addFrame(pin.Frame("native_contact_point", fr.parentJoint, fid, placement,
                                    pin.OP_FRAME))
        st = crocoddyl.StateMultibody(pm)
        contacts = crocoddyl.ContactModelMultiple(st, self.nv)
        contacts.addContact("c", crocoddyl.ContactModel3D(st, cid, np.zeros(3),
                                                          pin.LOCAL_WORLD_ALIGNED, self.nv,
                                                          np.zeros(2)))
        dam = crocoddyl.DifferentialActionModelContactFwdDynamics(
            st, crocoddyl.ActuationModelFull(st), contacts, crocoddyl.CostModelSum(st, self.nv),
            0.0, True)
        data = dam.createData()
        tau = np.asarray(tau, dtype=float)
        if self._damped:
            tau = tau - self._D * v
        if self._sprung:
            tau = tau - self.layout.spring_force(q)
        dam.calc(data, x, tau if self._identity else tau[self._vinv])
        out = np.array(data.xout)
        return (out if self._identity else out[self._vidx]), None

    def bias_forces(self, q: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
        """h (nv,) [N, N·m] at q (nq,), v (nv,): EngineAdapter.bias_forces
        (harness/model/protocol.py): the free forward-dynamics model's state-only
        ``calc(data, x)`` (computeAllTerms, as for M) leaves h in its own Pinocchio data,
        ``data.pinocchio.nle``; the adapter's joint springs added as in forward dynamics."""
        x = self._set_x(q, v)
        self._fwd.calc(self._fwd_data, x)
        h = np.array(self._fwd_data.pinocchio.nle, dtype=float)
        if not self._identity:
            h = h[self._vidx]
        return h + self.layout.spring_force(q) if self._sprung else h

    def mass_matrix(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """M(q) (nv, nv) [kg | kg·m | kg·m²] as Crocoddyl's free forward-dynamics model
        holds it: its state-only ``calc(data, x)`` (the terminal-node evaluation) runs
        computeAllTerms into its own Pinocchio data, whose ``M`` (upper triangle, armature
        of the state's pin.Model included) is read and mirrored. No inversion (inverting
        Fu = M⁻¹ loses cond(M)·eps: 1.3e-3 relative on the floating iCub at neutral,
        2e-10 on a 200-link chain)."""
        x = self._set_x(q, np.zeros(self.nv))
        self._fwd.calc(self._fwd_data, x)
        M = np.array(self._fwd_data.pinocchio.M, dtype=float)
        M = np.triu(M) + np.triu(M, 1).T
        return M if self._identity else M[np.ix_(self._vidx, self._vidx)]

    def forward_dynamics(self, q: NDArray[np.float64], v: NDArray[np.float64],
                         tau: NDArray[np.float64]) -> NDArray[np.float64]:
        """v̇ (nv,) [m/s², rad/s²] at q (nq,), v (nv,), τ (nv,): EngineAdapter.forward_dynamics
        (harness/model/protocol.py)."""
        if self._damped:
            tau = tau - self._D * v
        if self._sprung:
            tau = tau - self.layout.spring_force(q)
        if self._identity:
            self._fwd.calc(self._fwd_data, np.concatenate((q, v)), tau)
            return self._fwd_data.xout.copy()
        self._fwd.calc(self._fwd_data, self._set_x(q, v), tau[self._vinv])
        return self._fwd_data.xout[self._vidx]

    def inverse_dynamics(self, q: NDArray[np.float64], v: NDArray[np.float64],
                         vdot: NDArray[np.float64]) -> NDArray[np.float64]:
        """τ (nv,) [N, N·m] at q (nq,), v (nv,), v̇ (nv,): EngineAdapter.inverse_dynamics
        (harness/model/protocol.py)."""
        x = self._set_x(q, v)
        self._inv.calc(self._inv_data, x, vdot if self._identity else vdot[self._vinv])
        tau = np.array(self._inv_data.multibody.actuation.tau)
        if not self._identity:
            tau = tau[self._vidx]
        if self._sprung:
            tau = tau + self.layout.spring_force(q)
        return tau + self._D * v if self._damped else tau

    def integrate(self, q: NDArray[np.float64], v: NDArray[np.float64],
                  dt: float) -> NDArray[np.float64]:
        """q (nq,) after constant v (nv,) for dt [s]: EngineAdapter.integrate
        (harness/model/protocol.py)."""
        x = self._set_x(q, np.zeros(self.nv)).copy()
        dx = np.zeros(2 * self.nv)
        dx[:self.nv] = (v if self._identity else v[self._vinv]) * dt
        qn = np.asarray(self._state.integrate(x, dx))[:self.nq]
        return np.array(qn if self._identity else qn[self._qidx])

    # ----- engine-native stepping (replay, stage 5) ---------------------------------------
    def native_describe(self, settings: dict | None = None) -> tuple[dict, str]:
        """(settings, one-line statement) of ``native_rollout``: ``integrator`` (Euler or
        RK4) and ``dt`` [s], the largest step."""
        s = {"integrator": "RK4", "dt": 1e-3}
        s.update(settings or {})
        if s["integrator"] not in ("Euler", "RK4") or set(s) != {"integrator", "dt"}:
            raise ValueError(f"crocoddyl native settings: integrator Euler or RK4 and dt, "
                             f"got {s}")
        api = ("IntegratedActionModelEuler" if s["integrator"] == "Euler" else
               "IntegratedActionModelRK(RKType.four)")
        return s, (f"{api}.calc → xnext over DifferentialActionModelFreeFwdDynamics, step = "
                   f"each grid interval / ceil(interval / {s['dt']:g} s); u = τ held over each "
                   f"step; joint damping enters through a Python ActuationModelAbstract "
                   f"(τ_joint = u − D v − K (q − q_ref), D = model.damping, K and q_ref the "
                   f"joint springs), so it is re-evaluated at every integrator stage "
                   f"(Crocoddyl itself applies no damping and has no joint spring)")

    def native_rollout(
            self, q0: NDArray[np.float64], v0: NDArray[np.float64], t: NDArray[np.float64],
            controls: Callable[[int, float], NDArray[np.float64]], settings: dict | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(Q (N, nq), V (N, nv)) on the knots t (N,) [s] stepped by Crocoddyl's integrated
        action model. controls(k, t) → τ (nv,) canonical, read at each step's start."""
        s, _ = self.native_describe(settings)
        dam = self._native_dam()
        if s["integrator"] == "Euler":
            iam = crocoddyl.IntegratedActionModelEuler(dam, s["dt"])
        else:
            iam = crocoddyl.IntegratedActionModelRK(dam, crocoddyl.RKType.four, s["dt"])
        data = iam.createData()
        t = np.asarray(t, dtype=float)
        Q, V = np.empty((t.size, self.nq)), np.empty((t.size, self.nv))
        Q[0], V[0] = q0, v0
        x = self._set_x(np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)).copy()
        for k in range(t.size - 1):
            n = max(1, int(np.ceil((t[k + 1] - t[k]) / s["dt"] - 1e-9)))
            h = (t[k + 1] - t[k]) / n
            iam.dt = h
            for i in range(n):
                tau = np.asarray(controls(k, t[k] + i * h), dtype=float)
                iam.calc(data, x, tau if self._identity else tau[self._vinv])
                x = np.array(data.xnext)
            q, v = x[:self.nq], x[self.nq:]
            Q[k + 1] = q if self._identity else q[self._qidx]
            V[k + 1] = v if self._identity else v[self._vidx]
        return Q, V

    def _native_dam(self):
        """DifferentialActionModelFreeFwdDynamics with the damped actuation (cached)."""
        dam = getattr(self, "_native_dam_cache", None)
        if dam is None:
            springs = [(int(self._qidx[sl.iq]), int(self._vidx[sl.iv]), sl.stiffness,
                        sl.spring_ref) for sl in self.layout.slots if sl.stiffness]
            act = _DampedActuation(self._state, np.asarray(self._state.pinocchio.damping,
                                                           dtype=float), springs)
            dam = crocoddyl.DifferentialActionModelFreeFwdDynamics(
                self._state, act, crocoddyl.CostModelSum(self._state, self.nv))
            self._native_dam_cache = (dam, act)  # the actuation must outlive the model
            return dam
        return dam[0]

    # ----- dynamics derivatives ------------------------------------------------------------
    # Tangent convention: Crocoddyl's StateMultibody tangent dx = [δq, δv] with q ⊕ δq =
    # pin.integrate (the canonical one); damping applied as in forward/inverse_dynamics.
    def _perm_nv(self, A):
        """(nv, nv) in Pinocchio's v order → canonical order (rows and columns)."""
        A = np.array(A, dtype=float).reshape(self.nv, self.nv)
        return A if self._identity else A[np.ix_(self._vidx, self._vidx)]

    def forward_dynamics_derivatives(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ), each (nv, nv): DifferentialActionModelFreeFwdDynamics
        .calcDiff, Fx = [∂v̇/∂q, ∂v̇/∂v], Fu = ∂v̇/∂u; u = τ − D v adds −Fu D to ∂v̇/∂v."""
        u = tau - self._D * v if self._damped else tau
        if self._sprung:
            u = u - self.layout.spring_force(q)
        x = self._set_x(q, v).copy()
        up = u if self._identity else u[self._vinv]
        self._fwd.calc(self._fwd_data, x, up)
        self._fwd.calcDiff(self._fwd_data, x, up)
        nv = self.nv
        Fx = np.array(self._fwd_data.Fx, dtype=float).reshape(nv, 2 * nv)  # eigenpy: nv=1 flat
        Fu = np.array(self._fwd_data.Fu, dtype=float)
        dq, dv, du = (self._perm_nv(Fx[:, :nv]), self._perm_nv(Fx[:, nv:]),
                      self._perm_nv(Fu))
        if self._damped:
            dv = dv - du * self._D[None, :]
        if self._sprung:
            dq = dq - du * self._K[None, :]
        return dq, dv, du

    def inverse_dynamics_derivatives(
            self, q: NDArray[np.float64], v: NDArray[np.float64], vdot: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇), each (nv, nv): DifferentialActionModelFreeInvDynamics
        .calcDiff with u = v̇ (full actuation: no residual rows), which evaluates the RNEA
        derivatives into its multibody data (dtau_dq, dtau_dv, M upper triangle); + D on
        ∂τ/∂v."""
        x = self._set_x(q, v).copy()
        up = vdot if self._identity else vdot[self._vinv]
        self._inv.calc(self._inv_data, x, up)
        self._inv.calcDiff(self._inv_data, x, up)
        pd = self._inv_data.multibody.pinocchio
        M = np.array(pd.M, dtype=float)
        M = np.triu(M) + np.triu(M, 1).T
        dq, dv, M = self._perm_nv(pd.dtau_dq), self._perm_nv(pd.dtau_dv), self._perm_nv(M)
        if self._damped:
            dv = dv + np.diag(self._D)
        if self._sprung:
            dq = dq + np.diag(self._K)
        return dq, dv, M

    # ----- constrained dynamics (stage 3, harness/stages/constrained/) --------------------
    def _contact_dam(self, key, build):
        """A cached DifferentialActionModelContactFwdDynamics over ``build(contacts)`` (full
        actuation, no costs, inv_damping 0) and its data."""
        cache = self._contact_dams
        if key not in cache:
            st = self._state
            contacts = crocoddyl.ContactModelMultiple(st, st.nv)
            keep = build(contacts)
            act = crocoddyl.ActuationModelFull(st)
            dam = crocoddyl.DifferentialActionModelContactFwdDynamics(
                st, act, contacts, crocoddyl.CostModelSum(st, st.nv), 0.0, False)
            cache[key] = (dam, dam.createData(), keep, act, contacts)
        return cache[key]

    def _fid(self, frame):
        """Id of the body frame ``frame`` in the state's pin.Model; KeyError if absent."""
        m = self._state.pinocchio
        if not m.existFrame(frame, pin.BODY):
            raise KeyError(f"crocoddyl: no body frame {frame}")
        return m.getFrameId(frame, pin.BODY)

    def frame_jacobian_drift(
            self, q: NDArray[np.float64], v: NDArray[np.float64], frames: Sequence[str]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(J (k, 6, nv), a (k, 6)) of k frames at (q, v) from Crocoddyl's contact models:
        one DifferentialActionModelContactFwdDynamics per frame holding a ContactModel6D
        (LOCAL_WORLD_ALIGNED: Jc = J_WF, angular drift a0[3:]) and a ContactModel3D
        (LOCAL_WORLD_ALIGNED: classical linear drift a0), Baumgarte gains 0; after calc the
        contact data hold Jc and a0 (the DAM's own KKT output is not used: a frame fixed to
        the world makes it singular)."""
        x = self._set_x(np.asarray(q, dtype=float), np.asarray(v, dtype=float)).copy()
        u = np.zeros(self.nv)
        J = np.empty((len(frames), 6, self.nv))
        a = np.empty((len(frames), 6))
        for i, f in enumerate(frames):
            fid = self._fid(f)

            def build(contacts: crocoddyl.ContactModelMultiple, fid: int = fid) -> None:
                st = self._state
                contacts.addContact("f6", crocoddyl.ContactModel6D(
                    st, fid, pin.SE3.Identity(), pin.LOCAL_WORLD_ALIGNED, st.nv, np.zeros(2)))
                contacts.addContact("f3", crocoddyl.ContactModel3D(
                    st, fid, np.zeros(3), pin.LOCAL_WORLD_ALIGNED, st.nv, np.zeros(2)))
                return None

            dam, data = self._contact_dam(("frame", f), build)[:2]
            with np.errstate(all="ignore"):
                dam.calc(data, x, u)
            c6 = data.multibody.contacts.contacts["f6"]
            c3 = data.multibody.contacts.contacts["f3"]
            Jc = np.array(c6.Jc)
            J[i] = Jc if self._identity else Jc[:, self._vidx]
            a[i, :3], a[i, 3:] = np.array(c3.a0), np.array(c6.a0)[3:]
        return J, a

    def _native_constrained_state(self, q, v, tau, rows):
        """Crocoddyl's own KKT solve: DifferentialActionModelContactFwdDynamics.calc
        (inv_damping 0) with one contact per kept constraint row, u = τ − D v → (v̇ = xout,
        λ = pinocchio.lambda_c). ``rows``: [(name, kind, frame, world_point (3,), axis (3,)
        or None)], all against frames fixed to the world: a ContactModel1D
        (LOCAL_WORLD_ALIGNED, reference z axis = the row's world axis) per point/line row, a
        ContactModel6D for a whole weld."""
        key = ("native", tuple((n, k, f, tuple(np.round(ax, 15)) if ax is not None else None)
                               for n, k, f, _, ax in rows))

        def build(contacts: crocoddyl.ContactModelMultiple) -> None:
            st = self._state
            # ContactModelMultiple orders contacts by name (a std::map): a zero-padded index
            # keeps λ in the rows' declaration order
            for i, (n, kind, f, p, ax) in enumerate(rows):
                n = f"{i:04d}:{n}"
                fid = self._fid(f)
                if kind == "weld":
                    contacts.addContact(n, crocoddyl.ContactModel6D(
                        st, fid, pin.SE3(np.eye(3), np.asarray(p, dtype=float)),
                        pin.LOCAL_WORLD_ALIGNED, st.nv, np.zeros(2)))
                else:
                    z = np.asarray(ax, dtype=float)
                    t = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
                    t /= np.linalg.norm(t)
                    # measured: ContactModel1D (LOCAL_WORLD_ALIGNED) constrains the world
                    # component along the third *row* of ``rotation`` (Jc = rotation[2] J_lin)
                    R = np.vstack([t, np.cross(z, t), z])
                    contacts.addContact(n, crocoddyl.ContactModel1D(
                        st, fid, float(np.dot(z, p)), pin.LOCAL_WORLD_ALIGNED, R, st.nv,
                        np.zeros(2)))
            return None

        dam, data = self._contact_dam(key, build)[:2]
        t = np.asarray(tau, dtype=float) - (self._D * v if self._damped else 0.0)
        if self._sprung:
            t = t - self.layout.spring_force(q)
        x = self._set_x(np.asarray(q, dtype=float), np.asarray(v, dtype=float)).copy()
        dam.calc(data, x, t if self._identity else t[self._vinv])
        vd = np.array(data.xout)
        return ((vd if self._identity else vd[self._vidx]),
                np.array(data.multibody.pinocchio.lambda_c))

    def native_constrained(self, problem: Any) -> list[dict]:
        """Stage-3 native row: DifferentialActionModelContactFwdDynamics with one contact per
        kept row (see _native_constrained_state); NotProvided when a constraint joins two
        moving frames (Crocoddyl's contact models hold one frame against a fixed
        reference)."""
        N, m = problem.keep.shape
        if problem.spec.couplings:
            raise NotProvided(self.name, "native constrained dynamics", "joint couplings: "
                              "Crocoddyl's contact models hold frames, not joint coordinates "
                              "(the coupling rows are compared through the harness's KKT)")
        if not np.all(problem.keep == problem.keep[0]):
            raise NotProvided(self.name, "native constrained dynamics", "the kept rows change "
                              "between states; one contact model set per fixture is built")
        keep = problem.keep[0]
        rows = []
        for c, sl in problem.row_slices():
            wb = problem.world_pose(c.frame_b)
            if wb is None:
                raise NotProvided(self.name, "native constrained dynamics",
                                  f"constraint {c.name} joins two moving frames ({c.frame_a}, "
                                  f"{c.frame_b}); Crocoddyl's contact models (ContactModel1D/"
                                  "3D/6D) hold one frame against a fixed reference only")
            p, R = wb
            idx = np.arange(sl.start, sl.stop)
            if c.kind == "weld":
                if not np.all(keep[idx]):
                    raise NotProvided(self.name, "native constrained dynamics",
                                      f"weld {c.name} has dependent rows; ContactModel6D takes "
                                      "all six")
                rows.append((c.name, "weld", c.frame_a, p, None))
                continue
            for j, i in enumerate(idx):
                if keep[i]:
                    rows.append((f"{c.name}.{'xyz'[j]}", c.kind, c.frame_a, p, np.eye(3)[j]))
        vd, lam = np.empty((N, self.nv)), np.zeros((N, m))
        for k in range(N):
            vd[k], lam[k, keep] = self._native_constrained_state(problem.Q[k], problem.V[k],
                                                                 problem.TAU[k], rows)
        return [{"solver": "ContactFwdDynamics", "exact": True, "vdot": vd, "lam": lam,
                 "law": "crocoddyl.DifferentialActionModelContactFwdDynamics (inv_damping 0, "
                        "Baumgarte gains 0), u = τ − D v − K (q − q_ref); one ContactModel1D "
                        "(LOCAL_WORLD_ALIGNED, reference z axis = the row's world axis) per "
                        "kept point/line row, a ContactModel6D per weld; λ = "
                        "pinocchio.lambda_c"}]


if crocoddyl is not None:
    class _DampedActuation(crocoddyl.ActuationModelAbstract):
        """Full actuation with joint damping and joint springs: τ = u − D v − K (q − q_ref)
        (nv,), Pinocchio's order; ``springs`` [(q index, v index, k, q_ref)] of the sprung
        one-dof joints in Pinocchio's q and v."""

        def __init__(self, state, D, springs=()):
            crocoddyl.ActuationModelAbstract.__init__(self, state, state.nv)
            self._D = D
            self._nq = state.nq
            self._springs = list(springs)

        def _spring(self, x):
            f = np.zeros(self.nu)
            for iq, iv, k, ref in self._springs:
                f[iv] = k * (x[iq] - ref)
            return f

        def calc(self, data: crocoddyl.ActuationDataAbstract, x: NDArray[np.float64],
                 u: NDArray[np.float64]) -> None:
            """τ (nv,) [N, N·m] = u − D v − K (q − q_ref) into data.tau; x = [q, v]."""
            data.tau[:] = u - self._D * x[self._nq:] - self._spring(x)

        def calcDiff(self, data: crocoddyl.ActuationDataAbstract, x: NDArray[np.float64],
                     u: NDArray[np.float64]) -> None:
            """∂τ/∂x (nv, nq + nv) and ∂τ/∂u (nv, nv) of ``calc`` into data."""
            data.dtau_dx[:, :] = 0.0
            data.dtau_dx[:, self.state.ndx // 2:] = -np.diag(self._D)
            for _, iv, k, _ in self._springs:
                data.dtau_dx[iv, iv] = -k
            data.dtau_du[:, :] = np.eye(self.nu)

        def commands(self, data: crocoddyl.ActuationDataAbstract, x: NDArray[np.float64],
                     tau: NDArray[np.float64]) -> None:
            """u (nv,) [N, N·m] = τ + D v + K (q − q_ref) into data.u: the inverse of calc."""
            data.u[:] = tau + self._D * x[self._nq:] + self._spring(x)

        def torqueTransform(self, data: crocoddyl.ActuationDataAbstract, x: NDArray[np.float64],
                            u: NDArray[np.float64]) -> None:
            """∂u/∂τ (nv, nv) = I into data.Mtau."""
            data.Mtau[:, :] = np.eye(self.nu)

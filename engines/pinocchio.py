"""Pinocchio adapter (pin 4.0.0).

Dimension legend: nq, nv canonical (= Pinocchio's own layout up to joint order: free
flyer [p, quat xyzw] / [v_B, ω_B], continuous joints (cos, sin)).

Loads the prepared URDF with ``buildModelFromXML`` (adding ``JointModelFreeFlyer`` named
``root_joint`` for a floating model). Settings for parity:
gravity from the spec; ``model.armature`` set from the spec (URDF cannot carry it);
``pin.aba`` and ``pin.rnea`` ignore ``model.damping``, so the adapter applies the
canonical −D·v with D read back from ``model.damping`` (which the URDF parser filled).

Ball joints: ``JointModelSpherical`` (q = quaternion x y z w, v = ω in the child frame:
the canonical layout, so no conversion). The prepared URDF carries them as Drake's
``<drake:joint type="ball">`` element, which urdfdom does not read; the adapter parses a
copy in which each is a ``floating`` joint (same name, placement and links), then
rebuilds the model with ``JointModelSpherical`` in place of each placeholder
(``_spherical_model``: same joint order, placements, inertias and frames; damping from
the spec on the three dofs).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import Layout, spatial_inertia_world
from harness.core.errors import ModelRejected
from harness.core.spec import FREE_JOINT_NAME
from harness.model.binding import Binding
from harness.model.prepared import PreparedModel
from harness.model.protocol import AdapterBase, as_is_source

BINDING = Binding("pinocchio")
with BINDING:
    import pinocchio as pin


def _parse_as_is(model: PreparedModel, src):
    """pin.Model of the user's file with Pinocchio's defaults: ``buildModelFromXML`` (URDF:
    mimic joints independent, damping/friction/limits only stored) or
    ``buildModelFromMJCF`` (armature, damping, frictionloss read); a free root named
    ``root_joint`` (a FreeFlyer added when the model is declared floating)."""
    floating = model.spec.floating
    try:
        if src.kind == "urdf":
            return (pin.buildModelFromXML(src.text, pin.JointModelFreeFlyer()) if floating
                    else pin.buildModelFromXML(src.text))
        pm = pin.buildModelFromMJCF(src.path)
        free = [i for i in range(1, pm.njoints) if pm.parents[i] == 0
                and pm.joints[i].shortname() == "JointModelFreeFlyer"]
        if free:
            pm.names[free[0]] = FREE_JOINT_NAME
        elif floating:
            pm = pin.buildModelFromMJCF(src.path, pin.JointModelFreeFlyer(), FREE_JOINT_NAME)
        return pm
    except (ValueError, RuntimeError) as e:
        raise ModelRejected("pinocchio", f"{src.kind.upper()} rejected: {e}") from None


_DRAKE_BALL_RE = re.compile(r"""<drake:joint (name=(?:"[^"]*"|'[^']*')) type="ball">""")


def _spherical_model(pm, balls: dict):
    """A copy of pin.Model ``pm`` in which every joint named in ``balls`` ({name: damping
    [N·m·s/rad]}) — a JointModelFreeFlyer placeholder — is a JointModelSpherical: the
    same parents, placements, names, inertias and frames in the same order; the
    placeholder's angular entries (effort, velocity, friction limits; quaternion part of
    the configuration limits) carried over, damping set on the three dofs."""
    new = pin.Model()
    new.name = pm.name
    new.gravity = pm.gravity
    keep = {"armature": [], "rotorInertia": [], "rotorGearRatio": []}
    for jid in range(1, pm.njoints):
        jm, name = pm.joints[jid], pm.names[jid]
        iq, iv = jm.idx_q, jm.idx_v
        qs, vs = slice(iq, iq + jm.nq), slice(iv, iv + jm.nv)
        if name in balls:
            if jm.shortname() != "JointModelFreeFlyer":
                raise ModelRejected("pinocchio", f"joint {name}: ball placeholder parsed as "
                                                 f"{jm.shortname()}")
            jm = pin.JointModelSpherical()
            qs, vs = slice(iq + 3, iq + 7), slice(iv + 3, iv + 6)
        vec = lambda a, sl=vs: np.asarray(a, dtype=float)[sl].copy()  # noqa: E731
        damping = np.full(3, float(balls[name])) if name in balls else vec(pm.damping)
        new.addJoint(pm.parents[jid], jm, pm.jointPlacements[jid], name,
                     vec(pm.lowerEffortLimit), vec(pm.upperEffortLimit),
                     vec(pm.lowerVelocityLimit), vec(pm.upperVelocityLimit),
                     vec(pm.lowerPositionLimit, qs), vec(pm.upperPositionLimit, qs),
                     vec(pm.positionLimitMargin, qs),
                     vec(pm.lowerDryFrictionLimit), vec(pm.upperDryFrictionLimit), damping)
        new.appendBodyToJoint(jid, pm.inertias[jid], pin.SE3.Identity())
        for k in keep:
            keep[k].append(vec(getattr(pm, k)))
    for f in list(pm.frames)[1:]:  # frame 0 is the universe, already in ``new``
        new.addFrame(pin.Frame(f), False)
    for k, parts in keep.items():
        setattr(new, k, np.concatenate(parts) if parts else np.zeros(0))
    return new


def build_pinocchio_model(
        model: PreparedModel, engine: str = "pinocchio"
) -> tuple[pin.Model, NDArray[np.intp], NDArray[np.intp]]:
    """(pin.Model, qidx (nq,), vidx (nv,)) for a prepared model (q_pin[qidx] = q,
    v_pin[vidx] = v); shared with the Crocoddyl adapter, whose state wraps exactly this
    Pinocchio model. As-is (``model.as_is_file(engine)``): the user's file parsed with
    Pinocchio's defaults (gravity and armature as parsed)."""
    BINDING.require()
    src = as_is_source(model, engine)
    balls = {s.name: s.damping for s in model.layout.slots if s.type == "ball"}
    urdf = model.urdf
    if balls and src is None:  # Drake's ball element → a floating placeholder (see above)
        urdf = _DRAKE_BALL_RE.sub(r'<joint \1 type="floating">', urdf)
        urdf = urdf.replace("</drake:joint>", "</joint>")
    if src is not None:
        pm = _parse_as_is(model, src)
    elif model.spec.floating:
        pm = pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer())
    else:
        pm = pin.buildModelFromXML(urdf)
    if balls and src is None:
        pm = _spherical_model(pm, balls)
    if src is None:
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
        if s.type != "free" and src is None:
            armature[jm.idx_v:jm.idx_v + s.nv] = s.armature  # a ball joint: on its 3 dofs
    if pm.nq != lay.nq or pm.nv != lay.nv:
        raise ModelRejected("pinocchio", f"parsed nq/nv {pm.nq}/{pm.nv}, expected "
                                             f"{lay.nq}/{lay.nv}")
    pm.armature = armature
    return pm, qidx, vidx


def _world_inertia(X, I):
    """(mass, com_W, I_W about the com) of a pin.Inertia expressed in frame X (pin.SE3)."""
    R = X.rotation
    return float(I.mass), X.act(I.lever), R @ I.inertia @ R.T


def _about_origin(m, c, Ic):
    """(m, m c, I about the world origin): the additive form of a rigid body's inertia."""
    c = np.asarray(c, dtype=float)
    return m, m * c, np.asarray(Ic) + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))


def pinocchio_readback(pm: pin.Model, layout: Layout, qidx: NDArray[np.intp], damped: bool,
                       engine: str, api: str, notes: Sequence[str] = ()) -> dict:
    """Read-back of a pin.Model at the canonical neutral q (format:
    harness/stages/diagnosis/__init__.py).

    Pinocchio merges a link welded by a fixed joint into its joint's body
    (``model.inertias``) but keeps the link's own inertia on the fixed joint's frame (a
    link welded to the world: on its body frame); the inertia of a moving joint's child
    link is therefore its joint's inertia minus those of the links merged into it.
    Damping: ``model.damping`` is what Pinocchio holds; it enters the dynamics only if the
    adapter applies it (``damped``: pin.aba and pin.rnea ignore it)."""
    d = pm.createData()
    q = np.empty(pm.nq)
    q[qidx] = layout.neutral()
    pin.framesForwardKinematics(pm, d, q)
    pin.computeJointJacobians(pm, d, q)
    frames = list(pm.frames)
    nonzero = lambda I: I.mass > 0 or bool(np.any(I.inertia))  # noqa: E731
    carriers = [i for i, f in enumerate(frames) if nonzero(f.inertia)]
    bodies = {}
    for i, f in enumerate(frames):
        if f.type != pin.BODY:
            continue
        par = f.parentFrame if 0 <= f.parentFrame < len(frames) else i
        if i in carriers:
            item = _world_inertia(d.oMf[i], f.inertia)
        elif par in carriers and frames[par].type == pin.FIXED_JOINT:
            item = _world_inertia(d.oMf[par], frames[par].inertia)
        elif frames[par].type == pin.JOINT and f.parentJoint > 0:
            jid = f.parentJoint
            own = pin.Inertia(pm.inertias[jid])  # in the joint frame: small lever arms
            merged = [c for c in carriers if frames[c].parentJoint == jid]
            for c in merged:
                own = own - frames[c].placement.act(frames[c].inertia)
            if merged and own.mass <= 1e-14 * pm.inertias[jid].mass:
                item = (0.0, np.zeros(3), np.zeros((3, 3)))  # round-off of a massless link
            else:
                item = _world_inertia(d.oMi[jid], own)
        else:
            item = (0.0, np.zeros(3), np.zeros((3, 3)))
        X = np.eye(4)
        X[:3, :3], X[:3, 3] = d.oMf[i].rotation, d.oMf[i].translation
        bodies[f.name] = {"mass": item[0], "com_W": np.asarray(item[1], dtype=float),
                          "I_W": np.asarray(item[2], dtype=float), "X_WB": X}
    joints = {}
    for s in layout.slots:
        jid = pm.getJointId(s.name)
        jm = pm.joints[jid]
        short = jm.shortname()
        X = np.eye(4)
        X[:3, :3], X[:3, 3] = d.oMi[jid].rotation, d.oMi[jid].translation
        J = np.asarray(pin.getJointJacobian(pm, d, jid, pin.LOCAL_WORLD_ALIGNED))
        J = J.reshape(6, pm.nv)  # eigenpy returns a 6x1 Jacobian flat
        if short == "JointModelFreeFlyer":
            kind, axis = "free", np.zeros(3)
            native = ("p_WB, quat x y z w", "v_B, ω_B (body axes)")
        elif short == "JointModelSpherical":
            kind, axis, native = "ball", np.zeros(3), ("quat x y z w", "ω (child axes)")
        elif short.startswith(("JointModelRUB", "JointModelRevoluteUnbounded")):
            kind, axis, native = "continuous", J[3:6, jm.idx_v].copy(), ("cos θ, sin θ", "θ̇")
        elif short.startswith(("JointModelR", "JointModelRevolute")):
            kind, axis, native = "revolute", J[3:6, jm.idx_v].copy(), ("θ", "θ̇")
        elif short.startswith(("JointModelP", "JointModelPrismatic")):
            kind, axis, native = "prismatic", J[0:3, jm.idx_v].copy(), ("x", "ẋ")
        else:
            kind, axis, native = short, np.zeros(3), (short, short)
        lo = hi = None
        if kind in ("revolute", "prismatic"):
            a, b = float(pm.lowerPositionLimit[jm.idx_q]), float(pm.upperPositionLimit[jm.idx_q])
            if np.isfinite(a) and np.isfinite(b) and a < b:
                lo, hi = a, b
        iv = jm.idx_v
        one = kind not in ("free",)
        dmp = float(pm.damping[iv]) if one else 0.0
        joints[s.name] = {
            "type": kind, "body": "", "axis_W": np.asarray(axis, dtype=float), "X_WJ": X,
            "lower": lo, "upper": hi, "limit_enforced": False,
            "damping": dmp, "damping_applied": dmp if damped else 0.0,
            "friction": float(pm.friction[iv]) if one else 0.0, "friction_applied": 0.0,
            "armature": float(pm.armature[iv]) if one else 0.0,
            "native_q": native[0], "native_v": native[1], "native_index": int(jm.idx_q)}
    return {"engine": engine, "api": api, "bodies": bodies, "joints": joints,
            "couplings": {}, "nq_native": int(pm.nq), "nv_native": int(pm.nv),
            "notes": list(notes)}


def pinocchio_set_inertials(pm: pin.Model, layout: Layout, qidx: NDArray[np.intp],
                            inertials: dict) -> None:
    """Give bodies of ``pm`` new inertias in place (an ablation): ``inertials`` {body:
    (m kg, com_W (3) m, I_W (3x3) kg·m² about the com)} at the canonical neutral q, world
    axes. The difference to what the read-back shows for the body is added to the inertia
    of the joint that carries it (where the dynamics read it), and the frame holding the
    link's own inertia (if any) is updated so that the read-back shows the new value."""
    rb = pinocchio_readback(pm, layout, qidx, False, "", "")["bodies"]
    d = pm.createData()
    q = np.empty(pm.nq)
    q[qidx] = layout.neutral()
    pin.framesForwardKinematics(pm, d, q)

    def local(X: pin.SE3, item: tuple) -> pin.Inertia:
        # (m, com_W, I_W) → pin.Inertia in frame X
        m, c, I = item
        R = X.rotation
        return pin.Inertia(float(m), X.actInv(np.asarray(c, dtype=float)),
                           R.T @ np.asarray(I, dtype=float) @ R)

    for name, want in inertials.items():
        if not pm.existFrame(name, pin.BODY):
            raise ValueError(f"pinocchio: no body {name}")
        fid = pm.getFrameId(name, pin.BODY)
        f = pm.frames[fid]
        now = rb[name]
        jid = f.parentJoint
        if jid > 0:
            X = d.oMi[jid]
            pm.inertias[jid] = (pin.Inertia(pm.inertias[jid]) + local(X, want)
                                - local(X, (now["mass"], now["com_W"], now["I_W"])))
        par = f.parentFrame if 0 <= f.parentFrame < len(pm.frames) else fid
        for c in (fid, par):
            fr = pm.frames[c]
            if fr.inertia.mass > 0 or np.any(fr.inertia.inertia):
                fr.inertia = local(d.oMf[c], want)
                pm.frames[c] = fr
                break


def pinocchio_as_is_joints(model: PreparedModel, engine: str) -> list:
    """Moving joints (free root excluded) of the as-is pin.Model of ``model``."""
    src = as_is_source(model, engine)
    pm = _parse_as_is(model, src)
    return [pm.names[i] for i in range(1, pm.njoints)
            if pm.joints[i].shortname() != "JointModelFreeFlyer" and pm.joints[i].nv > 0]


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
        # joint springs: Pinocchio has none, so the adapter applies −K (q − q_ref) itself,
        # as part of h (harness/core/conventions.py Layout.spring_force)
        self._K = self.layout.stiffness
        self._sprung = self.layout.has_springs
        self._as_is = as_is_source(model, self.name)
        if self._as_is is not None:
            self._damped = False  # Pinocchio's default: pin.aba ignores model.damping
        self._frame_ids = {}
        self._frame_tables: dict[tuple[str, ...], tuple] = {}
        self.provides = {
            "group_inertias": "model.inertias after buildModelFromXML (fixed links merged)",
            "frame_pose": "forwardKinematics → data.oMi, the frame placement applied",
            "frame_jacobian": "computeFrameJacobian(LOCAL_WORLD_ALIGNED)",
            "mass_matrix": "crba (symmetrised)",
            "bias_forces": "nonLinearEffects (+ K (q − q_ref) of the joint springs, "
                           "added by the adapter: Pinocchio has no joint spring)",
            "forward_dynamics": "aba(q, v, τ − D v − K (q − q_ref)), D = model.damping",
            "inverse_dynamics": "rnea(q, v, v̇) + D v + K (q − q_ref)",
            "integrate": "pin.integrate",
            "native_sticking_acceleration": "constraintDynamics with a "
                              "CONTACT_3D RigidConstraintModel (LOCAL_WORLD_ALIGNED, no "
                              "Baumgarte) at a material contact point",
        }
        self.derivatives_method = "analytical"  # stages/derivatives.py
        self.provides.update({  # dynamics derivatives
            "forward_dynamics_derivatives": "computeABADerivatives (analytical), damping "
                                            "and joint springs by the chain rule",
            "inverse_dynamics_derivatives": "computeRNEADerivatives (analytical) + D on "
                                            "∂τ/∂v, + K on ∂τ/∂q",
        })
        if self._as_is is not None:
            self.provides.update({"forward_dynamics": "aba(q, v, τ) — Pinocchio's default: "
                                                      "model.damping/friction not applied",
                                  "inverse_dynamics": "rnea(q, v, v̇) (no damping)"})
        self.provides.update({
            "frame_jacobian_drift": "computeJointJacobians + forwardKinematics(q, v, 0): "
                                    "getFrameJacobian and getFrameClassicalAcceleration "
                                    "(LOCAL_WORLD_ALIGNED)",
            "native_constrained": "forwardDynamics(q, v, τ, J, γ) (KKT, no regularisation) "
                                  "and constraintDynamics (RigidConstraintModel 3D/6D, "
                                  "proximal mu 0)",
        })

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
            # BODY frames first: a link and a joint may share a name (so100, z1); then an
            # MJCF's site (OP_FRAME), and a fixed root the MJCF writes as its world
            spec = self.model.spec
            if self._m.existFrame(frame, pin.BODY):
                fid = self._m.getFrameId(frame, pin.BODY)
            elif self._m.existFrame(frame, pin.OP_FRAME):
                fid = self._m.getFrameId(frame, pin.OP_FRAME)
            elif frame == spec.root and not spec.floating:
                fid = 0
            else:
                raise KeyError(f"pinocchio: no body frame {frame}")
            self._frame_ids[frame] = fid
        return fid

    # ----- read-back, as-is mode, ablations (diagnosis: harness/stages/diagnosis/) -----
    @classmethod
    def as_is_joints(cls, model: PreparedModel) -> list:
        """Moving joints (free root excluded) Pinocchio parses from the as-is file."""
        BINDING.require()
        return pinocchio_as_is_joints(model, cls.name)

    def readback(self) -> dict:
        """The pin.Model as Pinocchio holds it after parsing (see pinocchio_readback)."""
        notes = ["as-is: Pinocchio's defaults (pin.aba ignores model.damping and "
                 "model.friction; URDF mimic tags ignored)"] if self._as_is else []
        rb = pinocchio_readback(self._m, self.layout, self._qidx, self._damped, self.name,
                                "pin.Model: inertias + frame inertias, oMi, joint "
                                "Jacobians, lower/upperPositionLimit, damping, friction, "
                                "armature; joint springs as the adapter applies them",
                                notes)
        for sl in self.layout.slots:  # Pinocchio holds no spring: what the adapter applies
            rb["joints"][sl.name].update(stiffness_applied=sl.stiffness,
                                         spring_ref=sl.spring_ref)
        return rb

    def ablated(self, changes: dict) -> PinocchioAdapter:
        """A new adapter with one known cause removed: ``damping=0`` (no −D v),
        ``armature=0`` (model.armature), ``inertials={body: (m, com_W, I_W) at neutral}``
        (pinocchio_set_inertials). Pinocchio applies no friction, limits or couplings, so
        removing them changes nothing; placements cannot be changed here (ValueError)."""
        unknown = set(changes) - {"damping", "armature", "friction", "limits", "couplings",
                                  "inertials"}
        if unknown:
            raise ValueError(f"pinocchio: cannot ablate {sorted(unknown)}")
        new = type(self)(self.model)
        if "damping" in changes:
            new._damped = False
        if "armature" in changes:
            new._m.armature = np.zeros(new._m.nv)
        if changes.get("inertials"):
            pinocchio_set_inertials(new._m, new.layout, new._qidx, changes["inertials"])
            new._d = new._m.createData()
        return new

    # ----- native contact (harness/stages/contact/native.py) --------------------------------------
    def native_contact_statement(self, settings: dict | None = None) -> tuple:
        """(settings, one-line statement of the contact law): HasNativeContact
        (harness/model/protocol.py)."""
        return {}, ("Pinocchio constraintDynamics: exact bilateral CONTACT_3D "
                    "RigidConstraintModel at the material contact point (LOCAL_WORLD_ALIGNED "
                    "forces, Baumgarte gains 0, default ProximalSettings): a sticking contact, "
                    "no unilateral or friction-cone condition")

    def native_sticking_acceleration(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64],
            frame: str, offset_W: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
        """(v̇ (nv,), λ_W (3,) [N]) with the material point p_WF + offset_W (3,) [m] of
        frame's body held fixed: pin.constraintDynamics with one CONTACT_3D constraint."""
        m = self._m
        d = m.createData()
        qp = self._q(np.asarray(q, dtype=float))
        fid = self._fid(frame)
        pin.framesForwardKinematics(m, d, qp)
        R_WF = d.oMf[fid].rotation
        fr = m.frames[fid]
        placement = fr.placement * pin.SE3(np.eye(3), R_WF.T @ np.asarray(offset_W, dtype=float))
        cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, m, fr.parentJoint, placement,
                                      pin.LOCAL_WORLD_ALIGNED)
        models = pin.StdVec_RigidConstraintModel()
        models.append(cm)
        datas = pin.StdVec_RigidConstraintData()
        datas.append(cm.createData())
        pin.initConstraintDynamics(m, d, models, datas)
        tau = np.asarray(tau, dtype=float)
        if self._damped:
            tau = tau - self._D * v
        if self._sprung:
            tau = tau - self.layout.spring_force(q)
        ddq = pin.constraintDynamics(m, d, qp, self._v(np.asarray(v, dtype=float)),
                                     self._v(tau), models, datas)
        return self._out_v(np.asarray(ddq)), np.array(datas[0].contact_force.linear)

    def naive_dynamics(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """(M (nv, nv) [kg, kg·m, kg·m²], v̇ (nv,) [m/s², rad/s²]) from Pinocchio's own calls with
        the canonical arrays unconverted (in Pinocchio's joint order); None if its nq/nv
        differ."""
        m, d = self._m, self._d
        if (m.nq, m.nv) != (len(q), len(v)):
            return None
        if self._damped:
            tau = tau - np.asarray(m.damping) * v
        if self._sprung:
            tau = tau - self._spring_pin(q)
        M = pin.crba(m, d, np.asarray(q, dtype=float)).reshape(m.nv, m.nv)
        return np.triu(M) + np.triu(M, 1).T, np.array(pin.aba(m, d, q, v, tau))

    # ----- protocol --------------------------------------------------------------------
    def neutral(self) -> NDArray[np.float64]:
        """q (nq,) [m, rad] at rest: EngineAdapter.neutral (harness/model/protocol.py)."""
        return np.array(pin.neutral(self._m))[self._qidx]

    def group_inertias(self) -> dict[str, NDArray[np.float64]]:
        """{joint: (10,) [kg, m, kg·m²]} at neutral: EngineAdapter.group_inertias
        (harness/model/protocol.py)."""
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

    def frame_pose(self, q: NDArray[np.float64], frame: str) -> NDArray[np.float64]:
        """(12,) [m; R_WF row-major] pose of ``frame`` at q (nq,): EngineAdapter.frame_pose
        (harness/model/protocol.py)."""
        return self.frame_poses(q, (frame,))[0]

    def _frame_table(self, frames: Sequence[str]) -> tuple:
        """(parent joints (k,), their distinct ids (u,), index of each frame's parent in
        them (k,), placements in the parent R (k, 3, 3) and t (k, 3), support mask (k, nv)
        in canonical speed order) of k frames; cached per tuple of names."""
        key = tuple(frames)
        tab = self._frame_tables.get(key)
        if tab is None:
            m = self._m
            fids = [self._fid(f) for f in key]
            par = np.array([m.frames[i].parentJoint for i in fids], dtype=int)
            mask = np.zeros((len(fids), m.nv), dtype=bool)
            for k, j in enumerate(par):
                for s in m.supports[int(j)]:
                    if s > 0:
                        jm = m.joints[s]
                        mask[k, jm.idx_v:jm.idx_v + jm.nv] = True
            uniq, at = np.unique(par, return_inverse=True)
            tab = (par, [int(u) for u in uniq], at,
                   np.array([m.frames[i].placement.rotation for i in fids]).reshape(-1, 3, 3),
                   np.array([m.frames[i].placement.translation for i in fids]).reshape(-1, 3),
                   mask if self._identity else mask[:, self._vidx])
            if len(self._frame_tables) > 64:
                self._frame_tables.clear()
            self._frame_tables[key] = tab
        return tab

    def _placed(self, tab: tuple) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(R_WF (k, 3, 3), p_WF (k, 3)) from data.oMi (forward kinematics done)."""
        oMi = self._d.oMi
        H = np.array([oMi[u].homogeneous for u in tab[1]])[tab[2]]
        Rj = H[:, :3, :3]
        return Rj @ tab[3], (Rj @ tab[4][:, :, None])[:, :, 0] + H[:, :3, 3]

    def frame_poses(self, q: NDArray[np.float64], frames: Sequence[str]) -> NDArray[np.float64]:
        """(k, 12): one forwardKinematics, then each frame placed from its parent joint's
        pose (vectorised over the k frames)."""
        tab = self._frame_table(frames)
        pin.forwardKinematics(self._m, self._d, self._q(q))
        R, p = self._placed(tab)
        return np.concatenate([p, R.reshape(-1, 9)], axis=1)

    def frame_jacobians(self, q: NDArray[np.float64], frames: Sequence[str]) -> NDArray[np.float64]:
        """(k, 6, nv): computeJointJacobians once (data.J: every joint's motion subspace,
        world axes, at the world origin), then per frame F at p_WF its supporting columns
        shifted to F's origin, v_F = v_O + ω × p_WF (LOCAL_WORLD_ALIGNED), vectorised."""
        tab = self._frame_table(frames)
        pin.computeJointJacobians(self._m, self._d, self._q(q))
        _, p = self._placed(tab)
        J = self._d.J.reshape(6, self._m.nv)  # eigenpy returns a 6x1 matrix as (6,)
        J = J if self._identity else J[:, self._vidx]
        px, py, pz = p[:, 0:1], p[:, 1:2], p[:, 2:3]
        out = np.empty((len(p), 6, J.shape[1]))
        out[:, 0] = J[0] + J[4] * pz - J[5] * py
        out[:, 1] = J[1] + J[5] * px - J[3] * pz
        out[:, 2] = J[2] + J[3] * py - J[4] * px
        out[:, 3:] = J[3:]
        out *= tab[5][:, None, :]
        return out

    def frame_jacobian(self, q: NDArray[np.float64], frame: str) -> NDArray[np.float64]:
        """J_WF (6, nv) of ``frame`` at q (nq,): EngineAdapter.frame_jacobian
        (harness/model/protocol.py)."""
        J = pin.computeFrameJacobian(self._m, self._d, self._q(q), self._fid(frame),
                                     pin.LOCAL_WORLD_ALIGNED).reshape(6, self.nv)  # eigenpy
        # returns a 6x1 Jacobian as a flat array
        return np.array(J if self._identity else J[:, self._vidx])

    def mass_matrix(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """M (nv, nv) [kg, kg·m, kg·m²] at q (nq,): EngineAdapter.mass_matrix
        (harness/model/protocol.py)."""
        M = pin.crba(self._m, self._d, self._q(q)).reshape(self.nv, self.nv)
        M = np.triu(M) + np.triu(M, 1).T
        return M if self._identity else M[np.ix_(self._vidx, self._vidx)]

    def _spring_pin(self, q_pin):
        """K (q − q_ref) (nv,) in Pinocchio's own joint order from Pinocchio's q."""
        q_pin = np.asarray(q_pin, dtype=float)
        return self._v(self.layout.spring_force(q_pin if self._identity
                                                else q_pin[self._qidx]))

    def bias_forces(self, q: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
        """h (nv,) [N, N·m] at q (nq,), v (nv,): EngineAdapter.bias_forces
        (harness/model/protocol.py)."""
        h = self._out_v(pin.nonLinearEffects(self._m, self._d, self._q(q), self._v(v)))
        return h + self.layout.spring_force(q) if self._sprung else h

    def forward_dynamics(self, q: NDArray[np.float64], v: NDArray[np.float64],
                         tau: NDArray[np.float64]) -> NDArray[np.float64]:
        """v̇ (nv,) [m/s², rad/s²] at q (nq,), v (nv,), τ (nv,): EngineAdapter.forward_dynamics
        (harness/model/protocol.py)."""
        if self._damped:
            tau = tau - self._D * v
        if self._sprung:
            tau = tau - self.layout.spring_force(q)
        return self._out_v(pin.aba(self._m, self._d, self._q(q), self._v(v), self._v(tau)))

    def inverse_dynamics(self, q: NDArray[np.float64], v: NDArray[np.float64],
                         vdot: NDArray[np.float64]) -> NDArray[np.float64]:
        """τ (nv,) [N, N·m] at q (nq,), v (nv,), v̇ (nv,): EngineAdapter.inverse_dynamics
        (harness/model/protocol.py)."""
        tau = self._out_v(pin.rnea(self._m, self._d, self._q(q), self._v(v), self._v(vdot)))
        if self._sprung:
            tau = tau + self.layout.spring_force(q)
        return tau + self._D * v if self._damped else tau

    def integrate(self, q: NDArray[np.float64], v: NDArray[np.float64],
                  dt: float) -> NDArray[np.float64]:
        """q (nq,) after constant v (nv,) for dt [s]: EngineAdapter.integrate
        (harness/model/protocol.py)."""
        qn = pin.integrate(self._m, self._q(q), self._v(np.asarray(v) * dt))
        return np.array(qn if self._identity else qn[self._qidx])

    # ----- dynamics derivatives ------------------------------------------------------------
    # Tangent convention (canonical = Pinocchio's): ∂/∂q is w.r.t. δ ∈ R^nv with
    # q ⊕ δ = pin.integrate(q, δ); damping enters as in forward/inverse_dynamics.
    def _perm_nv(self, A):
        """(nv, nv) in Pinocchio's v order → canonical order (rows and columns)."""
        A = np.array(A, dtype=float).reshape(self.nv, self.nv)
        return A if self._identity else A[np.ix_(self._vidx, self._vidx)]

    def forward_dynamics_derivatives(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ), each (nv, nv) [1/s², 1/s, 1/(kg·m²)…], of
        v̇ = aba(q, v, τ − D v): computeABADerivatives (analytical), damping by the
        chain rule ∂v̇/∂v = ABA_v − M⁻¹ D."""
        qp, vp = self._q(q), self._v(v)
        t = tau - self._D * v if self._damped else tau
        tp = self._v(t - self.layout.spring_force(q) if self._sprung else t)
        dq, dv, dtau = pin.computeABADerivatives(self._m, self._d, qp, vp, tp)
        Minv = np.array(dtau, dtype=float).reshape(self.nv, self.nv)
        Minv = np.triu(Minv) + np.triu(Minv, 1).T  # Pinocchio fills the upper triangle
        dq, dv, Minv = self._perm_nv(dq), self._perm_nv(dv), self._perm_nv(Minv)
        if self._damped:
            dv = dv - Minv * self._D[None, :]
        if self._sprung:  # ∂(−K (q − q_ref))/∂q = −K on the one-dof joints (nq = nv there)
            dq = dq - Minv * self._K[None, :]
        return dq, dv, Minv

    def inverse_dynamics_derivatives(
            self, q: NDArray[np.float64], v: NDArray[np.float64], vdot: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇), each (nv, nv), of τ = rnea(q, v, v̇) + D v:
        computeRNEADerivatives (analytical), + D on ∂τ/∂v."""
        dq, dv, da = pin.computeRNEADerivatives(self._m, self._d, self._q(q), self._v(v),
                                                self._v(vdot))
        M = np.array(da, dtype=float).reshape(self.nv, self.nv)
        M = np.triu(M) + np.triu(M, 1).T
        dq, dv, M = self._perm_nv(dq), self._perm_nv(dv), self._perm_nv(M)
        if self._damped:
            dv = dv + np.diag(self._D)
        if self._sprung:
            dq = dq + np.diag(self._K)
        return dq, dv, M

    # ----- constrained dynamics (stage 3, harness/stages/constrained/) --------------------
    def frame_jacobian_drift(
            self, q: NDArray[np.float64], v: NDArray[np.float64], frames: Sequence[str]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(J (k, 6, nv), a (k, 6)) of k frames at (q, v): J_WF [linear of F's origin; ω],
        world axes (LOCAL_WORLD_ALIGNED), and the drift J̇_WF v = classical acceleration of
        F's origin and angular acceleration with v̇ = 0 [m/s², rad/s²]:
        computeJointJacobians, then forwardKinematics(q, v, 0) and
        getFrameClassicalAcceleration(LOCAL_WORLD_ALIGNED)."""
        m, d = self._m, self._d
        qp, vp = self._q(np.asarray(q, dtype=float)), self._v(np.asarray(v, dtype=float))
        pin.computeJointJacobians(m, d, qp)
        pin.forwardKinematics(m, d, qp, vp, np.zeros(m.nv))
        pin.updateFramePlacements(m, d)
        J = np.empty((len(frames), 6, self.nv))
        a = np.empty((len(frames), 6))
        for i, f in enumerate(frames):
            fid = self._fid(f)
            Jf = pin.getFrameJacobian(m, d, fid, pin.LOCAL_WORLD_ALIGNED).reshape(6, self.nv)
            J[i] = Jf if self._identity else Jf[:, self._vidx]
            acc = pin.getFrameClassicalAcceleration(m, d, fid, pin.LOCAL_WORLD_ALIGNED)
            a[i, :3], a[i, 3:] = acc.linear, acc.angular
        return J, a

    def _native_constrained_state(self, q, v, tau, J, drift, rows):
        """Pinocchio's own constrained solvers on one state (canonical arrays; J (m, nv) and
        drift J̇v (m,) of the independent rows the harness kept; Pinocchio's γ is J̇v: it
        solves J v̇ = −γ).

        * ``forwardDynamics(q, v, τ − D v, J, γ)`` (the KKT solve with a given constraint
          Jacobian and drift; 0 regularisation): → (v̇, λ = data.lambda_c);
        * ``constraintDynamics`` with RigidConstraintModel(CONTACT_3D / CONTACT_6D,
          LOCAL_WORLD_ALIGNED) between the constraint frames' joints (proximal settings
          mu 0, accuracy 1e-14): → v̇ only (its λ is in the contact frames, not the rows).
        ``rows``: constraint kinds for constraintDynamics ([(kind, frame_a, frame_b)]) or
        None when a kept row set is not a whole 3-D/6-D block (then it is not run)."""
        m, d = self._m, self._d
        qp, vp = self._q(np.asarray(q, dtype=float)), self._v(np.asarray(v, dtype=float))
        t = np.asarray(tau, dtype=float) - (self._D * v if self._damped else 0.0)
        if self._sprung:
            t = t - self.layout.spring_force(q)
        Jp = J if self._identity else J[:, self._vinv]
        vdot = np.array(pin.forwardDynamics(m, d, qp, vp, self._v(t), Jp,
                                            np.asarray(drift, dtype=float), 0.0))
        lam = np.array(d.lambda_c).copy()
        out = {"forwardDynamics": (self._out_v(vdot), lam)}
        if rows is not None:
            models = pin.StdVec_RigidConstraintModel()
            for kind, fa, fb in rows:
                Fa, Fb = m.frames[self._fid(fa)], m.frames[self._fid(fb)]
                ctype = (pin.ContactType.CONTACT_3D if kind == "point"
                         else pin.ContactType.CONTACT_6D)
                models.append(pin.RigidConstraintModel(ctype, m, Fa.parentJoint, Fa.placement,
                                                       Fb.parentJoint, Fb.placement,
                                                       pin.LOCAL_WORLD_ALIGNED))
            datas = pin.StdVec_RigidConstraintData()
            for cm in models:
                datas.append(cm.createData())
            pin.initConstraintDynamics(m, d, models, datas)
            prox = pin.ProximalSettings(1e-14, 0.0, 1)
            vd = np.array(pin.constraintDynamics(m, d, qp, vp, self._v(t), models, datas,
                                                 prox))
            out["constraintDynamics"] = (self._out_v(vd), None)
        return out

    def _mimic_model(self) -> tuple[Any, Any, NDArray[np.intp], NDArray[np.intp],
                                     NDArray[np.float64]]:
        """Pinocchio's own mimic model of the spec's couplings, built once:
        (model, data, iq (nq_r,), iv (nv_r,), S (nv, nv_r)): ``transformJointIntoMimic``
        on each follower; iq, iv the Pinocchio q, v indices its reduced coordinates take;
        S maps reduced to full Pinocchio velocities (the follower's row m·e_leader).
        Raises whatever Pinocchio raises for a coupling it cannot make a mimic joint."""
        if getattr(self, "_mimic", None) is None:
            full = self._m
            mm = full
            for c in self.model.spec.couplings:
                mm = pin.transformJointIntoMimic(mm, mm.getJointId(c.leader),
                                                 mm.getJointId(c.follower),
                                                 float(c.multiplier), float(c.offset))
            iq, iv = np.zeros(mm.nq, np.intp), np.zeros(mm.nv, np.intp)
            S = np.zeros((full.nv, mm.nv))
            for i in range(1, mm.njoints):
                jm, jf = mm.joints[i], full.joints[i]
                if jm.nv == 0:
                    continue
                iq[jm.idx_q:jm.idx_q + jm.nq] = np.arange(jf.idx_q, jf.idx_q + jf.nq)
                iv[jm.idx_v:jm.idx_v + jm.nv] = np.arange(jf.idx_v, jf.idx_v + jf.nv)
                S[jf.idx_v:jf.idx_v + jf.nv, jm.idx_v:jm.idx_v + jm.nv] = np.eye(jm.nv)
            for c in self.model.spec.couplings:
                jf, jl = full.joints[full.getJointId(c.follower)], \
                    mm.joints[mm.getJointId(c.leader)]
                S[jf.idx_v, jl.idx_v] = c.multiplier
            self._mimic = (mm, mm.createData(), iq, iv, S)
        return self._mimic

    def _native_mimic(self, problem: Any) -> dict:
        """The stage-3 row of Pinocchio's mimic joints: v̇ (N, nv) = S M_r⁻¹ (Sᵀ τ' − h_r)
        with M_r = crba, h_r = nle of the mimic model (= SᵀMS, Sᵀh: reduced coordinates)
        and τ' = τ − D v − K (q − q_ref)."""
        mm, d, iq, iv, S = self._mimic_model()
        vd = np.empty((problem.Q.shape[0], self.nv))
        for k, (q, v, tau) in enumerate(zip(problem.Q, problem.V, problem.TAU)):
            q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
            t = np.asarray(tau, dtype=float) - (self._D * v if self._damped else 0.0)
            if self._sprung:
                t = t - self.layout.spring_force(q)
            qr, vr = self._q(q)[iq], self._v(v)[iv]
            Mr = np.triu(pin.crba(mm, d, qr))
            Mr = Mr + np.triu(Mr, 1).T
            hr = np.array(pin.nle(mm, d, qr, vr))
            vd[k] = self._out_v(S @ np.linalg.solve(Mr, S.T @ self._v(t) - hr))
        return {"solver": "mimic", "exact": True, "vdot": vd, "lam": None,
                "law": "pin.transformJointIntoMimic(leader, follower, multiplier, offset) "
                       "per coupling; crba and nle of the mimic model (Pinocchio's reduced "
                       "coordinates: SᵀMS, Sᵀh), v̇ = S (SᵀMS)⁻¹ (Sᵀ(τ − D v − K (q − q_ref)) "
                       "− Sᵀh); no multipliers"}

    def native_constrained(self, problem: Any) -> list[dict]:
        """Stage-3 native rows (harness/stages/constrained/constraints.py NativeProblem):
        forwardDynamics(J, γ) on the kept rows of Pinocchio's own J, J̇v (v̇, λ; a joint
        coupling's rows are the spec's constant e_f − m·e_l), constraintDynamics when
        every row is kept and every constraint is a point or weld (no coupling) (v̇), and
        Pinocchio's mimic joints when the only rows are couplings, all kept (v̇)."""
        N, m = problem.keep.shape
        rows = None
        if problem.whole_constraints_kept() and not problem.spec.couplings and all(
                c.kind in ("point", "weld") for c in problem.spec.constraints):
            rows = [(c.kind, c.frame_a, c.frame_b) for c in problem.spec.constraints]
        fd_v, fd_l, cd_v = np.empty((N, self.nv)), np.zeros((N, m)), np.empty((N, self.nv))
        for k in range(N):
            keep = problem.keep[k]
            out = self._native_constrained_state(problem.Q[k], problem.V[k], problem.TAU[k],
                                                 problem.J[k][keep], problem.drift[k][keep],
                                                 rows)
            fd_v[k], fd_l[k, keep] = out["forwardDynamics"]
            if rows is not None:
                cd_v[k] = out["constraintDynamics"][0]
        res = [{"solver": "forwardDynamics", "exact": True, "vdot": fd_v, "lam": fd_l,
                "law": "pin.forwardDynamics(q, v, τ − D v − K (q − q_ref), J, γ = J̇v, "
                       "damping 0): "
                       "Pinocchio's KKT solve (Cholesky of J M⁻¹ Jᵀ) on the harness's kept "
                       "rows of Pinocchio's own J and J̇v; λ = data.lambda_c"}]
        if rows is not None:
            res.append({"solver": "constraintDynamics", "exact": True, "vdot": cd_v,
                        "lam": None,
                        "law": "pin.constraintDynamics with RigidConstraintModel(CONTACT_3D | "
                               "CONTACT_6D, LOCAL_WORLD_ALIGNED) between the constraint "
                               "frames' joints and placements, Baumgarte gains 0, "
                               "ProximalSettings(accuracy 1e-14, mu 0, 1 iteration): the "
                               "exact rigid constraint (its λ is per contact frame, not "
                               "compared)"})
        if any(c.function for c in problem.spec.couplings):
            res[0]["law"] += ("; Pinocchio's mimic joints not run: a non-linear coupling "
                              "(transformJointIntoMimic is linear)")
        elif problem.spec.couplings and not problem.spec.constraints \
                and problem.whole_constraints_kept():
            try:
                res.append(self._native_mimic(problem))
            except (RuntimeError, ValueError) as err:  # a coupling Pinocchio cannot mimic
                res[0]["law"] += ("; Pinocchio's mimic joints not run: "
                                  f"transformJointIntoMimic refused ({' '.join(str(err).split())})")
        return res

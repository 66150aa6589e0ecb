"""MuJoCo adapter (mujoco 4.0.0).

Dimension legend: nq, nv canonical; MuJoCo's own qpos has a free joint [p, quat wxyz]
and a 1-number hinge for continuous joints, qvel a free joint [v_W (world), ω_B (body)];
a ball joint is qpos quat w x y z (reordered to the canonical x y z w) and qvel ω in the
child frame (the canonical v: no velocity map).

Loads the harness's own full-precision MJCF (fixtures/export.py: fullinertia, compiler
flags that stop MuJoCo from altering the model). Settings for parity:
constraints disabled (``mjDSBL_CONSTRAINT``: limits would act as soft constraints);
damping and armature come from the MJCF joints and are applied by MuJoCo itself
(``qfrc_passive`` = −D v; armature in ``qM``).

Free-root conversion (T orthogonal, v_o = T v, T = diag(R_WB, I)):
M = Tᵀ M_o T, h = Tᵀ h_o + M c, v̇ = Tᵀ v̇_o − c, τ_o = T τ, J = J_o T, c = [ω_B × v_B, 0].

Forward dynamics of a parity model with a free root (up to ``BODY_FRAME_MAX_NV`` dofs) runs
in a private MjData whose world axes are the root body's axes of the moment (root qpos
p = 0, identity quaternion): v_o = v, τ_o = τ, and v̇ = v̇_o − c + (R_WBᵀ g − g) [m/s²,
rad/s²], the last term because MuJoCo's gravity g then acts along the body axes instead of
R_WBᵀ g. Exact where gravity is the only thing anchored to the world (_init_body_frame).
"""
from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from math import atan2
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engines import mujoco_mjcf
from harness.core.conventions import (
    combine_inertias,
    matrix_to_quat_wxyz,
    quat_wxyz_to_xyzw,
    quat_xyzw_rows,
    quat_xyzw_to_matrix,
    root_convective_term,
    se3_left_jacobian,
    spatial_inertia_world,
)
from harness.core.coupling_function import quartic_coefficients
from harness.core.derivatives import implicit_forward, root_chain_rule
from harness.core.errors import ModelRejected, NotProvided
from harness.core.mass_loans import with_loans
from harness.core.spec import FREE_JOINT_NAME, ContactScene, Coupling, Sphere
from harness.model.binding import Binding
from harness.model.joint_chain import folded_frames, folded_massless_joints
from harness.model.prepared import PreparedModel
from harness.model.protocol import AdapterBase, as_is_source, q_copy_maps

BINDING = Binding("mujoco")
with BINDING:
    import mujoco

    # MuJoCo's default warning handler prints and appends to MUJOCO_LOG.TXT in the
    # working directory; its warnings stay counted in mjData.warning
    mujoco.set_mju_user_warning(lambda msg: None)


# MuJoCo 4.0.0 has mjd_inverseFD (finite-differenced ∂qfrc_inverse/∂(qpos, qvel, qacc))
# and mjd_transitionFD (discrete-time step map) but no continuous-time forward-dynamics
# derivative, so ∂v̇/∂· comes from mjd_inverseFD by the implicit-function theorem:
# ∂v̇/∂x = −M⁻¹ ∂τ/∂x at v̇ = forward_dynamics(q, v, τ), ∂v̇/∂τ = M⁻¹.
MJD_EPS = 1e-6  # step of mjd_inverseFD; its error bound is in harness/core/tolerances.py
# forward_dynamics in the root-aligned frame up to this many dofs (tree_floating: 19); larger
# models keep the world frame (_init_body_frame says why)
BODY_FRAME_MAX_NV = 24

def _mark_body_frames(spec) -> None:
    """Add a massless site named after every body of an MjSpec (unless a site has that
    name): fusestatic moves a fused body's sites onto the body it is fused into, so its
    frame stays readable (frame_pose / frame_jacobian look bodies up first, then sites)."""
    names, stack = set(), [spec.worldbody]
    bodies = []
    while stack:
        b = stack.pop()
        bodies.append(b)
        names.update(s.name for s in b.sites)
        stack.extend(b.bodies)
    for b in bodies[1:]:
        if b.name and b.name not in names:
            b.add_site(name=b.name)


_AS_IS_PROVIDES = {
    "forward_dynamics": "mj_forward with MuJoCo's defaults: passive damping, joint limits, "
                        "frictionloss and mimic equalities as soft constraints (contacts "
                        "disabled)",
    "inverse_dynamics": "mj_inverse with MuJoCo's defaults (constraint forces included)",
}


class MujocoAdapter(AdapterBase):
    name = "mujoco"
    # native contact variants compared side by side: the defaults and a stiff setting
    NATIVE_CONTACT_VARIANTS = (("defaults", {}),
                               ("stiff (solref 4 ms)", {"solref": (0.004, 1.0),
                                                         "solimp": (0.99, 0.99, 0.001, 0.5,
                                                                    2.0)}))

    # a user's MJCF compiled by MuJoCo, for harness/model/mjcf_import.py (engines/mujoco_mjcf.py)
    compile_mjcf = staticmethod(mujoco_mjcf.compile_mjcf)

    def __init__(self, model: PreparedModel) -> None:
        BINDING.require()
        super().__init__(model)
        self.version = mujoco.__version__
        m = self._compile(model)  # parity: the harness's MJCF; as-is: the user's file
        self._m, self._d = m, mujoco.MjData(m)
        self._init_maps(m)
        self._init_fd_paths(m)
        self._M = np.zeros((m.nv, m.nv))
        self._jacp = np.zeros((3, m.nv))
        self._jacr = np.zeros((3, m.nv))
        self.provides = self._provides()
        self.derivatives_method = "finite_difference"  # stages/derivatives.py
        self._eq_cache = None  # (MjModel, MjData) with equalities enabled, built on demand
        # massless bodies folded into the body below them (several joints in one body) and
        # frames on them: MuJoCo does not hold them, _folded_frame places them
        self._folded = {n: f for n, f in folded_frames(model).items()
                        if mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n) < 0
                        and mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, n) < 0}
        self._empty_groups = folded_massless_joints(model.spec) if self._folded else set()
        # bodies whose mass the harness's MJCF lends or borrows (harness/core/mass_loans.py):
        # the read-outs give the spec's own back, at the pose MuJoCo computes
        self._lent = set(with_loans(model.spec)) if self._as_is is None else set()

    def _init_maps(self, m) -> None:
        """The canonical ↔ MuJoCo coordinate maps of the compiled MjModel ``m``;
        ModelRejected for a joint or dof count MuJoCo did not keep."""
        lay = self.layout
        # per canonical slot: (kind, mujoco qpos adr, mujoco dof adr)
        self._slots = []
        for s in lay.slots:
            jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, s.name)
            if jid < 0:
                raise ModelRejected("mujoco", f"joint {s.name} missing after compiling")
            self._slots.append((s, int(m.jnt_qposadr[jid]), int(m.jnt_dofadr[jid])))
        if m.nv != lay.nv:
            raise ModelRejected("mujoco", f"compiled nv {m.nv}, expected {lay.nv}")
        self._simple = all(s.type in ("revolute", "prismatic") for s, _, _ in self._slots)
        self._qmap = np.array([qa for s, qa, _ in self._slots], dtype=np.intp)
        self._vmap = np.empty(lay.nv, dtype=np.intp)  # v_mj[vmap] = v_can (before T)
        for s, _, da in self._slots:
            self._vmap[s.iv:s.iv + s.nv] = np.arange(da, da + s.nv)
        self._vinv = np.argsort(self._vmap)
        self._sprung = lay.has_springs
        self._identity = self._simple and bool(np.all(self._qmap == np.arange(lay.nq)) and
                                               np.all(self._vmap == np.arange(lay.nv)))
        self._free = lay.free_slot()
        # vectorised coordinate maps (this is the per-call path): every qpos number that is
        # a plain copy of a canonical one (hinges, slides, the free joint's p and quaternion
        # and the ball joints' quaternions, reordered xyzw → wxyz): one fancy assignment.
        # A ball joint's qvel is ω in the child frame, the canonical v: no velocity map.
        self._ball_q = [(s.iq, qa) for s, qa, _ in self._slots if s.type == "ball"]
        balls = [(iq + k, qa + a) for iq, qa in self._ball_q
                 for k, a in ((3, 0), (0, 1), (1, 2), (2, 3))]
        maps = q_copy_maps(self._slots, self._free, (0, 1, 2, 6, 3, 4, 5), balls)
        self._sq_can, self._sq_mj = maps.simple_can, maps.simple_eng
        self._cq_can, self._cq_mj, self._cq_sin = maps.cont_can, maps.cont_eng, maps.cont_sin
        self._cp_can, self._cp_mj = maps.copy_can, maps.copy_eng
        self._free_qa = maps.free_qa
        self._free_da = int(self._vmap[0]) if self._free is not None else None
        self._free_dof = (slice(self._free_da, self._free_da + 3) if self._free is not None
                          else None)  # MuJoCo dofs of the root's world linear velocity

    def _init_fd_paths(self, m) -> None:
        """The per-call state of forward_dynamics: the MjData views and, for a free root,
        the coordinate change as matrices (world frame and root-aligned frame)."""
        lay = self.layout
        # forward_dynamics per-call path: the MjData views once (each attribute access
        # builds a new view; an MjData's arrays never move) and, for a free root, the input
        # coordinate change as matrices, so each vector costs one ndarray.dot:
        #   qpos = P q (then the continuous joints' angles), v_mj = T v, τ_mj = T τ,
        #   T = the dof permutation with R_WB in the root's linear block;
        # the output v̇ = Tᵀ qacc − c as the permutation, then R_WBᵀ and c on the root's
        # three linear numbers in scalar arithmetic
        self._qpos, self._qvel = self._d.qpos, self._d.qvel
        self._qfrc, self._qacc = self._d.qfrc_applied, self._d.qacc
        if self._free is not None:
            self._P = np.zeros((m.nq, lay.nq))
            self._P[self._cp_mj, self._cp_can] = 1.0
            self._Tm = np.zeros((m.nv, lay.nv))
            self._Tm[self._vmap, np.arange(lay.nv)] = 1.0
            fd = self._free_da
            # R_WB into T[fd:fd+3, 0:3] by one struct pack: each of the three rows is 3
            # doubles of R, then the row's other nv − 3 entries (zeros: the root's linear
            # dofs take no other canonical number) as zero pad bytes
            gap = 8 * (lay.nv - 3)
            self._Tm_pack = struct.Struct(f"=3d{gap}x3d{gap}x3d").pack_into
            self._Tm_at = 8 * fd * lay.nv  # byte offset of T[fd, 0]
            self._Tm_key = None  # the root quaternion (x, y, z, w) whose R_WB is in _Tm
            self._Tm_rows = None  # that R_WB's 9 entries, row-major (Python floats)
        # up to 4 continuous joints: (qpos index, canonical cos index, sin index) each
        self._cq_few = (tuple(zip(self._cq_mj.tolist(), self._cq_can.tolist(),
                                  self._cq_sin.tolist()))
                        if 0 < self._cq_can.size <= 4 else ())
        # what the free-root path reads, one attribute access (None: no free root); q as a
        # whole list when short (a slice's view costs as much as ~10 more numbers
        # converted) or when the continuous joints need it anyway, v when it is the root's
        self._fd_free = None if self._free is None else (
            self._P, self._Tm, self._Tm_pack, self._Tm_at, bool(self._cq_few) or lay.nq <= 12,
            lay.nv == 6, self._cq_few, self._cq_can.size > 4, self._qpos, self._qvel,
            self._qfrc, self._qacc, self._qacc[fd:fd + 3], self._vmap, m, self._d)
        self._fd_body = self._init_body_frame(m)  # None: the world-frame path above

    def _provides(self) -> dict:
        """{quantity: the MuJoCo API that computes it} of this model (parity or as-is)."""
        provides = {
            "group_inertias": "body_mass, xipos, ximat, body_inertia of each joint's body "
                              "and its jointless descendants (compiled model)",
            "frame_pose": "mj_kinematics → xpos/xmat (bodies), site_xpos/site_xmat (frames)",
            "frame_jacobian": "mj_jacBody / mj_jacSite",
            "mass_matrix": "mj_fullM after mj_forward",
            "bias_forces": "qfrc_bias after mj_forward (− qfrc_spring: MuJoCo's joint "
                           "springs, stiffness and springref = qpos_spring, are passive "
                           "forces)",
            "forward_dynamics": "mj_forward, qfrc_applied = τ (passive damping by MuJoCo)",
            "inverse_dynamics": "mj_inverse → qfrc_inverse",
            "integrate": "mj_integratePos",
            "native_contact": "mj_step on an MjModel built from the declared contact "
                              "geometry (sphere/box geoms, plane geom, solref/solimp)",
        }
        if self._as_is is None:  # dynamics derivatives: parity model only
            provides.update({
                "forward_dynamics_derivatives": "implicit-function theorem on "
                                                "mjd_inverseFD (centred: steps ±1e-6) "
                                                "and mj_fullM",
                "inverse_dynamics_derivatives": "mjd_inverseFD (centred: steps ±1e-6)",
            })
        if self._as_is is not None:
            provides.update(_AS_IS_PROVIDES)
        provides.update({
            "frame_jacobian_drift": "mj_jacSite/mj_jacBody and mj_jacDot (after "
                                    "mj_kinematics, mj_comPos, mj_comVel)",
            "native_constrained": "mj_forward with <equality> connect/weld enabled (soft, "
                                  "MuJoCo's default solref/solimp)",
        })
        return provides

    def _init_body_frame(self, m):
        """(tuple or None) The per-call state of forward_dynamics in MuJoCo's world frame
        aligned with the free root [SI units]; None where that frame does not apply.

        A private MjData holds the root at qpos (0, 0, 0, 1, 0, 0, 0) for good, so MuJoCo's
        world axes are the body axes of the moment: qvel and qfrc_applied take the canonical
        v and τ as they are (v_B, ω_B; f_B, n_B), and qacc's root linear block is R_WBᵀ a_W.
        Gravity then acts along MuJoCo's g in that frame instead of R_WBᵀ g. Where nothing else
        is anchored to the world, changing a uniform field by g′ − g accelerates every body by
        g′ − g and nothing else (with e that acceleration on the root's linear dofs, M e is the
        change of the gravity forces, Σ m_b J_bᵀ (g′ − g), while no armature sits on those
        dofs), so v̇ = v̇_o − c + (R_WBᵀ g − g), the last term kept per root quaternion. The
        root position does not enter, for the same reason.

        Applies to the parity model (constraints disabled) with the free root first, nothing
        on its dofs (armature, damping, stiffness) and no gravity compensation, fluid forces,
        actuators, tendons, flexes or plugins; up to BODY_FRAME_MAX_NV dofs. MuJoCo's rounding
        in the other axes moves v̇ as much as a 1-ulp change of the root quaternion moves the
        world-frame result (measured over 40 states, relative to max|v̇|: tree_floating ≤ 4.6e-15
        against 7.0e-15; golfer3d ≤ 4.4e-13, median 6.6e-14, against 4.5e-13 and 6.6e-14).
        Larger models keep the world frame: golfer3d's 4.4e-13 exceeds the 2e-14 that
        tests/unit/test_floating_forward_fast_paths.py holds the fast path to against the
        generic maps, and they gain little (golfer3d: 1.3x raw in the world frame)."""
        if (self._free is None or self._as_is is not None or self.nv > BODY_FRAME_MAX_NV
                or self._free_qa != 0 or self._free_da != 0):
            return None
        off = int(m.opt.disableflags)
        jid = int(m.dof_jntid[0])
        if (not off & int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
                or np.any(m.dof_armature[0:6]) or np.any(m.dof_damping[0:6])
                or m.jnt_stiffness[jid] != 0 or np.any(m.body_gravcomp)
                or m.opt.density != 0 or m.opt.viscosity != 0
                or m.nu or m.ntendon or m.nflex or m.nplugin):
            return None
        lay, d = self.layout, mujoco.MjData(m)
        d.qpos[0:7] = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        g = (0.0, 0.0, 0.0) if off & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY) else \
            tuple(float(x) for x in m.opt.gravity)
        # the other joints' qpos: one product into qpos[7:] (then the continuous angles)
        P = None
        if m.nq > 7:
            P = np.zeros((m.nq - 7, lay.nq))
            keep = self._cp_mj >= 7
            P[self._cp_mj[keep] - 7, self._cp_can[keep]] = 1.0
        vid = bool(np.array_equal(self._vmap, np.arange(lay.nv)))
        T0 = np.zeros((m.nv, lay.nv))  # the dof permutation alone (when not the identity)
        T0[self._vmap, np.arange(lay.nv)] = 1.0
        self._gB_key = None  # the root quaternion (x, y, z, w) of _gB
        self._gB = None  # R_WBᵀ g − g for it [m/s²] (Python floats)
        # memoryviews: a number in or out of MjData without numpy's scalar machinery
        return (P, d.qpos[7:], bool(self._cq_few) or lay.nq <= 12, self._cq_few,
                self._cq_can.size > 4, memoryview(d.qpos), vid, T0, d.qvel, d.qfrc_applied,
                d.qacc, memoryview(d.qvel), memoryview(d.qacc), self._vmap, g, m, d)

    # ----- conversions ---------------------------------------------------------------
    def _T(self, q):
        """R_WB of the free root (or None)."""
        if self._free is None:
            return None
        return quat_xyzw_to_matrix(q[3:7])

    def _set_qpos(self, q):
        qpos = self._d.qpos
        if self._identity:
            qpos[:] = q
            return
        if self._cp_can.size:
            qpos[self._cp_mj] = q[self._cp_can]
        if self._cq_can.size:
            qpos[self._cq_mj] = np.arctan2(q[self._cq_sin], q[self._cq_can])

    def _get_q(self, qpos):
        q = np.empty(self.nq)
        if self._sq_can.size:
            q[self._sq_can] = qpos[self._sq_mj]
        if self._cq_can.size:
            th = qpos[self._cq_mj]
            q[self._cq_can], q[self._cq_can + 1] = np.cos(th), np.sin(th)
        if self._free_qa is not None:
            a = self._free_qa
            q[0:3] = qpos[a:a + 3]
            q[3:7] = quat_wxyz_to_xyzw(qpos[a + 3:a + 7])
        for iq, qa in self._ball_q:
            q[iq:iq + 4] = quat_wxyz_to_xyzw(qpos[qa:qa + 4])
        return q

    def _to_mj_v(self, x, R):
        """Canonical generalized vector (velocity or force) → MuJoCo dof order, T applied."""
        out = np.empty(self.nv)
        out[self._vmap] = x
        if R is not None:
            a = self._vmap[0]
            out[a:a + 3] = R @ x[0:3]
        return out

    def _put_mj_v(self, out, x, R):
        """``_to_mj_v`` written into ``out`` (a buffer of the private MjData)."""
        out[self._vmap] = x
        if R is not None:  # np.dot into the slice: the same BLAS product as R @ x
            a = self._free_da
            np.dot(R, x[0:3], out=out[a:a + 3])

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

    # ----- loading, read-back, as-is mode, ablations (diagnosis: harness/stages/diagnosis/) --
    def _compile(self, model):
        """The compiled MjModel.

        Parity (default): the harness's own full-precision MJCF, constraints disabled.
        As-is (``model.as_is_file('mujoco')`` names the user's file): MuJoCo's own defaults
        — for a URDF fusestatic, inertiafromgeom auto, limits, frictionloss and mimic
        equalities as soft constraints; for an MJCF whatever its compiler says. Only
        contacts are disabled (stages 0-2 are contact-free), a free root is named
        ``root_joint`` (added to a URDF's root body when the model is declared floating),
        and every body carries a massless site of its own name (``_mark_body_frames``), so
        the frame of a body MuJoCo fuses into its parent (or the world) is still there."""
        self._as_is = src = as_is_source(model, self.name)
        if src is None:
            try:
                m = mujoco.MjModel.from_xml_string(model.mjcf)
            except ValueError as e:
                raise ModelRejected("mujoco", f"MJCF rejected: {e}") from None
            m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
            return m
        try:
            spec = (mujoco.MjSpec.from_string(src.text) if src.kind == "urdf"
                    else mujoco.MjSpec.from_file(src.path))
            _mark_body_frames(spec)
            root = spec.worldbody.first_body()
            if model.spec.floating and root is not None:
                free = [j for j in root.joints if j.type == mujoco.mjtJoint.mjJNT_FREE]
                if free:
                    free[0].name = FREE_JOINT_NAME
                else:
                    root.add_freejoint(name=FREE_JOINT_NAME)
            m = spec.compile()
        except (ValueError, RuntimeError) as e:
            raise ModelRejected("mujoco", f"{src.kind.upper()} rejected: {e}") from None
        m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
        return m

    @classmethod
    def as_is_joints(cls, model: PreparedModel) -> list:
        """Names of the moving joints (free root excluded) MuJoCo compiles from the as-is
        file of ``model`` — the diagnosis builds each engine's layout from them."""
        m = cls.__new__(cls)._compile(model)
        return [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"#{j}"
                for j in range(m.njnt) if m.jnt_type[j] != mujoco.mjtJoint.mjJNT_FREE]

    def _flags(self):
        off = int(self._m.opt.disableflags)
        dis = lambda bit: bool(off & int(getattr(mujoco.mjtDisableBit, bit)))  # noqa: E731
        constraints = not dis("mjDSBL_CONSTRAINT")
        return {"limits": constraints and not dis("mjDSBL_LIMIT"),
                "equality": constraints and not dis("mjDSBL_EQUALITY"),
                "frictionloss": constraints and not dis("mjDSBL_FRICTIONLOSS"),
                "damper": not dis("mjDSBL_DAMPER"), "spring": not dis("mjDSBL_SPRING")}

    def readback(self) -> dict:
        """The compiled model as MuJoCo holds it, at the canonical neutral q, world axes
        (format: harness/stages/diagnosis/__init__.py): every body MuJoCo keeps (fused
        static bodies are gone), every canonical joint with the damping, frictionloss, armature
        and limits MuJoCo will apply, and the joint equalities (mimic) it enforces."""
        m, d = self._m, self._d
        obj, flags = mujoco.mjtObj, self._flags()
        self._set_qpos(self.layout.neutral())
        mujoco.mj_kinematics(m, d)
        name = lambda kind, i: mujoco.mj_id2name(m, kind, i) or f"#{i}"  # noqa: E731

        def pose(b: int) -> NDArray[np.float64]:
            """X_WB (4, 4) [m] of body ``b`` at the neutral kinematics."""
            X = np.eye(4)
            X[:3, :3], X[:3, 3] = d.xmat[b].reshape(3, 3), d.xpos[b]
            return X

        bodies = {}
        for b in range(1, m.nbody):
            mass, com_W, I_W = self._body_inertial(b)
            bodies[name(obj.mjOBJ_BODY, b)] = {
                "mass": mass, "com_W": com_W, "I_W": I_W, "X_WB": pose(b),
                "parent": name(obj.mjOBJ_BODY, m.body_parentid[b]) if m.body_parentid[b]
                else ""}
        spec = self.model.spec
        for c in (b.name for b in spec.bodies if b.name in self._folded):  # folded chains
            F = self._folded_frame(self.layout.neutral(), None, c)
            X = np.eye(4)
            X[:3, :3], X[:3, 3] = F[3:].reshape(3, 3), F[:3]
            bodies[c] = {"mass": 0.0, "com_W": F[:3], "I_W": np.zeros((3, 3)), "X_WB": X,
                         "parent": spec.parent_joint(c).parent}
        child = {j.name: j.child for j in spec.joints}
        joints = {}
        for s, qa, da in self._slots:
            jid = mujoco.mj_name2id(m, obj.mjOBJ_JOINT, s.name)
            b, jt = int(m.jnt_bodyid[jid]), int(m.jnt_type[jid])
            X = pose(b)
            if child.get(s.name) in self._folded:  # the joint frame is the folded body's
                X[:3, :3] = bodies[child[s.name]]["X_WB"][:3, :3]
            if jt == mujoco.mjtJoint.mjJNT_FREE:
                kind, axis = "free", np.zeros(3)
                native = ("p_WB, quat w x y z", "v_WB (world axes), ω_B (body axes)")
            elif jt == mujoco.mjtJoint.mjJNT_BALL:
                kind, axis, X[:3, 3] = "ball", np.zeros(3), d.xanchor[jid]
                native = ("quat w x y z", "ω (child body axes)")
            else:
                kind = "revolute" if jt == mujoco.mjtJoint.mjJNT_HINGE else "prismatic"
                axis, X[:3, 3] = d.xaxis[jid].copy(), d.xanchor[jid]
                native = ("θ", "θ̇") if kind == "revolute" else ("x", "ẋ")
            limited = bool(m.jnt_limited[jid]) and kind != "free"
            lo, hi = (float(x) for x in m.jnt_range[jid]) if limited else (None, None)
            dmp = float(m.dof_damping[da]) if kind != "free" else 0.0
            fr = float(m.dof_frictionloss[da]) if kind != "free" else 0.0
            k = float(m.jnt_stiffness[jid]) if kind in ("revolute", "prismatic") else 0.0
            joints[s.name] = {
                "type": kind, "body": name(obj.mjOBJ_BODY, b), "axis_W": axis, "X_WJ": X,
                "lower": lo, "upper": hi, "limit_enforced": limited and flags["limits"],
                "damping": dmp, "damping_applied": dmp if flags["damper"] else 0.0,
                "friction": fr, "friction_applied": fr if flags["frictionloss"] else 0.0,
                "armature": float(m.dof_armature[da]) if kind != "free" else 0.0,
                "stiffness_applied": k if flags["spring"] else 0.0,
                "spring_ref": float(m.qpos_spring[qa]) if k else 0.0,
                "native_q": native[0], "native_v": native[1], "native_index": qa}
        couplings = {}
        for e in range(m.neq):
            if m.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT and m.eq_active0[e] \
                    and flags["equality"] and m.eq_obj2id[e] >= 0:
                couplings[name(obj.mjOBJ_JOINT, m.eq_obj1id[e])] = \
                    name(obj.mjOBJ_JOINT, m.eq_obj2id[e])
        notes = []
        if self._as_is is not None:
            notes.append("MuJoCo's defaults for this file (as-is); contacts disabled")
        return {"engine": self.name, "api": "compiled MjModel: body_mass/xipos/ximat/"
                "body_inertia, xaxis/xanchor, jnt_range+jnt_limited, dof_damping, "
                "dof_frictionloss, dof_armature, joint equalities (mjEQ_JOINT)",
                "bodies": bodies, "joints": joints, "couplings": couplings,
                "nq_native": int(m.nq), "nv_native": int(m.nv), "notes": notes}

    def ablated(self, changes: dict) -> MujocoAdapter:
        """A new adapter on the same model with one known cause removed in MuJoCo.

        changes: ``damping=0`` (dof_damping 0), ``armature=0``, ``friction=0``
        (dof_frictionloss 0), ``limits=False`` (mjDSBL_LIMIT), ``couplings=False``
        (mjDSBL_EQUALITY), ``placements={body: X_WB (4x4) at the canonical neutral}``
        (body_pos/body_quat), ``inertials={body: (m, com_W (3), I_W (3x3)) at neutral}``
        (body_mass, body_ipos, body_iquat, body_inertia; then mj_setConst)."""
        new = type(self)(self.model)
        m, d = new._m, new._d
        unknown = set(changes) - {"damping", "armature", "friction", "limits", "couplings",
                                  "placements", "inertials"}
        if unknown:
            raise ValueError(f"mujoco: unknown ablation {sorted(unknown)}")
        if "damping" in changes:
            m.dof_damping[:] = changes["damping"]
        if "armature" in changes:
            m.dof_armature[:] = changes["armature"]
        if "friction" in changes:
            m.dof_frictionloss[:] = changes["friction"]
        if changes.get("limits") is False:
            m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
        if changes.get("couplings") is False:
            m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_EQUALITY)
        ids = lambda names: {n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n)  # noqa
                             for n in names}
        if changes.get("placements"):
            want = changes["placements"]
            new._set_qpos(new.layout.neutral())
            mujoco.mj_kinematics(m, d)
            for n, b in sorted(ids(want).items(), key=lambda t: t[1]):
                if b <= 0:
                    raise KeyError(f"mujoco: no body {n}")
                p = int(m.body_parentid[b])
                pn = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, p)
                if pn in want:
                    X_WP = np.asarray(want[pn])
                else:
                    X_WP = np.eye(4)
                    X_WP[:3, :3], X_WP[:3, 3] = d.xmat[p].reshape(3, 3), d.xpos[p]
                X_PB = np.linalg.solve(X_WP, np.asarray(want[n]))
                m.body_pos[b] = X_PB[:3, 3]
                m.body_quat[b] = matrix_to_quat_wxyz(X_PB[:3, :3])
        if changes.get("inertials"):
            new._set_qpos(new.layout.neutral())
            mujoco.mj_kinematics(m, d)
            for n, b in ids(changes["inertials"]).items():
                if b <= 0:
                    raise KeyError(f"mujoco: no body {n}")
                mass, com_W, I_W = changes["inertials"][n]
                R, p = d.xmat[b].reshape(3, 3), d.xpos[b]
                I_B = R.T @ np.asarray(I_W) @ R
                ev, vecs = np.linalg.eigh(0.5 * (I_B + I_B.T))
                if np.linalg.det(vecs) < 0:
                    vecs[:, 0] *= -1
                m.body_mass[b] = mass
                m.body_ipos[b] = R.T @ (np.asarray(com_W) - p)
                m.body_iquat[b] = matrix_to_quat_wxyz(vecs)
                m.body_inertia[b] = np.clip(ev, 0.0, None)
        if changes.get("placements") or changes.get("inertials"):
            mujoco.mj_setConst(m, d)
        new._fd_body = new._init_body_frame(m)  # its conditions checked on the ablated model
        return new

    def naive_dynamics(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """(M (nv, nv) [kg, kg·m, kg·m²], v̇ (nv,) [m/s², rad/s²]) from MuJoCo when the canonical
        arrays are handed over unconverted (qpos = q, qvel = v, qfrc_applied = τ), as a user
        copying numbers between engines would;
        None if MuJoCo's nq/nv differ from the canonical ones."""
        m, d = self._m, self._d
        if (m.nq, m.nv) != (len(q), len(v)):
            return None
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = q, v, tau
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        out = (M, d.qacc.copy())
        d.qfrc_applied[:] = 0.0
        return out

    # ----- protocol --------------------------------------------------------------------
    def neutral(self) -> NDArray[np.float64]:
        """q (nq,) [m, rad] at rest: EngineAdapter.neutral (harness/model/protocol.py)."""
        return self._get_q(self._m.qpos0)

    def group_inertias(self) -> dict[str, NDArray[np.float64]]:
        """{joint: (10,) [kg, m, kg·m²]} at neutral: EngineAdapter.group_inertias
        (harness/model/protocol.py)."""
        m, d = self._m, self._d
        d.qpos[:] = m.qpos0
        mujoco.mj_kinematics(m, d)
        return self._grouped_inertias()

    def _grouped_inertias(self) -> dict[str, NDArray[np.float64]]:
        """{joint: (10,) [kg, m, kg·m²]}: each joint's body with the jointless bodies welded
        to it, summed from ``_body_inertial`` at the kinematics already computed."""
        m, out = self._m, {}
        for s, _, _ in self._slots:
            body = int(m.jnt_bodyid[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, s.name)])
            members, stack = [], [body]
            while stack:
                b = stack.pop()
                members.append(b)
                stack.extend(c for c in range(m.nbody) if m.body_parentid[c] == b and c != b
                             and m.body_jntnum[c] == 0)
            items = [self._body_inertial(b)
                     for b in (members if s.name not in self._empty_groups else ())]
            out[s.name] = spatial_inertia_world(*combine_inertias(items))
        return out

    def _body_inertial(self, b: int) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """(mass kg, com (3,) m, inertia about the com (3×3) kg·m², world axes) of body ``b``
        at the current kinematics; a body the harness's MJCF lent point masses to or took
        them from (``self._lent``) reads as the spec declares it, placed at MuJoCo's pose."""
        m, d = self._m, self._d
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
        if name in self._lent:
            body = self.model.spec.body(name)
            R = d.xmat[b].reshape(3, 3)
            return (body.mass, d.xpos[b] + R @ np.asarray(body.com, dtype=float),
                    R @ body.inertia_matrix @ R.T)
        Ri = d.ximat[b].reshape(3, 3)
        return float(m.body_mass[b]), d.xipos[b].copy(), Ri @ np.diag(m.body_inertia[b]) @ Ri.T

    def _frame(self, frame):
        m = self._m
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, frame)
        if b >= 0:
            return "body", b
        sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, frame)
        if sid >= 0:
            return "site", sid
        raise KeyError(f"mujoco: no body or site {frame}")

    def _folded_frame(self, q, v, frame, jac=False):
        """Pose (12,) [m, row-major R], or J (6, nv) (with the drift J̇v (6,) when ``v`` is
        given) of a frame MuJoCo does not hold: a massless body folded into the body T
        below it (several joints in one body; fixtures/export.py) or a frame on one. It is
        the point of T at the frame's fixed pose in T (harness/model/joint_chain.py
        ``folded_frames``) with the joints between the frame and T at neutral: mj_kinematics,
        mj_jac / mj_jacDot at that point, those joints' columns zeroed (the frame does not
        move with them) and their velocities 0."""
        T, X_TF, qi, qv, vi = self._folded[frame]
        m, d = self._m, self._d
        b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, T)
        q = np.array(q, dtype=float)
        q[qi] = qv
        self._set_qpos(q)
        if v is not None:
            v = np.array(v, dtype=float)
            v[vi] = 0.0
            d.qvel[:] = self._to_mj_v(v, self._T(q))
        mujoco.mj_kinematics(m, d)
        R_WT = d.xmat[b].reshape(3, 3)
        p, R = d.xpos[b] + R_WT @ X_TF[:3, 3], R_WT @ X_TF[:3, :3]
        if not jac:
            return np.concatenate([p, R.reshape(-1)])
        mujoco.mj_comPos(m, d)
        jp, jr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        mujoco.mj_jac(m, d, jp, jr, p.reshape(3, 1), b)
        J = self._from_mj_cols(np.vstack([jp, jr]), self._T(q))
        J[:, vi] = 0.0
        if v is None:
            return J
        mujoco.mj_comVel(m, d)
        mujoco.mj_jacDot(m, d, jp, jr, p.reshape(3, 1), b)
        return J, np.vstack([jp, jr]) @ d.qvel

    def frame_pose(self, q: NDArray[np.float64], frame: str) -> NDArray[np.float64]:
        """(12,) [m; R_WF row-major] pose of ``frame`` at q (nq,): EngineAdapter.frame_pose
        (harness/model/protocol.py)."""
        if frame in self._folded:
            return self._folded_frame(q, None, frame)
        kind, i = self._frame(frame)
        self._set_qpos(q)
        mujoco.mj_kinematics(self._m, self._d)
        d = self._d
        if kind == "body":
            return np.concatenate([d.xpos[i], d.xmat[i]])
        return np.concatenate([d.site_xpos[i], d.site_xmat[i]])

    def frame_poses(self, q: NDArray[np.float64], frames: Sequence[str]) -> NDArray[np.float64]:
        """(k, 12): one mj_kinematics for all k frames."""
        if self._folded and not self._folded.keys().isdisjoint(frames):
            return np.stack([self.frame_pose(q, f) for f in frames])
        ids = [self._frame(f) for f in frames]
        self._set_qpos(q)
        mujoco.mj_kinematics(self._m, self._d)
        d, out = self._d, np.empty((len(frames), 12))
        for n, (kind, i) in enumerate(ids):
            if kind == "body":
                out[n, :3], out[n, 3:] = d.xpos[i], d.xmat[i]
            else:
                out[n, :3], out[n, 3:] = d.site_xpos[i], d.site_xmat[i]
        return out

    def frame_jacobians(self, q: NDArray[np.float64], frames: Sequence[str]) -> NDArray[np.float64]:
        """(k, 6, nv): one mj_kinematics + mj_comPos, then mj_jacBody/mj_jacSite."""
        if self._folded and not self._folded.keys().isdisjoint(frames):
            return np.stack([self.frame_jacobian(q, f) for f in frames])
        ids = [self._frame(f) for f in frames]
        m, d = self._m, self._d
        self._set_qpos(q)
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        R, out = self._T(q), np.empty((len(frames), 6, self.nv))
        for n, (kind, i) in enumerate(ids):
            (mujoco.mj_jacBody if kind == "body" else mujoco.mj_jacSite)(
                m, d, self._jacp, self._jacr, i)
            out[n] = self._from_mj_cols(np.vstack([self._jacp, self._jacr]), R)
        return out

    def frame_jacobian(self, q: NDArray[np.float64], frame: str) -> NDArray[np.float64]:
        """J_WF (6, nv) of ``frame`` at q (nq,): EngineAdapter.frame_jacobian
        (harness/model/protocol.py)."""
        if frame in self._folded:
            return self._folded_frame(q, None, frame, jac=True)
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
        if self._identity:
            d.qvel[:] = v
        else:
            self._put_mj_v(d.qvel, v, R)
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

    def mass_matrix(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """M (nv, nv) [kg, kg·m, kg·m²] at q (nq,): EngineAdapter.mass_matrix
        (harness/model/protocol.py)."""
        return self._mass_canonical(self._forward(q, np.zeros(self.nv)))

    def bias_forces(self, q: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
        """h (nv,) [N, N·m] at q (nq,), v (nv,): EngineAdapter.bias_forces
        (harness/model/protocol.py)."""
        R = self._forward(q, v)
        # joint springs are MuJoCo passive forces (qfrc_spring = −k (qpos − qpos_spring)),
        # not part of qfrc_bias: the canonical h carries them (+k (q − q_ref))
        h = self._from_mj_v(self._d.qfrc_bias - self._d.qfrc_spring if self._sprung
                            else self._d.qfrc_bias, R)
        if R is not None:
            h += self._mass_canonical(R)[:, 0:6] @ root_convective_term(v[0:6])
        return h

    def forward_dynamics(self, q: NDArray[np.float64], v: NDArray[np.float64],
                         tau: NDArray[np.float64]) -> NDArray[np.float64]:
        """v̇ (nv,) [m/s², rad/s²] at q (nq,), v (nv,), τ (nv,): EngineAdapter.forward_dynamics
        (harness/model/protocol.py)."""
        fr = self._fd_free
        if fr is None:  # fixed base
            if self._identity:
                self._qpos[:] = q
                self._qvel[:] = v
                self._qfrc[:] = tau
                mujoco.mj_forward(self._m, self._d)
                return self._qacc.copy()
            qpos = self._qpos  # non-identity maps (continuous joints, reordering)
            if self._cp_can.size:
                qpos[self._cp_mj] = q[self._cp_can]
            if self._cq_can.size:
                qpos[self._cq_mj] = np.arctan2(q[self._cq_sin], q[self._cq_can])
            vmap = self._vmap
            self._qvel[vmap] = v
            self._qfrc[vmap] = tau
            mujoco.mj_forward(self._m, self._d)
            return self._qacc[vmap]
        fb = self._fd_body
        if fb is not None:  # free root, MuJoCo's world aligned with it (_init_body_frame)
            (P, qrest, q_whole, cq_few, cq_many, mq, vid, T0, qvel, qfrc, qacc, mv, ma, vmap,
             g, m, d) = fb
            if q_whole:
                ql = q.tolist()
                key = ql[3:7]
            else:
                key = q[3:7].tolist()
            if key == self._gB_key:
                g0, g1, g2 = self._gB
            else:  # R_WBᵀ g − g = s (u × (u × g) − w u × g), q = (u, w), s = 2/|q|²
                x, y, z, w = key
                s = 2.0 / (x * x + y * y + z * z + w * w)
                gx, gy, gz = g
                t0, t1, t2 = y * gz - z * gy, z * gx - x * gz, x * gy - y * gx  # u × g
                g0 = s * ((y * t2 - z * t1) - w * t0)
                g1 = s * ((z * t0 - x * t2) - w * t1)
                g2 = s * ((x * t1 - y * t0) - w * t2)
                self._gB_key, self._gB = key, (g0, g1, g2)
            if P is not None:
                P.dot(q, qrest)
                if cq_few:
                    for j, c, sn in cq_few:
                        mq[j] = atan2(ql[sn], ql[c])
                elif cq_many:
                    d.qpos[self._cq_mj] = np.arctan2(q[self._cq_sin], q[self._cq_can])
            if vid:
                qvel[:] = v
                qfrc[:] = tau
            else:
                T0.dot(v, qvel)
                T0.dot(tau, qfrc)
            mujoco.mj_forward(m, d)
            v0, v1, v2, w0, w1, w2 = mv[0:6].tolist()  # the root's v_B, ω_B
            x, y, z = ma[0], ma[1], ma[2]  # R_WBᵀ a_W, with MuJoCo's g along these axes
            ma[0] = x - (w1 * v2 - w2 * v1) + g0  # v̇ = v̇_o − ω_B × v_B + R_WBᵀ g − g
            ma[1] = y - (w2 * v0 - w0 * v2) + g1
            ma[2] = z - (w0 * v1 - w1 * v0) + g2
            return qacc.copy() if vid else qacc[vmap]
        # free root in the world frame, where _init_body_frame does not apply (an as-is
        # model, more than BODY_FRAME_MAX_NV dofs): R_WB is written into the cached T only
        # when the root quaternion changes (finite differences in v and τ keep it); one
        # ndarray.dot per input vector (np.dot without its dispatch); R_WBᵀ and the
        # convective term in scalar arithmetic on the output.
        (P, T, pack_R, at_R, q_whole, v_root, cq_few, cq_many, qpos, qvel, qfrc, qacc,
         acc_root, vmap, m, d) = fr
        if q_whole:
            ql = q.tolist()
            key = ql[3:7]
        else:
            key = q[3:7].tolist()
        R = self._Tm_rows
        if key != self._Tm_key:  # R_WB, as conventions.quat_xyzw_to_matrix computes it
            R = quat_xyzw_rows(*key)
            pack_R(T, at_R, *R)
            self._Tm_key, self._Tm_rows = key, R
        P.dot(q, qpos)
        if cq_few:
            for j, c, sn in cq_few:
                qpos[j] = atan2(ql[sn], ql[c])
        elif cq_many:
            qpos[self._cq_mj] = np.arctan2(q[self._cq_sin], q[self._cq_can])
        T.dot(v, qvel)
        T.dot(tau, qfrc)
        mujoco.mj_forward(m, d)
        a = qacc[vmap]  # v̇ = Tᵀ qacc − c: the permutation, then the root's linear part
        x, y, z = acc_root.tolist()  # a_W, the root's world linear acceleration
        v0, v1, v2, w0, w1, w2 = v.tolist() if v_root else v[0:6].tolist()
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
        a[0] = r00 * x + r10 * y + r20 * z - (w1 * v2 - w2 * v1)  # R_WBᵀ a_W − ω_B × v_B
        a[1] = r01 * x + r11 * y + r21 * z - (w2 * v0 - w0 * v2)
        a[2] = r02 * x + r12 * y + r22 * z - (w0 * v1 - w1 * v0)
        return a

    def inverse_dynamics(self, q: NDArray[np.float64], v: NDArray[np.float64],
                         vdot: NDArray[np.float64]) -> NDArray[np.float64]:
        """τ (nv,) [N, N·m] at q (nq,), v (nv,), v̇ (nv,): EngineAdapter.inverse_dynamics
        (harness/model/protocol.py)."""
        m, d = self._m, self._d
        self._set_qpos(q)
        R = self._T(q)
        if R is not None:
            vdot = vdot.copy()
            vdot[0:6] = vdot[0:6] + root_convective_term(v[0:6])
        if self._identity:
            d.qvel[:] = v
            d.qacc[:] = vdot
        else:
            self._put_mj_v(d.qvel, v, R)
            self._put_mj_v(d.qacc, vdot, R)
        mujoco.mj_inverse(m, d)
        return d.qfrc_inverse.copy() if self._identity else self._from_mj_v(d.qfrc_inverse, R)

    def integrate(self, q: NDArray[np.float64], v: NDArray[np.float64],
                  dt: float) -> NDArray[np.float64]:
        """q (nq,) after constant v (nv,) for dt [s]: EngineAdapter.integrate
        (harness/model/protocol.py)."""
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

    # ----- engine-native stepping (replay, stage 5) ---------------------------------------
    _NATIVE_INTEGRATORS = {"Euler": "mjINT_EULER", "RK4": "mjINT_RK4",
                           "implicit": "mjINT_IMPLICIT", "implicitfast": "mjINT_IMPLICITFAST"}

    def native_describe(self, settings: dict | None = None) -> tuple[dict, str]:
        """(settings, one-line statement) of ``native_rollout``: ``integrator`` (Euler, RK4,
        implicit, implicitfast) and ``dt`` [s], the largest step."""
        s = {"integrator": "RK4", "dt": 1e-3}
        s.update(settings or {})
        if s["integrator"] not in self._NATIVE_INTEGRATORS or set(s) != {"integrator", "dt"}:
            raise ValueError(f"mujoco native settings: integrator one of "
                             f"{sorted(self._NATIVE_INTEGRATORS)} and dt, got {s}")
        damping = {"Euler": "implicitly in the velocity update (MuJoCo's semi-implicit "
                            "Euler)",
                   "RK4": "as a passive force re-evaluated at every RK4 stage",
                   "implicit": "implicitly (with the full derivative of passive and "
                               "actuator forces)",
                   "implicitfast": "implicitly (symmetric part of the derivatives)"}
        return s, (f"mj_step with opt.integrator={s['integrator']}, opt.timestep = each "
                   f"grid interval / ceil(interval / {s['dt']:g} s), constraints disabled "
                   f"(mjDSBL_CONSTRAINT); τ enters as qfrc_applied = T(q) τ, held over each "
                   f"step (MuJoCo's applied-force semantics, exact for zero-order-hold "
                   f"controls on a fixed base); joint damping by MuJoCo {damping[s['integrator']]}")

    def native_contact(self, scene: ContactScene, q0: NDArray[np.float64], v0: NDArray[np.float64],
                       t_end: float, force_W: Callable[[float], NDArray[np.float64]],
                       settings: dict | None = None) -> dict:
        """{"t" (N,) [s], "q" (N, 7), "v" (N, 6), …}: MuJoCo soft contact on the declared
        contact geometry (module function
        ``native_contact``; statement from ``native_contact_statement``)."""
        return native_contact(self, scene, q0, v0, t_end, force_W, settings)

    def native_contact_statement(self, settings: dict | None = None) -> tuple:
        """(settings, one-line law statement) of ``native_contact``."""
        return native_contact_statement(settings)

    def native_rollout(
            self, q0: NDArray[np.float64], v0: NDArray[np.float64], t: NDArray[np.float64],
            controls: Callable[[int, float], NDArray[np.float64]], settings: dict | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(Q (N, nq), V (N, nv)) on the knots t (N,) [s] stepped by mj_step.

        controls(k, t) → τ (nv,) canonical, the interpolant of grid interval k; it is read
        at the start of every step and held over the step."""
        s, _ = self.native_describe(settings)
        m, d = self._m, self._d
        saved = (m.opt.timestep, m.opt.integrator)
        t = np.asarray(t, dtype=float)
        Q, V = np.empty((t.size, self.nq)), np.empty((t.size, self.nv))
        Q[0], V[0] = q0, v0
        try:
            m.opt.integrator = int(getattr(mujoco.mjtIntegrator,
                                           self._NATIVE_INTEGRATORS[s["integrator"]]))
            mujoco.mj_resetData(m, d)
            self._set_qpos(np.asarray(q0, dtype=float))
            d.qvel[:] = self._to_mj_v(np.asarray(v0, dtype=float), self._T(q0))
            for k in range(t.size - 1):
                n = max(1, int(np.ceil((t[k + 1] - t[k]) / s["dt"] - 1e-9)))
                h = (t[k + 1] - t[k]) / n
                m.opt.timestep = h
                for i in range(n):
                    q = self._get_q(d.qpos) if self._free is not None else None
                    d.qfrc_applied[:] = self._to_mj_v(np.asarray(controls(k, t[k] + i * h),
                                                                 dtype=float),
                                                      None if q is None else self._T(q))
                    mujoco.mj_step(m, d)
                Q[k + 1] = q = self._get_q(d.qpos)
                V[k + 1] = self._from_mj_v(d.qvel.copy(), self._T(q))
        finally:
            m.opt.timestep, m.opt.integrator = saved
            d.qfrc_applied[:] = 0.0
        return Q, V

    # ----- dynamics derivatives ----------------------------------------------------------
    # Free root (T = diag(R_WB, I) on its dofs, module docstring): τ = Tᵀ τ_o(q_o, T v,
    # T (v̇ + c)); MuJoCo perturbs qpos with mj_integratePos (world linear, body angular),
    # so δ_o = T δ, and the rotation of T with δω adds the terms of ∂T/∂δω
    # (harness.core.derivatives.root_chain_rule).
    def _require_parity_model(self):
        """NotProvided for an as-is model (its soft constraints act in the dynamics)."""
        if self._as_is is not None:
            raise NotProvided(self.name, "dynamics derivatives", "as-is: MuJoCo's soft "
                              "constraints (limits, frictionloss, equalities) act in its "
                              "dynamics, so ∂τ/∂v̇ ≠ M; derivatives are given for the parity "
                              "model (constraints disabled)")

    def inverse_dynamics_derivatives(
            self, q: NDArray[np.float64], v: NDArray[np.float64], vdot: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇), each (nv, nv), canonical: centred differences from two
        mjd_inverseFD calls (steps +MJD_EPS and −MJD_EPS, flg_actuation 0) on mj_inverse, the
        canonical conversions
        applied by the chain rule (passive damping is part of qfrc_inverse)."""
        self._require_parity_model()

        m, d, nv = self._m, self._d, self.nv
        self._set_qpos(q)
        R = self._T(q)
        v = np.asarray(v, dtype=float)
        vd = np.array(vdot, dtype=float)
        if R is not None:
            vd[0:6] = vd[0:6] + root_convective_term(v[0:6])
        d.qvel[:] = self._to_mj_v(v, R)
        d.qacc[:] = self._to_mj_v(vd, R)
        d.qfrc_applied[:] = 0.0
        # centred: the mean of mjd_inverseFD's forward differences at +eps and −eps (error
        # O(eps²) instead of O(eps); ∂v̇/∂q = −M⁻¹ ∂τ/∂q amplifies it by M's conditioning)
        DfDq, DfDv, DfDa = (np.zeros((nv, nv)) for _ in range(3))
        for eps in (MJD_EPS, -MJD_EPS):
            Q, V, A = (np.zeros((nv, nv)) for _ in range(3))
            mujoco.mjd_inverseFD(m, d, eps, 0, Q, V, A, None, None, None, None)
            DfDq += 0.5 * Q
            DfDv += 0.5 * V
            DfDa += 0.5 * A
        ix = np.ix_(self._vmap, self._vmap)
        Aq, Av, Aa = DfDq.T[ix], DfDv.T[ix], DfDa.T[ix]  # (out, in), canonical order
        if R is None:
            return Aq, Av, Aa
        mujoco.mj_inverse(m, d)
        tau_o = d.qfrc_inverse[self._vmap].copy()  # canonical order, MuJoCo frames
        return root_chain_rule(Aq, Av, Aa, tau_o, R, v, vd, (slice(0, 3),))

    def forward_dynamics_derivatives(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ), each (nv, nv), canonical: implicit-function theorem on
        mjd_inverseFD at v̇ = forward_dynamics(q, v, τ), M from mj_fullM (exact)."""
        self._require_parity_model()
        vdot = self.forward_dynamics(q, v, tau)
        dq, dv, _ = self.inverse_dynamics_derivatives(q, v, vdot)
        return implicit_forward(dq, dv, self.mass_matrix(q))

    # ----- constrained dynamics (stage 3, harness/stages/constrained/) --------------------
    def frame_jacobian_drift(
            self, q: NDArray[np.float64], v: NDArray[np.float64], frames: Sequence[str]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(J (k, 6, nv), a (k, 6)) of k frames at (q, v): J_WF [linear of F's origin; ω]
        world axes (mj_jacSite / mj_jacBody), and the drift J̇_WF v [m/s², rad/s²] from
        mj_jacDot at the frame's origin (after mj_kinematics, mj_comPos, mj_comVel).
        Fixed-base models only (a free root's velocity map T(q) would add its own
        derivative)."""
        if self._free is not None:
            raise ValueError("mujoco frame_jacobian_drift: fixed-base models only")
        if self._folded and not self._folded.keys().isdisjoint(frames):
            parts = [self._folded_frame(q, v, f, jac=True) if f in self._folded else
                     tuple(x[0] for x in self.frame_jacobian_drift(q, v, [f])) for f in frames]
            return np.stack([J for J, _ in parts]), np.stack([a for _, a in parts])
        m, d = self._m, self._d
        ids = [self._frame(f) for f in frames]
        self._set_qpos(np.asarray(q, dtype=float))
        d.qvel[:] = self._to_mj_v(np.asarray(v, dtype=float), None)
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_comVel(m, d)
        J = np.empty((len(frames), 6, self.nv))
        a = np.empty((len(frames), 6))
        jp, jr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
        for n, (kind, i) in enumerate(ids):
            if kind == "body":
                mujoco.mj_jacBody(m, d, self._jacp, self._jacr, i)
                point, body = d.xpos[i].copy(), i
            else:
                mujoco.mj_jacSite(m, d, self._jacp, self._jacr, i)
                point, body = d.site_xpos[i].copy(), int(m.site_bodyid[i])
            J[n] = self._from_mj_cols(np.vstack([self._jacp, self._jacr]), None)
            mujoco.mj_jacDot(m, d, jp, jr, point.reshape(3, 1), body)
            a[n] = np.vstack([jp, jr]) @ d.qvel
        return J, a

    def _native_constrained_state(self, q, v, tau):
        """v̇ (nv,) from MuJoCo's own equality constraints (``<connect>``/``<weld>`` between
        the constraint sites, exported by fixtures/export.py) on one state: mj_forward with
        constraints enabled (joint limits and contacts disabled, everything else MuJoCo's
        defaults), qfrc_applied = τ → v̇ = qacc (soft: it depends on solref/solimp and the
        time step)."""
        if self._free is not None:
            raise ValueError("mujoco native_constrained: fixed-base models only")
        m, d = self._native_eq_model()
        self._native_eq_set(d, q, v, tau)
        mujoco.mj_forward(m, d)
        return self._from_mj_v(d.qacc.copy(), None)

    def _native_eq_model(self):
        """(MjModel, MjData) of the parity MJCF with its equalities enabled (limits and
        contacts disabled), built once."""
        if self._eq_cache is None:
            m = mujoco.MjModel.from_xml_string(self.model.mjcf)
            m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_LIMIT)
            m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
            self._eq_cache = (m, mujoco.MjData(m))
        return self._eq_cache

    def _native_eq_set(self, d, q, v, tau):
        """Canonical (q, v, τ) into the MjData ``d`` of the equality model."""
        saved = self._d
        self._d = d
        try:
            self._set_qpos(np.asarray(q, dtype=float))
        finally:
            self._d = saved
        d.qvel[:] = self._to_mj_v(np.asarray(v, dtype=float), None)
        d.qfrc_applied[:] = self._to_mj_v(np.asarray(tau, dtype=float), None)

    def native_constrained_law(self) -> str:
        """One-line statement of MuJoCo's equality-constraint law for this model, with every
        equality's solref/solimp and the time step (they set the constraint's softness)."""
        m, _ = self._native_eq_model()
        kinds = {int(mujoco.mjtEq.mjEQ_CONNECT): "connect",
                 int(mujoco.mjtEq.mjEQ_WELD): "weld", int(mujoco.mjtEq.mjEQ_JOINT): "joint"}
        eqs = "; ".join(
            f"{kinds.get(int(m.eq_type[e]), int(m.eq_type[e]))} "
            f"{mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, e) or e}: solref "
            f"{' '.join(f'{x:g}' for x in m.eq_solref[e])}, solimp "
            f"{' '.join(f'{x:g}' for x in m.eq_solimp[e])}" for e in range(m.neq))
        cone = "elliptic" if m.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else "pyramidal"
        return (f"MuJoCo soft equality constraints (mj_forward, solver "
                f"{mujoco.mjtSolver(m.opt.solver).name}, timestep {m.opt.timestep:g} s, cone "
                f"{cone}, limits and contacts disabled): {eqs or 'none in the model'}; the "
                f"constraint force follows the spring-damper reference acceleration set by "
                f"solref and the impedance solimp — not the exact KKT answer")

    NATIVE_EQ_ENGINE = "MuJoCo"  # the engine as native_constrained's refusals name it

    def _native_constrained_refusal(self, problem: Any) -> None:
        """NotProvided when the equality row cannot stand for ``problem`` (stage 3's
        NativeProblem): a free root (the row is built for fixed-base models only), a line
        constraint (no MuJoCo equality keeps a point on a line), or a coupling the model
        carries no equality for (``_native_coupling_refusal``)."""
        if self._free is not None:
            raise NotProvided(self.name, "native constrained dynamics", "the equality row "
                              "is built for fixed-base models only")
        for c in problem.spec.constraints:
            if c.kind == "line":
                raise NotProvided(self.name, "native constrained dynamics",
                                  f"constraint {c.name}: {self.NATIVE_EQ_ENGINE} has no "
                                  "equality that keeps a point on a line (connect is 3-D, "
                                  "weld 6-D)")
        why = self._native_coupling_refusal(problem.spec.couplings)
        if why:
            raise NotProvided(self.name, "native constrained dynamics", why)

    def _native_coupling_refusal(self, couplings: Sequence[Coupling]) -> str:
        """Why the equality row is refused for ``couplings`` ('' when it is not): a
        coupling that is no polynomial of degree ≤ 4 (MuJoCo's joint equality)."""
        nonlinear = [k.follower for k in couplings
                     if k.function and quartic_coefficients(k.function) is None]
        if not nonlinear:
            return ""
        return (f"joint {nonlinear[0]}: a coupling that is no polynomial of degree ≤ 4 "
                "(MuJoCo's joint equality is a quartic; the model carries no equality for it)")

    def native_constrained(self, problem: Any) -> list[dict]:
        """Stage-3 native row: MuJoCo's soft equality constraints (not exact:
        informational); NotProvided for a line constraint (no MuJoCo equality keeps a point
        on a line)."""
        self._native_constrained_refusal(problem)
        vd = np.stack([self._native_constrained_state(q, v, t)
                       for q, v, t in zip(problem.Q, problem.V, problem.TAU)])
        return [{"solver": "equality", "exact": False, "vdot": vd, "lam": None,
                 "law": self.native_constrained_law()}]


# ----- native contact (harness/stages/contact/native.py) ----------------------------------------
NATIVE_CONTACT_DEFAULTS = {"dt": 1e-3, "integrator": "Euler", "cone": "pyramidal",
                           "solref": (0.02, 1.0), "solimp": (0.9, 0.95, 0.001, 0.5, 2.0),
                           "mu": 0.5}


def _native_contact_settings(settings):
    s = dict(NATIVE_CONTACT_DEFAULTS)
    s.update(settings or {})
    if set(s) != set(NATIVE_CONTACT_DEFAULTS):
        raise ValueError(f"mujoco native contact settings: {sorted(NATIVE_CONTACT_DEFAULTS)}, "
                         f"got {sorted(s)}")
    return s


def native_contact_statement(settings: dict | None = None) -> tuple:
    """(settings, one-line statement of the contact law): HasNativeContact
    (harness/model/protocol.py)."""
    s = _native_contact_settings(settings)
    return s, (f"MuJoCo soft contact: condim 3, {s['cone']} cone, friction μ = {s['mu']:g} "
               f"(one coefficient: no static/dynamic split), solref (timeconst, dampratio) "
               f"= {tuple(s['solref'])}, solimp (dmin, dmax, width, mid, power) = "
               f"{tuple(s['solimp'])}; mj_step {s['integrator']} dt = {s['dt']:g} s; "
               f"sphere/box geoms from the declared contact geometry on a plane geom")


def _native_contact_mjcf(model, scene, s) -> str:
    spec = model.spec
    b = spec.bodies[0]
    I = [[float(x) for x in row] for row in b.inertia_matrix]
    if tuple(scene.plane.normal) != (0.0, 0.0, 1.0):
        raise ValueError("mujoco native contact: plane normal must be +z")
    offs = {f.name: f.xyz for f in spec.frames}
    contact = (f'friction="{s["mu"]!r} 0.005 0.0001" solref="{s["solref"][0]!r} '
               f'{s["solref"][1]!r}" solimp="{" ".join(repr(float(x)) for x in s["solimp"])}" '
               f'condim="3"')
    geoms = []
    spheres = [g for g in scene.geometry if isinstance(g, Sphere)]
    for i, g in enumerate(spheres):
        p = offs.get(g.frame, (0.0, 0.0, 0.0))
        geoms.append(f'<geom name="c{i}" type="sphere" size="{g.radius!r}" '
                     f'pos="{p[0]!r} {p[1]!r} {p[2]!r}" {contact}/>')
    if len(spheres) < len(scene.geometry):  # box corners: the box they span
        pts = np.array([offs[g.frame] for g in scene.geometry if not isinstance(g, Sphere)])
        h = [float(x) for x in np.abs(pts).max(axis=0)]
        geoms.append(f'<geom name="box" type="box" size="{h[0]!r} {h[1]!r} {h[2]!r}" '
                     f'{contact}/>')
    g = spec.gravity
    return (f'<mujoco model="native_contact"><option timestep="{s["dt"]!r}" '
            f'integrator="{s["integrator"]}" cone="{s["cone"]}" '
            f'gravity="{g[0]!r} {g[1]!r} {g[2]!r}"/><worldbody>'
            f'<geom name="plane" type="plane" size="0 0 1" pos="0 0 {scene.plane.offset!r}" '
            f'{contact}/><body name="B"><freejoint/><inertial pos="{b.com[0]!r} {b.com[1]!r} '
            f'{b.com[2]!r}" mass="{b.mass!r}" fullinertia="{I[0][0]!r} {I[1][1]!r} '
            f'{I[2][2]!r} {I[0][1]!r} {I[0][2]!r} {I[1][2]!r}"/>{"".join(geoms)}</body>'
            f'</worldbody></mujoco>')


def native_contact(adapter: MujocoAdapter, scene: ContactScene, q0: NDArray[np.float64],
                   v0: NDArray[np.float64], t_end: float,
                   force_W: Callable[[float], NDArray[np.float64]],
                   settings: dict | None = None) -> dict:
    """MuJoCo's own contact on the declared geometry (one floating body): mj_step from
    canonical (q0 (7,), v0 (6,)) over [0, t_end] [s]; force_W(t) → (3,) [N] applied at
    the body origin (= its com) through xfrc_applied. Returns {"t" (N,), "q" (N, 7),
    "v" (N, 6) canonical, "settings", "statement"}."""
    s, statement = native_contact_statement(settings)
    m = mujoco.MjModel.from_xml_string(_native_contact_mjcf(adapter.model, scene, s))
    d = mujoco.MjData(m)
    q0, v0 = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)
    R = quat_xyzw_to_matrix(q0[3:7])
    d.qpos[:3], d.qpos[3:7] = q0[:3], np.array([q0[6], q0[3], q0[4], q0[5]])
    d.qvel[:3], d.qvel[3:6] = R @ v0[:3], v0[3:6]
    n = int(round(t_end / s["dt"]))
    T, Q, V = np.empty(n + 1), np.empty((n + 1, 7)), np.empty((n + 1, 6))

    def grab(k: int) -> None:
        T[k] = d.time
        quat = quat_wxyz_to_xyzw(d.qpos[3:7].copy())
        Q[k, :3], Q[k, 3:] = d.qpos[:3], quat
        V[k, :3] = quat_xyzw_to_matrix(quat).T @ d.qvel[:3]
        V[k, 3:] = d.qvel[3:6]

    grab(0)
    for k in range(n):
        d.xfrc_applied[1, :3] = force_W(d.time)
        mujoco.mj_step(m, d)
        grab(k + 1)
    return {"t": T, "q": Q, "v": V, "settings": s, "statement": statement}

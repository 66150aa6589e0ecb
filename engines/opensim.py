"""OpenSim adapter (opensim 4.6, Simbody underneath).

Dimension legend: nq, nv canonical; Simbody's own state holds, per mobilized body in
its index order, a block of q (free 7, ball 4, pin and slider 1, weld 0 numbers
reserved) and of u (6, 3, 1, 1, 0). OpenSim runs Simbody with Euler angles
(``setUseEulerAngles(true)`` in ``Model::initializeState``; not reachable from Python),
so a ball joint's q is three body-fixed X-Y-Z angles (R_FM = Rx(a) Ry(b) Rz(c)) in the
first three of its four numbers and a free joint's q is those three angles then p_FM in
the first six of its seven; u is w_FM in F for a ball joint and [w_FM, v_FM] in F (the
ground: world axes, angular first) for the free root.

``build_model(spec)`` writes the canonical model as an opensim.Model (bodies with their
inertia about the com in body axes, PinJoint / SliderJoint / BallJoint / WeldJoint /
FreeJoint named after the spec's joints, the joint frame rotated so that the hinge or
slide axis is the joint's z or x axis, named frames as PhysicalOffsetFrames, damping as a
SpringGeneralizedForce of zero stiffness per dof, a joint spring as a second one
(stiffness k, rest length q_ref, no viscosity), gravity from the spec, loop constraints
as PointConstraint / WeldConstraint / PointOnLineConstraint, joint couplings as
CoordinateCouplerConstraints). A run of slides through massless bodies that no exact
point-mass loan reaches is ONE CustomJoint (``merged_slides``); the bodies between are
read as points of the run's last body. Armature has no OpenSim
element: the adapter adds it to M (below) and the exported model does not carry it.

Conversions (docs/engines.md, "OpenSim"): with P the orthogonal map v_o = P v (free root:
[ω_W; v_W] = [[0, R_WB], [R_WB, 0]] [v_B; ω_B]; ball: R_FM; one-dof joints: 1) and
g = Ṗ v (R_WB (ω_B × v_B) on the free root's linear rows, 0 elsewhere):
τ_o = P τ, M = Pᵀ (M_o + A) P, h = Pᵀ (h_o + M_o g), v̇ = Pᵀ (v̇_o − g), J = J_o P.
"""
from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engines import opensim_osim, opensim_swing, opensim_tools
from harness.core.conventions import (
    canonical_integrate,
    combine_inertias,
    matrix_to_quat_wxyz,
    quat_wxyz_to_xyzw,
    quat_xyzw_rows,
    quat_xyzw_to_matrix,
    rpy_to_matrix,
    spatial_inertia_world,
)
from harness.core.derivatives import implicit_forward
from harness.core.errors import ModelRejected, NotProvided
from harness.core.spec import ContactScene, Coupling, FixtureSpec, Sphere
from harness.model.binding import Binding, console_as_warnings
from harness.model.joint_chain import folded_frames
from harness.model.osim_swing import SwingExport
from harness.model.prepared import PreparedModel
from harness.model.protocol import AdapterBase, as_is_source

BINDING = Binding("opensim")
with BINDING:
    import opensim as osim

    # OpenSim logs every model it builds at "info", to the console and to opensim.log in
    # the working directory: warnings and errors to the console only
    osim.Logger.setLevelString("warn")
    osim.Logger.removeFileSink()

# q and u numbers Simbody reserves per mobilizer (Euler-angle mode uses the first 6 / 3)
_NQ_RESERVED = {"free": 7, "ball": 4, "revolute": 1, "continuous": 1, "prismatic": 1}
_NAME_BAD = re.compile(r"[\s/\\*+]")
_AS_IS_WHY = ("OpenSim reads neither URDF nor MJCF: it is compared on the harness's own "
              "model (build_model) only")


def opensim_version() -> str:
    """The opensim wheel's version string ("4.6")."""
    return str(osim.GetVersion()) if osim is not None else ""


# ----- rotations ------------------------------------------------------------------------------
def xyz_body_fixed(R: NDArray[np.float64]) -> NDArray[np.float64]:
    """(3,) [rad] body-fixed X-Y-Z angles (a, b, c) with R = Rx(a) Ry(b) Rz(c), |b| ≤ π/2:
    OpenSim's orientation of an offset frame and Simbody's Euler-angle ball/free q."""
    return np.array(xyz_of_rows(*np.asarray(R, dtype=float).reshape(9).tolist()))


def xyz_of_rows(r00: float, r01: float, r02: float, r10: float, r11: float, r12: float, r20: float,
                r21: float, r22: float) -> tuple:
    """[rad] the body-fixed X-Y-Z angles (a, b, c) of the rotation whose 9 entries are given
    row-major (Python floats): the one formula behind xyz_body_fixed and the per-call
    state map. b and c come from Rx(a)ᵀ R = Ry(b) Rz(c), so the product stays exact near
    the lock b = ±π/2 (an axis along x, common in joint frames), where only a + c is
    defined and a is taken from the second column."""
    if math.hypot(r00, r01) > 1e-150:
        a = math.atan2(-r12, r22)
    else:
        a = math.atan2(r21, r11)
    ca, sa = math.cos(a), math.sin(a)
    return (a, math.atan2(r02, ca * r22 - sa * r12), math.atan2(ca * r10 + sa * r20,
                                                                  ca * r11 + sa * r21))


class _StateMap:
    """Canonical (q, v) → Simbody (Q, U) of one adapter: Q = Π q on the translations and
    hinges plus the Euler angles [rad] of every rotation, U = P v with P (nu, nv)
    orthogonal. P and the angles are rebuilt only when a root or ball quaternion changes
    (finite differences in v and τ keep them); everything else is one matrix product."""

    def __init__(self, ad):
        nv = ad.nv
        self.nv = nv
        self.Pi = np.zeros((ad._nq_o, ad.nq))  # the linear part of Q
        self.cont = []  # (Simbody q, canonical cos index, canonical sin index)
        P = np.zeros((ad._nu, nv))
        quats, angle_q, blocks = [], [], []
        free_flat = None

        def flat(rows: Sequence[int], col: int) -> NDArray[np.intp]:
            """(3 len(rows),) P's row-major entries of R placed at rows × col…col+2."""
            return np.array([r * nv + col + j for r in rows for j in range(3)], dtype=np.intp)

        for qr, ur, iq, iv, kind in ad._rotor_idx:  # a rotor turns with its joint (1:1)
            P[ur, iv] = 1.0
            if kind == "continuous":
                self.cont.append((qr, iq, iq + 1))
            else:
                self.Pi[qr, iq] = 1.0
        for slot, qi, ui in ad._slots:
            a = slot.iv
            if slot.type == "free":
                self.Pi[qi[3:6], range(slot.iq, slot.iq + 3)] = 1.0
                quats.append(slot.iq + 3)
                angle_q.extend(qi[0:3])
                # ω_W = R ω_B on the rotation speeds, v_W = R v_B on the translation ones
                blocks.append((flat(ui[0:3], a + 3), flat(ui[3:6], a)))
                free_flat = len(quats) - 1
                self.free_u = (np.asarray(ui[3:6]), a)
            elif slot.type == "ball":
                quats.append(slot.iq)
                angle_q.extend(qi)
                blocks.append((flat(ui, a),))
            elif slot.type == "continuous":
                self.cont.append((qi[0], slot.iq, slot.iq + 1))
                P[ui[0], a] = 1.0
            else:
                self.Pi[qi[0], slot.iq] = 1.0
                P[ui[0], a] = 1.0
        self.P = P
        self._P_flat = P.reshape(-1)
        self.quat_idx = np.array([i + k for i in quats for k in range(4)], dtype=np.intp)
        self._one = slice(quats[0], quats[0] + 4) if len(quats) == 1 else None
        self.angle_q = np.array(angle_q, dtype=np.intp)
        # R into a block of P by one struct pack when its 3 rows are consecutive (a
        # mobilizer's u always are): 3 doubles, then the other nv − 3 entries of the row as
        # zero pad bytes (a rotation's rows of P hold nothing else); numpy's fancy
        # assignment from a tuple costs several times more
        self.blocks = [tuple((fl,) + _block_pack(fl, nv) for fl in b) for b in blocks]
        # the angles into Q by one pack when their Simbody q are consecutive
        run = len(angle_q) > 0 and np.array_equal(
            self.angle_q, np.arange(self.angle_q[0], self.angle_q[0] + len(angle_q)))
        self._angle_pack = (struct.Struct(f"={len(angle_q)}d").pack_into, 8 * int(angle_q[0])) \
            if run else None
        self.free = free_flat  # which rotation is the free root's (or None)
        self.rows = []  # the 9 entries of each rotation, as of the cached key
        self.qo = np.zeros(ad._nq_o)
        self._angles = ()  # the Euler angles [rad] of every rotation, as of the cached key
        self._key = None
        # the return map: Pᵀ, or the plain selection when nothing rotates (rotor rows of U
        # are the twin's own and never enter a canonical vector)
        self.P_out = P if quats else np.zeros_like(P)
        if not quats:
            self.P_out[ad._vperm, range(nv)] = 1.0

    def native(self, q: NDArray[np.float64]) -> tuple:
        """(Q (nq_o,) [rad, m], P (nu, nv)) at canonical q, both owned by the map (copy to
        keep)."""
        if self.blocks:
            key = (q[self._one] if self._one is not None else q[self.quat_idx]).tolist()
            if key != self._key:
                rows, angles = [], []
                for k, blocks in enumerate(self.blocks):
                    r = quat_xyzw_rows(*key[4 * k:4 * k + 4])
                    for fl, pack, at in blocks:
                        if pack is None:
                            self._P_flat[fl] = r
                        else:
                            pack(self.P, at, *r)
                    rows.append(r)
                    angles.extend(xyz_of_rows(*r))
                self._angles = tuple(angles)
                self.rows, self._key = rows, key
        qo = self.qo
        self.Pi.dot(q, qo)
        if self.blocks:
            if self._angle_pack is not None:
                self._angle_pack[0](qo, self._angle_pack[1], *self._angles)
            else:
                qo[self.angle_q] = self._angles
        for j, c, sn in self.cont:
            qo[j] = math.atan2(q[sn], q[c])
        return qo, self.P

    def drift(self, v: NDArray[np.float64]) -> tuple:
        """Ṗ v in Simbody u order: (u indices (3,), R_WB (ω_B × v_B) (3,) [m/s²]) of the
        free root at the cached key, or None."""
        if self.free is None:
            return None
        ui, a = self.free_u
        v0, v1, v2, w0, w1, w2 = v[a:a + 6].tolist()
        c0, c1, c2 = w1 * v2 - w2 * v1, w2 * v0 - w0 * v2, w0 * v1 - w1 * v0
        r = self.rows[self.free]
        return ui, (r[0] * c0 + r[1] * c1 + r[2] * c2, r[3] * c0 + r[4] * c1 + r[5] * c2,
                    r[6] * c0 + r[7] * c1 + r[8] * c2)


def _block_pack(fl, nv) -> tuple:
    """(struct pack_into, byte offset) that writes 9 numbers (R row-major) at the flat
    indices ``fl`` of a C-ordered (·, nv) matrix — rows r, r + 1, r + 2, the same 3
    consecutive columns in each — and zeros the rest of those rows; (None, None) when
    the rows are not consecutive."""
    r0, c0 = divmod(int(fl[0]), nv)
    want = [(r0 + i) * nv + c0 + j for i in range(3) for j in range(3)]
    if fl.tolist() != want:
        return None, None
    gap = 8 * (nv - 3)
    return struct.Struct(f"=3d{gap}x3d{gap}x3d").pack_into, 8 * (r0 * nv + c0)


def _rot_xyz(abc) -> np.ndarray:
    a, b, c = abc
    ca, sa, cb, sb, cc, sc = (math.cos(a), math.sin(a), math.cos(b), math.sin(b),
                              math.cos(c), math.sin(c))
    Rx = np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]])
    Ry = np.array([[cb, 0, sb], [0, 1, 0], [-sb, 0, cb]])
    Rz = np.array([[cc, -sc, 0], [sc, cc, 0], [0, 0, 1]])
    return Rx @ Ry @ Rz


def _align(axis, which: int) -> np.ndarray:
    """A rotation A (3x3) with A e_which = axis (unit): the joint frame of a PinJoint (z,
    which=2) or SliderJoint (x, which=0) whose axis is ``axis`` in the canonical frame."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    e = np.eye(3)[which]
    if np.allclose(a, e, rtol=0.0, atol=0.0):
        return np.eye(3)
    # the two other columns: any orthonormal completion, right-handed
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    b = np.cross(a, helper)
    b /= np.linalg.norm(b)
    c = np.cross(a, b)
    A = np.empty((3, 3))
    A[:, which], A[:, (which + 1) % 3], A[:, (which + 2) % 3] = a, b, c
    return A


def _vec3(x):
    return osim.Vec3(float(x[0]), float(x[1]), float(x[2]))


def _np3(v) -> np.ndarray:
    return np.array([v.get(0), v.get(1), v.get(2)])


def _np33(R) -> np.ndarray:
    return np.array([[R.get(i, j) for j in range(3)] for i in range(3)])


def _transform(p, R):
    """SimTK Transform of a position (3,) [m] and rotation (3x3) (body-fixed XYZ angles)."""
    rot = osim.Rotation()
    rot.setRotationToBodyFixedXYZ(_vec3(xyz_body_fixed(R)))
    return osim.Transform(rot, _vec3(p))


# ----- the model -------------------------------------------------------------------------------
def osim_names(spec: FixtureSpec) -> dict:
    """{spec name: the name it has in the OpenSim model} for every body, joint, frame and
    constraint whose name OpenSim refuses: whitespace, / \\ * or + (each replaced by _), and
    a body named ``ground`` other than a fixed root (OpenSim's ground frame has that name:
    ``ground_body``), each made unique among every name of the model. Every other name is
    kept: the map holds only the renamed ones (empty for most models)."""
    on_ground = not spec.floating and spec.root == "ground"
    names = ([b.name for b in spec.bodies] + [j.name for j in spec.joints]
             + [f.name for f in spec.frames] + [c.name for c in spec.constraints])
    used = set(names) | {"ground", "root_joint"}
    out = {}
    for n in names:
        bad_ground = n == "ground" and not on_ground and any(b.name == n for b in spec.bodies)
        if n in out or not (_NAME_BAD.search(n) or bad_ground):
            continue
        base = "ground_body" if bad_ground else _NAME_BAD.sub("_", n)
        cand, k = base, 2
        while cand in used:
            cand, k = f"{base}_{k}", k + 1
        used.add(cand)
        out[n] = cand
    return out


def _renamed(spec, names: dict):
    """``spec`` with the names of ``names`` (osim_names) replaced everywhere they appear."""
    if not names:
        return spec
    n = lambda x: names.get(x, x)  # noqa: E731
    return replace(
        spec,
        bodies=tuple(replace(b, name=n(b.name)) for b in spec.bodies),
        joints=tuple(replace(j, name=n(j.name), parent=n(j.parent), child=n(j.child))
                     for j in spec.joints),
        frames=tuple(replace(f, name=n(f.name), body=n(f.body)) for f in spec.frames),
        constraints=tuple(replace(c, name=n(c.name), frame_a=n(c.frame_a),
                                  frame_b=n(c.frame_b)) for c in spec.constraints),
        couplings=tuple(replace(k, follower=n(k.follower), leader=n(k.leader))
                        for k in spec.couplings))


TRANSFER_MASS = 1e-9  # [relative] share of a parent's mass lent to a massless child
SPRING_SUFFIX = "__spring"  # the SpringGeneralizedForce of a joint spring (model name)


def _shift(d) -> np.ndarray:
    """(3x3) |d|² I − d dᵀ: the parallel-axis term per unit mass [m²]."""
    d = np.asarray(d, dtype=float)
    return float(d @ d) * np.eye(3) - np.outer(d, d)


def _donor_below(spec, body, start=None):
    """(donor body, point (3,) m in its frame) or None: the first massive body reached
    from the massless ``body`` down its single-child chain such that the point ``start``
    of ``body`` (its frame; default its origin) is a fixed point of the donor — revolute,
    continuous or ball joints whose origin is the point (on the axis or centre), fixed
    joints anywhere."""
    p, cur = np.zeros(3) if start is None else np.asarray(start, dtype=float), body
    while True:
        kids = spec.children(cur)
        if len(kids) != 1:
            return None
        k = kids[0]
        xyz = np.asarray(k.xyz, dtype=float)
        if k.type == "fixed":
            p = rpy_to_matrix(k.rpy).T @ (p - xyz)
        elif k.type in ("revolute", "continuous", "ball") and np.array_equal(p, xyz):
            p = np.zeros(3)  # the joint origin is the child's origin
        else:
            return None
        cur = k.child
        if spec.body(cur).mass > 0:
            return cur, p


def _loan(spec: FixtureSpec, name: str):
    """(point (3,) m in the massless body ``name``, donor body, the same point in the
    donor's frame) of an exact loan to it, or None: at its origin from its parent when
    its joint is revolute, continuous or ball (the origin lies on the axis or centre),
    else from the body below (``_donor_below``) at its origin or at its one child joint's
    origin (a point of both bodies when that joint is a rotation: a chain of hinges away
    from the body origin, MJCF ``pos``)."""
    j = spec.parent_joint(name)
    if j is not None and spec.body(j.parent).mass > 0 \
            and j.type in ("revolute", "continuous", "ball"):
        return np.zeros(3), j.parent, np.asarray(j.xyz, dtype=float)
    kids = spec.children(name)
    for start in [np.zeros(3)] + [np.asarray(k.xyz, dtype=float) for k in kids[:1]]:
        found = _donor_below(spec, name, start)
        if found is not None:
            return start, found[0], found[1]
    return None


def mass_loans(spec: FixtureSpec) -> list:
    """[(massless body, point (3,) m in its frame, donor body, the same point (3,) m in the
    donor's frame, ε kg)]: point masses build_model lends, the whole mass distribution
    kept.

    OpenSim's tree builder (MultibodyGraphMaker) refuses a massless body that is not
    followed at once by a massive one ("terminal massless body"): two massless bodies in
    a row, as a chain of joints in one body gives them. Such a massless body B gets a
    point mass ε = TRANSFER_MASS·m_D at its origin, and a massive donor D gives up the same
    point mass at the same place, a point that does not move relative to D whatever the
    joints between them do: D is B's parent when B's joint is revolute, continuous or ball
    (B's origin lies on its axis or centre), else the massive body below B reached through
    rotations about the point and fixed joints (``_donor_below``), the point being B's
    origin or its child joint's origin (``_loan``). When B itself has no
    such donor (a slide joint above and below it: a planar root slide z, slide x, hinge y
    in one MJCF body), the loan goes to B's massless children that have one, which then
    follow B as massive bodies. Every configuration has the same mass distribution (M, h,
    v̇ unchanged up to round-off)."""
    out = []
    lent: set[str] = set()
    for j in spec.joints:
        B = spec.body(j.child)
        if (B.mass > 0 or B.name in lent or not spec.children(B.name)
                or any(spec.body(k.child).mass > 0 or k.child in lent
                       for k in spec.children(B.name))):
            continue
        takers = [(B.name, _loan(spec, B.name))]
        if takers[0][1] is None:  # its massless children instead, where they have a donor
            takers = [(k.child, _loan(spec, k.child)) for k in spec.children(B.name)
                      if k.type != "fixed"]
        for b, loan in takers:
            if loan is None:
                continue  # OpenSim refuses the model, naming the user's joints
            p_b, d, x = loan
            out.append((b, p_b, d, x, TRANSFER_MASS * spec.body(d).mass))
            lent.add(b)
    return out


def mass_transfers(spec: FixtureSpec) -> dict:
    """{body: (mass kg, com (3,) m, inertia about the com (3x3) kg·m², body axes)} of the
    bodies whose mass properties build_model changes (``mass_loans``)."""
    out = {}
    for b, p_b, d, x, eps in mass_loans(spec):
        D = spec.body(d)
        m0, c0, I0 = out.get(d, (D.mass, np.asarray(D.com, dtype=float), D.inertia_matrix))
        m1 = m0 - eps
        c1 = (m0 * c0 - eps * x) / m1
        I1 = I0 + m0 * _shift(c0 - c1) - eps * _shift(x - c1)
        out[d] = (m1, c1, 0.5 * (I1 + I1.T))
        out[b] = (eps, p_b, np.zeros((3, 3)))
    return out


def merged_slides(spec: FixtureSpec) -> list[tuple[str, ...]]:
    """[(joint names of one run)]: runs of prismatic joints build_model writes as ONE
    OpenSim CustomJoint (translation axes only), the massless bodies between them left out.

    OpenSim's tree builder refuses a massless moving body followed at once by another one,
    and no exact point-mass loan (``mass_loans``) reaches a body between two slides: no
    point of it is fixed in any massive body (a pelvis on three translations, then three
    rotations). A run is k ≤ 3 prismatic joints with linearly independent axes, each body
    between two of them massless, without a loan, with that one child joint, and followed
    by a massless body without a loan. The translations commute with the placements pushed
    to the run's parent side (X = Π Pl_i · Trans(Σ b_i q_i), ``_slide_run``), so the
    CustomJoint moves the run's last body exactly as the chain does; the left-out bodies
    are points of that last body with the run's later joints at neutral (the adapter reads
    them so: harness/model/joint_chain.py ``folded_frames``)."""
    takers = {b for b, *_ in mass_loans(spec)}

    def massless(b: str) -> bool:
        return spec.body(b).mass == 0 and b not in takers

    def leaves_out(b: str) -> bool:
        j, kids = spec.parent_joint(b), spec.children(b)
        return (massless(b) and j is not None and j.type == "prismatic" and len(kids) == 1
                and kids[0].type == "prismatic" and massless(kids[0].child))

    runs = []
    for b in spec.depth_first():
        j = spec.parent_joint(b)
        if j is None or not leaves_out(b) or leaves_out(j.parent):
            continue
        run, cur = [j], b
        while leaves_out(cur):
            run.append(spec.children(cur)[0])
            cur = run[-1].child
        _, axes = _slide_run(run)
        if len(run) <= 3 and np.linalg.matrix_rank(np.array(axes), 1e-9) == len(run):
            runs.append(tuple(k.name for k in run))
    return runs


def _slide_run(run) -> tuple:
    """(X_PF (4, 4), [b_i (3,)]) of a run of prismatic joints from its parent body P:
    Pl_1 T(a_1 q_1) … Pl_k T(a_k q_k) = X_PF · Trans(Σ b_i q_i), X_PF = Pl_1 ⋯ Pl_k and
    b_i = (R of Pl_(i+1) ⋯ Pl_k)ᵀ a_i (T(a q) Pl = Pl T(R_Plᵀ a q))."""
    X = np.eye(4)
    pl = []
    for j in run:
        P = np.eye(4)
        P[:3, :3], P[:3, 3] = rpy_to_matrix(j.rpy), np.asarray(j.xyz, dtype=float)
        pl.append(P)
        X = X @ P
    axes, R = [], np.eye(3)
    for j, P in zip(reversed(run), reversed(pl)):
        axes.insert(0, R.T @ np.asarray(j.axis, dtype=float))
        R = P[:3, :3] @ R
    return X, axes


def _slide_joint(run, P, C):
    """The CustomJoint (translation axes only, LinearFunction slope 1 of each joint's
    coordinate, named after it) of a run of prismatic joints (``merged_slides``) from body
    P to body C."""
    X, axes = _slide_run(run)
    st = osim.SpatialTransform()
    for k, (j, b) in enumerate(zip(run, axes)):
        ta = st.updTransformAxis(3 + k)
        ta.setAxis(_vec3(b))
        names = osim.ArrayStr()
        names.append(j.name)
        ta.setCoordinateNames(names)
        f = osim.LinearFunction(1.0, 0.0)
        f.thisown = False  # the TransformAxis owns its function
        ta.setFunction(f)
    used = [np.asarray(b, dtype=float) for b in axes]
    for k in range(len(run), 3):  # unused translations (constant 0): independent axes
        e = next(e for e in np.eye(3) if np.linalg.matrix_rank(np.array(used + [e])) >
                 len(used))
        used.append(e)
        st.updTransformAxis(3 + k).setAxis(_vec3(e))
    zero = osim.Vec3(0.0, 0.0, 0.0)
    return osim.CustomJoint(run[0].name, P, _vec3(X[:3, 3]),
                            _vec3(xyz_body_fixed(X[:3, :3])), C, zero, zero, st)


def _setup_coordinate(m, c, j) -> None:
    """Name-independent settings of the coordinate ``c`` of canonical joint ``j``: its
    range (never clamped), its damping and its joint spring (SpringGeneralizedForces)."""
    if j.lower is not None:
        c.setRangeMin(float(j.lower))
        c.setRangeMax(float(j.upper))
    else:
        c.setRangeMin(-1e6)
        c.setRangeMax(1e6)
    c.set_clamped(False)
    if j.damping > 0:
        f = osim.SpringGeneralizedForce(c.getName())
        f.setName(f"{c.getName()}__damping")
        f.setStiffness(0.0)
        f.setRestLength(0.0)
        f.setViscosity(float(j.damping))
        m.addForce(f)
    if j.stiffness > 0:  # the joint spring: −k (q − q_ref), part of h
        f = osim.SpringGeneralizedForce(c.getName())
        f.setName(f"{c.getName()}{SPRING_SUFFIX}")
        f.setStiffness(float(j.stiffness))
        f.setRestLength(float(j.spring_ref))
        f.setViscosity(0.0)
        m.addForce(f)


def build_model(spec: FixtureSpec, constraints: bool = True,
                root_joint: Callable[[Any, Any], Any] | None = None) -> osim.Model:
    """opensim.Model [SI] of a FixtureSpec: self-contained (printToXML writes a valid
    .osim), joints, bodies and frames named as in the spec.

    Root: a FreeJoint named ``root_joint`` (floating) or a WeldJoint of that name (the
    reserved name, so it never clashes with a spec joint); a fixed root named "ground" is
    OpenSim's Ground itself (its mass, which never moves, is dropped). Joint frame = child
    body frame (xyz/rpy in the parent); a revolute or continuous joint is a PinJoint and a prismatic
    joint a SliderJoint whose parent and child frames are the joint frame turned by A
    (A e_z or A e_x = the axis), so X_PC = X_PJ · A · Rot(q) · Aᵀ; a ball joint is a
    BallJoint, a fixed joint a WeldJoint. Limits go to the coordinate's range (not
    clamped, never enforced: no CoordinateLimitForce). Damping d: a SpringGeneralizedForce
    (stiffness 0, viscosity d) on every coordinate of the joint; a joint spring k, q_ref: a
    second one (stiffness k, rest length q_ref, viscosity 0) named ``<coordinate>__spring``.
    ``constraints``: add the spec's loop constraints (point: PointConstraint; weld:
    WeldConstraint; line: PointOnLineConstraint along world z through frame_b).
    ``root_joint(ground, root_body)``: the floating root's joint in place of the FreeJoint
    (the swing export's six-coordinate CustomJoint, engines/opensim_swing.py)."""
    BINDING.require()
    spec = _renamed(spec, osim_names(spec))
    m = osim.Model()
    m.setName(spec.name)
    m.setGravity(_vec3(spec.gravity))
    ground = m.getGround()
    bodies = {}
    on_ground = not spec.floating and spec.root == "ground"
    if on_ground:  # OpenSim's own Ground is named so; a fixed root at the world origin is it
        bodies["ground"] = ground
    props = mass_transfers(spec)
    runs = merged_slides(spec)
    by_name = {j.name: j for j in spec.joints}
    in_run = {n: run for run in runs for n in run}
    left_out = {by_name[n].child for run in runs for n in run[:-1]}
    for b in spec.bodies:
        if (b.name == "ground" and on_ground) or b.name in left_out:
            continue
        mass, com, I = props.get(b.name, (b.mass, np.asarray(b.com), b.inertia_matrix))
        body = osim.Body(b.name, float(mass), _vec3(com),
                         osim.Inertia(I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]))
        m.addBody(body)
        bodies[b.name] = body
    zero = osim.Vec3(0.0, 0.0, 0.0)
    root = bodies[spec.root]
    if spec.floating:
        m.addJoint(root_joint(ground, root) if root_joint is not None else
                   osim.FreeJoint("root_joint", ground, zero, zero, root, zero, zero))
    elif not on_ground:
        m.addJoint(osim.WeldJoint("root_joint", ground, zero, zero, root, zero, zero))
    for b in spec.depth_first()[1:]:
        j = spec.parent_joint(b)
        if j.name in in_run:
            run = [by_name[n] for n in in_run[j.name]]
            if j is run[0]:
                joint = _slide_joint(run, bodies[j.parent], bodies[run[-1].child])
                m.addJoint(joint)
                joint.finalizeFromProperties()  # builds its coordinates
                for k, jk in enumerate(run):
                    _setup_coordinate(m, joint.upd_coordinates(k), jk)
            continue
        P, C = bodies[j.parent], bodies[j.child]
        R_PJ = rpy_to_matrix(j.rpy)
        if j.type in ("revolute", "continuous", "prismatic"):
            A = _align(j.axis, 0 if j.type == "prismatic" else 2)
            cls = osim.SliderJoint if j.type == "prismatic" else osim.PinJoint
            joint = cls(j.name, P, _vec3(j.xyz), _vec3(xyz_body_fixed(R_PJ @ A)),
                        C, zero, _vec3(xyz_body_fixed(A)))
        elif j.type == "ball":
            joint = osim.BallJoint(j.name, P, _vec3(j.xyz), _vec3(xyz_body_fixed(R_PJ)), C,
                                   zero, zero)
        elif j.type == "fixed":
            joint = osim.WeldJoint(j.name, P, _vec3(j.xyz), _vec3(xyz_body_fixed(R_PJ)), C,
                                   zero, zero)
        else:
            raise ModelRejected("opensim", f"joint {j.name}: type {j.type} not supported")
        m.addJoint(joint)
        for k in range(joint.numCoordinates()):
            c = joint.upd_coordinates(k)
            c.setName(j.name if joint.numCoordinates() == 1 else f"{j.name}_{'xyz'[k]}")
            _setup_coordinate(m, c, j)
    for fr in spec.frames:
        if fr.body in left_out:  # the adapter reads it on the run's last body
            continue
        off = osim.PhysicalOffsetFrame(fr.name, bodies[fr.body],
                                       _transform(fr.xyz, rpy_to_matrix(fr.rpy)))
        bodies[fr.body].addComponent(off)
    if spec.q_init:  # near g(q) = 0: OpenSim assembles its default pose at initSystem
        q0 = np.asarray(spec.q_init, dtype=float)
        i = 0
        for j in spec.moving_joints():
            if j.type in ("revolute", "prismatic"):
                m.updCoordinateSet().get(j.name).setDefaultValue(float(q0[i]))
            elif j.type == "continuous":
                m.updCoordinateSet().get(j.name).setDefaultValue(math.atan2(q0[i + 1], q0[i]))
            i += {"continuous": 2, "ball": 4}.get(j.type, 1)
    if constraints:
        _add_constraints(m, spec, bodies)
    m.finalizeConnections()
    return m


def _add_constraints(m, spec, bodies) -> None:
    frames = {f.name: f for f in spec.frames}
    for c in spec.constraints:
        fa, fb = frames[c.frame_a], frames[c.frame_b]
        if fa.body not in bodies or fb.body not in bodies:  # left out of a run of slides
            raise ModelRejected("opensim", f"constraint {c.name}: a frame on a body between "
                                "slides the model holds as one CustomJoint")
        A, B = bodies[fa.body], bodies[fb.body]
        if c.kind == "point":
            con = osim.PointConstraint(A, _vec3(fa.xyz), B, _vec3(fb.xyz))
        elif c.kind == "weld":
            con = osim.WeldConstraint(c.name, A, _transform(fa.xyz, rpy_to_matrix(fa.rpy)),
                                      B, _transform(fb.xyz, rpy_to_matrix(fb.rpy)))
        elif c.kind == "line":
            # B is on the root of a fixed-base model (spec validation): the root frame is
            # the world frame, so world z is e_z in B's body
            con = osim.PointOnLineConstraint(B, osim.Vec3(0.0, 0.0, 1.0), _vec3(fb.xyz), A,
                                             _vec3(fa.xyz))
        else:
            raise ModelRejected("opensim", f"constraint {c.name}: kind {c.kind}")
        con.setName(c.name)
        m.addConstraint(con)
    for k in spec.couplings:  # q_f = f(q_l): a function of the leader's coordinate
        cc = osim.CoordinateCouplerConstraint()
        cc.setName(f"{k.follower}__coupling")
        names = osim.ArrayStr()
        names.append(k.leader)
        cc.setIndependentCoordinateNames(names)
        cc.setDependentCoordinateName(k.follower)
        cc.setFunction(coupling_function(k))
        m.addConstraint(cc)


def coupling_function(k: Coupling) -> Any:
    """The OpenSim Function of a coupling q_f = f(q_l) (harness/core/spec.py Coupling): a
    LinearFunction (multiplier, offset), a SimmSpline through its knots (the same spline:
    harness/core/coupling_function.py), or a PolynomialFunction (highest power first)."""
    if not k.function:
        return osim.LinearFunction(float(k.multiplier), float(k.offset))
    if k.function[0] == "spline":
        sp = osim.SimmSpline()
        for x, y in zip(k.function[1], k.function[2]):
            sp.addPoint(float(x), float(y))
        return sp
    return osim.PolynomialFunction(osim.Vector([float(c) for c in k.function[1]]))


def _massless_chain_rejected(spec: FixtureSpec, error: str) -> ModelRejected | None:
    """ModelRejected naming the user's joints for OpenSim's "terminal massless body" (a
    chain of massless bodies no exact point-mass loan can reach: ``mass_loans``), else
    None (OpenSim's own error stands)."""
    found = re.search(r"terminal massless body \(/bodyset/([^)]+)\)", error)
    names = {v: k for k, v in osim_names(spec).items()}
    body = names.get(found.group(1), found.group(1)) if found else ""
    if body not in {b.name for b in spec.bodies}:
        return None
    chain, b = [], body
    while spec.body(b).mass == 0:
        j = spec.parent_joint(b)
        if j is None:
            break
        chain.insert(0, j)
        b = j.parent
    below = [k for k in spec.children(body) if spec.body(k.child).mass == 0]
    chain += below[:1]
    return ModelRejected("opensim", "joints " + ", ".join(
        f"{j.name} ({j.type})" for j in chain if j.type != "fixed")
        + ": a chain of joints with no mass between them that OpenSim's tree builder "
          "refuses (each massless body needs a massive one right after it) and no exact "
          "point-mass loan reaches (a slide joint above and below the massless body)")


# ----- the adapter -----------------------------------------------------------------------------
class OpensimAdapter(AdapterBase):
    """Canonical q (nq,), v (nv,), τ (nv,) [m, rad, m/s, rad/s, N, N·m] on a Simbody
    system built by OpenSim from the canonical model (``build_model``); every call writes
    Simbody's State directly (State.setQ / setU from numpy, in Simbody's own q and u
    numbers) and realizes only the stage it needs."""

    name = "opensim"

    # .osim in and out (engines/opensim_osim.py); the registry finds them by name
    osim_to_spec = staticmethod(opensim_osim.osim_to_spec)

    # OpenSim's own IK and ID tools, run live beside `harness track` (engines/opensim_tools.py)
    motion_ik_tool = staticmethod(opensim_tools.run_inverse_kinematics)
    motion_id_tool = staticmethod(opensim_tools.run_inverse_dynamics)
    # the IK tool's solver alone, its solve timed apart from loading and writing (bench/)
    motion_ik_solver = staticmethod(opensim_tools.run_inverse_kinematics_solver)
    # the mass properties as OpenSim reads a model file (a model `harness track` writes)
    motion_model_masses = staticmethod(opensim_tools.model_mass_properties)
    # its ScaleTool, run live beside `harness track --scale`
    motion_scale_tool = staticmethod(opensim_tools.run_scale_tool)

    @staticmethod
    def write_osim(spec: FixtureSpec, path: str) -> str:
        """The canonical model ``spec`` written as an .osim file at ``path``."""
        return opensim_osim.write_osim(spec, path, build_model)

    @staticmethod
    def write_osim_swing(ex: SwingExport, folder: str) -> dict:
        """A fitted swing in OpenSim's axes and coordinates (t [s], Q [rad, m], Y [m],
        forces [N], the harness's inverse dynamics [N, N·m]) as OpenSim's model, motion,
        markers, external loads and tool setups in ``folder`` (engines/opensim_swing.py)."""
        return opensim_swing.write_swing_export(ex, folder, build_model)

    def __init__(self, model: PreparedModel, *, _spec: FixtureSpec | None = None,
                 _armature: bool = True, _constraints: bool = False,
                 _actuated: bool | str = False,
                 _extra: Callable[[OpensimAdapter], None] | None = None) -> None:
        BINDING.require()
        super().__init__(model)
        if as_is_source(model, self.name) is not None:
            raise NotProvided(self.name, "as-is loading", _AS_IS_WHY)
        self.version = opensim_version()
        self._spec = _spec if _spec is not None else model.spec
        self._init_names()
        self._use_armature = _armature
        with console_as_warnings("opensim"):  # its log lines counted as warnings
            try:
                self._m = build_model(self._spec, constraints=_constraints)
            except RuntimeError as e:
                rejected = _massless_chain_rejected(self._spec, str(e))
                if rejected is None:
                    raise
                raise rejected from None
            self._controller = None
            if _actuated:
                self._add_actuators(_actuated)
            if _extra is not None:
                _extra(self)
            self._s = self._m.initSystem()
        self._mat = self._m.getMatterSubsystem()
        self._map_state()
        self._init_buffers()
        self._init_bodies_frames(model)
        self._init_armature()
        self.derivatives_method = "finite_difference"  # stages/derivatives.py
        self.provides = self._provides()

    def _init_names(self) -> None:
        """The spec's names OpenSim refuses, renamed in the model (build_model): every
        lookup in the model goes through _on, and what the model names comes back through
        _back, so the harness only ever sees the spec's names."""
        self._onames = osim_names(self._spec)
        self._back_names = {v: k for k, v in self._onames.items()}

    def _init_buffers(self) -> None:
        """The force producers and the SWIG Vectors and Matrices reused on every call."""
        # the force elements _applied adds up (a twin with actuators or contact never
        # calls it: its forces act through realizeAcceleration or the Manager)
        self._producers = [osim.ForceProducer.safeDownCast(f) for f in self._m.getForceSet()]
        # the joint springs alone: they are part of h (bias_forces), damping is not
        self._spring_producers = [p for p, f in zip(self._producers, self._m.getForceSet())
                                  if f.getName().endswith(SPRING_SUFFIX)]
        self._producers_ok = all(f is not None for f in self._producers)
        # forward_dynamics' output Vectors and its zero input, built once: a new SWIG
        # object costs 1.5–3 µs (proxy, type checks, C++ new and delete) on every call
        self._udot, self._A_GB = osim.Vector(), osim.VectorOfSpatialVec()
        self._r_buf, self._M_buf = osim.Vector(), osim.Matrix()
        self._zero_u = osim.Vector(self._nu, 0.0)

    def _init_bodies_frames(self, model: PreparedModel) -> None:
        """The model's bodies and frames by the spec's names, and the point masses
        ``mass_loans`` lent between bodies (given back by the read-out)."""
        self._bodies = {self._back(b.getName()): b for b in self._m.getBodySet()}
        # point masses [kg] at (3,) [m], body frame, to give back to each body: what
        # mass_loans lent between a massless body and its donor
        self._lent: dict = {}
        for b, p_b, d, x, eps in mass_loans(self._spec):
            self._lent.setdefault(b, []).append((-eps, p_b))
            self._lent.setdefault(d, []).append((eps, x))
        if self._spec.root not in self._bodies:  # a fixed root named "ground" (build_model)
            self._bodies[self._spec.root] = self._m.getGround()
        # the bodies inside a run of slides written as one CustomJoint (merged_slides), and
        # the frames on them: points of the run's last body (folded_frames)
        self._slides = {}  # {joint: (run, index in it)}
        chains = {}
        for run in merged_slides(self._spec):
            js = [self._spec.parent_joint(b) for b in self._spec.depth_first()]
            by = {j.name: j for j in js if j is not None}
            for k, n in enumerate(run):
                self._slides[n] = (run, k)
                if k < len(run) - 1:
                    chains[by[n].child] = (by[run[-1]].child, run[k + 1:])
        self._folded = folded_frames(model, chains) if chains else {}
        self._frames = {}
        for name in model.frames:
            if name in self._folded:
                continue
            if name in self._bodies:
                self._frames[name] = (self._bodies[name], np.zeros(3))
            else:
                f = next(x for x in self._spec.frames if x.name == name)
                off = self._bodies[f.body].getComponent(self._on(name))
                self._frames[name] = (osim.PhysicalOffsetFrame.safeDownCast(off),
                                      np.array(f.xyz, dtype=float))

    def _init_armature(self) -> None:
        """The armature [kg·m², kg] per canonical dof and in Simbody's u order, and the
        joint kinds the per-call paths branch on."""
        lay = self.layout
        arm = np.zeros(self.nv)
        if self._use_armature:
            for s in lay.slots:
                if s.type != "free":
                    arm[s.iv:s.iv + s.nv] = s.armature
        self._arm = arm  # canonical diagonal; isotropic on ball joints, so also Simbody's
        self._arm_o = np.zeros(self._nu)
        self._arm_o[self._vperm] = arm
        self._has_arm = bool(np.any(arm))
        self._A_o = np.diag(self._arm_o)
        self._free = lay.free_slot()
        self._balls = [s for s in lay.slots if s.type == "ball"]
        self._simple = self._free is None and not self._balls

    def _provides(self) -> dict:
        """{quantity: the OpenSim/Simbody API that computes it} of this model."""
        fd = ("SimbodyMatterSubsystem.calcAcceleration with τ_o + the model's mobility "
              "forces (SpringGeneralizedForce damping, Force.computeForce) and "
              "getGravityBodyForces")
        if self._has_arm:
            fd = ("Simbody M (calcM) + armature (OpenSim has no rotor inertia) and the "
                  "residual calcResidualForceIgnoringConstraints(v̇ = 0) with the model's "
                  "forces, solved by the adapter (numpy)")
        return {
            "group_inertias": "Body mass, mass center and inertia (about the com) with "
                              "getTransformInGround at neutral, over each joint's welded group",
            "frame_pose": "PhysicalFrame.getTransformInGround after realizePosition",
            "frame_jacobian": "SimbodyMatterSubsystem.calcFrameJacobian",
            "mass_matrix": "SimbodyMatterSubsystem.calcM"
                           + (" + armature (added by the adapter)" if self._has_arm else ""),
            "bias_forces": "calcResidualForceIgnoringConstraints(v̇ = 0, gravity body forces "
                           "and the joint springs' SpringGeneralizedForce (stiffness k, rest "
                           "length q_ref) mobility forces)",
            "forward_dynamics": fd,
            "inverse_dynamics": "calcResidualForceIgnoringConstraints with the model's "
                                "damping and gravity forces"
                                + (" + armature·v̇" if self._has_arm else ""),
            "integrate": "the adapter's composition (canonical_integrate): Simbody's Euler-"
                         "angle q has no q ⊕ v of its own",
            "inverse_dynamics_derivatives": "central differences (step FD_STEP) of "
                                            "calcResidualForceIgnoringConstraints by the "
                                            "adapter (Simbody has no derivatives); ∂τ/∂v̇ "
                                            "= calcM (+ armature)",
            "forward_dynamics_derivatives": "implicit-function theorem on those inverse-"
                                            "dynamics derivatives at v̇ = forward_dynamics",
            "frame_jacobian_drift": "calcFrameJacobian and calcBiasForFrameJacobian",
            "native_constrained": "Simbody constraints (PointConstraint, WeldConstraint, "
                                  "PointOnLineConstraint) and realizeAcceleration",
            "native_contact": "SmoothSphereHalfSpaceForce on ContactSpheres against a "
                              "ContactHalfSpace, Manager (RungeKuttaMerson)",
        }

    def _on(self, name: str) -> str:
        """The name the OpenSim model gives the spec's ``name`` (osim_names)."""
        return self._onames.get(name, name)

    def _back(self, name: str) -> str:
        """The spec's name of the model's ``name``."""
        return self._back_names.get(name, name)

    # ----- state layout -------------------------------------------------------------------
    def _map_state(self):
        """Index maps canonical ↔ Simbody found by writing each coordinate through
        OpenSim's Coordinate API and seeing which q and u number moves."""
        m, s = self._m, self._s
        self._nq_o, self._nu = s.getNQ(), s.getNU()
        rotors = getattr(self, "_rotors", [])
        if self._nu != self.nv + len(rotors):
            raise ModelRejected("opensim", f"Simbody nu {self._nu}, expected {self.nv}")
        coords = {c.getName(): c for c in m.getCoordinateSet()}
        self._slots = []  # (slot, q indices (Simbody), u indices (Simbody))
        vperm = np.empty(self.nv, dtype=np.intp)  # u_o[vperm] = x in slot order of dofs
        for slot in self.layout.slots:
            if slot.type == "free":
                names = [f"root_joint_coord_{k}" for k in range(6)]
            elif slot.type == "ball":
                names = [f"{self._on(slot.name)}_{a}" for a in "xyz"]
            else:
                names = [self._on(slot.name)]
            qi, ui = [], []
            for n in names:
                iq, iu = self._probe_index(s, coords[n])
                qi.append(iq)
                ui.append(iu)
            self._slots.append((slot, np.array(qi), np.array(ui)))
            vperm[slot.iv:slot.iv + slot.nv] = ui
        self._vperm = vperm
        self._rotor_idx = []  # (rotor q, rotor u, canonical q, canonical v) of each rotor
        for rname, slot in rotors:
            self._rotor_idx.append((*self._probe_index(s, coords[rname]),
                                    slot.iq, slot.iv, slot.type))
        self._smap = _StateMap(self)

    def _probe_index(self, s, c) -> tuple:
        """(Simbody q index, u index) of coordinate ``c``: set on a zeroed copy of the
        State ``s``, the one non-zero entry of Q and of U."""
        probe = osim.State(s)
        probe.setQ(osim.Vector(self._nq_o, 0.0))
        probe.setU(osim.Vector(self._nu, 0.0))
        c.setValue(probe, 0.5, False)
        c.setSpeedValue(probe, 0.5)
        return (int(np.flatnonzero(probe.getQ().to_numpy())[0]),
                int(np.flatnonzero(probe.getU().to_numpy())[0]))

    def _R_root(self, q):
        return quat_xyzw_to_matrix(q[self._free.iq + 3:self._free.iq + 7])

    def _P(self, q) -> np.ndarray:
        """(nv, nv) orthogonal map v_o = P v (Simbody u order rows, canonical columns)."""
        return self._smap.native(np.asarray(q, dtype=float))[1].copy()

    def _g(self, q, v, P) -> np.ndarray:
        """(nv,) Simbody u order: Ṗ v (the free root's R_WB (ω_B × v_B) on v_W)."""
        g = np.zeros(self._nu)
        self._smap.native(np.asarray(q, dtype=float))
        d = self._smap.drift(np.asarray(v, dtype=float))
        if d is not None:
            g[d[0]] = d[1]
        return g

    def _q_native(self, q) -> np.ndarray:
        return self._smap.native(np.asarray(q, dtype=float))[0].copy()

    def _q_canonical(self, qo) -> np.ndarray:
        q = np.empty(self.nq)
        for slot, qi, _ in self._slots:
            a = slot.iq
            if slot.type == "free":
                q[a:a + 3] = qo[qi[3:6]]
                q[a + 3:a + 7] = quat_wxyz_to_xyzw(matrix_to_quat_wxyz(_rot_xyz(qo[qi[0:3]])))
            elif slot.type == "ball":
                q[a:a + 4] = quat_wxyz_to_xyzw(matrix_to_quat_wxyz(_rot_xyz(qo[qi])))
            elif slot.type == "continuous":
                q[a], q[a + 1] = math.cos(qo[qi[0]]), math.sin(qo[qi[0]])
            else:
                q[a] = qo[qi[0]]
        return q

    def _set(self, q, v=None, stage="position"):
        """Write (q, v) into the State and realize ``stage``; returns P (or None)."""
        s = self._s
        qo, P = self._smap.native(np.asarray(q, dtype=float))
        s.setQ(osim.Vector.createFromMat(qo))
        P = None if self._simple else P.copy()
        if v is not None:
            v = np.asarray(v, dtype=float)
            s.setU(osim.Vector.createFromMat(self._to_o(v, P)))
        else:
            s.setU(osim.Vector(self._nu, 0.0))
        getattr(self._m, {"position": "realizePosition", "velocity": "realizeVelocity",
                          "dynamics": "realizeDynamics"}[stage])(s)
        return P

    def _to_o(self, x, P):
        """Canonical (nv,) → Simbody u order: P x."""
        if P is not None:
            return P @ x
        out = np.zeros(self._nu)
        out[self._vperm] = x
        for _, ur, _, iv, _ in self._rotor_idx:
            out[ur] = x[iv]
        return out

    def _from_o(self, y, P):
        """Simbody u order (nv,) → canonical: Pᵀ y."""
        return P.T @ y if P is not None else np.asarray(y)[self._vperm]

    def _cols(self, J, P):
        """(…, nv) Simbody columns → canonical columns: J P."""
        return J @ P if P is not None else J[..., self._vperm]

    # ----- forces -------------------------------------------------------------------------
    def _applied(self, with_model_mobility=True):
        """(mobility forces (nu,) Simbody order, body forces) of the model at the realized
        State: gravity (getGravityBodyForces) and every Force's computeForce
        (SpringGeneralizedForce damping) [N, N·m]."""
        s, m = self._s, self._m
        body = m.getGravityBodyForces(s)
        mob = osim.Vector(self._nu, 0.0)
        if with_model_mobility:  # each Force adds its share into both vectors
            if not self._producers_ok:
                raise ModelRejected("opensim", "a force element is not a ForceProducer")
            for f in self._producers:
                f.computeForce(s, body, mob)
        return mob, body

    def _residual(self, mob, body, udot_o) -> np.ndarray:
        """M_o u̇ + C − applied (nu,): calcResidualForceIgnoringConstraints."""
        out = osim.Vector()
        self._mat.calcResidualForceIgnoringConstraints(
            self._s, mob, body, osim.Vector.createFromMat(np.asarray(udot_o, dtype=float)),
            out)
        return out.to_numpy().copy()

    def _M_o(self) -> np.ndarray:
        M = osim.Matrix()
        self._mat.calcM(self._s, M)
        return M.to_numpy().copy()

    # ----- protocol -------------------------------------------------------------------------
    def group_inertias(self) -> dict[str, NDArray[np.float64]]:
        """{joint: (10,) [kg, m, kg·m²]} at neutral: EngineAdapter.group_inertias
        (harness/model/protocol.py)."""
        s = self._s
        self._set(self.layout.neutral())
        spec = self._spec
        out = {}
        for slot in self.layout.slots:
            head = spec.root if slot.type == "free" else next(
                j.child for j in spec.joints if j.name == slot.name)
            members, stack = [], [head]
            while stack:
                b = stack.pop()
                members.append(b)
                stack.extend(j.child for j in spec.children(b) if j.type == "fixed")
            items = []
            for b in members:
                if b not in self._bodies:  # left out of a run of slides: massless
                    continue
                X = self._bodies[b].getTransformInGround(s)
                R, p = _np33(X.R()), _np3(X.p())
                mass, com, Ib = self._body_props(b)
                items.append((mass, p + R @ com, R @ Ib @ R.T))
            out[slot.name] = spatial_inertia_world(*combine_inertias(items))
        return out

    def _body_props(self, name) -> tuple:
        """(mass kg, com (3,) m, inertia about the com (3x3) kg·m², body axes) of a body
        as OpenSim holds it, a point mass lent between a massless body and its donor
        (mass_loans) given back: the pair's mass distribution is the same."""
        body = self._bodies[name]
        mass, com = float(body.getMass()), _np3(body.getMassCenter())
        mom, prod = _np3(body.getInertia().getMoments()), _np3(body.getInertia().getProducts())
        Ib = np.array([[mom[0], prod[0], prod[1]], [prod[0], mom[1], prod[2]],
                       [prod[1], prod[2], mom[2]]])
        for dm, x in self._lent.get(name, ()):
            m1 = mass + dm
            if m1 <= 1e-12 * max(abs(dm), 1e-300):  # the massless body it was
                return 0.0, np.zeros(3), np.zeros((3, 3))
            c1 = (mass * com + dm * x) / m1
            Ib = Ib + mass * _shift(com - c1) + dm * _shift(x - c1)
            mass, com = m1, c1
        return mass, com, 0.5 * (Ib + Ib.T)

    def frame_poses(self, q: NDArray[np.float64], frames: Sequence[str]) -> NDArray[np.float64]:
        """(k, 12): one realizePosition, then getTransformInGround per frame."""
        if self._folded and not self._folded.keys().isdisjoint(frames):
            return np.stack([self._folded_frame(q, None, f) if f in self._folded
                             else self.frame_poses(q, [f])[0] for f in frames])
        self._set(q)
        out = np.empty((len(frames), 12))
        for i, f in enumerate(frames):
            X = self._frames[f][0].getTransformInGround(self._s)
            out[i, :3], out[i, 3:] = _np3(X.p()), _np33(X.R()).reshape(-1)
        return out

    def frame_pose(self, q: NDArray[np.float64], frame: str) -> NDArray[np.float64]:
        """(12,) [m; R_WF row-major] pose of ``frame`` at q (nq,): EngineAdapter.frame_pose
        (harness/model/protocol.py)."""
        return self.frame_poses(q, [frame])[0]

    def _jac_o(self, frame):
        """(6, nu) [v; ω] of a frame's origin, world axes, Simbody columns."""
        _, p_B = self._frames[frame]
        body = self._bodies[frame] if frame in self._bodies else self._body_of(frame)
        J = osim.Matrix()
        self._mat.calcFrameJacobian(self._s, body.getMobilizedBodyIndex(), _vec3(p_B), J)
        J = J.to_numpy()
        return np.vstack([J[3:6], J[0:3]]), body, p_B

    def _folded_frame(self, q, v, frame, jac=False):
        """Pose (12,) [m, row-major R], or J (6, nv) (with the drift J̇v (6,) when ``v`` is
        given) of a frame the model does not hold: a body left out of a run of slides
        (merged_slides) or a frame on one. It is the point of the run's last body T at the
        frame's fixed pose in T (harness/model/joint_chain.py ``folded_frames``) with the
        run's joints below the frame at neutral: getTransformInGround, calcFrameJacobian
        and calcBiasForFrameJacobian at that point, those joints' columns zeroed (the frame
        does not move with them) and their velocities 0."""
        T, X_TF, qi, qv, vi = self._folded[frame]
        q = np.array(q, dtype=float)
        q[qi] = qv
        if v is not None:
            v = np.array(v, dtype=float)
            v[vi] = 0.0
        P = self._set(q, v, "position" if v is None else "velocity")
        body = self._bodies[T]
        X = body.getTransformInGround(self._s)
        R_WT = _np33(X.R())
        if not jac:
            return np.concatenate([_np3(X.p()) + R_WT @ X_TF[:3, 3],
                                   (R_WT @ X_TF[:3, :3]).reshape(-1)])
        Jm = osim.Matrix()
        self._mat.calcFrameJacobian(self._s, body.getMobilizedBodyIndex(),
                                    _vec3(X_TF[:3, 3]), Jm)
        Jm = Jm.to_numpy()
        Jo = np.vstack([Jm[3:6], Jm[0:3]])
        J = self._cols(Jo, P)
        J[:, vi] = 0.0
        if v is None:
            return J
        b = self._mat.calcBiasForFrameJacobian(self._s, body.getMobilizedBodyIndex(),
                                               _vec3(X_TF[:3, 3]))
        a = np.concatenate([_np3(b.get(1)), _np3(b.get(0))])
        if P is not None:
            a = a + Jo @ self._g(q, v, P)
        return J, a

    def _body_of(self, frame):
        f = next(x for x in self._spec.frames if x.name == frame)
        return self._bodies[f.body]

    def frame_jacobians(self, q: NDArray[np.float64], frames: Sequence[str]) -> NDArray[np.float64]:
        """(k, 6, nv): one realizePosition, calcFrameJacobian per frame (columns J_o P)."""
        if self._folded and not self._folded.keys().isdisjoint(frames):
            return np.stack([self._folded_frame(q, None, f, jac=True) if f in self._folded
                             else self.frame_jacobians(q, [f])[0] for f in frames])
        P = self._set(q)
        return np.stack([self._cols(self._jac_o(f)[0], P) for f in frames])

    def frame_jacobian(self, q: NDArray[np.float64], frame: str) -> NDArray[np.float64]:
        """J_WF (6, nv) of ``frame`` at q (nq,): EngineAdapter.frame_jacobian
        (harness/model/protocol.py)."""
        return self.frame_jacobians(q, [frame])[0]

    def mass_matrix(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        """M (nv, nv) [kg, kg·m, kg·m²] at q (nq,): EngineAdapter.mass_matrix
        (harness/model/protocol.py)."""
        P = self._set(q)
        M = self._M_o() + np.diag(self._arm_o)
        return M[np.ix_(self._vperm, self._vperm)] if P is None else P.T @ M @ P

    def bias_forces(self, q: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
        """h (nv,) [N, N·m] at q (nq,), v (nv,): EngineAdapter.bias_forces
        (harness/model/protocol.py)."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        P = self._set(q, v, "dynamics")
        mob, body = self._applied(False)
        for f in self._spring_producers:  # the joint springs' −k (q − q_ref) into mob
            f.computeForce(self._s, body, mob)
        h_o = self._residual(mob, body, np.zeros(self._nu))
        if P is None:
            return h_o[self._vperm]
        return P.T @ (h_o + self._M_o() @ self._g(q, v, P))

    def forward_dynamics(self, q: NDArray[np.float64], v: NDArray[np.float64],
                         tau: NDArray[np.float64]) -> NDArray[np.float64]:
        """v̇ (nv,) [m/s², rad/s²] at q (nq,), v (nv,), τ (nv,): EngineAdapter.forward_dynamics
        (harness/model/protocol.py)."""
        # the per-call path of every rollout: the cached state map, one product per vector,
        # the three input Vectors the only SWIG objects built, the model's forces added
        # into τ_o in place, the free root's drift in scalar arithmetic
        sm, s, m = self._smap, self._s, self._m
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        qo, P = sm.native(q)
        s.setQ(osim.Vector.createFromMat(qo))
        s.setU(osim.Vector.createFromMat(P.dot(v)))
        m.realizeDynamics(s)
        body = m.getGravityBodyForces(s)
        # τ_o, then each Force's computeForce adds its mobility forces (damping) into it
        mob = osim.Vector.createFromMat(P.dot(np.asarray(tau, dtype=float)))
        if self._producers:
            if not self._producers_ok:
                raise ModelRejected("opensim", "a force element is not a ForceProducer")
            for f in self._producers:
                f.computeForce(s, body, mob)
        if self._has_arm:  # (M + A) u̇ = τ_o − residual(u̇ = 0): Simbody has no armature
            r, M, zero = self._r_buf, self._M_buf, self._zero_u
            self._mat.calcResidualForceIgnoringConstraints(s, zero, body, zero, r)
            self._mat.calcM(s, M)
            a_o = np.linalg.solve(M.to_numpy() + self._A_o, mob.to_numpy() - r.to_numpy())
        else:
            self._mat.calcAcceleration(s, mob, body, self._udot, self._A_GB)
            a_o = self._udot.to_numpy()
        a = a_o.dot(sm.P_out)
        if sm.free is not None:  # v̇ = Pᵀ (u̇ − g) = Pᵀ u̇ − c, c = ω_B × v_B on the root's v_B
            i = sm.free_u[1]
            v0, v1, v2, w0, w1, w2 = v[i:i + 6].tolist()
            a[i] -= w1 * v2 - w2 * v1
            a[i + 1] -= w2 * v0 - w0 * v2
            a[i + 2] -= w0 * v1 - w1 * v0
        return a

    def inverse_dynamics(self, q: NDArray[np.float64], v: NDArray[np.float64],
                         vdot: NDArray[np.float64]) -> NDArray[np.float64]:
        """τ (nv,) [N, N·m] at q (nq,), v (nv,), v̇ (nv,): EngineAdapter.inverse_dynamics
        (harness/model/protocol.py)."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        P = self._set(q, v, "dynamics")
        mob, body = self._applied()
        a_o = self._to_o(np.asarray(vdot, dtype=float), P)
        if P is not None:
            a_o = a_o + self._g(q, v, P)
        tau_o = self._residual(mob, body, a_o) + self._arm_o * a_o
        return self._from_o(tau_o, P)

    def integrate(self, q: NDArray[np.float64], v: NDArray[np.float64],
                  dt: float) -> NDArray[np.float64]:
        """q (nq,) after constant v (nv,) for dt [s]: EngineAdapter.integrate
        (harness/model/protocol.py)."""
        return canonical_integrate(self.layout, np.asarray(q, dtype=float),
                                   np.asarray(v, dtype=float), float(dt))

    # ----- native contact (harness/stages/contact/native.py) ---------------------------------
    NATIVE_CONTACT_VARIANTS = (("smooth Hertz E 1e6", {}),
                               ("smooth Hertz E 1e7", {"stiffness": 1e7}))
    NATIVE_CONTACT_DEFAULTS = {"stiffness": 1e6, "dissipation": 2.0, "mu": 0.6,
                               "viscous_friction": 0.0, "transition_velocity": 0.05,
                               "point_radius": 1e-3, "dt": 1e-3, "accuracy": 1e-7}

    def native_contact_statement(self, settings: dict | None = None) -> tuple:
        """(settings, one-line statement) of ``native_contact``: SmoothSphereHalfSpaceForce
        parameters (stiffness [N/m²], dissipation [s/m], mu, viscous_friction [N·s/m],
        transition_velocity [m/s]), the sphere radius standing for a contact point [m],
        the sampling step dt [s] and the integrator accuracy."""
        s = dict(self.NATIVE_CONTACT_DEFAULTS)
        s.update(settings or {})
        if set(s) != set(self.NATIVE_CONTACT_DEFAULTS):
            raise ValueError(f"opensim native contact settings: "
                             f"{sorted(self.NATIVE_CONTACT_DEFAULTS)}, got {sorted(s)}")
        return s, (f"OpenSim SmoothSphereHalfSpaceForce (smoothed Hertz normal force with "
                   f"Hunt–Crossley dissipation, smoothed Coulomb friction plus viscous "
                   f"friction): stiffness {s['stiffness']:g} N/m², dissipation "
                   f"{s['dissipation']:g} s/m, μ static = dynamic = {s['mu']:g}, viscous "
                   f"{s['viscous_friction']:g} N·s/m, transition velocity "
                   f"{s['transition_velocity']:g} m/s, OpenSim's default smoothing; declared "
                   f"spheres as ContactSpheres, each contact point a sphere of radius "
                   f"{s['point_radius']:g} m centred on it, the plane a ContactHalfSpace; "
                   f"Manager RungeKuttaMerson (accuracy {s['accuracy']:g}), samples every "
                   f"{s['dt']:g} s; force_W sampled every dt, linear in between, on a "
                   f"PrescribedForce at the body origin")

    def _add_contact(self, scene, s, force_fn):
        """Before initSystem: the contact elements of ``native_contact`` and the pushing
        PrescribedForce (world-frame force at the body origin, ``force_fn`` per axis)."""
        m = self._m
        ground = m.getGround()
        hs = osim.ContactHalfSpace(osim.Vec3(0.0, 0.0, float(scene.plane.offset)),
                                   osim.Vec3(0.0, math.pi / 2, 0.0), ground, "plane")
        m.addContactGeometry(hs)  # OpenSim's half-space is x > 0: Ry(π/2) turns −x to +z
        frames = {f.name: f for f in self._spec.frames}
        for i, g in enumerate(scene.geometry):
            f = frames.get(g.frame)
            body = m.getBodySet().get(self._on(f.body if f is not None else g.frame))
            loc = f.xyz if f is not None else (0.0, 0.0, 0.0)
            r = g.radius if isinstance(g, Sphere) else s["point_radius"]
            sph = osim.ContactSphere(float(r), _vec3(loc), body, f"contact_{i}")
            m.addContactGeometry(sph)
            force = osim.SmoothSphereHalfSpaceForce(f"contact_force_{i}", sph, hs)
            force.set_stiffness(float(s["stiffness"]))
            force.set_dissipation(float(s["dissipation"]))
            force.set_static_friction(float(s["mu"]))
            force.set_dynamic_friction(float(s["mu"]))
            force.set_viscous_friction(float(s["viscous_friction"]))
            force.set_transition_velocity(float(s["transition_velocity"]))
            m.addForce(force)
        push = osim.PrescribedForce("push", m.getBodySet().get(self._on(self._spec.root)))
        push.setForceIsInGlobalFrame(True)
        push.setPointIsInGlobalFrame(False)
        push.setForceFunctions(*force_fn)
        push.setPointFunctions(osim.Constant(0.0), osim.Constant(0.0), osim.Constant(0.0))
        m.addForce(push)

    def native_contact(self, scene: ContactScene, q0: NDArray[np.float64], v0: NDArray[np.float64],
                       t_end: float, force_W: Callable[[float], NDArray[np.float64]],
                       settings: dict | None = None) -> dict:
        """{"t" (N,) [s], "q" (N, 7), "v" (N, 6), …}: OpenSim's own contact on the declared
        geometry (one floating body): Manager from
        canonical (q0 (7,), v0 (6,)) over [0, t_end] [s], a sample every dt; force_W(t) →
        (3,) [N] at the body origin. {"t" (N,), "q" (N, 7), "v" (N, 6), "settings",
        "statement"}."""
        s, statement = self.native_contact_statement(settings)
        if tuple(scene.plane.normal) != (0.0, 0.0, 1.0):
            raise ValueError("opensim native contact: plane normal must be +z")
        n = int(round(t_end / s["dt"]))
        T = np.arange(n + 1) * s["dt"]
        F = np.array([np.asarray(force_W(tt), dtype=float) for tt in T])
        fns = []
        for axis in range(3):
            fn = osim.PiecewiseLinearFunction()
            for tt, y in zip(T, F[:, axis]):
                fn.addPoint(float(tt), float(y))
            fns.append(fn)
        h = type(self)(self.model, _spec=self._spec,
                       _extra=lambda a: a._add_contact(scene, s, fns))
        q0, v0 = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)
        st = osim.State(h._s)
        st.setQ(osim.Vector.createFromMat(h._q_native(q0)))
        st.setU(osim.Vector.createFromMat(h._to_o(v0, h._P(q0))))
        st.setTime(0.0)
        mgr = osim.Manager(h._m)
        mgr.setIntegratorMethod(osim.Manager.IntegratorMethod_RungeKuttaMerson)
        mgr.setIntegratorAccuracy(float(s["accuracy"]))
        mgr.initialize(st)
        Q, V = np.empty((n + 1, 7)), np.empty((n + 1, 6))
        Q[0], V[0] = q0, v0
        for k in range(1, n + 1):
            cur = mgr.integrate(float(T[k]))
            Q[k] = q = h._q_canonical(cur.getQ().to_numpy())
            V[k] = h._P(q).T @ cur.getU().to_numpy()
        return {"t": T, "q": Q, "v": V, "settings": s, "statement": statement}

    # ----- dynamics derivatives (stage 6) --------------------------------------------------
    FD_STEP = 1e-6  # [rad, m, rad/s, m/s] central-difference step (as MuJoCo's MJD_EPS)

    def inverse_dynamics_derivatives(
            self, q: NDArray[np.float64], v: NDArray[np.float64], vdot: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇), each (nv, nv), canonical: central differences of
        inverse_dynamics with step FD_STEP, ∂/∂q along q ⊕ (±h e_i) (canonical
        integrate); ∂τ/∂v̇ = mass_matrix (exact: τ is affine in v̇)."""
        q, v, vdot = (np.asarray(x, dtype=float) for x in (q, v, vdot))
        h, n = self.FD_STEP, self.nv
        dq, dv = np.empty((n, n)), np.empty((n, n))
        for i in range(n):
            e = np.zeros(n)
            e[i] = h
            dq[:, i] = (self.inverse_dynamics(self.integrate(q, e, 1.0), v, vdot)
                        - self.inverse_dynamics(self.integrate(q, -e, 1.0), v, vdot)) / (2 * h)
            dv[:, i] = (self.inverse_dynamics(q, v + e, vdot)
                        - self.inverse_dynamics(q, v - e, vdot)) / (2 * h)
        return dq, dv, self.mass_matrix(q)

    def forward_dynamics_derivatives(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """(∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ), each (nv, nv), canonical: implicit-function theorem on
        inverse_dynamics_derivatives at v̇ = forward_dynamics(q, v, τ)."""
        vdot = self.forward_dynamics(q, v, tau)
        dq, dv, _ = self.inverse_dynamics_derivatives(q, v, vdot)
        return implicit_forward(dq, dv, self.mass_matrix(q))

    # ----- read-back (stage 0, diagnosis) ---------------------------------------------------
    @classmethod
    def as_is_joints(cls, model: PreparedModel) -> list:
        """NotProvided: OpenSim has no URDF or MJCF reader of its own."""
        raise NotProvided(cls.name, "as-is loading", _AS_IS_WHY)

    def readback(self) -> dict:
        """The opensim.Model as Simbody holds it at the canonical neutral q (format:
        harness/stages/diagnosis/__init__.py)."""
        s = self._s
        self._set(self.layout.neutral())
        bodies = {}
        for name, body in self._bodies.items():
            if not hasattr(body, "getMass"):
                continue  # Ground (a fixed root named "ground"): not a body in OpenSim
            X = body.getTransformInGround(s)
            R, p = _np33(X.R()), _np3(X.p())
            mass, com, Ib = self._body_props(name)
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = R, p
            bodies[name] = {"mass": float(mass), "com_W": p + R @ com, "I_W": R @ Ib @ R.T,
                            "X_WB": T}
        for c in (b.name for b in self._spec.bodies if b.name in self._folded):
            bodies[c] = {"mass": 0.0, "com_W": self._folded_X(c)[:3, 3],
                         "I_W": np.zeros((3, 3)), "X_WB": self._folded_X(c)}
        damping, springs = {}, {}
        for f in self._m.getForceSet():
            sg = osim.SpringGeneralizedForce.safeDownCast(f)
            if sg is not None:
                c = sg.get_coordinate()
                damping[c] = damping.get(c, 0.0) + float(sg.getViscosity())
                if sg.getStiffness():
                    springs[c] = (float(sg.getStiffness()), float(sg.getRestLength()))
        joints = {}
        jset = {j.getName(): j for j in self._m.getJointSet()}
        for slot, qi, ui in self._slots:
            if slot.name in self._slides:
                joints[slot.name] = self._slide_readback(slot, springs, damping, int(qi[0]))
                continue
            j = jset[self._on(slot.name)]
            Xc = j.getChildFrame().getTransformInGround(s)
            Rc = _np33(Xc.R())
            child = j.getChildFrame().findBaseFrame()
            Xb = child.getTransformInGround(s)
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = _np33(Xb.R()), _np3(Xb.p())
            if slot.type == "free":
                kind, axis = "free", np.zeros(3)
                native = ("X-Y-Z body-fixed angles, p_WB", "ω_W, v_W (world axes)")
                cname = None
            elif slot.type == "ball":
                kind, axis = "ball", np.zeros(3)
                native = ("X-Y-Z body-fixed angles", "w_FM in the parent's joint frame F")
                cname = f"{self._on(slot.name)}_x"
            else:
                kind = slot.type
                axis = Rc[:, 0] if kind == "prismatic" else Rc[:, 2]
                native = ("x", "ẋ") if kind == "prismatic" else ("θ", "θ̇")
                cname = self._on(slot.name)
            lo = hi = None
            js = next((x for x in self._spec.joints if x.name == slot.name), None)
            if js is not None and js.lower is not None:
                c = self._m.getCoordinateSet().get(cname)
                lo, hi = float(c.getRangeMin()), float(c.getRangeMax())
            dmp = damping.get(cname, 0.0) if cname else 0.0
            joints[slot.name] = {
                "type": kind, "body": self._back(child.getName()), "axis_W": np.asarray(axis),
                "X_WJ": T, "lower": lo, "upper": hi, "limit_enforced": False,
                "damping": dmp, "damping_applied": dmp, "friction": 0.0,
                "friction_applied": 0.0,
                "armature": float(self._arm[slot.iv]) if kind != "free" else 0.0,
                "stiffness_applied": springs.get(cname, (0.0, 0.0))[0],
                "spring_ref": springs.get(cname, (0.0, 0.0))[1],
                "native_q": native[0], "native_v": native[1], "native_index": int(qi[0])}
        return {"engine": self.name, "api": "opensim.Model after initSystem: Body mass, "
                "mass center, inertia, getTransformInGround, joint child frames, coordinate "
                "ranges, SpringGeneralizedForce viscosity, stiffness and rest length; armature "
                "kept by the adapter",
                "bodies": bodies, "joints": joints, "couplings": {},
                "nq_native": int(self._nq_o), "nv_native": int(self._nu), "notes": []}

    def _folded_X(self, name: str) -> np.ndarray:
        """X_WC (4, 4) [m] at the canonical neutral of a body left out of a run of slides."""
        F = self._folded_frame(self.layout.neutral(), None, name)
        X = np.eye(4)
        X[:3, :3], X[:3, 3] = F[3:].reshape(3, 3), F[:3]
        return X

    def _slide_readback(self, slot, springs: dict, damping: dict, index: int) -> dict:
        """Read-back of one joint of a run of slides held as one CustomJoint (at the
        canonical neutral, realized): its axis is the CustomJoint's translation axis in
        ground (parent frame F's rotation times TransformAxis.getAxis), its frame the
        canonical child body's (held, or a point of the run's last body)."""
        run, k = self._slides[slot.name]
        c = self._m.getCoordinateSet().get(self._on(slot.name))
        cj = osim.CustomJoint.safeDownCast(c.getJoint())
        R_WF = _np33(cj.getParentFrame().getTransformInGround(self._s).R())
        axis = R_WF @ _np3(cj.getSpatialTransform().getTransformAxis(3 + k).getAxis())
        child = self._spec_child(slot.name)
        if child in self._folded:
            T = self._folded_X(child)
        else:
            Xb = self._bodies[child].getTransformInGround(self._s)
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = _np33(Xb.R()), _np3(Xb.p())
        cname = c.getName()
        js = next(x for x in self._spec.joints if x.name == slot.name)
        lo, hi = ((float(c.getRangeMin()), float(c.getRangeMax())) if js.lower is not None
                  else (None, None))
        dmp = damping.get(cname, 0.0)
        return {"type": "prismatic", "body": child, "axis_W": axis, "X_WJ": T,
                "lower": lo, "upper": hi, "limit_enforced": False, "damping": dmp,
                "damping_applied": dmp, "friction": 0.0, "friction_applied": 0.0,
                "armature": float(self._arm[slot.iv]),
                "stiffness_applied": springs.get(cname, (0.0, 0.0))[0],
                "spring_ref": springs.get(cname, (0.0, 0.0))[1],
                "native_q": "x", "native_v": "ẋ", "native_index": index}

    def _spec_child(self, joint: str) -> str:
        return next(j.child for j in self._spec.joints if j.name == joint)

    def ablated(self, changes: dict) -> OpensimAdapter:
        """A new adapter with ``damping=0`` (no SpringGeneralizedForce), ``armature=0``
        or ``inertials={body: (m, com_W, I_W) at the canonical neutral}`` (the bodies'
        mass properties); OpenSim applies no friction, limits or couplings here, so
        removing them changes nothing."""
        unknown = set(changes) - {"damping", "armature", "friction", "limits", "couplings",
                                  "inertials"}
        if unknown:
            raise ValueError(f"opensim: cannot ablate {sorted(unknown)}")
        spec = self._spec
        if "damping" in changes:
            spec = replace(spec, joints=tuple(replace(j, damping=0.0) for j in spec.joints))
        if changes.get("inertials"):
            poses = PreparedModel(spec, "ablation").body_poses_at_neutral()
            bodies = []
            for b in spec.bodies:
                if b.name in changes["inertials"]:
                    m_, c, I = changes["inertials"][b.name]
                    p, R = poses[b.name]
                    Ib = R.T @ np.asarray(I, dtype=float) @ R if m_ > 0 else np.zeros((3, 3))
                    com = R.T @ (np.asarray(c, dtype=float) - p) if m_ > 0 else np.zeros(3)
                    b = replace(b, mass=float(m_), com=tuple(com),
                                inertia=tuple(0.5 * (Ib + Ib.T).reshape(-1)))
                bodies.append(b)
            spec = replace(spec, bodies=tuple(bodies))
        return type(self)(self.model, _spec=spec,
                          _armature=self._use_armature and "armature" not in changes)

    def naive_dynamics(
            self, q: NDArray[np.float64], v: NDArray[np.float64], tau: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
        """(M (nv, nv) [kg, kg·m, kg·m²], v̇ (nv,) [m/s², rad/s²]) with the canonical arrays handed
        to Simbody unconverted (its q, u and mobility forces in its own order); None if its
        nq/nu differ."""
        if (self._nq_o, self._nu) != (len(q), len(v)):
            return None
        s = self._s
        s.setQ(osim.Vector.createFromMat(np.asarray(q, dtype=float)))
        s.setU(osim.Vector.createFromMat(np.asarray(v, dtype=float)))
        self._m.realizeDynamics(s)
        mob, body = self._applied()
        f = osim.Vector.createFromMat(mob.to_numpy() + np.asarray(tau, dtype=float))
        udot, A_GB = osim.Vector(), osim.VectorOfSpatialVec()
        self._mat.calcAcceleration(s, f, body, udot, A_GB)
        return self._M_o(), udot.to_numpy().copy()

    # ----- constrained dynamics (stage 3) ----------------------------------------------------
    def frame_jacobian_drift(
            self, q: NDArray[np.float64], v: NDArray[np.float64], frames: Sequence[str]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(J (k, 6, nv), a (k, 6)) of k frames at (q, v): calcFrameJacobian and
        calcBiasForFrameJacobian (J̇_o u, [angular; linear] in Simbody), world axes; the
        free root's Ṗ v enters as J_o g."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        if self._folded and not self._folded.keys().isdisjoint(frames):
            parts = [self._folded_frame(q, v, f, jac=True) if f in self._folded else
                     tuple(x[0] for x in self.frame_jacobian_drift(q, v, [f])) for f in frames]
            return np.stack([J for J, _ in parts]), np.stack([a for _, a in parts])
        P = self._set(q, v, "velocity")
        g = self._g(q, v, P) if P is not None else None
        J = np.empty((len(frames), 6, self.nv))
        a = np.empty((len(frames), 6))
        for i, f in enumerate(frames):
            Jo, body, p_B = self._jac_o(f)
            b = self._mat.calcBiasForFrameJacobian(self._s, body.getMobilizedBodyIndex(),
                                                   _vec3(p_B))
            a[i, :3], a[i, 3:] = _np3(b.get(1)), _np3(b.get(0))
            if g is not None:
                a[i] += Jo @ g
            J[i] = self._cols(Jo, P)
        return J, a

    def _add_actuators(self, how):
        """Before initSystem: a CoordinateActuator (optimal force 1, unbounded control) on
        every coordinate of a moving joint, in canonical dof order, and for ``how ==
        "controller"`` a PrescribedController driving them plus a PrescribedForce on the
        free root's body (force and torque in the body frame at its origin)."""
        m = self._m
        names = []
        for s in self.layout.slots:
            if s.type == "free":
                continue
            on = self._on(s.name)
            coords = [on] if s.nv == 1 else [f"{on}_{a}" for a in "xyz"]
            for c in coords:
                a = osim.CoordinateActuator(c)
                a.setName(f"{c}__tau")
                a.setOptimalForce(1.0)
                a.setMinControl(-math.inf)
                a.setMaxControl(math.inf)
                m.addForce(a)
                names.append(a.getName())
        self._actuators = names
        if how == "controller":
            self._add_rotors()
            ctrl = osim.PrescribedController()
            ctrl.setName("canonical_tau")
            for n in names:
                ctrl.addActuator(osim.CoordinateActuator.safeDownCast(
                    m.getForceSet().get(n)))
                ctrl.prescribeControlForActuator(n, osim.Constant(0.0))
            m.addController(ctrl)
            self._controller = ctrl
            self._wrench = None
            if self._spec.floating:
                w = osim.PrescribedForce("root_wrench",
                                         m.getBodySet().get(self._on(self._spec.root)))
                w.setForceIsInGlobalFrame(False)
                w.setPointIsInGlobalFrame(False)
                w.setForceFunctions(osim.Constant(0.0), osim.Constant(0.0), osim.Constant(0.0))
                w.setTorqueFunctions(osim.Constant(0.0), osim.Constant(0.0),
                                     osim.Constant(0.0))
                w.setPointFunctions(osim.Constant(0.0), osim.Constant(0.0), osim.Constant(0.0))
                m.addForce(w)
                self._wrench = w

    def _add_rotors(self):
        """Armature in a model Simbody integrates itself: for each one-dof joint with
        armature a, a rotor pinned to the ground (inertia a I₃ about its fixed centre of mass
        on a PinJoint; for a slide, a body of mass a on a SliderJoint perpendicular to gravity)
        whose coordinate a CoordinateCouplerConstraint holds equal to the joint's. Its
        kinetic energy is ½ a q̇² and it has no potential energy, so the constrained
        system's equations are (M + a eeᵀ) v̇ = …: the canonical armature exactly."""
        m, ground = self._m, self._m.getGround()
        zero = osim.Vec3(0.0, 0.0, 0.0)
        g = np.asarray(self._spec.gravity, dtype=float)
        self._rotors = []
        for s in self.layout.slots:
            if s.type in ("free", "ball") or not (self._use_armature and s.armature > 0):
                continue
            a = float(s.armature)
            on = self._on(s.name)  # the joint's (and its coordinate's) name in the model
            if s.type == "prismatic":
                d = np.cross(g, [1.0, 0.0, 0.0]) if np.linalg.norm(g) > 0 else np.eye(3)[0]
                if np.linalg.norm(d) < 1e-9 * max(1.0, np.linalg.norm(g)):
                    d = np.cross(g, [0.0, 1.0, 0.0])
                body = osim.Body(f"{on}__rotor", a, zero, osim.Inertia(0.0, 0.0, 0.0))
                A = _vec3(xyz_body_fixed(_align(d, 0)))
                joint = osim.SliderJoint(f"{on}__rotor_joint", ground, zero, A, body,
                                         zero, A)
            else:
                # mass 1 kg at the pin's origin: it never moves (OpenSim refuses a
                # massless body at the end of a chain), so only the spin inertia counts
                body = osim.Body(f"{on}__rotor", 1.0, zero, osim.Inertia(a, a, a))
                joint = osim.PinJoint(f"{on}__rotor_joint", ground, zero, zero, body,
                                      zero, zero)
            m.addBody(body)
            m.addJoint(joint)
            rname = f"{on}__rotor"
            joint.upd_coordinates(0).setName(rname)
            joint.upd_coordinates(0).setRangeMin(-1e6)
            joint.upd_coordinates(0).setRangeMax(1e6)
            cc = osim.CoordinateCouplerConstraint()
            cc.setName(f"{on}__rotor_coupler")
            names = osim.ArrayStr()
            names.append(on)
            cc.setIndependentCoordinateNames(names)
            cc.setDependentCoordinateName(rname)
            cc.setFunction(osim.LinearFunction(1.0, 0.0))
            m.addConstraint(cc)
            self._rotors.append((rname, s))

    def _helper(self, kind: str):
        """The constrained (``"constrained"``: loop constraints, actuators driven by
        setControls) or driven (``"driven"``: PrescribedController) twin, built once."""
        cache = self.__dict__.setdefault("_helpers", {})
        if kind not in cache:
            cache[kind] = type(self)(self.model, _spec=self._spec,
                                     _armature=self._use_armature,
                                     _constraints=kind == "constrained",
                                     _actuated="controls" if kind == "constrained"
                                     else "controller")
        return cache[kind]

    # ----- engine-native stepping (replay, stage 5) -------------------------------------------
    _INTEGRATORS = ("RungeKuttaMerson", "RungeKuttaFeldberg", "RungeKutta3", "RungeKutta2",
                    "SemiExplicitEuler2", "Verlet", "CPodes")

    _FIXED = {"Euler": "ExplicitEuler", "ExplicitEuler": "ExplicitEuler",
              "RungeKutta2": "RungeKutta2", "RungeKutta3": "RungeKutta3",
              "RungeKuttaMerson": "RungeKuttaMerson"}

    def native_describe(self, settings: dict | None = None) -> tuple[dict, str]:
        """(settings, one-line statement) of ``native_rollout``: ``integrator`` (an OpenSim
        Manager IntegratorMethod) with ``accuracy`` (error-controlled) or with ``dt`` [s]
        (fixed-step mode: ceil(interval / dt) equal steps per grid interval; "Euler" is
        ExplicitEuler)."""
        s = dict(settings) if settings else {"integrator": "RungeKuttaMerson",
                                             "accuracy": 1e-10}
        fixed = "dt" in s
        ok = (set(s) == {"integrator", "dt"} and s["integrator"] in self._FIXED
              and float(s["dt"]) > 0) if fixed else (
            set(s) == {"integrator", "accuracy"} and s["integrator"] in self._INTEGRATORS
            and float(s["accuracy"]) > 0)
        if not ok:
            raise ValueError(f"opensim native settings: integrator one of "
                             f"{list(self._INTEGRATORS)} with accuracy > 0, or one of "
                             f"{list(self._FIXED)} with dt > 0; got {s}")
        arm = (" Armature: per one-dof joint a rotor pinned to the ground (inertia a, or mass "
               "a on a slide perpendicular to gravity) held to the joint by a "
               "CoordinateCouplerConstraint (ratio 1): kinetic energy ½ a q̇², the canonical "
               "armature, integrated by Simbody with constraint projection."
               if self._has_arm else "")
        how = (f"fixed-step mode, step = each grid interval / ceil(interval / "
               f"{float(s['dt']):g} s)" if fixed else
               f"error-controlled (accuracy {float(s['accuracy']):g})")
        method = self._FIXED[s["integrator"]] if fixed else s["integrator"]
        return s, (f"OpenSim Manager, IntegratorMethod {method}, {how}, constraint tolerance "
                   "1e-12, one Manager.integrate per grid interval from the state it "
                   "reached; τ of "
                   "interval k as polynomials of time (degree ≤ 3, fitted to the interpolant "
                   "at 4 Chebyshev points and checked at 3 more) in a PrescribedController on "
                   "CoordinateActuators (one-dof joints) and a PrescribedForce on the free "
                   "root's body (force and torque in the body frame at its origin: the "
                   "canonical body wrench); joint damping by the model's "
                   "SpringGeneralizedForce; q in Simbody's Euler-angle coordinates." + arm)

    @staticmethod
    def _segment_poly(controls, k, t0, t1):
        """(nv, 4) coefficients (highest power first, in absolute time t [s]) of the
        interpolant of grid interval k, exact for polynomials of degree ≤ 3; ValueError
        if the interpolant is not one."""
        x = 0.5 - 0.5 * np.cos(np.pi * (np.arange(4) + 0.5) / 4)  # Chebyshev in [0, 1]
        ts = t0 + (t1 - t0) * x
        Y = np.array([np.asarray(controls(k, tt), dtype=float) for tt in ts])
        V = np.vander(ts - t0, 4)  # local powers, highest first
        c_local = np.linalg.solve(V, Y)  # (4, nv)
        chk = t0 + (t1 - t0) * np.array([0.0, 0.37, 1.0])
        Yc = np.array([np.asarray(controls(k, tt), dtype=float) for tt in chk])
        if np.abs(np.vander(chk - t0, 4) @ c_local - Yc).max() > 1e-10 * (1 + np.abs(Yc).max()):
            raise ValueError("opensim native rollout: controls of interval "
                             f"{k} are not a polynomial of degree ≤ 3")
        # expand Σ c_i (t − t0)^(3−i) into powers of t
        out = np.zeros((Y.shape[1], 4))
        for i in range(4):
            p = np.poly1d([1.0, -t0]) ** (3 - i)
            out[:, 4 - len(p.coeffs):] += np.outer(c_local[i], p.coeffs)
        return out

    def native_rollout(
            self, q0: NDArray[np.float64], v0: NDArray[np.float64], t: NDArray[np.float64],
            controls: Callable[[int, float], NDArray[np.float64]], settings: dict | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(Q (N, nq), V (N, nv)) on the knots t (N,) [s] from OpenSim's Manager.

        controls(k, t) → τ (nv,) canonical, the interpolant of grid interval k (a polynomial
        of degree ≤ 3 in t: zoh, linear and cubic controls)."""
        if self._balls:
            raise NotProvided(self.name, "native rollout", "ball joints: a CoordinateActuator "
                              "applies τ_o = R_FM τ only frozen in q")
        s, _ = self.native_describe(settings)
        h = self._helper("driven")
        m = h._m
        t = np.asarray(t, dtype=float)
        q0, v0 = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)
        st = osim.State(h._s)
        P = h._P(q0) if not h._simple or h._rotor_idx else None
        st.setQ(osim.Vector.createFromMat(h._q_native(q0)))
        st.setU(osim.Vector.createFromMat(h._to_o(v0, P)))
        ctrl = h._controller
        order = h._control_order()
        real = np.ones(h._nu, dtype=bool)
        for _, ur, _, _, _ in h._rotor_idx:
            real[ur] = False
        Q, V = np.empty((t.size, self.nq)), np.empty((t.size, self.nv))
        Q[0], V[0] = q0, v0
        fixed = "dt" in s
        method = getattr(osim.Manager, "IntegratorMethod_" + (
            self._FIXED[s["integrator"]] if fixed else s["integrator"]))
        for k in range(t.size - 1):
            C = self._segment_poly(controls, k, t[k], t[k + 1])
            fn = lambda row: osim.PolynomialFunction(  # noqa: E731
                osim.Vector.createFromMat(np.ascontiguousarray(row)))
            for c, i in enumerate(order):
                ctrl.prescribeControlForActuator(h._actuators[c], fn(C[i]))
            if h._wrench is not None:
                a = self._free.iv
                h._wrench.setForceFunctions(fn(C[a]), fn(C[a + 1]), fn(C[a + 2]))
                h._wrench.setTorqueFunctions(fn(C[a + 3]), fn(C[a + 4]), fn(C[a + 5]))
            mgr = osim.Manager(m)
            mgr.setIntegratorMethod(method)
            if fixed:
                n = max(1, int(np.ceil((t[k + 1] - t[k]) / float(s["dt"]) - 1e-9)))
                mgr.setIntegratorFixedStepSize(float((t[k + 1] - t[k]) / n))
            else:
                mgr.setIntegratorAccuracy(float(s["accuracy"]))
            mgr.setIntegratorConstraintTolerance(1e-12)
            st.setTime(float(t[k]))
            mgr.initialize(st)
            st = osim.State(mgr.integrate(float(t[k + 1])))
            qo, uo = st.getQ().to_numpy(), st.getU().to_numpy()
            Q[k + 1] = q = h._q_canonical(qo)
            Pk = h._P(q)
            V[k + 1] = Pk[real].T @ uo[real]
        return Q, V

    def _control_order(self):
        """(k,) canonical dof index of each actuator's control."""
        return np.array([s.iv + k for s in self.layout.slots if s.type != "free"
                         for k in range(s.nv)], dtype=np.intp)

    def native_constrained_law(self) -> str:
        kinds = ", ".join(sorted({c.kind for c in self._spec.constraints}
                                 | ({"coupling"} if self._spec.couplings else set())))
        coupler = ("coupling: CoordinateCouplerConstraint with a LinearFunction (a SimmSpline "
                   "or PolynomialFunction when non-linear); "
                   if self._spec.couplings else "")
        return ("Simbody constraints built by OpenSim (point: PointConstraint = "
                "Constraint::Ball; weld: WeldConstraint; line: PointOnLineConstraint; "
                f"{coupler}here "
                f"{kinds}) with realizeAcceleration on the State (q, v set directly, τ as "
                "CoordinateActuator controls through Model.setControls, damping by the "
                "model's SpringGeneralizedForce): Simbody's own exact acceleration-level "
                "solve; its multipliers are in Simbody's constraint frames, not compared")

    def native_constrained(self, problem: Any) -> list[dict]:
        """Stage-3 native row: v̇ (N, nv) from Simbody's constrained realizeAcceleration
        (exact: the same acceleration-level equations as the KKT solve)."""
        if self._has_arm:
            raise NotProvided(self.name, "native constrained dynamics", "armature: OpenSim "
                              "has no rotor inertia in its dynamics")
        if self._free is not None:
            raise NotProvided(self.name, "native constrained dynamics", "fixed-base models "
                              "only")
        h = self._helper("constrained")
        order = h._control_order()
        N = problem.Q.shape[0]
        vd = np.empty((N, self.nv))
        for k in range(N):
            q, v = np.asarray(problem.Q[k], dtype=float), np.asarray(problem.V[k], dtype=float)
            P = h._set(q, v, "velocity")
            tau_o = h._to_o(np.asarray(problem.TAU[k], dtype=float), P)  # Simbody u order
            ctrl = tau_o[h._vperm[order]]  # each actuator drives its coordinate's u
            h._m.setControls(h._s, osim.Vector.createFromMat(ctrl))
            h._m.realizeAcceleration(h._s)
            udot = h._s.getUDot().to_numpy().copy()
            vd[k] = udot[h._vperm] if P is None else P.T @ (udot - h._g(q, v, P))
        nearly = problem.nearly_dependent_rows()
        if nearly:  # Simbody keeps every row of its Ball/Weld and decides rank itself
            return [{"solver": "realizeAcceleration", "exact": False, "vdot": vd,
                     "lam": None, "law": self.native_constrained_law() + "; not the same "
                     "equations here: the harness released the nearly (not exactly) "
                     f"dependent row(s) {', '.join(nearly)}, which Simbody's constraint "
                     "keeps, resolving the near-redundancy by its own rank rule"}]
        return [{"solver": "realizeAcceleration", "exact": True, "vdot": vd, "lam": None,
                 "law": self.native_constrained_law()}]

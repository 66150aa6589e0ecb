"""Canonical conventions of the harness: the one place they are declared.

Generalized coordinates follow Pinocchio:

* free root joint ``root_joint``: q = [p_WB (3), quat_WB as x y z w (4)], v = [v_B (3),
  ω_B (3)] — linear then angular velocity of the root body, both in the body frame;
  generalized force τ = [f_B, n_B] in the body frame (dual to v).
* revolute / prismatic: one q [rad | m], one v [rad/s | m/s].
* continuous (unbounded revolute): q = [cos θ, sin θ] (2), v = [θ̇] (1). nq != nv.
* ball (spherical): q = quat_PC as x y z w (4) — the rotation of the child (joint) frame in
  the parent's joint frame, the same layout as the free root's rotation part — and
  v = ω_C (3), the child's angular velocity relative to the parent, in the child frame;
  τ (3) is the torque about the joint in the child frame (dual to v). Damping and
  armature are per-axis scalars: −D ω_C with D = damping · I₃, armature · I₃ on the
  joint's 3x3 diagonal block of M.
* order: the free root first, then the moving joints depth-first in declaration order
  (FixtureSpec.moving_joints). Engines are matched to it by joint *name*.

Dynamics: M(q) v̇ + h(q, v) = τ − D v, where M includes armature on the diagonal, h is the
rigid-body bias (Coriolis, centrifugal and gravity; no damping) plus the joint springs'
K (q − q_ref) (``Layout.spring_force``), D = diag(joint damping).
Forward dynamics returns v̇ for given (q, v, τ); inverse dynamics returns τ for (q, v, v̇).

Frames: X_WF is the pose of frame F in world, reported as p_WF (3) and R_WF (3x3). The
frame Jacobian J_WF (6 x nv) maps v to [linear velocity of F's origin; angular velocity of
F], both expressed in world axes (Pinocchio's LOCAL_WORLD_ALIGNED).

Integration: integrate(q, v, dt) moves q along the constant generalized velocity v for dt;
for the free joint that is the SE(3) exponential of the body twist (Pinocchio's
``integrate``), for a ball joint quat ⊗ exp(ω_C dt), for continuous joints a rotation of
(cos, sin).

Sampled domain of a ball joint (``Layout.random_q``, for every engine alike): uniform on
the unit quaternions whose roll-pitch-yaw angles (R = Rz(yaw) Ry(pitch) Rx(roll)) have
|pitch| ≤ BALL_MAX_PITCH, so that no engine whose ball joint has roll-pitch-yaw
coordinates (singular at pitch ±π/2) is compared near its singularity.

SI units throughout; gravity default (0, 0, -9.81) m/s².
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.spec import FREE_JOINT_NAME, FixtureSpec

# A short vector given as numbers or as a float array (indexed and unpacked as is).
Vec = Sequence[float] | NDArray[np.float64]

NQ = {"free": 7, "revolute": 1, "prismatic": 1, "continuous": 2, "ball": 4}
NV = {"free": 6, "revolute": 1, "prismatic": 1, "continuous": 1, "ball": 3}
# [rad] sampled ball joints keep |pitch| ≤ this (cos ≥ 0.36: a quaternion → roll-pitch-yaw
# conversion, whose pitch error grows as 1/cos(pitch), loses at most a factor 2.8; the rpy
# rate map ω = B ṙpy, det B = cos(pitch), stays invertible); see the module docstring
BALL_MAX_PITCH = 1.2
# Sampling box for coordinates without declared limits.
UNBOUNDED_ANGLE = (-np.pi, np.pi)
UNBOUNDED_PRISMATIC = (-1.0, 1.0)
FREE_POSITION_BOX = (-1.0, 1.0)
# A declared range wider than this [rad | m] is not a physical position limit (exporters
# write 1e16 or 1e308 for "none"): such a joint is sampled in the unbounded box above,
# inside its limits, so that engines are compared at physical positions.
MAX_SAMPLED_SPAN = 1e3


@dataclass(frozen=True)
class JointSlot:
    """One joint's place in canonical q and v: q[iq:iq+nq], v[iv:iv+nv]."""

    name: str
    type: str
    iq: int
    nq: int
    iv: int
    nv: int
    lower: float | None = None
    upper: float | None = None
    damping: float = 0.0
    armature: float = 0.0
    stiffness: float = 0.0
    spring_ref: float = 0.0


@dataclass(frozen=True)
class Layout:
    """Canonical coordinate layout of a model. nq, nv; slots in canonical order."""

    slots: tuple[JointSlot, ...]
    nq: int
    nv: int

    @classmethod
    def from_spec(cls, spec: FixtureSpec) -> "Layout":
        slots: list[JointSlot] = []
        iq, iv = 0, 0
        if spec.floating:
            slots.append(JointSlot(FREE_JOINT_NAME, "free", 0, 7, 0, 6))
            iq, iv = 7, 6
        for j in spec.moving_joints():
            slots.append(JointSlot(j.name, j.type, iq, NQ[j.type], iv, NV[j.type],
                                   j.lower, j.upper, j.damping, j.armature,
                                   j.stiffness, j.spring_ref))
            iq += NQ[j.type]
            iv += NV[j.type]
        return cls(tuple(slots), iq, iv)

    @property
    def joint_names(self) -> list[str]:
        return [s.name for s in self.slots]

    def slot(self, name: str) -> JointSlot:
        for s in self.slots:
            if s.name == name:
                return s
        raise KeyError(name)

    @property
    def damping(self) -> NDArray[np.float64]:
        """D (nv,) [N·s/m | N·m·s/rad]; zeros on the free joint; a ball joint's scalar on
        each of its 3 axes."""
        d = np.zeros(self.nv)
        for s in self.slots:
            if s.type != "free":
                d[s.iv:s.iv + s.nv] = s.damping
        return d

    @property
    def has_springs(self) -> bool:
        return any(s.stiffness for s in self.slots)

    def spring_force(self, q: ArrayLike) -> NDArray[np.float64]:
        """(nv,) [N·m | N]: the joint springs' part of the bias h, +k (q − q_ref) on each
        sprung joint's dof (so that M v̇ + h = τ − D v applies −k (q − q_ref)); zeros
        elsewhere. Springs sit on one-dof joints only (q and v share the slot's index)."""
        q = np.asarray(q, dtype=float)
        f = np.zeros(self.nv)
        for s in self.slots:
            if s.stiffness:
                f[s.iv] = s.stiffness * (q[s.iq] - s.spring_ref)
        return f

    @property
    def stiffness(self) -> NDArray[np.float64]:
        """K (nv,) [N·m/rad | N/m] of the joint springs (∂ spring_force / ∂q)."""
        k = np.zeros(self.nv)
        for s in self.slots:
            if s.type != "free" and s.nv == 1:
                k[s.iv] = s.stiffness
        return k

    @property
    def armature(self) -> NDArray[np.float64]:
        """(nv,) [kg·m² | kg]; zeros on the free joint; a ball joint's on its 3 axes."""
        a = np.zeros(self.nv)
        for s in self.slots:
            if s.type != "free":
                a[s.iv:s.iv + s.nv] = s.armature
        return a

    def sampling_notes(self) -> list[str]:
        """One line stating the sampled domain of the ball joints (empty without any)."""
        balls = [s.name for s in self.slots if s.type == "ball"]
        if not balls:
            return []
        return [f"sampled domain: ball joints ({', '.join(balls)}) are drawn uniformly on the "
                f"unit quaternions with |pitch| <= {BALL_MAX_PITCH:g} rad (roll-pitch-yaw, R "
                "= Rz Ry Rx), in every engine: away from the singularity of roll-pitch-yaw "
                "coordinates at pitch +-pi/2"]

    # ----- states ----------------------------------------------------------------
    def neutral(self) -> NDArray[np.float64]:
        """q at rest: identity root pose, zero angles, (cos, sin) = (1, 0)."""
        q = np.zeros(self.nq)
        for s in self.slots:
            if s.type == "free":
                q[s.iq + 6] = 1.0
            elif s.type == "ball":
                q[s.iq + 3] = 1.0
            elif s.type == "continuous":
                q[s.iq] = 1.0
        return q

    def random_q(self, rng: np.random.Generator) -> NDArray[np.float64]:
        """A valid q: inside limits (or the unbounded sampling box; a range wider than
        MAX_SAMPLED_SPAN is sampled in the box too), unit quaternions (a ball joint's
        uniform on those with |pitch| ≤ BALL_MAX_PITCH, by rejection)."""
        q = np.empty(self.nq)
        for s in self.slots:
            if s.type == "free":
                q[s.iq:s.iq + 3] = rng.uniform(*FREE_POSITION_BOX, size=3)
                quat = rng.normal(size=4)
                q[s.iq + 3:s.iq + 7] = quat / np.linalg.norm(quat)
            elif s.type == "continuous":
                th = rng.uniform(*UNBOUNDED_ANGLE)
                q[s.iq:s.iq + 2] = (np.cos(th), np.sin(th))
            elif s.type == "ball":
                q[s.iq:s.iq + 4] = random_ball_quat(rng)
            else:
                box = UNBOUNDED_ANGLE if s.type == "revolute" else UNBOUNDED_PRISMATIC
                # a spec gives both limits or neither (FixtureSpec.validate)
                lower, upper = cast("tuple[float, float]", (s.lower, s.upper))
                lo, hi = (lower, upper) if s.lower is not None else box
                if not hi - lo <= MAX_SAMPLED_SPAN:  # inf or NaN included
                    lo, hi = max(lo, box[0]), min(hi, box[1])
                    if not lo < hi:  # the box lies outside the limits: a box-wide window
                        lo, hi = (lower, lower + box[1] - box[0]) if lower > box[0] \
                            else (upper - (box[1] - box[0]), upper)
                q[s.iq] = rng.uniform(lo, hi)
        return q

    def check_q(self, q: NDArray[np.float64]) -> None:
        """Raise ValueError if q has the wrong shape, is not finite or not normalised."""
        q = np.asarray(q)
        if q.shape != (self.nq,) or not np.all(np.isfinite(q)):
            raise ValueError(f"q must be {self.nq} finite numbers")
        for s in self.slots:
            if s.type == "free":
                n = np.linalg.norm(q[s.iq + 3:s.iq + 7])
            elif s.type == "ball":
                n = np.linalg.norm(q[s.iq:s.iq + 4])
            elif s.type == "continuous":
                n = np.linalg.norm(q[s.iq:s.iq + 2])
            else:
                continue
            if abs(n - 1.0) > 1e-9:
                raise ValueError(f"joint {s.name}: q block is not unit norm ({n})")

    def free_slot(self) -> JointSlot | None:
        return self.slots[0] if self.slots and self.slots[0].type == "free" else None


def random_ball_quat(rng: np.random.Generator) -> NDArray[np.float64]:
    """(4,) unit quaternion (x, y, z, w), uniform on those with |pitch| ≤ BALL_MAX_PITCH:
    normalised Gaussian 4-vectors (uniform on SO(3)), redrawn while outside (acceptance
    sin(BALL_MAX_PITCH) = 0.93: R[2, 0] is uniform on [−1, 1] for a uniform rotation)."""
    bound = np.sin(BALL_MAX_PITCH)
    while True:
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        x, y, z, w = quat
        if abs(2.0 * (x * z - w * y)) <= bound:
            return quat


# ----- rotation helpers (engine-blind math used by adapters for conversions) -----------
def quat_xyzw_to_wxyz(quat: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.array([quat[3], quat[0], quat[1], quat[2]])


def quat_wxyz_to_xyzw(quat: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.array([quat[1], quat[2], quat[3], quat[0]])


def quat_xyzw_to_matrix(quat: Vec) -> NDArray[np.float64]:
    """Rotation matrix of a quaternion (x, y, z, w); a non-unit quaternion is normalised.
    Scalar arithmetic on purpose: this sits on the adapters' per-call path."""
    if type(quat) is np.ndarray and quat.shape == (4,) and quat.dtype == np.float64:
        x, y, z, w = quat.tolist()  # the same four doubles, one call instead of four
    else:
        x, y, z, w = float(quat[0]), float(quat[1]), float(quat[2]), float(quat[3])
    return np.array(quat_xyzw_rows(x, y, z, w)).reshape(3, 3)


def quat_xyzw_rows(x: float, y: float, z: float, w: float) -> tuple[float, ...]:
    """The 9 entries (row-major) of the rotation matrix of the quaternion (x, y, z, w),
    normalised, as Python floats: the one formula behind quat_xyzw_to_matrix and the
    adapters' per-call paths (which write them into their cached matrices)."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    xs, ys, zs = x * s, y * s, z * s
    wx, wy, wz = w * xs, w * ys, w * zs
    xx, xy, xz = x * xs, x * ys, x * zs
    yy, yz, zz = y * ys, y * zs, z * zs
    return (1.0 - (yy + zz), xy - wz, xz + wy,
            xy + wz, 1.0 - (xx + zz), yz - wx,
            xz - wy, yz + wx, 1.0 - (xx + yy))


def rpy_to_matrix(rpy: Vec) -> NDArray[np.float64]:
    """URDF roll-pitch-yaw [rad] → R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def matrix_to_rpy(R: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse of rpy_to_matrix (pitch in [-π/2, π/2])."""
    sp = -R[2, 0]
    if abs(sp) < 1.0 - 1e-12:
        pitch = np.arcsin(np.clip(sp, -1.0, 1.0))
        roll = np.arctan2(R[2, 1], R[2, 2])
        yaw = np.arctan2(R[1, 0], R[0, 0])
    else:  # gimbal lock: put everything in yaw
        pitch = np.pi / 2 * np.sign(sp)
        roll = 0.0
        yaw = np.arctan2(-R[0, 1], R[1, 1])
    return np.array([roll, pitch, yaw])


def matrix_to_quat_wxyz(R: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotation matrix → unit quaternion (w, x, y, z), w >= 0 (Shepperd's method)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    quat: NDArray[np.float64] = np.array(q)
    quat /= np.linalg.norm(quat)
    return quat if quat[0] >= 0 else -quat


def skew(w: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def se3_left_jacobian(phi: NDArray[np.float64]) -> NDArray[np.float64]:
    """V(φ) (3x3): translation of exp of a constant body twist (v, ω) over unit time is
    R0 · V(ω) · v. Used by adapters whose engine integrates the root position with a
    constant world velocity, to realise the canonical SE(3) integrate exactly."""
    th = float(np.linalg.norm(phi))
    K = skew(phi)
    if th < 1e-6:  # series: error O(th^6)
        a = 0.5 - th * th / 24.0 + th ** 4 / 720.0
        b = 1.0 / 6.0 - th * th / 120.0 + th ** 4 / 5040.0
    else:
        a = (1.0 - np.cos(th)) / (th * th)
        b = (th - np.sin(th)) / th ** 3
    return np.eye(3) + a * K + b * (K @ K)


def root_convective_term(v_root: Vec) -> NDArray[np.float64]:
    """c (6,) = [ω_B × v_B, 0] for the free root's canonical v = [v_B, ω_B].

    An engine whose root velocity is v_o = T v (T orthogonal, e.g. world-frame linear
    velocity) has accelerations a_o = T (a + c); hence M_o = T M Tᵀ, h_o = T (h − M c),
    τ_o = T τ, J_o T = J (docs/conventions.md). Adapters apply these maps; this is the
    one definition of c. (Scalar arithmetic: np.cross costs ~10x more here.)"""
    if type(v_root) is np.ndarray and v_root.shape == (6,) and v_root.dtype == np.float64:
        a0, a1, a2, w0, w1, w2 = v_root.tolist()  # the same six doubles, one call
    else:
        a0, a1, a2 = float(v_root[0]), float(v_root[1]), float(v_root[2])
        w0, w1, w2 = float(v_root[3]), float(v_root[4]), float(v_root[5])
    return np.array([w1 * a2 - w2 * a1, w2 * a0 - w0 * a2, w0 * a1 - w1 * a0, 0.0, 0.0, 0.0])


def subtract_root_convective_term(a: NDArray[np.float64], v_root: Vec) -> None:
    """a[0:3] −= ω_B × v_B in place [m/s²], for a (≥3,) float64 array of root
    accelerations and the root's canonical v = [v_B, ω_B]: the same doubles as
    ``a[0:6] -= root_convective_term(v_root)`` (whose angular entries are zeros, and
    x − 0.0 == x), at a third of the per-call cost."""
    if type(v_root) is np.ndarray and v_root.dtype == np.float64:
        v0, v1, v2, w0, w1, w2 = v_root[0:6].tolist()
    else:
        v0, v1, v2, w0, w1, w2 = (float(x) for x in v_root[0:6])
    x0, x1, x2 = a[0:3].tolist()
    a[0:3] = (x0 - (w1 * v2 - w2 * v1), x1 - (w2 * v0 - w0 * v2), x2 - (w0 * v1 - w1 * v0))


def spatial_inertia_world(mass: float, com_W: Iterable[float],
                          I_com_W: ArrayLike) -> NDArray[np.float64]:
    """Pack mass [kg], com (3,) [m] and rotational inertia about the com in world axes
    (3x3) [kg·m²] into the 10 numbers compared in stage 0: [m, c (3), I (6: xx yy zz xy
    xz yz)]."""
    I = np.asarray(I_com_W)
    return np.array([mass, *com_W, I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def combine_inertias(items: Sequence[tuple[float, ArrayLike, ArrayLike]]
                     ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Sum rigid bodies given as (mass, com_W (3,), I_com_W (3x3)) into one: returns the
    same triple for the union (parallel-axis theorem). Massless union → com 0."""
    m: float = sum(it[0] for it in items)
    # sums of arrays: typed int | array by sum(), arrays here (items are non-empty or the
    # start value is an array)
    if m <= 0:
        return 0.0, np.zeros(3), cast(NDArray[np.float64],
                                      sum((np.asarray(it[2]) for it in items), np.zeros((3, 3))))
    c = cast(NDArray[np.float64], sum(it[0] * np.asarray(it[1]) for it in items) / m)
    I = np.zeros((3, 3))
    for mi, ci, Ii in items:
        d = np.asarray(ci) - c
        I += np.asarray(Ii) + mi * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return m, c, I


# ----- manifold math for integrators and trajectory errors (engine-blind) ----------------
# Added for open-loop replay (harness/model/integrators.py, harness/stages/replay/). The
# canonical ⊕ is Pinocchio's ``integrate``: q ⊕ θ moves every joint along the tangent vector θ (nv,)
# for unit time — SE(3) exponential of the body twist θ = (ρ, φ) on the free root
# (X_new = X · exp(θ)), a rotation of (cos, sin) on continuous joints, addition elsewhere.
_SERIES_ANGLE = 0.05  # [rad] below this, closed forms switch to their Taylor series


@dataclass(frozen=True)
class ManifoldMaps:
    """Index arrays of a Layout for vectorised ⊕ / ⊖. nq, nv canonical.

    flat_q, flat_v: revolute/prismatic coordinates (q[flat_q] ↔ v[flat_v]);
    cont_q, cont_v: continuous joints (q[cont_q] = cos θ, q[cont_q + 1] = sin θ);
    free: (iq, iv) of the free root or None; ball: ((iq, iv), …) of the ball joints
    (q[iq:iq+4] quaternion xyzw, v[iv:iv+3] ω in the child frame)."""

    nq: int
    nv: int
    flat_q: NDArray[np.intp]
    flat_v: NDArray[np.intp]
    cont_q: NDArray[np.intp]
    cont_v: NDArray[np.intp]
    free: tuple[int, int] | None
    ball: tuple[tuple[int, int], ...] = ()


def manifold_maps(layout: Layout) -> ManifoldMaps:
    """The index arrays of ``layout`` used by canonical_integrate / canonical_difference."""
    fq: list[int] = []
    fv: list[int] = []
    cq: list[int] = []
    cv_: list[int] = []
    free: tuple[int, int] | None = None
    ball: list[tuple[int, int]] = []
    for s in layout.slots:
        if s.type == "free":
            free = (s.iq, s.iv)
        elif s.type == "ball":
            ball.append((s.iq, s.iv))
        elif s.type == "continuous":
            cq.append(s.iq)
            cv_.append(s.iv)
        else:
            fq.append(s.iq)
            fv.append(s.iv)
    def arr(x: list[int]) -> NDArray[np.intp]:
        return np.array(x, dtype=np.intp)
    return ManifoldMaps(layout.nq, layout.nv, arr(fq), arr(fv), arr(cq), arr(cv_), free,
                        tuple(ball))


def _maps(layout_or_maps: Layout | ManifoldMaps) -> ManifoldMaps:
    return layout_or_maps if isinstance(layout_or_maps, ManifoldMaps) else \
        manifold_maps(layout_or_maps)


def quat_xyzw_multiply(a: Vec, b: Vec) -> NDArray[np.float64]:
    """Hamilton product a ⊗ b of quaternions (x, y, z, w): R(a ⊗ b) = R(a) R(b)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz])


def quat_xyzw_from_rotvec(phi: ArrayLike) -> NDArray[np.float64]:
    """Unit quaternion (x, y, z, w) of the rotation vector φ (3,) [rad]: exp(φ)."""
    phi = np.asarray(phi, dtype=float)
    th = float(np.linalg.norm(phi))
    if th < 1e-8:  # sin(θ/2)/θ and cos(θ/2) need no series above this (no cancellation)
        s, c = 0.5 - th * th / 48.0, 1.0 - th * th / 8.0
    else:
        s, c = np.sin(0.5 * th) / th, np.cos(0.5 * th)
    return np.array([s * phi[0], s * phi[1], s * phi[2], c])


def so3_log(R: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotation vector φ (3,) [rad], |φ| ≤ π, with exp(φ) = R (via the quaternion, which
    stays accurate near 0 and π)."""
    w, x, y, z = matrix_to_quat_wxyz(np.asarray(R, dtype=float))
    return quat_xyzw_to_rotvec(np.array([x, y, z, w]))


def quat_xyzw_to_rotvec(quat: Vec) -> NDArray[np.float64]:
    """Rotation vector φ (3,) [rad], |φ| ≤ π, of a unit quaternion (x, y, z, w)."""
    x, y, z, w = (float(t) for t in quat)
    if w < 0:
        x, y, z, w = -x, -y, -z, -w
    n = float(np.sqrt(x * x + y * y + z * z))
    if n < 1e-8:
        f = 2.0 / w * (1.0 - n * n / (3.0 * w * w))  # 2 atan2(n, w)/n, series
    else:
        f = 2.0 * np.arctan2(n, w) / n
    return np.array([f * x, f * y, f * z])


def so3_right_jacobian_inv(phi: ArrayLike) -> NDArray[np.float64]:
    """J_r⁻¹(φ) (3x3): φ̇ = J_r⁻¹(φ) ω_B for R(t) = R0 exp(φ(t)) with body angular velocity
    ω_B [rad/s]. J_r⁻¹ = I + ½[φ]× + (1/θ² − (1 + cos θ)/(2 θ sin θ)) [φ]×²; singular at
    θ = 2π (callers keep θ well below π)."""
    phi = np.asarray(phi, dtype=float)
    th = float(np.linalg.norm(phi))
    K = skew(phi)
    if th < _SERIES_ANGLE:
        c = 1.0 / 12.0 + th * th / 720.0 + th ** 4 / 30240.0 + th ** 6 / 1209600.0
    else:
        c = 1.0 / (th * th) - (1.0 + np.cos(th)) / (2.0 * th * np.sin(th))
    return np.eye(3) + 0.5 * K + c * (K @ K)


def _se3_Q(rho: NDArray[np.float64], phi: NDArray[np.float64]) -> NDArray[np.float64]:
    """Barfoot's Q(ρ, φ) (3x3): the upper-right block of the SE(3) left Jacobian of the
    twist ξ = (ρ, φ) (translation first)."""
    th = float(np.linalg.norm(phi))
    P, Rh = skew(phi), skew(rho)
    if th < _SERIES_ANGLE:
        t2 = th * th
        c1 = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0 - t2 ** 3 / 362880.0
        c2 = 1.0 / 24.0 - t2 / 720.0 + t2 * t2 / 40320.0 - t2 ** 3 / 3628800.0
        c3 = 1.0 / 120.0 - t2 / 2520.0 + t2 * t2 / 120960.0 - t2 ** 3 / 9979200.0
    else:
        s, c = np.sin(th), np.cos(th)
        c1 = (th - s) / th ** 3
        c2 = (th * th + 2.0 * c - 2.0) / (2.0 * th ** 4)
        c3 = (2.0 * th - 3.0 * s + th * c) / (2.0 * th ** 5)
    PR, RP = P @ Rh, Rh @ P
    PRP = PR @ P
    return (0.5 * Rh + c1 * (PR + RP + PRP) + c2 * (P @ PR + RP @ P - 3.0 * PRP)
            + c3 * (PRP @ P + P @ PRP))


def se3_right_jacobian_inv(xi: ArrayLike) -> NDArray[np.float64]:
    """J_r⁻¹(ξ) (6x6) of SE(3) for the body twist ξ = (ρ [m], φ [rad]) (Pinocchio's order,
    linear first): ξ̇ = J_r⁻¹(ξ) ν_B for X(t) = X0 exp(ξ(t)) with body twist ν_B =
    (v_B, ω_B). J_r(ξ) = J_l(−ξ) = [[J_r(φ), Q(−ρ, −φ)], [0, J_r(φ)]]."""
    xi = np.asarray(xi, dtype=float)
    Ainv = so3_right_jacobian_inv(xi[3:6])
    Q = _se3_Q(-xi[0:3], -xi[3:6])
    out = np.zeros((6, 6))
    out[0:3, 0:3] = Ainv
    out[3:6, 3:6] = Ainv
    out[0:3, 3:6] = -Ainv @ Q @ Ainv
    return out


def canonical_integrate(layout_or_maps: Layout | ManifoldMaps, q: ArrayLike, v: ArrayLike,
                        dt: float = 1.0) -> NDArray[np.float64]:
    """q ⊕ v·dt (nq,) — the canonical ⊕ (same as every adapter's ``integrate``), engine-
    blind: SE(3) exponential of the body twist on the free root, quat ⊗ exp(ω dt) on a
    ball joint, rotation of (cos, sin) on continuous joints, q + v·dt elsewhere. q (nq,),
    v (nv,) [rad/s, m/s], dt [s]."""
    mp = _maps(layout_or_maps)
    q = np.asarray(q, dtype=float)
    th = np.asarray(v, dtype=float) * dt
    out = q.copy()
    if mp.flat_q.size:
        out[mp.flat_q] = q[mp.flat_q] + th[mp.flat_v]
    if mp.cont_q.size:
        c, s = q[mp.cont_q], q[mp.cont_q + 1]
        a = th[mp.cont_v]
        ca, sa = np.cos(a), np.sin(a)
        out[mp.cont_q], out[mp.cont_q + 1] = c * ca - s * sa, s * ca + c * sa
    if mp.free is not None:
        iq, iv = mp.free
        quat = q[iq + 3:iq + 7]
        rho, phi = th[iv:iv + 3], th[iv + 3:iv + 6]
        out[iq:iq + 3] = q[iq:iq + 3] + quat_xyzw_to_matrix(quat) @ (se3_left_jacobian(phi) @ rho)
        new = quat_xyzw_multiply(quat, quat_xyzw_from_rotvec(phi))
        out[iq + 3:iq + 7] = new / np.linalg.norm(new)
    for iq, iv in mp.ball:
        new = quat_xyzw_multiply(q[iq:iq + 4], quat_xyzw_from_rotvec(th[iv:iv + 3]))
        out[iq:iq + 4] = new / np.linalg.norm(new)
    return out


def canonical_difference(layout_or_maps: Layout | ManifoldMaps, q0: ArrayLike,
                         q1: ArrayLike) -> NDArray[np.float64]:
    """q1 ⊖ q0 (nv,): the tangent vector θ with q0 ⊕ θ = q1 (inverse of canonical_integrate).
    Free root: SE(3) log of X0⁻¹ X1 as (ρ [m], φ [rad]) in q0's body frame; ball: the
    rotation vector of quat0⁻¹ ⊗ quat1 [rad] (|φ| ≤ π) in q0's child frame; continuous:
    wrapped angle difference; elsewhere q1 − q0. This is the per-coordinate error between
    two configurations used by the replay divergence analysis. Without a free root or a
    ball joint, q0 and q1 may also be (N, nq) stacks of configurations: (N, nv)."""
    mp = _maps(layout_or_maps)
    q0 = np.asarray(q0, dtype=float)
    q1 = np.asarray(q1, dtype=float)
    if q0.ndim != 1 and (mp.free is not None or mp.ball):
        raise ValueError("canonical_difference: one configuration at a time with a free "
                         "root or a ball joint")
    out = np.zeros(q0.shape[:-1] + (mp.nv,))
    if mp.flat_q.size:
        out[..., mp.flat_v] = q1[..., mp.flat_q] - q0[..., mp.flat_q]
    if mp.cont_q.size:
        a0 = np.arctan2(q0[..., mp.cont_q + 1], q0[..., mp.cont_q])
        a1 = np.arctan2(q1[..., mp.cont_q + 1], q1[..., mp.cont_q])
        out[..., mp.cont_v] = np.angle(np.exp(1j * (a1 - a0)))
    if mp.free is not None:
        iq, iv = mp.free
        R0 = quat_xyzw_to_matrix(q0[iq + 3:iq + 7])
        qa, qb = q0[iq + 3:iq + 7], q1[iq + 3:iq + 7]
        conj = np.array([-qa[0], -qa[1], -qa[2], qa[3]]) / float(np.dot(qa, qa))
        phi = quat_xyzw_to_rotvec(quat_xyzw_multiply(conj, qb))
        dp = R0.T @ (q1[iq:iq + 3] - q0[iq:iq + 3])
        out[iv:iv + 3] = np.linalg.solve(se3_left_jacobian(phi), dp)
        out[iv + 3:iv + 6] = phi
    for iq, iv in mp.ball:
        qa, qb = q0[iq:iq + 4], q1[iq:iq + 4]
        conj = np.array([-qa[0], -qa[1], -qa[2], qa[3]]) / float(np.dot(qa, qa))
        out[iv:iv + 3] = quat_xyzw_to_rotvec(quat_xyzw_multiply(conj, qb))
    return out


def canonical_dexp_inv(layout_or_maps: Layout | ManifoldMaps, theta: NDArray[np.float64],
                       nu: ArrayLike) -> NDArray[np.float64]:
    """θ̇ (nv,) for q(t) = q0 ⊕ θ(t) moving with generalized velocity ν (nv,) at q(t):
    J_r⁻¹(θ) ν on the free root (SE(3)) and on each ball joint (SO(3)), ν elsewhere (those
    joints are abelian). This is the correction that makes Runge-Kutta stages on the
    manifold keep their order (Munthe-Kaas RKMK)."""
    mp = _maps(layout_or_maps)
    if mp.free is None and not mp.ball:
        return np.asarray(nu, dtype=float).copy()
    out = np.array(nu, dtype=float)
    if mp.free is not None:
        iv = mp.free[1]
        out[iv:iv + 6] = se3_right_jacobian_inv(theta[iv:iv + 6]) @ out[iv:iv + 6]
    for _, iv in mp.ball:
        out[iv:iv + 3] = so3_right_jacobian_inv(theta[iv:iv + 3]) @ out[iv:iv + 3]
    return out

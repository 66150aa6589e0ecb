"""Canonical conventions of the harness: the one place they are declared.

Generalized coordinates follow Pinocchio (shared/DESIGN.md):

* free root joint ``root_joint``: q = [p_WB (3), quat_WB as x y z w (4)], v = [v_B (3),
  ω_B (3)] — linear then angular velocity of the root body, both in the body frame;
  generalized force τ = [f_B, n_B] in the body frame (dual to v).
* revolute / prismatic: one q [rad | m], one v [rad/s | m/s].
* continuous (unbounded revolute): q = [cos θ, sin θ] (2), v = [θ̇] (1). nq != nv.
* order: the free root first, then the moving joints depth-first in declaration order
  (FixtureSpec.moving_joints). Engines are matched to it by joint *name*.

Dynamics: M(q) v̇ + h(q, v) = τ − D v, where M includes armature on the diagonal, h is the
rigid-body bias (Coriolis, centrifugal and gravity; no damping), D = diag(joint damping).
Forward dynamics returns v̇ for given (q, v, τ); inverse dynamics returns τ for (q, v, v̇).

Frames: X_WF is the pose of frame F in world, reported as p_WF (3) and R_WF (3x3). The
frame Jacobian J_WF (6 x nv) maps v to [linear velocity of F's origin; angular velocity of
F], both expressed in world axes (Pinocchio's LOCAL_WORLD_ALIGNED).

Integration: integrate(q, v, dt) moves q along the constant generalized velocity v for dt;
for the free joint that is the SE(3) exponential of the body twist (Pinocchio's
``integrate``), for continuous joints a rotation of (cos, sin).

SI units throughout; gravity default (0, 0, -9.81) m/s².
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fixtures.spec import FREE_JOINT_NAME, FixtureSpec

NQ = {"free": 7, "revolute": 1, "prismatic": 1, "continuous": 2}
NV = {"free": 6, "revolute": 1, "prismatic": 1, "continuous": 1}
# Sampling box for coordinates without declared limits.
UNBOUNDED_ANGLE = (-np.pi, np.pi)
UNBOUNDED_PRISMATIC = (-1.0, 1.0)
FREE_POSITION_BOX = (-1.0, 1.0)


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


@dataclass(frozen=True)
class Layout:
    """Canonical coordinate layout of a model. nq, nv; slots in canonical order."""

    slots: tuple
    nq: int
    nv: int

    @classmethod
    def from_spec(cls, spec: FixtureSpec) -> "Layout":
        slots, iq, iv = [], 0, 0
        if spec.floating:
            slots.append(JointSlot(FREE_JOINT_NAME, "free", 0, 7, 0, 6))
            iq, iv = 7, 6
        for j in spec.moving_joints():
            slots.append(JointSlot(j.name, j.type, iq, NQ[j.type], iv, NV[j.type],
                                   j.lower, j.upper, j.damping, j.armature))
            iq += NQ[j.type]
            iv += NV[j.type]
        return cls(tuple(slots), iq, iv)

    @property
    def joint_names(self) -> list:
        return [s.name for s in self.slots]

    def slot(self, name: str) -> JointSlot:
        for s in self.slots:
            if s.name == name:
                return s
        raise KeyError(name)

    @property
    def damping(self) -> np.ndarray:
        """D (nv,) [N·s/m | N·m·s/rad]; zeros on the free joint."""
        d = np.zeros(self.nv)
        for s in self.slots:
            if s.type != "free":
                d[s.iv] = s.damping
        return d

    @property
    def armature(self) -> np.ndarray:
        a = np.zeros(self.nv)
        for s in self.slots:
            if s.type != "free":
                a[s.iv] = s.armature
        return a

    # ----- states ----------------------------------------------------------------
    def neutral(self) -> np.ndarray:
        """q at rest: identity root pose, zero angles, (cos, sin) = (1, 0)."""
        q = np.zeros(self.nq)
        for s in self.slots:
            if s.type == "free":
                q[s.iq + 6] = 1.0
            elif s.type == "continuous":
                q[s.iq] = 1.0
        return q

    def random_q(self, rng: np.random.Generator) -> np.ndarray:
        """A valid q: inside limits (or the unbounded sampling box), unit quaternion."""
        q = np.empty(self.nq)
        for s in self.slots:
            if s.type == "free":
                q[s.iq:s.iq + 3] = rng.uniform(*FREE_POSITION_BOX, size=3)
                quat = rng.normal(size=4)
                q[s.iq + 3:s.iq + 7] = quat / np.linalg.norm(quat)
            elif s.type == "continuous":
                th = rng.uniform(*UNBOUNDED_ANGLE)
                q[s.iq:s.iq + 2] = (np.cos(th), np.sin(th))
            else:
                lo, hi = (s.lower, s.upper) if s.lower is not None else (
                    UNBOUNDED_ANGLE if s.type == "revolute" else UNBOUNDED_PRISMATIC)
                q[s.iq] = rng.uniform(lo, hi)
        return q

    def check_q(self, q: np.ndarray) -> None:
        """Raise ValueError if q has the wrong shape, is not finite or not normalised."""
        q = np.asarray(q)
        if q.shape != (self.nq,) or not np.all(np.isfinite(q)):
            raise ValueError(f"q must be {self.nq} finite numbers")
        for s in self.slots:
            if s.type == "free":
                n = np.linalg.norm(q[s.iq + 3:s.iq + 7])
            elif s.type == "continuous":
                n = np.linalg.norm(q[s.iq:s.iq + 2])
            else:
                continue
            if abs(n - 1.0) > 1e-9:
                raise ValueError(f"joint {s.name}: q block is not unit norm ({n})")

    def free_slot(self) -> JointSlot | None:
        return self.slots[0] if self.slots and self.slots[0].type == "free" else None


# ----- rotation helpers (engine-blind math used by adapters for conversions) -----------
def quat_xyzw_to_wxyz(quat: np.ndarray) -> np.ndarray:
    return np.array([quat[3], quat[0], quat[1], quat[2]])


def quat_wxyz_to_xyzw(quat: np.ndarray) -> np.ndarray:
    return np.array([quat[1], quat[2], quat[3], quat[0]])


def quat_xyzw_to_matrix(quat) -> np.ndarray:
    """Rotation matrix of a quaternion (x, y, z, w); a non-unit quaternion is normalised.
    Scalar arithmetic on purpose: this sits on the adapters' per-call path."""
    x, y, z, w = float(quat[0]), float(quat[1]), float(quat[2]), float(quat[3])
    s = 2.0 / (x * x + y * y + z * z + w * w)
    xs, ys, zs = x * s, y * s, z * s
    wx, wy, wz = w * xs, w * ys, w * zs
    xx, xy, xz = x * xs, x * ys, x * zs
    yy, yz, zz = y * ys, y * zs, z * zs
    return np.array([[1.0 - (yy + zz), xy - wz, xz + wy],
                     [xy + wz, 1.0 - (xx + zz), yz - wx],
                     [xz - wy, yz + wx, 1.0 - (xx + yy)]])


def rpy_to_matrix(rpy) -> np.ndarray:
    """URDF roll-pitch-yaw [rad] → R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def matrix_to_rpy(R: np.ndarray) -> np.ndarray:
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


def matrix_to_quat_wxyz(R: np.ndarray) -> np.ndarray:
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
    q = np.array(q)
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def se3_left_jacobian(phi: np.ndarray) -> np.ndarray:
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


def root_convective_term(v_root) -> np.ndarray:
    """c (6,) = [ω_B × v_B, 0] for the free root's canonical v = [v_B, ω_B].

    An engine whose root velocity is v_o = T v (T orthogonal, e.g. world-frame linear
    velocity) has accelerations a_o = T (a + c); hence M_o = T M Tᵀ, h_o = T (h − M c),
    τ_o = T τ, J_o T = J (ENGINE_NOTES.md). Adapters apply these maps; this is the
    one definition of c. (Scalar arithmetic: np.cross costs ~10x more here.)"""
    a0, a1, a2 = float(v_root[0]), float(v_root[1]), float(v_root[2])
    w0, w1, w2 = float(v_root[3]), float(v_root[4]), float(v_root[5])
    return np.array([w1 * a2 - w2 * a1, w2 * a0 - w0 * a2, w0 * a1 - w1 * a0, 0.0, 0.0, 0.0])


def spatial_inertia_world(mass, com_W, I_com_W):
    """Pack mass [kg], com (3,) [m] and rotational inertia about the com in world axes
    (3x3) [kg·m²] into the 10 numbers compared in stage 0: [m, c (3), I (6: xx yy zz xy
    xz yz)]."""
    I = np.asarray(I_com_W)
    return np.array([mass, *com_W, I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def combine_inertias(items):
    """Sum rigid bodies given as (mass, com_W (3,), I_com_W (3x3)) into one: returns the
    same triple for the union (parallel-axis theorem). Massless union → com 0."""
    m = sum(it[0] for it in items)
    if m <= 0:
        return 0.0, np.zeros(3), sum((np.asarray(it[2]) for it in items), np.zeros((3, 3)))
    c = sum(it[0] * np.asarray(it[1]) for it in items) / m
    I = np.zeros((3, 3))
    for mi, ci, Ii in items:
        d = np.asarray(ci) - c
        I += np.asarray(Ii) + mi * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return m, c, I

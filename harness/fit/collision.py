"""The ball impact as a collision under a declared law: a golf ball (a uniform-ish sphere of
mass ``BALL_MASS_KG``, radius ``BALL_RADIUS_M``, at rest) struck by the club face of an
articulated body (golfer and club: mass matrix M (nv, nv), the face point's translational
Jacobian J (3, nv)). Used by the swing fit's impact summary (harness/swing/pipeline.py)
and by the synthetic truth (harness/swing/synthetic.py), so both obey one law.

Units: kg, m, s; impulses N·s, velocities m/s, spins rad/s, energies J, angles rad.
Vectors in world axes, (3,).

The law (docs/swing/impact.md, "The collision law"):

* The face's inverse mass W (3, 3) 1/kg at its point: the swing takes the club head on
  its own (``point_inverse_mass``, I/m_head: the head decoupled from the shaft for the
  half millisecond of contact, so the shaft, hands and arms take no part in the
  collision); the momentum the head loses is handed on to the rest of the body by the
  reset map after contact. ``inverse_mass_at`` gives the rigid body's W = J M⁻¹ Jᵀ
  instead, the face of a body without a compliant shaft. The ball's at its
  contact point, a distance r from its centre along −n, is (1/m) I + (1/(k m)) (I − n nᵀ)
  (k = I_ball/(m r²), 2/5 for a uniform sphere); K = W + K_ball. The contact point's
  relative velocity (ball minus face) before contact is u = −J v⁻ (the ball at rest);
  an impulse P on the ball (−P on the face) changes it to u + K P.
* Compression (Coulomb friction, stick or slip): P_c minimises the kinetic energy after
  it, φ(P) = uᵀP + ½ PᵀKP, over the friction cone |P − (P·n) n| ≤ μ P·n (the principle
  of maximum dissipation). Inside the cone it is the sticking impulse −K⁻¹u (the contact
  point comes to rest, relative to the face); otherwise it lies on the cone's surface
  (slip).
* Restitution (Poisson): the whole impulse is P = (1 + e) P_c.

Energy: P_c minimises φ along its own ray, so P_cᵀu = −P_cᵀKP_c, and the kinetic energy
changes by ΔT = P·u + ½ PᵀKP = −½ (1 − e²) P_cᵀKP_c ≤ 0 for 0 ≤ e ≤ 1, whatever the
masses, the state and the friction: the law cannot create energy. Frictionless
(μ = 0), the ball leaves along n at (1 + e) m_eff/(m_eff + m) times the closing speed,
m_eff = 1/(nᵀWn), the textbook two-body formula.

Handing the head's lost momentum on to the rest of the body (the reset map with −P at
the face) loses energy too: the body's inverse mass at the face, W_body = J M⁻¹ Jᵀ, is
no larger than the free head's (the head joined to the shaft is a constrained head), so
the energy change of body and ball, P·u + ½ Pᵀ(W_body + K_ball)P, is at most the law's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

BALL_MASS_KG = 0.04593      # the rules' maximum, 1.620 oz
BALL_RADIUS_M = 0.02135     # the rules' minimum diameter, 1.680 in, halved
BALL_INERTIA_FACTOR = 0.4   # I_ball / (m r²): a uniform sphere


@dataclass(frozen=True)
class ClubFace:
    """A club's face for the law: its loft [rad] (the face normal's tilt from the club
    head's path toward the shaft), the restitution prior, uniform on
    ``restitution_range`` (dimensionless), and the face–ball friction coefficient μ."""

    name: str
    loft_rad: float
    restitution_range: tuple
    friction: float

    @property
    def restitution_mean(self) -> float:
        """The prior's mean (dimensionless)."""
        return 0.5 * (self.restitution_range[0] + self.restitution_range[1])

    @property
    def restitution_sd(self) -> float:
        """The prior's standard deviation, width/√12 for a uniform prior (dimensionless)."""
        return (self.restitution_range[1] - self.restitution_range[0]) / math.sqrt(12.0)


# per club name: typical lofts; restitution from published club tests (docs/swing/impact.md)
CLUBS = {
    "driver": ClubFace("driver", math.radians(10.5), (0.78, 0.83), 0.4),
    "iron": ClubFace("iron", math.radians(30.0), (0.70, 0.78), 0.4),
}


def club_face(name: str, loft_deg: float | None = None) -> ClubFace:
    """The face of club ``name`` (a key of CLUBS), its loft replaced by ``loft_deg`` [deg]
    when given. Raises ValueError for an unknown name or a loft outside [0, 80) deg."""
    if name not in CLUBS:
        raise ValueError(f"club must be one of {sorted(CLUBS)}, got {name!r}")
    face = CLUBS[name]
    if loft_deg is None:
        return face
    if not 0.0 <= loft_deg < 80.0:
        raise ValueError(f"loft must lie in [0, 80) degrees, got {loft_deg!r}")
    return ClubFace(face.name, math.radians(loft_deg), face.restitution_range, face.friction)


def face_normal(head_velocity: NDArray[np.float64], shaft_up: NDArray[np.float64],
                loft_rad: float) -> NDArray[np.float64]:
    """The face's unit normal (3,) (out of the face, toward the ball) for a square face:
    the club head's path direction (``head_velocity`` (3,) m/s) tilted by the loft [rad]
    toward ``shaft_up`` (3,), the direction from the head up the shaft (its part across the
    path). Raises ValueError when the head does not move or the shaft lies along the path."""
    d = np.asarray(head_velocity, float)
    if not np.linalg.norm(d) > 0:
        raise ValueError("face_normal: the club head does not move")
    d = d / np.linalg.norm(d)
    s = np.asarray(shaft_up, float)
    s = s - (s @ d) * d
    if not np.linalg.norm(s) > 1e-9:
        raise ValueError("face_normal: the shaft lies along the club head's path")
    s = s / np.linalg.norm(s)
    return math.cos(loft_rad) * d + math.sin(loft_rad) * s


def ball_inverse_mass(n: NDArray[np.float64], m: float = BALL_MASS_KG,
                      k: float = BALL_INERTIA_FACTOR) -> NDArray[np.float64]:
    """(3, 3) 1/kg: the inverse mass of the ball's contact point (the point a radius from
    its centre along −n, n (3,) unit): (1/m) I + (1/(k m)) (I − n nᵀ)."""
    n = np.asarray(n, float)
    return np.eye(3) / m + (np.eye(3) - np.outer(n, n)) / (k * m)


def _cone_basis(n: NDArray[np.float64]) -> tuple:
    a = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(n, a)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def compression_impulse(K: NDArray[np.float64], u: NDArray[np.float64],
                        n: NDArray[np.float64], mu: float) -> NDArray[np.float64]:
    """P_c (3,) N·s on the ball: the minimiser of uᵀP + ½ PᵀKP over the friction cone
    |P − (P·n)n| ≤ μ P·n; K (3, 3) 1/kg symmetric positive definite, u (3,) m/s the
    relative velocity (ball minus face) before contact, n (3,) the unit face normal. Zero
    when the bodies do not close (n·u ≥ 0). On the cone's surface the direction is found
    on a grid of 720 angles refined by bisection on the value's derivative; along each direction the
    magnitude is the exact minimiser, which is all the energy bound needs."""
    n = np.asarray(n, float)
    u = np.asarray(u, float)
    if n @ u >= 0.0:
        return np.zeros(3)
    P = -np.linalg.solve(K, u)
    Pn = float(P @ n)
    if Pn > 0 and np.linalg.norm(P - Pn * n) <= mu * Pn:
        return P
    t1, t2 = _cone_basis(n)

    def ray(phi: float) -> tuple:
        d = n + mu * (math.cos(phi) * t1 + math.sin(phi) * t2)
        du, dKd = float(d @ u), float(d @ K @ d)
        s = max(-du / dKd, 0.0)
        return -0.5 * s * s * dKd, s * d

    def slope(phi: float) -> float:
        # the sign of the value's derivative in φ where d·u < 0: (d'·u)(dKd) − (d·u)(d'Kd)
        d = n + mu * (math.cos(phi) * t1 + math.sin(phi) * t2)
        dd = mu * (-math.sin(phi) * t1 + math.cos(phi) * t2)
        return float((dd @ u) * (d @ K @ d) - (d @ u) * (dd @ K @ d))

    step = 2 * math.pi / 720
    grid = np.arange(720) * step
    i = int(np.argmin([ray(p)[0] for p in grid]))
    lo, hi = grid[i] - step, grid[i] + step
    if slope(lo) < 0.0 < slope(hi):      # bisection on the derivative: to round-off
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if slope(mid) < 0.0 else (lo, mid)
    else:                                # golden section on the value
        g = (math.sqrt(5.0) - 1) / 2
        for _ in range(60):
            a, b = hi - g * (hi - lo), lo + g * (hi - lo)
            lo, hi = (lo, b) if ray(a)[0] < ray(b)[0] else (a, hi)
    return ray(0.5 * (lo + hi))[1]


@dataclass(frozen=True)
class Collision:
    """The law's outcome: ``impulse_on_ball`` P (3,) N·s (the face takes −P), the
    compression impulse P_c (3,) N·s, the ball's velocity (3,) m/s and spin (3,) rad/s
    after contact, the kinetic energy change of body + ball [J] (≤ 0), whether the
    contact stuck, the face's effective mass along n [kg], the restitution used and the
    closing speed −n·u [m/s]."""

    impulse_on_ball: NDArray[np.float64]
    compression: NDArray[np.float64]
    ball_velocity: NDArray[np.float64]
    ball_spin: NDArray[np.float64]
    energy_change_J: float
    stuck: bool
    effective_mass_kg: float
    restitution: float
    closing_speed_mps: float

    @property
    def ball_speed_mps(self) -> float:
        """|ball velocity| [m/s]."""
        return float(np.linalg.norm(self.ball_velocity))


def collide(W: NDArray[np.float64], face_velocity: NDArray[np.float64],
            n: NDArray[np.float64], e: float, mu: float, m: float = BALL_MASS_KG,
            r: float = BALL_RADIUS_M, k: float = BALL_INERTIA_FACTOR) -> Collision:
    """The collision of the face (inverse mass W (3, 3) 1/kg at its point, W = J M⁻¹ Jᵀ;
    velocity ``face_velocity`` (3,) m/s = J v⁻ before contact) with a ball at rest (mass m
    [kg], radius r [m], inertia factor k) along the unit face normal n (3,), with
    restitution e ∈ [0, 1] and friction μ ≥ 0 (the module's law). Raises ValueError for
    e or μ out of range."""
    if not (0.0 <= e <= 1.0 and mu >= 0.0):
        raise ValueError(f"collide: needs 0 ≤ e ≤ 1 and μ ≥ 0, got e={e!r}, μ={mu!r}")
    n = np.asarray(n, float) / np.linalg.norm(n)
    W = 0.5 * (np.asarray(W, float) + np.asarray(W, float).T)
    u = -np.asarray(face_velocity, float)
    K = W + ball_inverse_mass(n, m, k)
    Pc = compression_impulse(K, u, n, mu)
    P = (1.0 + e) * Pc
    spin = np.cross(-r * n, P) / (k * m * r * r)
    stuck = bool(np.linalg.norm(u + K @ Pc) <= 1e-9 * max(np.linalg.norm(u), 1e-300))
    return Collision(P, Pc, P / m, spin, -0.5 * (1.0 - e * e) * float(Pc @ K @ Pc), stuck,
                     effective_mass(W, n), float(e), float(-(n @ u)))


def effective_mass(W: NDArray[np.float64], n: NDArray[np.float64]) -> float:
    """m_eff [kg] = 1/(nᵀ W n): the face's effective mass along the unit n (3,), W (3, 3)
    1/kg its inverse mass J M⁻¹ Jᵀ."""
    n = np.asarray(n, float)
    return float(1.0 / (n @ W @ n))


def point_inverse_mass(m: float) -> NDArray[np.float64]:
    """W (3, 3) 1/kg = I/m: the inverse mass of a point mass m [kg] (a club head on its own,
    its mass at the face point). Raises ValueError for m ≤ 0."""
    if not m > 0.0:
        raise ValueError(f"point_inverse_mass: needs a positive mass, got {m!r}")
    return np.eye(3) / float(m)


def inverse_mass_at(M: NDArray[np.float64], J: NDArray[np.float64]) -> NDArray[np.float64]:
    """W (3, 3) 1/kg = J M⁻¹ Jᵀ: M (nv, nv) the mass matrix, J (3, nv) the point's
    translational Jacobian."""
    return J @ np.linalg.solve(M, J.T)


def ring_gain(M: NDArray[np.float64], J: NDArray[np.float64], m_head: float,
              shaft_axis: NDArray[np.float64]) -> NDArray[np.float64]:
    """κ (3, 3) 1/kg: the club head's velocity change per unit impulse on it beyond the
    rigid golfer and club's, across the shaft: Π(I/m_head − J M⁻¹ Jᵀ)Π with Π = I − aaᵀ
    (a the shaft's axis, (3,), any length). During contact the head moves on its own
    across the shaft (a shaft bends) and with the club along it (a shaft does not
    stretch); the reset map gives the rigid body's J M⁻¹ Jᵀ Λ, so κΛ [m/s] is the head's
    extra velocity at the start of its ringing on the shaft (trajectory.HeadRing). Positive
    semidefinite: the body carries the head, so J M⁻¹ Jᵀ ⪯ I/m_head."""
    a = np.asarray(shaft_axis, float)
    a = a / np.linalg.norm(a)
    P = np.eye(3) - np.outer(a, a)
    return P @ (point_inverse_mass(m_head) - inverse_mass_at(M, J)) @ P

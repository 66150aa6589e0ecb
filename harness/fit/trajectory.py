"""Fit a motion to markers by inverse-dynamics collocation on a B-spline, solved by
sparse Gauss–Newton (Levenberg–Marquardt).

Dimension legend: N frames t_i = t0 + i·h [s] (the measurements); M B-spline coefficients
per coordinate; nv generalized coordinates (nq == nv: revolute/prismatic joints only, e.g.
fixtures.golfers.golfer3d with ``root="actuated"``); K markers (model frames named by
marker label); P closure pairs (points that must coincide, e.g. the right hand on the
club).

Decision vector θ = vec(C), C (M, nv) coefficient-major: entry [m, j] at m·nv + j, the
B-spline coefficients of q_j(t) [rad | m]. The spline has degree ``degree`` (5 by default:
q is C⁴, so v̇ and the torques are C²), clamped uniform knots every ``knot_frames``
frames over [t_0, t_{N−1}].

Collocation. q(t) = B(t) C, q̇ = B′(t) C, q̈ = B″(t) C exactly; the controls are the joint
torques and the equations of motion are imposed in implicit form through the engine's
inverse dynamics, τ(t) = ID(q(t), q̇(t), q̈(t)) (M q̈ + h + D q̇), at every frame (the
objective's collocation points) and at the replay knots for the torques handed to the
replay. The dynamics therefore hold exactly along the fitted spline (no multipliers); what
can differ is the torque the engines receive between knots. Inside one knot interval of
the spline q is a polynomial and τ = ID(q, q̇, q̈) is analytic (it is only C² across
knots), so the replay controls are ``lobatto<P>`` (harness/model/candidate.py): P + 1
Chebyshev–Lobatto knots per spline interval (``control_degree`` P, 16 by default) and the
degree-P polynomial through them — spectrally accurate, where cubic interpolation of
samples leaves O(Δt⁴) defects (``control_degree=0``: cubic on ``samples_per_frame``
samples per frame, the earlier scheme). ``defects`` measures |interpolant − ID| at the
midpoints between consecutive replay knots, and ``reintegrate`` integrates those torques
open-loop from the fitted initial state — the independent physical check.

Objective (each component reported separately), ½‖r‖² with whitened residuals r:

    markers     (p_k(q(t_i)) − y_ik) / σ_m             every marker seen at frame i
    closure     (p_a(q(t_i)) − p_b(q(t_i))) / σ_c       every pair, every frame
    effort      √(w_e / N) · τ_j(t_i) / s_j             s_j: the torque scale of joint j
    smoothness  √(w_s / N) · (τ_j(t_{i+1}) − τ_j(t_i)) / (h · s_j) · T    (T the duration)

Jacobians are exact: frame Jacobians and the engine's own inverse-dynamics derivatives
(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇) chained through the basis. The normal equations JᵀJ, Jᵀr are
assembled frame by frame (a frame's rows touch the degree + 1 coefficients of its band),
and the banded system is solved by banded Cholesky.

Ground contact (``FitProblem.contact``, a GroundContact; N·nc·4 more unknowns β, the
pyramid coefficients of nc contact points' forces f = E β [N]): the effort rows then
carry the actuation τ − Σ J_cᵀ f (joint torques; the ``residual_dofs`` weighted by
``w_residual`` over their own scales), and four more components enter:

    contact_kinematics  (p_c(q(t_i)) − anchor_c) / σ_c          stick points, every frame
    contact_slip        J_c(q) q̇ (t_i) / σ_v                     stick points, every frame
    force_regularisation √(w_f / N) · β / F                        (F the body weight)
    force_feasibility   √w_h · min(β, 0) / F

The smoothness rows then act on ID (the generalized forces), so a frame's forces touch
only that frame's rows and are eliminated per frame (Schur complement).

Impact (``FitProblem.impact``, an ImpactEvent; 3 more unknowns, the impulse Λ [N·s]):
a knot of multiplicity ``degree`` at t_e makes the spline C⁰ there, two phases (each a
clamped spline, sharing the coefficient at t_e): positions continuous, velocities free
to jump. Three more components enter:

    reset              (M(q_e)(v⁺ − v⁻) − J(q_e)ᵀΛ) / σ_r        nv rows at t_e
    impulse_prior      (Λ − Λ₀) / σ_Λ     (Λ₀ the prior's mean, zero unless given)
    torque_continuity  √w_c · ws · (ID(q_e, v⁺, v̇⁺) − ID(q_e, v⁻, v̇⁻))

Activation-driven joints (``FitProblem.activation``, an ActivationDrive): their torque
is a·τ_max with a signed activation a that lags an excitation e (harness/fit/activation.py
``signed_rate``); along the spline a = τ/τ_max, and each frame interval's e follows from a
at its ends (``signed_excitation``, the implicit midpoint rule). Their effort rows give way
to

    excitation         √(w_e/(N−1)) · e_j(i, i+1) · τ_max,j / s_j     every interval
    excitation_bound   √w_bound · (|e_j| − 1)₊                        every interval

which touch the bands of two consecutive frames, as the smoothness rows do.

Passive coordinates (``FitProblem.passive``, a PassiveLaw: a spring and damper with an
offset, no actuator): their effort rows give way to the law's violation

    passive_law        (ID_j + k_j q_j + c_j q̇_j − m0_j) / σ             every frame

and they leave the smoothness and torque-continuity rows.

The impulse borders the banded system (3 columns, a 3×3 Schur complement); t_e is
chosen by harness/swing/impact_time.py ``fit_impact`` on the profile cost with the event
residual (t̂ − t_e)/σ_t. The change of J_c with q is taken by forward differences.
``feasible_forces`` makes the final forces exactly feasible: a non-negative least squares
per frame.
"""
from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput
from harness.fit.activation import ActivationModel, signed_excitation
from harness.fit.least_squares import LMOptions, levenberg_marquardt
from harness.model.candidate import Controls, Event
from harness.model.integrators import Method, rollout

if TYPE_CHECKING:
    import scipy.sparse as sp

    from harness.model.protocol import EngineAdapter


def knots(t_start: float, t_end: float, spacing: float, degree: int) -> NDArray[np.float64]:
    """Clamped knot vector on [t_start, t_end] with interior knots every ``spacing`` s
    (the last interval absorbs the remainder)."""
    n = max(1, int(round((t_end - t_start) / spacing)))
    inner = np.linspace(t_start, t_end, n + 1)
    return np.r_[[t_start] * degree, inner, [t_end] * degree]


def knots_with_break(t_start: float, t_end: float, spacing: float, degree: int,
                     t_break: float) -> NDArray[np.float64]:
    """Clamped knot vector on [t_start, t_end] as ``knots``, with a knot of multiplicity
    ``degree`` at t_break [s] (the spline is C⁰ there: positions continuous, velocities
    free to jump); the uniform knots within half a spacing of t_break are dropped."""
    tk = knots(t_start, t_end, spacing, degree)
    inner = tk[degree:-degree]
    keep = (np.abs(inner - t_break) >= 0.5 * spacing) | (inner == t_start) | (inner == t_end)
    inner = np.sort(np.r_[inner[keep], [t_break] * degree])
    return np.r_[[t_start] * degree, inner, [t_end] * degree]


def basis(tk: NDArray[np.float64], degree: int,
          x: NDArray[np.float64]) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    """(B0, B1, B2) sparse (len(x), M): values and first/second time derivatives [1, 1/s,
    1/s²] of the M B-spline basis functions at x."""
    import scipy.sparse as sp  # on use: scipy.sparse adds ~80 ms to every command's start
    from scipy.interpolate import (
        BSpline,  # on use: scipy.interpolate adds ~200 ms to every command's start
    )
    M = len(tk) - degree - 1
    spl = BSpline(tk, np.eye(M), degree, extrapolate=False)
    x = np.clip(np.asarray(x, float), tk[0], tk[-1])
    out = []
    for d in (0, 1, 2):
        f = spl if d == 0 else spl.derivative(d)
        B = np.nan_to_num(f(x))
        B[np.abs(B) < 1e-14 * max(1.0, np.abs(B).max())] = 0.0
        out.append(sp.csr_matrix(B))
    return tuple(out)


def pyramid_edges(mu: float) -> NDArray[np.float64]:
    """E (3, 4): the edges n ± μ t_x, n ± μ t_y of the four-sided friction pyramid
    inscribed in the Coulomb cone of a ground with normal +z. A force f = E β with β ≥ 0
    has normal component Σβ ≥ 0 and tangential magnitude ≤ μ·Σβ (inside the cone; the
    pyramid gives away at most a factor 1/√2 of the cone's tangential reach, in the
    diagonal directions)."""
    return np.array([[mu, -mu, 0.0, 0.0], [0.0, 0.0, mu, -mu], [1.0, 1.0, 1.0, 1.0]])


@dataclass
class GroundContact:
    """Unilateral ground contact of nc body points. ``frames`` (nc,) model frames;
    ``anchors`` (nc, 3) m the world points they stick to (z = the floor height);
    ``stick`` (N, nc) bool the assumed mode schedule (True: stick, the point held at its
    anchor and a force inside the friction pyramid allowed; False: flight, no force);
    ``residual_dofs`` the velocity indices whose generalized forces are residuals (the
    pelvis's six), with scales ``residual_scale`` (N | N·m) and weight ``w_residual``;
    ``mu`` the friction coefficient; ``sigma_contact`` [m] and ``sigma_slip`` [m/s] the
    whitening of the stick conditions p_c(q) = anchor and ṗ_c = J_c(q) q̇ = 0;
    ``force_scale`` [N] (body weight) of the regularisation ``w_force`` on the pyramid
    coefficients and of the feasibility penalty
    ``w_feasible`` on negative ones (the fitted forces are then made exactly feasible by
    ``feasible_forces``)."""
    frames: tuple
    anchors: np.ndarray
    stick: np.ndarray
    residual_dofs: tuple
    residual_scale: np.ndarray
    w_residual: float = 1.0
    mu: float = 0.8
    sigma_contact: float = 0.002
    sigma_slip: float = 0.02
    force_scale: float = 800.0
    w_force: float = 1e-3
    w_feasible: float = 1e3

    @property
    def nc(self) -> int:
        return len(self.frames)


@dataclass
class HeadRing:
    """The club head ringing on the shaft after the impulse, seen by its markers: from
    t_e on, the markers ``markers`` (indices into the fit's labels) sit δ(t) [m] off the
    rigid model's, δ(t) = g(t − t_e) κ Λ with g(τ) = e^(−ζωτ) sin(ω_d τ)/ω_d [s],
    ω_d = ω√(1 − ζ²). κ (3, 3) [1/kg] is the head's extra velocity per unit impulse: the
    head alone's inverse mass minus the rigid body's at the face, across the shaft (a
    shaft bends, it does not stretch). ω [rad/s] and ζ [–] are the shaft's ringing
    frequency and damping ratio. A one-mode overlay: the rigid coordinates carry the
    momentum (the reset map), the ringing only where the head is."""
    markers: tuple
    kappa: np.ndarray
    omega: float
    zeta: float

    def __post_init__(self):
        if not (self.omega > 0.0 and 0.0 <= self.zeta < 1.0):
            raise BadInput("ring", f"frequency {self.omega / (2 * np.pi):g} Hz must be > 0 "
                                   f"and damping ratio {self.zeta:g} in [0, 1) (an "
                                   "underdamped ringing)")

    def gain(self, tau: NDArray[np.float64]) -> NDArray[np.float64]:
        """g(τ) [s] at τ = t − t_e (array), zero before the impulse."""
        tau = np.asarray(tau, float)
        wd = self.omega * np.sqrt(1.0 - self.zeta ** 2)
        g = np.exp(-self.zeta * self.omega * tau) * np.sin(wd * tau) / wd
        return np.where(tau > 0.0, g, 0.0)

    def at(self, f_hz: float) -> "HeadRing":
        """The same ringing (markers, κ, ζ) at frequency ``f_hz`` [Hz]."""
        return dataclasses.replace(self, omega=2.0 * np.pi * float(f_hz))

    def offsets(self, tau: NDArray[np.float64], lam: NDArray[np.float64],
                n_markers: int) -> NDArray[np.float64]:
        """δ (N, K, 3) [m] at τ = t − t_e (N,) [s] under the impulse Λ (3,) [N·s]: g(τ)κΛ
        at this ringing's markers, zero at the other K − len(markers) and before t_e."""
        off = np.zeros((len(tau), int(n_markers), 3))
        off[:, list(self.markers), :] = (self.gain(tau)[:, None]
                                         * (self.kappa @ np.asarray(lam, float)))[:, None, :]
        return off


@dataclass
class ImpactEvent:
    """A hybrid event splitting the fit into two phases at t_e [s]: the impulse Λ (3,)
    [N·s, world axes] acts at the model frame ``frame`` (the club-head contact point);
    positions are continuous and the generalized velocity jumps by the reset map
    M(q_e)(v⁺ − v⁻) = J(q_e)ᵀ Λ (J (3, nv) the frame's translational Jacobian, q_e = q(t_e)),
    held as a stiff penalty whitened by ``sigma_reset`` [N·s | N·m·s], whose violation
    is reported. The joint torques are continuous through the impulse (muscles and motors
    do not jump): τ(t_e⁺) − τ(t_e⁻) = ID(q_e, v⁺, v̇⁺) − ID(q_e, v⁻, v̇⁻) enters as a
    smoothness row weighted ``w_continuity`` × the frame-to-frame one; without it the
    post-impact spline could explain the velocity change by an unseen torque spike
    between t_e and the next frame instead of by the impulse. ``t_hat`` and ``sigma_t``
    [s] are the measured event time and its
    standard deviation (the event-time residual (t̂ − t_e)/σ); ``t_bounds`` (2,) s the
    interval the search for t_e covers."""
    frame: str
    t_e: float
    t_hat: float
    sigma_t: float
    t_bounds: tuple
    sigma_reset: float = 1e-2
    sigma_impulse: float = 1e3     # N·s: a weak prior Λ/σ_Λ, fixes the directions JᵀΛ misses
    impulse_prior_mean: tuple = (0.0, 0.0, 0.0)   # N·s: Λ₀, the prior (Λ − Λ₀)/σ_Λ
    w_continuity: float = 1.0      # torque continuity through t_e, × the smoothness weight
    # orthonormal directions (each (3,), world axes) along which the prior's scale is
    # ``sigma_impulse_loose`` [N·s] instead of σ_Λ: an impulse of another body at the same
    # instant whose size the data decide (the turf's, under a ball held to its law)
    impulse_prior_loose: tuple = ()
    sigma_impulse_loose: float = 1e3
    ring: HeadRing | None = None   # the head's ringing on the shaft after Λ (HeadRing)

    def prior_whitening(self) -> NDArray[np.float64]:
        """(3, 3) 1/(N·s): W with the prior's rows W(Λ − Λ₀), W = (I − UUᵀ)/σ_Λ + UUᵀ/σ_loose
        (U the ``impulse_prior_loose`` directions as columns; W = I/σ_Λ without them)."""
        U = np.asarray(self.impulse_prior_loose, float).reshape(-1, 3).T
        P = U @ U.T
        return (np.eye(3) - P) / self.sigma_impulse + P / self.sigma_impulse_loose

    def event_cost(self, t_e: float | None = None) -> float:
        """½((t̂ − t_e)/σ)² (dimensionless)."""
        t = self.t_e if t_e is None else t_e
        return 0.5 * ((self.t_hat - t) / self.sigma_t) ** 2


@dataclass
class ActivationDrive:
    """Activation-driven joint actuators: the velocity indices ``dofs`` (n_a,) whose
    torque is τ_j = a_j τ_max,j (``tau_max`` (n_a,) N·m | N), a_j ∈ [−1, 1] the signed
    activation a first-order lag of the excitation e_j (harness/fit/activation.py,
    ``signed_excitation``, time constants of ``model``). Along the spline a = ID/τ_max,
    and the excitation of each frame interval follows from a at its two ends, so the
    dynamics hold exactly as before. The effort rows of these joints become excitation
    rows √(w_e/(N−1)) · e · τ_max/s_j (equal to the torque rows where the torque is
    steady), and ``w_bound`` whitens the bound |e| ≤ 1 as a stiff penalty
    √w_bound · (|e| − 1)₊ [–]. Only joints whose generalized force the contact forces do
    not enter can be driven so (the forces are per-frame unknowns without a rate)."""
    dofs: tuple
    tau_max: np.ndarray
    model: object = None             # harness.fit.activation.ActivationModel (default)
    w_bound: float = 1e4

    def __post_init__(self):
        self.dofs = tuple(int(j) for j in self.dofs)
        self.tau_max = np.broadcast_to(np.asarray(self.tau_max, float),
                                       (len(self.dofs),)).copy()
        if not self.dofs or not np.all(self.tau_max > 0) or not self.w_bound > 0:
            raise BadInput("fit", "activation: needs dofs, tau_max > 0 and w_bound > 0")
        if self.model is None:
            self.model = ActivationModel()


@dataclass
class PassiveLaw:
    """Coordinates whose generalized force is passive: a spring and damper with an
    offset, Q_j = −k_j q_j − c_j q̇_j + m0_j [N·m | N] (``dofs`` velocity indices (n,);
    ``k`` (n,) N·m/rad, ``c`` (n,) N·m·s/rad, ``m0`` (n,) N·m). No actuator drives them:
    their effort rows become the law's violation (ID_j − Q_j)/σ at every frame, a stiff
    penalty (``sigma`` N·m), reported as the ``passive_law`` component, and they leave the
    smoothness and torque-continuity rows."""
    dofs: tuple
    k: np.ndarray
    c: np.ndarray
    m0: np.ndarray
    sigma: float = 0.1

    def __post_init__(self):
        self.dofs = tuple(int(j) for j in self.dofs)
        n = len(self.dofs)
        self.k, self.c, self.m0 = (np.broadcast_to(np.asarray(x, float), (n,)).copy()
                                   for x in (self.k, self.c, self.m0))
        if not n or not self.sigma > 0:
            raise BadInput("fit", "passive law: needs dofs and sigma > 0")

    def violation_part(self, Q: NDArray[np.float64], V: NDArray[np.float64]) -> NDArray[np.float64]:
        """(N, n) [N·m | N]: k q + c q̇ − m0 of the law's coordinates at Q, V (N, nv): what
        the law adds to ID to give its violation ID − Q_law."""
        j = list(self.dofs)
        return self.k * Q[:, j] + self.c * V[:, j] - self.m0


@dataclass
class FitProblem:
    """What to fit. y (N, K, 3) m (NaN where unseen); h [s] frame interval; weights as in
    the module docstring; torque_scale (nv,) [N·m | N]."""
    adapter: object
    labels: tuple
    y: np.ndarray
    h: float
    sigma_marker: float
    torque_scale: np.ndarray
    w_effort: float = 1e-3
    w_smooth: float = 1e-3
    pairs: tuple = ()          # ((frame_a, frame_b), ...)
    sigma_closure: float = 1e-3
    t0: float = 0.0
    degree: int = 5
    knot_frames: int = 2
    samples_per_frame: int = 4       # replay samples per frame (control_degree == 0 only)
    control_degree: int = 16         # P of the lobatto<P> replay controls; 0: cubic
    contact: GroundContact | None = None
    impact: ImpactEvent | None = None
    # (lower (nv,), upper (nv,)) [rad | m], ±inf where free: each coordinate's spline
    # coefficients are held in its box, so by the convex hull of the B-spline basis the
    # fitted coordinate stays inside it at every time (None: no bounds)
    bounds: tuple | None = None
    activation: ActivationDrive | None = None
    passive: PassiveLaw | None = None

    def __post_init__(self):
        a = self.adapter
        if a.nq != a.nv:
            raise BadInput("model", f"{a.model.name}: the trajectory fit needs nq == nv "
                                    f"(use an actuated root), got nq={a.nq}, nv={a.nv}")
        self.y = np.asarray(self.y, dtype=float)
        if self.y.ndim != 3 or self.y.shape[2] != 3 or self.y.shape[1] != len(self.labels):
            raise BadInput("markers", f"y must be (N, {len(self.labels)}, 3), got {self.y.shape}")
        if not (self.h > 0 and self.sigma_marker > 0 and self.sigma_closure > 0):
            raise BadInput("fit", "h, sigma_marker and sigma_closure must be > 0")
        if self.degree not in (3, 5) or self.knot_frames < 1 or self.samples_per_frame < 1:
            raise BadInput("fit", "degree must be 3 or 5, knot_frames and samples_per_frame >= 1")
        if not (0 <= self.control_degree <= 32):
            raise BadInput("fit", f"control_degree must be 0 (cubic) or 1 … 32, got "
                                  f"{self.control_degree}")
        self.torque_scale = np.broadcast_to(np.asarray(self.torque_scale, float),
                                            (a.nv,)).copy()
        if not np.all(self.torque_scale > 0):
            raise BadInput("fit", "torque scales must be > 0")
        if self.N < self.degree + 2:
            raise BadInput("fit", f"need at least {self.degree + 2} frames, got {self.N}")
        if self.bounds is not None:
            lo, hi = (np.broadcast_to(np.asarray(b, float), (a.nv,)).copy()
                      for b in self.bounds)
            if not np.all(lo <= hi):
                raise BadInput("fit", "bounds: every lower bound must be ≤ its upper one")
            self.bounds = (lo, hi)
        self.seen = np.isfinite(self.y).all(axis=2)
        self.t = self.t0 + self.h * np.arange(self.N)
        self._build_basis()
        c = self.contact
        if c is not None:
            c.anchors = np.asarray(c.anchors, float).reshape(c.nc, 3)
            c.stick = np.broadcast_to(np.asarray(c.stick, bool), (self.N, c.nc)).copy()
            c.residual_scale = np.broadcast_to(np.asarray(c.residual_scale, float),
                                               (len(c.residual_dofs),)).copy()
            if not (c.mu > 0 and c.sigma_contact > 0 and c.force_scale > 0
                    and c.w_residual >= 0 and np.all(c.residual_scale > 0)):
                raise BadInput("fit", "contact: mu, sigma_contact, force_scale and the "
                                      "residual scales must be > 0")
        ad = self.activation
        if ad is not None:
            rd = set(c.residual_dofs) if c is not None else set()
            if not all(0 <= j < a.nv and j not in rd for j in ad.dofs):
                raise BadInput("fit", "activation: its dofs must be joints of the model "
                                      "and not residual ones")

    def clip(self, C: NDArray[np.float64]) -> NDArray[np.float64]:
        """C (M, nv) with each coordinate's coefficients clipped to ``bounds`` (a copy;
        C itself without bounds)."""
        if self.bounds is None:
            return C
        return np.clip(C, self.bounds[0][None, :], self.bounds[1][None, :])

    def set_event_time(self, t_e: float) -> None:
        """Move the impact to t_e [s] (the knot vector and the bases are rebuilt)."""
        self.impact.t_e = float(t_e)
        self._build_basis()

    def _build_basis(self):
        ie = self.impact
        if ie is None:
            self.tk = knots(self.t[0], self.t[-1], self.knot_frames * self.h, self.degree)
        else:
            gap = np.abs(self.t - ie.t_e).min()
            if not (self.t[0] < ie.t_e < self.t[-1]) or gap < 1e-6 * self.h:
                raise BadInput("fit", f"impact time {ie.t_e:.6f} s must lie strictly "
                                      "between two frames of the window")
            if not (ie.sigma_t > 0 and ie.sigma_reset > 0):
                raise BadInput("fit", "impact: sigma_t and sigma_reset must be > 0")
            self.tk = knots_with_break(self.t[0], self.t[-1], self.knot_frames * self.h,
                                       self.degree, ie.t_e)
        if ie is None:
            self.B0, self.B1, self.B2 = basis(self.tk, self.degree, self.t)
            self.M = self.B0.shape[1]
        else:
            # two phases, each a clamped spline of its own; they share the coefficient
            # at t_e (positions continuous) and nothing else
            p = self.degree
            last = int(np.flatnonzero(self.tk == ie.t_e)[-1])
            self.tk1 = np.r_[self.tk[:last + 1], ie.t_e]
            self.M1 = len(self.tk1) - p - 1
            self.tk2 = np.r_[ie.t_e, self.tk[last - p + 1:]]
            self.M = self.M1 + (len(self.tk2) - p - 1) - 1
            pre = self.t <= ie.t_e
            Bs = [np.zeros((self.N, self.M)) for _ in range(3)]
            for m, tk, cols in ((pre, self.tk1, np.arange(self.M1)),
                                (~pre, self.tk2, np.arange(self.M1 - 1, self.M))):
                for B, Bp in zip(Bs, basis(tk, p, self.t[m])):
                    B[np.ix_(m, cols)] = Bp.toarray()
            import scipy.sparse as sp  # on use: scipy.sparse adds ~80 ms to every command's start
            self.B0, self.B1, self.B2 = (sp.csr_matrix(B) for B in Bs)
            # one-sided bases at t_e (rows over all M coefficients)
            self.Be0 = np.zeros(self.M)
            self.Be1m = np.zeros(self.M)
            self.Be1p = np.zeros(self.M)
            b = [B.toarray()[0] for B in basis(self.tk1, p, [ie.t_e])]
            self.Be0[:self.M1] = b[0]
            self.Be1m[:self.M1] = b[1]
            b2 = basis(self.tk2, p, [ie.t_e])
            self.Be1p[self.M1 - 1:] = b2[1].toarray()[0]
            self.Be2m = np.zeros(self.M)
            self.Be2p = np.zeros(self.M)
            self.Be2m[:self.M1] = b[2]
            self.Be2p[self.M1 - 1:] = b2[2].toarray()[0]
        # banded form: row i touches coefficients band[i] (W = degree + 1 of them)
        W = self.degree + 1
        dense = [B.toarray() for B in (self.B0, self.B1, self.B2)]
        nz = (np.abs(dense[0]) + np.abs(dense[1]) + np.abs(dense[2])) > 0
        first = np.clip(np.argmax(nz, axis=1), 0, self.M - W)
        self.band = first[:, None] + np.arange(W)[None, :]                      # (N, W)
        self.bvals = np.stack([np.take_along_axis(D, self.band, axis=1)
                               for D in dense])                                  # (3, N, W)

    @property
    def n_force(self) -> int:
        """Number of contact-force decision variables (N · nc · 4 pyramid coefficients)."""
        return 0 if self.contact is None else self.N * self.contact.nc * 4

    @property
    def N(self) -> int:
        return self.y.shape[0]

    @property
    def duration(self) -> float:
        return (self.N - 1) * self.h

    def coefficients_from(self, Q: NDArray[np.float64]) -> NDArray[np.float64]:
        """C (M, nv): least-squares spline through a trajectory Q (N, nv) at the frames.
        With an impact: the smooth spline through Q (no break; the frames alone do not
        determine the two one-sided velocities at t_e, and a least-squares fit of the
        two phases to them extrapolates noise into the jump) carried onto the two
        phases, so the fit starts from no velocity jump."""
        if self.impact is None:
            return np.linalg.lstsq(self.B0.toarray(), np.asarray(Q, float), rcond=None)[0]
        smooth = copy.copy(self)
        smooth.impact = None
        smooth._build_basis()
        return self.coefficients_like(smooth, smooth.coefficients_from(Q))

    def evaluate(self, C: NDArray[np.float64],
                 x: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(q, v, vdot) (len(x), nv) of the spline C at times x [s]. With an impact each
        phase is its own spline (x ≤ t_e: the pre-impact phase, so at t_e the left limits
        v⁻, v̇⁻; x > t_e: the post-impact phase; a replay grid's repeated knot at t_e gives
        both: its second occurrence the right limits v⁺, v̇⁺)."""
        x = np.atleast_1d(np.asarray(x, float))
        if self.impact is None:
            B0, B1, B2 = basis(self.tk, self.degree, x)
            return B0 @ C, B1 @ C, B2 @ C
        out = [np.empty((x.size, C.shape[1])) for _ in range(3)]
        pre = self.pre_mask(x)
        for m, tk, Cp in ((pre, self.tk1, C[:self.M1]), (~pre, self.tk2, C[self.M1 - 1:])):
            if m.any():
                for o, B in zip(out, basis(tk, self.degree, x[m])):
                    o[m] = B @ Cp
        return tuple(out)

    def coefficients_like(self, other: "FitProblem", C: NDArray[np.float64]) -> NDArray[np.float64]:
        """C (M, nv) of this problem's spline closest (least squares at 8 points per frame
        interval, each phase on its own side) to ``other``'s spline C (another event
        time): the warm start of a refit."""
        x = np.linspace(self.t[0], self.t[-1], 8 * (self.N - 1) + 1)
        if self.impact is not None and other.impact is not None:
            lo = min(self.impact.t_e, other.impact.t_e)
            hi = max(self.impact.t_e, other.impact.t_e)
            x = x[(x < lo) | (x > hi)]
        q = other.evaluate(C, x)[0]
        B = np.zeros((x.size, self.M))
        if self.impact is None:
            B = basis(self.tk, self.degree, x)[0].toarray()
        else:
            pre = x <= self.impact.t_e
            B[np.ix_(pre, np.arange(self.M1))] = basis(self.tk1, self.degree,
                                                       x[pre])[0].toarray()
            B[np.ix_(~pre, np.arange(self.M1 - 1, self.M))] = basis(
                self.tk2, self.degree, x[~pre])[0].toarray()
        return np.linalg.lstsq(B, q, rcond=None)[0]

    def velocity_jump(self, C: NDArray[np.float64]) -> NDArray[np.float64]:
        """v⁺ − v⁻ (nv,) at t_e [rad/s | m/s] of the spline C."""
        return (self.Be1p - self.Be1m) @ C

    @property
    def interpolation(self) -> str:
        """The replay controls' interpolation (harness/model/candidate.py)."""
        return f"lobatto{self.control_degree}" if self.control_degree else "cubic"

    def pre_mask(self, x: NDArray[np.float64]) -> NDArray[np.bool_]:
        """(len(x),) bool: the times x [s] on the pre-impact phase: x ≤ t_e, except the
        second of two consecutive entries equal to t_e (a replay grid's repeated knot,
        whose second occurrence starts the post-impact phase)."""
        x = np.asarray(x, float)
        pre = x <= self.impact.t_e
        rep = np.flatnonzero((x[:-1] == self.impact.t_e) & (x[1:] == self.impact.t_e))
        pre[rep + 1] = False
        return pre

    def replay_grid(self) -> NDArray[np.float64]:
        """Replay knots [s]: P + 1 Chebyshev–Lobatto points per spline interval (shared
        ends), or ``samples_per_frame`` uniform samples per frame for the cubic. With an
        impact, the pre-impact phase's knots up to t_e, then the post-impact phase's from
        t_e: the event time appears twice (harness/model/candidate.py events)."""
        if self.impact is not None:
            t_e = self.impact.t_e
            return np.r_[self._phase_grid(self.t[0], t_e), self._phase_grid(t_e, self.t[-1])]
        return self._phase_grid(self.t[0], self.t[-1])

    def _phase_grid(self, a: float, b: float) -> NDArray[np.float64]:
        """Replay knots [s] on [a, b] (a and b included)."""
        if not self.control_degree:
            n = max(int(round((b - a) / self.h * self.samples_per_frame)), 1) + 1
            return np.linspace(a, b, n)
        P = self.control_degree
        br = np.unique(self.tk)
        br = br[(br >= a) & (br <= b)]
        x = 0.5 * (1.0 - np.cos(np.pi * np.arange(P) / P))        # [0, 1), ends shared
        grid = (br[:-1, None] + np.diff(br)[:, None] * x[None, :]).ravel()
        return np.r_[grid, br[-1]]


@dataclass
class TrajectoryFitResult:
    C: np.ndarray                 # (M, nv) spline coefficients
    q: np.ndarray                 # (N, nv) at the frames
    v: np.ndarray
    vdot: np.ndarray
    tau: np.ndarray               # (N, nv) N·m | N at the frames
    t: np.ndarray                 # (N,) s
    t_replay: np.ndarray          # (R,) s, the replay grid
    tau_replay: np.ndarray        # (R, nv) torques handed to the engines
    components: dict              # objective components (½‖r‖² each)
    marker_residual: np.ndarray   # (N, K, 3) m, NaN where unseen
    closure_residual: np.ndarray  # (N, P, 3) m
    defects: dict                 # torque interpolation defects between replay samples
    history: list = field(default_factory=list)
    iterations: int = 0
    converged: bool = False
    message: str = ""
    solve_time_s: float = 0.0
    labels: tuple = ()
    interpolation: str = "cubic"  # of tau_replay on t_replay (harness/model/candidate.py)
    # with ground contact (FitProblem.contact): the forces after feasible_forces
    act: np.ndarray | None = None       # (N, nv) joint torques and residuals [N·m | N]
    forces: np.ndarray | None = None    # (N, nc, 3) N, world axes, on the contact points
    beta: np.ndarray | None = None      # (N, nc, 4) pyramid coefficients
    contact_residual: np.ndarray | None = None   # (N, nc, 3) m, p_c(q) − anchor
    forces_unprojected: np.ndarray | None = None  # (N, nc, 3) N of the LM iterate
    # with an impact (FitProblem.impact): Λ (3,) N·s world, on the club at the contact
    # frame; impact: t_e_s, the velocity jump (nv,), the reset's violation
    # max |M(v⁺ − v⁻) − JᵀΛ| [N·s | N·m·s] and relative ‖·‖/‖JᵀΛ‖, the event cost
    impulse: np.ndarray | None = None
    impact: dict | None = None
    # the impact as the candidate's event (harness/model/candidate.py Event): t_replay
    # repeats t_e, tau_replay holds both one-sided limits there
    events: tuple = ()
    # with activation-driven joints (FitProblem.activation): (N − 1, n_a) the excitation
    # [–] of each frame interval
    excitation: np.ndarray | None = None

    def controls(self) -> Controls:
        """The replay controls (harness/model/candidate.py Controls) with their events."""
        return Controls(self.t_replay, self.tau_replay, self.interpolation, self.events)

    def marker_max(self, mask: NDArray[np.bool_] | None = None) -> float:
        """[m] the largest marker distance (over the frames and markers ``mask`` (N, K) bool
        selects)."""
        e = np.linalg.norm(self.marker_residual, axis=2)
        if mask is not None:
            e = np.where(mask, e, np.nan)
        return float(np.nanmax(e))

    def marker_rmse(self, mask: NDArray[np.bool_] | None = None) -> float:
        """[m] the RMS marker distance (over the frames and markers ``mask`` (N, K) bool
        selects)."""
        e = np.linalg.norm(self.marker_residual, axis=2)
        if mask is not None:
            e = np.where(mask, e, np.nan)
        return float(np.sqrt(np.nanmean(e ** 2)))

    def marker_rmse_by_label(self, mask: NDArray[np.bool_] | None = None) -> dict:
        """{label: RMS marker distance [m]} over the frames ``mask`` selects (nan for a
        marker never seen there)."""
        e = np.linalg.norm(self.marker_residual, axis=2)
        if mask is not None:
            e = np.where(mask, e, np.nan)
        return {l: float(np.sqrt(np.nanmean(e[:, k] ** 2))) if np.isfinite(e[:, k]).any()
                else float("nan") for k, l in enumerate(self.labels)}


def ring_offsets(prob: FitProblem, lam: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """(N, K, 3) m: the club head's ringing δ (HeadRing) at every frame and marker of
    ``prob`` under the impulse Λ (3,) [N·s] (zero off the head's markers and before t_e),
    or None without a ring."""
    ie = prob.impact
    if ie is None or ie.ring is None:
        return None
    return ie.ring.offsets(prob.t - ie.t_e, lam, len(prob.labels))


class _Residuals:
    """The whitened residuals of the module docstring over θ = [vec(C), β] (β: the
    contact forces' pyramid coefficients (N, nc, 4), absent without contact)."""

    def __init__(self, prob: FitProblem):
        self.p = prob
        self.nv = prob.adapter.nv
        self.frames = list(prob.labels)
        self.pa = [x for x, _ in prob.pairs]
        self.pb = [x for _, x in prob.pairs]
        N = prob.N
        self.we = np.sqrt(prob.w_effort / N) / prob.torque_scale
        self.ws = np.sqrt(prob.w_smooth / N) * prob.duration / (prob.h * prob.torque_scale)
        c = prob.contact
        self.cf = list(c.frames) if c is not None else []
        if c is not None:
            rd = list(c.residual_dofs)
            self.we = self.we.copy()
            self.we[rd] = np.sqrt(c.w_residual / N) / c.residual_scale
            self.E = pyramid_edges(c.mu)
        ad = prob.activation
        if ad is not None:
            # the effort rows of the driven joints become excitation rows (ActivationDrive)
            j = list(ad.dofs)
            self.we = self.we.copy()
            self.we[j] = 0.0
            self.wx = np.sqrt(prob.w_effort / (N - 1)) * ad.tau_max / prob.torque_scale[j]
            self.wb = np.sqrt(ad.w_bound)
        pl = prob.passive
        if pl is not None:
            # the law's violation in the effort rows; no smoothness (no muscle)
            j = list(pl.dofs)
            self.we, self.ws = self.we.copy(), self.ws.copy()
            self.we[j] = 1.0 / pl.sigma
            self.ws[j] = 0.0

    def split(self, theta: NDArray[np.float64]
              ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
        p = self.p
        n = p.M * self.nv
        C = theta[:n].reshape(p.M, self.nv)
        beta = theta[n:n + p.n_force].reshape(p.N, p.contact.nc, 4) \
            if p.contact is not None else None
        return C, beta

    def impulse(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """Λ (3,) N·s: the impulse, the last three entries of θ with an impact (zero when
        θ does not carry them)."""
        n = self.p.M * self.nv + self.p.n_force
        return np.asarray(theta[n:n + 3], float) if len(theta) >= n + 3 else np.zeros(3)

    def reset(self, C: NDArray[np.float64], lam: NDArray[np.float64], jac: bool = False,
              step: float = 1e-7) -> tuple:
        """The reset map's residual M(q_e)(v⁺ − v⁻) − J(q_e)ᵀΛ (nv,) [N·s | N·m·s] at
        t_e, M(q)Δv taken as ID(q, 0, Δv) − ID(q, 0, 0) of the fit's engine; with
        ``jac`` also its derivatives (nv, M·nv) over the coefficients and (nv, 3) over Λ
        (∂(JᵀΛ)/∂q by forward differences of step [rad | m])."""
        p, a, nv = self.p, self.p.adapter, self.nv
        fr = [p.impact.frame]
        qe = p.Be0 @ C
        dv = p.velocity_jump(C)
        z = np.zeros(nv)
        Mdv = a.inverse_dynamics(qe, z, dv) - a.inverse_dynamics(qe, z, z)
        J = a.frame_jacobians(qe, fr)[0, :3, :]
        r = Mdv - J.T @ lam
        if not jac:
            return r, J
        dq1, _, Mm = a.inverse_dynamics_derivatives(qe, z, dv)
        dq0 = a.inverse_dynamics_derivatives(qe, z, z)[0]
        JtL = J.T @ lam
        dJL = np.zeros((nv, nv))
        for k in np.flatnonzero(np.abs(J).sum(axis=0) > 0):
            qk = qe.copy()
            qk[k] += step
            dJL[:, k] = (a.frame_jacobians(qk, fr)[0, :3, :].T @ lam - JtL) / step
        R_C = np.kron(p.Be0[None, :], dq1 - dq0 - dJL) \
            + np.kron((p.Be1p - p.Be1m)[None, :], Mm)
        return r, J, R_C, -J.T

    def force_map(self, Jc: NDArray[np.float64], stick_i: NDArray[np.bool_]) -> NDArray[np.float64]:
        """G (nv, nc·4): generalized force of the pyramid coefficients at one frame, from
        the contact points' Jacobians Jc (nc, 3, nv); zero columns for points in flight."""
        G = np.einsum("cki,kl->icl", Jc, self.E)               # (nv, nc, 4)
        G = G * stick_i[None, :, None]
        return G.reshape(self.nv, -1)

    def evaluate(self, theta: NDArray[np.float64], jac: bool) -> dict:
        """Residuals and cost components at θ (layout: the class docstring); with ``jac``
        also the Gauss–Newton normal equations in block form (see ``_normal``)."""
        p = self.p
        C, beta = self.split(theta)
        Q, V, A = p.B0 @ C, p.B1 @ C, p.B2 @ C
        fr = self._frame_terms(Q, V, beta, jac, self.ring_offsets(self.impulse(theta)))
        tau, dq, dv, da = self._inverse_dynamics(Q, V, A, jac)
        act, r_eff, r_smo, comps, extra = self._actuation_terms(fr, tau, Q, V, beta)
        exc = None
        if p.activation is not None:
            exc = self.excitation(tau)
            r_x = (exc[0] * self.wx).ravel()
            r_b = self.wb * _beyond_one(exc[0]).ravel()
            comps["excitation"] = 0.5 * float(r_x @ r_x)
            comps["excitation_bound"] = 0.5 * float(r_b @ r_b)
            extra = extra + [r_x, r_b]
        if p.impact is not None:
            imp = self._impact_terms(theta, C, jac, comps)
            extra = extra + [imp["r_rs"], imp["r_pr"], imp["r_tc"]]
        r = np.concatenate(fr["r_geo"] + [r_eff, r_smo] + extra + fr["r_slip"])
        comps["total"] = 0.5 * float(r @ r)
        out = {"r": r, "Q": Q, "V": V, "A": A, "tau": tau, "act": act, "mres": fr["mres"],
               "cres": fr["cres"], "gres": fr["gres"], "slip": fr["slip"], "G": fr["G"],
               "beta": beta, "components": comps,
               "excitation": None if exc is None else exc[0]}
        if jac:
            out["normal"] = self._normal(fr["r_geo"], fr["geo_J"], fr["r_slip"], fr["slip_J"],
                                         dq, dv, da, act, tau, fr["G"], beta, fr["curv"], exc)
            if p.impact is not None:       # the reset rows: the coefficients and Λ
                self._impact_normal(out["normal"], imp)
                if p.impact.ring is not None:
                    self._ring_normal(out["normal"], fr["r_geo"], fr["geo_J"])
        return out

    def ring_offsets(self, lam: NDArray[np.float64]) -> NDArray[np.float64] | None:
        """``ring_offsets`` of this problem at Λ (3,) [N·s]."""
        return ring_offsets(self.p, lam)

    def ring_rows(self, i: int) -> NDArray[np.float64]:
        """(3·seen markers, 3): ∂(frame i's marker rows)/∂Λ of the head's ringing (whitened)."""
        p, rg = self.p, self.p.impact.ring
        seen = p.seen[i]
        D = np.zeros((len(self.frames), 3, 3))
        D[list(rg.markers)] = rg.gain(p.t[i] - p.impact.t_e) * rg.kappa
        return D[seen].reshape(-1, 3) / p.sigma_marker

    def _frame_terms(self, Q: NDArray[np.float64], V: NDArray[np.float64],
                     beta: NDArray[np.float64] | None, jac: bool,
                     ring: NDArray[np.float64] | None = None) -> dict:
        """Frame by frame: the marker, closure and contact residuals (and with ``jac`` their
        Jacobians over q), the contact slip and the contact forces' map G (N, nv, nc·4);
        ``ring`` (N, K, 3) m: the head's ringing added to the model's markers."""
        p, nv, N = self.p, self.nv, self.p.N
        ct = p.contact
        a = p.adapter
        allf = self.frames + self.pa + self.pb + self.cf
        K, P, nc = len(self.frames), len(self.pa), len(self.cf)
        mres = np.full((N, K, 3), np.nan)
        cres = np.zeros((N, P, 3))
        gres = np.zeros((N, nc, 3))
        slip = np.zeros((N, nc, 3))
        G = np.zeros((N, nv, nc * 4))
        r_geo, r_slip, geo_J, slip_J, curv = [], [], [], [], []
        msum = csum = gsum = vsum = 0.0
        for i in range(N):
            poses = a.frame_poses(Q[i], allf)[:, :3]
            seen = p.seen[i]
            mk = poses[:K] if ring is None else poses[:K] + ring[i]
            mres[i, seen] = mk[seen] - p.y[i, seen]
            rm = (mres[i, seen] / p.sigma_marker).ravel()
            msum += float(rm @ rm)
            parts = [rm]
            if P:
                cres[i] = poses[K:K + P] - poses[K + P:K + 2 * P]
                rc = (cres[i] / p.sigma_closure).ravel()
                csum += float(rc @ rc)
                parts.append(rc)
            if jac or nc:
                Jf = a.frame_jacobians(Q[i], allf)[:, :3, :]
            if nc:
                st = ct.stick[i]
                gres[i] = poses[K + 2 * P:] - ct.anchors
                Jc = Jf[K + 2 * P:][st]
                slip[i, st] = Jc @ V[i]
                rg = (gres[i][st] / ct.sigma_contact).ravel()
                rv = (slip[i, st] / ct.sigma_slip).ravel()
                gsum += float(rg @ rg)
                vsum += float(rv @ rv)
                parts.append(rg)
                r_slip.append(rv)
                G[i] = self.force_map(Jf[K + 2 * P:], st)
            r_i = np.concatenate(parts)
            r_geo.append(r_i)
            if jac:
                gJ, sJ, dGb = self._frame_jacobian(Q[i], V[i], Jf, seen, st if nc else None,
                                                   beta[i] if nc else None)
                if nc:
                    slip_J.append(sJ)
                    curv.append(dGb)
                geo_J.append(gJ)
        return {"mres": mres, "cres": cres, "gres": gres, "slip": slip, "G": G,
                "r_geo": r_geo, "r_slip": r_slip, "geo_J": geo_J, "slip_J": slip_J,
                "curv": curv, "msum": msum, "csum": csum, "gsum": gsum, "vsum": vsum}

    def _frame_jacobian(self, q: NDArray[np.float64], v: NDArray[np.float64],
                        Jf: NDArray[np.float64], seen: NDArray[np.bool_],
                        st: NDArray[np.bool_] | None, beta_i: NDArray[np.float64] | None
                        ) -> tuple:
        """One frame's rows over q: (the marker, closure and contact rows' Jacobian (rows, nv),
        with contact the slip rows' (J_c/σ_v, ∂(J_c v)/∂q/σ_v) and ∂(G β)/∂q (nv, nv), else
        None, None), from the frames' Jacobians Jf (frames, 3, nv) at q, v (nv,)."""
        p, nv = self.p, self.nv
        ct = p.contact
        K, P, nc = len(self.frames), len(self.pa), len(self.cf)
        Ji = [Jf[:K][seen].reshape(-1, nv) / p.sigma_marker]
        if P:
            Ji.append((Jf[K:K + P] - Jf[K + P:K + 2 * P]).reshape(-1, nv)
                      / p.sigma_closure)
        if not nc:
            return np.vstack(Ji), None, None
        Jc = Jf[K + 2 * P:][st]
        Ji.append(Jc.reshape(-1, nv) / ct.sigma_contact)
        # slip rows J_c(q_i) q̇_i / σ_v and the contact forces' generalized
        # force G β: their change with q by forward differences of the
        # contact Jacobians over the coordinates that move a contact point
        dJv, dGb = self._contact_curvature(q, v, Jf[K + 2 * P:], st, beta_i.ravel())
        return (np.vstack(Ji), (Jc.reshape(-1, nv) / ct.sigma_slip, dJv / ct.sigma_slip),
                dGb)

    def _inverse_dynamics(self, Q: NDArray[np.float64], V: NDArray[np.float64],
                          A: NDArray[np.float64], jac: bool) -> tuple:
        """τ (N, nv) [N·m | N] by inverse dynamics at every frame; with ``jac`` also its
        derivatives over q, v, v̇ (each (N, nv, nv)), else three None."""
        nv, N = self.nv, self.p.N
        a = self.p.adapter
        tau = np.empty((N, nv))
        dq = dv = da = None
        if jac:
            dq, dv, da = (np.empty((N, nv, nv)) for _ in range(3))
        for i in range(N):
            tau[i] = a.inverse_dynamics(Q[i], V[i], A[i])
            if jac:
                dq[i], dv[i], da[i] = a.inverse_dynamics_derivatives(Q[i], V[i], A[i])
        return tau, dq, dv, da

    def _actuation_terms(self, fr: dict, tau: NDArray[np.float64], Q: NDArray[np.float64],
                         V: NDArray[np.float64], beta: NDArray[np.float64] | None) -> tuple:
        """(act (N, nv), effort rows, smoothness rows, cost components so far, the contact
        forces' rows): the actuation ID − Gβ (+ the passive law's violation) and its terms."""
        p, nv, N = self.p, self.nv, self.p.N
        ct = p.contact
        nc = len(self.cf)
        G = fr["G"]
        # the actuation: joint torques and residuals, what the contact forces leave of ID
        act = tau - np.einsum("nij,nj->ni", G, beta.reshape(N, -1)) if nc else tau
        if p.passive is not None:
            act = act.copy()
            act[:, list(p.passive.dofs)] += p.passive.violation_part(Q, V)
        r_eff = (act * self.we).ravel()
        # smoothness of the generalized forces ID (the actuation without contact; with
        # contact the forces are regularised per frame, which keeps their blocks apart)
        # (across an impact too: the joint torques are continuous through it, the impulse
        # acts on the velocities only)
        r_smo = (np.diff(tau, axis=0) * self.ws).ravel()
        extra = []
        comps = {"markers": 0.5 * fr["msum"], "closure": 0.5 * fr["csum"]}
        if nc:
            comps["contact_kinematics"] = 0.5 * fr["gsum"]
            comps["contact_slip"] = 0.5 * fr["vsum"]
            rd = list(ct.residual_dofs)
            r_res = (act[:, rd] * self.we[rd]).ravel()
            comps["residual"] = 0.5 * float(r_res @ r_res)
            mask = np.ones(nv, bool)
            mask[rd] = False
            r_j = (act[:, mask] * self.we[mask]).ravel()
            comps["effort"] = 0.5 * float(r_j @ r_j)
            self.wf = np.sqrt(ct.w_force / N) / ct.force_scale
            self.wh = np.sqrt(ct.w_feasible) / ct.force_scale
            r_f = self.wf * beta.ravel()
            r_h = self.wh * np.minimum(beta.ravel(), 0.0)
            comps["force_regularisation"] = 0.5 * float(r_f @ r_f)
            comps["force_feasibility"] = 0.5 * float(r_h @ r_h)
            extra = [r_f, r_h]
        else:
            comps["effort"] = 0.5 * float(r_eff @ r_eff)
        if p.passive is not None:       # the law's rows, out of the effort
            j = list(p.passive.dofs)
            r_p = (act[:, j] * self.we[j]).ravel()
            comps["passive_law"] = 0.5 * float(r_p @ r_p)
            comps["effort"] -= comps["passive_law"]
        comps["smoothness"] = 0.5 * float(r_smo @ r_smo)
        return act, r_eff, r_smo, comps, extra

    def _impact_terms(self, theta: NDArray[np.float64], C: NDArray[np.float64], jac: bool,
                      comps: dict) -> dict:
        """The impact's rows (reset map, impulse prior, torque continuity at t_e), their cost
        components added to ``comps``, and what ``_impact_normal`` needs of them."""
        p, a = self.p, self.p.adapter
        lam = self.impulse(theta)
        rs = self.reset(C, lam, jac=jac)
        r_rs = rs[0] / p.impact.sigma_reset
        r_pr = p.impact.prior_whitening() @ (lam - np.asarray(p.impact.impulse_prior_mean, float))
        comps["reset"] = 0.5 * float(r_rs @ r_rs)
        comps["impulse_prior"] = 0.5 * float(r_pr @ r_pr)
        qe = p.Be0 @ C
        vm, vp, am, ap = (B @ C for B in (p.Be1m, p.Be1p, p.Be2m, p.Be2p))
        wc = np.sqrt(p.impact.w_continuity) * self.ws
        r_tc = wc * (a.inverse_dynamics(qe, vp, ap) - a.inverse_dynamics(qe, vm, am))
        comps["torque_continuity"] = 0.5 * float(r_tc @ r_tc)
        return {"rs": rs, "r_rs": r_rs, "r_pr": r_pr, "r_tc": r_tc, "qe": qe, "vm": vm,
                "vp": vp, "am": am, "ap": ap, "wc": wc}

    def _impact_normal(self, ne: dict, imp: dict) -> None:
        """Adds the impact's rows to the normal equations ``ne``: the reset map's over the
        coefficients and Λ (H_CΛ, H_ΛΛ, g_Λ), the torque continuity's over the coefficients."""
        p, a = self.p, self.p.adapter
        sg = p.impact.sigma_reset
        rs, r_rs, r_pr, r_tc, wc = imp["rs"], imp["r_rs"], imp["r_pr"], imp["r_tc"], imp["wc"]
        qe, vm, vp, am, ap = imp["qe"], imp["vm"], imp["vp"], imp["am"], imp["ap"]
        R_C, R_L = rs[2] / sg, rs[3] / sg
        cols = np.flatnonzero(np.abs(R_C).sum(axis=0) > 0)
        Rc = R_C[:, cols]
        ne["H"][np.ix_(cols, cols)] += Rc.T @ Rc
        ne["g"][cols] += Rc.T @ r_rs
        ne["HcL"] = R_C.T @ R_L
        Wp = p.impact.prior_whitening()
        ne["HLL"] = R_L.T @ R_L + Wp.T @ Wp
        ne["gL"] = R_L.T @ r_rs + Wp.T @ r_pr
        Dp = a.inverse_dynamics_derivatives(qe, vp, ap)
        Dm = a.inverse_dynamics_derivatives(qe, vm, am)
        T_C = wc[:, None] * (np.kron(p.Be0[None, :], Dp[0] - Dm[0])
                             + np.kron(p.Be1p[None, :], Dp[1])
                             - np.kron(p.Be1m[None, :], Dm[1])
                             + np.kron(p.Be2p[None, :], Dp[2])
                             - np.kron(p.Be2m[None, :], Dm[2]))
        cols = np.flatnonzero(np.abs(T_C).sum(axis=0) > 0)
        Tc = T_C[:, cols]
        ne["H"][np.ix_(cols, cols)] += Tc.T @ Tc
        ne["g"][cols] += Tc.T @ r_tc

    def _ring_normal(self, ne: dict, r_geo: list, geo_J: list) -> None:
        """Adds the head's ringing to the normal equations: the marker rows of the frames
        after t_e depend on Λ through δ = g κ Λ (H_CΛ, H_ΛΛ, g_Λ)."""
        p = self.p
        b0 = p.bvals[0]
        for i in np.flatnonzero(p.t > p.impact.t_e):
            R = self.ring_rows(int(i))
            m = R.shape[0]
            if not m:
                continue
            Ji, ri = geo_J[i][:m], r_geo[i][:m]
            ix = ne["idx"][i]
            ne["HcL"][ix] += np.kron(b0[i][:, None], Ji.T @ R)
            ne["HLL"] += R.T @ R
            ne["gL"] += R.T @ ri

    def excitation(self,
                   tau: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(e, ∂e/∂a_i, ∂e/∂a_{i+1}) each (N − 1, n_a) [–]: the excitation of every frame
        interval of the activation-driven joints, from the torques τ (N, nv) [N·m | N]
        (a = τ/τ_max; harness/fit/activation.signed_excitation)."""
        ad = self.p.activation
        a = tau[:, list(ad.dofs)] / ad.tau_max
        return signed_excitation(a[:-1], a[1:], self.p.h, ad.model)

    def _contact_curvature(self, q, v, Jc_all, stick, beta_i, step=1e-7):
        """(∂(J_c v)/∂q (3·n_stick, nv), ∂(G β)/∂q (nv, nv)) at one frame by forward
        differences (step [rad | m]) of the contact frames' Jacobians, over the
        coordinates whose columns of J_c are nonzero (the pelvis and the legs)."""
        nv = self.nv
        a = self.p.adapter
        cols = np.flatnonzero(np.abs(Jc_all).sum(axis=(0, 1)) > 0)
        dJv = np.zeros((int(stick.sum()) * 3, nv))
        dGb = np.zeros((nv, nv))
        Gb0 = self.force_map(Jc_all, stick) @ beta_i
        v_st = Jc_all[stick].reshape(-1, nv) @ v
        for k in cols:
            qk = q.copy()
            qk[k] += step
            Jk = a.frame_jacobians(qk, self.cf)[:, :3, :]
            dJv[:, k] = (Jk[stick].reshape(-1, nv) @ v - v_st) / step
            dGb[:, k] = (self.force_map(Jk, stick) @ beta_i - Gb0) / step
        return dJv, dGb

    def _normal(self, r_geo, geo_J, r_slip, slip_J, dq, dv, da, act, tau, G, beta,
                curv=(), exc=None):
        """JᵀJ and Jᵀr assembled frame by frame: a dense H_CC over the spline coefficients
        (each frame's rows touch the W = degree + 1 coefficients of its band), and per
        frame the force blocks H_Cβ (W·nv, nc·4), H_ββ (nc·4, nc·4) and g_β — the forces
        of one frame enter only that frame's rows. dτ_i/dC_m = B0[i,m] ∂τ/∂q +
        B1[i,m] ∂τ/∂v + B2[i,m] ∂τ/∂v̇, and the actuation's ∂(ID − Gβ)/∂q takes the
        forward-difference ∂(Gβ)/∂q (``curv``)."""
        p, nv, N = self.p, self.nv, self.p.N
        n = p.M * nv
        H = np.zeros((n, n))
        g = np.zeros(n)
        b0, b1, b2 = p.bvals
        W = b0.shape[1]
        idx = p.band[:, :, None] * nv + np.arange(nv)[None, None, :]       # (N, W, nv)
        idx = idx.reshape(N, W * nv)
        nc = len(self.cf)
        Hcb, Hbb, gb = [], [], []
        # T_i (nv, W·nv): dτ_i/dC on frame i's band
        T = (dq[:, :, None, :] * b0[:, None, :, None] + dv[:, :, None, :] * b1[:, None, :, None]
             + da[:, :, None, :] * b2[:, None, :, None]).reshape(N, nv, W * nv)
        if nc:
            K = np.stack(curv)                                             # (N, nv, nv)
            Ta = T - (K[:, :, None, :] * b0[:, None, :, None]).reshape(N, nv, W * nv)
        else:
            Ta = T
        if self.p.passive is not None:
            # d(k q_j + c q̇_j)/dC on row j: the band's basis values of coordinate j
            pl = self.p.passive
            Ta = Ta.copy().reshape(N, nv, W, nv)
            for j, k, c in zip(pl.dofs, pl.k, pl.c):
                Ta[:, j, :, j] += k * b0 + c * b1
            Ta = Ta.reshape(N, nv, W * nv)
        for i in range(N):
            ix = slice(idx[i, 0], idx[i, -1] + 1)          # a band is contiguous
            Ji = geo_J[i]
            blk = np.kron(np.outer(b0[i], b0[i]), Ji.T @ Ji)
            gi = np.kron(b0[i], Ji.T @ r_geo[i])
            if nc and slip_J[i][0].size:
                A1, A0 = slip_J[i]
                Ls = np.kron(b1[i][None, :], A1) + np.kron(b0[i][None, :], A0)
                blk += Ls.T @ Ls
                gi += Ls.T @ r_slip[i]
            D = self.we[:, None] * Ta[i]                                  # (nv, W nv)
            e = self.we * act[i]
            blk += D.T @ D
            gi += D.T @ e
            H[ix, ix] += blk
            g[ix] += gi
            if nc:
                Jb = -self.we[:, None] * G[i]                              # (nv, nc 4)
                Hcb.append(D.T @ Jb)
                bi = beta[i].ravel()
                neg = (bi < 0).astype(float)
                Hbb.append(Jb.T @ Jb + np.diag(self.wf ** 2 + self.wh ** 2 * neg))
                gb.append(Jb.T @ e + self.wf ** 2 * bi + self.wh ** 2 * np.minimum(bi, 0.0))
        if exc is not None:
            jd = list(self.p.activation.dofs)
            tm = self.p.activation.tau_max[:, None]
        for i in range(N - 1):
            lo, hi = min(idx[i, 0], idx[i + 1, 0]), max(idx[i, -1], idx[i + 1, -1]) + 1
            L = np.zeros((nv, hi - lo))
            L[:, idx[i + 1, 0] - lo:idx[i + 1, -1] + 1 - lo] += T[i + 1]
            L[:, idx[i, 0] - lo:idx[i, -1] + 1 - lo] -= T[i]
            L *= self.ws[:, None]
            H[lo:hi, lo:hi] += L.T @ L
            g[lo:hi] += L.T @ (self.ws * (tau[i + 1] - tau[i]))
            if exc is not None:
                # the excitation rows of interval (i, i+1) and their bound's, through
                # ∂e/∂τ = ∂e/∂a / τ_max and dτ/dC of both frames
                e, d0, d1 = exc[0][i], exc[1][i], exc[2][i]
                E = np.zeros((len(jd), hi - lo))
                E[:, idx[i + 1, 0] - lo:idx[i + 1, -1] + 1 - lo] += \
                    d1[:, None] * T[i + 1][jd] / tm
                E[:, idx[i, 0] - lo:idx[i, -1] + 1 - lo] += d0[:, None] * T[i][jd] / tm
                X = self.wx[:, None] * E
                H[lo:hi, lo:hi] += X.T @ X
                g[lo:hi] += X.T @ (self.wx * e)
                over = np.abs(e) > 1.0
                if over.any():
                    B = self.wb * E[over]
                    H[lo:hi, lo:hi] += B.T @ B
                    g[lo:hi] += B.T @ (self.wb * _beyond_one(e[over]))
        return {"H": H, "g": g, "idx": idx, "Hcb": Hcb, "Hbb": Hbb, "gb": gb}


def _beyond_one(e):
    """(…) [–]: how far each excitation lies outside [−1, 1] (signed, 0 inside)."""
    return np.maximum(e - 1.0, 0.0) + np.minimum(e + 1.0, 0.0)


def _upper_banded(S) -> NDArray[np.float64]:
    """The upper banded storage ab (u + 1, n) of a symmetric S (n, n) stored dense but
    banded (SciPy's solveh_banded / cholesky_banded layout, diagonal in the last row)."""
    nzr, nzc = np.nonzero(S)
    u = int(np.max(nzc - nzr)) if nzr.size else 0
    ab = np.zeros((u + 1, S.shape[0]))
    for k in range(u + 1):
        ab[u - k, k:] = np.diagonal(S, k)
    return ab


def _solve_banded_spd(S, rhs):
    """x = S⁻¹ rhs for a symmetric positive definite S stored dense but banded."""
    from scipy.linalg import solveh_banded

    return solveh_banded(_upper_banded(S), rhs)


def laplace_terms(ne: dict) -> dict:
    """Laplace's method at a fit: ``half_log_det`` ½ log det H of the Gauss–Newton
    Hessian of the whole objective (the spline coefficients, the contact-force
    coefficients and, with an impact, the impulse Λ), ``dim`` the number of unknowns,
    and ``impulse_cov`` [H⁻¹]_ΛΛ (3, 3) [N²·s²] the impulse's marginal covariance (None
    without an impact). By the block elimination of ``_lm_step`` without damping: the
    force blocks frame by frame, the banded coefficient system by banded Cholesky, the
    impulse's 3 × 3 Schur complement last (det H is the product of the pivots' dets).
    A Hessian that is not numerically positive definite gives NaN terms."""
    try:
        return _laplace_terms(ne)
    except (np.linalg.LinAlgError, ValueError):
        return {"half_log_det": float("nan"), "dim": 0, "impulse_cov": None}


def _laplace_terms(ne: dict) -> dict:
    from scipy.linalg import cholesky_banded

    S = ne["H"].copy()
    logdet, dim = 0.0, S.shape[0]
    for i, (Hcb, Hbb) in enumerate(zip(ne["Hcb"], ne["Hbb"])):
        logdet += 2.0 * float(np.log(np.diag(np.linalg.cholesky(Hbb))).sum())
        dim += Hbb.shape[0]
        ix = slice(ne["idx"][i][0], ne["idx"][i][-1] + 1)
        S[ix, ix] -= Hcb @ np.linalg.solve(Hbb, Hcb.T)
    logdet += 2.0 * float(np.log(cholesky_banded(_upper_banded(S))[-1]).sum())
    cov = None
    if "HLL" in ne:
        X = _solve_banded_spd(S, ne["HcL"])
        D = ne["HLL"] - ne["HcL"].T @ X
        logdet += float(np.linalg.slogdet(D)[1])
        dim += 3
        cov = np.linalg.inv(D)
    return {"half_log_det": 0.5 * logdet, "dim": dim, "impulse_cov": cov}


def _at_bounds(prob: FitProblem, theta, v, outward_if_positive: bool) -> NDArray[np.bool_]:
    """(M·nv,) bool: the coefficients that sit on a bound of ``prob.bounds`` and along
    which ``v`` (M·nv,) points out of the box (with ``outward_if_positive`` False: −v)."""
    nv = prob.adapter.nv
    n = prob.M * nv
    C = theta[:n].reshape(prob.M, nv)
    d = np.asarray(v, float).reshape(prob.M, nv)
    if not outward_if_positive:
        d = -d
    lo, hi = prob.bounds
    return (((C <= lo[None, :]) & (d < 0)) | ((C >= hi[None, :]) & (d > 0))).ravel()


def _freeze(ne: dict, frozen: NDArray[np.bool_]) -> dict:
    """The normal equations with the coefficients ``frozen`` (M·nv,) bool held fixed:
    their rows and columns replaced by the identity, their gradient zero (the step moves
    the others as if those stayed put); ``ne`` itself when none is."""
    k = np.flatnonzero(frozen)
    if not k.size:
        return ne
    out = dict(ne)
    H = ne["H"].copy()
    H[k, :] = 0.0
    H[:, k] = 0.0
    H[k, k] = 1.0
    gg = ne["g"].copy()
    gg[k] = 0.0
    out["H"], out["g"] = H, gg
    if ne["Hcb"]:
        out["Hcb"] = []
        for i, Hcb in enumerate(ne["Hcb"]):
            rows = frozen[ne["idx"][i]]
            out["Hcb"].append(np.where(rows[:, None], 0.0, Hcb) if rows.any() else Hcb)
    if "HcL" in ne:
        HcL = ne["HcL"].copy()
        HcL[k, :] = 0.0
        out["HcL"] = HcL
    return out


def _bounded_step(prob: FitProblem, theta, ne: dict, lam: float):
    """``_lm_step`` with the box of ``prob.bounds`` (a projected Newton step): the
    coefficients on a bound whose descent direction −g points out are held, then those
    on a bound whose step still points out are added and the step solved again (at most
    eight rounds), so that the step is the Newton step of the free coefficients."""
    frozen = _at_bounds(prob, theta, ne["g"], outward_if_positive=False)
    for _ in range(8):
        dC, db, dL = _lm_step(_freeze(ne, frozen), lam)
        more = _at_bounds(prob, theta, dC, outward_if_positive=True) & ~frozen
        if not more.any():
            break
        frozen |= more
    return dC, db, dL


def _lm_step(ne: dict, lam: float):
    """The Levenberg–Marquardt step of the block normal equations with damping
    lam·(diag(H) + floor): the force blocks eliminated frame by frame (Schur complement),
    the banded coefficient system solved by banded Cholesky (bordered by the impulse's
    three unknowns with an impact). Returns (δC flat, δβ (N, nc·4) or None, δΛ (3,) or
    None)."""
    H, g = ne["H"], ne["g"]
    dH = H.diagonal()
    dmax = max(float(dH.max()), 1.0)
    if ne["Hbb"]:
        dmax = max(dmax, max(float(B.diagonal().max()) for B in ne["Hbb"]))
    floor = 1e-12 * dmax
    S = H + np.diag(lam * (dH + floor))
    rhs = g.copy()
    sol = []
    for i, (Hcb, Hbb, gb) in enumerate(zip(ne["Hcb"], ne["Hbb"], ne["gb"])):
        B = Hbb + np.diag(lam * (Hbb.diagonal() + floor))
        X = np.linalg.solve(B, np.c_[Hcb.T, gb])                         # B⁻¹[H_βC, g_β]
        ix = slice(ne["idx"][i][0], ne["idx"][i][-1] + 1)
        S[ix, ix] -= Hcb @ X[:, :-1]
        rhs[ix] -= Hcb @ X[:, -1]
        sol.append(X)
    if "HLL" in ne:
        # the impulse Λ couples to the coefficients near t_e only through the reset rows:
        # a bordered system, S⁻¹ applied to [−rhs, H_CΛ] and Λ's 3×3 Schur complement
        HcL = ne["HcL"]
        X = _solve_banded_spd(S, np.c_[-rhs, HcL])
        D = ne["HLL"] + np.diag(lam * (ne["HLL"].diagonal() + floor))
        dL = np.linalg.solve(D - HcL.T @ X[:, 1:], -ne["gL"] - HcL.T @ X[:, 0])
        dC = X[:, 0] - X[:, 1:] @ dL
    else:
        dC, dL = _solve_banded_spd(S, -rhs), None
    if not sol:
        return dC, None, dL
    db = np.stack([-(X[:, -1] + X[:, :-1] @ dC[ne["idx"][i]]) for i, X in enumerate(sol)])
    # (ne["idx"][i] is the contiguous band of frame i)
    return dC, db, dL


def feasible_forces(prob: FitProblem, C: NDArray[np.float64],
                    beta0: NDArray[np.float64] = None) -> tuple[NDArray[np.float64], dict]:
    """The contact forces made exactly feasible on the fitted motion: per frame, the
    non-negative least-squares problem min ‖W (ID − G β)‖² + w_f ‖β / F‖² over β ≥ 0
    (scipy nnls; W the effort and residual weights, G the force map of the stick points)
    — a constrained QP whose every solution has normal force ≥ 0 and lies inside the
    friction pyramid (inside the Coulomb cone). Returns (beta (N, nc, 4), forces
    (N, nc, 3) N world, act (N, nv) the joint torques and residuals left, G (N, nv, nc·4))."""
    from scipy.optimize import nnls

    res = _Residuals(prob)
    ct = prob.contact
    theta = np.r_[np.ravel(C), np.zeros(prob.n_force) if beta0 is None else np.ravel(beta0)]
    ev = res.evaluate(theta, jac=False)
    G, ID = ev["G"], ev["tau"]
    wf = np.sqrt(ct.w_force / prob.N) / ct.force_scale
    nb = ct.nc * 4
    beta = np.zeros((prob.N, nb))
    for i in range(prob.N):
        A = np.vstack([res.we[:, None] * G[i], wf * np.eye(nb)])
        b = np.r_[res.we * ID[i], np.zeros(nb)]
        beta[i] = nnls(A, b, maxiter=50 * nb)[0]
    act = ID - np.einsum("nij,nj->ni", G, beta)
    if prob.passive is not None:
        act[:, list(prob.passive.dofs)] += prob.passive.violation_part(ev["Q"], ev["V"])
    forces = np.einsum("kl,ncl->nck", res.E, beta.reshape(prob.N, ct.nc, 4))
    forces *= ct.stick[:, :, None]
    return beta.reshape(prob.N, ct.nc, 4), forces, act, G


def _replay_torques(prob: FitProblem, C):
    a = prob.adapter
    tr = prob.replay_grid()
    q, v, vd = prob.evaluate(C, tr)
    tau = np.stack([a.inverse_dynamics(q[k], v[k], vd[k]) for k in range(tr.size)])
    # defects: the interpolant the engines receive vs ID at the midpoints between knots
    # each phase interpolated on its own (the event's zero-length interval has no midpoint)
    cuts = [k for k in range(tr.size - 1) if tr[k] == tr[k + 1]]
    bounds = list(zip([0] + [k + 1 for k in cuts], cuts + [tr.size - 1]))
    mid = np.concatenate([0.5 * (tr[i + 1:j + 1] + tr[i:j]) for i, j in bounds])
    qm, vm, am = prob.evaluate(C, mid)
    tau_mid = np.stack([a.inverse_dynamics(qm[k], vm[k], am[k]) for k in range(mid.size)])
    interp = np.concatenate([
        np.stack([c.segment(k)(x) for k, x in enumerate(0.5 * (tr[i + 1:j + 1] + tr[i:j]))])
        for (i, j), c in ((b, Controls(tr[b[0]:b[1] + 1], tau[b[0]:b[1] + 1],
                                       prob.interpolation)) for b in bounds)])
    err = np.abs(interp - tau_mid)
    scale = np.maximum(np.abs(tau_mid).max(axis=0), prob.torque_scale * 1e-3)
    defects = {"max_abs": float(err.max()), "max_rel": float((err / scale).max()),
               "worst_joint": prob.adapter.joint_names[int(np.argmax((err / scale).max(axis=0)))],
               "interpolation": prob.interpolation, "knots": int(tr.size),
               "what": f"max |{prob.interpolation} interpolant of the replay torques − "
                       "ID(q, q̇, q̈)| at the midpoints between replay knots, relative to "
                       "each joint's peak torque (floor 1e-3 × its torque scale)"}
    return tr, tau, defects


def fit(prob: FitProblem, Q0: NDArray[np.float64], max_iter: int = 200, tol: float = 1e-9,
        progress: Callable | None = None, C0: NDArray[np.float64] = None,
        impulse0: NDArray[np.float64] | None = None) -> TrajectoryFitResult:
    """Levenberg–Marquardt from the spline through Q0 (N, nv) (or the coefficients C0).
    Stops when the relative cost decrease of an accepted step is below ``tol`` (or no
    decrease is possible). With ground contact the forces start from ``feasible_forces``
    on the initial spline and end made exactly feasible by it on the fitted one. With an
    impact (at the problem's current t_e; swing/impact_time.py searches t_e) the impulse Λ
    starts from ``impulse0`` [N·s] or from the least-squares JᵀΛ = M(v⁺ − v⁻) of the
    initial spline. With ``prob.bounds`` the start is clipped into the box and every step
    is the projected Newton step of ``_bounded_step``."""
    start = time.perf_counter()
    res = _Residuals(prob)
    C = prob.clip(prob.coefficients_from(Q0) if C0 is None else np.array(C0, float))
    beta = feasible_forces(prob, C)[0] if prob.contact is not None else np.zeros(0)
    theta = np.r_[C.ravel(), beta.ravel()]
    if prob.impact is not None:
        if impulse0 is None:
            r0, J0 = res.reset(C, np.zeros(3))
            impulse0 = np.linalg.lstsq(J0.T, r0, rcond=None)[0]
        theta = np.r_[theta, np.asarray(impulse0, float)]

    def evaluate(th: NDArray[np.float64], jac: bool) -> tuple:
        e = res.evaluate(th, jac=jac)
        return 0.5 * float(e["r"] @ e["r"]), e

    def step(ne: dict, th: NDArray[np.float64], lam: float
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        dC, db, dL = _lm_step(ne, lam) if prob.bounds is None else \
            _bounded_step(prob, th, ne, lam)
        d = dC if db is None else np.r_[dC, db.ravel()]
        if dL is not None:
            d = np.r_[d, dL]
        thn = th + d
        if prob.bounds is not None:    # projected: the coefficients back into the box
            nC = prob.M * res.nv
            thn[:nC] = prob.clip(thn[:nC].reshape(prob.M, res.nv)).ravel()
        return d, thn

    lm = levenberg_marquardt(evaluate, step, theta, LMOptions(max_iter=max_iter, ftol=tol),
                             prepare=lambda e: e["normal"], progress=progress)
    theta, history, it = lm.x, lm.history, lm.iterations
    converged, message = lm.converged, lm.message
    ev = res.evaluate(theta, jac=False)
    C, beta = res.split(theta)
    tr, tau_r, defects = _replay_torques(prob, C)
    extra = {}
    if prob.contact is not None:
        b_f, forces, act, _ = feasible_forces(prob, C, beta)
        raw = np.einsum("kl,ncl->nck", res.E, beta) * prob.contact.stick[:, :, None]
        extra = {"act": act, "forces": forces, "beta": b_f,
                 "contact_residual": ev["gres"], "forces_unprojected": raw}
    if prob.impact is not None:
        L = res.impulse(theta)
        r, J = res.reset(C, L)
        JtL = J.T @ L
        extra["impulse"] = L
        # the event time is the capture's velocity discontinuity, refined with its
        # measurement residual: measured
        extra["events"] = (Event(float(prob.impact.t_e), prob.impact.frame,
                                 tuple(float(x) for x in L), "measured"),)
        extra["impact"] = {
            "t_e_s": prob.impact.t_e, "frame": prob.impact.frame,
            "velocity_jump": prob.velocity_jump(C),
            "reset_violation_max": float(np.abs(r).max()),
            "reset_violation_rel": float(np.linalg.norm(r) / max(np.linalg.norm(JtL),
                                                                  1e-300)),
            "event_cost": prob.impact.event_cost(),
            # Laplace's method at the fit (the evidence of this event time, Λ's spread)
            "laplace": laplace_terms(res.evaluate(theta, jac=True)["normal"])}
    return TrajectoryFitResult(C=C, q=ev["Q"], v=ev["V"], vdot=ev["A"], tau=ev["tau"],
                               t=prob.t.copy(), t_replay=tr, tau_replay=tau_r,
                               components=ev["components"], marker_residual=ev["mres"],
                               closure_residual=ev["cres"], defects=defects,
                               history=history, iterations=it, converged=converged,
                               message=message, solve_time_s=time.perf_counter() - start,
                               labels=tuple(prob.labels), interpolation=prob.interpolation,
                               excitation=ev["excitation"], **extra)








def reintegrate(adapter: EngineAdapter, result: TrajectoryFitResult,
                method: Method | None = None) -> object:
    """Open-loop integration of the replay torques (their own interpolation; through the
    impact's reset when the fit has one) from the fitted (q0, v0), by ``method``
    (harness/model/integrators.py; default DOP853 with rtol = atol = 1e-12). Returns the
    harness Rollout on the replay knots."""
    method = method or Method("dop853", rtol=1e-12, atol=1e-12)
    return rollout(adapter, result.q[0], result.v[0], result.controls(), method)

"""Muscle-like first-order activation dynamics for the fitter (collocation and shooting).

Dimension legend: n_x states of the wrapped (torque-driven) system, n_a = its n_u
actuators; excitation e (n_a,) dimensionless in [0, 1] (the new control); activation
a (n_a,) dimensionless (a new state, appended after the wrapped system's states);
τ_max (n_a,) in the wrapped system's control unit (N·m for a revolute joint, N for a
prismatic one, or whatever the wrapped control is, e.g. rad/s² for ``damped_pendulum``).

Model (``ActivationModel``), per actuator:

    ȧ = (e − a) / τ(e, a),     1/τ(e, a) = f/τ_act + (1 − f)/τ_deact,
    f = ½ (1 + tanh(b (e − a))),

so τ → τ_act (activation, e > a) and τ → τ_deact (deactivation, e < a) away from e = a,
with a smooth blend of width ~1/b in e − a. The right-hand side depends on e and a only
through d = e − a: ȧ = g(d) = d/τ_deact + c d f(d), c = 1/τ_act − 1/τ_deact, with

    g'(d)  = 1/τ_deact + c f + c d f',           f'  = ½ b (1 − tanh²(b d)),
    g''(d) = 2 c f' + c d f'',                  f'' = −b² tanh(b d) (1 − tanh²(b d)),

∂ȧ/∂e = g', ∂ȧ/∂a = −g' (and g'' with signs for the second derivatives). The torque the
wrapped system receives is τ = τ_max ⊙ a.

Wrappers (no change to the wrapped classes):

* ``activation_dynamics(dyn, tau_max, model)``: any collocation ``ImplicitDynamics``
  (including ``ArticulatedDynamics`` with ``torque="free"``) → an ``ImplicitDynamics``
  with states [x, a], controls e, the same known inputs and parameters; residual
  [f(ẋ, x, τ_max ⊙ a, r, p, t); ȧ − g(e − a)]. Jacobian exact (the wrapped Jacobian's
  columns mapped, the control columns scaled by τ_max); Lagrangian Hessian: the wrapped
  one (analytic or its central differences) mapped the same way plus g'' analytically.
* ``ActivatedSystem(sys, tau_max, model)``: any shooting ``OdeSystem`` or
  ``ArticulatedSystem`` → a system with x = [x, a], u = e, the same p; f_x, f_u, f_p
  exact from the wrapped system's Jacobians.
* ``augment_C(C, n_a)``: a measurement matrix of the wrapped states padded with zero
  columns for the activations (activations are not measured).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.errors import BadInput
from harness.fit.collocation import ImplicitDynamics

TAU_ACT = 0.010      # s, activation time constant (default)
TAU_DEACT = 0.040    # s, deactivation time constant (default)
SHARPNESS = 10.0     # b, 1/(unit of e − a): width of the activation/deactivation blend


@dataclass(frozen=True)
class ActivationModel:
    """ȧ = g(e − a) (module docstring); tau_act, tau_deact [s] > 0; sharpness b > 0
    [dimensionless, per unit of e − a]."""

    tau_act: float = TAU_ACT
    tau_deact: float = TAU_DEACT
    sharpness: float = SHARPNESS

    def __post_init__(self):
        for name in ("tau_act", "tau_deact", "sharpness"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v > 0):
                raise BadInput("activation", f"{name} must be a finite number > 0, got {v!r}")

    @property
    def _c(self) -> float:
        return 1.0 / self.tau_act - 1.0 / self.tau_deact

    def blend(self, e: ArrayLike, a: ArrayLike) -> NDArray[np.float64]:
        """f (…) = ½ (1 + tanh(b (e − a))): 1 activating, 0 deactivating."""
        return 0.5 * (1.0 + np.tanh(self.sharpness * (np.asarray(e) - np.asarray(a))))

    def tau(self, e: ArrayLike, a: ArrayLike) -> NDArray[np.float64]:
        """(…) τ(e, a) [s]: the effective time constant."""
        f = self.blend(e, a)
        return 1.0 / (f / self.tau_act + (1.0 - f) / self.tau_deact)

    def rate(self, e: ArrayLike, a: ArrayLike) -> NDArray[np.float64]:
        """(…) ȧ [1/s] = g(e − a)."""
        return self._derivs(np.asarray(e, float) - np.asarray(a, float), 0)[0]

    def d_rate(self, e: ArrayLike, a: ArrayLike) -> NDArray[np.float64]:
        """(…) g'(e − a) [1/s] = ∂ȧ/∂e = −∂ȧ/∂a."""
        return self._derivs(np.asarray(e, float) - np.asarray(a, float), 1)[1]

    def dd_rate(self, e: ArrayLike, a: ArrayLike) -> NDArray[np.float64]:
        """(…) g''(e − a) [1/s] = ∂²ȧ/∂e² = ∂²ȧ/∂a² = −∂²ȧ/∂e∂a."""
        return self._derivs(np.asarray(e, float) - np.asarray(a, float), 2)[2]

    def _derivs(self, d, order):
        b, c = self.sharpness, self._c
        T = np.tanh(b * d)
        f = 0.5 * (1.0 + T)
        out = [d / self.tau_deact + c * d * f]
        if order >= 1:
            f1 = 0.5 * b * (1.0 - T * T)
            out.append(1.0 / self.tau_deact + c * f + c * d * f1)
            if order >= 2:
                f2 = -b * b * T * (1.0 - T * T)
                out.append(2.0 * c * f1 + c * d * f2)
        return out

    def rate_scalar(self, d: float) -> tuple:
        """(g(d), g'(d)) [1/s] for one float d = e − a (math, no arrays: the shooting
        wrapper calls it per actuator and per RK4 stage)."""
        c = self._c
        T = math.tanh(self.sharpness * d)
        f = 0.5 * (1.0 + T)
        return (d / self.tau_deact + c * d * f,
                1.0 / self.tau_deact + c * f + c * d * 0.5 * self.sharpness * (1.0 - T * T))


def _tau_max(tau_max, n_a) -> NDArray[np.float64]:
    if n_a < 1:
        raise BadInput("activation", "the wrapped system has no controls to drive")
    t = np.asarray(tau_max, float)
    if t.ndim == 0:
        t = np.full(n_a, float(t))
    if t.shape != (n_a,) or not np.all(np.isfinite(t)) or not np.all(t > 0):
        raise BadInput("activation", f"tau_max must be {n_a} finite values > 0 (one per "
                                     f"actuator), got {np.asarray(tau_max).tolist()!r}")
    return t


def augment_C(C: ArrayLike, n_a: int) -> NDArray[np.float64]:
    """(n_y, n_x + n_a) C with zero columns appended for the activations."""
    C = np.atleast_2d(np.asarray(C, float))
    return np.hstack([C, np.zeros((C.shape[0], n_a))])


# ----- collocation -------------------------------------------------------------------------
def activation_dynamics(dyn: ImplicitDynamics, tau_max: ArrayLike,
                        model: ActivationModel | None = None) -> ImplicitDynamics:
    """ImplicitDynamics with states [x (n_x), a (n_a)], controls e (n_a), the wrapped
    system's known inputs and parameters; z = [ẋ, ȧ, x, a, e, p]. Every free control of
    ``dyn`` becomes an actuator with torque τ_max ⊙ a; ``tau_max`` (n_a,) or a scalar in
    the wrapped control's unit."""
    model = model or ActivationModel()
    nx, na, npar = dyn.n_x, dyn.n_u, dyn.n_p
    tmax = _tau_max(tau_max, na)
    nzb = dyn.n_z
    jb = np.arange(nzb)
    cmap = jb + na * (jb >= nx) + na * (jb >= 2 * nx + na)      # wrapped z → new z
    scale = np.ones(nzb)
    scale[2 * nx:2 * nx + na] = tmax                            # ∂u/∂a = τ_max
    nz = 2 * (nx + na) + na + npar
    ia = np.arange(na)
    c_ad, c_a, c_e = nx + ia, 2 * nx + na + ia, 2 * nx + 2 * na + ia   # ȧ, a, e columns

    jm = np.zeros((nx + na, nz), bool)
    jm[:nx, cmap] = dyn.jac_mask
    jm[nx + ia, c_ad] = jm[nx + ia, c_a] = jm[nx + ia, c_e] = True
    hm = np.zeros((nz, nz), bool)
    hm[np.ix_(cmap, cmap)] = dyn.hess_mask
    for cols in ((c_a, c_a), (c_e, c_e), (c_a, c_e), (c_e, c_a)):
        hm[cols] = True

    def split(xd: NDArray[np.float64], x: NDArray[np.float64],
              u: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        return xd[:, :nx], xd[:, nx:], x[:, :nx], x[:, nx:], x[:, nx:] * tmax

    def residual(xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                 r: NDArray[np.float64], p: NDArray[np.float64],
                 t: NDArray[np.float64]) -> NDArray[np.float64]:
        xdb, ad, xb, a, tau = split(xd, x, u)
        return np.concatenate([dyn.residual(xdb, xb, tau, r, p, t),
                               ad - model.rate(u, a)], axis=1)

    def jacobian(xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                 r: NDArray[np.float64], p: NDArray[np.float64],
                 t: NDArray[np.float64]) -> NDArray[np.float64]:
        xdb, ad, xb, a, tau = split(xd, x, u)
        J = np.zeros((x.shape[0], nx + na, nz))
        J[:, :nx, cmap] = dyn.jacobian(xdb, xb, tau, r, p, t) * scale
        g1 = model.d_rate(u, a)
        J[:, nx + ia, c_ad] = 1.0
        J[:, nx + ia, c_a] = g1
        J[:, nx + ia, c_e] = -g1
        return J

    def hessian(xd: NDArray[np.float64], x: NDArray[np.float64], u: NDArray[np.float64],
                r: NDArray[np.float64], p: NDArray[np.float64], t: NDArray[np.float64],
                lam: NDArray[np.float64]) -> NDArray[np.float64]:
        xdb, ad, xb, a, tau = split(xd, x, u)
        M = x.shape[0]
        H = np.zeros((M, nz, nz))
        Hb = dyn.lagrangian_hessian(xdb, xb, tau, r, p, t, lam[:, :nx])
        H[:, cmap[:, None], cmap[None, :]] = Hb * np.outer(scale, scale)
        w = lam[:, nx:] * model.dd_rate(u, a)                   # (M, n_a)
        H[:, c_a, c_a] -= w
        H[:, c_e, c_e] -= w
        H[:, c_a, c_e] += w
        H[:, c_e, c_a] += w
        return H

    names = tuple(dyn.state_names) or tuple(f"x{i}" for i in range(nx))
    return ImplicitDynamics(nx + na, na, dyn.n_r, tuple(dyn.param_names), residual, jacobian,
                            jm, hessian, hm,
                            state_names=names + tuple(f"activation{i}" for i in range(na)))


# ----- shooting ------------------------------------------------------------------------------
class ActivatedSystem:
    """Shooting system x = [x (nx), a (n_a)], u = e (n_a), p (np) of a wrapped system
    ``sys`` (``OdeSystem`` or ``ArticulatedSystem``: nx, nu, np_, f, jac):
    ẋ = [f(t, x, τ_max ⊙ a, p); g(e − a)]; Jacobians exact from the wrapped ones."""

    def __init__(self, sys, tau_max, model: ActivationModel | None = None):
        self.base, self.model = sys, model or ActivationModel()
        self.tau_max = _tau_max(tau_max, sys.nu)
        self._nxb = sys.nx
        self.nx, self.nu, self.np_ = sys.nx + sys.nu, sys.nu, sys.np_
        self.name = f"activated:{getattr(sys, 'name', 'system')}"

    def _g(self, u, a):
        """(g (n_a,), g' (n_a,)) at e = u, activation a."""
        pairs = [self.model.rate_scalar(float(ui) - float(ai)) for ui, ai in zip(u, a)]
        return np.array([q[0] for q in pairs]), np.array([q[1] for q in pairs])

    def f(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
          p: NDArray[np.float64]) -> NDArray[np.float64]:
        """ẋ (n_x + n_a,) at t [s], x = [x_base, a], excitations u (n_a,) [–], p (np,): the
        base system's flow driven by τ = τ_max a, then ȧ = g(u − a)."""
        nxb = self._nxb
        a = x[nxb:]
        return np.concatenate([self.base.f(t, x[:nxb], self.tau_max * a, p), self._g(u, a)[0]])

    def jac(self, t: float, x: NDArray[np.float64], u: NDArray[np.float64],
            p: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
        """(f_x (nx, nx), f_u (nx, n_a), f_p (nx, np)) of ``f`` at (t [s], x (nx,), u (n_a,),
        p (np,))."""
        nxb, na, nx = self._nxb, self.nu, self.nx
        a = x[nxb:]
        fx, fu, fp = self.base.jac(t, x[:nxb], self.tau_max * a, p)
        g1 = self._g(u, a)[1]
        Fx = np.zeros((nx, nx))
        Fx[:nxb, :nxb] = fx
        Fx[:nxb, nxb:] = fu * self.tau_max
        ia = nxb + np.arange(na)
        Fx[ia, ia] = -g1
        Fu = np.zeros((nx, na))
        Fu[ia, np.arange(na)] = g1
        Fp = np.zeros((nx, self.np_))
        Fp[:nxb] = fp
        return Fx, Fu, Fp


# ----- signed actuators (a joint actuator pulls both ways) ----------------------------------
SIGN_SHARPNESS = 100.0   # b_a [1/(unit of a)]: width of the blend between the two mirrors


def _signed(model: ActivationModel, d, a, sharpness: float):
    """(ȧ, ∂ȧ/∂d, ∂ȧ/∂a) [1/s] of ``signed_rate`` at d = e − a and a."""
    b, c = model.sharpness, model._c
    T = np.tanh(b * d)
    f, f1 = 0.5 * (1.0 + T), 0.5 * b * (1.0 - T * T)
    S = np.tanh(sharpness * a)
    sg, sg1 = 0.5 * (1.0 + S), 0.5 * sharpness * (1.0 - S * S)
    fs = sg * f + (1.0 - sg) * (1.0 - f)
    return (d / model.tau_deact + c * d * fs,
            1.0 / model.tau_deact + c * fs + c * d * (2.0 * sg - 1.0) * f1,
            c * d * sg1 * (2.0 * f - 1.0))


def signed_rate(e: NDArray[np.float64], a: NDArray[np.float64],
                model: ActivationModel | None = None,
                sharpness: float = SIGN_SHARPNESS) -> NDArray[np.float64]:
    """(…) ȧ [1/s] of a signed activation a ∈ [−1, 1] driven by the excitation
    e ∈ [−1, 1] (torque a·τ_max): ``ActivationModel`` for a > 0 and its mirror image
    ȧ = −g(a − e) for a < 0, blended by σ(a) = ½(1 + tanh(b_a a)):

        ȧ = d/τ_deact + c d f_s,   d = e − a,   f_s = σ f(d) + (1 − σ)(1 − f(d)),

    so τ → τ_act while |a| rises and τ_deact while it falls, on either side of zero. ȧ
    rises monotonically with e (∂ȧ/∂e ≥ 1/τ_deact > 0), so an activation path fixes its
    excitation (``signed_excitation``)."""
    model = model or ActivationModel()
    e, a = np.asarray(e, float), np.asarray(a, float)
    return _signed(model, e - a, a, sharpness)[0]


def signed_excitation(a0: NDArray[np.float64], a1: NDArray[np.float64], h: float,
                      model: ActivationModel | None = None,
                      sharpness: float = SIGN_SHARPNESS) -> tuple[NDArray[np.float64], ...]:
    """Excitation e [–] held over one frame interval h [s] that takes a signed activation
    from a0 to a1 [–] (same shapes) by the implicit midpoint rule of ``signed_rate``:
    (a1 − a0)/h = ȧ(e, (a0 + a1)/2), solved for e (safeguarded Newton on the monotone
    rate, to round-off). Returns (e, ∂e/∂a0, ∂e/∂a1), each the shape of a0 (exact, by the
    implicit function theorem)."""
    model = model or ActivationModel()
    a0, a1 = np.asarray(a0, float), np.asarray(a1, float)
    ab, ad = 0.5 * (a0 + a1), (a1 - a0) / h
    # ȧ/d lies between 1/τ_deact and 1/τ_act, so d lies between ȧ τ_act and ȧ τ_deact
    lo = np.minimum(ad * model.tau_act, ad * model.tau_deact)
    hi = np.maximum(ad * model.tau_act, ad * model.tau_deact)
    d = 0.5 * (lo + hi)
    for _ in range(100):
        g, gd, _ = _signed(model, d, ab, sharpness)
        r = g - ad
        lo = np.where(r < 0, d, lo)
        hi = np.where(r > 0, d, hi)
        dn = d - r / gd
        bad = (dn <= lo) | (dn >= hi)
        dn = np.where(bad, 0.5 * (lo + hi), dn)
        done = np.abs(dn - d) <= 1e-15 * (1.0 + np.abs(d))
        d = dn
        if np.all(done):
            break
    _, gd, ga = _signed(model, d, ab, sharpness)
    dd_dad, dd_dab = 1.0 / gd, -ga / gd
    de_dab = 1.0 + dd_dab
    return ab + d, 0.5 * de_dab - dd_dad / h, 0.5 * de_dab + dd_dad / h

"""Activation dynamics (harness/fit/activation.py): derivatives against finite differences
(the model, the collocation wrapper's Jacobian and Lagrangian Hessian, the shooting
wrapper's Jacobians and gradients), step responses against the exact exponential of the
linear ODE, and an identification on synthetic data by collocation and by shooting,
with the plain-torque fit of the same data for comparison."""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from harness.core.tolerances import lookup
from harness.fit import shooting as sh
from harness.fit.activation import (
    ActivatedSystem,
    ActivationModel,
    activation_dynamics,
    augment_C,
)
from harness.fit.collocation import (
    ArticulatedDynamics,
    Collocator,
    ImplicitDynamics,
    Objective,
    Trial,
)
from harness.stages.derivatives import EXACT_METHODS
from tests.conftest import adapter

MODEL = ActivationModel()          # τ_act 10 ms, τ_deact 40 ms, b = 10


# ---- a torque-driven damped pendulum (collocation form): θ̈ = −p0 sin θ − p1 θ̇ + u
def _pend_res(xd, x, u, r, p, t):
    return np.stack([xd[:, 0] - x[:, 1],
                     xd[:, 1] + p[0] * np.sin(x[:, 0]) + p[1] * x[:, 1] - u[:, 0]], axis=1)


def _pend_jac(xd, x, u, r, p, t):
    J = np.zeros((x.shape[0], 2, 7))       # z = [θ̇_d, ω̇_d, θ, ω, u, p0, p1]
    J[:, 0, 0], J[:, 0, 3] = 1.0, -1.0
    J[:, 1, 1], J[:, 1, 2], J[:, 1, 3], J[:, 1, 4] = 1.0, p[0] * np.cos(x[:, 0]), p[1], -1.0
    J[:, 1, 5], J[:, 1, 6] = np.sin(x[:, 0]), x[:, 1]
    return J


def driven_pendulum() -> ImplicitDynamics:
    m = np.zeros((2, 7), bool)
    m[0, [0, 3]] = True
    m[1, [1, 2, 3, 4, 5, 6]] = True
    return ImplicitDynamics(2, 1, 0, ("p0", "p1"), _pend_res, _pend_jac, m)  # Hessian: FD


# ---- helpers (the table's norm-wise-per-row convention, as tests/unit/test_collocation.py)
def _close_rows(a, b, tol, symmetric=False):
    scale = np.maximum(np.abs(a).max(axis=1, keepdims=True), np.abs(b).max(axis=1, keepdims=True))
    if symmetric:
        scale = np.maximum(scale, scale.T)
    return np.abs(a - b) <= tol.atol + tol.rtol * scale


def _fd_jacobian(c, th, eps=1e-6):
    J = np.zeros((c.m, c.n))
    for j in range(c.n):
        e = np.zeros(c.n)
        e[j] = eps
        J[:, j] = (c.constraints(th + e) - c.constraints(th - e)) / (2 * eps)
    return J


def _check_collocator_derivatives(c, th, lam, jac_tol, hess_tol):
    rows, cols = c.jacobianstructure()
    J = np.zeros((c.m, c.n))
    J[rows, cols] = c.jacobian(th)
    Jfd = _fd_jacobian(c, th)
    assert np.all(_close_rows(J, Jfd, jac_tol)), np.abs(J - Jfd).max()
    in_struct = np.zeros((c.m, c.n), bool)
    in_struct[rows, cols] = True
    assert not np.any((np.abs(Jfd) > lookup("fit", "jacobian_fd_nonzero").atol) & ~in_struct)

    def grad_l(x):
        Jt = np.zeros(c.n)
        np.add.at(Jt, cols, c.jacobian(x) * lam[rows])
        return 0.7 * c.gradient(x) + Jt
    Hfd = np.zeros((c.n, c.n))
    for j in range(c.n):
        e = np.zeros(c.n)
        e[j] = 1e-6
        Hfd[:, j] = (grad_l(th + e) - grad_l(th - e)) / 2e-6
    r, q = c.hessianstructure()
    H = np.zeros((c.n, c.n))
    H[r, q] = c.hessian(th, lam, 0.7)
    H = np.tril(H) + np.tril(H, -1).T
    assert np.all(_close_rows(H, 0.5 * (Hfd + Hfd.T), hess_tol, symmetric=True)), \
        np.abs(H - Hfd).max()


# ---- derivatives ------------------------------------------------------------------------
def test_model_derivatives_and_time_constants():
    """g', g'' against central differences over e − a ∈ [−1.5, 1.5] (the blend region
    included); τ → τ_act activating, τ_deact deactivating."""
    tol = lookup("fit", "jacobian_fd")
    e = np.linspace(-1.5, 1.5, 61)
    a = np.full_like(e, 0.3)
    eps = 1e-6
    for fn, d, what in ((MODEL.rate, MODEL.d_rate, "g'"), (MODEL.d_rate, MODEL.dd_rate, "g''")):
        fd_e = (fn(e + eps, a) - fn(e - eps, a)) / (2 * eps)
        fd_a = (fn(e, a + eps) - fn(e, a - eps)) / (2 * eps)
        scale = np.abs(fd_e).max()
        assert np.abs(d(e, a) - fd_e).max() <= tol.atol + tol.rtol * scale, what
        # functions of e − a only: ∂/∂a = −∂/∂e
        assert np.abs(-d(e, a) - fd_a).max() <= tol.atol + tol.rtol * scale, what
    # the scalar path of the shooting wrapper: the same numbers
    for di in (-1.2, -0.05, 0.0, 0.07, 0.9):
        assert MODEL.rate_scalar(di) == pytest.approx((MODEL.rate(di, 0.0),
                                                       MODEL.d_rate(di, 0.0)), rel=1e-14)
    # the rate: (e − a)/τ with the blend's τ
    assert np.allclose(MODEL.rate(e, a), (e - a) / MODEL.tau(e, a), rtol=1e-14, atol=0)
    assert abs(MODEL.tau(1.0, 0.0) / MODEL.tau_act - 1) < 1e-6
    assert abs(MODEL.tau(0.0, 1.0) / MODEL.tau_deact - 1) < 1e-6


def _check_point_hessian(dyn, rng, M=5):
    """The wrapper's own (M, n_z, n_z) Σ λ ∂²f/∂z², whole matrix (the Collocator reads one
    triangle only), against central differences of its Jacobian."""
    nx, nu, npar = dyn.n_x, dyn.n_u, dyn.n_p
    z = rng.uniform(0.0, 1.0, (M, dyn.n_z))
    p = z[0, 2 * nx + nu:].copy()
    lam = rng.normal(size=(M, nx))
    r, t = np.zeros((M, dyn.n_r)), np.zeros(M)

    def jac(zz, pp):
        return dyn.jacobian(zz[:, :nx], zz[:, nx:2 * nx], zz[:, 2 * nx:2 * nx + nu], r, pp, t)
    H = dyn.hessian(z[:, :nx], z[:, nx:2 * nx], z[:, 2 * nx:2 * nx + nu], r, p, t, lam)
    eps = 1e-6
    for j in range(dyn.n_z):
        zp, zm, pp, pm = z.copy(), z.copy(), p.copy(), p.copy()
        if j < 2 * nx + nu:
            zp[:, j] += eps
            zm[:, j] -= eps
        else:
            pp[j - 2 * nx - nu] += eps
            pm[j - 2 * nx - nu] -= eps
        col = np.einsum("mf,mfz->mz", lam, (jac(zp, pp) - jac(zm, pm)) / (2 * eps))
        tol = lookup("fit", "hessian_fd")
        assert np.all(np.abs(H[:, :, j] - col) <= tol.atol + tol.rtol * np.abs(col).max()), j
    assert npar == len(p)


@pytest.mark.parametrize("method", ["midpoint", "hermite_simpson"])
def test_collocation_wrapper_derivatives(method):
    """Jacobian (exact structure) and Lagrangian Hessian of the wrapped driven pendulum
    in a Collocator, against central differences, at a random point."""
    rng = np.random.default_rng(4)
    dyn = activation_dynamics(driven_pendulum(), 7.0)
    assert dyn.n_x == 3 and dyn.n_u == 1 and dyn.param_names == ("p0", "p1")
    _check_point_hessian(dyn, rng)
    obj = Objective(C=augment_C([[1.0, 0.0]], 1), sigma=[0.1], w_smooth=0.3, w_effort=0.2)
    c = Collocator(dyn, [Trial(h=0.05, y=rng.normal(size=(6, 1)))], obj, method=method)
    th = rng.normal(size=c.n)
    for b in c.blocks:          # activations and excitations in the blend's range
        th[b["X"][:, 2]] = rng.uniform(0.0, 1.0, b["N"])
        th[b["U"]] = rng.uniform(0.0, 1.0, b["U"].shape)
    th[c.P] = [8.0, 0.4]
    _check_collocator_derivatives(c, th, rng.normal(size=c.m), lookup("fit", "jacobian_fd"),
                                  lookup("fit", "hessian_fd"))


def test_collocation_wrapper_articulated():
    """ArticulatedDynamics (Pinocchio double pendulum, torque free) wrapped: Jacobian and
    Hessian (the wrapped Hessian is central differences of the engine's Jacobian)."""
    rng = np.random.default_rng(5)
    ad = adapter("pinocchio", "double_pendulum")
    dyn = activation_dynamics(ArticulatedDynamics(ad, torque="free"), [30.0, 12.0])
    nv = ad.nv
    assert dyn.n_x == 3 * nv and dyn.n_u == nv
    C = augment_C(np.eye(nv, 2 * nv), nv)
    c = Collocator(dyn, [Trial(h=0.05, y=rng.normal(size=(4, nv)))],
                   Objective(C=C, sigma=np.full(nv, 0.1)), method="midpoint")
    th = 0.5 * rng.normal(size=c.n)
    for b in c.blocks:
        th[b["X"][:, 2 * nv:]] = rng.uniform(0.0, 1.0, (b["N"], nv))
        th[b["U"]] = rng.uniform(0.0, 1.0, b["U"].shape)
    _check_collocator_derivatives(c, th, rng.normal(size=c.m), lookup("fit", "hessian_fd"),
                                  lookup("fit", "hessian_fd"))


def _check_system_jacobians(sysm, x, u, p, tol):
    fx, fu, fp = sysm.jac(0.0, x, u, p)
    eps = 1e-6
    for J, arg in ((fx, 0), (fu, 1), (fp, 2)):
        fd = np.zeros_like(J)
        for j in range(J.shape[1]):
            args = [x.copy(), u.copy(), p.copy()]
            args[arg][j] += eps
            fplus = sysm.f(0.0, *args)
            args[arg][j] -= 2 * eps
            fd[:, j] = (fplus - sysm.f(0.0, *args)) / (2 * eps)
        assert np.all(_close_rows(J, fd, tol)), (arg, np.abs(J - fd).max())


@pytest.mark.parametrize("wrapped", ["damped_pendulum", "pinocchio:double_pendulum"])
def test_shooting_wrapper_derivatives(wrapped):
    """f_x, f_u, f_p against central differences of f; then the single-shooting gradient
    by adjoint, forward sensitivities and central differences of the objective."""
    rng = np.random.default_rng(6)
    if wrapped == "damped_pendulum":
        base, p = sh.damped_pendulum(), np.array([9.0, 0.3])
        xb = np.array([0.4, -0.3])
        deriv_tol = lookup("fit", "jacobian_fd")
    else:
        ad = adapter(*wrapped.split(":"))
        base = sh.ArticulatedSystem(ad)
        q0, v0 = ad.random_state(rng)
        xb, p = np.concatenate([0.5 * q0, v0]), np.full(base.np_, 0.2)
        exact = ad.derivatives_method in EXACT_METHODS
        deriv_tol = lookup("fit", "jacobian_fd" if exact else "hessian_fd")
    sysm = ActivatedSystem(base, np.linspace(5.0, 9.0, base.nu))
    assert (sysm.nx, sysm.nu, sysm.np_) == (base.nx + base.nu, base.nu, base.np_)
    x = np.concatenate([xb, rng.uniform(0.0, 1.0, base.nu)])
    _check_system_jacobians(sysm, x, rng.uniform(0.0, 1.0, base.nu), p, deriv_tol)

    K, N, T = 4, 40, 0.2
    steps = np.arange(0, N + 1, 4)
    meas = sh.Measurements(steps, 0.3 * rng.normal(size=(len(steps), sysm.nx)),
                           np.eye(sysm.nx), np.full(sysm.nx, 4.0))
    P = sh.SingleShooting(sysm, sh.Controls("piecewise_constant", K, T), N, meas)
    z = np.concatenate([x, rng.uniform(0.0, 1.0, K * sysm.nu), p])
    ga, gf, gd = P.gradient_adjoint(z), P.gradient_forward(z), P.gradient_fd(z, 1e-6)
    tol = lookup("shooting", "gradient")
    scale = np.abs(gd).max()
    assert np.abs(ga - gf).max() <= tol.rtol * scale
    assert np.abs(gf - gd).max() <= max(tol.rtol, deriv_tol.rtol) * scale


# ---- step responses ---------------------------------------------------------------------
T_S, T_E = 0.1, 0.2     # s: excitation 0 → 1 at T_S, 1 → 0 at T_E


def _check_step(t, a, h, a_rise_ref, decay_from):
    """a at T_S + τ_act and at T_E + τ_deact against the references; continuity: one
    step never moves a by more than h · max|ȧ| = h g(1) although e jumps by 1."""
    tol = lookup("activation", "step_response")
    i1 = int(round((T_S + MODEL.tau_act) / h))
    i2, ie = int(round((T_E + MODEL.tau_deact) / h)), int(round(T_E / h))
    assert abs(a[i1] - a_rise_ref) <= tol.atol, (a[i1], a_rise_ref)
    a_ref2 = decay_from(a, ie) * np.exp(-1.0)
    assert abs(a[i2] - a_ref2) <= tol.atol, (a[i2], a_ref2)
    assert np.abs(np.diff(a)).max() <= h * float(MODEL.rate(1.0, 0.0)) * (1 + 1e-9)
    assert a[:int(round(T_S / h))].max() <= tol.atol      # nothing before the step


def test_step_response_shooting():
    """RK4 (h = 1 ms) rollout, piecewise-constant excitation [0, 1, 0]: the rise reaches
    1 − e⁻¹ after τ_act, the decay a(T_E) e⁻¹ after τ_deact (u held: ȧ = (u − a)/τ)."""
    h, T = 1e-3, 0.3
    sysm = ActivatedSystem(sh.damped_pendulum(), 5.0, MODEL)
    ctrl = sh.Controls("piecewise_constant", 3, T)
    tr = sh.rk4_rollout(sysm, np.zeros(3), np.array([[0.0], [1.0], [0.0]]),
                        np.array([10.0, 0.5]), ctrl, 0.0, h, int(round(T / h)))
    _check_step(tr.t, tr.x[:, 2], h, 1.0 - np.exp(-1.0), lambda a, ie: a[ie])


@pytest.mark.parametrize("method", ["midpoint", "hermite_simpson"])
def test_step_response_collocation(method):
    """Collocation with the excitation prescribed at the nodes (bounds lb = ub = e_i; 0
    up to T_S − h, 1 from T_S to T_E − h): between nodes e is linear, so the input is a
    ramp over [T_S − h, T_S]. The exact solution of the linear ODE for it:
    a(T_S) = 1 − (τ/h)(1 − e^{−h/τ}), then 1 − (1 − a(T_S)) e^{−(t − T_S)/τ}; the decay
    likewise from the ramp down over [T_E − h, T_E]."""
    h, T = 1e-3, 0.3
    N = int(round(T / h)) + 1
    t = h * np.arange(N)
    e = ((t >= T_S - 1e-9) & (t < T_E - 1e-9)).astype(float)[:, None]
    tr = Trial(h=h, y=np.zeros((N, 1)), fixed={(0, 0): 0.0, (0, 1): 0.0, (0, 2): 0.0})
    c = Collocator(activation_dynamics(driven_pendulum(), 5.0, MODEL), [tr],
                   Objective(C=augment_C([[1.0, 0.0]], 1), w_meas=0.0), method=method,
                   known={"p0": 10.0, "p1": 0.5}, control_bounds=(e, e))
    r = c.solve()
    assert r.converged, r.message
    a = r.states[0][:, 2]
    ta, td = MODEL.tau_act, MODEL.tau_deact
    rise = 1.0 - ta / h * (1.0 - np.exp(-h / ta)) * np.exp(-1.0)

    # decay: the ramp 1 → 0 over [T_E − h, T_E] from a(T_E − h), then τ_deact
    _check_step(t, a, h, rise, lambda a, ie: _ramp_down(a[ie - 1], h, td))


def _ramp_down(a0, h, tau):
    """a(h) of ȧ = (u − a)/τ, u = 1 − s/h on [0, h], a(0) = a0 (exact)."""
    q = np.exp(-h / tau)
    # particular solution of ȧ = (1 − s/h − a)/τ: a_p = 1 − s/h + τ/h
    return (a0 - 1.0 - tau / h) * q + tau / h


# ---- identification on synthetic data ---------------------------------------------------
# Pendulum θ̈ = −p0 sin θ − p1 θ̇ + τ_max a (per unit inertia: τ in rad/s²), a driven by a
# piecewise-constant excitation with steps; θ measured at 1 kHz with σ = 1e-4 rad.
ID_TMAX, ID_P = 40.0, (20.0, 0.5)
ID_E = np.array([0.0, 1.0, 0.6, 0.0])          # 0.1 s each
ID_T, ID_H, ID_SIGMA, ID_X0 = 0.4, 1e-3, 1e-4, (0.3, 0.0, 0.0)
ID_W_SMOOTH = 1e-5                             # on the excitation, 1/s² weight


@lru_cache(maxsize=1)
def _id_data():
    """(t (N+1,), x_true (N+1, 3) [θ rad, ω rad/s, a], y (N+1,) θ measured): SciPy DOP853
    (rtol = atol = 1e-12, knot to knot) of the activation-driven pendulum."""
    sysm = ActivatedSystem(sh.damped_pendulum(), ID_TMAX, MODEL)
    ctrl = sh.Controls("piecewise_constant", len(ID_E), ID_T)
    N = int(round(ID_T / ID_H))
    t = ID_H * np.arange(N + 1)
    x = sh.reintegrate(sysm, np.array(ID_X0), ID_E[:, None], np.array(ID_P), ctrl, t)
    y = x[:, 0] + ID_SIGMA * np.random.default_rng(0).normal(size=N + 1)
    return t, x, y


def test_identification_collocation_against_plain_torque():
    """Collocation (midpoint, h = 1 ms) identifies p0 with activation-driven torque
    (e ∈ [0, 1], w_smooth on e); the same fit with plain torque controls (τ ∈ [0, τ_max],
    the same smoothness weight in torque units) makes torque jumps between nodes that
    activation dynamics cannot make (|Δτ| > τ_max h max|ȧ|) and is further from the true
    torque."""
    t, x, y = _id_data()
    h, N = ID_H, len(t)
    xg = np.stack([y, np.gradient(y, h), np.zeros(N)], axis=1)
    known, guess = {"p1": ID_P[1]}, {"p0": 15.0}
    act = Collocator(activation_dynamics(driven_pendulum(), ID_TMAX, MODEL),
                     [Trial(h=h, y=y[:, None], x_guess=xg)],
                     Objective(C=augment_C([[1.0, 0.0]], 1), sigma=[ID_SIGMA],
                               w_smooth=ID_W_SMOOTH),
                     known=known, p_guess=guess, control_bounds=([0.0], [1.0])).solve()
    plain = Collocator(driven_pendulum(), [Trial(h=h, y=y[:, None], x_guess=xg[:, :2])],
                       Objective(C=[[1.0, 0.0]], sigma=[ID_SIGMA],
                                 w_smooth=ID_W_SMOOTH / ID_TMAX ** 2),
                       known=known, p_guess=guess, control_bounds=([0.0], [ID_TMAX])).solve()
    assert act.converged and plain.converged, (act.message, plain.message)
    p_err = abs(act.params["p0"] / ID_P[0] - 1.0)
    assert p_err <= lookup("activation", "parameter_recovery").atol, act.params

    slack = lookup("fit", "final_infeasibility").atol
    bound = ID_TMAX * h * float(MODEL.rate(1.0, 0.0))      # |Δτ| per node interval
    tau_act = ID_TMAX * act.states[0][:, 2]
    tau_plain = plain.controls[0][:, 0]
    assert np.abs(np.diff(tau_act)).max() <= bound + ID_TMAX * slack
    assert np.abs(np.diff(tau_plain)).max() > bound, np.abs(np.diff(tau_plain)).max()
    # torque the midpoint rule applies on each interval, against the truth's
    mid = lambda v: 0.5 * (v[1:] + v[:-1])     # noqa: E731
    true = mid(ID_TMAX * x[:, 2])
    rms = lambda v: float(np.sqrt(np.mean((mid(v) - true) ** 2)))     # noqa: E731
    assert rms(tau_act) < rms(tau_plain), (rms(tau_act), rms(tau_plain))


def test_identification_shooting():
    """Single shooting (RK4, h = 1 ms, piecewise-constant excitation, p known) recovers
    each excitation of the truth, and the fit passes the independent DOP853 reintegration
    gate; the fitted activation stays continuous across the excitation steps."""
    t, x, y = _id_data()
    sysm = ActivatedSystem(sh.damped_pendulum(), ID_TMAX, MODEL)
    K, N = len(ID_E), len(t) - 1
    meas = sh.Measurements(np.arange(N + 1), y[:, None], np.array([[1.0, 0.0, 0.0]]),
                           np.array([ID_SIGMA ** -2]))
    prob = sh.SingleShooting(sysm, sh.Controls("piecewise_constant", K, ID_T), N, meas)
    z0 = np.concatenate([[y[0], 0.0, 0.0], np.full(K, 0.5), ID_P])
    fixed = np.zeros(prob.nz, bool)
    fixed[-2:] = True
    z, res = sh.solve_single(prob, z0, fixed=fixed)
    assert res.accepted, res.reason
    e = z[3:3 + K]
    tol = lookup("activation", "excitation_recovery")
    assert np.abs(e - ID_E).max() <= tol.atol, e
    a = res.x[:, 2]
    assert np.abs(np.diff(a)).max() <= ID_H * float(MODEL.rate(1.0, 0.0)) * (1 + 1e-9)


@pytest.mark.parametrize("make, match", [
    (lambda: ActivationModel(tau_act=0.0), "tau_act must be"),
    (lambda: ActivationModel(sharpness=float("nan")), "sharpness must be"),
    (lambda: activation_dynamics(driven_pendulum(), [1.0, 2.0]), "tau_max must be 1"),
    (lambda: ActivatedSystem(sh.damped_pendulum(), -3.0), "tau_max must be 1"),
    (lambda: activation_dynamics(ImplicitDynamics(1, 0, 0, (), None, None,
                                                  np.ones((1, 2), bool)), 1.0), "no controls"),
])
def test_bad_input(make, match):
    from harness.core.errors import BadInput
    with pytest.raises(BadInput, match=match):
        make()


def test_signed_excitation_reproduces_the_signed_ODE():
    """The excitation the implicit midpoint rule finds for each interval of a smooth
    activation path through zero, held over that interval in the signed model's ODE
    (DOP853), lands on the path's next sample; its derivatives match central differences;
    the signed model is odd in (e, a) and is ActivationModel where a is clearly positive."""
    from scipy.integrate import solve_ivp

    from harness.fit.activation import ActivationModel, signed_excitation, signed_rate

    model = ActivationModel()

    def path(h):
        t = np.arange(0.0, 0.3 + h / 2, h)
        return t, 0.15 + 0.6 * np.sin(2 * np.pi * 3.0 * t) + 0.2 * np.sin(2 * np.pi * 11.0 * t)

    def worst_landing(h, e, a):
        err = [abs(solve_ivp(lambda _, x: [float(signed_rate(e[i], x[0], model))], (0.0, h),
                             [a[i]], method="DOP853", rtol=1e-12, atol=1e-12).y[0, -1]
                   - a[i + 1]) for i in range(0, len(a) - 1, int(round(3.5e-4 / h)))]
        return max(err)

    h = 5e-5
    t, a = path(h)
    assert a.min() < -0.3 and a.max() > 0.6
    e, d0, d1 = signed_excitation(a[:-1], a[1:], h, model)
    # fast enough that the excitation leads the activation by a good part of its range
    assert np.abs(e - 0.5 * (a[:-1] + a[1:])).max() > 0.3
    worst = worst_landing(h, e, a)
    assert worst <= lookup("activation", "signed_midpoint").atol
    # the implicit midpoint rule's local error is O(h³): 8 times larger at twice the step
    t2, a2 = path(2 * h)
    ratio = worst_landing(2 * h, signed_excitation(a2[:-1], a2[1:], 2 * h, model)[0], a2) / worst
    assert abs(ratio - 8.0) <= lookup("activation", "midpoint_order").atol, ratio
    eps = 1e-7
    k = np.arange(0, len(t) - 1, 37)
    fd0 = (signed_excitation(a[k] + eps, a[k + 1], h, model)[0]
           - signed_excitation(a[k] - eps, a[k + 1], h, model)[0]) / (2 * eps)
    fd1 = (signed_excitation(a[k], a[k + 1] + eps, h, model)[0]
           - signed_excitation(a[k], a[k + 1] - eps, h, model)[0]) / (2 * eps)
    fdt = lookup("swing", "jacobian/finite_difference").rtol
    assert np.abs(d0[k] - fd0).max() <= fdt * np.abs(fd0).max()
    assert np.abs(d1[k] - fd1).max() <= fdt * np.abs(fd1).max()
    assert np.abs(signed_excitation(-a[:-1], -a[1:], h, model)[0] + e).max() \
        <= lookup("activation", "signed_symmetry").atol
    x = np.linspace(-1.0, 1.0, 41)
    assert np.abs(signed_rate(x, 0.4, model) - model.rate(x, 0.4)).max() \
        <= lookup("activation", "signed_positive").atol

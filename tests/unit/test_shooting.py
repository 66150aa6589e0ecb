"""Shooting (harness/fit/shooting.py): adjoint, forward-sensitivity and finite-difference
gradients of the discrete objective for every parameter group and parameterisation, the
ẋ = a x + u worked example against its closed form, conditioning of single vs multiple
shooting, and multiple-shooting acceptance (both gates)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.tolerances import lookup
from harness.fit import shooting as sh
from harness.stages.derivatives import EXACT_METHODS
from tests.conftest import ENGINES, adapter

GROUPS = ("x0", "theta", "p")


def _groups(nx, K, nu, npar):
    return {"x0": slice(0, nx), "theta": slice(nx, nx + K * nu),
            "p": slice(nx + K * nu, nx + K * nu + npar)}


def _check_gradients(P, z, tol):
    """Every group: adjoint vs forward sensitivities vs central differences."""
    ga, gf, gd = P.gradient_adjoint(z), P.gradient_forward(z), P.gradient_fd(z, 1e-6)
    sysm = P.sys
    for name, sl in _groups(sysm.nx, P.ctrl.K, sysm.nu, sysm.np_).items():
        scale = np.abs(gd[sl]).max()
        assert scale > 0, f"{name}: zero gradient, the check would be vacuous"
        for label, g in (("adjoint", ga), ("forward", gf)):
            err = np.abs(g[sl] - gd[sl]).max() / scale
            assert err <= tol.rtol, f"{name} {label} vs FD: {err:.2e} > {tol.rtol}"
        err = np.abs(ga[sl] - gf[sl]).max() / scale
        assert err <= tol.rtol, f"{name} adjoint vs forward: {err:.2e}"


def _problem(sysm, kind, K, N, T, seed=0):
    rng = np.random.default_rng(seed)
    steps = np.arange(0, N + 1, max(1, N // 10))
    meas = sh.Measurements(steps, 0.3 * rng.normal(size=(len(steps), sysm.nx)),
                           np.eye(sysm.nx), np.full(sysm.nx, 4.0))
    return sh.SingleShooting(sysm, sh.Controls(kind, K, T), N, meas), rng


@pytest.mark.parametrize("kind,K", [("piecewise_constant", 5), ("piecewise_linear", 6),
                                    ("cubic_bspline", 7)])
@pytest.mark.parametrize("system", ["linear_scalar", "damped_pendulum"])
def test_gradients_agree_for_every_group(system, kind, K):
    sysm = getattr(sh, system)()
    P, rng = _problem(sysm, kind, K, 50, 1.0)
    p = np.array([0.8]) if sysm.np_ == 1 else np.array([9.0, 0.3])
    z = np.concatenate([0.5 * rng.normal(size=sysm.nx), rng.normal(size=K * sysm.nu), p])
    _check_gradients(P, z, lookup("shooting", "gradient"))


@pytest.mark.parametrize("engine", ENGINES)
def test_gradients_agree_articulated(engine):
    """ẋ = [v, FD(q, v, u − p ⊙ v)] of double_pendulum through an engine adapter."""
    a = adapter(engine, "double_pendulum")
    sysm = sh.ArticulatedSystem(a)
    P, rng = _problem(sysm, "piecewise_linear", 3, 20, 0.2, seed=2)
    q0, v0 = a.random_state(rng)
    z = np.concatenate([0.5 * q0, v0, rng.normal(size=3 * sysm.nu), np.full(sysm.np_, 0.2)])
    key = "gradient" if a.derivatives_method in EXACT_METHODS else "gradient/finite_difference"
    _check_gradients(P, z, lookup("shooting", key))


@pytest.mark.parametrize("a", [0.7, -1.3])
def test_terminal_sensitivity_closed_form(a):
    """x(0) = 0, constant u: ∂x(T)/∂u = (e^{aT} − 1)/a, and ∂x(T)/∂x0 = e^{aT}."""
    tol = lookup("shooting", "sensitivity_analytic")
    for T in (1.0, 3.0):
        N = int(round(T / 0.01))
        ctrl = sh.Controls("piecewise_constant", 1, T)
        tr = sh.rk4_rollout(sh.linear_scalar(), np.zeros(1), np.ones((1, 1)), np.array([a]),
                            ctrl, 0.0, T / N, N, sens=True)
        S = tr.S[-1][0]
        for got, want in ((S[1], (np.exp(a * T) - 1) / a), (S[0], np.exp(a * T))):
            assert abs(got - want) <= tol.rtol * abs(want), (T, got, want)


def _conds(a, T, tau=1.0, h=0.05):
    sysm = sh.linear_scalar()
    N, M = int(round(T / h)), int(round(T / tau))
    ctrl = sh.Controls("piecewise_constant", 1, T)
    steps = np.arange(0, N + 1, int(round(tau / h)))
    meas = sh.Measurements(steps, np.zeros((len(steps), 1)), np.eye(1), np.ones(1))
    _, J = sh.SingleShooting(sysm, ctrl, N, meas).residuals(np.array([0.0, 1.0, a]), jac=True)
    ms = sh.MultipleShooting(sysm, ctrl, N, M, meas)
    _, Jr, _, Jc, _ = ms.evaluate(np.concatenate([np.zeros(M), [1.0, a]]))
    return np.linalg.cond(J[:, :2]), np.linalg.cond(np.vstack([Jr, Jc])[:, :-1])


def test_multiple_shooting_keeps_conditioning_bounded():
    """Decision (x0, u) of ẋ = x + u, x measured every second: single shooting's cond grows
    like e^{aT}; multiple shooting (1 s intervals) stays bounded."""
    a = 1.0
    (s5, m5), (s10, m10), (s20, m20) = (_conds(a, T) for T in (5.0, 10.0, 20.0))
    rate = np.log(s20 / s10) / 10.0
    assert abs(rate - a) <= lookup("shooting", "growth_rate").atol * a, rate
    assert m20 / m5 < lookup("shooting", "multiple_cond_growth").atol, (m5, m20)
    assert s20 / s5 > 1e6 and m20 < 1e-3 * s20


def _pendulum_fit(N, M, T=2.0, max_iter=30):
    sysm = sh.damped_pendulum()
    ctrl = sh.Controls("piecewise_linear", 5, T)
    p_true, x0_true = np.array([9.0, 0.4]), np.array([0.8, -0.5])
    th_true = np.array([[0.5], [-1.0], [0.3], [1.2], [0.0]])
    tr = sh.rk4_rollout(sysm, x0_true, th_true, p_true, ctrl, 0.0, T / N, N)
    steps = np.arange(N + 1)
    meas = sh.Measurements(steps, tr.x, np.eye(2), np.ones(2))
    prob = sh.MultipleShooting(sysm, ctrl, N, M, meas)
    s0 = tr.x[np.arange(M) * (N // M)] + 0.05  # nodes initialised from (perturbed) data
    w0 = np.concatenate([s0.reshape(-1), np.zeros(5), [5.0, 0.1]])
    return sh.solve_multiple(prob, w0, max_iter=max_iter), p_true, prob


def test_multiple_shooting_accepted_and_recovers_parameters():
    res, p_true, prob = _pendulum_fit(N=200, M=8)
    assert res.accepted, res.reason
    assert res.max_defect < lookup("shooting", "defect").atol
    p = prob.split(res.w)[2]
    assert np.all(np.abs(p - p_true) <= lookup("shooting", "recovery").rtol * np.abs(p_true))
    assert res.identifiability.identifiable and np.isfinite(res.identifiability.se).all()


def test_pendulum_at_rest_does_not_identify_its_parameters():
    """x0 = 0, u = 0: the pendulum never moves, ∂x/∂p = 0 (p multiplies sin θ and θ̇), so
    exactly the two p directions are unresolved; x0 and θ stay resolved."""
    sysm = sh.damped_pendulum()
    N, M, T = 40, 4, 1.0
    ctrl = sh.Controls("piecewise_constant", 4, T)
    meas = sh.Measurements(np.arange(N + 1), np.zeros((N + 1, 2)), np.eye(2), np.ones(2))
    prob = sh.MultipleShooting(sysm, ctrl, N, M, meas)
    w = np.concatenate([np.zeros(M * 2), np.zeros(4), [9.0, 0.4]])
    idf = sh.identifiability_at(prob, w)
    assert idf.unresolved.shape[0] == 2
    names = sh.parameter_names(sysm, ctrl)
    p_cols = [i for i, n in enumerate(names) if n.startswith("p[")]
    others = [i for i in range(len(names)) if i not in p_cols]
    assert np.abs(idf.unresolved[:, others]).max() <= lookup("identifiability",
                                                             "closed_form").rtol
    assert np.all(np.isinf(idf.se[p_cols])) and np.isfinite(idf.se[others]).all()


def test_multiple_shooting_rejections_name_the_gate():
    res, _, _ = _pendulum_fit(N=200, M=8, max_iter=1)  # one iteration: defects remain
    assert not res.accepted and "defect" in res.reason
    res, _, _ = _pendulum_fit(N=8, M=4)  # h = 0.25 s: RK4 is not the flow any more
    assert not res.accepted and "reintegration" in res.reason, res.reason
    assert res.max_defect < lookup("shooting", "defect").atol  # defects alone would pass


def test_bad_grids_are_bad_input():
    from harness.core.errors import BadInput

    sysm = sh.linear_scalar()
    meas = sh.Measurements(np.arange(11), np.zeros((11, 1)), np.eye(1), np.ones(1))
    with pytest.raises(BadInput, match="multiple of K"):
        sh.SingleShooting(sysm, sh.Controls("piecewise_constant", 3, 1.0), 10, meas)
    with pytest.raises(BadInput, match="intervals"):
        sh.MultipleShooting(sysm, sh.Controls("piecewise_linear", 3, 1.0), 10, 3, meas)
    with pytest.raises(BadInput, match="K ≥ 4"):
        sh.Controls("cubic_bspline", 3, 1.0)



def test_single_shooting_solve_recovers_pendulum_parameters():
    sysm = sh.damped_pendulum()
    N, T = 100, 2.0
    ctrl = sh.Controls("cubic_bspline", 5, T)
    p_true, x0 = np.array([9.0, 0.4]), np.array([0.8, -0.5])
    th = np.array([[0.5], [-1.0], [0.3], [1.2], [0.0]])
    tr = sh.rk4_rollout(sysm, x0, th, p_true, ctrl, 0.0, T / N, N)
    prob = sh.SingleShooting(sysm, ctrl, N, sh.Measurements(np.arange(N + 1), tr.x,
                                                           np.eye(2), np.ones(2)))
    z0 = np.concatenate([x0, th.reshape(-1), [7.0, 0.1]])  # known x0 and θ: fit p
    fixed = np.r_[np.ones(7, bool), np.zeros(2, bool)]
    z, res = sh.solve_single(prob, z0, fixed=fixed)
    assert res.accepted, res.reason
    assert np.all(np.abs(z[7:] - p_true) <= lookup("shooting", "recovery").rtol * p_true)


def test_multiple_shooting_articulated_model_is_accepted():
    """Pinocchio double pendulum: recover the extra damping p from its own noise-free RK4
    trajectory; the DOP853 reintegration uses the adapter's forward dynamics."""
    a = adapter("pinocchio", "double_pendulum")
    sysm = sh.ArticulatedSystem(a)
    N, M, T = 40, 4, 0.4
    ctrl = sh.Controls("piecewise_linear", 3, T)
    x0 = np.array([0.3, -0.4, 0.5, 0.2])
    th = np.array([[0.5, -0.2], [0.0, 0.3], [-0.4, 0.1]])
    p_true = np.array([0.3, 0.15])
    tr = sh.rk4_rollout(sysm, x0, th, p_true, ctrl, 0.0, T / N, N)
    prob = sh.MultipleShooting(sysm, ctrl, N, M, sh.Measurements(
        np.arange(N + 1), tr.x, np.eye(4), np.ones(4)))
    w0 = np.concatenate([tr.x[np.arange(M) * (N // M)].reshape(-1), th.reshape(-1),
                         [0.0, 0.0]])
    fixed = np.zeros(prob.nw, bool)
    fixed[M * 4:M * 4 + 6] = True  # controls known
    res = sh.solve_multiple(prob, w0, fixed=fixed)
    assert res.accepted, res.reason
    p = prob.split(res.w)[2]
    assert np.all(np.abs(p - p_true) <= lookup("shooting", "recovery").rtol * p_true), p


def _pendulum_known_damping():
    """The damped pendulum with its damping c = 0.4 1/s known: the same dynamics as
    ``damped_pendulum`` with p[1] removed from the parameters (p = [g/l])."""
    c = 0.4

    def f(t, x, u, p):
        return np.array([x[1], -p[0] * np.sin(x[0]) - c * x[1] + u[0]])

    def jac(t, x, u, p):
        fx = np.array([[0.0, 1.0], [-p[0] * np.cos(x[0]), -c]])
        return fx, np.array([[0.0], [1.0]]), np.array([[0.0], [-np.sin(x[0])]])

    return sh.OdeSystem(2, 1, 1, f, jac, "damped_pendulum_known_c")


def test_identifiability_at_honours_its_fixed_mask():
    """A coordinate held fixed is known, not estimated: it must not appear, and the free
    ones' singular values and SEs equal those of the same call on the problem with that
    parameter removed (the damping baked into the dynamics). At rest (x0 = 0, u = 0) the
    two p directions are the unresolved ones; with both held fixed nothing is unresolved."""
    N, M, T = 60, 4, 1.2
    ctrl = sh.Controls("piecewise_constant", 4, T)
    x0, th = np.array([0.9, -0.3]), np.array([[0.5], [-1.0], [0.3], [1.2]])
    full_sys, red_sys = sh.damped_pendulum(), _pendulum_known_damping()
    tr = sh.rk4_rollout(full_sys, x0, th, np.array([9.0, 0.4]), ctrl, 0.0, T / N, N)
    y = tr.x + 0.02 * np.random.default_rng(3).normal(size=tr.x.shape)
    meas = sh.Measurements(np.arange(N + 1), y, np.eye(2), np.full(2, 1 / 0.02 ** 2))
    full = sh.MultipleShooting(full_sys, ctrl, N, M, meas)
    red = sh.MultipleShooting(red_sys, ctrl, N, M, meas)
    nodes = tr.x[np.arange(M) * (N // M)].reshape(-1)
    w_full = np.concatenate([nodes, th.reshape(-1), [9.3, 0.4]])
    w_red = np.concatenate([nodes, th.reshape(-1), [9.3]])
    fixed = np.zeros(full.nw, bool)
    fixed[-1] = True
    a = sh.identifiability_at(full, w_full, fixed=fixed)
    b = sh.identifiability_at(red, w_red)
    assert a.names == b.names and "p[1]" not in a.names
    tol = lookup("identifiability", "closed_form").rtol
    assert np.allclose(a.singular_values, b.singular_values, rtol=tol, atol=0)
    assert np.allclose(a.se, b.se, rtol=tol, atol=0)
    # a prior (nz, nz) is cut to the free coordinates with them
    lam = np.diag(np.r_[np.ones(6), 4.0, 1e6])
    a = sh.identifiability_at(full, w_full, prior=lam, fixed=fixed)
    b = sh.identifiability_at(red, w_red, prior=lam[:-1, :-1])
    assert np.allclose(a.se, b.se, rtol=tol, atol=0)
    # at rest: p unresolved when free, nothing unresolved when both are fixed
    rest = sh.MultipleShooting(full_sys, ctrl, N, M, sh.Measurements(
        np.arange(N + 1), np.zeros((N + 1, 2)), np.eye(2), np.ones(2)))
    w = np.concatenate([np.zeros(M * 2), np.zeros(4), [9.0, 0.4]])
    assert sh.identifiability_at(rest, w).unresolved.shape[0] == 2
    fx = np.zeros(rest.nw, bool)
    fx[-2:] = True
    idf = sh.identifiability_at(rest, w, fixed=fx)
    assert idf.identifiable and np.isfinite(idf.se).all() and len(idf.names) == 6


def test_solve_multiple_reports_only_its_free_coordinates():
    """solve_multiple passes its ``fixed`` mask on: the result's identifiability is the
    known-damping problem's."""
    N, M, T = 60, 4, 1.2
    ctrl = sh.Controls("piecewise_constant", 4, T)
    x0, th = np.array([0.9, -0.3]), np.array([[0.5], [-1.0], [0.3], [1.2]])
    tr = sh.rk4_rollout(sh.damped_pendulum(), x0, th, np.array([9.0, 0.4]), ctrl, 0.0,
                        T / N, N)
    meas = sh.Measurements(np.arange(N + 1), tr.x, np.eye(2), np.ones(2))
    prob = sh.MultipleShooting(sh.damped_pendulum(), ctrl, N, M, meas)
    w0 = np.concatenate([tr.x[np.arange(M) * (N // M)].reshape(-1), th.reshape(-1),
                         [7.0, 0.4]])
    fixed = np.zeros(prob.nw, bool)
    fixed[-1] = True
    res = sh.solve_multiple(prob, w0, fixed=fixed)
    assert res.accepted, res.reason
    ref = sh.identifiability_at(sh.MultipleShooting(_pendulum_known_damping(), ctrl, N, M,
                                                    meas), res.w[:-1])
    assert res.identifiability.names == ref.names
    assert np.allclose(res.identifiability.singular_values, ref.singular_values,
                       rtol=lookup("identifiability", "closed_form").rtol, atol=0)

"""Direct collocation (harness/fit/collocation.py): derivatives against finite
differences, convergence order against an analytic solution, identification of the
benchmark problems on small cases, trials sharing parameters, known parameters, an
articulated model through the Pinocchio adapter, and bad input."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import problems as P
from harness.fit.collocation import (
    METHODS,
    ArticulatedDynamics,
    Collocator,
    ImplicitDynamics,
    Objective,
    Trial,
)

ORDER = {"backward_euler": 1, "midpoint": 2, "trapezoidal": 2, "hermite_simpson": 4}


def _close(a, b, tol):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.abs(a - b) <= tol.atol + tol.rtol * np.maximum(np.abs(a), np.abs(b))


def _rel_ok(value, ref, tol):
    """A relative-error threshold (stored as atol on |value/ref − 1|)."""
    return bool(np.all(np.abs(np.asarray(value, float) / np.asarray(ref, float) - 1.0) <= tol.atol))


def _close_rows(a, b, tol, symmetric=False):
    """Norm-wise per row (the table's convention): |a − b| ≤ atol + rtol·max_row(|a|, |b|).
    ``symmetric``: entry (i, j) of a symmetric matrix belongs to rows i and j, so its
    scale is the larger of the two rows' (a symmetrised FD entry carries both rows' noise)."""
    scale = np.maximum(np.abs(a).max(axis=1, keepdims=True), np.abs(b).max(axis=1, keepdims=True))
    if symmetric:
        scale = np.maximum(scale, scale.T)
    return np.abs(a - b) <= tol.atol + tol.rtol * scale


# ---- a driven, damped oscillator with a free control: ẍ = −k x − c ẋ + u + r
def _osc_res(xd, x, u, r, p, t):
    return np.stack([xd[:, 0] - x[:, 1],
                     xd[:, 1] + p[0] * x[:, 0] + p[1] * x[:, 1] - u[:, 0] - r[:, 0]], axis=1)


def _osc_jac(xd, x, u, r, p, t):
    J = np.zeros((x.shape[0], 2, 7))  # z = [xd0, xd1, x0, x1, u, k, c]
    J[:, 0, 0], J[:, 0, 3] = 1.0, -1.0
    J[:, 1, 1], J[:, 1, 2], J[:, 1, 3], J[:, 1, 4] = 1.0, p[0], p[1], -1.0
    J[:, 1, 5], J[:, 1, 6] = x[:, 0], x[:, 1]
    return J


def oscillator() -> ImplicitDynamics:
    m = np.zeros((2, 7), bool)
    m[0, [0, 3]] = True
    m[1, [1, 2, 3, 4, 5, 6]] = True
    return ImplicitDynamics(2, 1, 1, ("k", "c"), _osc_res, _osc_jac, m)  # Hessian by FD


def _random_theta(c, rng):
    th = rng.normal(size=c.n)
    th[c.P] = rng.uniform(1.0, 3.0, size=len(c.P))
    return th


def _fd_jacobian(c, th, eps=1e-6):
    J = np.zeros((c.m, c.n))
    for j in range(c.n):
        e = np.zeros(c.n)
        e[j] = eps
        J[:, j] = (c.constraints(th + e) - c.constraints(th - e)) / (2 * eps)
    return J


def _collocators(method):
    rng = np.random.default_rng(3)
    out = [P.pendulum_collocator(rng.normal(size=6), 2.0, method=method, h=0.1)]
    obj = Objective(C=np.array([[1.0, 0.0]]), sigma=[0.1], loss="linear", w_effort=0.3,
                    w_smooth=0.2, w_prior=0.5, prior_mean={"c": 0.2}, prior_sigma={"c": 0.5})
    trials = [Trial(h=0.1, y=rng.normal(size=(5, 1)), r=rng.normal(size=(5, 1))),
              Trial(h=0.05, y=rng.normal(size=(4, 1)), r=rng.normal(size=(4, 1)))]
    out.append(Collocator(oscillator(), trials, obj, method=method))
    t, a, _, xm = P.balance_data(5, seed=1)
    out.append(P.balance_collocator(a, xm + 0.1, method=method))
    out.append(P.balance_collocator(a, xm + 0.1, method=method, process_std=2.0))
    return out


@pytest.mark.parametrize("method", METHODS)
def test_jacobian_matches_fd_with_exact_structure(method):
    tol, floor = lookup("fit", "jacobian_fd"), lookup("fit", "jacobian_fd_nonzero")
    rng = np.random.default_rng(0)
    for c in _collocators(method):
        th = _random_theta(c, rng)
        rows, cols = c.jacobianstructure()
        vals = c.jacobian(th)
        assert len(set(zip(rows.tolist(), cols.tolist()))) == len(rows)  # no duplicates
        assert np.all(vals != 0.0), "a stored Jacobian entry is zero at a random point"
        J = np.zeros((c.m, c.n))
        J[rows, cols] = vals
        Jfd = _fd_jacobian(c, th)
        assert np.all(_close_rows(J, Jfd, tol)), np.max(np.abs(J - Jfd))
        in_struct = np.zeros((c.m, c.n), bool)
        in_struct[rows, cols] = True
        assert not np.any((np.abs(Jfd) > floor.atol) & ~in_struct)


@pytest.mark.parametrize("method", METHODS)
def test_lagrangian_hessian_matches_fd(method):
    tol = lookup("fit", "hessian_fd")
    rng = np.random.default_rng(1)
    for c in _collocators(method):
        th = _random_theta(c, rng)
        lam = rng.normal(size=c.m)

        def grad_l(x):
            rows, cols = c.jacobianstructure()
            Jt = np.zeros(c.n)
            np.add.at(Jt, cols, c.jacobian(x) * lam[rows])
            return 0.7 * c.gradient(x) + Jt
        Hfd = np.zeros((c.n, c.n))
        for j in range(c.n):
            e = np.zeros(c.n)
            e[j] = 1e-6
            Hfd[:, j] = (grad_l(th + e) - grad_l(th - e)) / 2e-6
        r, q = c.hessianstructure()
        assert np.all(r >= q)
        H = np.zeros((c.n, c.n))
        H[r, q] = c.hessian(th, lam, 0.7)
        H = np.tril(H) + np.tril(H, -1).T
        assert np.all(_close_rows(H, 0.5 * (Hfd + Hfd.T), tol, symmetric=True)), \
            np.max(np.abs(H - Hfd))


@pytest.mark.parametrize("loss", ["linear", "soft_l1", "huber"])
def test_objective_gradient_matches_fd(loss):
    tol = lookup("fit", "jacobian_fd")
    rng = np.random.default_rng(2)
    obj = Objective(C=np.array([[1.0, 0.5]]), covariance=[[0.04]], loss=loss, loss_scale=0.3,
                    w_effort=0.1, w_smooth=0.05)
    c = Collocator(oscillator(), [Trial(h=0.1, y=rng.normal(size=(7, 1)),
                                        r=np.zeros((7, 1)))], obj, method="midpoint")
    th = _random_theta(c, rng)
    g = c.gradient(th)
    gfd = np.array([(c.objective(th + e) - c.objective(th - e)) / 2e-6
                    for e in 1e-6 * np.eye(c.n)])
    assert np.all(_close(g, gfd, tol))
    comp = c.components(th)
    same = lookup("fit", "objective_components")
    assert comp["total"] == pytest.approx(comp["measurement"] + comp["effort"]
                                          + comp["smoothness"] + comp["prior"],
                                          rel=same.rtol, abs=same.atol)


def _harmonic_error(method, N, T=2.0):
    """Max state error of collocation on ẍ = −x, x(0) = 1, ẋ(0) = 0 against cos t."""
    dyn = oscillator()
    tr = Trial(h=T / (N - 1), y=np.zeros((N, 1)), r=np.zeros((N, 1)),
               fixed={(0, 0): 1.0, (0, 1): 0.0})
    c = Collocator(dyn, [tr], Objective(C=np.array([[1.0, 0.0]]), w_meas=0.0,
                                        w_effort=1.0), method=method,
                   known={"k": 1.0, "c": 0.0}, control_bounds=(np.zeros(1), np.zeros(1)))
    r = c.solve({"tol": 1e-13, "constr_viol_tol": 1e-13})
    assert r.converged, r.message
    t = tr.h * np.arange(N)
    return np.max(np.abs(r.states[0] - np.stack([np.cos(t), -np.sin(t)], axis=1)))


@pytest.mark.parametrize("method", METHODS)
def test_convergence_order_on_harmonic_oscillator(method):
    tol = lookup("fit", "collocation_order")
    e1, e2 = _harmonic_error(method, 41), _harmonic_error(method, 81)
    order = np.log2(e1 / e2)
    assert abs(order - ORDER[method]) <= tol.atol, (e1, e2, order)


def test_pendulum_same_optimum_from_every_start():
    same, acc = lookup("fit", "same_optimum"), lookup("fit", "pendulum_p_n1000")
    _, _, ym = P.pendulum_data(1000, seed=4)
    ref = P.pendulum_collocator(ym, 10.0).solve()
    assert ref.converged
    assert _rel_ok(ref.params["p"], P.PENDULUM_TRUE_P, acc)
    for p0 in (1.0, 50.0, 100.0):
        r = P.pendulum_collocator(ym, p0).solve()
        assert r.converged and _rel_ok(r.params["p"], ref.params["p"], same), (p0, r.params)


def test_trials_share_parameters_and_offsets():
    """Two copies of one trial give the single-trial optimum (objective is the same
    function); a second, different trial moves it, and each trial's states fit its own
    truth."""
    same = lookup("fit", "same_optimum")
    _, xt, ym = P.pendulum_data(400, seed=5)
    single = P.pendulum_collocator(ym, 7.0).solve()
    c1 = P.pendulum_collocator(ym, 7.0)
    tr = c1.trials[0]
    dup = Collocator(c1.dyn, [tr, tr], c1.obj, method="midpoint", p_guess={"p": 7.0}).solve()
    assert _rel_ok(dup.params["p"], single.params["p"], same)
    _, xt2, ym2 = P.pendulum_data(400, seed=6, x0=(0.4, 1.0))
    c2 = P.pendulum_collocator(ym2, 7.0)
    both = Collocator(c1.dyn, [tr, c2.trials[0]], c1.obj, method="midpoint",
                      p_guess={"p": 7.0}).solve()
    assert both.converged
    assert not _rel_ok(both.params["p"], single.params["p"], same)
    for x_fit, x_true in zip(both.states, (xt, xt2)):
        assert np.sqrt(np.mean((x_fit[:, 0] - x_true[:, 0]) ** 2)) < P.PENDULUM_SIGMA


def test_known_and_unknown_parameters():
    """Oscillator k = 4, c = 0.3 driven by a known input: identify both, then c with k
    known; fixing k at a wrong value moves c."""
    acc = lookup("fit", "balance_gains")
    h, N = 0.02, 600
    t = h * np.arange(N)
    r = np.sin(1.3 * t) + 0.5 * np.sin(3.1 * t)
    from scipy.integrate import solve_ivp
    sol = solve_ivp(lambda tt, x: [x[1], -4.0 * x[0] - 0.3 * x[1] + np.sin(1.3 * tt)
                                   + 0.5 * np.sin(3.1 * tt)],
                    (0, t[-1]), [0.5, 0.0], method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    y = sol.y.T + 0.002 * np.random.default_rng(0).normal(size=(N, 2))
    tr = Trial(h=h, y=y, r=r[:, None], x_guess=y)
    obj = Objective(C=np.eye(2), sigma=[0.002, 0.002])
    bounds = (np.zeros(1), np.zeros(1))  # no free control in the truth
    both = Collocator(oscillator(), [tr], obj, p_guess={"k": 1.0, "c": 0.0},
                      control_bounds=bounds).solve()
    assert _rel_ok(both.params["k"], 4.0, acc) and _rel_ok(both.params["c"], 0.3, acc)
    one = Collocator(oscillator(), [tr], obj, known={"k": 4.0}, control_bounds=bounds).solve()
    assert one.unknown == ("c",) and one.params["k"] == 4.0
    assert _rel_ok(one.params["c"], 0.3, acc)
    wrong = Collocator(oscillator(), [tr], obj, known={"k": 3.0}, control_bounds=bounds).solve()
    assert not _rel_ok(wrong.params["c"], 0.3, acc)


def test_balance_gains_short_horizon():
    acc = lookup("fit", "balance_gains")
    _, a, _, xm = P.balance_data(1500, seed=0)
    r = P.balance_collocator(a, xm).solve()
    assert r.converged
    K = np.array([r.params[n] for n in P.BALANCE_K_NAMES]).reshape(2, 4)
    assert _rel_ok(K, P.BALANCE_K_TRUE, acc), K
    assert set(r.components) == {"measurement", "effort", "smoothness", "prior", "total"}
    assert r.history and r.history[-1]["inf_pr"] < lookup("fit", "final_infeasibility").atol


def test_balance_data_matches_dop853():
    tol = lookup("fit", "data_rk4_vs_dop853")
    _, _, X, _ = P.balance_data(150, seed=3, process_noise=True)
    Xref = P.balance_data_reference(150, seed=3, process_noise=True)
    assert np.all(_close(X, Xref, tol))


@pytest.mark.parametrize("engine", ["pinocchio", "crocoddyl", "drake", "mujoco"])
def test_articulated_pendulum_fixture_through_each_engine(engine):
    """The pendulum fixture, data from the adapter's forward dynamics (RK4, h/20) under a
    known torque; collocation on the adapter's inverse dynamics (Jacobian: the engine's
    own inverse_dynamics_derivatives) recovers the unmeasured velocity."""
    from harness.model.prepared import prepare_fixture
    from harness.model.registry import adapter_class
    tol = lookup("fit", "fitted_state")
    ad = adapter_class(engine)(prepare_fixture("pendulum"))
    dyn = ArticulatedDynamics(ad, torque="known")
    h, N = 0.01, 120
    t = h * np.arange(N)
    tau = 0.5 * np.sin(2.0 * t)
    q, v = np.array([0.4]), np.array([0.0])
    X = [np.r_[q, v]]
    dt = h / 20
    for i in range(N - 1):
        for j in range(20):
            s = t[i] + j * dt
            def f(qq, vv, ss):
                return vv, ad.forward_dynamics(qq, vv, np.array([0.5 * np.sin(2.0 * ss)]))
            k1 = f(q, v, s)
            k2 = f(q + dt / 2 * k1[0], v + dt / 2 * k1[1], s + dt / 2)
            k3 = f(q + dt / 2 * k2[0], v + dt / 2 * k2[1], s + dt / 2)
            k4 = f(q + dt * k3[0], v + dt * k3[1], s + dt)
            q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        X.append(np.r_[q, v])
    X = np.array(X)
    tr = Trial(h=h, y=X[:, :1], r=tau[:, None], x_guess=np.c_[X[:, :1], np.zeros(N)])
    c = Collocator(dyn, [tr], Objective(C=np.array([[1.0, 0.0]]), sigma=[0.01]),
                   method="midpoint", hessian="limited-memory")
    # the residual's Jacobian (the engine's derivatives) against FD of the constraints
    th = c.theta0 + 0.01
    J = np.zeros((c.m, c.n))
    J[c.jac_rows, c.jac_cols] = c.jacobian(th)
    assert np.all(_close_rows(J, _fd_jacobian(c, th, 1e-5), lookup("fit", "hessian_fd")))
    r = c.solve()
    assert r.converged, r.message
    assert np.all(_close(r.states[0][:, 1], X[:, 1], tol)), \
        np.abs(r.states[0][:, 1] - X[:, 1]).max()


@pytest.mark.parametrize("make, match", [
    (lambda: P.pendulum_collocator(np.zeros(10), 1.0, method="rk4"), "unknown method"),
    (lambda: Collocator(P.pendulum_dynamics(), [Trial(h=0.1, y=np.zeros((10, 2)))],
                        Objective(C=np.array([[1.0, 0.0]]))), r"y must be"),
    (lambda: Collocator(P.pendulum_dynamics(), [Trial(h=0.1, y=np.full((10, 1), np.nan))],
                        Objective(C=np.array([[1.0, 0.0]]))), "non-finite"),
    (lambda: Collocator(P.pendulum_dynamics(), [Trial(h=0.1, y=np.zeros((10, 1)))],
                        Objective(C=np.array([[1.0, 0.0]]), loss="cauchy2")), "unknown loss"),
    (lambda: Collocator(P.pendulum_dynamics(), [Trial(h=0.1, y=np.zeros((10, 1)),
                                                      fixed={(10, 0): 1.0})],
                        Objective(C=np.array([[1.0, 0.0]]))), "instance constraint"),
    (lambda: Collocator(P.pendulum_dynamics(), [Trial(h=0.1, y=np.zeros((10, 1)))],
                        Objective(C=np.array([[1.0, 0.0]])), known={"q": 1.0}),
     "unknown parameter"),
    (lambda: Collocator(P.pendulum_dynamics(), [Trial(h=-0.1, y=np.zeros((10, 1)))],
                        Objective(C=np.array([[1.0, 0.0]]))), "h must be"),
    (lambda: Collocator(P.pendulum_dynamics(), [], Objective(C=np.array([[1.0, 0.0]]))),
     "at least one trial"),
])
def test_bad_input(make, match):
    with pytest.raises(BadInput, match=match):
        make()

"""Our collocation fitter vs opty 1.5.0 on the same synthetic data, in one run.

Problems (harness/fit/problems.py): the pendulum θ̈ = −p sin θ (midpoint, N = 1000 and
5000, σ = 0.05 rad, seed 0, every start p0 of PENDULUM_P0S at N = 1000, p0 = 10 at
N = 5000) and the standing-balance controller (midpoint, N = 6000, 60 s, measurement
noise only, zero initial gains). Both fitters get the same objective (whitened squared
measurement residuals averaged over nodes), the same initial guess, IPOPT with MUMPS,
tol 1e-8. opty has no Hessian, so IPOPT runs limited-memory for it (its default); ours
runs the exact Lagrangian Hessian. Setup time (opty: SymPy code generation and Cython
compilation; ours: sparsity structure) is reported separately from solve time
(time.perf_counter around IPOPT's solve).

Run (opty in a separate environment; `make bench-fit` installs it):
    PYTHONPATH=.:/work/main/.venv/lib/python3.11/site-packages /tmp/benchvenv/bin/python bench/fit_vs_opty.py
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from harness.fit import problems as P


def opty_pendulum(theta_meas, p0, h=P.PENDULUM_H, sigma=P.PENDULUM_SIGMA):
    import sympy as sm
    from opty import Problem

    N = len(theta_meas)
    p, t = sm.symbols("p, t")
    y1, y2 = [f(t) for f in sm.symbols("y1, y2", cls=sm.Function)]
    eom = sm.Matrix([y1.diff(t) - y2, y2.diff(t) + p * sm.sin(y1)])
    w = 1.0 / (N * sigma ** 2)

    def obj(free):
        return w * np.sum((free[:N] - theta_meas) ** 2)

    def obj_grad(free):
        g = np.zeros_like(free)
        g[:N] = 2 * w * (free[:N] - theta_meas)
        return g
    t0 = time.perf_counter()
    prob = Problem(obj, obj_grad, eom, (y1, y2), N, h, time_symbol=t,
                   integration_method="midpoint")
    for k, v in {"print_level": 0, "sb": "yes", "linear_solver": "mumps", "tol": 1e-8,
                 "max_iter": 3000}.items():
        prob.add_option(k, v)
    setup = time.perf_counter() - t0
    guess = np.hstack([theta_meas, np.gradient(theta_meas, h), [p0]])
    return prob, guess, setup


def opty_balance(a, x_meas, h=P.BALANCE_H):
    import sympy as sm
    from opty import Problem

    N = len(a)
    c = P.BalanceModel().c
    t = sm.symbols("t")
    th1, th2, w1, w2, acc = [f(t) for f in sm.symbols("th1, th2, w1, w2, acc", cls=sm.Function)]
    K = sm.Matrix(2, 4, sm.symbols("k00 k01 k02 k03 k10 k11 k12 k13"))
    x = sm.Matrix([th1, th2, w1, w2])
    M = sm.Matrix([[c["a1"] + 2 * c["b"] * sm.cos(th2), c["a2"] + c["b"] * sm.cos(th2)],
                   [c["a2"] + c["b"] * sm.cos(th2), c["a2"]]])
    rest = sm.Matrix([
        -c["b"] * sm.sin(th2) * (2 * w1 * w2 + w2 ** 2)
        - c["g"] * (c["e1"] * sm.sin(th1) + c["e2"] * sm.sin(th1 + th2))
        + acc * (c["e1"] * sm.cos(th1) + c["e2"] * sm.cos(th1 + th2)),
        c["b"] * sm.sin(th2) * w1 ** 2 - c["g"] * c["e2"] * sm.sin(th1 + th2)
        + acc * c["e2"] * sm.cos(th1 + th2)])
    dyn = M * sm.Matrix([w1.diff(t), w2.diff(t)]) + rest + K * x
    eom = sm.Matrix([th1.diff(t) - w1, th2.diff(t) - w2, dyn[0], dyn[1]])
    wts = 1.0 / (N * P.BALANCE_SIGMA ** 2)
    ym = np.asarray(x_meas, float).T.ravel()           # opty: state-major
    wv = np.repeat(wts, N)

    def obj(free):
        return float(np.sum(wv * (free[:4 * N] - ym) ** 2))

    def obj_grad(free):
        g = np.zeros_like(free)
        g[:4 * N] = 2 * wv * (free[:4 * N] - ym)
        return g
    t0 = time.perf_counter()
    prob = Problem(obj, obj_grad, eom, (th1, th2, w1, w2), N, h,
                   known_trajectory_map={acc: np.asarray(a, float)}, time_symbol=t,
                   integration_method="midpoint")
    for k, v in {"print_level": 0, "sb": "yes", "linear_solver": "mumps", "tol": 1e-8,
                 "max_iter": 3000}.items():
        prob.add_option(k, v)
    setup = time.perf_counter() - t0
    # unknown parameters in opty's order (sorted by name)
    names = [str(s) for s in prob.collocator.unknown_parameters]
    guess = np.hstack([ym, np.zeros(len(names))])
    return prob, guess, setup, names


def _solve_opty(prob, guess):
    t0 = time.perf_counter()
    sol, info = prob.solve(guess)
    dt = time.perf_counter() - t0
    return sol, info, dt


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer pendulum starts")
    args = ap.parse_args(argv)
    rows = []
    # ---------------- pendulum
    for N, p0s in ((1000, (10.0, 50.0, 100.0) if args.quick else P.PENDULUM_P0S),
                   (5000, (10.0,))):
        _, _, ym = P.pendulum_data(N, seed=0)
        oprob = None
        for p0 in p0s:
            c = P.pendulum_collocator(ym, p0)
            r = c.solve()
            if oprob is None:
                oprob, guess, osetup = opty_pendulum(ym, p0)
            guess = guess.copy()
            guess[-1] = p0
            oprob.obj_value = []
            osol, oinfo, odt = _solve_opty(oprob, guess)
            it = oprob.obj_value
            rows.append(dict(problem=f"pendulum N={N} p0={p0:g}",
                             ours_it=r.iterations, ours_solve=r.solve_time_s,
                             ours_setup=r.setup_time_s,
                             ours_err=abs(r.params["p"] / P.PENDULUM_TRUE_P - 1),
                             opty_it=len(it) - 1, opty_solve=odt, opty_setup=osetup,
                             opty_err=abs(osol[-1] / P.PENDULUM_TRUE_P - 1),
                             opty_status=oinfo["status"], ours_status=r.status))
            osetup = 0.0   # compiled once per N
            _print(rows[-1])
    # ---------------- balance
    t, a, xt, xm = P.balance_data(6000, seed=0)
    c = P.balance_collocator(a, xm)
    r = c.solve()
    Ko = np.array([r.params[n] for n in P.BALANCE_K_NAMES]).reshape(2, 4)
    oprob, guess, osetup, names = opty_balance(a, xm)
    oprob.obj_value = []
    osol, oinfo, odt = _solve_opty(oprob, guess)
    it = oprob.obj_value
    Kp = np.array([osol[-8:][names.index(n)] for n in P.BALANCE_K_NAMES]).reshape(2, 4)
    rows.append(dict(problem="balance N=6000", ours_it=r.iterations, ours_solve=r.solve_time_s,
                     ours_setup=r.setup_time_s,
                     ours_err=float(np.max(np.abs(Ko / P.BALANCE_K_TRUE - 1))),
                     opty_it=len(it) - 1, opty_solve=odt, opty_setup=osetup,
                     opty_err=float(np.max(np.abs(Kp / P.BALANCE_K_TRUE - 1))),
                     opty_status=oinfo["status"], ours_status=r.status))
    _print(rows[-1])
    print("ours K:\n", np.round(Ko, 2), "\nopty K:\n", np.round(Kp, 2))
    print()
    hdr = (f"{'problem':28s} {'it ours':>7s} {'it opty':>7s} {'solve ours s':>12s} "
           f"{'solve opty s':>12s} {'speedup':>7s} {'setup ours s':>12s} {'setup opty s':>12s} "
           f"{'err ours':>9s} {'err opty':>9s} {'st o/y':>6s}")
    print(hdr)
    for w in rows:
        print(f"{w['problem']:28s} {w['ours_it']:7d} {w['opty_it']:7d} {w['ours_solve']:12.3f} "
              f"{w['opty_solve']:12.3f} {w['opty_solve'] / w['ours_solve']:7.1f} "
              f"{w['ours_setup']:12.3f} {w['opty_setup']:12.3f} {100 * w['ours_err']:8.3f}% "
              f"{100 * w['opty_err']:8.3f}% {w['ours_status']:>2d}/{w['opty_status']:<2d}")
    return rows


def _print(w):
    print(w, flush=True)


if __name__ == "__main__":
    main()

"""Our collocation fitter vs opty 1.5.0 on the same synthetic data, in one run.

Solve times are the best of REPEATS (3) solves (one for the balance problem), wall
(time.perf_counter) and process CPU (time.process_time) both printed.

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
    PYTHONPATH=.:.venv/lib/python3.11/site-packages OTHER_VENV/bin/python \
        bench/fit_vs_opty.py
(--pendulum-only skips the balance problem, where opty runs ~3000 iterations.)
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


REPEATS = 3


def _solve_opty(prob, guess, repeats=REPEATS):
    """Best of ``repeats``: (solution, info, wall s, cpu s, iterations)."""
    best = None
    for _ in range(repeats):
        prob.obj_value = []
        c0, t0 = time.process_time(), time.perf_counter()
        sol, info = prob.solve(guess)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if best is None or dt < best[2]:
            best = (sol, info, dt, dc, len(prob.obj_value) - 1)
        best = best[:2] + (min(best[2], dt), min(best[3], dc), best[4])
    return best


def _solve_ours(coll, repeats=REPEATS):
    """Best of ``repeats``: (FitResult, wall s, cpu s)."""
    best = None
    for _ in range(repeats):
        c0 = time.process_time()
        r = coll.solve()
        dc = time.process_time() - c0
        best = (r, r.solve_time_s, dc) if best is None else (r, min(best[1], r.solve_time_s),
                                                              min(best[2], dc))
    return best


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer pendulum starts")
    ap.add_argument("--balance-only", action="store_true")
    ap.add_argument("--pendulum-only", action="store_true",
                    help="skip the balance problem (opty runs ~3000 iterations there)")
    ap.add_argument("--balance-n", type=int, default=6000, help="balance nodes (default 6000)")
    args = ap.parse_args(argv)
    rows = []
    # ---------------- pendulum
    for N, p0s in () if args.balance_only else (
            (1000, (10.0, 50.0, 100.0) if args.quick else P.PENDULUM_P0S), (5000, (10.0,))):
        _, _, ym = P.pendulum_data(N, seed=0)
        oprob = None
        for p0 in p0s:
            c = P.pendulum_collocator(ym, p0)
            r, ow, oc = _solve_ours(c)
            if oprob is None:
                oprob, guess, osetup = opty_pendulum(ym, p0)
            guess = guess.copy()
            guess[-1] = p0
            osol, oinfo, odt, odc, oit = _solve_opty(oprob, guess)
            rows.append(dict(problem=f"pendulum N={N} p0={p0:g}",
                             ours_it=r.iterations, ours_solve=ow, ours_cpu=oc, opty_cpu=odc,
                             ours_setup=r.setup_time_s,
                             ours_err=abs(r.params["p"] / P.PENDULUM_TRUE_P - 1),
                             opty_it=oit, opty_solve=odt, opty_setup=osetup,
                             opty_err=abs(osol[-1] / P.PENDULUM_TRUE_P - 1),
                             opty_status=oinfo["status"], ours_status=r.status))
            osetup = 0.0   # compiled once per N
            _print(rows[-1])
    # ---------------- balance
    if not args.pendulum_only:
        NB = args.balance_n
        t, a, xt, xm = P.balance_data(NB, seed=0)
        c = P.balance_collocator(a, xm)
        r, ow, oc = _solve_ours(c, repeats=1)
        Ko = np.array([r.params[n] for n in P.BALANCE_K_NAMES]).reshape(2, 4)
        oprob, guess, osetup, names = opty_balance(a, xm)
        osol, oinfo, odt, odc, oit = _solve_opty(oprob, guess, repeats=1)
        Kp = np.array([osol[-8:][names.index(n)] for n in P.BALANCE_K_NAMES]).reshape(2, 4)
        rows.append(dict(problem=f"balance N={NB}", ours_it=r.iterations, ours_solve=ow,
                         ours_cpu=oc, opty_cpu=odc,
                         ours_setup=r.setup_time_s,
                         ours_err=float(np.max(np.abs(Ko / P.BALANCE_K_TRUE - 1))),
                         opty_it=oit, opty_solve=odt, opty_setup=osetup,
                         opty_err=float(np.max(np.abs(Kp / P.BALANCE_K_TRUE - 1))),
                         opty_status=oinfo["status"], ours_status=r.status))
        _print(rows[-1])
        print("ours K:\n", np.round(Ko, 2), "\nopty K:\n", np.round(Kp, 2))
    print()
    print(f"solve times: best of {REPEATS} runs each (balance: one run); wall = time.perf_counter, "
          "cpu = time.process_time (this machine is shared: wall is several times cpu)")
    hdr = (f"{'problem':24s} {'it ours':>7s} {'it opty':>7s} {'wall ours':>9s} {'wall opty':>9s} "
           f"{'x wall':>6s} {'cpu ours':>8s} {'cpu opty':>8s} {'x cpu':>6s} {'setup ours':>10s} "
           f"{'setup opty':>10s} {'err ours':>9s} {'err opty':>9s} {'status':>6s}")
    print(hdr)
    for w in rows:
        print(f"{w['problem']:24s} {w['ours_it']:7d} {w['opty_it']:7d} {w['ours_solve']:9.3f} "
              f"{w['opty_solve']:9.3f} {w['opty_solve'] / w['ours_solve']:6.1f} "
              f"{w['ours_cpu']:8.3f} {w['opty_cpu']:8.3f} {w['opty_cpu'] / w['ours_cpu']:6.1f} "
              f"{w['ours_setup']:10.3f} {w['opty_setup']:10.1f} {100 * w['ours_err']:8.4f}% "
              f"{100 * w['opty_err']:8.4f}% {w['ours_status']:>2d}/{w['opty_status']:<2d}")
    return rows


def _print(w):
    print(w, flush=True)


if __name__ == "__main__":
    main()

"""Our collocation fitter vs opty 1.5.0 on the same synthetic data, in one run.

Solve times are the best of REPEATS (3) solves (one for the balance problem), process CPU
(time.process_time, the measure: the machine is shared) and wall (time.perf_counter).

Problems (harness/fit/problems.py): the pendulum θ̈ = −p sin θ (midpoint, σ = 0.05 rad,
seed 0; N = 1000, 5000 and 20000 by default, --n; from the start --p0, default 50, or
with --all-starts from every start of PENDULUM_P0S, p0 = 1 … 100, the full table) and
the standing-balance controller (midpoint, N = 6000, 60 s, measurement noise only, zero
initial gains; --balance-only, skipped by --pendulum-only). Both fitters get the same
objective (whitened squared measurement residuals averaged over nodes), the same initial
guess. Ours runs the banded SQP solver (harness/fit/collocation_sqp.py; --solver ipopt
for IPOPT) with the exact Lagrangian Hessian; opty runs IPOPT with MUMPS, tol 1e-8,
limited-memory Hessian (opty has no Hessian). Setup (opty: SymPy code generation and
Cython compilation, once per N; ours: sparsity structure and the banded ordering) is
reported apart from the solve. Same optimum: per N, our IPOPT solve from the truth
(p0 = 10) is the reference; each row gives |p/p_ref − 1| for both fitters and
|p_ours/p_opty − 1|, all within fit/same_optimum (1e-6) for "same".

The table, the command line and the machine go to --out (default bench/fit_vs_opty.txt).
Run (opty in a separate environment when installing it would change packages of the
project's; `make bench-fit` installs it into the project's):
    OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 PYTHONPATH=. OTHER_VENV/bin/python \
        bench/fit_vs_opty.py --pendulum-only --all-starts
with OTHER_VENV holding opty 1.5.0 and the bench extra's pins and seeing the project's
site-packages after its own (a .pth file).
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from importlib.metadata import version

import numpy as np

from harness.core.tolerances import lookup
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
DEFAULT_P0 = 50.0          # the default start: away from the truth p = 10


def _solve_opty(prob, guess, repeats=REPEATS):
    """Best of ``repeats``: (solution, info, wall s, cpu s, iterations)."""
    best = None
    for _ in range(repeats):
        prob.obj_value = []
        c0, t0 = time.process_time(), time.perf_counter()
        sol, info = prob.solve(guess)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        if best is None:
            best = (sol, info, dt, dc, len(prob.obj_value) - 1)
        best = best[:2] + (min(best[2], dt), min(best[3], dc), best[4])
    return best


def _solve_ours(coll, solver, repeats=REPEATS):
    """Best of ``repeats``: (FitResult, wall s, cpu s). The first solve builds the SQP's
    banded ordering (counted in the result's setup time)."""
    best = None
    for _ in range(repeats):
        c0 = time.process_time()
        r = coll.solve(solver=solver)
        dc = time.process_time() - c0
        best = (r, r.solve_time_s, dc) if best is None else (r, min(best[1], r.solve_time_s),
                                                              min(best[2], dc))
    return best


def _pendulum(N, p0s, solver, same):
    """The rows of one N: every start in p0s, ours against opty, and IPOPT's optimum
    from the truth as the reference."""
    _, _, ym = P.pendulum_data(N, seed=0)
    ref = P.pendulum_collocator(ym, P.PENDULUM_TRUE_P).solve()
    if ref.status != 0:
        sys.exit(f"fit_vs_opty: our IPOPT reference solve at N={N} did not converge "
                 f"({ref.message})")
    p_ref = ref.params["p"]
    oprob, rows = None, []
    for p0 in p0s:
        c = P.pendulum_collocator(ym, p0)
        r, ow, oc = _solve_ours(c, solver)
        osetup = 0.0        # compiled once per N
        if oprob is None:
            oprob, guess, osetup = opty_pendulum(ym, p0)
        guess = guess.copy()
        guess[-1] = p0
        osol, oinfo, odt, odc, oit = _solve_opty(oprob, guess)
        po = float(osol[-1])
        row = dict(problem=f"pendulum N={N} p0={p0:g}", ours_it=r.iterations,
                   ours_solve=ow, ours_cpu=oc, opty_cpu=odc, ours_setup=r.setup_time_s,
                   ours_err=abs(r.params["p"] / P.PENDULUM_TRUE_P - 1),
                   opty_it=oit, opty_solve=odt, opty_setup=osetup,
                   opty_err=abs(po / P.PENDULUM_TRUE_P - 1),
                   opty_status=int(oinfo["status"]), ours_status=r.status,
                   ours_vs_ref=abs(r.params["p"] / p_ref - 1), opty_vs_ref=abs(po / p_ref - 1),
                   ours_vs_opty=abs(r.params["p"] / po - 1))
        row["same"] = max(row["ours_vs_ref"], row["opty_vs_ref"], row["ours_vs_opty"]) <= same
        rows.append(row)
        _print(row)
    return rows


def _balance(NB, solver):
    t, a, xt, xm = P.balance_data(NB, seed=0)
    c = P.balance_collocator(a, xm)
    r, ow, oc = _solve_ours(c, solver, repeats=1)
    Ko = np.array([r.params[n] for n in P.BALANCE_K_NAMES]).reshape(2, 4)
    oprob, guess, osetup, names = opty_balance(a, xm)
    osol, oinfo, odt, odc, oit = _solve_opty(oprob, guess, repeats=1)
    Kp = np.array([osol[-8:][names.index(n)] for n in P.BALANCE_K_NAMES]).reshape(2, 4)
    row = dict(problem=f"balance N={NB}", ours_it=r.iterations, ours_solve=ow,
               ours_cpu=oc, opty_cpu=odc, ours_setup=r.setup_time_s,
               ours_err=float(np.max(np.abs(Ko / P.BALANCE_K_TRUE - 1))),
               opty_it=oit, opty_solve=odt, opty_setup=osetup,
               opty_err=float(np.max(np.abs(Kp / P.BALANCE_K_TRUE - 1))),
               opty_status=int(oinfo["status"]), ours_status=r.status,
               ours_vs_ref=float("nan"), opty_vs_ref=float("nan"),
               ours_vs_opty=float(np.max(np.abs(Ko / Kp - 1))))
    row["same"] = row["ours_vs_opty"] <= lookup("fit", "same_optimum").atol
    _print(row)
    print("ours K:\n", np.round(Ko, 2), "\nopty K:\n", np.round(Kp, 2))
    return row


def _machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{platform.platform()}; CPU {cpu}, {os.cpu_count()} logical cores (shared with "
            f"other jobs); Python {platform.python_version()}, numpy {version('numpy')}, "
            f"scipy {version('scipy')}, opty {version('opty')}, sympy {version('sympy')}, "
            f"cyipopt-wheels {version('cyipopt-wheels')}; OMP_NUM_THREADS="
            f"{os.environ.get('OMP_NUM_THREADS', 'unset')}")


def _table(rows, solver):
    out = [f"solve times: best of {REPEATS} runs each (balance: one run); cpu = "
           "time.process_time (the measure), wall = time.perf_counter; ours = solver "
           f"{solver!r}; x cpu = opty cpu / ours cpu; setup apart (opty: SymPy + Cython, "
           "once per N; ours: structure); Δp vs ref: |p/p_ref − 1| with p_ref our IPOPT "
           "solve from p0 = 10; same: all three within fit/same_optimum (1e-6)"]
    out.append(f"{'problem':25s} {'it ours':>7s} {'it opty':>7s} {'cpu ours':>8s} "
               f"{'cpu opty':>8s} {'x cpu':>6s} {'wall ours':>9s} {'wall opty':>9s} "
               f"{'x wall':>6s} {'setup ours':>10s} {'setup opty':>10s} {'err ours':>9s} "
               f"{'err opty':>9s} {'Δp ours':>8s} {'Δp opty':>8s} {'ours/opty':>9s} "
               f"{'same':>4s} {'status':>6s}")
    for w in rows:
        out.append(
            f"{w['problem']:25s} {w['ours_it']:7d} {w['opty_it']:7d} {w['ours_cpu']:8.4f} "
            f"{w['opty_cpu']:8.3f} {w['opty_cpu'] / w['ours_cpu']:6.1f} {w['ours_solve']:9.4f} "
            f"{w['opty_solve']:9.3f} {w['opty_solve'] / w['ours_solve']:6.1f} "
            f"{w['ours_setup']:10.3f} {w['opty_setup']:10.1f} {100 * w['ours_err']:8.4f}% "
            f"{100 * w['opty_err']:8.4f}% {w['ours_vs_ref']:8.1e} {w['opty_vs_ref']:8.1e} "
            f"{w['ours_vs_opty']:9.1e} {'yes' if w['same'] else 'NO':>4s} "
            f"{w['ours_status']:>2d}/{w['opty_status']:<2d}")
    pend = [w for w in rows if w["problem"].startswith("pendulum")]
    for N in sorted({int(w["problem"].split()[1][2:]) for w in pend}):
        x = [w["opty_cpu"] / w["ours_cpu"] for w in pend if f"N={N} " in w["problem"]]
        out.append(f"pendulum N={N}: x cpu min {min(x):.1f}, median {np.median(x):.1f}, "
                   f"max {max(x):.1f} over {len(x)} start(s)")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000, 20000],
                    help="pendulum nodes (default 1000 5000 20000)")
    ap.add_argument("--p0", type=float, nargs="+", default=[DEFAULT_P0],
                    help=f"pendulum starts (default {DEFAULT_P0:g}, away from the truth 10)")
    ap.add_argument("--all-starts", action="store_true",
                    help="every start of PENDULUM_P0S (p0 = 1 … 100), the full table")
    ap.add_argument("--solver", choices=("sqp", "ipopt"), default="sqp",
                    help="our solver (default sqp, harness/fit/collocation_sqp.py)")
    ap.add_argument("--balance-only", action="store_true")
    ap.add_argument("--pendulum-only", action="store_true",
                    help="skip the balance problem (opty runs ~3000 iterations there)")
    ap.add_argument("--balance-n", type=int, default=6000, help="balance nodes (default 6000)")
    ap.add_argument("--out", default="bench/fit_vs_opty.txt", help="table file")
    args = ap.parse_args(argv)
    same = lookup("fit", "same_optimum").atol
    load0 = os.getloadavg()[0]
    p0s = P.PENDULUM_P0S if args.all_starts else tuple(args.p0)
    rows = []
    if not args.balance_only:
        for N in args.n:
            rows += _pendulum(N, p0s, args.solver, same)
    if not args.pendulum_only:
        rows.append(_balance(args.balance_n, args.solver))
    cmd = " ".join(sys.argv[1:] if argv is None else argv)
    lines = [f"# command: python bench/fit_vs_opty.py {cmd}",
             f"# machine: {_machine()}",
             f"# date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 1-min load average "
             f"{load0:.2f} before, {os.getloadavg()[0]:.2f} after"] + _table(rows, args.solver)
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return rows


def _print(w):
    print(w, flush=True)


if __name__ == "__main__":
    main()

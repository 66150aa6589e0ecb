"""Measured tables for the README's derivatives/shooting/identifiability section.

Run: PYTHONPATH=$PWD python bench/derivatives_shooting.py [--samples 10]

1. Derivative comparison across the four engines on the catalog (stage "derivatives"):
   worst norm-wise relative error per quantity for each engine pair class and each engine
   against central differences of its own dynamics; time per derivative call.
2. ẋ = a x + u: RK4 terminal sensitivity against (e^{aT} − 1)/a, and the condition number
   of the single- vs multiple-shooting Jacobian as T grows.
3. Gradient checks: adjoint / forward sensitivity / central differences per parameter
   group, ODE systems and an articulated model through every engine.
"""
from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

from fixtures import catalog
from harness.fit import shooting as sh
from harness.model import registry
from harness.model.prepared import prepare_fixture
from harness.stages import runner

ENGINES = list(registry.ENGINES)


def derivative_table(samples: int):
    models = [prepare_fixture(n) for n in catalog.names()]
    t0 = time.perf_counter()
    res = runner.run(models, ENGINES, ["derivatives"], samples=samples, seed=0)
    wall = time.perf_counter() - t0
    recs = [r for r in res.records if r.max_rel is not None]
    cols = [f"{a}~{b}" for a, b in itertools.combinations(ENGINES, 2)] + \
        [f"central_differences~{e}" for e in ENGINES]
    print(f"\n## derivatives stage: {len(recs)} records, "
          f"{sum(r.passed for r in recs)} passed, {wall:.1f} s (samples={samples})")
    print("| quantity | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for q in ("dvdot_dq", "dvdot_dv", "dvdot_dtau", "dtau_dq", "dtau_dv", "dtau_dvdot"):
        cells = []
        for c in cols:
            a, b = c.split("~")
            rel = [r.max_rel for r in recs if r.quantity.partition("/")[0] == q
                   and (r.engine_a, r.engine_b) in ((a, b), (b, a))]
            absn = [r.max_abs for r in recs if r.quantity.partition("/")[0] == q
                    and (r.engine_a, r.engine_b) in ((a, b), (b, a))]
            cells.append(f"{max(rel):.1e} ({max(absn):.0e})" if rel else "—")
        print(f"| {q} | " + " | ".join(cells) + " |")
    print("\ntime per call [ms] (forward_dynamics_derivatives / inverse_dynamics_derivatives)")
    print("| fixture | " + " | ".join(ENGINES) + " |")
    print("|---" * (len(ENGINES) + 1) + "|")
    for fx in ("double_pendulum", "chain7", "tree_floating"):
        cells = []
        for e in ENGINES:
            a = registry.adapter_class(e)(prepare_fixture(fx))
            rng = np.random.default_rng(0)
            q, v = a.random_state(rng)
            u = rng.normal(size=a.nv)
            ts = []
            for fn in (a.forward_dynamics_derivatives, a.inverse_dynamics_derivatives):
                fn(q, v, u)
                t0 = time.perf_counter()
                for _ in range(50):
                    fn(q, v, u)
                ts.append((time.perf_counter() - t0) / 50 * 1e3)
            cells.append(f"{ts[0]:.2f} / {ts[1]:.2f}")
        print(f"| {fx} | " + " | ".join(cells) + " |")


def _conds(a, T, tau=1.0, h=0.05):
    sysm = sh.linear_scalar()
    N, M = int(round(T / h)), int(round(T / tau))
    ctrl = sh.Controls("piecewise_constant", 1, T)
    steps = np.arange(0, N + 1, int(round(tau / h)))
    meas = sh.Measurements(steps, np.zeros((len(steps), 1)), np.eye(1), np.ones(1))
    _, J = sh.SingleShooting(sysm, ctrl, N, meas).residuals(np.array([0.0, 1.0, a]), jac=True)
    ms = sh.MultipleShooting(sysm, ctrl, N, M, meas)
    _, Jr, _, Jc, _ = ms.evaluate(np.concatenate([np.zeros(M), [1.0, a]]))
    return J[-1, 1], np.linalg.cond(J[:, :2]), np.linalg.cond(np.vstack([Jr, Jc])[:, :-1])


def linear_table():
    print("\n## ẋ = a x + u, x(0) = 0, constant u; x measured every 1 s; RK4 h = 0.05 s; "
          "multiple shooting with 1 s intervals")
    print("| a | T [s] | (e^{aT}−1)/a | RK4 ∂x(T)/∂u | rel. diff | cond single | "
          "cond multiple |")
    print("|---|---|---|---|---|---|---|")
    for a in (1.0, -1.0):
        for T in (1.0, 2.0, 5.0, 10.0, 20.0):
            sT, cs, cm = _conds(a, T)
            ex = (np.exp(a * T) - 1) / a
            print(f"| {a:g} | {T:g} | {ex:.6e} | {sT:.6e} | {abs(sT - ex) / abs(ex):.1e} | "
                  f"{cs:.3e} | {cm:.3f} |")


def _gcheck(P, z):
    ga, gf, gd = P.gradient_adjoint(z), P.gradient_forward(z), P.gradient_fd(z, 1e-6)
    s = P.sys
    K = P.ctrl.K
    out = {}
    for name, sl in (("x0", slice(0, s.nx)), ("θ", slice(s.nx, s.nx + K * s.nu)),
                     ("p", slice(s.nx + K * s.nu, None))):
        sc = np.abs(gd[sl]).max()
        out[name] = (np.abs(ga[sl] - gf[sl]).max() / sc, np.abs(ga[sl] - gd[sl]).max() / sc,
                     np.abs(gf[sl] - gd[sl]).max() / sc)
    return out


def gradient_table():
    print("\n## gradient checks (relative to ‖g_group‖∞): adjoint~forward / adjoint~FD / "
          "forward~FD")
    print("| system | controls | x0 | θ | p |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for sysm in (sh.linear_scalar(), sh.damped_pendulum()):
        for kind, K in (("piecewise_constant", 5), ("piecewise_linear", 6),
                        ("cubic_bspline", 7)):
            N = 50
            steps = np.arange(0, N + 1, 5)
            meas = sh.Measurements(steps, 0.3 * rng.normal(size=(len(steps), sysm.nx)),
                                   np.eye(sysm.nx), np.full(sysm.nx, 4.0))
            P = sh.SingleShooting(sysm, sh.Controls(kind, K, 1.0), N, meas)
            p = np.array([0.8]) if sysm.np_ == 1 else np.array([9.0, 0.3])
            z = np.concatenate([0.5 * rng.normal(size=sysm.nx), rng.normal(size=K * sysm.nu), p])
            g = _gcheck(P, z)
            print(f"| {sysm.name} | {kind} | " + " | ".join(
                "{:.0e} / {:.0e} / {:.0e}".format(*g[k]) for k in ("x0", "θ", "p")) + " |")
    for e in ENGINES:
        for fx in ("double_pendulum", "chain7"):
            a = registry.adapter_class(e)(prepare_fixture(fx))
            sysm = sh.ArticulatedSystem(a)
            r2 = np.random.default_rng(2)
            T, N, K = 0.2, 20, 3
            steps = np.arange(0, N + 1, 5)
            meas = sh.Measurements(steps, 0.3 * r2.normal(size=(len(steps), sysm.nx)),
                                   np.eye(sysm.nx), np.ones(sysm.nx))
            P = sh.SingleShooting(sysm, sh.Controls("piecewise_linear", K, T), N, meas)
            q0, v0 = a.random_state(r2)
            z = np.concatenate([0.5 * q0, v0, r2.normal(size=K * sysm.nu),
                                np.full(sysm.np_, 0.2)])
            g = _gcheck(P, z)
            print(f"| {e}:{fx} | piecewise_linear | " + " | ".join(
                "{:.0e} / {:.0e} / {:.0e}".format(*g[k]) for k in ("x0", "θ", "p")) + " |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=10)
    args = ap.parse_args()
    derivative_table(args.samples)
    linear_table()
    gradient_table()

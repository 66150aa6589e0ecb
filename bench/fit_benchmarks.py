"""Benchmarks of the collocation fitter (harness/fit/), full size; prints tables.

* Pendulum θ̈ = −p sin θ, p = 10, h = 0.01 s, σ = 0.05 rad, midpoint; N = 1000 and 5000;
  seeds 0-4; starts p0 = 1, 5, 10, 20, …, 100. Criterion: every start reaches the optimum
  of the start at p0 = 10 (relative 1e-6) and that optimum is within 0.5 % (N = 1000) /
  0.2 % (N = 5000) of the truth.
* Standing balance, 60 s at 100 Hz (N = 6000), zero initial gains, measurement noise
  only (criterion: every gain within 5 %) and with process noise (reported), fitted
  with the noise-free model and with free torque-noise inputs (effort weight 1/σ_w²).

Run: PYTHONPATH=. OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 python bench/fit_benchmarks.py
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from harness.core.tolerances import lookup
from harness.fit import problems as P


def pendulum(N_list=(1000, 5000), seeds=range(5), p0s=P.PENDULUM_P0S, method="midpoint"):
    same = lookup("fit", "same_optimum").atol  # thresholds on relative errors
    ok_all = True
    print(f"{'N':>5s} {'seed':>4s} {'p(p0=10)':>12s} {'err %':>7s} {'max |Δp|/p over p0':>19s} "
          f"{'iters':>9s} {'solve s (mean)':>14s} {'ok':>3s}")
    for N in N_list:
        acc = lookup("fit", "pendulum_p_n1000" if N == 1000 else "pendulum_p_n5000").atol
        for seed in seeds:
            _, _, ym = P.pendulum_data(N, seed)
            ref = P.pendulum_collocator(ym, 10.0, method=method).solve()
            pref = ref.params["p"]
            dev, its, ts, conv = 0.0, [], [], ref.converged
            for p0 in p0s:
                r = P.pendulum_collocator(ym, p0, method=method).solve()
                conv &= r.converged
                dev = max(dev, abs(r.params["p"] / pref - 1))
                its.append(r.iterations)
                ts.append(r.solve_time_s)
            err = pref / P.PENDULUM_TRUE_P - 1
            ok = conv and dev <= same and abs(err) <= acc
            ok_all &= ok
            print(f"{N:5d} {seed:4d} {pref:12.6f} {100 * err:+7.3f} {dev:19.2e} "
                  f"{min(its):3d}-{max(its):<3d}   {np.mean(ts):14.3f} {'yes' if ok else 'NO':>3s}",
                  flush=True)
    return ok_all


def balance(seed=0, N=6000, method="midpoint"):
    acc = lookup("fit", "balance_gains").atol
    rows = []
    for pn, model in ((False, None), (True, None), (True, P.BALANCE_PROCESS_STD)):
        t0 = time.perf_counter()
        _, a, _, xm = P.balance_data(N, seed, process_noise=pn)
        tdata = time.perf_counter() - t0
        r = P.balance_collocator(a, xm, method=method, process_std=model).solve()
        K = np.array([r.params[n] for n in P.BALANCE_K_NAMES]).reshape(2, 4)
        err = K / P.BALANCE_K_TRUE - 1
        ok = r.converged and np.all(np.abs(err) <= acc)
        print(f"balance N={N} seed={seed} process_noise={pn} noise_model="
              f"{'torque inputs, std %g N·m' % model if model else 'none'}: status {r.status}, "
              f"{r.iterations} iterations, solve {r.solve_time_s:.2f} s, setup "
              f"{r.setup_time_s:.2f} s (data {tdata:.1f} s); within 5%: {'yes' if ok else 'NO'}")
        for i in range(2):
            print("   " + "  ".join(f"k{i}{j}={K[i, j]:8.2f} ({100 * err[i, j]:+6.2f}%)"
                                    for j in range(4)))
        rows.append((pn, ok))
    return rows[0][1]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", default="midpoint")
    ap.add_argument("--skip-pendulum", action="store_true")
    args = ap.parse_args()
    ok_p = True if args.skip_pendulum else pendulum(method=args.method)
    ok_b = balance(method=args.method)
    print(f"pendulum criterion met: {ok_p}; balance (measurement noise only) met: {ok_b}")

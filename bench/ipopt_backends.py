"""Collocator.solve through our ctypes binding of IPOPT's C interface (backend "c",
harness/fit/ipopt_c.py) against cyipopt (backend "cyipopt"), and the IPOPT options tried
for speed, in one run.

Problems: the pendulum of bench/fit_vs_opty.py (midpoint, seed 0, N = 1000 at every start
p0 of PENDULUM_P0S, N = 5000 at p0 = 10) and, unless --no-balance, the standing-balance
problem (midpoint, N = --balance-n, one solve per variant). Each variant gives the solve
time (FitResult.solve_time_s, wall, best of REPEATS), the iterations and the identified
parameter; a variant whose iterations or parameters differ from the reference (backend
"c" with the default options) beyond round-off (REL) is flagged, since an option is only
worth keeping if it leaves the fit unchanged.

Run: PYTHONPATH=. .venv/bin/python bench/ipopt_backends.py [--options] [--no-balance]
"""
from __future__ import annotations

import argparse

import numpy as np

from harness.fit import problems as P
from harness.fit.collocation import SPEED_OPTIONS

REPEATS = 3
REL = 1e-10        # relative change of an identified parameter still counted as round-off

# (label, backend, extra IPOPT options)
BACKENDS = [("c", "c", None), ("cyipopt", "cyipopt", None)]
IPOPT_DEFAULTS = {k: v for k, v in (("mumps_scaling", 77), ("mumps_permuting_scaling", 7),
                                     ("constr_mult_init_max", 1e3)) if k in SPEED_OPTIONS}
OPTIONS = [("c IPOPT defaults", "c", IPOPT_DEFAULTS),
           ("cyipopt IPOPT defaults", "cyipopt", IPOPT_DEFAULTS),
           ("c nlp_scaling none", "c", {"nlp_scaling_method": "none"}),
           ("c mumps_pivot_order 2", "c", {"mumps_pivot_order": 2})]


def _best(coll, backend, options, repeats):
    best = None
    for _ in range(repeats):
        r = coll.solve(options, backend=backend)
        if best is None or r.solve_time_s < best.solve_time_s:
            best = r
    return best


def run(problems, variants, repeats=REPEATS):
    rows = []
    for name, coll, reps in problems:
        ref = None
        for label, backend, opts in variants:
            r = _best(coll, backend, opts, reps)
            p = np.array(list(r.params.values()))
            ref = (r, p) if ref is None else ref
            same = (r.iterations == ref[0].iterations and r.status == ref[0].status
                    and bool(np.all(np.abs(p - ref[1]) <= REL * np.abs(ref[1]))))
            rows.append(dict(problem=name, variant=label, time=r.solve_time_s, it=r.iterations,
                             status=r.status, p=p, same=same))
            print(f"{name:22s} {label:24s} {r.solve_time_s:8.4f} s  it {r.iterations:3d}  "
                  f"status {r.status:2d}  {'same' if same else 'DIFFERENT'}  "
                  f"p[0] {p[0]:.12g}", flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--options", action="store_true",
                    help="also the IPOPT option variants (OPTIONS), backend c")
    ap.add_argument("--no-balance", action="store_true")
    ap.add_argument("--balance-n", type=int, default=6000)
    args = ap.parse_args(argv)
    problems = []
    for N, p0s in ((1000, P.PENDULUM_P0S), (5000, (10.0,))):
        _, _, ym = P.pendulum_data(N, seed=0)
        problems += [(f"pendulum N={N} p0={p0:g}", P.pendulum_collocator(ym, p0), REPEATS)
                     for p0 in p0s]
    if not args.no_balance:
        _, a, _, xm = P.balance_data(args.balance_n, seed=0)
        problems.append((f"balance N={args.balance_n}", P.balance_collocator(a, xm), 1))
    variants = BACKENDS + (OPTIONS if args.options else [])
    rows = run(problems, variants)
    print(f"\nsolve wall time [s], best of {REPEATS} (balance: one solve)")
    labels = [v[0] for v in variants]
    print(f"{'problem':22s} " + " ".join(f"{v:>24s}" for v in labels) + "   it")
    for name, _, _ in problems:
        rs = [w for w in rows if w["problem"] == name]
        print(f"{name:22s} " + " ".join(
            f"{w['time']:20.4f}{'' if w['same'] else ' (!)':>4s}" for w in rs)
            + f"  {rs[0]['it']:3d}")
    return rows


if __name__ == "__main__":
    main()

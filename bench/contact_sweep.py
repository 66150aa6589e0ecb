"""Contact sweep cases run serially in this process (no executor): wall time per case and
a summary of the metrics over the grid. Not part of the test suite.

    PYTHONPATH=. OMP_NUM_THREADS=1 python bench/contact_sweep.py [--quick]
"""
from __future__ import annotations

import statistics
import sys
import time

from harness.sweep import contact as cs


def main(quick: bool) -> None:
    cases = cs.grid(quick=quick)
    cs.run_case(cases[0])  # imports and the adapter, outside the timing
    start = time.perf_counter()
    results = [cs.run_case(c) for c in cases]
    wall = time.perf_counter() - start
    print(f"{len(cases)} cases in {wall:.1f} s ({1e3 * wall / len(cases):.1f} ms per case)")
    by_dt = {}
    for c, r in zip(cases, results):
        by_dt.setdefault(c["dt_s"], []).append(r)
    print("dt [s]   median rebound err   max rebound err   median pen. err   max energy gain [J]")
    for dt, rs in sorted(by_dt.items()):
        print(f"{dt:<8g} {statistics.median(r['rebound_err_rel'] for r in rs):<20.3e} "
              f"{max(r['rebound_err_rel'] for r in rs):<17.3e} "
              f"{statistics.median(r['penetration_err_rel'] for r in rs):<17.3e} "
              f"{max(r['energy_gain_J'] for r in rs):.3e}")


if __name__ == "__main__":
    main("--quick" in sys.argv)

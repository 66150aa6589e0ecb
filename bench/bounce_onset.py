"""The bounce fit's onset on the refined grid against the phase-aligned fit, and the
number of impacts compared by evidence, over seeds and noise levels
(harness/fit/bounce.py; docs/schedules.md "Measured").

Per seed: the onset posterior (mean, spread) over the refined candidate grid, the
phase-aligned fit's first impact (value, SE) started from the selected schedule, their
ratio, (mean − truth)/spread, the refinement's rounds, the candidates of the selected
impact count and of every count with an impact, the weight of the
selected impact count and the log-evidence gap to the next count, the restitution's z,
and the wall time of the candidate fit. Then the same at other noise levels, and the
two-impact and energy-gaining truths of tests/unit/test_bounce_onset.py.

Run: .venv/bin/python bench/bounce_onset.py [--seeds 0-9] [--out bench/bounce_onset.txt]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from harness.fit import bounce as B

TRUTHS = {"default (3 impacts)": B.TRUTH,
          "two impacts (e 0.9)": {"h0_m": 1.0, "v0_mps": 0.5, "restitution": 0.9},
          "energy gain (e 1.1)": {"h0_m": 1.0, "v0_mps": 0.5, "restitution": 1.1}}


def row(seed: int, sigma: float, truth: dict) -> str:
    """One table line (module docstring) for ``seed``, noise σ [m] and ``truth``."""
    t, _, _, y = B.data(seed, sigma, truth=truth)
    t0 = time.perf_counter()
    R = B.fit_schedules(t, y, sigma)
    wall = time.perf_counter() - t0
    post = R["onset_posterior"]
    f = R["fits"][R["selected"]]
    times = B.flow(t, f["theta"][0], f["theta"][1], f["onset_s"])[3]
    P, prob, _ = B.fit_phases(t, y, sigma, start=(f["h0_m"], *f["theta"],
                                                  times[times < t[-1]]))
    se = float(P.se[prob.nz])
    tau = B.true_onset(truth["h0_m"], truth["v0_mps"])
    counts = sorted(R["counts"], key=lambda c: -c["log_evidence"])
    gap = counts[0]["log_evidence"] - counts[1]["log_evidence"]
    e, e_se = R["mixture_mean"][1], float(np.sqrt(R["mixture_cov"][1, 1]))
    return (f"{seed:4d} {1e3 * sigma:5.1f} {post['mean_s']:.6f} {1e3 * post['sd_s']:.4f} "
            f"{P.event_times[0]:.6f} {1e3 * se:.4f} {post['sd_s'] / se:6.4f} "
            f"{(post['mean_s'] - tau) / post['sd_s']:+6.2f} {R['refinement']['rounds']:3d} "
            f"{counts[0]['candidates']:4d} {R['refinement']['candidates']:4d} "
            f"{counts[0]['impacts']:2d} "
            f"{counts[0]['weight']:.6f} {gap:9.3g} "
            f"{(e - truth['restitution']) / e_se:+6.2f} {wall:5.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    lo, _, hi = a.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    head = ("seed σ[mm] onset[s] sd[ms] phases[s] se[ms] sd/se z_onset rounds cand_n cand_all n "
            "w(n) ΔlogZ z_e wall[s]")
    lines = []
    for name, truth in TRUTHS.items():
        sigmas = (0.005, 0.04, 0.01, 0.0025) if truth is B.TRUTH else (0.005,)
        for sigma in sigmas:
            lines.append(f"# {name}, σ = {1e3 * sigma:g} mm")
            lines.append(head)
            for s in (seeds if sigma == 0.005 else seeds[:5]):
                lines.append(row(s, sigma, truth))
                print(lines[-1], flush=True)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

"""The two-ball fit's order of first impacts weighed by evidence, over seeds and over the
gap between the two first impacts (harness/fit/bounce_order.py; docs/schedules.md "Two
balls: the order of their first impacts").

Per seed and truth: the order of largest weight and its weight, log P of the other order
(the onsets' region evidence), half the χ² the other order's boundary fit adds (the two
balls refitted with one common first impact: an independent measure of how far the data
are from that order), each ball's selected impact count and restitution z, and, for the
close truths, the weight against a brute-force evidence integral (each ball's Laplace
evidence on a dense uniform onset grid, pairs summed over the half-plane) and against
Φ((t_B − t_A)/√(se_A² + se_B²)) of the two phase-aligned fits.

Run: .venv/bin/python bench/bounce_order.py [--seeds 0-9] [--out bench/bounce_order.txt]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.special import ndtr

from harness.fit import bounce as B
from harness.fit import bounce_order as O

A, FAR = O.TRUTH_A, O.TRUTH_B


def dropped(gap_s: float) -> dict:
    """A ball released at rest whose first impact is ``gap_s`` [s] after A's."""
    tau = B.true_onset(A["h0_m"], A["v0_mps"]) + gap_s
    return {"h0_m": 0.5 * B.G * tau * tau, "v0_mps": 0.0, "restitution": 0.75}


def phase_onset(t: np.ndarray, y: np.ndarray, R: dict) -> tuple[float, float]:
    """(first impact [s], its SE [s]) of the phase-aligned fit started from the ball's
    selected candidate (as `harness fit --problem bounce` starts it)."""
    f = R["fits"][R["selected"]]
    times = B.flow(t, f["theta"][0], f["theta"][1], f["onset_s"])[3]
    P, prob, _ = B.fit_phases(t, y, B.SIGMA, start=(f["h0_m"], *f["theta"],
                                                    times[times < t[-1]]))
    return float(P.event_times[0]), float(P.se[prob.nz])


def brute(t: np.ndarray, y: np.ndarray, R: dict, centre: list, se: list) -> float:
    """P(τ_A < τ_B | y) by a dense uniform onset grid per ball (±6 se, step se/5; B's
    density piecewise constant in its cells, A's integral by the midpoint rule)."""
    grids, zs = [], []
    for k in range(2):
        g = centre[k] + se[k] * (np.arange(-30, 31) / 5.0 + 0.1 * k)
        n = O._count(R["balls"][k])
        lz = np.array([B.fit_candidate(t, y[k], B.SIGMA, float(x), impacts=n)["log_evidence"]
                       for x in g])
        grids.append(g)
        zs.append(np.exp(lz - lz.max()))
    # ∫ p_A(a) (1 − F_B(a)) da, F_B piecewise constant in B's cells, midpoint rule in a
    hb = se[1] / 5.0
    edges = np.r_[grids[1][0] - hb / 2, grids[1] + hb / 2]
    cdf_b = np.r_[0.0, np.cumsum(zs[1])] / zs[1].sum()
    return float(zs[0] @ (1.0 - np.interp(grids[0], edges, cdf_b)) / zs[0].sum())


def row(seed: int, truths: tuple, close: bool) -> str:
    """One table line (module docstring) for ``seed`` and the two balls ``truths``;
    ``close``: with the brute-force integral and the phase-aligned closed form."""
    t, _, _, y = O.data(seed, truths)
    t0 = time.perf_counter()
    R = O.fit_order(t, y)
    wall = time.perf_counter() - t0
    sel, other = R["orders"][R["selected"]], R["orders"][1 - R["selected"]]
    dchi = 0.5 * sum(fo["chi2"] - fs["chi2"] for fo, fs in zip(other["fits"], sel["fits"]))
    ze = [(R_["mixture_mean"][1] - tr["restitution"]) / math.sqrt(R_["mixture_cov"][1, 1])
          for R_, tr in zip(R["balls"], truths)]
    n = [O._count(R_) for R_ in R["balls"]]
    line = (f"{seed:4d} {sel['order']:8s} {sel['weight']:.6f} {other['log_prob']:+11.4g} "
            f"{dchi:10.4g} {n[0]:2d} {n[1]:2d} {ze[0]:+6.2f} {ze[1]:+6.2f} {wall:6.2f}")
    if close:
        ph = [phase_onset(t, y[k], R["balls"][k]) for k in range(2)]
        wa = R["orders"][0]["weight"]
        closed = float(ndtr((ph[1][0] - ph[0][0]) / math.hypot(ph[0][1], ph[1][1])))
        bf = brute(t, y, R, [p[0] for p in ph], [p[1] for p in ph])
        line += f"  w(A first) {wa:.4f} brute {bf:.4f} closed {closed:.4f}"
    return line


def main() -> None:
    """Every truth over the seeds; the table printed and written to ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    lo, hi = (int(v) for v in a.seeds.split("-"))
    cases = [("A then B, 28.9 ms apart", (A, FAR), False),
             ("swapped: B then A", (FAR, A), False),
             ("B 10 ms (one sample) after A", (A, dropped(0.010)), False),
             ("B 1 ms after A", (A, dropped(0.001)), True),
             ("B 0.3 ms after A", (A, dropped(0.0003)), True),
             ("B at A's onset", (A, dropped(0.0)), True)]
    out = []
    for name, truths, close in cases:
        out.append(f"# {name}, σ = 5 mm")
        out.append("seed selected weight    logP(other) ½Δχ²other nA nB  z_eA   z_eB  wall[s]")
        for s in range(lo, hi + 1):
            out.append(row(s, truths, close))
            print(out[-1], flush=True)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

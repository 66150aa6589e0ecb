"""Two balls bouncing on one plane: the order of their first impacts as a schedule, each
order weighed by its evidence (harness/fit/schedules.py).

Dimension legend: N samples (uniform step h [s]) of each ball's height; θ_X = (v0, e) of
ball X ∈ {A, B} (harness/fit/bounce.py); the onsets τ = (τ_A, τ_B) [s], the first-impact
times of the two balls.

Model: two balls, each the ball of harness/fit/bounce.py (vertical flight under g, the
plane at height 0, reset v⁺ = −e v⁻), with their own release height, velocity and
restitution, their heights measured at the same times with independent Gaussian noise of
known σ. Neither ball touches the other, so the likelihood factorises:
p(y_A, y_B | θ_A, τ_A, θ_B, τ_B) = p(y_A | θ_A, τ_A) p(y_B | θ_B, τ_B).

Schedules: each ball's own schedules (its impact count 0 … K and its first-impact onset
on a refined grid) are fitted and weighed by ``bounce.fit_schedules``, unchanged. The
two-body schedule this module adds is the **order** of the first impacts: "A first"
(τ_A < τ_B) or "B first" (τ_B < τ_A), equal prior weight. The onsets' prior is uniform
over one square box [lo, hi]² (lo, hi: the ends of the union of the two balls' onset
ranges; each ball's likelihood outside its own range is taken as 0, the range being
built to hold its plausible onsets), so each order's prior is uniform over its half of
the box, and

    Z(order) = 2 Z_A Z_B P(order | y),

Z_X the ball's evidence with its onset uniform over [lo, hi] (its ``fit_schedules``
evidence over the counts with an impact, times its range over the box) and P(order | y)
the posterior mass of the order's half-plane. That mass is the region evidence of
``schedules.truncated_laplace`` applied to the onsets: each ball's onset posterior
(marginalised over θ_X and over its counts on its refined grid) as a Gaussian of its mean
and spread, the order a linear constraint c(τ) = ±(τ_B − τ_A) ≥ 0, so
log P = log Φ(c / √(sd_A² + sd_B²)) (exact for Gaussian onset posteriors; the two balls'
posteriors are independent). Far apart, the wrong order keeps a finite log evidence (the
Gaussian's tail); close together (impacts a fraction of the onset spread apart), the
weights split.

Each order is also *fitted*: its MAP onsets are the two posterior means when they lie in
its half-plane, else the nearest point of its boundary τ_A = τ_B (the precision-weighted
mean of the two means); each ball is refitted there (``bounce.fit_candidate`` with the
ball's selected count), giving that order's restitutions {value, se}. The restitution
marginalised over the orders is each ball's ``fit_schedules`` mixture: the two orders
partition the onset box, so summing over them is integrating over every onset.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from harness.fit import bounce as B
from harness.fit import schedules as S

# the two balls of the benchmark (synthetic; the fit never sees them): A as bounce.TRUTH,
# B dropped from rest higher up with a lower restitution, its first impact 28.9 ms (about
# three samples) after A's; both make three impacts in the 2 s window
TRUTH_A = dict(B.TRUTH)
TRUTH_B = {"h0_m": 1.4, "v0_mps": 0.0, "restitution": 0.75}
BALLS = ("A", "B")
ORDERS = ("A first", "B first")


def data(seed: int, truths: tuple, sigma: float = B.SIGMA) -> tuple:
    """(t (N,) s, y_true (2, N) m, v_true (2, N) m/s, y_meas (2, N) m) of the two balls
    ``truths`` (h0_m, v0_mps, restitution each), ball k's noise seeded by 2·seed + k."""
    rows = [B.data(2 * seed + k, sigma, truth=tr) for k, tr in enumerate(truths)]
    t = rows[0][0]
    return (t, np.stack([r[1] for r in rows]), np.stack([r[2] for r in rows]),
            np.stack([r[3] for r in rows]))


def _box(fits: tuple) -> tuple[float, float]:
    """(lo, hi) [s]: the union of the balls' onset ranges (their candidates with an
    impact)."""
    on = np.concatenate([R["onsets"][R["impacts"] > 0] for R in fits])
    return float(np.min(on)), float(np.max(on))


def ball_log_evidence(R: dict, box: tuple[float, float]) -> float:
    """log Z_X [–] of one ball (``bounce.fit_schedules``' R) over its schedules with an
    impact, its onset uniform over ``box`` [s]: log Σ_n Z_n (each count's evidence with
    its onset uniform over its own range) + log(range / box)."""
    le = np.array([c["log_evidence"] for c in R["counts"] if c["impacts"] > 0])
    top = float(np.max(le))
    on = R["onsets"][R["impacts"] > 0]
    span = float(np.max(on) - np.min(on))
    return (top + math.log(float(np.sum(np.exp(le - top))))
            + math.log(span / (box[1] - box[0])))


def _order_onsets(mu: NDArray[np.float64], sd: NDArray[np.float64],
                  sign: float) -> NDArray[np.float64]:
    """The MAP onsets (2,) [s] of an order (``sign`` +1: A first, −1: B first) under the
    Gaussian onset posteriors N(mu, sd²): the means when sign·(τ_B − τ_A) ≥ 0, else the
    precision-weighted mean on the boundary τ_A = τ_B."""
    if sign * (mu[1] - mu[0]) >= 0:
        return mu.copy()
    p = 1.0 / sd ** 2
    return np.full(2, float(p @ mu / p.sum()))


def fit_order(t: NDArray[np.float64], y: NDArray[np.float64],
              sigma: float = B.SIGMA) -> dict:
    """Both balls' schedules (``bounce.fit_schedules`` on each row of y (2, N) [m] at
    t (N,) [s]) and the order of their first impacts weighed by evidence (module
    docstring). Returns {"balls": (R_A, R_B), "box": (lo, hi) [s], "orders": [{order,
    log_evidence, weight, log_prob (log P(order | y)), onsets_s (2,), fits (A, B) at
    those onsets}], "selected": index of the order of largest weight}."""
    fits = tuple(B.fit_schedules(t, yk, sigma) for yk in np.asarray(y, float))
    box = _box(fits)
    mu = np.array([R["onset_posterior"]["mean_s"] for R in fits])
    sd = np.array([R["onset_posterior"]["sd_s"] for R in fits])
    base = sum(ball_log_evidence(R, box) for R in fits) + math.log(2.0)
    H = np.diag(1.0 / sd ** 2)
    rows = []
    for name, sign in zip(ORDERS, (1.0, -1.0)):
        A = np.array([[-sign, sign]])          # c(τ) = sign (τ_B − τ_A) ≥ 0
        logz = S.truncated_laplace(base, H, np.zeros(2), A @ mu, A)
        onsets = _order_onsets(mu, sd, sign)
        refit = tuple(B.fit_candidate(t, yk, sigma, float(tk), impacts=_count(R))
                      for yk, tk, R in zip(np.asarray(y, float), onsets, fits))
        rows.append({"order": name, "log_evidence": logz, "log_prob": logz - base,
                     "onsets_s": onsets, "fits": refit})
    w = S.posterior_weights(np.array([r["log_evidence"] for r in rows]))
    for r, wi in zip(rows, w):
        r["weight"] = float(wi)
    return {"balls": fits, "box": box, "orders": rows, "selected": int(np.argmax(w)),
            "onset_mean_s": mu, "onset_sd_s": sd}


def _count(R: dict) -> int:
    """The impact count of largest weight of one ball's ``fit_schedules`` R."""
    return int(R["impacts"][R["selected"]])

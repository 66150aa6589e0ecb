"""Fitting under an uncertain event schedule: candidate schedules compared by evidence.

Dimension legend: m residual rows (measurements plus measured events), d parameters, C
candidate schedules.

A *schedule* fixes the hybrid structure of a fit (here: when the first contact begins).
Each candidate schedule is fitted on its own (parameters θ (d,) by regularised least
squares), then the candidates are compared by their marginal likelihood (evidence)
p(y | schedule) = ∫ p(y | θ, schedule) p(θ) dθ, approximated by Laplace's method at the
MAP θ̂ with the Gauss–Newton Hessian of the negative log posterior H = Jᵀ W J + Λ:

    log Z ≈ −½ rᵀ W r − ½ (θ̂ − μ)ᵀ Λ (θ̂ − μ) + ½ log det Λ − ½ log det H
            − Σ_k log σ_k − (m/2) log 2π

(r the residuals at θ̂, W = diag(1/σ_k²) their known noise, prior θ ~ N(μ, Λ⁻¹)). For a
model linear in θ this is exact (tests/unit/test_schedules.py checks it against the
Gaussian marginal). With a uniform prior over the C candidates, the posterior weight of
candidate i is w_i = exp(log Z_i) / Σ_j exp(log Z_j). A parameter marginalised over the
schedules is the mixture of the candidates' Gaussian posteriors N(θ̂_i, H_i⁻¹): mean
Σ w_i θ̂_i, variance Σ w_i (H_i⁻¹ + θ̂_i θ̂_iᵀ) − mean meanᵀ (within- plus between-
schedule spread).

Event labels (``MODE_LABELS`` of the candidate schema: measured, inferred, assumed) decide
what an event contributes to the objective: only a *measured* event time t̂ adds the
residual (t̂ − t(θ))/σ_t; an inferred event (one the flow places) and an assumed one (one
the schedule places) are never scored, whatever time is written beside them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from harness.model.candidate import MODE_LABELS

LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class EventObservation:
    """Event ``index`` (1 = the first impact, in time order) observed at ``t_s`` [s] with
    standard deviation ``sigma_s`` [s] and a ``label`` from MODE_LABELS. Only a measured
    event is scored (module docstring)."""

    index: int
    t_s: float
    sigma_s: float
    label: str

    def __post_init__(self):
        if self.label not in MODE_LABELS:
            raise ValueError(f"event label {self.label!r}: one of {', '.join(MODE_LABELS)}")
        if self.index < 1:
            raise ValueError(f"event index must be >= 1, got {self.index}")
        if self.label == "measured" and not (math.isfinite(self.sigma_s) and self.sigma_s > 0):
            raise ValueError(f"measured event {self.index}: sigma_s must be > 0")

    @property
    def scored(self) -> bool:
        return self.label == "measured"


def event_rows(events: Sequence[EventObservation], times: NDArray[np.float64],
               dtimes: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    """(r (k,), J (k, d), sigma (k,)) of the measured events: r = (t(θ) − t̂)/σ_t whitened,
    J (k, d) its derivative. ``times`` (n_ev,) [s] are the model's event times in order and
    ``dtimes`` (n_ev, d) their derivatives (ValueError when a measured event's index is
    beyond them). Inferred and assumed events give no row."""
    dtimes = np.asarray(dtimes, float)
    d = dtimes.shape[1]
    rows, jac, sig = [], [], []
    for ev in events:
        if not ev.scored:
            continue
        if ev.index > len(times):
            raise ValueError(f"measured event {ev.index}: the model has {len(times)} events")
        rows.append((float(times[ev.index - 1]) - ev.t_s) / ev.sigma_s)
        jac.append(dtimes[ev.index - 1] / ev.sigma_s)
        sig.append(ev.sigma_s)
    return np.asarray(rows, float), np.asarray(jac, float).reshape(len(rows), d), \
        np.asarray(sig, float)


def laplace_log_evidence(r_white: NDArray[np.float64], J_white: NDArray[np.float64],
                         theta: NDArray[np.float64], mu: NDArray[np.float64],
                         Lam: NDArray[np.float64], sigmas: NDArray[np.float64]) -> tuple:
    """(log Z, H (d, d), log det H) by Laplace's method (module docstring) at the MAP
    ``theta`` (d,): ``r_white`` (m,) whitened residuals (r_k/σ_k), ``J_white`` (m, d)
    their Jacobian, prior mean ``mu`` (d,) and precision ``Lam`` (d, d), ``sigmas`` (m,)
    the residuals' standard deviations (their units)."""
    r = np.asarray(r_white, float)
    J = np.asarray(J_white, float)
    dth = np.asarray(theta, float) - np.asarray(mu, float)
    Lam = np.asarray(Lam, float)
    H = J.T @ J + Lam
    sign_h, logdet_h = np.linalg.slogdet(H)
    sign_l, logdet_l = np.linalg.slogdet(Lam)
    if sign_h <= 0 or sign_l <= 0:
        raise ValueError("laplace_log_evidence: H and Λ must be positive definite")
    m = r.size
    logz = (-0.5 * float(r @ r) - 0.5 * float(dth @ Lam @ dth) + 0.5 * logdet_l
            - 0.5 * logdet_h - float(np.sum(np.log(sigmas))) - 0.5 * m * LOG_2PI)
    return logz, H, logdet_h


def posterior_weights(log_evidence: NDArray[np.float64]) -> NDArray[np.float64]:
    """w (C,) ∝ exp(log Z) normalised to sum 1 (uniform prior over candidates); a
    candidate with log Z = −inf (no valid fit) gets weight 0."""
    le = np.asarray(log_evidence, float)
    if not np.isfinite(le).any():
        raise ValueError("posterior_weights: no candidate has a finite evidence")
    top = np.max(le[np.isfinite(le)])
    w = np.where(np.isfinite(le), np.exp(le - top), 0.0)
    return w / w.sum()


def mixture(means: NDArray[np.float64], covariances: NDArray[np.float64],
            weights: NDArray[np.float64]) -> tuple:
    """(mean (d,), covariance (d, d)) of Σ w_i N(means_i, covariances_i): means (C, d),
    covariances (C, d, d)."""
    w = np.asarray(weights, float)
    M = np.asarray(means, float)
    S = np.asarray(covariances, float)
    mean = w @ M
    second = np.einsum("c,cij->ij", w, S + np.einsum("ci,cj->cij", M, M))
    return mean, second - np.outer(mean, mean)


def onset_posterior(onsets: NDArray[np.float64], weights: NDArray[np.float64]) -> dict:
    """Mean and spread (standard deviation) [s] of the onset under the weights, and the
    maximum-weight onset."""
    x = np.asarray(onsets, float)
    w = np.asarray(weights, float)
    mean = float(w @ x)
    return {"mean_s": mean, "sd_s": float(math.sqrt(max(float(w @ (x - mean) ** 2), 0.0))),
            "map_s": float(x[int(np.argmax(w))])}


def log_ndtr(x: float) -> float:
    """log Φ(x) [–] of the standard normal distribution function at x [–], accurate in the
    far lower tail (the asymptotic series below x = −30, where erfc underflows)."""
    if x > -30.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    u = 1.0 / (x * x)   # Φ(x) = φ(x)/|x| · (1 − u + 3u² − 15u³ + 105u⁴ − …)
    return (-0.5 * x * x - math.log(-x) - 0.5 * LOG_2PI
            + math.log1p(u * (-1.0 + u * (3.0 + u * (-15.0 + 105.0 * u)))))


def truncated_laplace(logz: float, H: NDArray[np.float64], grad: NDArray[np.float64],
                      c: NDArray[np.float64], A: NDArray[np.float64]) -> float:
    """log Z [–] of a schedule whose parameters θ (d,) are confined to a region
    {c(θ) ≥ 0} (k constraints), from the Laplace quantities at the MAP inside it: ``logz``
    (``laplace_log_evidence`` there), H (d, d), the gradient ``grad`` (d,) of the negative
    log posterior (zero at an interior MAP, along the constraint's normal on its
    boundary), the constraint values ``c`` (k,) and their Jacobian ``A`` (k, d).

    The negative log posterior near θ̂ is taken as f̂ + gᵀδ + ½ δᵀHδ and the region as
    c + Aδ ≥ 0; integrating the Gaussian over it gives
    log Z = logz + ½ gᵀH⁻¹g + Σ_k log Φ((c_k + a_kᵀδ*) / √(a_kᵀH⁻¹a_k)), δ* = −H⁻¹g
    (the constraints taken as independent). At an interior MAP far from every boundary
    this is ``logz``; on a boundary with a steep slope it is the mass of a half-Gaussian
    tail."""
    Hinv = np.linalg.inv(np.asarray(H, float))
    g = np.asarray(grad, float)
    dstar = -Hinv @ g
    out = float(logz) + 0.5 * float(g @ Hinv @ g)
    for ck, ak in zip(np.atleast_1d(np.asarray(c, float)), np.atleast_2d(np.asarray(A, float))):
        s = math.sqrt(float(ak @ Hinv @ ak))
        out += log_ndtr((float(ck) + float(ak @ dstar)) / s)
    return out


def weighted_posterior(log_evidence: NDArray[np.float64],
                       log_prior: NDArray[np.float64]) -> NDArray[np.float64]:
    """w (C,) ∝ exp(log Z + log prior) normalised to sum 1: ``log_prior`` (C,) is each
    candidate's prior mass (an onset cell's share of the onset range, on an uneven
    grid); a candidate with log Z = −inf gets weight 0."""
    return posterior_weights(np.asarray(log_evidence, float) + np.asarray(log_prior, float))

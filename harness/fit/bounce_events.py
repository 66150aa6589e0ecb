"""The bounce problem's observed events (`harness fit --problem bounce --event
impactK=TIME±SIGMA:LABEL`; harness/fit/observed_events.py): the fitted impact times with
their standard errors, with the measured events scored and from the data alone, and the
conflict check written to fit.json's ``event_observations``; and fit.json's
``identifiability`` of the bounce (``identifiability``: the largest-weight candidate's
θ = (v0 [m/s], e [–]) by harness/fit/identifiability.py, noise known).

Dimension legend: C candidate onsets, k observed events; times [s].

**Impact times of the candidate-schedule fit** (``schedule_times``): candidate i places
impact j at t_ij(θ̂_i) with variance g_ij H_i⁻¹ g_ijᵀ (g_ij = ∂t_ij/∂θ, exact from the
closed-form flow); over the candidates of the selected impact count the time is the
mixture of these Gaussians under the posterior weights (mean and standard deviation, as for
the parameters). The first impact sits on the candidate grid: its time within one
candidate has no spread, and its spread is the mixture's over the onsets, which the fit
refines until the onset posterior is resolved (``bounce.fit_schedules``). With ``--method
phases`` the impact times are fitted parameters with their own standard errors
(harness/fit/phases.py).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput
from harness.fit import bounce
from harness.fit.identifiability import analyse
from harness.fit.observed_events import check
from harness.fit.schedules import EventObservation

KIND = "impact"


def schedule_times(R: dict, t: NDArray[np.float64],
                   indices: Sequence[int]) -> list[tuple[float, float]]:
    """(mean, sd) [s] of impacts ``indices`` (1 = first) over the candidate schedules of
    ``R`` (``bounce.fit_schedules`` on samples t (N,) [s]; module docstring)."""
    fits, w = R["fits"], R["weights"]
    n = max(indices, default=0)
    count = R["impacts"][R["selected"]]
    ok = [i for i, f in enumerate(fits) if f["valid"] and R["impacts"][i] == count]
    means = np.zeros((len(ok), n))
    var = np.zeros((len(ok), n))
    for a, i in enumerate(ok):
        f = fits[i]
        _, _, _, times, dtimes = bounce.flow(t, f["theta"][0], f["theta"][1], f["onset_s"],
                                             n_events=n)
        means[a] = times[:n]
        var[a] = np.einsum("jd,de,je->j", dtimes[:n], f["cov"], dtimes[:n])
    wk = w[ok] / w[ok].sum()
    mean = wk @ means
    total = wk @ (var + means ** 2) - mean ** 2
    return [(float(mean[j - 1]), float(np.sqrt(max(total[j - 1], 0.0)))) for j in indices]


def check_phase_events(observations: Sequence[EventObservation], n_impacts: int) -> None:
    """BadInput naming ``--event`` when a measured event lies beyond the ``n_impacts``
    impacts the phase-aligned fit will place (its schedule, from the selected candidate)."""
    beyond = [ev.index for ev in observations if ev.scored and ev.index > n_impacts]
    if beyond:
        raise BadInput("--event", f"{KIND}{max(beyond)}: the phase-aligned fit places "
                                  f"{n_impacts} impacts in the window")


def _phase_times(doc_rows: list[dict], indices: Sequence[int], what: str) -> list:
    """(t, se) [s] of impacts ``indices`` from a phase fit's ``event_times`` rows;
    BadInput naming ``--event`` for an impact the fit does not place."""
    if max(indices, default=0) > len(doc_rows):
        raise BadInput("--event", f"{KIND}{max(indices)}: the {what} places "
                                  f"{len(doc_rows)} impacts in the window")
    return [(doc_rows[j - 1]["value"], doc_rows[j - 1]["se"]) for j in indices]


def observe(doc: dict, observations: Sequence[EventObservation], t: NDArray[np.float64],
            y: NDArray[np.float64], sigma: float, R: dict) -> None:
    """Add ``event_observations`` to the bounce fit.json ``doc`` (observed_events.check)
    and mark the observed impacts' labels in its ``events``. ``R`` is the candidate fit
    with the observations scored; the data-alone fit is the same without them (refitted
    only when an event is measured). With ``--method phases`` (``phases`` in doc) the
    times are the phase-aligned fit's, the data-alone one refitted from the same start."""
    idx = [ev.index for ev in observations]
    scored = any(ev.scored for ev in observations)
    if "phases" in doc:
        joint = _phase_times(doc["event_times"], idx, "phase-aligned fit")
        alone = joint
        if scored:
            st = doc["phases"]["start"]
            start = (st["h0_m"], st["v0_mps"], st["restitution"],
                     np.asarray(st["impacts_s"], float))
            R0, P0, _ = bounce.fit_phases(t, y, sigma, start=start)
            alone = [(float(R0.event_times[j - 1]), float(R0.se[P0.nz + j - 1]))
                     for j in idx]
        how = ("phase-aligned fit: every impact time a fitted parameter, se from H⁻¹ of "
               "the reduced problem")
    else:
        joint = schedule_times(R, t, idx)
        alone = schedule_times(bounce.fit_schedules(t, y, sigma), t, idx) if scored else joint
        how = ("candidate schedules: the mixture over the selected impact count's refined "
               "candidates of each one's impact time ± √(g H⁻¹ gᵀ)")
    doc["event_observations"] = check(observations, KIND, joint, alone, how)
    by_index = {ev.index: ev for ev in observations}
    for row in doc["events"]:
        ev = by_index.get(row["index"])
        if ev is not None and ev.scored:
            row.update(label="measured", scored=True,
                       how=f"{row['how']}; measured {ev.t_s:g} ± {ev.sigma_s:g} s, scored")


def identifiability(t: NDArray[np.float64], y: NDArray[np.float64], sigma: float, fit: dict,
                    events: Sequence[EventObservation] = ()) -> dict:
    """fit.json's ``identifiability`` of one candidate's MAP fit ``fit``
    (``bounce.fit_candidate`` on samples t (N,) [s], heights y (N,) [m], noise σ [m],
    the measured ``events`` scored): harness/fit/identifiability.py on the whitened
    residuals and their exact Jacobian with the prior precision Λ, the noise scale known
    (σ̂² = 1, so the covariance is H⁻¹ = (JᵀJ + Λ)⁻¹ and the SEs are the candidate's
    own): standard errors, correlation, singular values, unresolved directions."""
    theta = np.asarray(fit["theta"], float)
    r, J, _ = bounce._residuals(theta, np.asarray(t, float), np.asarray(y, float), sigma,
                                fit["onset_s"], events)
    idf = analyse(J, r, None, bounce.PRIOR_PRECISION, ["v0_mps", "restitution"], sigma2=1.0)
    return {"computed": True, "identifiable": idf.identifiable,
            "of": f"the largest-weight candidate (onset {fit['onset_s']:.4f} s), θ = (v0, e)",
            "method": "Gauss–Newton covariance H⁻¹ = (JᵀJ + Λ)⁻¹ of the whitened height "
                      "residuals (and measured events) with the prior precision Λ; the "
                      "noise σ known; harness/fit/identifiability.py",
            "conditional_on": "the candidate's onset: the onset grid's own resolution is "
                              "not in these SEs (v0 depends on where the first impact is "
                              "placed; the phase-aligned fit, --method phases, fits it)",
            **idf.to_json()}

"""Candidate contact schedules (harness/fit/schedules.py) on the bounce problem
(harness/fit/bounce.py): the closed-form flow against finite differences and an
independent integration, Laplace's evidence against the exact Gaussian marginal, event
labels in the objective, and the schedule posterior on seeded data."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.stats import multivariate_normal

from harness.core.tolerances import lookup
from harness.fit import bounce as B
from harness.fit import schedules as S


def _fd_columns(t, v0, e, tau, step=1e-6):
    """Central differences of (heights, impact times) in v0 and e."""
    cols_y, cols_t = [], []
    base_n = len(B.flow(t, v0, e, tau)[3])
    for k in range(2):
        d = np.zeros(2)
        d[k] = step
        yp, _, _, tp, _ = B.flow(t, v0 + d[0], e + d[1], tau, n_events=base_n)
        ym, _, _, tm, _ = B.flow(t, v0 - d[0], e - d[1], tau, n_events=base_n)
        cols_y.append((yp - ym) / (2 * step))
        cols_t.append((tp[:base_n] - tm[:base_n]) / (2 * step))
    return np.stack(cols_y, axis=1), np.stack(cols_t, axis=1)


@pytest.mark.parametrize("v0, e, tau", [(0.5, 0.8, 0.5054), (-1.2, 0.55, 0.62),
                                        (2.0, 0.93, 0.71)])
def test_flow_derivatives_against_finite_differences(v0, e, tau):
    t = np.linspace(0.0, 2.0, 401) + 1e-4   # off the event times' neighbourhoods
    _, _, dy, times, dtimes = B.flow(t, v0, e, tau)
    fy, ft = _fd_columns(t, v0, e, tau)
    tol = lookup("schedules", "flow_gradient")
    assert len(times) >= 2
    for k in range(2):
        scale = max(np.abs(dy[:, k]).max(), np.abs(fy[:, k]).max())
        assert np.abs(dy[:, k] - fy[:, k]).max() <= tol.rtol * scale
        scale_t = max(np.abs(dtimes[:, k]).max(), 1e-300)
        assert np.abs(dtimes[:, k] - ft[:, k]).max() <= tol.rtol * scale_t
    # the later impact times depend on both parameters (the event terms are not dropped)
    assert np.all(np.abs(dtimes[1:]) > 0.01)


def _reference_bounce(t, h0, v0, e, g=B.G):
    """Heights at t and impact times by SciPy DOP853 with event location and the reset
    v⁺ = −e v⁻ applied between restarts (independent of the closed form)."""
    def hit(_t, x):
        return x[0]
    hit.terminal, hit.direction = True, -1
    y = np.full(t.size, np.nan)
    x, t0, impacts = np.array([h0, v0]), 0.0, []
    while t0 < t[-1]:
        sol = solve_ivp(lambda _t, x: [x[1], -g], (t0, t[-1]), x, method="DOP853",
                        rtol=1e-12, atol=1e-12, events=hit, dense_output=True)
        seg = (t >= t0) & (t <= sol.t[-1])
        y[seg] = sol.sol(t[seg])[0]
        if sol.status != 1:
            break
        t0 = sol.t_events[0][0]
        impacts.append(t0)
        x = np.array([0.0, -e * sol.y_events[0][0][1]])
    return y, np.array(impacts)


def test_flow_against_independent_integration():
    t, y_true, _, _ = B.data(seed=0, sigma=0.0)
    y_ref, imp = _reference_bounce(t, B.TRUTH["h0_m"], B.TRUTH["v0_mps"],
                                   B.TRUTH["restitution"])
    _, _, _, times, _ = B.flow(t, B.TRUTH["v0_mps"], B.TRUTH["restitution"], B.true_onset())
    tol = lookup("schedules", "flow_reference")
    assert len(imp) == 3 and len(times) == 3       # three impacts in the 2 s window
    assert np.abs(times - imp).max() <= tol.atol
    assert np.abs(y_true - y_ref).max() <= tol.atol
    # the guard: h0 follows from the onset and v0
    tau = B.true_onset()
    assert 0.5 * B.G * tau ** 2 - B.TRUTH["v0_mps"] * tau == pytest.approx(1.0, abs=1e-12)


def test_laplace_evidence_is_exact_for_a_linear_gaussian_model():
    rng = np.random.default_rng(7)
    m, d = 50, 3
    X = rng.normal(size=(m, d))
    sig = 0.3
    mu = np.array([0.2, -1.0, 0.5])
    Lam = np.diag([4.0, 0.25, 1.0])
    y = X @ np.array([0.4, -0.7, 1.1]) + sig * rng.normal(size=m)
    Jw = X / sig
    theta = np.linalg.solve(Jw.T @ Jw + Lam, Jw.T @ (y / sig) + Lam @ mu)   # the MAP
    logz, H, _ = S.laplace_log_evidence((X @ theta - y) / sig, Jw, theta, mu, Lam,
                                        np.full(m, sig))
    exact = multivariate_normal(X @ mu, sig ** 2 * np.eye(m) + X @ np.linalg.inv(Lam) @ X.T
                                ).logpdf(y)
    tol = lookup("schedules", "laplace_linear")
    assert abs(logz - exact) <= tol.atol + tol.rtol * abs(exact)
    assert np.allclose(H, Jw.T @ Jw + Lam)


def test_mixture_and_weights_closed_form():
    w = S.posterior_weights([np.log(1.0), np.log(3.0), -np.inf])
    assert np.allclose(w, [0.25, 0.75, 0.0], rtol=0, atol=1e-15)
    mean, cov = S.mixture([[0.0], [1.0]], [[[1.0]], [[4.0]]], [0.5, 0.5])
    # ½ N(0, 1) + ½ N(1, 4): mean ½, variance ½(1 + 0) + ½(4 + 1) − ¼ = 2.75
    assert mean[0] == pytest.approx(0.5, abs=1e-15) and cov[0, 0] == pytest.approx(2.75,
                                                                                   abs=1e-15)
    with pytest.raises(ValueError):
        S.posterior_weights([-np.inf, -np.inf])


def _bounce_objective(fitter):
    """(objective(events) [–], the model's second impact [s]) at one parameter point of
    the bounce data (seed 1): the closed-form candidate fit (``bounce.objective``) or the
    phase-aligned fit (``phases.PhaseShooting.objective`` at the w of the same flow, its
    impact times in w)."""
    t, _, _, y = B.data(seed=1)
    th, tau = np.array([0.49, 0.79]), 0.505
    times = B.flow(t, th[0], th[1], tau)[3]
    if fitter == "closed_form":
        return (lambda evs=(): B.objective(th, t, y, B.SIGMA, tau, evs)), times[1]
    P = B.phase_problem(t, y, B.SIGMA, 3)
    w = P.initial_guess([0.5 * B.G * tau ** 2 - th[0] * tau, th[0]], np.zeros((1, 0)),
                        [th[1]], times[:3])
    return (lambda evs=(): B.phase_problem(t, y, B.SIGMA, 3, evs).objective(w)), w[-2]


@pytest.mark.parametrize("fitter", ["closed_form", "phases"])
def test_event_labels_only_measured_events_are_scored(fitter):
    objective, t2 = _bounce_objective(fitter)
    base = objective()
    for label in ("assumed", "inferred"):
        for idx in (1, 2):
            vals = [objective([S.EventObservation(idx, t_obs, 1e-3, label)])
                    for t_obs in (0.3, 1.0, 1.7)]
            assert vals == [base, base, base], (label, idx)   # never scored
    sig_t = 1e-3
    meas = [objective([S.EventObservation(2, t_obs, sig_t, "measured")])
            for t_obs in (1.2, 1.25)]
    assert meas[0] != meas[1]
    for t_obs, v in zip((1.2, 1.25), meas):   # exactly the added ½((t − t̂)/σ_t)²
        assert v - base == pytest.approx(0.5 * ((t2 - t_obs) / sig_t) ** 2, rel=1e-9)
    with pytest.raises(ValueError):
        S.EventObservation(1, 0.5, 1e-3, "guessed")


def test_measured_onset_moves_the_schedule_posterior():
    """A measured first impact scores every candidate by its onset: at high noise the
    posterior follows a precise onset measurement placed on another candidate."""
    t, _, _, y = B.data(seed=2, sigma=0.04)
    on = B.onset_grid(t, y, 0.04)[::2]   # every 5 ms over the data-driven range
    fixed = {"counts": (3,), "refine": False}   # the grid's candidates, three impacts
    free = B.fit_schedules(t, y, 0.04, onsets=on, **fixed)
    target = on[int(np.argmin(free["weights"]))]   # the least likely candidate
    ev = [S.EventObservation(1, float(target), 2e-4, "measured")]
    meas = B.fit_schedules(t, y, 0.04, onsets=on, events=ev, **fixed)
    assert meas["onsets"][meas["selected"]] == target
    assumed = B.fit_schedules(t, y, 0.04, onsets=on, **fixed,
                              events=[S.EventObservation(1, float(target), 2e-4, "assumed")])
    assert np.array_equal(assumed["weights"], free["weights"])


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_schedule_posterior_finds_onset_and_restitution(seed):
    """On the coarse grid (no refinement): every impact count compared, the true one
    (three) selected, the candidate nearest the true onset the most likely."""
    t, _, _, y = B.data(seed)
    R = B.fit_schedules(t, y, B.SIGMA, refine=False)
    w = R["weights"]
    tau = B.true_onset()
    assert int(R["impacts"][R["selected"]]) == 3
    three = np.flatnonzero(R["impacts"] == 3)
    on = R["onsets"][three]
    assert on[0] < tau < on[-1]                    # the data-driven range holds the truth
    assert abs(w.sum() - 1.0) <= lookup("schedules", "weights_sum").atol
    assert int(np.argmax(w[three])) == int(np.argmin(np.abs(on - tau)))   # nearest wins
    e, se = R["mixture_mean"][1], np.sqrt(R["mixture_cov"][1, 1])
    assert abs(e - B.TRUTH["restitution"]) <= lookup("schedules", "restitution_z").atol * se
    assert 0 < se < 0.01


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_onset_posterior_concentrates_as_noise_falls(seed):
    """On the refined grid the onset's spread falls with the noise and the truth stays
    within ("schedules", "onset_z") spreads of its mean."""
    tau = B.true_onset()
    spreads = []
    for sigma in (0.04, 0.01, 0.0025):
        t, _, _, y = B.data(seed, sigma)
        R = B.fit_schedules(t, y, sigma, counts=(3,))
        post = R["onset_posterior"]
        assert R["refinement"]["resolved"]
        spreads.append(post["sd_s"])
        assert abs(post["mean_s"] - tau) <= lookup("schedules", "onset_z").atol * post["sd_s"]
        assert R["onsets"][0] < tau < R["onsets"][-1]
    assert spreads[0] > spreads[1] > spreads[2] > 0.0

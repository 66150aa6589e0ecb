"""Fitting with a mode schedule (harness/fit/phases.py): multiple shooting whose phases
align with the events, the event times among the decision variables. Checked against
central differences (the Jacobian, event-time columns included), known truth on seeded
data (the bounce: restitution and three impact times; the planar arm striking a ball:
x0, torques, restitution and the strike time) and the single-shooting-through-events fit
on the same data. The event-label rule (only a measured event is scored) is the one test
of tests/unit/test_schedules.py, run on both fitters.

``python -m tests.unit.test_phases`` prints the figures of docs/fitter.md."""
from __future__ import annotations

import time

import numpy as np

from harness.core.tolerances import lookup
from harness.fit import bounce as B
from harness.fit import events as ev
from harness.fit import phases as PH
from harness.fit import schedules as S
from harness.fit import shooting as sh
from tests.unit.test_event_gradients import arm_ball, arm_state


def bounce_truth():
    """(e, impact times (3,) [s]) of the bounce data's generating flow."""
    tau = B.true_onset()
    times = B.flow(np.array([0.0, B.T_END]), B.TRUTH["v0_mps"], B.TRUTH["restitution"],
                   tau)[3]
    return B.TRUTH["restitution"], times[times < B.T_END]


def _rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


# ----- the arm striking a ball -------------------------------------------------------------
ARM_T, ARM_SIGMA = 0.3, 1e-3       # s; rad and m
ARM_DT = 0.006                     # s between samples (51 samples)


def arm_truth():
    """z = [x0 (10), θ (3 × 2 piecewise-linear torques), e] of the strike (the gradient
    test's arm problem)."""
    theta = 0.5 * np.random.default_rng(1).normal(size=(3, 2))
    return arm_state(), theta, 0.7


def arm_data(seed):
    """(t (51,) s, y (51, 5), C (5, 10), W (5,), true event times): q and the ball's
    centre b, by DOP853 with event location through the strike (not the fitter's RK4),
    Gaussian noise σ = 1 mm / 1 mrad."""
    arm = arm_ball()
    hs = arm.system()
    x0, theta, e = arm_truth()
    ctrl = sh.Controls("piecewise_linear", 3, ARM_T)
    t = ARM_DT * np.arange(int(round(ARM_T / ARM_DT)) + 1)
    ref, times = ev.hybrid_reference(hs, x0, theta, [e], ctrl, t)
    C = np.zeros((5, hs.nx))
    C[0, 0] = C[1, 1] = 1.0
    C[2:, 4:7] = np.eye(3)
    y = ref @ C.T + ARM_SIGMA * np.random.default_rng(seed).normal(size=(t.size, 5))
    return t, y, C, np.full(5, 1.0 / ARM_SIGMA ** 2), times, hs, ctrl


ARM_START = np.r_[0.02, -0.02, 0.1, 0.1, 0.005, 0.0, -0.005, 0.05, 0.0, -0.05]


def arm_fit(seed, segments=(2, 2), steps=(15, 20)):
    """The phase-aligned fit of the arm data from a start off by 2e-2 rad, 0.1 rad/s,
    5 mm, 0.05 m/s, 0.2 N·m, e 0.5 and the strike 4 ms late."""
    t, y, C, W, times, hs, ctrl = arm_data(seed)
    x0, theta, _ = arm_truth()
    P = PH.PhaseShooting(hs, ctrl, segments, steps, t, y, C, W)
    w0 = P.initial_guess(x0 + ARM_START, theta + 0.2, [0.5], times + 0.004)
    return PH.solve_phases(P, w0), P, w0


# ----- tests --------------------------------------------------------------------------------
def test_jacobian_against_central_differences():
    """Both problems, away from grazing (ratios 0.4–1 and 0.036), at a start where the
    guards and defects are open: residual and constraint Jacobians, the t_e columns
    included."""
    tol = lookup("shooting", "phase_jacobian")
    e, times = bounce_truth()
    t, _, _, y = B.data(0)
    P = B.phase_problem(t, y, B.SIGMA, 3)
    w = P.initial_guess([1.02, 0.4], np.zeros((1, 0)), [0.7], times + [0.01, -0.01, 0.02])
    _, Jr, c, Jc, _ = P.evaluate(w)
    Fr, Fc = P.jacobian_fd(w)
    assert np.abs(c).max() > 1e-3   # the guards are open: a real start, not a solution
    assert _rel(Jr, Fr) <= tol.rtol and _rel(Jc, Fc) <= tol.rtol, (_rel(Jr, Fr), _rel(Jc, Fc))
    it = P._offsets()[2] + np.arange(3)
    assert _rel(Jc[:, it], Fc[:, it]) <= tol.rtol and np.abs(Fc[:, it]).max() > 1.0
    assert _rel(Jr[:, it], Fr[:, it]) <= tol.rtol and np.abs(Fr[:, it]).max() > 1.0
    # the arm: a knot of the torques inside the second phase, one segment before the strike
    ta, ya, C, W, ta_ev, hs, ctrl = arm_data(0)
    x0, theta, _ = arm_truth()
    P = PH.PhaseShooting(hs, ctrl, (1, 2), (15, 10), ta, ya, C, W)
    w = P.initial_guess(x0 + ARM_START, theta + 0.2, [0.5], ta_ev + 0.004)
    _, Jr, c, Jc, _ = P.evaluate(w)
    Fr, Fc = P.jacobian_fd(w)
    assert _rel(Jr, Fr) <= tol.rtol and _rel(Jc, Fc) <= tol.rtol, (_rel(Jr, Fr), _rel(Jc, Fc))
    it = P._offsets()[2]
    assert _rel(Jc[:, it], Fc[:, it]) <= tol.rtol and _rel(Jr[:, it], Fr[:, it]) <= tol.rtol


def test_bounce_recovers_restitution_and_impact_times():
    """Seeds 0–4 at σ = 5 mm, from the evidence-selected candidate schedule: every fit
    accepted (defects, DOP853 reintegration and its event times), e and the three impact
    times each within 3 SE of the truth; the SEs are those of H = JᵀWJ."""
    zmax = lookup("shooting", "phase_recovery_z").atol
    e_true, times = bounce_truth()
    for seed in range(5):
        t, _, _, y = B.data(seed)
        R, P, _ = B.fit_phases(t, y, B.SIGMA)
        assert R.accepted, (seed, R.reason)
        assert R.event_times.size == 3
        e, se = R.value("p[0]")
        z = [(e - e_true) / se] + [(R.event_times[k] - times[k]) / R.se[3 + k]
                                   for k in range(3)]
        assert np.abs(z).max() <= zmax, (seed, z)
        assert 0 < se < 1e-3 and np.all(R.se[3:] < 1e-3)   # resolved: SE ≪ the 10 ms grid


def test_bounce_agrees_with_single_shooting_through_events():
    """Seed 0: the phase-aligned fit and HybridShooting + solve_single (the same ball on
    the 100 Hz grid, events located) agree on x0, e and the located impact times within
    0.01 of their standard errors, and their standard errors within 1 %."""
    t, _, _, y = B.data(0)
    R, P, _ = B.fit_phases(t, y, B.SIGMA)
    N = t.size - 1
    SS = ev.HybridShooting(ev.falling_ball(B.G), P.ctrl, N,
                           sh.Measurements(np.arange(N + 1), y[:, None], P.C, P.W))
    z, res = sh.solve_single(SS, np.array([1.02, 0.4, 0.7]))
    assert res.accepted, res.reason
    _check_agreement(SS, z, R)


def _check_agreement(SS, z, R):
    tol, tol_se = lookup("shooting", "phase_vs_single"), lookup("shooting", "phase_vs_single_se")
    r, Jr = SS.residuals(z, jac=True)
    se = np.sqrt(np.diag(np.linalg.inv(Jr.T @ Jr)))
    nz = z.size
    t_ss = np.array([e.t for e in SS.events])
    assert t_ss.size == R.event_times.size
    dz = np.abs(z - R.z) / R.se[:nz]
    dt = np.abs(t_ss - R.event_times) / R.se[nz:]
    assert dz.max() <= tol.atol and dt.max() <= tol.atol, (dz.max(), dt.max())
    assert np.abs(se / R.se[:nz] - 1.0).max() <= tol_se.atol


def test_arm_recovers_state_torques_restitution_and_strike_time():
    """The planar arm (Pinocchio) striking a free ball, seed 0: every unknown of the
    single-shooting fit (x0, six torque coefficients, e) and the strike time within 3 SE of
    the truth, accepted; and the single-shooting-through-events fit of the same data
    (h = 2 ms grid) agrees within 0.01 SE."""
    zmax = lookup("shooting", "phase_recovery_z").atol
    R, P, w0 = arm_fit(0)
    assert R.accepted, R.reason
    x0, theta, e = arm_truth()
    t, y, C, W, times, hs, ctrl = arm_data(0)
    truth = np.r_[x0, theta.reshape(-1), e, times]
    z = (np.r_[R.z, R.event_times] - truth) / R.se
    assert np.abs(z).max() <= zmax, z
    assert abs(R.event_times[0] - (times[0] + 0.004)) > 10 * R.se[-1]   # it moved
    N = 150
    SS = ev.HybridShooting(hs, ctrl, N, sh.Measurements(
        np.arange(0, N + 1, int(round(ARM_DT / (ARM_T / N)))), y, C, W))
    zs, res = sh.solve_single(SS, P.z_of(w0))
    assert res.accepted, res.reason
    _check_agreement(SS, zs, R)


def test_measured_event_moves_the_fit_assumed_does_not():
    """A precise measured first impact (σ = 10 µs) 2 ms after the truth pulls the fitted
    impact to within 3 σ_t of it; the same time labelled assumed or inferred gives the
    unlabelled fit bit for bit."""
    t, _, _, y = B.data(0)
    _, times = bounce_truth()
    target = times[0] + 2e-3
    free, _, start = B.fit_phases(t, y, B.SIGMA)
    meas, _, _ = B.fit_phases(t, y, B.SIGMA, start=start,
                              events=[S.EventObservation(1, target, 1e-5, "measured")])
    assert meas.accepted, meas.reason
    assert abs(meas.event_times[0] - target) <= 3e-5 < abs(free.event_times[0] - target)
    for label in ("assumed", "inferred"):
        other, _, _ = B.fit_phases(t, y, B.SIGMA, start=start,
                                   events=[S.EventObservation(1, target, 1e-5, label)])
        assert np.array_equal(other.w, free.w), label


def test_refuses_an_event_inside_a_phase():
    """A schedule with one impact too few (two events for three impacts): the last phase
    flies through the plane; whatever the fit reaches (8 iterations), the independent
    reintegration crosses the guard three times and the fit is not accepted."""
    t, _, _, y = B.data(0)
    e, times = bounce_truth()
    R, _, _ = B.fit_phases(t, y, B.SIGMA, start=(1.0, 0.5, e, times[:2]), max_iter=8)
    assert not R.accepted and "crosses the guard 3 times" in R.reason


if __name__ == "__main__":  # the figures of docs/fitter.md
    e_true, times = bounce_truth()
    zs = []
    for seed in range(10):
        t, _, _, y = B.data(seed)
        R, P, _ = B.fit_phases(t, y, B.SIGMA)
        e, se = R.value("p[0]")
        z = [(e - e_true) / se] + list((R.event_times - times) / R.se[3:])
        zs += z
        print(f"seed {seed}: accepted {R.accepted}, {R.iterations} it, {R.wall_s:.2f} s, "
              f"e = {e:.5f} ± {se:.5f}, t_e = " + ", ".join(
                  f"{a:.5f} ± {b * 1e3:.2f} ms" for a, b in zip(R.event_times, R.se[3:]))
              + f", z = {np.round(z, 2)}, defect {R.max_defect:.1e}, "
                f"reint {R.reintegration_error:.1e}, t err {R.event_time_error:.1e}")
    print(f"bounce |z| max {np.abs(zs).max():.2f}, rms {np.sqrt(np.mean(np.square(zs))):.2f}")
    for seed in range(3):
        start = time.perf_counter()
        R, P, w0 = arm_fit(seed)
        x0, theta, e = arm_truth()
        ta, ya, C, W, times_a, hs, ctrl = arm_data(seed)
        truth = np.r_[x0, theta.reshape(-1), e, times_a]
        z = (np.r_[R.z, R.event_times] - truth) / R.se
        print(f"arm seed {seed}: accepted {R.accepted}, {R.iterations} it, "
              f"{time.perf_counter() - start:.2f} s, e = {R.value('p[0]')}, "
              f"t_e = {R.value('t_e[0]')} (truth {times_a[0]:.6f}), |z| max "
              f"{np.abs(z).max():.2f}, reint {R.reintegration_error:.1e}, "
              f"t err {R.event_time_error:.1e}, ratio {R.ratios[0]:.3f}")


def test_cli_bounce_phases(tmp_path, capsys):
    """``harness fit --problem bounce --method phases`` (in-process): exit 0, the
    bounce bundle with the phase fit's ``restitution`` and ``event_time`` (those of
    ``bounce.fit_phases`` on the same data, within 3 SE of the generating truth computed
    here), ``harness report`` re-renders it byte for byte; the default method writes no
    phase fields; ``--method phases`` on another problem exits 2."""
    import json

    from harness import cli
    from harness.fit import problem_bounce

    out = tmp_path / "ph"
    assert cli.main(["fit", "--problem", "bounce", "--method", "phases", "--seed", "3",
                     "--out", str(out)]) == 0, capsys.readouterr().err
    doc = json.loads((out / "fit.json").read_text())
    assert set(doc) == (problem_bounce.BOUNCE_PHASES_KEYS
                        | problem_bounce.BOUNCE_ONSET_KEYS) and doc["converged"]
    t, _, _, y = B.data(3)
    Rs = B.fit_schedules(t, y, B.SIGMA)   # started as the CLI starts it: refined selection
    f = Rs["fits"][Rs["selected"]]
    times = B.flow(t, f["theta"][0], f["theta"][1], f["onset_s"])[3]
    R, _, _ = B.fit_phases(t, y, B.SIGMA, start=(f["h0_m"], *f["theta"], times[times < t[-1]]))
    e, se = R.value("p[0]")
    assert doc["restitution"]["value"] == e and doc["restitution"]["se"] == se
    assert doc["event_time"]["value"] == R.event_times[0]
    g, h0, v0 = 9.81, 1.0, 0.5
    onset = (v0 + np.sqrt(v0 ** 2 + 2 * g * h0)) / g
    zmax = lookup("shooting", "phase_recovery_z").atol
    assert abs(e - 0.8) <= zmax * se
    assert abs(doc["event_time"]["value"] - onset) <= zmax * doc["event_time"]["se"]
    assert [r["label"] for r in doc["events"]] == ["inferred"] * 3
    page = (out / "index.html").read_text()
    assert 'id="phases"' in page and 'id="event-time-1"' in page
    (out / "index.html").unlink()
    assert cli.main(["report", str(out), "--quiet"]) == 0
    assert (out / "index.html").read_text() == page
    out2 = tmp_path / "default"
    assert cli.main(["fit", "--problem", "bounce", "--seed", "3", "--out", str(out2)]) == 0
    assert set(json.loads((out2 / "fit.json").read_text())) == (
        problem_bounce.BOUNCE_KEYS | problem_bounce.BOUNCE_ONSET_KEYS)
    capsys.readouterr()
    assert cli.main(["fit", "--problem", "pendulum", "--method", "phases", "--out",
                     str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "--method" in err and not (tmp_path / "bad").exists()

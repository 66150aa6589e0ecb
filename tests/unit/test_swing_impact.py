"""The ball impact as a hybrid event of the trajectory fit (harness/fit/trajectory.py
ImpactEvent; harness/swing/impact_time.py fit_impact): a planar downswing through an
impact with a known impulse (Drake's reset map; harness/swing/synthetic.py
planar_impact_swing), markers with 2 mm noise, fitted with Pinocchio. Impulses N·s,
velocities rad/s, times s."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
from conftest import adapter

from harness.capture import events as cap_events
from harness.capture import ik
from harness.core.tolerances import lookup
from harness.fit import collision as col
from harness.fit import trajectory as tf
from harness.swing import impact_time
from harness.swing.synthetic import planar_impact_swing


def _problem(pin, sw, t_hat, sigma_t):
    h = float(sw.t[1] - sw.t[0])
    ie = tf.ImpactEvent("club_head", t_hat, t_hat, sigma_t,
                        (t_hat - 2 * h, t_hat + 2 * h))
    return tf.FitProblem(pin, sw.labels, sw.markers, h, 0.002,
                         np.array([100.0, 100.0, 30.0]), w_effort=1e-3, w_smooth=1.0,
                         impact=ie)


@pytest.fixture(scope="module")
def fitted():
    pin, drake = adapter("pinocchio", "planar_golfer"), adapter("drake", "planar_golfer")
    sw = planar_impact_swing(drake, sigma_m=0.002, seed=1)
    h = float(sw.t[1] - sw.t[0])
    # the event time as the swing pipeline measures it: the club-head marker's velocity
    # discontinuity (harness/capture/events.py)
    imp = cap_events.impact(sw.markers[:, list(sw.labels).index("club_head")], 1.0 / h)
    ikr = ik.track(pin, list(sw.labels), sw.markers, sw.q[0])
    prob = _problem(pin, sw, imp.t_s, imp.sigma_s)
    return sw, imp, prob, impact_time.fit_impact(prob, ikr.q)


def _resolved(drake, sw):
    """The unit direction (3,) in which the impulse changes the club-head velocity most
    (the leading eigenvector of J M⁻¹ Jᵀ at the impact, Drake's): the planar golfer's
    three joints move the club head in the swing plane only, and an impulse along the
    shaft moves it 30 times less than one across it, so the markers resolve Λ along this
    direction."""
    qe = sw.q[sw.frame] + (sw.t_e - sw.t[sw.frame]) * sw.v_minus
    J = drake.frame_jacobians(qe, ["club_head"])[0, :3, :]
    W = J @ np.linalg.solve(drake.mass_matrix(qe), J.T)
    w, U = np.linalg.eigh(W)
    return U[:, -1], w


def test_the_impact_is_found_where_the_markers_put_it(fitted):
    sw, imp, prob, fr = fitted
    h = prob.h
    assert abs(imp.t_s - sw.t_e) <= h
    assert abs(fr.impact["t_e_s"] - sw.t_e) <= lookup("swing", "impact_time_frames").atol * h


def test_fit_recovers_the_known_impulse(fitted):
    """The impulse the fit identifies against the one the truth applied, along the
    direction the markers resolve (the truth's lies within 2° of it), within 5 %."""
    sw, _, prob, fr = fitted
    drake = adapter("drake", "planar_golfer")
    u, w = _resolved(drake, sw)
    assert w[-1] > 10 * w[-2]
    assert abs(u @ sw.impulse) >= np.cos(np.radians(2.0)) * np.linalg.norm(sw.impulse)
    tol = lookup("swing", "impulse_recovery").atol
    true_n, fit_n = float(u @ sw.impulse), float(u @ fr.impulse)
    assert abs(fit_n - true_n) <= tol * abs(true_n), (fit_n, true_n)


def test_reset_map_holds_in_another_engine(fitted):
    """The fitted velocity jump against the impulse-momentum balance computed by Drake
    (the fit used Pinocchio): M(q_e)(v⁺ − v⁻) = J(q_e)ᵀΛ."""
    sw, _, prob, fr = fitted
    drake = adapter("drake", "planar_golfer")
    qe = prob.Be0 @ fr.C
    dv = prob.velocity_jump(fr.C)
    J = drake.frame_jacobians(qe, ["club_head"])[0, :3, :]
    lhs = drake.mass_matrix(qe) @ dv
    rhs = J.T @ fr.impulse
    assert np.linalg.norm(lhs - rhs) <= lookup("swing", "reset_map").atol * np.linalg.norm(rhs)
    # and the jump is the one the spline carries: the one-sided velocities at t_e (the
    # post-impact phase evaluated 1e-9 s after it)
    t_e = fr.impact["t_e_s"]
    vm = prob.evaluate(fr.C, [t_e])[1][0]
    vp = prob.evaluate(fr.C, [t_e + 1e-9])[1][0]
    jump = lookup("swing", "velocity_jump_spline").atol
    assert np.abs((vp - vm) - dv).max() <= jump * np.abs(dv).max()
    # positions continuous through the event (1e-12 s after it)
    qm = prob.evaluate(fr.C, [t_e])[0][0]
    qp = prob.evaluate(fr.C, [t_e + 1e-12])[0][0]
    assert np.abs(qp - qm).max() <= lookup("swing", "position_continuity").atol


def test_impact_normal_equations_match_finite_differences(fitted):
    """g = Jᵀr and H = JᵀJ with the impact's rows (the reset map, the impulse prior, the
    torque continuity) and the impulse's columns, against central differences of the
    residual vector, columns near t_e and the impulse's three."""
    sw, _, prob, fr = fitted
    res = tf._Residuals(prob)
    rng = np.random.default_rng(0)
    C = fr.C + 0.01 * rng.normal(size=fr.C.shape)
    th = np.r_[C.ravel(), fr.impulse + 0.1 * rng.normal(size=3)]
    ev = res.evaluate(th, jac=True)
    ne, r = ev["normal"], ev["r"]
    n = C.size
    near = np.flatnonzero(np.repeat(np.abs(prob.Be1p - prob.Be1m) + np.abs(prob.Be0) > 0,
                                    prob.adapter.nv))
    ks = list(rng.choice(near, 6, replace=False)) + [n, n + 1, n + 2]
    eps = 1e-6
    cols = []
    for k in ks:
        d = np.zeros(th.size)
        d[k] = eps
        cols.append((res.evaluate(th + d, jac=False)["r"]
                     - res.evaluate(th - d, jac=False)["r"]) / (2 * eps))
    Jfd = np.stack(cols, axis=1)
    g = np.r_[ne["g"], ne["gL"]]
    H = np.block([[ne["H"], ne["HcL"]], [ne["HcL"].T, ne["HLL"]]])
    tol = lookup("swing", "jacobian/finite_difference").rtol
    g_fd = Jfd.T @ r
    assert np.abs(g[ks] - g_fd).max() <= tol * max(1.0, np.abs(g_fd).max())
    H_fd = Jfd.T @ Jfd
    assert np.abs(H[np.ix_(ks, ks)] - H_fd).max() <= tol * max(1.0, np.abs(H_fd).max())


def test_every_engine_replays_through_the_impact(fitted):
    """The fit's candidate holds both phases and the impulse as an event: each engine
    replays the pre-impact phase, applies Λ through its own mass matrix and club-head
    Jacobian, and replays the post-impact phase. Every replay record passes (engine pairs
    pointwise across the event, refinement gates, energy balance with the impulse's
    work), and each engine's club head stays within the fit's marker RMSE of the fitted
    motion at every knot, both sides of the event included."""
    from conftest import ENGINES, assert_known

    from harness.model.candidate import Marker, from_arrays
    from harness.model.integrators import Method
    from harness.model.prepared import prepare_fixture
    from harness.stages.replay.cases import Case, array_key
    from harness.stages.replay.run import harness_run
    from harness.stages.replay.run import run as replay_run

    sw, _, prob, fr = fitted
    t_e = fr.impact["t_e_s"]
    assert fr.events and fr.events[0].t == t_e
    assert np.count_nonzero(fr.t_replay == t_e) == 2
    model = prepare_fixture("planar_golfer")
    q, v, _ = prob.evaluate(fr.C, fr.t_replay)
    cand = from_arrays(model, q[0], v[0], fr.t_replay, fr.tau_replay, fr.interpolation,
                       markers=[Marker("club_head", "club_head", (0.0, 0.0, 0.0))],
                       events=fr.events)
    case = Case("impact", cand, "agreement", Method("rk4", dt=1e-4), native=False)
    rr = replay_run([case], ENGINES)
    assert_known(rr.records)
    pin = prob.adapter
    fitted_head = np.stack([pin.frame_poses(x, ["club_head"])[0, :3] for x in q])
    k = int(np.flatnonzero(fr.t_replay == t_e)[0])
    rmse = fr.marker_rmse()
    seen = []
    for e in ENGINES:
        X = rr.arrays.get(array_key("impact", harness_run(case), e, "x"))
        if X is None:
            continue
        seen.append(e)
        head = np.stack([pin.frame_poses(x[:pin.nq], ["club_head"])[0, :3] for x in X])
        assert np.linalg.norm(head - fitted_head, axis=1).max() <= rmse, e
        # the replay crosses the event: positions continuous, the velocity jumps
        assert np.array_equal(X[k, :pin.nq], X[k + 1, :pin.nq])
        assert np.linalg.norm(X[k + 1, pin.nq:] - X[k, pin.nq:]) > 0.1 * np.linalg.norm(
            prob.velocity_jump(fr.C)), e
    assert seen == ENGINES, seen


def test_impact_laplace_terms_and_marginal(fitted):
    """The impulse's Laplace terms against the dense Hessian (coefficients and Λ), and the
    marginal over the profile: weights from the profile's costs, summing to 1, the
    marginal event time within a frame of the truth and the marginal impulse's spread
    covering the between-point spread."""
    sw, _, prob, fr = fitted
    res = tf._Residuals(prob)
    ne = res.evaluate(np.r_[fr.C.ravel(), fr.impulse], jac=True)["normal"]
    H = np.block([[ne["H"], ne["HcL"]], [ne["HcL"].T, ne["HLL"]]])
    sign, logdet = np.linalg.slogdet(H)
    lt = tf.laplace_terms(ne)
    tol = lookup("schedules", "laplace_blocks").atol
    assert sign > 0 and abs(lt["half_log_det"] - 0.5 * logdet) <= tol * abs(0.5 * logdet)
    cov = np.linalg.inv(H)[-3:, -3:]
    assert np.abs(lt["impulse_cov"] - cov).max() <= tol * np.abs(cov).max()
    m = fr.impact["marginal"]
    lz = np.array([p["log_likelihood"] for p in m["points"]])
    assert [(p["t_e_s"], -p["log_likelihood"]) for p in m["points"]] == fr.impact["profile"]
    w = np.array([p["weight"] for p in m["points"]])
    assert abs(w.sum() - 1.0) <= lookup("schedules", "weights_sum").atol
    assert np.allclose(w, np.exp(lz - lz.max()) / np.exp(lz - lz.max()).sum(), rtol=0,
                       atol=lookup("schedules", "weights_sum").atol)
    assert abs(m["t_e_mean_s"] - sw.t_e) <= lookup("swing", "impact_time_frames").atol * prob.h
    L = np.array([p["impulse_Ns"] for p in m["points"]])
    between = w @ (L - np.asarray(m["impulse_mean_Ns"])) ** 2
    diag = np.diag(m["impulse_cov_Ns2"])
    within = w @ np.array([np.diag(p["impulse_cov_Ns2"]) for p in m["points"]])
    assert np.all(np.abs(diag - (within + between)) <= tol * diag)   # the mixture's law


def test_a_state_dependent_prior_is_recentred_on_the_returned_fit(fitted):
    """A prior on Λ whose centre follows from the fit's pre-contact state, as the collision
    law's does (here Λ₀ = −m (J v⁻) with m = 0.05 kg, σ = 0.02 N·s, computed by the test
    from each fit's own coefficients): the fit fit_impact returns is held to the centre at
    its own state, within impact_time.PRIOR_SHIFT_STOP of σ; without the re-centring
    rounds (prior_rounds=0) the centre stays the first fit's, further off."""
    import copy

    sw, imp, prob, _ = fitted
    a, sigma = prob.adapter, 0.02

    def centre(r, p):
        # at the fit's own t_e: the bases of the problem it was fitted on
        qe, vm = p.Be0 @ r.C, p.Be1m @ r.C
        return -0.05 * (a.frame_jacobian(qe, "club_head")[:3] @ vm)

    ikr = ik.track(a, list(sw.labels), sw.markers, sw.q[0])
    off = {}
    for rounds in (3, 0):
        p = copy.copy(prob)
        p.impact = tf.ImpactEvent("club_head", imp.t_s, imp.t_s, imp.sigma_s,
                                  prob.impact.t_bounds)
        r = impact_time.fit_impact(p, ikr.q, prior=lambda x, p=p: (centre(x, p), sigma),
                                   prior_rounds=rounds)
        assert r.impact["t_e_s"] == p.impact.t_e
        off[rounds] = float(np.linalg.norm(np.asarray(p.impact.impulse_prior_mean)
                                           - centre(r, p)))
        assert len(r.impact["prior_rounds"]) <= rounds
    assert off[3] <= impact_time.PRIOR_SHIFT_STOP * sigma < off[0], off


def test_the_refit_without_the_prior_is_the_free_fit(fitted):
    """impact_time.prior_free_refit: a fit held by a tight prior to a centre off the truth
    (Λ₀ = 0.9 Λ_true, σ 0.02 N·s, the event time fixed at the measured one) refitted with
    the free fit's weak prior about zero (σ 4.6 N·s), warm-started from it, lands on the
    fit of that free problem from the IK start: along the direction the markers resolve,
    within swing/prior_free_refit of the free fit's standard error there, while the held
    fit sits more than three of them away; the held problem's prior is left as it was.
    The refit settling Λ (``settle_sd``), as the swing runs it, within
    swing/prior_free_refit_settled of that standard error."""
    sw, imp, prob, _ = fitted
    h, a = prob.h, prob.adapter
    ikr = ik.track(a, list(sw.labels), sw.markers, sw.q[0])

    def problem(mean, sigma):
        ie = tf.ImpactEvent("club_head", imp.t_s, imp.t_s, imp.sigma_s,
                            (imp.t_s - 2 * h, imp.t_s + 2 * h), sigma_impulse=sigma,
                            impulse_prior_mean=tuple(mean))
        return tf.FitProblem(a, sw.labels, sw.markers, h, 0.002,
                             np.array([100.0, 100.0, 30.0]), w_effort=1e-3, w_smooth=1.0,
                             impact=ie)

    held_prob = problem(0.9 * np.asarray(sw.impulse), 0.02)
    held = tf.fit(held_prob, ikr.q)
    refit, _ = impact_time.prior_free_refit(held_prob, ikr.q, held, 4.6, 10, 1e-9)
    free = tf.fit(problem(np.zeros(3), 4.6), ikr.q)
    u, _ = _resolved(adapter("drake", "planar_golfer"), sw)
    se = float(np.sqrt(u @ np.asarray(free.impact["laplace"]["impulse_cov"]) @ u))
    tol = lookup("swing", "prior_free_refit").atol
    assert abs(u @ (refit.impulse - free.impulse)) <= tol * se
    assert abs(u @ (held.impulse - free.impulse)) > 3 * se
    assert held_prob.impact.sigma_impulse == 0.02
    # the settling refit (runs of 5 iterations until Λ moves less than a tenth of its sd)
    # lands near there (it stops where Λ creeps), and says it settled
    settled, _ = impact_time.prior_free_refit(held_prob, ikr.q, held, 4.6, 100, 1e-10,
                                              settle_sd=0.1)
    assert settled.converged and settled.iterations <= 100
    assert abs(u @ (settled.impulse - free.impulse)) <= \
        lookup("swing", "prior_free_refit_settled").atol * se


def test_a_direction_the_prior_leaves_loose_is_the_datas(fitted):
    """ImpactEvent.impulse_prior_loose: with a prior held tight (σ 0.02 N·s) about a
    centre but loose (σ_loose 4.6 N·s) along the direction u the markers resolve, moving
    the centre by 1 N·s along u moves the fitted Λ along u by the prior's share of the
    precision there, about (se/σ_loose)² (se the free fit's standard error along u; at most
    twice that), where without the loose direction it moves by more than half the shift;
    and the prior's rows enter the normal equations whitened by (I − uuᵀ)/σ + uuᵀ/σ_loose:
    g_Λ and H_ΛΛ against central differences of the residuals."""
    sw, imp, prob, _ = fitted
    h, a = prob.h, prob.adapter
    ikr = ik.track(a, list(sw.labels), sw.markers, sw.q[0])
    u, _ = _resolved(adapter("drake", "planar_golfer"), sw)
    centre = 0.9 * np.asarray(sw.impulse)

    def problem(mean, sigma, loose=()):
        ie = tf.ImpactEvent("club_head", imp.t_s, imp.t_s, imp.sigma_s,
                            (imp.t_s - 2 * h, imp.t_s + 2 * h), sigma_impulse=sigma,
                            impulse_prior_mean=tuple(mean), impulse_prior_loose=loose,
                            sigma_impulse_loose=4.6)
        return tf.FitProblem(a, sw.labels, sw.markers, h, 0.002,
                             np.array([100.0, 100.0, 30.0]), w_effort=1e-3, w_smooth=1.0,
                             impact=ie)

    free = tf.fit(problem(np.zeros(3), 4.6), ikr.q)
    se = float(np.sqrt(u @ np.asarray(free.impact["laplace"]["impulse_cov"]) @ u))
    moved = {}
    for loose in ((), (tuple(u),)):
        a0, a1 = (tf.fit(problem(centre + d * u, 0.02, loose), ikr.q) for d in (0.0, 1.0))
        moved[bool(loose)] = float(u @ (a1.impulse - a0.impulse))
    assert abs(moved[True]) <= 2.0 * (se / 4.6) ** 2, (moved, se)
    assert moved[False] > 0.5, moved
    # the loose prior's rows in the normal equations, against central differences
    loose_prob = problem(centre, 0.02, (tuple(u),))
    res = tf._Residuals(loose_prob)
    th = np.r_[free.C.ravel(), centre + 0.1]
    ne = res.evaluate(th, jac=True)["normal"]
    n, eps = free.C.size, 1e-6
    cols = []
    for k in range(n, n + 3):
        d = np.zeros(th.size)
        d[k] = eps
        cols.append((res.evaluate(th + d, jac=False)["r"]
                     - res.evaluate(th - d, jac=False)["r"]) / (2 * eps))
    Jfd = np.stack(cols, axis=1)
    r = res.evaluate(th, jac=False)["r"]
    ftol = lookup("swing", "jacobian/finite_difference").rtol
    g_fd, H_fd = Jfd.T @ r, Jfd.T @ Jfd
    assert np.abs(ne["gL"] - g_fd).max() <= ftol * max(1.0, np.abs(g_fd).max())
    assert np.abs(ne["HLL"] - H_fd).max() <= ftol * max(1.0, np.abs(H_fd).max())


def _ringing(sw, pin, f_hz):
    """A HeadRing (trajectory.py) on the planar truth's club-head marker at ``f_hz`` [Hz],
    ζ 0.1, its gain κ (collision.ring_gain) at the truth's impact state: a head of 0.8 of
    the rigid club's effective mass there (the bundled driver's head is 0.79 of its
    rigid golfer and club's), across the shaft."""
    qe = sw.q[sw.frame] + (sw.t_e - sw.t[sw.frame]) * sw.v_minus
    J = pin.frame_jacobians(qe, ["club_head"])[0, :3, :]
    M = pin.mass_matrix(qe)
    m_eff = 1.0 / float(np.linalg.eigvalsh(J @ np.linalg.solve(M, J.T))[-1])
    ends = pin.frame_poses(qe, ["club_head", "shaft_marker"])[:, :3]
    kappa = col.ring_gain(M, J, 0.8 * m_eff, ends[1] - ends[0])
    return tf.HeadRing((list(sw.labels).index("club_head"),), kappa, 2 * np.pi * f_hz, 0.1)


def test_the_heads_ringing_is_in_the_normal_equations_and_the_profile_finds_it(fitted):
    """trajectory.HeadRing: the club-head marker's rows after t_e carry g(t − t_e)κΛ, so
    they depend on Λ: g_Λ, H_ΛΛ and H_CΛ against central differences of the residuals
    (columns of frames after t_e and Λ's three). A truth whose club head rings at 50 Hz
    (the planar truth's markers plus the ring's offsets, its own Λ): the ringing profile
    (impact_time.ring_profile: the frequency the residuals hold, refined in log f)
    chooses 50 Hz within swing/ring_frequency_recovery (in log f), and the impulse
    it fits (the event time searched again with the ringing), along the direction the
    markers resolve, is nearer the truth's than the fit's without the ringing; on the
    truth without ringing the profile chooses none."""
    sw, imp, prob, fr = fitted
    pin = prob.adapter
    rings = {f: _ringing(sw, pin, f) for f in (50.0,)}
    assert np.linalg.eigvalsh(rings[50.0].kappa).min() >= -1e-12
    # the ring's rows in the normal equations, against central differences
    rp = copy.copy(prob)
    rp.impact = dataclasses.replace(prob.impact, ring=rings[50.0])
    res = tf._Residuals(rp)
    rng = np.random.default_rng(2)
    th = np.r_[fr.C.ravel() + 0.01 * rng.normal(size=fr.C.size), fr.impulse + 0.1]
    ev = res.evaluate(th, jac=True)
    ne, r = ev["normal"], ev["r"]
    n, nv = fr.C.size, pin.nv
    post = np.flatnonzero(prob.t > prob.impact.t_e)
    cols = np.unique(prob.band[post].ravel())
    ks = list(rng.choice(np.r_[[c * nv + j for c in cols for j in range(nv)]], 6,
                         replace=False)) + [n, n + 1, n + 2]
    eps = 1e-6
    Jfd = np.stack([(res.evaluate(th + eps * np.eye(th.size)[k], jac=False)["r"]
                     - res.evaluate(th - eps * np.eye(th.size)[k], jac=False)["r"])
                    / (2 * eps) for k in ks], axis=1)
    g = np.r_[ne["g"], ne["gL"]]
    H = np.block([[ne["H"], ne["HcL"]], [ne["HcL"].T, ne["HLL"]]])
    fd = lookup("swing", "jacobian/finite_difference").rtol
    g_fd, H_fd = Jfd.T @ r, Jfd.T @ Jfd
    assert np.abs(g[ks] - g_fd).max() <= fd * max(1.0, np.abs(g_fd).max())
    assert np.abs(H[np.ix_(ks, ks)] - H_fd).max() <= fd * max(1.0, np.abs(H_fd).max())
    assert np.abs(ne["HcL"][ks[:6]]).max() > 0          # the ring couples C and Λ there
    # the profile on a ringing truth and on the plain one
    ikr = ik.track(pin, list(sw.labels), sw.markers, sw.q[0])
    rg = rings[50.0]
    off = rg.offsets(sw.t - sw.t_e, sw.impulse, len(sw.labels))
    assert np.allclose(off[sw.t > sw.t_e][:, rg.markers[0]],
                       rg.gain(sw.t[sw.t > sw.t_e] - sw.t_e)[:, None] * (rg.kappa @ sw.impulse))
    assert not off[sw.t <= sw.t_e].any() and not np.delete(off, rg.markers, axis=1).any()
    assert np.abs(off).max() > lookup("swing", "ring_above_noise").atol * sw.sigma_m

    def profile(markers):
        p = _problem(pin, dataclasses.replace(sw, markers=markers), imp.t_s, imp.sigma_s)
        base = impact_time.fit_impact(p, ikr.q)
        won = impact_time.ring_profile(
            p, ikr.q, base, rg.at, 10, 1e-9,
            again=lambda warm: impact_time.fit_impact(p, ikr.q, warm=warm))
        return base, won, won.impact["ring"]

    base, won, chosen = profile(sw.markers + off)
    # read off the residuals and refined by the parabola in log f (swing/ring_frequency_recovery)
    ftol = lookup("swing", "ring_frequency_recovery").atol
    assert chosen is not None and abs(np.log(chosen["frequency_hz"] / 50.0)) <= ftol, \
        won.impact["ring_profile"]
    u, _ = _resolved(adapter("drake", "planar_golfer"), sw)
    err = {k: abs(float(u @ (x.impulse - sw.impulse))) for k, x in
           (("none", base), ("ring", won))}
    assert err["ring"] < err["none"], err
    _, plain, chosen = profile(sw.markers)
    assert chosen is None, plain.impact["ring_profile"]


def test_the_ringing_tried_stays_below_nyquist_and_must_pay_for_its_frequency():
    """impact_time.ring_band / ring_grid / ring_choice: at 360 frames per second no
    ringing above 180 Hz (the Nyquist frequency) is scanned or refitted; at 1000 the scan
    keeps its 200 Hz top. A ringing wins only more than swing/ring_cost_margin below none's
    cost (a 0.6 gain, as one seed of a truth without ringing gave at 197 Hz, does not;
    15, as a truth ringing at 50 Hz gave, does), and then the lowest ringing wins."""
    h = 1.0 / 360.0
    lo, hi = impact_time.ring_band(h)
    assert lo == impact_time.RING_SCAN_HZ[0] and hi == pytest.approx(180.0)
    assert impact_time.ring_band(1e-3)[1] == impact_time.RING_SCAN_HZ[1]
    grid = impact_time.ring_grid(170.0, h)
    assert grid == sorted(grid) and max(grid) <= 180.0 and len(grid) == 3
    assert impact_time.ring_grid(180.0, h) == pytest.approx([180.0 / impact_time.RING_STEP,
                                                              180.0])
    m = lookup("swing", "ring_cost_margin").atol
    assert impact_time.ring_choice([3260.0, 3260.1, 3259.4, 3259.7], m) == 0
    assert impact_time.ring_choice([3236.2, 3222.9, 3218.8, 3218.7, 3222.5], m) == 3
    assert impact_time.ring_choice([3236.2], m) == 0
    assert impact_time.ring_choice([100.0, 100.0 - 1.01 * m], m) == 1
    assert impact_time.ring_choice([100.0, 100.0 - 0.99 * m], m) == 0


@pytest.mark.parametrize("omega, zeta", [(0.0, 0.1), (-1.0, 0.1), (300.0, 1.0),
                                         (300.0, -0.1), (300.0, float("nan"))])
def test_a_ringing_must_be_underdamped_at_a_positive_frequency(omega, zeta):
    """trajectory.HeadRing: g(τ) = e^(−ζωτ) sin(ω_d τ)/ω_d needs ω > 0 and 0 ≤ ζ < 1 (at
    ζ ≥ 1 ω_d is zero or imaginary and g not a number); anything else is bad input, named,
    before a fit uses it. At ζ = 0.1 g's slope at τ = 0 is 1 (the head's extra velocity
    κΛ), by a forward difference from τ = 0."""
    from harness.core.errors import BadInput
    with pytest.raises(BadInput, match="damping ratio"):
        tf.HeadRing((0,), np.eye(3), omega, zeta)
    rg = tf.HeadRing((0,), np.eye(3), 300.0, 0.1)
    d = 1e-7
    assert (rg.gain(np.array([d]))[0] - 0.0) / d == pytest.approx(1.0, rel=1e-4)
    assert rg.gain(np.array([-d]))[0] == 0.0

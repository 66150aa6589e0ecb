"""The knot density and weight study (harness/fit/resolution.py): the fit's derivatives
against finite differences and its banded normal equations against dense products; the
objective components against their definitions; the noise-floor estimate against the σ
and the white-noise spectrum that generated the data; the held-out choice against the
known truth (it must recover the control and the angle better than both extremes of the
grid)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import resolution as R
from harness.fit import study_grid as G

SIGMA = 0.05


@pytest.fixture(scope="module")
def data():
    return R.forced_pendulum_data(301, 0)


def _dense_band(ab, M, W):
    H = np.zeros((M, M))
    for k in range(W):
        off = W - 1 - k
        H[np.arange(M - off), np.arange(off, M)] = ab[k, off:]
    return np.triu(H) + np.triu(H, 1).T


@pytest.mark.parametrize("kf", [1, 2, 5])
def test_jacobian_and_normal_equations(data, kf):
    t, _, _, y = data
    m = R.SplineFit(t, y, SIGMA, kf)
    s = R.Setting(kf, 1e-3, 1e-5, 1.0)
    z = m.initial()
    z[-1] = 9.3
    z[:-1] += 0.01 * np.random.default_rng(1).normal(size=z.size - 1)
    mask = np.arange(t.size) % 5 != 2          # one fold held out
    J = m.jacobian(z, s, mask)
    fd = np.empty_like(J)
    for i in range(z.size):
        e = np.zeros_like(z)
        e[i] = 1e-6
        fd[:, i] = (m.residuals(z + e, s, mask) - m.residuals(z - e, s, mask)) / 2e-6
    tol = lookup("resolution", "jacobian_fd")
    scale = np.maximum(np.abs(J).max(1), np.abs(fd).max(1))
    assert np.all(np.abs(J - fd).max(1) <= tol.rtol * scale)
    # the banded assembly the solver uses equals the dense JᵀJ and Jᵀr
    data_, eff, smo, rp, a_p = m._rows(z, s, mask)
    ab, b, d, gc, gp = m._normal((data_, eff, smo), m.M)
    H, g = J.T @ J, J.T @ m.residuals(z, s, mask)
    tn = lookup("resolution", "normal_equations")
    big, gbig = np.abs(H).max(), np.abs(g).max()
    assert np.abs(_dense_band(ab, m.M, m.W) - H[:-1, :-1]).max() <= tn.rtol * big
    assert np.abs(b - H[:-1, -1]).max() <= tn.rtol * big
    assert abs(d + a_p ** 2 - H[-1, -1]) <= tn.rtol * big
    assert np.abs(gc - g[:-1]).max() <= tn.rtol * gbig
    assert abs(gp + a_p * rp - g[-1]) <= tn.rtol * gbig


def test_solution_and_components(data):
    t, _, _, y = data
    s = R.Setting(4, 1e-3, 1e-5, 1.0)
    m = R.SplineFit(t, y, SIGMA, s.knot_frames)
    mask = np.arange(t.size) % 5 != 0
    sol = m.solve(s, fit_mask=mask)
    assert sol["converged"]
    J, r = m.jacobian(sol["z"], s, mask), m.residuals(sol["z"], s, mask)
    st = lookup("resolution", "stationarity")
    assert np.linalg.norm(J.T @ r) <= st.rtol * np.linalg.norm(J) * np.linalg.norm(r)
    # every component from its definition (module docstring), recomputed here
    th, u = m.control(sol["z"])
    p = sol["z"][-1]
    comp, norms = m.components(sol, s)
    h = t[1] - t[0]
    want = {"measurement": np.mean(((th[mask] - y[mask]) / SIGMA) ** 2),
            "effort": s.w_effort * np.mean(u ** 2),
            "smoothness": s.w_smooth * np.mean((np.diff(u) / h) ** 2),
            "prior": s.w_prior * ((p - R.PRIOR_MEAN) / R.PRIOR_SIGMA) ** 2}
    for k, v in want.items():
        assert comp[k] == pytest.approx(v, rel=1e-12, abs=1e-300), k
    assert comp["total"] == pytest.approx(sum(want.values()), rel=1e-12)
    assert norms["smoothness_mean_du2"] == pytest.approx(np.mean((np.diff(u) / h) ** 2))
    # u is the inverse dynamics along the spline: θ̈ (second derivative of the fitted
    # angle, here by finite differences of the spline itself) + p sin θ
    z2 = sol["z"]
    th_p = m._theta(z2[:-1])
    d2 = (th_p[2:] - 2 * th_p[1:-1] + th_p[:-2]) / h ** 2
    assert np.max(np.abs(d2 + p * np.sin(th[1:-1]) - u[1:-1])) < 0.05 * np.max(np.abs(u))


def test_noise_floor():
    # σ̂ from the data's third difference against the σ that generated them
    _, _, _, y = R.forced_pendulum_data(3001, 0)
    tol = lookup("resolution", "noise_sigma")
    assert abs(R.noise_sigma(y) / SIGMA - 1) <= tol.atol
    # the floor's level: white noise differentiated twice, its periodogram band by band
    h = 0.01
    e = SIGMA * np.random.default_rng(3).normal(size=8192)
    f, S = R.periodogram(np.diff(e, 2) / h ** 2, h)
    floor = R.control_noise_floor(f, SIGMA, h)
    tf = lookup("resolution", "noise_floor")
    for lo, hi in [(1, 5), (5, 15), (15, 30), (30, 45)]:
        k = (f >= lo) & (f < hi)
        assert abs(S[k].mean() / floor[k].mean() - 1) <= tf.atol, (lo, hi)


def test_folds_partition_and_no_leak():
    masks = R.folds(23, 5)
    assert np.array_equal(np.sum(masks, axis=0), np.ones(23))
    assert all(m.sum() in (4, 5) for m in masks)
    # a held-out frame's noise is independent of its prediction, so its expected score is
    # ≥ 1 (σ² over σ²): with one knot per frame and no regularisation the spline could
    # pass through every frame, and only a fold that never saw its held-out frames (start
    # and warm starts included) scores above 1
    st = R.run_study({"knot_frames": (1,), "w_smooth": (0.0,), "w_effort": (0.0,),
                      "w_prior": (0.0,)})["json"]
    assert st["settings"][0]["cv_mean"] > 1.0


GRID = {"knot_frames": (1, 4, 16, 32), "w_smooth": (1e-8, 1e-6, 1e-4, 1e-2, 1e-1),
        "w_effort": (0.0, 1e-3), "w_prior": (0.0, 1.0)}


def test_choice_beats_both_extremes():
    # seed 0 here; tests/e2e/test_fit_study.py checks seed 1 on another grid
    out = R.run_study(GRID, seed=0)
    st = out["json"]
    rows, ch = st["settings"], st["choice"]
    assert len(rows) == 80 and st["converged"]
    assert min(r["cv_mean"] for r in rows) > 0.5     # held-out noise alone scores ~1
    c = rows[ch["index"]]
    least = rows[st["extremes"]["least_regularised"]]
    most = rows[st["extremes"]["most_regularised"]]
    assert (least["knot_frames"], least["w_smooth"], least["w_effort"], least["w_prior"]) \
        == (1, 1e-8, 0.0, 0.0)
    assert (most["knot_frames"], most["w_smooth"], most["w_effort"], most["w_prior"]) \
        == (32, 1e-1, 1e-3, 1.0)
    # truth recovery: the fitted control and angle against the true ones
    u_true, th_true = out["arrays"]["study_u_true"], out["arrays"]["study_theta_true"]
    u_rms = np.sqrt(np.mean((out["arrays"]["study_u_fit"] - u_true) ** 2))
    th_rms = np.sqrt(np.mean((out["arrays"]["study_theta_fit"] - th_true) ** 2))
    assert u_rms == pytest.approx(c["truth_error"]["u_rms_rad_s2"], rel=1e-12)
    assert th_rms == pytest.approx(c["truth_error"]["theta_rms_rad"], rel=1e-12)
    for ext in (least, most):
        assert u_rms < ext["truth_error"]["u_rms_rad_s2"]
        assert th_rms < ext["truth_error"]["theta_rms_rad"]
    # the one-SE rule re-derived from the per-fold scores, at the smallest prior weight
    # (the held-out score cannot see p, so no prior weight is chosen by it)
    cv = np.array([r["cv_mean"] for r in rows])
    folds = np.array([r["cv_folds"] for r in rows])
    assert np.allclose(cv, folds.mean(1), rtol=1e-14)
    at0 = np.array([r["w_prior"] == 0.0 for r in rows])
    d = folds - folds[int(np.argmin(np.where(at0, cv, np.inf)))]
    band = np.flatnonzero(at0 & (d.mean(1) <= d.std(1, ddof=1) / np.sqrt(folds.shape[1])))
    assert sorted(band.tolist()) == sorted(ch["within_one_se"]) and ch["index"] in band
    assert c["w_prior"] == 0.0
    assert c["edf"] == min(rows[i]["edf"] for i in band)
    # in the band where the noise floor exceeds the true control's spectrum tenfold, the
    # chosen control has less power than the floor and than the least regularised fit
    a = out["arrays"]
    f, floor = a["study_f_hz"], a["study_psd_floor"]
    hb = (f > 0) & (floor > 10 * a["study_psd_true"])
    assert hb.sum() > 10
    assert a["study_psd_fit"][hb].sum() < floor[hb].sum()
    assert a["study_psd_fit"][hb].sum() < a["study_psd_least"][hb].sum()


@pytest.mark.parametrize("args, flag", [
    (("pendulum", None, {"w_smooth": "1e-3"}), "--w-smooth"),
    (("balance", "resolution", {}), "--study"),
    (("pendulum", "other", {}), "--study"),
    (("pendulum", "resolution", {"knot_frames": "0"}), "--knot-frames"),
    (("pendulum", "resolution", {"knot_frames": "2.5"}), "--knot-frames"),
    (("pendulum", "resolution", {"w_effort": "-1"}), "--w-effort"),
    (("pendulum", "resolution", {"w_prior": "nan"}), "--w-prior"),
    (("pendulum", "resolution", {"w_smooth": "1e-3,x"}), "--w-smooth"),
])
def test_bad_requests(args, flag):
    with pytest.raises(BadInput) as e:
        G.request(*args)
    assert flag in str(e.value)


def test_request_grid():
    g = G.request("pendulum", "resolution", {"knot_frames": "8,2,2", "w_smooth": "1e-4"})
    assert g["knot_frames"] == (2, 8) and g["w_smooth"] == (1e-4,)
    assert g["w_effort"] == G.DEFAULT_GRID["w_effort"]
    assert G.request("pendulum", None, {"w_smooth": None}) is None


# the unforced pendulum (u_true = 0) with the control weighted as small: there the data
# identify p; the truth only makes the data, the fit sees the data and the prior
IDENTIFIED_GRID = {"knot_frames": (16,), "w_smooth": (1e-6,), "w_effort": (1e-3, 1.0, 10.0),
                   "w_prior": (1e-3, 1.0)}


def _study(grid, p_true, prior_mean, forcing=()):
    return R.run_study(grid, seed=0, p_true=p_true, forcing=forcing,
                       prior_mean=prior_mean)["json"]


def test_p_moves_with_the_data_not_the_prior():
    """Move the truth (p = 10 → 14, simulated; the prior stays at its nominal 8): the
    chosen setting and p follow the data, within a few SE of the new truth. Move the prior
    centre (8 → 12): where the data identify p, the chosen p moves by at most the prior
    share × the shift. The rule never takes the larger prior weight the old rule took."""
    z_max = lookup("resolution", "truth_z").atol
    share_max = lookup("resolution", "prior_share").atol
    runs = {(pt, mu): _study(IDENTIFIED_GRID, pt, mu) for pt in (10.0, 14.0)
            for mu in (R.PRIOR_MEAN, 12.0)}
    for (pt, mu), st in runs.items():
        sp, cs = st["p"], st["choice"]["setting"]
        assert cs["w_prior"] == 1e-3, (pt, mu, cs)
        assert sp["identified"], (pt, mu, sp)
        assert abs(sp["value"] - pt) <= z_max * sp["se"], (pt, mu, sp)
        assert st["problem"]["p_true"] == pt and st["problem"]["prior"]["mean"] == mu
    for pt in (10.0, 14.0):
        a, b = runs[(pt, R.PRIOR_MEAN)], runs[(pt, 12.0)]
        assert a["choice"]["setting"] == b["choice"]["setting"]
        shift = abs(b["p"]["value"] - a["p"]["value"])
        assert shift <= share_max * (12.0 - R.PRIOR_MEAN), (pt, shift)
    # the truth moved by 4: the fitted p moved with it, not with the prior
    moved = runs[(14.0, R.PRIOR_MEAN)]["p"]["value"] - runs[(10.0, R.PRIOR_MEAN)]["p"]["value"]
    assert abs(moved - 4.0) <= z_max * runs[(14.0, R.PRIOR_MEAN)]["p"]["se"] * 2 ** 0.5


def test_prior_share_is_the_fits_response_to_the_prior_centre():
    """φ reported for a setting against ∂p̂/∂μ_p by a central difference of the prior
    centre through the full fit; with the prior weight 1 (σ_eff = σ_p / √N) the prior
    dominates and the study says p is not identified there."""
    t, _, _, y = R.forced_pendulum_data(R.STUDY_N, 0, p=14.0, forcing=())
    s = R.Setting(16, 10.0, 1e-6, 1.0)
    fits = {mu: R.SplineFit(t, y, 0.05, 16, prior_mean=mu) for mu in (7.5, 8.0, 8.5)}
    sols = {mu: m.solve(s) for mu, m in fits.items()}
    phi = fits[8.0].laplace(sols[8.0])["p_prior_share"]
    dpdmu = float(sols[8.5]["z"][-1] - sols[7.5]["z"][-1]) / 1.0
    assert phi > lookup("resolution", "prior_share").atol       # the prior matters here
    bound = lookup("resolution", "prior_share_finite_difference").rtol
    assert abs(dpdmu / phi - 1.0) <= bound, (dpdmu, phi)


def test_forced_study_says_p_is_not_identified():
    """The benchmark study (forced pendulum, u unknown): the held-out score cannot see p,
    so the choice stays at the smallest prior weight and p does not follow the prior's
    centre; the data narrow p far less than the nominal's σ_p, which the study reports; at
    the prior weight 1 the fit returns the prior's centre, reported as prior-dominated."""
    grid = {"knot_frames": (16,), "w_smooth": (1e-6, 1e-4), "w_effort": (0.0, 1e-3),
            "w_prior": (0.0, 1.0)}
    a, b = (_study(grid, R.P.PENDULUM_TRUE_P, mu, R.FORCING) for mu in (R.PRIOR_MEAN, 11.0))
    for st in (a, b):
        assert st["choice"]["setting"]["w_prior"] == 0.0
        sp = st["p"]
        assert not sp["identified"] and sp["prior_share"] == 0.0
        assert sp["se_without_prior"] > lookup("resolution", "data_se_over_prior_sigma").atol \
            * R.PRIOR_SIGMA
        assert any("without the prior" in r for r in sp["reasons"])
    # no prior term at the choice: the same optimum from either start (p starts at μ_p)
    assert abs(a["p"]["value"] / b["p"]["value"] - 1) <= lookup("fit", "same_optimum").atol
    for st, mu in ((a, R.PRIOR_MEAN), (b, 11.0)):
        heavy = [q for q in st["prior_sensitivity"] if q["w_prior"] == 1.0][0]
        assert not heavy["identified"]
        assert heavy["prior_share"] > lookup("resolution", "prior_share").atol
        assert abs(heavy["p"] - mu) < abs(heavy["p"] - st["p"]["value"])   # pulled to μ_p

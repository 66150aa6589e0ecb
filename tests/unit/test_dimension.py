"""The dimension problem (harness/fit/dimension.py): the synthetic chain against its closed
form, the uncertainty helpers against direct sums, d* selected over d* ± 1 on held-out
frames for several seeds with its uncertainty reported, and the absorption check firing
on the variant whose extra coordinate only stands in for a bent link."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import dimension as D


def _closed_form(q, s, kink=0.0):
    """Marker at arc s [m] of the planar chain with hinges at 0 and 0.5 m (angles q (N, 2)
    rad about y; a straight link points along −z) and a bend ``kink`` rad at 0.7 m."""
    def seg(length, angle):
        return -length * np.stack([np.sin(angle), np.zeros_like(angle), np.cos(angle)], 1)

    a1, a2 = q[:, 0], q[:, 0] + q[:, 1]
    if s <= 0.5:
        return seg(s, a1)
    if s <= 0.7:
        return seg(0.5, a1) + seg(s - 0.5, a2)
    return seg(0.5, a1) + seg(0.2, a2) + seg(s - 0.7, a2 + kink)


@pytest.mark.parametrize("kinked", [False, True])
def test_markers_match_the_closed_form_chain(kinked):
    d = D.data(0, kinked)
    tol = lookup("dimension", "forward_kinematics")
    for k, s in enumerate(D.MARKERS):
        ref = _closed_form(d["q"], s, D.KINK if kinked else 0.0)
        assert np.abs(d["clean"][:, k] - ref).max() <= tol.atol, (k, s)
    # the noise is the stated σ and the occlusion mask the stated fraction
    r = (d["y"] - d["clean"])[d["seen"]]
    assert 0.9 < r.std() / D.SIGMA < 1.1
    assert np.array_equal(np.isnan(d["y"]).any(axis=2), ~d["seen"])
    assert 0.02 < (~d["seen"]).mean() < 0.09


def test_candidates_nest_the_truth():
    """d* + 1 with its extra hinge locked, and d* − 1, reproduce the closed form."""
    tol = lookup("dimension", "forward_kinematics")
    c1, c2, c3 = D.candidates()
    assert (c1.d, c2.d, c3.d) == (D.D_STAR - 1, D.D_STAR, D.D_STAR + 1)
    rng = np.random.default_rng(1)
    q = rng.uniform(-1, 1, (5, 2))
    a1, a3 = D.adapter(c1), D.adapter(c3)
    for i in range(5):
        p3 = a3.frame_poses(np.r_[q[i], 0.0], list(D.LABELS))[:, :3]
        p1 = a1.frame_poses(q[i, :1], list(D.LABELS))[:, :3]
        for k, s in enumerate(D.MARKERS):
            assert np.abs(p3[k] - _closed_form(q[i:i + 1], s)[0]).max() <= tol.atol
            assert np.abs(p1[k] - _closed_form(np.c_[q[i:i + 1, :1], [[0.0]]], s)[0]).max() \
                <= tol.atol


def test_uncertainty_helpers_against_direct_sums():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=37), rng.normal(size=37)
    p = D.paired(a, b)
    blocks = [float(np.sum((a - b)[i:i + D.BLOCK])) for i in range(0, 37, D.BLOCK)]
    assert p["diff"] == pytest.approx(float(np.sum(a - b)), abs=1e-12)
    assert p["se"] == pytest.approx(np.sqrt(len(blocks)) * np.std(blocks, ddof=1), rel=1e-12)
    # a candidate better on every frame wins every resample; fractions sum to 1
    lls = np.stack([a, a + 1.0, a - 1.0])
    assert D.bootstrap_selection(lls, 0).tolist() == [0.0, 1.0, 0.0]
    f = D.bootstrap_selection(np.stack([a, b]), 0)
    assert f.sum() == pytest.approx(1.0) and 0 < f[0] < 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_true_dimension_is_selected_with_its_uncertainty(seed):
    r = D.compare(seed, check_absorption=False, trials=False)
    names = [c["name"] for c in r["candidates"]]
    assert names == [f"d{D.D_STAR - 1}", f"d{D.D_STAR}", f"d{D.D_STAR + 1}"]
    assert r["selected"] == r["choice"] == f"d{D.D_STAR}"
    rows = {c["name"]: c for c in r["candidates"]}
    sel = rows[f"d{D.D_STAR}"]
    # the held-out scores are the sums of the per-frame log-likelihoods
    assert np.allclose(r["ll"].sum(axis=1), [c["heldout_loglik"] for c in r["candidates"]])
    for c in r["candidates"]:
        assert c["converged"] and max(c["iterations"]) <= D.MAX_ITER
        if c is sel:
            continue
        b = c["below_selected"]
        assert b["diff"] > 0 and b["se"] > 0 and b["z"] == pytest.approx(b["diff"] / b["se"])
    frac = np.array([c["bootstrap_fraction"] for c in r["candidates"]])
    assert frac.sum() == pytest.approx(1.0)
    assert sel["bootstrap_fraction"] >= lookup("dimension", "selection_fraction").atol
    st = sel["stability"]
    assert 0 < st["base_angle_spread_rad"] < 0.01 and len(
        st["base_rms_torque_Nm"]["per_fold"]) == D.FOLDS


def test_absorption_check_fires_on_a_bent_link():
    """Data from d* with its distal link bent: d* + 1 wins on held-out frames, but its
    gain is the static bend (its extra angle's mean is the injected bend), so the check
    calls it absorbing and the choice falls back to d*."""
    r = D.compare(0, kinked=True, trials=False)
    assert r["selected"] == f"d{D.D_STAR + 1}"
    assert r["choice"] == f"d{D.D_STAR}"
    lo_step, hi_step = r["absorption"]
    assert lo_step["verdict"] == "dimension"          # d* − 1 → d*: a missing coordinate
    assert hi_step["verdict"] == "absorbing"
    z = lookup("dimension", "gain_z").atol
    assert hi_step["total_gain"]["z"] >= z and hi_step["static_gain"]["z"] >= z
    assert hi_step["dynamic_gain"]["z"] < z
    assert abs(hi_step["extra_mean_angle_rad"] - D.KINK) <= lookup("dimension",
                                                                   "kink_angle").atol
    # the split is exact: total = static + dynamic
    assert hi_step["total_gain"]["diff"] == pytest.approx(
        hi_step["static_gain"]["diff"] + hi_step["dynamic_gain"]["diff"], rel=1e-9)


def test_bad_seed_is_refused():
    with pytest.raises(BadInput, match="--seed"):
        D.run_bundle(-1)

"""The dimension choice from held-out whole trials (harness/fit/dimension.py
``compare_trials``): several trials of the same movement, each held out once, every
candidate fitted to the others and scored on it; held-out frames of one trial are the
second opinion."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from harness.fit import dimension as D


@pytest.mark.parametrize("seed", [0, 1])
def test_whole_held_out_trials_choose_the_true_dimension(seed):
    r = D.compare_trials(seed)
    rows = {c["name"]: c for c in r["candidates"]}
    assert r["selected"] == f"d{D.D_STAR}" and r["converged"]
    assert r["trials"] == D.TRIALS and all(len(c["per_trial"]) == D.TRIALS
                                           for c in r["candidates"])
    for name, c in rows.items():
        assert c["heldout_loglik"] == pytest.approx(sum(c["per_trial"]), rel=1e-12)
        if name != r["selected"]:
            b = c["below_selected"]
            assert b["diff"] > 0 and b["se"] > 0
            d = np.array(rows[r["selected"]]["per_trial"]) - np.array(c["per_trial"])
            assert b["se"] == pytest.approx(np.sqrt(D.TRIALS) * d.std(ddof=1), rel=1e-12)


def test_trial_loglik_against_a_direct_gaussian_sum():
    """``trial_loglik`` against scipy.stats.norm summed over the seen coordinates, with
    each marker's spread recomputed from the training trials."""
    d = D.trials_data(3, n_trials=3)
    cand = D.candidates()[1]
    ad = D.adapter(cand)
    q = d["q"][0]                       # any motion: here the first trial's true one
    train, test = d["y"][1:], d["y"][0]
    ll = D.trial_loglik(ad, q, train, test)
    p = np.stack([ad.frame_poses(qi, list(D.LABELS))[:, :3] for qi in q])
    expect = np.zeros(q.shape[0])
    for k in range(len(D.LABELS)):
        res = (train[:, :, k] - p[None, :, k]).reshape(-1, 3)
        res = res[np.isfinite(res).all(axis=1)]
        sd = np.sqrt(max(np.mean(res ** 2), D.SIGMA ** 2))
        for i in range(q.shape[0]):
            if np.isfinite(test[i, k]).all():
                expect[i] += norm.logpdf(test[i, k], p[i, k], sd).sum()
    assert np.allclose(ll, expect, rtol=1e-10, atol=1e-9)


def test_choice_comes_from_whole_trials_frames_are_the_second_opinion():
    """In ``compare`` the choice starts from the whole-trial selection. On the bent-link
    data (seed 0) the whole trials select d* + 1 as the frames do; the absorption check
    (a fixed bend explains d* + 1's gain) sends the choice back to d*, and the reason
    names the whole trials."""
    r = D.compare(0, kinked=True)
    assert r["selected"] == f"d{D.D_STAR + 1}"          # frames: the second opinion
    assert r["trials"]["selected"] == f"d{D.D_STAR + 1}"
    assert r["absorption"][-1]["verdict"] == "absorbing"
    assert r["choice"] == f"d{D.D_STAR}" and "whole trials" in r["choice_reason"]
    unc = r["uncertainty"]                                # of the chosen chain, d*
    assert unc["computed"] and set(unc["coordinates"]) == {"hinge0", "hinge1"}

"""Ball contact as the club-head velocity discontinuity (harness/capture/events.py)
against closed forms: a synthetic club head on a circle whose speed drops by a known
factor at a known time between frames (synthetic.kinematic_swing), clean and with marker
noise, at and before the lowest point; and the bundled driver capture, whose contact
interval is derived here from its own interval speeds."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from harness.capture import events
from harness.capture.ingest import ingest
from harness.capture.markerset import DRIVER_SWING
from harness.capture.synthetic import kinematic_swing
from harness.core.errors import BadInput
from harness.core.tolerances import lookup

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "swing" / "driver.c3d"
RATE = 360.0
T0, TB, TD = 0.3, 0.8, 0.12          # s: a 49 m/s downswing (R A π / (2 Td))
BOTTOM = int((T0 + TB + TD) * RATE)  # frame just before the lowest point
SPEED_REL = 0.03                     # the task's bound on the measured speeds


def _head(labels, X):
    idx = [labels.index(l) for l in DRIVER_SWING.club_head]
    return X[:, idx].mean(axis=1)


def _swing(k: int, frac: float, ratio: float):
    t_c = (k + frac) / RATE
    labels, X, truth = kinematic_swing(rate_hz=RATE, duration_s=T0 + TB + 2 * TD, t0=T0,
                                       Tb=TB, Td=TD, contact_s=t_c,
                                       speed_ratio=ratio)
    return labels, X, truth, t_c


@pytest.mark.parametrize("frac", [0.3, 0.7])
def test_a_known_speed_drop_between_frames_is_located_within_its_sigma(frac):
    labels, X, truth, t_c = _swing(BOTTOM, frac, 0.7)
    assert 45 < truth["speed_pre_impact_mps"] < 55 and abs(
        truth["speed_post_impact_mps"] / truth["speed_pre_impact_mps"] - 0.7) < 1e-12
    im = events.impact(_head(labels, X), RATE)
    assert im.frame == BOTTOM and im.trusted
    assert abs(im.t_s - t_c) <= im.sigma_s < 0.1 / RATE, (im.t_s - t_c, im.sigma_s)
    assert abs(im.speed_pre_mps / truth["speed_pre_impact_mps"] - 1) < SPEED_REL
    assert abs(im.speed_post_mps / truth["speed_post_impact_mps"] - 1) < SPEED_REL
    assert im.speed_post_mps < im.speed_across_mps < im.speed_pre_mps


def test_with_one_millimetre_marker_noise_impact_stays_within_a_frame():
    labels, X, truth, t_c = _swing(BOTTOM, 0.3, 0.7)
    rng = np.random.default_rng(20261202)
    errs = []
    for _ in range(10):
        Xn = X + rng.normal(0.0, 1e-3, X.shape)      # 1 mm per marker coordinate
        im = events.impact(_head(labels, Xn), RATE)
        err = abs(im.t_s - t_c)
        assert err < 1.0 / RATE, err * RATE
        assert abs(im.speed_pre_mps / truth["speed_pre_impact_mps"] - 1) < SPEED_REL
        assert abs(im.speed_post_mps / truth["speed_post_impact_mps"] - 1) < SPEED_REL
        # the noise estimate sees the mean of three markers, 1 mm / √3 = 0.58 mm, from
        # ≈ 80 fourth differences (a median: ≈ 20 % sampling scatter)
        assert 0.3e-3 < im.noise_sd_m < 0.9e-3, im.noise_sd_m
        errs.append(err / im.sigma_s)
    # the stated sigma is not optimistic
    assert max(errs) <= lookup("capture", "impact_sigma_z").atol, errs


def test_contact_before_the_lowest_point_is_the_discontinuity_not_the_lowest_point():
    """An iron: the head still descends after contact; the lowest point comes later."""
    k = BOTTOM - 8
    labels, X, truth, t_c = _swing(k, 0.3, 0.8)
    p = _head(labels, X)
    s = np.linalg.norm(np.diff(p, axis=0), axis=1) * RATE
    fast = np.flatnonzero(s >= 0.5 * s.max()) + 1
    lowest = int(fast[np.argmin(p[fast, 2])])        # the old criterion
    assert lowest - t_c * RATE > 5 and abs(lowest / RATE - truth["lowest_s"]) < 1.0 / RATE
    im = events.impact(p, RATE)
    assert im.frame == k
    assert abs(im.t_s - t_c) <= im.sigma_s, (im.t_s - t_c, im.sigma_s)
    assert abs(im.speed_pre_mps / truth["speed_pre_impact_mps"] - 1) < SPEED_REL
    assert abs(im.speed_post_mps / truth["speed_post_impact_mps"] - 1) < SPEED_REL
    # the lowest frame's backward difference is already a post-contact speed
    assert s[lowest - 1] < 0.85 * truth["speed_pre_impact_mps"]


def test_bundled_driver_contact_lies_where_the_speed_drops():
    """The club head moves at 51.0, then 41.4, then 36.4 m/s over three consecutive frame
    intervals: contact lies inside the middle one."""
    cap = ingest(BUNDLED)
    ev = events.detect(cap)
    p = events.club_head_point(cap)
    s = np.r_[np.nan, np.linalg.norm(np.diff(p, axis=0), axis=1) * cap.rate_hz]
    with np.errstate(invalid="ignore"):
        big = [j for j in range(1, len(s) - 1) if s[j] - s[j + 1] > 6.0]
    assert len(big) == 1                              # one discontinuity in the capture
    j = big[0]
    # the drop is split around the straddling interval: the next drop (5 m/s) is the
    # larger neighbour, so contact lies in (j, j+1) and j is the last frame before it
    assert s[j + 1] - s[j + 2] > s[j - 1] - s[j]
    f = ev.impact_frame
    assert f == j
    assert f <= ev.impact_s * cap.rate_hz <= f + 1
    assert 0 < ev.impact_sigma_s * cap.rate_hz <= 0.5
    assert abs(ev.clubhead_speed_pre_impact_mps - 51.0) <= 0.1
    assert ev.clubhead_speed_pre_impact_mps == pytest.approx(s[f], rel=1e-12)
    assert abs(ev.clubhead_speed_across_impact_mps - 41.4) <= 0.1
    assert abs(ev.clubhead_speed_post_impact_mps - 36.4) <= 0.1
    assert ev.peak_speed_mps == pytest.approx(np.nanmax(s), rel=1e-12)
    assert ev.label == "measured"
    assert ev.address_s < ev.takeaway_s < ev.top_s < ev.impact_s


@pytest.mark.parametrize("step", [2, 3])
def test_the_bundled_contact_time_holds_at_a_lower_rate(step):
    """The bundled capture subsampled to 1/step of its rate, from each of its step
    phases (frames off, off + step, ...; times shifted back by off frames): the contact
    found there agrees with the full-rate one within capture/impact_sigma_z of their
    stated uncertainties combined, and within one subsampled frame interval."""
    cap = ingest(BUNDLED)
    p, rate = events.club_head_point(cap), cap.rate_hz
    ref = events.impact(p, rate)
    z = lookup("capture", "impact_sigma_z").atol
    for off in range(step):
        im = events.impact(p[off::step], rate / step)
        t = im.t_s + off / rate
        assert abs(t - ref.t_s) <= z * np.hypot(im.sigma_s, ref.sigma_s), (off, t, ref.t_s)
        assert abs(t - ref.t_s) < step / rate, (off, t, ref.t_s)
        assert im.speed_pre_mps > im.speed_across_mps > im.speed_post_mps


@pytest.mark.parametrize("label", DRIVER_SWING.club_head)
def test_a_club_head_marker_dropping_out_near_contact_moves_nothing_it_should_not(label):
    """One club-head marker of the bundled capture unseen over a few frames before,
    across or after contact, or over the whole downswing. Contact stays in the same
    frame interval and within capture/impact_sigma_z of both stated uncertainties of the
    full capture's time. Each speed is then the mean velocity of the markers still
    seen, a convex combination of their velocities, so it lies no farther from the full
    capture's speed than the farthest single marker's speed over that interval does (a
    mean of the markers seen in each frame would jump by the distance between the two
    sets' centres instead)."""
    cap = ingest(BUNDLED)
    full = events.detect(cap)
    f, rate = full.impact_frame, cap.rate_hz
    P = events.club_head_markers(cap)
    one = np.stack([events.interval_speeds(P[:, [m]], rate) for m in range(P.shape[1])])
    s_full = events.interval_speeds(P, rate)
    dev = np.abs(one - s_full)                                # (M, F) m/s
    spread = np.where(np.isfinite(dev), dev, -np.inf).max(axis=0)   # per interval
    # the mean of the markers' displacements against the displacement of their mean:
    # equal up to round-off
    eps = lookup("swing", "stated_figure").rtol * s_full[f]   # m/s
    z = lookup("capture", "impact_sigma_z").atol
    for a, b in ((f - 16, f - 6), (f - 6, f), (f - 6, f + 2), (f + 1, f + 9),
                 (f - 36, f + 44)):
        X = cap.X.copy()
        X[a:b, cap.index(label)] = np.nan
        ev = events.detect(dataclasses.replace(cap, X=X))
        assert ev.impact_frame == f, (a, b, ev.impact_frame)
        assert abs(ev.impact_s - full.impact_s) <= z * np.hypot(ev.impact_sigma_s,
                                                                full.impact_sigma_s)
        for got, k in ((ev.clubhead_speed_pre_impact_mps, f),
                       (ev.clubhead_speed_post_impact_mps, f + 2)):
            assert abs(got - s_full[k]) <= spread[k] + eps, (a, b, k, got, s_full[k])
        fast = np.flatnonzero(
            s_full >= lookup("capture", "impact_fast_fraction").atol * full.peak_speed_mps)
        assert ev.peak_speed_mps <= np.nanmax(s_full[fast] + spread[fast]) + eps


def test_contact_in_a_gap_of_the_club_head_markers_is_refused_not_guessed():
    """Every club-head marker of the bundled capture unseen in the frame after contact,
    or over the contact interval: the speed drop is then across the gap, and the largest
    drop between seen frames is a slowing in the follow-through, 90 ms later (which the
    search took for contact before). The capture is refused naming the file and the
    frames. The same gap earlier in the downswing, where the head speeds up, or later,
    is not refused, and contact stays in its interval."""
    cap = ingest(BUNDLED)
    f = events.detect(cap).impact_frame

    def without_head(a, b):
        X = cap.X.copy()
        for label in DRIVER_SWING.club_head:
            X[a:b, cap.index(label)] = np.nan
        return dataclasses.replace(cap, X=X)
    for a, b in ((f + 1, f + 2), (f, f + 2), (f - 2, f + 3)):
        with pytest.raises(BadInput) as e:
            events.detect(without_head(a, b))
        assert e.value.where == cap.source and f"{a}" in e.value.problem
    for a, b in ((f - 16, f - 6), (f + 14, f + 24)):
        assert events.detect(without_head(a, b)).impact_frame == f


def test_a_capture_that_ends_at_or_before_contact_is_refused():
    """The bundled capture cut while the head still speeds up, or one frame after its
    speed drop (the interval after it unseen), has no contact to measure: refused naming
    the file, where the search used to return a contact there. Cut four frames after
    contact it keeps the contact interval, its time no longer trusted (± half a frame)."""
    cap = ingest(BUNDLED)
    f = events.detect(cap).impact_frame
    for end in (f - 6, f + 1, f + 2):
        with pytest.raises(BadInput) as e:
            events.detect(dataclasses.replace(cap, X=cap.X[:end]))
        assert e.value.where == cap.source, end
    ev = events.detect(dataclasses.replace(cap, X=cap.X[:f + 4]))
    st = lookup("swing", "stated_figure")
    assert ev.impact_frame == f and not ev.impact_trusted
    assert ev.impact_sigma_s == pytest.approx(0.5 / cap.rate_hz, rel=st.rtol, abs=st.atol)


@pytest.mark.parametrize("ratio,found", [(0.95, False), (0.85, True)])
def test_a_drop_too_small_for_a_ball_is_no_contact(ratio, found):
    """Synthetic swings whose head keeps 95 % and 85 % of its speed at the event: below
    capture/impact_min_drop (10 %) there is no ball, above it the event is found where
    it is."""
    labels, X, truth, t_c = _swing(BOTTOM, 0.3, ratio)
    p = _head(labels, X)
    if not found:
        with pytest.raises(BadInput):
            events.impact(p, RATE)
        return
    im = events.impact(p, RATE)
    assert im.frame == BOTTOM and abs(im.t_s - t_c) <= im.sigma_s


def test_a_glitch_of_one_club_head_marker_is_no_contact():
    """One club-head marker of the bundled capture pushed 6 or 10 cm along the head's
    path in a single frame (a swap or a ghost): its interval speeds jump up and down by
    20–36 m/s, which the largest-drop search took for contact, up to 27 frames away. The
    search runs on the median of the markers' own speeds, so contact stays in its
    interval wherever the glitch is, and away from the contact's own frames its time
    is the full capture's."""
    cap = ingest(BUNDLED)
    full = events.detect(cap)
    f = full.impact_frame
    p = events.club_head_point(cap)
    label = DRIVER_SWING.club_head[0]
    for frame in (f - 26, f - 16, f - 6, f - 2, f, f + 1, f + 2, f + 14):
        path = (p[frame + 1] - p[frame - 1]) / np.linalg.norm(p[frame + 1] - p[frame - 1])
        for size in (0.06, 0.10):
            X = cap.X.copy()
            X[frame, cap.index(label)] += size * path
            ev = events.detect(dataclasses.replace(cap, X=X))
            assert ev.impact_frame == f, (frame, size, ev.impact_frame)
            if abs(frame - f) > 4:
                assert ev.impact_s == full.impact_s, (frame, size)

"""Swing events detected from the club-head marker data. Times in s from the first frame,
speeds in m/s, heights in m (Z-up world of harness/capture/ingest.py).

The club-head point p[k] (3,) m is the mean of the marker set's ``club_head`` markers
present in frame k (frames with none are gaps); it gives heights.

One club-head speed, used for every speed this module reports (peak, before and after
impact): the interval speed s[k] = |u[k]|, u[k] the mean over the club-head markers seen
in both frames k−1 and k of their displacement (x_m[k] − x_m[k−1]) · rate: the chord
speed over the frame interval (k−1, k), indexed by its later frame (NaN at k = 0 and
where no marker is seen at both ends). With every marker seen, u[k] = (p[k] − p[k−1]) ·
rate; a marker that drops out leaves the interval's velocity the mean of the others',
where differencing p would jump by the distance between the two sets' centres (a
centimetre or more, several m/s at 360 Hz). The functions below take either the point
(F, 3) or the markers (F, M, 3).

Impact (ball contact) is the club-head velocity discontinuity:
- the search runs on ``search_speeds`` (the median of the markers' own interval speeds
  where three or more are seen, so that one marker's glitch moves nothing); the fast
  intervals are those at ≥ half the peak; the contact pair is the pair of consecutive
  intervals (k−1, k), (k, k+1) whose speed drop s[k] − s[k+1] is the largest among
  pairs whose first interval is fast and whose drop the head keeps (``_lasting_drop``);
  contact in a gap of the markers, a capture that ends at it and a drop too small for a
  ball are refused (BadInput);
- contact at a fraction α of an interval makes that interval's speed a mix of the
  speeds before and after, so the drop is split over two pairs: (1 − α)Δ into the
  straddling interval and αΔ out of it. The straddling interval is therefore (k, k+1)
  when the next drop s[k+1] − s[k+2] is at least the previous one s[k−1] − s[k], else
  (k−1, k). ``impact_frame`` f is the last frame before contact: the straddling interval
  is (f, f+1);
- the time inside it: with the interval velocities u[j] = (p[j] − p[j−1]) · rate (the
  velocity at each interval's middle for a constant acceleration), the velocity before
  contact is extrapolated linearly from u[f−1], u[f] and the one after from u[f+2],
  u[f+3]; the displacement over the straddling interval is
  α v̄_pre(α) + (1 − α) v̄_post(α) = u[f+1], with v̄_pre, v̄_post the mean extrapolated
  velocities over the parts before and after contact. α is the 3-D least-squares
  solution (a one-dimensional search over α); impact_s = (f + α) / rate;
- its uncertainty: the equation has three components and one unknown, so its residual
  r (m/s) estimates the velocity error per component, |r|/√2 (marker noise and the
  model's error, assumed the same in every direction), giving (|r|/√2) / |dm/dα| with m(α)
  the left-hand side; σ is the larger of that misfit spread and the quadrature sum of
  (a) the marker noise (per-component σ_p from the fourth differences of p over the fast
  intervals before contact) carried through the linearised α and (b) MODEL_MARGIN × the
  leading error of the linear extrapolations, ½ |Δ²u| x (x + 1) for an extrapolation by
  x intervals (conservative under noise: Δ²u carries noise too); capped at half a
  frame. When α falls outside [0, 1], or a neighbouring interval is missing, the
  estimate is not trusted: the middle of the straddling interval, ± half a frame;
- pre-impact speed s[f] (the last interval wholly before contact), post-impact speed
  s[f+2] (the first interval wholly after it); s[f+1] straddles the contact. All three
  are measured (label ``measured``); impact_height_m is the club-head height linearly
  interpolated between frames f and f+1 at α; sole_clearance_m how far above the height
  it rested at during address the club head stays through contact (frames f to f+2,
  each club-head marker against its own address height, the least): below zero, beyond
  the markers' noise, the head met the ground after the ball.

The other events locate frames, not speeds, with the frame speed (central difference over
frames k−1, k+1 where both are valid, one-sided at the edge of a valid run):
- backswing: the frames up to the last frame before contact whose height is in the upper
  half between the impact height and the highest point before impact;
- top of backswing: the slowest frame of the backswing (the club reverses direction);
- takeaway: the last still frame (frame speed < capture/still_speed) before the club first
  reaches the backswing; address: the middle of the still interval ending there.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.core.errors import BadInput
from harness.core.tolerances import lookup

if TYPE_CHECKING:
    from harness.capture.ingest import Capture


@dataclass
class SwingEvents:
    address_s: float
    takeaway_s: float
    top_s: float
    impact_s: float
    impact_sigma_s: float
    address_frame: int
    takeaway_frame: int
    top_frame: int
    impact_frame: int                   # last frame before ball contact
    peak_speed_mps: float               # max interval speed
    clubhead_speed_pre_impact_mps: float    # interval (impact_frame − 1, impact_frame)
    clubhead_speed_post_impact_mps: float   # interval (impact_frame + 1, impact_frame + 2)
    clubhead_speed_across_impact_mps: float  # interval (impact_frame, impact_frame + 1)
    impact_trusted: bool                # False: the middle of the interval ± half a frame
    impact_height_m: float
    label: str                          # "measured"
    method: str
    # m: how far the club head came down at contact against where it rested at address
    # (per club-head marker, its lowest height over the contact frame and the two after
    # it less its median height over the still address frames; the least over the
    # markers): below zero (beyond the markers' noise) when the head came down into the
    # ground it was soled on (turf after the ball)
    sole_clearance_m: float = float("nan")

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Impact:
    """Ball contact inside the interval (frame, frame + 1): t_s ± sigma_s (s); alpha the
    fraction of that interval before contact; speeds m/s (interval speeds); residual_mps
    the least-squares misfit |r| of the velocity equation (module doc)."""
    frame: int
    t_s: float
    sigma_s: float
    alpha: float
    trusted: bool
    speed_pre_mps: float
    speed_across_mps: float
    speed_post_mps: float
    drop_mps: float
    residual_mps: float
    noise_sd_m: float


def across_shaft(head: np.ndarray, shaft: np.ndarray) -> np.ndarray:
    """(F,) m: at each frame, the distance of the point head (F, 3) [m] (the club-head
    point) from the line through the shaft markers shaft (F, k ≥ 2, 3) [m] (their
    principal axis); NaN where a point is missing. A rigid club keeps it constant; a
    shaft bending below its markers changes it by the head's deflection across them."""
    head, shaft = np.asarray(head, float), np.asarray(shaft, float)
    out = np.full(len(head), np.nan)
    ok = np.isfinite(head).all(axis=1) & np.isfinite(shaft).all(axis=(1, 2))
    if ok.any():
        c = shaft[ok].mean(axis=1)                                   # (n, 3)
        d = np.linalg.svd(shaft[ok] - c[:, None, :])[2][:, 0]        # principal axes
        r = head[ok] - c
        out[ok] = np.linalg.norm(r - np.sum(r * d, axis=1)[:, None] * d, axis=1)
    return out


def club_head_markers(capture: Capture) -> np.ndarray:
    """(F, M, 3) m the usable club-head markers (NaN where a marker is not seen)."""
    labels = capture.usable(capture.markerset.club_head)
    if not labels:
        raise BadInput(capture.source, "no usable club-head marker for swing events")
    return np.stack([capture.marker(l) for l in labels], axis=1)


def _markers(p: np.ndarray) -> np.ndarray:
    """(F, M, 3): p itself, or the point p (F, 3) as one marker."""
    p = np.asarray(p, float)
    return p[:, None, :] if p.ndim == 2 else p


def club_head_point(capture: Capture) -> np.ndarray:
    """(F, 3) m mean of the usable club-head markers per frame (NaN where none)."""
    P = club_head_markers(capture)
    with np.errstate(invalid="ignore"):
        n = np.isfinite(P).all(axis=2).sum(axis=1)
        mean = np.nansum(np.where(np.isfinite(P), P, 0.0), axis=1) / np.maximum(n, 1)[:, None]
    mean[n == 0] = np.nan
    return mean


def displacements(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), 3) m: the mean displacement from frames a to frames b (index arrays of one
    length) of the markers seen in both (p (F, M, 3) or the point (F, 3)); NaN where
    none is."""
    P = _markers(p)
    d = P[b] - P[a]                                           # (n, M, 3)
    seen = np.isfinite(d).all(axis=2)                         # (n, M)
    n = seen.sum(axis=1)
    out = np.where(seen[..., None], d, 0.0).sum(axis=1) / np.maximum(n, 1)[:, None]
    out[n == 0] = np.nan
    return out


def interval_velocities(p: np.ndarray, rate_hz: float) -> np.ndarray:
    """(F, 3) m/s u[k]: the mean over the markers seen in frames k−1 and k of
    (x[k] − x[k−1]) · rate (p (F, M, 3), or the point (F, 3)); NaN at k = 0 and where no
    marker is seen at both ends."""
    F = len(p)
    u = np.full((F, 3), np.nan)
    if F > 1:
        k = np.arange(1, F)
        u[1:] = displacements(p, k - 1, k) * rate_hz
    return u


def interval_speeds(p: np.ndarray, rate_hz: float) -> np.ndarray:
    """(F,) m/s s[k] = |p[k] − p[k−1]| · rate, the one club-head speed of this module (NaN
    at k = 0 and across gaps)."""
    return np.linalg.norm(interval_velocities(p, rate_hz), axis=1)


def speeds_around(p: np.ndarray, k: int, rate_hz: float) -> tuple:
    """(before, after) m/s: ``interval_speeds`` of p (F, 3) or (F, M, 3) [m] over the frame
    interval (k − 1, k), the last before an event after frame k, and over (k + 1, k + 2),
    the first that does not hold it (NaN past the last frame)."""
    s = interval_speeds(p, rate_hz)
    return float(s[k]), (float(s[k + 2]) if k + 2 < len(p) else float("nan"))


def speeds(p: np.ndarray, rate_hz: float) -> np.ndarray:
    """(F,) m/s frame speed of p (F, 3) or (F, M, 3): central differences (the markers
    seen in frames k−1 and k+1) where frames k−1, k, k+1 each see a marker; one-sided at
    the edges of such a run; NaN elsewhere. Locates still and turning frames only;
    reported speeds are ``interval_speeds``."""
    P = _markers(p)
    F = len(P)
    valid = np.isfinite(P).all(axis=2).any(axis=1)
    k = np.flatnonzero(valid)
    a = np.where((k > 0) & valid[np.maximum(k - 1, 0)], k - 1, k)
    b = np.where((k + 1 < F) & valid[np.minimum(k + 1, F - 1)], k + 1, k)
    s = np.full(F, np.nan)
    m = b > a
    s[k[m]] = np.linalg.norm(displacements(P, a[m], b[m]), axis=1) * rate_hz / (b[m] - a[m])
    return s


_ALPHAS = np.linspace(-0.5, 1.5, 4001)
# The contact-time error of an exact, noise-free circular swing is 0.95–1.05 × the leading
# extrapolation term of _alpha_fit; the margin on it is in the tolerance table.
MODEL_MARGIN = lookup("capture", "impact_time_margin").atol


def _noise_sd(p: np.ndarray, frames: np.ndarray) -> float:
    """m, per-component noise of the markers' mean (p (F, 3), or (F, M, 3): each marker's
    noise over √M) estimated from the fourth differences over ``frames`` (a smooth swing
    contributes ≈ h⁴·d⁴p/dt⁴, 0.1 mm at 50 m/s and 360 Hz; white noise σ gives variance
    70 σ²); robust (median absolute value / 0.6745)."""
    P = _markers(p)
    if frames.size < 5:
        return 0.0
    d4 = np.diff(P[frames], n=4, axis=0)                     # (n, M, 3)
    d4 = d4[np.isfinite(d4).all(axis=2)].ravel()
    sd = float(np.median(np.abs(d4)) / 0.6745 / math.sqrt(70.0)) if d4.size else 0.0
    return sd / math.sqrt(P.shape[1])


def _alpha_fit(u: np.ndarray, f: int, sd_p: float, rate_hz: float):
    """(α, |r| m/s, σ_α in frames) for contact inside interval (f, f+1) (module doc), or
    None when a needed interval velocity is missing."""
    idx = (f - 2, f - 1, f, f + 1, f + 2, f + 3, f + 4)
    if idx[0] < 1 or idx[-1] >= len(u) or not np.isfinite(u[list(idx)]).all():
        return None
    u0, u1, u2, um, u3, u4, u5 = (u[i] for i in idx)
    a_pre, a_post = u2 - u1, u4 - u3            # velocity change per frame (× 1 frame)
    A = _ALPHAS[:, None]
    # mean extrapolated velocity over [f, f + α] and over [f + α, f + 1]: offsets (frames)
    # from the middles of intervals (f−1, f) at f − ½ and (f+1, f+2) at f + 3/2
    x_pre, x_post = 0.5 + 0.5 * A, 1.0 - 0.5 * A
    v_pre = u2 + a_pre * x_pre
    v_post = u3 - a_post * x_post
    m = A * v_pre + (1 - A) * v_post
    res = np.linalg.norm(m - um, axis=1)
    i = min(max(int(np.argmin(res)), 1), len(_ALPHAS) - 2)
    al = float(_ALPHAS[i])
    dm = (m[i + 1] - m[i - 1]) / (_ALPHAS[i + 1] - _ALPHAS[i - 1])
    g = float(np.linalg.norm(dm))
    if g == 0:
        return None
    xp, xq = 0.5 + 0.5 * al, 1.0 - 0.5 * al
    # (1) marker noise: α ≈ ê·(u_m − m)/|dm/dα| is linear in the interval velocities with
    # these weights; each u is a difference of two positions (weights carried over)
    w_u = np.array([0.0, -al * xp, al * (1 + xp), -1.0, (1 - al) * (1 + xq), -(1 - al) * xq,
                    0.0])
    w_u = -w_u  # sign irrelevant for a spread
    w_p = np.r_[w_u, 0.0] - np.r_[0.0, w_u]      # positions f−3 … f+4
    s_noise = sd_p * rate_hz * float(np.linalg.norm(w_p)) / g
    # (2) the extrapolations' error: a linear extrapolation by x intervals misses
    # ½ Δ²u · x (x + 1) of a velocity with constant second difference Δ²u; twice that
    # leading term covers the neglected ones (MODEL_MARGIN)
    e_pre = 0.5 * float(np.linalg.norm(u2 - 2 * u1 + u0)) * xp * (xp + 1)
    e_post = 0.5 * float(np.linalg.norm(u5 - 2 * u4 + u3)) * xq * (xq + 1)
    s_model = MODEL_MARGIN * (al * e_pre + (1 - al) * e_post) / g
    # (3) the misfit of the three components (two beyond α), per component
    s_res = float(res[i]) / math.sqrt(2.0) / g
    return al, float(res[i]), max(math.hypot(s_noise, s_model), s_res)


def search_speeds(p: np.ndarray, rate_hz: float) -> np.ndarray:
    """(F,) m/s the interval speeds ball contact is searched on: where at least three
    club-head markers are seen at both ends of an interval, the median of their own
    interval speeds (one marker's glitch, a swap or a ghost, moves none of them);
    elsewhere ``interval_speeds``."""
    P = _markers(p)
    s = interval_speeds(P, rate_hz)
    if P.shape[1] < 3 or len(P) < 2:
        return s
    each = np.linalg.norm(P[1:] - P[:-1], axis=2) * rate_hz          # (F − 1, M)
    rows = np.flatnonzero(np.isfinite(each).sum(axis=1) >= 3)
    if rows.size:
        s[1 + rows] = np.nanmedian(each[rows], axis=1)
    return s


def _lasting_drop(s: np.ndarray, drop: np.ndarray, kept: float):
    """The pair index k of the largest speed drop s[k] − s[k+1] (``drop`` (F,) m/s, −inf
    where no pair) that lasts: the median speed of the three intervals before the pair,
    s[k−3 … k−1], exceeds that of the three after it and its neighbour, s[k+2 … k+4], by
    at least ``kept`` × the drop. A ball slows the head for good, a step; a marker
    glitch of one frame raises one interval's speed and lowers the next, and the speed
    is back within a few frames. A pair whose medians cannot be formed (a gap, the
    capture's end) is taken as it is: the rules after it refuse it when it cannot be
    placed. None when no pair lasts."""
    for k in np.argsort(-drop, kind="stable"):
        if not np.isfinite(drop[k]):
            return None
        before, after = s[max(k - 3, 0):k], s[k + 2:k + 5]
        if not (np.isfinite(before).any() and np.isfinite(after).any()):
            return int(k)
        if np.nanmedian(before) - np.nanmedian(after) >= kept * drop[k]:
            return int(k)
    return None


def _refuse_contact_in_a_gap(s: np.ndarray, fast: np.ndarray, best: float, where: str):
    """BadInput when the club-head markers are unseen somewhere in the fast part of the
    swing (between its first and last fast interval, s (F,) m/s interval speeds) and the
    speed drops across that gap by at least ``best`` [m/s], the largest drop between two
    seen intervals: the contact may lie in the gap, where no frame locates it."""
    idx = np.flatnonzero(fast)
    if idx.size < 2:
        return
    lo, hi = idx[0], idx[-1]
    unseen = ~np.isfinite(s[lo:hi + 1])
    starts = np.flatnonzero(unseen & ~np.r_[False, unseen[:-1]]) + lo
    ends = np.flatnonzero(unseen & ~np.r_[unseen[1:], False]) + lo
    for g0, g1 in zip(starts, ends):
        across = float(s[g0 - 1] - s[g1 + 1])
        if across >= best:
            gap = f"frame {g0}" if g1 - 1 == g0 else f"frames {g0}–{g1 - 1}"
            raise BadInput(where, f"the club-head markers are not seen in {gap}, "
                           f"in the fast part of the swing, and the club head is {across:.1f} "
                           f"m/s slower after them (the largest drop between seen frames is "
                           f"{best:.1f} m/s): ball contact may lie there, where no frame "
                           f"locates it")


def impact(p: np.ndarray, rate_hz: float, where: str = "club head") -> Impact:
    """Ball contact from the club-head markers p (F, M, 3), or their mean point (F, 3),
    [m] at rate_hz (module doc). The contact is searched on ``search_speeds`` (a marker's
    glitch does not move it); the speeds reported are ``interval_speeds``."""
    s_rep = interval_speeds(p, rate_hz)
    s = search_speeds(p, rate_hz)
    if not np.isfinite(s).any():
        raise BadInput(where, "club-head markers never seen in two consecutive frames")
    peak = float(np.nanmax(s))
    drop = np.full(len(s), -np.inf)
    with np.errstate(invalid="ignore"):
        fast = np.isfinite(s) & (s >= lookup("capture", "impact_fast_fraction").atol * peak)
        ok = fast[:-1] & np.isfinite(s[1:])
    drop[:-1][ok] = s[:-1][ok] - s[1:][ok]
    if not np.isfinite(drop).any():
        raise BadInput(where, "no pair of consecutive fast club-head intervals: no impact found")
    least = lookup("capture", "impact_min_drop").atol
    k = _lasting_drop(s, drop, lookup("capture", "impact_drop_kept").atol)
    if k is None:
        raise BadInput(where, "every drop of club-head speed in the fast part of the swing "
                              "is made up within a few frames: no ball contact (a marker "
                              "glitch is no contact)")
    _refuse_contact_in_a_gap(s, fast, float(drop[k]), where)

    def d(j: int) -> float:
        return float(s[j] - s[j + 1]) if 1 <= j and j + 1 < len(s) and \
            np.isfinite(s[j]) and np.isfinite(s[j + 1]) else -np.inf
    if not np.isfinite(d(k + 1)):
        raise BadInput(where, f"the club head is not seen in the frame after its largest "
                       f"speed drop ({drop[k]:.1f} m/s, frames {k - 1}–{k + 1}): the capture "
                       f"ends there or the markers are lost, so no contact can be placed")
    f = k if d(k + 1) >= d(k - 1) else k - 1
    if not s[f] - s[f + 2] >= least * s[f]:
        raise BadInput(where, f"the club head's largest lasting speed drop is "
                       f"{100 * (s[f] - s[f + 2]) / s[f]:.1f} % over frames {f - 1}–{f + 2}, "
                       f"under the {100 * least:g} % ball contact takes: no ball contact "
                       f"(the capture may end before it, or the ball was missed)")
    u = interval_velocities(p, rate_hz)
    before = np.flatnonzero(fast[:f + 1])
    sd_p = _noise_sd(p, np.arange(before[0] - 1, f + 1) if before.size else before)
    fit = _alpha_fit(u, f, sd_p, rate_hz)
    half = 0.5
    if fit is not None and 0.0 <= fit[0] <= 1.0:
        alpha, r, sig = fit
        sig = min(sig, half)
        trusted = True
    else:
        alpha, r, sig, trusted = 0.5, (fit[1] if fit else float("nan")), half, False

    def sp(j: int) -> float:
        return float(s_rep[j]) if 0 <= j < len(s_rep) else float("nan")
    return Impact(frame=f, t_s=(f + alpha) / rate_hz, sigma_s=sig / rate_hz, alpha=alpha,
                  trusted=trusted, speed_pre_mps=sp(f), speed_across_mps=sp(f + 1),
                  speed_post_mps=sp(f + 2), drop_mps=float(drop[k]), residual_mps=r,
                  noise_sd_m=sd_p)


def detect(capture: Capture) -> SwingEvents:
    """The swing events (times in s from the first frame, speeds in m/s, heights in m)
    of ``capture``, from its club-head markers (F, M, 3) m (module doc)."""
    where = capture.source
    p = club_head_point(capture)
    P = club_head_markers(capture)
    r = capture.rate_hz
    s = speeds(P, r)
    if not np.isfinite(s).any():
        raise BadInput(where, "club-head markers never seen in two consecutive frames")
    still = lookup("capture", "still_speed").atol
    peak = float(np.nanmax(interval_speeds(P, r)))
    if peak < 10 * still:
        raise BadInput(where, f"club head never moves faster than {peak:.2f} m/s: no swing found")
    imp = impact(P, r, where)
    f = imp.frame
    z = p[:, 2]
    zi = z[f]
    zmax = np.nanmax(z[:f]) if f > 0 else np.nan
    if not np.isfinite(zmax) or not np.isfinite(zi) or zmax <= zi:
        raise BadInput(where, "club head never rises above its impact height: no backswing")
    upper = np.isfinite(z[:f]) & (z[:f] >= zi + 0.5 * (zmax - zi))
    rise = int(np.flatnonzero(upper)[0])
    before_rise = np.arange(rise)
    still_run = before_rise[np.isfinite(s[before_rise]) & (s[before_rise] < still)]
    if still_run.size == 0:
        raise BadInput(where, "no still club-head interval before the backswing "
                              "(address not captured)")
    takeaway = int(still_run[-1])
    start = takeaway
    while start - 1 >= 0 and np.isfinite(s[start - 1]) and s[start - 1] < still:
        start -= 1
    address = (start + takeaway) // 2
    high = np.flatnonzero(upper & np.isfinite(s[:f]))
    top = int(high[np.nanargmin(s[high])])
    z_hit = zi + imp.alpha * (z[f + 1] - zi) if f + 1 < len(z) and np.isfinite(z[f + 1]) \
        else zi
    Za, Zc = P[start:takeaway + 1, :, 2], P[f:f + 3, :, 2]              # m
    seen = np.isfinite(Za).any(axis=0) & np.isfinite(Zc).any(axis=0)    # (M,)
    clearance = (float(np.min(np.nanmin(Zc[:, seen], axis=0)
                              - np.nanmedian(Za[:, seen], axis=0)))
                 if seen.any() else float("nan"))
    heads = ", ".join(capture.usable(capture.markerset.club_head))
    return SwingEvents(
        address_s=address / r, takeaway_s=takeaway / r, top_s=top / r, impact_s=imp.t_s,
        impact_sigma_s=imp.sigma_s, address_frame=address, takeaway_frame=takeaway,
        top_frame=top, impact_frame=f, peak_speed_mps=peak,
        clubhead_speed_pre_impact_mps=imp.speed_pre_mps,
        clubhead_speed_post_impact_mps=imp.speed_post_mps,
        clubhead_speed_across_impact_mps=imp.speed_across_mps,
        impact_trusted=imp.trusted, impact_height_m=float(z_hit), label="measured",
        sole_clearance_m=clearance,
        method=(f"club head = mean of {heads}; speed = |p[k] − p[k−1]|·rate over each frame "
                f"interval (peak, before and after impact); impact = ball contact inside the "
                f"interval around the largest drop of that speed between consecutive "
                f"intervals ≥ 50% of peak (largest drop {imp.drop_mps:.1f} m/s; the side "
                f"of the larger neighbouring drop), time from the velocities "
                f"extrapolated from both sides (3-D least squares, α = {imp.alpha:.2f} of "
                f"the interval, misfit {imp.residual_mps:.2f} m/s"
                + ("" if imp.trusted else "; not trusted: middle of the interval") +
                f"), ± {imp.sigma_s * r:.2f} frame; top = slowest frame of the backswing's "
                f"upper half; takeaway = last frame below {still:g} m/s before the "
                f"backswing; address = middle of that still interval"))

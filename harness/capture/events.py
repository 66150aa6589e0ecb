"""Swing events detected from the club-head marker data. Times in s from the first frame,
speeds in m/s, heights in m (Z-up world of harness/capture/ingest.py).

The club-head point is the mean of the marker set's ``club_head`` markers present in a
frame (frames with none are gaps). Speeds are central differences over consecutive valid
frames. Definitions (each stated in the result's ``method``):
- impact: the lowest club-head point of the fast part of the downswing — among frames
  whose speed is ≥ half the swing's peak speed, the minimum height; the time is refined by
  a parabola through the height at the frames around it;
- backswing: the frames before impact whose height is in the upper half between the impact
  height and the highest point before impact;
- top of backswing: the slowest club-head frame of the backswing (the club reverses
  direction there);
- takeaway: the last still frame (speed < capture/still_speed) before the club first
  reaches the backswing; address: the middle of the still interval ending there;
- impact speed: the approach speed, a backward difference into the impact frame (a
  central difference would straddle the collision with the ball).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from harness.core.errors import BadInput
from harness.core.tolerances import lookup


@dataclass
class SwingEvents:
    address_s: float
    takeaway_s: float
    top_s: float
    impact_s: float
    address_frame: int
    takeaway_frame: int
    top_frame: int
    impact_frame: int
    peak_speed_mps: float
    impact_speed_mps: float
    impact_height_m: float
    method: str

    def to_json(self) -> dict:
        return asdict(self)


def club_head_point(capture) -> np.ndarray:
    """(F, 3) m mean of the usable club-head markers per frame (NaN where none)."""
    labels = capture.usable(capture.markerset.club_head)
    if not labels:
        raise BadInput(capture.source, "no usable club-head marker for swing events")
    P = np.stack([capture.marker(l) for l in labels])
    with np.errstate(invalid="ignore"):
        n = np.isfinite(P).all(axis=2).sum(axis=0)
        mean = np.nansum(np.where(np.isfinite(P), P, 0.0), axis=0) / np.maximum(n, 1)[:, None]
    mean[n == 0] = np.nan
    return mean


def speeds(p: np.ndarray, rate_hz: float) -> np.ndarray:
    """(F,) m/s central differences where frame k−1, k, k+1 are valid; one-sided at the
    edges of a valid run; NaN elsewhere."""
    F = len(p)
    valid = np.isfinite(p).all(axis=1)
    s = np.full(F, np.nan)
    for k in range(F):
        if not valid[k]:
            continue
        a = k - 1 if k > 0 and valid[k - 1] else k
        b = k + 1 if k + 1 < F and valid[k + 1] else k
        if b > a:
            s[k] = np.linalg.norm(p[b] - p[a]) * rate_hz / (b - a)
    return s


def detect(capture) -> SwingEvents:
    where = capture.source
    p = club_head_point(capture)
    s = speeds(p, capture.rate_hz)
    if not np.isfinite(s).any():
        raise BadInput(where, "club-head markers never seen in two consecutive frames")
    still = lookup("capture", "still_speed").atol
    peak = float(np.nanmax(s))
    if peak < 10 * still:
        raise BadInput(where, f"club head never moves faster than {peak:.2f} m/s: no swing found")
    fast = np.flatnonzero(s >= 0.5 * peak)
    z = p[:, 2]
    impact = int(fast[np.nanargmin(z[fast])])
    zi = z[impact]
    zmax = np.nanmax(z[:impact]) if impact > 0 else np.nan
    if not np.isfinite(zmax) or zmax <= zi:
        raise BadInput(where, "club head never rises above its impact height: no backswing")
    upper = np.isfinite(z[:impact]) & (z[:impact] >= zi + 0.5 * (zmax - zi))
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
    high = np.flatnonzero(upper & np.isfinite(s[:impact]))
    top = int(high[np.nanargmin(s[high])])
    # parabolic refinement of the impact time from the heights around the lowest frame
    t_imp = impact / capture.rate_hz
    if 0 < impact < len(z) - 1 and np.isfinite(z[impact - 1:impact + 2]).all():
        zm, z0, zp = z[impact - 1], z[impact], z[impact + 1]
        den = zm - 2 * z0 + zp
        if den > 0:
            t_imp += 0.5 * (zm - zp) / den / capture.rate_hz
    r = capture.rate_hz
    approach = float(np.linalg.norm(p[impact] - p[impact - 1]) * r) if impact > 0 and \
        np.isfinite(p[impact - 1]).all() else float(s[impact])
    return SwingEvents(
        address_s=address / r, takeaway_s=takeaway / r, top_s=top / r, impact_s=float(t_imp),
        address_frame=address, takeaway_frame=takeaway, top_frame=top,
        impact_frame=impact, peak_speed_mps=peak, impact_speed_mps=approach,
        impact_height_m=float(z[impact]),
        method=(f"club head = mean of {', '.join(capture.usable(capture.markerset.club_head))}; "
                f"impact = lowest point among frames ≥ 50% of peak speed (parabolic time "
                f"refinement); top = slowest frame of the backswing's upper half; takeaway = "
                f"last frame below {still:g} m/s before the backswing; address = middle of that "
                f"still interval; impact speed = backward difference"))

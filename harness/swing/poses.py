"""The golfer's pose at the swing events, for the report's stick figures, and the two
viewing directions of golf: face-on and down-the-line.

Dimensions: k skeleton points (body origins and a few model frames), K tracked markers.
Positions m in world axes (z up) or in the view frame: ``along`` the target line (from
the trail foot to the lead foot), ``towards`` the ball (horizontal, perpendicular to it)
and ``height`` above the floor, from the midpoint between the ankles at address.

Each event's pose comes from the best source that covers its frame: the fitted motion
inside the fitted window; else the calibration IK (its frames spread over the swing,
the nearest one is used and named); else the measured markers alone (no model pose).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from harness.core.spec import FixtureSpec
    from harness.model.protocol import EngineAdapter

FOOT = ("heel", "mt1", "mt5")


def skeleton(spec: FixtureSpec) -> list:
    """[(point a, point b)] the stick figure's segments: each joint's parent and child
    body origins where they differ (joint offsets), the head to the HeadTop marker frame,
    each ankle to its foot's contact points and those around the sole, the club from the
    grip body to the club head. Names are frames or bodies of ``spec``."""
    frames = {f.name for f in spec.frames}
    seg = []
    # bodies joined without an offset (one joint group's links) share one origin
    for j in spec.joints:
        if any(abs(x) > 0 for x in j.xyz):
            seg.append((j.parent, j.child))
    if "HeadTop" in frames:
        seg.append(("head", "HeadTop"))
    for side in "lr":
        pts = [f"{side}_{p}_contact" for p in FOOT]
        if all(p in frames for p in pts):
            seg += [(f"{side}_foot", pts[0]), (f"{side}_foot", pts[1]),
                    (pts[0], pts[1]), (pts[1], pts[2]), (pts[2], pts[0])]
    if "club_head_centre" in frames:
        seg.append(("club", "club_head_centre"))
    return seg


def points(adapter: EngineAdapter, q: NDArray[np.float64],
           segments: Sequence[tuple[str, str]]) -> dict:
    """{name: (3,) m world position} of every point the segments name, at q."""
    names = sorted({n for s in segments for n in s})
    P = adapter.frame_poses(q, names)[:, :3]
    return {n: P[i].tolist() for i, n in enumerate(names)}


def view_frame(ankle_l: NDArray[np.float64], ankle_r: NDArray[np.float64],
               club_head: NDArray[np.float64], floor: float) -> dict:
    """The view axes from the ankles and the club head at address [m, world]: ``along``
    the horizontal unit vector from the trail (right) ankle to the lead (left) one, the
    target line of a right-handed golfer; ``towards`` the horizontal unit vector
    perpendicular to it on the club head's side (the ball's); the origin the ankles'
    midpoint on the floor z = floor."""
    a = np.asarray(ankle_l, float) - np.asarray(ankle_r, float)
    a[2] = 0.0
    along = a / np.linalg.norm(a)
    tow = np.cross([0.0, 0.0, 1.0], along)
    o = 0.5 * (np.asarray(ankle_l, float) + np.asarray(ankle_r, float))
    o[2] = floor
    if club_head is not None and np.all(np.isfinite(club_head)) \
            and float((np.asarray(club_head) - o) @ tow) < 0:
        tow = -tow
    return {"origin_m": o.tolist(), "along": along.tolist(), "towards": tow.tolist(),
            "what": "along: horizontal, trail ankle → lead ankle at address (the target "
                    "line); towards: horizontal, perpendicular, on the club head's side "
                    "(the ball's); height: above the floor; origin: the ankles' midpoint "
                    "at address, on the floor"}


def project(view: dict, P: NDArray[np.float64]) -> np.ndarray:
    """(..., 3) → (..., 3) [along, towards, height] m of world points P."""
    P = np.asarray(P, float) - np.asarray(view["origin_m"])
    return np.stack([P @ np.asarray(view["along"]), P @ np.asarray(view["towards"]),
                     P[..., 2]], axis=-1)

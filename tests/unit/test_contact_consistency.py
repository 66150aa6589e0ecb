"""The swing fit's per-interval contact consistency (harness/swing/consistency.py) against
answers worked out by hand: polygons with points known inside and outside, a centre of
pressure of known forces, and synthetic kinematics and forces with violations planted in
known intervals (and none elsewhere)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from harness.core.tolerances import lookup
from harness.swing import consistency as cc

SQUARE = [(0, 0), (1, 0), (1, 1), (0, 1), (0.5, 0.5), (0.5, 0.0)]  # interior, edge points


def test_convex_hull_drops_interior_and_collinear_points():
    h = cc.convex_hull(SQUARE)
    assert sorted(map(tuple, h)) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    # counter-clockwise: positive signed area 1
    x, y = h[:, 0], h[:, 1]
    assert 0.5 * float(x @ np.roll(y, -1) - y @ np.roll(x, -1)) == pytest.approx(1.0)
    assert cc.convex_hull([(2, 3), (2, 3)]).shape == (1, 2)
    assert sorted(map(tuple, cc.convex_hull([(0, 0), (1, 1), (2, 2)]))) == [(0, 0), (2, 2)]


@pytest.mark.parametrize("p, d", [((0.5, 0.5), 0.0), ((1.0, 0.3), 0.0), ((0, 0), 0.0),
                                  ((2.0, 0.5), 1.0), ((0.5, -0.25), 0.25),
                                  ((2.0, 2.0), math.sqrt(2)), ((-3.0, 5.0), 5.0)])
def test_distance_outside_the_unit_square(p, d):
    assert cc.outside_distance(p, cc.convex_hull(SQUARE)) == pytest.approx(d, abs=1e-15)


def test_distance_outside_a_segment_and_a_point():
    seg = cc.convex_hull([(0, 0), (0.2, 0)])                  # a heel lifted: two points
    assert cc.outside_distance((0.1, 0.0), seg) == 0.0
    assert cc.outside_distance((0.1, 0.03), seg) == pytest.approx(0.03)
    assert cc.outside_distance((0.5, 0.4), seg) == pytest.approx(0.5)  # 3-4-5 from (0.2, 0)
    assert cc.outside_distance((3.0, 4.0), cc.convex_hull([(0, 0)])) == pytest.approx(5.0)


def test_centre_of_pressure_of_known_forces():
    # two points on the floor: 300 N at x = 0 and 100 N at x = 1 → x = 0.25
    P = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    f = np.array([[0.0, 0.0, 300.0], [0.0, 0.0, 100.0]])
    assert cc.centre_of_pressure(P, f, 0.0) == pytest.approx([0.25, 0.0])
    # a point 10 mm below the floor pushed forward by 50 N: the floor-plane CoP moves
    # by depth × f_x / f_z = 0.01 × 50 / 100 = 5 mm
    c = cc.centre_of_pressure([[0.0, 0.0, -0.01]], [[50.0, 0.0, 100.0]], 0.0)
    assert c == pytest.approx([0.005, 0.0])
    # independent check: the forces' moment about the CoP on the floor has no horizontal part
    rng = np.random.default_rng(3)
    P = rng.uniform(-0.1, 0.1, (3, 3)) + [0, 0, 0.02]
    f = np.c_[rng.normal(size=(3, 2)) * 20, rng.uniform(50, 300, 3)]
    c = cc.centre_of_pressure(P, f, 0.02)
    M = np.cross(P - [c[0], c[1], 0.02], f).sum(axis=0)
    assert np.abs(M[:2]).max() <= 1e-12 * np.abs(np.cross(P, f)).max()
    assert cc.centre_of_pressure(P, -f, 0.02) is None          # no vertical load


def _synthetic(N=5, S=3):
    """Six points (three per foot) resting still on the floor z = 0, every point in stick,
    each carrying 100 N straight up: no violation anywhere."""
    foot = np.array([[0.0, 0.0], [0.2, 0.04], [0.2, -0.04]])       # heel, mt1, mt5 [m]
    xy = np.r_[foot + [0, 0.15], foot - [0, 0.15]]                  # left, right
    P = np.zeros((N - 1, S, 6, 3))
    P[..., :2] = xy
    V = np.zeros_like(P)
    stick = np.ones((N, 6), bool)
    f = np.zeros((N, 6, 3))
    f[:, :, 2] = 100.0
    return P, V, stick, f, ["l", "l", "l", "r", "r", "r"]


def test_a_still_standing_contact_has_no_violation():
    P, V, stick, f, foot = _synthetic()
    r = cc.per_interval(P, V, stick, f, 0.0, 0.8, foot)
    for k in ("penetration", "slip_speed", "negative_normal_force", "friction_ratio",
              "cop_outside"):
        assert np.all(r[k] == 0.0), k
    # each foot's CoP: the mean of its three points (equal loads)
    assert r["cop"][0, 0] == pytest.approx([0.4 / 3, 0.15])
    # nothing to point at: a worst value of 0 names no point and no interval
    s = cc.summarise(r | {"t": np.arange(5) * 0.01}, list("abcdef"))
    for q in s["quantities"].values():
        assert q["worst"] == {"value": 0.0, "where": None, "interval": None, "t0_s": None,
                              "t1_s": None}
        assert q["intervals_exceeding"] == 0 and q["exceeding"] == []


def test_planted_violations_are_found_in_their_intervals_only():
    P, V, stick, f, foot = _synthetic()
    mu = 0.8
    P[1, 1, 3, 2] = -0.007            # right heel 7 mm under the floor mid-interval 1
    V[2, 2, 4, 0] = 0.06              # right mt1 slides at 60 mm/s at the end of interval 2
    V[0, 1, 2, 1] = 0.5               # left mt5 fast, but in flight in interval 0: no slip
    stick[0, 2] = False
    f[0, 2] = 0.0
    f[3, 0, 2] = -5.0                 # left heel pulls 5 N at frame 3 (intervals 2 and 3)
    f[0, 5, :2] = [90.0, 0.0]         # right mt5: |f_t| 90 N on 100 N, μ 0.8 → 1.125
    r = cc.per_interval(P, V, stick, f, 0.0, mu, foot)
    pen = np.zeros((4, 6))
    pen[1, 3] = 0.007
    assert r["penetration"] == pytest.approx(pen)
    assert math.isnan(r["slip_speed"][0, 2]) and r["slip_speed"][0, 0] == 0.0
    assert r["slip_speed"][2, 4] == pytest.approx(0.06)
    assert np.nansum(r["slip_speed"]) == pytest.approx(0.06)
    neg = np.zeros((4, 6))
    neg[2:4, 0] = 5.0
    assert r["negative_normal_force"] == pytest.approx(neg)
    assert r["friction_ratio"][0, 5] == pytest.approx(90 / (mu * 100))
    assert r["friction_ratio"][1:, 5].max() == 0.0
    # the pulling heel puts the left foot's CoP ahead of its toes at frame 3:
    # x = (0·(−5) + 0.2·100 + 0.2·100) / 195 = 0.2051 m, beyond the mt1–mt5 edge at 0.2
    x = 40.0 / 195.0
    assert r["cop"][3, 0, 0] == pytest.approx(x)
    assert r["cop_outside"][2, 0] == pytest.approx(x - 0.2)
    assert r["cop_outside"][3, 0] == pytest.approx(x - 0.2)
    assert r["cop_outside"][[0, 1], 0] == pytest.approx([0.0, 0.0])
    # counted against the table's thresholds: one interval each, two for the pull
    s = cc.summarise(r | {"t": np.arange(5) * 0.01}, [f"p{k}" for k in range(6)])
    q = s["quantities"]
    assert lookup("swing", "contact_penetration").atol < 0.007
    assert q["penetration"]["intervals_exceeding"] == 1
    assert q["penetration"]["worst"] == {"value": pytest.approx(7.0), "where": "p3",
                                         "interval": 1, "t0_s": 0.01, "t1_s": 0.02}
    assert lookup("swing", "contact_slip_speed").atol < 0.06
    assert q["slip_speed"]["intervals_exceeding"] == 1
    assert q["slip_speed"]["exceeding"][0]["interval"] == 2
    assert q["negative_normal_force"]["intervals_exceeding"] == 2
    assert q["friction_ratio"]["intervals_exceeding"] == 1
    assert q["friction_ratio"]["exceeding"][0]["where"] == "p5"
    # 5.1 mm outside against a 5 mm threshold
    assert x - 0.2 > lookup("swing", "contact_cop_outside").atol
    assert q["cop_outside"]["intervals_exceeding"] == 2
    assert q["cop_outside"]["worst"]["where"] == "left foot"
    h = cc.headline(s)
    assert h["contact_interval_worst_penetration_mm"] == pytest.approx(7.0)
    assert h["contact_intervals_exceeding_negative_normal_force"] == 2
    assert h["contact_intervals"] == 4


def test_a_foot_without_load_has_no_centre_of_pressure():
    P, V, stick, f, foot = _synthetic()
    f[:, 3:] = 0.0
    stick[:, 3:] = False
    r = cc.per_interval(P, V, stick, f, 0.0, 0.8, foot)
    assert np.isnan(r["cop_outside"][:, 1]).all() and np.isnan(r["cop"][:, 1]).all()
    assert np.isnan(r["slip_speed"][:, 3:]).all()
    s = cc.summarise(r | {"t": np.arange(5) * 0.01}, list("abcdef"))
    assert s["quantities"]["cop_outside"]["intervals_evaluated"] == 4

"""The segmented replay's tiling and its flags (harness/swing/segments.py), on knots built
here: the segments tile the knots, none is longer than the horizon, the impact is never a
boundary, and the flags follow the per-segment figures."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from harness.swing import segments


def _knots(P: int = 4) -> tuple[np.ndarray, int]:
    """Lobatto-like knots: 60 groups of P intervals on [0, 0.3] s (5 ms each, unevenly
    spaced inside), the impact at 0.2 s repeated (the left, then the right limit).
    Returns (t, index of the left limit)."""
    pre = np.linspace(0.0, 0.2, 40 * P + 1) ** 1.05 * 0.2 / 0.2 ** 1.05
    post = np.linspace(0.2, 0.3, 20 * P + 1)
    return np.concatenate([pre, post]), pre.size - 1


@pytest.mark.parametrize("horizon", [0.0125, 0.026, 0.041, 0.5])
def test_segments_tile_the_knots_within_the_horizon(horizon):
    P = 4
    t, ke = _knots(P)
    tiles = segments.tile(t, P, horizon)
    assert tiles[0][0] == 0 and tiles[-1][1] == t.size - 1
    assert all(b0 == a1 for (_, b0), (a1, _) in zip(tiles, tiles[1:]))
    assert all(t[b] - t[a] <= horizon for a, b in tiles)
    # the impact lies strictly inside one segment, never on a boundary
    hold = [(a, b) for a, b in tiles if a < ke and ke + 1 < b]
    assert len(hold) == 1
    assert not {ke, ke + 1} & {k for ab in tiles for k in ab}
    # every phase inside a segment is whole lobatto groups (a candidate can hold it)
    for a, b in tiles:
        for lo, hi in ((a, min(b, ke)), (max(a, ke + 1), b)):
            if lo < hi:
                assert (hi - lo) % P == 0, (a, b)


def test_a_horizon_shorter_than_a_group_still_tiles():
    t, _ = _knots(4)
    tiles = segments.tile(t, 4, 1e-6)   # no boundary within it: one group at a time
    assert tiles[0][0] == 0 and tiles[-1][1] == t.size - 1
    assert all(b0 == a1 for (_, b0), (a1, _) in zip(tiles, tiles[1:]))
    # such a segment is longer than the horizon: it never passes
    seg = _section()
    seg["horizon_s"] = 0.05
    assert segments.through_impact(seg) is False


def _section() -> dict:
    eng = ["drake", "mujoco"]
    seg = [{"index": i, "t_s": [0.1 * i, 0.1 * (i + 1)], "holds_impact": i == 1,
            "limit_m": 0.012, "records": {"passed": 3, "total": 3},
            "engines": {e: {"fit_rms_m": 1e-4, "fit_max_m": 1e-3, "markers_rmse_m": 0.01}
                        for e in eng}} for i in range(3)]
    return {"engines": eng, "list": seg, "horizon_s": 0.1}


def test_the_flags_follow_the_segments():
    s = _section()
    assert segments.through_impact(s) is True
    assert segments.scored_window(s) == [0.0, pytest.approx(0.3)]
    for tamper in (lambda x: x["list"][1]["records"].update(passed=2),
                   lambda x: x["list"][1]["engines"].pop("mujoco"),
                   lambda x: x["list"][1]["engines"]["drake"].update(fit_rms_m=0.02),
                   lambda x: x["list"][1].update(holds_impact=False),
                   lambda x: x["list"][1].update(t_s=[0.1, 0.25])):
        bad = copy.deepcopy(s)
        tamper(bad)
        assert segments.through_impact(bad) is False
    # a segment not compared in every engine ends the scored window there
    cut = copy.deepcopy(s)
    cut["list"][2]["engines"].pop("drake")
    assert segments.scored_window(cut) == [0.0, pytest.approx(0.2)]
    assert segments.through_impact(cut) is True

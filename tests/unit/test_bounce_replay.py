"""The selected bounce schedule replayed in every engine (harness/fit/bounce_replay.py):
each engine's own dynamics, through the hybrid rollout, reproduce the closed-form bounce
(an independent solution) within the table's tolerance, and a replay of a different
restitution is caught."""
from __future__ import annotations

import pytest

from harness.fit import bounce as B
from harness.fit.bounce_replay import replay
from harness.model import registry


def _truth():
    t, *_ = B.data(0, B.SIGMA)
    y, _, _, times, _ = B.flow(t, B.TRUTH["v0_mps"], B.TRUTH["restitution"], B.true_onset())
    return t, y, times


def test_every_engine_replays_the_closed_form_bounce():
    t, y, times = _truth()
    out, heights = replay(t, B.TRUTH["h0_m"], B.TRUTH["v0_mps"], B.TRUTH["restitution"], y,
                          times, dt=B.H)
    assert out["passed"], out["engines"]
    assert set(out["engines"]) == set(registry.ENGINES) - set(out["unavailable"])
    for name, e in out["engines"].items():
        assert len(e["impacts_s"]) == len(times) == 3, name
        assert e["max_height_diff_m"] <= out["tolerance"]["height_m"], name
        assert heights[name].shape == t.shape


@pytest.mark.parametrize("scale", [0.99, 1.01])
def test_a_replay_of_another_restitution_fails(scale):
    """The engines bounce with e·scale; compared against the flow of e they must fail (the
    second rebound differs by ~1 cm in height and ~1e-2 s in time)."""
    t, y, times = _truth()
    out, _ = replay(t, B.TRUTH["h0_m"], B.TRUTH["v0_mps"], scale * B.TRUTH["restitution"], y,
                    times, engines=["pinocchio", "mujoco"], dt=B.H)
    assert not out["passed"]
    assert all(e["max_height_diff_m"] > 1e-4 for e in out["engines"].values())

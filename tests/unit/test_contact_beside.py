"""The contact suite run in a second process beside the stages and the replays
(harness/api.py ``_ContactSuite``) gives the records and arrays of the suite run in this
process: the same statuses, figures and reasons, and bit-identical arrays, on the three
contact fixtures with two engines; a replay handed to that process gives the records,
arrays and manifest section of the same replay run here."""
from __future__ import annotations

import numpy as np

from harness import api
from harness.core.records import Record
from harness.model.prepared import prepare_fixture


def _key(r: Record):
    return r.to_json()


def test_the_suite_in_a_second_process_equals_the_suite_here():
    models = [prepare_fixture(n) for n in ("ball", "box", "rod")]
    engines = ["mujoco", "pinocchio"]
    said = []
    beside = api._ContactSuite(models, engines, said.append, beside=True)
    assert beside.running, said  # this machine has two cores: the second process ran it
    here = api._ContactSuite(models, engines, said.append, beside=False)
    assert not here.running
    rb, rh = beside.records(), here.records()
    assert rh and [_key(r) for r in rb] == [_key(r) for r in rh]
    ab, ah = beside.arrays(), here.arrays()
    assert list(ab) == list(ah)
    for k in ah:
        a, b = np.asarray(ah[k]), np.asarray(ab[k])
        assert a.dtype == b.dtype and a.shape == b.shape, k
        assert a.tobytes() == b.tobytes(), k
    assert any("second process" in s for s in said)


def test_a_replay_in_the_second_process_equals_the_replay_here():
    """The qualification's last replay case (free body, DOP853 reference and every engine),
    handed to the second process after its suite, against the same case replayed here."""
    from harness.stages.replay import run as replay_run
    from harness.stages.replay.synth import qualify_cases

    models = [prepare_fixture("ball")]
    engines = ["mujoco", "pinocchio"]
    case = [c for c in qualify_cases(coarse=True) if c.candidate.model.name == "free_body"]
    assert case, [c.name for c in qualify_cases(coarse=True)]
    beside = api._ContactSuite(models, engines, lambda m: None, beside=True)
    assert beside.running
    beside.hand_over(case[:1], [])
    there = beside.tail_replays()
    here = replay_run.run(case[:1], engines, [])
    assert [_key(r) for r in there.records] == [_key(r) for r in here.records]
    assert list(there.arrays) == list(here.arrays)
    for k in here.arrays:
        assert np.asarray(there.arrays[k]).tobytes() == np.asarray(here.arrays[k]).tobytes(), k
    assert there.info == here.info


def test_the_rerun_rule_is_the_replays_gate():
    """``gates`` (run the replays again) is true exactly for the contact records the
    replays' own gate (harness/stages/replay/run.py ``_blocked``) would block on, for every
    record status."""
    from harness.core.records import STATUSES
    from harness.stages.replay.run import _blocked

    for status in STATUSES:
        for a, b in (("analytic", "mujoco"), ("mujoco", "pinocchio"), ("mujoco", "")):
            r = Record(id=f"ball/contact/x/{status}", stage="contact", fixture="ball",
                       quantity="x", engine_a=a, engine_b=b, status=status)
            blocked = any(_blocked([r]))
            assert api._ContactSuite.gates([r]) == blocked, (status, a, b)

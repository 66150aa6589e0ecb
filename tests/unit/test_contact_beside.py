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


def test_a_failed_contact_record_gates_the_replays_as_a_serial_run_would():
    """The replays run beside the contact suite with the stages' gate only; when a contact
    record then turns out to block an engine (here a failed record of mujoco on the free
    body, put among the suite's real records), every replay runs again gated on it: the
    result equals the serial run's, in which the replays read that record first, and
    mujoco's free-body replay is blocked by it."""
    from types import SimpleNamespace

    from harness.stages.replay import run as replay_run
    from harness.stages.replay.synth import qualify_cases

    engines = ["mujoco", "pinocchio"]
    cases = [c for c in qualify_cases(coarse=True)
             if c.candidate.model.name in ("pendulum", "free_body")]
    assert [c.candidate.model.name for c in cases] == ["pendulum", "free_body"]
    said = []
    contact = api._ContactSuite([prepare_fixture("ball")], engines, said.append, beside=True)
    assert contact.running
    contact.hand_over(cases[-1:], [])
    bad = Record(id="free_body/contact/x/mujoco", stage="contact", fixture="free_body",
                 quantity="x", engine_a="mujoco", engine_b="", status="failed",
                 reason="a contact record that failed")
    contact.records().append(bad)
    got = api._replays(cases, engines, SimpleNamespace(records=[]), contact, None,
                       said.append)
    assert "replay: again, gated on the contact records" in said
    serial = replay_run.run(cases, engines, contact.records())
    assert [_key(r) for r in got.records] == [_key(r) for r in serial.records]
    mine = [r for r in got.records if r.fixture == "free_body" and "mujoco" in
            (r.engine_a, r.engine_b) and r.stage == "replay"]
    assert mine and all(r.status != "passed" for r in mine)
    assert any("a contact record" in r.reason or "stage contact" in r.reason for r in mine)

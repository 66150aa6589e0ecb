"""Replay through an impulsive event: a candidate whose knots repeat at the event time, the
impulse applied by each engine's own mass matrix and frame Jacobian, compared with the
closed-form motion of a free rigid body (its centre of mass moves ballistically and its
angular momentum about the centre of mass is constant, except for the jumps Λ/m and
r × Λ at the event), and pointwise across the event between engines."""
from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ENGINES, assert_bad_input

from harness.core.conventions import quat_xyzw_to_matrix
from harness.core.tolerances import lookup
from harness.model.candidate import Event, from_arrays, load, save
from harness.model.integrators import Method
from harness.model.prepared import prepare_fixture
from harness.stages.replay.cases import Case, array_key
from harness.stages.replay.run import harness_run
from harness.stages.replay.run import run as replay_run

T_E = 0.1                      # s
IMPULSE = (0.8, -0.5, 1.2)     # N·s, world axes, at the frame "marker"


def _candidate(model):
    """Zero generalized force; the body spinning and moving; one impulse at T_E."""
    t1 = np.linspace(0.0, T_E, 11)
    t2 = np.linspace(T_E, 0.2, 11)
    t = np.r_[t1, t2]
    q0 = np.array([0.1, -0.2, 1.0, 0.1, 0.2, -0.1, 1.0])
    q0[3:7] /= np.linalg.norm(q0[3:7])
    v0 = np.array([0.3, -0.1, 0.5, 1.5, -0.7, 2.0])
    return from_arrays(model, q0, v0, t, np.zeros((t.size, 6)), "zoh",
                       events=[Event(T_E, "marker", IMPULSE, "measured")])


def _com_and_momentum(model, X):
    """(N, 3) centre of mass [m] and (N, 3) angular momentum about it [kg·m²/s], world
    axes, of the free body's states X (N, 13) = [p, quat xyzw, v_B, ω_B]."""
    b = model.spec.bodies[0]
    c = np.array(b.com)
    I = np.array(b.inertia).reshape(3, 3)  # about the centre of mass, body axes
    P, H = [], []
    for x in X:
        R = quat_xyzw_to_matrix(x[3:7])
        P.append(x[0:3] + R @ c)
        H.append(R @ (I @ x[10:13]))
    return np.array(P), np.array(H)


def _closed_form(model, cand, t):
    """(P, H) [m, kg·m²/s] at the knots t of the closed-form motion (ballistic centre of
    mass, constant angular momentum about it, both jumping at T_E)."""
    m = model.spec.bodies[0].mass
    g = np.array(model.spec.gravity)
    x0 = np.r_[cand.q0, cand.v0]
    P0, H0 = _com_and_momentum(model, x0[None])
    R0 = quat_xyzw_to_matrix(cand.q0[3:7])
    c = np.array(model.spec.bodies[0].com)
    vc0 = R0 @ cand.v0[0:3] + np.cross(R0 @ cand.v0[3:6], R0 @ c)  # v_com = v_O + ω × r
    L = np.array(IMPULSE)
    after = np.zeros(t.size, bool)
    after[11:] = True  # the knots after the event (the repeated one included)
    dt = t - t[0]
    P = P0[0] + np.outer(dt, vc0) + 0.5 * np.outer(dt ** 2, g)
    P[after] += np.outer(t[after] - T_E, L / m)
    return P, after


@pytest.mark.parametrize("method", [Method("dop853", rtol=1e-12, atol=1e-12)])
def test_free_body_through_an_impulse_matches_the_closed_form(method):
    model = prepare_fixture("free_body")
    cand = _candidate(model)
    rr = replay_run([Case("impulse", cand, "agreement", method, native=True)], ENGINES)
    run = harness_run(Case("impulse", cand, "agreement", method))
    P_ref, after = _closed_form(model, cand, cand.t)
    tol = lookup("replay", "closed_form_event")
    seen = []
    for e in ENGINES:
        X = rr.arrays.get(array_key("impulse", run, e, "x"))
        if X is None:
            continue
        seen.append(e)
        P, H = _com_and_momentum(model, X)
        # the centre of mass: ballistic, and Λ/m faster after the event
        assert np.abs(P - P_ref).max() <= tol.atol, e
        # angular momentum about the centre of mass: constant on each side; the jump is
        # r × Λ with r from the centre of mass to the frame at the event
        k = 10  # the knot before the event
        assert np.allclose(H[:11], H[0], rtol=0, atol=tol.atol), e
        assert np.allclose(H[11:], H[11], rtol=0, atol=tol.atol), e
        R = quat_xyzw_to_matrix(X[k, 3:7])
        f = model.spec.frames[0]
        r = R @ (np.array(f.xyz) - np.array(model.spec.bodies[0].com))
        dH = np.cross(r, np.array(IMPULSE))
        assert np.allclose(H[11] - H[10], dH, rtol=0, atol=tol.atol), e
        # positions continuous, velocities jump
        assert np.array_equal(X[10, :7], X[11, :7])
        assert np.abs(X[11, 7:] - X[10, 7:]).max() > 0.1
    assert seen == ENGINES, f"engines that ran: {seen}"
    # every record of the stage passes: trajectories across the event, refinement gates,
    # energy balance with the impulse's work, each engine's own stepping
    bad = [(r.id, r.status, r.reason) for r in rr.records
           if r.status not in ("passed", "not_provided")]
    assert not bad, bad
    assert any(r.quantity == "native" and r.status == "passed" for r in rr.records)
    labels = rr.arrays[array_key("impulse", "labels")]
    assert labels[10].endswith("(before the event)") and labels[11].endswith("(after the event)")


def test_event_candidate_round_trips_and_bad_events_are_refused(tmp_path):
    model = prepare_fixture("free_body")
    cand = _candidate(model)
    path = save(cand, tmp_path / "c.json")
    back = load(path)
    assert back.events == cand.events
    assert np.array_equal(back.t, cand.t)
    doc = json.loads(path.read_text())

    def write(d, name):
        p = tmp_path / name
        p.write_text(json.dumps(d))
        return p

    bad = dict(doc, events=[dict(doc["events"][0], frame="nowhere")])
    assert_bad_input(load, str(write(bad, "c_frame.json")), "unknown frame 'nowhere'")
    bad = dict(doc, events=[dict(doc["events"][0], t=0.15)])
    assert_bad_input(load, str(write(bad, "c_time.json")), "not strictly increasing at index 11")
    bad = dict(doc, events=[dict(doc["events"][0], impulse=[1.0, 2.0])])
    assert_bad_input(load, str(write(bad, "c_imp.json")), "impulse must be 3 numbers")
    bad = dict(doc, events=[dict(doc["events"][0], label="guessed")])
    assert_bad_input(load, str(write(bad, "c_label.json")), "label must be one of")
    bad = {k: v for k, v in doc.items() if k != "events"}
    assert_bad_input(load, str(write(bad, "c_none.json")), "not strictly increasing at index 11")

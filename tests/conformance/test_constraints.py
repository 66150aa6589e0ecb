"""Stage 3 (holonomic constraints) across the four engines: the exact KKT answers agree,
each engine's constraint terms match finite differences and an independent
reduced-coordinate solution of the four-bar, redundancy is detected, exact native solvers
match their engine's KKT answer."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from fixtures import catalog
from harness.core.tolerances import lookup
from harness.stages.constrained import constraints as C
from harness.stages.constrained import stage as S
from tests.conftest import ENGINES, adapter, assert_close, assert_known

CFIX = catalog.constraint_names()


@pytest.fixture(scope="module")
def states():
    """Four states on each fixture's manifold, sampled with Pinocchio's kinematics."""
    out = {}
    for fx in CFIX:
        a = adapter("pinocchio", fx)
        out[fx] = S.sample_states(a.model.spec, a, 4, np.random.default_rng(7))
    return out


@pytest.fixture(scope="module")
def terms(states):
    out = {}
    for fx in CFIX:
        Q, V, TAU = states[fx]
        for e in ENGINES:
            a = adapter(e, fx)
            out[fx, e] = S.engine_terms(a.model.spec, a.model.layout, a, Q, V, TAU)
    return out


@pytest.mark.parametrize("fx", CFIX)
@pytest.mark.parametrize("pair", list(itertools.combinations(ENGINES, 2)),
                         ids=lambda p: f"{p[0]}~{p[1]}")
def test_kkt_answers_agree_across_engines(fx, pair, terms):
    a, b = (terms[fx, e] for e in pair)
    assert np.array_equal(a["keep"], b["keep"]), "engines dropped different rows"
    for k in range(a["vdot"].shape[0]):
        assert_close(a["vdot"][k], b["vdot"][k], "constrained", "constrained_vdot",
                     f"{fx} {pair} state {k} v̇")
        assert_close(a["lam"][k], b["lam"][k], "constrained", "constraint_multipliers",
                     f"{fx} {pair} state {k} λ")


@pytest.mark.parametrize("fx", CFIX)
@pytest.mark.parametrize("engine", ENGINES)
def test_kkt_answer_satisfies_the_constraint_and_the_dynamics(fx, engine, terms, states):
    """J v̇ + J̇v = 0 on the kept rows and M v̇ − Jᵀλ = f (each engine's own arrays)."""
    t = terms[fx, engine]
    for k in range(t["vdot"].shape[0]):
        J, vd = t["J"][k], t["vdot"][k]
        assert_close(J @ vd + t["drift"][k], np.zeros(J.shape[0]), "constrained",
                     "constraint_acceleration", f"{fx} {engine} acceleration constraint")
        assert_close(t["M"][k] @ vd - J.T @ t["lam"][k], t["f"][k], "constrained",
                     "constrained_vdot", f"{fx} {engine} dynamics")


@pytest.mark.parametrize("fx", CFIX)
@pytest.mark.parametrize("engine", ENGINES)
def test_drift_is_the_time_derivative_of_J_v(fx, engine, states):
    """J̇v from frame_jacobian_drift against central differences of J(q(t)) v along v."""
    a = adapter(engine, fx)
    frames = C.constraint_frames(a.model.spec)
    Q, V, _ = states[fx]
    h = 1e-6
    for q, v in zip(Q[:2], V[:2]):
        Jf, af = a.frame_jacobian_drift(q, v, frames)
        Jp, _ = a.frame_jacobian_drift(a.integrate(q, v, h), v, frames)
        Jm, _ = a.frame_jacobian_drift(a.integrate(q, v, -h), v, frames)
        assert_close((Jp - Jm) @ v / (2 * h), af, "conformance", "finite_difference",
                     f"{fx} {engine} J̇v")


@pytest.mark.parametrize("engine", ENGINES)
def test_four_bar_redundant_row_is_detected(engine, terms):
    t = terms["four_bar", engine]
    labels = C.row_labels(adapter(engine, "four_bar").model.spec)
    assert labels == ["loop.x", "loop.y", "loop.z"]
    assert t["keep"].tolist() == [[True, False, True]] * t["keep"].shape[0]
    assert np.all(t["lam"][:, 1] == 0.0)


def _planar_closure(q, L):
    """Four-bar in the x-z plane (rotation θ about y maps x̂ to (cos θ, −sin θ)): tip
    position (2,) and its Jacobian (2, 3) in closed form (no engine)."""
    phi = np.cumsum(q)
    u = np.stack([np.cos(phi), -np.sin(phi)])          # (2, 3) link directions
    du = np.stack([-np.sin(phi), -np.cos(phi)])         # d u / d phi
    p = u @ L
    J = np.stack([(du[:, i:] @ L[i:]) for i in range(3)], axis=1)
    return p, J


def test_four_bar_kkt_matches_an_independent_reduced_coordinate_solution(states, terms):
    """v = S(q) θ̇₁ with S from the closed-form planar loop closure; (Sᵀ M S) θ̈₁ =
    Sᵀ (f − M Ṡ θ̇₁) (Ṡ by central differences of the closed form); v̇ = S θ̈₁ + Ṡ θ̇₁.
    Independent of every engine's J and J̇v (M and f come from the engine)."""
    L = np.array([0.15, 0.45, 0.3])

    def S_of(q):
        _, J = _planar_closure(q, L)
        s = -np.linalg.solve(J[:, 1:], J[:, 0])
        return np.concatenate([[1.0], s])

    # the sampled states close the loop in this closed form as in the engines' poses
    on_loop = lookup("constrained", "constraint_residual").atol
    Q, V, _ = states["four_bar"]
    for e in ENGINES:
        t = terms["four_bar", e]
        for k, (q, v) in enumerate(zip(Q, V)):
            p, _ = _planar_closure(q, L)
            assert np.all(np.abs(p - [0.4, 0.0]) <= on_loop), "state not on the loop"
            Sq = S_of(q)
            th1 = v[0]
            assert_close(Sq * th1, v, "conformance", "finite_difference", "v = S θ̇₁")
            h = 1e-6
            Sdot = (S_of(q + h * v) - S_of(q - h * v)) / (2 * h)
            M, f = t["M"][k], t["f"][k]
            th1dd = Sq @ (f - M @ Sdot * th1) / (Sq @ M @ Sq)
            assert_close(t["vdot"][k], Sq * th1dd + Sdot * th1, "conformance",
                         "finite_difference", f"four_bar {e} state {k} v̇")


@pytest.mark.parametrize("fx", CFIX)
@pytest.mark.parametrize("engine", ["pinocchio", "crocoddyl"])
def test_exact_native_solvers_match_their_engine_kkt(fx, engine, terms, states):
    from harness.core.errors import NotProvided

    a = adapter(engine, fx)
    t = terms[fx, engine]
    Q, V, TAU = states[fx]
    problem = C.NativeProblem(a.model.spec, Q, V, TAU, t["J"], t["drift"], t["keep"])
    row = {"stage": S.NAME, "fixture": fx, "quantity": "native_vdot", "engine_b": ""}
    try:
        results = a.native_constrained(problem)
    except NotProvided as e:
        # the stage's not_provided row: it must be a known disagreement, for its reason
        rec = {**row, "id": f"{fx}/{S.NAME}/native_vdot/{engine}", "engine_a": engine,
               "status": "not_provided", "reason": e.why}
        assert_known([rec], complete=False)
        return
    # an exact solver that answers must be no known disagreement (else the entry is stale)
    assert_known([{**row, "id": f"{fx}/{S.NAME}/native_vdot/{engine}:{r['solver']}",
                   "engine_a": f"{engine}:{r['solver']}", "status": "passed", "reason": ""}
                  for r in results], complete=False)
    assert results and all(r["exact"] and r["law"] for r in results)
    for r in results:
        for k in range(Q.shape[0]):
            assert_close(r["vdot"][k], t["vdot"][k], "constrained", "native_vdot",
                         f"{fx} {engine}:{r['solver']} v̇")
            if r["lam"] is not None:
                assert_close(r["lam"][k], t["lam"][k], "constrained", "native_lambda",
                             f"{fx} {engine}:{r['solver']} λ")


def test_drake_sap_crash_on_a_world_body_constraint_is_reported_not_fatal():
    """Drake's SAP solver segfaults on a ball constraint involving Drake's world body.
    The adapter runs SAP in a spawned subprocess: the crash comes back as a RuntimeError
    naming the signal (the stage records it as an error row) and this process lives on."""
    from engines.drake import _drake_native_constrained_batch

    a = adapter("drake", "four_bar")
    q = np.asarray(a.model.spec.q_init)
    with pytest.raises(RuntimeError, match="SIGSEGV"):
        _drake_native_constrained_batch(a, [q], [np.zeros(3)], [np.zeros(3)],
                                        [("point", "rocker_tip", "world")])

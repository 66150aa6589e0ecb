"""Dynamics derivatives of every adapter (stage 6), on every catalog fixture:
against central differences of the same engine's own forward/inverse dynamics (the
tolerance of the engine's method), across engines, and through the stage runner. A
missing damping term must fail the check (it can fail)."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.derivatives import central_differences
from harness.core.records import measure
from harness.core.tolerances import lookup
from harness.model.prepared import prepare_fixture
from harness.stages import runner
from harness.stages.derivatives import CD_STEP, EXACT_METHODS
from tests.conftest import ENGINES, FIXTURES, adapter, assert_close

CASES = [(e, f) for f in FIXTURES for e in ENGINES]
IDS = [f"{e}-{f}" for e, f in CASES]
NAMES = {"forward": ("dvdot_dq", "dvdot_dv", "dvdot_dtau"),
         "inverse": ("dtau_dq", "dtau_dv", "dtau_dvdot")}


def _states(a, n=2, seed=11):
    rng = np.random.default_rng(seed)
    return [(*a.random_state(rng), rng.normal(size=a.nv)) for _ in range(n)]


def _derivs(a, which, q, v, u):
    fn = (a.forward_dynamics_derivatives if which == "forward"
          else a.inverse_dynamics_derivatives)
    return fn(q, v, u)


@pytest.mark.parametrize("engine,fixture", CASES, ids=IDS)
def test_derivatives_match_own_central_differences(engine, fixture):
    a = adapter(engine, fixture)
    assert {"forward_dynamics_derivatives", "inverse_dynamics_derivatives"} <= set(a.provides)
    sfx = "/central_differences" if a.derivatives_method in EXACT_METHODS \
        else "/finite_difference"
    for q, v, u in _states(a):
        for which, names in NAMES.items():
            got = _derivs(a, which, q, v, u)
            ref = central_differences(a, q, v, u, which, CD_STEP)
            for name, g, r in zip(names, got, ref):
                assert g.shape == (a.nv, a.nv) and g.dtype == np.float64
                assert_close(g, r, "derivatives", name + sfx, f"{engine} {fixture} {name}")


@pytest.mark.parametrize("engine,fixture", [c for c in CASES if c[0] != "pinocchio"],
                         ids=[i for c, i in zip(CASES, IDS) if c[0] != "pinocchio"])
def test_derivatives_agree_with_pinocchio(engine, fixture):
    a, ref = adapter(engine, fixture), adapter("pinocchio", fixture)
    sfx = "" if a.derivatives_method in EXACT_METHODS else "/finite_difference"
    for q, v, u in _states(a, seed=12):
        for which, names in NAMES.items():
            for name, g, r in zip(names, _derivs(a, which, q, v, u),
                                  _derivs(ref, which, q, v, u)):
                assert_close(g, r, "derivatives", name + sfx, f"{engine} {fixture} {name}")


@pytest.mark.parametrize("engine", ENGINES)
def test_missing_damping_fails_the_check(engine):
    """chain7 is damped: derivatives of the same engine with damping removed, against
    central differences of the damped dynamics, exceed even the loosest tolerance."""
    a = adapter(engine, "chain7")
    undamped = a.ablated({"damping": 0.0})
    q, v, u = _states(a, 1, seed=13)[0]
    got = undamped.forward_dynamics_derivatives(q, v, u)[1]
    ref = central_differences(a, q, v, u, "forward", CD_STEP)[1]
    _, max_rel, _, ok = measure(got[None], ref[None],
                                lookup("derivatives", "dvdot_dv/finite_difference"))
    assert not ok and max_rel > 1e-2, max_rel


def test_stage_runs_through_the_runner_with_method_tolerances():
    assert runner.stage_names(["derivatives"]) == ["derivatives"]
    assert "derivatives" not in runner.stage_names(None)  # opt-in: parity stays 0-2
    m = [prepare_fixture("free_body")]
    res = runner.run(m, ["pinocchio", "mujoco", "drake"], ["derivatives"], samples=2, seed=1)
    recs = [r for r in res.records if r.stage == "derivatives"]
    assert recs and all(r.status == "passed" for r in recs), [r.id for r in recs
                                                              if r.status != "passed"]
    q = {(r.engine_a, r.engine_b, r.quantity.partition("/")[0]): r.quantity for r in recs}
    assert q[("pinocchio", "drake", "dvdot_dq")] == "dvdot_dq"
    assert q[("pinocchio", "mujoco", "dtau_dv")] == "dtau_dv/finite_difference"
    assert q[("central_differences", "drake", "dtau_dq")] == "dtau_dq/central_differences"
    assert q[("central_differences", "mujoco", "dvdot_dv")] == "dvdot_dv/finite_difference"
    assert len(recs) == 6 * (3 + 3)  # 6 quantities × (3 pairs + 3 reference rows)


def test_reference_holds_where_the_dynamics_dwarf_their_derivatives():
    """A rod state (from `qualify --profile full`, seed 0, state 57) where |v̇| ≈ 6e3 while
    |∂v̇/∂q| ≈ 7: the plain central differences of step 1e-5 carry Drake's round-off
    (noise/h) beyond the reference bound; the Richardson reference (CD_STEP) does not."""
    a = adapter("drake", "rod")
    q = np.array([-0.18444275781404196, 0.20992629667795937, -0.14202795141802826,
                  -0.4443980774465235, -0.08433423264625571, 0.8500664967559615,
                  0.2697870216649571])
    v = np.array([0.23864041259468752, 0.30695240756929365, -1.1879771119180123,
                  -0.9946174659516218, -1.3393066836288288, -0.2765794799582227])
    tau = np.array([-0.49938020921985216, 0.5952377749993538, 0.5815244995384661,
                    3.3508952766254727, -0.4557120731823293, 0.91205966277718])
    got = a.forward_dynamics_derivatives(q, v, tau)[0]
    tol = lookup("derivatives", "dvdot_dq/central_differences")
    plain = central_differences(a, q, v, tau, "forward", 1e-5, richardson=False)[0]
    assert not measure(got[None], plain[None], tol)[3]
    assert_close(got, central_differences(a, q, v, tau, "forward", CD_STEP)[0],
                 "derivatives", "dvdot_dq/central_differences", "drake rod")
    # and Drake's automatic differentiation agrees with Pinocchio's analytical derivative
    assert_close(got, adapter("pinocchio", "rod").forward_dynamics_derivatives(q, v, tau)[0],
                 "derivatives", "dvdot_dq", "drake vs pinocchio, rod")

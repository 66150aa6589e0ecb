"""MuJoCo Warp, the float32 engine: its tolerance class is not vacuous, a batch of N states
is N single calls, its rows carry the class and the device, and it never assumes a GPU.

Kernels: warp compiles them on first use into its cache (WARP_CACHE_PATH, default
~/.cache/warp); the session fixture ``warp_kernels`` builds them once per test run, for
the models these tests load."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import warp as wp  # what this machine's warp reports of CUDA

from harness import api, cli
from harness.core.errors import EngineUnavailable
from harness.core.records import compare
from harness.core.tolerances import EPS32, lookup
from harness.model import registry
from harness.model.integrators import Method, rollout
from harness.model.prepared import prepare_fixture
from harness.stages import dynamics
from harness.stages.base import Inputs, fixture_rng
from harness.stages.constrained import constraints as C
from harness.stages.constrained import roundoff
from harness.stages.constrained import stage as s3
from harness.stages.contact import cases as cf
from harness.stages.replay.measures import Observer
from harness.stages.replay.run import float32_case
from harness.stages.replay.synth import qualify_cases
from tests.conftest import FLOAT32_ENGINES, adapter, assert_known

WARP = "mujoco_warp"
FIXTURES = ("chain7", "tree_floating")  # a fixed base and a free root


@pytest.fixture(scope="session")
def warp_kernels() -> dict:
    """Every kernel path of the adapter run once on each model of these tests (compiled
    into the cache, or loaded from it); {fixture: the adapter's compile seconds}."""
    out = {}
    for fx in FIXTURES:
        a = adapter(WARP, fx)
        q, v = a.layout.neutral(), np.zeros(a.nv)
        a.mass_matrix(q), a.bias_forces(q, v), a.forward_dynamics(q, v, v)
        a.inverse_dynamics(q, v, v), a.frame_jacobians(q, a.model.frames)
        out[fx] = dict(a.compile_seconds)
    return out


def _inputs(fx: str, n: int) -> Inputs:
    return Inputs.sample(prepare_fixture(fx), n, fixture_rng(11, fx))


def test_the_float32_engine_is_registered_opt_in_and_held_to_its_own_class():
    assert WARP in registry.engine_names() and FLOAT32_ENGINES == [WARP]
    # opt-in: not among the engines a command runs unnamed; 'all' names it
    assert WARP not in registry.ENGINES and WARP not in registry.parse_engines(None)
    assert WARP in registry.parse_engines("all")
    assert registry.adapter_class(WARP).precision == "float32"
    # the class is derived from eps32, not the double class loosened
    assert lookup("dynamics", "mass_matrix/float32").rtol == 128 * EPS32
    assert lookup("model_identity", "joint_damping/float32").rtol == EPS32
    assert lookup("dynamics", "conditioned_forward_dynamics/float32").rtol == EPS32


def test_one_batch_of_n_states_equals_n_single_calls(warp_kernels):
    """The same kernels per world: a batch of N and N batches of one give identical bits."""
    fx, n = "tree_floating", 6
    a, i = adapter(WARP, fx), _inputs(fx, n)
    frames = list(a.model.frames)
    pairs = [
        (a.batch_mass_matrix(i.q), [a.mass_matrix(q) for q in i.q]),
        (a.batch_bias_forces(i.q, i.v), [a.bias_forces(q, v) for q, v in zip(i.q, i.v)]),
        (a.batch_forward_dynamics(i.q, i.v, i.tau),
         [a.forward_dynamics(q, v, t) for q, v, t in zip(i.q, i.v, i.tau)]),
        (a.batch_inverse_dynamics(i.q, i.v, i.vdot),
         [a.inverse_dynamics(q, v, d) for q, v, d in zip(i.q, i.v, i.vdot)]),
        (a.batch_frame_poses(i.q, frames), [a.frame_poses(q, frames) for q in i.q]),
        (a.batch_frame_jacobians(i.q, frames), [a.frame_jacobians(q, frames) for q in i.q]),
    ]
    for batch, single in pairs:
        np.testing.assert_array_equal(batch, np.stack(single))


def _rows(a, m, i: Inputs) -> dict:
    """{quantity: passed?} of the float32 engine ``a`` against the double engine ``m`` on
    the states ``i``, scored as the runner scores them (the float32 class; v̇ per state
    with cond(M))."""
    Ma, Mm = a.batch_mass_matrix(i.q), np.stack([m.mass_matrix(q) for q in i.q])
    out = {"mass_matrix": compare("r", "dynamics", "x", "mass_matrix/float32", "m", "w", Mm,
                                  Ma, lookup("dynamics", "mass_matrix/float32"), "a",
                                  "b").passed}
    va = a.batch_forward_dynamics(i.q, i.v, i.tau)
    vm = np.stack([m.forward_dynamics(q, v, t) for q, v, t in zip(i.q, i.v, i.tau)])
    cond = dynamics.condition_numbers([Ma, Mm])
    out["forward_dynamics"] = dynamics.conditioned_compare(
        "r", "dynamics", "x", "forward_dynamics/float32", "m", "w", vm, va,
        lookup("dynamics", "forward_dynamics/float32"), "a", "b", None, "", cond).passed
    ta = a.batch_inverse_dynamics(i.q, i.v, i.vdot)
    tm = np.stack([m.inverse_dynamics(q, v, d) for q, v, d in zip(i.q, i.v, i.vdot)])
    out["inverse_dynamics"] = compare("r", "dynamics", "x", "inverse_dynamics/float32", "m",
                                      "w", tm, ta,
                                      lookup("dynamics", "inverse_dynamics/float32"), "a",
                                      "b").passed
    return out


@pytest.mark.parametrize("fx", FIXTURES)
def test_the_float32_class_passes_the_engine_and_fails_a_perturbed_float32_model(
        fx, warp_kernels):
    """Against MuJoCo (double): every row passes in the float32 class; the same engine with
    every mass and inertia scaled by 1 + 1e-4 (a float32 model off by ~1700 u, 6.5 × the
    class's 1.5e-5, not by round-off) fails M and τ; v̇, whose bound grows with cond(M)
    (eps32 × 4.4e3 = 5e-4 on tree_floating) and which uniform scaling leaves nearly alone
    (free fall does not depend on mass), fails once the rotational inertias alone are
    off by 1e-2."""
    i = _inputs(fx, 6)
    m = adapter("mujoco", fx)
    a = registry.adapter_class(WARP)(prepare_fixture(fx))
    assert all(_rows(a, m, i).values()), _rows(a, m, i)
    for arr in (a._mw.body_mass, a._mw.body_inertia):
        arr.assign(arr.numpy() * np.float32(1.0 + 1e-4))
    failed = [q for q, ok in _rows(a, m, i).items() if not ok]
    assert {"mass_matrix", "inverse_dynamics"} <= set(failed), failed
    a._mw.body_inertia.assign(a._mw.body_inertia.numpy() * np.float32(1.0 + 1e-2))
    assert not _rows(a, m, i)["forward_dynamics"]


def test_parity_rows_carry_the_float32_class_and_the_manifest_the_device(tmp_path,
                                                                         warp_kernels):
    o = api.parity(list(FIXTURES), out=tmp_path / "b", samples=4, seed=5,
                   engines="mujoco,pinocchio,mujoco_warp")
    assert o.exit_code == 0, [r.reason for r in o.records if r.status != "passed"]
    assert_known(o.records)
    warp_rows = [r for r in o.records if WARP in (r.engine_a, r.engine_b)]
    assert warp_rows and all(r.quantity.endswith("/float32") for r in warp_rows)
    assert not any(r.quantity.endswith("/float32") for r in o.records
                   if WARP not in (r.engine_a, r.engine_b))
    m = json.loads((tmp_path / "b" / "manifest.json").read_text())
    for f in m["fixtures"]:
        rt = f["runtime"][WARP]
        assert rt["device"] in ("cpu", "cuda:0") and rt["precision"] == "float32"
        assert os.path.isdir(rt["kernel_cache"]) and set(rt["compile_s"]) >= {"smooth dynamics"}


def test_the_device_option_reaches_the_manifest(tmp_path, monkeypatch, warp_kernels):
    monkeypatch.setenv("HARNESS_DEVICE", "")  # restored after the test (the CLI sets it)
    rc = cli.main(["parity", "--fixture", "chain7", "--engines", "mujoco,mujoco_warp",
                   "--device", "cpu", "--samples", "2", "--out", str(tmp_path / "c"),
                   "--quiet"])
    m = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert rc == 0 and m["fixtures"][0]["runtime"][WARP]["device"] == "cpu"


def test_a_device_that_is_not_there_makes_the_engine_unavailable_not_a_crash(monkeypatch,
                                                                             warp_kernels):
    monkeypatch.setenv("HARNESS_DEVICE", "cuda")
    cls = registry.adapter_class(WARP)
    if wp.is_cuda_available():
        assert cls(prepare_fixture("chain7")).device == "cuda"
    else:
        with pytest.raises(EngineUnavailable, match="cuda"):
            cls(prepare_fixture("chain7"))


def _stage3_rows(engines: str, tmp_path) -> list:
    """Stage-3 records of the weld fixture (a weld inside a chain: J̇v and v̇ cancel there)
    with ``engines``."""
    o = api.parity(["grip_loop"], out=tmp_path / "s3", samples=4, seed=3, engines=engines,
                   stages=["constrained"])
    return o.records


def test_stage3_scores_the_float32_engine_in_its_class_and_its_native_solver(tmp_path,
                                                                             warp_kernels):
    """Every pair row with MuJoCo Warp is in the float32 class and passes against MuJoCo
    and Pinocchio (double); its own J̇v (from rne_postconstraint) enters the KKT; its
    native soft-equality solve is informational, as MuJoCo's."""
    recs = _stage3_rows("mujoco,pinocchio,mujoco_warp", tmp_path)
    assert_known(recs)
    warp = [r for r in recs if WARP in (r.engine_a, r.engine_b) or WARP in r.engine_a]
    pairs = [r for r in warp if r.engine_b and r.engine_a != "declared"]
    assert {r.quantity for r in pairs} == {q + "/float32" for q in (
        "constraint_jacobian", "constraint_drift", "independent_rows", "constrained_vdot",
        "constraint_multipliers")}
    assert all(r.status == "passed" for r in pairs), [(r.id, r.reason) for r in pairs
                                                      if r.status != "passed"]
    native = [r for r in warp if r.quantity == "native_vdot"]
    assert [r.status for r in native] == ["informational"]
    assert not any(r.status in ("failed", "error") for r in recs)


def test_a_perturbed_float32_model_fails_the_stage3_float32_class(tmp_path, warp_kernels):
    """MuJoCo Warp with every mass and inertia scaled by 1 + 1e-2 (a model wrong at
    ~8e4 u, not by round-off; the KKT bound grows with its conditioning, ρ·T_s): its
    KKT answer fails v̇ or λ against MuJoCo in the
    float32 class; with the body positions of its model shifted by 1e-3 m its J and J̇v
    fail too (the class is not vacuous)."""
    fx = "grip_loop"
    model = prepare_fixture(fx)
    m = adapter("mujoco", fx)
    a = registry.adapter_class(WARP)(model)
    Q, V, TAU = s3.sample_states(model.spec, m, 4, np.random.default_rng(3))

    def rows() -> dict:
        tm = s3.engine_terms(model.spec, model.layout, m, Q, V, TAU)
        tw = s3.engine_terms(model.spec, model.layout, a, Q, V, TAU, m.integrate)
        kkt = [C.kkt_terms(t["M"], t["f"], t["J"], t["drift"], t["keep"], t["vdot"],
                           t["lam"]) for t in (tm, tw)]
        T = {"drift": C.drift_terms(float(dynamics.model_terms(model)[2]), V),
             "vdot": np.maximum(*kkt), "lam": np.maximum(*kkt)}
        out = {}
        for q, k in (("constraint_jacobian", "J"), ("constraint_drift", "drift"),
                     ("constrained_vdot", "vdot"), ("constraint_multipliers", "lam")):
            qn = q + "/float32"  # scored as the stage scores it (terms floor included)
            out[q] = (compare("r", C.NAME, fx, qn, "m", "w", tm[k], tw[k],
                              lookup(C.NAME, qn), "a", "b") if k == "J" else
                      roundoff.terms_compare("r", fx, qn, "m", "w", tm[k], tw[k],
                                             lookup(C.NAME, qn), "a", "b", None, "", T[k])
                      ).passed
        return out
    assert all(rows().values()), rows()
    for arr in (a._mw.body_mass, a._mw.body_inertia):
        arr.assign(arr.numpy() * np.float32(1.0 + 1e-2))
    got = rows()
    assert not (got["constrained_vdot"] and got["constraint_multipliers"]), got
    a._mw.body_pos.assign(a._mw.body_pos.numpy() + np.float32(1e-3))
    got = rows()
    assert not got["constraint_jacobian"] and not got["constraint_drift"], got


def test_the_analytic_contact_cases_hold_the_float32_engine_and_fail_a_perturbed_one():
    """Rolling and lift-off closed forms (stage 4) on MuJoCo Warp's M and v̇: every row
    within its float32 class; its ball's mass and inertia scaled by 1 + 1e-3 (not
    round-off) move a_x = F/(m + I/r²) and λ_n = m g out of it."""
    a = registry.adapter_class(WARP)(prepare_fixture("ball"))

    def passed() -> dict:
        rows = cf.rolling(a) + cf.separation(a)
        return {f"{r['case']}.{r['quantity']}": compare(
            "r", "contact", "ball", f"{r['case']}.{r['quantity']}/float32", "analytic", WARP,
            r["analytic"], r["measured"],
            lookup("contact", f"{r['case']}.{r['quantity']}/float32"), "a", "b").passed
            for r in rows}
    assert all(passed().values()), passed()
    for arr in (a._mw.body_mass, a._mw.body_inertia):
        arr.assign(arr.numpy() * np.float32(1.0 + 1e-3))
    got = passed()
    assert not got["rolling.a_x_mps2"] and not got["rolling.normal_force_N"], got


def test_the_float32_replay_class_holds_the_engine_and_fails_a_perturbed_model_or_stepper():
    """chain7's qualification replay (PD tracking, RK4 dt 1e-3) over 0.1 s: MuJoCo Warp's
    harness run agrees with MuJoCo's within replay/trajectory/float32 and balances its
    energy within replay/energy_balance/float32, its own RK4 stepping agrees with that
    run within replay/native/float32. Each fails where it should: the warp model's
    masses and inertias off by 1e-2 leave the trajectory band and the energy balance
    (energy observed with MuJoCo's model), and a first-order stepper (its own Euler) leaves
    the native band; a first-order step of 1e-2 s trips the refinement gate."""
    case = float32_case(qualify_cases()[0])
    cand = case.candidate
    ctrl = cand.controls().sub(0, 10)
    D = cand.model.layout.damping
    m = adapter("mujoco", "chain7")
    w = registry.adapter_class(WARP)(cand.model)
    obs = Observer(m, cand.model)
    ref = rollout(m, cand.q0, cand.v0, ctrl, case.method, D)

    def scored(q: str, a, b) -> bool:
        return compare("r", "replay", "chain7", q, "a", "b", a, b, lookup("replay", q), "a",
                       "b").passed

    def harness_rows(a) -> tuple[bool, bool]:
        r = rollout(a, cand.q0, cand.v0, ctrl, case.method, D)
        E = obs.energy(r.q, r.v, obs.poses(r.q))
        return (scored("trajectory/float32", ref.x, r.x),
                scored("energy_balance/float32", E - E[0], r.work[:, 0] - r.work[:, 1])), r
    ok, run = harness_rows(w)
    assert ok == (True, True)
    t, fn = cand.t[:11], (lambda k, tt: ctrl.segment(k)(tt))
    for integ, want in (("RK4", True), ("Euler", False)):
        Q, V = w.native_rollout(cand.q0, cand.v0, t, fn, {"integrator": integ, "dt": 1e-3})
        assert scored("native/float32", np.hstack([Q, V]), run.x) is want, integ
    # the refinement gate: a first-order step of 1e-2 s moves when halved, RK4's does not
    for meth, want in ((Method("semi_implicit_euler", dt=1e-2), False), (case.method, True)):
        x0 = rollout(w, cand.q0, cand.v0, ctrl, meth, D).x
        x1 = rollout(w, cand.q0, cand.v0, ctrl, meth.refined(t), D).x
        assert scored("refinement/float32", x0, x1) is want, meth.name
    for arr in (w._mw.body_mass, w._mw.body_inertia):
        arr.assign(arr.numpy() * np.float32(1.0 + 1e-2))
    assert harness_rows(w)[0] == (False, False)

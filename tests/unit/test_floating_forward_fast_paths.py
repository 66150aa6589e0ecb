"""Forward dynamics fast paths of the MuJoCo, Drake and OpenSim adapters (a cached
coordinate-change matrix per root or ball quaternion, τ written in place into Drake's fixed
input value): the same v̇ as the generic conversions of the same adapter to a few ulp (for
OpenSim: as M⁻¹(τ − h) from Simbody's calcM and residual), a changed q, v or τ is always
seen, and Drake's in-place τ survives every other FixValue on the context."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.conventions import quat_xyzw_to_matrix, root_convective_term
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.prepared import prepare_fixture

FLOATING = ["free_body", "tree_floating", "golfer3d"]


def _generic_mujoco(ad, q, v, tau):
    """v̇ through the adapter's generic maps (_set_qpos, _to_mj_v, _from_mj_v)."""
    import mujoco

    R = quat_xyzw_to_matrix(q[3:7])
    ad._set_qpos(q)
    ad._d.qvel[:] = ad._to_mj_v(v, R)
    ad._d.qfrc_applied[:] = ad._to_mj_v(tau, R)
    mujoco.mj_forward(ad._m, ad._d)
    return ad._from_mj_v(ad._d.qacc.copy(), R) - np.r_[root_convective_term(v[0:6]),
                                                        np.zeros(ad.nv - 6)]


def _generic_drake(ad, q, v, tau):
    """v̇ through the adapter's generic maps (_set, _to_dk, _from_dk) and FixValue."""
    R = ad._set(q, v)
    ad._tau_port.FixValue(ad._ctx, ad._to_dk(tau, R))
    return ad._from_dk(ad._acc_port.Eval(ad._ctx), R) - np.r_[root_convective_term(v[0:6]),
                                                               np.zeros(ad.nv - 6)]


GENERIC = {"mujoco": _generic_mujoco, "drake": _generic_drake}


def _states(model, n, seed):
    rng = np.random.default_rng(seed)
    for k in range(n):
        q = model.layout.random_q(rng)
        if k % 2:  # a slightly non-unit quaternion, as a rollout leaves it
            q[3:7] *= 1.0 + 1e-9 * rng.normal()
        yield q, 3.0 * rng.normal(size=model.layout.nv), 5.0 * rng.normal(size=model.layout.nv)


@pytest.mark.parametrize("engine", ["mujoco", "drake"])
@pytest.mark.parametrize("fixture", FLOATING)
def test_fast_path_matches_the_generic_maps(engine, fixture):
    model = prepare_fixture(fixture)
    ad = registry.adapter_class(engine)(model)
    worst = 0.0
    for q, v, tau in _states(model, 40, 5):
        fast = ad.forward_dynamics(q, v, tau)
        ref = GENERIC[engine](ad, q, v, tau)
        worst = max(worst, float(np.max(np.abs(fast - ref)) / np.max(np.abs(ref))))
    # only the rounding of R·x differs (a few ulp in the rotated numbers); golfer3d's
    # mass matrix turns one ulp of input into ~8e-15 of output (measured in both paths)
    assert worst < 2e-14, worst


@pytest.mark.parametrize("fixture", FLOATING + ["humanoid_ball", "chain7"])
def test_opensim_fast_path_inverts_its_inverse_dynamics(fixture):
    """OpenSim's forward dynamics (calcAcceleration through the cached state map) put back
    into the same adapter's inverse dynamics (calcResidualForceIgnoringConstraints, a
    different Simbody path, with damping and armature) gives τ back; non-unit quaternions
    and a damped, armatured chain included."""
    model = prepare_fixture(fixture)
    ad = registry.adapter_class("opensim")(model)
    worst = 0.0
    for q, v, tau in _states(model, 12, 7):
        back = ad.inverse_dynamics(q, v, ad.forward_dynamics(q, v, tau))
        worst = max(worst, float(np.max(np.abs(back - tau)) / np.max(np.abs(tau))))
    # two Simbody paths of one model: within the table's parity claim for v̇
    assert worst <= lookup("dynamics", "forward_dynamics").rtol, worst


@pytest.mark.parametrize("engine", ["mujoco", "drake", "opensim"])
def test_every_change_of_q_v_tau_is_seen(engine):
    """Repeated calls at one q keep the cached R_WB; alternating configurations,
    velocities and forces on one adapter give exactly what a fresh adapter gives."""
    model = prepare_fixture("tree_floating")
    ad = registry.adapter_class(engine)(model)
    states = list(_states(model, 3, 9))
    q1, v1, t1 = states[0]
    q2, v2, t2 = states[1]
    calls = [(q1, v1, t1), (q1, v2, t1), (q1, v2, t2), (q2, v2, t2), (q1, v1, t1),
             (q2, v1, t1), (q2, v1, t1)]
    for q, v, tau in calls:
        fresh = registry.adapter_class(engine)(model).forward_dynamics(q, v, tau)
        assert ad.forward_dynamics(q, v, tau).tobytes() == fresh.tobytes()
    # a different v̇ for a different τ at the same state (the port's value is invalidated)
    assert not np.array_equal(ad.forward_dynamics(q1, v1, t1), ad.forward_dynamics(q1, v1, t2))


@pytest.mark.parametrize("fixture", ["free_body", "chain7"])
def test_drake_in_place_tau_survives_other_fix_values(fixture):
    """A FixValue elsewhere on the adapter's context frees the value the fast path writes
    into; the adapter's port remembers the new one, so no stale value is ever written."""
    model = prepare_fixture(fixture)
    ad = registry.adapter_class("drake")(model)
    q, v, tau = next(_states(model, 1, 11))
    want = registry.adapter_class("drake")(model).forward_dynamics(q, v, tau)
    for _ in range(3):
        ad._tau_port.FixValue(ad._ctx, np.full(model.layout.nv, 7.0))  # e.g. naive_dynamics
        assert ad.forward_dynamics(q, v, tau).tobytes() == want.tobytes()
        ad.naive_dynamics(q, v, 2.0 * tau)
        assert ad.forward_dynamics(q, v, tau).tobytes() == want.tobytes()
